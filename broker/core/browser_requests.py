"""What sessions ask of a browser itself, beyond its tabs: its windows, history and bookmarks. No I/O.

The rules, decided here where the owner of every tab is known, so the extension only reports and
carries out:

- A browser is asked only for what its extension announced (``connected.features``); an older
  extension's browser answers ``not_supported`` without anything being sent.
- A window is focused, resized or closed only by the session that owns every tab in it: a window holding
  one of the person's tabs, or another session's, is refused with ``window_not_owned``, naming
  those tabs. A window is known by the tabs its browser reported in it (``windowId``).
- A tab may be opened in a window holding no other session's tab (the person's are fine): so no
  client can put a tab of its own in another's window and keep it from closing it.
- A paused browser is asked nothing, as for tabs.
- History and bookmarks are the person's: whether they share them is their switch in the
  extension, which answers ``consent_required`` while it is off (:mod:`.links` maps it).

The tools and their arguments are :mod:`.browser_wide`'s; opening a window is opening a tab
(:meth:`~broker.core.state.Broker.open_tab` with ``new_window``), so its tab is owned alike.
:class:`BrowserRequests` keeps no state of its own: windows are known by their tabs in the
browsers' registry, and a request is a call in :class:`~broker.core.link_calls.LinkCalls`.
"""

from __future__ import annotations

from typing import Any

from .broker_messages import BrowserRequest
from .browser_wide import REQUESTS, WideCall
from .browsers import NO_EXTENSION, Browser, Browsers, Tab, parse_ref
from .effects import CallId, Effect, SessionId, WindowView
from .errors import AmbiguousTab, ExtensionNotConnected, NotSupported, PageToolFailed, WindowNotFound, WindowNotOwned
from .link_calls import LinkCalls
from .messenger import Messenger
from .pending import CallKind
from .person import PersonInCharge, check_paused
from .sessions import Session, Sessions

__all__ = ["BrowserRequests"]

# How many of a window's foreign tabs a refusal names.
_NAMED_TABS = 4


