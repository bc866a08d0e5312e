"""A tool's name and arguments become one typed call in the core (``broker/core/tool_calls.py``), with
every check and error a door has always given, before any browser hears of it; and the built-in
tools' declarations the calls are read by. No event loop."""

from __future__ import annotations

import math
from typing import Any

import pytest

from broker.core import browser_tools, browser_wide, tool_calls
from broker.core.arguments import OpenTabRequest, TabChange
from broker.core.browser_wide import TabsCall, WideCall, answer_of
from broker.core.effects import WindowChanged
from broker.core.errors import InvalidRequest, PageToolFailed, ToolNotFound
from broker.core.tool_calls import (
    ActionCall,
    ChangeTab,
    CloseTab,
    ListPageTools,
    ListTabs,
    OpenTab,
    PageToolCall,
    parse_call,
)


def refused(name: str, args: dict[str, Any]) -> str:
    with pytest.raises(InvalidRequest) as caught:
        parse_call(name, args)
    return caught.value.message


def action(name: str, args: dict[str, Any]) -> ActionCall:
    call = parse_call(name, args)
    assert isinstance(call, ActionCall)
    return call


# The broker's own tools


def test_a_name_none_of_the_brokers_tools_have_is_left_to_the_door() -> None:
    assert parse_call("t12_search", {"q": 1}) is None
    assert parse_call("browser_nothing", {}) is None


def test_tabs_becomes_the_call_its_action_names() -> None:
    assert parse_call("tabs", {"action": "list"}) == ListTabs()
    assert parse_call("tabs", {"action": "open", "url": "https://a.example/", "focus": False}) == OpenTab(
        OpenTabRequest("https://a.example/", False)
    )
    assert parse_call("tabs", {"action": "close", "tab": "b2:12"}) == CloseTab("b2:12")
    for change in TabChange:
        assert parse_call("tabs", {"action": change.value, "tab": 3}) == ChangeTab(change, 3)


def test_tabs_refuses_an_unknown_action_and_a_missing_tab() -> None:
    assert refused("tabs", {"action": "steal"}) == "action must be one of list, open, close, focus, claim, release"
    assert refused("tabs", {}) == "action must be one of list, open, close, focus, claim, release"
    assert refused("tabs", {"action": "claim"}) == "`tab` is required: a tab id such as 12, or b2:12"
    assert refused("tabs", {"action": "close", "tab": True}) == "`tab` is required: a tab id such as 12, or b2:12"
    assert "cannot open 'javascript:alert(1)'" in refused("tabs", {"action": "open", "url": "javascript:alert(1)"})


def test_page_tools_takes_a_tab_and_a_refresh_flag() -> None:
    assert parse_call("page_tools", {"tab": 7}) == ListPageTools(7, False)
    assert parse_call("page_tools", {"tab": 7, "refresh": True}) == ListPageTools(7, True)
    assert refused("page_tools", {"tab": 7, "refresh": "yes"}) == "`refresh` must be true or false, got 'yes'"
    assert refused("page_tools", {}) == "`tab` is required: a tab id such as 12, or b2:12"


def test_call_page_tool_needs_a_tool_an_object_of_arguments_and_a_tab() -> None:
    assert parse_call("call_page_tool", {"tab": 7, "tool": "echo"}) == PageToolCall(7, "echo", {})
    assert parse_call("call_page_tool", {"tab": 7, "tool": "echo", "arguments": {"a": 1}}) == PageToolCall(
        7, "echo", {"a": 1}
    )
    assert refused("call_page_tool", {"tab": 7}) == "call_page_tool needs `tool`: the page tool's name"
    assert (
        refused("call_page_tool", {"tab": 7, "tool": "echo", "arguments": [1]})
        == "the tool's arguments must be a JSON object, got list"
    )
    assert refused("call_page_tool", {"tool": "echo"}) == "`tab` is required: a tab id such as 12, or b2:12"


def test_playwrights_tab_tools_are_calls_over_the_sessions_own_tabs() -> None:
    assert parse_call("browser_close", {"anything": 1}) == TabsCall("close")
    assert parse_call("browser_tabs", {"action": "select", "index": 2}) == TabsCall("select", 2)
    assert parse_call("browser_tabs", {"action": "new"}) == TabsCall("new", url="about:blank")
    assert refused("browser_tabs", {"action": "select"}) == (
        "action=select needs `index`: the tab's number from browser_tabs action=list"
    )
    assert refused("browser_tabs", {"action": "list", "index": -1}).startswith("`index` must be a whole number")


def test_browser_wide_tools_become_the_request_they_ask() -> None:
    assert parse_call("browser_windows", {"action": "list", "browser": "b2"}) == WideCall("listWindows", browser="b2")
    assert parse_call("browser_resize", {"width": 1280.4, "height": 800}) == WideCall(
        "resizeWindow", {"width": 1280, "height": 800}
    )
    assert refused("browser_windows", {"action": "focus"}) == (
        "action=focus needs `windowId`: a window id from action=list, such as 7"
    )
    assert refused("browser_resize", {"width": 10, "height": 800}) == (
        "`width` must be from 200 to 10000 CSS pixels; got 10"
    )


# The built-in browser tools


def test_a_built_in_tool_is_its_declaration_with_its_tab_and_its_own_arguments() -> None:
    call = action("browser_click", {"tab": 7, "element": "Buy", "ref": "e3"})
    assert call.tool is browser_tools.NAMED["browser_click"] and call.tool.action == "click"
    assert (call.tab, call.args) == (7, {"element": "Buy", "target": "e3"})
    assert action("browser_snapshot", {}).tab is None
    assert refused("browser_snapshot", {"tab": 1.5}) == "`tab` is required: a tab id such as 12, or b2:12"


