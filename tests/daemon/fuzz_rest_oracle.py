"""What the README says the broker answers a fuzzed REST request under ``/tabs``: the oracle of
``test_fuzz_rest.py``, with the world its broker holds before every example."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from ..support.fakes import EXTENSION_ORIGIN
from .fuzzing import BODY_LIMIT, KEEPER, METHOD_NOT_ALLOWED, REST_TOKEN_HEADER, encode_segment, parse

# What the REST fuzz broker holds before every example: b1 has tabs 5, 7 and 8, b2 has 5 and 9;
# tab 7 belongs to the session KEEPER; every tab has the tool echo.
BASELINE = {"b1": (5, 7, 8), "b2": (5, 9)}
LOOPBACK_HOSTS = {"localhost", "localhost:8765", "127.0.0.1", "127.0.0.1:1", "127.1.2.3", "[::1]", "[::1]:80"}


class RestRequest:
    def __init__(
        self, method: str, segments: list[str], headers: dict[str, str], query: dict[str, str], body: bytes | None
    ) -> None:
        self.method = method
        self.segments = segments
        self.headers = headers
        self.query = query
        self.body = body

    def __repr__(self) -> str:
        body = self.body if self.body is None or len(self.body) < 200 else self.body[:200] + b"..."
        return f"RestRequest({self.method} /{'/'.join(self.segments)} {self.headers} {self.query} {body!r})"


class Expected:
    """What the broker may answer: one of ``codes`` (each with its README status), or success."""

    def __init__(self, *codes: str, success: str | None = None) -> None:
        self.codes = set(codes)
        self.success = success

    def __repr__(self) -> str:
        return f"Expected({sorted(self.codes)}, success={self.success})"


def resolve(ref: str) -> tuple[str, int] | str:
    """The tab a ref names, as the README spells refs (``12``, ``b2:12``), or the error code."""
    browser, _, number = ref.rpartition(":")
    # A number in the decimal digits of any script: 12, or Arabic-Indic 12.
    if not number.removeprefix("-").isdecimal():
        return "invalid_request"
    tab_id = int(number)
    if browser:
        if browser not in BASELINE:
            return "browser_not_found"
        return (browser, tab_id) if tab_id in BASELINE[browser] else "tab_not_found"
    found = [(key, tab_id) for key, tabs in BASELINE.items() if tab_id in tabs]
    if len(found) > 1:
        return "ambiguous_tab"
    return found[0] if found else "tab_not_found"


def session_of(request: RestRequest) -> str | None:
    """The session the request acts for, None when its X-Session-Id is not an identifier."""
    session = request.headers.get("X-Session-Id", "rest")
    # Letters and digits of any script, as the README says: "letters, digits and .:@+-_".
    valid = 1 <= len(session) <= 128 and all(char.isalnum() or char in "_.:@+-" for char in session)
    return session if valid else None


def json_body(request: RestRequest) -> tuple[bool, Any]:
    """Whether the body reads as JSON, and what it says (None for an empty body)."""
    raw = request.body or b""
    if not raw.strip():
        return True, None
    try:
        return True, parse(raw)
    except ValueError:
        return False, None


def expect(request: RestRequest, port: int) -> Expected:
    """What the README says the broker answers ``request`` with.

    In order: who may ask (Host, Origin, token), a body over the limit (413), which route, what
    is malformed in the request itself (all 400s), then what the broker's state says (tab, owner,
    tool). Where the README leaves the order open within a step, any of the step's codes is
    accepted.
    """
    expected = expect_on_route(request, port)
    if any(char in "{}" for segment in request.segments[1:] for char in segment) and expected.codes:
        # The router's parameters take no braces: such a path may be no route at all.
        return Expected(*expected.codes, "not_found")
    return expected


def expect_on_route(request: RestRequest, port: int) -> Expected:
    security = security_faults(request, port)
    if security:
        return Expected(*security)
    if len(request.body or b"") > BODY_LIMIT:
        # A body declared over the limit is refused before the route is looked at, unread.
        return Expected("request_too_large")
    route = route_of(request)
    if isinstance(route, Expected) or route in ("status", "list"):
        return route if isinstance(route, Expected) else Expected(success=route)
    malformed = malformed_faults(request, route)
    if route == "open":
        if malformed:
            return Expected(*malformed)
        browser = parse(request.body or b"").get("browser")
        return Expected("browser_not_found") if browser not in (None, "b1", "b2") else Expected(success="open")
    if route == "action":
        if request.segments[3] not in ("snapshot", "click", "type", "evaluate"):
            return Expected(*malformed, "tool_not_found")
        # Each action checks its own arguments: a 400 is always possible here.
        malformed.add("invalid_request")
    elif malformed:
        return Expected(*malformed)

    tab = resolve(request.segments[1])
    if isinstance(tab, str):
        return Expected(*malformed, tab)
    # Listing a tab's tools is open to everyone ("for any tab"); the rest is the owner's.
    owned_by_other = tab == ("b1", 7) and route != "tools"
    if route in ("action", "call", "close") or (route == "change" and request.segments[2] == "focus"):
        # Nobody but KEEPER owns a tab when an example starts, so nothing that acts on a tab
        # (its tools, an action, closing or focusing it) reaches a browser.
        return Expected(*malformed, "tab_owned" if owned_by_other else "tab_not_claimed")
    if owned_by_other:
        return Expected("tab_owned")
    return Expected(success=route)


def security_faults(request: RestRequest, port: int) -> set[str]:
    faults = set()
    host = request.headers.get("Host", f"127.0.0.1:{port}")
    if host not in LOOPBACK_HOSTS and host != f"127.0.0.1:{port}":
        faults.add("forbidden")
    origin = request.headers.get("Origin")
    if origin is not None and origin.rstrip("/") != EXTENSION_ORIGIN:
        faults.add("forbidden")
    if request.headers.get("Authorization") not in (REST_TOKEN_HEADER, "bearer test-token-0123456789"):
        faults.add("unauthorized")
    return faults


# The README's routes under /tabs: the segments after the tab id, and the method each takes.
TAB_ROUTES = {
    (): ("close", "DELETE"),
    ("tools",): ("tools", "GET"),
    ("tools", "*"): ("call", "POST"),
    ("actions", "*"): ("action", "POST"),
    ("claim",): ("change", "POST"),
    ("release",): ("change", "POST"),
    ("focus",): ("change", "POST"),
}


def route_of(request: RestRequest) -> str | Expected:
    """The route a request's path and method name, or the 404 or 405 it gets."""
    segments = request.segments
    if segments in (["status"], ["tabs"]):
        methods = {"GET": "status"} if segments == ["status"] else {"GET": "list", "POST": "open"}
    elif len(segments) >= 2 and segments[1] and all(segments[2:]):
        after = tuple(segments[2:3]) + ("*",) * len(segments[3:])
        route = TAB_ROUTES.get(after)
        if route is None:
            return Expected("not_found")
        methods = {route[1]: route[0]}
    else:
        return Expected("not_found")
    return methods.get(request.method) or Expected(METHOD_NOT_ALLOWED[0])


