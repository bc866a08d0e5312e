"""End to end in headless Firefox ESR: an input's answer in the WebExtension driver waits for the
page the input led to, with no fixed pause after it (the page answers one more call once it has
started the navigation), and a page's agent answers through its port only for its own document:
after a page is left and come back to from history, and after a frame of it loads another page.
Through a real broker and the MCP SDK's client, on pages the test serves.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text
from ..support.testing_tools import ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

START = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Start</title></head><body>
<h1>Start</h1>
<p><a href="landed.html?via=link">Go by link</a></p>
<form action="landed.html" method="get">
  <label>Via <input name="via" value="form"></label>
  <button type="submit">Send</button>
</form>
<p><button type="button" id="script">Go by script</button></p>
<p><button type="button" id="count">Count</button> <output id="counted">Counted 0</output></p>
<iframe src="inner.html?first" title="Inner"></iframe>
<script>
  document.getElementById("script").addEventListener("click", () => { location.href = "landed.html?via=script"; });
  let counted = 0;
  document.getElementById("count").addEventListener("click", () => {
    counted += 1;
    document.getElementById("counted").textContent = `Counted ${counted}`;
  });
</script>
</body></html>
"""
LANDED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Landed</title></head><body>
<h1>Landed</h1><p id="via"></p>
<script>
  document.getElementById("via").textContent = "Came by " + new URLSearchParams(location.search).get("via");
</script>
</body></html>
"""
INNER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Inner</title></head><body>
<p id="shown"></p><a href="inner.html?second">Next inner page</a>
<button type="button" id="press">Press inner</button> <output id="pressed">Pressed 0</output>
<script>
  document.getElementById("shown").textContent = "Inner page " + location.search.slice(1);
  let pressed = 0;
  document.getElementById("press").addEventListener("click", () => {
    pressed += 1;
    document.getElementById("pressed").textContent = `Pressed ${pressed}`;
  });
</script>
</body></html>
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-input-waits")
    pages = {"start.html": START, "landed.html": LANDED, "inner.html": INNER}
    async with serve_pages(pages) as site, joined_firefox(home, site) as world:
        yield world


async def click(client: McpClient, tab: dict[str, Any], shown: str, pattern: str) -> str:
    """The answer to a click on the element of the first line of ``shown`` that matches ``pattern``."""
    args = {"element": pattern, "target": ref_of(shown, pattern), "tab": tab["ref"]}
    return text(await client.call("browser_click", args))


async def open_start(client: McpClient, fox: Fox, tag: str) -> tuple[dict[str, Any], str]:
    """A tab of the client's at the start page, and its snapshot once its frame shows too."""
    opened = await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/start.html?{tag}", "focus": False})
    tab: dict[str, Any] = opened["opened"]

    async def loaded() -> str | None:
        snapshot = await client.call("browser_snapshot", {"tab": tab["ref"]})
        return None if snapshot.is_error or "Inner page first" not in text(snapshot) else text(snapshot)

    return tab, await eventually(loaded, "the start page and its frame")


@pytest.mark.parametrize(
    ("tool", "pattern", "via"),
    [
        ("browser_click", r'link "Go by link"', "link"),
        ("browser_click", r'button "Send"', "form"),
        ("browser_click", r'button "Go by script"', "script"),
        ("browser_type", r'textbox "Via"', "typed"),
    ],
)
async def test_an_inputs_answer_shows_the_page_it_led_to(fox: Fox, tool: str, pattern: str, via: str) -> None:
    async with fox.mcp("Waits") as client:
        tab, snapshot = await open_start(client, fox, via)
        args: dict[str, Any] = {"element": via, "target": ref_of(snapshot, pattern), "tab": tab["ref"]}
        if tool == "browser_type":
            args.update(text="typed", submit=True)
        answer = text(await client.call(tool, args))
        assert "- Page Title: Landed" in answer, answer
        assert f"Came by {via}" in answer, answer
        assert "isTrusted false" in answer, answer


async def test_a_page_come_back_to_from_history_answers_for_itself(fox: Fox) -> None:
    async with fox.mcp("Waits") as client:
        tab, snapshot = await open_start(client, fox, "history")
        await click(client, tab, snapshot, r'button "Count"')
        left = await click(client, tab, snapshot, r'link "Go by link"')
        assert "Came by link" in left, left
        # A ref of the page's frame, which Firefox keeps with the page for going back: refused at
        # once, never sent to the frame of a page no longer shown (which would answer nothing).
        inner = await client.call(
            "browser_snapshot", {"target": ref_of(snapshot, r'button "Press inner"'), "tab": tab["ref"]}
        )
        assert inner.is_error, text(inner)
        assert inner.structured_content["error"]["pageCode"] in {"stale_ref", "navigated"}, inner.structured_content
        back = text(await client.call("browser_navigate_back", {"tab": tab["ref"]}))
        assert "- Page Title: Start" in back, back
        # The page as it is now, whether it was kept whole or loaded again, and never the one it left.
        again = text(await client.call("browser_snapshot", {"tab": tab["ref"]}))
        assert "Go by link" in again and "Came by" not in again, again
        shown = re.search(r"Counted (\d+)", again)
        assert shown, again
        clicked = await click(client, tab, again, r'button "Count"')
        assert f"Counted {int(shown.group(1)) + 1}" in clicked, clicked


async def test_a_frame_that_loaded_another_page_answers_from_its_new_page(fox: Fox) -> None:
    async with fox.mcp("Waits") as client:
        tab, snapshot = await open_start(client, fox, "frame")
        press = ref_of(snapshot, r'button "Press inner"')
        pressed = await click(client, tab, snapshot, r'button "Press inner"')
        assert "Pressed 1" in pressed, pressed
        moved = await click(client, tab, snapshot, r'link "Next inner page"')
        assert "Inner page second" in moved or "Inner page second" in text(
            await client.call("browser_snapshot", {"tab": tab["ref"]})
        ), moved
        # The first inner page's ref is its own: refused as stale, never sent to the page now there.
        stale = await client.call("browser_click", {"element": "Press inner", "target": press, "tab": tab["ref"]})
        assert stale.is_error, text(stale)
        assert stale.structured_content["error"]["pageCode"] == "stale_ref", stale.structured_content
        now = text(await client.call("browser_snapshot", {"tab": tab["ref"]}))
        assert "Inner page second" in now and "Pressed 0" in now, now
        again = await click(client, tab, now, r'button "Press inner"')
        assert "Pressed 1" in again, again