@pytest.mark.parametrize("name", ["browser_click", "browser_hover", "browser_type", "browser_select_option"])
def test_an_action_on_an_element_needs_its_ref(name: str) -> None:
    assert refused(name, {"element": "Buy"}) == (
        f"{name} needs `target`: the element's ref from a browser_snapshot of the tab, such as e7"
    )


def test_a_dialog_needs_its_answer() -> None:
    assert refused("browser_handle_dialog", {"accept": "yes"}) == (
        "browser_handle_dialog needs `accept`: true to accept the dialog, false to dismiss it"
    )
    assert action("browser_handle_dialog", {"accept": False}).args == {"accept": False}


def test_drag_takes_the_older_names_and_needs_two_different_elements() -> None:
    assert action("browser_drag", {"startRef": "e1", "endRef": "e2"}).args == {"startTarget": "e1", "endTarget": "e2"}
    assert refused("browser_drag", {"startTarget": "e1"}) == (
        "browser_drag needs `endTarget`: the refs of the element to drag and of the one to drop it on, from a"
        " browser_snapshot of the tab"
    )
    assert refused("browser_drag", {"startTarget": "e1", "endTarget": "e1"}) == (
        "browser_drag needs two different elements: startTarget and endTarget are both e1"
    )


def test_navigate_needs_a_page_a_client_may_open() -> None:
    assert refused("browser_navigate", {}) == "browser_navigate needs `url`: the http: or https: address to load"
    assert "cannot open 'file:///etc/passwd'" in refused("browser_navigate", {"url": "file:///etc/passwd"})
    assert action("browser_navigate", {"url": "https://a.example/"}).args == {"url": "https://a.example/"}


@pytest.mark.parametrize("wrong", [True, "3", math.nan, math.inf, None])
def test_the_pointer_needs_finite_numbers(wrong: Any) -> None:
    assert refused("browser_mouse_click_xy", {"x": wrong, "y": 2}) == (
        "browser_mouse_click_xy needs numbers for `x`: CSS pixels of the tab's viewport, as in its screenshot"
    )
    assert refused("browser_mouse_wheel", {"deltaX": wrong, "deltaY": wrong}).startswith(
        "browser_mouse_wheel needs numbers for `deltaX` and `deltaY`"
    )
    assert action("browser_mouse_drag_xy", {"startX": 1, "startY": 2, "endX": 10**400, "endY": 0.5}).tool.group == (
        "vision"
    )


def test_rest_names_a_tool_by_its_wire_name_and_the_tab_by_its_route() -> None:
    call = tool_calls.action_in("b1:7", tool_calls.builtin_action("click"), {"tab": 9, "target": "e1"})
    assert (call.tool.name, call.tab, call.args) == ("browser_click", "b1:7", {"target": "e1"})
    with pytest.raises(ToolNotFound) as caught:
        tool_calls.builtin_action("browser_click")
    assert caught.value.message.startswith("no built-in action 'browser_click' (there are: snapshot, find, click,")
    with pytest.raises(InvalidRequest, match="the tool's arguments must be a JSON object, got str"):
        tool_calls.action_in(7, tool_calls.builtin_action("snapshot"), "x")


def test_each_tool_is_declared_once_its_wire_name_derived() -> None:
    assert [tool.name for tool in browser_tools.TOOLS] == [f"browser_{name}" for name in browser_tools.ACTIONS]
    # What the person is asked: code of the agent's, files sent, a page's answers made up, their own data changed.
    assert {tool.action for tool in browser_tools.TOOLS if tool.destructive} == {
        "evaluate",
        "file_upload",
        "drop",
        "route",
        *(f"cookie_{verb}" for verb in ("set", "delete", "clear")),
        *(f"{kind}storage_{verb}" for kind in ("local", "session") for verb in ("set", "delete", "clear")),
        "set_storage_state",
    }
    assert {tool.action for tool in browser_tools.TOOLS if tool.uploads} == {"file_upload", "drop"}
    assert {tool.action for tool in browser_tools.TOOLS if tool.group == "vision"} == {
        "mouse_click_xy",
        "mouse_move_xy",
        "mouse_drag_xy",
        "mouse_down",
        "mouse_up",
        "mouse_wheel",
    }
    # Firefox gives extensions no way to (docs/page-drivers.md).
    assert {tool.action for tool in browser_tools.TOOLS if "webextension" not in tool.drivers} == {
        "mouse_down",
        "mouse_up",
        "mouse_wheel",
        "emulate_media",
        "pdf_save",
        "start_tracing",
        "stop_tracing",
    }
    # Acting on pages of the web is MCP's default openWorldHint, so it goes unsaid.
    assert browser_tools.NAMED["browser_evaluate"].definition()["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
    }
    assert browser_wide.TAB_TOOLS["browser_tabs"].group == "core-tabs"


# A browser's answer to a browser-wide call


def test_a_browsers_answer_is_read_in_the_core() -> None:
    resize = WideCall("resizeWindow", {"width": 800, "height": 600}, window="b1:4")
    assert answer_of(resize, "b1", {"width": 800, "height": 600, "extra": 1}) == {
        "resized": {"browser": "b1", "id": 4, "width": 800, "height": 600}
    }
    with pytest.raises(PageToolFailed, match="answered resizeWindow with list, not an object"):
        answer_of(resize, "b1", [])
    assert answer_of(WideCall("closeWindow", window=7), "b2", None) == WindowChanged("closed", "b2", 7)
    assert answer_of(WideCall("searchHistory", {"query": ""}), "b1", {"results": []}) == {"results": []}
    with pytest.raises(PageToolFailed, match="answered searchHistory with str, not an object"):
        answer_of(WideCall("searchHistory", {"query": ""}), "b1", "no")
