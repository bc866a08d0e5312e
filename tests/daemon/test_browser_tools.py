"""The built-in browser tools (browser_snapshot, browser_click ...) from the broker's side.

A scripted fake extension that says it carries out browser actions stands in for the browser
(``tests/e2e/test_e2e_actions.py`` runs the real one); the tests are what an MCP or REST client sees:
which tools are listed, which tab an action lands in, and the refusals that keep each client in
its own tabs.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types
import pytest

from broker.core.browser_tools import ACTIONS, TOOLS

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import TINY_PNG, FakeExtension, FakeTab
from ..support.mcp_clients import ERAS, MODERN, text

ALL_ACTIONS = list(ACTIONS)
POINTER_TOOLS = [
    "browser_drag",
    "browser_mouse_click_xy",
    "browser_mouse_move_xy",
    "browser_mouse_drag_xy",
    "browser_mouse_down",
    "browser_mouse_up",
    "browser_mouse_wheel",
]


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def page(tab_id: int = 7) -> FakeTab:
    return FakeTab(tab_id, f"https://page{tab_id}.example/", f"Page {tab_id}")


def refuse_every_action(fake: FakeExtension, code: str, message: str) -> None:
    """The extension answers every built-in action with this error, as its page driver would."""

    async def refuse(action: dict[str, Any]) -> None:
        error = {"code": code, "message": message}
        await fake.send({"type": "toolResult", "callId": action["callId"], "error": error})

    fake.on_action = refuse


async def test_built_in_tools_are_listed_while_a_browser_carries_them_out(broker: BrokerUnderTest, era: str) -> None:
    async with broker.mcp("Claude Code", era) as client:
        assert not [name for name in await client.tool_names() if name.startswith("browser_")]
        await broker.extension(page(), actions=ALL_ACTIONS)
        await client.changes.next(0)
        tools = await client.tools()
        listed = [name for name in tools if name.startswith("browser_")]
        core = [tool.name for tool in TOOLS if tool.group == "core"]
        assert listed == [*core, "browser_tabs", "browser_close"]
        assert tools["browser_snapshot"].annotations is not None
        assert tools["browser_snapshot"].annotations.read_only_hint is True
        assert "target" in tools["browser_click"].input_schema["properties"]


async def test_an_extension_without_them_lists_none_and_says_not_supported(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(page())
    async with broker.mcp("Claude Code", era) as client:
        assert not [name for name in await client.tool_names() if name.startswith("browser_")]
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_snapshot", {})
        assert refused.is_error and text(refused).startswith("not_supported:")
        assert "built-in browser tools" in text(refused)
    assert fake.received("browserAction") == []


async def test_actions_land_in_the_current_tab_the_one_last_opened(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", era) as client:
        opened = (await client.call_json("tabs", {"action": "open", "url": "https://new.example/"}))["opened"]
        result = await client.call("browser_snapshot", {})
        assert not result.is_error, text(result)
        sent = await fake.wait_for("browserAction")
        assert (sent["tabId"], sent["action"], sent["args"]) == (opened["id"], "snapshot", {})
        assert text(result) == f"snapshot in tab {opened['id']} with {{}}"
        assert result.meta is not None and result.meta["browser-mcp/untrusted"] is True
        assert result.meta["browser-mcp/tab"] == opened["ref"]


async def test_ref_is_taken_for_target_and_tab_stays_with_the_broker(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(7), page(8), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        await client.call_json("tabs", {"action": "claim", "tab": 8})
        result = await client.call("browser_click", {"tab": 7, "element": "Buy", "ref": "e3"})
        assert not result.is_error, text(result)
        sent = await fake.wait_for("browserAction")
        assert sent["tabId"] == 7 and sent["args"] == {"element": "Buy", "target": "e3"}


async def test_without_a_current_tab_the_error_says_how_to_get_one(broker: BrokerUnderTest, era: str) -> None:
    await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", era) as client:
        refused = await client.call("browser_snapshot", {})
        assert refused.is_error and "no current tab" in text(refused) and "action=open" in text(refused)


async def test_the_persons_tab_is_refused_until_claimed(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", era) as client:
        refused = await client.call("browser_snapshot", {"tab": 7})
        assert refused.is_error and text(refused).startswith("tab_not_claimed:")
        assert "action=claim" in text(refused)
        assert fake.received("browserAction") == []
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        # Claimed, it is now the current tab.
        result = await client.call("browser_snapshot", {})
        assert not result.is_error and text(result).startswith("snapshot in tab 7")


async def test_another_clients_tab_is_refused_naming_the_client(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as owner, broker.mcp("Cursor", MODERN) as other:
        await owner.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await other.call("browser_type", {"tab": 7, "target": "e1", "text": "hi", "element": "box"})
        assert refused.is_error and text(refused).startswith("tab_owned:") and "Claude Code" in text(refused)
    assert fake.received("browserAction") == []


async def test_an_action_on_an_element_needs_its_ref(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_click", {"element": "Buy button"})
        assert refused.is_error and "needs `target`" in text(refused)
    assert fake.received("browserAction") == []


async def test_the_pointer_tools_are_listed_and_change_the_page(broker: BrokerUnderTest) -> None:
    await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN, caps="vision") as client:
        tools = await client.tools()
        for name in POINTER_TOOLS:
            annotations = tools[name].annotations
            assert annotations is not None and annotations.read_only_hint is False, name
        assert tools["browser_drag"].input_schema["required"] == ["startTarget", "endTarget"]
        click = tools["browser_mouse_click_xy"]
        assert click.input_schema["required"] == ["x", "y"]
        assert {"button", "clickCount", "delay"} <= set(click.input_schema["properties"])
        assert "CSS pixels" in click.description and "browser_take_screenshot" in click.description
        assert tools["browser_mouse_wheel"].input_schema["required"] == ["deltaX", "deltaY"]


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        ("browser_drag", {"startTarget": "e3"}, "needs `endTarget`"),
        ("browser_drag", {"endTarget": "e3", "startTarget": 3}, "needs `startTarget`"),
        ("browser_drag", {"startTarget": "e3", "endTarget": "e3"}, "two different elements"),
        ("browser_drag", {"startRef": "e3", "endTarget": "e3"}, "two different elements"),
        ("browser_mouse_click_xy", {"x": 10}, "numbers for `y`"),
        ("browser_mouse_click_xy", {"x": "10", "y": True}, "numbers for `x` and `y`"),
        ("browser_mouse_move_xy", {}, "numbers for `x` and `y`"),
        ("browser_mouse_drag_xy", {"startX": 1, "startY": 2, "endX": 3}, "numbers for `endY`"),
        ("browser_mouse_wheel", {"deltaY": 100}, "numbers for `deltaX`"),
        ("browser_mouse_wheel", {"deltaX": float("inf"), "deltaY": 10**400}, "numbers for `deltaX`:"),
    ],
)
async def test_pointer_tools_without_their_arguments_are_refused_before_the_browser_hears(
    broker: BrokerUnderTest, tool: str, args: dict[str, Any], says: str
) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN, caps="vision") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call(tool, args)
        assert refused.is_error and says in text(refused), text(refused)
        assert fake.received("browserAction") == []
        fine = await client.call("browser_mouse_click_xy", {"x": 10, "y": 20.5, "clickCount": 2})
        assert not fine.is_error, text(fine)
        sent = await fake.wait_for("browserAction")
        assert (sent["action"], sent["args"]) == ("mouse_click_xy", {"x": 10, "y": 20.5, "clickCount": 2})


async def test_drag_takes_the_older_startref_and_endref(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("browser_drag", {"startElement": "Apple", "startRef": "e3", "endRef": "e5"})
        assert not result.is_error, text(result)
        sent = await fake.wait_for("browserAction")
        assert sent["args"] == {"startElement": "Apple", "startTarget": "e3", "endTarget": "e5"}


async def test_a_screenshot_comes_back_as_an_image(broker: BrokerUnderTest, era: str) -> None:
    await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("browser_take_screenshot", {})
        images = [part for part in result.content if isinstance(part, types.ImageContent)]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data).startswith(b"\x89PNG")


async def test_the_pages_failure_reaches_the_client_with_its_code(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    stale = "ref e9 points at an element that is no longer on the page: take a new browser_snapshot"
    refuse_every_action(fake, "stale_ref", stale)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_hover", {"target": "e9", "element": "menu"})
        assert refused.is_error and "take a new browser_snapshot" in text(refused)
    status, _ = await broker.post("/tabs/7/claim")
    assert status == 409  # still the MCP client's tab


async def test_evaluate_can_be_turned_off(make_broker: MakeBroker) -> None:
    broker = await make_broker(allow_evaluate=False)
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        assert "browser_evaluate" not in await client.tool_names()
        assert "browser_snapshot" in await client.tool_names()
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_evaluate", {"function": "() => document.cookie"})
        assert refused.is_error and "--no-evaluate" in text(refused)
    assert fake.received("browserAction") == []


# REST


async def test_rest_actions_act_on_the_named_tab(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    status, body = await broker.post("/tabs/7/actions/snapshot")
    assert status == 409 and body["error"]["code"] == "tab_not_claimed"
    assert "POST /tabs/b1:7/claim" in body["error"]["message"]
    await broker.post("/tabs/7/claim")
    status, body = await broker.post("/tabs/7/actions/type", {"ref": "e2", "text": "shoes", "submit": True})
    assert status == 200
    assert body["result"]["content"][0]["text"].startswith("type in tab 7")
    sent = await fake.wait_for("browserAction")
    assert sent["args"] == {"target": "e2", "text": "shoes", "submit": True}
    status, body = await broker.post("/tabs/7/actions/take_screenshot")
    assert status == 200 and body["result"]["content"][1] == {
        "type": "image",
        "data": TINY_PNG,
        "mimeType": "image/png",
    }


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/tabs/7/actions/fly", {}, 404, "tool_not_found"),
        ("/tabs/7/actions/click", {"element": "Buy"}, 400, "invalid_request"),
        ("/tabs/7/actions/mouse_click_xy", {"x": 10}, 400, "invalid_request"),
        ("/tabs/7/actions/drag", {"startTarget": "e1", "endTarget": "e1"}, 400, "invalid_request"),
        ("/tabs/7/actions/snapshot", [1], 400, "invalid_request"),
        ("/tabs/99/actions/snapshot", {}, 404, "tab_not_found"),
    ],
)
async def test_rest_bad_actions_are_refused_and_cost_nothing(
    broker: BrokerUnderTest, path: str, body: Any, status: int, code: str
) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    await broker.post("/tabs/7/claim")
    got, answer = await broker.post(path, body)
    assert (got, answer["error"]["code"]) == (status, code)
    assert fake.received("browserAction") == []
    got, _ = await broker.post("/tabs/7/actions/snapshot")
    assert got == 200


# Addresses past the web's origins: code of the caller's making, the person's disk, the browser's
# own pages and settings, the extension's approval window; some dressed up to slip by a check.
REFUSED_ADDRESSES = [
    "javascript:alert(document.cookie)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "\tjavascript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "FILE:///home/",
    "chrome://settings/passwords",
    "chrome-extension://abcdefghijklmnopabcdefghijklmnop/person/approval.html",
    "moz-extension://0b7c6a9e-1c1d-4e0e-9a6b-2b7f7c1d9e1f/person/approval.html",
    "about:config",
    "about:debugging",
    "view-source:https://bank.example/",
    "blob:https://bank.example/0b7c6a9e",
    "filesystem:https://bank.example/temporary/x",
    "edge://settings",
    "resource://gre/modules/",
    "ws://127.0.0.1:8765/",
    "ftp://files.example/",
    "//bank.example/",
]


async def test_navigate_refuses_what_opening_a_tab_refuses_before_the_browser_hears(
    broker: BrokerUnderTest, era: str
) -> None:
    fake = await broker.extension(page(7), page(8), actions=ALL_ACTIONS)
    await broker.claim(7)
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 8})
        for url in REFUSED_ADDRESSES:
            opened, refusal = await broker.post("/tabs", {"url": url})
            assert opened == 400 and refusal["error"]["code"] == "invalid_request", url
            status, body = await broker.post("/tabs/7/actions/navigate", {"url": url})
            assert (status, body) == (opened, refusal), url
            refused = await client.call("browser_navigate", {"url": url})
            assert refused.is_error and text(refused).startswith("invalid_request:"), url
            assert refusal["error"]["message"] in text(refused), url
        assert fake.received("browserAction") == []
        for missing in ({}, {"url": ""}, {"url": 7}):
            status, body = await broker.post("/tabs/7/actions/navigate", missing)
            assert status == 400 and "needs `url`" in body["error"]["message"], missing
        result = await client.call("browser_navigate", {"url": "https://page8.example/next"})
        assert not result.is_error, text(result)
    [sent] = fake.received("browserAction")
    assert sent["action"] == "navigate" and sent["args"] == {"url": "https://page8.example/next"}


async def test_status_shows_what_each_browser_carries_out(broker: BrokerUnderTest) -> None:
    await broker.extension(page(), actions=["snapshot", "click"])
    status, body = await broker.get("/status")
    assert status == 200 and body["browsers"][0]["actions"] == ["click", "snapshot"]
    assert json.dumps(body)  # plain JSON all the way down


async def test_handle_dialog_is_listed_with_playwrights_arguments_and_routed_to_the_tab(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        tool = (await client.tools())["browser_handle_dialog"]
        assert tool.input_schema["required"] == ["accept"]
        assert {"accept", "promptText", "tab"} <= set(tool.input_schema["properties"])
        assert tool.annotations is not None and tool.annotations.read_only_hint is False
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for bad in ({}, {"accept": "yes"}):
            refused = await client.call("browser_handle_dialog", bad)
            assert refused.is_error and "needs `accept`" in text(refused)
        assert fake.received("browserAction") == []
        answered = await client.call("browser_handle_dialog", {"accept": True, "promptText": "Ada"})
        assert not answered.is_error, text(answered)
        sent = await fake.wait_for("browserAction")
        assert (sent["tabId"], sent["action"], sent["args"]) == (
            7,
            "handle_dialog",
            {"accept": True, "promptText": "Ada"},
        )


async def test_a_call_refused_for_an_open_dialog_is_the_brokers_dialog_open_error(broker: BrokerUnderTest) -> None:
    """Only the extension knows a dialog waits in the tab; its refusal reaches MCP and REST clients
    as ``dialog_open`` (409), not as a failed page tool."""
    fake = await broker.extension(page(7), page(8), actions=ALL_ACTIONS)
    dialog = 'a "confirm" dialog with message "Sure?" is open there; answer it with browser_handle_dialog'
    refuse_every_action(fake, "dialog_open", dialog)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_snapshot", {})
        assert refused.is_error and text(refused).startswith("dialog_open:")
        assert "browser_handle_dialog" in text(refused) and '"Sure?"' in text(refused)
    await broker.post("/tabs/8/claim")
    status, body = await broker.post("/tabs/8/actions/click", {"ref": "e2"})
    assert (status, body["error"]["code"]) == (409, "dialog_open")


# Tabs born of a client's tab, and Playwright MCP's tab tools


async def test_a_tab_opened_by_a_clients_tab_is_its_own_from_birth_and_the_persons_stays_the_persons(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(page(7), page(8), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client, broker.mcp("Cursor", MODERN) as other:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        await fake.send({"type": "tabCreated", "tab": page(20).info(), "openerTabId": 7})
        claimed = await fake.wait_for("tabClaimed", lambda m: m["tabId"] == 20)
        await fake.send({"type": "tabCreated", "tab": page(21).info(), "openerTabId": 8})
        await fake.send({"type": "tabCreated", "tab": page(22).info(), "openerTabId": 999})
        listed = {t["id"]: t["owner"] for t in (await client.call_json("tabs", {"action": "list"}))["tabs"]}
        assert listed[20] == {"sessionId": claimed["sessionId"], "name": "Claude Code"}
        assert listed[21] is None and listed[22] is None
        assert [m["tabId"] for m in fake.received("tabClaimed")] == [7, 20]
        result = await client.call("browser_snapshot", {"tab": 20})
        assert not result.is_error, text(result)
        refused = await other.call("browser_snapshot", {"tab": 20})
        assert refused.is_error and text(refused).startswith("tab_owned:") and "Claude Code" in text(refused)


def numbered(result: types.CallToolResult) -> list[str]:
    """``browser_tabs``' lines, without the untrusted titles."""
    return [line.split(" [", 1)[0] + " " + line.rsplit(" ", 1)[1] for line in text(result).splitlines()[1:]]


