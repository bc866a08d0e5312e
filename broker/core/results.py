"""What of a page tool's result reaches a client: the rule is here, the doors only present it.

A page may answer with anything. A client gets at most ``max_chars`` characters of it (``serve
--max-result-chars``, 100,000 by default), counted over what it would read: a string result,
the text of its content items (``text``, a ``resource``'s ``text``), and the JSON of the rest (a
result that is not MCP content, ``structuredContent``, an item's fields beside its text). What
goes past is cut, and the cut is said where it happens (``[browser-mcp: ...]`` at the end of the
text cut) and in :attr:`PageResult.notes`, never silently.

Binary-looking data does not reach a client whole by accident:

- a run of :data:`BASE64_RUN` or more base64 characters (``A-Z a-z 0-9 + / - _ =``, no space or
  other character between) in any text is withheld, a note giving its length in its place;
- a text of :data:`BASE64_RUN` or more characters, one in :data:`CONTROL_SHARE` of them or more
  control characters (other than tab, line feed, carriage return and escape), is withheld whole;
- image and audio items and a resource's ``blob`` carry at most :data:`MAX_MEDIA_CHARS` base64
  characters in all; one that would pass it is withheld.

Each withheld or dropped part leaves a text item (or, in text, a note) saying what it was. A
content item that is not an object, of an unknown type, or without its fields of the right type
is dropped with such a note, as are the items past :data:`MAX_ITEMS`; so is a top-level field
that MCP results do not have (``_meta`` is the broker's to set). An item's fields beside its
payload (``annotations``, ``_meta``, ...) pass, counted by their JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import compress, repeat
from typing import Any

import attrs

__all__ = [
    "BASE64_RUN",
    "CONTROL_SHARE",
    "MAX_ITEMS",
    "MAX_MEDIA_CHARS",
    "PageResult",
    "base64_runs",
    "bounded_result",
    "control_count",
    "is_content",
    "json_control_count",
]

BASE64_RUN = 1_000
MAX_MEDIA_CHARS = 1_000_000
MAX_ITEMS = 1_000
# One character in this many, or more, being a control makes a text binary-looking.
CONTROL_SHARE = 20

_BASE64 = "A-Za-z0-9+/=_-"
_HALF_RUN = BASE64_RUN // 2
_HALF_SPAN = re.compile(f"[{_BASE64}]{{{_HALF_RUN + 1}}}")
_RUN_FROM = re.compile(f"[{_BASE64}]*")
_LAST_OTHER = re.compile(f"(?s:.*)[^{_BASE64}]")
# C0 controls but tab, line feed, carriage return and escape (terminal colours), and DEL.
_CONTROL_BYTES = bytes([*range(9), 11, 12, *range(14, 27), *range(28, 32), 127])
_CONTROLS = tuple(chr(byte) for byte in _CONTROL_BYTES)


def base64_runs(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds runs of :data:`BASE64_RUN` or more base64 characters (start, end).

    A run that long holds two characters :data:`_HALF_RUN` apart at multiples of it with only
    base64 between, so only those places are looked at: a regular expression over every place
    would cost a millisecond per 100 KB.
    """
    runs: list[tuple[int, int]] = []
    looked_to = 0
    places = range(0, len(text) - _HALF_RUN, _HALF_RUN)
    # Looked at by map and compress, not a loop of Python, which made it half again as long.
    spans = map(_HALF_SPAN.fullmatch, repeat(text), places, range(_HALF_RUN + 1, len(text) + 1, _HALF_RUN))
    for at in compress(places, spans):
        if at < looked_to:
            continue
        # The run began after the last other character within the half before (else it was found there).
        before = max(0, at - _HALF_RUN)
        other = _LAST_OTHER.match(text, before, at)
        start = other.end() if other else before
        run = _RUN_FROM.match(text, at)  # always a match, the span at `at` being one
        end = looked_to = run.end() if run else at
        if end - start >= BASE64_RUN:
            runs.append((start, end))
    return runs


def control_count(text: str) -> int:
    """How many control characters (as :data:`_CONTROL_BYTES` says) ``text`` holds."""
    # Looking for each one (a memchr) is some 30 µs per 100 KB, counting them all 60-200 µs: a text
    # without any, the usual one, is not counted.
    if not any(control in text for control in _CONTROLS):
        return 0
    data = text.encode("utf-8", "surrogatepass")
    return len(data) - len(data.translate(None, _CONTROL_BYTES))


