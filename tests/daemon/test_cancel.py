"""Calling a call off: the broker tells the browser to stop a call it no longer waits for.

When a client cancels (MCP ``notifications/cancelled``, or a REST caller hanging up), the call
times out, or its session ends, the extension gets ``cancelCall {callId, reason}`` so the page's
tool sees its ``AbortSignal`` fire; the client gets one answer, and a late result is dropped. The
scripted fake extension stands in for the browser (``tests/e2e/test_e2e_cancel.py`` runs the real one).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import attrs

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeTab
from ..support.mcp_clients import LEGACY, LEGACY_VERSION, MODERN, initialize_request, text
from .fuzzing import MCP_BASE_HEADERS


def slow_shop() -> FakeTab:
    return FakeTab(7, "https://shop.example/", "Shop", {"wait": lambda args: "never sent"})


async def held_calls(broker: BrokerUnderTest) -> tuple[Any, asyncio.Event]:
    fake = await broker.extension(slow_shop(), actions=["wait_for"])
    arrived = asyncio.Event()

    async def hold(message: dict[str, Any]) -> None:
        arrived.set()

    fake.on_call = hold
    fake.on_action = hold
    return fake, arrived


async def held_page_call(client: Any, fake: Any, arrived: asyncio.Event) -> tuple[asyncio.Task[Any], dict[str, Any]]:
    """The client claims tab 7 and calls its page tool, which the fake extension holds: the call
    under way, and the callTool the extension got."""
    await client.call_json("tabs", {"action": "claim", "tab": 7})
    call = asyncio.create_task(client.call("call_page_tool", {"tab": 7, "tool": "wait", "arguments": {}}))
    async with asyncio.timeout(5):
        await arrived.wait()
    return call, fake.received("callTool")[-1]


async def test_a_client_that_cancels_has_the_call_called_off_in_the_browser(broker: BrokerUnderTest) -> None:
    fake, arrived = await held_calls(broker)
    for era in (LEGACY, MODERN):
        arrived.clear()
        async with broker.mcp("Claude Code", era) as client:
            call, sent = await held_page_call(client, fake, arrived)
            call.cancel()
            call_id = sent["callId"]
            cancelled = await fake.wait_for("cancelCall", lambda m, call_id=call_id: m["callId"] == call_id)
            assert cancelled["reason"] == "cancelled" and cancelled["sessionId"] == sent["sessionId"]
            # The page's answer after that is dropped, and the session goes on.
            await fake.send({"type": "toolResult", "callId": sent["callId"], "result": "late", "error": None})
            await client.call_json("tabs", {"action": "list"})


async def test_a_call_that_times_out_is_called_off_and_its_client_hears_the_timeout(make_broker: MakeBroker) -> None:
    broker = await make_broker(call_timeout=0.3)
    fake, _ = await held_calls(broker)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("browser_wait_for", {"text": "never"})
        assert result.is_error and text(result).startswith("timeout:"), text(result)
        sent = fake.received("browserAction")[-1]
        cancelled = await fake.wait_for("cancelCall", lambda m: m["callId"] == sent["callId"])
        assert cancelled["reason"] == "timeout"


async def test_a_rest_caller_that_hangs_up_has_its_call_called_off(broker: BrokerUnderTest) -> None:
    fake, arrived = await held_calls(broker)
    await broker.post("/tabs/7/claim")
    request = asyncio.create_task(broker.post("/tabs/7/tools/wait", {}))
    async with asyncio.timeout(5):
        await arrived.wait()
    # The caller hangs up: its connection closes with the request unanswered.
    request.cancel()
    sent = fake.received("callTool")[-1]
    cancelled = await fake.wait_for("cancelCall", lambda m: m["callId"] == sent["callId"])
    assert cancelled["reason"] == "cancelled"


async def test_a_session_that_ends_has_its_calls_called_off(broker: BrokerUnderTest) -> None:
    fake, arrived = await held_calls(broker)
    async with broker.mcp("Claude Code", LEGACY) as client:
        call, sent = await held_page_call(client, fake, arrived)
        status, body = await broker.delete(f"/sessions/{sent['sessionId']}")
        assert status == 200 and body["existed"] is True, body
        cancelled = await fake.wait_for("cancelCall", lambda m: m["callId"] == sent["callId"])
        assert cancelled["reason"] == "session_ended"
        result = await call
        assert result.is_error and text(result).startswith("session_ended:"), text(result)


@attrs.frozen
class LegacySession:
    """A 2025-11-25 session spoken in plain HTTP: what an SDK client would send, and one that hangs up."""

    broker: BrokerUnderTest
    session_id: str

    def headers(self) -> dict[str, str]:
        return MCP_BASE_HEADERS | (
            {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": LEGACY_VERSION} if self.session_id else {}
        )

    async def post(self, message: dict[str, Any]) -> tuple[int, Any]:
        async with self.broker.client.session.post(
            self.broker.mcp_url, json=message, headers=self.headers()
        ) as response:
            raw = await response.read()
            return response.status, json.loads(raw) if raw else None

    def raw(self, message: dict[str, Any]) -> bytes:
        body = json.dumps(message).encode()
        host, port = self.broker.server.host, self.broker.server.port
        head = "".join(f"{name}: {value}\r\n" for name, value in self.headers().items())
        return f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body

    async def post_and_hang_up(self, message: dict[str, Any], beside: list[dict[str, Any]]) -> int:
        """POST ``message`` on a connection of its own, closed the moment the status line arrives,
        with each of ``beside`` sent at the same moment on one more: the first answer's status.
        All of them answered keeps the session's reader busy while ``message`` waits its turn."""
        host, port = self.broker.server.host, self.broker.server.port
        others = [await asyncio.open_connection(host, port) for _ in beside]
        reader, writer = await asyncio.open_connection(host, port)
        try:
            for (_, other), each in zip(others, beside, strict=True):
                other.write(self.raw(each))
            writer.write(self.raw(message))
            status_line = await reader.readline()
            writer.transport.abort()
            for other_reader, _ in others:
                assert (await other_reader.readline()).split()[1] == b"200"
        finally:
            writer.transport.abort()
            for _, other in others:
                other.close()
        return int(status_line.split()[1])


