"""What the broker says to a browser about a session, and how it shows a tab. No I/O.

A browser hears of a session (its ``connect``) right before the first frame about it the broker
sends there (:meth:`Messenger.tell`); which clients' tool lists a change of a tab touches
(:meth:`Messenger.changed`); and a tab as every listing shows it (:meth:`Messenger.view`). It keeps
no state of its own: what a browser was told is the browser's (``Browser.told``), and the
sessions and browsers are the registries the :class:`~broker.core.state.Broker` hands it.
"""

from __future__ import annotations

from .broker_messages import (
    BrowserAction,
    BrowserRequest,
    CallTool,
    CloseTab,
    Connect,
    DiscoverTools,
    FocusTab,
    OpenTab,
    TabClaimed,
    TabReleased,
)
from .browsers import Browser, Browsers, Tab
from .config import Config
from .effects import Effect, SendToExtension, SessionId, TabsChanged, TabView
from .sessions import OWNER_CREDENTIAL, Session, Sessions

__all__ = ["Messenger", "SessionMessage"]

# What the broker sends about one session: its session is introduced to a browser before the first.
SessionMessage = (
    OpenTab | CloseTab | FocusTab | TabClaimed | TabReleased | CallTool | BrowserAction | BrowserRequest | DiscoverTools
)


class Messenger:
    """The frames that speak of a session to a browser, and the views of tabs; see the module docstring."""

    def __init__(self, config: Config, browsers: Browsers, sessions: Sessions) -> None:
        self._config = config
        self._browsers = browsers
        self._sessions = sessions

    def tell(self, browser: Browser, message: SessionMessage) -> list[Effect]:
        """``message`` for ``browser``, after its session's ``connect`` when the browser has not heard of it."""
        assert browser.link_id is not None
        effects: list[Effect] = []
        session = self._sessions.get(message.session_id)
        if session is not None and session.id not in browser.told:
            browser.told.add(session.id)
            effects.append(SendToExtension(browser.link_id, self.connect_message(session)))
        effects.append(SendToExtension(browser.link_id, message))
        return effects

    def changed(self, browser: Browser, tab: Tab, *also: SessionId | None) -> list[Effect]:
        """The tool lists a change of ``tab`` may touch: its owner's and ``also``'s."""
        sessions = frozenset(s for s in (tab.owner, *also) if s is not None)
        return [TabsChanged(sessions)] if sessions else []

    def view(self, browser: Browser, tab: Tab) -> TabView:
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

    def connect_message(self, session: Session) -> Connect:
        credential = OWNER_CREDENTIAL if session.credential is None else session.credential
        return Connect(self._config.server_version, session.id, session.name, credential=credential)
