"""The extension side of the core: links, and what the browsers on them report.

:class:`BrowserLinks` is the part of :class:`~broker.core.state.Broker`'s rules that hears from
extensions: a link opening and closing, each message an extension sends (tabs appearing,
changing and closing, tools changing; the answers to calls it hands to
:class:`~broker.core.link_calls.LinkCalls`), and the keepalive of each link: when to ping a quiet
one, when to give up on a silent one, when to forget a browser long gone. It opens and closes the
links in the :class:`~broker.core.link_calls.Links` registry and keeps the browsers' registry as
the extensions report it; what sessions ask for is the Broker's and its other parts'.

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
from collections.abc import Callable
from typing import Any

from .broker_messages import CallTool, Connect, ErrorReply, TabClaimed
from .browsers import Browser, Browsers, Tab, outdated_extension
from .config import Config
from .effects import (
    CloseLink,
    Effect,
    LinkId,
    SendToExtension,
    TabsChanged,
)
from .errors import (
    BadReply,
    ExtensionDisconnected,
    MessageTooLarge,
    PageToolFailed,
    ToolNotFound,
    TooManyLinks,
)
from .link_calls import Link, LinkCalls, Links
from .messages import (
    Connected,
    Disconnected,
    ExtensionMessage,
    Ping,
    Pong,
    RequestRefused,
    TabClosed,
    TabCreated,
    TabFocused,
    TabUpdated,
    ToolResult,
    ToolsChanged,
    ToolsDiscovered,
)
from .messenger import Messenger
from .pending import CallKind
from .sessions import Sessions

__all__ = ["BrowserLinks", "Handlers", "Link", "UnannouncedTab", "announced_tab", "no_such_tool", "unknown_tab"]

logger = logging.getLogger(__name__)

# The feature (``connected.features``) of an extension that answers ``tabClaimed`` carrying a
# ``callId``, refusing a tab another broker's session holds there.
CLAIMS = "claims"


# Each extension message's handler, by the message's type: the link it came on, the message, now.
Handlers = dict[type, Callable[[Link, Any, float], list[Effect]]]


class UnannouncedTab(Exception):
    """A frame named a tab its browser never announced; the frame is answered with an error (:func:`unknown_tab`)."""

    def __init__(self, tab_id: int) -> None:
        super().__init__(tab_id)
        self.tab_id = tab_id


def announced_tab(browsers: Browsers, link: Link, tab_id: int) -> tuple[Browser, Tab]:
    """The link's browser and its tab ``tab_id``. Raises: UnannouncedTab, for a tab never announced."""
    browser = browsers[link.browser]
    tab = browser.tabs.get(tab_id)
    if tab is None:
        raise UnannouncedTab(tab_id)
    return browser, tab


def unknown_tab(link: Link, message_class: str, tab_id: int) -> SendToExtension:
    """The error frame that refuses a frame naming a tab its browser never announced."""
    # Taking it would make a nameless tab no listing could explain; the frame is refused.
    kind = message_class[0].lower() + message_class[1:]
    text = f"{kind} names tab {tab_id}, which this browser never announced (tabCreated or connected)"
    logger.info("link %s: %s", link.id, text)
    return SendToExtension(link.id, ErrorReply("unknown_tab", text))