async def test_browser_tabs_numbers_the_clients_own_tabs_and_acts_by_index(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(7), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        empty = await client.call("browser_tabs", {"action": "list"})
        assert text(empty) == "### Open tabs\n- none: browser_tabs action=new opens one"
        await client.call("browser_tabs", {"action": "new", "url": "https://one.example/"})
        made = await client.call("browser_tabs", {"action": "new"})
        assert [m["url"] for m in fake.received("openTab")] == ["https://one.example/", "about:blank"]
        assert all(m["focus"] is False for m in fake.received("openTab"))
        first, second = 1000, 1001  # the fake's ids for the tabs it opens
        assert numbered(made) == [f"- 0: b1:{first}", f"- 1: (current) b1:{second}"], text(made)
        assert made.meta is not None and made.meta["browser-mcp/untrusted"] is True
        selected = await client.call("browser_tabs", {"action": "select", "index": 0})
        assert numbered(selected) == [f"- 0: (current) b1:{first}", f"- 1: b1:{second}"]
        await client.call("browser_snapshot", {})
        assert (await fake.wait_for("browserAction"))["tabId"] == first
        assert fake.received("focusTab") == [], "selecting brings nothing to the front"
        for bad, says in (
            ({"action": "select", "index": 2}, "no tab at index 2"),
            ({"action": "select", "index": -1}, "whole number"),
            ({"action": "close", "index": True}, "whole number"),
            ({"action": "select"}, "needs `index`"),
            ({"action": "new", "url": "javascript:alert(1)"}, "cannot open"),
            ({"action": "open"}, "one of list, new, close, select"),
        ):
            refused = await client.call("browser_tabs", bad)
            assert refused.is_error and text(refused).startswith("invalid_request:") and says in text(refused), bad
        closed = await client.call("browser_tabs", {"action": "close", "index": 1})
        assert numbered(closed) == [f"- 0: (current) b1:{first}"]
        gone = await client.call("browser_close", {})
        assert not gone.is_error and "- none" in text(gone)
        assert [m["tabId"] for m in fake.received("closeTab")] == [second, first]
        assert 7 in fake.tabs, "the person's tab is neither listed nor closed"


async def test_each_client_reads_the_page_as_changed_since_its_own_last_snapshot(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(7), actions=ALL_ACTIONS)
    tab = fake.tabs[7]
    tab.snapshot = '- heading "Shop" [level=1] [ref=e1]\n- link "Cart (0)" [ref=e2]'
    async with broker.mcp("First", MODERN) as first:
        await first.call_json("tabs", {"action": "claim", "tab": 7})
        whole = text(await first.call("browser_snapshot", {}))
        assert whole.endswith(
            '### Snapshot\n```yaml\n- heading "Shop" [level=1] [ref=e1]\n- link "Cart (0)" [ref=e2]\n```'
        )
        tab.snapshot = tab.snapshot.replace("Cart (0)", "Cart (1)")
        clicked = text(await first.call("browser_click", {"target": "e9"}))
        assert (
            clicked == 'click in tab 7 with {"target": "e9"}\n### Snapshot\n```diff\n~ - link "Cart (1)" [ref=e2]\n```'
        )
        assert "+ added" in str((await first.tools())["browser_snapshot"].description)
        # The arguments that say how to show the page stay with the broker.
        same = text(await first.call("browser_snapshot", {"changes": True, "maxChars": 5000}))
        assert same.endswith("### Snapshot\n- No changes since your last snapshot of this tab.")
        assert (await fake.wait_for("browserAction", lambda m: m["args"] == {}))["action"] == "snapshot"
        await first.call_json("tabs", {"action": "release", "tab": 7})
    # A new client, and a new page: whole, saying which.
    tab.document = "d2"
    status, body = await broker.post("/tabs/7/claim")
    assert status == 200, body
    status, body = await broker.post("/tabs/7/actions/click", {"target": "e2"})
    assert status == 200 and body["result"]["content"][0]["text"].endswith(
        '### Snapshot\n```yaml\n- heading "Shop" [level=1] [ref=e1]\n- link "Cart (1)" [ref=e2]\n```'
    )
    status, body = await broker.post("/tabs/7/actions/snapshot", {"changes": True})
    assert body["result"]["content"][0]["text"].endswith("- No changes since your last snapshot of this tab.")


async def test_bad_snapshot_arguments_are_refused_before_the_browser_hears(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(7), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_snapshot", {"maxChars": "lots"})
        assert refused.is_error and "`maxChars` must be a whole number" in text(refused), text(refused)
        refused = await client.call("browser_snapshot", {"changes": True, "depth": 2})
        assert refused.is_error and "leave out `depth`" in text(refused)
    assert fake.received("browserAction") == []


async def test_an_answer_of_the_wrong_shape_ends_its_call_at_once(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(7), actions=ALL_ACTIONS)

    async def garbled(message: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": message["callId"], "result": {}, "page": {"yaml": 5}})

    fake.on_action = garbled
    await broker.post("/tabs/7/claim")
    status, body = await broker.post("/tabs/7/actions/snapshot")
    assert (status, body["error"]["code"]) == (502, "bad_reply")
    assert "message.page.document" in body["error"]["message"]
    fake.on_action = fake.answer_action
    status, _ = await broker.post("/tabs/7/actions/snapshot")
    assert status == 200


async def test_two_browsers_sharing_tab_ids_name_tabs_by_their_refs_in_results_and_errors(
    broker: BrokerUnderTest, era: str
) -> None:
    await broker.extension(page(7), page(9), actions=ALL_ACTIONS, instance_id="first")
    second = await broker.extension(page(7), page(9), actions=ALL_ACTIONS, instance_id="second")
    opened = "### New tabs\n- Tab 9: https://page9.example/ (yours; name it with tab: 9)"

    async def answer(message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"type": "toolResult", "callId": message["callId"]}
        if message["action"] == "click":
            reply["result"] = {"content": [{"type": "text", "text": f"### Result\nclicked\n{opened}"}]}
        else:
            reply["error"] = {"code": "no_dialog", "message": "no dialog is open in tab 7 (tab 12 had one)"}
        await second.send(reply)

    second.on_action = answer
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": "b2:7"})
        clicked = await client.call("browser_click", {"tab": "b2:7", "element": "Open", "ref": "e1"})
        assert not clicked.is_error, text(clicked)
        assert "- Tab b2:9: https://page9.example/ (yours; name it with tab: b2:9)" in text(clicked)
        assert "Tab 9:" not in text(clicked)
        refused = await client.call("browser_handle_dialog", {"tab": "b2:7", "accept": True})
        assert refused.is_error
        assert text(refused) == "tool_failed: no dialog is open in tab b2:7 (tab 12 had one)", "only the call's tab"
    status, body = await broker.post("/tabs/b2:7/actions/click", {"element": "Open", "target": "e1"})
    assert status == 409 and "b2:7" in body["error"]["message"], body


async def test_find_answers_the_matches_and_the_browser_takes_a_plain_snapshot(broker: BrokerUnderTest) -> None:
    tab = page()
    items = [f'    - listitem [ref=e{i + 4}]:\n      - button "Remove item {i}" [ref=e{i + 40}]' for i in range(30)]
    tab.snapshot = '- main [ref=e1]:\n  - heading "Basket" [level=1] [ref=e2]\n  - list [ref=e3]:\n' + "\n".join(items)
    fake = await broker.extension(tab, actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        found = await client.call("browser_find", {"text": "remove item 17"})
        assert not found.is_error, text(found)
        assert "### Found\n- 1 match" in text(found) and '- button "Remove item 17" [ref=e57]' in text(found)
        assert "Remove item 3" not in text(found)
        sent = await fake.wait_for("browserAction")
        assert (sent["action"], sent["args"]) == ("find", {})
        refused = await client.call("browser_find", {"regex": "(unclosed"})
        assert refused.is_error and "does not compile" in text(refused)
        # A search moves no baseline: the next look at the changes still has the whole page to tell.
        whole = await client.call("browser_snapshot", {"changes": True})
        assert "Your first snapshot of this tab" in text(whole)


async def test_a_tool_the_browsers_driver_lacks_is_not_supported_saying_so(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(), actions=[name for name in ALL_ACTIONS if name != "mouse_wheel"])
    async with broker.mcp("Claude Code", MODERN, caps="vision") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_mouse_wheel", {"deltaX": 0, "deltaY": 10})
        assert refused.is_error and text(refused).startswith("not_supported:"), text(refused)
        assert "gives extensions no way to" in text(refused) and "load the browser-mcp extension" not in text(refused)
    assert fake.received("browserAction") == []


async def test_a_part_of_a_tool_the_driver_cannot_do_is_not_supported_not_a_tool_failure(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    refuse_every_action(fake, "not_supported", "Firefox's extension cannot set a response's status")
    async with broker.mcp("Claude Code", MODERN, caps="network") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_route", {"pattern": "**/api", "status": 500})
        assert refused.is_error and text(refused).startswith("not_supported:"), text(refused)
        assert refused.structured_content is not None
        assert refused.structured_content["error"]["code"] == "not_supported"
    # Over REST too, with its status.
    await broker.extension(FakeTab(8, "https://page8.example/", "Page 8"), actions=ALL_ACTIONS)
    refuse_every_action(broker.fakes[-1], "not_supported", "Firefox gives extensions no per-tab media")
    await broker.post("/tabs/8/claim")
    status, body = await broker.post("/tabs/8/actions/emulate_media", {"colorScheme": "dark"})
    assert status == 501 and body["error"]["code"] == "not_supported", body


# The person's annotations (issue 42).


async def test_browser_annotate_is_of_the_devtools_group_read_only_and_takes_only_its_tab(
    broker: BrokerUnderTest,
) -> None:
    await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        assert "browser_annotate" not in await client.tool_names()
    async with broker.mcp("Claude Code", MODERN, caps="devtools") as client:
        tool = (await client.tools())["browser_annotate"]
        assert set(tool.input_schema["properties"]) == {"tab"}
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert not tool.annotations.destructive_hint


# The dom group (issue 43): the page as text and HTML, and the DOM looked into.


async def test_the_dom_tools_are_read_only_of_the_dom_group_and_refuse_bad_arguments_before_the_browser_hears(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    dom = {"browser_get_text", "browser_get_html", "browser_inspect", "browser_query"}
    async with broker.mcp("Claude Code", MODERN) as client:
        assert not dom & set(await client.tool_names())
    async with broker.mcp("Claude Code", MODERN, caps="dom") as client:
        tools = await client.tools()
        for name in dom:
            annotations = tools[name].annotations
            assert annotations is not None and annotations.read_only_hint and not annotations.destructive_hint
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for args, said in (
            ({"what": ["box"]}, "needs `target`"),
            ({"target": "e3"}, "needs `what`: one or more of attributes, styles, box, state, form"),
            ({"target": "e3", "what": ["colour"]}, "needs `what`"),
            ({"target": "e3", "what": ["styles"], "properties": "color"}, "`properties` must list CSS property"),
        ):
            refused = await client.call("browser_inspect", args)
            assert refused.is_error and said in text(refused), (args, text(refused))
        for args in ({}, {"selector": "  "}, {"selector": 7}):
            refused = await client.call("browser_query", args)
            assert refused.is_error and "needs `selector`" in text(refused), text(refused)
    assert fake.received("browserAction") == []


# What a web app did (issue 43): web vitals and an accessibility audit, in the devtools group.


async def test_the_app_telemetry_tools_are_read_only_of_the_devtools_group_and_reach_the_browser_as_asked(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN) as client:
        assert not {"browser_performance", "browser_a11y_audit"} & set(await client.tool_names())
    async with broker.mcp("Claude Code", MODERN, caps="devtools") as client:
        tools = await client.tools()
        assert set(tools["browser_performance"].input_schema["properties"]) == {"tab"}
        assert set(tools["browser_a11y_audit"].input_schema["properties"]) == {"tab", "element", "target"}
        for name in ("browser_performance", "browser_a11y_audit"):
            annotations = tools[name].annotations
            assert annotations is not None and annotations.read_only_hint and not annotations.destructive_hint
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        await client.call("browser_a11y_audit", {"element": "the form", "ref": "e4"})
    [action] = fake.received("browserAction")
    assert action["action"] == "a11y_audit" and action["args"] == {"element": "the form", "target": "e4"}


# The video tools (issue 42): their arguments checked before any browser hears of them.
async def test_the_video_tools_arguments_are_checked_and_the_videos_name_kept_for_its_stop(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    await broker.post("/tabs/7/claim")
    for action, args, words in (
        ("start_video", {"fps": 0}, "`fps` must be a number from 1 to 30"),
        ("start_video", {"fps": True}, "`fps`"),
        ("start_video", {"size": {"width": 640}}, "`size` must be {width, height}"),
        ("start_video", {"size": {"width": 8, "height": 8}}, "each 16 to 4096 pixels"),
        ("start_video", {"filename": "../"}, "must name a file"),
        ("video_chapter", {}, "needs `title`"),
        ("video_chapter", {"title": "A", "duration": -5}, "`duration` must be 1 to 60000 ms"),
        ("video_show_actions", {"position": "middle"}, "`position` must be one of top-left"),
    ):
        status, body = await broker.post(f"/tabs/7/actions/{action}", args)
        assert status == 400 and words in body["error"]["message"], (action, body)
    assert fake.received("browserAction") == []
    # The start's filename is the stop's file: the broker writes nothing for the start, and the
    # extension hears the name alone (no folders), for the video's file.
    status, body = await broker.post("/tabs/7/actions/start_video", {"filename": "clips/demo.webm", "fps": 10})
    assert status == 200, body
    sent = await fake.wait_for("browserAction")
    assert (sent["action"], sent["args"]) == ("start_video", {"videoName": "demo.webm", "fps": 10})
