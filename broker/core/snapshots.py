"""What a client reads of a page: whole snapshots within a budget, and what changed since its last.

The extension reports a page as one whole snapshot (Playwright MCP's YAML: a ``- role "name"
[ref=e7]`` line per element, nested two spaces a level) with the document it was taken in. What
each client is told of it is decided here, per client and tab, against the snapshot that client
last read (its baseline):

- a whole snapshot, folded to its budget when larger: long texts are shortened, and runs of
  similar items (a catalogue's cards, a table's rows) keep their first few and say how many more
  there are and which ref shows them all; landmarks, headings and the elements to act on stay;
- the changes since the baseline, as a diff of YAML lines: ``+`` added (with what is inside),
  ``-`` removed (the line alone: what was inside went with it), ``~`` changed (as it is now), and
  unmarked the lines around them (the parent of what came or went; and the rest of a small list
  whose items came or went, so that a filtered list reads whole), nested as the diff's lines are;
  the element acted on taking the focus is not told;
- the whole page again, saying so, when the document is not the baseline's (a navigation).

The snapshot as a tree, and how two are compared, is :mod:`broker.core.snapshot_tree`. A
baseline moves on only to what the client was shown in full: when an answer's budget leaves
changes out, they are still there for ``browser_snapshot`` with ``changes: true``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs

from .effects import SessionId
from .errors import InvalidRequest
from .messages import JsonObject, PageSnapshot
from .snapshot_find import finder, found_lines
from .snapshot_tree import REF, Node, by_ref, diff, parse, parts_holding, refs_of, render, walk

__all__ = [
    "AFTER_ACTION_BUDGET",
    "DIFF_LEGEND",
    "SNAPSHOT_BUDGET",
    "Baselines",
    "View",
    "fold",
    "view_of",
    "with_section",
    "without_address",
]

SNAPSHOT_BUDGET = 100_000
AFTER_ACTION_BUDGET = 4_000
# Below this, a whole snapshot of a tab is not worth folding, whatever a client asks.
MIN_BUDGET = 500

_LANDMARKS = frozenset(
    ("banner", "complementary", "contentinfo", "form", "main", "navigation", "region", "search", "dialog")
)
# Runs of similar items longer than this are folded.
_RUN = 4
_LONG_TEXT = 160


# The diff


# Folding


def _shortened(node: Node) -> Node:
    label = node.label
    if len(label) > _LONG_TEXT:
        label = label[: _LONG_TEXT - 1].rstrip() + "…"
        if label.count('"') % 2:
            label += '"'
    return Node(label, tuple(_shortened(child) for child in node.children))


def _shape(node: Node) -> tuple[str, ...]:
    return (node.role, *(child.role for child in node.children))


def _folded_runs(
    nodes: Sequence[Node], keep: int, anchor: str | None, from_depth: int = 0, depth: int = 0
) -> tuple[Node, ...]:
    """``nodes`` with runs of similar siblings, nested ``from_depth`` deep or more, cut to their first ``keep``."""
    out: list[Node] = []
    index = 0
    while index < len(nodes):
        end = index + 1
        while end < len(nodes) and _shape(nodes[end]) == _shape(nodes[index]):
            end += 1
        run = nodes[index:end]
        shown = run if len(run) <= _RUN or depth < from_depth else run[:keep]
        for node in shown:
            inner = _folded_runs(node.children, keep, node.ref or anchor, from_depth, depth + 1)
            out.append(Node(node.label, inner))
        if len(shown) < len(run):
            where = f" [ref={anchor}]" if anchor else ""
            out.append(Node(f"… {len(run) - len(shown)} more {run[0].role} like these{where}"))
        index = end
    return tuple(out)


def _fitting(lines: Sequence[str], budget: int) -> int:
    """How many of ``lines``, from the first, fit in ``budget`` characters, a line break after each."""
    used = 0
    for count, line in enumerate(lines):
        used += len(line) + 1
        if used > budget:
            return count
    return len(lines)


def _depth(nodes: Sequence[Node]) -> int:
    return max((1 + _depth(node.children) for node in nodes), default=0)


def _without_plain_text(nodes: Sequence[Node]) -> tuple[Node, ...]:
    """Texts and paragraphs dropped where they stand beside elements to act on; headings stay."""
    out = []
    for node in nodes:
        if not node.ref and node.role == "text" and len(nodes) > 1:
            continue
        out.append(Node(node.label, _without_plain_text(node.children)))
    return tuple(out)


@attrs.frozen
class Folded:
    yaml: str
    length: int  # the whole snapshot's characters
    folded: bool
    # When even folded it was over the budget and was cut: the parts past the cut, as lines.
    past_cut: tuple[str, ...] = ()
    cut: bool = False


def fold(nodes: Sequence[Node], budget: int, anchor: str | None = None) -> Folded:
    """``nodes`` rendered within ``budget`` characters: whole, folded, or at last cut at a line's end."""
    whole = "\n".join(render(nodes))
    if len(whole) <= budget:
        return Folded(whole, len(whole), folded=False)
    shortened = tuple(_shortened(node) for node in nodes)
    # Ever smaller: long texts shortened; then the runs of similar items folded, the innermost
    # first (the paragraphs of each section before the sections); then folded to one item a run;
    # then texts beside the elements to act on dropped.
    deepest = _depth(shortened)
    # (items kept of a run, the depth from which runs fold, texts dropped); None: no run folded.
    steps: list[tuple[int, int, bool] | None] = [None, *((3, depth, False) for depth in range(deepest, -1, -1))]
    steps += [(1, 0, False), (1, 0, True)]
    smallest: tuple[Node, ...] = shortened
    for step in steps:
        if step is not None:
            keep, from_depth, drop_text = step
            smallest = _folded_runs(shortened, keep, anchor, from_depth)
            if drop_text:
                smallest = _without_plain_text(smallest)
        text = "\n".join(render(smallest))
        if len(text) <= budget:
            return Folded(text, len(whole), folded=True)
    lines = render(smallest)
    kept = lines[: _fitting(lines, budget)]
    shown = refs_of(kept)
    past = tuple(
        f"- {node.label}"
        for node in walk(smallest)
        if node.ref and node.ref not in shown and node.role in _LANDMARKS | {"heading"}
    )
    return Folded("\n".join(kept), len(whole), folded=True, past_cut=past[:40], cut=True)


