"""What REST and MCP callers may ask for is checked in one place, with one message per mistake."""

from __future__ import annotations

from typing import Any

import pytest

from broker.core import arguments
from broker.core.browser_wide import windows_call
from broker.core.errors import InvalidRequest


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"url": "https://x/"}, arguments.OpenTabRequest("https://x/", True, None)),
        ({"url": "https://x/", "focus": False, "browser": "b2"}, arguments.OpenTabRequest("https://x/", False, "b2")),
        ({"url": "https://x/", "action": "open"}, arguments.OpenTabRequest("https://x/")),
    ],
)
def test_open_tab_request(value: Any, expected: arguments.OpenTabRequest) -> None:
    assert arguments.open_tab_request(value) == expected


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (None, '{"url"'),
        ({"url": ""}, '{"url"'),
        ({"url": "https://x/", "focus": "yes"}, '"focus"'),
        ({"url": "https://x/", "browser": 2}, '"browser"'),
    ],
)
def test_bad_open_tab_request_says_what_is_wrong(value: Any, words: str) -> None:
    with pytest.raises(InvalidRequest, match=words):
        arguments.open_tab_request(value)


@pytest.mark.parametrize(("value", "seconds"), [(None, None), ("2.5", 2.5), (3600, 3600.0)])
def test_call_timeout(value: Any, seconds: float | None) -> None:
    assert arguments.call_timeout(value) == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "0", 3601, "nan", "inf", True, [1]])
def test_call_timeout_outside_its_range_is_refused(value: Any) -> None:
    with pytest.raises(InvalidRequest, match="timeout"):
        arguments.call_timeout(value)


def test_flags_in_json_are_booleans_and_in_queries_words() -> None:
    assert arguments.flag("refresh", True) is True
    assert arguments.flag("refresh", None) is False
    assert arguments.query_flag("refresh", "yes") is True
    assert arguments.query_flag("refresh", "0") is False
    with pytest.raises(InvalidRequest, match="refresh"):
        arguments.flag("refresh", "yes")
    with pytest.raises(InvalidRequest, match="refresh"):
        arguments.query_flag("refresh", "maybe")


def test_a_result_count_is_a_whole_number_in_its_range_from_json_or_a_query_string() -> None:
    assert arguments.result_count(None, 20, 200) == 20
    assert arguments.result_count(5, 20, 200) == 5
    assert arguments.result_count("200", 20, 200) == 200
    for value in (0, 201, "201", True, 1.5, "5.0", "-1", [5]):
        with pytest.raises(InvalidRequest, match="`maxResults` must be a whole number from 1 to 200"):
            arguments.result_count(value, 20, 200)


@pytest.mark.parametrize(("value", "ok"), [(12, True), ("b2:12", True), (True, False), (None, False), (1.5, False)])
def test_tab_ref(value: Any, ok: bool) -> None:
    if ok:
        assert arguments.tab_ref(value) == value
    else:
        with pytest.raises(InvalidRequest, match="tab"):
            arguments.tab_ref(value)


def test_tool_arguments_are_an_object() -> None:
    assert arguments.tool_arguments(None) == {}
    assert arguments.tool_arguments({"q": 1}) == {"q": 1}
    with pytest.raises(InvalidRequest, match="JSON object"):
        arguments.tool_arguments([1])


def test_tab_change() -> None:
    assert arguments.tab_change("claim") is arguments.TabChange.CLAIM
    with pytest.raises(InvalidRequest, match="claim, release or focus"):
        arguments.tab_change("steal")


@pytest.mark.parametrize(
    "url", ["https://shop.example/", "http://127.0.0.1:8000/x", "HTTPS://A.EXAMPLE/", "about:blank"]
)
def test_web_pages_and_the_blank_page_may_be_opened(url: str) -> None:
    assert arguments.page_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(document.cookie)",
        " javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "chrome://settings/passwords",
        "chrome-extension://abcdefghijklmnopabcdefghijklmnop/popup.html",
        "view-source:https://shop.example/",
        "about:config",
        "ht\ttps://shop.example/",
        "//shop.example/",
    ],
)
def test_other_schemes_are_refused_by_every_door(url: str) -> None:
    for check in (
        lambda: arguments.open_tab_request({"url": url}),
        lambda: windows_call("create", url=url),
    ):
        with pytest.raises(InvalidRequest, match="http: and https: pages or about:blank only"):
            check()
