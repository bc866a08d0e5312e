"""The pages the actions, tokens, overhead and soak benchmarks drive, made by the bench and served on 127.0.0.1.

- ``/shop``: a large catalogue page: a navigation menu with a submenu and a link to the cart, a
  search form (search box, category select, two price fields, a checkbox, a radio group, a submit
  button), a few hundred products (each a link to its page, a short description, a price, its
  category and an "Add to cart" button), pagination, several paragraphs of long text, and a footer
  with links and a newsletter form. It behaves: the search box filters the products as one types,
  the category select filters them too, and "Add to cart" puts the product in the cart
  (``localStorage``, so each browser has its own; ``/shop?new`` empties it).
- ``/product/N``: each product's page: its details, an "Add to cart" button, and three other
  products "customers also bought", each with its own "Add to cart" button.
- ``/cart``: the cart: a quantity field for each product, its line total and the order's total,
  which follow the quantities as they change; a link to the checkout.
- ``/checkout``: the order's summary and a form of eight fields (name, email, phone, street, city,
  postal code, country, the terms) whose "Place order" button submits it to ``/confirmation``,
  which says the order is confirmed with its items and total, and empties the cart.
- ``/support``: a form whose second part (order number, message) is in a same-origin iframe; its
  "Send request" button asks a ``confirm`` dialog, and says the request was sent once accepted.
- ``/small``: a counter: one button that adds one to the number shown, and a link and a field.
- ``/tiny``: a title and a paragraph. ``/many-frames``: ten iframes of the three below, taking turns (the
  overhead benchmark's pages, with the shop).
- ``/soak``: the soak suite's page, which says whose it is and what it holds (``SOAK_PAGE``).
- ``/frames``: three iframes holding real content: a form of this origin, a list of links served on the
  second port (cross-origin), and a counter like ``/small`` with a few more buttons on ``localhost``
  (cross-site: Chromium puts it in a process of its own).

The shop page is generated deterministically (same products, same words, every run), and the
generator counts what it puts in: every link (``a[href]``), button (``<button>``) and form field
(``<input>`` other than hidden, ``<select>``, ``<textarea>``), which the bench compares with the
refs a snapshot gives. Nothing is hidden, so every one of them is in the accessibility tree.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass

from aiohttp import web

COUNTER_TEXT = "Clicked {} times"
SHOP_HEADING = "Bench Shop"
SHOP_END = "Prices include tax."  # the page's last text: a snapshot that shows it shows the whole page
ADD_BUTTON = "Add one"
PRODUCT_BUTTON = "Add to cart"

_ADJECTIVES = (
    "Classic", "Compact", "Deluxe", "Eco", "Everyday", "Foldable", "Handmade", "Heavy-duty", "Light",
    "Modern", "Portable", "Quiet", "Rugged", "Smart", "Soft", "Vintage", "Waterproof", "Wireless",
)  # fmt: skip
_NOUNS = (
    "backpack", "blender", "bookshelf", "camera", "chair", "desk lamp", "headphones", "jacket",
    "kettle", "keyboard", "mug", "notebook", "pan", "plant pot", "rug", "speaker", "tent", "umbrella",
    "wallet", "watch",
)  # fmt: skip
_CATEGORIES = ("Home", "Kitchen", "Office", "Outdoors", "Electronics", "Fashion", "Garden", "Toys", "Books", "Sale")
_SUBMENU = ("New arrivals", "Best sellers", "Gift cards", "Clearance")
_FOOTER = (
    "About us", "Careers", "Press", "Contact", "Shipping", "Returns", "Warranty", "Privacy", "Terms",
    "Accessibility",
)  # fmt: skip
_WORDS = (
    "the", "our", "every", "order", "ships", "within", "two", "days", "from", "a", "warehouse", "near",
    "you", "and", "each", "product", "is", "tested", "by", "people", "who", "use", "it", "at", "home",
    "before", "we", "list", "with", "care", "for", "quality", "price", "materials", "that", "last",
    "years", "repair", "service", "returns", "are", "free", "thirty", "after", "delivery",
)  # fmt: skip


@dataclass(frozen=True)
class PageCounts:
    """What a page holds that a client may want to act on."""

    links: int
    buttons: int
    fields: int


@dataclass(frozen=True)
class Product:
    number: int
    name: str
    price: float
    stars: int
    category: str
    description: str


@dataclass(frozen=True)
class ShopPage:
    html: str
    counts: PageCounts
    products: int
    catalogue: tuple[Product, ...] = ()

    def product(self, number: int) -> Product:
        return self.catalogue[number - 1]

    def also_bought(self, number: int) -> list[Product]:
        """The three products the page of product ``number`` offers beside it: the next ones, wrapping round."""
        return [self.catalogue[(number + offset - 1) % len(self.catalogue)] for offset in (1, 2, 3)]


# The cart, kept in the browser's localStorage by every page of the shop: each page's cart link shows
# how many items it holds, and "Add to cart" buttons (data-number, data-name, data-price) add to it.
CART_LINK_HTML = '<a class="cart-link" href="/cart">Cart (0)</a>'
CART_SCRIPT = """
const cart = JSON.parse(localStorage.getItem("bench-cart") || "[]");
function itemsInCart() { return cart.reduce((sum, item) => sum + item.qty, 0); }
function cartTotal() { return cart.reduce((sum, item) => sum + item.qty * item.price, 0); }
function money(value) { return "$" + value.toFixed(2); }
function showCartCount() {
  for (const link of document.querySelectorAll("a.cart-link")) link.textContent = `Cart (${itemsInCart()})`;
}
function saveCart() { localStorage.setItem("bench-cart", JSON.stringify(cart)); showCartCount(); }
function addToCart(button) {
  const number = Number(button.dataset.number);
  const found = cart.find((item) => item.number === number);
  if (found) found.qty += 1;
  else cart.push({ number, name: button.dataset.name, price: Number(button.dataset.price), qty: 1 });
  saveCart();
  button.textContent = "In cart";
}
if (new URLSearchParams(location.search).has("new")) { cart.length = 0; saveCart(); }
showCartCount();
"""
# The catalogue's live filters: the search box as one types, and the category.
CATALOGUE_SCRIPT = """
const searchBox = document.getElementById("q"), categories = document.getElementById("category");
const articles = [...document.querySelectorAll("article[data-name]")];
function filterProducts() {
  const words = searchBox.value.trim().toLowerCase(), wanted = categories.value;
  let shown = 0;
  for (const article of articles) {
    const match = article.dataset.name.includes(words) && (!wanted || article.dataset.category === wanted);
    article.hidden = !match;
    if (match) shown += 1;
  }
  document.getElementById("shown").textContent =
    shown === articles.length ? `All products (${shown})` : `Products found: ${shown} of ${articles.length}`;
}
searchBox.addEventListener("input", filterProducts);
categories.addEventListener("change", filterProducts);
"""


def _add_button(product: Product, label: str | None = None) -> str:
    """An "Add to cart" button for ``product``; ``label``: its accessible name, when not its text."""
    named = f' aria-label="{html.escape(label)}"' if label else ""
    return (
        f'<button type="button"{named} data-number="{product.number}" data-name="{html.escape(product.name)}"'
        f' data-price="{product.price:.2f}" onclick="addToCart(this)">{PRODUCT_BUTTON}</button>'
    )


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def shop_page(products: int, paragraphs: int = 12, seed: int = 9) -> ShopPage:
    """The catalogue page with ``products`` products and ``paragraphs`` paragraphs of long text."""
    rng = random.Random(seed)
    links = buttons = fields = 0
    catalogue: list[Product] = []
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Bench Shop: all products</title>',
        "<style>body{font-family:sans-serif;margin:1em}nav ul{display:flex;gap:1em;list-style:none;padding:0}"
        ".products{display:grid;grid-template-columns:repeat(4,1fr);gap:1em}"
        "article{border:1px solid #ccc;padding:.5em}</style>",
        "</head><body>",
        f'<header><h1>{SHOP_HEADING}</h1><nav aria-label="Main menu"><ul>',
    ]
    for category in _CATEGORIES:
        slug = category.lower()
        parts.append(f'<li><a href="/category/{slug}">{category}</a></li>')
        links += 1
    parts.append('<li><a href="/more">More</a><ul aria-label="More">')
    links += 1
    for entry in _SUBMENU:
        parts.append(f'<li><a href="/more/{entry.lower().replace(" ", "-")}">{entry}</a></li>')
        links += 1
    parts.append(f"</ul></li><li>{CART_LINK_HTML}</li></ul></nav></header>")
    links += 1

    parts += [
        '<main><section aria-label="Search"><h2>Search the shop</h2>',
        '<form role="search" action="/shop" method="get" onsubmit="event.preventDefault()">',
        '<label>Search <input type="search" name="q" id="q" placeholder="What are you looking for?"></label>',
        '<label>Category <select name="category" id="category"><option value="">Any</option>',
        *(f'<option value="{c.lower()}">{c}</option>' for c in _CATEGORIES),
        "</select></label>",
        '<label>Lowest price <input type="number" name="min" min="0"></label>',
        '<label>Highest price <input type="number" name="max" min="0"></label>',
        '<label><input type="checkbox" name="stock"> In stock only</label>',
        "<fieldset><legend>Sort by</legend>",
        '<label><input type="radio" name="sort" value="relevance" checked> Relevance</label>',
        '<label><input type="radio" name="sort" value="price"> Price</label>',
        '<label><input type="radio" name="sort" value="rating"> Rating</label>',
        "</fieldset>",
        '<button type="submit">Search</button>',
        "</form></section>",
    ]
    fields += 8  # search, select, two numbers, checkbox, three radios
    buttons += 1

    parts.append(f'<section aria-label="Products"><h2 id="shown">All products ({products})</h2><div class="products">')
    for number in range(1, products + 1):
        name = f"{rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)} {number}"
        price = rng.randrange(500, 50000) / 100
        stars = rng.randrange(1, 6)
        product = Product(
            number, name, price, stars, _CATEGORIES[number % len(_CATEGORIES)], _sentence(rng, rng.randrange(8, 16))
        )
        catalogue.append(product)
        parts.append(
            f'<article data-name="{html.escape(name.lower())}" data-category="{product.category.lower()}">'
            f'<h3><a href="/product/{number}">{html.escape(name)}</a></h3>'
            f"<p>{product.description}</p>"
            f"<p>${price:.2f} · {stars} of 5 stars · {product.category}</p>"
            + _add_button(product, f"{PRODUCT_BUTTON}: {name}")
            + "</article>"
        )
        links += 1
        buttons += 1
    parts.append('</div><nav aria-label="Pages"><ul>')
    for page in range(1, 11):
        parts.append(f'<li><a href="/shop?page={page}">{page}</a></li>')
        links += 1
    parts.append("</ul></nav></section>")

    parts.append('<section aria-label="About"><h2>About Bench Shop</h2>')
    for _ in range(paragraphs):
        parts.append("<p>" + " ".join(_sentence(rng, rng.randrange(12, 24)) for _ in range(6)) + "</p>")
    parts.append("</section></main>")

    parts.append('<footer><nav aria-label="Footer"><ul>')
    for entry in _FOOTER:
        parts.append(f'<li><a href="/info/{entry.lower().replace(" ", "-")}">{entry}</a></li>')
        links += 1
    parts += [
        "</ul></nav>",
        '<form aria-label="Newsletter"><label>Email <input type="email" name="email"></label>',
        '<label>Anything to tell us? <textarea name="note"></textarea></label>',
        '<button type="button">Subscribe</button></form>',
        f"<p>© {SHOP_HEADING}. {SHOP_END}</p></footer>",
        f"<script>{CART_SCRIPT}{CATALOGUE_SCRIPT}</script></body></html>",
    ]
    fields += 2
    buttons += 1
    return ShopPage("\n".join(parts), PageCounts(links, buttons, fields), products, tuple(catalogue))


def counter_page(title: str, extra: str = "") -> str:
    """A page whose "Add one" button adds one to the number it shows, with ``extra`` HTML after it."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head><body>
