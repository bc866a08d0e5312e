"""Fuzzing ``/mcp``, over real loopback HTTP (see ``fuzzing.py``).

Any JSON-RPC message in either era, and any arguments to the broker's tools, get no 5xx and no
internal error, tool errors carry a code of the README's table, and SDK clients of both eras work
afterwards.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from mcp.shared.inbound import encode_header_value

from broker.core.browser_tools import ACTIONS

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeExtension
from ..support.mcp_clients import ERAS, LEGACY_VERSION, initialize_request, text
from .fuzzing import (
    KEEPER,
    MCP_BASE_HEADERS,
    MODERN_META,
    MODERN_VERSION,
    README_CODES,
    Json,
    dump,
    echo_tab,
    fuzz,
    header_text,
    hits_known_bug_ref,
    huge_numbers,
    json_values,
    no_odd_digits,
    parse,
    texts,
    unlimited,
)

# JSON-RPC errors a caller's own mistake may bring: parse error, invalid request, method not
# found, invalid params, and the 2026-07-28 era's header mismatch, missing capability and
# unsupported version. Never -32603 (internal error), nor 0 (an exception the SDK did not know).
CALLER_ERRORS = {-32700, -32600, -32601, -32602, -32020, -32021, -32022}
BROKER_TOOLS = ["tabs", "page_tools", "call_page_tool", *(f"browser_{action}" for action in ACTIONS)]
METHODS = [
    "tools/list",
    "tools/call",
    "ping",
    "initialize",
    "server/discover",
    "resources/list",
    "prompts/list",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
]

mcp_tab_values = st.one_of(
    st.sampled_from([7, 8, "8", "b1:8", "b1:7", 99, -1, 2**70, 1.5, True, None, [], {}, "", "b9:8", "t8"]),
    st.sampled_from(["²", "b1:⑧", "9" * 4301]).filter(no_odd_digits),
    texts.filter(no_odd_digits),
    json_values.filter(lambda value: not (type(value) is str and hits_known_bug_ref(value))),
)


@st.composite
def tool_arguments(draw: st.DrawFn, name: str) -> Json:
    """Arguments for one of the broker's tools: its own fields, right or wrong, and others."""
    fields: dict[str, st.SearchStrategy[Any]] = {"tab": mcp_tab_values}
    if name == "tabs":
        actions = st.sampled_from(["list", "open", "close", "focus", "claim", "release", "teleport"])
        fields.update(
            action=actions | json_values,
            url=st.sampled_from(["https://opened.example/", ""]) | json_values,
            focus=st.booleans() | json_values,
            browser=st.sampled_from(["b1", "b9"]) | json_values,
        )
    elif name == "page_tools":
        fields["refresh"] = st.booleans() | json_values
    elif name == "call_page_tool":
        fields.update(
            tool=st.sampled_from(["echo", "nope"]) | json_values,
            arguments=st.dictionaries(texts, json_values, max_size=3) | json_values,
        )
    else:
        words = st.sampled_from(["e1", "e7", "Buy", "Enter", "https://x.example/", ""]) | json_values
        fields.update(
            {
                key: words
                for key in ("target", "ref", "element", "text", "url", "key", "values", "fields", "time", "function")
            }
        )
        fields["depth"] = st.integers(-2, 5) | json_values
    arguments = {key: draw(values) for key, values in fields.items() if draw(st.booleans())}
    return {**draw(st.dictionaries(texts, json_values, max_size=2)), **arguments}


