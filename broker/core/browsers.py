"""The connected browsers and their tabs: the registry the core looks tabs up in.

A browser is known by a broker-made key (``b1``); a tab by the browser's own numeric id, so
``12`` names a tab when one connected browser has it and ``b1:12`` always does. Which browser a
bare id or no name at all means, and the errors when that is unclear, are decided here.
"""

from __future__ import annotations

import itertools
import logging

import attrs

from .effects import LinkId, SessionId
from .errors import (
    AmbiguousTab,
    BrowserNotFound,
    ExtensionNotConnected,
    InvalidRequest,
    TabNotFound,
    WindowNotFound,
)
from .messages import TabInfo, Tool
from .tool_names import page_tool_refusal

__all__ = ["NO_EXTENSION", "Browser", "Browsers", "Tab", "outdated_extension", "parse_ref"]

logger = logging.getLogger(__name__)

NO_EXTENSION = (
    "no browser extension is connected to the broker: load the browser-mcp extension"
    " (chrome://extensions, Developer mode, Load unpacked, the folder `browser-mcp extension path` prints)"
)


def _version_numbers(version: str) -> tuple[int, ...] | None:
    """``1.2`` as ``(1, 2, 0, 0)``: Chrome's 1 to 4 numbers, so 1.2 and 1.2.0 are one version."""
    parts = version.split(".")
    if not 1 <= len(parts) <= 4 or not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts) + (0,) * (4 - len(parts))


def outdated_extension(version: str | None, minimum: str) -> str | None:
    """What to tell the person of an extension older than ``minimum``; None when it is not.

    ``version`` is what the extension said (``connected.extensionVersion``): None when it said
    nothing, as extensions from before that field do, which makes it older than any minimum.
    """
    needed = _version_numbers(minimum) if minimum else None
    if needed is None:
        return None
    said = _version_numbers(version) if version is not None else None
    if said is not None and said >= needed:
        return None
    which = f"is {version}" if version is not None else "does not say its version (it predates that)"
    return (
        f"the browser extension {which}; this broker needs {minimum} or newer: load the extension from the"
        " folder `browser-mcp extension path` prints (or update it from the store) and reload it at"
        " chrome://extensions"
    )


@attrs.define
class Tab:
    id: int
    title: str = ""
    url: str = ""
    tools: tuple[Tool, ...] | None = None
    owner: SessionId | None = None
    # Whether the page itself said what tools it has (toolsChanged, or an answer to
    # discoverTools). A snapshot's empty list may only mean nobody asked the page yet: the
    # original protocol's extensions announce every new tab with "tools": [].
    tools_confirmed: bool = False
    # Where it is: its window, its place there (0 = leftmost), pinned or not; None when unsaid.
    window_id: int | None = None
    index: int | None = None
    pinned: bool | None = None
    # Its place in the order its browser announced tabs (:meth:`Browser.heard_of`): a tab heard
    # of after an ``openTab`` was sent is the one it opened, whatever answered it.
    heard: int = 0

    def update(self, info: TabInfo) -> None:
        # An empty list an extension repeats for the page it is still on says nothing new: the
        # original protocol's extensions announce every tab with "tools": [] whatever they were asked.
        repeated_nothing = info.tools == () and self.tools_confirmed and info.url == self.url
        self.title = info.title
        self.url = info.url
        # A report that leaves out where the tab is (an extension of the original protocol)
        # leaves what was known.
        if info.window_id is not None:
            self.window_id = info.window_id
        if info.index is not None:
            self.index = info.index
        if info.pinned is not None:
            self.pinned = info.pinned
        if info.tools is not None and not repeated_nothing:
            self.tools = self._named(info.tools)
            self.tools_confirmed = False

    def set_tools(self, tools: tuple[Tool, ...]) -> None:
        """The page's own word on its tools."""
        self.tools = self._named(tools)
        self.tools_confirmed = True

    def _named(self, tools: tuple[Tool, ...]) -> tuple[Tool, ...]:
        """``tools`` but those whose names could pose as the broker's own (an extension that does
        not check them as ours does), which are left out, saying why."""
        kept = tuple(tool for tool in tools if page_tool_refusal(tool.name) is None)
        if len(kept) < len(tools):
            for tool in tools:
                if (why := page_tool_refusal(tool.name)) is not None:
                    logger.info("tab %s: the page tool %r is left out: %s", self.id, tool.name[:200], why)
        return kept

    @property
    def tools_provisional(self) -> bool:
        """Its tools are an empty list nobody has checked with the page: ask before answering."""
        return self.tools == () and not self.tools_confirmed


