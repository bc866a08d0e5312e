"""Decoding extension frames and encoding broker messages: the wire's exact shape."""

from __future__ import annotations

import json

import pytest

from broker import codec
from broker.core.broker_messages import CallTool, Connect, ErrorReply, OpenTab
from broker.core.errors import InvalidMessage
from broker.core.messages import Connected, Ping, TabInfo, Tool, ToolResult, WireError


def test_broker_messages_are_camel_case_with_their_type_and_no_empty_optionals() -> None:
    assert json.loads(codec.encode_broker_message(CallTool("s1", "c1", 7, "search", {"q": 1}))) == {
        "type": "callTool",
        "sessionId": "s1",
        "callId": "c1",
        "tabId": 7,
        "toolName": "search",
        "args": {"q": 1},
    }
    assert json.loads(codec.encode_broker_message(Connect("0.1.0"))) == {"type": "connect", "serverVersion": "0.1.0"}
    assert json.loads(codec.encode_broker_message(OpenTab("s1", "https://x/", False, "c2"))) == {
        "type": "openTab",
        "sessionId": "s1",
        "url": "https://x/",
        "focus": False,
        "requestId": "c2",
    }
    assert json.loads(codec.encode_broker_message(Ping())) == {"type": "ping"}
    assert json.loads(codec.encode_broker_message(ErrorReply("invalid_message", "bad"))) == {
        "type": "error",
        "code": "invalid_message",
        "message": "bad",
    }


def test_snapshot_with_extra_keys_is_read() -> None:
    frame = {
        "type": "connected",
        "browser": {"name": "Chrome", "version": "156", "instanceId": "i-1", "platform": "linux"},
        "tabs": [
            {
                "id": 3,
                "title": "T",
                "url": "https://t/",
                "tools": [{"name": "a", "inputSchema": {"type": "object"}, "origin": "https://t", "window": {}}],
            }
        ],
    }
    message = codec.decode_extension_message(json.dumps(frame).encode())
    assert isinstance(message, Connected)
    assert message.browser.instance_id == "i-1"
    assert message.tabs == (TabInfo(3, "T", "https://t/", (Tool("a", "", {"type": "object"}),)),)


@pytest.mark.parametrize(
    ("error", "expected"),
    [(None, None), ("boom", "boom"), ({"code": "x", "message": "boom"}, WireError("boom", "x"))],
)
def test_tool_result_error_shapes(error: object, expected: object) -> None:
    message = codec.decode_extension_message(json.dumps({"type": "toolResult", "callId": "c1", "error": error}))
    assert message == ToolResult("c1", None, expected)


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "tabClosed", "tabId": "7"}',
        '{"type": "tabClosed", "tabId": 7.5}',
        '{"type": "tabClosed", "tabId": true}',
        '{"type": "tabFocused", "tabId": 1, "tools": {"name": "a"}}',
        '{"type": "toolResult", "callId": "c1", "error": 42}',
        '{"type": "toolsChanged", "tabId": 1, "tools": [{"name": "a", "inputSchema": "object"}]}',
        '{"type": "tabCreated"}',
        '{"tabId": 1}',
        "",
    ],
)
def test_wrong_shapes_are_refused_not_coerced(frame: str) -> None:
    with pytest.raises(InvalidMessage):
        codec.decode_extension_message(frame)


def test_error_names_the_field_as_the_peer_spelled_it() -> None:
    with pytest.raises(InvalidMessage, match=r"message\.tabId"):
        codec.decode_extension_message('{"type": "tabClosed", "tabId": "x"}')


def test_call_id_is_found_in_a_frame_too_large_to_decode() -> None:
    head = b'{"type":"toolResult","callId":"c42","result":"'
    assert codec.peek_call_id(head + b"x" * 100_000 + b'"}') == "c42"
    tail = b'{"type":"toolResult","result":"' + b"x" * 100_000 + b'","callId":"c43"}'
    assert codec.peek_call_id(tail) == "c43"
    assert codec.peek_call_id(b"x" * 100_000) is None
