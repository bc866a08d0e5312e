"""The broker proves who it is: the extension link's handshake, pairing, and ``POST /auth/challenge``.

Driven over real loopback sockets as the extension and the command line drive them; the
extension's side of the arithmetic is :mod:`broker.core.link_auth` plus AES-GCM, as WebCrypto does it.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from typing import Any

import aiohttp
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from broker.core import link_auth
from broker.core.errors import NoPairingCode, PairingFailed
from broker.core.link_auth import PairingDesk, Role
from broker.core.security import client_token

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.cli_helpers import Brokers, run_cli
from ..support.fakes import EXTENSION_ORIGIN

KEY = link_auth.link_key(TOKEN)


def nonce() -> str:
    return link_auth.b64(secrets.token_bytes(32))


class Peer:
    """A raw extension link that records every frame the broker sends."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_json(message)

    async def next(self, kind: str) -> dict[str, Any]:
        """The next frame of ``kind``, skipping the others (the ``connect`` a link opens with)."""
        while True:
            frame = await self.ws.receive(timeout=5)
            if frame.type is not aiohttp.WSMsgType.TEXT:
                raise AssertionError(f"the link ended ({frame.type}) before a {kind!r} frame came")
            message = json.loads(frame.data)
            self.frames.append(message)
            if message["type"] == kind:
                return message

    async def pair(self, code: str, port: int) -> tuple[dict[str, Any], dict[str, Any], link_auth.PairingKeys]:
        ours = nonce()
        await self.send({"type": "pairChallenge", "nonce": ours})
        offer = await self.next("pairNonce")
        keys = link_auth.pairing_keys(code, offer["brokerId"], port, ours, offer["nonce"])
        await self.send({"type": "pairProof", "proof": keys.extension_proof})
        frame = await self.ws.receive(timeout=5)
        answer = json.loads(frame.data)
        self.frames.append(answer)
        return offer, answer, keys


@pytest.fixture
async def peer(broker: BrokerUnderTest, session: aiohttp.ClientSession) -> Peer:
    return Peer(await session.ws_connect(broker.ws_url, headers={"Origin": EXTENSION_ORIGIN}))


async def issue_code(broker: BrokerUnderTest) -> str:
    status, body = await broker.post("/pairing")
    assert status == 200, body
    code: str = body["code"]
    return code


# The extension link


async def test_the_broker_proves_its_link_key_for_its_own_port_without_sending_the_token(
    broker: BrokerUnderTest, peer: Peer
) -> None:
    ours = nonce()
    await peer.send({"type": "authChallenge", "nonce": ours})
    answer = await peer.next("authProof")
    assert answer["brokerId"] == link_auth.broker_id(TOKEN)
    port = broker.server.port
    assert port is not None
    assert link_auth.check_proof(answer["proof"], KEY, Role.BROKER, port, ours, answer["nonce"])
    # A server on another port relaying this proof presents one made for the wrong port.
    assert not link_auth.check_proof(answer["proof"], KEY, Role.BROKER, port + 1, ours, answer["nonce"])
    # Nor does it pass for the extension's own proof, replayed back.
    assert not link_auth.check_proof(answer["proof"], KEY, Role.EXTENSION, port, ours, answer["nonce"])
    assert TOKEN not in json.dumps(peer.frames)


async def test_an_extension_whose_proof_is_wrong_is_dropped(broker: BrokerUnderTest, peer: Peer) -> None:
    await peer.send({"type": "authChallenge", "nonce": nonce()})
    await peer.next("authProof")
    await peer.send({"type": "authResponse", "proof": link_auth.b64(bytes(32))})
    refusal = await peer.next("error")
    assert refusal["code"] == "unauthorized" and "browser-mcp pair" in refusal["message"]
    assert (await peer.ws.receive(timeout=5)).type is aiohttp.WSMsgType.CLOSE
    assert broker.hub.core.browsers() == []


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "authChallenge", "nonce": "short"},
        {"type": "authChallenge"},
        {"type": "authResponse", "proof": "x"},
        {"type": "pairProof", "proof": "x"},
    ],
    ids=["short-nonce", "no-nonce", "response-before-challenge", "pair-proof-before-challenge"],
)
async def test_a_bad_handshake_frame_gets_an_error_and_the_link_stays_up(
    broker: BrokerUnderTest, peer: Peer, frame: dict[str, Any]
) -> None:
    await peer.send(frame)
    error = await peer.next("error")
    assert error["code"] == "invalid_message"
    await peer.send({"type": "authChallenge", "nonce": nonce()})
    await peer.next("authProof")


# Pairing


