"""Closing a tab: an answer, not a timeout.

``closeTab`` carries a ``requestId``; the extension answers ``tabClosed {tabId, requestId}``, or
``error {code, message, requestId}`` when it does not close the tab (the person's tab in its
books, paused, gone, or held by the page's ``beforeunload``), and the client hears why at once.
An extension that sends neither (the seed protocol's, refusing silently) still times out.
"""

from __future__ import annotations

import asyncio

import pytest

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeTab
from ..support.mcp_clients import MODERN, text

AGENT = {"X-Session-Id": "agent-1"}


async def opened_tab(broker: BrokerUnderTest) -> int:
    status, body = await broker.post("/tabs", {"url": "https://news.example/"}, headers=AGENT)
    assert status == 200, body
    tab_id: int = body["tab"]["id"]
    return tab_id


async def test_close_tab_carries_a_request_id_that_its_tab_closed_answers(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(FakeTab(7, "https://shop.example/"))
    tab = await opened_tab(broker)
    status, body = await broker.delete(f"/tabs/{tab}", headers=AGENT)
    assert status == 200 and body == {"closed": f"b1:{tab}"}
    [close] = fake.received("closeTab")
    assert close["tabId"] == tab and isinstance(close["requestId"], str) and close["requestId"]


@pytest.mark.parametrize(
    ("code", "status"),
    [("tab_not_claimed", 409), ("paused", 423), ("tab_not_found", 404), ("tab_busy", 409), ("close_held", 409)],
)
async def test_a_refused_close_is_heard_at_once_with_its_code(code: str, status: int, make_broker: MakeBroker) -> None:
    # The call timeout is far beyond the test's own: only the refusal can answer in time.
    broker = await make_broker(call_timeout=60.0)
    fake = await broker.extension(FakeTab(7, "https://shop.example/"))
    tab = await opened_tab(broker)
    fake.refuse_close = (code, "the extension's reason")
    async with asyncio.timeout(5):
        answer_status, body = await broker.delete(f"/tabs/{tab}", headers=AGENT)
    assert answer_status == status and body["error"]["code"] == code, body
    assert f"did not close tab b1:{tab}: the extension's reason" in body["error"]["message"]
    assert tab in [t["id"] for t in (await broker.get("/tabs"))[1]["tabs"]]
    assert broker.hub.pending_count == 0


async def test_a_refusal_of_a_code_the_broker_does_not_know_keeps_its_code_apart(make_broker: MakeBroker) -> None:
    broker = await make_broker(call_timeout=60.0)
    fake = await broker.extension(FakeTab(7, "https://shop.example/"))
    tab = await opened_tab(broker)
    fake.refuse_close = ("pinned_by_policy", "an enterprise policy keeps it")
    async with asyncio.timeout(5):
        status, body = await broker.delete(f"/tabs/{tab}", headers=AGENT)
    assert status == 502 and body["error"]["code"] == "tool_failed"
    assert body["error"]["pageCode"] == "pinned_by_policy", body


async def test_an_mcp_client_hears_the_refusal_with_its_code(make_broker: MakeBroker) -> None:
    broker = await make_broker(call_timeout=60.0)
    fake = await broker.extension(FakeTab(7, "https://shop.example/"))
    async with broker.mcp("Claude Code", MODERN) as client:
        opened = await client.call_json("tabs", {"action": "open", "url": "https://news.example/"})
        fake.refuse_close = ("close_held", "the page asks the person whether to leave")
        async with asyncio.timeout(5):
            result = await client.call("tabs", {"action": "close", "tab": opened["opened"]["ref"]})
        assert result.is_error and text(result).startswith("close_held: "), text(result)


async def test_an_extension_that_answers_neither_still_times_out(make_broker: MakeBroker) -> None:
    broker = await make_broker(call_timeout=0.5)
    fake = await broker.extension(FakeTab(7, "https://shop.example/"))
    # Claimed, not opened: opening asks the extension too, which under load may take the 0.5 s.
    status, _ = await broker.post("/tabs/7/claim", headers=AGENT)
    assert status == 200
    fake.answer_close = False
    status, body = await broker.delete("/tabs/7", headers=AGENT)
    assert status == 504 and body["error"]["code"] == "timeout", body


async def test_an_error_frame_naming_no_request_of_its_link_is_dropped_unanswered(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(FakeTab(7, "https://shop.example/"))
    tab = await opened_tab(broker)
    start = len(fake.inbox)
    await fake.send({"type": "error", "code": "tab_not_claimed", "message": "no", "requestId": "c999"})
    await fake.send({"type": "error", "code": "whatever", "message": "no request at all"})
    await broker.settled(fake)
    assert [m for m in fake.inbox[start:] if m.get("type") == "error"] == []
    # Nothing else changed: the session's tab closes as asked.
    status, _ = await broker.delete(f"/tabs/{tab}", headers=AGENT)
    assert status == 200
