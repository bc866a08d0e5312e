"""The extension link's messages, as frozen attrs classes.

One class per ``type`` of the extension link protocol (docs/extension-link.md) that extensions
send, and the types both directions share; what the broker sends, and the link handshake, are
:mod:`broker.core.broker_messages`. Fields are snake_case here and camelCase on the wire; :mod:`broker.codec` does the
renaming, the ``type`` tag and all validation. ``session_id`` is optional on every message so an
extension that never sends one is served. Nothing here does I/O or knows about JSON.
"""

from __future__ import annotations

from typing import Any

import attrs

from .json_values import Arguments, JsonObject, RawJson, WireError

__all__ = [
    "ApprovalPending",
    "BrowserInfo",
    "DriverInfo",
    "Connected",
    "Disconnected",
    "ExtensionMessage",
    "PauseChanged",
    "RequestRefused",
    "PersonEndedSession",
    "PersonReleasedTab",
    "Ping",
    "Pong",
    "TabClosed",
    "TabCreated",
    "TabFocused",
    "TabInfo",
    "TabUpdated",
    "Tool",
    "ToolResult",
    "ToolsChanged",
    "ToolsDiscovered",
    "PageSnapshot",
    "WireError",
    "Arguments",
    "RawJson",
    "JsonObject",
]


@attrs.frozen
class Tool:
    """A page tool in the MCP tool shape; ``annotations`` carries WebMCP's hints unchanged.

    ``frame_origin``: the origin of the frame that declared it, for a tool of one of the tab's
    frames (its name is then ``f<frameId>_<name>``); the site it belongs to is that one.
    """

    name: str
    description: str = ""
    input_schema: JsonObject | None = None
    title: str | None = None
    annotations: JsonObject | None = None
    frame_origin: str | None = None

    def _hint(self, name: str) -> bool:
        return bool(self.annotations and self.annotations.get(name) is True)

    @property
    def destructive(self) -> bool:
        """It may change what matters (WebMCP's ``consequentialHint`` says so too)."""
        return self._hint("destructiveHint") or self._hint("consequentialHint")

    @property
    def read_only(self) -> bool:
        """It only reads; a tool that claims to read only and to destroy too destroys."""
        return self._hint("readOnlyHint") and not self.destructive

    @property
    def untrusted_content(self) -> bool:
        """Its results hold content that others wrote (``untrustedContentHint``)."""
        return self._hint("untrustedContentHint")


@attrs.frozen
class TabInfo:
    """A tab as the extension reports it; ``tools`` is None when the extension did not say."""

    id: int
    title: str = ""
    url: str = ""
    tools: tuple[Tool, ...] | None = None
    window_id: int | None = None
    active: bool | None = None
    # Its place in its window (0 = leftmost) and whether it is pinned; extensions that know
    # windows (``connected.features``) send them.
    index: int | None = None
    pinned: bool | None = None


@attrs.frozen
class BrowserInfo:
    name: str = ""
    version: str = ""
    instance_id: str | None = None


@attrs.frozen
class DriverInfo:
    """The page driver the built-in browser tools run on (``devtools`` in Chromium,
    ``webextension`` in Firefox) and the actions it carries out; empty from older extensions."""

    name: str = ""
    actions: tuple[str, ...] = ()


# Extension -> broker


@attrs.frozen
class Connected:
    """A full snapshot of the browser: every tab replaces what the broker knew of this link."""

    browser: BrowserInfo = BrowserInfo()
    tabs: tuple[TabInfo, ...] = ()
    session_id: str | None = None
    # The built-in browser actions this extension carries out (``browserAction``); none when absent.
    actions: tuple[str, ...] = ()
    # The person paused AI agents in this browser (see ``PauseChanged``).
    paused: bool = False
    # The extension's own version (its manifest's); None from extensions older than this field.
    extension_version: str | None = None
    # What it carries out beyond tabs (:mod:`broker.core.browser_wide`): "windows", "history",
    # "bookmarks", "deleteHistory", "bookmarkTree", "deleteBookmark"; none when absent, as from an
    # extension older than them.
    features: tuple[str, ...] = ()
    # The page driver behind ``actions``.
    driver: DriverInfo = DriverInfo()


