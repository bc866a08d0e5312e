"""The pages the actions benchmark drives, made by the bench and served on 127.0.0.1.

- ``/shop``: a large catalogue page: a navigation menu with a submenu, a search form (search box,
  category select, two price fields, a checkbox, a radio group, a submit button), a few hundred
  products (each a link to its page, a short description, a price and an "Add to cart" button),
  pagination, several paragraphs of long text, and a footer with links and a newsletter form.
- ``/small``: a counter: one button that adds one to the number shown, and a link and a field.
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


SMALL_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bench counter</title></head><body>
<h1>Counter</h1>
<p id="count">{COUNTER_TEXT.format(0)}</p>
<button type="button" id="add">{ADD_BUTTON}</button>
<p><label>Note <input type="text" name="note"></label> <a href="/shop">Back to the shop</a></p>
<script>
let clicks = 0;
document.getElementById("add").addEventListener("click", () => {{
  clicks += 1;
  document.getElementById("count").textContent = "{COUNTER_TEXT.format('" + clicks + "')}";
}});
</script>
</body></html>
"""


def pages_app(shop: ShopPage) -> web.Application:
    """The bench's pages as an aiohttp app."""

    async def shop_handler(request: web.Request) -> web.Response:
        return web.Response(text=shop.html, content_type="text/html")

    async def small_handler(request: web.Request) -> web.Response:
        return web.Response(text=SMALL_PAGE, content_type="text/html")

    async def other_handler(request: web.Request) -> web.Response:
        title = html.escape(request.path)
        body = f'<!doctype html><title>{title}</title><h1>{title}</h1><a href="/shop">Back to the shop</a>'
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/shop", shop_handler)
    app.router.add_get("/small", small_handler)
    app.router.add_get("/{tail:.*}", other_handler)
    return app


class PageServer:
    """The pages on 127.0.0.1, on a free port."""

    def __init__(self, shop: ShopPage) -> None:
        self.runner = web.AppRunner(pages_app(shop), access_log=None)
        self.port = 0

    async def start(self) -> None:
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.port = self.runner.addresses[0][1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def stop(self) -> None:
        await self.runner.cleanup()
