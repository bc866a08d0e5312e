"""The core's calls without an event loop: a page tool's call from its start to its one ending, the
refusals before it starts, tool discovery, the breaker and the rate limit.
"""

from __future__ import annotations

from typing import Any

import pytest

from broker.core import errors
from broker.core.broker_messages import CallTool, Disconnect, DiscoverTools
from broker.core.effects import RejectCall, ResolveCall, SendToExtension
from broker.core.messages import TabClosed, ToolResult, ToolsDiscovered, WireError

from .core_world import CART, SEARCH, claimed, connect, make_core, only, sent, shop_tab, start_call


def test_tool_call_resolves_with_the_pages_result_unchanged() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    result = {"items": [1, 2], "nested": {"x": None}}
    effects = core.extension_message(1, ToolResult(call_id, result), 1.0)
    assert effects == [ResolveCall(call_id, result)]
    assert core.pending_count == 0


@pytest.mark.parametrize(
    ("error", "code", "page_code"),
    [("it broke", "tool_failed", None), (WireError("out of stock", "sold_out"), "tool_failed", "sold_out")],
)
def test_page_error_rejects_the_call_with_its_message(error: Any, code: str, page_code: str | None) -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    rejection = only(core.extension_message(1, ToolResult(call_id, None, error), 1.0), RejectCall)
    assert isinstance(rejection.error, errors.PageToolFailed)
    assert rejection.error.code == code and rejection.error.page_code == page_code
    assert rejection.error.message in ("it broke", "out of stock")


def test_late_reply_after_timeout_is_dropped() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core, now=0.0)
    assert core.next_wakeup() == 10.0
    rejection = only(core.expire(10.0), RejectCall)
    assert isinstance(rejection.error, errors.CallTimedOut)
    assert "search" in rejection.error.message and "b1:7" in rejection.error.message
    assert core.extension_message(1, ToolResult(call_id, "late"), 11.0) == []


def test_duplicate_reply_is_dropped() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    assert len(core.extension_message(1, ToolResult(call_id, 1), 1.0)) == 1
    assert core.extension_message(1, ToolResult(call_id, 2), 1.0) == []


def test_reply_from_another_link_is_dropped() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(),))
    connect(core, 2, tabs=(shop_tab(8),))
    call_id = start_call(core, tab="b1:7")
    assert core.extension_message(2, ToolResult(call_id, "spoofed"), 1.0) == []
    assert core.pending_count == 1


def test_per_call_timeout_overrides_the_default() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    core.call_tool("s1", 7, "search", {}, 0.0, timeout=2.0)
    assert core.next_wakeup() == 2.0
    assert core.expire(1.9) == []
    assert isinstance(only(core.expire(2.0), RejectCall).error, errors.CallTimedOut)


def test_lost_link_fails_its_calls_at_once() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    rejection = only(core.link_closed(1, 1.0), RejectCall)
    assert rejection.call_id == call_id and isinstance(rejection.error, errors.ExtensionDisconnected)
    assert core.expire(100.0) == []


def test_ended_session_withdraws_its_calls_and_releases_its_tabs() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    core.claim_tab("s1", 7)
    effects = core.close_session("s1")
    assert isinstance(only(effects, RejectCall).error, errors.SessionEnded)
    assert Disconnect("s1") in sent(effects)
    assert core.tab(7).owner is None
    assert core.extension_message(1, ToolResult(call_id, "late"), 1.0) == []


def test_cancelled_call_is_forgotten() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    core.cancel(call_id, 1.0)
    assert core.pending_count == 0
    assert core.extension_message(1, ToolResult(call_id, "late"), 1.0) == []


def test_closing_a_tab_fails_calls_waiting_on_it() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    start_call(core)
    rejection = only(core.extension_message(1, TabClosed(7), 1.0), RejectCall)
    assert isinstance(rejection.error, errors.TabNotFound) and "closed" in rejection.error.message


def test_oversized_reply_fails_the_call_it_answers() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    rejection = only(core.oversized_reply(1, call_id, 40_000_000, 33_554_432, 1.0), RejectCall)
    assert isinstance(rejection.error, errors.MessageTooLarge)
    assert core.oversized_reply(1, "c999", 40_000_000, 33_554_432, 1.0) == []


def test_every_call_ends_exactly_once() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    ids = [start_call(core, now=0.0) for _ in range(4)]
    endings = core.extension_message(1, ToolResult(ids[0], "ok"), 1.0)
    endings += core.extension_message(1, ToolResult(ids[1], None, "bad"), 1.0)
    core.cancel(ids[2], 1.0)
    endings += core.expire(10.0)
    endings += core.link_closed(1, 11.0)
    endings += core.expire(50.0)
    ended = [e.call_id for e in endings if isinstance(e, (ResolveCall, RejectCall))]
    assert sorted(ended) == sorted([ids[0], ids[1], ids[3]])


# Refusals


def test_call_without_a_browser_says_how_to_connect_one() -> None:
    core = make_core()
    core.open_session("s1", "s1")
    with pytest.raises(errors.ExtensionNotConnected, match="load the browser-mcp extension"):
        core.call_tool("s1", 7, "search", {}, 0.0)