@attrs.define
class Browser:
    key: str
    link_id: LinkId | None
    name: str = ""
    version: str = ""
    instance_id: str | None = None
    # The extension's own version, as it said (None: it did not), and whether a snapshot said it yet.
    extension_version: str | None = None
    extension_heard: bool = False
    tabs: dict[int, Tab] = attrs.Factory(dict)
    active_tab: int | None = None
    attached_seq: int = 0
    detached_at: float | None = None
    # Until its first message a link may be a probe that goes away again: no one is shown it.
    heard_from: bool = False
    # The built-in browser actions its extension said it carries out.
    actions: frozenset[str] = frozenset()
    # The person paused AI agents in it: calls are refused here, before they reach the browser.
    paused: bool = False
    # What it carries out beyond tabs: "windows", "history", "bookmarks", ... (browser_wide.REQUESTS).
    features: frozenset[str] = frozenset()
    # The page driver its built-in tools run on, and what that driver carries out.
    driver_name: str = ""
    driver_actions: frozenset[str] = frozenset()
    # The live sessions it was told of (``connect``): those that opened, claimed or acted on
    # something in it. Only these may it name, and only these hear of it ending.
    told: set[SessionId] = attrs.Factory(set)
    # How many tabs it has announced so far, each a number in that order (:attr:`Tab.heard`).
    tabs_heard: int = 0

    def heard_of(self, tab: Tab) -> None:
        """Number a tab new to the broker after every tab announced before it."""
        self.tabs_heard += 1
        tab.heard = self.tabs_heard

    def window_tabs(self, window_id: int) -> list[Tab]:
        """The tabs known to be in one of its windows, left to right."""
        tabs = [tab for tab in self.tabs.values() if tab.window_id == window_id]
        return sorted(tabs, key=lambda tab: (tab.index is None, tab.index or 0, tab.id))


class Browsers(dict[str, Browser]):
    """Every browser known by key, the ones whose link was lost included (for their grace time)."""

    def __init__(self) -> None:
        super().__init__()
        self._keys = itertools.count(1)
        self._attach_seq = itertools.count(1)

    def add(self, link_id: LinkId) -> Browser:
        browser = Browser(key=f"b{next(self._keys)}", link_id=link_id, attached_seq=next(self._attach_seq))
        self[browser.key] = browser
        return browser

    def reattach(self, browser: Browser, link_id: LinkId) -> None:
        """A browser seen before is back on a new link: it is again the last to connect."""
        browser.link_id = link_id
        browser.detached_at = None
        browser.attached_seq = next(self._attach_seq)

    def attached(self) -> list[Browser]:
        return [b for b in self.values() if b.link_id is not None and b.heard_from]

    def pick(self, key: str | None) -> Browser:
        attached = self.attached()
        if not attached:
            raise ExtensionNotConnected(NO_EXTENSION)
        if key is None:
            return max(attached, key=lambda b: b.attached_seq)
        for browser in attached:
            if key in (browser.key, browser.instance_id):
                return browser
        raise BrowserNotFound(f"no connected browser {key!r} (connected: {', '.join(b.key for b in attached)})")

    def resolve(self, ref: str | int) -> tuple[Browser, Tab]:
        attached = self.attached()
        if not attached:
            raise ExtensionNotConnected(NO_EXTENSION)
        browser_key, tab_id = parse_ref(ref)
        if browser_key is not None:
            browser = self.pick(browser_key)
            tab = browser.tabs.get(tab_id)
            if tab is None:
                raise TabNotFound(f"browser {browser.key} has no tab {tab_id}")
            return browser, tab
        found = [(b, b.tabs[tab_id]) for b in attached if tab_id in b.tabs]
        if not found:
            raise TabNotFound(f"no tab {tab_id} in any connected browser")
        if len(found) > 1:
            choices = ", ".join(f"{b.key}:{tab_id}" for b, _ in found)
            raise AmbiguousTab(f"tab id {tab_id} exists in several browsers; name one of {choices}")
        return found[0]

    def kinds_differ(self) -> bool:
        """Connected browsers of more than one kind (Chromium and Firefox): tabs then say which."""
        return len({b.name for b in self.attached()}) > 1

    def shared_tab_ids(self) -> frozenset[int]:
        """Tab ids that more than one connected browser has: these need ``<browser>:<id>``."""
        seen: set[int] = set()
        shared: set[int] = set()
        for browser in self.attached():
            shared |= seen & browser.tabs.keys()
            seen |= browser.tabs.keys()
        return frozenset(shared)


_MAX_ID_DIGITS = 16  # JavaScript's safe integers have at most 16 digits


def parse_ref(ref: str | int, what: str = "tab") -> tuple[str | None, int]:
    """A tab (or window) as its caller named it: ``12`` or ``b1:12`` -> (browser key or None, id).

    Raises:
        InvalidRequest: it is not a number or <browser>:<number>.
        TabNotFound, WindowNotFound: a number longer than any id a browser has.
    """
    if isinstance(ref, int) and not isinstance(ref, bool):
        return None, ref
    if isinstance(ref, str):
        browser, _, tab = ref.rpartition(":")
        digits = tab.removeprefix("-")
        # Decimal digits, which int() reads (not ² or ⑧, which isdigit() takes); and not so many
        # that int() refuses them.
        if digits.isdecimal():
            if len(digits.lstrip("0")) > _MAX_ID_DIGITS:
                missing = WindowNotFound if what == "window" else TabNotFound
                raise missing(f"no {what} {tab[:24]}{'...' if len(tab) > 24 else ''}: no browser has ids that long")
            return browser or None, int(tab)
    raise InvalidRequest(f"{ref!r} is not a {what} id: use a number, or <browser>:<number> such as b1:12")
