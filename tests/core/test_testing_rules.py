"""The testing group's declarations and argument checks (``broker/core/testing_rules.py``): a call
the page could not check is refused before any browser hears of it."""

from __future__ import annotations

from typing import Any

import pytest

from broker.core.browser_tools import NAMED, capabilities, tool_definitions
from broker.core.errors import InvalidRequest

TESTING = (
    "browser_verify_element_visible",
    "browser_verify_text_visible",
    "browser_verify_list_visible",
    "browser_verify_value",
    "browser_generate_locator",
)


def test_the_testing_tools_are_read_only_and_listed_only_to_a_client_that_asks() -> None:
    actions = frozenset(NAMED[name].action for name in TESTING)
    assert tool_definitions(actions) == []
    listed = {tool["name"]: tool for tool in tool_definitions(actions, capabilities("testing"))}
    assert set(listed) == set(TESTING)
    assert all(tool["annotations"]["readOnlyHint"] for tool in listed.values())
    assert listed["browser_verify_value"]["inputSchema"]["properties"]["type"]["enum"] == [
        "textbox",
        "checkbox",
        "radio",
        "combobox",
        "slider",
    ]


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        ("browser_verify_element_visible", {"role": "button"}, "`accessibleName`"),
        ("browser_verify_element_visible", {"role": " ", "accessibleName": "Save"}, "not blank"),
        ("browser_verify_text_visible", {"text": 3}, "`text`"),
        ("browser_verify_list_visible", {"element": "Fruits", "target": "e3", "items": []}, "`items`"),
        ("browser_verify_list_visible", {"element": "Fruits", "target": "e3", "items": [1]}, "`items`"),
        ("browser_verify_list_visible", {"element": "Fruits", "items": ["Apple"]}, "`target`"),
        ("browser_verify_value", {"type": "date", "target": "e3", "value": "x"}, "`type`"),
        ("browser_verify_value", {"type": "checkbox", "target": "e3", "value": "yes"}, '"true" or "false"'),
        ("browser_verify_value", {"type": "textbox", "target": "e3"}, "`value`"),
        ("browser_generate_locator", {"element": "Save"}, "`target`"),
    ],
)
def test_a_call_the_page_could_not_check_is_refused(tool: str, args: dict[str, Any], says: str) -> None:
    with pytest.raises(InvalidRequest, match=says.replace("(", r"\(")):
        NAMED[tool].arguments(args)


def test_a_well_formed_call_passes_with_its_tab_apart() -> None:
    tab, own = NAMED["browser_verify_value"].arguments(
        {"tab": 4, "type": "radio", "element": "Pickup", "ref": "e9", "value": "true"}
    )
    assert tab == 4 and own == {"type": "radio", "element": "Pickup", "target": "e9", "value": "true"}