def json_control_count(text: str) -> int:
    """:func:`control_count` of a JSON text, as its grammar allows it to be found at once: JSON holds no
    raw C0 control within strings (RFC 8259 has them escaped) and none but tab, line feed and carriage
    return between its tokens, so of the characters counted, only DEL can be there."""
    return text.count("\x7f") if "\x7f" in text else 0


_KINDS = frozenset({"text", "image", "audio", "resource", "resource_link"})
_RESULT_FIELDS = frozenset({"content", "isError", "structuredContent"})


@attrs.frozen
class PageResult:
    """A page tool's result as a client is to get it.

    ``value`` is the page's own value when nothing had to change, else the bounded one: a string
    for a string, MCP content for MCP content, and for any other JSON value cut or withheld, its
    JSON text as a string. ``notes`` says what was cut or withheld. ``json_text``: the JSON of a
    value that is neither a string nor MCP content, when unchanged, so it is not written twice.
    """

    value: Any
    notes: tuple[str, ...] = ()
    json_text: str | None = None


def is_content(value: Any) -> bool:
    """Whether a page's result is MCP-shaped (``{"content": [...], ...}``)."""
    return isinstance(value, dict) and isinstance(value.get("content"), list)


def bounded_result(value: Any, max_chars: int, as_json: Callable[[Any], str]) -> PageResult:
    """``value`` bounded by the rule above; ``as_json`` writes a JSON value (the codec's).

    Raises: whatever ``as_json`` raises for a value that cannot be written as JSON.
    """
    bounds = _Bounds(max_chars, as_json)
    if isinstance(value, str):
        text = bounds.text(value, "the result")
        return PageResult(text if bounds.notes else value, tuple(bounds.notes))
    if is_content(value):
        bounded = bounds.content_result(value)
        return PageResult(bounded if bounds.notes else value, tuple(bounds.notes))
    written = as_json(value)
    text = bounds.text(written, "the result's JSON", is_json=True)
    if bounds.notes:
        return PageResult(text, tuple(bounds.notes))
    return PageResult(value, json_text=written)


