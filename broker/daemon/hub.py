"""The asyncio side of the core: carries out its effects and lets callers await their calls.

One :class:`Hub` per broker process. It owns what the core must not: the event loop's clock,
the futures that REST and MCP handlers await, the one timer that drives
:meth:`~broker.core.state.Broker.expire` (call deadlines, keepalive, idle sessions), and the open
extension links (anything with ``send`` and ``close`` coroutines; :mod:`broker.link.websocket`
provides the WebSocket kind).

Adapters act through its typed methods (open a session, open or close a tab, change a tab's
owner, list a tab's tools, call a tool, carry out a browser action, ask a browser for its
windows, history or bookmarks), so every door takes one path to the core. Every rule about
tabs, sessions and calls stays in :mod:`broker.core`; this module only decodes, dispatches and
delivers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, cast

import attrs

from .. import codec
from ..core import effects as fx
from ..core.arguments import OpenTabRequest, TabChange
from ..core.browser_wide import CREATE_WINDOW, RESIZE_WINDOW, WideCall
from ..core.browsers import parse_ref
from ..core.config import Config
from ..core.effects import (
    BrowserCallOutcome,
    BrowserView,
    CallId,
    Effect,
    LinkId,
    SessionId,
    SessionView,
    TabView,
    WindowChanged,
    WindowOpened,
    WindowView,
)
from ..core.errors import BrokerError, InternalError, InvalidMessage, InvalidRequest, PageToolFailed, Unavailable
from ..core.messages import Arguments, ErrorReply, JsonObject, Tool
from ..core.once import Outcome, footprint
from ..core.results import PageResult, bounded_result
from ..core.state import Broker

__all__ = ["Hub", "LinkSender", "OnWait"]

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


class Hub:
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

    # Sessions

    async def open_session(
        self, session_id: SessionId, name: str, *, ends_when_idle: bool = False, credential: str | None = None
    ) -> None:
        """Open the session if it is new, else note its use.

        A browser hears of the session (``connect``) with the first frame about it sent there,
        so a tab opened for it is grouped under its client's name (:mod:`broker.core.links`).

        Raises:
            Forbidden: the session was opened with another credential than ``credential``.
        """
        known = self.core.has_session(session_id)
        effects = self.core.open_session(
            session_id, name, self._loop.time(), ends_when_idle=ends_when_idle, credential=credential
        )
        # A use of a known session only moves its end later: nothing to send, no timer to move.
        if effects or not known:
            await self.run(effects)

    async def end_session(self, session_id: SessionId, credential: str | None = None) -> bool:
        """End a session; False when there was none by that id.

        Raises:
            Forbidden: a client token (``credential``) names a session it did not open.
        """
        self.core.check_session_end(session_id, credential)
        existed = self.core.has_session(session_id)
        await self.run(self.core.close_session(session_id))
        return existed

    def hold_session(self, key: SessionId, credential: str | None) -> None:
        """Count a connection that will carry session ``key`` as one of ``credential``'s sessions
        from when it opens, until :meth:`release_session`.

        Raises:
            TooManySessions: the credential holds as many sessions as it may.
        """
        self.core.hold_session(key, credential)

    def release_session(self, key: SessionId) -> None:
        self.core.release_session(key)

    def session_used(self, session_id: SessionId) -> None:
        """Note a use of a session that ends when idle; one that has ended stays ended."""
        self.core.session_used(session_id, self._loop.time())

    def has_session(self, session_id: SessionId) -> bool:
        return self.core.has_session(session_id)

    def ended_by_person(self, session_id: SessionId) -> bool:
        """The person ended the session in the browser, and its client's next call is to hear so."""
        return self.core.ended_by_person(session_id)

    @contextlib.asynccontextmanager
    async def listening(self, session_id: SessionId) -> AsyncIterator[None]:
        """While a client waits on a stream for the session's news, the session is in use."""
        self.core.listener_opened(session_id)
        try:
            yield
        finally:
            self.core.listener_closed(session_id, self._loop.time())
            self._schedule()

    # What there is

    def tabs(self) -> list[TabView]:
        return self.core.tabs()

    def tab(self, ref: str | int) -> TabView:
        """Raises: ExtensionNotConnected, TabNotFound, AmbiguousTab, InvalidRequest."""
        return self.core.tab(ref)

    def browsers(self) -> list[BrowserView]:
        return self.core.browsers()

    def own_tabs(self, session_id: SessionId) -> tuple[list[TabView], TabView | None]:
        """The session's tabs and its current one. Raises: SessionEnded."""
        return self.core.own_tabs(session_id)

    def current_tab(self, session_id: SessionId) -> TabView:
        """Raises: SessionEnded, InvalidRequest (none), ExtensionNotConnected, TabNotFound."""
        return self.core.current_tab(session_id)

    def select_tab(self, session_id: SessionId, ref: str | int) -> TabView:
        """Raises: SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabNotClaimed."""
        return self.core.select_tab(session_id, ref)

    def sessions(self) -> list[SessionView]:
        return self.core.sessions()

    def session_tools(self, session_id: SessionId) -> list[tuple[TabView, Tool]]:
        return self.core.session_tools(session_id)

    def shared_tab_ids(self) -> frozenset[int]:
        return self.core.shared_tab_ids()

    @property
    def pending_count(self) -> int:
        return self.core.pending_count

    # What a session asks for. Each raises the BrokerError the core or the browser answered.

    async def open_tab(self, session_id: SessionId, request: OpenTabRequest) -> TabView:
        view: TabView = await self._request(
            lambda now: self.core.open_tab(
                session_id,
                request.url,
                request.focus,
                now,
                request.browser,
                window_id=request.window_id,
                new_window=request.new_window,
                pinned=request.pinned,
            )
        )
        return view

    async def browser_call(
        self, session_id: SessionId, call: WideCall, on_wait: OnWait | None = None
    ) -> BrowserCallOutcome:
        """A browser-wide call (windows, history, bookmarks); :func:`broker.daemon.views.browser_call_json`
        writes its outcome as REST and MCP send it. ``on_wait`` hears when it waits for the person's
        approval (a deletion always does).

        ``createWindow`` opens its tab as ``open_tab`` does, so the tab is the session's; a list
        of windows gets each window's tabs and whether all are the session's from the core.
        """
        if call.request == CREATE_WINDOW:
            assert call.url is not None
            tab = await self.open_tab(session_id, OpenTabRequest(call.url, True, call.browser, new_window=True))
            return WindowOpened(WindowView(tab.browser, tab.window_id or 0, (tab.id,), True), tab)
        if call.request == RESIZE_WINDOW and call.window is None:
            call = attrs.evolve(call, window=self.core.current_window(session_id))
        asked: list[str] = []

        def start(now: float) -> tuple[CallId, list[Effect]]:
            browser_key, call_id, effects = self.core.browser_request(session_id, call, now)
            asked.append(browser_key)
            return call_id, effects

        answer = await self._request(start, on_wait)
        if call.request == "listWindows":
            return self.core.describe_windows(session_id, asked[0], answer)
        if call.request == RESIZE_WINDOW:
            assert call.window is not None
            if not isinstance(answer, dict):
                raise PageToolFailed(f"the extension answered resizeWindow with {type(answer).__name__}, not an object")
            size = {key: answer.get(key) for key in ("width", "height")}
            return {"resized": {"browser": asked[0], "id": parse_ref(call.window, "window")[1], **size}}
        if call.window is not None:
            done = {"focusWindow": "focused", "closeWindow": "closed"}[call.request]
            return WindowChanged(done, asked[0], parse_ref(call.window, "window")[1])
        if not isinstance(answer, dict):
            raise PageToolFailed(f"the extension answered {call.request} with {type(answer).__name__}, not an object")
        return answer

    async def close_tab(self, session_id: SessionId, ref: str | int) -> Any:
        return await self._request(lambda now: self.core.close_tab(session_id, ref, now))

    async def change_tab(self, session_id: SessionId, change: TabChange, ref: str | int) -> TabView:
        """Claim, release or focus a tab for the session."""
        if change is TabChange.CLAIM:
            view, asked, effects = self.core.ask_claim(session_id, ref, self._loop.time())
            if asked is None:
                await self.run(effects)
            else:
                # A browser that answers claims may refuse one (another broker's session holds the tab).
                await self._request(lambda now: (asked, effects))
                view = self.core.tab(view.ref)
        else:
            act = self.core.release_tab if change is TabChange.RELEASE else self.core.focus_tab
            view, effects = act(session_id, ref)
            await self.run(effects)
        if view.tools_provisional and change is not TabChange.RELEASE:
            # The tab's tools join the session's: learn them from the page before answering. The
            # claim stands whatever the page says; a page that cannot say keeps its empty list.
            with contextlib.suppress(BrokerError):
                view, _ = await self.tab_tools(session_id, view.ref)
        return view

    async def tab_tools(self, session_id: SessionId, ref: str | int, refresh: bool = False) -> tuple[TabView, Any]:
        """A tab's page tools, asked of the page when unknown or when ``refresh``."""
        tools = await self._request(lambda now: self.core.request_tools(session_id, ref, now, refresh))
        return self.core.tab(ref), tools

    async def call_tool(
        self,
        session_id: SessionId,
        ref: str | int,
        tool: str,
        args: Arguments,
        answer_within: float | None = None,
        once_key: str | None = None,
        on_wait: OnWait | None = None,
    ) -> PageResult:
        """Call a page tool; with ``once_key``, at most once per session and key.

        Its result comes bounded as :mod:`broker.core.results` says (cut past
        ``max_result_chars``, binary-looking parts withheld, each with a note).

        A repeat with the same key while the first call runs waits for it; one after it ended
        gets its outcome, as :class:`~broker.core.once.OnceKeys` keeps it. A call with a key
        runs to its end even when its caller gives up, since another may be waiting on it.
        ``on_wait`` hears when the call waits for the person's approval.

        Raises:
            IdempotencyKeyReused: ``once_key`` named another call.
            IdempotencyOutcomeDropped: ``once_key``'s call ran, and its outcome was dropped.
            TooManyCalls: the session holds as many keys as it may.
            PageToolFailed: the page's result cannot be written as JSON.
        """

        def start(now: float) -> tuple[CallId, list[Effect]]:
            return self.core.call_tool(session_id, ref, tool, args, now, answer_within)

        if once_key is None:
            return self._bounded(await self._request(start, on_wait))
        place = (session_id, once_key)
        credential = self.core.session_credential(session_id)
        fingerprint = _fingerprint(ref, tool, args)
        known = self.core.once_keys.begin(session_id, once_key, fingerprint, self._loop.time(), credential)
        if isinstance(known, Outcome):
            return cast(PageResult, known.replay())
        task = self._once.get(place) if known else None
        if task is None:
            # What is kept for a repeat is what the client was sent: the result after the cut.
            task = self._loop.create_task(self._bounded_call(start, on_wait))
            self._once[place] = task
            task.add_done_callback(lambda done: self._once_ended(session_id, once_key, done))
        return await asyncio.shield(task)

    async def _bounded_call(
        self, start: Callable[[float], tuple[CallId, list[Effect]]], on_wait: OnWait | None
    ) -> PageResult:
        return self._bounded(await self._request(start, on_wait))

    def _bounded(self, value: Any) -> PageResult:
        try:
            return bounded_result(value, self.config.max_result_chars, codec.dumps_text)
        except codec.JSONEncodeError as exc:
            raise PageToolFailed(f"the page's result cannot be written as JSON: {exc}") from None

    def _once_ended(self, session_id: SessionId, key: str, task: asyncio.Task[PageResult]) -> None:
        if self._once.get((session_id, key)) is not task:
            return  # its session ended meanwhile, and a call of a new one took the key
        del self._once[(session_id, key)]
        error = Unavailable("the broker is shutting down") if task.cancelled() else task.exception()
        if error is not None and not isinstance(error, BrokerError):
            error = InternalError("internal error in the broker")
        result = None if error else task.result()
        size = footprint(error if result is None else (result.value, result.notes, result.json_text))
        # The core keeps the result, or a copy of the error with no traceback.
        self.core.once_keys.end(session_id, key, self._loop.time(), result, error, size)
        self._schedule()  # to free it when it lapses

    async def act(
        self,
        session_id: SessionId,
        ref: str | int | None,
        action: str,
        args: JsonObject,
        answer_within: float | None = None,
        on_wait: OnWait | None = None,
    ) -> tuple[TabView, Any]:
        """Carry out a built-in browser action in the session's tab (None: its current tab).

        ``on_wait`` hears when the action waits for the person's approval.
        """
        view = self.core.current_tab(session_id) if ref is None else self.core.tab(ref)
        value = await self._request(
            lambda now: self.core.call_action(session_id, view.ref, action, args, now, answer_within), on_wait
        )
        return view, value

    def browser_actions(self) -> frozenset[str]:
        return self.core.browser_actions()

    def browser_features(self) -> frozenset[str]:
        return self.core.browser_features()

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

    # Extension links

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

    # Effects

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


def _fingerprint(ref: str | int, tool: str, args: Arguments) -> bytes:
    """What an idempotency key is bound to: the tab as named, the tool and the arguments' meaning
    (the same JSON with other spacing or key order is the same call)."""
    body = codec.canonical(args)
    return hashlib.sha256(b"\0".join((str(ref).encode(), tool.encode(), body))).digest()
