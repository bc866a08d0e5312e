"""An aria snapshot as a tree of nodes: parsed from its YAML, written back, and two compared.

A node is one YAML line and the lines nested under it. Elements are matched by their refs, which
the extension keeps stable while an element stays in its document; lines without one (texts, link
targets) by their text among their siblings. The diff marks ``+`` added (with what is inside), ``-``
removed (the line alone), ``~`` changed (as it is now), and leaves the lines around them unmarked:
the parent of what came or went (where it is), and the rest of a small list whose items came or went.
A changed line needs no ancestor (its ref says which element it is), nor does one the focus alone
changed on the element the action was done to (``acted_on``: it took the focus, as it would).
The lines are nested as the diff's own lines are, not as deep as they stand in the page.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Sequence

import attrs

__all__ = ["DiffLine", "Node", "REF", "by_ref", "diff", "parse", "parts_holding", "refs_of", "render", "walk"]


REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")
# An element that only holds others: no name, no text, no state.
_WRAPPER = re.compile(r"- generic \[ref=(?:f\d+)?e\d+\]:")
# A JSON-quoted string (an element's name, or a text), escapes and all.
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
# An element's box (browser_snapshot's boxes): where it is, not what it is, so no change of it.
_BOX = re.compile(r" \[box=-?\d+,-?\d+,\d+,\d+\]")
# A list whose items came or went is shown whole, items that stayed too, up to this size.
_SMALL_LIST = 2_500
# More removed siblings in a row than this show as the first of them and a count.
_REMOVED_RUN = 3


@attrs.frozen
class Node:
    """One element or text of a snapshot: its line (without the ``:`` that opens what it holds)."""

    label: str
    children: tuple[Node, ...] = ()
    ref: str | None = attrs.field(init=False, default=attrs.Factory(lambda self: _ref_in(self.label), takes_self=True))

    @property
    def key(self) -> str:
        """What matches it to itself in another snapshot: its ref, or its text when it has none."""
        return self.ref or self.label

    @property
    def role(self) -> str:
        return self.label.lstrip("'\"").split(" ", 1)[0].split(":", 1)[0]

    @property
    def line(self) -> str:
        return f"- {self.label}:" if self.children else f"- {self.label}"


def _ref_in(label: str) -> str | None:
    """The ref of the element a line stands for: in its key, outside the quoted name. A page's own
    text that looks like a ref (a name or a text saying ``[ref=e2]``) is not one."""
    key = _QUOTED.sub('""', label).split(": ", 1)[0]
    found = REF.search(key)
    return found.group(1) if found else None


def _active_at(label: str) -> int:
    """Where a line's `` [active]`` (the focused element's mark) stands, outside its quoted name and
    before its text; -1 when it has none."""
    masked = _QUOTED.sub(lambda quoted: "_" * len(quoted.group()), label)
    key_end = masked.find(": ")
    return masked.rfind(" [active]", 0, key_end if key_end >= 0 else len(masked))


def _unboxed(label: str) -> str:
    """The line without its element's ``[box=...]`` (outside its quoted name, before its text)."""
    masked = _QUOTED.sub(lambda quoted: "_" * len(quoted.group()), label)
    key_end = masked.find(": ")
    found = _BOX.search(masked, 0, key_end if key_end >= 0 else len(masked))
    return label if found is None else label[: found.start()] + label[found.end() :]


def _without_active(label: str) -> str:
    at = _active_at(label)
    return label if at < 0 else label[:at] + label[at + len(" [active]") :]


def refs_of(lines: Iterable[str]) -> frozenset[str]:
    """The refs of the elements that YAML ``lines`` (``- role "name" [ref=e7]``) stand for."""
    return frozenset(ref for line in lines if (ref := _ref_in(line.lstrip(" ").removeprefix("- "))))


@attrs.define
class _Open:
    depth: int
    label: str
    children: list[_Open] = attrs.Factory(list)

    def node(self) -> Node:
        label = self.label[:-1] if self.children and self.label.endswith(":") else self.label
        return Node(label, tuple(child.node() for child in self.children))