<h1>Counter</h1>
<p id="count">{COUNTER_TEXT.format(0)}</p>
<button type="button" id="add">{ADD_BUTTON}</button>
{extra}<script>
let clicks = 0;
document.getElementById("add").addEventListener("click", () => {{
  clicks += 1;
  document.getElementById("count").textContent = "{COUNTER_TEXT.format('" + clicks + "')}";
}});
</script>
</body></html>
"""


SMALL_PAGE = counter_page(
    "Bench counter", '<p><label>Note <input type="text" name="note"></label> <a href="/shop">Back to the shop</a></p>\n'
)

# The frames page (``/frames`` on 127.0.0.1): three iframes, each with a text found nowhere else, so a
# snapshot that shows the text shows the frame's content.
FRAMES_HEADING = "Bench frames"
SAME_ORIGIN_TEXT = "Delivery address, this origin"  # in the form of 127.0.0.1, same port
CROSS_ORIGIN_TEXT = "Orders of another port"  # in the list of 127.0.0.1 on the second port
CROSS_SITE_TEXT = "Widget of another site"  # in the counter of localhost: an out-of-process frame
FRAME_FORM = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Address form</title></head><body>
<h2>{SAME_ORIGIN_TEXT}</h2>
<form><label>Name <input type="text" name="name"></label>
<label>Street <input type="text" name="street"></label>
<label>City <input type="text" name="city"></label>
<label>Country <select name="country"><option>France</option><option>Germany</option><option>Spain</option>
</select></label>
<label><input type="checkbox" name="gift"> Gift wrap</label>
<button type="button">Save address</button></form>
</body></html>
"""
FRAME_LIST = (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Orders</title></head><body>'
    f"<h2>{CROSS_ORIGIN_TEXT}</h2><ul>"
    + "".join(f'<li><a href="/order/{n}">Order {n}</a>: {n} items, shipped</li>' for n in range(1, 9))
    + "</ul></body></html>\n"
)
FRAME_COUNTER = counter_page(
    "Widget",
    f"<p>{CROSS_SITE_TEXT}</p>\n"
    + "".join(f'<button type="button">{name}</button>\n' for name in ("Details", "Share", "Report")),
)