async def test_pairing_hands_the_link_key_to_an_extension_that_knows_the_code(
    broker: BrokerUnderTest, peer: Peer
) -> None:
    code = await issue_code(broker)
    assert len(link_auth.normalize_code(code)) == link_auth.CODE_LENGTH
    assert set(link_auth.normalize_code(code)) <= set(link_auth.CODE_ALPHABET)
    port = broker.server.port
    assert port is not None
    # Typed in lower case, without its dash.
    offer, answer, keys = await peer.pair(code.replace("-", "").lower(), port)
    assert offer["brokerId"] == link_auth.broker_id(TOKEN)
    assert answer["type"] == "pairKey"
    assert answer["proof"] == keys.broker_proof
    key = AESGCM(keys.wrap_key).decrypt(
        link_auth.unb64(answer["iv"]), link_auth.unb64(answer["wrappedKey"]), offer["brokerId"].encode()
    )
    assert key == KEY
    assert code.replace("-", "") not in json.dumps(peer.frames) and TOKEN not in json.dumps(peer.frames)
    # The code is spent: a second exchange finds none.
    await peer.send({"type": "pairChallenge", "nonce": nonce()})
    assert (await peer.next("error"))["code"] == "no_pairing_code"


async def test_a_wrong_code_gets_nothing_and_three_wrong_tries_void_it(broker: BrokerUnderTest, peer: Peer) -> None:
    code = await issue_code(broker)
    port = broker.server.port
    assert port is not None
    for left in (2, 1, 0):
        _, answer, _ = await peer.pair("WRONGCOD", port)
        assert answer["type"] == "error" and answer["code"] == "pairing_failed"
        assert ("too many tries" in answer["message"]) == (left == 0)
    assert not any(frame["type"] == "pairKey" for frame in peer.frames)
    await peer.send({"type": "pairChallenge", "nonce": nonce()})
    assert (await peer.next("error"))["code"] == "no_pairing_code"
    # The right code comes too late: it was voided.
    assert code


async def test_links_racing_wrong_proofs_against_one_code_are_all_refused_and_none_gets_the_key(
    broker: BrokerUnderTest, session: aiohttp.ClientSession
) -> None:
    # The attack: a local process opens a dozen links while a code is out, has each ask for a
    # pairing nonce, then sends every wrong proof at once, hoping the ones checked after the code
    # was voided are answered with the wrapped link key, to be searched offline.
    await issue_code(broker)
    port = broker.server.port
    assert port is not None
    peers = [Peer(await session.ws_connect(broker.ws_url, headers={"Origin": EXTENSION_ORIGIN})) for _ in range(12)]
    offers = []
    for peer in peers:
        ours = nonce()
        await peer.send({"type": "pairChallenge", "nonce": ours})
        offers.append((ours, await peer.next("pairNonce")))
    proofs = [
        link_auth.pairing_keys("WRONGCOD", offer["brokerId"], port, ours, offer["nonce"]).extension_proof
        for ours, offer in offers
    ]
    await asyncio.gather(*(peer.send({"type": "pairProof", "proof": p}) for peer, p in zip(peers, proofs, strict=True)))
    answers = await asyncio.gather(*(peer.ws.receive_json(timeout=10) for peer in peers))
    assert [a["type"] for a in answers] == ["error"] * 12, [a["type"] for a in answers]
    # Three wrong tries void the code; the proofs checked after find none out.
    assert sorted(a["code"] for a in answers) == ["no_pairing_code"] * 9 + ["pairing_failed"] * 3
    for peer in peers:
        await peer.ws.close()


async def test_pairing_without_a_code_out_says_how_to_get_one(peer: Peer) -> None:
    await peer.send({"type": "pairChallenge", "nonce": nonce()})
    error = await peer.next("error")
    assert error["code"] == "no_pairing_code" and "browser-mcp pair" in error["message"]


async def test_a_client_token_cannot_issue_a_pairing_code(broker: BrokerUnderTest) -> None:
    status, body = await broker.post("/pairing", headers={"Authorization": f"Bearer {client_token(TOKEN, 'agent')}"})
    assert status == 403 and "browser-mcp pair" in body["error"]["message"]


def test_a_pairing_code_expires_and_a_new_one_replaces_the_old() -> None:
    desk = PairingDesk()
    desk.issue("AAAAAAAA", now=0.0)
    assert desk.current(now=link_auth.CODE_LIFETIME - 1) == "AAAAAAAA"
    with pytest.raises(NoPairingCode, match="expired"):
        desk.current(now=link_auth.CODE_LIFETIME)
    desk.issue("AAAAAAAA", now=0.0)
    desk.issue("CCCCCCCC", now=1.0)
    assert desk.current(now=2.0) == "CCCCCCCC"
    with pytest.raises(PairingFailed):
        desk.settle("CCCCCCCC", right=False, now=2.0)
    desk.settle("CCCCCCCC", right=True, now=2.0)
    with pytest.raises(NoPairingCode):
        desk.current(now=3.0)


