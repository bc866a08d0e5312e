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

Per-session rate limits (the core's ``Config.rate_limit``) are turned off here: this much traffic
from one session is what they exist to refuse.
"""

from __future__ import annotations

import asyncio
import collections
import json
from typing import Any

from .conftest import BrokerUnderTest, MakeBroker
from .fakes import FakeExtension, FakeTab
from .mcp_clients import LEGACY, MODERN, text

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
    """No call may time out under load on a slow machine, and no rate limit may refuse one."""
    return {"call_timeout": 60.0, "rate_limit": 0}


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
