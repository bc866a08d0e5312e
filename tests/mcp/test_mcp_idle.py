"""An idle broker after MCP HTTP clients have gone, and its event streams when it shuts down."""

from __future__ import annotations

import asyncio
import threading

import aiohttp
import pytest

from broker.mcp.server import LEGACY_HTTP_PREFIX
from broker.mcp.transports import quiet_sse_shutdown_watcher

from ..conftest import BrokerUnderTest
from ..support.fakes import FakeTab
from ..support.mcp_clients import ERAS, LEGACY_VERSION, MODERN, initialize_request

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def shutdown_watchers() -> list[asyncio.Task[object]]:
    """sse_starlette's shutdown watchers on this loop: each wakes twice a second for the loop's life."""
    found = []
    for task in asyncio.all_tasks():
        code = getattr(task.get_coro(), "cr_code", None)
        if code is not None and "sse_starlette" in code.co_filename and code.co_name == "_shutdown_watcher":
            found.append(task)
    return found


async def test_no_poller_is_left_once_http_clients_of_both_eras_have_come_and_gone(broker: BrokerUnderTest) -> None:
    await broker.extension(FakeTab(7, "https://shop.example/", "Shop", {}))
    surface = (await broker.mcp_running()).surface
    for era in ERAS:
        # Each client's event stream (the 2025 GET stream, the 2026 listen stream) is served by
        # sse_starlette, whose first stream on a loop starts the watcher.
        async with broker.mcp("Claude Code", era) as client:
            await client.call_json("tabs", {"action": "list"})

    def legacy_sessions() -> list[str]:
        return [key for key in surface.sessions if key.startswith(LEGACY_HTTP_PREFIX)]

    async with asyncio.timeout(5), surface.session_ended:
        await surface.session_ended.wait_for(lambda: not legacy_sessions())
    assert shutdown_watchers() == []


async def open_event_stream(broker: BrokerUnderTest, session: aiohttp.ClientSession) -> aiohttp.ClientResponse:
    """A 2025-11-25 session's GET event stream, its headers received."""
    async with session.post(broker.mcp_url, json=initialize_request("watcher"), headers=MCP_HEADERS) as response:
        assert response.status == 200
        session_id = response.headers["Mcp-Session-Id"]
    headers = {**MCP_HEADERS, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY_VERSION}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    async with session.post(broker.mcp_url, json=initialized, headers=headers) as response:
        assert response.status == 202
    stream = await session.get(broker.mcp_url, headers={**headers, "Accept": "text/event-stream"})
    assert stream.status == 200
    return stream


async def test_a_broker_shutting_down_ends_an_open_event_stream_cleanly(broker: BrokerUnderTest) -> None:
    session = broker.client.session
    stream = await open_event_stream(broker, session)
    shutting_down = asyncio.create_task(broker.server.close())
    # Ended by the broker with the stream's last chunk, not cut off when its handler is cancelled
    # (aiohttp waits up to a minute for handlers before that); a cut would raise here.
    async with asyncio.timeout(10):
        await stream.content.read()
        await shutting_down
    assert stream.content.at_eof()
    stream.release()


async def test_a_broker_shutting_down_ends_an_open_listen_stream_with_its_result(broker: BrokerUnderTest) -> None:
    async with broker.mcp("Claude Code", MODERN) as client:
        events = 0
        async with client.client.listen(tools_list_changed=True) as subscription:
            shutting_down = asyncio.create_task(broker.server.close())
            # The subscription ends as the spec's graceful closure has it; a stream cut off
            # would raise here, and one left open would hold it until the timeout.
            async with asyncio.timeout(10):
                async for _ in subscription:
                    events += 1
                await shutting_down
        assert events == 0


def test_an_sse_starlette_without_the_watcher_state_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    from sse_starlette import sse  # noqa: PLC0415 - the library whose detail is looked for

    monkeypatch.delattr(sse, "_get_shutdown_state")
    quiet_sse_shutdown_watcher()  # another version: nothing to quiet, and no error
    monkeypatch.undo()
    monkeypatch.setattr(sse, "_thread_state", threading.local())
    monkeypatch.delattr(sse, "_shutdown_watcher")
    quiet_sse_shutdown_watcher()
    assert sse._get_shutdown_state().watcher_started is False
