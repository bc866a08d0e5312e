"""The broker's open connections: those that have shown no token are few, so they cannot starve the rest.

aiohttp accepts every connection and leaves bounding them to the application, which sees a
connection only once it brings a request. So :class:`ConnectionGate` watches the aiohttp server's
own record of connections opening and closing, and applies :class:`~broker.core.limits.Unproven`:
past ``Config.max_unproven_connections`` connections that have brought no valid token (nor are an
allowed extension's link), the oldest of them is closed. The security guard in :mod:`broker.app`
tells the gate which connections proved themselves.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from .core.limits import Unproven

__all__ = ["CONNECTIONS", "ConnectionGate"]

logger = logging.getLogger(__name__)


class ConnectionGate:
    def __init__(self, limit: int) -> None:
        self.unproven = Unproven[web.RequestHandler](limit)

    def watch(self, server: web.Server) -> None:
        """Hear each connection of ``server`` open and close; call once, before it accepts any."""
        opened, lost = server.connection_made, server.connection_lost

        def connection_made(handler: web.RequestHandler, transport: asyncio.Transport) -> None:
            opened(handler, transport)
            oldest = self.unproven.opened(handler)
            if oldest is not None:
                logger.debug("%d connections without a token: closing the oldest", self.unproven.limit + 1)
                oldest.force_close()

        def connection_lost(handler: web.RequestHandler, exc: BaseException | None = None) -> None:
            lost(handler, exc)
            self.unproven.closed(handler)

        # aiohttp's server offers no hook of its own for these; its request handlers call them.
        server.connection_made = connection_made  # type: ignore[method-assign]
        server.connection_lost = connection_lost  # type: ignore[method-assign]

    def proven(self, request: web.BaseRequest) -> None:
        """The request brought a valid token, or is an allowed extension's link: its connection stays."""
        self.unproven.proven(request.protocol)


CONNECTIONS = web.AppKey("connections", ConnectionGate)
