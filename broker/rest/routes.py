"""The REST API for scripts and curl, on the routes of the original bridge.

``GET /status``, ``GET /tabs``, ``POST /tabs {url, focus, browser?}``, ``DELETE /tabs/{id}``,
``GET /tabs/{id}/tools``, ``POST /tabs/{id}/tools/{name}`` (body = the tool's arguments),
``POST /tabs/{id}/actions/{name}`` (a built-in browser tool, named without ``browser_``), plus
``POST /tabs/{id}/claim``, ``/release`` and ``/focus``; the browser's own windows, history and
bookmarks (``GET /windows``, ``POST /windows {url?}``, ``POST /windows/{id}/focus``,
``DELETE /windows/{id}``, ``GET /history?q=&max=&since=``, ``DELETE /history?url=`` or
``?since=&until=``, ``GET /bookmarks?q=``, ``POST /bookmarks {url, title?}``,
``GET /bookmarks/tree?folder=&max=``, ``DELETE /bookmarks/{id}?recursive=``, each taking
``browser``); ``DELETE /sessions/{id}`` and ``POST /shutdown`` (what ``browser-mcp stop``
uses). Each request acts for the session named by ``X-Session-Id``, else the default REST
session: ``rest`` for the broker's own token,
``rest:<name>`` for a client token. A new session is opened on first use and ends, releasing its
tabs, once unused for the broker's idle time (a script that exits says nothing; the core keeps
that time). A client token acts only in the sessions it opened, and cannot stop the broker.
Handlers parse, call the hub and shape JSON with :mod:`broker.daemon.views`; the rules live in
:mod:`broker.core`.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from aiohttp import web

from .. import codec
from ..core import arguments, browser_wide, tool_calls
from ..core.errors import Forbidden, InvalidRequest, PageToolFailed
from ..core.messages import Arguments, RawJson
from ..core.sessions import SessionKey, SessionKind
from ..daemon.connections import CONNECTIONS
from ..daemon.hub import Hub
from ..daemon.runtime import CLIENT, HUB, RUNTIME
from ..daemon.views import (
    browser_call_json,
    browser_json,
    json_response,
    page_text_fields,
    session_json,
    tab_json,
    tab_tools_json,
)

__all__ = ["DEFAULT_SESSION", "call_tool", "page_tool_call", "setup_rest"]

DEFAULT_SESSION = str(SessionKey(SessionKind.REST))
_SESSION_ID = re.compile(r"^[\w.:@+-]{1,128}$")
_IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,128}$")

routes = web.RouteTableDef()


def setup_rest(app: web.Application) -> None:
    # aiohttp tries the routes under /tabs one by one, in order: a page tool call, the most
    # frequent request, goes first. No path matches two routes, so the order changes no answer.
    app.add_routes(sorted(routes, key=lambda route: not _is_route_of(route, call_tool)))


def _is_route_of(route: web.AbstractRouteDef, handler: Any) -> bool:
    return isinstance(route, web.RouteDef) and route.handler is handler


def _answer(value: dict[str, Any]) -> web.Response:
    """``value`` as JSON, with ``untrusted`` naming the fields whose text a web page chose, if any."""
    fields = page_text_fields(value)
    return json_response({**value, "untrusted": fields} if fields else value)


def _result_response(result: Any) -> web.Response:
    """Raises: PageToolFailed, for a page's result that cannot be written as JSON."""
    try:
        return json_response({"result": result})
    except codec.JSONEncodeError as exc:
        raise PageToolFailed(f"the page's result cannot be written as JSON: {exc}") from None


def _hub(request: web.Request) -> Hub:
    return request.app[HUB]


async def _session(request: web.Request, hub: Hub | None = None) -> str:
    """The request's session, opened on first use; each request counts as a use.

    Raises:
        InvalidRequest: the X-Session-Id header is not a plain identifier.
        Forbidden: a client token names a session it did not open.
    """
    credential = request[CLIENT]
    default = str(SessionKey(SessionKind.REST, credential))
    headers = request.headers
    session_id = headers.get("X-Session-Id", default)
    if not _SESSION_ID.match(session_id):
        raise InvalidRequest("X-Session-Id must be 1-128 letters, digits or . : @ + - _")
    if credential is not None and session_id != default and SessionKey.of(session_id).reserved:
        # A client token opening one of these first would hold the session its owner later
        # takes (an MCP client's, or another credential's default REST session).
        raise Forbidden(f"session id {session_id!r} is reserved (rest, rest:*, mcp-*); choose another X-Session-Id")
    name = headers.get("X-Session-Name", session_id)[:128]
    await (hub or _hub(request)).open_session(session_id, name, ends_when_idle=True, credential=credential)
    return session_id