def malformed_faults(request: RestRequest, route: str) -> set[str]:
    """The 400s of a request to ``route``."""
    faults: set[str] = set() if session_of(request) is not None else {"invalid_request"}
    body_ok, body = json_body(request)
    if route in ("open", "call", "action") and not body_ok:
        faults.add("invalid_request")
    if route == "open" and not well_formed_open(body):
        faults.add("invalid_request")
    if route in ("call", "action") and body is not None and type(body) is not dict:
        faults.add("invalid_request")
    timeout = request.query.get("timeout")
    if route in ("call", "action") and timeout is not None:
        try:
            seconds = float(timeout)
        except ValueError:
            seconds = float("nan")
        if not 0 < seconds <= 3600:
            faults.add("invalid_request")
    refresh = request.query.get("refresh")
    if route == "tools" and refresh is not None and refresh.lower() not in ("1", "true", "yes", "0", "false", "no"):
        faults.add("invalid_request")
    return faults


def well_formed_open(body: Any) -> bool:
    """``{"url", "focus": true, "browser": "b1"?}`` with an http:, https: or about:blank url."""
    if type(body) is not dict:
        return False
    url, focus, browser = body.get("url"), body.get("focus"), body.get("browser")
    web = type(url) is str and (url == "about:blank" or url.lower().startswith(("http://", "https://")))
    return web and type(focus) in (type(None), bool) and type(browser) in (type(None), str)


def check_success(request: RestRequest, answer: Any, route: str, session: str | None) -> None:
    """The exact answer the README gives for a request that succeeds."""
    if route == "status":
        assert [(b["browser"], b["connected"]) for b in answer["browsers"]] == [("b1", True), ("b2", True)]
    elif route == "list":
        listed = sorted((t["browser"], t["id"], (t["owner"] or {}).get("sessionId")) for t in answer["tabs"])
        assert listed == sorted(
            (browser, tab_id, KEEPER if (browser, tab_id) == ("b1", 7) else None)
            for browser, tabs in BASELINE.items()
            for tab_id in tabs
        )
    elif route == "open":
        body = parse(request.body or b"")
        tab = answer["tab"]
        assert (tab["url"], tab["owner"]["sessionId"]) == (body["url"], session)
        assert tab["browser"] == (body.get("browser") or "b2")  # else the last to connect
    else:
        browser, tab_id = resolve(request.segments[1])  # type: ignore[misc]
        ref = f"{browser}:{tab_id}"
        if route == "tools":
            assert answer["tab"] == ref and [t["name"] for t in answer["tools"]] == ["echo"]
        else:
            owner = {"claim": session, "release": None}
            assert answer["tab"]["ref"] == ref
            assert (answer["tab"]["owner"] or {}).get("sessionId") == owner[request.segments[2]]


def request_target(request: RestRequest) -> str:
    path = "/" + "/".join(encode_segment(segment) for segment in request.segments)
    query = urlencode(request.query, quote_via=quote)
    return path + ("?" + query if query else "")
