"""End to end: the built-in browser tools through a real broker, the real extension and MCP clients.

``tests/e2e/test_e2e_actions.py`` drives each action of the extension from a scripted broker; this
module is the path a person takes: an AI client (the MCP SDK's, over Streamable HTTP and over
``browser-mcp mcp`` on stdio) opens a page and works it with browser_snapshot, browser_click and
browser_type, and is kept out of tabs that are not its own, while the person's tab stays in front.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ..harness.chromium import in_front, visible
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT
from ..support.extension_world import World, open_world
from ..support.mcp_clients import LEGACY, MODERN, McpClient, mcp_client, sdk_client, stdio_relay, text

pytestmark = pytest.mark.asyncio(loop_scope="module")


class ToolsWorld(World):
    """The browser and broker of this module, and the folder their files live in."""

    home: Path


SHOP = """<!doctype html><title>Tiny shop</title>
<h1>Tiny shop</h1>
<label>Search <input id="q" name="q"></label>
<button id="buy" onclick="document.getElementById('status').textContent =
  (event.isTrusted ? 'Bought ' : 'Scripted ') + document.getElementById('q').value">Buy</button>
<p id="status">Nothing bought</p>"""
PERSON = "<!doctype html><title>The person's page</title><p>reading</p>"
ASK = """<!doctype html><title>Ask</title>
<button onclick="document.getElementById('said').textContent =
  confirm('Delete it?') ? 'deleted' : 'kept'">Delete</button>
<p id="said">nothing yet</p>"""
LISTS = (Path(__file__).resolve().parents[1] / "pages" / "pointer_lists.html").read_text()
UPLOAD = (Path(__file__).resolve().parents[1] / "pages" / "upload_page.html").read_text()
TALL = """<!doctype html><title>Tall</title><style>p { height: 1000px; margin: 0 }</style>
<button onclick="this.textContent = 'Pressed'">Press</button>""" + "".join(f"<p>Part {n}</p>" for n in range(30))
# Random pixels over the whole viewport: a PNG of them is several times a client's limit.
NOISE = """<!doctype html><title>Noise</title><style>body { margin: 0 } canvas { display: block }</style>
<canvas></canvas><script>
const canvas = document.querySelector("canvas");
[canvas.width, canvas.height] = [innerWidth, innerHeight];
const paint = canvas.getContext("2d");
const pixels = paint.createImageData(canvas.width, canvas.height);
for (let i = 0; i < pixels.data.length; i += 1) pixels.data[i] = i % 4 === 3 ? 255 : Math.random() * 256;
paint.putImageData(pixels, 0, 0);
</script>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ToolsWorld]:
    home = tmp_path_factory.mktemp("e2e-tools")
    async with (
        serve_pages(
            {
                "shop.html": SHOP,
                "person.html": PERSON,
                "ask.html": ASK,
                "lists.html": LISTS,
                "upload.html": UPLOAD,
                "tall.html": TALL,
                "noise.html": NOISE,
            }
        ) as site,
        open_world(home, site, ToolsWorld, probed=False, no_viewport=True) as world,
    ):
        world.home = home
        yield world


def ref_of(snapshot: str, pattern: str) -> str:
    """The ref on the snapshot line matching ``pattern`` (a regular expression)."""
    for line in snapshot.splitlines():
        if re.search(pattern, line):
            found = re.search(r"\[ref=((?:f\d+)?e\d+)\]", line)
            if found:
                return found.group(1)
    raise AssertionError(f"no line matching {pattern!r} with a ref in:\n{snapshot}")


