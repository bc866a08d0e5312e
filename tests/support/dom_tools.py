"""What the dom group's end-to-end tests share, in Chromium (``tests/e2e/test_e2e_dom_tools.py``)
and Firefox (``tests/firefox/test_firefox_dom_tools.py``): the page (``tests/pages/dom_tools.html``, a
news article built as sites are: a header, a section menu, a promotion over a button, the article
with a table, lists, a script, text hidden four ways, a shadow root and a frame of its own
``dom_tools_frame.html``, related stories, a login form, tiles that say which was clicked), and the
checks both browsers pass with the same words.
"""

from __future__ import annotations

import re
from typing import Any

from ..harness.waiting import eventually
from .mcp_clients import McpClient, text

PAGE = "pages/dom_tools.html"
REF = re.compile(r"\[ref=(e\d+)\]")
# What the page has that a reader never sees.
UNSEEN = (
    "ANALYTICS_SCRIPT_TEXT",
    "INLINE_SCRIPT_TEXT",
    "INLINE_STYLE_TEXT",
    "NOSCRIPT_TEXT",
    "HIDDEN_ASIDE_TEXT",
    "GHOST_TEXT",
    "ARIA_HIDDEN_TEXT",
    "HIDDEN_ATTRIBUTE_TEXT",
    "Hidden row station",
    "FRAME_SCRIPT_TEXT",
)
SECRETS = ("ATTRIBUTE_SECRET_1", "TYPED_SECRET_2")


async def open_page(client: McpClient, url: str) -> str:
    """Open ``url`` in a tab of the client's own; its snapshot, once its frame has loaded."""
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})

    async def whole() -> str:
        page = await client.call("browser_snapshot", {})
        assert not page.is_error, text(page)
        return text(page) if "FRAME_TEXT" in text(page) and "Weather card" in text(page) else ""

    return str(await eventually(whole, "the page and its frame in the snapshot"))


async def said(client: McpClient, tool: str, **args: Any) -> str:
    result = await client.call(tool, args)
    assert not result.is_error, text(result)
    return text(result)


async def refused(client: McpClient, tool: str, **args: Any) -> str:
    result = await client.call(tool, args)
    assert result.is_error, f"{tool} {args} answered: {text(result)}"
    return text(result)


async def check_text(client: McpClient, snapshot: str) -> str:
    """The article as Markdown: headings, table, lists, links kept; scripts and hidden text gone."""
    article = await said(client, "browser_get_text")
    # The one article, not the related stories beside it in <main>.
    assert article.startswith("(The page's main content, <article>"), article[:200]
    assert "Related stories" not in article
    assert "\n# Flood closes Millford bridge\n" in article
    assert "\n## Water levels by station\n" in article
    table = "| Station | Level (m) | Trend |\n| --- | --- | --- |\n| Millford | 4.2 | rising |\n"
    table += "| Ashby | 3.1 | steady |"
    assert table in article
    assert "1. Keep away from the [quay](/maps/quay).\n2. Check on neighbours\n" in article
    assert "   - especially the elderly\n   - and those living alone" in article
    assert "By [Ann River](/authors/ann-river), 3 March" in article
    assert "> We have never seen it this fast." in article
    assert "Residents said the last flood came in 1998." in article
    # The open shadow root and the same-origin frame, as the snapshot shows them.
    assert "### Weather card" in article and "Rain until Friday" in article
    assert "FRAME_TEXT: the gauge at Millford reads 4.2 m." in article
    for hidden in UNSEEN:
        assert hidden not in article, hidden
    # The page's menu and footer are not the article's; the whole page has them.
    assert "Politics" not in article
    whole = await said(client, "browser_get_text", target="body")
    assert "[Politics](/section/politics)" in whole and "Special offer: 50% off" in whole
    for hidden in UNSEEN:
        assert hidden not in whole, hidden
    # An element's text alone, by its ref.
    table = REF.search(next(line for line in snapshot.splitlines() if "- table" in line))
    assert table
    cells = await said(client, "browser_get_text", target=table.group(1))
    assert cells.startswith("| Station |") and "Flood" not in cells
    return article


async def check_cut(client: McpClient) -> None:
    """get_text and get_html cut at maxChars, saying how much was left."""
    cut = await said(client, "browser_get_text", maxChars=120)
    body, note = cut.rsplit("\n\n", 1)
    assert len(body) <= 120 + 100, body
    found = re.fullmatch(r"\[cut: ([\d,]+) more characters of ([\d,]+); ask with a larger maxChars\]", note)
    assert found, note
    html = await said(client, "browser_get_html", maxChars=200)
    assert html.startswith('<html lang="en">') and "[cut: " in html


