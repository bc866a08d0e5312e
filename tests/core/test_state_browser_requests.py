"""The core's built-in browser actions and browser-wide requests without an event loop: the current
tab, actions on an owned tab, and windows, history and bookmarks (broker/core/browser_requests.py).
"""

from __future__ import annotations

import pytest

from broker.core import errors
from broker.core.broker_messages import BrowserAction, BrowserRequest
from broker.core.browser_wide import history_call, windows_call
from broker.core.effects import RejectCall, ResolveCall
from broker.core.messages import (
    BrowserInfo,
    Connected,
    TabClosed,
    TabCreated,
    TabInfo,
    TabUpdated,
    ToolResult,
    WireError,
)
from broker.core.state import Broker

from .core_world import connect, make_core, only, sent, shop_tab


def actions_browser(core: Broker, actions: tuple[str, ...] = ("snapshot", "click", "evaluate")) -> None:
    core.link_opened(1, 0.0)
    hello = Connected(BrowserInfo("Chrome", "156"), (shop_tab(7), shop_tab(8)), actions=actions)
    core.extension_message(1, hello, 0.0)


def test_the_current_tab_is_the_one_last_opened_focused_or_claimed() -> None:
    core = make_core()
    actions_browser(core)
    core.open_session("s1", "s1")
    with pytest.raises(errors.InvalidRequest, match="no current tab"):
        core.current_tab("s1")
    core.claim_tab("s1", 7)
    assert core.current_tab("s1").id == 7
    call_id, _ = core.open_tab("s1", "https://new.example/", True, 0.0)
    core.extension_message(1, TabCreated(TabInfo(20, "New", "https://new.example/"), request_id=call_id), 0.0)
    assert core.current_tab("s1").id == 20
    core.claim_tab("s1", 8)
    core.focus_tab("s1", 7)
    assert core.current_tab("s1").id == 7
    core.focus_tab("s1", 8)
    assert core.current_tab("s1").id == 8
    core.release_tab("s1", 8)
    with pytest.raises(errors.InvalidRequest):
        core.current_tab("s1")


def test_an_action_goes_to_an_owned_tab_of_a_browser_that_carries_it_out() -> None:
    core = make_core()
    actions_browser(core)
    core.open_session("s1", "Claude")
    core.open_session("s2", "Cursor")
    with pytest.raises(errors.TabNotClaimed, match="claim it first"):
        core.call_action("s1", 7, "snapshot", {}, 0.0)
    core.claim_tab("s2", 8)
    with pytest.raises(errors.TabOwnedByOther, match="Cursor"):
        core.call_action("s1", 8, "snapshot", {}, 0.0)
    core.claim_tab("s1", 7)
    with pytest.raises(errors.NotSupported, match="browser_hover"):
        core.call_action("s1", None, "hover", {"target": "e1"}, 0.0)
    call_id, effects = core.call_action("s1", None, "click", {"target": "e1"}, 0.0)
    assert sent(effects) == [BrowserAction("s1", call_id, 7, "click", {"target": "e1"})]
    assert core.browser_actions() == frozenset({"snapshot", "click", "evaluate"})
    done = core.extension_message(1, ToolResult(call_id, {"content": []}), 1.0)
    assert only(done, ResolveCall).value == {"content": []}


def test_an_action_that_does_not_answer_times_out_naming_the_tool() -> None:
    core = make_core()
    actions_browser(core)
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    core.call_action("s1", 7, "snapshot", {}, 0.0, timeout=2.0)
    rejection = only(core.expire(2.0), RejectCall)
    assert rejection.error.message == "tool 'browser_snapshot' on tab b1:7 did not answer within 2 s"


def test_evaluate_turned_off_is_neither_offered_nor_sent() -> None:
    core = make_core(allow_evaluate=False)
    actions_browser(core)
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    assert core.browser_actions() == frozenset({"snapshot", "click"})
    with pytest.raises(errors.NotSupported, match="--no-evaluate"):
        core.call_action("s1", 7, "evaluate", {"function": "() => 1"}, 0.0)