# Per client and tab


@attrs.frozen
class View:
    """What a client asked to read of a page: its changes or all of it, within ``budget`` characters."""

    changes: bool
    budget: int
    after_action: bool = False
    # browser_find: only the lines matching this, as search snippets (broker.core.snapshot_find).
    find: re.Pattern[str] | None = None
    # The ref of the element the action was done to: its taking the focus goes without saying.
    acted_on: str | None = None


def view_of(action: str, args: JsonObject) -> tuple[View, JsonObject]:
    """How an action's answer shows the page, and the arguments left for the extension.

    Raises:
        InvalidRequest: ``changes`` or ``maxChars`` of the wrong kind, or ``changes`` with ``depth``.
    """
    if action == "find":
        # The browser takes a whole snapshot; what matches is the broker's to pick.
        return View(changes=False, budget=SNAPSHOT_BUDGET, find=finder(args)), {}
    if action != "snapshot":
        target = args.get("target")
        acted_on = target if isinstance(target, str) and REF.fullmatch(f"[ref={target}]") else None
        return View(changes=True, budget=AFTER_ACTION_BUDGET, after_action=True, acted_on=acted_on), args
    own = {name: value for name, value in args.items() if name not in ("changes", "maxChars")}
    changes = args.get("changes", False)
    budget = args.get("maxChars", SNAPSHOT_BUDGET)
    if not isinstance(changes, bool):
        raise InvalidRequest("browser_snapshot's `changes` must be true or false")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InvalidRequest("browser_snapshot's `maxChars` must be a whole number of characters, 1 or more")
    if changes and args.get("depth"):
        raise InvalidRequest("browser_snapshot's `changes` shows every level of what changed: leave out `depth`")
    return View(changes=changes, budget=max(budget, MIN_BUDGET)), own


@attrs.define
class _Baseline:
    """What a client last read of a tab: kept as text, a few times smaller than its tree."""

    document: str
    yaml: str
    # The refs of it the client was shown, when a fold kept some from it (None: all).
    seen: frozenset[str] | None = None

    def saw(self, refs: frozenset[str] | None) -> None:
        """The client was shown ``refs`` of it too (None: all of it)."""
        self.seen = None if self.seen is None or refs is None else self.seen | refs

    @property
    def nodes(self) -> tuple[Node, ...]:
        return parse(self.yaml)

    @nodes.setter
    def nodes(self, nodes: Sequence[Node]) -> None:
        self.yaml = "\n".join(render(nodes))