async def open_legacy_session(broker: BrokerUnderTest) -> LegacySession:
    async with broker.client.session.post(
        broker.mcp_url, json=initialize_request("hangs up"), headers=LegacySession(broker, "").headers()
    ) as response:
        assert response.status == 200, await response.text()
        session = LegacySession(broker, response.headers["Mcp-Session-Id"])
    status, _ = await session.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202
    return session


# Requests sent beside the cancel: the session's reader works through them while the cancel
# waits its turn, and its client hangs up meanwhile (before the fix, the first round lost it).
BUSY_READER = 20
HANG_UP_ROUNDS = 10


async def test_a_cancel_whose_client_hangs_up_on_its_202_still_calls_the_call_off(broker: BrokerUnderTest) -> None:
    """A 2025-era client may close its connection as soon as it hears ``202`` for
    ``notifications/cancelled``. The SDK hands the notification on only after that answer, and
    aiohttp cancels the handler of a client that hung up: the cancel was lost now and then, and the
    call held its tab to the end (a real client does this while sending its next request)."""
    fake, arrived = await held_calls(broker)
    session = await open_legacy_session(broker)
    status, _ = await session.post(
        {
            "jsonrpc": "2.0",
            "id": "claim",
            "method": "tools/call",
            "params": {"name": "tabs", "arguments": {"action": "claim", "tab": 7}},
        }
    )
    assert status == 200
    for round_ in range(HANG_UP_ROUNDS):
        arrived.clear()
        request_id = f"call-{round_}"
        call = asyncio.create_task(
            session.post(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": {"name": "call_page_tool", "arguments": {"tab": 7, "tool": "wait", "arguments": {}}},
                }
            )
        )
        async with asyncio.timeout(5):
            await arrived.wait()
        sent = fake.received("callTool")[-1]
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
        pings = [{"jsonrpc": "2.0", "id": f"ping-{round_}-{n}", "method": "ping"} for n in range(BUSY_READER)]
        assert await session.post_and_hang_up(cancel, beside=pings) == 202
        cancelled = await fake.wait_for("cancelCall", lambda m, call_id=sent["callId"]: m["callId"] == call_id)
        assert cancelled["reason"] == "cancelled", f"round {round_}: {cancelled}"
        await call
