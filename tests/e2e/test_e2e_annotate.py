"""End to end in headless Chromium: browser_annotate (the ``devtools`` group) through a real broker,
the real extension and the MCP SDK's client.

The person is played by Playwright's trusted mouse and keyboard on the tab's page
(``tests/pages/annotate.html``, a shop with two product cards at known places): they drag two
boxes, type a note in each box's field and press Done, or Cancel. The page's own scripts are a nosy
site's: they hear its keys, watch every node added, walk the DOM, forge input on whatever is on
top, replace the body and remove what is not theirs.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import types
from playwright.async_api import Page

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
from ..support.extension_world import World, open_world
from ..support.mcp_clients import McpClient, text
from ..support.person_world import page_at

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_annotate"
PAGE = (Path(__file__).resolve().parents[1] / "pages" / "annotate.html").read_text()
# Where the layer covers the page and nothing of the toolbar is: what the page finds there.
ON_TOP = """() => { const el = document.elementFromPoint(700, 600);
  return el !== null && el.parentElement === document.documentElement && el !== document.body; }"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with (
        serve_pages({"annotate.html": PAGE}) as site,
        open_world(tmp_path_factory.mktemp("e2e-annotate"), site, World, probed=False) as world,
    ):
        OUTPUT.mkdir(parents=True, exist_ok=True)
        yield world


async def open_shop(client: McpClient, world: World, tag: str) -> Page:
    url = world.url("annotate.html", tag)
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    await client.call("browser_snapshot", {})
    page = await page_at(world, url)
    return page


async def layer_shown(page: Page) -> None:
    await eventually(lambda: page.evaluate(ON_TOP), "the annotation layer over the page")


async def draw(page: Page, box: tuple[int, int, int, int], note: str) -> None:
    """The person drags a box from its corner to the other and types its note."""
    x, y, width, height = box
    await page.mouse.move(x, y)
    await page.mouse.down()
    await page.mouse.move(x + width, y + height, steps=5)
    await page.mouse.up()
    await page.keyboard.type(note)


async def press(page: Page, from_right: int) -> None:
    width = await page.evaluate("document.documentElement.clientWidth")
    await page.mouse.click(width - from_right, BAR_Y)


