"""Tabs, browsers, sessions and tool lists as JSON: one shape for REST, MCP and the command line.

These are the objects a client reads (``GET /tabs``, the ``tabs`` MCP tool, ``browser-mcp tabs``),
so their field names are part of the public API docs/rest.md documents. Which of their fields hold
text a web page chose (a tab's title, its address, the tools its page declares, the titles of
pages in the person's history) is said by :func:`page_text_fields`: MCP marks such results
untrusted in ``_meta``, REST lists those fields in ``untrusted``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import codec
from ..core.effects import (
    BrowserCallOutcome,
    BrowserView,
    SessionView,
    TabView,
    WindowChanged,
    WindowOpened,
    WindowView,
)
from ..core.messages import Tool

__all__ = [
    "PAGE_FIELDS",
    "browser_call_json",
    "browser_json",
    "json_response",
    "page_text_fields",
    "session_json",
    "tab_json",
    "tab_tools_json",
    "tools_json",
    "window_json",
]


def json_response(value: Any, status: int = 200) -> web.Response:
    """``value`` as a JSON HTTP answer, written by the broker's one codec."""
    return web.Response(body=codec.dumps(value), status=status, content_type="application/json")


# A tab's fields whose text its web page sets: its title, its address, the tools it declares.
PAGE_FIELDS = ("title", "url", "tools")
# A record of the person's history or bookmarks: the title and address of a page they visited.
_RECORD_FIELDS = ("title", "url")


def page_text_fields(answer: dict[str, Any]) -> list[str]:
    """The fields of an answer of these shapes whose text a web page chose, named as paths
    (``tabs[].title``, ``tab.url``, ``tools``), for REST's ``untrusted``; empty when none."""
    fields: list[str] = []
    for key, value in answer.items():
        if key in ("tabs", "tab", "opened", "claim", "release", "focus") and isinstance(value, (dict, list)):
            where = f"{key}[]" if isinstance(value, list) else key
            fields += [f"{where}.{name}" for name in PAGE_FIELDS]
        elif key == "tools":
            fields.append("tools")
        elif key == "results":
            fields += [f"results[].{name}" for name in _RECORD_FIELDS]
        elif key == "deleted" and isinstance(value, dict) and "title" in value:
            fields += [f"deleted.{name}" for name in _RECORD_FIELDS]
    return fields


def tools_json(tools: tuple[Tool, ...] | None) -> list[Any] | None:
    return None if tools is None else [codec.unstructure(tool) for tool in tools]


def tab_json(tab: TabView) -> dict[str, Any]:
    return {
        "id": tab.id,
        "browser": tab.browser,
        "ref": tab.ref,
        "title": tab.title,
        "url": tab.url,
        "active": tab.active,
        "windowId": tab.window_id,
        "index": tab.index,
        "pinned": tab.pinned,
        "browserName": tab.browser_name,
        "owner": None if tab.owner is None else {"sessionId": tab.owner, "name": tab.owner_name},
        "tools": tools_json(tab.tools),
    }


def tab_tools_json(ref: str, tools: tuple[Tool, ...] | None) -> dict[str, Any]:
    return {"tab": ref, "tools": tools_json(tools)}


def browser_json(browser: BrowserView) -> dict[str, Any]:
    return {
        "browser": browser.key,
        "name": browser.name,
        "version": browser.version,
        "instanceId": browser.instance_id,
        "connected": browser.connected,
        "tabs": browser.tabs,
        "actions": list(browser.actions),
        "features": list(browser.features),
        "paused": browser.paused,
        "extensionVersion": browser.extension_version,
        "extensionOutdated": browser.extension_outdated,
        "driver": {"name": browser.driver_name, "actions": list(browser.driver_actions)},
    }


def window_json(window: WindowView) -> dict[str, Any]:
    """A window: ``yours`` says whether every tab in it is the asking session's (then it may focus or close it)."""
    return {
        "id": window.id,
        "browser": window.browser,
        "focused": window.focused,
        "state": window.state,
        "type": window.type,
        "incognito": window.incognito,
        "tabs": list(window.tabs),
        "yours": window.yours,
    }


def session_json(session: SessionView) -> dict[str, Any]:
    return {
        "sessionId": session.id,
        "name": session.name,
        "ownedTabs": list(session.owned_tabs),
        "pendingCalls": session.pending_calls,
    }


def browser_call_json(outcome: BrowserCallOutcome) -> dict[str, Any]:
    """A browser-wide call's answer: ``{window, opened}``, ``{windows}``, ``{focused}`` or ``{closed}``,
    or the extension's own (``{results}``, ``{bookmark}``)."""
    if isinstance(outcome, WindowOpened):
        return {"window": window_json(outcome.window), "opened": tab_json(outcome.tab)}
    if isinstance(outcome, list):
        return {"windows": [window_json(window) for window in outcome]}
    if isinstance(outcome, WindowChanged):
        return {outcome.done: {"browser": outcome.browser, "id": outcome.id}}
    return outcome
