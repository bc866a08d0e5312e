"""End to end: the pointer tools (browser_drag, browser_mouse_*) carried out by the real extension.

The browser, fake broker and page server are ``tests/support/actions_world.py``'s (its ``world``); the
pages are ``tests/pages/pointer_*.html``, which record what reached them. What a drag did is read
back from the page's lists; a canvas button is found the way a client finds it, by its colour on
the tab's screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from ..harness.waiting import eventually
from ..support import actions_world
from ..support.actions_world import World, ref_of
from ..support.page_functions import matched_ref

pytestmark = pytest.mark.asyncio(loop_scope="module")

# The browser of actions_world, one for this module.
world = actions_world.world

# The colour the canvas page paints its button in, and where it puts both.
BUTTON_COLOUR = (255, 0, 170)
CANVAS_AT = (137, 91)
BUTTON_BOX = (231, 157, 90, 44)


@pytest_asyncio.fixture(loop_scope="module")
async def lists(world: World) -> AsyncIterator[tuple[int, Page]]:
    tab, page = await world.open("pointer_lists.html")
    yield tab, page
    await page.close()


@pytest_asyncio.fixture(loop_scope="module")
async def canvas(world: World) -> AsyncIterator[tuple[int, Page]]:
    tab, page = await world.open("pointer_canvas.html")
    yield tab, page
    await page.close()


def item_ref(snapshot: str, text: str) -> str:
    """The ref of the list item that reads ``text``."""
    return matched_ref(snapshot, rf"- listitem \[ref=(e\d+)\]: {re.escape(text)}$", f"list item {text!r}")


async def ids(page: Page, name: str) -> list[str]:
    found: list[str] = await page.evaluate("(id) => [...document.getElementById(id).children].map((e) => e.id)", name)
    return found


async def page_value(page: Page, expression: str) -> Any:
    return await page.evaluate(expression)


async def test_drag_moves_an_item_between_lists_by_html5_drag_and_drop(world: World, lists: tuple[int, Page]) -> None:
    tab, page = lists
    snapshot = await world.ok(tab, "snapshot")
    apple, basket = item_ref(snapshot, "Apple"), ref_of(snapshot, 'list "Basket"')
    after = await world.ok(tab, "drag", startElement="Apple", startTarget=apple, endElement="Basket", endTarget=basket)
    assert "Dropped Apple in basket" in after, after
    assert await ids(page, "basket") == ["bread", "apple"]
    assert await ids(page, "shelf") == ["pear"]
    seen = await page_value(page, "window.events.map((e) => e.type + (e.isTrusted ? '' : ' (untrusted)'))")
    for kind in ("dragstart", "drop", "dragend"):
        assert kind in seen, seen


async def test_drag_reaches_a_list_out_of_view(world: World, lists: tuple[int, Page]) -> None:
    tab, page = lists
    snapshot = await world.ok(tab, "snapshot")
    await world.ok(tab, "drag", startTarget=item_ref(snapshot, "Pear"), endTarget=ref_of(snapshot, 'list "Cellar"'))
    assert await ids(page, "cellar") == ["cheese", "pear"]
    assert await page_value(page, "scrollY") > 1000, "scrolled down to it, as a person would"


async def test_drag_reorders_a_list_sorted_by_pointer_events(world: World, lists: tuple[int, Page]) -> None:
    tab, page = lists
    snapshot = await world.ok(tab, "snapshot")
    three, one = item_ref(snapshot, "Three"), item_ref(snapshot, "One")
    after = await world.ok(tab, "drag", startTarget=three, endTarget=one)
    assert await ids(page, "sortable") == ["three", "one", "two"]
    assert "Sorted Three" in after
    pointer = "window.events.filter((e) => e.type.startsWith('pointer'))"
    trusted = await page_value(page, f"{pointer}.map((e) => e.isTrusted)")
    assert trusted and all(trusted)


async def test_a_drag_onto_itself_or_where_no_drop_is_taken_is_an_error(world: World, lists: tuple[int, Page]) -> None:
    tab, page = lists
    snapshot = await world.ok(tab, "snapshot")
    pear, lid = item_ref(snapshot, "Pear"), item_ref(snapshot, "Lid")
    itself = await world.fails(tab, "drag", startTarget=pear, endTarget=pear)
    assert itself["code"] == "invalid_arguments" and "same element" in itself["message"], itself
    assert await page_value(page, "window.events.length") == 0, "nothing reached the page"

    refused = await world.fails(tab, "drag", startTarget=pear, endTarget=lid)
    assert refused["code"] == "action_failed" and "did not take the drop" in refused["message"], refused
    assert await ids(page, "shelf") == ["apple", "pear"]

    missing = await world.fails(tab, "drag", startTarget=pear)
    assert missing["code"] == "invalid_arguments" and "endTarget" in missing["message"]
    # The tab still works, the mouse let go: the next drag goes through.
    basket = ref_of(snapshot, 'list "Basket"')
    await world.ok(tab, "drag", startTarget=pear, endTarget=basket)
    assert await ids(page, "basket") == ["bread", "pear"]


async def test_drags_work_in_a_tab_in_the_background(world: World) -> None:
    tab, page = await world.open("pointer_lists.html", active=False)
    try:
        snapshot = await world.ok(tab, "snapshot")
        await world.ok(
            tab, "drag", startTarget=item_ref(snapshot, "Apple"), endTarget=ref_of(snapshot, 'list "Basket"')
        )
        await world.ok(tab, "drag", startTarget=item_ref(snapshot, "Two"), endTarget=item_ref(snapshot, "One"))
        assert await ids(page, "basket") == ["bread", "apple"]
        assert await ids(page, "sortable") == ["two", "one", "three"]
        assert not await world.worker.evaluate("(tab) => chrome.tabs.get(tab).then((t) => t.active)", tab)
    finally:
        await page.close()


async def middle_of(page: Page, selector: str) -> dict[str, float]:
    box = await page.locator(selector).bounding_box()
    assert box is not None
    return {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}


async def test_down_move_and_up_carry_an_html5_drag_across_calls(world: World, lists: tuple[int, Page]) -> None:
    tab, page = lists
    await world.ok(tab, "mouse_move_xy", **await middle_of(page, "#pear"))
    await world.ok(tab, "mouse_down")
    await world.ok(tab, "mouse_move_xy", **await middle_of(page, "#bread"))
    await world.ok(tab, "mouse_move_xy", **await middle_of(page, "#basket"))
    after = await world.ok(tab, "mouse_up")
    assert "Dropped Pear in basket" in after
    assert await ids(page, "basket") == ["bread", "pear"]

    await world.ok(tab, "mouse_move_xy", **await middle_of(page, "#apple"))
    await world.ok(tab, "mouse_down")
    await world.ok(tab, "mouse_move_xy", **await middle_of(page, "#lid"))
    refused = await world.fails(tab, "mouse_up")
    assert refused["code"] == "action_failed" and "did not take the drop" in refused["message"], refused
    assert await ids(page, "shelf") == ["apple"]
    # Let go: the mouse holds nothing now, and a plain move is a plain move.
    await world.ok(tab, "mouse_move_xy", x=5, y=5)
    start, end = await middle_of(page, "#apple"), await middle_of(page, "#basket")
    await world.ok(tab, "mouse_drag_xy", startX=start["x"], startY=start["y"], endX=end["x"], endY=end["y"])
    assert await ids(page, "basket") == ["bread", "pear", "apple"]


async def button_on_screenshot(world: World, tab: int) -> tuple[float, float]:
    """The middle of the pixels of the button's colour on the tab's screenshot, decoded by the browser."""
    answer = await world.act(tab, "take_screenshot")
    assert answer.get("error") is None, answer
    png = answer["result"]["content"][1]["data"]
    (world.tmp / "pointer_canvas.png").write_bytes(base64.b64decode(png))
    found: list[float] | None = await world.worker.evaluate(
        """async ([png, [r, g, b]]) => {
          const image = await createImageBitmap(await (await fetch("data:image/png;base64," + png)).blob());
          const canvas = new OffscreenCanvas(image.width, image.height);
          const paint = canvas.getContext("2d");
          paint.drawImage(image, 0, 0);
          const { data } = paint.getImageData(0, 0, image.width, image.height);
          let [left, top, right, bottom] = [Infinity, Infinity, -1, -1];
          for (let i = 0; i < data.length; i += 4) {
            if (Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) > 12) continue;
            const x = (i / 4) % image.width, y = Math.floor(i / 4 / image.width);
            [left, top, right, bottom] = [Math.min(left, x), Math.min(top, y), Math.max(right, x), Math.max(bottom, y)];
          }
          return right < 0 ? null : [(left + right + 1) / 2, (top + bottom + 1) / 2];
        }""",
        [png, list(BUTTON_COLOUR)],
    )
    assert found, "the button's colour is not on the screenshot"
    # A large viewport's image is made smaller; its text says how to get back to CSS pixels.
    scaled = re.search(r"multiply this image's coordinates by ([\d.]+)", answer["result"]["content"][0]["text"])
    factor = float(scaled.group(1)) if scaled else 1.0
    return found[0] * factor, found[1] * factor


async def test_a_canvas_button_found_on_a_screenshot_is_clicked_at_its_point(
    world: World, canvas: tuple[int, Page]
) -> None:
    tab, page = canvas
    x, y = await button_on_screenshot(world, tab)
    left, top, width, height = BUTTON_BOX
    assert (x, y) == (CANVAS_AT[0] + left + width / 2, CANVAS_AT[1] + top + height / 2)
    await world.ok(tab, "mouse_click_xy", x=x, y=y)
    assert await page_value(page, "document.getElementById('status').textContent") == "Button hit"
    [hit] = await page_value(page, "window.hits")
    assert hit["hit"] and hit["isTrusted"] and hit["detail"] == 1

    await world.ok(tab, "mouse_click_xy", x=CANVAS_AT[0] + 5, y=CANVAS_AT[1] + 5, clickCount=2)
    missed = (await page_value(page, "window.hits"))[1:]
    assert [(h["hit"], h["detail"]) for h in missed] == [(False, 1), (False, 2)]


async def test_a_screenshot_of_a_large_viewport_says_how_its_pixels_map_to_the_mouses(
    world: World, canvas: tuple[int, Page]
) -> None:
    tab, page = canvas
    # A large viewport, set through the extension's own debugger session, which the tools see.
    emulate = """([tabId, method, params]) => chrome.debugger.sendCommand({tabId}, method, params)"""
    metrics = {"width": 2400, "height": 1400, "deviceScaleFactor": 1, "mobile": False}
    await world.ok(tab, "snapshot")  # attaches it
    await world.worker.evaluate(emulate, [tab, "Emulation.setDeviceMetricsOverride", metrics])
    try:

        async def grown() -> Any:
            return await page_value(page, "innerWidth > 2000 && [innerWidth, innerHeight]")

        width, height = await eventually(grown, "the window to grow")
        # The page has its new size; the compositor, where input is hit-tested, a frame or two later.
        await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        x, y = await button_on_screenshot(world, tab)
        await world.ok(tab, "mouse_click_xy", x=x, y=y)
        assert [hit["hit"] for hit in await page_value(page, "window.hits")] == [True]
        # Outside the viewport only beyond its CSS size, not the smaller image's.
        await world.ok(tab, "mouse_move_xy", x=width - 1, y=height - 1)
        refused = await world.fails(tab, "mouse_move_xy", x=width, y=10)
        assert f"{width}x{height} CSS pixels" in refused["message"], refused
    finally:
        await world.worker.evaluate(emulate, [tab, "Emulation.clearDeviceMetricsOverride", {}])


async def test_down_move_and_up_draw_a_stroke_and_drag_xy_draws_another(world: World, canvas: tuple[int, Page]) -> None:
    tab, page = canvas
    left, top = CANVAS_AT
    await world.ok(tab, "mouse_move_xy", x=left + 10, y=top + 10)
    await world.ok(tab, "mouse_down")
    await world.ok(tab, "mouse_move_xy", x=left + 50, y=top + 30)
    await world.ok(tab, "mouse_move_xy", x=left + 90, y=top + 60)
    await world.ok(tab, "mouse_up")
    [stroke] = await page_value(page, "window.strokes")
    assert stroke["isTrusted"]
    assert stroke["points"] == [[10, 10], [50, 30], [90, 60], [90, 60]]

    await world.ok(tab, "mouse_drag_xy", startX=left + 100, startY=top + 200, endX=left + 300, endY=top + 100)
    second = (await page_value(page, "window.strokes"))[1]["points"]
    assert second[0] == [100, 200] and second[-1] == [300, 100] and len(second) > 5, "it travels in steps"


async def test_the_wheel_scrolls_the_page_under_the_mouse(world: World, canvas: tuple[int, Page]) -> None:
    tab, page = canvas
    await world.ok(tab, "mouse_move_xy", x=50, y=50)
    await world.ok(tab, "mouse_wheel", deltaX=0, deltaY=400)
    # Answered once the page heard the wheel and began to scroll.
    [wheel] = await page_value(page, "window.wheels")
    assert wheel["isTrusted"] and wheel["deltaY"] == 400
    assert await page_value(page, "scrollY") > 0

    async def scrolled() -> Any:
        return await page_value(page, "scrollY >= 400")

    await eventually(scrolled, "the page to scroll by the wheel's turn")
    await world.ok(tab, "mouse_wheel", deltaX=0, deltaY=-10000)
    assert len(await page_value(page, "window.wheels")) == 2


async def test_a_click_at_a_point_reaches_into_frames_of_this_site_and_another(world: World) -> None:
    tab, page = await world.open("pointer_frames.html")
    try:

        async def loaded() -> Any:
            return await page_value(page, "window.ready.length === 2")

        await eventually(loaded, "both frames to say their buttons are in")
        # Each frame's button is 50, 30 inside a frame at 20, 40 (this site) and 360, 40 (another).
        await world.ok(tab, "mouse_click_xy", x=20 + 50 + 60, y=40 + 30 + 20)
        await world.ok(tab, "mouse_click_xy", x=360 + 50 + 60, y=40 + 30 + 20)

        async def clicked() -> Any:
            found = await page_value(page, "window.clicks.filter((message) => message.frame)")
            return len(found) == 2 and found

        assert await eventually(clicked, "both frames' buttons to be clicked") == [
            {"frame": "same", "isTrusted": True},
            {"frame": "other", "isTrusted": True},
        ]
    finally:
        await page.close()


@pytest.mark.parametrize(
    ("action", "args", "says"),
    [
        ("mouse_click_xy", {"x": -1, "y": 10}, "outside the tab's viewport"),
        ("mouse_click_xy", {"x": 10, "y": 100000}, "outside the tab's viewport"),
        ("mouse_move_xy", {"x": 100000, "y": 10}, "outside the tab's viewport"),
        ("mouse_drag_xy", {"startX": 10, "startY": 10, "endX": 10, "endY": -5}, "outside the tab's viewport"),
        ("mouse_click_xy", {"y": 10}, "x must be a number"),
        ("mouse_click_xy", {"x": "10", "y": 10}, "x must be a number"),
        ("mouse_click_xy", {"x": 10, "y": 10, "button": "thumb"}, "button must be"),
        ("mouse_click_xy", {"x": 10, "y": 10, "clickCount": 0}, "clickCount must be"),
        ("mouse_drag_xy", {"startX": 10, "startY": 10}, "endX must be a number"),
        ("mouse_wheel", {"deltaY": 10}, "deltaX must be a number"),
        ("mouse_down", {"button": "thumb"}, "button must be"),
    ],
)
async def test_bad_coordinates_are_refused_and_the_tab_still_works(
    world: World, canvas: tuple[int, Page], action: str, args: dict[str, Any], says: str
) -> None:
    tab, page = canvas
    refused = await world.fails(tab, action, **args)
    assert refused["code"] == "invalid_arguments" and says in refused["message"], refused
    assert await page_value(page, "window.hits.length + window.strokes.length + window.wheels.length") == 0
    x, y = await button_on_screenshot(world, tab)
    await world.ok(tab, "mouse_click_xy", x=x, y=y)
    assert [hit["hit"] for hit in await page_value(page, "window.hits")] == [True]


async def test_the_approval_policy_asks_before_pointer_tools_as_before_clicks(
    world: World, canvas: tuple[int, Page]
) -> None:
    tab, page = canvas
    await world.approval_policy("notReadOnly")
    try:
        for action, args in [
            ("mouse_click_xy", {"x": 300, "y": 200}),
            ("mouse_wheel", {"deltaX": 0, "deltaY": 100}),
        ]:
            asked = asyncio.ensure_future(world.act(tab, action, **args))
            window = await world.context.wait_for_event(
                "page", lambda opened: "/person/approval.html" in opened.url, timeout=30_000
            )
            await window.wait_for_selector("#agent:not(:empty)")
            assert f"browser_{action}" in await window.content()
            with contextlib.suppress(Exception):  # the window closes itself as it answers
                await window.get_by_role("button", name="Deny").click()
            denied = await asked
            assert denied["error"]["code"] == "not_approved", denied
        assert await page_value(page, "window.hits.length + window.wheels.length") == 0
        # Under the default policy they run at once, as a click does.
        await world.approval_policy("destructive")
        await world.ok(tab, "mouse_click_xy", x=300, y=200)
        assert len(await page_value(page, "window.hits")) == 1
    finally:
        await world.approval_policy("never")
