"""What REST and MCP clients hear when the person pauses agents, ends a session or must approve.

A fake extension over a real loopback socket sends what the real one sends when the person acts
in its popup or approval window (``tests/e2e/test_e2e_person*.py`` drive the real ones).
"""

from __future__ import annotations

import asyncio

import pytest

from broker.core.security import client_token

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.fakes import FakeExtension, FakeTab, Json
from ..support.mcp_clients import ERAS, text


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def shop() -> FakeTab:
    return FakeTab(7, "https://shop.example/", "Shop", {"buy": lambda args: {"bought": args.get("item")}})


async def test_rest_calls_fail_at_once_while_paused_and_work_once_resumed(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await broker.claim(7)
    await fake.send({"type": "pauseChanged", "paused": True})
    await broker.settled(fake)
    status, body = await broker.post("/tabs/7/tools/buy", {"item": "shoes"})
    assert status == 423, body
    assert body["error"]["code"] == "paused"
    assert "the person paused AI agents in this browser" in body["error"]["message"]
    assert fake.received("callTool") == []
    status, body = await broker.get("/status")
    assert body["browsers"][0]["paused"] is True

    await fake.send({"type": "pauseChanged", "paused": False})
    await broker.settled(fake)
    status, body = await broker.post("/tabs/7/tools/buy", {"item": "shoes"})
    assert status == 200 and body["result"] == {"bought": "shoes"}


async def test_rest_hears_a_refusal_the_extension_sends(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())

    async def deny(message: Json) -> None:
        error = {"code": "not_approved", "message": "the person denied buy on shop.example"}
        await fake.send({"type": "toolResult", "callId": message["callId"], "error": error})

    fake.on_call = deny
    await broker.claim(7)
    status, body = await broker.post("/tabs/7/tools/buy", {})
    assert status == 403
    assert body["error"] == {"code": "not_approved", "message": "the person denied buy on shop.example"}


async def test_a_rest_session_the_person_ended_is_told_once_then_starts_anew(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    headers = {"X-Session-Id": "script-1", "X-Session-Name": "Nightly script"}
    status, _ = await broker.post("/tabs/7/claim", headers=headers)
    assert status == 200
    await fake.send({"type": "personEndedSession", "sessionId": "script-1"})
    await fake.wait_for("disconnect", lambda m: m["sessionId"] == "script-1")
    _, tabs = await broker.get("/tabs")
    assert tabs["tabs"][0]["owner"] is None
    status, body = await broker.post("/tabs/7/tools/buy", {}, headers=headers)
    assert status == 410
    assert body["error"]["code"] == "session_ended"
    assert "the person ended session 'Nightly script' from the browser" in body["error"]["message"]
    status, body = await broker.post("/tabs/7/tools/buy", {"item": "socks"}, headers=headers)
    assert status == 409 and body["error"]["code"] == "tab_not_claimed", "the new session claims it first"
    await broker.claim(7, session="script-1")
    status, body = await broker.post("/tabs/7/tools/buy", {"item": "socks"}, headers=headers)
    assert status == 200, body


async def test_a_tab_the_person_took_back_leaves_its_owner(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await broker.post("/tabs/7/claim")
    await fake.send({"type": "personReleasedTab", "tabId": 7})
    released = await fake.wait_for("tabReleased")
    assert (released["sessionId"], released["tabId"]) == ("rest", 7)
    _, tabs = await broker.get("/tabs")
    assert tabs["tabs"][0]["owner"] is None


async def test_an_mcp_session_the_person_ended_hears_it_on_its_next_call(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(shop())
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        assert "t7_buy" in await client.tool_names()
        [session] = [s["sessionId"] for s in (await broker.get("/status"))[1]["sessions"]]
        before = client.changes.count
        await fake.send({"type": "personEndedSession", "sessionId": session})
        await client.changes.next(before)
        # Its list is the fixed and built-in tools until it calls again.
        assert "t7_buy" not in await client.tool_names()
        ended = await client.call("call_page_tool", {"tab": 7, "tool": "buy", "arguments": {}})
        assert ended.is_error
        assert text(ended).startswith("session_ended: the person ended session 'Claude Code' from the browser")
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        again = await client.call("call_page_tool", {"tab": 7, "tool": "buy", "arguments": {"item": "hat"}})
        assert not again.is_error, text(again)
        assert (await broker.get("/status"))[1]["sessions"][0]["name"] == "Claude Code"


async def test_a_call_waiting_for_approval_outlives_its_timeout(make_broker: MakeBroker, era: str) -> None:
    broker = await make_broker(call_timeout=0.5)
    fake = await broker.extension(shop())
    fake.on_call = lambda message: ask_the_person(fake, message)
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("t7_buy", {"item": "boots"})
        assert not result.is_error, text(result)
        assert "boots" in text(result)


async def ask_the_person(fake: FakeExtension, message: Json) -> None:
    await fake.send({"type": "approvalPending", "callId": message["callId"], "timeout": 60})
    await asyncio.sleep(1.0)  # twice the call timeout: the person reads the window
    await fake.answer_call(message)


async def test_a_stdio_client_hears_progress_while_its_call_waits_for_the_person(make_broker: MakeBroker) -> None:
    """Over the tunnel ``browser-mcp mcp`` relays, every message of the connection reaches the client.

    (HTTP answers are single JSON bodies, which carry no notification of the request.)
    """
    broker = await make_broker(call_timeout=0.5)
    fake = await broker.extension(shop())
    fake.on_call = lambda message: ask_the_person(fake, message)
    async with broker.client.ws_connect("/mcp/stream") as ws:

        async def request(request_id: int, method: str, params: Json) -> list[Json]:
            await ws.send_json({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            frames: list[Json] = []
            async with asyncio.timeout(5):
                while not frames or frames[-1].get("id") != request_id:
                    frames.append(await ws.receive_json())
            return frames

        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "relay", "version": "1"}}
        await request(1, "initialize", hello)
        await ws.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await request(2, "tools/call", {"name": "tabs", "arguments": {"action": "claim", "tab": 7}})
        call = {"name": "t7_buy", "arguments": {"item": "boots"}, "_meta": {"progressToken": "p1"}}
        frames = await request(3, "tools/call", call)
    progress = [f["params"] for f in frames if f.get("method") == "notifications/progress"]
    assert progress, frames
    assert progress[0]["progressToken"] == "p1" and progress[0]["total"] == 60
    assert progress[0]["message"].startswith("waiting for the person to approve buy on tab b1:7")
    assert "boots" in frames[-1]["result"]["content"][0]["text"]


async def test_an_http_client_hears_progress_while_its_call_waits(make_broker: MakeBroker, era: str) -> None:
    """2025-11-25: the call is answered with one JSON body, so its progress goes on the session's
    own event stream, where the SDK client finds it by its token; 2026-07-28: the answer turns
    into a stream with the first progress."""
    broker = await make_broker(call_timeout=0.5)
    fake = await broker.extension(shop())
    fake.on_call = lambda message: ask_the_person(fake, message)
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        heard.append((value, total, message))

    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.client.call_tool("t7_buy", {"item": "boots"}, progress_callback=progress)
        assert not result.is_error, text(result)
    assert heard and heard[0][1] == 60
    assert (heard[0][2] or "").startswith("waiting for the person to approve buy on tab b1:7")


def two_shops() -> list[FakeTab]:
    return [shop(), FakeTab(8, "https://shop.example/2", "Shop 2", {"buy": lambda args: {"bought": 2}})]


class WaitingPerson:
    """A fake extension's person: every browser_evaluate waits for their answer, which the test gives."""

    def __init__(self, fake: FakeExtension) -> None:
        self.fake = fake
        self.asked: asyncio.Queue[Json] = asyncio.Queue()
        self.answer = asyncio.Event()
        fake.on_action = self.on_action

    async def on_action(self, message: Json) -> None:
        if message["action"] != "evaluate":
            await self.fake.answer_action(message)
            return
        await self.fake.send({"type": "approvalPending", "callId": message["callId"], "timeout": 60})
        await self.asked.put(message)
        await self.answer.wait()
        await self.fake.answer_action(message)

    async def waiting(self, broker: BrokerUnderTest) -> None:
        """Until the broker heard that the call waits for the person."""
        async with asyncio.timeout(5):
            await self.asked.get()
        await broker.settled(self.fake)


async def test_a_rest_client_cannot_act_in_a_tab_while_its_call_waits_for_the_person(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(*two_shops(), actions=["snapshot", "click", "navigate", "evaluate"])
    person = WaitingPerson(fake)
    for tab in (7, 8):
        assert (await broker.post(f"/tabs/{tab}/claim"))[0] == 200
    call = asyncio.ensure_future(broker.post("/tabs/7/actions/evaluate", {"function": "() => document.cookie"}))
    await person.waiting(broker)
    for refused in (
        await broker.post("/tabs/7/actions/navigate", {"url": "https://bank.example/"}),
        await broker.post("/tabs/7/actions/click", {"target": "e1"}),
        await broker.post("/tabs/7/tools/buy", {"item": "shoes"}),
        await broker.post("/tabs/7/focus"),
        await broker.delete("/tabs/7"),
    ):
        status, body = refused
        assert status == 409 and body["error"]["code"] == "tab_busy", body
        assert "tab b1:7" in body["error"]["message"] and "an approval is waiting" in body["error"]["message"]
    assert [m["action"] for m in fake.received("browserAction")] == ["evaluate"]
    assert fake.received("callTool") == [] and fake.received("closeTab") == []
    # Another tab is not held up.
    status, body = await broker.post("/tabs/8/actions/navigate", {"url": "https://shop.example/3"})
    assert status == 200, body

    person.answer.set()
    async with asyncio.timeout(5):
        status, body = await call
    assert status == 200, body
    status, body = await broker.post("/tabs/7/actions/navigate", {"url": "https://shop.example/"})
    assert status == 200, body


async def test_an_mcp_client_cannot_navigate_or_call_in_a_tab_while_its_call_waits(
    broker: BrokerUnderTest, era: str
) -> None:
    fake = await broker.extension(*two_shops(), actions=["snapshot", "click", "navigate", "evaluate"])
    person = WaitingPerson(fake)
    async with broker.mcp("Claude Code", era) as client, broker.mcp("Other Agent", era) as other:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        call = asyncio.ensure_future(client.call("browser_evaluate", {"function": "() => 1", "tab": "7"}))
        await person.waiting(broker)
        for name, args in (
            ("browser_navigate", {"url": "https://bank.example/", "tab": "7"}),
            ("call_page_tool", {"tab": 7, "tool": "buy", "arguments": {}}),
            ("tabs", {"action": "close", "tab": 7}),
        ):
            refused = await client.call(name, args)
            assert refused.is_error and text(refused).startswith("tab_busy: cannot"), (name, text(refused))
        # Another session cannot take the tab over meanwhile either (the claim is refused as the
        # tab is owned; once released by its owner, as busy).
        await client.call_json("tabs", {"action": "release", "tab": 7})
        taken = await other.call("tabs", {"action": "claim", "tab": 7})
        assert taken.is_error and text(taken).startswith("tab_busy:"), text(taken)
        person.answer.set()
        async with asyncio.timeout(5):
            result = await call
        assert not result.is_error, text(result)
        await other.call_json("tabs", {"action": "claim", "tab": 7})
        moved = await other.call("browser_navigate", {"url": "https://shop.example/", "tab": "7"})
        assert not moved.is_error, text(moved)


async def test_connect_names_each_sessions_credential(broker: BrokerUnderTest, era: str) -> None:
    tabs = [FakeTab(n, f"https://shop{n}.example/", "Shop", {}) for n in (7, 8, 9, 10)]
    fake = await broker.extension(*tabs)
    alice = {"Authorization": f"Bearer {client_token(TOKEN, 'alice')}"}
    # Each session is named to the browser as it first acts there: here, by claiming a tab.
    await broker.post("/tabs/7/claim")
    await broker.post("/tabs/8/claim", headers={**alice, "X-Session-Name": "Claude Code"})
    async with (
        broker.mcp("Claude Code", era) as owners,
        broker.mcp("Claude Code", era, token=client_token(TOKEN, "alice")) as alices,
    ):
        await owners.call_json("tabs", {"action": "claim", "tab": 9})
        await alices.call_json("tabs", {"action": "claim", "tab": 10})
    connects = [m for m in fake.received("connect") if m.get("sessionId")]
    named = sorted((m["credential"], m["sessionId"].startswith("mcp")) for m in connects)
    assert named == [("alice", False), ("alice", True), ("owner", False), ("owner", True)], connects