def frames_page(port: int, second_port: int) -> str:
    """The page of three iframes: same origin, another port (cross-origin), ``localhost`` (cross-site)."""
    frames = (
        ("Address form", f"http://127.0.0.1:{port}/frame/form"),
        ("Orders", f"http://127.0.0.1:{second_port}/frame/list"),
        ("Widget", f"http://localhost:{port}/frame/counter"),
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Bench frames</title></head><body>'
        f"<h1>{FRAMES_HEADING}</h1><p>Three frames: this origin, another port, another site.</p>"
        + "".join(f'<iframe title="{title}" src="{src}" width="600" height="300"></iframe>' for title, src in frames)
        + "</body></html>\n"
    )


TINY_PAGE = (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Tiny</title></head>'
    "<body><p>Hello.</p></body></html>\n"
)


def many_frames_page(port: int, second_port: int, frames: int = 10) -> str:
    """A page of ``frames`` iframes taking turns: a form of this origin, a list of another port (cross-origin)
    and a counter of ``localhost`` (cross-site: out of process)."""
    sources = (
        f"http://127.0.0.1:{port}/frame/form",
        f"http://127.0.0.1:{second_port}/frame/list",
        f"http://localhost:{port}/frame/counter",
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Many frames</title></head><body>'
        f"<h1>{frames} frames</h1>"
        + "".join(
            f'<iframe title="Frame {n}" src="{sources[n % len(sources)]}?n={n}" width="400" height="150"></iframe>'
            for n in range(frames)
        )
        + "</body></html>\n"
    )


