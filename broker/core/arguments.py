"""What a caller may ask for, checked once for every door (REST, MCP, the command line).

Each function takes a value as it arrived, already parsed from JSON or a query string, and
returns it typed, or raises :class:`~broker.core.errors.InvalidRequest` saying what was wrong.
"""

from __future__ import annotations

import enum
import math
from typing import Any

import attrs

from .errors import InvalidRequest
from .messages import JsonObject

__all__ = [
    "MAX_TIMEOUT",
    "OpenTabRequest",
    "TabChange",
    "call_timeout",
    "flag",
    "open_tab_request",
    "page_url",
    "query_flag",
    "result_count",
    "tab_change",
    "tab_ref",
    "tool_arguments",
]

MAX_TIMEOUT = 3600.0


@attrs.frozen
class OpenTabRequest:
    url: str
    focus: bool = True
    browser: str | None = None
    # In this window of the browser; in a new window of its own; pinned.
    window_id: int | None = None
    new_window: bool = False
    pinned: bool = False


class TabChange(enum.Enum):
    CLAIM = "claim"
    RELEASE = "release"
    FOCUS = "focus"


def open_tab_request(value: Any) -> OpenTabRequest:
    """``{"url": ..., "focus"?: bool, "browser"?: "b1", "windowId"?: 7, "pinned"?: bool}``."""
    if not isinstance(value, dict) or not isinstance(value.get("url"), str) or not value["url"]:
        raise InvalidRequest(
            'opening a tab needs {"url": "...", "focus": true|false, "browser": "b1"?, "windowId": 7?,'
            ' "pinned": false?}'
        )
    focus = value.get("focus", True)
    browser = value.get("browser")
    window_id = value.get("windowId")
    if not isinstance(focus, bool):
        raise InvalidRequest('"focus" must be true or false')
    if browser is not None and not isinstance(browser, str):
        raise InvalidRequest('"browser" names a connected browser, such as b1')
    if window_id is not None and (isinstance(window_id, bool) or not isinstance(window_id, int)):
        raise InvalidRequest('"windowId" must be a window\'s id, a number from the list of windows')
    url = page_url(value["url"])
    return OpenTabRequest(url, focus, browser, window_id, pinned=flag("pinned", value.get("pinned")))


def page_url(url: str) -> str:
    """A page a client may open in a tab or window, navigate a tab to or bookmark: http:, https: or
    about:blank.

    Other schemes reach past the web's origins into the person's browser: javascript: and data:
    run code of the client's making, file: reads their disk, chrome: and extension pages their
    settings. Checked as written, so no whitespace or letter case slips another scheme by.

    Raises:
        InvalidRequest: any other URL.
    """
    if url == "about:blank" or url.lower().startswith(("http://", "https://")):
        return url
    shown = url if len(url) <= 80 else url[:80] + "..."
    raise InvalidRequest(
        f"cannot open {shown!r}: tabs, windows, browser_navigate and bookmarks take http: and https: pages or"
        " about:blank only (not javascript:, file:, data:, chrome: or any other scheme)"
    )


def tab_ref(value: Any) -> str | int:
    """A tab as its caller named it; :mod:`broker.core.browsers` finds the tab."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidRequest("`tab` is required: a tab id such as 12, or b2:12")
    return value


def tab_change(action: str) -> TabChange:
    try:
        return TabChange(action)
    except ValueError:
        raise InvalidRequest(f"{action!r} is not a change of a tab: use claim, release or focus") from None


def call_timeout(value: Any) -> float | None:
    """Seconds a call may wait for the page, as a number or a query string; None for the default."""
    if value is None:
        return None
    try:
        seconds = float(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else math.nan
    except ValueError:
        seconds = math.nan
    if not (0 < seconds <= MAX_TIMEOUT):
        raise InvalidRequest(f"timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}], got {value!r}")
    return seconds


def flag(name: str, value: Any, default: bool = False) -> bool:
    """A yes/no option given in JSON: true or false."""
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidRequest(f"`{name}` must be true or false, got {value!r}")
    return value


def result_count(value: Any, default: int, most: int) -> int:
    """``maxResults``: a whole number from 1 to ``most``, in JSON or a query string; ``default`` when absent."""
    if value is None:
        return default
    if isinstance(value, str) and value.isdecimal() and len(value) < 6:
        value = int(value)  # from a query string
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise InvalidRequest(f"`maxResults` must be a whole number from 1 to {most}, got {value!r}")
    return value


def query_flag(name: str, raw: str | None, default: bool = False) -> bool:
    """A yes/no option given in a query string: true/false, 1/0 or yes/no."""
    if raw is None:
        return default
    if raw.lower() in ("1", "true", "yes"):
        return True
    if raw.lower() in ("0", "false", "no"):
        return False
    raise InvalidRequest(f"{name} must be true or false, got {raw!r}")


def tool_arguments(value: Any) -> JsonObject:
    """A tool's arguments: a JSON object, or nothing for none."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(f"the tool's arguments must be a JSON object, got {type(value).__name__}")
    return value
