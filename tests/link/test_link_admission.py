"""A local process cannot keep the person's browser out: links that do not prove the link key are few and brief.

Written as the attacks: a local process forges the extension's ``Origin`` (easy outside a
browser) and opens links that never prove the broker's link key, to fill ``--max-links``, to hold
slots, or to use up the broker's file descriptors. Over real loopback sockets.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import secrets
from typing import Any

import aiohttp
import pytest
from aiohttp import WSCloseCode, WSMsgType

from broker.core import link_auth
from broker.core.link_auth import Role

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.cli_helpers import BrokerProcess, Brokers
from ..support.fakes import EXTENSION_ORIGIN

ORIGIN = {"Origin": EXTENSION_ORIGIN}


def nonce() -> str:
    return link_auth.b64(secrets.token_bytes(32))


async def next_frame(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    while True:
        frame = await ws.receive(timeout=10)
        assert frame.type is WSMsgType.TEXT, f"the link ended ({frame.type}, {frame.extra}) before a {kind!r} frame"
        message: dict[str, Any] = json.loads(frame.data)
        if message["type"] == kind:
            return message


async def prove(ws: aiohttp.ClientWebSocketResponse, token: str, port: int) -> None:
    """Do the extension's side of the handshake with the link key of ``token``."""
    ours = nonce()
    await ws.send_json({"type": "authChallenge", "nonce": ours})
    answer = await next_frame(ws, "authProof")
    key = link_auth.link_key(token)
    await ws.send_json(
        {"type": "authResponse", "proof": link_auth.proof(key, Role.EXTENSION, port, ours, answer["nonce"])}
    )


async def join(ws: aiohttp.ClientWebSocketResponse, name: str) -> None:
    """Send a snapshot, as an extension of the original protocol does (no handshake), and see it applied."""
    await ws.send_json({"type": "connected", "browser": {"name": name, "version": "1"}, "tabs": []})
    await ws.send_json({"type": "ping"})
    await next_frame(ws, "pong")


async def closed(ws: aiohttp.ClientWebSocketResponse) -> aiohttp.WSMessage:
    """The link's close, skipping what the broker sent before it."""
    while True:
        frame = await ws.receive(timeout=10)
        if frame.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING):
            return frame


async def browsers(broker: BrokerUnderTest) -> list[str]:
    status, body = await broker.get("/status")
    assert status == 200, body
    return [b["name"] for b in body["browsers"] if b["connected"]]


def listening_port(broker: BrokerUnderTest) -> int:
    port = broker.server.port
    assert port is not None
    return port


async def joined_links(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, count: int, name: str, *, proving: bool
) -> list[aiohttp.ClientWebSocketResponse]:
    """``count`` links with the extension's origin, each proving the link key first if ``proving``,
    then sending its snapshot as ``{name} {number}``; all of them served as browsers."""
    links = [await session.ws_connect(broker.ws_url, headers=ORIGIN) for _ in range(count)]
    for number, ws in enumerate(links):
        if proving:
            await prove(ws, TOKEN, listening_port(broker))
        await join(ws, f"{name} {number}")
    assert len(await browsers(broker)) == count
    return links


