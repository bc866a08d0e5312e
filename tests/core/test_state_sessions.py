"""The core's sessions without an event loop: a session without a connection ends when left idle,
and a session is used only with the client token that opened it.
"""

from __future__ import annotations

from typing import Any

import pytest

from broker.core import errors
from broker.core.broker_messages import Disconnect
from broker.core.effects import ResolveCall, SessionExpired
from broker.core.messages import ToolResult
from broker.core.state import Broker

from .core_world import connect, make_core, only, sent, shop_tab


def idle_core(**overrides: Any) -> Broker:
    return make_core(session_idle=10.0, **overrides)


def test_session_left_idle_ends_and_releases_its_tabs() -> None:
    core = idle_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("rest", "rest", 0.0, ends_when_idle=True)
    core.claim_tab("rest", 7)
    assert core.next_wakeup() is not None and core.next_wakeup() <= 10.0
    assert not any(isinstance(e, SessionExpired) for e in core.expire(9.9))
    effects = core.expire(10.0)
    assert only(effects, SessionExpired) == SessionExpired("rest", "no request for 10 s")
    assert Disconnect("rest") in sent(effects)
    assert not core.has_session("rest")
    assert core.tab(7).owner is None


def test_each_use_moves_the_end_of_an_idle_session() -> None:
    core = idle_core()
    core.open_session("rest", "rest", 0.0, ends_when_idle=True)
    core.open_session("rest", "rest", 6.0, ends_when_idle=True)
    assert core.expire(10.0) == []
    assert core.has_session("rest")
    assert core.next_wakeup() == 16.0
    assert only(core.expire(16.0), SessionExpired).session_id == "rest"


def test_a_call_in_flight_keeps_a_session_and_its_answer_counts_as_a_use() -> None:
    core = idle_core(ping_interval=1000.0, silence_timeout=2000.0)
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1", 0.0, ends_when_idle=True)
    core.claim_tab("s1", 7)
    call_id, _ = core.call_tool("s1", 7, "search", {}, 0.0, timeout=60.0)
    assert core.expire(30.0) == []
    assert core.has_session("s1")
    answer = core.extension_message(1, ToolResult(call_id, "ok"), 31.0)
    assert only(answer, ResolveCall).value == "ok"
    assert core.expire(40.9) == []
    assert only(core.expire(41.0), SessionExpired).session_id == "s1"


def test_an_open_listener_keeps_a_session_until_it_closes() -> None:
    core = idle_core()
    core.open_session("mcp", "Claude", 0.0, ends_when_idle=True)
    core.listener_opened("mcp")
    assert core.expire(100.0) == []
    core.listener_closed("mcp", 100.0)
    assert core.expire(109.0) == []
    assert only(core.expire(110.0), SessionExpired).session_id == "mcp"


def test_sessions_with_a_connection_never_end_when_idle() -> None:
    core = idle_core()
    core.open_session("stdio", "Cursor", 0.0)
    assert core.next_wakeup() is None
    assert core.expire(1e9) == []
    assert core.has_session("stdio")


def test_a_session_ended_by_its_client_is_not_ended_again() -> None:
    core = idle_core()
    core.open_session("rest", "rest", 0.0, ends_when_idle=True)
    core.close_session("rest")
    assert core.expire(10.0) == []
    assert core.next_wakeup() is None


# Sessions belong to the credential that opened them


def test_a_session_is_used_only_with_the_token_that_opened_it() -> None:
    core = make_core()
    core.open_session("agent", "Agent", credential="alice")
    core.open_session("agent", "Agent", credential="alice")  # a use by its opener
    for other in ("mallory", None):
        with pytest.raises(errors.Forbidden, match="opened with client token alice"):
            core.open_session("agent", "Agent", credential=other)
    with pytest.raises(errors.Forbidden):
        core.check_session_end("agent", "mallory")
    core.check_session_end("agent", None)  # the broker's own token may end any session
    core.check_session_end("gone", "mallory")  # nothing to protect
    assert [s.credential for s in core.sessions()] == ["alice"]
