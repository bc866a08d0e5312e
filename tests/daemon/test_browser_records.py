"""Deleting history and bookmarks, and reading the bookmark tree, from the broker's side.

A scripted fake extension stands in for the browser, announcing the features ``deleteHistory``,
``bookmarkTree`` and ``deleteBookmark`` and answering as the real one does: consent refused while
the person does not share their records, the approval asked (``approvalPending``) and given or
refused, ``record_not_found`` and ``folder_not_empty`` for what is not there or not empty
(``tests/e2e/test_e2e_browser_records.py`` runs the real extension). What is checked here is the
broker's part: which tools are listed, which arguments reach the browser, every refusal a clear
code, and bad input refused with nothing sent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from broker.core.security import client_token

from ..conftest import TOKEN, BrokerUnderTest
from ..support.fakes import FakeExtension, FakeTab
from ..support.mcp_clients import ERAS, MODERN, refused, text

OLD_FEATURES = ["windows", "history", "bookmarks"]
FEATURES = [*OLD_FEATURES, "deleteHistory", "bookmarkTree", "deleteBookmark"]
KITTENS = "https://kittens.example/"
# 2026-05-01T09:00:00Z and an hour later, in milliseconds since 1970.
NINE, TEN = 1777626000000, 1777629600000


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def sent(fake: FakeExtension) -> list[tuple[str, Any]]:
    return [(m["request"], m["args"]) for m in fake.received("browserRequest")]


async def shared_browser(broker: BrokerUnderTest, features: list[str] = FEATURES) -> FakeExtension:
    fake = await broker.extension(FakeTab(7, "https://page7.example/", "Page 7"), features=features)
    fake.shared = True
    fake.history = [
        {"title": "Kittens", "url": KITTENS, "time": "2026-05-01T09:30:00.000Z", "ms": NINE + 1_800_000},
        {
            "title": "Puppies",
            "url": "https://puppies.example/",
            "time": "2026-05-01T11:00:00.000Z",
            "ms": TEN + 3_600_000,
        },
    ]
    fake.bookmark_nodes = [
        {"id": "1", "parentId": "0", "title": "Bookmarks bar", "folder": True},
        {"id": "10", "parentId": "1", "title": "Recipes", "folder": True},
        {"id": "11", "parentId": "10", "title": "Walnut bread", "url": "https://bread.example/"},
        {"id": "12", "parentId": "1", "title": "News", "url": "https://news.example/"},
    ]
    return fake


async def test_deleting_is_listed_only_for_a_browser_that_offers_it(broker: BrokerUnderTest, era: str) -> None:
    old = await broker.extension(FakeTab(7, "https://page7.example/"), features=OLD_FEATURES)
    async with broker.mcp("Claude Code", era) as client:
        assert "browser_history_delete" not in await client.tool_names()
        says = await refused(client, "browser_history_delete", {"url": KITTENS}, "not_supported")
        assert "does not offer deleteHistory" in says and "load the current browser-mcp extension" in says
        await refused(client, "browser_bookmarks", {"action": "tree"}, "not_supported")
        await refused(client, "browser_bookmarks", {"action": "delete", "id": "12"}, "not_supported")
        assert old.received("browserRequest") == []
        await broker.extension(FakeTab(8, "https://page8.example/"), features=FEATURES, instance_id="new")
        await client.changes.next(0)
        tools = await client.tools()
        deleting = tools["browser_history_delete"]
        assert deleting.annotations is not None
        assert (deleting.annotations.read_only_hint, deleting.annotations.destructive_hint) == (False, True)
        assert "approve" in (deleting.description or "")
        bookmarks = tools["browser_bookmarks"]
        assert bookmarks.annotations is not None and bookmarks.annotations.destructive_hint is True
        assert bookmarks.input_schema["properties"]["action"]["enum"] == ["search", "create", "tree", "delete"]


async def test_history_is_deleted_only_with_the_persons_consent_and_approval(broker: BrokerUnderTest, era: str) -> None:
    fake = await shared_browser(broker)
    fake.shared = False
    async with broker.mcp("Claude Code", era) as client:
        says = await refused(client, "browser_history_delete", {"url": KITTENS}, "consent_required")
        assert "options" in says
        fake.shared = True
        fake.approval = "deny"
        says = await refused(client, "browser_history_delete", {"url": KITTENS}, "not_approved")
        assert "denied" in says
        assert [h["url"] for h in fake.history] == [KITTENS, "https://puppies.example/"]
        fake.approval = "allow"
        deleted = await client.call_json("browser_history_delete", {"url": KITTENS})
        assert deleted == {"deleted": {"url": KITTENS, "visits": 1}}
        assert [h["url"] for h in fake.history] == ["https://puppies.example/"]
        ranged = await client.call_json(
            "browser_history_delete", {"startTime": "2026-05-01T10:00:00Z", "endTime": TEN + 7_200_000}
        )
        assert ranged["deleted"] == {"startTime": float(TEN), "endTime": float(TEN + 7_200_000)}
        assert fake.history == []
    assert [request for request, _ in sent(fake)] == ["deleteHistory"] * 4


async def test_a_bookmark_is_deleted_after_approval_and_a_full_folder_only_when_asked(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)
    async with broker.mcp("Claude Code", MODERN) as client:
        fake.approval = "deny"
        await refused(client, "browser_bookmarks", {"action": "delete", "id": "12"}, "not_approved")
        fake.approval = "allow"
        deleted = await client.call("browser_bookmarks", {"action": "delete", "id": 12})
        assert not deleted.is_error, text(deleted)
        # Its title is what the page bookmarked chose.
        assert deleted.meta and deleted.meta["browser-mcp/untrusted"] is True
        says = await refused(client, "browser_bookmarks", {"action": "delete", "id": "10"}, "folder_not_empty")
        assert "holds 1" in says
        assert [n["id"] for n in fake.bookmark_nodes] == ["1", "10", "11"]
        await client.call_json("browser_bookmarks", {"action": "delete", "id": "10", "recursive": True})
        assert [n["id"] for n in fake.bookmark_nodes] == ["1"]
        says = await refused(client, "browser_bookmarks", {"action": "delete", "id": "10"}, "record_not_found")
        assert "no bookmark or folder has id 10" in says
    assert [args for _, args in sent(fake)] == [
        {"id": "12", "recursive": False},
        {"id": "12", "recursive": False},
        {"id": "10", "recursive": False},
        {"id": "10", "recursive": True},
        {"id": "10", "recursive": False},
    ]


async def test_bad_deletions_are_refused_saying_why_and_nothing_is_sent(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("browser_history_delete", {}, "needs `url`"),
        ("browser_history_delete", {"url": "kittens.example"}, "not an address history keeps"),
        ("browser_history_delete", {"url": "https://"}, "not an address history keeps"),
        ("browser_history_delete", {"url": "https://kit tens.example/"}, "not an address history keeps"),
        ("browser_history_delete", {"url": "http://x.example:port/"}, "not an address history keeps"),
        ("browser_history_delete", {"url": 5}, "`url` must be"),
        ("browser_history_delete", {"startTime": TEN, "endTime": NINE}, "empty or inverted"),
        ("browser_history_delete", {"startTime": NINE, "endTime": NINE}, "empty or inverted"),
        ("browser_history_delete", {"startTime": NINE}, "`endTime` is missing"),
        ("browser_history_delete", {"endTime": NINE}, "`startTime` is missing"),
        ("browser_history_delete", {"startTime": "yesterday", "endTime": NINE}, "`startTime` must be ISO 8601"),
        ("browser_history_delete", {"url": KITTENS, "startTime": NINE, "endTime": TEN}, "not both"),
        ("browser_bookmarks", {"action": "delete"}, "`id` must be"),
        ("browser_bookmarks", {"action": "delete", "id": "../1"}, "`id` must be"),
        ("browser_bookmarks", {"action": "delete", "id": True}, "`id` must be"),
        ("browser_bookmarks", {"action": "delete", "id": "12", "recursive": "yes"}, "`recursive`"),
        ("browser_bookmarks", {"action": "tree", "maxResults": 0}, "from 1 to 1000"),
        ("browser_bookmarks", {"action": "tree", "maxResults": 1001}, "from 1 to 1000"),
        ("browser_bookmarks", {"action": "tree", "folderId": ""}, "`folderId` must be"),
        ("browser_bookmarks", {"action": "prune"}, "search, create, tree or delete"),
    ]
    async with broker.mcp("Claude Code", MODERN) as client:
        for tool, args, saying in cases:
            says = await refused(client, tool, args, "invalid_request")
            assert saying in says, (args, says)
        # The session is fine after all that.
        assert (await client.call_json("browser_bookmarks", {"action": "tree"}))["total"] == 4
    assert [request for request, _ in sent(fake)] == ["bookmarkTree"]


async def test_a_huge_bookmark_tree_is_capped_and_says_so(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)
    fake.bookmark_nodes = [{"id": "1", "parentId": "0", "title": "Bookmarks bar"}] + [
        {"id": str(n), "parentId": "1", "title": f"Page {n}", "url": f"https://{n}.example/"} for n in range(2, 5002)
    ]
    async with broker.mcp("Claude Code", MODERN) as client:
        tree = await client.call("browser_bookmarks", {"action": "tree"})
        assert tree.meta and tree.meta["browser-mcp/untrusted"] is True
        answer = await client.call_json("browser_bookmarks", {"action": "tree"})
        assert (len(answer["results"]), answer["total"], answer["truncated"]) == (200, 5001, True)
        most = await client.call_json("browser_bookmarks", {"action": "tree", "maxResults": 1000, "folderId": 1})
        assert (len(most["results"]), most["truncated"]) == (1000, True)
        await refused(client, "browser_bookmarks", {"action": "tree", "folderId": "999999"}, "record_not_found")
    assert [args for _, args in sent(fake)] == [
        {"maxResults": 200},
        {"maxResults": 200},
        {"maxResults": 1000, "id": "1"},
        {"maxResults": 200, "id": "999999"},
    ]


async def test_the_tree_is_the_persons_to_share(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)
    fake.shared = False
    status, body = await broker.get("/bookmarks/tree")
    assert (status, body["error"]["code"]) == (403, "consent_required")
    fake.shared = True
    status, body = await broker.get("/bookmarks/tree?folder=10&max=5")
    assert status == 200 and [n["id"] for n in body["results"]] == ["10", "11"]
    assert body["untrusted"] == ["results[].title", "results[].url"]


async def test_rest_deletes_with_the_same_checks_and_statuses(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)
    status, body = await broker.delete("/history?url=kittens")
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    status, body = await broker.delete(f"/history?since={NINE}")
    assert (status, body["error"]["code"]) == (400, "invalid_request") and "`endTime` is missing" in body["error"][
        "message"
    ]
    fake.approval = "deny"
    status, body = await broker.delete(f"/history?url={KITTENS}")
    assert (status, body["error"]["code"]) == (403, "not_approved")
    fake.approval = "allow"
    status, body = await broker.delete(f"/history?url={KITTENS}")
    assert (status, body) == (200, {"deleted": {"url": KITTENS, "visits": 1}})
    status, body = await broker.delete(f"/history?url={KITTENS}")
    assert (status, body["error"]["code"]) == (404, "record_not_found")
    status, body = await broker.delete("/history?since=2026-05-01T10:00:00Z&until=2026-05-01T12:00:00Z")
    assert status == 200 and fake.history == []
    status, body = await broker.delete("/bookmarks/10")
    assert (status, body["error"]["code"]) == (409, "folder_not_empty")
    status, body = await broker.delete("/bookmarks/10?recursive=true")
    assert status == 200 and body["deleted"]["id"] == "10"
    assert body["untrusted"] == ["deleted.title", "deleted.url"]
    status, body = await broker.delete("/bookmarks/10")
    assert (status, body["error"]["code"]) == (404, "record_not_found")


async def test_a_client_token_meets_the_persons_approval_like_any_caller(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)
    fake.approval = "deny"
    mallory = {"Authorization": f"Bearer {client_token(TOKEN, 'mallory')}"}
    status, body = await broker.delete(f"/history?url={KITTENS}", headers=mallory)
    assert (status, body["error"]["code"]) == (403, "not_approved")
    status, body = await broker.delete("/bookmarks/12", headers=mallory)
    assert (status, body["error"]["code"]) == (403, "not_approved")
    assert len(fake.history) == 2 and len(fake.bookmark_nodes) == 4
    # The browser was told whose session asks, so its approval window names the client.
    assert {m["sessionId"] for m in fake.received("browserRequest")} == {"rest:mallory"}


async def test_a_deletion_racing_another_ones_approval_is_refused_as_busy(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)

    async def busy(message: dict[str, Any]) -> None:
        error = {"code": "records_busy", "message": "another deletion waits for the person's approval"}
        await fake.send({"type": "toolResult", "callId": message["callId"], "error": error})

    fake.on_request = busy
    async with broker.mcp("Claude Code", MODERN) as client:
        says = await refused(client, "browser_bookmarks", {"action": "delete", "id": "11"}, "records_busy")
        assert "waits for the person's approval" in says
    status, body = await broker.delete(f"/history?url={KITTENS}")
    assert (status, body["error"]["code"]) == (409, "records_busy")
    assert len(fake.bookmark_nodes) == 4


async def test_a_page_tool_named_like_the_deleting_tools_is_not_a_door_to_them(broker: BrokerUnderTest) -> None:
    def wipe(args: dict[str, Any]) -> str:
        return "the page's own tool ran"

    tab = FakeTab(7, "https://evil.example/", "Evil", {"browser_history_delete": wipe, "browser_bookmarks": wipe})
    fake = await broker.extension(tab, features=FEATURES)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        names = await client.tool_names()
        assert names.count("browser_history_delete") == 1 and names.count("browser_bookmarks") == 1
        # The broker's own tool answers, and the person's switch refuses it; the page's never runs.
        await refused(client, "browser_history_delete", {"url": KITTENS}, "consent_required")
        await refused(
            client, "call_page_tool", {"tab": 7, "tool": "browser_history_delete", "arguments": {}}, "tool_not_found"
        )
    assert fake.received("callTool") == []


async def test_an_mcp_client_hears_progress_while_a_deletion_waits_for_the_person(broker: BrokerUnderTest) -> None:
    fake = await shared_browser(broker)
    fake.answered = asyncio.Event()
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        heard.append((value, total, message))
        fake.answered.set()  # the person answers once the client has heard that the call waits

    async with broker.mcp("Claude Code", MODERN) as client:
        result = await client.client.call_tool("browser_history_delete", {"url": KITTENS}, progress_callback=progress)
        assert not result.is_error, text(result)
    assert heard and heard[0][1] == 60
    assert (heard[0][2] or "").startswith("waiting for the person to approve deleteHistory on b1")
