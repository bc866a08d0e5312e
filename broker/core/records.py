"""Changing and reading the whole of the person's records: what deleting history or a bookmark, and
reading the bookmark tree, may ask of a browser. No I/O.

Each check turns a caller's arguments into a ``browserRequest``'s name and wire arguments, or
refuses them with a message that says what would do; nothing reaches the browser before.

- ``deleteHistory {url}``: every visit of one page (chrome.history.deleteUrl), or
  ``{startTime, endTime}``: every visit between two moments (deleteRange), both given, the end
  after the start: "since then" with no end is not taken for "until now" when deleting.
- ``deleteBookmark {id, recursive}``: one bookmark, or an empty folder; a folder with anything in
  it only with ``recursive`` (removeTree), which the person's approval window says.
- ``bookmarkTree {id?, maxResults}``: the tree below a folder (all of it without ``id``), flat.

Whether the person shares their records, and approves a deletion, is the extension's to ask:
it holds their switch and shows the approval window (docs/security.md).
"""

from __future__ import annotations

import datetime
import re
from typing import Any
from urllib.parse import urlsplit

from .arguments import result_count
from .errors import InvalidRequest
from .messages import JsonObject

__all__ = [
    "DELETE_BOOKMARK",
    "DELETE_HISTORY",
    "BOOKMARK_TREE",
    "MAX_TREE",
    "bookmark_deletion",
    "bookmark_tree",
    "epoch_ms",
    "history_deletion",
]

DELETE_HISTORY = "deleteHistory"
DELETE_BOOKMARK = "deleteBookmark"
BOOKMARK_TREE = "bookmarkTree"

DEFAULT_TREE = 200
MAX_TREE = 1000
# Far past any address a browser keeps; a longer one is no page's.
_MAX_URL = 8192
# Chromium's bookmark ids are numbers, Firefox's twelve letters, digits, dashes and underscores.
_BOOKMARK_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
# Schemes whose addresses name a host: one without it is no page's address.
_HOSTED = frozenset({"http", "https", "ftp", "ws", "wss"})


def history_deletion(url: Any = None, start_time: Any = None, end_time: Any = None) -> JsonObject:
    """The wire arguments of a ``deleteHistory``: ``{url}`` or ``{startTime, endTime}``.

    Raises:
        InvalidRequest: neither or both ways, a malformed address, a range without both ends or
        whose end is not after its start.
    """
    ranged = start_time is not None or end_time is not None
    if url is not None and ranged:
        raise InvalidRequest("delete history by `url` or by `startTime` and `endTime`, not both at once")
    if url is not None:
        return {"url": history_url(url)}
    if not ranged:
        raise InvalidRequest(
            "deleting history needs `url` (every visit of that page) or `startTime` and `endTime`"
            " (every visit between them)"
        )
    if start_time is None or end_time is None:
        missing = "startTime" if start_time is None else "endTime"
        raise InvalidRequest(
            f"deleting a time range needs both ends: `{missing}` is missing (a deletion is never open-ended;"
            " to delete up to now, give the current time as `endTime`)"
        )
    start, end = epoch_ms(start_time, "startTime"), epoch_ms(end_time, "endTime")
    if end <= start:
        raise InvalidRequest(
            f"`endTime` ({_iso(end)}) must be after `startTime` ({_iso(start)}): the range is empty or inverted"
        )
    return {"startTime": start, "endTime": end}


def history_url(value: Any) -> str:
    """An address as history keeps it: a scheme, and a host where the scheme has one.

    Raises:
        InvalidRequest: anything else.
    """
    if not isinstance(value, str) or not value:
        raise InvalidRequest("`url` must be a page's address as history shows it, such as https://example.com/")
    shown = value if len(value) <= 80 else value[:80] + "..."
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError:
        parts = None
    if (
        parts is None
        or len(value) > _MAX_URL
        or value != value.strip()
        or any(ch.isspace() for ch in value)
        or not _SCHEME.match(parts.scheme)
        or (parts.scheme.lower() in _HOSTED and not parts.hostname)
    ):
        raise InvalidRequest(
            f"{shown!r} is not an address history keeps: give it whole, as browser_history_search shows it"
            " (https://example.com/page)"
        )
    return value


def bookmark_tree(folder: Any = None, max_results: Any = None) -> JsonObject:
    """The wire arguments of a ``bookmarkTree``: ``{maxResults, id?}``.

    Raises:
        InvalidRequest: a folder id that is no bookmark id, a count out of 1 to ``MAX_TREE``.
    """
    args: JsonObject = {"maxResults": result_count(max_results, DEFAULT_TREE, MAX_TREE)}
    if folder is not None:
        args["id"] = bookmark_id(folder, "folderId")
    return args


def bookmark_deletion(node: Any, recursive: Any = None) -> JsonObject:
    """The wire arguments of a ``deleteBookmark``: ``{id, recursive}``.

    Raises:
        InvalidRequest: no id, or ``recursive`` that is not true or false.
    """
    if recursive is not None and not isinstance(recursive, bool):
        if recursive in ("true", "false"):
            recursive = recursive == "true"  # from a query string
        else:
            raise InvalidRequest("`recursive` must be true or false")
    return {"id": bookmark_id(node, "id"), "recursive": bool(recursive)}


def bookmark_id(value: Any, name: str) -> str:
    """Raises: InvalidRequest, unless ``value`` is a bookmark's id as the browser gives it."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    if not isinstance(value, str) or not _BOOKMARK_ID.match(value):
        raise InvalidRequest(
            f"`{name}` must be a bookmark's or folder's id as browser_bookmarks action=search or tree gives it"
            f' (such as "42"); got {value!r}'
        )
    return value


def epoch_ms(value: Any, name: str = "startTime") -> float:
    """A moment as chrome.history counts it: milliseconds since 1970, from those or ISO 8601.

    Raises:
        InvalidRequest: neither.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e15:
        return float(value)
    if isinstance(value, str):
        if value.replace(".", "", 1).isdecimal():
            return epoch_ms(float(value), name)
        try:
            moment = datetime.datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=datetime.UTC)
            return moment.timestamp() * 1000
    raise InvalidRequest(f"`{name}` must be ISO 8601 (2026-05-01T09:00:00Z) or milliseconds since 1970, got {value!r}")


def _iso(ms: float) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).isoformat().replace("+00:00", "Z")