def parse(yaml: str) -> tuple[Node, ...]:
    """The snapshot's lines as a tree, nested by their indentation."""
    root = _Open(-1, "")
    stack = [root]
    for raw in yaml.split("\n"):
        text = raw.lstrip(" ")
        if not text:
            continue
        depth = (len(raw) - len(text)) // 2
        while stack[-1].depth >= depth:
            stack.pop()
        line = _Open(depth, text[2:] if text.startswith("- ") else text)
        stack[-1].children.append(line)
        stack.append(line)
    return root.node().children


def render(nodes: Sequence[Node], depth: int = 0) -> list[str]:
    lines: list[str] = []
    for node in nodes:
        lines.append("  " * depth + node.line)
        lines.extend(render(node.children, depth + 1))
    return lines


def _size(node: Node) -> int:
    return len(node.label) + 4 + sum(_size(child) for child in node.children)


def walk(nodes: Sequence[Node]) -> Iterator[Node]:
    for node in nodes:
        yield node
        yield from walk(node.children)


def by_ref(nodes: Sequence[Node]) -> dict[str, Node]:
    return {ref: node for node in walk(nodes) if (ref := node.ref)}


@attrs.frozen
class DiffLine:
    mark: str  # "+", "-", "~" or " "
    depth: int
    text: str
    # The refs of the elements around the line, outermost first, for naming what a budget leaves out.
    path: tuple[str, ...]
    # An unchanged ancestor of a change, shown only where it says where something came or went.
    around: bool = False

    def __str__(self) -> str:
        return f"{self.mark} {'  ' * self.depth}{self.text}"


class _Differ:
    def __init__(
        self, old: Sequence[Node], new: Sequence[Node], seen: frozenset[str] | None, acted_on: str | None
    ) -> None:
        self.acted_on = acted_on
        self.old_refs = by_ref(old)
        self.new_refs = by_ref(new)
        # The refs the client was shown (None: all of them): an element it never saw (a fold held
        # it) that moves into view comes whole, as new to it.
        self.seen = seen
        # When the focus moved to another element, that element's line says so ([active]); the one
        # it left is not told as changed for that alone (one element has the focus).
        focused = {ref for ref, node in self.new_refs.items() if _active_at(node.label) >= 0}
        self.blurred = (
            {ref for ref, node in self.old_refs.items() if _active_at(node.label) >= 0} - focused if focused else set()
        )

    def children(
        self, old: Sequence[Node], new: Sequence[Node], depth: int, path: tuple[str, ...], parent_size: int
    ) -> list[DiffLine]:
        matcher = difflib.SequenceMatcher(None, [n.key for n in old], [n.key for n in new], autojunk=False)
        opcodes = matcher.get_opcodes()
        # Items gone from a small list (elements like those that stay): what stays is shown too, so
        # the list reads whole (a filter).
        staying = {node.role for node in new if node.ref}
        went = any(
            node.ref and node.role in staying
            for tag, i1, i2, *_ in opcodes
            if tag in ("delete", "replace")
            for node in old[i1:i2]
        )
        whole = went and parent_size <= _SMALL_LIST
        lines: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in opcodes:
            if tag == "equal":
                for before, after in zip(old[i1:i2], new[j1:j2], strict=True):
                    changed = self.node(before, after, depth, path)
                    lines.extend(changed or (self.context(after, depth, path) if whole else []))
                continue
            lines.extend(self.removed(old[i1:i2], depth, path))
            for node in new[j1:j2]:
                lines.extend(self.added(node, depth, path))
        return lines

    def node(self, before: Node, after: Node, depth: int, path: tuple[str, ...]) -> list[DiffLine]:
        inside = self.children(before.children, after.children, depth + 1, _within(path, after), _size(after))
        acted_on = after.ref is not None and after.ref == self.acted_on
        was = _without_active(before.label) if before.ref in self.blurred or acted_on else before.label
        now = _without_active(after.label) if acted_on else after.label
        same = _unboxed(was) == _unboxed(now)
        if same and not inside:
            return []
        if same:
            return [DiffLine(" ", depth, after.line, path, around=True), *inside]
        return [DiffLine("~", depth, after.line, path), *inside]

    def context(self, node: Node, depth: int, path: tuple[str, ...]) -> list[DiffLine]:
        lines = [DiffLine(" ", depth, node.line, path)]
        for child in node.children:
            lines.extend(self.context(child, depth + 1, _within(path, node)))
        return lines

    def added(self, node: Node, depth: int, path: tuple[str, ...]) -> list[DiffLine]:
        earlier = self.old_refs.get(node.ref) if node.ref else None
        inner = _within(path, node)
        if earlier is not None and (self.seen is None or node.ref in self.seen):
            # Moved here from elsewhere: what is inside is told as changes to what it held there.
            inside = self.children(earlier.children, node.children, depth + 1, inner, _size(node))
            return [DiffLine("+", depth, node.line, path), *inside]
        lines = [DiffLine("+", depth, node.line, path)]
        for child in node.children:
            lines.extend(self.added(child, depth + 1, inner))
        return lines

    def removed(self, nodes: Sequence[Node], depth: int, path: tuple[str, ...]) -> list[DiffLine]:
        lines = [DiffLine("-", depth, node.line.removesuffix(":"), path) for node in nodes]
        if len(lines) <= _REMOVED_RUN:
            return lines
        roles = sorted({node.role for node in nodes[_REMOVED_RUN - 1 :]})
        more = f"- … {len(nodes) - _REMOVED_RUN + 1} more removed ({', '.join(roles)})"
        return [*lines[: _REMOVED_RUN - 1], DiffLine("-", depth, more, path)]