_SHOP_STYLE = (
    "<style>body{font-family:sans-serif;margin:1em}header{display:flex;gap:1em}"
    "article{border:1px solid #ccc;padding:.5em;margin:.5em 0}label{display:block;margin:.3em 0}</style>"
)


def _shop_document(title: str, body: str, script: str = "") -> str:
    """A page of the shop: its header (the shop, the cart), ``body`` in main, the cart's script and ``script``."""
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'{_SHOP_STYLE}</head><body><header><a href="/shop">{SHOP_HEADING}</a> {CART_LINK_HTML}</header>'
        f"<main>{body}</main><script>{CART_SCRIPT}{script}</script></body></html>\n"
    )


def product_page(shop: ShopPage, number: int) -> str:
    """Product ``number``'s page: its details and button, three products customers also bought, and more text."""
    product = shop.product(number)
    rng = random.Random(number)
    related = "".join(
        f'<article><h3><a href="/product/{other.number}">{html.escape(other.name)}</a></h3>'
        f"<p>${other.price:.2f} · {other.stars} of 5 stars</p>"
        + _add_button(other, f"{PRODUCT_BUTTON}: {other.name}")
        + "</article>"
        for other in shop.also_bought(number)
    )
    details = "".join(f"<p>{' '.join(_sentence(rng, rng.randrange(10, 20)) for _ in range(3))}</p>" for _ in range(3))
    body = (
        f"<h1>{html.escape(product.name)}</h1><p>{product.description}</p>"
        f"<p>${product.price:.2f} · {product.stars} of 5 stars · {product.category}</p>"
        + _add_button(product)
        + f'<section aria-label="Customers also bought"><h2>Customers also bought</h2>{related}</section>'
        f'<section aria-label="Details"><h2>Details</h2>{details}</section>'
    )
    return _shop_document(f"{product.name}: {SHOP_HEADING}", body)