async def test_unproven_links_filling_the_slots_do_not_keep_out_a_link_that_proves_the_key(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(max_links=4)
    squatters = await joined_links(broker, session, 4, "squatter", proving=False)

    # The person's extension comes, and proves the key: it is let in, in the oldest squatter's place.
    person = await session.ws_connect(broker.ws_url, headers=ORIGIN)
    await prove(person, TOKEN, listening_port(broker))
    await join(person, "the person's browser")
    assert (await closed(squatters[0])).data == WSCloseCode.GOING_AWAY
    assert "the person's browser" in await browsers(broker)

    # More squatters push out each other, never the link that proved the key.
    for number in range(8):
        squatter = await session.ws_connect(broker.ws_url, headers=ORIGIN)
        await join(squatter, f"late squatter {number}")
        squatters.append(squatter)
    await person.send_json({"type": "ping"})
    await next_frame(person, "pong")
    named = await browsers(broker)
    assert "the person's browser" in named and len(named) == 4


async def test_links_that_proved_the_key_fill_the_slots_and_one_more_is_refused(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(max_links=2)
    profiles = await joined_links(broker, session, 2, "profile", proving=True)
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await session.ws_connect(broker.ws_url, headers=ORIGIN)
    assert refused.value.status == 429
    assert not any(ws.closed for ws in profiles)  # and held open till here: a link let go is closed


@pytest.mark.parametrize("require_proof", [False, True], ids=["proof-optional", "proof-required"])
async def test_an_unproven_link_is_closed_after_its_time_to_prove_itself(
    make_broker: MakeBroker, session: aiohttp.ClientSession, require_proof: bool
) -> None:
    broker = await make_broker(link_proof_timeout=0.3, require_extension_token=require_proof)
    port = listening_port(broker)
    proven = await session.ws_connect(broker.ws_url, headers=ORIGIN)
    await prove(proven, TOKEN, port)
    # Asks the broker to prove itself, then never proves itself back.
    idle = await session.ws_connect(broker.ws_url, headers=ORIGIN)
    await idle.send_json({"type": "authChallenge", "nonce": nonce()})
    await next_frame(idle, "authProof")
    frame = await closed(idle)
    assert frame.data == WSCloseCode.TRY_AGAIN_LATER and "did not prove the link key in time" in frame.extra
    # Its time is up, and the link that proved the key before it is still served.
    await join(proven, "the person's browser")
    assert await browsers(broker) == ["the person's browser"]


async def test_a_link_that_began_pairing_has_time_to_finish(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(link_proof_timeout=0.3)
    port = listening_port(broker)
    status, issued = await broker.post("/pairing")
    assert status == 200
    ws = await session.ws_connect(broker.ws_url, headers=ORIGIN)
    idle = await session.ws_connect(broker.ws_url, headers=ORIGIN)
    ours = nonce()
    await ws.send_json({"type": "pairChallenge", "nonce": ours})
    offer = await next_frame(ws, "pairNonce")
    # The link opened after it is closed for want of proof, so its own first time is up too.
    assert "in time" in (await closed(idle)).extra
    keys = link_auth.pairing_keys(issued["code"], offer["brokerId"], port, ours, offer["nonce"])
    await ws.send_json({"type": "pairProof", "proof": keys.extension_proof})
    assert (await next_frame(ws, "pairKey"))["proof"] == keys.broker_proof
    await prove(ws, TOKEN, port)
    await join(ws, "paired")
    assert await browsers(broker) == ["paired"]


async def test_many_unproven_links_are_capped_and_the_owners_rest_calls_still_work(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(require_extension_token=True, max_unproven_links=8, link_proof_timeout=60.0)
    port = listening_port(broker)
    flood = [await session.ws_connect(broker.ws_url, headers=ORIGIN) for _ in range(100)]
    # Each past the eighth closed the oldest: 92 are closed, telling why, and 8 wait.
    closes = await asyncio.gather(*(closed(ws) for ws in flood[:92]))
    assert {frame.data for frame in closes} == {WSCloseCode.TRY_AGAIN_LATER}
    assert all("wait to prove the link key" in frame.extra for frame in closes)
    status, _ = await broker.get("/status")
    assert status == 200
    person = await session.ws_connect(broker.ws_url, headers=ORIGIN)
    await prove(person, TOKEN, port)
    await join(person, "the person's browser")
    assert await browsers(broker) == ["the person's browser"]


def _few_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))


async def test_a_flood_of_unproven_links_cannot_use_up_a_brokers_file_descriptors(
    brokers: Brokers, session: aiohttp.ClientSession
) -> None:
    # The broker may open 128 files; 400 links that never prove themselves come, and stay open on
    # the attacker's side. The owner's REST calls and the person's extension still get through.
    broker: BrokerProcess = await brokers.start("--require-extension-token", preexec_fn=_few_descriptors)
    flood: list[aiohttp.ClientWebSocketResponse] = []
    # The attacker's own connections are not pooled nor bounded, and it reads none of its sockets.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as attacker:
        for _ in range(400):
            flood.append(await attacker.ws_connect(broker.ws_url, headers=ORIGIN))
        # The broker closed all but a few of them: its files are far from its limit.
        assert len(os.listdir(f"/proc/{broker.pid}/fd")) < 100
        await _the_owner_and_the_person_get_through(broker, session)


async def _the_owner_and_the_person_get_through(broker: BrokerProcess, session: aiohttp.ClientSession) -> None:
    headers = {"Authorization": f"Bearer {broker.token}"}
    async with session.get(f"http://127.0.0.1:{broker.port}/status", headers=headers) as response:
        assert response.status == 200
    person = await session.ws_connect(broker.ws_url, headers=ORIGIN)
    await prove(person, broker.token, broker.port)
    await person.send_json(
        {"type": "connected", "browser": {"name": "the person's browser", "version": "1"}, "tabs": []}
    )
    await person.send_json({"type": "ping"})
    await next_frame(person, "pong")
    async with session.get(f"http://127.0.0.1:{broker.port}/status", headers=headers) as response:
        status = await response.json()
    assert [b["name"] for b in status["browsers"]] == ["the person's browser"]


async def test_a_firefox_add_ons_link_is_heard_only_once_it_proves_the_key(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    # Any add-on of the person's Firefox carries a moz-extension origin (its uuid drawn per
    # profile): a broker that would hear Chromium links without proof still asks this one for it.
    broker = await make_broker(require_extension_token=False)
    port = listening_port(broker)
    firefox = {"Origin": "moz-extension://0b6c7b8e-3f2a-4d55-9c1e-7a1b2c3d4e5f"}
    stranger = await session.ws_connect(broker.ws_url, headers=firefox)
    await stranger.send_json({"type": "connected", "browser": {"name": "Some add-on", "version": "1"}, "tabs": []})
    frame = await closed(stranger)
    assert frame.data == WSCloseCode.POLICY_VIOLATION and "did not prove the link key" in frame.extra
    assert await browsers(broker) == []
    ours = await session.ws_connect(broker.ws_url, headers=firefox)
    await prove(ours, TOKEN, port)
    await join(ours, "Firefox")
    assert await browsers(broker) == ["Firefox"]


@pytest.mark.parametrize(
    "origin", ["moz-extension://not-a-uuid", "moz-extension://0B6C7B8E-3F2A-4D55-9C1E-7A1B2C3D4E5F.evil"]
)
async def test_a_malformed_moz_extension_origin_is_refused(broker: BrokerUnderTest, origin: str) -> None:
    async with broker.client.session.get(broker.ws_url, headers={"Origin": origin}) as response:
        assert response.status == 403