def _within(path: tuple[str, ...], node: Node) -> tuple[str, ...]:
    return (*path, node.ref) if node.ref else path


def parts_holding(paths: Sequence[tuple[str, ...]], most: int = 3) -> list[str]:
    """The refs of at most ``most`` elements that hold every one of ``paths``, as deep as can be."""
    paths = [path for path in paths if path]
    for depth in range(max((len(path) for path in paths), default=0), 0, -1):
        refs = list(dict.fromkeys(path[min(depth, len(path)) - 1] for path in paths))
        if len(refs) <= most:
            return refs
    return list(dict.fromkeys(path[0] for path in paths))[:most]


def diff(
    old: Sequence[Node], new: Sequence[Node], seen: frozenset[str] | None = None, acted_on: str | None = None
) -> list[DiffLine]:
    """The lines that tell ``old`` changing into ``new``, in the new page's order; none when equal.

    ``seen``: the refs of ``old`` its reader was shown, when it was not shown all of it. ``acted_on``:
    the ref of the element the action was done to.
    """
    lines = _Differ(old, new, seen, acted_on).children(old, new, 0, (), sum(_size(node) for node in new))
    return _nested_as_shown(lines, [_shown(at, lines) for at in range(len(lines))])


def _shown(at: int, lines: Sequence[DiffLine]) -> bool:
    """Whether line ``at`` is shown: an unchanged ancestor only where it holds, right under it, a line
    that came or went (or the rest of a list whose items did), and not when it is a wrapper without a name."""
    line = lines[at]
    if not line.around:
        return True
    if _WRAPPER.fullmatch(line.text):
        return False
    for below in lines[at + 1 :]:
        if below.depth <= line.depth:
            return False
        if below.depth == line.depth + 1 and below.mark != "~" and not below.around:
            return True
    return False


def _nested_as_shown(lines: Sequence[DiffLine], shown: Sequence[bool]) -> list[DiffLine]:
    """The lines ``shown``, each one step under the nearest shown line it is inside in the page."""
    out: list[DiffLine] = []
    inside: list[tuple[int, bool]] = []  # the lines the next one may be inside: (depth, shown)
    for line, showing in zip(lines, shown, strict=True):
        while inside and inside[-1][0] >= line.depth:
            inside.pop()
        if showing:
            out.append(attrs.evolve(line, depth=sum(1 for _, kept in inside if kept)))
        inside.append((line.depth, showing))
    return out
