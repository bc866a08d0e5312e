"""The bench shop: a generated catalogue page, a product, the cart, the checkout and the confirmation.

The catalogue is random words from a fixed seed, with as many products and paragraphs as a suite
asks, so every run of every side sees the same pages.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass

__all__ = [
    "ADD_BUTTON",
    "CART_LINK_HTML",
    "CART_PAGE",
    "CART_SCRIPT",
    "CATALOGUE_SCRIPT",
    "CHECKOUT_PAGE",
    "COUNTRIES",
    "ORDER_CONFIRMED",
    "PRODUCT_BUTTON",
    "PageCounts",
    "Product",
    "SHOP_END",
    "SHOP_HEADING",
    "ShopPage",
    "confirmation_page",
    "product_page",
    "shop_page",
]


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
