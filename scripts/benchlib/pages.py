"""The pages the actions benchmark drives, made by the bench and served on 127.0.0.1.

- ``/shop``: a large catalogue page: a navigation menu with a submenu, a search form (search box,
  category select, two price fields, a checkbox, a radio group, a submit button), a few hundred
  products (each a link to its page, a short description, a price and an "Add to cart" button),
  pagination, several paragraphs of long text, and a footer with links and a newsletter form.
- ``/small``: a counter: one button that adds one to the number shown, and a link and a field.
- ``/frames``: three iframes holding real content: a form of this origin, a list of links served on the
  second port (cross-origin), and a counter like ``/small`` with a few more buttons on ``localhost``
  (cross-site: Chromium puts it in a process of its own).
- ``/product/N``: a small page for each product link, so a click that follows one lands somewhere.

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
class ShopPage:
    html: str
    counts: PageCounts
    products: int


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def shop_page(products: int, paragraphs: int = 12, seed: int = 9) -> ShopPage:
    """The catalogue page with ``products`` products and ``paragraphs`` paragraphs of long text."""
    rng = random.Random(seed)
    links = buttons = fields = 0
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
    parts.append("</ul></li></ul></nav></header>")

    parts += [
        '<main><section aria-label="Search"><h2>Search the shop</h2>',
        '<form role="search" action="/shop" method="get">',
        '<label>Search <input type="search" name="q" placeholder="What are you looking for?"></label>',
        '<label>Category <select name="category"><option value="">Any</option>',
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

    parts.append(f'<section aria-label="Products"><h2>All products ({products})</h2><div class="products">')
    for number in range(1, products + 1):
        name = f"{rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)} {number}"
        price = rng.randrange(500, 50000) / 100
        stars = rng.randrange(1, 6)
        parts.append(
            f'<article><h3><a href="/product/{number}">{html.escape(name)}</a></h3>'
            f"<p>{_sentence(rng, rng.randrange(8, 16))}</p>"
            f"<p>${price:.2f} · {stars} of 5 stars</p>"
            f'<button type="button" aria-label="{PRODUCT_BUTTON}: {html.escape(name)}"'
            f" onclick=\"this.textContent='In cart'\">{PRODUCT_BUTTON}</button></article>"
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
        f"<p>© {SHOP_HEADING}. {SHOP_END}</p></footer></body></html>",
    ]
    fields += 2
    buttons += 1
    return ShopPage("\n".join(parts), PageCounts(links, buttons, fields), products)


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


def pages_app(shop: ShopPage, ports: list[int]) -> web.Application:
    """The bench's pages as an aiohttp app; ``ports``: the ports it is served on, once it is."""
    fixed = {
        "/shop": shop.html,
        "/small": SMALL_PAGE,
        "/frame/form": FRAME_FORM,
        "/frame/list": FRAME_LIST,
        "/frame/counter": FRAME_COUNTER,
    }

    async def fixed_handler(request: web.Request) -> web.Response:
        return web.Response(text=fixed[request.path], content_type="text/html")

    async def frames_handler(request: web.Request) -> web.Response:
        return web.Response(text=frames_page(*ports), content_type="text/html")

    async def other_handler(request: web.Request) -> web.Response:
        title = html.escape(request.path)
        body = f'<!doctype html><title>{title}</title><h1>{title}</h1><a href="/shop">Back to the shop</a>'
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    for path in fixed:
        app.router.add_get(path, fixed_handler)
    app.router.add_get("/frames", frames_handler)
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
