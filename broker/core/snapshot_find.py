"""browser_find: the lines of a page's snapshot that match a text or a pattern, as search snippets.

Each match is shown under its path from the root (its ancestors' lines, as they stand in the
snapshot, so its frame, dialog or list is plain), with a little context: the lines just before
and after it among its siblings, and the first lines inside it. Matches that share ancestors share
their lines; a skipped run of lines is one ``…``. Refs stay on every line, so the agent can act on
a match at once; what is cheaper than a whole snapshot is what is left out.

The text matches case-insensitively anywhere in a line; a pattern is a regular expression (as
Python reads it), ``/pattern/flags`` taking ``i``, ``m`` and ``s``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .errors import InvalidRequest
from .messages import JsonObject
from .snapshot_tree import Node

__all__ = ["MAX_MATCHES", "finder", "found_lines"]

MAX_MATCHES = 40
# Lines of a match's own content shown, and siblings shown on each side of it.
_INSIDE = 3
_AROUND = 1
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_SLASHED = re.compile(r"/(.*)/([a-z]*)", re.DOTALL)


def finder(args: JsonObject) -> re.Pattern[str]:
    """The pattern browser_find's ``text`` or ``regex`` asks for.

    Raises:
        InvalidRequest: neither or both given, not a string, or a pattern that does not compile.
    """
    text, regex = args.get("text"), args.get("regex")
    if (text is None) == (regex is None):
        raise InvalidRequest("browser_find needs `text` (words to find) or `regex` (a pattern), one of them")
    if text is not None:
        if not isinstance(text, str) or not text:
            raise InvalidRequest("browser_find's `text` must be words to find")
        return re.compile(re.escape(text), re.IGNORECASE)
    if not isinstance(regex, str) or not regex:
        raise InvalidRequest("browser_find's `regex` must be a regular expression, such as /sign ?in/i")
    pattern, flags = regex, 0
    slashed = _SLASHED.fullmatch(regex)
    if slashed:
        pattern = slashed.group(1)
        for flag in slashed.group(2):
            if flag not in _FLAGS:
                raise InvalidRequest(f"browser_find's `regex` flag {flag!r} is not one of i, m, s")
            flags |= _FLAGS[flag]
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise InvalidRequest(f"browser_find's `regex` does not compile: {exc}") from None


def found_lines(nodes: Sequence[Node], pattern: re.Pattern[str]) -> list[str]:
    """The answer's lines: each match under its path, with its context, or a line saying none matched."""
    matches: list[tuple[int, ...]] = []
    _collect(nodes, pattern, (), matches)
    if not matches:
        return [f"- Nothing on the page matches {pattern.pattern!r}: browser_snapshot shows it all."]
    shown: set[tuple[int, ...]] = set()
    for path in matches[:MAX_MATCHES]:
        _show(nodes, path, shown)
    lines = ["```yaml", *_rendered(nodes, (), shown, 0), "```"]
    more = len(matches) - MAX_MATCHES
    head = f"- {len(matches)} matches" if len(matches) != 1 else "- 1 match"
    if more > 0:
        head += f"; the first {MAX_MATCHES} are shown: a narrower text or regex finds the rest"
    return [head, *lines]


def _collect(nodes: Sequence[Node], pattern: re.Pattern[str], at: tuple[int, ...], into: list[tuple[int, ...]]) -> None:
    for index, node in enumerate(nodes):
        path = (*at, index)
        if pattern.search(node.label):
            into.append(path)
        _collect(node.children, pattern, path, into)


def _show(nodes: Sequence[Node], path: tuple[int, ...], shown: set[tuple[int, ...]]) -> None:
    """Mark a match, its ancestors, its siblings beside it and the first lines inside it."""
    for depth in range(1, len(path)):
        shown.add(path[:depth])
    parent, index = path[:-1], path[-1]
    siblings = _children(nodes, parent)
    for near in range(max(0, index - _AROUND), min(len(siblings), index + _AROUND + 1)):
        shown.add((*parent, near))
    inside = [path]
    while inside and len(inside) <= _INSIDE:
        node = _at(nodes, inside[-1])
        if not node.children:
            break
        for child in range(min(len(node.children), _INSIDE)):
            shown.add((*inside[-1], child))
        inside.append((*inside[-1], 0))


def _children(nodes: Sequence[Node], path: tuple[int, ...]) -> Sequence[Node]:
    return nodes if not path else _at(nodes, path).children


def _at(nodes: Sequence[Node], path: tuple[int, ...]) -> Node:
    node = nodes[path[0]]
    for index in path[1:]:
        node = node.children[index]
    return node


def _rendered(nodes: Sequence[Node], at: tuple[int, ...], shown: set[tuple[int, ...]], depth: int) -> list[str]:
    lines: list[str] = []
    skipped = False
    for index, node in enumerate(nodes):
        path = (*at, index)
        if path not in shown:
            skipped = True
            continue
        if skipped:
            lines.append("  " * depth + "- …")
            skipped = False
        inner = _rendered(node.children, path, shown, depth + 1)
        # Its own line as the snapshot writes it: with a colon where lines inside follow.
        lines.append("  " * depth + (f"- {node.label}:" if inner else f"- {node.label}"))
        lines.extend(inner)
    if skipped:
        lines.append("  " * depth + "- …")
    return lines
