"""The person in charge, as the core hears it: pause, ended sessions, tabs taken back, approvals.

Synchronous, no event loop: extension messages and clock readings in, effects out.
"""

from __future__ import annotations

import pytest

from broker.core import errors
from broker.core.broker_messages import BrowserAction, Disconnect, TabReleased
from broker.core.browser_wide import WideCall
from broker.core.effects import CallWaiting, RejectCall, ResolveCall, TabsChanged
from broker.core.messages import (
    ApprovalPending,
    BrowserInfo,
    Connected,
    PauseChanged,
    PersonEndedSession,
    PersonReleasedTab,
    TabInfo,
    ToolResult,
    WireError,
)
from broker.core.person import MAX_APPROVAL_WAIT
from broker.core.state import Broker

from .core_world import SEARCH, connect, make_core, only, sent, shop_tab, start_call

ACTIONS = ("snapshot", "click", "evaluate")


def with_actions(core: Broker, paused: bool = False) -> None:
    core.link_opened(1, 0.0)
    snapshot = Connected(BrowserInfo("Chrome", "156", "profile"), (shop_tab(),), actions=ACTIONS, paused=paused)
    core.extension_message(1, snapshot, 0.0)


# Pause


def test_a_paused_browser_refuses_calls_actions_and_new_tabs_before_they_reach_it() -> None:
    core = make_core()
    with_actions(core)
    core.open_session("s1", "Claude Code")
    core.claim_tab("s1", 7)
    assert core.extension_message(1, PauseChanged(True), 1.0) == []
    assert core.browsers()[0].paused
    for attempt in (
        lambda: core.call_tool("s1", 7, "search", {}, 1.0),
        lambda: core.call_action("s1", 7, "snapshot", {}, 1.0),
        lambda: core.open_tab("s1", "https://shop.example/", True, 1.0),
        lambda: core.close_tab("s1", 7, 1.0),
        lambda: core.focus_tab("s1", 7),
    ):
        with pytest.raises(errors.Paused, match="the person paused AI agents in this browser"):
            attempt()
    assert core.pending_count == 0
    # Listing and ownership are not the page's: they go on.
    assert core.tab(7).owner == "s1"
    core.extension_message(1, PauseChanged(False), 2.0)
    _, effects = core.call_tool("s1", 7, "search", {}, 2.0)
    assert sent(effects)


def test_a_browser_that_joins_paused_is_paused() -> None:
    core = make_core()
    with_actions(core, paused=True)
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    with pytest.raises(errors.Paused):
        core.call_tool("s1", 7, "search", {}, 0.0)


def test_the_extensions_own_refusals_become_the_persons_errors() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    expected = {
        "paused": errors.Paused,
        "not_approved": errors.NotApproved,
        "tab_busy": errors.TabBusy,
        "page_error": errors.PageToolFailed,
    }
    for code, kind in expected.items():
        call_id = start_call(core)
        effects = core.extension_message(1, ToolResult(call_id, error=WireError("no", code)), 1.0)
        error = only(effects, RejectCall).error
        assert type(error) is kind, code
    assert errors.Paused.status == 423 and errors.NotApproved.status == 403
    assert errors.error_to_wire(errors.NotApproved("denied")) == {"code": "not_approved", "message": "denied"}


def test_a_refusal_by_the_person_does_not_count_against_the_tool() -> None:
    core = make_core(breaker_failures=1)
    connect(core, tabs=(shop_tab(),))
    for _ in range(3):
        call_id = start_call(core)
        core.extension_message(1, ToolResult(call_id, error=WireError("denied", "not_approved")), 1.0)
    start_call(core)  # no circuit_open


# Ending a session


def test_a_session_the_person_ended_is_closed_and_its_client_hears_why_once() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    core.claim_tab("s1", 7)
    effects = core.extension_message(1, PersonEndedSession("s1"), 1.0)
    withdrawn = only(effects, RejectCall)
    assert withdrawn.call_id == call_id and isinstance(withdrawn.error, errors.SessionEnded)
    assert "the person ended session 's1'" in withdrawn.error.message
    assert Disconnect("s1") in sent(effects)
    assert TabsChanged(frozenset({"s1"})) in effects
    assert core.tab(7).owner is None and not core.has_session("s1")
    # A tool list asked meanwhile is empty, and does not use up the news.
    assert core.session_tools("s1") == []
    assert core.ended_by_person("s1")
    with pytest.raises(errors.SessionEnded, match="the person ended session"):
        core.call_tool("s1", 7, "search", {}, 2.0)
    with pytest.raises(errors.SessionEnded, match="does not exist or has ended"):
        core.call_tool("s1", 7, "search", {}, 2.0)
    # After hearing it, the client may start again.
    core.open_session("s1", "s1")
    assert core.has_session("s1")
    core.claim_tab("s1", 7)
    core.call_tool("s1", 7, "search", {}, 3.0)


