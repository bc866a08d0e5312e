"""The stdio relay's bookkeeping without processes or sockets: parsed messages and link ups and
downs in, what to send to the broker and to the client out."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from broker.core.relay_state import (
    CONNECTION_CLOSED,
    GONE_BEFORE_ANSWER,
    GONE_DURING_CALL,
    RELAY_CODES,
    UNAVAILABLE,
    Effect,
    RelayState,
    SendToBroker,
    SendToClient,
)

Json = dict[str, Any]

PRIVATE_ID = "browser-mcp-relay-1"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def request(key: Any, method: str, **params: Any) -> Json:
    return {"jsonrpc": "2.0", "id": key, "method": method, "params": params}


def notification(method: str, **params: Any) -> Json:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(key: Any, value: Any = None) -> Json:
    return {"jsonrpc": "2.0", "id": key, "result": {} if value is None else value}


INITIALIZE = request(1, "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t"})
INITIALIZED = notification("notifications/initialized")


def from_client(state: RelayState, message: Any) -> list[Effect]:
    # Spaced out as a client might write it, so that passing the text on unchanged shows.
    return state.from_client(message, json.dumps(message, indent=None, separators=(", ", ": ")))


def from_broker(state: RelayState, message: Any) -> list[Effect]:
    return state.from_broker(message, json.dumps(message, separators=(",", ":")))


def to_broker(effects: list[Effect]) -> list[Any]:
    """What the broker gets, as it would parse it."""
    return [json.loads(e.line) if e.line is not None else e.message for e in effects if isinstance(e, SendToBroker)]


def to_client(effects: list[Effect]) -> list[Json]:
    return [json.loads(e.line) if e.line is not None else e.message for e in effects if isinstance(e, SendToClient)]


def linked(*messages: Json) -> RelayState:
    """A state with a link up that has carried ``messages`` from the client."""
    state = RelayState()
    state.link_up()
    for message in messages:
        from_client(state, message)
    return state


def established() -> RelayState:
    """A 2025 session: initialize answered, initialized sent."""
    state = linked(INITIALIZE)
    from_broker(state, result(1, {"protocolVersion": "2025-11-25"}))
    from_client(state, INITIALIZED)
    return state


def tool_call(key: Any, modern: bool = False) -> Json:
    params: Json = {"name": "t7_search", "arguments": {"query": "shoes"}}
    if modern:
        params["_meta"] = MODERN_META
    return request(key, "tools/call", **params)


def failed_call(key: Any, text: str, modern: bool = False, code: str | None = None) -> Json:
    answer: Json = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"error": {"code": code or RELAY_CODES[text], "message": text}},
        "isError": True,
    }
    if modern:
        answer["resultType"] = "complete"
    return result(key, answer)


def closed(key: Any, text: str) -> Json:
    return {"jsonrpc": "2.0", "id": key, "error": {"code": CONNECTION_CLOSED, "message": text}}


def listen(key: Any, tool_changes: bool) -> Json:
    return request(key, "subscriptions/listen", notifications={"toolsListChanged": tool_changes}, _meta=MODERN_META)


# Passing messages


def test_before_the_first_link_everything_waits_then_goes_in_order() -> None:
    state = RelayState()
    assert from_client(state, INITIALIZE) == []
    assert from_client(state, INITIALIZED) == []
    assert from_client(state, tool_call(2)) == []
    assert not state.up and not state.linked_before

    effects = state.link_up()

    assert to_broker(effects) == [INITIALIZE, INITIALIZED, tool_call(2)]
    assert to_client(effects) == []
    assert state.up and state.linked_before


def test_client_messages_reach_the_broker_in_the_text_they_came_in() -> None:
    state = linked()
    line = '{"jsonrpc": "2.0",   "id": 5, "method": "tools/list"}'

    assert state.from_client(json.loads(line), line) == [SendToBroker(json.loads(line), line)]


def test_an_answer_ends_the_request_and_reaches_the_client_as_the_broker_framed_it() -> None:
    state = linked(request(2, "tools/list"))
    assert not state.settled
    frame = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}'

    assert state.from_broker(json.loads(frame), frame) == [SendToClient(json.loads(frame), frame)]
    assert state.settled
    assert state.link_down() == []  # nothing was in flight


def test_an_answer_to_an_unknown_id_still_reaches_the_client() -> None:
    state = linked()
    assert to_client(from_broker(state, result(99))) == [result(99)]


def test_broker_notifications_reach_the_client() -> None:
    state = linked()
    assert to_client(from_broker(state, LIST_CHANGED)) == [LIST_CHANGED]


def test_a_frame_from_the_broker_that_is_not_an_object_is_dropped() -> None:
    state = linked()
    assert from_broker(state, [result(1)]) == []
    assert from_broker(state, "text") == []


def test_a_client_message_that_is_not_an_object_is_left_to_the_broker_to_judge() -> None:
    state = RelayState()
    assert from_client(state, [request(1, "ping")]) == []  # waits like anything else
    assert to_broker(state.link_up()) == [[request(1, "ping")]]
    assert to_broker(from_client(state, 42)) == [42]
    assert state.settled


def test_ids_the_relay_cannot_track_pass_as_notifications() -> None:
    state = linked()
    for odd in (True, 1.5, None, {"a": 1}):
        assert to_broker(from_client(state, request(odd, "tools/call"))) == [request(odd, "tools/call")]
    assert state.settled
    assert state.link_down() == []


# Requests the broker makes of the client


def test_the_client_answers_a_broker_request_once() -> None:
    state = linked()
    asked = request("s1", "sampling/createMessage")
    assert to_client(from_broker(state, asked)) == [asked]

    assert to_broker(from_client(state, result("s1"))) == [result("s1")]
    assert from_client(state, result("s1")) == []


def test_an_answer_to_a_request_of_a_lost_broker_is_dropped() -> None:
    state = linked()
    from_broker(state, request("s1", "roots/list"))
    state.link_down()
    state.link_up()

    assert from_client(state, result("s1")) == []


def test_an_answer_nobody_asked_for_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    state = linked()
    with caplog.at_level(logging.DEBUG, "broker.core.relay_state"):
        assert from_client(state, result(7)) == []
        assert from_client(state, {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "?"}}) == []
    assert "the broker that asked has gone" in caplog.text


# The link going away


@pytest.mark.parametrize("modern", [False, True])
def test_a_tool_call_in_flight_when_the_link_drops_ends_with_an_error_result(modern: bool) -> None:
    state = linked(tool_call(3, modern))

    effects = state.link_down()

    assert to_client(effects) == [failed_call(3, GONE_DURING_CALL, modern)]
    assert to_broker(effects) == []
    assert state.settled and not state.up


def test_other_requests_in_flight_get_a_connection_closed_error() -> None:
    state = linked(request(4, "tools/list"), request("r", "resources/read", uri="x:"))

    assert to_client(state.link_down()) == [closed(4, GONE_BEFORE_ANSWER), closed("r", GONE_BEFORE_ANSWER)]
    assert state.settled


@pytest.mark.parametrize("modern", [False, True])
def test_while_no_link_is_up_a_tool_call_is_answered_at_once(modern: bool) -> None:
    state = established()
    state.link_down()

    assert to_client(from_client(state, tool_call(5, modern))) == [failed_call(5, UNAVAILABLE, modern)]
    assert state.settled
    assert to_broker(state.link_up()) == [{**INITIALIZE, "id": PRIVATE_ID}, INITIALIZED]  # the call is not sent


def test_while_no_link_is_up_other_requests_and_notifications_wait_for_the_next() -> None:
    state = established()
    state.link_down()
    progress = notification("notifications/progress", progressToken=1, progress=1)

    assert from_client(state, request(6, "tools/list")) == []
    assert from_client(state, progress) == []
    assert not state.settled

    sent = to_broker(state.link_up())
    assert sent[-2:] == [request(6, "tools/list"), progress]
    assert to_client(from_broker(state, result(6))) == [result(6)]
    assert state.settled


def test_a_link_lost_twice_answers_once() -> None:
    state = linked(tool_call(3))
    assert len(state.link_down()) == 1
    assert state.link_down() == []


# Coming back


def test_a_new_broker_gets_the_session_under_a_private_id_and_the_client_hears_its_tools_changed() -> None:
    state = established()
    state.link_down()

    effects = state.link_up()

    assert effects == [
        SendToBroker({**INITIALIZE, "id": PRIVATE_ID}),
        SendToBroker(INITIALIZED, json.dumps(INITIALIZED, separators=(", ", ": "))),
        SendToClient(LIST_CHANGED),
    ]
    # Its reply is the relay's, not the client's.
    assert from_broker(state, result(PRIVATE_ID)) == []
    assert to_client(from_broker(state, result(PRIVATE_ID))) == [result(PRIVATE_ID)]  # only once


def test_each_replay_has_an_id_of_its_own() -> None:
    state = established()
    state.link_down()
    state.link_up()
    state.link_down()

    [replayed, _] = to_broker(state.link_up())

    assert replayed["id"] == "browser-mcp-relay-2"


def test_a_refused_replay_is_logged_and_kept_from_the_client(caplog: pytest.LogCaptureFixture) -> None:
    state = established()
    state.link_down()
    state.link_up()
    refusal = {"jsonrpc": "2.0", "id": PRIVATE_ID, "error": {"code": -32602, "message": "unsupported version"}}

    with caplog.at_level(logging.WARNING, "broker.core.relay_state"):
        assert from_broker(state, refusal) == []

    assert "refused the replayed initialize" in caplog.text and "unsupported version" in caplog.text


def test_an_initialize_in_flight_is_sent_again_under_its_own_id() -> None:
    state = linked(INITIALIZE)
    assert state.link_down() == []

    effects = state.link_up()

    assert to_broker(effects) == [INITIALIZE]
    assert to_client(effects) == []  # no session was established, so no tools changed
    assert to_client(from_broker(state, result(1))) == [result(1)]


def test_an_initialize_sent_while_no_link_is_up_is_sent_once() -> None:
    state = established()
    state.link_down()
    again = request(9, "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t"})
    from_client(state, again)

    effects = state.link_up()

    # The new initialize waits in the outbox: it is the session now, sent as the client wrote it.
    assert to_broker(effects) == [again]
    assert to_client(effects) == []


def test_listen_streams_are_sent_again_and_those_that_asked_are_told_of_tool_changes() -> None:
    state = linked(listen("a", tool_changes=True), listen("b", tool_changes=False))
    assert state.settled  # a listen stream is answered only when it ends

    assert state.link_down() == []
    effects = state.link_up()

    assert to_broker(effects) == [listen("a", tool_changes=True), listen("b", tool_changes=False)]
    meta = {"_meta": {"io.modelcontextprotocol/subscriptionId": "a"}}
    assert to_client(effects) == [{**LIST_CHANGED, "params": meta}]


def test_a_listen_stream_opened_while_no_link_is_up_is_sent_once_and_not_told() -> None:
    state = linked()
    state.link_down()
    from_client(state, listen("a", tool_changes=True))

    effects = state.link_up()

    assert to_broker(effects) == [listen("a", tool_changes=True)]
    assert to_client(effects) == []


def test_a_listen_stream_the_broker_ended_is_not_sent_again() -> None:
    state = linked(listen("a", tool_changes=True))
    from_broker(state, result("a"))
    state.link_down()

    assert state.link_up() == []


# Cancelling


def test_a_cancelled_request_is_neither_answered_nor_sent_again() -> None:
    state = linked(request(4, "tools/list"), listen("a", tool_changes=True))
    cancel = notification("notifications/cancelled", requestId=4)
    stop = notification("notifications/cancelled", requestId="a")

    assert to_broker(from_client(state, cancel)) == [cancel]
    assert to_broker(from_client(state, stop)) == [stop]

    assert state.settled
    assert state.link_down() == []
    assert state.link_up() == []


def test_a_request_cancelled_while_it_waited_is_not_sent() -> None:
    state = RelayState()
    cancel = notification("notifications/cancelled", requestId=4)
    from_client(state, request(4, "tools/list"))
    from_client(state, cancel)
    assert state.settled

    assert to_broker(state.link_up()) == [cancel]


def test_a_cancellation_without_a_request_id_cancels_nothing() -> None:
    state = linked(request(4, "tools/list"))
    from_client(state, notification("notifications/cancelled"))

    assert not state.settled


# Requests known by their head alone


def from_client_head(state: RelayState, message: Json) -> list[Effect]:
    return state.from_client_head(message["id"], message["method"], json.dumps(message, separators=(",", ":")))


def test_a_request_known_by_its_head_goes_on_in_its_text_and_its_answer_ends_it() -> None:
    state = linked()
    effects = from_client_head(state, tool_call(3))

    assert to_broker(effects) == [tool_call(3)]
    assert not state.settled
    assert to_client(from_broker(state, result(3))) == [result(3)]
    assert state.settled


@pytest.mark.parametrize("modern", [False, True])
def test_a_call_known_by_its_head_is_read_whole_only_to_answer_it_when_its_broker_goes(modern: bool) -> None:
    read: list[str] = []
    state = RelayState(read=lambda line: read.append(line) or json.loads(line))
    state.link_up()
    from_client_head(state, tool_call(3, modern))
    assert read == []

    assert to_client(state.link_down()) == [failed_call(3, GONE_DURING_CALL, modern)]
    assert len(read) == 1


def test_requests_whose_params_the_bookkeeping_reads_must_come_whole() -> None:
    with pytest.raises(ValueError, match="initialize"):
        from_client_head(linked(), INITIALIZE)


# A broker that refuses the session

REFUSAL = "browser-mcp: the broker refused this session: too_many_sessions: 1 sessions of the broker's own token"


@pytest.mark.parametrize("modern", [False, True])
def test_a_refused_session_answers_what_waits_and_what_comes_with_the_brokers_error(modern: bool) -> None:
    state = RelayState()
    from_client(state, INITIALIZE)
    from_client(state, INITIALIZED)
    from_client(state, tool_call(2, modern))

    effects = state.refused("too_many_sessions", REFUSAL)

    assert to_client(effects) == [closed(1, REFUSAL), failed_call(2, REFUSAL, modern, "too_many_sessions")]
    assert to_broker(effects) == [] and state.settled
    assert to_client(from_client(state, request(3, "tools/list"))) == [closed(3, REFUSAL)]
    # A broker that takes the session later gets what still waited, and is heard as ever.
    assert to_broker(state.link_up()) == [INITIALIZED]
    assert to_broker(from_client(state, request(4, "tools/list"))) == [request(4, "tools/list")]


def test_a_refusal_after_a_lost_link_answers_tool_calls_with_it() -> None:
    state = established()
    state.link_down()
    state.refused("too_many_sessions", REFUSAL)

    assert to_client(from_client(state, tool_call(5))) == [failed_call(5, REFUSAL, code="too_many_sessions")]
    assert to_client(from_client(state, request(6, "tools/list"))) == [closed(6, REFUSAL)]
