"""The JSON values the protocol carries whole: objects, tool arguments as sent, and an error's
shape. Apart from :mod:`broker.core.messages` so that reading or writing JSON (the command line,
the discovery files) need not load every message class.
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["Arguments", "JsonObject", "RawJson", "WireError"]

JsonObject = dict[str, Any]


@attrs.frozen
class RawJson:
    """A JSON object as a caller sent it, already checked to be one, passed on to the page unread.

    A REST call's body becomes the call's arguments this way: the broker keeps the bytes it read
    instead of a parsed copy, and writes them into the ``callTool`` frame as they came.
    """

    text: bytes


# A tool's arguments: parsed (MCP, the command line), or as the caller sent them (REST).
Arguments = JsonObject | RawJson


@attrs.frozen
class WireError:
    message: str
    code: str | None = None
