"""The REST API over a real loopback socket: answers, sessions, ownership and every error (its guards
are tested in test_rest_guards.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from broker.version import VERSION

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeExtension, FakeTab
from .rest_shop import shop

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
