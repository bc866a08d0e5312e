"""The open links and the calls in flight over them: how a call starts and ends. No I/O.

:class:`Links` is the registry of open extension links, which :class:`~broker.core.links.BrowserLinks`
opens and closes. :class:`LinkCalls` owns the calls in flight: each taken into the pending table
under the session's limits (:meth:`LinkCalls.add`: its rate, its calls in flight, the tool's
breaker), ended once whatever ends it (:meth:`LinkCalls.finish`: an answer, an error, a timeout,
the tab or the link gone), and the extension's answers read, its error codes turned into the
broker's own errors. It owns the limits a call is taken under and the snapshots a client has read
(an action's result shows what changed since), and leaves the links, browsers and sessions to
their registries, which the :class:`~broker.core.state.Broker` hands it.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs

from .broker_messages import CancelCall, TabReleased
from .browsers import Browser, Browsers, Tab
from .config import Config
from .effects import CallId, Effect, LinkId, RejectCall, ResolveCall, SendToExtension, SessionId
from .errors import (
    BrokerError,
    CallTimedOut,
    CloseHeld,
    ConsentRequired,
    DialogOpen,
    ExtensionError,
    FolderNotEmpty,
    InvalidRequest,
    NotApproved,
    NotSupported,
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
    TooManyCalls,
    WindowNotOwned,
)
from .limits import Breakers, RateLimiter, client_of
from .messages import RequestRefused, ToolResult, WireError
from .messenger import Messenger
from .pending import CallKind, Pending, PendingCalls
from .sessions import Session, Sessions
from .snapshots import SNAPSHOT_BUDGET, Baselines, View, with_section, without_address
from .tab_refs import named_in_message, named_in_result

__all__ = ["Link", "LinkCalls", "Links"]

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
# A built-in action's error codes that name the broker's own: a page driver that cannot do what
# was asked of it (a part of a tool its browser lacks, such as a route's status in Firefox).
_ACTION_REFUSALS: dict[str, type[BrokerError]] = {NotSupported.code: NotSupported}
# toolResult error codes of a page tool call that the extension wrote, not the page.
_EXTENSION_TOOL_CODES = frozenset({"tab_not_found", "no_page_tools", "page_gone", "cancelled"})


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


class Links(dict[LinkId, Link]):
    """The open extension links by id: :class:`~broker.core.links.BrowserLinks` opens and closes them."""


class LinkCalls:
    """The calls in flight over the links: taken, answered and ended; see the module docstring."""

    def __init__(
        self, config: Config, links: Links, browsers: Browsers, sessions: Sessions, messenger: Messenger
    ) -> None:
        self._config = config
        self._links = links
        self._browsers = browsers
        self._sessions = sessions
        self._messenger = messenger
        self.pending = PendingCalls()
        self._rates = RateLimiter(
            config.rate_limit, config.rate_burst, config.client_rate_limit, config.client_rate_burst
        )
        self._breakers = Breakers(config.breaker_failures, config.breaker_cooldown)
        self._baselines = Baselines()

    def forget_session(self, session_id: SessionId) -> None:
        """An ended session's rate and the snapshots it read are dropped (its calls end apart)."""
        self._rates.forget(session_id)
        self._baselines.forget_session(session_id)

    def expire(self, now: float) -> list[Effect]:
        """Time out the calls past their deadlines."""
        effects: list[Effect] = []
        for pending in self.pending.overdue(now):
            message = f"{pending.describe()} did not answer within {pending.timeout:g} s"
            effects += self.finish(pending.call_id, now, CallTimedOut(message))
        return effects

    def add(
        self,
        session: Session,
        browser: Browser,
        kind: CallKind,
        now: float,
        timeout: float | None,
        tab_id: int | None = None,
        tool_name: str | None = None,
    ) -> Pending:
        in_flight = self.pending.count_of(session.id)
        if in_flight >= self._config.max_pending_per_session:
            raise TooManyCalls(
                f"session {session.name!r} already has {in_flight} calls in flight"
                f" (limit {self._config.max_pending_per_session})"
            )
        assert browser.link_id is not None
        tool_key = None
        # A tool call (or one waiting for the tab's tools first) or a browser action.
        if tab_id is not None and tool_name is not None:
            tool_key = (browser.key, tab_id, tool_name, client_of(session.id, session.credential))
            self._breakers.admit(tool_key, now)
        self._rates.take(session.id, now, session.credential)
        timeout = self._config.call_timeout if timeout is None else timeout
        session.used(now)
        pending = self.pending.add(kind, session.id, browser.link_id, browser.key, now, timeout, tab_id, tool_name)
        if tool_key is not None:
            pending.breaker = tool_key
            self._breakers.started(tool_key, pending.call_id, now)
        return pending

    def finish(
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
        pending = self.pending.pop(call_id)
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
            []
            if refused or browser.link_id is None
            else self._messenger.tell(browser, TabReleased(pending.session_id, tab.id))
        )
        return [*told, *self._messenger.changed(browser, tab, pending.session_id)]

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

    def reply_to(self, link: Link, call_id: CallId, *kinds: CallKind) -> Pending | None:
        pending = self.pending.get(call_id)
        if pending is None or pending.link_id != link.id or pending.kind not in kinds:
            logger.debug("late, duplicate or unknown reply %s on %s: dropped", call_id, link.browser)
            return None
        return pending

    def answer_open_tab(
        self, link: Link, request_id: str | None, browser: Browser, tab: Tab, now: float, *, created: bool
    ) -> list[Effect]:
        """An ``openTab`` answered: a tab it ``created`` is the session's, and so is a focused one
        the browser announced only after the request was sent (the original protocol's extensions
        answer ``focus: true`` with ``tabFocused`` for the tab just opened). A tab focused instead
        that the broker knew before is the session's only if it already was, so no client gains
        the person's tab, or another's, by asking to open its address."""
        if request_id is None:
            return []
        pending = self.reply_to(link, request_id, CallKind.OPEN_TAB)
        if pending is None:
            return []
        new = created or (pending.tabs_heard_before is not None and tab.heard > pending.tabs_heard_before)
        if tab.owner is None and new:
            tab.owner = pending.session_id
        if tab.owner != pending.session_id:
            return self.finish(pending.call_id, now, self._focused_instead(browser, tab))
        session = self._sessions.get(pending.session_id)
        if session is not None:
            session.current = (browser.key, tab.id)
        return self.finish(pending.call_id, now, value=self._messenger.view(browser, tab))

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

    def tab_gone(self, link: Link, tab_id: int, now: float) -> list[Effect]:
        effects: list[Effect] = []
        browser = self._browsers[link.browser]
        self._breakers.forget_tab(browser.key, tab_id)
        self._baselines.forget_tab((browser.key, tab_id))
        for pending in self.pending.of_link(link.id):
            if pending.tab_id != tab_id:
                continue
            if pending.kind is CallKind.CLOSE_TAB:
                effects += self.finish(pending.call_id, now, value={"closed": f"{browser.key}:{tab_id}"})
            else:
                effects += self.finish(pending.call_id, now, TabNotFound(f"tab {browser.key}:{tab_id} was closed"))
        return effects

    def on_tool_result(self, link: Link, message: ToolResult, now: float) -> list[Effect]:
        # An openTab the browser could not carry out is reported as a toolResult error too.
        pending = self.reply_to(
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
            return self.finish(pending.call_id, now, value=value)
        failure: BrokerError
        if isinstance(error, WireError):
            code = error.code or ""
            known = (
                _DECLINED.get(code)
                or _REFUSED.get(code)
                or (_BROWSER_REFUSALS.get(code) if pending.kind is CallKind.BROWSER else None)
                or (_ACTION_REFUSALS.get(code) if pending.kind is CallKind.ACTION else None)
                or (TabHeldElsewhere if pending.kind is CallKind.CLAIM else None)
            )
            # A page tool's own error is the page's text, kept as it wrote it.
            page_wrote = pending.kind is CallKind.TOOL and known is None and code not in _EXTENSION_TOOL_CODES
            text = error.message if page_wrote else self._tabs_named(link, pending, error.message)
            failure = known(text) if known else PageToolFailed(text, page_code=error.code)
        else:
            failure = PageToolFailed(error)
        return self.finish(pending.call_id, now, failure)

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
        return with_section(result, "Snapshot" if view.find is None else "Found", lines)

    def on_request_refused(self, link: Link, message: RequestRefused, now: float) -> list[Effect]:
        pending = self.reply_to(link, message.request_id, CallKind.CLOSE_TAB) if message.request_id else None
        if pending is None:
            # Never answered: an error frame for an error frame would keep two ends talking.
            logger.info("link %s: error %s: %s", link.id, message.code, message.message)
            return []
        known = _CLOSE_REFUSALS.get(message.code)
        why = f"the browser did not close tab {pending.browser}:{pending.tab_id}: {message.message}"
        failure = known(why) if known else PageToolFailed(why, page_code=message.code)
        return self.finish(pending.call_id, now, failure)
