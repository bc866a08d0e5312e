"""The extension side of the core: links, and what the browsers on them report.

:class:`BrowserLinks` is the half of :class:`~broker.core.state.Broker`'s rules that hears from
extensions: a link opening and closing, each message an extension sends (tabs appearing,
changing and closing, tools changing, the answers to calls), and how a call ends. The other
half, what sessions ask for and when time runs out, is in :mod:`broker.core.state`; both work
on the same registries, which the Broker makes.

What a link hears of sessions: only those that act in its browser. A session's ``connect``
(its id and client name) goes to a browser right before the first frame about it the broker
sends there (a tab opened, closed, focused, claimed or released, a call, a request), and its
``disconnect`` only to the browsers that heard that ``connect``. A link's first ``connect`` names
no session; once its first ``connected`` shows which browser it is, the broker sends
``connect {sessionIds}`` listing the live sessions that browser heard of (none for a browser new
to it; a restarted service worker's browser keeps its own), and each one's ``connect`` again.
A frame from a link may name only its own browser's tabs, its own calls and the sessions its
browser heard of: anything else is answered with an error frame and changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import attrs

from .browsers import Browser, Browsers, Tab, outdated_extension
from .config import Config
from .effects import (
    CallId,
    CloseLink,
    Effect,
    LinkId,
    RejectCall,
    ResolveCall,
    SendToExtension,
    SessionId,
    TabsChanged,
    TabView,
)
from .errors import (
    BadReply,
    BrokerError,
    CallTimedOut,
    CloseHeld,
    ConsentRequired,
    DialogOpen,
    ExtensionDisconnected,
    ExtensionError,
    FolderNotEmpty,
    InvalidRequest,
    MessageTooLarge,
    NotApproved,
    PageToolFailed,
    Paused,
    PersonDeclined,
    RecordNotFound,
    RecordsBusy,
    SessionEnded,
    TabBusy,
    TabHeldElsewhere,
    TabNotClaimed,
    TabNotFound,
    TabOwnedByOther,
    ToolNotFound,
    TooManyCalls,
    TooManyLinks,
    WindowNotOwned,
)
from .limits import Breakers, RateLimiter, client_of
from .messages import (
    BrowserAction,
    BrowserRequest,
    CallTool,
    CancelCall,
    CloseTab,
    Connect,
    Connected,
    Disconnected,
    DiscoverTools,
    ErrorReply,
    ExtensionMessage,
    FocusTab,
    OpenTab,
    Ping,
    Pong,
    RequestRefused,
    TabClaimed,
    TabClosed,
    TabCreated,
    TabFocused,
    TabReleased,
    TabUpdated,
    ToolResult,
    ToolsChanged,
    ToolsDiscovered,
    WireError,
)
from .pending import CallKind, Pending, PendingCalls
from .sessions import OWNER_CREDENTIAL, Session, Sessions
from .snapshots import SNAPSHOT_BUDGET, Baselines, View, with_section, without_address
from .tab_refs import named_in_message, named_in_result

__all__ = ["BrowserLinks", "Link"]

logger = logging.getLogger(__name__)

# toolResult error codes that say the person refused the call (docs/extension-link.md).
_DECLINED: dict[str, type[PersonDeclined]] = {
    Paused.code: Paused,
    NotApproved.code: NotApproved,
    ConsentRequired.code: ConsentRequired,
}
# toolResult error codes that name one of the broker's own refusals, which the extension checks
# too: a call for a tab it was not told its session holds, and one that reached a tab where
# another call waits for the person (sent by another broker, or before this one heard of it);
# and a call that reached a tab whose page's dialog waits for browser_handle_dialog.
_REFUSED: dict[str, type[BrokerError]] = {
    TabNotClaimed.code: TabNotClaimed,
    TabBusy.code: TabBusy,
    DialogOpen.code: DialogOpen,
    # Another broker's session holds the tab in this browser (a claim's answer, or a later call's).
    TabHeldElsewhere.code: TabHeldElsewhere,
}
# What an extension's refusal of a closeTab (``error {code, message, requestId}``) says: the tab is
# not the session's in its books, it is paused, the tab is gone, a call there waits for the person,
# or the page's beforeunload asks the person first. Other codes stay tool_failed with the code.
_CLOSE_REFUSALS: dict[str, type[BrokerError]] = {
    Paused.code: Paused,
    TabNotClaimed.code: TabNotClaimed,
    TabNotFound.code: TabNotFound,
    TabBusy.code: TabBusy,
    CloseHeld.code: CloseHeld,
}
# A browserRequest's error codes that name one of the broker's own errors: a window to close
# gained a tab that is not the session's after the broker checked it; a bookmark or history entry
# that is not there, a folder deleted without `recursive`, another deletion waiting for the person;
# and arguments the extension found wrong where the broker could not (a bookmark's kind).
_BROWSER_REFUSALS: dict[str, type[BrokerError]] = {
    "window_changed": WindowNotOwned,
    RecordNotFound.code: RecordNotFound,
    FolderNotEmpty.code: FolderNotEmpty,
    RecordsBusy.code: RecordsBusy,
    "invalid_arguments": InvalidRequest,
}
# The feature (``connected.features``) of an extension that answers ``tabClaimed`` carrying a
# ``callId``, refusing a tab another broker's session holds there.
CLAIMS = "claims"
# toolResult error codes of a page tool call that the extension wrote, not the page.
_EXTENSION_TOOL_CODES = frozenset({"tab_not_found", "no_page_tools", "page_gone", "cancelled"})


class _UnannouncedTab(Exception):
    """A frame named a tab its browser never announced; the frame is answered with an error."""

    def __init__(self, tab_id: int) -> None:
        super().__init__(tab_id)
        self.tab_id = tab_id


@attrs.define
class Link:
    id: LinkId
    browser: str
    last_received: float
    last_sent: float
    # Its browser's sessions were listed to it (after its first snapshot).
    sessions_listed: bool = False
    # Its extension proved the broker's link key (or it came with the broker's token).
    proven: bool = True


# What the broker sends about one session: its session is introduced to a browser before the first.
SessionMessage = (
    OpenTab | CloseTab | FocusTab | TabClaimed | TabReleased | CallTool | BrowserAction | BrowserRequest | DiscoverTools
)


class BrowserLinks:
    """Links, what comes over them, and how calls start and end; the Broker builds on it."""

    config: Config
    _links: dict[LinkId, Link]
    _browsers: Browsers
    _sessions: Sessions
    _pending: PendingCalls
    _rates: RateLimiter
    _breakers: Breakers
    _baselines: Baselines

    def check_link_room(self) -> None:
        """Raises: TooManyLinks, when as many links that proved the link key as ``Config.max_links`` are open.

        Links that have not proven it never keep another out: the oldest of them makes room
        (:meth:`link_opened`).
        """
        proven = sum(link.proven for link in self._links.values())
        if proven >= self.config.max_links:
            raise TooManyLinks(
                f"{proven} extension links are open, the most this broker takes (--max-links):"
                " close a browser's link (or its extension) first"
            )

    def link_opened(self, link_id: LinkId, now: float, proven: bool = True) -> list[Effect]:
        """A link opened (``proven``: its extension proved the link key): it gets the first ``connect``.

        With ``Config.max_links`` links open, the oldest one that has not proven the key is closed
        to make room, so links a local process opens and leaves unproven cannot keep the person's
        extension out.

        Raises:
            TooManyLinks: as many links as ``Config.max_links`` are open, and all proved the key.
        """
        effects: list[Effect] = []
        if len(self._links) >= self.config.max_links:
            self.check_link_room()
            oldest = next(link for link in self._links.values() if not link.proven)
            reason = "the broker's links are full, and this one had not proven the broker's link key"
            effects += [CloseLink(oldest.id, reason), *self.link_closed(oldest.id, now, reason)]
        browser = self._browsers.add(link_id)
        self._links[link_id] = Link(link_id, browser.key, last_received=now, last_sent=now, proven=proven)
        # Which browser this is, and so which sessions it may hear of, its snapshot will say.
        return [*effects, SendToExtension(link_id, self._link_connect())]

    def link_proven(self, link_id: LinkId) -> None:
        """The link's extension proved the link key: no link that has not can take its place."""
        link = self._links.get(link_id)
        if link is not None:
            link.proven = True

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
            # Links that come and go under ever new instance ids must not pile up browsers: this
            # one and the latest others lost are kept, up to one per link this broker takes.
            others = [b for b in self._browsers.values() if b.detached_at is not None and b is not browser]
            others.sort(key=lambda b: b.detached_at or 0.0)
            for oldest in others[: max(len(others) - self.config.max_links + 1, 0)]:
                del self._browsers[oldest.key]
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
        try:
            effects: list[Effect] = handler(self, link, message, now)
        except _UnannouncedTab as exc:
            return [self._unknown_tab(link, type(message).__name__, exc.tab_id)]
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

    def unreadable_reply(self, link_id: LinkId, call_id: str | None, why: str, now: float) -> list[Effect]:
        """A frame the broker could not read that named ``call_id`` fails that call at once."""
        pending = self._pending.get(call_id) if call_id else None
        if pending is None or pending.link_id != link_id:
            return []
        return self._finish(pending.call_id, now, BadReply(f"the browser's answer could not be read: {why}"))

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
        browser.actions = frozenset(message.actions)
        browser.features = frozenset(message.features)
        browser.driver_name = message.driver.name
        browser.driver_actions = frozenset(message.driver.actions)
        browser.paused = message.paused
        browser.instance_id = instance_id
        self._heard_extension_version(browser, message.extension_version)
        known = dict(browser.tabs)
        gone = set(browser.tabs) - {info.id for info in message.tabs}
        browser.tabs = {}
        listed = [info for info in message.tabs if info.id >= 0]
        if len(listed) < len(message.tabs):
            effects.append(self._negative_tab_id(link, "connected", next(i.id for i in message.tabs if i.id < 0)))
        capacity, limit = self._tab_capacity(browser)
        kept = listed[:capacity]
        if len(kept) < len(listed):
            effects.append(self._too_many_tabs(link, len(listed) - len(kept), limit))
        for info in kept:
            before = known.get(info.id)
            tab = Tab(info.id, owner=before.owner if before else None)
            if before is None:
                browser.heard_of(tab)
            else:
                tab.heard = before.heard
            tab.update(info)
            browser.tabs[info.id] = tab
            if info.active:
                browser.active_tab = info.id
        for tab_id in gone:
            effects += self._tab_gone(link, tab_id, now)
        effects.append(TabsChanged())
        if not link.sessions_listed:
            link.sessions_listed = True
            effects += self._list_sessions(link, browser)
        return effects

    def _link_connect(self, session_ids: tuple[str, ...] | None = None) -> Connect:
        """A ``connect`` for the link itself (no session): the versions, and the sessions when given."""
        minimum = self.config.min_extension_version or None
        return Connect(self.config.server_version, session_ids=session_ids, min_extension_version=minimum)

    def _heard_extension_version(self, browser: Browser, version: str | None) -> None:
        """Keep what the extension said its version is; an outdated one is logged once per version."""
        if browser.extension_heard and browser.extension_version == version:
            return
        browser.extension_version, browser.extension_heard = version, True
        outdated = outdated_extension(version, self.config.min_extension_version)
        if outdated is not None:
            logger.warning("browser %s: %s", browser.key, outdated)

    def _list_sessions(self, link: Link, browser: Browser) -> list[Effect]:
        told = sorted(browser.told)
        effects: list[Effect] = [SendToExtension(link.id, self._link_connect(session_ids=tuple(told)))]
        for session_id in told:
            session = self._sessions[session_id]
            effects.append(SendToExtension(link.id, self._connect_message(session)))
        return effects

    def _tell(self, browser: Browser, message: SessionMessage) -> list[Effect]:
        """``message`` for ``browser``, after its session's ``connect`` when the browser has not heard of it."""
        assert browser.link_id is not None
        effects: list[Effect] = []
        session = self._sessions.get(message.session_id)
        if session is not None and session.id not in browser.told:
            browser.told.add(session.id)
            effects.append(SendToExtension(browser.link_id, self._connect_message(session)))
        effects.append(SendToExtension(browser.link_id, message))
        return effects

    def _on_tab_created(self, link: Link, message: TabCreated, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        if message.tab.id < 0:
            return self._refused_tab(
                link, message.request_id, now, self._negative_tab_id(link, "tabCreated", message.tab.id)
            )
        if message.tab.id not in browser.tabs:
            capacity, limit = self._tab_capacity(browser)
            if len(browser.tabs) >= capacity:
                return self._refused_tab(link, message.request_id, now, self._too_many_tabs(link, 1, limit))
        tab = browser.tabs.get(message.tab.id)
        if tab is None:
            tab = Tab(message.tab.id)
            browser.heard_of(tab)
        tab.update(message.tab)
        browser.tabs[tab.id] = tab
        effects = self._answer_open_tab(link, message.request_id, browser, tab, now, created=True)
        return effects + self._born_of(browser, tab, message.opener_tab_id) + self._changed(browser, tab)

    def _born_of(self, browser: Browser, tab: Tab, opener_id: int | None) -> list[Effect]:
        """A new tab whose opener is a session's tab is that session's from birth, and joins its
        tab group (``tabClaimed``): a popup or ``target=_blank`` page the client's click opened is
        where its work goes on. A tab the person's tab opened stays the person's; an opener this
        browser never announced, or a tab someone already holds, changes nothing."""
        opener = browser.tabs.get(opener_id) if opener_id is not None and opener_id != tab.id else None
        if opener is None or opener.owner is None or tab.owner is not None:
            return []
        if opener.owner not in self._sessions:
            return []
        tab.owner = opener.owner
        return self._tell(browser, TabClaimed(opener.owner, tab.id))

    def _on_tab_updated(self, link: Link, message: TabUpdated, now: float) -> list[Effect]:
        browser, tab = self._announced_tab(link, message.tab.id)
        tab.update(message.tab)
        return self._changed(browser, tab)

    def _on_tab_closed(self, link: Link, message: TabClosed, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        tab = browser.tabs.get(message.tab_id)
        changed = [] if tab is None else self._changed(browser, tab)
        if browser.tabs.pop(message.tab_id, None) is None:
            logger.debug("tabClosed for unknown tab %s on %s", message.tab_id, browser.key)
        if browser.active_tab == message.tab_id:
            browser.active_tab = None
        return self._tab_gone(link, message.tab_id, now) + changed

    def _on_tab_focused(self, link: Link, message: TabFocused, now: float) -> list[Effect]:
        browser, tab = self._focused_tab(link, message)
        if message.tools:
            tab.set_tools(message.tools)
        elif message.tools is not None and not tab.tools_confirmed:
            # An empty list here says no more than a snapshot's: the original protocol's
            # extensions send what they pushed, which for a page they only answer for is nothing.
            tab.tools = ()
        browser.active_tab = tab.id
        effects = self._answer_open_tab(link, message.request_id, browser, tab, now, created=False)
        return effects + self._changed(browser, tab)

    def _focused_tab(self, link: Link, message: TabFocused) -> tuple[Browser, Tab]:
        """The tab a ``tabFocused`` names. One never announced is taken only as the answer to an
        ``openTab``: the tab it just opened, which an extension of the original protocol may
        name first there.

        Raises:
            _UnannouncedTab: any other tab never announced, or one past the browser's tab limit.
        """
        browser = self._browsers[link.browser]
        tab = browser.tabs.get(message.tab_id)
        if tab is not None:
            return browser, tab
        opening = self._pending.get(message.request_id) if message.request_id else None
        if opening is None or opening.link_id != link.id or opening.kind is not CallKind.OPEN_TAB:
            raise _UnannouncedTab(message.tab_id)
        if message.tab_id < 0 or len(browser.tabs) >= self._tab_capacity(browser)[0]:
            raise _UnannouncedTab(message.tab_id)
        tab = Tab(message.tab_id)
        browser.heard_of(tab)
        browser.tabs[tab.id] = tab
        return browser, tab

    def _on_tools_changed(self, link: Link, message: ToolsChanged, now: float) -> list[Effect]:
        browser, tab = self._announced_tab(link, message.tab_id)
        tab.set_tools(message.tools)
        return self._changed(browser, tab)

    def _on_tools_discovered(self, link: Link, message: ToolsDiscovered, now: float) -> list[Effect]:
        browser, tab = self._announced_tab(link, message.tab_id)
        tab.set_tools(message.tools)
        pending = self._reply_to(link, message.call_id, CallKind.DISCOVER)
        effects: list[Effect] = self._changed(browser, tab)
        if pending is None:
            return effects
        if pending.then_call is None:
            return effects + self._finish(pending.call_id, now, value=tab.tools)
        # A call that waited to learn the tab's tools: sent now, or refused if the page lacks it.
        assert pending.tool_name is not None
        if not any(t.name == pending.tool_name for t in tab.tools or ()):
            missing = ToolNotFound(no_such_tool(browser.key, tab, pending.tool_name))
            return effects + self._finish(pending.call_id, now, missing)
        pending.kind = CallKind.TOOL
        call = CallTool(pending.session_id, pending.call_id, tab.id, pending.tool_name, pending.then_call)
        return effects + self._tell(browser, call)

    def _on_tool_result(self, link: Link, message: ToolResult, now: float) -> list[Effect]:
        # An openTab the browser could not carry out is reported as a toolResult error too.
        pending = self._reply_to(
            link,
            message.call_id,
            CallKind.TOOL,
            CallKind.ACTION,
            CallKind.DISCOVER,
            CallKind.OPEN_TAB,
            CallKind.BROWSER,
            CallKind.CLAIM,
        )
        if pending is None:
            return []
        error = message.error
        if error is None:
            value = self._with_snapshot(pending, message)
            if pending.kind is CallKind.ACTION:
                value = named_in_result(value, pending.browser)
            return self._finish(pending.call_id, now, value=value)
        failure: BrokerError
        if isinstance(error, WireError):
            code = error.code or ""
            known = (
                _DECLINED.get(code)
                or _REFUSED.get(code)
                or (_BROWSER_REFUSALS.get(code) if pending.kind is CallKind.BROWSER else None)
                or (TabHeldElsewhere if pending.kind is CallKind.CLAIM else None)
            )
            # A page tool's own error is the page's text, kept as it wrote it.
            page_wrote = pending.kind is CallKind.TOOL and known is None and code not in _EXTENSION_TOOL_CODES
            text = error.message if page_wrote else self._tabs_named(link, pending, error.message)
            failure = known(text) if known else PageToolFailed(text, page_code=error.code)
        else:
            failure = PageToolFailed(error)
        return self._finish(pending.call_id, now, failure)

    def _tabs_named(self, link: Link, pending: Pending, text: str) -> str:
        """The extension's message with the tabs it names (the call's own, or for a call of the
        browser's own, any of its tabs) written as refs."""
        if pending.tab_id is not None:
            return named_in_message(text, pending.browser, frozenset({pending.tab_id}))
        return named_in_message(text, pending.browser, frozenset(self._browsers[link.browser].tabs))

    def _with_snapshot(self, pending: Pending, message: ToolResult) -> Any:
        """A browser action's result with the page's snapshot as this client is to read it."""
        if message.page is None or pending.kind is not CallKind.ACTION or pending.tab_id is None:
            return message.result
        view = pending.view or View(changes=False, budget=SNAPSHOT_BUDGET)
        tab = (pending.browser, pending.tab_id)
        lines = self._baselines.section(pending.session_id, tab, message.page, view)
        result = message.result
        if self._baselines.address_told(pending.session_id, tab, message.page, view):
            result = without_address(result, message.page)
        return with_section(result, "Snapshot", lines)

    def _changed(self, browser: Browser, tab: Tab, *also: SessionId | None) -> list[Effect]:
        """The tool lists a change of ``tab`` may touch: its owner's and ``also``'s."""
        sessions = frozenset(s for s in (tab.owner, *also) if s is not None)
        return [TabsChanged(sessions)] if sessions else []

    def _announced_tab(self, link: Link, tab_id: int) -> tuple[Browser, Tab]:
        """The link's browser and its tab ``tab_id``. Raises: _UnannouncedTab, for a tab never announced."""
        browser = self._browsers[link.browser]
        tab = browser.tabs.get(tab_id)
        if tab is None:
            raise _UnannouncedTab(tab_id)
        return browser, tab

    def _unknown_tab(self, link: Link, message_class: str, tab_id: int) -> SendToExtension:
        # Taking it would make a nameless tab no listing could explain; the frame is refused.
        kind = message_class[0].lower() + message_class[1:]
        text = f"{kind} names tab {tab_id}, which this browser never announced (tabCreated or connected)"
        logger.info("link %s: %s", link.id, text)
        return SendToExtension(link.id, ErrorReply("unknown_tab", text))

    def _refused_tab(self, link: Link, request_id: str | None, now: float, refusal: SendToExtension) -> list[Effect]:
        """A tab event refused with ``refusal``; the ``openTab`` it answers fails at once, saying why."""
        pending = self._reply_to(link, request_id, CallKind.OPEN_TAB) if request_id else None
        if pending is None:
            return [refusal]
        assert isinstance(refusal.message, ErrorReply)
        why = PageToolFailed(f"the browser opened the tab, but the broker refused it: {refusal.message.message}")
        return [refusal, *self._finish(pending.call_id, now, why)]

    def _tab_capacity(self, browser: Browser) -> tuple[int, str]:
        """How many tabs ``browser`` may hold beside the others', and the limit that says so."""
        others = sum(len(b.tabs) for b in self._browsers.values() if b is not browser)
        if self.config.max_tabs - others < self.config.max_tabs_per_browser:
            return max(self.config.max_tabs - others, 0), f"{self.config.max_tabs} tabs across all browsers"
        return self.config.max_tabs_per_browser, f"{self.config.max_tabs_per_browser} tabs in one browser"

    def _too_many_tabs(self, link: Link, ignored: int, limit: str) -> SendToExtension:
        text = f"over {limit}: {ignored} more ignored"
        logger.warning("link %s: %s", link.id, text)
        return SendToExtension(link.id, ErrorReply("too_many_tabs", text))

    def _negative_tab_id(self, link: Link, kind: str, tab_id: int) -> SendToExtension:
        text = f"{kind} names tab {tab_id}: a browser's tab ids are never negative; that tab is ignored"
        logger.info("link %s: %s", link.id, text)
        return SendToExtension(link.id, ErrorReply("invalid_message", text))

    def _on_request_refused(self, link: Link, message: RequestRefused, now: float) -> list[Effect]:
        pending = self._reply_to(link, message.request_id, CallKind.CLOSE_TAB) if message.request_id else None
        if pending is None:
            # Never answered: an error frame for an error frame would keep two ends talking.
            logger.info("link %s: error %s: %s", link.id, message.code, message.message)
            return []
        known = _CLOSE_REFUSALS.get(message.code)
        why = f"the browser did not close tab {pending.browser}:{pending.tab_id}: {message.message}"
        failure = known(why) if known else PageToolFailed(why, page_code=message.code)
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
        RequestRefused: _on_request_refused,
    }

    def _connect_message(self, session: Session) -> Connect:
        credential = OWNER_CREDENTIAL if session.credential is None else session.credential
        return Connect(self.config.server_version, session.id, session.name, credential=credential)

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
        tool_key = None
        # A tool call (or one waiting for the tab's tools first) or a browser action.
        if tab_id is not None and tool_name is not None:
            tool_key = (browser.key, tab_id, tool_name, client_of(session.id, session.credential))
            self._breakers.admit(tool_key, now)
        self._rates.take(session.id, now, session.credential)
        timeout = self.config.call_timeout if timeout is None else timeout
        session.used(now)
        pending = self._pending.add(kind, session.id, browser.link_id, browser.key, now, timeout, tab_id, tool_name)
        if tool_key is not None:
            pending.breaker = tool_key
            self._breakers.started(tool_key, pending.call_id, now)
        return pending

    def _finish(
        self,
        call_id: CallId,
        now: float | None,
        error: BrokerError | None = None,
        value: Any = None,
        *,
        withdrawn: bool = False,
    ) -> list[Effect]:
        """End a call once; its end counts as a use of its session (at ``now``, when known).

        ``withdrawn``: its caller gave up, so the call says nothing of whether its tool works.
        """
        pending = self._pending.pop(call_id)
        if pending is None:
            return []
        session = self._sessions.get(pending.session_id)
        if session is not None and now is not None:
            session.used(now)
        key = pending.breaker
        if key is not None:
            if isinstance(error, CallTimedOut) and now is not None:
                self._breakers.ended(key, call_id, True, now)
            elif not withdrawn and (error is None or isinstance(error, ExtensionError)) and now is not None:
                self._breakers.ended(key, call_id, False, now)
            else:
                self._breakers.withdrawn(key, call_id)
        effects = self._called_off(pending, error, withdrawn=withdrawn)
        if pending.kind is CallKind.CLAIM and (error is not None or withdrawn):
            effects += self._claim_undone(pending, refused=isinstance(error, TabHeldElsewhere))
        if error is not None:
            return [*effects, RejectCall(call_id, error)]
        return [*effects, ResolveCall(call_id, value)]

    def _claim_undone(self, pending: Pending, *, refused: bool) -> list[Effect]:
        """A claim the browser refused, or did not confirm: the tab is not the session's here.

        A browser that did not answer may have grouped the tab all the same, so it is told; one
        that refused kept the tab as it was, its holder's, whom a release would disturb.
        """
        browser = self._browsers.get(pending.browser)
        tab = browser.tabs.get(pending.tab_id) if browser and pending.tab_id is not None else None
        if browser is None or tab is None or tab.owner != pending.session_id:
            return []
        tab.owner = None
        session = self._sessions.get(pending.session_id)
        if session is not None and session.current == (browser.key, tab.id):
            session.current = None
        told = (
            [] if refused or browser.link_id is None else self._tell(browser, TabReleased(pending.session_id, tab.id))
        )
        return [*told, *self._changed(browser, tab, pending.session_id)]

    def _called_off(self, pending: Pending, error: BrokerError | None, *, withdrawn: bool) -> list[Effect]:
        """A call the page is running, ended here without its answer: the browser stops it too."""
        if pending.kind not in (CallKind.TOOL, CallKind.ACTION) or pending.link_id not in self._links:
            return []
        if withdrawn:
            reason = "cancelled"
        elif isinstance(error, CallTimedOut):
            reason = "timeout"
        elif isinstance(error, SessionEnded):
            reason = "session_ended"
        else:
            return []
        return [SendToExtension(pending.link_id, CancelCall(pending.session_id, pending.call_id, reason))]

    def _reply_to(self, link: Link, call_id: CallId, *kinds: CallKind) -> Pending | None:
        pending = self._pending.get(call_id)
        if pending is None or pending.link_id != link.id or pending.kind not in kinds:
            logger.debug("late, duplicate or unknown reply %s on %s: dropped", call_id, link.browser)
            return None
        return pending

    def _answer_open_tab(
        self, link: Link, request_id: str | None, browser: Browser, tab: Tab, now: float, *, created: bool
    ) -> list[Effect]:
        """An ``openTab`` answered: a tab it ``created`` is the session's, and so is a focused one
        the browser announced only after the request was sent (the original protocol's extensions
        answer ``focus: true`` with ``tabFocused`` for the tab just opened). A tab focused instead
        that the broker knew before is the session's only if it already was, so no client gains
        the person's tab, or another's, by asking to open its address."""
        if request_id is None:
            return []
        pending = self._reply_to(link, request_id, CallKind.OPEN_TAB)
        if pending is None:
            return []
        new = created or (pending.tabs_heard_before is not None and tab.heard > pending.tabs_heard_before)
        if tab.owner is None and new:
            tab.owner = pending.session_id
        if tab.owner != pending.session_id:
            return self._finish(pending.call_id, now, self._focused_instead(browser, tab))
        session = self._sessions.get(pending.session_id)
        if session is not None:
            session.current = (browser.key, tab.id)
        return self._finish(pending.call_id, now, value=self._view(browser, tab))

    def _focused_instead(self, browser: Browser, tab: Tab) -> TabNotClaimed | TabOwnedByOther:
        ref = f"{browser.key}:{tab.id}"
        done = f"the browser opened no new tab: it brought its tab {ref} to the front, which"
        if tab.owner is None:
            return TabNotClaimed(f"{done} is the person's; claim it (`tabs` with action=claim) to work in it")
        owner = self._sessions.get(tab.owner)
        name = owner.name if owner else tab.owner
        return TabOwnedByOther(
            f"{done} belongs to session {name!r} ({tab.owner})", owner_session_id=tab.owner, owner_name=name
        )

    def _tab_gone(self, link: Link, tab_id: int, now: float) -> list[Effect]:
        effects: list[Effect] = []
        browser = self._browsers[link.browser]
        self._breakers.forget_tab(browser.key, tab_id)
        self._baselines.forget_tab((browser.key, tab_id))
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
            tab.tools_provisional,
            tab.window_id,
            tab.index,
            tab.pinned,
            browser.name,
            browser.name if self._browsers.kinds_differ() else None,
        )


def no_such_tool(browser: str, tab: Tab, tool: str) -> str:
    have = ", ".join(t.name for t in tab.tools or ()) or "none"
    return f"tab {browser}:{tab.id} has no tool {tool!r} (it has: {have})"