async def _json_body(request: web.Request) -> Any:
    """The body as JSON, None when empty. Raises: InvalidRequest, when it is not JSON."""
    return _parsed(await request.read())


def _parsed(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return codec.loads(raw)
    except codec.JSONDecodeError as exc:
        raise InvalidRequest(f"request body is not valid JSON: {exc}") from None


async def _tool_arguments(request: web.Request) -> Arguments:
    """The body as a tool's arguments: checked to be a JSON object, then passed on as it came.

    The parsed copy is dropped at once: a call waiting for the page holds only the bytes read.

    Raises:
        InvalidRequest: the body is not JSON, or not an object.
    """
    raw = await request.read()
    parsed = arguments.tool_arguments(_parsed(raw))
    return RawJson(raw) if parsed else parsed


@routes.get("/status")
async def status(request: web.Request) -> web.Response:
    hub = _hub(request)
    credential = request[CLIENT]
    browsers = hub.browsers()
    sessions = hub.sessions()
    if credential is not None:
        # A client token sees its own sessions, and no browser's instance id (which would let
        # whoever holds it pose as that browser).
        browsers = [attrs.evolve(b, instance_id=None) for b in browsers]
        sessions = [s for s in sessions if s.credential == credential]
    return json_response(
        {
            **request.app[RUNTIME].status_fields(),
            "browsers": [browser_json(b) for b in browsers],
            "sessions": [session_json(s) for s in sessions],
            "tabs": len(hub.tabs()),
            "pendingCalls": hub.pending_count,
            "connectionLimits": request.app[CONNECTIONS].status_json(),
        }
    )


@routes.get("/tabs")
async def list_tabs(request: web.Request) -> web.Response:
    return _answer({"tabs": [tab_json(tab) for tab in _hub(request).tabs()]})


@routes.post("/tabs")
async def open_tab(request: web.Request) -> web.Response:
    session_id = await _session(request)
    wanted = tool_calls.OpenTab(arguments.open_tab_request(await _json_body(request)))
    tab = await _hub(request).call(session_id, wanted)
    return _answer({"tab": tab_json(tab)})


@routes.delete("/tabs/{tab}")
async def close_tab(request: web.Request) -> web.Response:
    session_id = await _session(request)
    return json_response(await _hub(request).call(session_id, tool_calls.CloseTab(request.match_info["tab"])))


@routes.get("/tabs/{tab}/tools")
async def tab_tools(request: web.Request) -> web.Response:
    session_id = await _session(request)
    refresh = arguments.query_flag("refresh", request.query.get("refresh"))
    tab, tools = await _hub(request).call(session_id, tool_calls.ListPageTools(request.match_info["tab"], refresh))
    return _answer(tab_tools_json(tab.ref, tools))


@routes.post("/tabs/{tab}/tools/{tool}")
async def call_tool(request: web.Request) -> web.Response:
    return await page_tool_call(request, _hub(request), request.match_info["tab"], request.match_info["tool"])


async def page_tool_call(request: web.Request, hub: Hub, ref: str, tool: str) -> web.Response:
    """``POST /tabs/{ref}/tools/{tool}``, once the guard has passed the request.

    Also called by :func:`broker.app.answer_tool_calls_first`, without aiohttp's router: it reads
    nothing the router gives (no ``match_info``, no ``request.app``).
    """
    session_id = await _session(request, hub)
    args = await _tool_arguments(request)
    answer_within = arguments.call_timeout(request.query.get("timeout"))
    once_key = request.headers.get("Idempotency-Key")
    if once_key is not None and not _IDEMPOTENCY_KEY.match(once_key):
        raise InvalidRequest("Idempotency-Key must be 1-128 printable characters")
    call = tool_calls.PageToolCall(ref, tool, args)
    result = await hub.call(session_id, call, answer_within=answer_within, once_key=once_key)
    value = result.value if result.json_text is None else codec.written(result.json_text)
    return json_response({"result": value, "limited": list(result.notes)} if result.notes else {"result": value})


@routes.post("/tabs/{tab}/actions/{action}")
async def browser_action(request: web.Request) -> web.Response:
    session_id = await _session(request)
    builtin = tool_calls.builtin_action(request.match_info["action"])
    call = tool_calls.action_in(request.match_info["tab"], builtin, await _json_body(request))
    answer_within = arguments.call_timeout(request.query.get("timeout"))
    _, result = await _hub(request).call(session_id, call, answer_within=answer_within)
    return _result_response(result)


@routes.post("/tabs/{tab}/{action:claim|release|focus}")
async def change_ownership(request: web.Request) -> web.Response:
    session_id = await _session(request)
    change = arguments.tab_change(request.match_info["action"])
    tab = await _hub(request).call(session_id, tool_calls.ChangeTab(change, request.match_info["tab"]))
    return _answer({"tab": tab_json(tab)})


async def _browser_call(request: web.Request, call: browser_wide.WideCall) -> web.Response:
    return _answer(browser_call_json(await _hub(request).call(await _session(request), call)))


@routes.get("/windows")
async def list_windows(request: web.Request) -> web.Response:
    call = browser_wide.windows_call("list", browser=request.query.get("browser"))
    return await _browser_call(request, call)


@routes.post("/windows")
async def open_window(request: web.Request) -> web.Response:
    body = await _json_body(request)
    if body is not None and not isinstance(body, dict):
        raise InvalidRequest('opening a window takes {"url"?: "...", "browser"?: "b1"}')
    wanted = body or {}
    call = browser_wide.windows_call("create", url=wanted.get("url"), browser=wanted.get("browser"))
    return await _browser_call(request, call)


@routes.post("/windows/{window}/focus")
async def focus_window(request: web.Request) -> web.Response:
    call = browser_wide.windows_call("focus", request.match_info["window"], browser=request.query.get("browser"))
    return await _browser_call(request, call)


@routes.delete("/windows/{window}")
async def close_window(request: web.Request) -> web.Response:
    call = browser_wide.windows_call("close", request.match_info["window"], browser=request.query.get("browser"))
    return await _browser_call(request, call)


@routes.get("/history")
async def search_history(request: web.Request) -> web.Response:
    query = request.query
    call = browser_wide.history_call(query.get("q", ""), query.get("max"), query.get("since"), query.get("browser"))
    return await _browser_call(request, call)


@routes.get("/bookmarks")
async def search_bookmarks(request: web.Request) -> web.Response:
    call = browser_wide.bookmarks_call("search", request.query.get("q", ""), browser=request.query.get("browser"))
    return await _browser_call(request, call)


@routes.post("/bookmarks")
async def create_bookmark(request: web.Request) -> web.Response:
    body = await _json_body(request)
    if not isinstance(body, dict):
        raise InvalidRequest('creating a bookmark takes {"url": "...", "title"?: "...", "browser"?: "b1"}')
    url, title, browser = body.get("url"), body.get("title"), body.get("browser")
    call = browser_wide.bookmarks_call("create", url=url, title=title, browser=browser)
    return await _browser_call(request, call)


@routes.delete("/history")
async def delete_history(request: web.Request) -> web.Response:
    query = request.query
    call = browser_wide.history_deletion_call(
        query.get("url"), query.get("since"), query.get("until"), query.get("browser")
    )
    return await _browser_call(request, call)


@routes.get("/bookmarks/tree")
async def bookmark_tree(request: web.Request) -> web.Response:
    query = request.query
    call = browser_wide.bookmark_tree_call(query.get("folder"), query.get("max"), query.get("browser"))
    return await _browser_call(request, call)


@routes.delete("/bookmarks/{id}")
async def delete_bookmark(request: web.Request) -> web.Response:
    query = request.query
    call = browser_wide.bookmark_deletion_call(request.match_info["id"], query.get("recursive"), query.get("browser"))
    return await _browser_call(request, call)


@routes.delete("/sessions/{session}")
async def end_session(request: web.Request) -> web.Response:
    session_id = request.match_info["session"]
    existed = await _hub(request).end_session(session_id, request[CLIENT])
    return json_response({"ended": session_id, "existed": existed})


@routes.post("/shutdown")
async def shutdown(request: web.Request) -> web.Response:
    if request[CLIENT] is not None:
        raise Forbidden("a client token cannot stop the broker: use the broker's own token (browser-mcp stop)")
    request.app[RUNTIME].request_stop()
    return json_response({"stopping": True})
