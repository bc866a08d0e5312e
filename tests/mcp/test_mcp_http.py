"""MCP Streamable HTTP at /mcp with the SDK's own client, in both protocol eras: sessions that end,
who may connect, the bounds on bodies and sessions, and the tools list written from ready JSON.
Page tools and tabs through MCP are tested in test_mcp_page_tools.py and test_mcp_tabs.py."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from broker.core.security import client_token
from broker.mcp.server import McpSurface

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.mcp_clients import ERAS, LEGACY, MODERN, initialize_request, text
from .mcp_shop import FIXED, shop

# Sessions that end


async def test_client_leaving_mid_call_withdraws_its_call_and_ends_its_session(
    broker: BrokerUnderTest, era: str
) -> None:
    fake = await broker.extension(shop(7))
    arrived = asyncio.Event()

    async def hold(message: dict[str, Any]) -> None:
        arrived.set()

    fake.on_call = hold
    surface = (await broker.mcp_running()).surface
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        call = asyncio.create_task(client.call("call_page_tool", {"tab": 7, "tool": "search", "arguments": {}}))
        async with asyncio.timeout(5):
            await arrived.wait()
        assert broker.hub.core.pending_count == 1
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    async with asyncio.timeout(5), broker.hub.call_withdrawn:
        await broker.hub.call_withdrawn.wait_for(lambda: broker.hub.core.pending_count == 0)
    if era == LEGACY:
        await every_session_ended(surface)


async def every_session_ended(surface: McpSurface) -> None:
    async with asyncio.timeout(5), surface.session_ended:
        await surface.session_ended.wait_for(lambda: not surface.sessions)


@pytest.mark.parametrize("era", ERAS)
async def test_a_session_that_ends_releases_its_tabs(make_broker: MakeBroker, era: str) -> None:
    """A 2025-11-25 session ends when its client closes it; a stateless one once it has idled."""
    broker = await make_broker(**({"session_idle": 0.3} if era == MODERN else {}))
    await broker.extension(shop(7))
    surface = (await broker.mcp_running()).surface
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
    # The client is gone, and with a stateless one its listen stream: only idle time is left.
    await every_session_ended(surface)
    status, body = await broker.get("/tabs")
    assert status == 200 and body["tabs"][0]["owner"] is None
    assert broker.hub.core.sessions() == []


async def test_stateless_clients_with_their_own_tokens_are_kept_apart(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(7), shop(8))
    first_token, second_token = client_token(TOKEN, "laptop-a"), client_token(TOKEN, "laptop-b")
    async with (
        broker.mcp("same-name", MODERN, token=first_token) as first,
        broker.mcp("same-name", MODERN, token=second_token) as second,
    ):
        await first.call_json("tabs", {"action": "claim", "tab": 7})
        await first.changes.next(0)
        assert "t7_search" in await first.tool_names()
        assert "t7_search" not in await second.tool_names()
        assert second.changes.count == 0
        refused = await second.call("t7_search", {})
        assert refused.is_error and text(refused).startswith("tab_owned:"), text(refused)
        refused = await second.call("t8_search", {})
        assert refused.is_error and text(refused).startswith("tab_not_claimed:"), text(refused)
        assert "claim it first" in text(refused)
    sessions = {s.id for s in broker.hub.core.sessions()}
    assert sessions == {"mcp-client:laptop-a", "mcp-client:laptop-b"}


# Who may connect


INITIALIZE = initialize_request("x")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"Authorization": "Bearer wrong"}, 401),
        ({"Authorization": f"Bearer {client_token('other-secret', 'a')}"}, 401),
        ({"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"}, 403),
        ({"Authorization": f"Bearer {TOKEN}", "Origin": "null"}, 403),
        ({"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}, 403),
        ({"Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Authorization": f"Bearer {client_token(TOKEN, 'cursor')}"}, 200),
    ],
)
async def test_mcp_endpoint_checks_token_origin_and_host(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, headers: dict[str, str], status: int
) -> None:
    async with session.post(broker.mcp_url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}) as response:
        assert response.status == status


async def test_the_brokers_own_origin_is_accepted(broker: BrokerUnderTest, session: aiohttp.ClientSession) -> None:
    origin = f"http://127.0.0.1:{broker.server.port}"
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", "Origin": origin}
    async with session.post(broker.mcp_url, json=INITIALIZE, headers=headers) as response:
        assert response.status == 200


# How much a client may send and open


async def test_an_mcp_body_over_the_limit_is_refused_unread(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(frame_limit=4096)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    padded = {**INITIALIZE, "params": {**INITIALIZE["params"], "padding": "x" * 8000}}
    async with session.post(broker.mcp_url, json=padded, headers=headers) as response:
        assert response.status == 413
        assert (await response.json())["error"]["code"] == "request_too_large"

    async def trickle() -> Any:
        for _ in range(10):
            yield b" " * 1024

    # Streamed without a length, it is cut off once past the limit.
    async with session.post(broker.mcp_url, data=trickle(), headers=headers) as response:
        assert response.status == 413
    async with session.post(broker.mcp_url, json=INITIALIZE, headers=headers) as response:
        assert response.status == 200


async def test_mcp_sessions_past_the_limit_are_refused(make_broker: MakeBroker, session: aiohttp.ClientSession) -> None:
    broker = await make_broker(max_sessions=1)
    await broker.extension(shop())
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    async with session.post(broker.mcp_url, json=INITIALIZE, headers=headers) as response:
        assert response.status == 200
    async with session.post(broker.mcp_url, json=INITIALIZE, headers=headers) as response:
        assert response.status == 429
        assert "too_many_sessions" in (await response.json())["error"]["message"]
    # A 2025-11-25 session counts from its initialize: one finding the broker full of other
    # sessions (here REST's) is refused then.
    broker2 = await make_broker(max_sessions=1)
    await broker2.extension(shop())
    assert (await broker2.post("/tabs/7/claim"))[0] == 200
    async with session.post(broker2.mcp_url, json=INITIALIZE, headers=headers) as response:
        assert response.status == 429
        assert "1 sessions of the broker's own token are live" in (await response.json())["error"]["message"]


# The tools list, written from ready JSON


async def test_the_tools_list_is_written_from_ready_json(broker: BrokerUnderTest, era: str) -> None:
    # The broker swaps a placeholder in the SDK's answer for the session's ready JSON: if the SDK
    # ever wrote that answer differently, the placeholder would reach the client and this fails.
    fake = await broker.extension(shop(7), shop(8))
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        tools = await client.tools()
        assert list(tools) == [*FIXED, "t7_search", "t7_checkout"]
        assert tools["t7_search"].description == "[page tool, tab b1:7, shop7.example] the search tool"
        # The 2025-11-25 session's GET stream is not rewritten: its notifications still come.
        heard = client.changes.count
        await client.call_json("tabs", {"action": "claim", "tab": 8})
        await client.changes.next(heard)
        assert "t8_search" in await client.tool_names()
        heard = client.changes.count
        await fake.remove_tab(8)
        await client.changes.next(heard)
        assert "t8_search" not in await client.tool_names()
    assert (await broker.mcp_running()).surface.unwritten_tool_lists == 0


async def test_the_tunnels_tools_list_is_written_from_ready_json(broker: BrokerUnderTest) -> None:
    # The stdio tunnel writes its frames itself: it swaps the placeholder as the HTTP endpoint does.
    await broker.extension(shop(7))
    async with broker.client.ws_connect("/mcp/stream") as ws:

        async def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            await ws.send_json({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            async with asyncio.timeout(5):
                while True:
                    frame = await ws.receive()
                    assert frame.type is aiohttp.WSMsgType.TEXT
                    message: dict[str, Any] = frame.json()
                    if message.get("id") == request_id:
                        return message

        await request(1, "initialize", initialize_request("relay")["params"])
        await ws.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await request(2, "tools/call", {"name": "tabs", "arguments": {"action": "claim", "tab": 7}})
        listed = await request(3, "tools/list", {})
    names = [tool["name"] for tool in listed["result"]["tools"]]
    assert names[: len(FIXED)] == FIXED and names[-2:] == ["t7_search", "t7_checkout"]
    assert (await broker.mcp_running()).surface.unwritten_tool_lists == 0
