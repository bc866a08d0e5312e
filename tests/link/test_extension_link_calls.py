"""Page tool calls through the extension link over real loopback sockets, with a scripted fake
extension: answers, failures, timeouts, late and duplicate replies, a link lost mid-call, and bad or
oversized frames that cost nothing else.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from ..conftest import BrokerUnderTest, MakeBroker
from .link_world import call, shop


async def test_call_returns_the_pages_result(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    status, body = await call(broker, 7, "search", {"q": "shoes"})
    assert (status, body) == (200, {"result": {"hits": ["shoes 1", "shoes 2"]}})
    sent = fake.received("callTool")[0]
    assert (sent["tabId"], sent["toolName"], sent["args"], sent["sessionId"]) == (7, "search", {"q": "shoes"}, "rest")


async def test_page_tool_failure_passes_its_message_on(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    status, body = await call(broker, 7, "checkout")
    assert status == 502
    assert body["error"] == {"code": "tool_failed", "message": "the cart is empty", "pageCode": "empty_cart"}
    assert body["untrusted"] == ["error.message"], "the page wrote it"
    status, body = await broker.post("/tabs/7/tools/nope", {})
    assert status == 404 and body["untrusted"] == ["error.message"], "it lists the tools the page declared"
    status, body = await broker.delete("/tabs/99")
    assert status == 404 and "untrusted" not in body


@pytest.mark.parametrize("error", [None, "plain string failure"])
async def test_tool_result_error_may_be_null_or_a_string(broker: BrokerUnderTest, error: str | None) -> None:
    fake = await broker.extension(shop())

    async def answer(message: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": message["callId"], "result": "done", "error": error})

    fake.on_call = answer
    status, body = await call(broker, 7, "search")
    if error is None:
        assert (status, body) == (200, {"result": "done"})
    else:
        assert (status, body["error"]["message"]) == (502, "plain string failure")


async def test_extension_that_never_answers_times_out_naming_tab_and_tool(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())

    async def never(message: dict[str, Any]) -> None:
        pass

    fake.on_call = never
    status, body = await call(broker, 7, "search", params={"timeout": "0.2"})
    assert status == 504
    assert body["error"]["code"] == "timeout"
    assert "'search'" in body["error"]["message"] and "b1:7" in body["error"]["message"]
    assert broker.hub.core.pending_count == 0


async def test_late_reply_is_dropped_and_the_link_keeps_working(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    held: list[dict[str, Any]] = []

    async def hold(message: dict[str, Any]) -> None:
        held.append(message)

    fake.on_call = hold
    status, _ = await call(broker, 7, "search", params={"timeout": "0.2"})
    assert status == 504
    await fake.send(fake.outcome(held[0]))
    fake.on_call = fake.answer_call
    status, body = await call(broker, 7, "search", {"q": "hat"})
    assert (status, body["result"]) == (200, {"hits": ["hat 1", "hat 2"]})


async def test_duplicate_reply_is_dropped(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())

    async def twice(message: dict[str, Any]) -> None:
        await fake.send(fake.outcome(message))
        await fake.send({**fake.outcome(message), "result": "second answer"})

    fake.on_call = twice
    status, body = await call(broker, 7, "search", {"q": "a"})
    assert body == {"result": {"hits": ["a 1", "a 2"]}}
    fake.on_call = fake.answer_call
    status, body = await call(broker, 7, "search", {"q": "b"})
    assert (status, body) == (200, {"result": {"hits": ["b 1", "b 2"]}})


async def test_link_lost_mid_call_fails_at_once(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())

    async def drop(message: dict[str, Any]) -> None:
        assert fake.ws is not None
        await fake.ws.close()

    fake.on_call = drop
    async with asyncio.timeout(3):  # the call timeout is 5 s: an answer before it is "at once"
        status, body = await call(broker, 7, "search")
    assert status == 503 and body["error"]["code"] == "extension_disconnected"
    status, body = await broker.get("/tabs")
    assert body["tabs"] == []


async def test_no_extension_connected_is_503_with_instructions(broker: BrokerUnderTest) -> None:
    status, body = await call(broker, 7, "search")
    assert status == 503
    assert body["error"]["code"] == "no_extension" and "extension" in body["error"]["message"]


# Bad frames


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"type": "teleport"}', "unknown message type 'teleport'"),
        ('{"type": "tabClosed", "tabId": "seven"}', "tabId"),
        ('{"type": "toolResult", "callId": 5}', "callId"),
        ('{"type": "connected", "tabs": [{"id": true}]}', "tabs[0].id"),
        ('{"type": "tabClosed", "tabId": 9223372036854775807}', "outside JavaScript's safe integers"),
        ('{"type": "tabCreated", "tab": {"id": -9007199254740992}}', "outside JavaScript's safe integers"),
        ('{"type": "toolsChanged", "tabId": 404, "tools": []}', "never announced"),
        ('{"type": "tabFocused", "tabId": 404}', "never announced"),
        ('{"type": "toolsDiscovered", "callId": "c1", "tabId": 404, "tools": []}', "never announced"),
    ],
)
async def test_bad_frame_gets_an_error_reply_and_the_link_stays_up(
    broker: BrokerUnderTest, frame: str, words: str
) -> None:
    fake = await broker.extension(shop())
    other = await broker.extension(shop(9), browser_name="Other")
    await fake.send_raw(frame)
    error = await fake.wait_for("error")
    assert words in error["message"]
    assert (await call(broker, 7, "search", {"q": "x"}))[0] == 200
    assert (await call(broker, 9, "search", {"q": "y"}))[0] == 200
    assert other.received("error") == []
    # Nothing of the frame was taken: no phantom tab in the listing.
    status, body = await broker.get("/tabs")
    assert status == 200 and sorted(tab["id"] for tab in body["tabs"]) == [7, 9]


async def test_frame_over_the_limit_fails_its_call_and_the_link_stays_up(make_broker: MakeBroker) -> None:
    broker = await make_broker(frame_limit=4096)
    fake = await broker.extension(shop())

    async def huge(message: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": message["callId"], "result": "x" * 5000, "error": None})

    fake.on_call = huge
    status, body = await call(broker, 7, "search")
    assert status == 413 and body["error"]["code"] == "message_too_large"
    assert "4096" in body["error"]["message"]
    error = await fake.wait_for("error")
    assert error["code"] == "message_too_large"
    fake.on_call = fake.answer_call
    status, _ = await call(broker, 7, "search")
    assert status == 200


async def test_frame_far_over_the_limit_closes_only_that_link(make_broker: MakeBroker) -> None:
    broker = await make_broker(frame_limit=4096)
    fake = await broker.extension(shop())
    other = await broker.extension(shop(9), browser_name="Other")
    await fake.send_raw("x" * 10_000)
    async with asyncio.timeout(5):
        await fake.closed.wait()
    assert fake.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
    status, _ = await call(broker, 9, "search")
    assert status == 200 and not other.closed.is_set()


async def test_frames_up_to_32_mib_are_accepted(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    screenshot = "A" * (31 * 1024 * 1024)

    async def big(message: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": message["callId"], "result": screenshot, "error": None})

    fake.on_call = big
    status, body = await call(broker, 7, "search")
    # Read whole: the broker withholds it from the client as binary-looking, and says how long it was.
    assert status == 200 and f"{len(screenshot):,} base64-like characters withheld" in body["result"]
