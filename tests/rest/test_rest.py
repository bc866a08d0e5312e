"""The REST API over a real loopback socket: security, sessions, ownership and every error."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from typing import Any

import aiohttp
import pytest
import yarl

from broker.version import BROKER_HEADER, VERSION

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.fakes import EXTENSION_ORIGIN, FakeExtension, FakeTab


def shop(tab_id: int = 7) -> FakeTab:
    return FakeTab(tab_id, "https://shop.example/", "Shop", {"search": lambda args: {"q": args.get("q")}})


async def raw(
    session: aiohttp.ClientSession, broker: BrokerUnderTest, method: str, path: str, **kwargs: Any
) -> tuple[int, Any]:
    async with session.request(method, str(broker.server.make_url(path)), **kwargs) as response:
        return response.status, await response.json()


# Security


@pytest.mark.parametrize("path", ["/status", "/tabs", "/tabs/7/tools"])
async def test_missing_token_is_refused(broker: BrokerUnderTest, session: aiohttp.ClientSession, path: str) -> None:
    status, body = await raw(session, broker, "GET", path)
    assert status == 401 and body["error"]["code"] == "unauthorized"
    assert "discovery file" in body["error"]["message"]


@pytest.mark.parametrize("header", [f"Bearer {TOKEN}x", f"Basic {TOKEN}", "Bearer", TOKEN])
async def test_wrong_token_is_refused(broker: BrokerUnderTest, session: aiohttp.ClientSession, header: str) -> None:
    status, body = await raw(session, broker, "GET", "/tabs", headers={"Authorization": header})
    assert status == 401 and body["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8765",
        "127.0.0.1.nip.io",
        "192.168.1.2:80",
        "[::1]evil.example",
        "[::1]:80evil.example",
        "localhost@evil.example",
        "127.0.0.1:80:90",
    ],
)
async def test_foreign_host_is_refused_even_with_the_token(broker: BrokerUnderTest, host: str) -> None:
    status, body = await broker.get("/tabs", headers={"Host": host})
    assert status == 403 and "loopback" in body["error"]["message"]


@pytest.mark.parametrize("host", ["localhost", "localhost:8765", "127.0.0.1:1", "[::1]:8765", "127.1.2.3"])
async def test_loopback_hosts_are_served(broker: BrokerUnderTest, host: str) -> None:
    status, _ = await broker.get("/tabs", headers={"Host": host})
    assert status == 200


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://localhost:3000"])
async def test_web_origin_is_refused_even_with_the_token(broker: BrokerUnderTest, origin: str) -> None:
    status, body = await broker.post("/tabs/7/tools/search", {}, headers={"Origin": origin})
    assert status == 403 and body["error"]["code"] == "forbidden"


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 401, "unauthorized"),
        ({"Authorization": f"Bearer {TOKEN}x"}, 401, "unauthorized"),
        ({"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}, 403, "forbidden"),
        ({"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"}, 403, "forbidden"),
        ({"Authorization": f"Bearer {TOKEN}", "X-Session-Id": "a b"}, 400, "invalid_request"),
        ({"Authorization": f"Bearer {TOKEN}"}, 200, None),
    ],
)
async def test_a_page_tool_call_is_guarded_and_answered_as_every_request(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, headers: dict[str, str], status: int, code: str | None
) -> None:
    """Page tool calls are answered ahead of aiohttp's router (app.answer_tool_calls_first): the same
    guard, error shape and broker header as any other route."""
    await broker.extension(shop())
    await broker.claim(7)
    url = str(broker.server.make_url("/tabs/7/tools/search"))
    async with session.post(url, json={"q": "x"}, headers=headers) as response:
        body = await response.json()
        assert response.status == status, body
        assert response.headers[BROKER_HEADER] == VERSION
    assert body == ({"result": {"q": "x"}} if code is None else body | {"error": body["error"] | {"code": code}})


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/tabs/7/tools/se%61rch", {}),
        ("/tabs/b1%3A7/tools/search", {}),
        ("/tabs/7/tools/search", {"Expect": "100-continue"}),
    ],
)
async def test_a_page_tool_call_through_the_router_is_answered_alike(
    broker: BrokerUnderTest, path: str, headers: dict[str, str]
) -> None:
    """A path with an escape, or a request that expects 100-continue, takes aiohttp's router to the
    same handler: the same answer and header."""
    await broker.extension(shop())
    await broker.claim(7)
    async with broker.client.post(yarl.URL(path, encoded=True), json={"q": "x"}, headers=headers) as response:
        assert (response.status, await response.json()) == (200, {"result": {"q": "x"}})
        assert response.headers[BROKER_HEADER] == VERSION
    status, body = await broker.post("/tabs/7/tools/a%2Fb", {})
    assert status == 404 and body["error"]["code"] == "tool_not_found" and "'a/b'" in body["error"]["message"]


async def test_the_extensions_own_origin_is_served(broker: BrokerUnderTest) -> None:
    status, _ = await broker.get("/status", headers={"Origin": EXTENSION_ORIGIN})
    assert status == 200


# Answers


async def test_status_shows_a_browser_once_its_extension_speaks(broker: BrokerUnderTest) -> None:
    fake = FakeExtension([shop()])
    await fake.connect(broker.client.session, broker.ws_url, snapshot=False)
    broker.fakes.append(fake)
    status, body = await broker.get("/status")
    assert status == 200 and body["browsers"] == []
    await fake.send_snapshot()
    await broker.settled(fake)
    status, body = await broker.get("/status")
    assert [(b["name"], b["connected"]) for b in body["browsers"]] == [("FakeChrome", True)]


async def test_status_shows_browsers_sessions_and_tabs(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(), instance_id="profile-1")
    await broker.post("/tabs/7/claim", headers={"X-Session-Id": "agent-1", "X-Session-Name": "Claude Code"})
    status, body = await broker.get("/status")
    assert status == 200
    assert body["tabs"] == 1 and body["pendingCalls"] == 0 and body["protocol"] == 1
    assert body["browsers"] == [
        {
            "browser": "b1",
            "name": "FakeChrome",
            "version": "1.0",
            "instanceId": "profile-1",
            "connected": True,
            "tabs": 1,
            "actions": [],
            "features": [],
            "paused": False,
            "extensionVersion": VERSION,
            "extensionOutdated": None,
            "driver": {"name": "", "actions": []},
        }
    ]
    assert body["sessions"] == [
        {"sessionId": "agent-1", "name": "Claude Code", "ownedTabs": ["b1:7"], "pendingCalls": 0}
    ]


async def test_result_is_the_pages_result_unchanged(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    payload = {"q": {"deep": [1, 2.5, None, True, "ü"], "empty": {}}}
    fake.tabs[7].functions["echo"] = lambda args: args
    fake.tabs[7].push_tools = False
    await fake.send_snapshot()
    await broker.settled(fake)
    await broker.claim(7)
    status, body = await broker.post("/tabs/7/tools/echo", payload)
    assert (status, body) == (200, {"result": payload})


async def test_empty_body_calls_the_tool_with_no_arguments(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await broker.claim(7)
    async with broker.client.post("/tabs/7/tools/search") as response:
        assert response.status == 200
    assert fake.received("callTool")[0]["args"] == {}


@pytest.mark.parametrize(
    ("path", "code"),
    [("/tabs/99/tools/search", "tab_not_found"), ("/tabs/7/tools/nope", "tool_not_found"), ("/nowhere", "not_found")],
)
async def test_unknown_tab_tool_or_route_is_404(broker: BrokerUnderTest, path: str, code: str) -> None:
    await broker.extension(shop())
    await broker.claim(7)
    status, body = await broker.post(path, {})
    assert status == 404 and body["error"]["code"] == code


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"data": b"{oops", "headers": {"Content-Type": "application/json"}}, "not valid JSON"),
        ({"json": [1, 2]}, "must be a JSON object"),
        ({"json": {}, "params": {"timeout": "soon"}}, "timeout"),
        ({"json": {}, "params": {"timeout": "-1"}}, "timeout"),
        ({"json": {}, "headers": {"X-Session-Id": "a b/c"}}, "X-Session-Id"),
    ],
)
async def test_bad_request_is_400_and_costs_nothing(
    broker: BrokerUnderTest, kwargs: dict[str, Any], words: str
) -> None:
    await broker.extension(shop())
    await broker.claim(7)
    async with broker.client.post("/tabs/7/tools/search", **kwargs) as response:
        body = await response.json()
        assert response.status == 400 and words in body["error"]["message"]
    status, _ = await broker.post("/tabs/7/tools/search", {})
    assert status == 200


@pytest.mark.parametrize(
    "body", [None, {}, {"url": 5}, {"url": "https://x/", "focus": "yes"}, {"url": "https://x/", "browser": 1}]
)
async def test_open_tab_needs_a_url(broker: BrokerUnderTest, body: Any) -> None:
    await broker.extension(shop())
    status, answer = await broker.post("/tabs", body)
    assert status == 400 and answer["error"]["code"] == "invalid_request"


async def test_open_tab_in_an_unknown_browser_is_404(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    status, body = await broker.post("/tabs", {"url": "https://x/", "browser": "b9"})
    assert status == 404 and body["error"]["code"] == "browser_not_found"


async def test_request_body_over_the_limit_is_413(make_broker: Any) -> None:
    broker = await make_broker(frame_limit=1024)
    await broker.extension(shop())
    status, body = await broker.post("/tabs/7/tools/search", {"blob": "x" * 4096})
    assert status == 413 and body["error"]["code"] == "request_too_large"


# Sessions and ownership


async def test_tab_opened_by_one_session_is_refused_to_another_naming_the_owner(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    agent = {"X-Session-Id": "agent-1", "X-Session-Name": "Claude Code"}
    status, body = await broker.post("/tabs", {"url": "https://news.example/"}, headers=agent)
    ref = body["tab"]["ref"]
    for method, path in [
        ("POST", f"/tabs/{ref}/tools/search"),
        ("DELETE", f"/tabs/{ref}"),
        ("POST", f"/tabs/{ref}/claim"),
    ]:
        async with broker.client.request(method, path, json={}) as response:
            answer = await response.json()
            assert response.status == 409, path
            assert answer["error"]["code"] == "tab_owned" and "Claude Code" in answer["error"]["message"]
    status, body = await broker.delete(f"/tabs/{ref}", headers=agent)
    assert (status, body) == (200, {"closed": ref})
    status, body = await broker.get("/tabs")
    assert [t["ref"] for t in body["tabs"]] == ["b1:7"]


async def test_a_new_session_is_announced_before_anything_it_asks_for(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    start = len(fake.inbox)
    headers = {"X-Session-Id": "agent-1", "X-Session-Name": "Claude Code"}
    status, _ = await broker.post("/tabs/7/claim", headers=headers)
    assert status == 200
    await fake.wait_for("tabClaimed", start=start)
    # The browser names the session's tab group after the client: it must know the name first.
    assert [(m["type"], m.get("clientName")) for m in fake.inbox[start:] if m["type"] != "pong"] == [
        ("connect", "Claude Code"),
        ("tabClaimed", None),
    ]


async def test_person_tab_can_be_claimed_and_released(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    agent = {"X-Session-Id": "agent-1"}
    status, body = await broker.post("/tabs/7/claim", headers=agent)
    assert status == 200 and body["tab"]["owner"]["sessionId"] == "agent-1"
    # The browser hears of it, to show the tab in the session's group.
    assert await fake.wait_for("tabClaimed") == {"type": "tabClaimed", "sessionId": "agent-1", "tabId": 7}
    status, _ = await broker.post("/tabs/7/tools/search", {})
    assert status == 409
    status, body = await broker.post("/tabs/7/release", headers=agent)
    assert body["tab"]["owner"] is None
    assert await fake.wait_for("tabReleased") == {"type": "tabReleased", "sessionId": "agent-1", "tabId": 7}
    status, body = await broker.post("/tabs/7/tools/search", {})
    assert status == 409 and body["error"]["code"] == "tab_not_claimed", "the person's again"
    await broker.claim(7)
    status, _ = await broker.post("/tabs/7/tools/search", {})
    assert status == 200


async def test_ended_session_releases_its_tabs(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await broker.post("/tabs/7/claim", headers={"X-Session-Id": "agent-1"})
    status, body = await broker.delete("/sessions/agent-1")
    assert (status, body) == (200, {"ended": "agent-1", "existed": True})
    assert (await fake.wait_for("disconnect"))["sessionId"] == "agent-1"
    status, body = await broker.get("/tabs")
    assert body["tabs"][0]["owner"] is None


async def test_a_session_is_announced_to_a_browser_only_once_it_acts_there(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    headers = {"X-Session-Id": "agent-2", "X-Session-Name": "Cursor"}
    assert (await broker.get("/tabs/7/tools", headers=headers))[0] == 200
    await broker.settled(fake)
    assert [m for m in fake.received("connect") if "sessionId" in m] == []
    assert (await broker.post("/tabs/7/claim", headers=headers))[0] == 200
    announced = await fake.wait_for("connect", lambda m: m.get("sessionId") == "agent-2")
    assert announced["clientName"] == "Cursor"


async def test_two_sessions_calling_at_once_each_get_their_own_answer(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(), FakeTab(8, "https://b.example/", "B", {"search": lambda args: {"tab": 8}}))
    await broker.post("/tabs/7/claim", headers={"X-Session-Id": "a"})
    await broker.post("/tabs/8/claim", headers={"X-Session-Id": "b"})
    answers = await asyncio.gather(
        *[
            broker.post(f"/tabs/{tab}/tools/search", {"q": i}, headers={"X-Session-Id": session})
            for i in range(20)
            for tab, session in ((7, "a"), (8, "b"))
        ]
    )
    assert all(status == 200 for status, _ in answers)
    assert [body["result"] for _, body in answers[:4]] == [{"q": 0}, {"tab": 8}, {"q": 1}, {"tab": 8}]


async def test_focus_brings_the_tab_forward(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await broker.claim(7, session="agent-1")
    status, body = await broker.post("/tabs/7/focus", headers={"X-Session-Id": "agent-1"})
    assert status == 200 and body["tab"]["ref"] == "b1:7"
    assert (await fake.wait_for("focusTab"))["sessionId"] == "agent-1"


async def test_the_persons_tab_is_not_closed_focused_or_called_until_claimed(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    start = len(fake.inbox)
    for method, path in [("DELETE", "/tabs/7"), ("POST", "/tabs/7/focus"), ("POST", "/tabs/7/tools/search")]:
        async with broker.client.request(method, path, json={}) as response:
            answer = await response.json()
            assert response.status == 409 and answer["error"]["code"] == "tab_not_claimed", path
            assert "claim it first" in answer["error"]["message"] and "claim b1:7" in answer["error"]["message"]
    status, body = await broker.get("/tabs/7/tools")
    assert status == 200 and [t["name"] for t in body["tools"]] == ["search"], "listing its tools stays open"
    await broker.settled(fake)
    assert {m["type"] for m in fake.inbox[start:]} == {"pong"}, "nothing reached the browser, not even the session"
    await broker.claim(7)
    assert (await broker.post("/tabs/7/focus"))[0] == 200
    assert (await broker.delete("/tabs/7")) == (200, {"closed": "b1:7"})


async def test_answers_name_the_fields_whose_text_a_web_page_chose(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    tab_fields = ["title", "url", "tools"]
    status, body = await broker.get("/tabs")
    assert status == 200 and body["untrusted"] == [f"tabs[].{name}" for name in tab_fields]
    status, body = await broker.get("/tabs/7/tools")
    assert status == 200 and body["untrusted"] == ["tools"]
    status, body = await broker.post("/tabs/7/claim")
    assert status == 200 and body["untrusted"] == [f"tab.{name}" for name in tab_fields]
    status, body = await broker.post("/tabs", {"url": "https://news.example/"})
    assert status == 200 and body["untrusted"] == [f"tab.{name}" for name in tab_fields]
    assert "untrusted" not in (await broker.get("/status"))[1]
    assert await broker.delete("/tabs/7") == (200, {"closed": "b1:7"})


async def test_an_unused_session_ends_and_gives_its_tabs_back(make_broker: MakeBroker) -> None:
    broker = await make_broker(session_idle=0.2)
    fake = await broker.extension(shop(), FakeTab(8, "https://news.example/", "News", {"read": lambda args: "read"}))
    held: list[dict[str, Any]] = []

    async def hold(message: dict[str, Any]) -> None:
        held.append(message)

    fake.on_call = hold
    # "busy" waits on a call the page has not answered; "script" claims a tab and exits.
    await broker.claim(8, session="busy")
    busy = asyncio.ensure_future(
        broker.post("/tabs/8/tools/read", {}, headers={"X-Session-Id": "busy"}, params={"timeout": "30"})
    )
    await fake.wait_for("callTool")
    status, _ = await broker.post("/tabs/7/claim", headers={"X-Session-Id": "script"})
    assert status == 200

    ended = await fake.wait_for("disconnect")
    assert ended["sessionId"] == "script"
    status, body = await broker.get("/tabs")
    assert [t["owner"] and t["owner"]["sessionId"] for t in body["tabs"]] == [None, "busy"]
    # The older session is still there: it waits on its call.
    assert "busy" in {s["sessionId"] for s in (await broker.get("/status"))[1]["sessions"]}
    await fake.send(fake.outcome(held[0]))
    status, _ = await busy
    assert status == 200


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/tabs", {"Authorization": f"Bearer {TOKEN}"}, 200),
        ("/status", {}, 401),
        ("/", {"Origin": EXTENSION_ORIGIN}, 426),
    ],
)
async def test_every_answer_says_it_comes_from_a_broker(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, path: str, headers: dict[str, str], status: int
) -> None:
    """What the extension looks for when it probes a port: errors and refusals carry it too."""
    async with session.get(str(broker.server.make_url(path)), headers=headers) as response:
        assert response.status == status
        assert response.headers[BROKER_HEADER] == VERSION
        if status == 426:
            assert "open a WebSocket" in (await response.json())["error"]["message"]


async def test_sessions_past_the_limit_are_refused_and_the_browser_hears_nothing(make_broker: MakeBroker) -> None:
    broker = await make_broker(max_sessions=2)
    fake = await broker.extension(shop())
    for name in ("a", "b"):
        status, _ = await broker.get("/tabs/7/tools", headers={"X-Session-Id": name})
        assert status == 200
    announced = len(fake.received("connect"))
    status, body = await broker.get("/tabs/7/tools", headers={"X-Session-Id": "c"})
    assert status == 429 and body["error"]["code"] == "too_many_sessions"
    assert len(fake.received("connect")) == announced
    # Sessions that exist go on; one ended makes room.
    assert (await broker.get("/tabs/7/tools", headers={"X-Session-Id": "a"}))[0] == 200
    await broker.delete("/sessions/b")
    assert (await broker.get("/tabs/7/tools", headers={"X-Session-Id": "c"}))[0] == 200


async def test_a_request_trickling_its_headers_is_dropped(make_broker: MakeBroker) -> None:
    broker = await make_broker(header_timeout=0.5)
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.server.port)
    started = asyncio.get_running_loop().time()
    writer.write(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    await writer.drain()

    async def trickle() -> None:
        with contextlib.suppress(ConnectionError):
            while True:
                writer.write(b"X-Slow: 1\r\n")
                await writer.drain()
                await asyncio.sleep(0.1)

    dripping = asyncio.create_task(trickle())
    try:
        async with asyncio.timeout(5):
            assert await reader.read() == b""  # closed by the broker, nothing answered
    finally:
        dripping.cancel()
        writer.close()
    assert asyncio.get_running_loop().time() - started < 5
    assert (await broker.get("/status"))[0] == 200


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", b'{"q": "plain, not gzip"}'),
        ("gzip", gzip.compress(b'{"q": "gzip indeed"}', mtime=0)),
        ("br", b'{"q": "plain"}'),
        ("deflate", b"\x00\x01 not deflate"),
        ("zstd", b"{}"),
        ("x-unknown", b"{}"),
    ],
)
@pytest.mark.parametrize("path", ["/tabs/7/tools/search", "/mcp"])
async def test_a_compressed_body_is_refused_with_415_and_the_connection_serves_on(
    broker: BrokerUnderTest, coding: str, body: bytes, path: str
) -> None:
    await broker.extension(shop())
    await broker.claim(7)
    headers = {"Content-Encoding": coding, "Content-Type": "application/json"}
    headers["Accept"] = "application/json, text/event-stream"
    async with broker.client.post(path, data=body, headers=headers) as response:
        assert response.status == 415
        assert response.headers[BROKER_HEADER] == VERSION
        error = (await response.json())["error"]
    assert error["code"] == "unsupported_encoding" and f"Content-Encoding: {coding}" in error["message"]
    status, answer = await broker.post("/tabs/7/tools/search", {"q": "after"}, headers={"Content-Encoding": "identity"})
    assert status == 200, answer


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)", "file:///etc/passwd", "data:text/html,hi"])
async def test_a_tab_or_window_of_another_scheme_than_the_webs_is_refused(broker: BrokerUnderTest, url: str) -> None:
    fake = await broker.extension(shop(), features=["windows"])
    for path in ("/tabs", "/windows"):
        status, body = await broker.post(path, {"url": url})
        assert status == 400 and body["error"]["code"] == "invalid_request", body
        assert "http: and https: pages or about:blank only" in body["error"]["message"]
    await broker.settled(fake)
    assert fake.received("openTab") == []
    status, _ = await broker.post("/tabs", {"url": "about:blank"})
    assert status == 200
