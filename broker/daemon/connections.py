"""The broker's open connections: each kind capped, so no credential can starve the rest of them.

aiohttp accepts every connection and leaves bounding them to the application, which sees a
connection only once it brings a request. So :class:`ConnectionGate` watches the aiohttp server's
own record of connections opening and closing, and applies the caps of
:class:`~broker.core.limits.ConnectionCaps`, sized from the broker's limit of open files:

- a connection is counted from its accept among those that have shown no token
  (:class:`~broker.core.limits.Unproven`); past that cap, the oldest of them is closed;
- once its headers bring a valid token it is counted as that credential's
  (:class:`~broker.core.limits.HeldConnections`): the broker's own token, or a client token
  (each, and all together); one past its cap is refused (the security guard in :mod:`broker.app`
  answers 429 and closes it);
- an extension link's upgrade, from an allowed extension, is left to the links' own bounds below.

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

from ..core.limits import ConnectionCaps, HeldConnections, Unproven
from ..core.security import Client

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
    def __init__(self, caps: ConnectionCaps, link_limit: int = 32, link_timeout: float = 10.0) -> None:
        self.caps = caps
        self.unproven = Unproven[web.RequestHandler](caps.unproven)
        self.held = HeldConnections[web.RequestHandler](caps)
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
            self.held.closed(handler)

        # aiohttp's server offers no hook of its own for these; its request handlers call them.
        server.connection_made = connection_made  # type: ignore[method-assign]
        server.connection_lost = connection_lost  # type: ignore[method-assign]

    def proven(self, request: web.BaseRequest, credential: Client) -> None:
        """The request brought a valid token, ``credential``'s (None: the broker's own): its connection
        is counted as that credential's from now on.

        Raises:
            TooManyConnections: the credential holds its cap; the connection stays uncounted as
                its credential's, among those that showed no token, until it closes.
        """
        self.held.admit(request.protocol, credential)
        self.unproven.proven(request.protocol)

    def link(self, request: web.BaseRequest) -> None:
        """The request is an allowed extension's link upgrade: the links' own bounds hold it."""
        self.unproven.proven(request.protocol)

    def status_json(self) -> dict[str, int]:
        """The caps and the file limit they were sized from, for ``GET /status`` and doctor."""
        caps = self.caps
        return {
            "fileLimit": caps.descriptors,
            "withoutToken": caps.unproven,
            "ownerToken": caps.owner,
            "clientTokens": caps.clients,
            "eachClientToken": caps.per_client,
        }


CONNECTIONS = web.AppKey("connections", ConnectionGate)