async def snapshot_click_type(client: McpClient, world: World) -> None:
    """The README's first session: open a page, read it, type, click, read the outcome."""
    opened = await client.call_json("tabs", {"action": "open", "url": f"{world.site}/shop.html", "focus": False})
    tab = opened["opened"]["ref"]
    assert "browser_snapshot" in await client.tool_names()
    page = await client.call("browser_snapshot", {})
    assert not page.is_error, text(page)
    assert 'heading "Tiny shop" [level=1]' in text(page)
    typed = await client.call(
        "browser_type", {"element": "Search field", "target": ref_of(text(page), r'textbox "Search"'), "text": "shoes"}
    )
    assert not typed.is_error, text(typed)
    clicked = await client.call("browser_click", {"element": "Buy", "target": ref_of(text(page), r'button "Buy"')})
    assert not clicked.is_error, text(clicked)
    after = await client.call("browser_snapshot", {"tab": tab})
    assert "Bought shoes" in text(after), text(after)
    await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_a_client_over_http_reads_types_and_clicks_a_page_of_its_own(world: World) -> None:
    async with world.mcp("http-client") as client:
        await snapshot_click_type(client, world)


async def test_find_gives_the_ref_of_what_it_finds_and_a_click_on_it_lands(world: World) -> None:
    async with world.mcp("finder") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": f"{world.site}/shop.html", "focus": False})
        found = await client.call("browser_find", {"regex": "/button .buy/i"})
        assert not found.is_error, text(found)
        # The match with its neighbours (the field before it, the text after it), not the rest of the page.
        assert "### Found\n- 1 match" in text(found) and 'heading "Tiny shop"' not in text(found), text(found)
        clicked = await client.call("browser_click", {"element": "Buy", "target": ref_of(text(found), r'button "Buy"')})
        assert not clicked.is_error and "Bought" in text(clicked), text(clicked)
        await client.call_json("tabs", {"action": "close", "tab": opened["opened"]["ref"]})


async def test_a_client_over_stdio_does_the_same(world: ToolsWorld) -> None:
    relay = stdio_relay(world.home / "discovery", world.home / "state", "--port", str(world.broker.port))
    async with sdk_client(relay, "stdio-client", MODERN, start_timeout=WAIT) as client:
        await snapshot_click_type(client, world)


async def test_a_snapshot_right_after_a_tab_opens_shows_its_page_from_a_slow_server(world: World) -> None:
    async with world.mcp("Early reader") as client:
        opened = await client.call_json(
            "tabs", {"action": "open", "url": f"{world.site}/late/shop.html", "focus": False}
        )
        page = await client.call("browser_snapshot", {})
        assert not page.is_error, text(page)
        assert 'heading "Tiny shop" [level=1]' in text(page) and "/late/shop.html" in text(page), text(page)
        await client.call_json("tabs", {"action": "close", "tab": opened["opened"]["ref"]})


async def test_the_persons_tab_needs_a_claim_and_another_clients_tab_is_refused(world: World) -> None:
    person_page, tab = await world.open_page("person.html", "claims")
    url = f"http://127.0.0.1:{world.broker.port}/mcp"
    async with (
        mcp_client(url, world.token, "first", LEGACY) as first,
        mcp_client(url, world.token, "second", LEGACY) as second,
    ):
        refused = await first.call("browser_snapshot", {"tab": tab["ref"]})
        assert refused.is_error and text(refused).startswith("tab_not_claimed:"), text(refused)
        await first.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        mine = await first.call("browser_snapshot", {})
        assert "reading" in text(mine), text(mine)
        theirs = await second.call("browser_snapshot", {"tab": tab["ref"]})
        assert theirs.is_error and text(theirs).startswith("tab_owned:") and "first" in text(theirs)
        shot = await first.call("browser_take_screenshot", {})
        [image] = [part for part in shot.content if part.type == "image"]
        assert base64.b64decode(image.data).startswith(b"\x89PNG")
    await person_page.close()


