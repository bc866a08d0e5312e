"""End to end in headless Firefox ESR: browser_annotate on the WebExtension driver, through a real
broker and the MCP SDK's client (the ``devtools`` group). The page is ``tests/pages/annotate.html``,
as in ``tests/e2e/test_e2e_annotate.py``; the person is played by WebDriver BiDi's trusted input
(``input.performActions``): two boxes dragged, a note typed in each, Done or Cancel pressed.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import types

from ..harness.firefox import Context
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.annotations import (
    BAR_Y,
    CANCEL_FROM_RIGHT,
    CUPS,
    DONE_FROM_RIGHT,
    HEADER,
    MAGENTA,
    TEA,
    check_two_boxes,
    image_of,
    near,
    texts,
)
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGE = (Path(__file__).resolve().parents[1] / "pages" / "annotate.html").read_text()
ON_TOP = """(() => { const el = document.elementFromPoint(700, 500);
  return el !== null && el.parentElement === document.documentElement && el !== document.body; })()"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-annotate")
    async with serve_pages({"annotate.html": PAGE}) as site, joined_firefox(home, site) as world:
        yield world


async def open_shop(client: McpClient, fox: Fox, tag: str) -> Context:
    url = f"{fox.site}/annotate.html?{tag}"
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    await client.call("browser_snapshot", {})
    [page] = [Context(fox.firefox.bidi, c["context"]) for c in await fox.firefox.contexts() if c["url"] == url]
    return page


async def annotate(client: McpClient, page: Context) -> asyncio.Future[types.CallToolResult]:
    """browser_annotate called, once its layer is over the page."""
    call = asyncio.ensure_future(client.call("browser_annotate", {}))
    await eventually(lambda: page.evaluate(ON_TOP), "the annotation layer over the page")
    return call


async def draw(page: Context, box: tuple[int, int, int, int], note: str) -> None:
    """The person drags a box from its corner to the other and types its note."""
    x, y, width, height = box
    pointer = [
        {"type": "pointerMove", "x": x, "y": y},
        {"type": "pointerDown", "button": 0},
        {"type": "pointerMove", "x": x + width // 2, "y": y + height // 2, "duration": 50},
        {"type": "pointerMove", "x": x + width, "y": y + height, "duration": 50},
        {"type": "pointerUp", "button": 0},
    ]
    await page.bidi.call(
        "input.performActions",
        {"context": page.id, "actions": [{"type": "pointer", "id": "mouse", "actions": pointer}]},
    )
    await page.type_text(note)


async def press(page: Context, from_right: int) -> None:
    width = await page.evaluate("document.documentElement.clientWidth")
    await page.click_at(width - from_right, BAR_Y)


async def colours(fox: Fox, png: str, points: list[tuple[int, int]]) -> list[Any]:
    """The image's colours at ``points``, decoded in an extension page."""
    return list(
        await fox.control.evaluate(
            """async ([data, points]) => {
              const bitmap = await createImageBitmap(new Blob([Uint8Array.from(atob(data), (c) => c.charCodeAt(0))]));
              const canvas = document.createElement("canvas");
              canvas.width = bitmap.width;
              canvas.height = bitmap.height;
              const paint = canvas.getContext("2d");
              paint.drawImage(bitmap, 0, 0);
              return points.map(([x, y]) => [...paint.getImageData(x, y, 1, 1).data.slice(0, 3)]);
            }""",
            [png, points],
        )
    )


async def test_two_boxes_with_notes_in_firefox_answer_the_marked_screenshot_the_snapshot_and_the_notes(
    fox: Fox,
) -> None:
    async with fox.mcp("annotator", caps="devtools") as client:
        page = await open_shop(client, fox, "two")
        call = await annotate(client, page)
        await draw(page, *TEA)
        await draw(page, *CUPS)
        await press(page, DONE_FROM_RIGHT)
        result = await asyncio.wait_for(call, WAIT)
        check_two_boxes(result)
        png = image_of(result)
        out = Path(__file__).parents[1] / "output" / "firefox_annotate"
        out.mkdir(parents=True, exist_ok=True)
        (out / "two_boxes.png").write_bytes(base64.b64decode(png))
        width = await page.evaluate("document.documentElement.clientWidth")
        border, inside, toolbar = await colours(fox, png, [(31, 200), (700, 500), (width - DONE_FROM_RIGHT, BAR_Y)])
        assert near(border, MAGENTA), border
        assert not near(inside, MAGENTA)
        assert near(toolbar, HEADER), toolbar  # the header, not the toolbar
        assert not await page.evaluate(ON_TOP)
        assert await page.evaluate("window.keys") == []


async def test_cancel_in_firefox_answers_that_the_person_cancelled(fox: Fox) -> None:
    async with fox.mcp("cancelled", caps="devtools") as client:
        page = await open_shop(client, fox, "cancel")
        call = await annotate(client, page)
        await press(page, CANCEL_FROM_RIGHT)
        result = await asyncio.wait_for(call, WAIT)
        assert not result.is_error, texts(result)
        assert "The person cancelled the annotation: the person pressed Cancel" in text(result)
        assert not await page.evaluate(ON_TOP)


async def test_the_page_in_firefox_reads_no_layer_and_forges_nothing_and_its_new_body_is_told_of(fox: Fox) -> None:
    async with fox.mcp("forged", caps="devtools") as client:
        page = await open_shop(client, fox, "forge")
        call = await annotate(client, page)
        seen = await page.evaluate("window.walk()")
        assert seen["others"] == [{"tag": "div", "text": "", "html": "", "shadow": False, "kids": 0}], seen
        assert "Done" not in seen["texts"] and seen["shadows"] == 0
        width = await page.evaluate("document.documentElement.clientWidth")
        await page.evaluate(
            "(w) => window.forge([[40, 120, 200, 260], [w - 131, 29, w - 131, 29], [w - 51, 29, w - 51, 29]])", width
        )
        await page.evaluate("window.replaceBody()")
        assert await page.evaluate("window.removeForeign()") == 1
        await eventually(lambda: page.evaluate(ON_TOP), "the layer put back")
        await draw(page, (410, 110, 280, 180), "the real one")
        await press(page, DONE_FROM_RIGHT)
        result = await asyncio.wait_for(call, WAIT)
        said, notes = texts(result)[0], texts(result)[-1]
        assert '- Box 1 [box=410,110,280,180]: "the real one"' in notes and "Box 2" not in notes, notes
        assert "The page removed the annotation layer once: it was put back each time" in said, said
        assert "The page replaced its content during the annotation" in said, said


async def test_a_client_that_cancels_in_firefox_takes_the_layer_away(fox: Fox) -> None:
    async with fox.mcp("quitter", caps="devtools") as client:
        page = await open_shop(client, fox, "quit")
        call = await annotate(client, page)
        call.cancel()
        await eventually(lambda: page.evaluate("document.documentElement.childElementCount === 2"), "the layer gone")
        assert not await page.evaluate(ON_TOP)
        assert "Buy tea" in text(await client.call("browser_snapshot", {}))