class BrowserRequests:
    """The windows, history and bookmarks part of the Broker's rules; see the module docstring."""

    def __init__(
        self, browsers: Browsers, sessions: Sessions, calls: LinkCalls, person: PersonInCharge, messenger: Messenger
    ) -> None:
        self._browsers = browsers
        self._sessions = sessions
        self._calls = calls
        self._person = person
        self._messenger = messenger

    def browser_features(self) -> frozenset[str]:
        """What some connected browser carries out beyond tabs: windows, history, bookmarks."""
        features: frozenset[str] = frozenset()
        for browser in self._browsers.attached():
            features |= browser.features
        return features

    def browser_request(
        self, session: Session, call: WideCall, now: float, timeout: float | None = None
    ) -> tuple[str, CallId, list[Effect]]:
        """Ask a browser for ``call`` (not ``createWindow``, which is ``open_tab``); returns its key too.

        Raises:
            TooManyCalls, ExtensionNotConnected, BrowserNotFound, WindowNotFound,
            AmbiguousTab (a window id several browsers have), WindowNotOwned, Paused, NotSupported,
            TabBusy (a tab of the window to focus or close has a call waiting for the person).
        """
        args = call.args
        if call.window is None:
            browser = self._browsers.pick(call.browser)
        else:
            browser, window_id = self._resolve_window(call.window, call.browser)
            checked = self.check_window_yours(session, browser, window_id, call.request.removesuffix("Window"))
            for tab in checked:
                self._person.check_not_busy(browser, tab, f"{call.request.removesuffix('Window')} the window of")
            args = {**args, "windowId": window_id}
            if call.request == "closeWindow":
                # The tabs checked: a tab that reaches the window before it closes keeps it open.
                args["tabIds"] = sorted(tab.id for tab in checked)
        check_paused(browser)
        self.check_feature(browser, REQUESTS[call.request])
        pending = self._calls.add(session, browser, CallKind.BROWSER, now, timeout, tool_name=call.request)
        message = BrowserRequest(session.id, pending.call_id, call.request, args)
        return browser.key, pending.call_id, self._messenger.tell(browser, message)

    def describe_windows(self, session_id: SessionId, browser_key: str, answer: Any) -> list[WindowView]:
        """The windows a ``listWindows`` answer names, with their tabs as the broker knows them.

        The extension's word is taken for what a window is (focused, state, type); which tabs it
        holds and whose they are come from the broker's own records, the ones a focus or close
        is checked against.

        Raises:
            PageToolFailed: the answer is not ``{"windows": [{"id": ...}, ...]}``.
        """
        windows = answer.get("windows") if isinstance(answer, dict) else None
        if not isinstance(windows, list):
            raise PageToolFailed("the extension's list of windows is not {windows: [...]}")
        browser = self._browsers.get(browser_key)
        views = []
        for window in windows:
            if not isinstance(window, dict) or isinstance(window.get("id"), bool) or not isinstance(window["id"], int):
                continue
            tabs = browser.window_tabs(window["id"]) if browser is not None else []
            views.append(
                WindowView(
                    browser_key,
                    window["id"],
                    tuple(tab.id for tab in tabs),
                    bool(tabs) and all(tab.owner == session_id for tab in tabs),
                    _optional(window, "focused", bool),
                    _optional(window, "state", str),
                    _optional(window, "type", str),
                    _optional(window, "incognito", bool),
                )
            )
        return views

    def check_feature(self, browser: Browser, feature: str) -> None:
        """Raises: NotSupported, when the browser's extension did not announce ``feature``."""
        if feature not in browser.features:
            raise NotSupported(
                f"browser {browser.key} ({browser.name or 'unnamed'}) cannot do that: its extension does not offer"
                f" {feature}; load the current browser-mcp extension"
            )

    def check_window_open_to(self, session: Session, browser: Browser, window_id: int) -> None:
        """A tab may be opened in a window that holds no other session's tab.

        Raises: WindowNotFound, WindowNotOwned.
        """
        tabs = self._window_tabs(browser, window_id)
        others = [tab for tab in tabs if tab.owner not in (None, session.id)]
        if others:
            raise WindowNotOwned(
                f"cannot open a tab in window {browser.key}:{window_id}: it holds {self._whose(browser, others)};"
                " open it in a window of your own (browser_windows action=create) or the person's"
            )

    def check_window_yours(self, session: Session, browser: Browser, window_id: int, action: str) -> list[Tab]:
        """The window's tabs, every one the session's.

        Raises: WindowNotFound, WindowNotOwned (a tab in it is the person's or another session's).
        """
        tabs = self._window_tabs(browser, window_id)
        others = [tab for tab in tabs if tab.owner != session.id]
        if others:
            raise WindowNotOwned(
                f"cannot {action} window {browser.key}:{window_id}: it holds {self._whose(browser, others)};"
                " only a window whose every tab is yours can be focused, resized or closed"
                " (browser_windows action=create opens one)"
            )
        return tabs

    def _window_tabs(self, browser: Browser, window_id: int) -> list[Tab]:
        tabs = browser.window_tabs(window_id)
        if not tabs:
            known = sorted({tab.window_id for tab in browser.tabs.values() if tab.window_id is not None})
            raise WindowNotFound(
                f"browser {browser.key} has no window {window_id}"
                f" (its windows: {', '.join(map(str, known)) or 'none reported'}; see browser_windows action=list)"
            )
        return tabs

    def _resolve_window(self, ref: str | int, browser_key: str | None) -> tuple[Browser, int]:
        """The browser and window ``ref`` names (``7`` or ``b2:7``); ``browser_key`` chooses too.

        Raises: ExtensionNotConnected, BrowserNotFound, WindowNotFound, AmbiguousTab, InvalidRequest.
        """
        named, window_id = parse_ref(ref, "window")
        if named is not None or browser_key is not None:
            browser = self._browsers.pick(named or browser_key)
            self._window_tabs(browser, window_id)
            return browser, window_id
        attached = self._browsers.attached()
        if not attached:
            raise ExtensionNotConnected(NO_EXTENSION)
        found = [b for b in attached if b.window_tabs(window_id)]
        if not found:
            raise WindowNotFound(f"no window {window_id} in any connected browser (see browser_windows action=list)")
        if len(found) > 1:
            choices = ", ".join(f"{b.key}:{window_id}" for b in found)
            raise AmbiguousTab(f"window id {window_id} exists in several browsers; name one of {choices}")
        return found[0], window_id

    def _whose(self, browser: Browser, tabs: list[Tab]) -> str:
        """The tabs named with their owners: "the person's tab b1:12 (Inbox), tab b1:14 of session 'A'"."""
        named = []
        for tab in tabs[:_NAMED_TABS]:
            title = f" ({tab.title[:40]})" if tab.title else ""
            if tab.owner is None:
                named.append(f"the person's tab {browser.key}:{tab.id}{title}")
            else:
                owner = self._sessions.get(tab.owner)
                named.append(f"tab {browser.key}:{tab.id}{title} of session {owner.name if owner else tab.owner!r}")
        more = len(tabs) - _NAMED_TABS
        return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def _optional(window: dict[str, Any], key: str, kind: type) -> Any:
    value = window.get(key)
    return value if isinstance(value, kind) else None