async def test_the_person_keeps_their_tab_in_front_while_a_client_works(world: World) -> None:
    person_page, _ = await world.open_page("person.html", "front")
    await person_page.bring_to_front()
    # The person's tab is in front once the browser says so; bringing it there returns before.
    await in_front(world.worker, url=world.url("person.html", "front"))
    await visible(person_page)
    async with world.mcp("background-worker") as client:
        await snapshot_click_type(client, world)
    assert await person_page.evaluate("document.visibilityState") == "visible"
    active = await world.worker.evaluate(
        "chrome.tabs.query({active: true, lastFocusedWindow: true}).then(([tab]) => tab.url)"
    )
    assert active.endswith("person.html?front")
    await person_page.close()


async def test_a_dialog_ends_the_click_and_waits_for_browser_handle_dialog(world: World) -> None:
    # Playwright answers a dialog itself unless someone listens: this listener answers nothing.
    world.context.on("dialog", lambda dialog: None)
    async with world.mcp("dialog-client") as client:
        await client.call_json("tabs", {"action": "open", "url": f"{world.site}/ask.html", "focus": False})
        page = text(await client.call("browser_snapshot", {}))
        clicked = await client.call("browser_click", {"element": "Delete", "target": ref_of(page, 'button "Delete"')})
        assert not clicked.is_error and '["confirm" dialog with message "Delete it?"]' in text(clicked), text(clicked)
        refused = await client.call("browser_snapshot", {})
        assert refused.is_error and text(refused).startswith("dialog_open:"), text(refused)
        answered = await client.call("browser_handle_dialog", {"accept": True})
        assert not answered.is_error and "deleted" in text(answered), text(answered)
        again = await client.call("browser_handle_dialog", {"accept": True})
        assert again.is_error and "no dialog is open" in text(again), text(again)


async def test_a_client_drags_between_lists_and_is_told_when_a_point_is_off_the_page(world: World) -> None:
    async with world.mcp("dragger", caps="vision") as client:
        await client.call_json("tabs", {"action": "open", "url": f"{world.site}/lists.html", "focus": False})
        page = text(await client.call("browser_snapshot", {}))
        apple, basket = ref_of(page, r"listitem \[ref=e\d+\]: Apple"), ref_of(page, r'list "Basket"')
        dragged = await client.call(
            "browser_drag", {"startElement": "Apple", "startTarget": apple, "endElement": "Basket", "endTarget": basket}
        )
        assert not dragged.is_error and "Dropped Apple in basket" in text(dragged), text(dragged)
        pear = ref_of(page, r"listitem \[ref=e\d+\]: Pear")
        itself = await client.call("browser_drag", {"startRef": pear, "endRef": pear})
        assert itself.is_error and "two different elements" in text(itself), text(itself)
        off = await client.call("browser_mouse_click_xy", {"x": 100000, "y": 5})
        assert off.is_error and "outside the tab's viewport" in text(off), text(off)
        older = await client.call("browser_drag", {"startRef": pear, "endRef": basket})
        assert not older.is_error and "Dropped Pear in basket" in text(older), text(older)


async def test_a_client_uploads_a_file_of_its_project_once_the_person_allows_it(world: ToolsWorld) -> None:
    project = world.home / "project"
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text("from the project\n")
    (world.home / "elsewhere.txt").write_text("not the project's\n")
    # browser-mcp mcp started in the project, by a client that declares no roots.
    relay = stdio_relay(world.home / "discovery", world.home / "state", "--port", str(world.broker.port))
    async with sdk_client(relay.model_copy(update={"cwd": project}), "uploader", MODERN, start_timeout=WAIT) as client:
        await client.call_json("tabs", {"action": "open", "url": f"{world.site}/upload.html", "focus": False})
        snapshot = text(await client.call("browser_snapshot", {}))
        clicked = await client.call("browser_click", {"element": "Photo", "target": ref_of(snapshot, 'button "Photo"')})
        assert not clicked.is_error and "[File chooser]" in text(clicked), text(clicked)
        refused = await client.call("browser_file_upload", {"paths": [str(world.home / "elsewhere.txt")]})
        assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
        # An upload is the person's to allow, under the default policy too.
        asked = asyncio.ensure_future(client.call("browser_file_upload", {"paths": [str(notes)]}))
        window = await world.context.wait_for_event("page", lambda opened: "/person/approval.html" in opened.url)
        await window.wait_for_selector("#agent:not(:empty)")
        assert await window.locator("#code").text_content() == f"notes.txt, 17 B: {notes.resolve()}"
        with contextlib.suppress(Exception):  # the window closes itself as it answers
            await window.get_by_role("button", name="Allow once").click()
        uploaded = await asked
        assert not uploaded.is_error and "Uploaded 1 file into the file chooser: notes.txt" in text(uploaded)
        [page] = [opened for opened in world.context.pages if opened.url.endswith("/upload.html")]
        await page.wait_for_function("document.getElementById('answer').textContent === 'photo: notes.txt'")
        [received] = await page.evaluate("window.received")
        assert received["files"] == [
            {"name": "notes.txt", "type": "text/plain", "size": 17, "text": "from the project\n"}
        ]