def test_a_request_that_opens_its_session_hears_the_person_ended_it() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("rest", "rest", ends_when_idle=True)
    core.claim_tab("rest", 7)
    core.extension_message(1, PersonEndedSession("rest"), 1.0)
    with pytest.raises(errors.SessionEnded, match="the person ended"):
        core.open_session("rest", "rest", 2.0, ends_when_idle=True)
    core.open_session("rest", "rest", 3.0, ends_when_idle=True)
    assert core.has_session("rest")


def test_a_client_that_ends_its_session_itself_forgets_what_the_person_did() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    core.extension_message(1, PersonEndedSession("s1"), 1.0)
    core.close_session("s1")
    assert not core.ended_by_person("s1")


def test_a_browser_ends_only_the_sessions_it_was_told_of() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(7),))
    connect(core, 2, tabs=(shop_tab(8),))
    core.open_session("rest", "rest", ends_when_idle=True)
    core.claim_tab("rest", "b1:7")
    for ended in ("rest", "gone"):
        effects = core.extension_message(2, PersonEndedSession(ended), 1.0)
        [refusal] = sent(effects)
        assert refusal.code == "unknown_session" and "not told of (connect) or which has ended" in refusal.message
    assert core.has_session("rest") and core.tab("b1:7").owner == "rest"
    assert not core.ended_by_person("rest")
    # Its own browser may.
    core.extension_message(1, PersonEndedSession("rest"), 1.0)
    assert not core.has_session("rest")


def test_the_sessions_the_person_ended_are_remembered_within_the_session_limit() -> None:
    core = make_core(max_sessions=2)
    connect(core, tabs=(shop_tab(),))
    for name in ("a", "b", "c"):
        core.open_session(name, name)
        core.claim_tab(name, 7)
        core.extension_message(1, PersonEndedSession(name), 1.0)
    assert [core.ended_by_person(name) for name in ("a", "b", "c")] == [False, True, True]


# Taking a tab back


def test_the_person_takes_a_tab_back_and_its_former_owner_is_told_so() -> None:
    core = make_core()
    with_actions(core)
    core.open_session("s1", "Claude Code")
    core.claim_tab("s1", 7)
    effects = core.extension_message(1, PersonReleasedTab(7), 1.0)
    assert sent(effects) == [TabReleased("s1", 7)]
    assert TabsChanged(frozenset({"s1"})) in effects
    assert core.tab(7).owner is None
    with pytest.raises(errors.TabNotClaimed, match="The person took this tab back"):
        core.call_action("s1", 7, "snapshot", {}, 1.0)
    with pytest.raises(errors.InvalidRequest, match="no current tab"):
        core.call_action("s1", None, "snapshot", {}, 1.0)
    core.claim_tab("s1", 7)
    core.release_tab("s1", 7)
    with pytest.raises(errors.TabNotClaimed) as refused:
        core.call_action("s1", 7, "snapshot", {}, 1.0)
    assert "took this tab back" not in refused.value.message
    # A tab nobody holds, or one never announced.
    assert core.extension_message(1, PersonReleasedTab(7), 1.0) == []
    assert sent(core.extension_message(1, PersonReleasedTab(99), 1.0))[0].code == "unknown_tab"


# Approvals


def test_a_call_waiting_for_approval_is_not_timed_out_while_the_person_decides() -> None:
    core = make_core(ping_interval=1000.0, silence_timeout=2000.0)  # calls time out after 10 s
    with_actions(core)
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    call_id, effects = core.call_action("s1", 7, "evaluate", {"function": "() => 1"}, 0.0)
    assert isinstance(sent(effects)[0], BrowserAction)
    waiting = core.extension_message(1, ApprovalPending(call_id, 60.0), 5.0)
    assert waiting == [
        CallWaiting(
            call_id, 60.0, "waiting for the person to approve browser_evaluate on tab b1:7 in the browser (up to 60 s)"
        )
    ]
    assert core.next_wakeup() == 75.0
    assert core.expire(30.0) == []
    assert core.extension_message(1, ToolResult(call_id, result={"content": []}), 40.0) == [
        ResolveCall(call_id, {"content": []})
    ]


