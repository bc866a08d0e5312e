"""Rate limits per session and per client token, session quotas per credential, circuit breakers per
tab, tool and client, and bounds on idle connections and MCP tunnels (idempotent REST calls, and the
bound on what their keys keep, are tested in test_idempotent_calls.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from broker.core.errors import RateLimited, TooManySessions
from broker.core.limits import RateLimiter, Unproven
from broker.core.security import client_token
from broker.core.sessions import Sessions
from broker.daemon.connections import CONNECTIONS

from ..conftest import TOKEN, MakeBroker
from ..support.fakes import FakeExtension, FakeTab
from ..support.mcp_clients import MODERN, initialize_request, text
from .limits_shop import hand_over, shop


def never_answer_slow(fake: FakeExtension) -> None:
    async def hold(message: dict[str, Any]) -> None:
        if message["toolName"] != "slow":
            await fake.answer_call(message)

    fake.on_call = hold


OWNER = {"Authorization": f"Bearer {TOKEN}"}


def bearer(label: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {client_token(TOKEN, label)}"}


# Rate limits


async def test_a_session_past_its_rate_is_told_when_to_retry_and_others_go_on(make_broker: MakeBroker) -> None:
    broker = await make_broker(rate_limit=1, rate_burst=3)
    fake = await broker.extension(shop(), shop(8), shop(9))
    agent = {"X-Session-Id": "agent"}
    await broker.claim(7, session="agent")
    await broker.claim(8, session="other")
    for _ in range(3):
        assert (await broker.post("/tabs/7/tools/search", {}, headers=agent))[0] == 200
    async with broker.client.post("/tabs/7/tools/search", json={}, headers=agent) as response:
        body = await response.json()
        assert response.status == 429 and body["error"]["code"] == "rate_limited"
        assert response.headers["Retry-After"] == "1"
        assert "retry in" in body["error"]["message"]
    assert len(fake.received("callTool")) == 3
    assert (await broker.post("/tabs/8/tools/search", {}, headers={"X-Session-Id": "other"}))[0] == 200
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 9})
        for _ in range(3):
            await client.call("call_page_tool", {"tab": 9, "tool": "search"})
        limited = await client.call("call_page_tool", {"tab": 9, "tool": "search"})
        assert limited.is_error and text(limited).startswith("rate_limited:")


async def test_a_rate_limit_of_zero_is_off(make_broker: MakeBroker) -> None:
    broker = await make_broker(rate_limit=0)
    await broker.extension(shop())
    await broker.claim(7)
    statuses = await asyncio.gather(*(broker.post("/tabs/7/tools/search", {}) for _ in range(60)))
    assert {status for status, _ in statuses} == {200}


# Circuit breakers


async def test_a_tool_that_keeps_timing_out_fails_at_once_and_its_neighbours_do_not(make_broker: MakeBroker) -> None:
    broker = await make_broker(breaker_failures=2, breaker_cooldown=600)
    fake = await broker.extension(shop())
    await broker.claim(7)
    never_answer_slow(fake)
    for _ in range(2):
        status, body = await broker.post("/tabs/7/tools/slow", {}, params={"timeout": "0.05"})
        assert status == 504 and body["error"]["code"] == "timeout"
    status, body = await broker.post("/tabs/7/tools/slow", {})
    assert status == 503 and body["error"]["code"] == "circuit_open"
    assert "'slow' on tab b1:7" in body["error"]["message"] and "600 s" in body["error"]["message"]
    assert len(fake.received("callTool")) == 2
    assert (await broker.post("/tabs/7/tools/search", {}))[0] == 200


async def test_an_answer_even_an_error_keeps_a_breaker_closed(make_broker: MakeBroker) -> None:
    broker = await make_broker(breaker_failures=2, breaker_cooldown=600)
    fake = await broker.extension(shop())
    await broker.claim(7)
    never_answer_slow(fake)
    assert (await broker.post("/tabs/7/tools/slow", {}, params={"timeout": "0.05"}))[0] == 504
    fake.on_call = fake.answer_call
    assert (await broker.post("/tabs/7/tools/slow", {}))[0] == 200
    never_answer_slow(fake)
    assert (await broker.post("/tabs/7/tools/slow", {}, params={"timeout": "0.05"}))[0] == 504
    # One timeout in a row again, not two: the call goes out.
    assert (await broker.post("/tabs/7/tools/slow", {}, params={"timeout": "0.05"}))[0] == 504
    assert len(fake.received("callTool")) == 4


async def test_timeouts_one_client_causes_rest_the_tool_for_that_client_only(make_broker: MakeBroker) -> None:
    broker = await make_broker(breaker_failures=2, breaker_cooldown=600)
    fake = await broker.extension(shop())
    never_answer_slow(fake)
    hasty, patient = {"X-Session-Id": "hasty"}, {"X-Session-Id": "patient"}
    await broker.claim(7, session="hasty")
    for _ in range(2):
        status, _ = await broker.post("/tabs/7/tools/slow", {}, params={"timeout": "0.001"}, headers=hasty)
        assert status == 504
    status, body = await broker.post("/tabs/7/tools/slow", {}, headers=hasty)
    assert status == 503 and body["error"]["code"] == "circuit_open"
    assert "for session hasty" in body["error"]["message"]
    fake.on_call = fake.answer_call
    # The tab passes to another client, whose calls go on; back with hasty, the tool still rests.
    await hand_over(broker, 7, hasty, patient)
    assert await broker.post("/tabs/7/tools/slow", {}, headers=patient) == (200, {"result": {"hits": 1}})
    await hand_over(broker, 7, patient, hasty)
    assert (await broker.post("/tabs/7/tools/slow", {}, headers=hasty))[0] == 503
    assert len(fake.received("callTool")) == 3


async def test_a_client_tokens_sessions_share_one_breaker(make_broker: MakeBroker) -> None:
    broker = await make_broker(breaker_failures=2, breaker_cooldown=600)
    fake = await broker.extension(shop())
    never_answer_slow(fake)
    mallory = bearer("mallory")
    m1, m2, m3 = ({**mallory, "X-Session-Id": session} for session in ("m1", "m2", "m3"))
    await hand_over(broker, 7, None, m1)
    assert (await broker.post("/tabs/7/tools/slow", {}, params={"timeout": "0.001"}, headers=m1))[0] == 504
    await hand_over(broker, 7, m1, m2)
    assert (await broker.post("/tabs/7/tools/slow", {}, params={"timeout": "0.001"}, headers=m2))[0] == 504
    await hand_over(broker, 7, m2, m3)
    status, body = await broker.post("/tabs/7/tools/slow", {}, headers=m3)
    assert status == 503 and "for client token mallory" in body["error"]["message"]
    fake.on_call = fake.answer_call
    await hand_over(broker, 7, m3, bearer("alice"))
    assert (await broker.post("/tabs/7/tools/slow", {}, headers=bearer("alice")))[0] == 200
    await hand_over(broker, 7, bearer("alice"), {})
    assert (await broker.post("/tabs/7/tools/slow", {}))[0] == 200
    assert len(fake.received("callTool")) == 4


# Quotas per credential


async def test_one_client_token_cannot_take_every_session_from_the_owner_and_other_clients(
    make_broker: MakeBroker,
) -> None:
    broker = await make_broker()  # the defaults: 100 sessions per client token
    await broker.extension(shop())
    mallory = bearer("mallory")
    answers = [await broker.get("/tabs/7/tools", headers={**mallory, "X-Session-Id": f"a{n}"}) for n in range(121)]
    assert [status for status, _ in answers] == [200] * 100 + [429] * 21
    refused = answers[-1][1]["error"]
    assert refused["code"] == "too_many_sessions"
    assert "client token 'mallory' holds 100 live sessions" in refused["message"]
    assert "--client-max-sessions" in refused["message"]
    _, status = await broker.get("/status")
    live = {s["sessionId"] for s in status["sessions"]}
    assert "a100" not in live and "a99" in live
    # The owner and another client token still get sessions, and mallory's live ones go on.
    assert (await broker.get("/tabs/7/tools", headers={"X-Session-Id": "owner-1"}))[0] == 200
    assert (await broker.get("/tabs/7/tools", headers={**bearer("alice"), "X-Session-Id": "alice-1"}))[0] == 200
    assert (await broker.get("/tabs/7/tools", headers={**mallory, "X-Session-Id": "a0"}))[0] == 200
    # One ended makes room for one more.
    assert (await broker.delete("/sessions/a0", headers=mallory))[0] == 200
    assert (await broker.get("/tabs/7/tools", headers={**mallory, "X-Session-Id": "a100"}))[0] == 200


async def test_clients_filling_the_brokers_sessions_leave_the_owners_own(make_broker: MakeBroker) -> None:
    broker = await make_broker(max_sessions=20)
    await broker.extension(shop())
    statuses = [
        (await broker.get("/tabs/7/tools", headers={**bearer(f"c{n % 2}"), "X-Session-Id": f"a{n}"}))[0]
        for n in range(25)
    ]
    assert statuses == [200] * 20 + [429] * 5
    status, body = await broker.get("/tabs/7/tools", headers={**bearer("c2"), "X-Session-Id": "late"})
    assert status == 429 and "client tokens hold 20 live sessions" in body["error"]["message"]
    for n in range(20):
        assert (await broker.get("/tabs/7/tools", headers={"X-Session-Id": f"owner-{n}"}))[0] == 200
    status, body = await broker.get("/tabs/7/tools", headers={"X-Session-Id": "owner-20"})
    assert status == 429 and "of the broker's own token" in body["error"]["message"]


async def test_a_client_token_gets_its_rate_whatever_the_number_of_its_sessions(make_broker: MakeBroker) -> None:
    # A bucket of 40 that refills at 0.01 a second: a burst gets 40 calls through, not one more.
    broker = await make_broker(client_rate_limit=0.01, client_rate_burst=40)
    # Each session calls in a tab of its own: tabs 100-124 for mallory's, 200-224 and 300-324.
    fake = await broker.extension(*(shop(first + n) for first in (100, 200, 300) for n in range(25)))

    async def burst(headers: dict[str, str], first_tab: int) -> list[tuple[int, Any]]:
        for n in range(25):
            await hand_over(broker, first_tab + n, None, {**headers, "X-Session-Id": f"s{first_tab + n}"})
        calls = [
            broker.post(
                f"/tabs/{first_tab + n % 25}/tools/search",
                {},
                headers={**headers, "X-Session-Id": f"s{first_tab + n % 25}"},
            )
            for n in range(100)
        ]
        return await asyncio.gather(*calls)

    answers = await burst(bearer("mallory"), 100)
    assert sum(1 for status, _ in answers if status == 200) == 40
    refused = next(body["error"] for status, body in answers if status == 429)
    assert refused["code"] == "rate_limited" and "client token 'mallory'" in refused["message"]
    assert "--client-rate-limit" in refused["message"]
    assert len(fake.received("callTool")) == 40
    # The owner's token has no such bucket, and another client token has its own.
    assert {status for status, _ in await burst({}, 200)} == {200}
    assert sum(1 for status, _ in await burst(bearer("alice"), 300) if status == 200) == 40


# Connections and MCP tunnels


async def test_a_flood_of_idle_sockets_cannot_keep_out_the_browser_link_or_real_clients(
    make_broker: MakeBroker,
) -> None:
    cap = 10
    broker = await make_broker(max_unproven_connections=cap)
    fake = await broker.extension(shop())
    await broker.claim(7)
    port = broker.server.port
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2 * cap)]
    # Half of them are closed by the broker: which ones, the order of accepting decides.
    ended = [asyncio.ensure_future(reader.read()) for reader, _ in idle]
    async with asyncio.timeout(5):
        while sum(1 for read in ended if read.done()) < cap:
            await asyncio.wait([read for read in ended if not read.done()], return_when=asyncio.FIRST_COMPLETED)
    assert all(read.result() == b"" for read in ended if read.done())
    gate = broker.app[CONNECTIONS]
    assert len(gate.unproven) == cap
    # A real client on a new connection, the extension's link and a new extension link still work.
    async with (
        aiohttp.ClientSession(headers=OWNER) as client,
        client.post(broker.server.make_url("/tabs/7/tools/search"), json={}) as response,
    ):
        assert response.status == 200 and await response.json() == {"result": {"hits": 1}}
    await broker.settled(fake)
    second = await broker.extension(FakeTab(9, "https://news.example/", "News"), instance_id="second")
    await broker.settled(second)
    assert len(gate.unproven) <= cap
    for _, writer in idle:
        writer.close()


async def test_a_client_tokens_mcp_connections_count_as_its_sessions_from_the_start(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(client_max_sessions=3)
    url = broker.server.make_url("/mcp/stream")
    tunnels = [await session.ws_connect(url, headers=bearer("mallory")) for _ in range(2)]
    # One that started its MCP session (a broker session under the same key) still counts once.
    await tunnels[0].send_str(json.dumps(initialize_request("Agent")))
    await tunnels[0].send_str(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    await tunnels[0].send_str(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    async with asyncio.timeout(5):
        while json.loads((await tunnels[0].receive()).data).get("id") != 2:
            pass
    assert [s.credential for s in broker.hub.sessions()] == ["mallory"]
    # So does a 2025-11-25 HTTP session, from its initialize.
    headers = {**bearer("mallory"), "Accept": "application/json, text/event-stream"}
    async with session.post(broker.mcp_url, json=initialize_request("Agent"), headers=headers) as response:
        assert response.status == 200
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await session.ws_connect(url, headers=bearer("mallory"))
    assert refused.value.status == 429
    async with session.post(broker.mcp_url, json=initialize_request("Agent"), headers=headers) as response:
        assert response.status == 429
        assert "client token 'mallory' holds 3 live sessions" in (await response.json())["error"]["message"]
    status, body = await broker.post("/tabs/7/claim", headers={**bearer("mallory"), "X-Session-Id": "one-more"})
    assert status == 429 and "client token 'mallory' holds 3 live sessions" in body["error"]["message"]
    # The owner and another client token still get theirs.
    tunnels += [await session.ws_connect(url, headers=bearer("alice")), await session.ws_connect(url, headers=OWNER)]
    for tunnel in tunnels:
        await tunnel.close()


async def test_an_mcp_tunnel_that_brings_no_message_is_closed(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(header_timeout=0.2)
    # Answering the broker's pings does not keep it open.
    tunnel = await session.ws_connect(broker.server.make_url("/mcp/stream"), headers=bearer("mallory"), heartbeat=0.05)
    async with asyncio.timeout(5):
        message = await tunnel.receive()
    assert message.type is aiohttp.WSMsgType.CLOSE and message.extra == "no MCP message within 0.2 s of opening"
    await tunnel.close()


async def test_an_mcp_tunnel_whose_client_stops_answering_pings_is_closed(
    make_broker: MakeBroker, session: aiohttp.ClientSession
) -> None:
    broker = await make_broker(ping_interval=0.1)
    url = broker.server.make_url("/mcp/stream")
    tunnel = await session.ws_connect(url, headers=bearer("mallory"), autoping=False)
    await tunnel.send_str(json.dumps(initialize_request("Quiet")))
    # The answer and the first ping may come in either order on a busy machine; then it closes.
    heard = []
    async with asyncio.timeout(5):
        while not heard or heard[-1].type not in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            heard.append(await tunnel.receive())
    answers = [json.loads(m.data) for m in heard if m.type is aiohttp.WSMsgType.TEXT]
    assert [answer["id"] for answer in answers] == [1]
    assert aiohttp.WSMsgType.PING in [m.type for m in heard]
    await tunnel.close()


# The same limits in the core, without an event loop


def test_a_call_refused_by_one_bucket_takes_nothing_from_the_other() -> None:
    rates = RateLimiter(rate=1, burst=1, client_rate=1, client_burst=2)
    rates.take("s1", 0.0, "mallory")
    with pytest.raises(RateLimited, match="more than 1 calls a second"):
        rates.take("s1", 0.0, "mallory")  # the session's bucket is empty: the client's keeps its token
    rates.take("s2", 0.0, "mallory")
    with pytest.raises(RateLimited, match="client token 'mallory'"):
        rates.take("s3", 0.0, "mallory")
    # Ending its sessions gives a client token no fresh burst.
    for session in ("s1", "s2", "s3"):
        rates.forget(session)
    with pytest.raises(RateLimited, match="client token 'mallory'"):
        rates.take("s4", 0.5, "mallory")
    rates.take("s4", 1.0, "mallory")
    rates.take("owner-session", 1.0)  # the broker's own token has no client bucket


def test_a_held_connection_counts_as_a_session_once_and_until_both_are_gone() -> None:
    sessions = Sessions(idle=600, limit=10, client_limit=2)
    sessions.hold("mcp-1", "mallory")
    sessions.open("mcp-1", "Agent", 0.0, ends_when_idle=False, credential="mallory")  # not counted again
    sessions.open("rest-1", "Script", 0.0, ends_when_idle=True, credential="mallory")
    with pytest.raises(TooManySessions, match="client token 'mallory' holds 2 live sessions"):
        sessions.hold("mcp-2", "mallory")
    sessions.close("mcp-1")  # its connection still holds the slot
    with pytest.raises(TooManySessions):
        sessions.open("rest-2", "Script", 0.0, ends_when_idle=True, credential="mallory")
    sessions.release("mcp-1")
    sessions.open("rest-2", "Script", 0.0, ends_when_idle=True, credential="mallory")


def test_unproven_connections_past_the_limit_push_out_the_oldest() -> None:
    unproven = Unproven[str](2)
    assert unproven.opened("a") is None and unproven.opened("b") is None
    unproven.proven("b")
    assert unproven.opened("c") is None
    assert unproven.opened("d") == "a"
    unproven.closed("c")
    assert len(unproven) == 1