class _Bounds:
    """What is left of a result's budgets while its parts are read in order, and what was cut."""

    def __init__(self, max_chars: int, as_json: Callable[[Any], str]) -> None:
        self.max_chars = max_chars
        self.chars_left = max_chars
        self.media_left = MAX_MEDIA_CHARS
        self.as_json = as_json
        self.notes: list[str] = []
        self.dropped = 0  # items past the character budget

    def _note(self, note: str) -> str:
        self.notes.append(note)
        return f"[browser-mcp: {note}]"

    def _note_item(self, note: str) -> dict[str, Any]:
        return {"type": "text", "text": self._note(note)}

    def text(self, text: str, what: str, is_json: bool = False) -> str:
        """``text`` with what looks binary withheld, cut to what is left of the budget; ``is_json``:
        ``text`` is JSON, written by ``as_json``."""
        if len(text) >= BASE64_RUN:
            controls = json_control_count(text) if is_json else control_count(text)
            if controls * CONTROL_SHARE >= len(text):
                return self._note(
                    f"{what} withheld: {len(text):,} characters that look like binary data"
                    f" ({controls:,} control characters)"
                )
            runs = base64_runs(text)
            if runs:
                text = _withheld(text, runs)
                withheld = sum(end - start for start, end in runs)
                self.notes.append(
                    f"{what}: {len(runs)} run(s) of base64-like characters withheld ({withheld:,} characters)"
                )
        if len(text) <= self.chars_left:
            self.chars_left -= len(text)
            return text
        kept, self.chars_left = self.chars_left, 0
        note = self._note(
            f"{what} cut at {kept:,} of its {len(text):,} characters: a result may carry"
            f" {self.max_chars:,} (serve --max-result-chars)"
        )
        return f"{text[:kept]}\n{note}"

    def _fits(self, value: Any) -> bool:
        """Whether ``value``'s JSON fits what is left of the budget; it is counted if so."""
        size = len(self.as_json(value))
        if size > self.chars_left:
            return False
        self.chars_left -= size
        return True

    def _media(self, data: str, what: str) -> dict[str, Any] | None:
        """None when ``data`` fits the media budget (it is counted), else the note in its place."""
        if len(data) <= self.media_left:
            self.media_left -= len(data)
            return None
        return self._note_item(
            f"{what} withheld: {len(data):,} base64 characters, past the {MAX_MEDIA_CHARS:,} a result's"
            " images, audio and blobs may carry together"
        )

    def content_result(self, value: dict[str, Any]) -> dict[str, Any]:
        bounded: dict[str, Any] = {"content": self.content(value["content"])}
        error = value.get("isError")
        if isinstance(error, bool):
            bounded["isError"] = error
        elif "isError" in value:
            self._note(f"isError dropped: {type(error).__name__}, not true or false")
        if "structuredContent" in value:
            if self._fits(value["structuredContent"]):
                bounded["structuredContent"] = value["structuredContent"]
            else:
                bounded["content"].append(self._note_item("structuredContent withheld: past the result's size"))
        unknown = sorted(str(key) for key in value.keys() - _RESULT_FIELDS - {"_meta"})
        if unknown:
            self._note(f"fields that MCP results do not have dropped: {', '.join(unknown)[:200]}")
        if self.dropped:
            bounded["content"].append(
                self._note_item(f"{self.dropped:,} more content item(s) dropped: past the result's size")
            )
        return bounded

    def content(self, items: list[Any]) -> list[dict[str, Any]]:
        kept: list[dict[str, Any]] = []
        for index, item in enumerate(items[:MAX_ITEMS]):
            if self.chars_left == 0 and not (isinstance(item, dict) and item.get("type") in ("image", "audio")):
                self.dropped += 1
                continue
            kept.append(self.item(item, f"content item {index}"))
        if len(items) > MAX_ITEMS:
            past = len(items) - MAX_ITEMS
            kept.append(self._note_item(f"{past:,} content items past the first {MAX_ITEMS:,} dropped"))
        return kept

    def item(self, item: object, what: str) -> dict[str, Any]:
        """One content item as a client may get it, or the note in its place."""
        if not isinstance(item, dict):
            return self._note_item(f"{what} dropped: {type(item).__name__}, not an object")
        given: dict[str, Any] = item
        kind = given.get("type")
        if not isinstance(kind, str) or kind not in _KINDS:
            return self._note_item(f"{what} dropped: unknown type {str(kind)[:40]!r}")
        payload, field = _payload(given, kind)
        if not isinstance(payload, str):
            article = "an" if kind[0] in "aeiou" else "a"
            return self._note_item(f"{what} dropped: {article} {kind!r} item needs {_NEEDS[kind]}")
        if kind in ("image", "audio") or field == "blob":
            withheld = self._media(payload, f"{what} ({kind})")
            if withheld is not None:
                return withheld
            return given if self._fits_beside(given, kind, field) else self._cut_item(what)
        if not self._fits_beside(given, kind, field):
            return self._cut_item(what)
        if kind == "resource_link":
            return given
        text = self.text(payload, what)
        if text is payload:
            return given
        if kind == "text":
            return {**given, "text": text}
        return {**given, "resource": {**given["resource"], "text": text}}

    def _fits_beside(self, item: dict[str, Any], kind: str, field: str) -> bool:
        """Whether an item's fields beside its payload fit the budget (counted if so)."""
        if kind == "resource_link":
            return self._fits(item)
        if kind == "resource":
            resource = {key: value for key, value in item["resource"].items() if key != field}
            return self._fits({**item, "resource": resource})
        if item.keys() <= {"type", field, "mimeType"}:
            return True  # the usual item: nothing beside its payload worth counting
        return self._fits({key: value for key, value in item.items() if key != field})

    def _cut_item(self, what: str) -> dict[str, Any]:
        self.chars_left = 0
        return self._note_item(f"{what} dropped: past the result's size")


def _withheld(text: str, runs: list[tuple[int, int]]) -> str:
    """``text`` with each of ``runs`` replaced by a note of its length."""
    parts: list[str] = []
    kept_from = 0
    for start, end in runs:
        parts += [text[kept_from:start], f"[browser-mcp: {end - start:,} base64-like characters withheld]"]
        kept_from = end
    parts.append(text[kept_from:])
    return "".join(parts)


_NEEDS = {
    "text": "its text as a string",
    "image": "its data and mimeType as strings",
    "audio": "its data and mimeType as strings",
    "resource": "a resource with its text or blob as a string",
    "resource_link": "its uri as a string",
}


def _payload(item: dict[str, Any], kind: str) -> tuple[Any, str]:
    """A content item's payload (its text, data, uri, or resource text or blob) and its field's name."""
    if kind == "text":
        return item.get("text"), "text"
    if kind in ("image", "audio"):
        return (item.get("data") if isinstance(item.get("mimeType"), str) else None), "data"
    if kind == "resource_link":
        return item.get("uri"), "uri"
    resource = item.get("resource")
    if not isinstance(resource, dict):
        return None, "resource"
    if isinstance(resource.get("text"), str):
        return resource["text"], "text"
    return resource.get("blob"), "blob"
