"""The broker's core: sessions, browsers, tabs, page tools, ownership and pending calls, no I/O.

A sans-I/O state machine in the manner of websockets' ``protocol.py`` and h11's ``_state.py``.
Inputs are method calls that carry ``now`` (a monotonic clock reading from the adapter); outputs
are lists of effects the adapter carries out: frames to send, calls to resolve or reject, links
to close. Time only moves when the adapter calls :meth:`Broker.expire`; :meth:`Broker.next_wakeup`
says when that should next happen.

What it owns, with the registries it keeps them in:

- Links and browsers (:mod:`.browsers`). Every extension WebSocket is a link; each link speaks
  for one browser. A browser that names an ``instanceId`` keeps its key (``b1``), its tabs'
  ownership and its place across a new link (a restarted service worker); the old link is
  closed. When its link is lost it is kept out of sight for ``browser_grace`` seconds so a
  reconnect finds its tabs still owned. A browser without an instance id is forgotten with it.
- Sessions (:mod:`.sessions`) and tab ownership: a tab opened or claimed by a session is its
  own; tabs the person opened belong to nobody until claimed. Sessions without a connection end
  when left idle.
- Pending calls (:mod:`.pending`): tool calls, tool discovery, opening and closing tabs, under
  broker-minted ids with deadlines. Each ends exactly once; late and duplicate replies are
  dropped and logged.
- Keepalive bookkeeping: when to ping a quiet link, when to give up on a silent one.

It deliberately knows nothing of JSON, WebSockets, HTTP or MCP.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import attrs

from .browsers import Browser, Browsers, Tab
from .config import Config
from .effects import (
    BrowserView,
    CallId,
    CloseLink,
    Effect,
    LinkId,
    RejectCall,
    ResolveCall,
    SendToExtension,
    SessionExpired,
    SessionId,
    SessionView,
    TabsChanged,
    TabView,
)
from .errors import (
    BrokerError,
    CallTimedOut,
    ExtensionDisconnected,
    MessageTooLarge,
    PageToolFailed,
    SessionEnded,
    TabNotFound,
    TabOwnedByOther,
    ToolNotFound,
    TooManyCalls,
)
from .messages import (
    CallTool,
    CloseTab,
    Connect,
    Connected,
    Disconnect,
    Disconnected,
    DiscoverTools,
    ExtensionMessage,
    FocusTab,
    JsonObject,
    OpenTab,
    Ping,
    Pong,
    TabClaimed,
    TabClosed,
    TabCreated,
    TabFocused,
    TabReleased,
    TabUpdated,
    Tool,
    ToolResult,
    ToolsChanged,
    ToolsDiscovered,
    WireError,
)
from .pending import CallKind, Pending, PendingCalls
from .sessions import Session, Sessions

__all__ = ["Broker"]

logger = logging.getLogger(__name__)


# Internal records


@attrs.define
class Link:
    id: LinkId
    browser: str
    last_received: float
    last_sent: float


class Broker:
    """Every rule about sessions, tabs, tools and pending calls. See the module docstring."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._links: dict[LinkId, Link] = {}
        self._browsers = Browsers()
        self._sessions = Sessions(config.session_idle)
        self._pending = PendingCalls()

    # Sessions

    def open_session(
        self, session_id: SessionId, name: str, now: float = 0.0, *, ends_when_idle: bool = False
    ) -> list[Effect]:
        """Start a session, or note that an existing one was used at ``now``.

        ``ends_when_idle``: the session has no connection whose end would end it (a REST caller,
        a stateless MCP client), so it ends once unused for ``Config.session_idle`` seconds, with
        a :class:`SessionExpired` effect; ``now`` matters only for such sessions.
        """
        if not self._sessions.open(session_id, name, now, ends_when_idle):
            return []
        return [SendToExtension(link.id, self._connect_message(session_id, name)) for link in self._links.values()]

    def session_used(self, session_id: SessionId, now: float) -> None:
        """Note a use of a session, if it still exists; an ended one stays ended."""
        self._sessions.touch(session_id, now)

    def listener_opened(self, session_id: SessionId) -> None:
        """A stream that waits for the session's news opened: the session is in use while it lasts."""
        self._sessions.listener_opened(session_id)

    def listener_closed(self, session_id: SessionId, now: float) -> None:
        self._sessions.listener_closed(session_id, now)

    def has_session(self, session_id: SessionId) -> bool:
        return session_id in self._sessions

    def close_session(self, session_id: SessionId) -> list[Effect]:
        """End a session: its pending calls are withdrawn and its tabs released, not closed."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return []
        effects: list[Effect] = []
        for call_id in self._pending.of_session(session_id):
            effects += self._finish(call_id, None, SessionEnded(f"session {session.name!r} ended"))
        released = False
        for browser in self._browsers.values():
            for tab in browser.tabs.values():
                if tab.owner == session_id:
                    tab.owner = None
                    released = True
        effects += [SendToExtension(link.id, Disconnect(session_id)) for link in self._links.values()]
        if released:
            effects.append(TabsChanged())
        return effects

    # Extension links

    def link_opened(self, link_id: LinkId, now: float) -> list[Effect]:
        browser = self._browsers.add(link_id)
        self._links[link_id] = Link(link_id, browser.key, last_received=now, last_sent=now)
        hello = Connect(self.config.server_version, session_ids=tuple(self._sessions))
        effects: list[Effect] = [SendToExtension(link_id, hello)]
        effects += [SendToExtension(link_id, self._connect_message(s.id, s.name)) for s in self._sessions.values()]
        return effects

    def link_closed(self, link_id: LinkId, now: float, reason: str = "") -> list[Effect]:
        """The link is gone: its calls fail at once and its browser leaves the listing."""
        link = self._links.pop(link_id, None)
        if link is None:
            return []
        why = f"the browser extension disconnected{': ' + reason if reason else ''}"
        effects: list[Effect] = []
        for pending in self._pending.of_link(link_id):
            effects += self._finish(pending.call_id, now, ExtensionDisconnected(why))
        browser = self._browsers[link.browser]
        if browser.instance_id is None:
            del self._browsers[browser.key]
        else:
            browser.link_id = None
            browser.detached_at = now
        effects.append(TabsChanged())
        return effects

    def extension_message(self, link_id: LinkId, message: ExtensionMessage, now: float) -> list[Effect]:
        link = self._links.get(link_id)
        if link is None:
            logger.debug("frame from link %s after it was closed: dropped", link_id)
            return []
        link.last_received = now
        self._browsers[link.browser].heard_from = True
        handler = self._handlers[type(message)]
        effects: list[Effect] = handler(self, link, message, now)
        return effects

    def frame_received(self, link_id: LinkId, now: float) -> None:
        """Note traffic on a link whose frame could not be decoded: it is alive all the same."""
        link = self._links.get(link_id)
        if link is not None:
            link.last_received = now

    def oversized_reply(self, link_id: LinkId, call_id: str | None, size: int, limit: int, now: float) -> list[Effect]:
        """A frame over the size limit that named ``call_id`` fails that call at once."""
        pending = self._pending.get(call_id) if call_id else None
        if pending is None or pending.link_id != link_id:
            return []
        return self._finish(
            pending.call_id,
            now,
            MessageTooLarge(f"the page's reply was {size} bytes, over the {limit}-byte limit"),
        )

    # Calls from sessions

    def call_tool(
        self,
        session_id: SessionId,
        tab_ref: str | int,
        tool_name: str,
        args: JsonObject,
        now: float,
        timeout: float | None = None,
    ) -> tuple[CallId, list[Effect]]:
        """Send a page tool call to the tab's browser.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, TabNotFound, AmbiguousTab,
            TabOwnedByOther, ToolNotFound.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        self._check_owner(session, browser, tab, "call tools on")
        if tab.tools is not None and not any(t.name == tool_name for t in tab.tools):
            raise ToolNotFound(
                f"tab {browser.key}:{tab.id} has no tool {tool_name!r}"
                f" (it has: {', '.join(t.name for t in tab.tools) or 'none'})"
            )
        pending = self._add_pending(session, browser, CallKind.TOOL, now, timeout, tab.id, tool_name)
        message = CallTool(session_id, pending.call_id, tab.id, tool_name, args)
        return pending.call_id, [SendToExtension(pending.link_id, message)]

    def request_tools(
        self, session_id: SessionId, tab_ref: str | int, now: float, refresh: bool = False
    ) -> tuple[CallId, list[Effect]]:
        """Get a tab's tools: at once when the extension pushed them, else by ``discoverTools``.

        ``refresh`` asks the page even when the extension pushed them.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, TabNotFound, AmbiguousTab.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        if tab.tools is not None and not refresh:
            call_id = self._pending.new_id()
            return call_id, [ResolveCall(call_id, tab.tools)]
        pending = self._add_pending(session, browser, CallKind.DISCOVER, now, None, tab.id)
        message = DiscoverTools(session_id, pending.call_id, tab.id)
        return pending.call_id, [SendToExtension(pending.link_id, message)]

    def open_tab(
        self, session_id: SessionId, url: str, focus: bool, now: float, browser_key: str | None = None
    ) -> tuple[CallId, list[Effect]]:
        """Ask a browser (the named one, else the last to connect) to open ``url`` for the session.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, BrowserNotFound.
        """
        session = self._session(session_id)
        browser = self._browsers.pick(browser_key)
        pending = self._add_pending(session, browser, CallKind.OPEN_TAB, now, None)
        message = OpenTab(session_id, url, focus, pending.call_id)
        return pending.call_id, [SendToExtension(pending.link_id, message)]

    def close_tab(self, session_id: SessionId, tab_ref: str | int, now: float) -> tuple[CallId, list[Effect]]:
        """Ask the browser to close a tab; the call ends when the browser reports it closed.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, TabNotFound, AmbiguousTab,
            TabOwnedByOther.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        self._check_owner(session, browser, tab, "close")
        pending = self._add_pending(session, browser, CallKind.CLOSE_TAB, now, None, tab.id)
        return pending.call_id, [SendToExtension(pending.link_id, CloseTab(session_id, tab.id))]

    def claim_tab(self, session_id: SessionId, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Make a tab the session's own.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther.
        """
        return self._set_owner(session_id, tab_ref, "claim", session_id)

    def release_tab(self, session_id: SessionId, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Give a tab back to the person.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther.
        """
        return self._set_owner(session_id, tab_ref, "release", None)

    def focus_tab(self, session_id: SessionId, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Make a tab the session's focused tab (its tools join the session's) and bring it to front.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        self._check_owner(session, browser, tab, "focus")
        session.focused = (browser.key, tab.id)
        assert browser.link_id is not None
        return self._view(browser, tab), [SendToExtension(browser.link_id, FocusTab(session_id, tab.id)), TabsChanged()]

    def session_tools(self, session_id: SessionId) -> list[tuple[TabView, Tool]]:
        """The page tools a session sees: those of the tabs it owns, then of its focused tab.

        Raises:
            SessionEnded.
        """
        session = self._session(session_id)
        seen: list[tuple[TabView, Tool]] = []
        focused: tuple[Browser, Tab] | None = None
        for browser in self._browsers.attached():
            for tab in browser.tabs.values():
                if tab.owner == session_id:
                    view = self._view(browser, tab)
                    seen += [(view, t) for t in tab.tools or ()]
                elif session.focused == (browser.key, tab.id):
                    focused = (browser, tab)
        if focused is not None and focused[1].owner in (None, session_id):
            view = self._view(*focused)
            seen += [(view, t) for t in focused[1].tools or ()]
        return seen

    def cancel(self, call_id: CallId, now: float) -> None:
        """The caller stopped waiting: forget the call, so its reply is dropped when it comes."""
        self._finish(call_id, now)

    # Time

    def expire(self, now: float) -> list[Effect]:
        """Time out overdue calls, ping quiet links, close silent ones, forget long-gone browsers,
        end sessions left unused."""
        effects: list[Effect] = []
        for pending in self._pending.overdue(now):
            message = f"{pending.describe()} did not answer within {pending.timeout:g} s"
            effects += self._finish(pending.call_id, now, CallTimedOut(message))
        config = self.config
        for link in list(self._links.values()):
            if now - link.last_received >= config.silence_timeout:
                reason = f"no message for {config.silence_timeout:g} s"
                effects.append(CloseLink(link.id, reason))
                effects += self.link_closed(link.id, now, reason)
            elif now - max(link.last_received, link.last_sent) >= config.ping_interval:
                link.last_sent = now
                effects.append(SendToExtension(link.id, Ping()))
        for browser in list(self._browsers.values()):
            if browser.detached_at is not None and now - browser.detached_at >= config.browser_grace:
                del self._browsers[browser.key]
        for session in self._sessions.idle(now, busy=self._pending.count_of):
            reason = f"no request for {self.config.session_idle:g} s"
            logger.info("session %s (%s) ended: %s", session.id, session.name, reason)
            effects += self.close_session(session.id)
            effects.append(SessionExpired(session.id, reason))
        return effects

    def next_wakeup(self) -> float | None:
        """When :meth:`expire` next has something to do, or None when nothing is waiting."""
        deadline = self._pending.next_deadline()
        times = [] if deadline is None else [deadline]
        if self._sessions.check_idle_at is not None:
            times.append(self._sessions.check_idle_at)
        config = self.config
        for link in self._links.values():
            times.append(link.last_received + config.silence_timeout)
            times.append(max(link.last_received, link.last_sent) + config.ping_interval)
        times += [b.detached_at + config.browser_grace for b in self._browsers.values() if b.detached_at is not None]
        return min(times, default=None)

    # Views

    def tabs(self) -> list[TabView]:
        return [self._view(browser, tab) for browser in self._browsers.attached() for tab in browser.tabs.values()]

    def tab(self, tab_ref: str | int) -> TabView:
        """Raises: ExtensionNotConnected, TabNotFound, AmbiguousTab."""
        return self._view(*self._browsers.resolve(tab_ref))

    def shared_tab_ids(self) -> frozenset[int]:
        """Tab ids that more than one connected browser has: these need ``<browser>:<id>``."""
        return self._browsers.shared_tab_ids()

    def browsers(self) -> list[BrowserView]:
        return [
            BrowserView(b.key, b.name, b.version, b.instance_id, b.link_id is not None, len(b.tabs))
            for b in self._browsers.values()
            if b.heard_from
        ]

    def sessions(self) -> list[SessionView]:
        owned: dict[SessionId, list[str]] = {}
        for browser in self._browsers.attached():
            for tab in browser.tabs.values():
                if tab.owner is not None:
                    owned.setdefault(tab.owner, []).append(f"{browser.key}:{tab.id}")
        return [
            SessionView(s.id, s.name, tuple(owned.get(s.id, ())), self._pending.count_of(s.id))
            for s in self._sessions.values()
        ]

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    # Extension message handlers

    def _on_connected(self, link: Link, message: Connected, now: float) -> list[Effect]:
        effects: list[Effect] = []
        browser = self._browsers[link.browser]
        instance_id = message.browser.instance_id
        if instance_id is not None and browser.instance_id != instance_id:
            earlier = next(
                (b for b in self._browsers.values() if b.instance_id == instance_id and b is not browser),
                None,
            )
            if earlier is not None:
                if earlier.link_id is not None:
                    reason = "replaced by a newer connection from the same browser"
                    effects.append(CloseLink(earlier.link_id, reason))
                    effects += self.link_closed(earlier.link_id, now, reason)
                del self._browsers[browser.key]
                browser = earlier
                self._browsers.reattach(browser, link.id)
                link.browser = browser.key
        browser.name = message.browser.name
        browser.version = message.browser.version
        browser.instance_id = instance_id
        owners = {tab_id: tab.owner for tab_id, tab in browser.tabs.items()}
        gone = set(browser.tabs) - {info.id for info in message.tabs}
        browser.tabs = {}
        for info in message.tabs:
            tab = Tab(info.id, owner=owners.get(info.id))
            tab.update(info)
            browser.tabs[info.id] = tab
            if info.active:
                browser.active_tab = info.id
        for tab_id in gone:
            effects += self._tab_gone(link, tab_id, now)
        effects.append(TabsChanged())
        return effects

    def _on_tab_created(self, link: Link, message: TabCreated, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        tab = browser.tabs.get(message.tab.id) or Tab(message.tab.id)
        tab.update(message.tab)
        browser.tabs[tab.id] = tab
        effects = self._answer_open_tab(link, message.request_id, browser, tab, now)
        effects.append(TabsChanged())
        return effects

    def _on_tab_updated(self, link: Link, message: TabUpdated, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        tab = browser.tabs.setdefault(message.tab.id, Tab(message.tab.id))
        tab.update(message.tab)
        return [TabsChanged()]

    def _on_tab_closed(self, link: Link, message: TabClosed, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        if browser.tabs.pop(message.tab_id, None) is None:
            logger.debug("tabClosed for unknown tab %s on %s", message.tab_id, browser.key)
        if browser.active_tab == message.tab_id:
            browser.active_tab = None
        effects = self._tab_gone(link, message.tab_id, now)
        effects.append(TabsChanged())
        return effects

    def _on_tab_focused(self, link: Link, message: TabFocused, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        tab = browser.tabs.setdefault(message.tab_id, Tab(message.tab_id))
        if message.tools is not None:
            tab.tools = message.tools
        browser.active_tab = tab.id
        effects = self._answer_open_tab(link, message.request_id, browser, tab, now)
        effects.append(TabsChanged())
        return effects

    def _on_tools_changed(self, link: Link, message: ToolsChanged, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        browser.tabs.setdefault(message.tab_id, Tab(message.tab_id)).tools = message.tools
        return [TabsChanged()]

    def _on_tools_discovered(self, link: Link, message: ToolsDiscovered, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        tab = browser.tabs.get(message.tab_id)
        if tab is not None:
            tab.tools = message.tools
        pending = self._reply_to(link, message.call_id, CallKind.DISCOVER)
        effects: list[Effect] = [] if tab is None else [TabsChanged()]
        if pending is not None:
            effects += self._finish(pending.call_id, now, value=message.tools)
        return effects

    def _on_tool_result(self, link: Link, message: ToolResult, now: float) -> list[Effect]:
        # An openTab the browser could not carry out is reported as a toolResult error too.
        pending = self._reply_to(link, message.call_id, CallKind.TOOL, CallKind.DISCOVER, CallKind.OPEN_TAB)
        if pending is None:
            return []
        error = message.error
        if error is None:
            return self._finish(pending.call_id, now, value=message.result)
        if isinstance(error, WireError):
            failure = PageToolFailed(error.message, page_code=error.code)
        else:
            failure = PageToolFailed(error)
        return self._finish(pending.call_id, now, failure)

    def _on_ping(self, link: Link, message: Ping, now: float) -> list[Effect]:
        link.last_sent = now
        return [SendToExtension(link.id, Pong())]

    def _on_pong(self, link: Link, message: Pong, now: float) -> list[Effect]:
        return []

    def _on_disconnected(self, link: Link, message: Disconnected, now: float) -> list[Effect]:
        logger.info("extension on %s says session %s is disconnected", link.browser, message.session_id)
        return []

    _handlers: ClassVar[dict[type, Any]] = {
        Connected: _on_connected,
        TabCreated: _on_tab_created,
        TabUpdated: _on_tab_updated,
        TabClosed: _on_tab_closed,
        TabFocused: _on_tab_focused,
        ToolsChanged: _on_tools_changed,
        ToolsDiscovered: _on_tools_discovered,
        ToolResult: _on_tool_result,
        Ping: _on_ping,
        Pong: _on_pong,
        Disconnected: _on_disconnected,
    }

    # Helpers

    def _connect_message(self, session_id: SessionId, name: str) -> Connect:
        return Connect(self.config.server_version, session_id=session_id, client_name=name)

    def _session(self, session_id: SessionId) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionEnded(f"session {session_id!r} does not exist or has ended")
        return session

    def _check_owner(self, session: Session, browser: Browser, tab: Tab, action: str) -> None:
        if tab.owner is None or tab.owner == session.id:
            return
        owner = self._sessions.get(tab.owner)
        owner_name = owner.name if owner else tab.owner
        raise TabOwnedByOther(
            f"cannot {action} tab {browser.key}:{tab.id}: it belongs to session {owner_name!r} ({tab.owner})",
            owner_session_id=tab.owner,
            owner_name=owner_name,
        )

    def _set_owner(
        self, session_id: SessionId, tab_ref: str | int, action: str, owner: SessionId | None
    ) -> tuple[TabView, list[Effect]]:
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        self._check_owner(session, browser, tab, action)
        if tab.owner == owner:
            return self._view(browser, tab), []
        tab.owner = owner
        assert browser.link_id is not None
        told = TabClaimed(session_id, tab.id) if owner else TabReleased(session_id, tab.id)
        return self._view(browser, tab), [SendToExtension(browser.link_id, told), TabsChanged()]

    def _add_pending(
        self,
        session: Session,
        browser: Browser,
        kind: CallKind,
        now: float,
        timeout: float | None,
        tab_id: int | None = None,
        tool_name: str | None = None,
    ) -> Pending:
        in_flight = self._pending.count_of(session.id)
        if in_flight >= self.config.max_pending_per_session:
            raise TooManyCalls(
                f"session {session.name!r} already has {in_flight} calls in flight"
                f" (limit {self.config.max_pending_per_session})"
            )
        assert browser.link_id is not None
        timeout = self.config.call_timeout if timeout is None else timeout
        session.used(now)
        return self._pending.add(kind, session.id, browser.link_id, browser.key, now, timeout, tab_id, tool_name)

    def _finish(
        self, call_id: CallId, now: float | None, error: BrokerError | None = None, value: Any = None
    ) -> list[Effect]:
        """End a call once; its end counts as a use of its session (at ``now``, when known)."""
        pending = self._pending.pop(call_id)
        if pending is None:
            return []
        session = self._sessions.get(pending.session_id)
        if session is not None and now is not None:
            session.used(now)
        if error is not None:
            return [RejectCall(call_id, error)]
        return [ResolveCall(call_id, value)]

    def _reply_to(self, link: Link, call_id: CallId, *kinds: CallKind) -> Pending | None:
        pending = self._pending.get(call_id)
        if pending is None or pending.link_id != link.id or pending.kind not in kinds:
            logger.debug("late, duplicate or unknown reply %s on %s: dropped", call_id, link.browser)
            return None
        return pending

    def _answer_open_tab(
        self, link: Link, request_id: str | None, browser: Browser, tab: Tab, now: float
    ) -> list[Effect]:
        if request_id is None:
            return []
        pending = self._reply_to(link, request_id, CallKind.OPEN_TAB)
        if pending is None:
            return []
        if tab.owner is None:
            tab.owner = pending.session_id
        return self._finish(pending.call_id, now, value=self._view(browser, tab))

    def _tab_gone(self, link: Link, tab_id: int, now: float) -> list[Effect]:
        effects: list[Effect] = []
        browser = self._browsers[link.browser]
        for pending in self._pending.of_link(link.id):
            if pending.tab_id != tab_id:
                continue
            if pending.kind is CallKind.CLOSE_TAB:
                effects += self._finish(pending.call_id, now, value={"closed": f"{browser.key}:{tab_id}"})
            else:
                effects += self._finish(pending.call_id, now, TabNotFound(f"tab {browser.key}:{tab_id} was closed"))
        return effects

    def _view(self, browser: Browser, tab: Tab) -> TabView:
        owner = self._sessions.get(tab.owner) if tab.owner else None
        return TabView(
            browser.key,
            tab.id,
            tab.title,
            tab.url,
            tab.tools,
            tab.owner,
            owner.name if owner else None,
            browser.active_tab == tab.id,
        )
