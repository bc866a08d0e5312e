"""The broker's core: sessions, browsers, tabs, page tools, ownership and pending calls, no I/O.

A sans-I/O state machine in the manner of websockets' ``protocol.py`` and h11's ``_state.py``.
Inputs are method calls that carry ``now`` (a monotonic clock reading from the adapter); outputs
are lists of effects the adapter carries out: frames to send, calls to resolve or reject, links
to close. Time only moves when the adapter calls :meth:`Broker.expire`; :meth:`Broker.next_wakeup`
says when that should next happen.

:class:`Broker` is the one entry point. It keeps the registries (browsers, sessions, the open
links, the once-keys) and holds its parts, each owning its own state and handed the registries
and the parts it needs, none of them reaching into another: the calls in flight over the links,
taken and ended (:class:`~.link_calls.LinkCalls`); what the broker says to a browser about a
session (:class:`~.messenger.Messenger`); what extensions report over their links and the links'
keepalive (:class:`~.links.BrowserLinks`); what the person does in the browser (pausing, ending
sessions, taking tabs back, approving calls; :class:`~.person.PersonInCharge`); what sessions ask
of a browser beyond its tabs (windows, history, bookmarks; :class:`~.browser_requests.BrowserRequests`);
and whose each tab is, with the listings every client reads (:class:`~.tab_owners.TabOwners`).
The Broker resolves the session a request names, asks its parts, and does what spans them
(ending a session, the page tools and built-in actions a session calls, time). What it owns:

- Links and browsers (:mod:`.browsers`). Every extension WebSocket is a link; each link speaks
  for one browser. A browser that names an ``instanceId`` keeps its key (``b1``), its tabs'
  ownership and its place across a new link (a restarted service worker); the old link is
  closed. When its link is lost it is kept out of sight for ``browser_grace`` seconds so a
  reconnect finds its tabs still owned. A browser without an instance id is forgotten with it.
- Sessions (:mod:`.sessions`) and tab ownership: a tab opened or claimed by a session is its
  own; tabs the person opened belong to nobody until claimed. A session calls page tools on,
  acts in, closes and focuses only tabs it owns (the person's must be claimed first, which the
  person sees); anyone may list a tab and its tools. Sessions without a connection end when
  left idle. A browser hears of a session (``connect``, ``disconnect``) only once the session
  acts in it, and may speak only of those (:mod:`.links`).
- Each session's current tab, the one built-in browser tools (:mod:`.browser_tools`) act on when
  none is named: the one it last opened, focused or claimed. Built-in tools act only on tabs the
  session owns, and only in browsers whose extension said it carries them out.
- Pending calls (:mod:`.pending`): tool calls, browser actions, tool discovery, opening and
  closing tabs, under broker-minted ids with deadlines. Each ends exactly once; late and duplicate replies are
  dropped and logged.
- Keepalive bookkeeping: when to ping a quiet link, when to give up on a silent one.

It deliberately knows nothing of JSON, WebSockets, HTTP or MCP.
"""

from __future__ import annotations

import logging
from typing import Any

from .broker_messages import BrowserAction, CallTool, CloseTab, Disconnect, DiscoverTools, OpenTab
from .browser_requests import BrowserRequests
from .browser_tools import PREFIX
from .browser_wide import WideCall
from .browsers import Browser, Browsers
from .config import Config
from .effects import (
    BrowserView,
    CallId,
    Effect,
    LinkId,
    ResolveCall,
    SendToExtension,
    SessionExpired,
    SessionId,
    SessionView,
    TabView,
    WindowView,
)
from .errors import (
    InvalidRequest,
    NotSupported,
    SessionEnded,
    ToolNotFound,
)
from .link_calls import Link, LinkCalls, Links
from .links import BrowserLinks, Handlers, UnannouncedTab, no_such_tool, unknown_tab
from .messages import Arguments, ExtensionMessage, JsonObject, PersonEndedSession, Tool
from .messenger import Messenger
from .once import OnceKeys
from .pending import CallKind
from .person import PersonInCharge, check_paused
from .security import Client
from .sessions import Session, Sessions
from .snapshots import view_of
from .tab_owners import TabOwners

__all__ = ["Broker"]

logger = logging.getLogger(__name__)


