"""The calls in flight (LinkCalls) on their own, without the Broker: taken under the session's
limits, ended exactly once, and the extension's answers read."""

from __future__ import annotations

import pytest

from broker.core.broker_messages import CancelCall
from broker.core.effects import RejectCall, ResolveCall, SendToExtension
from broker.core.errors import CallTimedOut, NotApproved, PageToolFailed, TabNotFound, TooManyCalls
from broker.core.messages import ToolResult, WireError
from broker.core.pending import CallKind

from .parts_world import make_parts


def test_a_call_ends_once_and_a_second_end_says_nothing() -> None:
    parts = make_parts()
    pending = parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")

    assert parts.calls.finish(pending.call_id, 1.0, value="found") == [ResolveCall(pending.call_id, "found")]
    assert parts.calls.finish(pending.call_id, 2.0, value="again") == []
    assert len(parts.calls.pending) == 0


def test_a_session_past_its_calls_in_flight_is_refused() -> None:
    parts = make_parts(max_pending_per_session=1)
    parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")

    with pytest.raises(TooManyCalls):
        parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")


def test_an_overdue_tool_call_times_out_and_the_browser_is_told_to_stop_it() -> None:
    parts = make_parts()
    pending = parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")

    assert parts.calls.expire(9.0) == []
    stop, rejected = parts.calls.expire(10.0)

    assert stop == SendToExtension(1, CancelCall("s1", pending.call_id, "timeout"))
    assert isinstance(rejected, RejectCall) and isinstance(rejected.error, CallTimedOut)


def test_an_answer_on_another_link_is_dropped() -> None:
    parts = make_parts()
    pending = parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")
    other = parts.link.__class__(2, parts.browser.key, last_received=0.0, last_sent=0.0)

    assert parts.calls.on_tool_result(other, ToolResult(pending.call_id, "forged"), 1.0) == []
    assert parts.calls.pending.get(pending.call_id) is pending


def test_the_extensions_refusal_code_becomes_the_brokers_own_error() -> None:
    parts = make_parts()
    pending = parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")

    [rejected] = parts.calls.on_tool_result(
        parts.link, ToolResult(pending.call_id, error=WireError("the person said no", "not_approved")), 1.0
    )

    assert isinstance(rejected, RejectCall) and isinstance(rejected.error, NotApproved)


def test_a_page_tools_own_error_keeps_the_pages_words() -> None:
    parts = make_parts()
    pending = parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")

    [rejected] = parts.calls.on_tool_result(
        parts.link, ToolResult(pending.call_id, error=WireError("tab 7 has no shoes", "out_of_stock")), 1.0
    )

    assert isinstance(rejected, RejectCall) and isinstance(rejected.error, PageToolFailed)
    assert rejected.error.args[0] == "tab 7 has no shoes"


def test_a_withdrawn_call_is_cancelled_in_the_browser() -> None:
    parts = make_parts()
    pending = parts.calls.add(parts.session, parts.browser, CallKind.ACTION, 0.0, None, 7, "browser_click")

    effects = parts.calls.finish(pending.call_id, 1.0, withdrawn=True)

    assert SendToExtension(1, CancelCall("s1", pending.call_id, "cancelled")) in effects


def test_a_closed_tab_fails_its_calls_but_a_close_of_it_succeeds() -> None:
    parts = make_parts()
    tool = parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")
    close = parts.calls.add(parts.session, parts.browser, CallKind.CLOSE_TAB, 0.0, None, 7)

    effects = parts.calls.tab_gone(parts.link, 7, 1.0)

    [failed] = [e for e in effects if isinstance(e, RejectCall)]
    assert failed.call_id == tool.call_id and isinstance(failed.error, TabNotFound)
    assert ResolveCall(close.call_id, {"closed": f"{parts.browser.key}:7"}) in effects