CART_PAGE = _shop_document(
    f"Your cart: {SHOP_HEADING}",
    '<h1>Your cart</h1><div id="lines"></div><p id="total"></p>'
    '<p><a href="/checkout">Checkout</a> <a href="/shop">Continue shopping</a></p>',
    """
const lines = document.getElementById("lines");
function showTotal() {
  document.getElementById("total").textContent = `Total: ${money(cartTotal())} (${itemsInCart()} items)`;
}
for (const item of cart) {
  const line = document.createElement("div");
  const link = document.createElement("a");
  link.href = `/product/${item.number}`;
  link.textContent = item.name;
  const label = document.createElement("label");
  label.htmlFor = `qty-${item.number}`;
  label.textContent = `Quantity of ${item.name}`;
  const quantity = document.createElement("input");
  Object.assign(quantity, { type: "number", min: "0", id: `qty-${item.number}`, value: String(item.qty) });
  const lineTotal = document.createElement("p");
  const showLine = () => {
    lineTotal.textContent = `${money(item.price)} each, ${money(item.price * item.qty)} in all`;
  };
  quantity.addEventListener("input", () => {
    item.qty = Math.max(0, Number.parseInt(quantity.value, 10) || 0);
    showLine();
    showTotal();
    saveCart();
  });
  showLine();
  line.append(link, label, quantity, lineTotal);
  lines.append(line);
}
showTotal();
""",
)

COUNTRIES = ("France", "Germany", "Spain", "United Kingdom", "United States")
CHECKOUT_PAGE = _shop_document(
    f"Checkout: {SHOP_HEADING}",
    '<h1>Checkout</h1><p id="summary"></p><form action="/confirmation" method="get">'
    '<label>Full name <input name="name" required></label>'
    '<label>Email <input type="email" name="email" required></label>'
    '<label>Phone <input type="tel" name="phone" required></label>'
    '<label>Street address <input name="street" required></label>'
    '<label>City <input name="city" required></label>'
    '<label>Postal code <input name="postcode" required></label>'
    '<label>Country <select name="country">'
    + "".join(f"<option>{country}</option>" for country in COUNTRIES)
    + "</select></label>"
    '<label><input type="checkbox" name="terms" required> I accept the terms of sale</label>'
    '<button type="submit">Place order</button></form>',
    'document.getElementById("summary").textContent = `${itemsInCart()} items, total ${money(cartTotal())}`;',
)
ORDER_CONFIRMED = "Order confirmed"


