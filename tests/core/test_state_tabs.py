"""The core's tabs without an event loop: who owns a tab (opened, opened by another tab, claimed,
released, closed) and what each session sees and is told of them.
"""

from __future__ import annotations

import pytest

from broker.core import errors
from broker.core.broker_messages import CloseTab, FocusTab, OpenTab, TabClaimed, TabReleased
from broker.core.effects import RejectCall, ResolveCall, TabsChanged
from broker.core.messages import TabClosed, TabCreated, TabFocused, TabInfo, ToolResult, ToolsChanged, WireError

from .core_world import CART, SEARCH, claimed, connect, make_core, only, sent, shop_tab


def test_opened_tab_belongs_to_the_session_that_asked() -> None:
    core = make_core()
    connect(core)
    core.open_session("s1", "Claude Code")
    call_id, effects = core.open_tab("s1", "https://shop.example/", True, 0.0)
    assert sent(effects) == [OpenTab("s1", "https://shop.example/", True, call_id)]
    answer = only(core.extension_message(1, TabCreated(shop_tab(), request_id=call_id), 1.0), ResolveCall)
    assert (answer.value.ref, answer.value.owner, answer.value.owner_name) == ("b1:7", "s1", "Claude Code")


def test_a_tab_opened_by_a_sessions_tab_is_that_sessions_from_birth_and_joins_its_group() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    effects = core.extension_message(1, TabCreated(TabInfo(9, "Popup", "https://shop.example/p"), opener_tab_id=7), 1.0)
    assert sent(effects) == [TabClaimed("s1", 9)]
    assert TabsChanged(frozenset({"s1"})) in effects
    assert core.tab(9).owner == "s1"
    # Its opener stays the session's current tab: the result of the click names the new one.
    assert core.current_tab("s1").id == 7
    core.close_tab("s1", 9, 1.0)


def test_a_tab_opened_by_the_persons_tab_stays_the_persons() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    effects = core.extension_message(1, TabCreated(TabInfo(9, "Popup", "https://shop.example/p"), opener_tab_id=7), 1.0)
    assert sent(effects) == []
    assert core.tab(9).owner is None


def test_an_opener_the_browser_never_announced_or_of_another_browser_gives_the_tab_nobody() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    connect(core, link=2, tabs=(shop_tab(40),))
    claimed(core, "s1", "b2:40")
    for tab_id, opener in ((9, 40), (10, 12345), (11, 11), (12, -3)):
        created = TabCreated(TabInfo(tab_id, "Popup", "https://x.example/"), opener_tab_id=opener)
        effects = core.extension_message(1, created, 1.0)
        assert sent(effects) == [], opener
        assert core.tab(f"b1:{tab_id}").owner is None
    assert core.tab("b2:40").owner == "s1"


def test_a_tab_someone_holds_is_not_taken_by_a_later_report_of_its_opener() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(), shop_tab(8)))
    claimed(core, "s1", 7)
    claimed(core, "s2", 8)
    effects = core.extension_message(1, TabCreated(shop_tab(8), opener_tab_id=7), 1.0)
    assert sent(effects) == [] and core.tab(8).owner == "s2"


def test_open_tab_answered_by_focusing_an_own_tab() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
    answer = only(core.extension_message(1, TabFocused(7, request_id=call_id), 1.0), ResolveCall)
    assert answer.value.owner == "s1" and answer.value.active


def test_open_tab_answered_by_focusing_a_tab_not_the_sessions_gives_it_no_owner() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(), shop_tab(8)))
    core.open_session("s1", "s1")
    claimed(core, "s2", 8)
    call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
    refused = only(core.extension_message(1, TabFocused(7, request_id=call_id), 1.0), RejectCall)
    assert isinstance(refused.error, errors.TabNotClaimed) and "brought its tab b1:7" in refused.error.message
    call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
    refused = only(core.extension_message(1, TabFocused(8, request_id=call_id), 1.0), RejectCall)
    assert isinstance(refused.error, errors.TabOwnedByOther) and refused.error.owner_session_id == "s2"
    assert [(t.id, t.owner) for t in core.tabs()] == [(7, None), (8, "s2")]
    with pytest.raises(errors.InvalidRequest, match="no current tab"):
        core.current_tab("s1")


def test_other_sessions_tab_is_refused_naming_the_owner() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "Claude Code")
    core.open_session("s2", "Cursor")
    core.claim_tab("s1", 7)
    for attempt in (
        lambda: core.call_tool("s2", 7, "search", {}, 0.0),
        lambda: core.close_tab("s2", 7, 0.0),
        lambda: core.claim_tab("s2", 7),
        lambda: core.release_tab("s2", 7),
    ):
        with pytest.raises(errors.TabOwnedByOther, match="Claude Code") as refused:
            attempt()
        assert refused.value.owner_session_id == "s1"
    core.call_tool("s1", 7, "search", {}, 0.0)


