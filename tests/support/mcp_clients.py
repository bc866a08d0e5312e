"""The official MCP SDK client, connected to a broker's ``/mcp`` in either protocol era.

``LEGACY`` (2025-11-25) runs the ``initialize`` handshake and hears list changes as
``notifications/tools/list_changed``; ``MODERN`` (2026-07-28) is stateless and hears them on a
``subscriptions/listen`` stream. :class:`McpClient` hides that difference from the tests:
``await client.changes.next()`` waits for the next list change either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from broker.paths import ENV_DISCOVERY_DIR, ENV_TOKEN_FILE

from .cli_helpers import CLI, token_file_for

LEGACY = "legacy"
LEGACY_VERSION = "2025-11-25"
MODERN = "2026-07-28"
ERAS = [LEGACY, MODERN]


def initialize_request(client_name: str, request_id: int = 1) -> dict[str, Any]:
    """A raw ``initialize`` request of the 2025-11-25 era, for tests that speak JSON-RPC by hand."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"},
        },
    }


class Changes:
    """Counts list changes a client heard; ``next()`` waits for one more."""

    def __init__(self) -> None:
        self.count = 0
        self._arrived = asyncio.Condition()

    async def record(self) -> None:
        async with self._arrived:
            self.count += 1
            self._arrived.notify_all()

    async def next(self, after: int | None = None) -> int:
        start = self.count if after is None else after
        # Long enough for a stdio relay to reconnect to a restarted broker (backoff up to 2 s).
        async with asyncio.timeout(10), self._arrived:
            await self._arrived.wait_for(lambda: self.count > start)
        return self.count


class McpClient:
    def __init__(self, client: Client, era: str) -> None:
        self.client = client
        self.era = era
        self.changes = Changes()

    async def tool_names(self) -> list[str]:
        return list(await self.tools())

    async def tools(self) -> dict[str, types.Tool]:
        # Past the client's cache, so that every listing is a request to the server.
        return {tool.name: tool for tool in (await self.client.list_tools(cache_mode="bypass")).tools}

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return await self.client.call_tool(name, arguments or {})

    async def call_json(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        result = await self.call(name, arguments)
        assert not result.is_error, text(result)
        return json.loads(text(result))


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def refused(client: McpClient, tool: str, args: dict[str, Any], code: str) -> str:
    """Call ``tool`` and check that it is refused with error ``code``; the refusal's text."""
    result = await client.call(tool, args)
    assert result.is_error and text(result).startswith(f"{code}:"), text(result)
    return text(result)


def loopback_http(headers: dict[str, str]) -> httpx2.AsyncClient:
    """The SDK's HTTP client settings, minus the environment's proxies: loopback never goes through one."""
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0), trust_env=False)


@contextlib.asynccontextmanager
async def mcp_client(
    url: str,
    token: str,
    name: str,
    era: str,
    legacy_ready: Callable[[], Awaitable[None]] | None = None,
    roots: list[str] | None = None,
) -> AsyncIterator[McpClient]:
    """An SDK client of ``/mcp`` at ``url``, named ``name``, speaking ``era``.

    ``legacy_ready`` waits until the broker holds the 2025 client's event stream, which the SDK
    client opens after the handshake: a change before that would reach nobody.
    """
    async with (
        loopback_http({"Authorization": f"Bearer {token}"}) as http,
        sdk_client(streamable_http_client(url, http_client=http), name, era, legacy_ready, roots=roots) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def sdk_client(
    target: Any,
    name: str,
    era: str,
    legacy_ready: Callable[[], Awaitable[None]] | None = None,
    start_timeout: float = 20.0,
    roots: list[str] | None = None,
) -> AsyncIterator[McpClient]:
    """An SDK client of ``target`` (a transport, or stdio server parameters) listening for changes;
    with ``roots`` (file URIs), one that declares the roots capability and lists them.
    ``start_timeout`` bounds its handshake and subscription: only a failure waits that long, and a
    machine loaded by parallel runs took more than 5 s."""
    used = False
    try:
        async with _sdk_client(target, name, era, legacy_ready, start_timeout, roots) as client:
            yield client
            used = True
    except* (anyio.BrokenResourceError, anyio.ClosedResourceError):
        # The SDK's client raises from its own task when an answer reaches it as it closes: the
        # server's answer to a request the client called off (the server sends one), late on a
        # loaded machine; which of the two it raises depends on how far its closing got. Once the
        # test is done with the client, that answer was nobody's.
        if not used:
            raise


@contextlib.asynccontextmanager
async def _sdk_client(
    target: Any,
    name: str,
    era: str,
    legacy_ready: Callable[[], Awaitable[None]] | None,
    start_timeout: float,
    roots: list[str] | None,
) -> AsyncIterator[McpClient]:
    holder: list[McpClient] = []

    async def list_roots(_context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots or []])

    async def on_message(message: Any) -> None:
        if era == LEGACY and isinstance(message, types.ToolListChangedNotification) and holder:
            await holder[0].changes.record()

    async with contextlib.AsyncExitStack() as stack:
        async with asyncio.timeout(start_timeout):
            client = await stack.enter_async_context(
                Client(
                    target,
                    mode=era,
                    client_info=types.Implementation(name=name, version="1"),
                    message_handler=on_message,
                    list_roots_callback=None if roots is None else list_roots,
                )
            )
        wrapped = McpClient(client, era)
        holder.append(wrapped)
        if era == LEGACY:
            if legacy_ready is not None:
                await legacy_ready()
            yield wrapped
            return
        listening = asyncio.Event()

        async def listen() -> None:
            async with client.listen(tools_list_changed=True) as subscription:
                listening.set()
                async for _ in subscription:
                    await wrapped.changes.record()

        listener = asyncio.create_task(listen())
        async with asyncio.timeout(start_timeout):
            await listening.wait()
        try:
            yield wrapped
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener


def stdio_relay(discovery_dir: Path, state_dir: Path, *extra: str) -> StdioServerParameters:
    """``browser-mcp mcp`` as an AI client's configuration would spawn it."""
    command, *args = CLI
    return StdioServerParameters(
        command=command,
        args=[*args, "mcp", "--discovery-dir", str(discovery_dir), *extra],
        # The SDK passes only a few variables on (HOME, PATH, ...); these go on top.
        env={
            ENV_DISCOVERY_DIR: str(discovery_dir),
            ENV_TOKEN_FILE: str(token_file_for(discovery_dir)),
            "XDG_STATE_HOME": str(state_dir),
            "LOG_LEVEL": "debug",
        },
    )