@attrs.frozen
class TabCreated:
    tab: TabInfo
    request_id: str | None = None
    session_id: str | None = None
    # The tab whose page opened this one (``window.open``, a link or form with a target): a tab
    # born of a session's tab is that session's (:mod:`broker.core.links`). None: the person, or
    # the browser, opened it.
    opener_tab_id: int | None = None


@attrs.frozen
class TabUpdated:
    tab: TabInfo
    session_id: str | None = None


@attrs.frozen
class TabClosed:
    tab_id: int
    session_id: str | None = None
    # The ``closeTab`` it answers, when it answers one (the close is reported either way).
    request_id: str | None = None


@attrs.frozen
class TabFocused:
    tab_id: int
    tools: tuple[Tool, ...] | None = None
    request_id: str | None = None
    session_id: str | None = None


@attrs.frozen
class ToolsChanged:
    tab_id: int
    tools: tuple[Tool, ...]
    session_id: str | None = None


@attrs.frozen
class ToolsDiscovered:
    call_id: str
    tab_id: int
    tools: tuple[Tool, ...]
    session_id: str | None = None


@attrs.frozen
class PageSnapshot:
    """A page as the extension reports it beside a built-in action's result (a toolResult's ``page``).

    ``yaml`` is the whole snapshot (frames included), ``document`` names the document it was taken
    in (another after a navigation or reload); ``target`` and ``depth`` are what a
    ``browser_snapshot`` was limited to. The broker tells each client what it shows of it
    (:mod:`broker.core.snapshots`).
    """

    document: str
    yaml: str
    url: str = ""
    title: str = ""
    target: str | None = None
    depth: int | None = None


@attrs.frozen
class ToolResult:
    """A page tool's outcome; ``error`` is None on success, else a string or ``{code, message}``.

    ``page``: of a built-in action that reports the page, the page afterwards; the result's text
    then has no snapshot of its own, and the broker adds the one this client is to read.
    """

    call_id: str
    result: Any = None
    error: WireError | str | None = None
    session_id: str | None = None
    page: PageSnapshot | None = None


@attrs.frozen
class Ping:
    session_id: str | None = None


@attrs.frozen
class Pong:
    session_id: str | None = None


@attrs.frozen
class Disconnected:
    session_id: str | None = None


# What the person did in the browser. None of these is in the seed protocol: an extension that
# never sends them loses nothing, and the broker answers each by what it then sends or refuses.


@attrs.frozen
class PersonEndedSession:
    """The person ended an AI session from the browser: the broker ends it as a client would."""

    session_id: str


@attrs.frozen
class PersonReleasedTab:
    """The person took a tab back from the session holding it."""

    tab_id: int
    session_id: str | None = None


@attrs.frozen
class PauseChanged:
    """The person paused AI agents in this browser, or resumed them."""

    paused: bool
    session_id: str | None = None


@attrs.frozen
class ApprovalPending:
    """A call waits for the person's approval, for at most ``timeout`` seconds.

    The broker gives the call that much longer; the call's ``toolResult`` comes when the person
    has answered (``not_approved`` when they refused, closed the window or let it time out).
    """

    call_id: str
    timeout: float
    session_id: str | None = None


@attrs.frozen
class RequestRefused:
    """``error {code, message, requestId}``: the extension did not carry out the request ``requestId``
    names (a ``closeTab`` it refused, or one its page's ``beforeunload`` holds).

    Not in the seed protocol. One without a ``requestId`` the broker knows is logged, never
    answered, so two ends that each refuse the other's frames cannot start an exchange.
    """

    code: str
    message: str
    request_id: str | None = None
    session_id: str | None = None


ExtensionMessage = (
    Connected
    | TabCreated
    | TabUpdated
    | TabClosed
    | TabFocused
    | ToolsChanged
    | ToolsDiscovered
    | ToolResult
    | Ping
    | Pong
    | Disconnected
    | PersonEndedSession
    | PersonReleasedTab
    | PauseChanged
    | ApprovalPending
    | RequestRefused
)


# Broker -> extension


# The link handshake (broker.core.link_auth): who is at the other end, before anything else.
# Not part of the two unions above: the adapter answers these itself, before the hub hears the link.
