"""REST calls with an Idempotency-Key run once: a repeat, even while the first is in flight, gets the
first's answer or error; a key reused for another call is refused; what a key keeps is bounded.
"""

from __future__ import annotations

import asyncio
from typing import Any

from broker.core.security import client_token

from ..conftest import TOKEN, MakeBroker
from ..support.fakes import FakeTab
from .limits_shop import hand_over, shop


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


async def test_a_key_reused_for_another_tab_tool_or_arguments_is_refused(make_broker: MakeBroker) -> None:
    broker = await make_broker()
    fake = await broker.extension(shop(7), shop(8))
    await broker.claim(7, 8)
    once = {"Idempotency-Key": "order-42"}
    assert await broker.post("/tabs/7/tools/search", {"q": 1}, headers=once) == (200, {"result": {"hits": 1}})
    for path, body in (
        ("/tabs/8/tools/search", {"q": 1}),
        ("/tabs/7/tools/slow", {"q": 1}),
        ("/tabs/7/tools/search", {"q": 2}),
    ):
        status, answer = await broker.post(path, body, headers=once)
        assert status == 422 and answer["error"]["code"] == "idempotency_key_reused", answer
        assert "Idempotency-Key 'order-42'" in answer["error"]["message"]
    assert len(fake.received("callTool")) == 1


async def test_the_same_body_spaced_or_ordered_otherwise_is_the_same_call(make_broker: MakeBroker) -> None:
    broker = await make_broker()
    fake = await broker.extension(shop())
    await broker.claim(7)
    once = {"Idempotency-Key": "order-7", "Content-Type": "application/json"}

    async def send(body: str) -> tuple[int, Any]:
        async with broker.client.post("/tabs/7/tools/search", data=body.encode(), headers=once) as response:
            return response.status, await response.json()

    first = await send('{"q": "shoes", "filters": {"size": 42, "colour": "red"}, "tags": ["a", "b"]}')
    assert first == (200, {"result": {"hits": 1}})
    for same in (
        '{"tags":["a","b"],"filters":{"colour":"red","size":42},"q":"shoes"}',
        '\n {\n  "filters" : { "colour" : "r\\u0065d",\n "size" : 42 } , "q":"shoes" ,"tags":[ "a","b" ] }\n',
    ):
        assert await send(same) == first
    for other in (
        '{"q": "shoes", "filters": {"size": 42, "colour": "red"}, "tags": ["b", "a"]}',
        '{"q": "shoes", "filters": {"size": 43, "colour": "red"}, "tags": ["a", "b"]}',
        '{"q": "shoes", "filters": {"size": 42, "colour": "red", "new": true}, "tags": ["a", "b"]}',
    ):
        status, answer = await send(other)
        assert status == 422 and answer["error"]["code"] == "idempotency_key_reused", answer
    assert len(fake.received("callTool")) == 1


async def test_what_a_key_keeps_is_the_answer_the_client_was_sent_after_the_cut(make_broker: MakeBroker) -> None:
    broker = await make_broker(max_result_chars=1000)
    page = FakeTab(7, "https://shop.example/", "Shop", {"read": lambda args: "word " * 200_000})
    fake = await broker.extension(page)
    await broker.claim(7)
    once = {"Idempotency-Key": "read-1"}
    first = await broker.post("/tabs/7/tools/read", {}, headers=once)
    assert first[0] == 200 and len(first[1]["result"]) < 1200 and first[1]["limited"]
    assert await broker.post("/tabs/7/tools/read", {}, headers=once) == first
    assert len(fake.received("callTool")) == 1
    assert 1000 < broker.hub.core.once_keys.kept_bytes(None) < 10_000


async def test_a_refused_call_is_not_kept_so_its_repeat_can_succeed(make_broker: MakeBroker) -> None:
    broker = await make_broker()
    fake = await broker.extension(shop())
    await broker.claim(7)
    once = {"Idempotency-Key": "order-1"}
    # Paused: refused before it reached the page.
    await fake.send({"type": "pauseChanged", "paused": True})
    await broker.settled(fake)
    assert (await broker.post("/tabs/7/tools/search", {}, headers=once))[1]["error"]["code"] == "paused"
    await fake.send({"type": "pauseChanged", "paused": False})
    await broker.settled(fake)

    # Not approved: the person said no this time.
    async def deny(message: dict[str, Any]) -> None:
        error = {"code": "not_approved", "message": "the person denied search"}
        await fake.send({"type": "toolResult", "callId": message["callId"], "error": error})

    fake.on_call = deny
    assert (await broker.post("/tabs/7/tools/search", {}, headers=once))[1]["error"]["code"] == "not_approved"
    fake.on_call = fake.answer_call
    # Another session owns the tab, then lets it go.
    await hand_over(broker, 7, {}, {"X-Session-Id": "other"})
    assert (await broker.post("/tabs/7/tools/search", {}, headers=once))[1]["error"]["code"] == "tab_owned"
    await hand_over(broker, 7, {"X-Session-Id": "other"}, {})
    assert await broker.post("/tabs/7/tools/search", {}, headers=once) == (200, {"result": {"hits": 1}})
    assert await broker.post("/tabs/7/tools/search", {}, headers=once) == (200, {"result": {"hits": 1}})
    assert len(fake.received("callTool")) == 2  # the one denied, and the one that ran


async def test_keyed_calls_stop_at_the_sessions_cap_and_keep_no_tracebacks(make_broker: MakeBroker) -> None:
    cap = 20
    broker = await make_broker(idempotency_keys_per_session=cap, rate_limit=0, client_rate_limit=0)
    fake = await broker.extension(shop())
    mallory = {"Authorization": f"Bearer {client_token(TOKEN, 'mallory')}"}
    await hand_over(broker, 7, None, mallory)
    for number in range(cap):
        tool = "refuse" if number % 2 else "search"
        status, _ = await broker.post(f"/tabs/7/tools/{tool}", {}, headers={**mallory, "Idempotency-Key": f"k{number}"})
        assert status in (200, 502)
    status, body = await broker.post("/tabs/7/tools/search", {}, headers={**mallory, "Idempotency-Key": "one-more"})
    assert status == 429 and body["error"]["code"] == "too_many_calls"
    assert f"holds {cap} Idempotency-Keys" in body["error"]["message"]
    # Repeats are still answered from what was kept, and calls without a key still run.
    status, body = await broker.post("/tabs/7/tools/refuse", {}, headers={**mallory, "Idempotency-Key": "k1"})
    assert status == 502 and body["error"]["pageCode"] == "stock"
    assert (await broker.post("/tabs/7/tools/search", {}, headers=mallory))[0] == 200
    assert len(fake.received("callTool")) == cap + 1
    once_keys = broker.hub.core.once_keys
    assert once_keys.count("rest:mallory") == cap
    # What is kept is the outcome alone: no error holds the frames (and request) it was raised in.
    kept_errors = [e.outcome.error for e in once_keys._sessions["rest:mallory"].ended.values() if e.outcome.error]
    assert len(kept_errors) == cap // 2
    assert all(e.__traceback__ is None and e.__context__ is None for e in kept_errors)