def test_released_tab_can_be_claimed_by_another_session() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    core.open_session("s2", "s2")
    _, claimed = core.claim_tab("s1", 7)
    assert TabClaimed("s1", 7) in sent(claimed)
    _, released = core.release_tab("s1", 7)
    assert TabReleased("s1", 7) in sent(released) and TabsChanged(frozenset({"s1"})) in released
    view, effects = core.claim_tab("s2", 7)
    assert view.owner == "s2" and TabsChanged(frozenset({"s2"})) in effects
    assert TabClaimed("s2", 7) in sent(effects)


def test_claiming_an_own_tab_again_or_releasing_a_free_one_tells_nobody() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    assert core.claim_tab("s1", 7)[1] == []
    core.release_tab("s1", 7)
    assert core.release_tab("s1", 7)[1] == []


def test_close_tab_ends_when_the_browser_reports_it_closed() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    call_id, effects = core.close_tab("s1", 7, 0.0)
    assert sent(effects) == [CloseTab("s1", 7, call_id)]
    answer = only(core.extension_message(1, TabClosed(7), 1.0), ResolveCall)
    assert answer.call_id == call_id and answer.value == {"closed": "b1:7"}


# What a session sees


def test_session_sees_the_tools_of_its_own_tabs_only() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7), shop_tab(8, tools=(SEARCH,)), shop_tab(9)))
    core.open_session("s1", "s1")
    core.open_session("s2", "s2")
    core.claim_tab("s1", 7)
    core.claim_tab("s2", 9)
    assert [(v.ref, t.name) for v, t in core.session_tools("s1")] == [("b1:7", "search"), ("b1:7", "cart")]
    view, effects = core.focus_tab("s1", 7)
    assert view.ref == "b1:7" and sent(effects) == [FocusTab("s1", 7)]
    assert [v.ref for v, _ in core.session_tools("s2")] == ["b1:9", "b1:9"]
    with pytest.raises(errors.TabOwnedByOther):
        core.focus_tab("s1", 9)
    _, claimed_8 = core.claim_tab("s1", 8)
    assert TabsChanged(frozenset({"s1"})) in claimed_8
    assert [(v.ref, t.name) for v, t in core.session_tools("s1")][-1] == ("b1:8", "search")
    core.release_tab("s1", 8)
    assert [v.ref for v, _ in core.session_tools("s1")] == ["b1:7", "b1:7"]


def test_the_persons_tab_is_neither_closed_nor_focused_nor_called_until_claimed() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7),))
    core.open_session("s1", "s1")
    for attempt in (
        lambda: core.close_tab("s1", 7, 0.0),
        lambda: core.focus_tab("s1", 7),
        lambda: core.call_tool("s1", 7, "search", {}, 0.0),
    ):
        with pytest.raises(errors.TabNotClaimed, match="claim it first"):
            attempt()
    assert core.pending_count == 0
    _, tools_effects = core.request_tools("s1", 7, 0.0)  # listing its tools stays open
    assert only(tools_effects, ResolveCall).value == (SEARCH, CART)
    core.claim_tab("s1", 7)
    core.focus_tab("s1", 7)
    core.call_tool("s1", 7, "search", {}, 0.0)
    core.close_tab("s1", 7, 0.0)


def test_open_tab_the_browser_refuses_fails_with_its_message() -> None:
    core = make_core()
    connect(core)
    core.open_session("s1", "s1")
    call_id, _ = core.open_tab("s1", "chrome://settings/", True, 0.0)
    failure = WireError("cannot open chrome://settings/", "open_failed")
    rejection = only(core.extension_message(1, ToolResult(call_id, None, failure), 1.0), RejectCall)
    assert isinstance(rejection.error, errors.PageToolFailed) and rejection.error.page_code == "open_failed"


def test_a_change_touches_the_lists_of_the_tabs_owner_only() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7), shop_tab(8)))
    for session in ("owner", "former", "bystander"):
        core.open_session(session, session)
    core.claim_tab("owner", 7)
    changed = core.extension_message(1, ToolsChanged(7, (SEARCH,)), 1.0)
    assert only(changed, TabsChanged) == TabsChanged(frozenset({"owner"}))
    core.claim_tab("former", 8)
    _, released = core.release_tab("former", 8)
    assert only(released, TabsChanged) == TabsChanged(frozenset({"former"}))
    # A tab nobody holds touches no list; a browser that goes touches every one.
    assert not any(isinstance(e, TabsChanged) for e in core.extension_message(1, ToolsChanged(8, ()), 1.0))
    assert not any(isinstance(e, TabsChanged) for e in core.extension_message(1, TabCreated(shop_tab(9)), 1.0))
    assert TabsChanged() in core.link_closed(1, 2.0)


def test_an_opened_tab_the_broker_refuses_fails_its_open_at_once() -> None:
    core = make_core(max_tabs_per_browser=1)
    connect(core, tabs=(shop_tab(1),))
    core.open_session("s1", "s1")
    for refused, code in ((TabInfo(-1, "", "about:blank"), "invalid_message"), (shop_tab(2), "too_many_tabs")):
        call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
        effects = core.extension_message(1, TabCreated(refused, request_id=call_id), 1.0)
        assert [m.code for m in sent(effects)] == [code]
        failed = only(effects, RejectCall)
        assert failed.call_id == call_id and "the broker refused it" in failed.error.message
    assert core.pending_count == 0