class BrowserLinks:
    """The links, what comes over them, and their keepalive; see the module docstring."""

    def __init__(
        self,
        config: Config,
        links: Links,
        browsers: Browsers,
        sessions: Sessions,
        calls: LinkCalls,
        messenger: Messenger,
    ) -> None:
        self._config = config
        self._links = links
        self._browsers = browsers
        self._sessions = sessions
        self._calls = calls
        self._messenger = messenger

    def check_link_room(self) -> None:
        """Raises: TooManyLinks, when as many links that proved the link key as ``Config.max_links`` are open.

        Links that have not proven it never keep another out: the oldest of them makes room
        (:meth:`link_opened`).
        """
        proven = sum(link.proven for link in self._links.values())
        if proven >= self._config.max_links:
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
        if len(self._links) >= self._config.max_links:
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
        for pending in self._calls.pending.of_link(link_id):
            effects += self._calls.finish(pending.call_id, now, ExtensionDisconnected(why))
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
            for oldest in others[: max(len(others) - self._config.max_links + 1, 0)]:
                del self._browsers[oldest.key]
        effects.append(TabsChanged())
        return effects

    def heard(self, link_id: LinkId, message: ExtensionMessage, now: float) -> Link | None:
        """The open link a message came on, with the traffic noted; None for a link already closed."""
        link = self._links.get(link_id)
        if link is None:
            logger.debug("frame from link %s after it was closed: dropped", link_id)
            return None
        link.last_received = now
        # A keepalive says nothing of which browser this is: a link still waiting to prove the
        # key answers pings too, and must not become the browser new tabs open in.
        if not isinstance(message, (Ping, Pong)):
            self._browsers[link.browser].heard_from = True
        return link

    def handlers(self) -> Handlers:
        """What this part hears from extensions, by message type, the answers to calls included."""
        return {
            Connected: self.on_connected,
            TabCreated: self.on_tab_created,
            TabUpdated: self.on_tab_updated,
            TabClosed: self.on_tab_closed,
            TabFocused: self.on_tab_focused,
            ToolsChanged: self.on_tools_changed,
            ToolsDiscovered: self.on_tools_discovered,
            ToolResult: self._calls.on_tool_result,
            Ping: self.on_ping,
            Pong: self.on_pong,
            Disconnected: self.on_disconnected,
            RequestRefused: self._calls.on_request_refused,
        }

    def frame_received(self, link_id: LinkId, now: float) -> None:
        """Note traffic on a link whose frame could not be decoded: it is alive all the same."""
        link = self._links.get(link_id)
        if link is not None:
            link.last_received = now

    def oversized_reply(self, link_id: LinkId, call_id: str | None, size: int, limit: int, now: float) -> list[Effect]:
        """A frame over the size limit that named ``call_id`` fails that call at once."""
        pending = self._calls.pending.get(call_id) if call_id else None
        if pending is None or pending.link_id != link_id:
            return []
        return self._calls.finish(
            pending.call_id,
            now,
            MessageTooLarge(f"the page's reply was {size} bytes, over the {limit}-byte limit"),
        )

    def unreadable_reply(self, link_id: LinkId, call_id: str | None, why: str, now: float) -> list[Effect]:
        """A frame the broker could not read that named ``call_id`` fails that call at once."""
        pending = self._calls.pending.get(call_id) if call_id else None
        if pending is None or pending.link_id != link_id:
            return []
        return self._calls.finish(pending.call_id, now, BadReply(f"the browser's answer could not be read: {why}"))

    # Keepalive

    def expire(self, now: float) -> list[Effect]:
        """Ping quiet links, close silent ones, forget browsers gone past ``Config.browser_grace``."""
        effects: list[Effect] = []
        config = self._config
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
        return effects

    def resumed(self, now: float) -> list[Effect]:
        """The broker stood still until ``now``: each link's silence counts from now, and it is pinged at once."""
        effects: list[Effect] = []
        for link in self._links.values():
            link.last_received = link.last_sent = now
            effects.append(SendToExtension(link.id, Ping()))
        return effects

    def next_wakeup(self, when: float | None) -> float | None:
        """The earlier of ``when`` and the next time a link is due a ping or its end, or a browser its end."""
        # Asked twice per call (as it starts and as it ends): kept to plain comparisons, no lists.
        config = self._config
        silence, ping = config.silence_timeout, config.ping_interval
        for link in self._links.values():
            received = link.last_received
            sent = link.last_sent
            due = min(received + silence, (received if received > sent else sent) + ping)
            if when is None or due < when:
                when = due
        for browser in self._browsers.values():
            if browser.detached_at is not None:
                due = browser.detached_at + config.browser_grace
                if when is None or due < when:
                    when = due
        return when

    # Extension message handlers

    def on_connected(self, link: Link, message: Connected, now: float) -> list[Effect]:
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
                if info.tools == () and before.tools_confirmed and before.url == info.url:
                    # What the page itself said of its tools outlives a snapshot of the same page
                    # that merely repeats "tools": [] (Tab.update keeps them).
                    tab.url, tab.tools, tab.tools_confirmed = before.url, before.tools, True
            tab.update(info)
            browser.tabs[info.id] = tab
            if info.active:
                browser.active_tab = info.id
        for tab_id in gone:
            effects += self._calls.tab_gone(link, tab_id, now)
        effects.append(TabsChanged())
        if not link.sessions_listed:
            link.sessions_listed = True
            effects += self._list_sessions(link, browser)
        return effects

    def _link_connect(self, session_ids: tuple[str, ...] | None = None) -> Connect:
        """A ``connect`` for the link itself (no session): the versions, and the sessions when given."""
        minimum = self._config.min_extension_version or None
        return Connect(self._config.server_version, session_ids=session_ids, min_extension_version=minimum)

    def _heard_extension_version(self, browser: Browser, version: str | None) -> None:
        """Keep what the extension said its version is; an outdated one is logged once per version."""
        if browser.extension_heard and browser.extension_version == version:
            return
        browser.extension_version, browser.extension_heard = version, True
        outdated = outdated_extension(version, self._config.min_extension_version)
        if outdated is not None:
            logger.warning("browser %s: %s", browser.key, outdated)

    def _list_sessions(self, link: Link, browser: Browser) -> list[Effect]:
        told = sorted(browser.told)
        effects: list[Effect] = [SendToExtension(link.id, self._link_connect(session_ids=tuple(told)))]
        for session_id in told:
            session = self._sessions[session_id]
            effects.append(SendToExtension(link.id, self._messenger.connect_message(session)))
        return effects

    def on_tab_created(self, link: Link, message: TabCreated, now: float) -> list[Effect]:
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
        effects = self._calls.answer_open_tab(link, message.request_id, browser, tab, now, created=True)
        return effects + self._born_of(browser, tab, message.opener_tab_id) + self._messenger.changed(browser, tab)

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
        return self._messenger.tell(browser, TabClaimed(opener.owner, tab.id))

    def on_tab_updated(self, link: Link, message: TabUpdated, now: float) -> list[Effect]:
        browser, tab = announced_tab(self._browsers, link, message.tab.id)
        tab.update(message.tab)
        return self._messenger.changed(browser, tab)

    def on_tab_closed(self, link: Link, message: TabClosed, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        tab = browser.tabs.get(message.tab_id)
        changed = [] if tab is None else self._messenger.changed(browser, tab)
        if browser.tabs.pop(message.tab_id, None) is None:
            logger.debug("tabClosed for unknown tab %s on %s", message.tab_id, browser.key)
        if browser.active_tab == message.tab_id:
            browser.active_tab = None
        return self._calls.tab_gone(link, message.tab_id, now) + changed

    def on_tab_focused(self, link: Link, message: TabFocused, now: float) -> list[Effect]:
        browser, tab = self._focused_tab(link, message)
        if message.tools:
            tab.set_tools(message.tools)
        elif message.tools is not None and not tab.tools_confirmed:
            # An empty list here says no more than a snapshot's: the original protocol's
            # extensions send what they pushed, which for a page they only answer for is nothing.
            tab.tools = ()
        browser.active_tab = tab.id
        effects = self._calls.answer_open_tab(link, message.request_id, browser, tab, now, created=False)
        return effects + self._messenger.changed(browser, tab)

    def _focused_tab(self, link: Link, message: TabFocused) -> tuple[Browser, Tab]:
        """The tab a ``tabFocused`` names. One never announced is taken only as the answer to an
        ``openTab``: the tab it just opened, which an extension of the original protocol may
        name first there.

        Raises:
            UnannouncedTab: any other tab never announced, or one past the browser's tab limit.
        """
        browser = self._browsers[link.browser]
        tab = browser.tabs.get(message.tab_id)
        if tab is not None:
            return browser, tab
        opening = self._calls.pending.get(message.request_id) if message.request_id else None
        if opening is None or opening.link_id != link.id or opening.kind is not CallKind.OPEN_TAB:
            raise UnannouncedTab(message.tab_id)
        if message.tab_id < 0 or len(browser.tabs) >= self._tab_capacity(browser)[0]:
            raise UnannouncedTab(message.tab_id)
        tab = Tab(message.tab_id)
        browser.heard_of(tab)
        browser.tabs[tab.id] = tab
        return browser, tab

    def on_tools_changed(self, link: Link, message: ToolsChanged, now: float) -> list[Effect]:
        browser, tab = announced_tab(self._browsers, link, message.tab_id)
        tab.set_tools(message.tools)
        return self._messenger.changed(browser, tab)

    def on_tools_discovered(self, link: Link, message: ToolsDiscovered, now: float) -> list[Effect]:
        browser, tab = announced_tab(self._browsers, link, message.tab_id)
        tab.set_tools(message.tools)
        pending = self._calls.reply_to(link, message.call_id, CallKind.DISCOVER)
        effects: list[Effect] = self._messenger.changed(browser, tab)
        if pending is None:
            return effects
        if pending.then_call is None:
            return effects + self._calls.finish(pending.call_id, now, value=tab.tools)
        # A call that waited to learn the tab's tools: sent now, or refused if the page lacks it.
        assert pending.tool_name is not None
        if not any(t.name == pending.tool_name for t in tab.tools or ()):
            missing = ToolNotFound(no_such_tool(browser.key, tab, pending.tool_name))
            return effects + self._calls.finish(pending.call_id, now, missing)
        pending.kind = CallKind.TOOL
        call = CallTool(pending.session_id, pending.call_id, tab.id, pending.tool_name, pending.then_call)
        return effects + self._messenger.tell(browser, call)

    def _refused_tab(self, link: Link, request_id: str | None, now: float, refusal: SendToExtension) -> list[Effect]:
        """A tab event refused with ``refusal``; the ``openTab`` it answers fails at once, saying why."""
        pending = self._calls.reply_to(link, request_id, CallKind.OPEN_TAB) if request_id else None
        if pending is None:
            return [refusal]
        assert isinstance(refusal.message, ErrorReply)
        why = PageToolFailed(f"the browser opened the tab, but the broker refused it: {refusal.message.message}")
        return [refusal, *self._calls.finish(pending.call_id, now, why)]

    def _tab_capacity(self, browser: Browser) -> tuple[int, str]:
        """How many tabs ``browser`` may hold beside the others', and the limit that says so."""
        others = sum(len(b.tabs) for b in self._browsers.values() if b is not browser)
        if self._config.max_tabs - others < self._config.max_tabs_per_browser:
            return max(self._config.max_tabs - others, 0), f"{self._config.max_tabs} tabs across all browsers"
        return self._config.max_tabs_per_browser, f"{self._config.max_tabs_per_browser} tabs in one browser"

    def _too_many_tabs(self, link: Link, ignored: int, limit: str) -> SendToExtension:
        text = f"over {limit}: {ignored} more ignored"
        logger.warning("link %s: %s", link.id, text)
        return SendToExtension(link.id, ErrorReply("too_many_tabs", text))

    def _negative_tab_id(self, link: Link, kind: str, tab_id: int) -> SendToExtension:
        text = f"{kind} names tab {tab_id}: a browser's tab ids are never negative; that tab is ignored"
        logger.info("link %s: %s", link.id, text)
        return SendToExtension(link.id, ErrorReply("invalid_message", text))

    def on_ping(self, link: Link, message: Ping, now: float) -> list[Effect]:
        link.last_sent = now
        return [SendToExtension(link.id, Pong())]

    def on_pong(self, link: Link, message: Pong, now: float) -> list[Effect]:
        return []

    def on_disconnected(self, link: Link, message: Disconnected, now: float) -> list[Effect]:
        logger.info("extension on %s says session %s is disconnected", link.browser, message.session_id)
        return []


def no_such_tool(browser: str, tab: Tab, tool: str) -> str:
    have = ", ".join(t.name for t in tab.tools or ()) or "none"
    return f"tab {browser}:{tab.id} has no tool {tool!r} (it has: {have})"