class Broker:
    """Every rule about sessions, tabs, tools and pending calls, through its parts. See the module docstring."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._links = Links()
        self._browsers = Browsers()
        self._sessions = Sessions(config.session_idle, config.max_sessions, config.client_max_sessions)
        self._messenger = Messenger(config, self._browsers, self._sessions)
        self._calls = LinkCalls(config, self._links, self._browsers, self._sessions, self._messenger)
        self._browser_links = BrowserLinks(
            config, self._links, self._browsers, self._sessions, self._calls, self._messenger
        )
        self._person = PersonInCharge(config, self._browsers, self._sessions, self._calls, self._messenger)
        self._requests = BrowserRequests(self._browsers, self._sessions, self._calls, self._person, self._messenger)
        self._owners = TabOwners(config, self._browsers, self._sessions, self._calls, self._person, self._messenger)
        self.once_keys = OnceKeys(
            config.idempotency_keep_for, config.idempotency_keys_per_session, config.idempotency_bytes_per_credential
        )
        self._handlers: Handlers = {
            **self._browser_links.handlers(),
            **self._person.handlers(),
            PersonEndedSession: self._on_person_ended_session,
        }
        # When the broker last gave links and calls back the time it stood still (resumed).
        self._resumed_at: float | None = None

    # Links: what extensions report (BrowserLinks), and the answers to calls (LinkCalls)

    def check_link_room(self) -> None:
        """Raises: TooManyLinks, when as many links that proved the link key as ``Config.max_links`` are open."""
        self._browser_links.check_link_room()

    def link_opened(self, link_id: LinkId, now: float, proven: bool = True) -> list[Effect]:
        """A link opened (``proven``: its extension proved the link key); see :meth:`.BrowserLinks.link_opened`.

        Raises:
            TooManyLinks: as many links as ``Config.max_links`` are open, and all proved the key.
        """
        return self._browser_links.link_opened(link_id, now, proven)

    def link_proven(self, link_id: LinkId) -> None:
        """The link's extension proved the link key: no link that has not can take its place."""
        self._browser_links.link_proven(link_id)

    def link_closed(self, link_id: LinkId, now: float, reason: str = "") -> list[Effect]:
        """The link is gone: its calls fail at once and its browser leaves the listing."""
        return self._browser_links.link_closed(link_id, now, reason)

    def extension_message(self, link_id: LinkId, message: ExtensionMessage, now: float) -> list[Effect]:
        """A message an extension sent, handed to the part that hears its kind."""
        link = self._browser_links.heard(link_id, message, now)
        if link is None:
            return []
        try:
            return self._handlers[type(message)](link, message, now)
        except UnannouncedTab as exc:
            return [unknown_tab(link, type(message).__name__, exc.tab_id)]

    def frame_received(self, link_id: LinkId, now: float) -> None:
        """Note traffic on a link whose frame could not be decoded: it is alive all the same."""
        self._browser_links.frame_received(link_id, now)

    def oversized_reply(self, link_id: LinkId, call_id: str | None, size: int, limit: int, now: float) -> list[Effect]:
        """A frame over the size limit that named ``call_id`` fails that call at once."""
        return self._browser_links.oversized_reply(link_id, call_id, size, limit, now)

    def unreadable_reply(self, link_id: LinkId, call_id: str | None, why: str, now: float) -> list[Effect]:
        """A frame the broker could not read that named ``call_id`` fails that call at once."""
        return self._browser_links.unreadable_reply(link_id, call_id, why, now)

    def _on_person_ended_session(self, link: Link, message: PersonEndedSession, now: float) -> list[Effect]:
        asked = self._person.ending_asked(link, message)
        if isinstance(asked, SendToExtension):
            return [asked]
        session, note = asked
        effects = self.close_session(session.id, note)
        # Kept after the ending, which forgets what the person said of an earlier session of this id.
        self._person.remember_ending(session.id, note)
        return effects

    # Sessions

    def open_session(
        self,
        session_id: SessionId,
        name: str,
        now: float = 0.0,
        *,
        ends_when_idle: bool = False,
        credential: Client = None,
    ) -> list[Effect]:
        """Start a session, or note that an existing one was used at ``now``.

        ``ends_when_idle``: the session has no connection whose end would end it (a REST caller,
        a stateless MCP client), so it ends once unused for ``Config.session_idle`` seconds, with
        a :class:`SessionExpired` effect; ``now`` matters only for such sessions. ``credential``:
        the client token's name that asks (None: the broker's own token).

        Raises:
            Forbidden: the session was opened with another credential.
            SessionEnded: the person ended this session in the browser and its client has not
                heard so yet; the next request opens it anew.
        """
        if session_id not in self._sessions:
            note = self._person.heard_ending(session_id)
            if note is not None:
                raise SessionEnded(note)
        # Browsers hear of it when it first acts in them (Messenger.tell), not before.
        self._sessions.open(session_id, name, now, ends_when_idle, credential)
        return []

    def hold_session(self, key: SessionId, credential: Client) -> None:
        """Count a connection that will carry session ``key`` (an MCP tunnel or HTTP session) against
        ``credential``'s sessions from when it opens, until :meth:`release_session`.

        Raises:
            TooManySessions: the credential holds as many sessions as it may.
        """
        self._sessions.hold(key, credential)

    def release_session(self, key: SessionId) -> None:
        self._sessions.release(key)

    def check_session_end(self, session_id: SessionId, credential: Client) -> None:
        """Raises: Forbidden, when a client token would end a session another credential opened."""
        self._sessions.check_end(session_id, credential)

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

    def session_credential(self, session_id: SessionId) -> str | None:
        """The client token's name that opened the session (None: the broker's own token, or no such session)."""
        session = self._sessions.get(session_id)
        return None if session is None else session.credential

    def session_name(self, session_id: SessionId) -> str:
        """Whom the session's files are written for: its client token's name, else the name it gave.

        Raises:
            SessionEnded: no such session.
        """
        session = self._session(session_id)
        return session.credential or session.name

    def close_session(self, session_id: SessionId, why: str | None = None) -> list[Effect]:
        """End a session: its pending calls are withdrawn (``why`` tells their callers) and its
        tabs released, not closed."""
        self._person.heard_ending(session_id)
        session = self._sessions.close(session_id)
        if session is None:
            return []
        self._calls.forget_session(session_id)
        self.once_keys.forget(session_id)
        effects: list[Effect] = []
        for call_id in self._calls.pending.of_session(session_id):
            effects += self._calls.finish(call_id, None, SessionEnded(why or f"session {session.name!r} ended"))
        for browser in self._browsers.values():
            for tab in browser.tabs.values():
                if tab.owner == session_id:
                    tab.owner = None
                    effects += self._messenger.changed(browser, tab, session_id)
            if session_id in browser.told:
                browser.told.discard(session_id)
                if browser.link_id is not None:
                    effects.append(SendToExtension(browser.link_id, Disconnect(session_id)))
        return effects

    def ended_by_person(self, session_id: SessionId) -> bool:
        """Whether the person ended this session and its client has not been told yet."""
        return self._person.ended_by_person(session_id)

    # Tabs' owners, and what every client reads (TabOwners)

    def claim_tab(self, session_id: SessionId, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Make a tab the session's own.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabBusy.
        """
        return self._owners.claim_tab(self._session(session_id), tab_ref)

    def ask_claim(
        self, session_id: SessionId, tab_ref: str | int, now: float
    ) -> tuple[TabView, CallId | None, list[Effect]]:
        """:meth:`claim_tab`, asking a browser that answers claims; see :meth:`.TabOwners.ask_claim`.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabBusy,
            TooManyCalls, RateLimited.
        """
        return self._owners.ask_claim(self._session(session_id), tab_ref, now)

    def release_tab(self, session_id: SessionId, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Give a tab back to the person.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabBusy.
        """
        return self._owners.release_tab(self._session(session_id), tab_ref)

    def focus_tab(self, session_id: SessionId, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Bring a tab the session owns to the front, and make it the session's current tab.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther,
            TabNotClaimed, Paused, TabBusy.
        """
        return self._owners.focus_tab(self._session(session_id), tab_ref)

    def select_tab(self, session_id: SessionId, tab_ref: str | int) -> TabView:
        """Make a tab the session owns its current tab; see :meth:`.TabOwners.select_tab`.

        Raises:
            SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabNotClaimed.
        """
        return self._owners.select_tab(self._session(session_id), tab_ref)

    def own_tabs(self, session_id: SessionId) -> tuple[list[TabView], TabView | None]:
        """The tabs the session owns, in the browsers' order, and its current tab when it has one open.

        Raises:
            SessionEnded.
        """
        return self._owners.own_tabs(self._session(session_id))

    def session_tools(self, session_id: SessionId) -> list[tuple[TabView, Tool]]:
        """The page tools a session sees: those of the tabs it owns, the only ones it may call.

        Raises:
            SessionEnded (but not for a session the person ended: that is for its next call to hear).
        """
        if self._person.ended_by_person(session_id):
            return []
        return self._owners.session_tools(self._session(session_id))

    def tabs(self) -> list[TabView]:
        return self._owners.tabs()

    def tab(self, tab_ref: str | int) -> TabView:
        """Raises: ExtensionNotConnected, TabNotFound, AmbiguousTab."""
        return self._owners.tab(tab_ref)

    def shared_tab_ids(self) -> frozenset[int]:
        """Tab ids that more than one connected browser has: these need ``<browser>:<id>``."""
        return self._owners.shared_tab_ids()

    def browsers(self) -> list[BrowserView]:
        return self._owners.browsers()

    def sessions(self) -> list[SessionView]:
        return self._owners.sessions()

    # Windows, history and bookmarks (BrowserRequests)

    def browser_features(self) -> frozenset[str]:
        """What some connected browser carries out beyond tabs: windows, history, bookmarks."""
        return self._requests.browser_features()

    def browser_request(
        self, session_id: SessionId, call: WideCall, now: float, timeout: float | None = None
    ) -> tuple[str, CallId, list[Effect]]:
        """Ask a browser for ``call`` (not ``createWindow``, which is ``open_tab``); returns its key too.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, BrowserNotFound, WindowNotFound,
            AmbiguousTab (a window id several browsers have), WindowNotOwned, Paused, NotSupported,
            TabBusy (a tab of the window to focus or close has a call waiting for the person).
        """
        return self._requests.browser_request(self._session(session_id), call, now, timeout)

    def describe_windows(self, session_id: SessionId, browser_key: str, answer: Any) -> list[WindowView]:
        """The windows a ``listWindows`` answer names; see :meth:`.BrowserRequests.describe_windows`.

        Raises:
            PageToolFailed: the answer is not ``{"windows": [{"id": ...}, ...]}``.
        """
        return self._requests.describe_windows(session_id, browser_key, answer)

    # Calls from sessions

    def call_tool(
        self,
        session_id: SessionId,
        tab_ref: str | int,
        tool_name: str,
        args: Arguments,
        now: float,
        timeout: float | None = None,
    ) -> tuple[CallId, list[Effect]]:
        """Send a page tool call to a tab the session owns.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, TabNotFound, AmbiguousTab,
            TabOwnedByOther, TabNotClaimed, ToolNotFound, Paused, TabBusy.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        self._owners.check_yours(session, browser, tab, "call tools on")
        check_paused(browser)
        self._person.check_not_busy(browser, tab, f"call {tool_name!r} in")
        if tab.tools is not None and not any(t.name == tool_name for t in tab.tools):
            if not tab.tools_provisional:
                raise ToolNotFound(no_such_tool(browser.key, tab, tool_name))
            # Ask the page first; the call goes out if it has the tool (links.py).
            pending = self._calls.add(session, browser, CallKind.DISCOVER, now, timeout, tab.id, tool_name)
            pending.then_call = args
            return pending.call_id, self._messenger.tell(browser, DiscoverTools(session_id, pending.call_id, tab.id))
        pending = self._calls.add(session, browser, CallKind.TOOL, now, timeout, tab.id, tool_name)
        message = CallTool(session_id, pending.call_id, tab.id, tool_name, args)
        return pending.call_id, self._messenger.tell(browser, message)

    def request_tools(
        self, session_id: SessionId, tab_ref: str | int, now: float, refresh: bool = False
    ) -> tuple[CallId, list[Effect]]:
        """Get a tab's tools: at once when the extension pushed them, else by ``discoverTools``.

        ``refresh`` asks the page even when the extension pushed them; so does an empty list that
        came only with a snapshot (see :attr:`Tab.tools_provisional`).

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, TabNotFound, AmbiguousTab.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        if tab.tools is not None and not tab.tools_provisional and not refresh:
            call_id = self._calls.pending.new_id()
            return call_id, [ResolveCall(call_id, tab.tools)]
        pending = self._calls.add(session, browser, CallKind.DISCOVER, now, None, tab.id)
        return pending.call_id, self._messenger.tell(browser, DiscoverTools(session_id, pending.call_id, tab.id))

    def open_tab(
        self,
        session_id: SessionId,
        url: str,
        focus: bool,
        now: float,
        browser_key: str | None = None,
        *,
        window_id: int | None = None,
        new_window: bool = False,
        pinned: bool = False,
    ) -> tuple[CallId, list[Effect]]:
        """Ask a browser (the named one, else the last to connect) to open ``url`` for the session.

        In the window ``window_id`` (one holding no other session's tab), or in a window of its
        own (``new_window``), and ``pinned``: only where the extension carries out windows.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, BrowserNotFound, Paused,
            NotSupported, WindowNotFound, WindowNotOwned.
        """
        session = self._session(session_id)
        browser = self._browsers.pick(browser_key)
        check_paused(browser)
        if window_id is not None or new_window or pinned:
            self._requests.check_feature(browser, "windows")
        if window_id is not None:
            self._requests.check_window_open_to(session, browser, window_id)
        pending = self._calls.add(session, browser, CallKind.OPEN_TAB, now, None)
        pending.tabs_heard_before = browser.tabs_heard
        message = OpenTab(session_id, url, focus, pending.call_id, window_id, new_window, pinned)
        return pending.call_id, self._messenger.tell(browser, message)

    def close_tab(self, session_id: SessionId, tab_ref: str | int, now: float) -> tuple[CallId, list[Effect]]:
        """Ask the browser to close a tab the session owns; the call ends when the browser reports it closed.

        Only its own: so no client closes the person's tabs, nor empties, tab by tab, a window
        it may not close (:meth:`.BrowserRequests.check_window_yours`).

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, TabNotFound, AmbiguousTab,
            TabOwnedByOther, TabNotClaimed, Paused, TabBusy.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(tab_ref)
        self._owners.check_yours(session, browser, tab, "close")
        check_paused(browser)
        self._person.check_not_busy(browser, tab, "close")
        pending = self._calls.add(session, browser, CallKind.CLOSE_TAB, now, None, tab.id)
        return pending.call_id, self._messenger.tell(browser, CloseTab(session_id, tab.id, pending.call_id))

    def call_action(
        self,
        session_id: SessionId,
        tab_ref: str | int | None,
        action: str,
        args: JsonObject,
        now: float,
        timeout: float | None = None,
    ) -> tuple[CallId, list[Effect]]:
        """Carry out a built-in browser action in a tab the session owns (None: its current tab).

        Reading counts as acting: a tab nobody claimed must be claimed first, so that it is in
        the client's tab group where the person sees it.

        Raises:
            SessionEnded, TooManyCalls, ExtensionNotConnected, TabNotFound, AmbiguousTab,
            InvalidRequest (no tab named and no current one), TabOwnedByOther, TabNotClaimed,
            NotSupported, Paused, TabBusy.
        """
        session = self._session(session_id)
        browser, tab = self._browsers.resolve(self._current_tab(session) if tab_ref is None else tab_ref)
        self._owners.check_yours(session, browser, tab, f"use {PREFIX}{action} in")
        check_paused(browser)
        self._person.check_not_busy(browser, tab, f"use {PREFIX}{action} in")
        if action not in self._actions_of(browser):
            raise NotSupported(self._unsupported(browser, action))
        view, args = view_of(action, args)
        pending = self._calls.add(session, browser, CallKind.ACTION, now, timeout, tab.id, PREFIX + action)
        pending.view = view
        message = BrowserAction(session_id, pending.call_id, tab.id, action, args)
        return pending.call_id, self._messenger.tell(browser, message)

    def current_tab(self, session_id: SessionId) -> TabView:
        """The tab built-in tools act on when none is named.

        Raises:
            SessionEnded, InvalidRequest (none), ExtensionNotConnected, TabNotFound (it closed).
        """
        return self._messenger.view(*self._browsers.resolve(self._current_tab(self._session(session_id))))

    def current_window(self, session_id: SessionId) -> str:
        """The window of the session's current tab, as ``b1:7``: where browser_resize acts.

        Raises:
            SessionEnded, InvalidRequest (no current tab), ExtensionNotConnected, TabNotFound,
            NotSupported (the browser does not say which window its tabs are in).
        """
        view = self.current_tab(session_id)
        if view.window_id is None:
            raise NotSupported(f"browser {view.browser} does not say which window tab {view.ref} is in")
        return f"{view.browser}:{view.window_id}"

    def browser_actions(self) -> frozenset[str]:
        """The built-in browser actions some connected browser carries out."""
        actions: frozenset[str] = frozenset()
        for browser in self._browsers.attached():
            actions |= self._actions_of(browser)
        return actions

    def cancel(self, call_id: CallId, now: float) -> list[Effect]:
        """The caller stopped waiting: forget the call, so its reply is dropped when it comes, and
        tell the browser to stop it."""
        return [e for e in self._calls.finish(call_id, now, withdrawn=True) if isinstance(e, SendToExtension)]

    # Time

    def expire(self, now: float) -> list[Effect]:
        """Time out overdue calls, ping quiet links, close silent ones, forget long-gone browsers,
        end sessions left unused."""
        effects = self._calls.expire(now)
        effects += self._browser_links.expire(now)
        for session in self._sessions.idle(now, busy=self._calls.pending.count_of):
            reason = f"no request for {self.config.session_idle:g} s"
            logger.info("session %s (%s) ended: %s", session.id, session.name, reason)
            effects += self.close_session(session.id)
            effects.append(SessionExpired(session.id, reason))
        self.once_keys.lapse(now)
        return effects

    def resumed(self, now: float, stood_still: float) -> list[Effect]:
        """The broker itself did not run for at least ``stood_still`` seconds before ``now``
        (stopped, suspended, starved of CPU), as its adapter saw from a timer that fired late.

        Frames that came meanwhile still wait unread in its sockets, so that time is held against
        no one: each link's silence counts from ``now`` (and it is pinged at once, so a link that
        did die is still found within ``Config.silence_timeout``), and each call's deadline moves
        ``stood_still`` later. Call it before :meth:`expire`.

        Granted at most once in twice ``Config.silence_timeout``: a broker that keeps falling
        behind (starved of CPU rather than stopped) still times calls out and closes dead links.
        """
        if self._resumed_at is not None and now - self._resumed_at < 2 * self.config.silence_timeout:
            return []
        self._resumed_at = now
        effects = self._browser_links.resumed(now)
        self._calls.pending.postpone_all(stood_still)
        return effects

    def next_wakeup(self) -> float | None:
        """When :meth:`expire` next has something to do, or None when nothing is waiting."""
        # Asked twice per call (as it starts and as it ends): kept to plain comparisons, no lists.
        when = self._calls.pending.next_deadline()
        idle = self._sessions.check_idle_at
        if idle is not None and (when is None or idle < when):
            when = idle
        when = self._browser_links.next_wakeup(when)
        lapse = self.once_keys.next_lapse()
        if lapse is not None and (when is None or lapse < when):
            when = lapse
        return when

    @property
    def pending_count(self) -> int:
        return len(self._calls.pending)

    # Helpers

    def _session(self, session_id: SessionId) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            ended = self._person.heard_ending(session_id)
            raise SessionEnded(ended or f"session {session_id!r} does not exist or has ended")
        return session

    def _current_tab(self, session: Session) -> str:
        if session.current is None:
            raise InvalidRequest(
                "you have no current tab: open one (`tabs` with action=open), claim one (action=claim)"
                " or name one with `tab`"
            )
        return f"{session.current[0]}:{session.current[1]}"

    def _actions_of(self, browser: Browser) -> frozenset[str]:
        return browser.actions if self.config.allow_evaluate else browser.actions - {"evaluate"}

    def _unsupported(self, browser: Browser, action: str) -> str:
        if action == "evaluate" and not self.config.allow_evaluate:
            return f"{PREFIX}evaluate is turned off in this broker (browser-mcp serve --no-evaluate)"
        if action == "evaluate" and browser.actions:
            return (
                f"the person turned {PREFIX}evaluate off in browser {browser.key} ({browser.name or 'unnamed'})"
                " (the browser-mcp extension's options)"
            )
        if browser.actions:
            return (
                f"browser {browser.key} ({browser.name or 'unnamed'}) cannot carry out {PREFIX}{action}: its"
                " browser gives extensions no way to (docs/page-drivers.md says, tool by tool)"
            )
        return (
            f"browser {browser.key} ({browser.name or 'unnamed'}) cannot carry out {PREFIX}{action}: its"
            " extension does not offer built-in browser tools; load the browser-mcp extension"
        )
