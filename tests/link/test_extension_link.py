"""The extension link over real loopback sockets, with a scripted fake extension."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import aiohttp
import pytest

from broker.core import link_auth
from broker.core.security import PROJECT_EXTENSION_ID

from ..conftest import TOKEN, BrokerUnderTest, ConnectFake, MakeBroker
from ..support.cli_helpers import Brokers
from ..support.fakes import EXTENSION_ORIGIN, FakeExtension, FakeTab, PageError

OTHER_EXTENSION = "abcdefghijklmnopabcdefghijklmnop"


def shop(tab_id: int = 7) -> FakeTab:
    def search(args: dict[str, Any]) -> Any:
        return {"hits": [f"{args.get('q', '')} 1", f"{args.get('q', '')} 2"]}

    def checkout(args: dict[str, Any]) -> Any:
        raise PageError("the cart is empty", code="empty_cart")

    return FakeTab(tab_id, "https://shop.example/", "Shop", {"search": search, "checkout": checkout})


async def call(broker: BrokerUnderTest, tab: str | int, tool: str, args: Any = None, **kwargs: Any) -> tuple[int, Any]:
    """Call a page tool through REST, its tab claimed first by the calling session, as calls need.

    A claim that fails (an unknown or ambiguous tab) leaves the call to say why.
    """
    await broker.post(f"/tabs/{tab}/claim", headers=kwargs.get("headers"))
    return await broker.post(f"/tabs/{tab}/tools/{tool}", args if args is not None else {}, **kwargs)


async def connect_ws(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, headers: dict[str, str], path: str = "/"
) -> aiohttp.ClientWebSocketResponse:
    return await session.ws_connect(str(broker.server.make_url(path)), headers=headers)


# Who may connect


async def test_snapshot_tabs_and_tools_appear_in_the_listing(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(), FakeTab(8, "about:blank"))
    status, body = await broker.get("/tabs")
    assert status == 200
    tabs = {tab["id"]: tab for tab in body["tabs"]}
    assert tabs[7]["title"] == "Shop" and tabs[7]["url"] == "https://shop.example/"
    assert [t["name"] for t in tabs[7]["tools"]] == ["search", "checkout"]
    assert tabs[7]["tools"][0]["inputSchema"] == {"type": "object", "properties": {}}
    assert tabs[8]["tools"] == [] and tabs[8]["browser"] == "b1"


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", f"chrome-extension://{OTHER_EXTENSION}", "http://127.0.0.1:8765"]
)
async def test_web_page_origin_cannot_open_the_link(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, origin: str
) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await connect_ws(broker, session, {"Origin": origin})
    assert refused.value.status == 403
    assert broker.hub.core.browsers() == []


async def test_allowed_extension_id_may_open_the_link(make_broker: MakeBroker, session: aiohttp.ClientSession) -> None:
    broker = await make_broker(allowed_extensions=frozenset({PROJECT_EXTENSION_ID, OTHER_EXTENSION}))
    ws = await connect_ws(broker, session, {"Origin": f"chrome-extension://{OTHER_EXTENSION}"})
    assert json.loads((await ws.receive()).data)["type"] == "connect"
    await ws.close()


async def test_script_without_origin_needs_the_token(broker: BrokerUnderTest, session: aiohttp.ClientSession) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await connect_ws(broker, session, {})
    assert refused.value.status == 401
    ws = await connect_ws(broker, session, {"Authorization": f"Bearer {TOKEN}"})
    assert json.loads((await ws.receive()).data)["type"] == "connect"
    await ws.close()


async def test_a_wrong_token_is_refused_even_with_the_extensions_origin(
    broker: BrokerUnderTest, session: aiohttp.ClientSession
) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await connect_ws(broker, session, {"Origin": EXTENSION_ORIGIN, "Authorization": "Bearer wrong"})
    assert refused.value.status == 401
    ws = await connect_ws(broker, session, {"Origin": EXTENSION_ORIGIN, "Authorization": f"Bearer {TOKEN}"})
    assert json.loads((await ws.receive()).data)["type"] == "connect"
    await ws.close()


async def test_a_broker_that_requires_proof_hears_an_extension_only_once_it_proved_the_link_key(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(require_extension_token=True)
    # The origin opens the socket, and nothing more: no connect, and a snapshot is refused.
    ws = await connect_ws(broker, session, {"Origin": EXTENSION_ORIGIN})
    await ws.send_json({"type": "connected", "browser": {"name": "Mallory", "version": "1"}, "tabs": []})
    refusal = json.loads((await ws.receive()).data)
    assert refusal["type"] == "error" and refusal["code"] == "unauthorized"
    assert "--require-extension-token" in refusal["message"]
    assert (await ws.receive()).type is aiohttp.WSMsgType.CLOSE
    assert broker.hub.core.browsers() == []
    # The extension proves the link key the native host's token or pairing gave it.
    fake = FakeExtension([shop()], instance_id="profile-1")
    await fake.connect(session, broker.ws_url, link_key=link_auth.link_key(TOKEN))
    await broker.settled(fake)
    broker.fakes.append(fake)
    [browser] = broker.hub.core.browsers()
    assert browser.connected and browser.instance_id == "profile-1"
    assert fake.inbox[0]["type"] == "authProof" and fake.inbox[1]["type"] == "connect"


async def test_foreign_host_cannot_open_the_link(broker: BrokerUnderTest, session: aiohttp.ClientSession) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await connect_ws(broker, session, {"Origin": EXTENSION_ORIGIN, "Host": "attacker.example"})
    assert refused.value.status == 403


# Calls through the link


async def test_call_returns_the_pages_result(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    status, body = await call(broker, 7, "search", {"q": "shoes"})
    assert (status, body) == (200, {"result": {"hits": ["shoes 1", "shoes 2"]}})
    sent = fake.received("callTool")[0]
    assert (sent["tabId"], sent["toolName"], sent["args"], sent["sessionId"]) == (7, "search", {"q": "shoes"}, "rest")


async def test_page_tool_failure_passes_its_message_on(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    status, body = await call(broker, 7, "checkout")
    assert status == 502
    assert body["error"] == {"code": "tool_failed", "message": "the cart is empty", "pageCode": "empty_cart"}
    assert body["untrusted"] == ["error.message"], "the page wrote it"
    status, body = await broker.post("/tabs/7/tools/nope", {})
    assert status == 404 and body["untrusted"] == ["error.message"], "it lists the tools the page declared"
    status, body = await broker.delete("/tabs/99")
    assert status == 404 and "untrusted" not in body


@pytest.mark.parametrize("error", [None, "plain string failure"])
async def test_tool_result_error_may_be_null_or_a_string(broker: BrokerUnderTest, error: str | None) -> None:
    fake = await broker.extension(shop())

    async def answer(message: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": message["callId"], "result": "done", "error": error})

    fake.on_call = answer
    status, body = await call(broker, 7, "search")
    if error is None:
        assert (status, body) == (200, {"result": "done"})
    else:
        assert (status, body["error"]["message"]) == (502, "plain string failure")


async def test_extension_that_never_answers_times_out_naming_tab_and_tool(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())

    async def never(message: dict[str, Any]) -> None:
        pass

    fake.on_call = never
    status, body = await call(broker, 7, "search", params={"timeout": "0.2"})
    assert status == 504
    assert body["error"]["code"] == "timeout"
    assert "'search'" in body["error"]["message"] and "b1:7" in body["error"]["message"]
    assert broker.hub.core.pending_count == 0


async def test_late_reply_is_dropped_and_the_link_keeps_working(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    held: list[dict[str, Any]] = []

    async def hold(message: dict[str, Any]) -> None:
        held.append(message)

    fake.on_call = hold
    status, _ = await call(broker, 7, "search", params={"timeout": "0.2"})
    assert status == 504
    await fake.send(fake.outcome(held[0]))
    fake.on_call = fake.answer_call
    status, body = await call(broker, 7, "search", {"q": "hat"})
    assert (status, body["result"]) == (200, {"hits": ["hat 1", "hat 2"]})


async def test_duplicate_reply_is_dropped(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())

    async def twice(message: dict[str, Any]) -> None:
        await fake.send(fake.outcome(message))
        await fake.send({**fake.outcome(message), "result": "second answer"})

    fake.on_call = twice
    status, body = await call(broker, 7, "search", {"q": "a"})
    assert body == {"result": {"hits": ["a 1", "a 2"]}}
    fake.on_call = fake.answer_call
    status, body = await call(broker, 7, "search", {"q": "b"})
    assert (status, body) == (200, {"result": {"hits": ["b 1", "b 2"]}})


async def test_link_lost_mid_call_fails_at_once(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())

    async def drop(message: dict[str, Any]) -> None:
        assert fake.ws is not None
        await fake.ws.close()

    fake.on_call = drop
    async with asyncio.timeout(3):  # the call timeout is 5 s: an answer before it is "at once"
        status, body = await call(broker, 7, "search")
    assert status == 503 and body["error"]["code"] == "extension_disconnected"
    status, body = await broker.get("/tabs")
    assert body["tabs"] == []


async def test_no_extension_connected_is_503_with_instructions(broker: BrokerUnderTest) -> None:
    status, body = await call(broker, 7, "search")
    assert status == 503
    assert body["error"]["code"] == "no_extension" and "extension" in body["error"]["message"]


# Bad frames


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"type": "teleport"}', "unknown message type 'teleport'"),
        ('{"type": "tabClosed", "tabId": "seven"}', "tabId"),
        ('{"type": "toolResult", "callId": 5}', "callId"),
        ('{"type": "connected", "tabs": [{"id": true}]}', "tabs[0].id"),
        ('{"type": "tabClosed", "tabId": 9223372036854775807}', "outside JavaScript's safe integers"),
        ('{"type": "tabCreated", "tab": {"id": -9007199254740992}}', "outside JavaScript's safe integers"),
        ('{"type": "toolsChanged", "tabId": 404, "tools": []}', "never announced"),
        ('{"type": "tabFocused", "tabId": 404}', "never announced"),
        ('{"type": "toolsDiscovered", "callId": "c1", "tabId": 404, "tools": []}', "never announced"),
    ],
)
async def test_bad_frame_gets_an_error_reply_and_the_link_stays_up(
    broker: BrokerUnderTest, frame: str, words: str
) -> None:
    fake = await broker.extension(shop())
    other = await broker.extension(shop(9), browser_name="Other")
    await fake.send_raw(frame)
    error = await fake.wait_for("error")
    assert words in error["message"]
    assert (await call(broker, 7, "search", {"q": "x"}))[0] == 200
    assert (await call(broker, 9, "search", {"q": "y"}))[0] == 200
    assert other.received("error") == []
    # Nothing of the frame was taken: no phantom tab in the listing.
    status, body = await broker.get("/tabs")
    assert status == 200 and sorted(tab["id"] for tab in body["tabs"]) == [7, 9]


async def test_frame_over_the_limit_fails_its_call_and_the_link_stays_up(make_broker: MakeBroker) -> None:
    broker = await make_broker(frame_limit=4096)
    fake = await broker.extension(shop())

    async def huge(message: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": message["callId"], "result": "x" * 5000, "error": None})

    fake.on_call = huge
    status, body = await call(broker, 7, "search")
    assert status == 413 and body["error"]["code"] == "message_too_large"
    assert "4096" in body["error"]["message"]
    error = await fake.wait_for("error")
    assert error["code"] == "message_too_large"
    fake.on_call = fake.answer_call
    status, _ = await call(broker, 7, "search")
    assert status == 200


async def test_frame_far_over_the_limit_closes_only_that_link(make_broker: MakeBroker) -> None:
    broker = await make_broker(frame_limit=4096)
    fake = await broker.extension(shop())
    other = await broker.extension(shop(9), browser_name="Other")
    await fake.send_raw("x" * 10_000)
    async with asyncio.timeout(5):
        await fake.closed.wait()
    assert fake.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
    status, _ = await call(broker, 9, "search")
    assert status == 200 and not other.closed.is_set()


async def test_frames_up_to_32_mib_are_accepted(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    screenshot = "A" * (31 * 1024 * 1024)

    async def big(message: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": message["callId"], "result": screenshot, "error": None})

    fake.on_call = big
    status, body = await call(broker, 7, "search")
    # Read whole: the broker withholds it from the client as binary-looking, and says how long it was.
    assert status == 200 and f"{len(screenshot):,} base64-like characters withheld" in body["result"]


# Tabs through the link


async def test_open_tab_answered_by_tab_created_belongs_to_the_session(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    status, body = await broker.post("/tabs", {"url": "https://news.example/"}, headers={"X-Session-Id": "agent-1"})
    assert status == 200
    tab = body["tab"]
    assert tab["url"] == "https://news.example/" and tab["owner"] == {"sessionId": "agent-1", "name": "agent-1"}
    assert fake.received("openTab")[0]["focus"] is True


async def test_open_tab_answered_by_focusing_an_own_tab(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await broker.claim(7)
    fake.answer_open_with = "tabFocused"
    status, body = await broker.post("/tabs", {"url": "https://shop.example/", "focus": False})
    assert status == 200 and body["tab"]["id"] == 7 and body["tab"]["active"] is True


async def test_open_tab_answered_by_focusing_the_persons_tab_does_not_make_it_the_sessions(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(shop())
    fake.answer_open_with = "tabFocused"
    status, body = await broker.post("/tabs", {"url": "https://shop.example/"})
    assert status == 409 and body["error"]["code"] == "tab_not_claimed"
    assert "brought its tab b1:7" in body["error"]["message"]
    assert (await broker.get("/tabs"))[1]["tabs"][0]["owner"] is None
    assert (await broker.delete("/tabs/7"))[1]["error"]["code"] == "tab_not_claimed"


async def test_tools_are_discovered_from_an_extension_that_never_pushes_them(broker: BrokerUnderTest) -> None:
    tab = shop()
    tab.push_tools = False
    fake = await broker.extension(tab)
    status, body = await broker.get("/tabs/7/tools")
    assert status == 200 and [t["name"] for t in body["tools"]] == ["search", "checkout"]
    assert len(fake.received("discoverTools")) == 1
    status, body = await broker.get("/tabs/7/tools")
    assert len(fake.received("discoverTools")) == 1


async def test_refresh_asks_the_page_even_when_the_extension_pushed_its_tools(broker: BrokerUnderTest) -> None:
    tab = shop()
    fake = await broker.extension(tab)
    # The page gained a tool the extension has not reported yet.
    tab.functions["compare"] = lambda args: "compared"
    status, body = await broker.get("/tabs/7/tools")
    assert [t["name"] for t in body["tools"]] == ["search", "checkout"]
    assert fake.received("discoverTools") == []
    status, body = await broker.get("/tabs/7/tools?refresh=true")
    assert status == 200 and [t["name"] for t in body["tools"]] == ["search", "checkout", "compare"]
    assert len(fake.received("discoverTools")) == 1
    # What the page said is now the tab's listing for everyone.
    status, body = await broker.get("/tabs")
    assert [t["name"] for t in body["tabs"][0]["tools"]] == ["search", "checkout", "compare"]
    status, body = await broker.get("/tabs/7/tools?refresh=maybe")
    assert status == 400 and "refresh" in body["error"]["message"]


async def test_tool_changes_update_the_listing(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await fake.set_tools(7, {"compare": lambda args: "compared"})
    await broker.settled(fake)
    status, body = await broker.get("/tabs/7/tools")
    assert [t["name"] for t in body["tools"]] == ["compare"]
    status, body = await call(broker, 7, "search")
    assert status == 404 and body["error"]["code"] == "tool_not_found"


async def test_person_closing_a_tab_removes_it(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop(), FakeTab(8, "about:blank"))
    await fake.remove_tab(7)
    await broker.settled(fake)
    status, body = await call(broker, 7, "search")
    assert status == 404 and body["error"]["code"] == "tab_not_found"


# Several browsers


async def test_same_tab_id_in_two_browsers_is_ambiguous(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    await broker.extension(shop(), browser_name="Second")
    status, body = await broker.get("/tabs")
    assert sorted(t["ref"] for t in body["tabs"]) == ["b1:7", "b2:7"]
    status, body = await call(broker, 7, "search")
    assert status == 409 and body["error"]["code"] == "ambiguous_tab" and "b2:7" in body["error"]["message"]
    status, body = await call(broker, "b2:7", "search", {"q": "z"})
    assert status == 200


async def test_same_browser_reconnecting_replaces_its_old_link(broker: BrokerUnderTest) -> None:
    old = await broker.extension(shop(), instance_id="profile-1")
    status, _ = await broker.post("/tabs/7/claim", headers={"X-Session-Id": "agent-1"})
    assert status == 200
    new = await broker.extension(shop(), instance_id="profile-1")
    async with asyncio.timeout(5):
        await old.closed.wait()
    status, body = await broker.get("/tabs")
    assert [(t["ref"], t["owner"]["sessionId"]) for t in body["tabs"]] == [("b1:7", "agent-1")]
    status, body = await call(broker, 7, "search", headers={"X-Session-Id": "agent-1"})
    assert status == 200 and len(new.received("callTool")) == 1


async def test_a_browser_link_ends_only_its_own_browsers_sessions(broker: BrokerUnderTest) -> None:
    mine = await broker.extension(shop(7))
    other = await broker.extension(shop(8), browser_name="Other")
    agent = {"X-Session-Id": "agent", "X-Session-Name": "Agent"}
    assert (await broker.post("/tabs/b1:7/claim", headers=agent))[0] == 200
    assert (await call(broker, "b1:7", "search", headers=agent))[0] == 200
    # The other browser never heard of the session, so it cannot end it, nor learn it exists.
    start = len(other.inbox)
    await other.send({"type": "personEndedSession", "sessionId": "agent"})
    refusal = await other.wait_for("error", start=start)
    assert refusal["code"] == "unknown_session"
    await other.send({"type": "personEndedSession", "sessionId": "no-such-session"})
    assert (await other.wait_for("error", start=other.inbox.index(refusal) + 1))["message"] == refusal[
        "message"
    ].replace("'agent'", "'no-such-session'")
    status, body = await call(broker, "b1:7", "search", headers=agent)
    assert status == 200
    # Its own browser may; the other hears neither its connect nor its disconnect.
    await mine.send({"type": "personEndedSession", "sessionId": "agent"})
    await mine.wait_for("disconnect", lambda m: m["sessionId"] == "agent")
    status, body = await broker.post("/tabs/b1:7/tools/search", {}, headers=agent)
    assert status == 410 and "the person ended session 'Agent'" in body["error"]["message"]
    await broker.settled(other)
    assert [m for m in other.inbox if m.get("sessionId") == "agent"] == []


async def test_a_browser_link_cannot_release_another_browsers_tab_or_hold_its_call(broker: BrokerUnderTest) -> None:
    mine = await broker.extension(shop(7))
    other = await broker.extension(shop(8), browser_name="Other")
    agent = {"X-Session-Id": "agent"}
    assert (await broker.post("/tabs/b1:7/claim", headers=agent))[0] == 200
    start = len(other.inbox)
    await other.send({"type": "personReleasedTab", "tabId": 7})
    assert (await other.wait_for("error", start=start))["code"] == "unknown_tab"
    _, listing = await broker.get("/tabs")
    assert {t["ref"]: (t["owner"] or {}).get("sessionId") for t in listing["tabs"]} == {"b1:7": "agent", "b2:8": None}

    async def never(message: dict[str, Any]) -> None:
        # The other link claims the call waits for its person, for ten minutes.
        await other.send({"type": "approvalPending", "callId": message["callId"], "timeout": 600})

    mine.on_call = never
    async with asyncio.timeout(5):
        status, body = await call(broker, "b1:7", "search", headers=agent, params={"timeout": "0.5"})
    assert status == 504 and body["error"]["code"] == "timeout"
    assert "approval" not in body["error"]["message"]


async def test_a_browser_hears_only_the_sessions_that_act_in_it(broker: BrokerUnderTest) -> None:
    first = await broker.extension(shop(7))
    second = await broker.extension(shop(8), browser_name="Second")
    for session, tab in (("one", "b1:7"), ("two", "b2:8")):
        assert (await call(broker, tab, "search", headers={"X-Session-Id": session, "X-Session-Name": session}))[
            0
        ] == 200
    # A third lists tabs and tools everywhere and opens a tab in the second browser.
    third = {"X-Session-Id": "three"}
    assert (await broker.get("/tabs", headers=third))[0] == 200
    assert (await broker.get("/tabs/b1:7/tools", headers=third))[0] == 200
    assert (await broker.post("/tabs", {"url": "https://new.example/", "browser": "b2"}, headers=third))[0] == 200
    await broker.delete("/sessions/three")
    await broker.settled(first)
    await broker.settled(second)

    def named(fake: FakeExtension) -> list[tuple[str, str]]:
        return [
            (m["type"], m["sessionId"])
            for m in fake.inbox
            if m["type"] in ("connect", "disconnect") and "sessionId" in m
        ]

    assert named(first) == [("connect", "one")]
    assert named(second) == [("connect", "two"), ("connect", "three"), ("disconnect", "three")]


async def test_a_restarted_worker_hears_again_the_sessions_of_its_browser(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(7), instance_id="profile-1")
    await broker.extension(shop(8), browser_name="Other", instance_id="profile-2")
    assert (await broker.post("/tabs/b1:7/claim", headers={"X-Session-Id": "mine", "X-Session-Name": "Mine"}))[0] == 200
    assert (await broker.post("/tabs/b2:8/claim", headers={"X-Session-Id": "theirs"}))[0] == 200
    restarted = await broker.extension(shop(7), instance_id="profile-1")
    listing = await restarted.wait_for("connect", lambda m: "sessionIds" in m)
    assert listing["sessionIds"] == ["mine"]
    named = [m for m in restarted.inbox if m["type"] == "connect" and m.get("sessionId")]
    assert [(m["sessionId"], m["clientName"]) for m in named] == [("mine", "Mine")]


# Keepalive


async def test_broker_pings_a_quiet_link_and_keeps_it(make_broker: MakeBroker) -> None:
    broker = await make_broker(ping_interval=0.1, silence_timeout=2.0)
    fake = await broker.extension(shop())
    await fake.wait_for("ping")
    await fake.wait_for("ping", start=fake.inbox.index(fake.received("ping")[0]) + 1)
    assert not fake.closed.is_set()
    status, _ = await call(broker, 7, "search")
    assert status == 200


async def test_silent_link_is_closed_and_its_calls_fail(make_broker: MakeBroker) -> None:
    broker = await make_broker(ping_interval=0.1, silence_timeout=0.5)
    fake = await broker.extension(shop())
    fake.answer_pings = False

    async def never(message: dict[str, Any]) -> None:
        pass

    fake.on_call = never
    status, body = await call(broker, 7, "search")
    assert status == 503 and body["error"]["code"] == "extension_disconnected"
    assert "no message" in body["error"]["message"]
    async with asyncio.timeout(5):
        await fake.closed.wait()


async def test_extension_ping_is_answered(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    start = len(fake.inbox)
    await fake.send({"type": "ping", "timestamp": 1})
    await fake.wait_for("pong", start=start)


async def test_extension_without_session_ids_is_served(broker: BrokerUnderTest) -> None:
    fake = FakeExtension([shop()])
    await fake.connect(broker.client.session, broker.ws_url, snapshot=False)
    broker.fakes.append(fake)
    await fake.send({"type": "tabCreated", "tab": {"id": 7, "title": "Shop", "url": "https://shop.example/"}})
    await fake.send({"type": "toolsChanged", "tabId": 7, "tools": [{"name": "search"}]})
    await broker.settled(fake)
    status, body = await call(broker, 7, "search", {"q": "q"})
    assert status == 200 and body["result"] == {"hits": ["q 1", "q 2"]}


# Frames about tabs never created, and how many links and tabs the broker keeps


async def test_tab_updated_for_a_tab_never_announced_adds_no_ghost(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    start = len(fake.inbox)
    await fake.send({"type": "tabUpdated", "tab": {"id": 99, "title": "Ghost", "url": "https://ghost.example/"}})
    refusal = await fake.wait_for("error", start=start)
    assert refusal["code"] == "unknown_tab" and "tabUpdated names tab 99" in refusal["message"]
    status, body = await broker.get("/tabs")
    assert [t["id"] for t in body["tabs"]] == [7]
    status, _ = await call(broker, 7, "search")
    assert status == 200


async def test_tabs_with_negative_ids_are_refused(broker: BrokerUnderTest) -> None:
    fake = FakeExtension([shop(), FakeTab(-5, "https://minus.example/")])
    await fake.connect(broker.client.session, broker.ws_url)
    broker.fakes.append(fake)
    await fake.send({"type": "tabCreated", "tab": {"id": -1, "title": "None", "url": "https://none.example/"}})
    await broker.settled(fake)
    refusals = fake.received("error")
    assert [r["code"] for r in refusals] == ["invalid_message", "invalid_message"]
    assert "connected names tab -5" in refusals[0]["message"] and "tabCreated names tab -1" in refusals[1]["message"]
    assert [t["id"] for t in (await broker.get("/tabs"))[1]["tabs"]] == [7]


async def test_links_past_the_limit_are_refused_with_a_clear_error(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(max_links=2)
    first = await broker.extension(shop())
    await broker.extension(FakeTab(8, "https://second.example/"), browser_name="Second")
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await connect_ws(broker, session, {"Origin": EXTENSION_ORIGIN})
    assert refused.value.status == 429
    handshake = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
    handshake |= {"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": EXTENSION_ORIGIN}
    async with session.get(broker.ws_url, headers=handshake) as answer:
        body = await answer.json()
    assert body["error"]["code"] == "too_many_links" and "--max-links" in body["error"]["message"]
    # The links that were open are untouched, and a closed one makes room.
    status, _ = await call(broker, 7, "search")
    assert status == 200
    closed = asyncio.Event()
    broker.hub.tabs_changed_listeners.append(lambda sessions: closed.set())
    await first.close()
    async with asyncio.timeout(5):
        await closed.wait()
    await broker.extension(shop(), browser_name="Third")


async def test_tabs_are_bounded_across_all_browsers(make_broker: MakeBroker) -> None:
    broker = await make_broker(max_tabs=3, max_tabs_per_browser=2)
    await broker.extension(shop(1), shop(2))
    second = await broker.extension(shop(3), shop(4), browser_name="Second")
    [refusal] = second.received("error")
    assert refusal["code"] == "too_many_tabs"
    assert "over 3 tabs across all browsers: 1 more ignored" in refusal["message"]
    start = len(second.inbox)
    await second.add_tab(shop(5))
    assert (await second.wait_for("error", start=start))["code"] == "too_many_tabs"
    _, body = await broker.get("/tabs")
    assert sorted(t["ref"] for t in body["tabs"]) == ["b1:1", "b1:2", "b2:3"]


async def test_a_live_link_survives_the_broker_standing_still_and_its_call_completes(
    brokers: Brokers, connect_fake: ConnectFake, session: aiohttp.ClientSession
) -> None:
    """The broker is stopped (SIGSTOP) past its silence deadline while the extension keeps pinging
    and answers the call in flight: once it runs again it reads those frames before judging."""
    broker = await brokers.start("--ping-interval", "0.5", "--silence-timeout", "2")
    fake = await connect_fake(broker, shop())
    in_flight = asyncio.Event()
    held: list[dict[str, Any]] = []

    async def hold(message: dict[str, Any]) -> None:
        held.append(message)
        in_flight.set()

    fake.on_call = hold
    headers = {"Authorization": f"Bearer {broker.token}"}
    async with session.post(f"http://127.0.0.1:{broker.port}/tabs/7/claim", headers=headers) as claimed:
        assert claimed.status == 200, await claimed.text()
    url = f"http://127.0.0.1:{broker.port}/tabs/7/tools/search?timeout=60"
    answer = asyncio.ensure_future(session.post(url, json={"q": "stall"}, headers=headers))
    async with asyncio.timeout(10):
        await in_flight.wait()

    broker.send_signal(signal.SIGSTOP)
    try:
        # Standing still for twice the silence deadline, the extension pinging all along; the
        # call's answer goes out meanwhile too, and waits in the broker's socket with the pings.
        for beat in range(8):
            await fake.send({"type": "ping"})
            if beat == 4:
                await fake.send(fake.outcome(held[0]))
            await asyncio.sleep(0.5)
    finally:
        broker.send_signal(signal.SIGCONT)

    async with asyncio.timeout(10):
        response = await answer
        assert response.status == 200, await response.text()
        assert (await response.json())["result"] == {"hits": ["stall 1", "stall 2"]}
    assert not fake.closed.is_set()
    fake.on_call = fake.answer_call
    async with session.post(url, json={"q": "after"}, headers=headers) as again:
        assert again.status == 200
    assert not fake.closed.is_set()
