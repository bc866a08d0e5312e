"""Calling a call off: the broker tells the browser to stop a call it no longer waits for.

When a client cancels (MCP ``notifications/cancelled``, or a REST caller hanging up), the call
times out, or its session ends, the extension gets ``cancelCall {callId, reason}`` so the page's
tool sees its ``AbortSignal`` fire; the client gets one answer, and a late result is dropped. The
scripted fake extension stands in for the browser (``tests/e2e/test_e2e_cancel.py`` runs the real one).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeTab
from ..support.mcp_clients import LEGACY, MODERN, text


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
