"""The testing group's arguments (browser_verify_*, browser_generate_locator): their schemas and the
checks a call passes before any browser hears of it.

The checks themselves run in the page (``extension/actions/page/checks.js``); a failed one is an
error result saying what the page shows instead.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import InvalidRequest
from .messages import JsonObject

__all__ = ["ITEMS", "VALUE", "VALUE_TYPE", "needs_items", "needs_strings", "needs_value"]

Check = Callable[[str, JsonObject], None]

VALUE_TYPES = ("textbox", "checkbox", "radio", "combobox", "slider")
VALUE_TYPE: JsonObject = {"type": "string", "enum": list(VALUE_TYPES)}
VALUE: JsonObject = {"type": "string", "description": '"true"/"false" for a checkbox or radio'}
ITEMS: JsonObject = {"type": "array", "items": {"type": "string"}, "description": "texts it shows"}


def needs_strings(*names: str) -> Check:
    """The arguments ``names``: strings, the first of them not blank."""

    def check(tool: str, own: JsonObject) -> None:
        wrong = [name for name in names if not isinstance(own.get(name), str)]
        if wrong:
            raise InvalidRequest(f"{tool} needs {' and '.join(f'`{name}`' for name in wrong)}, as text")
        if not own[names[0]].strip():
            raise InvalidRequest(f"{tool} needs a `{names[0]}` that is not blank")

    return check


def needs_items(tool: str, own: JsonObject) -> None:
    items = own.get("items")
    if not isinstance(items, list) or not items or not all(isinstance(item, str) for item in items):
        raise InvalidRequest(f"{tool} needs `items`: the texts the list shows, one or more")


def needs_value(tool: str, own: JsonObject) -> None:
    if own.get("type") not in VALUE_TYPES:
        raise InvalidRequest(f"{tool} needs `type`: one of {', '.join(VALUE_TYPES)}")
    if not isinstance(own.get("value"), str):
        raise InvalidRequest(f"{tool} needs `value`, as text")
    if own["type"] in ("checkbox", "radio") and own["value"] not in ("true", "false"):
        raise InvalidRequest(f'{tool} needs `value` "true" or "false" for a {own["type"]}')
