"""The REST API for scripts and curl, on the routes of the original bridge.

``GET /status``, ``GET /tabs``, ``POST /tabs {url, focus, browser?}``, ``DELETE /tabs/{id}``,
``GET /tabs/{id}/tools``, ``POST /tabs/{id}/tools/{name}`` (body = the tool's arguments), plus
``POST /tabs/{id}/claim``, ``/release`` and ``/focus``, ``DELETE /sessions/{id}`` and
``POST /shutdown`` (what ``browser-mcp stop`` uses). Each request acts for the session named by
``X-Session-Id``, else the shared default REST session ``rest``; a new session is opened on first
use and ends, releasing its tabs, once unused for the broker's idle time (a script that exits
says nothing). Handlers parse, call the hub and shape JSON; the rules live in :mod:`broker.core.state`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import AsyncIterator
from typing import Any

import attrs
from aiohttp import web

from . import codec
from .core.errors import InvalidRequest
from .core.messages import Tool
from .core.state import BrowserView, SessionView, TabView
from .hub import Hub, every
from .runtime import HUB, RUNTIME

__all__ = [
    "DEFAULT_SESSION",
    "browser_json",
    "json_response",
    "RestSessions",
    "session_json",
    "setup_rest",
    "tab_json",
    "tools_json",
]

DEFAULT_SESSION = "rest"
_SESSION_ID = re.compile(r"^[\w.:@+-]{1,128}$")

logger = logging.getLogger(__name__)
routes = web.RouteTableDef()


@attrs.define
class RestSessions:
    """When each session REST opened was last used; one unused for ``idle`` seconds ends."""

    hub: Hub
    idle: float
    last_used: dict[str, float] = attrs.Factory(dict)

    def touch(self, session_id: str) -> None:
        self.last_used[session_id] = asyncio.get_running_loop().time()

    def forget(self, session_id: str) -> None:
        self.last_used.pop(session_id, None)

    async def end_idle(self) -> None:
        now = asyncio.get_running_loop().time()
        # A session waiting on a call is not idle; the call's answer counts as a use.
        busy = {session.id for session in self.hub.core.sessions() if session.pending_calls}
        for session_id, last in list(self.last_used.items()):
            if session_id not in busy and now - last >= self.idle:
                del self.last_used[session_id]
                logger.info("REST session %s ended: no request for %g s", session_id, self.idle)
                await self.hub.close_session(session_id)


REST_SESSIONS = web.AppKey("rest_sessions", RestSessions)
_REST_SESSION = web.RequestKey("rest_session", str)


def setup_rest(app: web.Application, hub: Hub, idle: float) -> None:
    """The REST routes, and the task that ends sessions left unused for ``idle`` seconds."""
    sessions = app[REST_SESSIONS] = RestSessions(hub, idle)
    app.add_routes(routes)

    async def used(request: web.Request, response: web.StreamResponse) -> None:
        session_id = request.get(_REST_SESSION)
        if session_id is not None:
            sessions.touch(session_id)

    async def reaper(app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(every(max(idle / 4, 0.05), sessions.end_idle))
        yield
        task.cancel()

    app.on_response_prepare.append(used)
    app.cleanup_ctx.append(reaper)


def json_response(value: Any, status: int = 200) -> web.Response:
    return web.Response(body=codec.dumps(value), status=status, content_type="application/json")


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
        "owner": None if tab.owner is None else {"sessionId": tab.owner, "name": tab.owner_name},
        "tools": tools_json(tab.tools),
    }


def browser_json(browser: BrowserView) -> dict[str, Any]:
    return {
        "browser": browser.key,
        "name": browser.name,
        "version": browser.version,
        "instanceId": browser.instance_id,
        "connected": browser.connected,
        "tabs": browser.tabs,
    }


def session_json(session: SessionView) -> dict[str, Any]:
    return {
        "sessionId": session.id,
        "name": session.name,
        "ownedTabs": list(session.owned_tabs),
        "pendingCalls": session.pending_calls,
    }


def _hub(request: web.Request) -> Hub:
    return request.app[HUB]


async def _session(request: web.Request) -> str:
    """The request's session, opened on first use.

    Raises:
        InvalidRequest: the X-Session-Id header is not a plain identifier.
    """
    session_id = request.headers.get("X-Session-Id", DEFAULT_SESSION)
    if not _SESSION_ID.match(session_id):
        raise InvalidRequest("X-Session-Id must be 1-128 letters, digits or . : @ + - _")
    name = request.headers.get("X-Session-Name", session_id)[:128]
    await _hub(request).ensure_session(session_id, name)
    request[_REST_SESSION] = session_id
    request.app[REST_SESSIONS].touch(session_id)
    return session_id


async def _json_body(request: web.Request, default: Any) -> Any:
    """Raises: InvalidRequest, when the body is not JSON."""
    raw = await request.read()
    if not raw.strip():
        return default
    try:
        return codec.loads(raw)
    except codec.JSONDecodeError as exc:
        raise InvalidRequest(f"request body is not valid JSON: {exc}") from None


def _timeout(request: web.Request) -> float | None:
    """Raises: InvalidRequest, for a ``timeout`` that is not a positive number of seconds."""
    raw = request.query.get("timeout")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0 < value <= 3600):
        raise InvalidRequest(f"timeout must be a number of seconds in (0, 3600], got {raw!r}")
    return value


def _flag(request: web.Request, name: str) -> bool:
    """Raises: InvalidRequest, for a value that is neither true nor false."""
    raw = request.query.get(name, "false").lower()
    if raw in ("1", "true", "yes"):
        return True
    if raw in ("0", "false", "no"):
        return False
    raise InvalidRequest(f"{name} must be true or false, got {raw!r}")


@routes.get("/status")
async def status(request: web.Request) -> web.Response:
    hub = _hub(request)
    core = hub.core
    return json_response(
        {
            **request.app[RUNTIME].status_fields(),
            "browsers": [browser_json(b) for b in core.browsers()],
            "sessions": [session_json(s) for s in core.sessions()],
            "tabs": len(core.tabs()),
            "pendingCalls": core.pending_count,
        }
    )


@routes.get("/tabs")
async def list_tabs(request: web.Request) -> web.Response:
    return json_response({"tabs": [tab_json(tab) for tab in _hub(request).core.tabs()]})


@routes.post("/tabs")
async def open_tab(request: web.Request) -> web.Response:
    session_id = await _session(request)
    body = await _json_body(request, None)
    if not isinstance(body, dict) or not isinstance(body.get("url"), str) or not body["url"]:
        raise InvalidRequest('body must be {"url": "...", "focus": true|false, "browser": "b1"?}')
    focus = body.get("focus", True)
    browser = body.get("browser")
    if not isinstance(focus, bool) or not (browser is None or isinstance(browser, str)):
        raise InvalidRequest('"focus" must be a boolean and "browser" a string')
    hub = _hub(request)
    tab = await hub.request(lambda now: hub.core.open_tab(session_id, body["url"], focus, now, browser))
    return json_response({"tab": tab_json(tab)})


@routes.delete("/tabs/{tab}")
async def close_tab(request: web.Request) -> web.Response:
    session_id = await _session(request)
    hub = _hub(request)
    ref = request.match_info["tab"]
    return json_response(await hub.request(lambda now: hub.core.close_tab(session_id, ref, now)))


@routes.get("/tabs/{tab}/tools")
async def tab_tools(request: web.Request) -> web.Response:
    session_id = await _session(request)
    hub = _hub(request)
    ref = request.match_info["tab"]
    refresh = _flag(request, "refresh")
    tools = await hub.request(lambda now: hub.core.request_tools(session_id, ref, now, refresh))
    return json_response({"tab": hub.core.tab(ref).ref, "tools": tools_json(tools)})


@routes.post("/tabs/{tab}/tools/{tool}")
async def call_tool(request: web.Request) -> web.Response:
    session_id = await _session(request)
    args = await _json_body(request, {})
    if not isinstance(args, dict):
        raise InvalidRequest(f"the tool's arguments must be a JSON object, got {type(args).__name__}")
    timeout = _timeout(request)
    hub = _hub(request)
    ref, tool = request.match_info["tab"], request.match_info["tool"]
    result = await hub.request(lambda now: hub.core.call_tool(session_id, ref, tool, args, now, timeout))
    return json_response({"result": result})


@routes.post("/tabs/{tab}/{action:claim|release|focus}")
async def change_ownership(request: web.Request) -> web.Response:
    session_id = await _session(request)
    core = _hub(request).core
    change = {"claim": core.claim_tab, "release": core.release_tab, "focus": core.focus_tab}
    tab, effects = change[request.match_info["action"]](session_id, request.match_info["tab"])
    await _hub(request).run(effects)
    return json_response({"tab": tab_json(tab)})


@routes.delete("/sessions/{session}")
async def end_session(request: web.Request) -> web.Response:
    hub = _hub(request)
    session_id = request.match_info["session"]
    known = hub.core.has_session(session_id)
    request.app[REST_SESSIONS].forget(session_id)
    await hub.close_session(session_id)
    return json_response({"ended": session_id, "existed": known})


@routes.post("/shutdown")
async def shutdown(request: web.Request) -> web.Response:
    request.app[RUNTIME].request_stop()
    return json_response({"stopping": True})