def confirmation_page(name: str, city: str, country: str) -> str:
    """What the checkout's form lands on: the order confirmed, its items and total; the cart emptied."""
    body = (
        f"<h1>{ORDER_CONFIRMED}</h1><p>Thank you, {html.escape(name)}! We ship to {html.escape(city)},"
        f' {html.escape(country)}.</p><p id="order"></p>'
    )
    script = (
        'document.getElementById("order").textContent = `${itemsInCart()} items, total ${money(cartTotal())}`;'
        "cart.length = 0; saveCart();"
    )
    return _shop_document(f"{ORDER_CONFIRMED}: {SHOP_HEADING}", body, script)


# The support form: its second part in a same-origin iframe, and a confirm() before it is sent.
SUPPORT_HEADING = "Contact support"
SUPPORT_CONFIRM = "Send this request to support?"
SUPPORT_SENT = "Request sent"
SUPPORT_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{SUPPORT_HEADING}</title></head><body>
<h1>{SUPPORT_HEADING}</h1>
<form id="support"><label>Your name <input name="name"></label>
<label>Your email <input type="email" name="email"></label>
<label>Topic <select name="topic"><option>Delivery</option><option>Returns</option><option>Payment</option>
</select></label>
<iframe title="Order details" src="/frame/order-details" width="600" height="200"></iframe>
<button type="submit">Send request</button></form>
<p id="status" role="status"></p>
<script>
document.getElementById("support").addEventListener("submit", (event) => {{
  event.preventDefault();
  const form = event.target, details = document.querySelector("iframe").contentDocument;
  const order = details.querySelector("[name=order]").value;
  document.getElementById("status").textContent = confirm("{SUPPORT_CONFIRM}")
    ? `{SUPPORT_SENT}: ${{form.elements.name.value}}, order ${{order}}, topic ${{form.elements.topic.value}}`
    : "Request not sent";
}});
</script>
</body></html>
"""
# The small pages (``/small-form``, ``/small-notes``): a form of three fields and a button, and a form
# that resets itself once sent, each note it keeps going into a list.
SIGNUP_HEADING = "Newsletter"
SIGNED_UP = "Signed up"
SMALL_FORM_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{SIGNUP_HEADING}</title></head><body>
<h1>{SIGNUP_HEADING}</h1>
<form id="signup"><label>Name <input name="name"></label>
<label>Email <input type="email" name="email"></label>
<label>City <input name="city"></label>
<button type="submit">Sign up</button></form>
<p id="status" role="status"></p>
<script>
document.getElementById("signup").addEventListener("submit", (event) => {{
  event.preventDefault();
  const fields = event.target.elements;
  document.getElementById("status").textContent =
    `{SIGNED_UP}: ${{fields.name.value}}, ${{fields.email.value}}, ${{fields.city.value}}`;
}});
</script>
</body></html>
"""
NOTES_HEADING = "Notes"
NOTES_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{NOTES_HEADING}</title></head><body>
<h1>{NOTES_HEADING}</h1>
<form id="note"><label>Note <input name="note"></label> <button type="submit">Save note</button></form>
<ul id="saved" aria-label="Saved notes"></ul>
<script>
document.getElementById("note").addEventListener("submit", (event) => {{
  event.preventDefault();
  const item = document.createElement("li");
  item.textContent = event.target.elements.note.value;
  document.getElementById("saved").append(item);
  event.target.reset();
}});
</script>
</body></html>
"""
ORDER_DETAILS_FRAME = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Order details</title></head><body>
<h2>Order details</h2>
<label>Order number <input name="order"></label>
<label>Message <textarea name="message"></textarea></label>
</body></html>
"""


