"""What runs the core on the event loop: its effects carried out, its calls awaited, its one timer.

:class:`EffectCarrier` is the base of :class:`~broker.daemon.hub.Hub`. It owns what the core must
not: the event loop's clock, the futures that callers await (:meth:`~EffectCarrier._request`), the
one timer that drives :meth:`~broker.core.state.Broker.expire` (call deadlines, keepalive, idle
sessions), and the open extension links (anything with ``send`` and ``close`` coroutines;
:mod:`broker.link.websocket` provides the WebSocket kind), whose frames it decodes and hands to the
core, and to which it sends what the core says to send.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .. import codec
from ..core import effects as fx
from ..core.broker_messages import ErrorReply
from ..core.config import Config
from ..core.effects import CallId, Effect, LinkId, SessionId
from ..core.errors import InvalidMessage, InvalidRequest, Unavailable
from ..core.state import Broker

__all__ = ["EffectCarrier", "LinkSender", "OnWait"]

# A timer that fires this many seconds late says the broker itself stood still (see _on_timer).
STOOD_STILL = 1.0

logger = logging.getLogger(__name__)
frames_logger = logging.getLogger("broker.frames")
_SETTLING = (fx.ResolveCall, fx.RejectCall)


class OnWait(Protocol):
    """Hears that a call waits for the person (seconds it may wait, and for what), and its end."""

    def waiting(self, up_to: float, note: str) -> None: ...

    def ended(self) -> None: ...


class LinkSender(Protocol):
    async def send(self, data: bytes) -> None: ...

    async def close(self, reason: str) -> None: ...


class EffectCarrier:
    """The core on the event loop: effects, awaited calls, links and the timer."""

    def __init__(self, config: Config) -> None:
        self.core = Broker(config)
        self.frame_limit = config.frame_limit
        self._waiters: dict[CallId, asyncio.Future[Any]] = {}
        self._links: dict[LinkId, LinkSender] = {}
        self._link_ids = itertools.count(1)
        self._timer: asyncio.TimerHandle | None = None
        self._timer_when = 0.0
        self._background: set[asyncio.Task[None]] = set()
        # Told which sessions' tool lists a change may touch (None: every session's).
        self.tabs_changed_listeners: list[Callable[[frozenset[SessionId] | None], None]] = []
        # Told when a session that ends when idle has ended, so its adapter can forget it.
        self.session_expired_listeners: list[Callable[[SessionId], Awaitable[None]]] = []
        # Notified when a caller gives up on a call (cancelled), so one can wait for the withdrawal.
        self.call_withdrawn = asyncio.Condition()
        # Tool calls with an idempotency key while they run: (session, key) -> the one call's task.
        self._once: dict[tuple[SessionId, str], asyncio.Task[Any]] = {}
        # Callers that want to hear when their call waits for the person: call id -> listener.
        self._on_wait: dict[CallId, OnWait] = {}

    @property
    def config(self) -> Config:
        return self.core.config

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    async def _request(
        self, start: Callable[[float], tuple[CallId, list[Effect]]], on_wait: OnWait | None = None
    ) -> Any:
        """Start a call on the core and wait until it ends.

        Raises:
            BrokerError: the core refused the call, or it ended in an error, a timeout or a lost
                link.
        """
        loop = self._loop
        call_id, effects = start(loop.time())
        waiter: asyncio.Future[Any] = loop.create_future()
        self._waiters[call_id] = waiter
        if on_wait is not None:
            self._on_wait[call_id] = on_wait
        try:
            await self.apply(effects)
            self._schedule()
            return await waiter
        finally:
            listener = self._on_wait.pop(call_id, None)
            if listener is not None:
                listener.ended()
            # Reached with the waiter still registered only when the caller gave up (cancelled):
            # the core forgets the call so its reply, if any, is dropped as late.
            if self._waiters.pop(call_id, None) is not None:
                # Sent from a task of its own: this one is being cancelled.
                self._apply_soon(self.core.cancel(call_id, self._loop.time()))
                async with self.call_withdrawn:
                    self.call_withdrawn.notify_all()

    async def run(self, effects: list[Effect]) -> None:
        await self.apply(effects)
        self._schedule()

    def check_link_room(self) -> None:
        """Raises: TooManyLinks, when no more extension links may open."""
        self.core.check_link_room()

    async def link_opened(self, sender: LinkSender, proven: bool = True) -> LinkId:
        """Raises: TooManyLinks, when as many proven links as the limit opened meanwhile."""
        link_id = next(self._link_ids)
        effects = self.core.link_opened(link_id, self._loop.time(), proven)
        self._links[link_id] = sender
        await self.run(effects)
        return link_id

    def link_proven(self, link_id: LinkId) -> None:
        self.core.link_proven(link_id)

    async def link_frame(self, link_id: LinkId, frame: bytes) -> None:
        """Handle one text frame; a bad one gets an error reply and the link stays up."""
        now = self._loop.time()
        if frames_logger.isEnabledFor(logging.DEBUG):
            frames_logger.debug("link %s -> broker: %s", link_id, frame[:2000])
        if len(frame) > self.frame_limit:
            self.core.frame_received(link_id, now)
            message = f"frame of {len(frame)} bytes is over the {self.frame_limit}-byte limit"
            logger.warning("link %s: %s", link_id, message)
            effects = self.core.oversized_reply(link_id, codec.peek_call_id(frame), len(frame), self.frame_limit, now)
            await self._reply_error(link_id, "message_too_large", message)
            await self.run(effects)
            return
        try:
            message_in = codec.decode_extension_message(frame)
        except InvalidMessage as exc:
            self.core.frame_received(link_id, now)
            logger.info("link %s sent an unusable frame: %s", link_id, exc.message)
            await self._reply_error(link_id, exc.code, exc.message)
            await self.run(self.core.unreadable_reply(link_id, codec.peek_call_id(frame), exc.message, now))
            return
        # As run() does, one coroutine fewer: every answer from a page comes this way.
        await self.apply(self.core.extension_message(link_id, message_in, now))
        self._schedule()

    async def link_closed(self, link_id: LinkId, reason: str = "") -> None:
        if self._links.pop(link_id, None) is None:
            return
        await self.run(self.core.link_closed(link_id, self._loop.time(), reason))

    async def close_all_links(self, reason: str) -> None:
        for link_id, sender in list(self._links.items()):
            await sender.close(reason)
            await self.link_closed(link_id, reason)

    async def apply(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, fx.SendToExtension):
                frame = self._frame_of(effect)
                if frame is not None:
                    await self._send(effect.link_id, frame)
            elif isinstance(effect, _SETTLING):
                self._settle(effect)
            elif isinstance(effect, fx.CloseLink):
                sender = self._links.pop(effect.link_id, None)
                if sender is not None:
                    logger.info("closing link %s: %s", effect.link_id, effect.reason)
                    await sender.close(effect.reason)
            elif isinstance(effect, fx.TabsChanged):
                for listener in self.tabs_changed_listeners:
                    listener(effect.sessions)
            elif isinstance(effect, fx.SessionExpired):
                for expired in self.session_expired_listeners:
                    await expired(effect.session_id)
            elif isinstance(effect, fx.CallWaiting):
                waiting = self._on_wait.get(effect.call_id)
                if waiting is not None:
                    waiting.waiting(effect.up_to, effect.note)

    def _settle(self, effect: fx.ResolveCall | fx.RejectCall) -> None:
        waiter = self._waiters.pop(effect.call_id, None)
        if waiter is None or waiter.done():
            return
        if isinstance(effect, fx.ResolveCall):
            waiter.set_result(effect.value)
        else:
            waiter.set_exception(effect.error)

    def _frame_of(self, effect: fx.SendToExtension) -> bytes | None:
        """The message as a frame; None for one that cannot be written (its call fails at once)."""
        try:
            return codec.encode_broker_message(effect.message)
        except codec.JSONEncodeError as exc:
            self._unsendable(effect.message, exc)
            return None

    def _unsendable(self, message: Any, exc: Exception) -> None:
        """A call whose arguments cannot be written as JSON fails at once, naming why."""
        call_id = getattr(message, "call_id", None)
        if not isinstance(call_id, str) or call_id not in self._waiters:
            logger.error("a %s frame could not be written: %s", type(message).__name__, exc)
            return
        self.core.cancel(call_id, self._loop.time())
        self._settle(fx.RejectCall(call_id, InvalidRequest(f"the arguments cannot be sent to the page as JSON: {exc}")))

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
        now = self._loop.time()
        effects: list[Effect] = []
        # A timer this late means the whole process stood still (SIGSTOP, a suspended machine):
        # what peers sent meanwhile is still unread, and is not to be taken for their silence.
        late = now - self._timer_when
        if late >= STOOD_STILL:
            logger.warning("the broker did not run for %.1f s or more; links and calls get that time back", late)
            effects += self.core.resumed(now, late)
        effects += self.core.expire(now)
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
