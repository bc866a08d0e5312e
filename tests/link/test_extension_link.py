"""The extension link over real loopback sockets, with a scripted fake extension: who may open it,
keepalive, frames about tabs never announced, and how many links and tabs the broker keeps."""

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
from ..support.fakes import EXTENSION_ORIGIN, FakeExtension, FakeTab
from .link_world import OTHER_EXTENSION, call, connect_ws, shop

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