# The soak suite's page (``/soak?client=c7&tab=3&step=2``): it names its client, tab and step in its
# title and heading, counts the clicks on "Add one", holds a "Note" field, and declares one page tool,
# soak_state, that says all of that back with the nonce it was given: an answer that names another
# client, tab or step, or other figures, was misrouted or wrong.
SOAK_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Soak</title></head><body>
<h1>Soak</h1>
<p id="count">Clicked 0 times</p>
<button type="button" id="add">Add one</button>
<label>Note <input type="text" id="note"></label>
<script>
const asked = new URLSearchParams(location.search);
const [client, tab, step] = ["client", "tab", "step"].map((key) => asked.get(key));
document.title = `Soak ${client} tab ${tab} step ${step}`;
document.querySelector("h1").textContent = `Soak page of ${client}, tab ${tab}, step ${step}`;
let clicks = 0;
document.getElementById("add").addEventListener("click", () => {
  clicks += 1;
  document.getElementById("count").textContent = `Clicked ${clicks} times`;
});
document.modelContext.registerTool({
  name: "soak_state",
  description: "What this page holds: its client, tab, step, clicks and note, and the nonce given",
  inputSchema: {type: "object", properties: {nonce: {type: "string"}}, required: ["nonce"]},
  annotations: {readOnlyHint: true},
  execute: async ({nonce}) => ({client, tab, step, clicks, note: document.getElementById("note").value, nonce}),
});
</script>
</body></html>
"""


def pages_app(shop: ShopPage, ports: list[int]) -> web.Application:
    """The bench's pages as an aiohttp app; ``ports``: the ports it is served on, once it is."""
    fixed = {
        "/shop": shop.html,
        "/small": SMALL_PAGE,
        "/tiny": TINY_PAGE,
        "/frame/form": FRAME_FORM,
        "/frame/list": FRAME_LIST,
        "/frame/counter": FRAME_COUNTER,
        "/cart": CART_PAGE,
        "/checkout": CHECKOUT_PAGE,
        "/support": SUPPORT_PAGE,
        "/frame/order-details": ORDER_DETAILS_FRAME,
        "/small-form": SMALL_FORM_PAGE,
        "/small-notes": NOTES_PAGE,
        "/soak": SOAK_PAGE,
    }

    async def fixed_handler(request: web.Request) -> web.Response:
        return web.Response(text=fixed[request.path], content_type="text/html")

    async def frames_handler(request: web.Request) -> web.Response:
        return web.Response(text=frames_page(*ports), content_type="text/html")

    async def many_frames_handler(request: web.Request) -> web.Response:
        return web.Response(text=many_frames_page(*ports), content_type="text/html")

    async def product_handler(request: web.Request) -> web.Response:
        number = int(request.match_info["number"])
        if not 1 <= number <= len(shop.catalogue):
            raise web.HTTPNotFound()
        return web.Response(text=product_page(shop, number), content_type="text/html")

    async def confirmation_handler(request: web.Request) -> web.Response:
        query = request.query
        page = confirmation_page(query.get("name", ""), query.get("city", ""), query.get("country", ""))
        return web.Response(text=page, content_type="text/html")

    async def other_handler(request: web.Request) -> web.Response:
        title = html.escape(request.path)
        body = f'<!doctype html><title>{title}</title><h1>{title}</h1><a href="/shop">Back to the shop</a>'
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    for path in fixed:
        app.router.add_get(path, fixed_handler)
    app.router.add_get("/frames", frames_handler)
    app.router.add_get("/many-frames", many_frames_handler)
    app.router.add_get(r"/product/{number:\d+}", product_handler)
    app.router.add_get("/confirmation", confirmation_handler)
    app.router.add_get("/{tail:.*}", other_handler)
    return app


class PageServer:
    """The pages on 127.0.0.1, on two free ports (the second for frames of another origin); ``localhost``
    reaches the first as another site."""

    def __init__(self, shop: ShopPage) -> None:
        self.ports: list[int] = []
        self.runner = web.AppRunner(pages_app(shop, self.ports), access_log=None)

    async def start(self) -> None:
        await self.runner.setup()
        for _ in range(2):
            await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.ports[:] = [address[1] for address in self.runner.addresses]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[0]}{path}"

    async def stop(self) -> None:
        await self.runner.cleanup()
