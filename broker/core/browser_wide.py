"""Browser-wide tools: windows, history and bookmarks, what a call to one asks, and of which browser.

Beyond its tabs' pages a browser has windows, and the person's own records: the history of what
they visited and their bookmarks. Three MCP tools reach them (REST and the command line take the
same checks through :func:`windows_call`, :func:`history_call` and :func:`bookmarks_call`):

- ``browser_windows {action: list|create|focus|close, windowId?, url?, browser?}``;
- ``browser_history_search {query, maxResults?, startTime?, browser?}``;
- ``browser_history_delete {url? | startTime, endTime; browser?}``;
- ``browser_bookmarks {action: search|create|tree|delete, query?, url?, title?, folderId?, id?,
  recursive?, maxResults?, browser?}``.

Deleting history is a tool of its own rather than an action of ``browser_history_search``, which
clients may trust as read-only (its annotation says so) and run unasked; ``browser_bookmarks``
already changes things (create), so reading the tree and deleting are more of its actions. The
arguments of those three are :mod:`.records`' to check.

Three more keep Playwright MCP's names and arguments, over the client's own tabs
(:data:`TAB_TOOLS`), listed while a browser carries out the built-in browser tools:
``browser_tabs {action: list|new|close|select, index?, url?}`` (``openTab``, ``closeTab``, and the
session's current tab), ``browser_close`` (its current tab) and ``browser_resize {width, height}``
(a ``resizeWindow`` request for the current tab's window, whose every tab must be the client's).

Each becomes one :class:`WideCall`: a ``browserRequest`` to an extension whose
``connected.features`` has the request's feature, except ``create``, which is ``openTab`` with
``newWindow`` so its tab is the client's own exactly as ``tabs`` ``open`` makes it. Which windows
a session may focus or close is :mod:`broker.core.browser_requests`' to decide; whether the person
shares their history and bookmarks is the extension's, which holds their switch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import attrs

from . import records
from .arguments import page_url, result_count
from .browser_tools import listing
from .browsers import parse_ref
from .effects import WindowChanged
from .errors import InvalidRequest, PageToolFailed
from .messages import JsonObject
from .records import BOOKMARK_TREE, DELETE_BOOKMARK, DELETE_HISTORY, epoch_ms

__all__ = [
    "CREATE_WINDOW",
    "LIST_WINDOWS",
    "RESIZE_WINDOW",
    "FEATURES",
    "REQUESTS",
    "TOOLS",
    "WideCall",
    "WideTool",
    "answer_of",
    "bookmark_deletion_call",
    "bookmark_tree_call",
    "bookmarks_call",
    "TAB_TOOLS",
    "TabsCall",
    "call_of",
    "history_call",
    "history_deletion_call",
    "resize_call",
    "tab_at",
    "tab_tool_definitions",
    "tabs_call",
    "tool_definitions",
    "windows_call",
]

LIST_WINDOWS = "listWindows"
# browserRequest's `request` -> the feature an extension announces for it.
REQUESTS = {
    LIST_WINDOWS: "windows",
    "focusWindow": "windows",
    "closeWindow": "windows",
    "searchHistory": "history",
    "searchBookmarks": "bookmarks",
    "createBookmark": "bookmarks",
    "resizeWindow": "windows",
    # Each its own feature, so a browser whose extension came before them answers not_supported.
    DELETE_HISTORY: DELETE_HISTORY,
    BOOKMARK_TREE: BOOKMARK_TREE,
    DELETE_BOOKMARK: DELETE_BOOKMARK,
}
# Not a browserRequest: an openTab in a new window (see the module docstring).
CREATE_WINDOW = "createWindow"
RESIZE_WINDOW = "resizeWindow"
FEATURES = frozenset(REQUESTS.values())

MAX_RESULTS = 200
DEFAULT_RESULTS = 20

_BROWSER = {"type": "string", "description": "which connected browser (b1, b2...; default: the last to connect)"}
_WINDOW = {
    "type": ["integer", "string"],
    "description": "a window id from action=list (7, or b2:7 when several browsers are connected)",
}
_RECORD_NOTE = (
    " Results: title, url, time (ISO 8601). The person's private record: off until they turn sharing on"
    " in the extension's options (the error says where)."
)
_DELETION_NOTE = " Each deletion, which cannot be undone, waits for the person's approval (else not_approved)."
_MOMENT = "ISO 8601 (2026-05-01T09:00:00Z) or milliseconds since 1970"


@attrs.frozen(eq=False)
class WideTool:
    """One browser-wide tool, declared once: its MCP listing and which browsers list it.

    ``feature`` is what a connected browser announces in ``connected.features`` for the tool to be
    listed; None for the tab tools, listed with any browser that carries out the built-in browser
    tools. Its ``group`` is Playwright MCP's for the tools it shares (``core-tabs``: browser_tabs).
    """

    name: str
    title: str
    description: str
    parameters: JsonObject
    feature: str | None
    read_only: bool = False
    # It may delete the person's records: each deletion waits for their approval.
    destructive: bool = False
    group: str = "core"

    def definition(self) -> JsonObject:
        """The MCP tool, in wire form: it acts on the browser, not on pages of the web."""
        return listing(self, open_world=False)


def _by_name(*tools: WideTool) -> Mapping[str, WideTool]:
    return {tool.name: tool for tool in tools}


TOOLS: Mapping[str, WideTool] = _by_name(
    WideTool(
        "browser_windows",
        "Browser windows",
        "The browser's windows. action=list shows each window with its tabs' ids and whether every tab in it"
        " is yours; create opens a new window (with `url`, as a tab you own); focus brings a window to the"
        " front and close closes it, only for a window whose every tab is yours.",
        {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "create", "focus", "close"]},
                "windowId": _WINDOW,
                "url": {"type": "string", "description": "for create: the page its tab opens (default about:blank)"},
                "browser": _BROWSER,
            },
            "required": ["action"],
        },
        feature="windows",
    ),
    WideTool(
        "browser_history_search",
        "Search history",
        "Search the pages the person visited, by words of their title or address (empty: the latest)." + _RECORD_NOTE,
        {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "maxResults": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "description": "default 20"},
                "startTime": {
                    "type": ["string", "number"],
                    "description": "only visits since then: ISO 8601 (2026-05-01T09:00:00Z), or milliseconds"
                    " since 1970; default: all of the history",
                },
                "browser": _BROWSER,
            },
            "required": ["query"],
        },
        read_only=True,
        feature="history",
    ),
    WideTool(
        "browser_history_delete",
        "Delete history",
        "Delete from the person's history every visit of one page (`url`, whole, as browser_history_search"
        " shows it), or every visit between `startTime` and `endTime` (both needed)."
        + _DELETION_NOTE
        + _RECORD_NOTE.replace(" Results are title, url and time (ISO 8601).", ""),
        {
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "delete every visit of this address"},
                "startTime": {"type": ["string", "number"], "description": f"range start: {_MOMENT}"},
                "endTime": {"type": ["string", "number"], "description": f"range end, after the start: {_MOMENT}"},
                "browser": _BROWSER,
            },
        },
        feature=DELETE_HISTORY,
        destructive=True,
    ),
    WideTool(
        "browser_bookmarks",
        "Bookmarks",
        "The person's bookmarks: action=search by words of title or address; create (`url`, `title`); tree"
        " lists bookmarks and folders with `id`, `parentId`, `depth` (under `folderId`, upper levels first);"
        " delete the bookmark or empty folder `id` (a full one with `recursive: true`)."
        + _DELETION_NOTE
        + _RECORD_NOTE,
        {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["search", "create", "tree", "delete"]},
                "query": {"type": "string", "description": "for search"},
                "url": {"type": "string", "description": "for create"},
                "title": {"type": "string", "description": "for create (default: the url)"},
                "folderId": {
                    "type": ["string", "integer"],
                    "description": "for tree: the folder to list (default: all)",
                },
                "maxResults": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": records.MAX_TREE,
                    "description": "for tree: default 200",
                },
                "id": {"type": ["string", "integer"], "description": "for delete: the bookmark's or folder's id"},
                "recursive": {"type": "boolean", "description": "for delete: a folder with everything in it"},
                "browser": _BROWSER,
            },
            "required": ["action"],
        },
        feature="bookmarks",
        destructive=True,
    ),
)


# A window's size in CSS pixels: smaller is no window to work in, larger no screen shows.
MIN_WINDOW_SIZE = 200
MAX_WINDOW_SIZE = 10_000

TAB_TOOLS: Mapping[str, WideTool] = _by_name(
    WideTool(
        "browser_tabs",
        "Manage tabs",
        "List, create, close or select your tabs (opened or claimed by you, or by their pages), by `index`"
        " from 0. new opens `url` behind the person's tab as your current tab; close closes the tab at"
        " `index` (default: your current one); select makes it your current tab, the one browser_* tools"
        " act on, leaving the person's tab in front.",
        {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "new", "close", "select"]},
                "index": {"type": "integer", "minimum": 0, "description": "for close and select: from action=list"},
                "url": {"type": "string", "description": "for new: the page to open"},
            },
            "required": ["action"],
        },
        feature=None,
        group="core-tabs",
    ),
    WideTool(
        "browser_close",
        "Close tab",
        "Close your current tab, the one browser_* tools act on.",
        {"type": "object", "properties": {}},
        feature=None,
    ),
    WideTool(
        "browser_resize",
        "Resize browser window",
        "Resize the window of your current tab, in CSS pixels (the page's viewport shrinks or grows with it);"
        " only a window whose every tab is yours (browser_windows action=create opens one).",
        {
            "type": "object",
            "properties": {
                "width": {"type": "number", "minimum": MIN_WINDOW_SIZE, "maximum": MAX_WINDOW_SIZE},
                "height": {"type": "number", "minimum": MIN_WINDOW_SIZE, "maximum": MAX_WINDOW_SIZE},
            },
            "required": ["width", "height"],
        },
        feature="windows",
    ),
)


@attrs.frozen
class TabsCall:
    """A ``browser_tabs`` call, checked: ``index`` None means the current tab (close) or is unused."""

    action: str
    index: int | None = None
    url: str = "about:blank"


@attrs.frozen
class WideCall:
    """A browser-wide tool call, checked: what to ask (``request`` and its wire ``args``) of which browser.

    ``window`` is the window a focus or close names, as its caller did; ``url`` the page a new
    window opens.
    """

    request: str
    args: JsonObject = attrs.Factory(dict)
    browser: str | None = None
    window: str | int | None = None
    url: str | None = None


def tool_definitions(features: frozenset[str]) -> list[JsonObject]:
    """The MCP tools, in wire form, for the features some connected browser has."""
    return [tool.definition() for tool in TOOLS.values() if tool.feature in features]


def tab_tool_definitions(features: frozenset[str]) -> list[JsonObject]:
    """Playwright MCP's tab tools, in wire form, for a browser that carries out built-in browser tools
    and has ``features``."""
    return [tool.definition() for tool in TAB_TOOLS.values() if tool.feature is None or tool.feature in features]


def tabs_call(args: JsonObject) -> TabsCall:
    """Raises: InvalidRequest."""
    action, index, url = args.get("action"), args.get("index"), args.get("url")
    if action not in ("list", "new", "close", "select"):
        raise InvalidRequest("`action` must be one of list, new, close, select")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise InvalidRequest(f"`index` must be a whole number from 0, as browser_tabs action=list shows; got {index!r}")
    if action == "select" and index is None:
        raise InvalidRequest("action=select needs `index`: the tab's number from browser_tabs action=list")
    if action != "new":
        return TabsCall(action, index)
    if url is not None and (not isinstance(url, str) or not url):
        raise InvalidRequest("`url` of a new tab must be a non-empty string, such as https://example.com/")
    return TabsCall(action, url=page_url(url or "about:blank"))


_Tab = TypeVar("_Tab")


def tab_at(tabs: Sequence[_Tab], index: int) -> _Tab:
    """The session's tab numbered ``index`` as browser_tabs action=list numbers them.

    Raises:
        InvalidRequest: an index past the session's tabs.
    """
    if index >= len(tabs):
        have = f"0 to {len(tabs) - 1}" if tabs else "none: browser_tabs action=new opens one"
        raise InvalidRequest(f"no tab at index {index}: your tabs are numbered {have} (browser_tabs action=list)")
    return tabs[index]


def resize_call(width: Any, height: Any) -> WideCall:
    """A ``resizeWindow`` for the session's current tab's window, which the hub names.

    Raises:
        InvalidRequest: a size that is not a number of CSS pixels a window can have.
    """
    size = {}
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidRequest(f"`{name}` must be a number of CSS pixels, such as 1280; got {value!r}")
        if not MIN_WINDOW_SIZE <= value <= MAX_WINDOW_SIZE:
            raise InvalidRequest(
                f"`{name}` must be from {MIN_WINDOW_SIZE} to {MAX_WINDOW_SIZE} CSS pixels; got {value:g}"
            )
        size[name] = round(value)
    return WideCall(RESIZE_WINDOW, size)


def call_of(tool: str, args: JsonObject) -> WideCall | None:
    """The call an MCP tool call stands for; None when ``tool`` is not one of these.

    Raises:
        InvalidRequest: the arguments are not what the tool takes (the message says what is).
    """
    if tool == "browser_windows":
        return windows_call(args.get("action"), args.get("windowId"), args.get("url"), args.get("browser"))
    if tool == "browser_history_search":
        return history_call(args.get("query"), args.get("maxResults"), args.get("startTime"), args.get("browser"))
    if tool == "browser_history_delete":
        return history_deletion_call(args.get("url"), args.get("startTime"), args.get("endTime"), args.get("browser"))
    if tool == "browser_bookmarks":
        action = args.get("action")
        if action == "tree":
            return bookmark_tree_call(args.get("folderId"), args.get("maxResults"), args.get("browser"))
        if action == "delete":
            return bookmark_deletion_call(args.get("id"), args.get("recursive"), args.get("browser"))
        return bookmarks_call(action, args.get("query"), args.get("url"), args.get("title"), args.get("browser"))
    if tool == "browser_resize":
        return resize_call(args.get("width"), args.get("height"))
    return None


def answer_of(call: WideCall, browser_key: str, answer: Any) -> WindowChanged | JsonObject:
    """What browser ``browser_key``'s answer to ``call`` comes to: a window resized, focused or
    closed, or the extension's own answer (``{results}``, ``{bookmark}``). A list of windows is
    read with the session's tabs in mind (:meth:`broker.core.state.Broker.describe_windows`).

    Raises:
        PageToolFailed: the answer is not the object the request is answered with.
    """
    if call.request == RESIZE_WINDOW:
        assert call.window is not None
        if not isinstance(answer, dict):
            raise PageToolFailed(f"the extension answered resizeWindow with {type(answer).__name__}, not an object")
        size = {key: answer.get(key) for key in ("width", "height")}
        return {"resized": {"browser": browser_key, "id": parse_ref(call.window, "window")[1], **size}}
    if call.window is not None:
        done = {"focusWindow": "focused", "closeWindow": "closed"}[call.request]
        return WindowChanged(done, browser_key, parse_ref(call.window, "window")[1])
    if not isinstance(answer, dict):
        raise PageToolFailed(f"the extension answered {call.request} with {type(answer).__name__}, not an object")
    return answer


def windows_call(action: Any, window: Any = None, url: Any = None, browser: Any = None) -> WideCall:
    """Raises: InvalidRequest."""
    browser = _browser(browser)
    if action == "list":
        return WideCall(LIST_WINDOWS, browser=browser)
    if action == "create":
        if url is not None and (not isinstance(url, str) or not url):
            raise InvalidRequest("`url` of a new window must be a non-empty string, such as https://example.com/")
        return WideCall(CREATE_WINDOW, browser=browser, url=page_url(url or "about:blank"))
    if action in ("focus", "close"):
        if isinstance(window, bool) or not isinstance(window, (int, str)):
            raise InvalidRequest(f"action={action} needs `windowId`: a window id from action=list, such as 7")
        return WideCall(f"{action}Window", browser=browser, window=window)
    raise InvalidRequest("`action` must be one of list, create, focus, close")


def history_call(query: Any, max_results: Any = None, start_time: Any = None, browser: Any = None) -> WideCall:
    """Raises: InvalidRequest."""
    if not isinstance(query, str):
        raise InvalidRequest("searching history needs `query`: words of a title or address ('' for the latest)")
    args: JsonObject = {"query": query, "maxResults": result_count(max_results, DEFAULT_RESULTS, MAX_RESULTS)}
    if start_time is not None:
        args["startTime"] = epoch_ms(start_time)
    return WideCall("searchHistory", args, browser=_browser(browser))


def history_deletion_call(
    url: Any = None, start_time: Any = None, end_time: Any = None, browser: Any = None
) -> WideCall:
    """Raises: InvalidRequest."""
    return WideCall(DELETE_HISTORY, records.history_deletion(url, start_time, end_time), browser=_browser(browser))


def bookmark_tree_call(folder: Any = None, max_results: Any = None, browser: Any = None) -> WideCall:
    """Raises: InvalidRequest."""
    return WideCall(BOOKMARK_TREE, records.bookmark_tree(folder, max_results), browser=_browser(browser))


def bookmark_deletion_call(node: Any, recursive: Any = None, browser: Any = None) -> WideCall:
    """Raises: InvalidRequest."""
    return WideCall(DELETE_BOOKMARK, records.bookmark_deletion(node, recursive), browser=_browser(browser))


def bookmarks_call(action: Any, query: Any = None, url: Any = None, title: Any = None, browser: Any = None) -> WideCall:
    """Raises: InvalidRequest."""
    browser = _browser(browser)
    if action == "search":
        if not isinstance(query, str):
            raise InvalidRequest("searching bookmarks needs `query`: words of a title or address")
        return WideCall("searchBookmarks", {"query": query}, browser=browser)
    if action == "create":
        if not isinstance(url, str) or not url:
            raise InvalidRequest("creating a bookmark needs `url`, such as https://example.com/")
        # A javascript: bookmark would run the client's code in whatever page the person later
        # clicks it on, long after the approval.
        page_url(url)
        if title is not None and not isinstance(title, str):
            raise InvalidRequest("a bookmark's `title` must be a string")
        return WideCall("createBookmark", {"url": url, "title": title or url}, browser=browser)
    raise InvalidRequest("`action` must be search, create, tree or delete")


def _browser(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidRequest('"browser" names a connected browser, such as b1')
    return value