class McpMessage:
    """A body to POST to /mcp, in an era: ``legacy`` (on the initialized 2025-11-25 session),
    ``sessionless`` (2025-11-25 without a session id), ``modern`` (2026-07-28) or ``odd``
    (a protocol version header of any value)."""

    def __init__(self, era: str, body: Any = None, raw: bytes | None = None, version: str = "") -> None:
        self.era = era
        self.body = body
        self.raw = raw
        self.version = version

    def data(self) -> bytes:
        return self.raw if self.raw is not None else dump(self.body).encode()

    @property
    def is_tool_call(self) -> bool:
        """A well-formed tools/call request: it must be answered by a result."""
        body = self.body
        if self.raw is not None or type(body) is not dict or body.get("method") != "tools/call":
            return False
        params = body.get("params")
        well_formed = body.get("jsonrpc") == "2.0" and type(body.get("id")) in (int, str) and type(params) is dict
        return well_formed and type(params.get("name")) is str and type(params.get("arguments", {})) is dict

    def __repr__(self) -> str:
        return f"McpMessage({self.era}, {self.body if self.raw is None else self.raw!r})"


request_ids = st.integers(min_value=-(2**53), max_value=2**53) | texts
odd_ids = st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | json_values | huge_numbers


@st.composite
def tool_calls(draw: st.DrawFn) -> Json:
    name = draw(st.sampled_from([*BROKER_TOOLS, "t7_echo", "t8_echo"]) | texts)
    arguments = draw(tool_arguments(name)) if name in BROKER_TOOLS else draw(st.dictionaries(texts, json_values))
    params: Json = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": draw(request_ids), "method": "tools/call", "params": params}


