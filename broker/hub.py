"""The asyncio side of the core: carries out its effects and lets callers await their calls.

One :class:`Hub` per broker process. It owns what the core must not: the event loop's clock,
the futures that REST and MCP handlers await, the one timer that drives
:meth:`~broker.core.state.Broker.expire`, and the open extension links (anything with ``send`` and
``close`` coroutines; :mod:`broker.extension_ws` provides the WebSocket kind). Every rule about
tabs, sessions and calls stays in :mod:`broker.core.state`; this module only decodes, dispatches
and delivers.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from . import codec
from .core.errors import InvalidMessage, Unavailable
from .core.messages import ErrorReply
from .core.effects import CallId, LinkId
from .core.state import (
    Broker,
    CloseLink,
    Config,
    Effect,
    RejectCall,
    ResolveCall,
    SendToExtension,
    TabsChanged,
)

__all__ = ["Hub", "LinkSender", "every"]

logger = logging.getLogger(__name__)
frames_logger = logging.getLogger("broker.frames")


class LinkSender(Protocol):
    async def send(self, data: bytes) -> None: ...

    async def close(self, reason: str) -> None: ...


class Hub:
    def __init__(self, config: Config, frame_limit: int = 32 * 1024 * 1024) -> None:
        self.core = Broker(config)
        self.frame_limit = frame_limit
        self._waiters: dict[CallId, asyncio.Future[Any]] = {}
        self._links: dict[LinkId, LinkSender] = {}
        self._link_ids = itertools.count(1)
        self._timer: asyncio.TimerHandle | None = None
        self._timer_when = 0.0
        self._background: set[asyncio.Task[None]] = set()
        self.tabs_changed_listeners: list[Callable[[], None]] = []
        # Notified when a caller gives up on a call (cancelled), so one can wait for the withdrawal.
        self.call_withdrawn = asyncio.Condition()

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    # Calls from sessions

    async def ensure_session(self, session_id: str, name: str) -> None:
        """Open the session if it is new, and announce it to the browsers.

        Awaited, so the ``connect`` naming the session reaches each browser before anything the
        session then asks for (a tab opened for it is grouped under its client's name).
        """
        await self.apply(self.core.open_session(session_id, name))

    async def close_session(self, session_id: str) -> None:
        await self.apply(self.core.close_session(session_id))

    async def request(self, start: Callable[[float], tuple[CallId, list[Effect]]]) -> Any:
        """Start a call on the core and wait until it ends.

        Raises:
            BrokerError: the core refused the call, or it ended in an error, a timeout or a lost
                link.
        """
        call_id, effects = start(self._loop.time())
        waiter: asyncio.Future[Any] = self._loop.create_future()
        self._waiters[call_id] = waiter
        try:
            await self.apply(effects)
            self._schedule()
            return await waiter
        finally:
            # Reached with the waiter still registered only when the caller gave up (cancelled):
            # the core forgets the call so its reply, if any, is dropped as late.
            if self._waiters.pop(call_id, None) is not None:
                self.core.cancel(call_id, self._loop.time())
                async with self.call_withdrawn:
                    self.call_withdrawn.notify_all()

    async def run(self, effects: list[Effect]) -> None:
        await self.apply(effects)
        self._schedule()

    # Extension links

    async def link_opened(self, sender: LinkSender) -> LinkId:
        link_id = next(self._link_ids)
        self._links[link_id] = sender
        await self.run(self.core.link_opened(link_id, self._loop.time()))
        return link_id

    async def link_frame(self, link_id: LinkId, frame: bytes) -> None:
        """Handle one text frame; a bad one gets an error reply and the link stays up."""
        now = self._loop.time()
        if frames_logger.isEnabledFor(logging.DEBUG):
            frames_logger.debug("link %s -> broker: %s", link_id, frame[:2000])
        if len(frame) > self.frame_limit:
            self.core.frame_received(link_id, now)
            message = f"frame of {len(frame)} bytes is over the {self.frame_limit}-byte limit"
            logger.warning("link %s: %s", link_id, message)
            effects = self.core.oversized_reply(
                link_id, codec.peek_call_id(frame), len(frame), self.frame_limit, now
            )
            await self._reply_error(link_id, "message_too_large", message)
            await self.run(effects)
            return
        try:
            message_in = codec.decode_extension_message(frame)
        except InvalidMessage as exc:
            self.core.frame_received(link_id, now)
            logger.info("link %s sent an unusable frame: %s", link_id, exc.message)
            await self._reply_error(link_id, exc.code, exc.message)
            return
        await self.run(self.core.extension_message(link_id, message_in, now))

    async def link_closed(self, link_id: LinkId, reason: str = "") -> None:
        if self._links.pop(link_id, None) is None:
            return
        await self.run(self.core.link_closed(link_id, self._loop.time(), reason))

    async def close_all_links(self, reason: str) -> None:
        for link_id, sender in list(self._links.items()):
            await sender.close(reason)
            await self.link_closed(link_id, reason)

    # Effects

    async def apply(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, SendToExtension):
                await self._send(effect.link_id, codec.encode_broker_message(effect.message))
            elif isinstance(effect, ResolveCall):
                waiter = self._waiters.pop(effect.call_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(effect.value)
            elif isinstance(effect, RejectCall):
                waiter = self._waiters.pop(effect.call_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_exception(effect.error)
            elif isinstance(effect, CloseLink):
                sender = self._links.pop(effect.link_id, None)
                if sender is not None:
                    logger.info("closing link %s: %s", effect.link_id, effect.reason)
                    await sender.close(effect.reason)
            elif isinstance(effect, TabsChanged):
                for listener in self.tabs_changed_listeners:
                    listener()

    async def _send(self, link_id: LinkId, data: bytes) -> None:
        sender = self._links.get(link_id)
        if sender is None:
            return
        if frames_logger.isEnabledFor(logging.DEBUG):
            frames_logger.debug("broker -> link %s: %s", link_id, data[:2000])
        try:
            await sender.send(data)
        except (ConnectionError, RuntimeError) as exc:
            # The socket died under us; the reader will notice too, and link_closed is idempotent.
            await self.link_closed(link_id, f"send failed: {exc}")

    async def _reply_error(self, link_id: LinkId, code: str, message: str) -> None:
        await self._send(link_id, codec.encode_broker_message(ErrorReply(code, message)))

    def _apply_soon(self, effects: list[Effect]) -> None:
        if not effects:
            return
        task = self._loop.create_task(self.run(effects))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # The one timer

    def _schedule(self) -> None:
        when = self.core.next_wakeup()
        if when is None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return
        if self._timer is not None and self._timer_when <= when:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_at(when, self._on_timer)
        self._timer_when = when

    def _on_timer(self) -> None:
        self._timer = None
        effects = self.core.expire(self._loop.time())
        if effects:
            self._apply_soon(effects)
        else:
            self._schedule()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for waiter in self._waiters.values():
            if not waiter.done():
                waiter.set_exception(Unavailable("the broker is shutting down"))
        self._waiters.clear()


async def every(interval: float, job: Callable[[], Awaitable[None]]) -> None:
    """Run ``job`` every ``interval`` seconds until cancelled."""
    while True:
        await asyncio.sleep(interval)
        await job()
