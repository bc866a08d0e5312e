"""A tool call as the core takes it from any door: a tool's name and arguments become one typed call.

Each door has its own way of naming a call: MCP by a tool's name and a JSON object of arguments
(:func:`parse_call`), REST by its route, its query string and body (the constructors here and in
:mod:`.browser_wide`), the command line through REST. Whatever the door, every check of what the
caller asked for is made here, once, before anything is asked of a browser, with the errors a
client has always been given; the hub then carries out the typed call
(``broker.daemon.hub.Hub.call``) and the door writes its answer.

Left out: the names MCP gives page tools (``t12_search``), which depend on the session's tabs and
are the MCP door's to resolve (:mod:`.tool_names`) into a :class:`PageToolCall`; and the files of
an upload, read on disk by :mod:`broker.uploads` (not the core: it does I/O).
"""

from __future__ import annotations

from typing import Any

import attrs

from . import arguments, browser_tools, browser_wide
from .arguments import OpenTabRequest, TabChange
from .browser_tools import BuiltinTool
from .browser_wide import TabsCall, WideCall
from .errors import InvalidRequest, ToolNotFound
from .messages import Arguments, JsonObject

__all__ = [
    "ActionCall",
    "ChangeTab",
    "CloseTab",
    "ListPageTools",
    "ListTabs",
    "OpenTab",
    "PageToolCall",
    "TabsCall",
    "ToolCall",
    "WideCall",
    "action_in",
    "builtin_action",
    "parse_call",
]


@attrs.frozen
class ListTabs:
    """``tabs`` action=list: every tab, with its owner and page tools."""


@attrs.frozen
class OpenTab:
    request: OpenTabRequest


@attrs.frozen
class CloseTab:
    tab: str | int


@attrs.frozen
class ChangeTab:
    """Claim, release or focus a tab."""

    change: TabChange
    tab: str | int


@attrs.frozen
class ListPageTools:
    """A tab's page tools, asked of the page when unknown or when ``refresh``."""

    tab: str | int
    refresh: bool = False


@attrs.frozen
class PageToolCall:
    """A tool a page declares, by its tab and the name the page gave it."""

    tab: str | int
    tool: str
    args: Arguments


@attrs.frozen
class ActionCall:
    """A built-in browser tool in a tab (None: the session's current tab), its arguments checked."""

    tool: BuiltinTool
    tab: str | int | None
    args: JsonObject


ToolCall = ListTabs | OpenTab | CloseTab | ChangeTab | ListPageTools | PageToolCall | ActionCall | WideCall | TabsCall

_TAB_ACTIONS = ("focus", "claim", "release")


def parse_call(name: str, args: JsonObject) -> ToolCall | None:
    """The call an MCP tool call stands for; None when ``name`` is none of the broker's own tools
    (a page tool's MCP name, which only the session's list resolves).

    Raises:
        InvalidRequest: the arguments are not what the tool takes (the message says what is).
    """
    if name == "tabs":
        return _tabs(args)
    if name == "page_tools":
        refresh = arguments.flag("refresh", args.get("refresh"))
        return ListPageTools(arguments.tab_ref(args.get("tab")), refresh)
    if name == "call_page_tool":
        tool = args.get("tool")
        if not isinstance(tool, str):
            raise InvalidRequest("call_page_tool needs `tool`: the page tool's name")
        tool_args = arguments.tool_arguments(args.get("arguments"))
        return PageToolCall(arguments.tab_ref(args.get("tab")), tool, tool_args)
    if name == "browser_close":
        return TabsCall("close")
    if name == "browser_tabs":
        return browser_wide.tabs_call(args)
    wide = browser_wide.call_of(name, args)
    if wide is not None:
        return wide
    builtin = browser_tools.NAMED.get(name)
    if builtin is not None:
        tab, own = builtin.arguments(args)
        return ActionCall(builtin, None if tab is None else arguments.tab_ref(tab), own)
    return None


def builtin_action(action: str) -> BuiltinTool:
    """The built-in tool the wire names ``action`` (``click``), as REST's
    ``POST /tabs/{tab}/actions/{action}`` names it.

    Raises:
        ToolNotFound: no built-in tool has that name.
    """
    builtin = browser_tools.ACTIONS.get(action)
    if builtin is None:
        raise ToolNotFound(f"no built-in action {action!r} (there are: {', '.join(browser_tools.ACTIONS)})")
    return builtin


def action_in(tab: str | int, tool: BuiltinTool, body: Any) -> ActionCall:
    """``tool`` in ``tab`` with the arguments ``body`` (JSON, None for none), as REST asks: the
    tab is the route's, and a ``tab`` in the body is no argument of the action's.

    Raises:
        InvalidRequest: the body is not an object, or not what the tool takes.
    """
    _, own = tool.arguments(arguments.tool_arguments(body))
    return ActionCall(tool, tab, own)


def _tabs(args: JsonObject) -> ToolCall:
    action: Any = args.get("action")
    if action == "list":
        return ListTabs()
    if action == "open":
        return OpenTab(arguments.open_tab_request(args))
    if action == "close":
        return CloseTab(arguments.tab_ref(args.get("tab")))
    if action in _TAB_ACTIONS:
        change = arguments.tab_change(action)
        return ChangeTab(change, arguments.tab_ref(args.get("tab")))
    raise InvalidRequest("action must be one of list, open, close, focus, claim, release")