@st.composite
def envelopes(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["request", "request", "notification", "response", "broken", "json"]))
    method = draw(st.sampled_from(METHODS) | texts)
    params = draw(st.none() | st.dictionaries(texts, json_values, max_size=4) | json_values)
    if kind == "json":
        return draw(json_values | st.lists(st.builds(dict), max_size=2))
    message: Json = {"jsonrpc": "2.0"}
    if kind in ("request", "notification"):
        message["method"] = method
        if params is not None:
            message["params"] = params
    if kind == "request":
        message["id"] = draw(request_ids)
    if kind == "response":
        message["id"] = draw(request_ids)
        message.update(draw(st.sampled_from([{"result": {}}, {"error": {"code": -1, "message": "x"}}])))
    if kind == "broken":
        message = {**message, **draw(st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params"]), odd_ids))}
    return message


@st.composite
def mcp_messages(draw: st.DrawFn) -> McpMessage:
    era = draw(st.sampled_from(["legacy", "legacy", "modern", "modern", "sessionless", "odd"]))
    version = draw(header_text(12)) if era == "odd" else ""
    if draw(st.integers(0, 9)) == 0:
        return McpMessage(era, raw=draw(st.binary(max_size=40) | st.sampled_from([b"", b"{", b"[]", b"null"])))
    body = draw(tool_calls() | tool_calls() | envelopes())
    if era == "modern" and type(body) is dict and draw(st.integers(0, 9)) > 0:
        # Most modern requests carry the era's envelope, or the SDK refuses them before the broker sees them.
        params = body.get("params") if type(body.get("params")) is dict else {}
        body = {**body, "params": {**params, "_meta": MODERN_META}}
    return McpMessage(era, body=body, version=version)


class McpUnderFuzz:
    def __init__(self, broker: BrokerUnderTest, session: aiohttp.ClientSession, fake: FakeExtension) -> None:
        self.broker = broker
        self.session = session
        self.fake = fake
        self.legacy_session = ""

    def headers(self, message: McpMessage) -> dict[str, str]:
        headers = dict(MCP_BASE_HEADERS)
        body = message.body if type(message.body) is dict else {}
        if message.era == "legacy":
            headers.update({"Mcp-Session-Id": self.legacy_session, "MCP-Protocol-Version": LEGACY_VERSION})
        elif message.era == "sessionless":
            headers["MCP-Protocol-Version"] = LEGACY_VERSION
        elif message.era == "odd":
            headers["MCP-Protocol-Version"] = message.version
        else:
            headers["MCP-Protocol-Version"] = MODERN_VERSION
            method = body.get("method")
            if type(method) is str and method.isascii() and method.isprintable():
                headers["Mcp-Method"] = method
            params = body.get("params")
            name = params.get("name") if type(params) is dict else None
            if type(name) is str:
                headers["Mcp-Name"] = encode_header_value(name)
        return headers

    async def post(self, message: McpMessage) -> tuple[int, Any]:
        async with self.session.post(
            self.broker.mcp_url, data=message.data(), headers=self.headers(message)
        ) as response:
            raw = await response.read()
            if not raw:
                return response.status, None
            assert response.content_type == "application/json", (response.status, raw[:300])
            return response.status, parse(raw)

    async def open_legacy_session(self) -> None:
        initialize = initialize_request("fuzzer", 0)
        async with self.session.post(self.broker.mcp_url, json=initialize, headers=MCP_BASE_HEADERS) as response:
            assert response.status == 200
            self.legacy_session = response.headers["Mcp-Session-Id"]
        status, _ = await self.post(McpMessage("legacy", {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        assert status == 202

    async def healthy(self) -> None:
        """Both eras still answer: a tab listing (modern) and a ping on the legacy session."""
        listing = McpMessage(
            "modern",
            {
                "jsonrpc": "2.0",
                "id": "health",
                "method": "tools/call",
                "params": {"name": "tabs", "arguments": {"action": "list"}, "_meta": MODERN_META},
            },
        )
        status, answer = await self.post(listing)
        assert status == 200 and answer["result"].get("isError") is not True, answer
        assert "b1:7" in answer["result"]["content"][0]["text"]
        status, answer = await self.post(McpMessage("legacy", {"jsonrpc": "2.0", "id": "health", "method": "ping"}))
        assert (status, answer) == (200, {"jsonrpc": "2.0", "id": "health", "result": {}})


@pytest.fixture
async def mcp_fuzz(make_broker: MakeBroker, session: aiohttp.ClientSession) -> AsyncIterator[McpUnderFuzz]:
    broker = await make_broker(**unlimited())
    fake = await broker.extension(echo_tab(7), echo_tab(8), actions=list(ACTIONS))
    status, _ = await broker.post("/tabs/b1:7/claim", headers={"X-Session-Id": KEEPER})
    assert status == 200
    fuzz = McpUnderFuzz(broker, session, fake)
    await fuzz.open_legacy_session()
    yield fuzz
    # Afterwards SDK clients of both eras still work: each claims the keeper's tab in turn and
    # calls its page tool.
    await broker.post("/tabs/b1:7/release", headers={"X-Session-Id": KEEPER})
    for era in ERAS:
        async with broker.mcp(f"after the fuzz, {era}", era) as client:
            await client.call_json("tabs", {"action": "claim", "tab": "b1:7"})
            assert json.loads(text(await client.call("t7_echo", {"era": era}))) == {"tab": 7, "args": {"era": era}}
            await client.call_json("tabs", {"action": "release", "tab": "b1:7"})


def check_mcp_answer(message: McpMessage, status: int, answer: Any) -> None:
    assert status < 500, (status, answer)
    if message.is_tool_call and status == 200:
        # The SDK checks a tool call's envelope; once it passed, the broker answers with a result.
        assert "result" in answer, answer
        result = answer["result"]
        assert answer["id"] == message.body["id"] and type(result["content"]) is list
        if result.get("isError"):
            code = result["content"][0]["text"].split(":", 1)[0]
            assert code in README_CODES, result
        return
    if isinstance(answer, dict) and "error" in answer:
        assert answer["error"]["code"] in CALLER_ERRORS, answer


@fuzz(500)
@given(message=mcp_messages())
async def test_any_mcp_message_gets_no_internal_error(mcp_fuzz: McpUnderFuzz, message: McpMessage) -> None:
    """Messages of every shape in every era, two in three of them tools/call of the broker's
    tools with arguments right, wrong or foreign; the fixture then checks SDK clients."""
    status, answer = await mcp_fuzz.post(message)
    event(f"{message.era} {status} {'tools/call' if message.is_tool_call else ''}")
    check_mcp_answer(message, status, answer)
    if 8 not in mcp_fuzz.fake.tabs:
        await mcp_fuzz.fake.add_tab(echo_tab(8))
    await mcp_fuzz.healthy()
