"""Whose each tab is: claims, releases, a session's current tab, who may act where, and the listings.

A tab nobody claimed is the person's. A session claims it first, which puts it in the session's
tab group where the person sees it; only then may the session act in it (call its tools, act,
close or focus it). A claim of a browser that answers claims waits for its answer, and another
broker's session holding the tab there undoes it.

:class:`TabOwners` keeps no state of its own: whose a tab is is the tab's (``Tab.owner``) and a
session's current tab the session's, in the registries the :class:`~broker.core.state.Broker`
hands it, which resolves the session that asks (or raises ``SessionEnded``) before it asks here.
"""

from __future__ import annotations

from .broker_messages import FocusTab, TabClaimed, TabReleased
from .browsers import Browser, Browsers, Tab, outdated_extension
from .config import Config
from .effects import BrowserView, CallId, Effect, SessionId, SessionView, TabView
from .errors import TabNotClaimed, TabOwnedByOther
from .link_calls import LinkCalls
from .links import CLAIMS
from .messages import Tool
from .messenger import Messenger
from .pending import CallKind
from .person import PersonInCharge, check_paused, taken_back
from .sessions import Session, Sessions

__all__ = ["TabOwners"]


class TabOwners:
    """The tabs' owners and the listings every client reads; see the module docstring."""

    def __init__(
        self,
        config: Config,
        browsers: Browsers,
        sessions: Sessions,
        calls: LinkCalls,
        person: PersonInCharge,
        messenger: Messenger,
    ) -> None:
        self._config = config
        self._browsers = browsers
        self._sessions = sessions
        self._calls = calls
        self._person = person
        self._messenger = messenger

    def claim_tab(self, session: Session, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Make a tab the session's own.

        Raises:
            ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabBusy.
        """
        view, effects, _ = self._set_owner(session, tab_ref, "claim", session.id)
        return view, effects

    def ask_claim(
        self, session: Session, tab_ref: str | int, now: float
    ) -> tuple[TabView, CallId | None, list[Effect]]:
        """:meth:`claim_tab`, asking a browser that answers claims (``claims`` in its features):
        the call returned ends with its answer, and a refusal (another broker's session holds the
        tab there) undoes the claim. None when nothing is asked.

        Raises:
            ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabBusy,
            TooManyCalls, RateLimited.
        """
        view, effects, asked = self._set_owner(session, tab_ref, "claim", session.id, asked_at=now)
        return view, asked, effects

    def release_tab(self, session: Session, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Give a tab back to the person.

        Raises:
            ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabBusy.
        """
        view, effects, _ = self._set_owner(session, tab_ref, "release", None)
        return view, effects

    def focus_tab(self, session: Session, tab_ref: str | int) -> tuple[TabView, list[Effect]]:
        """Bring a tab the session owns to the front, and make it the session's current tab.

        Raises:
            ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther,
            TabNotClaimed, Paused, TabBusy.
        """
        browser, tab = self._browsers.resolve(tab_ref)
        self.check_yours(session, browser, tab, "focus")
        check_paused(browser)
        self._person.check_not_busy(browser, tab, "focus")
        session.current = (browser.key, tab.id)
        return self._messenger.view(browser, tab), self._messenger.tell(browser, FocusTab(session.id, tab.id))

    def select_tab(self, session: Session, tab_ref: str | int) -> TabView:
        """Make a tab the session owns its current tab, the one built-in tools act on when none is
        named; unlike :meth:`focus_tab` the browser's front tab stays the person's choice.

        Raises:
            ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabNotClaimed.
        """
        browser, tab = self._browsers.resolve(tab_ref)
        self.check_yours(session, browser, tab, "select")
        session.current = (browser.key, tab.id)
        return self._messenger.view(browser, tab)

    def own_tabs(self, session: Session) -> tuple[list[TabView], TabView | None]:
        """The tabs the session owns, in the browsers' order, and its current tab when it has one open."""
        owned = [
            self._messenger.view(browser, tab)
            for browser in self._browsers.attached()
            for tab in browser.tabs.values()
            if tab.owner == session.id
        ]
        current = next((v for v in owned if (v.browser, v.id) == session.current), None)
        return owned, current

    def session_tools(self, session: Session) -> list[tuple[TabView, Tool]]:
        """The page tools a session sees: those of the tabs it owns, the only ones it may call."""
        seen: list[tuple[TabView, Tool]] = []
        for browser in self._browsers.attached():
            for tab in browser.tabs.values():
                if tab.owner == session.id and tab.tools:
                    view = self._messenger.view(browser, tab)
                    seen += [(view, t) for t in tab.tools]
        return seen

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

    def check_yours(self, session: Session, browser: Browser, tab: Tab, action: str) -> None:
        """Acting on a tab (calling its tools, acting in it, closing or focusing it) is for its owner.

        A tab nobody claimed is the person's: a session claims it first, which puts it in the
        session's tab group where the person sees it, so nothing is done to it unseen.
        """
        self._check_owner(session, browser, tab, action)
        if tab.owner is None:
            ref = f"{browser.key}:{tab.id}"
            raise TabNotClaimed(
                f"cannot {action} tab {ref}: it is the person's, not yours: claim it first (MCP: `tabs` with"
                f" action=claim; REST: POST /tabs/{ref}/claim; CLI: browser-mcp claim {ref}), which puts it in"
                " your tab group where the person can see it." + taken_back(session, browser, tab)
            )

    def _set_owner(
        self,
        session: Session,
        tab_ref: str | int,
        action: str,
        owner: SessionId | None,
        asked_at: float | None = None,
    ) -> tuple[TabView, list[Effect], CallId | None]:
        browser, tab = self._browsers.resolve(tab_ref)
        self._check_owner(session, browser, tab, action)
        self._person.check_not_busy(browser, tab, action, but_for=session.id)
        asked = None
        if asked_at is not None and owner is not None and tab.owner != owner and CLAIMS in browser.features:
            asked = self._calls.add(session, browser, CallKind.CLAIM, asked_at, None, tab.id).call_id
        if owner is not None:
            session.current = (browser.key, tab.id)
            session.taken_back.discard((browser.key, tab.id))
        elif session.current == (browser.key, tab.id):
            session.current = None
        if tab.owner == owner:
            return self._messenger.view(browser, tab), [], None
        previous, tab.owner = tab.owner, owner
        change = TabClaimed(session.id, tab.id, asked) if owner else TabReleased(session.id, tab.id)
        return (
            self._messenger.view(browser, tab),
            [*self._messenger.tell(browser, change), *self._messenger.changed(browser, tab, previous)],
            asked,
        )

    # What every client reads

    def tabs(self) -> list[TabView]:
        return [
            self._messenger.view(browser, tab) for browser in self._browsers.attached() for tab in browser.tabs.values()
        ]

    def tab(self, tab_ref: str | int) -> TabView:
        """Raises: ExtensionNotConnected, TabNotFound, AmbiguousTab."""
        return self._messenger.view(*self._browsers.resolve(tab_ref))

    def shared_tab_ids(self) -> frozenset[int]:
        """Tab ids that more than one connected browser has: these need ``<browser>:<id>``."""
        return self._browsers.shared_tab_ids()

    def browsers(self) -> list[BrowserView]:
        return [
            BrowserView(
                b.key,
                b.name,
                b.version,
                b.instance_id,
                b.link_id is not None,
                len(b.tabs),
                tuple(sorted(b.actions)),
                b.paused,
                tuple(sorted(b.features)),
                b.extension_version,
                outdated_extension(b.extension_version, self._config.min_extension_version),
                b.driver_name,
                tuple(sorted(b.driver_actions)),
            )
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
            SessionView(s.id, s.name, tuple(owned.get(s.id, ())), self._calls.pending.count_of(s.id), s.credential)
            for s in self._sessions.values()
        ]
