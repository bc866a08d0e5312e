"""End to end: the WebExtension driver's synthetic keyboard (extension/actions/webext/synthetic_keys.js).

As ``tests/e2e/test_e2e_synthetic_input.py``: the page function runs in an isolated world of a real
page in each browser; ``tests/pages/synthetic_text.html`` records the events it gets and keeps a
controlled input the way React keeps one (its own ``value`` property tracking what it set).
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio

from ..support import synthetic_pages
from ..support.page_functions import keys_call
from ..support.synthetic_pages import PageTab

pytestmark = pytest.mark.asyncio(loop_scope="module")


# The module's tab in each browser.
opened = synthetic_pages.tab_in_each_browser


@pytest_asyncio.fixture(loop_scope="module")
async def tab(opened: PageTab) -> PageTab:
    await opened.goto("synthetic_text.html")
    return opened


async def keys(tab: PageTab, **request: Any) -> dict[str, Any]:
    answer: dict[str, Any] = await tab.call(keys_call(), request)
    return answer


async def seen(tab: PageTab, target: str) -> list[tuple[str, Any]]:
    events = await tab.page_value("window.seen")
    # Focus moves and forms submit for real: those events are the browser's own.
    assert not any(event["isTrusted"] for event in events if event["type"] not in ("focus", "blur", "submit"))
    return [
        (event["type"], event.get("inputType") or event.get("key")) for event in events if event.get("target") == target
    ]


async def test_fill_replaces_the_text_in_one_insertion_and_change_comes_when_the_field_is_left(tab: PageTab) -> None:
    answer = await keys(tab, action="fill", target={"selector": "#name"}, text="Ada")
    assert answer == {"ok": True, "synthetic": True, "element": "<input#name>", "value": "Ada"}
    assert await seen(tab, "name") == [("focus", None), ("beforeinput", "insertText"), ("input", "insertText")]
    await keys(tab, action="press", key="Tab")
    assert await tab.page_value("document.activeElement.id") == "react"
    assert (await seen(tab, "name"))[3:] == [("keydown", "Tab"), ("blur", None), ("change", None)]


async def test_a_react_controlled_input_hears_the_fill_as_a_change(tab: PageTab) -> None:
    await keys(tab, action="fill", target={"selector": "#react"}, text="abc")
    assert await tab.page_value("window.onChanges") == ["abc"]
    assert await tab.page_value("document.getElementById('react').value") == "ABC"


async def test_typing_slowly_sends_each_key_and_a_cancelled_beforeinput_keeps_its_character_out(tab: PageTab) -> None:
    answer = await keys(tab, action="fill", target={"selector": "#guard"}, text="a1b", slowly=True)
    assert answer["value"] == "ab"
    kinds = [kind for kind, _ in await seen(tab, "guard") if kind != "focus"]
    typed = ["keydown", "keypress", "beforeinput", "input", "keyup"]
    assert kinds == [*typed, "keydown", "keypress", "beforeinput", "keyup", *typed]


async def test_submit_presses_enter_which_commits_the_field_and_submits_its_form(tab: PageTab) -> None:
    await keys(tab, action="fill", target={"selector": "#name"}, text="Grace", submit=True)
    assert (await tab.page_value("window.submitted"))["name"] == "Grace"
    enter = [kind for kind, _ in await seen(tab, "name")][-4:]
    assert enter == ["keydown", "keypress", "change", "keyup"]
    assert await seen(tab, "send") == [("click", None)]


async def test_backspace_arrows_and_control_a_edit_a_textarea(tab: PageTab) -> None:
    await keys(tab, action="fill", target={"selector": "#notes"}, text="abcd")
    for key in ["ArrowLeft", "Backspace", "End", "x", "Enter", "y"]:
        await keys(tab, action="press", key=key)
    assert await tab.page_value("document.getElementById('notes').value") == "abdx\ny"
    await keys(tab, action="press", key="Control+a")
    await keys(tab, action="press", key="Delete")
    assert await tab.page_value("document.getElementById('notes').value") == ""


async def test_contenteditable_and_date_fields_take_text(tab: PageTab) -> None:
    assert (await keys(tab, action="fill", target={"selector": "#rich"}, text="Bye"))["value"] == "Bye"
    assert (await keys(tab, action="fill", target={"selector": "#when"}, text="2026-11-28"))["value"] == "2026-11-28"
    refused = await keys(tab, action="fill", target={"selector": "#when"}, text="tomorrow")
    assert refused["code"] == "action_failed"
    refused = await keys(tab, action="fill", target={"selector": "#ok"}, text="x")
    assert refused["message"] == "cannot type into <button#ok>: it is not a text field"


async def test_enter_and_space_activate_a_focused_button(tab: PageTab) -> None:
    await tab.page_value("document.getElementById('ok').focus()")
    await keys(tab, action="press", key="Enter")
    await keys(tab, action="press", key=" ")
    assert await tab.page_value("window.clicked") == [False, False]
    assert (await keys(tab, action="press", key="Hyper+x"))["code"] == "invalid_arguments"


async def test_punctuation_keys_carry_the_us_keyboards_code_and_key_code_as_in_the_devtools_driver(
    tab: PageTab,
) -> None:
    await tab.page_value(
        "window.codes = [], document.addEventListener('keydown', (e) => codes.push([e.key, e.code, e.keyCode]))"
    )
    await keys(tab, action="fill", target={"selector": "#name"}, text="")
    for key in [",", "!", "F5"]:
        assert (await keys(tab, action="press", key=key))["ok"], key
    assert await tab.page_value("window.codes") == [[",", "Comma", 188], ["!", "Digit1", 49], ["F5", "F5", 116]]
