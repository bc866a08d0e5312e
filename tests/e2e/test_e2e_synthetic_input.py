"""End to end: the WebExtension driver's synthetic mouse (extension/actions/webext/synthetic_input.js).

The page functions run in an isolated world of a real page, as ``chrome.scripting.executeScript``
runs them, in each browser (``tests/support/synthetic_pages.py``); ``tests/pages/synthetic_pointer.html``
records every event it gets, as it saw them (isTrusted included), and what it was given.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
import pytest_asyncio

from ..harness.waiting import eventually
from ..support import synthetic_pages
from ..support.page_functions import input_call, keys_call, ref_of, snapshot_call
from ..support.synthetic_pages import PageTab

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGE = "synthetic_pointer.html"
CLICK_SEQUENCE = [
    "pointerover", "mouseover", "pointerenter", "mouseenter", "pointermove", "mousemove", "pointerdown",
    "mousedown", "focus", "focusin", "pointerup", "mouseup", "click",
]  # fmt: skip


# The module's tab in each browser.
opened = synthetic_pages.tab_in_each_browser


@pytest_asyncio.fixture(loop_scope="module")
async def tab(opened: PageTab) -> PageTab:
    await opened.goto(PAGE)
    return opened


async def act(tab: PageTab, **request: Any) -> dict[str, Any]:
    answer: dict[str, Any] = await tab.call(input_call(), request)
    return answer


async def seen(tab: PageTab, target: str | None = None) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = await tab.page_value("window.seen")
    return [event for event in events if target is None or event["target"] == target]


async def test_a_click_by_ref_reaches_the_page_as_the_whole_sequence_a_mouse_makes(tab: PageTab) -> None:
    ref = ref_of(await tab.call(snapshot_call(), None), 'button "Buy"')
    answer = await act(tab, action="click", target={"ref": ref})
    assert answer == {"ok": True, "synthetic": True, "element": "<button#buy>"}
    events = await seen(tab, "buy")
    assert [event["type"] for event in events] == CLICK_SEQUENCE
    # Focus moves for real (element.focus()): its events are the browser's own.
    trusted = [event["type"] for event in events if event["isTrusted"]]
    assert trusted == ["focus", "focusin"]
    press = next(event for event in events if event["type"] == "mousedown")
    assert (press["button"], press["buttons"], press["detail"]) == (0, 1, 1)
    assert await tab.page_value("document.activeElement.id") == "buy"


async def test_a_double_click_counts_two_clicks_then_a_dblclick(tab: PageTab) -> None:
    await act(tab, action="click", target={"selector": "#buy"}, doubleClick=True, modifiers=["Shift"])
    clicks = [(event["type"], event["detail"]) for event in await seen(tab, "buy") if "click" in event["type"]]
    assert clicks == [("click", 1), ("click", 2), ("dblclick", 2)]
    assert all(event["shiftKey"] for event in await seen(tab, "buy") if event["type"].startswith("mouse"))


async def test_a_checkbox_ticks_and_one_drawn_over_by_its_label_is_reached_through_it(tab: PageTab) -> None:
    await act(tab, action="click", target={"selector": "#gift"})
    assert await tab.page_value("document.getElementById('gift').checked") is True
    answer = await act(tab, action="check", target={"selector": "#terms"}, checked=True)
    assert answer["checked"] is True
    assert [event["type"] for event in await seen(tab, "terms")][-3:] == ["click", "input", "change"]


async def test_a_covered_button_is_refused_naming_what_covers_it(tab: PageTab) -> None:
    answer = await act(tab, action="click", target={"selector": "#under"})
    assert answer["code"] == "element_covered"
    assert "<div#cover> covers it" in answer["message"]
    assert await seen(tab, "under") == []


async def test_a_disabled_button_is_refused(tab: PageTab) -> None:
    answer = await act(tab, action="click", target={"selector": "#off"})
    assert (answer["code"], answer["message"]) == ("action_failed", "cannot click <button#off>: it is disabled")


async def test_an_element_that_runs_from_the_mouse_fails_as_moved(tab: PageTab) -> None:
    answer = await act(tab, action="click", target={"selector": "#runaway"})
    assert answer["code"] == "element_moved"
    assert "click" not in [event["type"] for event in await seen(tab, "runaway")]


async def test_a_button_below_the_fold_is_scrolled_to_and_a_shadow_tree_button_is_reached(tab: PageTab) -> None:
    assert (await act(tab, action="click", target={"selector": "#far"}))["ok"]
    ref = ref_of(await tab.call(snapshot_call(), None), 'button "Inside"')
    assert (await act(tab, action="click", target={"ref": ref}))["ok"]
    assert await tab.page_value("window.clicks") == {"far": 1, "inner": 1}


async def test_a_ref_whose_element_left_the_page_is_stale(tab: PageTab) -> None:
    ref = ref_of(await tab.call(snapshot_call(), None), 'button "Buy"')
    await tab.page_value("document.getElementById('buy').remove()")
    answer = await act(tab, action="click", target={"ref": ref})
    assert (answer["code"], answer["why"]) == ("stale_ref", "gone")
    assert (await act(tab, action="click", target={"ref": "e9999"}))["why"] == "unknown"
    assert (await act(tab, action="click", target={"selector": "##"}))["code"] == "invalid_arguments"


async def test_select_chooses_by_value_or_label_and_fires_input_and_change(tab: PageTab) -> None:
    answer = await act(tab, action="select", target={"selector": "#size"}, values=["Large"])
    assert answer["selected"] == ["l"]
    assert [event["type"] for event in await seen(tab, "size")][-2:] == ["input", "change"]
    assert (await act(tab, action="select", target={"selector": "#colours"}, values=["r", "Blue"]))["ok"]
    assert await tab.page_value("[...document.getElementById('colours').selectedOptions].map(o => o.value)") == [
        "r",
        "b",
    ]
    refused = await act(tab, action="select", target={"selector": "#size"}, values=["s", "m"])
    assert refused["message"].endswith("it takes only one option")


async def test_an_html5_drag_carries_its_data_to_the_drop_zone(tab: PageTab) -> None:
    answer = await act(tab, action="drag", target={"selector": "#card"}, to={"selector": "#zone"})
    assert (answer["dropped"], answer["html5"]) == (True, True)
    assert await tab.page_value("window.dropped") == "card-1"
    kinds = [event["type"] for event in await seen(tab) if event["type"].startswith("drag") or event["type"] == "drop"]
    assert kinds == ["dragstart", "drag", "dragenter", "dragover", "drop", "dragend"]


async def test_a_pointer_drag_moves_over_the_way_and_releases_on_the_target(tab: PageTab) -> None:
    answer = await act(tab, action="drag", target={"selector": "#knob"}, to={"selector": "#rail"})
    assert (answer["dropped"], answer["html5"]) == (True, False)
    assert await tab.page_value("window.knobDrop") == "rail"
    assert "rail" in await tab.page_value("window.knobPath")


def file(name: str, text: str) -> dict[str, Any]:
    return {"name": name, "type": "text/plain", "modified": 0, "data": base64.b64encode(text.encode()).decode()}


async def read_by_the_page(tab: PageTab) -> Any:
    """What the page has read of the files it was given: it reads them after the change event."""
    return await eventually(
        lambda: tab.page_value("window.received.length && window.received"), "the page to read its files"
    )


async def test_upload_sets_the_files_the_page_then_reads(tab: PageTab) -> None:
    answer = await act(
        tab, action="upload", target={"selector": "#docs"}, files=[file("a.txt", "A"), file("b.txt", "é")]
    )
    assert answer["files"] == ["a.txt", "b.txt"]
    got = await read_by_the_page(tab)
    assert got == [
        {"input": "docs", "files": [{"name": "a.txt", "type": "text/plain", "size": 1, "text": "A"},
                                    {"name": "b.txt", "type": "text/plain", "size": 2, "text": "é"}]},
    ]  # fmt: skip
    refused = await act(tab, action="upload", target={"selector": "#photo"}, files=[file("a", ""), file("b", "")])
    assert refused["message"] == "<input#photo> takes only one file"


async def test_a_click_that_opens_a_file_input_is_answered_by_an_upload_without_target(tab: PageTab) -> None:
    assert (await act(tab, action="upload", files=[]))["code"] == "no_file_chooser"
    answer = await act(tab, action="click", target={"selector": "#pick"})
    assert answer["fileChooser"] is True
    assert (await act(tab, action="upload", files=[file("c.txt", "C")]))["element"] == "<input#hidden-file>"
    assert (await read_by_the_page(tab))[0]["input"] == "hidden-file"


async def test_a_page_that_replaced_the_dom_methods_first_neither_stops_nor_fools_the_input(opened: PageTab) -> None:
    await opened.goto("synthetic_hostile.html")
    # Firefox runs the extension's WebMCP polyfill in the page's world, where the page sees it look.
    await opened.page_value("window.tampered = []")
    assert (await act(opened, action="click", target={"selector": "#buy"}))["ok"]
    answer = await opened.call(keys_call(), {"action": "fill", "target": {"selector": "#name"}, "text": "Ada"})
    assert answer["value"] == "Ada"
    assert await opened.page_value("window.tampered") == []
    kinds = [(event["type"], event["target"]) for event in await opened.page_value("window.seen")]
    assert kinds == [("pointerdown", "buy"), ("mousedown", "buy"), ("click", "buy"), ("beforeinput", "name"),
                     ("input", "name")]  # fmt: skip
