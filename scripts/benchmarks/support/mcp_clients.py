"""MCP as the benchmarks speak it to the broker: the protocol eras, the ``initialize`` request, the
command line that spawns ``browser-mcp mcp``, and raw JSON-RPC clients over HTTP and stdio.

The raw clients are plain aiohttp and subprocess pipes rather than the SDK's client: the SDK takes
about half a second to parse a ``tools/list`` of 10,000 tools, which would swamp the broker's share
of a round trip. :class:`SdkHttp` is the SDK's client itself, for what the broker spends serving it
(its 2025-11-25 session keeps a GET stream open, which raw HTTP does not).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import mcp_types as types
import orjson
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from broker.paths import ENV_TOKEN_FILE

from . import CALL_TIMEOUT, BenchError
from .servers import BROWSER_MCP, Server

LEGACY, MODERN = "legacy", "2026-07-28"
LEGACY_VERSION = "2025-11-25"
CLIENT_LABEL = "bench"

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def loopback_http(headers: dict[str, str]) -> httpx2.AsyncClient:
    """The SDK's HTTP client settings, minus the environment's proxies: loopback never goes through one."""
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0), trust_env=False)


def era_of(path: str) -> str:
    """The SDK client's mode for a path such as ``http-2025`` or ``stdio-2026``."""
    return LEGACY if path.endswith("2025") else MODERN


def mcp_env(workdir: Path) -> dict[str, str]:
    """What a spawned ``browser-mcp mcp`` needs on top of the few variables the SDK passes on."""
    return {ENV_TOKEN_FILE: str(workdir / "broker-token"), "XDG_STATE_HOME": str(workdir / "state")}


def relay_command(broker: Server) -> list[str]:
    """``browser-mcp mcp`` for this broker, as an AI client's configuration would spawn it."""
    assert broker.discovery_dir is not None
    return [str(BROWSER_MCP), "mcp", "--pid", str(broker.pid), "--discovery-dir", str(broker.discovery_dir)]


class RawHttp:
    """JSON-RPC over the broker's ``/mcp`` with plain aiohttp, in either era."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str, era: str) -> None:
        self.session = session
        self.url = url
        self.era = era
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.ids = 0

    async def open(self) -> None:
        if self.era == MODERN:
            self.headers["MCP-Protocol-Version"] = MODERN
            return
        async with self.session.post(self.url, data=orjson.dumps(INITIALIZE), headers=self.headers) as response:
            await response.read()
            session_id = response.headers.get("mcp-session-id")
            if response.status != 200 or session_id is None:
                raise BenchError(f"initialize failed: {response.status}")
        self.headers["mcp-session-id"] = session_id
        self.headers["MCP-Protocol-Version"] = LEGACY_VERSION
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self.session.post(self.url, data=orjson.dumps(note), headers=self.headers) as response:
            await response.read()

    async def close(self) -> None:
        if "mcp-session-id" in self.headers:
            async with self.session.delete(self.url, headers=self.headers) as response:
                await response.read()

    async def request(self, method: str, params: dict[str, Any], name: str | None = None) -> tuple[Any, int]:
        """The result and the size of the answer in bytes."""
        data = await self.exchange(method, params, name)
        return parse_answer(method, data), len(data)

    async def exchange(self, method: str, params: dict[str, Any], name: str | None = None) -> bytes:
        """The answer's bytes, unparsed (parsing 5 MB takes the client longer than the broker's work)."""
        self.ids += 1
        headers = self.headers
        if self.era == MODERN:
            params = {
                **params,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
            headers = {**headers, "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
        body = orjson.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        async with self.session.post(self.url, data=body, headers=headers) as response:
            data = await response.read()
        if data.startswith(b"event:") or data.startswith(b"data:"):
            data = next(line[5:] for line in data.splitlines() if line.startswith(b"data:"))
        return data


def parse_answer(method: str, data: bytes) -> Any:
    message = orjson.loads(data)
    if "result" not in message:
        raise BenchError(f"{method} failed: {data[:300]!r}")
    return message["result"]


class RawStdio:
    """JSON-RPC lines through a spawned ``browser-mcp mcp`` (2025-11-25 handshake)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = 0

    async def open(self) -> None:
        await self._send(INITIALIZE)
        await self._answer(0)
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(orjson.dumps(message) + b"\n")
        await self.process.stdin.drain()

    async def _answer(self, request_id: int) -> tuple[Any, int]:
        line = await self._line()
        message = orjson.loads(line)
        if message.get("id") != request_id or "result" not in message:
            raise BenchError(f"request {request_id} failed: {line[:300]!r}")
        return message["result"], len(line)

    async def _line(self) -> bytes:
        """The next answer's line; notifications (tool list changes after claims) are skipped."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), CALL_TIMEOUT)
            if not line:
                raise BenchError("browser-mcp mcp closed its stdout")
            if b'"method"' not in line[:80]:
                return line

    async def request(self, method: str, params: dict[str, Any], name: str | None = None) -> tuple[Any, int]:
        self.ids += 1
        await self._send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return await self._answer(self.ids)

    async def exchange(self, method: str, params: dict[str, Any], name: str | None = None) -> bytes:
        self.ids += 1
        await self._send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return await self._line()

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


class SdkHttp:
    """The official SDK client (``mcp.Client``) of ``/mcp``: in the 2025-11-25 era a stateful
    session whose GET stream is open (the SDK opens it after the handshake), else stateless."""

    def __init__(self, url: str, token: str, era: str) -> None:
        self.url = url
        self.token = token
        self.era = era
        self.stack = contextlib.AsyncExitStack()
        self.client: Client | None = None
        self.list_changes = asyncio.Event()

    async def open(self) -> None:
        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                self.list_changes.set()

        http = await self.stack.enter_async_context(loopback_http({"Authorization": f"Bearer {self.token}"}))
        self.client = await self.stack.enter_async_context(
            Client(
                streamable_http_client(self.url, http_client=http),
                mode=self.era,
                client_info=types.Implementation(name=CLIENT_LABEL, version="1"),
                message_handler=on_message,
            )
        )

    async def event_stream_open(self) -> None:
        """Raises: BenchError, when no list change came on the session's GET stream (2025-11-25 era)."""
        if self.era == MODERN:
            return
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                await self.list_changes.wait()
        except TimeoutError:
            why = "no notifications/tools/list_changed came: the SDK client's GET stream is not open"
            raise BenchError(why) from None

    async def close(self) -> None:
        await self.stack.aclose()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        assert self.client is not None
        result = await self.client.call_tool(name, arguments)
        return result.model_dump(by_alias=True, exclude_none=True)

    async def list_tools(self) -> list[types.Tool]:
        assert self.client is not None
        return (await self.client.list_tools(cache_mode="bypass")).tools
