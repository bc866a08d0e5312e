"""The broker's MCP routes, ``/mcp`` and ``/mcp/stream``, with the MCP SDK loaded on first use.

The SDK (pydantic, starlette, anyio) is most of a broker's start-up time and idle memory, and a
broker that serves only the extension and REST callers never needs it. So :mod:`broker.mcp.transports`
is imported, and the MCP surface started, when the first MCP request arrives; REST, the extension
link and the command line never load it. The start runs on its own, not in the first request: that
request may be cancelled (its client hangs up, its body comes too slowly) without leaving the
surface half started.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from aiohttp import web

from ..daemon.hub import Hub

if TYPE_CHECKING:
    from .transports import RunningMcp

__all__ = ["MCP", "McpDoor", "setup_mcp"]


class McpDoor:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._running: RunningMcp | None = None
        self._starting: asyncio.Future[RunningMcp] | None = None

    async def running(self) -> RunningMcp:
        """The MCP surface and endpoint, started on first need.

        Raises:
            Exception: whatever starting it raised; the next request tries again.
        """
        if self._running is not None:
            return self._running
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        starting = self._starting
        try:
            return await asyncio.shield(starting)
        except Exception:
            if starting.done() and self._starting is starting:
                self._starting = None
            raise

    async def _start(self) -> RunningMcp:
        from .transports import RunningMcp  # noqa: PLC0415 - the point of this module

        running = RunningMcp(self.hub)
        await running.start()
        self._running = running
        return running

    async def http(self, request: web.Request) -> web.StreamResponse:
        return await (await self.running()).endpoint.http(request)

    async def tunnel(self, request: web.Request) -> web.StreamResponse:
        return await (await self.running()).endpoint.tunnel(request)

    async def going_away(self, app: web.Application) -> None:
        if self._running is not None:
            await self._running.going_away()

    async def stop(self, app: web.Application) -> None:
        if self._starting is not None and not self._starting.done():
            # A start under way when the broker stops is let finish, so that it is stopped too.
            with contextlib.suppress(Exception):
                await self._starting
        if self._running is not None:
            await self._running.stop()


MCP = web.AppKey("mcp", McpDoor)


def setup_mcp(app: web.Application, hub: Hub) -> McpDoor:
    """Add ``/mcp`` and ``/mcp/stream`` to ``app``; the SDK loads with the first request to either."""
    door = app[MCP] = McpDoor(hub)
    app.router.add_route("*", "/mcp", door.http)
    app.router.add_get("/mcp/stream", door.tunnel)
    app.on_shutdown.append(door.going_away)
    app.on_cleanup.append(door.stop)
    return door