# Windows, history and bookmarks


def windowed(core: Broker, *tabs: TabInfo) -> None:
    core.link_opened(1, 0.0)
    snapshot = Connected(BrowserInfo("Chrome", "156"), tabs, features=("windows", "history", "bookmarks"))
    core.extension_message(1, snapshot, 0.0)


def placed(tab_id: int, window_id: int, index: int) -> TabInfo:
    return TabInfo(tab_id, f"Tab {tab_id}", f"https://t{tab_id}.example/", (), window_id, index=index, pinned=False)


def test_a_window_is_the_sessions_only_while_every_tab_in_it_is() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 0), placed(8, 1, 1), placed(9, 2, 0))
    core.open_session("s1", "Claude Code")
    core.claim_tab("s1", 9)
    call_id, effects = core.browser_request("s1", windows_call("close", 2), 0.0)[1:]
    # Closing names the tabs it was checked with, so the extension keeps a window that gained one.
    assert sent(effects) == [BrowserRequest("s1", call_id, "closeWindow", {"windowId": 2, "tabIds": [9]})]
    core.claim_tab("s1", 7)
    with pytest.raises(errors.WindowNotOwned, match=r"the person's tab b1:8 \(Tab 8\)"):
        core.browser_request("s1", windows_call("focus", "b1:1"), 0.0)
    # A tab that moves in from another window counts from its report on.
    core.extension_message(1, TabUpdated(placed(8, 2, 1)), 0.0)
    core.browser_request("s1", windows_call("focus", 1), 0.0)
    with pytest.raises(errors.WindowNotOwned, match="the person's tab b1:8"):
        core.browser_request("s1", windows_call("close", 2), 0.0)


def test_the_window_list_takes_tabs_and_owners_from_the_brokers_records() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 1), placed(8, 1, 0), placed(9, 2, 0))
    core.open_session("s1", "Claude Code")
    core.claim_tab("s1", 9)
    answer = {"windows": [{"id": 1, "focused": True, "state": "normal"}, {"id": 2, "type": 5}, {"id": "x"}, 3]}
    views = core.describe_windows("s1", "b1", answer)
    assert [(v.id, v.tabs, v.yours, v.focused, v.type) for v in views] == [
        (1, (8, 7), False, True, None),
        (2, (9,), True, None, None),
    ]
    with pytest.raises(errors.PageToolFailed):
        core.describe_windows("s1", "b1", {"windows": None})


def test_an_older_extension_is_asked_for_no_window_or_record() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    for call in (windows_call("list"), history_call("x")):
        with pytest.raises(errors.NotSupported, match="does not offer"):
            core.browser_request("s1", call, 0.0)
    with pytest.raises(errors.NotSupported):
        core.open_tab("s1", "https://x.example/", True, 0.0, new_window=True)


def test_consent_required_from_the_extension_is_the_persons_refusal() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 0))
    core.open_session("s1", "s1")
    _, call_id, _ = core.browser_request("s1", history_call("news"), 0.0)
    refusal = ToolResult(call_id, error=WireError("turn on sharing in the options page", "consent_required"))
    rejected = only(core.extension_message(1, refusal, 0.0), RejectCall)
    assert isinstance(rejected.error, errors.ConsentRequired) and "options page" in rejected.error.message


def test_closing_tabs_one_by_one_never_empties_a_window_the_session_may_not_close() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 0), placed(8, 1, 1))
    core.open_session("s1", "s1")
    core.claim_tab("s1", 8)
    with pytest.raises(errors.WindowNotOwned):
        core.browser_request("s1", windows_call("close", 1), 0.0)
    core.close_tab("s1", 8, 0.0)
    core.extension_message(1, TabClosed(8), 1.0)
    with pytest.raises(errors.TabNotClaimed):
        core.close_tab("s1", 7, 1.0)
    assert [(t.id, t.window_id) for t in core.tabs()] == [(7, 1)]
