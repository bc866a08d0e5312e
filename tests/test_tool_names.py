"""Page tool names: deterministic, valid for every MCP client, unique, and traceable to their tab."""

from __future__ import annotations

import re

from broker.core.tool_names import MAX_LENGTH, name_page_tools, tab_of_page_tool

VALID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def test_plain_names_carry_the_tab_id() -> None:
    assert name_page_tools([("b1", 12, "search"), ("b1", 12, "add_to_cart")], frozenset()) == [
        "t12_search",
        "t12_add_to_cart",
    ]


def test_tab_id_shared_by_two_browsers_names_the_browser() -> None:
    names = name_page_tools([("b1", 12, "search"), ("b2", 12, "search"), ("b2", 13, "search")], frozenset({12}))
    assert names == ["b1_t12_search", "b2_t12_search", "t13_search"]


def test_invalid_and_long_names_are_made_valid_and_stay_distinct() -> None:
    tools = [("b1", 5, "find products"), ("b1", 5, "find_products"), ("b1", 5, "é" * 80), ("b1", 5, "x" * 80)]
    names = name_page_tools(tools, frozenset())
    assert all(VALID.match(name) for name in names)
    assert len(set(names)) == len(names)
    assert names[1] == "t5_find_products"
    assert max(len(name) for name in names) <= MAX_LENGTH


def test_names_are_deterministic() -> None:
    tools = [("b1", 5, "find products"), ("b1", 7, "a" * 100)]
    assert name_page_tools(tools, frozenset()) == name_page_tools(list(tools), frozenset())


def test_a_name_points_back_at_its_tab() -> None:
    assert tab_of_page_tool("t12_search") == "12"
    assert tab_of_page_tool("b2_t12_search") == "b2:12"
    assert tab_of_page_tool("tabs") is None


def test_a_crafted_name_equal_to_anothers_altered_one_still_gets_its_own() -> None:
    [altered] = name_page_tools([("b1", 1, "a b")], frozenset())
    crafted = altered.removeprefix("t1_")  # a page may declare exactly that name
    for order in ([crafted, "a b"], ["a b", crafted]):
        names = name_page_tools([("b1", 1, tool) for tool in order], frozenset())
        assert len(set(names)) == 2 and all(VALID.match(name) for name in names), names
