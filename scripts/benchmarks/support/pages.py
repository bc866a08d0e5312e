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
- ``/article``: a news article as sites serve one: a navigation of many links, a header, the
  article (headings, paragraphs, a table, a list, a figure), a box of related stories, comments and
  a footer of links; the tokens bench reads it with ``browser_get_text`` beside ``browser_snapshot``.
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

from aiohttp import web

from .shop_pages import ADD_BUTTON, CART_PAGE, CHECKOUT_PAGE, ShopPage, confirmation_page, product_page
from .task_pages import NOTES_PAGE, ORDER_DETAILS_FRAME, SMALL_FORM_PAGE, SOAK_PAGE, SUPPORT_PAGE

COUNTER_TEXT = "Clicked {} times"

_ARTICLE_WORDS = (
    "The city council voted on Tuesday to extend the tram line to the harbour, after a debate that ran late"
    " into the evening. Supporters said the line would take cars off the coast road; critics asked who would"
    " pay for the stations, and whether the old depot could be kept."
)


def article_page() -> str:
    """A long news article among what a news site serves around one: a menu of its sections, a cookie
    banner, share buttons, related and most-read stories, comments and a footer of links."""
    sections = ("News", "Sport", "Business", "Culture")
    menu = "".join(
        f"<li>{name}<ul>"
        + "".join(f'<li><a href="/{name.lower()}/{n}">{name} {n}</a></li>' for n in range(1, 16))
        + "</ul></li>"
        for name in sections
    )
    share = "<p><button>Share on social</button> <button>Email</button> <button>Copy link</button></p>"
    body = []
    for part in range(1, 5):
        body.append(f"<h2>Part {part}: what the vote means</h2>")
        body += [f"<p>{_ARTICLE_WORDS} (Paragraph {part}.{n}.)</p>" for n in range(1, 4)]
    table = "".join(
        f"<tr><td>Station {n}</td><td>{2026 + n // 3}</td><td>{n * 3}.{n} million</td></tr>" for n in range(1, 9)
    )
    related = "".join(
        f'<li><a href="/story/{n}"><img alt="Story {n}" width="80" height="60">Story {n}: the harbour, the depot'
        f' and the road</a> <button aria-label="Save story {n}">Save</button></li>'
        for n in range(1, 13)
    )
    most_read = "".join(
        f'<li><a href="/read/{n}">Most read {n}: the coast road at night</a></li>' for n in range(1, 11)
    )
    comments = "".join(
        f'<li><a href="/user/{n}">Reader {n}</a><p>The line is long overdue, says reader {n}.</p>'
        f"<button>Reply</button><button>Like</button><button>Report</button></li>"
        for n in range(1, 21)
    )
    footer = "".join(f'<a href="/about/{n}">About {n}</a> ' for n in range(1, 41))
    return (
        "<!doctype html><html lang=en><head><title>Tram line to reach the harbour</title></head><body>"
        '<div role="dialog" aria-label="Cookies"><p>We use cookies.</p><button>Accept all</button>'
        "<button>Reject all</button><button>Settings</button></div>"
        f'<header><a href="/">The Daily Bench</a><nav><ul>{menu}</ul></nav>'
        '<form role="search"><input type="search" aria-label="Search the site"><button>Search</button></form>'
        '<a href="/subscribe">Subscribe</a> <a href="/login">Sign in</a></header>'
        f"<main><article><h1>Tram line to reach the harbour by 2029</h1><p>By A. Writer, 1 December</p>{share}"
        + "".join(body)
        + "<h2>The stations</h2><table><thead><tr><th>Station</th><th>Opens</th><th>Cost</th></tr></thead>"
        f"<tbody>{table}</tbody></table>"
        "<h2>What comes next</h2><ul><li>A public hearing in January</li><li>The depot's survey</li>"
        "<li>A vote on the budget in March</li></ul>"
        '<figure><img alt="The harbour at dusk" width="400" height="200">'
        f"<figcaption>The harbour, where the line will end.</figcaption></figure>{share}</article>"
        f"<aside><h2>Related</h2><ul>{related}</ul><h2>Most read</h2><ol>{most_read}</ol></aside>"
        f"<section><h2>Comments</h2><ul>{comments}</ul>"
        "<label>Your comment <textarea></textarea></label><button>Post</button></section></main>"
        f"<footer>{footer}</footer><script>window.analytics = {{ page: 'article' }};</script></body></html>"
    )


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
        "/article": article_page(),
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
