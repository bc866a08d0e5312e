"""Per-session rate limits, circuit breakers per tab and tool, and idempotent REST calls."""

from __future__ import annotations

import asyncio
from typing import Any

from .conftest import MakeBroker
from .fakes import FakeExtension, FakeTab, PageError
from .mcp_clients import MODERN, text


def shop(tab_id: int = 7) -> FakeTab:
    calls: list[Any] = []

    def search(args: dict[str, Any]) -> Any:
        calls.append(args)
        return {"hits": len(calls)}

    def refuse(args: dict[str, Any]) -> Any:
        raise PageError("out of stock", code="stock")

    return FakeTab(tab_id, "https://shop.example/", "Shop", {"search": search, "refuse": refuse, "slow": search})


def never_answer_slow(fake: FakeExtension) -> None:
    async def hold(message: dict[str, Any]) -> None:
        if message["toolName"] != "slow":
            await fake.answer_call(message)

    fake.on_call = hold


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


# Idempotent calls


async def test_a_repeated_idempotency_key_runs_the_tool_once(make_broker: MakeBroker) -> None:
    broker = await make_broker()
    fake = await broker.extension(shop(), shop(8))
    await broker.claim(7)
    await broker.claim(8, session="other")
    held: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    async def hold(message: dict[str, Any]) -> None:
        held.append(message)
        arrived.set()

    fake.on_call = hold
    once = {"Idempotency-Key": "order-42"}
    first = asyncio.ensure_future(broker.post("/tabs/7/tools/search", {"q": 1}, headers=once))
    await arrived.wait()
    second = asyncio.ensure_future(broker.post("/tabs/7/tools/search", {"q": 1}, headers=once))
    await broker.settled(fake)
    await fake.send(fake.outcome(held[0]))
    assert await first == await second == (200, {"result": {"hits": 1}})
    fake.on_call = fake.answer_call
    assert await broker.post("/tabs/7/tools/search", {"q": 1}, headers=once) == (200, {"result": {"hits": 1}})
    assert len(fake.received("callTool")) == 1
    # Another key, or the same key in another session, is another call.
    assert (await broker.post("/tabs/7/tools/search", {}, headers={"Idempotency-Key": "order-43"}))[1] == {
        "result": {"hits": 2}
    }
    other = {"Idempotency-Key": "order-42", "X-Session-Id": "other"}
    assert (await broker.post("/tabs/8/tools/search", {}, headers=other))[1] == {"result": {"hits": 1}}


async def test_a_repeated_key_gets_the_first_calls_error_too(make_broker: MakeBroker) -> None:
    broker = await make_broker()
    fake = await broker.extension(shop())
    await broker.claim(7)
    once = {"Idempotency-Key": "refuse-1"}
    for _ in range(2):
        status, body = await broker.post("/tabs/7/tools/refuse", {}, headers=once)
        assert status == 502 and body["error"]["pageCode"] == "stock"
    assert len(fake.received("callTool")) == 1
    status, body = await broker.post("/tabs/7/tools/search", {}, headers={"Idempotency-Key": "x" * 200})
    assert status == 400 and "Idempotency-Key" in body["error"]["message"]