_NEW_PAGE = "- A new page since your last snapshot of this tab: the whole page."
_FIRST = "- Your first snapshot of this tab: the whole page."
_NO_CHANGES = "- No changes since your last snapshot of this tab."
# What a diff block's lines mean, said once in browser_snapshot's description rather than in every
# answer (on a small page it was a third of an action's answer).
DIFF_LEGEND = (
    "a diff block, what changed since your last snapshot of the tab: + added, - removed, ~ changed (as it"
    " is now), unmarked lines the ones around them; the element that took the focus says [active]"
)
_FOLD_NOTE = (
    "- Folded to {budget} of its {length} characters: a line `… N more X like these [ref=R]` stands for"
    " items left out; browser_snapshot with target R shows them."
)

TabKey = tuple[str, int]


class Baselines:
    """What each client last read of each tab, and the Snapshot section of its next answer there."""

    def __init__(self) -> None:
        self._baselines: dict[tuple[SessionId, TabKey], _Baseline] = {}
        # The address and title each client was last told of each tab.
        self._addresses: dict[tuple[SessionId, TabKey], tuple[str, str]] = {}

    def forget_session(self, session_id: SessionId) -> None:
        for key in [key for key in self._baselines if key[0] == session_id]:
            del self._baselines[key]
        for key in [key for key in self._addresses if key[0] == session_id]:
            del self._addresses[key]

    def forget_tab(self, tab: TabKey) -> None:
        for key in [key for key in self._baselines if key[1] == tab]:
            del self._baselines[key]
        for key in [key for key in self._addresses if key[1] == tab]:
            del self._addresses[key]

    def address_told(self, session_id: SessionId, tab: TabKey, page: PageSnapshot, view: View) -> bool:
        """Whether this answer need not tell the client the page's URL and title: it was told both in
        this tab, and neither changed since (a whole ``browser_snapshot`` tells them again, as the
        client may have asked for it to find its bearings). They count as told from now on."""
        key = (session_id, tab)
        address = (page.url, page.title)
        told = self._addresses.get(key) == address
        self._addresses[key] = address
        return told and (view.changes or view.after_action)

    def __len__(self) -> int:
        return len(self._baselines)

    def section(self, session_id: SessionId, tab: TabKey, page: PageSnapshot, view: View) -> list[str]:
        """The lines of the answer's ``### Snapshot`` section, and the client's baseline moved on."""
        nodes = parse(page.yaml)
        if view.find is not None:
            # A search reads the page and moves no baseline: the client was not shown it.
            return found_lines(nodes, view.find)
        if page.depth:
            # An outline: shown as asked, and no baseline, which holds every level.
            return self._whole(nodes, view, page.target, note=None)[0]
        if page.target is not None and not REF.fullmatch(f"[ref={page.target}]"):
            # A CSS selector: its element is the snapshot's first line.
            page = attrs.evolve(page, target=nodes[0].ref if len(nodes) == 1 else None)
        key = (session_id, tab)
        baseline = self._baselines.get(key)
        same_page = baseline is not None and baseline.document == page.document
        if page.target is not None:
            return self._part(key, baseline if same_page else None, nodes, page, view)
        if not view.changes or baseline is None or not same_page:
            # An action's answer says nothing of why the page comes whole: browser_snapshot's
            # description does (a first look, or a new page); asked for changes, a snapshot says it.
            note = None if view.after_action or not view.changes else (_NEW_PAGE if baseline else _FIRST)
            lines, seen = self._whole(nodes, view, None, note)
            self._baselines[key] = _Baseline(page.document, page.yaml, seen)
            return lines
        assert baseline is not None
        old = baseline.nodes
        told = self._changes(old, nodes, view, baseline.seen)
        if told is None:
            return self._left_out(old, nodes, view, baseline.seen)
        lines, seen = told
        self._baselines[key] = moved_on = _Baseline(page.document, page.yaml, baseline.seen)
        moved_on.saw(seen)
        return lines

    def _part(
        self,
        key: tuple[SessionId, TabKey],
        baseline: _Baseline | None,
        nodes: tuple[Node, ...],
        page: PageSnapshot,
        view: View,
    ) -> list[str]:
        assert page.target is not None
        old = baseline.nodes if baseline else ()
        before = by_ref(old).get(page.target)
        seen_before = baseline.seen if baseline else None
        told: tuple[list[str], frozenset[str] | None] | None
        if view.changes and before is not None:
            told = self._changes((before,), nodes, view, seen_before)
            if told is None:
                return self._left_out((before,), nodes, view, seen_before)
        else:
            told = self._whole(nodes, view, page.target, note=None)
        lines, seen = told
        # What the client has now read of that part becomes its baseline there.
        if baseline is not None and len(nodes) == 1 and nodes[0].ref == page.target:
            baseline.nodes = _replaced(old, page.target, nodes[0])
            baseline.saw(seen if seen is not None else frozenset(by_ref(nodes)))
        return lines

    def _changes(
        self, old: Sequence[Node], new: Sequence[Node], view: View, seen: frozenset[str] | None
    ) -> tuple[list[str], frozenset[str] | None] | None:
        """The section telling the changes and the refs it shows, or None when they do not fit the budget."""
        lines = diff(old, new, seen, view.acted_on)
        if not lines:
            return [_NO_CHANGES], frozenset()
        body = "\n".join(str(line) for line in lines)
        if len(body) > view.budget:
            return None
        return ["```diff", body, "```"], refs_of(line.text for line in lines)

    def _left_out(self, old: Sequence[Node], new: Sequence[Node], view: View, seen: frozenset[str] | None) -> list[str]:
        lines = diff(old, new, seen, view.acted_on)
        # Room is kept for the note.
        kept = lines[: _fitting([str(line) for line in lines], view.budget - 200)]
        rest = lines[len(kept) :]
        changed = sum(1 for line in rest if line.mark != " ")
        refs = by_ref(new)
        parts = parts_holding([line.path for line in rest if line.mark != " "])
        named = ", ".join(f"{refs[ref].label.split(' [', 1)[0]} [ref={ref}]" for ref in parts if ref in refs)
        where = f" (in {named})" if named else ""
        note = (
            f"- Left out: {changed} more changed lines{where}, to keep this answer within {view.budget} characters."
            " browser_snapshot with changes: true shows them all; with target set to one of those refs, that part."
        )
        body = "\n".join(str(line) for line in kept)
        return ["```diff", body, "```", note]

    def _whole(
        self, nodes: Sequence[Node], view: View, target: str | None, note: str | None
    ) -> tuple[list[str], frozenset[str] | None]:
        """The section showing ``nodes`` within the budget, and the refs it shows (None: all)."""
        folded = fold(nodes, view.budget, anchor=target)
        lines = [note] if note else []
        lines += ["```yaml", folded.yaml, "```"]
        if folded.cut:
            lines.append(
                f"- Left out: the snapshot has {folded.length} characters and was cut at {view.budget}"
                " even folded. To read the rest, call browser_snapshot with target set to the ref of one"
                " of these parts:"
                if folded.past_cut
                else f"- Left out: the snapshot has {folded.length} characters and was cut at {view.budget} even"
                " folded: call browser_snapshot with a larger maxChars, or with target set to a ref above."
            )
            lines.extend(folded.past_cut)
        elif folded.folded:
            lines.append(_FOLD_NOTE.format(budget=view.budget, length=folded.length))
        return lines, refs_of(folded.yaml.split("\n")) if folded.folded else None