async def screenshot_within_limits(client: McpClient, arguments: dict[str, Any]) -> tuple[str, int, int]:
    """browser_take_screenshot's text and its PNG's width and height, checked against the limits its
    description states (what Claude's API and Claude Desktop take)."""
    shot = await client.call("browser_take_screenshot", arguments)
    assert not shot.is_error, text(shot)
    [note] = [part.text for part in shot.content if part.type == "text"]
    [image] = [part for part in shot.content if part.type == "image"]
    png = base64.b64decode(image.data)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert max(width, height) <= 1568 and width * height <= 1.15 * 1024 * 1024, (width, height)
    assert len(png) <= 700_000, len(png)
    return note, width, height


async def test_a_full_page_screenshot_of_a_very_tall_page_is_scaled_to_what_a_client_takes(world: World) -> None:
    async with world.mcp("photographer") as client:
        await client.call_json("tabs", {"action": "open", "url": f"{world.site}/tall.html", "focus": False})
        page = text(await client.call("browser_snapshot", {}))
        # Only the screenshot tool answers with an image.
        clicked = await client.call("browser_click", {"element": "Press", "target": ref_of(page, 'button "Press"')})
        assert not clicked.is_error and [part.type for part in clicked.content] == ["text"], clicked
        note, width, height = await screenshot_within_limits(client, {"fullPage": True})
        # Scaled by a factor the result gives, and cut to its top part rather than shrunk to a sliver.
        scaled = re.search(r"Scaled by ([\d.]+) \(.*\): multiply this image's coordinates by ([\d.]+)", note)
        assert scaled, note
        scale, factor = float(scaled.group(1)), float(scaled.group(2))
        assert scale == 0.5 and factor == 2, note
        [tab] = [opened for opened in world.context.pages if opened.url.endswith("/tall.html")]
        page_width, page_height = await tab.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        assert page_height > 30_000 and abs(width - page_width * scale) <= 1, (width, page_width, note)
        shown = re.search(r"Shows the top (\d+) CSS pixels of its (\d+)", note)
        assert shown and abs(int(shown.group(1)) * scale - height) <= 1, note
        assert int(shown.group(2)) == page_height, note


async def test_a_screenshot_too_heavy_for_a_client_is_made_smaller_and_says_by_how_much(world: World) -> None:
    async with world.mcp("noise") as client:
        await client.call_json("tabs", {"action": "open", "url": f"{world.site}/noise.html", "focus": False})
        note, width, _ = await screenshot_within_limits(client, {})
        factor = re.search(r"for browser_mouse_\* tools, multiply this image's coordinates by ([\d.]+)", note)
        assert factor, note
        [tab] = [opened for opened in world.context.pages if opened.url.endswith("/noise.html")]
        viewport_width = await tab.evaluate("innerWidth")
        assert abs(width * float(factor.group(1)) - viewport_width) <= 2, (width, viewport_width, note)