def test_a_call_waiting_too_long_times_out_saying_it_waited_for_the_person() -> None:
    core = make_core(ping_interval=1000.0, silence_timeout=2000.0)
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    core.extension_message(1, ApprovalPending(call_id, 10_000.0), 1.0)
    assert [e for e in core.expire(1.0 + MAX_APPROVAL_WAIT) if isinstance(e, RejectCall)] == []
    [timed_out] = [e for e in core.expire(1.0 + MAX_APPROVAL_WAIT + 10.0) if isinstance(e, RejectCall)]
    assert isinstance(timed_out.error, errors.CallTimedOut)
    assert "after waiting for the person's approval" in timed_out.error.message


def test_a_tab_whose_call_waits_for_the_person_takes_nothing_else_until_the_call_ends() -> None:
    core = make_core()
    core.link_opened(1, 0.0)
    tabs = (TabInfo(7, "Shop", "https://shop.example/", (SEARCH,), window_id=1), shop_tab(8))
    snapshot = Connected(BrowserInfo("Chrome", "156"), tabs, actions=(*ACTIONS, "navigate"), features=("windows",))
    core.extension_message(1, snapshot, 0.0)
    core.open_session("s1", "Agent A")
    core.open_session("s2", "Agent B")
    core.claim_tab("s1", 7)
    core.claim_tab("s1", 8)
    call_id, _ = core.call_action("s1", 7, "evaluate", {"function": "() => document.cookie"}, 0.0)
    core.extension_message(1, ApprovalPending(call_id, 60.0), 1.0)
    before = core.pending_count
    for attempt in (
        lambda: core.call_action("s1", 7, "navigate", {"url": "https://bank.example/"}, 2.0),
        lambda: core.call_action("s1", 7, "click", {"target": "e1"}, 2.0),
        lambda: core.call_action("s1", 7, "evaluate", {"function": "() => 2"}, 2.0),
        lambda: core.call_tool("s1", 7, "search", {}, 2.0),
        lambda: core.close_tab("s1", 7, 2.0),
        lambda: core.focus_tab("s1", 7),
        lambda: core.browser_request("s1", WideCall("closeWindow", window=1), 2.0),
        lambda: core.browser_request("s1", WideCall("focusWindow", window=1), 2.0),
    ):
        with pytest.raises(errors.TabBusy, match=r"tab b1:7 now: an approval is waiting there") as refused:
            attempt()
        assert refused.value.status == 409
        assert "browser_evaluate of session 'Agent A'" in refused.value.message
    core.release_tab("s1", 7)  # its own claim: the call stays its own
    with pytest.raises(errors.TabBusy):
        core.claim_tab("s2", 7)
    assert core.pending_count == before
    # Another tab is not held up, nor is listing this one.
    _, effects = core.call_action("s1", 8, "navigate", {"url": "https://shop.example/2"}, 2.0)
    assert sent(effects)
    assert core.request_tools("s2", 7, 2.0)[1]

    core.extension_message(1, ToolResult(call_id, error=WireError("not_approved", "denied")), 3.0)
    _, effects = core.call_action("s1", 8, "navigate", {"url": "https://shop.example/3"}, 3.0)
    core.claim_tab("s2", 7)
    _, effects = core.call_action("s2", 7, "navigate", {"url": "https://shop.example/"}, 3.0)
    assert isinstance(sent(effects)[0], BrowserAction)


def test_a_call_not_yet_waiting_for_the_person_keeps_its_tab_free() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    start_call(core)
    _, effects = core.call_tool("s1", 7, "search", {}, 1.0)
    assert sent(effects)


def test_approval_news_of_a_call_that_ended_is_dropped() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    core.extension_message(1, ToolResult(call_id, result=1), 1.0)
    assert core.extension_message(1, ApprovalPending(call_id, 60.0), 2.0) == []
    assert core.extension_message(1, ApprovalPending("c999", 60.0), 2.0) == []


def test_evaluate_the_person_turned_off_is_refused_saying_so() -> None:
    core = make_core()
    core.link_opened(1, 0.0)
    core.extension_message(1, Connected(BrowserInfo("Chrome", "156"), (shop_tab(),), actions=("snapshot",)), 0.0)
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    with pytest.raises(errors.NotSupported, match="the person turned browser_evaluate off"):
        core.call_action("s1", 7, "evaluate", {}, 0.0)
