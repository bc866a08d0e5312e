"""Many sessions calling at once through one broker lose, duplicate and misroute nothing.

50 REST sessions and 20 MCP clients (the SDK's own, both protocol eras, half of them each) each
claim a tab of their own in one fake browser of 70 tabs and then call its page tool, 100 times per
REST session and 50 per MCP client, every call of every session at the same time (6000 calls; a
few seconds on two cores). Every call carries a nonce the page tool echoes back with its tab id,
and the fake extension records every ``callTool`` it is sent, so the test can check that:

- nothing is lost: every call is answered, with its own nonce, and every nonce reached the browser;
- nothing is duplicated: the browser saw each nonce exactly once;
- nothing is misrouted: each answer came from the caller's own tab, and each call reached the
  browser for that tab under the session that owns it.

Then ten client tokens, each holding ten sessions (its quota here), make 25 keyed calls in each
session (5 past the cap of keys a session holds, here 20) and repeat the first 20, all at once
(4,500 calls): past the cap is refused, every repeat is answered from what was kept without
reaching the browser, no session holds more keys than the cap, and what the broker keeps of it all
stays under a stated bound of memory.

Rate limits per session and per client token (``Config.rate_limit``, ``client_rate_limit``) are
turned off here: this much traffic from one session is what they exist to refuse.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import tracemalloc
from typing import Any

import aiohttp
import pytest

from broker.core.security import client_token

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.fakes import FakeExtension, FakeTab, PageError
from ..support.mcp_clients import LEGACY, MODERN, text

# Thousands of calls each: the full run (scripts/test) runs them, the inner loop (--quick) does not.
pytestmark = pytest.mark.heavy

Json = dict[str, Any]

REST_SESSIONS = 50
REST_CALLS = 100
MCP_CLIENTS = 20
MCP_CALLS = 50


def load_tab(tab_id: int) -> FakeTab:
    return FakeTab(
        tab_id, f"https://load{tab_id}.example/", f"Load {tab_id}", {"echo": lambda args: {"tab": tab_id, **args}}
    )


def broker_settings() -> dict[str, Any]:
    """No call may time out under load on a slow machine, and no rate limit may refuse one.

    Nor may the gate on connections that have shown no token yet close one: a thousand clients'
    connections open at once, and on a busy machine many are accepted well before the broker
    reads the first request that proves them (that gate is tested on its own, in test_limits)."""
    return {"call_timeout": 60.0, "rate_limit": 0, "max_unproven_connections": 10_000}


async def rest_sessions(broker: BrokerUnderTest) -> list[tuple[str, Json]]:
    """REST session load-rest-<i> claims tab i + 1, then every session calls its tab's tool
    REST_CALLS times, all calls at once. They are started round-robin (each session's first call,
    then each one's second...), so that the client's connection pool serves the sessions
    interleaved rather than one after the other."""

    async def claim(index: int) -> None:
        session = f"load-rest-{index}"
        status, body = await broker.post(f"/tabs/{index + 1}/claim", headers={"X-Session-Id": session})
        assert status == 200 and body["tab"]["owner"]["sessionId"] == session

    async def call(index: int, number: int) -> tuple[str, Json]:
        session = f"load-rest-{index}"
        nonce = f"{session}/{number}"
        status, body = await broker.post(
            f"/tabs/{index + 1}/tools/echo", {"nonce": nonce}, headers={"X-Session-Id": session}
        )
        assert status == 200, body
        return nonce, body["result"]

    await asyncio.gather(*(claim(index) for index in range(REST_SESSIONS)))
    return await asyncio.gather(
        *(call(index, number) for number in range(REST_CALLS) for index in range(REST_SESSIONS))
    )


async def mcp_session(broker: BrokerUnderTest, index: int) -> list[tuple[str, Json]]:
    """An SDK client claims tab REST_SESSIONS + index + 1 and calls its tool MCP_CALLS times at once,
    by the generic call_page_tool and by the tab's own tool name, in turn."""
    era = (LEGACY, MODERN)[index % 2]
    name, tab = f"load-mcp-{index}", REST_SESSIONS + index + 1
    async with broker.mcp(name, era) as client:
        claimed = await client.call_json("tabs", {"action": "claim", "tab": tab})
        assert claimed["claim"]["owner"]["name"] == name

        async def call(number: int) -> tuple[str, Json]:
            nonce = f"{name}/{number}"
            if number % 2:
                result = await client.call(f"t{tab}_echo", {"nonce": nonce})
            else:
                arguments = {"tab": tab, "tool": "echo", "arguments": {"nonce": nonce}}
                result = await client.call("call_page_tool", arguments)
            assert not result.is_error, text(result)
            return nonce, json.loads(text(result))

        return await asyncio.gather(*(call(number) for number in range(MCP_CALLS)))


async def test_many_sessions_calling_at_once_lose_duplicate_and_misroute_nothing(make_broker: MakeBroker) -> None:
    broker = await make_broker(**broker_settings())
    fake: FakeExtension = await broker.extension(*(load_tab(tab_id) for tab_id in range(1, 71)))
    seen: list[Json] = []
    # How many sessions had calls waiting on the browser as every tenth call arrived there.
    busy_sessions: list[int] = []

    async def record(message: Json) -> None:
        seen.append(message)
        if len(seen) % 10 == 0:
            busy_sessions.append(sum(1 for session in broker.hub.sessions() if session.pending_calls))
        await fake.answer_call(message)

    fake.on_call = record

    async with asyncio.timeout(60):
        answers = await asyncio.gather(
            rest_sessions(broker), *(mcp_session(broker, index) for index in range(MCP_CLIENTS))
        )

    # The tab each caller claimed, and the session the browser was told owns it.
    tab_of = {f"load-rest-{i}": i + 1 for i in range(REST_SESSIONS)}
    tab_of |= {f"load-mcp-{i}": REST_SESSIONS + i + 1 for i in range(MCP_CLIENTS)}
    owner_of = {m["tabId"]: m["sessionId"] for m in fake.received("tabClaimed")}
    assert len(owner_of) == len(set(owner_of.values())) == REST_SESSIONS + MCP_CLIENTS
    assert all(owner_of[i + 1] == f"load-rest-{i}" for i in range(REST_SESSIONS))

    # Every call answered, each from its caller's own tab with its own nonce.
    expected_calls = REST_SESSIONS * REST_CALLS + MCP_CLIENTS * MCP_CALLS
    answered = [answer for caller in answers for answer in caller]
    assert len(answered) == expected_calls
    for nonce, result in answered:
        assert result == {"tab": tab_of[nonce.split("/")[0]], "nonce": nonce}

    # The browser saw each nonce once, in the caller's tab, under the session owning that tab.
    nonces = collections.Counter(message["args"]["nonce"] for message in seen)
    assert nonces == collections.Counter(nonce for nonce, _ in answered)
    assert set(nonces.values()) == {1}
    for message in seen:
        caller = message["args"]["nonce"].split("/")[0]
        assert message["tabId"] == tab_of[caller]
        assert message["sessionId"] == owner_of[message["tabId"]]
    assert broker.hub.pending_count == 0
    # It was a crowd: most sessions had calls waiting on the browser at the same moment.
    assert max(busy_sessions) > (REST_SESSIONS + MCP_CLIENTS) // 2


# Ten client tokens, each holding many sessions and many keyed calls.
CLIENTS = 10
SESSIONS_PER_CLIENT = 10
KEYS_PER_SESSION = 20  # the broker's cap for this test (1,000 by default)
PAST_THE_CAP = 5
# Half the calls fail in the page, each sent with 8 KiB of arguments: a kept error must not hold
# the request it came in, as its traceback once did.
PADDING = "x" * 8192
# What the broker may keep of it all, measured by tracemalloc: about 5 MiB are expected (the
# outcomes of 2,000 keys, 100 sessions, 100 open connections); when each kept error held its
# traceback, 36 MiB.
RETAINED_BOUND = 12 * 1024 * 1024


def failing_load_tab(tab_id: int) -> FakeTab:
    def fail(args: Json) -> Any:
        raise PageError(f"no stock for {args['nonce']}")

    return FakeTab(
        tab_id, f"https://load{tab_id}.example/", f"Load {tab_id}", {"echo": lambda args: args, "fail": fail}
    )


async def test_ten_clients_with_many_sessions_and_keyed_calls_stay_within_their_bounds(
    make_broker: MakeBroker,
) -> None:
    broker = await make_broker(
        **broker_settings(),
        client_rate_limit=0,
        client_max_sessions=SESSIONS_PER_CLIENT,
        idempotency_keys_per_session=KEYS_PER_SESSION,
    )
    sessions = [
        (f"c{client}", f"c{client}-s{number}") for client in range(CLIENTS) for number in range(SESSIONS_PER_CLIENT)
    ]
    # Each session calls in a tab of its own, claimed first, as page tool calls need.
    fake = await broker.extension(*(failing_load_tab(index + 1) for index in range(len(sessions))))
    tab_of = {session: index + 1 for index, (_, session) in enumerate(sessions)}
    for client, session in sessions:
        status, body = await broker.post(
            f"/tabs/{tab_of[session]}/claim", headers={**bearer_of(client), "X-Session-Id": session}
        )
        assert status == 200, body

    # A client session of its own: the test client keeps every response it made.
    http = aiohttp.ClientSession(base_url=broker.server.make_url("/"))

    async def call(client: str, session: str, key: int) -> tuple[int, Json]:
        headers = {**bearer_of(client), "X-Session-Id": session, "Idempotency-Key": f"k{key}"}
        nonce = f"{session}/{key}"
        tool, body = ("fail", {"nonce": nonce, "padding": PADDING}) if key % 2 else ("echo", {"nonce": nonce})
        async with http.post(f"/tabs/{tab_of[session]}/tools/{tool}", json=body, headers=headers) as response:
            return response.status, await response.json()

    Call = tuple[str, str, int]
    calls: list[Call] = [(c, s, key) for key in range(KEYS_PER_SESSION + PAST_THE_CAP) for c, s in sessions]

    async def every_call(which: list[Call]) -> dict[Call, tuple[int, Json]]:
        return dict(zip(which, await asyncio.gather(*(call(*each) for each in which)), strict=True))

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        async with asyncio.timeout(120):
            first = await every_call(calls)
            # Which keys a session got past its cap, the order they reached the broker decided.
            kept = {each: answer for each, answer in first.items() if answer[0] != 429}
            repeats = await every_call(list(kept))
        refused = [body["error"]["code"] for status, body in first.values() if status == 429]
        assert refused == ["too_many_calls"] * len(sessions) * PAST_THE_CAP
        assert len(kept) == len(sessions) * KEYS_PER_SESSION
        assert {status for status, _ in kept.values()} == {200, 502}
        # Repeats are answered from what was kept: each call reached the browser once.
        assert repeats == kept
        assert len(fake.received("callTool")) == len(sessions) * KEYS_PER_SESSION
        once_keys = broker.hub.core.once_keys
        assert {once_keys.count(session) for _, session in sessions} == {KEYS_PER_SESSION}
        # A client token's next session is refused: it holds its quota.
        status, body = await broker.get("/tabs/1/tools", headers={**bearer_of("c0"), "X-Session-Id": "one-more"})
        assert status == 429 and body["error"]["code"] == "too_many_sessions"
        del first, kept, repeats, body
        fake.inbox.clear()
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        await http.close()
    assert retained < RETAINED_BOUND, f"the broker kept {retained / 2**20:.1f} MiB"
    assert broker.hub.pending_count == 0


def bearer_of(client: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {client_token(TOKEN, client)}"}
