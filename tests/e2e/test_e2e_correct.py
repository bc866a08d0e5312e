"""End to end: built-in actions that do what they say or fail saying why, on the pages of
``tests/pages/correct_*.html``, with the real extension in headless Chromium (the browser, fake
broker and page server of ``tests/support/actions_world.py``).

Date, time, colour and range fields set and read back; clicks on a scrolled page, in scroll
containers and under an overlay; a redirect by script a moment after a click; a request in flight
as the tools attach; the way into a snapshot cut at its size limit.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Page

from ..support.actions_world import World, ref_of, world

__all__ = ["world"]  # the module's browser, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")


def ref_named(text: str, name: str) -> str:
    """The ref of the snapshot line whose element is named ``name``, whatever its role."""
    found = re.search(rf'^\s*- \w+ "{re.escape(name)}".*?\[ref=(e\d+)\]', text, re.M)
    assert found, f"no element named {name!r} in:\n{text}"
    return found.group(1)


async def page_events(page: Page, target: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.evaluate(
        "(target) => window.events.filter((e) => e.target === target)", target
    )
    return found


PICKED = {
    "date": ("Day", "2024-12-31"),
    "time": ("Hour", "13:45"),
    "datetime-local": ("Meeting", "2024-12-31T13:45"),
    "month": ("Month", "2024-12"),
    "week": ("Week", "2024-W52"),
    "color": ("Colour", "#ff8800"),
    "range": ("Volume", "8"),
}


async def test_type_sets_date_time_colour_and_range_fields_as_their_pickers_do(world: World) -> None:
    tab, page = await world.open("correct_inputs.html")
    snapshot = await world.ok(tab, "snapshot")
    for field, (name, value) in PICKED.items():
        await world.ok(tab, "type", target=ref_named(snapshot, name), text=value)
        assert await page.eval_on_selector(f"#{field}", "(input) => input.value") == value, field
        seen = await page_events(page, field)
        assert [event["type"] for event in seen] == ["input", "change"], (field, seen)
        assert all(event["value"] == value for event in seen), (field, seen)
    await page.close()


async def test_fill_form_sets_pickers_as_textboxes_and_a_range_as_a_slider(world: World) -> None:
    tab, page = await world.open("correct_inputs.html")
    snapshot = await world.ok(tab, "snapshot")
    fields = [
        {
            "name": name,
            "type": "slider" if field == "range" else "textbox",
            "target": ref_named(snapshot, name),
            "value": value,
        }
        for field, (name, value) in PICKED.items()
    ]
    await world.ok(tab, "fill_form", fields=fields)
    for field, (_, value) in PICKED.items():
        assert await page.eval_on_selector(f"#{field}", "(input) => input.value") == value, field
        assert [event["type"] for event in await page_events(page, field)] == ["input", "change"], field
    await page.close()


async def test_a_value_a_picker_does_not_take_fails_and_changes_nothing(world: World) -> None:
    tab, page = await world.open("correct_inputs.html")
    snapshot = await world.ok(tab, "snapshot")
    error = await world.fails(tab, "type", target=ref_named(snapshot, "Day"), text="31/12/2024")
    assert error["code"] == "action_failed"
    assert '"31/12/2024" is not a value it takes (date: YYYY-MM-DD)' in error["message"], error
    error = await world.fails(tab, "type", target=ref_named(snapshot, "Volume"), text="eleven")
    assert "(range: a number within its min and max" in error["message"], error
    error = await world.fails(
        tab,
        "fill_form",
        fields=[{"name": "Colour", "type": "textbox", "target": ref_named(snapshot, "Colour"), "value": "orange"}],
    )
    assert "(color: #rrggbb)" in error["message"], error
    error = await world.fails(tab, "type", target=ref_named(snapshot, "Locked"), text="2024-12-31")
    assert "it is disabled" in error["message"], error
    values = await page.evaluate("[...document.querySelectorAll('input')].map((input) => input.value)")
    assert values == ["", "", "", "", "", "#000000", "5", ""]
    assert await page.evaluate("window.events") == []
    await page.close()


async def clicks(page: Page) -> list[str]:
    found: list[str] = await page.evaluate("window.clicks")
    return found


async def test_clicks_reach_visible_elements_on_a_scrolled_page_and_in_scroll_boxes(world: World) -> None:
    tab, page = await world.open("correct_scroll.html")
    snapshot = await world.ok(tab, "snapshot")
    await world.ok(tab, "click", target=ref_of(snapshot, 'button "Far down"'))
    assert await page.evaluate("scrollY") > 1000, "the button is far down: the page scrolled to it"
    await world.ok(tab, "click", target=ref_of(snapshot, 'button "In the box"'))
    await world.ok(tab, "hover", target=ref_of(snapshot, 'button "Under the banner"'))
    assert await clicks(page) == ["far", "boxed"]
    assert "under" in await page.evaluate("window.hovered")

    # In a scroll box, a shade over the button takes the click: refused, naming the shade.
    error = await world.fails(tab, "click", target=ref_of(snapshot, 'button "Shaded"'))
    assert error["code"] == "element_covered"
    assert "cannot reach <button#shaded>: <div#boxed-shade> covers it" in error["message"], error
    assert await clicks(page) == ["far", "boxed"]
    await page.close()


async def test_a_click_on_a_disabled_control_fails_saying_so(world: World) -> None:
    """Chromium sends a disabled control the presses and nothing comes of them; the click says so
    rather than answer as done (Firefox's driver refuses it the same way)."""
    tab, page = await world.open("correct_scroll.html")
    snapshot = await world.ok(tab, "snapshot")
    for name, element in (("Switched off", "<button#off>"), ("Fenced off", "<button#fenced>")):
        error = await world.fails(tab, "click", target=ref_of(snapshot, f'button "{name}"'))
        assert (error["code"], error["message"]) == ("action_failed", f"cannot click {element}: it is disabled")
    assert await page.evaluate("window.hovered") == [], "the mouse never went to them"
    await world.ok(tab, "click", target=ref_of(snapshot, 'button "Far down"'))
    assert await clicks(page) == ["far"]
    await page.close()


async def test_an_overlay_shown_after_scrolling_is_named_and_nothing_under_it_is_acted_on(world: World) -> None:
    tab, page = await world.open("correct_scroll.html")
    snapshot = await world.ok(tab, "snapshot")
    await world.ok(tab, "click", target=ref_of(snapshot, 'button "Under the banner"'))
    await page.evaluate("showBanner()")
    covered = [
        ("click", {"target": ref_of(snapshot, 'button "Under the banner"')}),
        ("hover", {"target": ref_of(snapshot, 'button "Under the banner"')}),
        ("type", {"target": ref_named(snapshot, "Covered field"), "text": "hello"}),
        ("select_option", {"target": ref_named(snapshot, "Covered select"), "values": ["Two"]}),
    ]
    hovered = len(await page.evaluate("window.hovered"))
    for action, args in covered:
        error = await world.fails(tab, action, **args)
        assert "<div#banner> covers it" in error["message"], (action, error)
    assert await clicks(page) == ["under"]
    assert await page.evaluate("document.getElementById('covered-field').value") == ""
    assert await page.evaluate("document.getElementById('covered-select').value") == "One"
    assert await page.evaluate("window.hovered.filter((id) => id !== 'banner').length") <= hovered

    # The overlay's own button is there to be clicked; once it is gone, so is the refusal.
    await world.ok(tab, "click", target=ref_of(await world.ok(tab, "snapshot"), 'button "Accept"'))
    await world.ok(tab, "click", target=ref_of(snapshot, 'button "Under the banner"'))
    assert await clicks(page) == ["under", "accept", "under"]
    await page.close()


async def test_a_code_editors_unseen_text_area_is_typed_into_though_its_drawing_covers_it(world: World) -> None:
    tab, page = await world.open("correct_editor.html")
    await world.ok(tab, "type", target=ref_named(await world.ok(tab, "snapshot"), "Code"), text="print(1)")
    assert await page.evaluate("document.getElementById('lines').textContent") == "print(1)"
    await page.close()


async def test_items_of_an_infinite_feed_can_be_clicked_as_it_grows(world: World) -> None:
    tab, page = await world.open("correct_feed.html")
    # Scrolled a little, as a reader leaves it: the items on screen are at other places in the
    # page than on the screen, and none covers another.
    await page.evaluate("scrollTo(0, 150)")
    snapshot = await world.ok(tab, "snapshot")
    await world.ok(tab, "click", target=ref_of(snapshot, 'button "Item 9"'))
    await world.ok(tab, "click", target=ref_of(snapshot, 'button "Item 20"'))
    # Read to its end, the feed grows: an item it grew by is clicked too.
    await page.evaluate("scrollTo(0, document.body.scrollHeight)")
    await page.wait_for_function("document.querySelectorAll('#feed button').length >= 60")
    await world.ok(tab, "click", target=ref_of(await world.ok(tab, "snapshot"), 'button "Item 45"'))
    assert await clicks(page) == ["item9", "item20", "item45"]
    await page.close()


async def test_a_redirect_by_script_a_moment_after_a_click_is_reported_with_the_new_page(world: World) -> None:
    tab, page = await world.open("correct_redirect.html")
    text = await world.ok(tab, "click", target=ref_of(await world.ok(tab, "snapshot"), 'button "Sign in"'))
    assert f"- Page URL: {world.url('done.html?signed=in')}\n" in text, text
    assert 'heading "Thank you"' in text, text
    await page.close()


async def test_a_background_tab_that_moves_on_by_timer_after_a_click_is_reported_with_the_new_page(
    world: World,
) -> None:
    # Behind the person's tab, where Chromium may hold the page's timers to one a second.
    async with world.behind_the_persons_tab("correct_redirect.html") as (tab, _page):
        text = await world.ok(tab, "click", target=ref_of(await world.ok(tab, "snapshot"), 'button "Sign in"'))
        assert f"- Page URL: {world.url('done.html?signed=in')}\n" in text, text
        assert 'heading "Thank you"' in text, text


async def test_what_the_timers_a_click_set_did_shows_in_its_answer(world: World) -> None:
    # A timer set by the click, and one it set in turn: the answer waits for both, not for a navigation.
    async with world.behind_the_persons_tab("correct_redirect.html") as (tab, _page):
        text = await world.ok(tab, "click", target=ref_of(await world.ok(tab, "snapshot"), 'button "Save"'))
        assert "paragraph [ref=" in text and ": Saved" in text, text
        assert f"- Page URL: {world.url('correct_redirect.html')}\n" in text, text


async def release(world: World, key: str) -> None:
    """Let the server answer the page's /api/slow?KEY."""
    async with aiohttp.ClientSession() as http, http.get(f"{world.site}/api/release?{key}") as response:
        assert response.status == 200


async def test_a_redirect_once_a_fetch_the_click_started_is_answered_is_reported(world: World) -> None:
    # The server answers the page's fetch a second late, on its own (/api/late): the click waits for
    # the fetch its page started, and reports where the answer led. (The test does not hold the fetch
    # until it hears it: under load, the browser's report of the request to the test came later than
    # the click's 5 s for the fetch.)
    tab, page = await world.open("correct_redirect.html")
    snapshot = await world.ok(tab, "snapshot")
    text = await world.ok(tab, "click", target=ref_of(snapshot, 'button "Sign in by fetch"'))
    if f"- Page URL: {world.url('done.html?signed=fetch')}\n" not in text:
        heard = await page.evaluate("[...window.heard, `now ${Math.round(performance.now())}`]")
        raise AssertionError(f"the click did not wait for its fetch's answer; the button heard {heard}: {text}")
    await page.close()


async def test_a_click_that_sends_a_frame_elsewhere_answers_with_the_frames_new_page(world: World) -> None:
    tab, page = await world.open("correct_frame_leaves.html")
    snapshot = await world.ok(tab, "snapshot")
    button = re.search(r'button "Leave" \[ref=(f\d+e\d+)\]', snapshot)
    assert button, snapshot
    asked = asyncio.ensure_future(page.wait_for_event("request", lambda request: request.url.endswith("?frame-left")))
    click = asyncio.create_task(world.ok(tab, "click", target=button.group(1)))
    await asked
    # While the server holds the frame's new page, the click waits for it (5 s at most).
    answered, _ = await asyncio.wait({click}, timeout=1)
    assert not answered, f"the click answered with the frame it was leaving: {click.result()}"
    await release(world, "frame-left")
    text = await click
    assert '\\"query\\": \\"frame-left\\"' in text and 'button "Leave"' not in text, text
    await page.close()


async def test_the_marker_an_action_waits_for_is_beyond_the_pages_reach(world: World) -> None:
    # Each click ends with a marker from the tools' own world of the page: a page that could send
    # one would end an action's watch before what the input set off was heard.
    tab, page = await world.open("correct_redirect.html")
    assert "Checked" in await world.ok(tab, "click", target=ref_of(await world.ok(tab, "snapshot"), 'button "Check"'))
    assert await page.evaluate("typeof browserMcpMarker") == "undefined"
    for frame in page.frames:
        assert await frame.evaluate("Object.keys(window).filter((key) => /marker/i.test(key))") == []
    await page.close()


async def test_debugger_statements_stop_the_page_neither_during_an_action_nor_after(world: World) -> None:
    tab, page = await world.open("correct_redirect.html")
    check = ref_of(await world.ok(tab, "snapshot"), 'button "Check"')
    for _ in range(2):
        assert "Checked" in await world.ok(tab, "click", target=check)
    assert await page.evaluate("() => { debugger; return 'ran on'; }") == "ran on"
    await page.close()


async def test_a_request_in_flight_as_the_tools_attach_is_listed_once_answered(world: World) -> None:
    tab, page = await world.open("correct_fetch.html")
    # The first tool call attaches the debugger while the page's fetch waits for its answer.
    await world.ok(tab, "network_requests")
    await release(world, "load")
    await page.wait_for_function("document.getElementById('result').textContent === 'Got late'")
    text = await world.ok(tab, "network_requests")
    assert f"{world.site}/api/slow?load => [200]" in text, text
    await page.close()


async def test_a_page_past_the_snapshot_budget_is_folded_and_each_fold_names_the_ref_that_shows_it(
    world: World,
) -> None:
    tab, page = await world.open("correct_huge.html")
    text = await world.ok(tab, "snapshot")
    yaml, note = text.split("```yaml\n")[1].split("\n```\n")
    assert len(yaml) <= 100_000
    assert note.startswith("- Folded to 100000 of its "), note
    # The page's structure stays: its landmarks, and every part's heading.
    for landmark in ("banner", "navigation", "main", "contentinfo"):
        assert f"- {landmark}" in yaml, landmark
    assert all(f'heading "Part {n}"' in yaml for n in range(1, 9)), yaml[:2000]
    assert "The end of the huge page" in yaml
    folds = re.findall(r"… (\d+) more paragraph like these \[ref=(e\d+)\]", yaml)
    assert len(folds) == 8, folds
    more, part_ref = folds[7]
    assert int(more) == 297
    part = await world.ok(tab, "snapshot", target=part_ref)
    assert 'button "Open 8.300"' in part and "Folded" not in part, part[-500:]
    await world.ok(tab, "click", target=ref_of(part, 'button "Open 8.300"'))
    await page.close()
