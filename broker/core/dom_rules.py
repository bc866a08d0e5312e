"""The dom group's arguments (browser_get_text, browser_get_html, browser_inspect, browser_query):
their schemas and the checks a call passes before any browser hears of it.

The page is read in the tools' isolated world (``extension/actions/page/dom.js``), read-only, so
no call of the group asks the person.
"""

from __future__ import annotations

from .errors import InvalidRequest
from .messages import JsonObject

__all__ = ["INSPECT_PARTS", "MAX_CHARS", "MAX_RESULTS", "OUTER", "PROPERTIES", "WHAT", "needs_parts", "needs_selector"]

INSPECT_PARTS = ("attributes", "styles", "box", "state", "form")
MAX_CHARS: JsonObject = {"type": "integer", "minimum": 1, "description": "cut the answer here (default 20000)"}
OUTER: JsonObject = {"type": "boolean", "description": "false: the inner HTML only"}
WHAT: JsonObject = {
    "type": "array",
    "items": {"type": "string", "enum": list(INSPECT_PARTS)},
    "minItems": 1,
    "description": "what to tell of it",
}
PROPERTIES: JsonObject = {
    "type": "array",
    "items": {"type": "string"},
    "description": "styles: these CSS properties instead of the usual layout ones",
}
MAX_RESULTS: JsonObject = {"type": "integer", "minimum": 1, "maximum": 200, "description": "default 20"}


def needs_parts(tool: str, own: JsonObject) -> None:
    what = own.get("what")
    if isinstance(what, str):
        what = own["what"] = [what]
    if not isinstance(what, list) or not what or not all(part in INSPECT_PARTS for part in what):
        raise InvalidRequest(f"{tool} needs `what`: one or more of {', '.join(INSPECT_PARTS)}")
    properties = own.get("properties")
    if properties is not None and not (
        isinstance(properties, list) and all(isinstance(name, str) and name.strip() for name in properties)
    ):
        raise InvalidRequest(f"{tool}'s `properties` must list CSS property names, such as color")


def needs_selector(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("selector"), str) or not own["selector"].strip():
        raise InvalidRequest(f"{tool} needs `selector`: a CSS selector, such as button.buy")
