"""What one running broker knows about itself: its settings, identity, its limit of open files,
and the app keys.

Kept apart from :mod:`broker.app` so every adapter can reach the hub and the runtime through
typed ``web.AppKey``s without importing the app factory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import time
from datetime import UTC, datetime
from typing import Any

import attrs
from aiohttp import web

from ..core.config import DEFAULTS, Config
from ..core.limits import raised_file_limit
from ..core.link_auth import PairingDesk
from ..core.security import Client
from ..version import MIN_EXTENSION_VERSION, PROTOCOL_VERSION, VERSION
from .hub import Hub

__all__ = [
    "CLIENT",
    "HUB",
    "PROTOCOL_VERSION",
    "RUNTIME",
    "Runtime",
    "Settings",
    "VERSION",
    "open_file_limit",
    "raise_open_file_limit",
]


# What an unlimited number of open files is taken for: more than any cap asks.
_UNLIMITED_FILES = 1 << 20


def open_file_limit() -> int:
    """This process's soft limit of open files (RLIMIT_NOFILE)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return _UNLIMITED_FILES if soft == resource.RLIM_INFINITY else soft


def raise_open_file_limit(wanted: int) -> tuple[int, int]:
    """Raise this process's soft limit of open files toward ``wanted``, as far as the hard limit allows.

    Never lowers it. Returns the soft limit before and after (the same when it could not be raised).
    """
    before = open_file_limit()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = raised_file_limit(soft, hard, wanted, resource.RLIM_INFINITY)
    if target != soft:
        # macOS refuses more than its kern.maxfilesperproc whatever the hard limit says.
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return before, open_file_limit()


@attrs.frozen
class Settings:
    """How this broker was started: who may connect, and the core's limits (:class:`Config`)."""

    token: str
    allowed_extensions: frozenset[str]
    # Extension links must prove they hold the link key before the hub hears them (the origin alone
    # is not enough: another local user can forge it).
    require_extension_token: bool = False
    limits: Config = attrs.field(
        factory=lambda: attrs.evolve(DEFAULTS, server_version=VERSION, min_extension_version=MIN_EXTENSION_VERSION)
    )


@attrs.define
class Runtime:
    settings: Settings
    port: int = 0
    pid: int = attrs.Factory(os.getpid)
    started_at: datetime = attrs.Factory(lambda: datetime.now(UTC))
    _started_monotonic: float = attrs.Factory(time.monotonic)
    stop_requested: asyncio.Event = attrs.Factory(asyncio.Event)
    # The pairing code out, if any (browser-mcp pair).
    pairing: PairingDesk = attrs.Factory(PairingDesk)
    # The limit of open files the connection caps are sized from (serve raises it first).
    open_files: int = attrs.Factory(open_file_limit)

    @property
    def started_at_iso(self) -> str:
        return self.started_at.isoformat(timespec="seconds").replace("+00:00", "Z")

    def discovery_fields(self) -> dict[str, Any]:
        return {
            "port": self.port,
            "pid": self.pid,
            "startedAt": self.started_at_iso,
            "version": VERSION,
            "protocol": PROTOCOL_VERSION,
            "token": self.settings.token,
        }

    def status_fields(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "protocol": PROTOCOL_VERSION,
            "pid": self.pid,
            "port": self.port,
            "startedAt": self.started_at_iso,
            "uptimeSeconds": round(time.monotonic() - self._started_monotonic, 1),
        }

    def request_stop(self) -> None:
        self.stop_requested.set()


HUB = web.AppKey("hub", Hub)
# Who the request acts for (core.security.Client): its client token's name, else None (the owner).
CLIENT = web.RequestKey[Client]("client")
RUNTIME = web.AppKey("runtime", Runtime)
