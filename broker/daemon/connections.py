"""The broker's open connections: those that have shown no token are few, so they cannot starve the rest.

aiohttp accepts every connection and leaves bounding them to the application, which sees a
connection only once it brings a request. So :class:`ConnectionGate` watches the aiohttp server's
own record of connections opening and closing, and applies :class:`~broker.core.limits.Unproven`:
past ``Config.max_unproven_connections`` connections that have brought no valid token (nor are an
allowed extension's link), the oldest of them is closed. The security guard in :mod:`broker.app`
tells the gate which connections proved themselves.

An allowed extension's ``Origin`` is easy to forge from outside a browser, so its links are
bounded again once upgraded, by :class:`UnprovenLinks`: until its extension proves the link key,
a link is one of at most ``Config.max_unproven_links`` (a new one past them closes the oldest),
and it is closed if it has not proven it (or, where the broker allows that, settled as an
extension that skips the handshake) within ``Config.link_proof_timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from aiohttp import web

from ..core.limits import Unproven

__all__ = ["CONNECTIONS", "ConnectionGate", "UnprovenLinks", "WaitingLink"]

logger = logging.getLogger(__name__)


class WaitingLink(Protocol):
    def __hash__(self) -> int: ...

    async def turn_away(self, reason: str) -> None:
        """Close the link, telling its extension ``reason``."""


class UnprovenLinks:
    """Extension links whose extension has not proven the link key yet: few, and not for long."""

    def __init__(self, limit: int, timeout: float) -> None:
        self._waiting = Unproven[WaitingLink](limit)
        self.timeout = timeout
        self._deadlines: dict[WaitingLink, asyncio.TimerHandle] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def arrived(self, link: WaitingLink) -> None:
        """Count a new link and start its time to prove itself; past the limit the oldest is closed."""
        oldest = self._waiting.opened(link)
        self.restart(link)
        if oldest is not None:
            self.left(oldest)
            self._turn_away(
                oldest, f"{self._waiting.limit} links wait to prove the link key; the oldest gives way: try again"
            )

    def restart(self, link: WaitingLink, seconds: float | None = None) -> None:
        """Give ``link`` ``seconds`` (its whole time, by default) from now to prove itself."""
        earlier = self._deadlines.pop(link, None)
        if earlier is not None:
            earlier.cancel()
        delay = self.timeout if seconds is None else seconds
        self._deadlines[link] = asyncio.get_running_loop().call_later(delay, self._expired, link)

    def left(self, link: WaitingLink) -> None:
        """``link`` proved itself, settled without proof where that is allowed, or closed."""
        self._waiting.closed(link)
        deadline = self._deadlines.pop(link, None)
        if deadline is not None:
            deadline.cancel()

    def _expired(self, link: WaitingLink) -> None:
        self._deadlines.pop(link, None)
        self.left(link)
        self._turn_away(link, "the extension did not prove the link key in time: try again")

    def _turn_away(self, link: WaitingLink, reason: str) -> None:
        logger.info("closing an extension link: %s", reason)
        task = asyncio.ensure_future(link.turn_away(reason))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def __len__(self) -> int:
        return len(self._waiting)


class ConnectionGate:
    def __init__(self, limit: int, link_limit: int = 32, link_timeout: float = 10.0) -> None:
        self.unproven = Unproven[web.RequestHandler](limit)
        self.links = UnprovenLinks(link_limit, link_timeout)

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