def test_unknown_tab_and_unknown_tool_are_refused() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    with pytest.raises(errors.TabNotFound):
        core.call_tool("s1", 99, "search", {}, 0.0)
    with pytest.raises(errors.ToolNotFound, match="it has: search, cart"):
        core.call_tool("s1", 7, "checkout", {}, 0.0)
    with pytest.raises(errors.InvalidRequest):
        core.call_tool("s1", "seven", "search", {}, 0.0)
    with pytest.raises(errors.BrowserNotFound):
        core.call_tool("s1", "b9:7", "search", {}, 0.0)


def test_tool_of_a_tab_whose_tools_are_unknown_is_forwarded() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(tools=None),))
    claimed(core)
    _, effects = core.call_tool("s1", 7, "anything", {}, 0.0)
    assert isinstance(sent(effects)[0], CallTool)


def test_same_tab_id_in_two_browsers_needs_the_browser_named() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(),))
    connect(core, 2, tabs=(shop_tab(),))
    claimed(core, tab="b2:7")
    with pytest.raises(errors.AmbiguousTab, match="b1:7, b2:7"):
        core.call_tool("s1", 7, "search", {}, 0.0)
    _, effects = core.call_tool("s1", "b2:7", "search", {}, 0.0)
    assert {e.link_id for e in effects if isinstance(e, SendToExtension)} == {2}


def test_session_limit_on_calls_in_flight() -> None:
    core = make_core(max_pending_per_session=2)
    connect(core, tabs=(shop_tab(),))
    start_call(core)
    start_call(core)
    with pytest.raises(errors.TooManyCalls):
        core.call_tool("s1", 7, "search", {}, 0.0)
    connect(core, 2, tabs=(shop_tab(8),))
    start_call(core, "s2", 8)


def test_unknown_session_is_refused() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    with pytest.raises(errors.SessionEnded):
        core.call_tool("ghost", 7, "search", {}, 0.0)


# Tool discovery


def test_known_tools_are_answered_without_asking_the_extension() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    call_id, effects = core.request_tools("s1", 7, 0.0)
    assert effects == [ResolveCall(call_id, (SEARCH, CART))]


def test_unknown_tools_are_discovered() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(tools=None),))
    core.open_session("s1", "s1")
    call_id, effects = core.request_tools("s1", 7, 0.0)
    assert sent(effects) == [DiscoverTools("s1", call_id, 7)]
    effects = core.extension_message(1, ToolsDiscovered(call_id, 7, (SEARCH,)), 1.0)
    assert ResolveCall(call_id, (SEARCH,)) in effects
    assert core.tab(7).tools == (SEARCH,)


def test_an_empty_tool_list_from_a_snapshot_is_checked_with_the_page() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7, tools=()),))
    claimed(core)
    call_id, effects = core.call_tool("s1", 7, "search", {"q": "x"}, 0.0)
    assert sent(effects) == [DiscoverTools("s1", call_id, 7)]
    answered = core.extension_message(1, ToolsDiscovered(call_id, 7, (SEARCH,)), 1.0)
    assert CallTool("s1", call_id, 7, "search", {"q": "x"}) in sent(answered)
    # Confirmed, an unknown tool is refused at once.
    with pytest.raises(errors.ToolNotFound):
        core.call_tool("s1", 7, "teleport", {}, 2.0)


# The breaker and the rate limit


def test_a_breaker_opens_after_timeouts_in_a_row_then_lets_one_trial_through() -> None:
    core = make_core(breaker_failures=2, breaker_cooldown=30.0, ping_interval=1e6, silence_timeout=1e6)
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    for start in (0.0, 10.0):
        core.call_tool("s1", 7, "search", {}, start, timeout=1.0)
        assert isinstance(only(core.expire(start + 1.0), RejectCall).error, errors.CallTimedOut)
    with pytest.raises(errors.CircuitOpen, match="in 30 s"):
        core.call_tool("s1", 7, "search", {}, 11.0)
    core.call_tool("s1", 7, "cart", {}, 11.0)  # another tool of the tab is not held back
    trial, _ = core.call_tool("s1", 7, "search", {}, 41.0)
    with pytest.raises(errors.CircuitOpen, match="trial call"):
        core.call_tool("s1", 7, "search", {}, 41.5)
    core.extension_message(1, ToolResult(trial, "ok"), 42.0)
    core.call_tool("s1", 7, "search", {}, 42.0)  # closed again


def test_a_sessions_calls_are_rate_limited_without_touching_others() -> None:
    core = make_core(rate_limit=2.0, rate_burst=2)
    connect(core, tabs=(shop_tab(), shop_tab(8)))
    claimed(core)
    claimed(core, "s2", 8)
    core.call_tool("s1", 7, "search", {}, 0.0)
    core.call_tool("s1", 7, "search", {}, 0.0)
    with pytest.raises(errors.RateLimited) as limited:
        core.call_tool("s1", 7, "search", {}, 0.1)
    assert limited.value.retry_after == pytest.approx(0.4)
    core.call_tool("s2", 8, "search", {}, 0.1)
    core.call_tool("s1", 7, "search", {}, 0.5)  # a token back after half a second


def test_the_extensions_own_ownership_refusal_is_the_brokers_tab_not_claimed() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    refusal = ToolResult(call_id, error=WireError("tab 7 is not claimed by this session", "tab_not_claimed"))
    rejected = only(core.extension_message(1, refusal, 1.0), RejectCall)
    assert isinstance(rejected.error, errors.TabNotClaimed) and "not claimed" in rejected.error.message