def with_section(result: Any, title: str, lines: Sequence[str]) -> Any:
    """An MCP CallToolResult (as JSON) with a ``### title`` section after its first text."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return result
    section = "\n".join([f"### {title}", *lines])
    content = list(result["content"])
    first = content[0] if content else None
    if isinstance(first, dict) and first.get("type") == "text" and isinstance(first.get("text"), str):
        content[0] = {**first, "text": f"{first['text']}\n{section}" if first["text"] else section}
    else:
        content.insert(0, {"type": "text", "text": section})
    return {**result, "content": content}


def without_address(result: Any, page: PageSnapshot) -> Any:
    """An MCP CallToolResult (as JSON) whose ``### Page`` section no longer gives ``page``'s URL and
    title; the section goes when nothing else is left in it (the console's trouble stays)."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), list) or not result["content"]:
        return result
    first = result["content"][0]
    if not isinstance(first, dict) or first.get("type") != "text" or not isinstance(first.get("text"), str):
        return result
    address = {f"- Page URL: {page.url}", f"- Page Title: {page.title}"}
    lines: list[str] = []
    in_page = False
    for line in first["text"].split("\n"):
        if line.startswith("### "):
            in_page = line == "### Page"
        elif in_page and line in address:
            continue
        lines.append(line)
    if "### Page" in lines:
        at = lines.index("### Page")
        if at + 1 == len(lines) or lines[at + 1].startswith("### "):
            del lines[at]
    return {**result, "content": [{**first, "text": "\n".join(lines)}, *result["content"][1:]]}


def _replaced(nodes: tuple[Node, ...], ref: str, part: Node) -> tuple[Node, ...]:
    return tuple(part if node.ref == ref else Node(node.label, _replaced(node.children, ref, part)) for node in nodes)