async def colours(world: World, png: str, points: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    """The image's colours at ``points``, decoded by the extension's worker."""
    found = await world.worker.evaluate(
        """async ([data, points]) => {
          const bitmap = await createImageBitmap(new Blob([Uint8Array.from(atob(data), (c) => c.charCodeAt(0))]));
          const paint = new OffscreenCanvas(bitmap.width, bitmap.height).getContext("2d");
          paint.drawImage(bitmap, 0, 0);
          return points.map(([x, y]) => [...paint.getImageData(x, y, 1, 1).data.slice(0, 3)]);
        }""",
        [png, points],
    )
    return [tuple(colour) for colour in found]


async def annotate(client: McpClient, page: Page) -> asyncio.Future[types.CallToolResult]:
    """browser_annotate called, once its layer is over the page."""
    call = asyncio.ensure_future(client.call("browser_annotate", {}))
    await layer_shown(page)
    return call


async def test_two_boxes_with_notes_answer_the_marked_screenshot_the_snapshot_and_the_notes(world: World) -> None:
    async with world.mcp("annotator", caps="devtools") as client:
        page = await open_shop(client, world, "two")
        call = await annotate(client, page)
        await draw(page, *TEA)
        await draw(page, *CUPS)
        # What the person sees before pressing Done: the layer's toolbar, the boxes and their notes.
        await page.screenshot(path=OUTPUT / "layer_drawn.png")
        await press(page, DONE_FROM_RIGHT)
        result = await asyncio.wait_for(call, WAIT)
        check_two_boxes(result)
        # The screenshot: the boxes' borders drawn, the toolbar and the note fields not.
        png = image_of(result)
        (OUTPUT / "two_boxes.png").write_bytes(base64.b64decode(png))
        width = await page.evaluate("document.documentElement.clientWidth")
        border, inside, toolbar = await colours(world, png, [(31, 200), (700, 600), (width - DONE_FROM_RIGHT, BAR_Y)])
        assert near(border, MAGENTA), border
        assert not near(inside, MAGENTA)
        assert near(toolbar, HEADER), toolbar  # the header, not the toolbar
        # The layer went with the answer: the page's point shows the page again.
        assert not await page.evaluate(ON_TOP)
        # The page heard none of the person's typing and read nothing of the layer.
        assert await page.evaluate("window.keys") == []
        seen = await page.evaluate("window.walk()")
        assert "Tea should say" not in seen["texts"] and "drag to draw" not in seen["texts"]
        assert seen["shadows"] == 0


async def test_cancel_answers_that_the_person_cancelled_and_takes_the_layer_away(world: World) -> None:
    async with world.mcp("cancelled", caps="devtools") as client:
        page = await open_shop(client, world, "cancel")
        call = await annotate(client, page)
        await draw(page, (30, 110, 100, 100), "never mind")
        await press(page, CANCEL_FROM_RIGHT)
        result = await asyncio.wait_for(call, WAIT)
        assert not result.is_error, texts(result)
        assert len(texts(result)) == 1
        assert "The person cancelled the annotation: the person pressed Cancel" in texts(result)[0]
        assert not [item for item in result.content if isinstance(item, types.ImageContent)]
        assert not await page.evaluate(ON_TOP)


async def test_the_page_reads_no_layer_and_its_forged_input_draws_nothing_and_ends_nothing(world: World) -> None:
    async with world.mcp("forged", caps="devtools") as client:
        page = await open_shop(client, world, "forge")
        call = await annotate(client, page)
        seen = await page.evaluate("window.walk()")
        # The page finds one element of ours, empty to it: no shadow root, no text, no children.
        assert seen["others"] == [{"tag": "div", "text": "", "html": "", "shadow": False, "kids": 0}], seen
        assert "Done" not in seen["texts"] and "drag to draw" not in seen["texts"]
        width = await page.evaluate("document.documentElement.clientWidth")
        # Forged drags over the page and clicks where Done and Cancel are.
        on_top = await page.evaluate(
            "(w) => window.forge([[40, 120, 200, 260], [w - 131, 29, w - 131, 29], [w - 51, 29, w - 51, 29]])",
            width,
        )
        assert on_top == "div"
        await draw(page, (410, 110, 280, 180), "the real one")
        await press(page, DONE_FROM_RIGHT)
        result = await asyncio.wait_for(call, WAIT)
        assert not result.is_error, texts(result)
        notes = texts(result)[-1]
        assert '- Box 1 [box=410,110,280,180]: "the real one"' in notes and "Box 2" not in notes, notes


async def test_a_page_that_replaces_its_body_or_removes_the_layer_is_told_of_and_the_layer_put_back(
    world: World,
) -> None:
    async with world.mcp("replaced", caps="devtools") as client:
        page = await open_shop(client, world, "replace")
        call = await annotate(client, page)
        await page.evaluate("window.replaceBody()")
        assert await page.evaluate("window.removeForeign()") == 1
        await layer_shown(page)
        await draw(page, (30, 110, 280, 180), "was the tea")
        await press(page, DONE_FROM_RIGHT)
        result = await asyncio.wait_for(call, WAIT)
        assert not result.is_error, texts(result)
        said = texts(result)[0]
        assert "The page removed the annotation layer once: it was put back each time" in said, said
        assert "The page replaced its content during the annotation" in said, said
        assert '"was the tea"' in texts(result)[-1]


async def test_a_page_that_keeps_removing_the_layer_ends_the_annotation_as_cancelled(world: World) -> None:
    async with world.mcp("removed", caps="devtools") as client:
        page = await open_shop(client, world, "remove")
        call = await annotate(client, page)
        await page.evaluate(
            """() => new MutationObserver(() => window.removeForeign())
                 .observe(document.documentElement, { childList: true })"""
        )
        assert await page.evaluate("window.removeForeign()") == 1
        result = await asyncio.wait_for(call, WAIT)
        assert not result.is_error, texts(result)
        assert "The person cancelled the annotation: the page removed the annotation layer 21 times" in texts(result)[0]


async def test_a_client_that_cancels_takes_the_layer_away(world: World) -> None:
    async with world.mcp("quitter", caps="devtools") as client:
        page = await open_shop(client, world, "quit")
        call = await annotate(client, page)
        call.cancel()
        await eventually(
            lambda: page.evaluate("() => document.documentElement.childElementCount === 2"), "the layer gone"
        )
        shot = await page.screenshot()
        (OUTPUT / "after_cancel.png").write_bytes(shot)
        # No tint of the layer over the white page, no toolbar over the header.
        width = await page.evaluate("document.documentElement.clientWidth")
        page_white, header = await colours(world, base64.b64encode(shot).decode(), [(700, 300), (width - 131, 29)])
        assert page_white == (255, 255, 255) and near(header, HEADER), (page_white, header)
        assert not await page.evaluate(ON_TOP)
        # The tab takes the client's next call at once.
        assert "Buy tea" in text(await client.call("browser_snapshot", {}))