def test_a_proof_settles_only_against_the_code_still_out() -> None:
    desk = PairingDesk()
    desk.issue("AAAAAAAA", now=0.0)
    desk.issue("CCCCCCCC", now=1.0)
    # Checked against the code the new one replaced: refused, right or not, and the new one stays.
    with pytest.raises(NoPairingCode, match="replaced"):
        desk.settle("AAAAAAAA", right=True, now=2.0)
    for _ in range(link_auth.CODE_ATTEMPTS):
        with pytest.raises(PairingFailed):
            desk.settle("CCCCCCCC", right=False, now=2.0)
    # Voided: a right proof checked after that is refused too.
    with pytest.raises(NoPairingCode):
        desk.settle("CCCCCCCC", right=True, now=2.0)
    desk.issue("DDDDDDDD", now=3.0)
    with pytest.raises(NoPairingCode, match="expired"):
        desk.settle("DDDDDDDD", right=True, now=3.0 + link_auth.CODE_LIFETIME)


# The HTTP challenge


async def test_auth_challenge_proves_the_broker_to_a_caller_without_a_token(
    broker: BrokerUnderTest, session: aiohttp.ClientSession
) -> None:
    ours = nonce()
    url = str(broker.server.make_url("/auth/challenge"))
    async with session.post(url, json={"nonce": ours}) as response:
        assert response.status == 200
        answer = await response.json()
    port = broker.server.port
    assert port is not None
    assert link_auth.check_proof(answer["proof"], KEY, Role.HTTP, port, ours)
    assert not link_auth.check_proof(answer["proof"], KEY, Role.BROKER, port, ours)
    async with session.post(url, json={"nonce": "x"}) as response:
        assert response.status == 400
    # Every other route still needs the token.
    async with session.get(str(broker.server.make_url("/status"))) as response:
        assert response.status == 401


async def test_a_web_page_cannot_ask_for_the_proof(broker: BrokerUnderTest, session: aiohttp.ClientSession) -> None:
    url = str(broker.server.make_url("/auth/challenge"))
    async with session.post(url, json={"nonce": nonce()}, headers={"Origin": "https://evil.example"}) as response:
        assert response.status == 403


async def test_a_broker_requiring_proof_pairs_an_extension_and_then_hears_it(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(require_extension_token=True)
    code = await issue_code(broker)
    peer = Peer(await session.ws_connect(broker.ws_url, headers={"Origin": EXTENSION_ORIGIN}))
    port = broker.server.port
    assert port is not None
    offer, answer, keys = await peer.pair(code, port)
    key = AESGCM(keys.wrap_key).decrypt(
        link_auth.unb64(answer["iv"]), link_auth.unb64(answer["wrappedKey"]), offer["brokerId"].encode()
    )
    assert broker.hub.core.browsers() == [] and not any(f["type"] == "connect" for f in peer.frames)
    ours = nonce()
    await peer.send({"type": "authChallenge", "nonce": ours})
    challenge = await peer.next("authProof")
    proof = link_auth.proof(key, Role.EXTENSION, port, ours, challenge["nonce"])
    await peer.send({"type": "authResponse", "proof": proof})
    assert (await peer.next("connect"))["serverVersion"]


# The command line


async def test_a_first_serve_shows_a_pairing_code_and_browser_mcp_pair_issues_another(brokers: Brokers) -> None:
    broker = await brokers.start()
    stdout = broker.process.stdout
    assert stdout is not None
    shown = ""
    async with asyncio.timeout(10):
        while "Later: browser-mcp pair" not in shown:
            shown += (await stdout.readline()).decode()
    first = re.search(rf"broker on port {broker.port}: ([A-Z0-9]{{4}}-[A-Z0-9]{{4}})", shown)
    assert first, shown
    assert "not paired" in shown and "popup" in shown

    result = await run_cli("pair", "--port", str(broker.port), discovery_dir=brokers.discovery_dir)
    assert result.returncode == 0, result
    second = re.search(rf"broker on port {broker.port}: ([A-Z0-9]{{4}}-[A-Z0-9]{{4}})", result.stdout)
    assert second and second.group(1) != first.group(1)
    assert "works once, for 5 minutes" in result.stdout
    as_json = await run_cli("pair", "--json", discovery_dir=brokers.discovery_dir)
    issued = json.loads(as_json.stdout)
    assert issued["brokerId"] == link_auth.broker_id(broker.token) and issued["expiresIn"] == 300
