"""What the core asks its adapter to do (effects), and the read-only views it hands out.

Effects are returned by every :class:`~broker.core.state.Broker` input; the adapter carries them
out in order. Views are frozen snapshots of a tab, a browser or a session, safe to keep.
"""

from __future__ import annotations

from typing import Any

import attrs

from .broker_messages import BrokerMessage
from .errors import BrokerError
from .messages import Tool
from .security import Client

__all__ = [
    "BrowserCallOutcome",
    "BrowserView",
    "CallId",
    "CallWaiting",
    "CloseLink",
    "Effect",
    "LinkId",
    "RejectCall",
    "ResolveCall",
    "SendToExtension",
    "SessionExpired",
    "SessionId",
    "SessionView",
    "TabView",
    "TabsChanged",
    "WindowChanged",
    "WindowOpened",
    "WindowView",
]

LinkId = int
CallId = str
SessionId = str


@attrs.frozen
class SendToExtension:
    link_id: LinkId
    message: BrokerMessage


@attrs.frozen
class ResolveCall:
    call_id: CallId
    value: Any


@attrs.frozen
class RejectCall:
    call_id: CallId
    error: BrokerError


@attrs.frozen
class CloseLink:
    link_id: LinkId
    reason: str


@attrs.frozen
class TabsChanged:
    """Tabs, their tools or their owners changed: these sessions' tool lists may need refreshing.

    ``sessions`` None: every session's (a browser came or went).
    """

    sessions: frozenset[SessionId] | None = None


@attrs.frozen
class SessionExpired:
    """A session that ends when idle went unused for the idle time and has ended."""

    session_id: SessionId
    reason: str


@attrs.frozen
class CallWaiting:
    """A call waits for the person (an approval) for up to ``up_to`` seconds; ``note`` says so.

    The call goes on; its caller may tell its client, which would otherwise see nothing happen.
    """

    call_id: CallId
    up_to: float
    note: str


Effect = SendToExtension | ResolveCall | RejectCall | CloseLink | TabsChanged | SessionExpired | CallWaiting


@attrs.frozen
class TabView:
    browser: str
    id: int
    title: str
    url: str
    tools: tuple[Tool, ...] | None
    owner: SessionId | None
    owner_name: str | None
    active: bool
    # An empty tool list from a snapshot that the page has not confirmed (see browsers.Tab).
    tools_provisional: bool = False
    # Where it is, when its extension says: its window, its place there, pinned or not.
    window_id: int | None = None
    index: int | None = None
    pinned: bool | None = None
    # Its browser's name ("Firefox", "Chromium", ...), and the same only while browsers of more
    # than one kind are connected: what labels show beside the tab then, so a client tells them apart.
    browser_name: str = ""
    kind: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.browser}:{self.id}"

    @property
    def label(self) -> str:
        """``tab b1:12``, with the browser's name while more than one kind is connected."""
        return f"tab {self.ref}" if self.kind is None else f"tab {self.ref} ({self.kind})"


@attrs.frozen
class WindowView:
    """A browser window as a session sees it: its tabs, and whether every one of them is the session's.

    ``focused``, ``state``, ``type`` and ``incognito`` are what the extension said (None when it
    did not).
    """

    browser: str
    id: int
    tabs: tuple[int, ...]
    yours: bool
    focused: bool | None = None
    state: str | None = None
    type: str | None = None
    incognito: bool | None = None


@attrs.frozen
class WindowOpened:
    """A browser-wide call's outcome: a new window, and its one tab, which the session owns."""

    window: WindowView
    tab: TabView


@attrs.frozen
class WindowChanged:
    """A browser-wide call's outcome: a window focused or closed (``done`` says which)."""

    done: str
    browser: str
    id: int


# What a browser-wide call comes to: a window opened, the windows listed, a window focused or
# closed, or the extension's own answer (history and bookmarks: ``{results}``, ``{bookmark}``).
BrowserCallOutcome = WindowOpened | list[WindowView] | WindowChanged | dict[str, Any]


@attrs.frozen
class BrowserView:
    key: str
    name: str
    version: str
    instance_id: str | None
    connected: bool
    tabs: int
    actions: tuple[str, ...] = ()
    # The person paused AI agents in this browser.
    paused: bool = False
    # What it carries out beyond tabs: windows, history, bookmarks.
    features: tuple[str, ...] = ()
    # The extension's own version (None: it did not say), and, when it is older than the broker
    # needs, what to tell the person (``outdated_extension``).
    extension_version: str | None = None
    extension_outdated: str | None = None
    # The page driver behind ``actions`` (:class:`~broker.core.messages.DriverInfo`).
    driver_name: str = ""
    driver_actions: tuple[str, ...] = ()


@attrs.frozen
class SessionView:
    id: SessionId
    name: str
    owned_tabs: tuple[str, ...]
    pending_calls: int
    # The client token's name that opened it; None for the broker's own token.
    credential: Client = None
