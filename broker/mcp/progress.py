"""Progress notifications for an MCP call that waits for the person to approve it.

A call that needs the person's approval may wait up to the approval's time (60 s unless the
extension's options say otherwise) before it even starts. A client that hears nothing meanwhile
may give up, and many restart their own timeout on progress; so while the hub says a call waits,
a client that sent a ``progressToken`` hears every few seconds how long it has waited and for
what. The SDK sends nothing to a client without a token. Deliberately knows nothing of the core:
the hub says when the wait starts and when the call ends.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp.server import ServerRequestContext

__all__ = ["INTERVAL", "WaitProgress"]

logger = logging.getLogger(__name__)

INTERVAL = 5.0


class WaitProgress:
    """An :class:`~broker.daemon.hub.OnWait` that reports a request's wait as MCP progress."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], stream: Any = None) -> None:
        """``stream``: a 2025-11-25 HTTP session's own channel (its GET stream), for clients whose
        call is answered with one JSON body, which cannot carry the call's notifications."""
        self._ctx = ctx
        self._stream = stream
        self._task: asyncio.Task[None] | None = None

    def waiting(self, up_to: float, note: str) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._report(up_to, note))

    def ended(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _report(self, up_to: float, note: str) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        # Past ``up_to`` the person has answered (or the extension gave up): the call runs on.
        while (waited := loop.time() - started) < up_to:
            try:
                await self._send(round(waited, 1), up_to, note)
            except Exception:
                # A client that went away: the call itself ends the usual way.
                logger.debug("progress for a waiting call could not be sent", exc_info=True)
                return
            await asyncio.sleep(INTERVAL)

    async def _send(self, progress: float, total: float, note: str) -> None:
        meta = self._ctx.meta
        token = meta.get("progress_token") if isinstance(meta, dict) else None
        if self._stream is not None and token is not None:
            await self._stream.send_progress_notification(token, progress, total, note)
        else:
            await self._ctx.session.report_progress(progress, total, note)