async def check_html(client: McpClient) -> None:
    """An element's HTML, outer and inner; password values never."""
    outer = await said(client, "browser_get_html", target="#buy-box")
    assert outer == '<div id="buy-box"><button id="buy" type="button">Buy the print edition</button></div>'
    inner = await said(client, "browser_get_html", target="#buy-box", outer=False)
    assert inner == '<button id="buy" type="button">Buy the print edition</button>'
    page = await said(client, "browser_get_html", maxChars=1_000_000)
    assert '<input name="password" type="password" value="">' in page
    form = await said(client, "browser_get_html", target="#login")
    for secret in SECRETS:
        assert secret not in page and secret not in form, form


async def check_inspect(client: McpClient) -> None:
    """A covered button says what covers it; states, styles, attributes and a form's fields."""
    covered = await said(client, "browser_inspect", target="#buy", what=["box", "state"])
    assert '- covered at its centre: yes, by <div#promo> dialog "Special offer"' in covered
    assert "- in viewport: wholly" in covered and "- visible: true" in covered
    remember = await said(client, "browser_inspect", target='[name="remember"]', what=["state"])
    assert "- checked: true" in remember and "- enabled: true" in remember and "- editable: false" in remember
    coupon = await said(client, "browser_inspect", target='[name="coupon"]', what=["state", "attributes"])
    assert "- enabled: false" in coupon and '- value: "SPRING"' in coupon
    styles = await said(client, "browser_inspect", target="#promo", what="styles")
    assert "- position: fixed" in styles and "- z-index: 10" in styles and "- width: 320px" in styles
    one = await said(client, "browser_inspect", target="#promo", what=["styles"], properties=["background-color"])
    assert one.splitlines()[-1] == "- background-color: rgb(255, 238, 0)"
    form = await said(client, "browser_inspect", target="#login", what=["form", "attributes"])
    assert '- "user" (text, "User"): "ann"' in form
    assert '- "password" (password, "Password"): (a password: never shown)' in form
    assert '- "remember" (checkbox, "Remember me"): "on" [checked=true]' in form
    assert '- "plan" (select-one, "Plan"): ["pro"]' in form
    assert '- "coupon" (text, "Coupon"): "SPRING" [disabled]' in form
    password = await said(client, "browser_inspect", target='[name="password"]', what=["attributes", "form"])
    for secret in SECRETS:
        assert secret not in form and secret not in password
    assert '- value: ""' in password
    wrong = await refused(client, "browser_inspect", target="#buy", what=["colour"])
    assert "what" in wrong and "attributes, styles, box, state, form" in wrong


async def check_query(client: McpClient, world_text: Any) -> None:
    """Matches with refs browser_click takes, the shadow root's too; a bad selector is an error."""
    found = await said(client, "browser_query", selector=".tile")
    lines = found.splitlines()
    assert lines[0] == '4 elements match ".tile"', found
    assert re.fullmatch(r'- button "Tile two" <button\.tile> \[ref=e\d+\]', lines[2]), found
    assert '"Tile in shadow"' in lines[4]
    for line, name in ((lines[2], "Tile two"), (lines[4], "Tile in shadow")):
        ref = REF.search(line)
        assert ref, line
        clicked = await client.call("browser_click", {"element": name, "target": ref.group(1)})
        assert not clicked.is_error, text(clicked)
        shown = await world_text()
        assert shown == f"Clicked: {name}", shown
        # Scrolled into view by the click, and on top.
        box = await said(client, "browser_inspect", target=ref.group(1), what=["box"])
        assert "- covered at its centre: no" in box and "- in viewport: wholly" in box, box
    few = await said(client, "browser_query", selector="nav a", maxResults=2)
    assert few.splitlines()[0] == '12 elements match "nav a" (the first 2 shown)' and len(few.splitlines()) == 3
    assert '- link "World" <a> [ref=' in few
    hidden = await said(client, "browser_query", selector="aside")
    assert "[hidden: no ref]" in hidden
    bad = await refused(client, "browser_query", selector="button[")
    assert '"button[" is not a valid CSS selector' in bad, bad
    none = await said(client, "browser_query", selector="marquee")
    assert none == '0 elements match "marquee"'


async def clicked_text(client: McpClient) -> str:
    return await said(client, "browser_get_text", target="#clicked")


async def check_lied_to(client: McpClient, snapshot: str) -> None:
    """On the page that lies to its own scripts (``?hostile``): every check passes as on the honest one."""
    await check_text(client, snapshot)
    await check_html(client)
    await check_inspect(client)
    await check_query(client, lambda: clicked_text(client))
    assert "LIED_TEXT" not in await said(client, "browser_get_text", target="body")
