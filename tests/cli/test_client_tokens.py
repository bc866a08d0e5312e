"""A client token (``browser-mcp mcp-config --client NAME``) acts only as its own client.

Each test follows one impersonation step of a client holding ``bmcp_mallory_...``, the way it
would go at the broker, and checks that it is refused (403 ``forbidden``, saying why) while the
victim's session, calls and browser are untouched, and that the broker's own token keeps every
power it had.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import aiohttp
import pytest

from broker.core.security import client_token
from broker.daemon.runtime import RUNTIME

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.fakes import EXTENSION_ORIGIN, FakeTab
from ..support.mcp_clients import LEGACY, LEGACY_VERSION, MODERN, initialize_request, text

MALLORY = {"Authorization": f"Bearer {client_token(TOKEN, 'mallory')}"}
ALICE_TOKEN = client_token(TOKEN, "alice")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def shop(tab_id: int = 7) -> FakeTab:
    return FakeTab(tab_id, f"https://shop{tab_id}.example/", "Shop", {"search": lambda args: {"hits": 1}})


def forbidden(status: int, body: Any) -> bool:
    return status == 403 and body["error"]["code"] == "forbidden"


async def test_a_client_token_cannot_act_as_another_rest_or_mcp_session(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop(7), shop(8))
    async with broker.mcp("Alice", MODERN, token=ALICE_TOKEN) as alice:
        await alice.call_json("tabs", {"action": "claim", "tab": 7})
        for victim in ("mcp-client:alice", "rest"):
            status, body = await broker.post("/tabs/7/tools/search", {}, headers={**MALLORY, "X-Session-Id": victim})
            assert forbidden(status, body), body
            assert "reserved" in body["error"]["message"] or "opened with" in body["error"]["message"]
        assert fake.received("callTool") == []
        # Alice's session is hers still.
        result = await alice.call("t7_search", {})
        assert not result.is_error, text(result)


async def test_a_client_token_cannot_claim_mcp_session_ids_ahead_of_their_clients(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    status, body = await broker.post("/tabs/7/claim", headers={**MALLORY, "X-Session-Id": "mcp-name:Claude"})
    assert forbidden(status, body) and "reserved" in body["error"]["message"]


async def test_a_client_tokens_default_rest_session_is_its_own(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    status, _ = await broker.post("/tabs/7/claim")  # the broker token's default session, "rest"
    assert status == 200
    status, body = await broker.post("/tabs/7/tools/search", {}, headers=MALLORY)
    assert status == 409 and body["error"]["code"] == "tab_owned"
    status, body = await broker.get("/status", headers=MALLORY)
    assert [s["sessionId"] for s in body["sessions"]] == ["rest:mallory"]


async def test_a_client_token_cannot_end_another_session(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    await broker.post("/tabs/7/claim", headers={"X-Session-Id": "script-1"})
    status, body = await broker.delete("/sessions/script-1", headers=MALLORY)
    assert forbidden(status, body)
    assert "script-1" in {s.id for s in broker.hub.core.sessions()}
    # Its own, it may end; the broker's token may end any.
    await broker.post("/tabs/8/claim", headers={**MALLORY, "X-Session-Id": "mallory-1"})
    status, body = await broker.delete("/sessions/mallory-1", headers=MALLORY)
    assert status == 200 and body["existed"] is True
    status, body = await broker.delete("/sessions/script-1")
    assert status == 200 and body["existed"] is True


async def test_a_client_token_cannot_use_or_delete_another_mcp_session_id(
    broker: BrokerUnderTest, session: aiohttp.ClientSession
) -> None:
    await broker.extension(shop())
    alice_headers = {**MCP_HEADERS, "Authorization": f"Bearer {ALICE_TOKEN}"}
    async with session.post(broker.mcp_url, json=initialize_request("A"), headers=alice_headers) as response:
        assert response.status == 200
        alice_session = response.headers["Mcp-Session-Id"]
    stolen = {**MCP_HEADERS, **MALLORY, "Mcp-Session-Id": alice_session, "MCP-Protocol-Version": LEGACY_VERSION}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with session.post(broker.mcp_url, json=call, headers=stolen) as response:
        assert response.status == 403
        assert "another credential" in (await response.json())["error"]["message"]
    async with session.delete(broker.mcp_url, headers=stolen) as response:
        assert response.status == 403
    assert alice_session in (await broker.mcp_running()).endpoint.legacy.transports
    # Nor may it reach that session through REST under its broker session id.
    status, body = await broker.post("/tabs/7/claim", headers={**MALLORY, "X-Session-Id": f"mcp-http-{alice_session}"})
    assert forbidden(status, body)


async def test_a_client_token_cannot_open_the_extension_link(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(require_extension_token=True)
    real = await broker.extension(shop(), instance_id="profile-1")
    mallory_token = MALLORY["Authorization"].removeprefix("Bearer ")
    url = str(broker.server.make_url("/"))
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await session.ws_connect(url, headers={"Origin": EXTENSION_ORIGIN, "Authorization": f"Bearer {mallory_token}"})
    assert refused.value.status == 403
    assert not real.closed.is_set()
    [browser] = broker.hub.core.browsers()
    assert browser.connected and browser.instance_id == "profile-1"


async def test_a_client_token_cannot_stop_the_broker(broker: BrokerUnderTest) -> None:
    status, body = await broker.post("/shutdown", headers=MALLORY)
    assert forbidden(status, body) and "browser-mcp stop" in body["error"]["message"]
    assert not broker.app[RUNTIME].stop_requested.is_set()


async def test_status_shows_a_client_token_no_other_sessions_and_no_instance_ids(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(), instance_id="profile-1")
    async with broker.mcp("Alice", LEGACY, token=ALICE_TOKEN):
        status, body = await broker.get("/status", headers=MALLORY)
        assert status == 200
        assert body["sessions"] == []
        assert [b["instanceId"] for b in body["browsers"]] == [None]
        status, body = await broker.get("/status")
        assert len(body["sessions"]) == 1 and body["browsers"][0]["instanceId"] == "profile-1"
    assert json.dumps(body)


async def test_no_client_token_bears_the_owners_name(broker: BrokerUnderTest) -> None:
    """The person tells the broker's own sessions by the credential name "owner" (connect.credential)."""
    for name in ("owner", "Owner", "OWNER"):
        with pytest.raises(ValueError, match="other than 'owner'"):
            client_token(TOKEN, name)
        # Made the way client_token would, had it let the name through: the broker refuses it.
        mac = hmac.new(TOKEN.encode(), f"client:{name}".encode(), hashlib.sha256).hexdigest()[:32]
        status, body = await broker.get("/tabs", headers={"Authorization": f"Bearer bmcp_{name}_{mac}"})
        assert status == 401 and body["error"]["code"] == "unauthorized", body
