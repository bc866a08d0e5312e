"""The tokens bench's scripted agent: it acts through one side's tools and reads what comes back.

It finds every ref it needs in what it has read (the YAML lines of any ```yaml or ```diff block;
chrome-devtools-mcp's ``uid=`` lines), never elsewhere, and follows what an answer says was left
out; see :mod:`.suite` for how each side's answers are read, and :mod:`.dialects` for how the
flows' calls reach each side.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from mcp import Client

from ..support.mcp_sides import text_of
from .dialects import BLOCK, YAML, Dialect, Untranslated, yaml_line, yaml_lines

__all__ = [
    "Agent",
    "BLOCK",
    "DIFF_PREFIXES",
    "FOLD",
    "FOLLOW_TARGETS_AT_ONCE",
    "FlowFailed",
    "FlowResult",
    "FoundT",
    "LEFT_OUT",
    "LEFT_OUT_CHANGES",
    "LEFT_OUT_TARGET",
    "MODAL",
    "REF",
    "SNAPSHOT_FILE",
    "TOO_LARGE",
    "UNEXPANDED_TRIES",
    "View",
    "yaml_line",
    "yaml_lines",
]


REF = re.compile(r"\[ref=([^\]\s]+)\]")
# A fold of similar items (`- … 180 more listitem like these [ref=e40]`): browser_snapshot target=e40 shows them.
FOLD = re.compile(r"…\s*[\d,]+\s+more\s+(\w+)\b[^\n]*\[ref=([^\]\s]+)\]")
UNEXPANDED_TRIES = 3
LEFT_OUT = re.compile(r"^- Left out:(.*)$", re.MULTILINE)
# A "Left out" line that names only a part to expand (`target` set to a ref) is followed when the agent needs
# something it has not read, as an agent would; one about changes (`changes: true`) at once, since the agent
# must know the page's state. True follows both at once.
FOLLOW_TARGETS_AT_ONCE = False
LEFT_OUT_TARGET = re.compile(r"`?target`?[^\n]*?\b((?:f\d+)?e\d+)\b")
LEFT_OUT_CHANGES = re.compile(r"`?changes`?\W{0,3}true")
# Before answers carried the change: an action's answer whose page was too large to hold.
TOO_LARGE = re.compile(r"^- The page's snapshot has \d+ characters: call browser_snapshot", re.MULTILINE)
# Playwright MCP's link to the file holding the snapshot after an action: `- [Snapshot](output/page-….yml)`.
SNAPSHOT_FILE = re.compile(r"\[Snapshot\]\(([^)\s]+\.ya?ml)\)")
MODAL = YAML.modal  # ours and Playwright MCP: a dialog holds the page
DIFF_PREFIXES = ("+ ", "- ", "~ ", "  ")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


class View:
    """What the agent has read of its tab's page, as YAML lines: the page's last whole snapshot, with the
    changes and the parts it read since applied; and which parts it has yet to read whole. ``dialect``:
    how its lines name their elements and refs."""

    def __init__(self, dialect: Dialect = YAML) -> None:
        self.dialect = dialect
        self.lines: list[str] = []
        # Elements a diff showed holding more (their line ends with a colon) without what they hold, and
        # which the agent had not read before (a diff shows an element it moved, or one folded until
        # now, without its unchanged content): the latest first.
        self.unexpanded: list[str] = []
        self.expanded: set[str] = set()  # parts read whole with a targeted snapshot

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def replace(self, yaml: str) -> None:
        self.lines = yaml.splitlines()
        self.unexpanded = []
        self.expanded = set()

    def _known(self) -> dict[str, int]:
        """The line of each element read, by ref (a fold's line names its container's ref too: not it)."""
        return {
            found.group(1): index
            for index, line in enumerate(self.lines)
            if (found := self.dialect.ref.search(line)) and not FOLD.search(line)
        }

    def merge(self, yaml: str) -> None:
        """Lines read on their own (a part, or what a diff shows as it is now): each replaces the line of
        the same ref, or is added."""
        known = self._known()
        for line in yaml.splitlines():
            found = self.dialect.ref.search(line)
            if found is not None and found.group(1) in known and not FOLD.search(line):
                self.lines[known[found.group(1)]] = line
            else:
                self.lines.append(line)

    def read_part(self, ref: str, yaml: str) -> None:
        """The part of ``ref`` read whole (``browser_snapshot`` with ``target``)."""
        self.merge(yaml)
        self.expanded.add(ref)
        self.unexpanded = [known for known in self.unexpanded if known != ref]

    def apply_diff(self, diff: str) -> None:
        """``- `` lines gone, ``~ `` lines as they are now, ``+ `` lines new; unmarked ones are context."""
        known = self._known()
        removed: set[str] = set()
        current: list[str] = []
        marked = [(line[:2], line[2:]) for line in diff.splitlines() if line[:2] in DIFF_PREFIXES]
        for index, (mark, body) in enumerate(marked):
            found = REF.search(body)
            if mark == "- ":
                if found is not None:
                    removed.add(found.group(1))
                else:
                    self._remove_line(body)
                continue
            current.append(body)
            below = marked[index + 1][1] if index + 1 < len(marked) else ""
            holds_more = body.rstrip().endswith(":") and _indent(below) <= _indent(body)
            if mark != "  " and found is not None and found.group(1) not in known and holds_more:
                self.unexpanded.insert(0, found.group(1))
        self.lines = [line for line in self.lines if not ((found := REF.search(line)) and found.group(1) in removed)]
        self.unexpanded = [ref for ref in self.unexpanded if ref not in removed]
        self.merge("\n".join(current))

    def _remove_line(self, body: str) -> None:
        """A line without a ref (a text, a link's URL) gone: the first one read like it."""
        wanted = body.strip()
        for index, line in enumerate(self.lines):
            if line.strip() == wanted:
                del self.lines[index]
                return

    def find(self, role: str, name: str) -> str | None:
        found = self.dialect.line(role, name).search(self.text)
        return found.group("ref") if found else None

    def find_all(self, role: str, name_pattern: str) -> list[tuple[str, str]]:
        """Every (name, ref) of ``role`` whose name matches ``name_pattern``, in the order read."""
        pattern = self.dialect.lines(role, name_pattern)
        return [(found.group("name"), found.group("ref")) for found in pattern.finditer(self.text)]

    def folds(self) -> list[tuple[str, str]]:
        """Each fold not yet read whole: its items' role and the ref that expands it."""
        return [(role, ref) for role, ref in FOLD.findall(self.text) if ref not in self.expanded]

    def shows(self, needle: str) -> bool:
        return needle in self.text


FoundT = TypeVar("FoundT")


@dataclass
class FlowResult:
    flow: str
    success: bool = False
    calls: int = 0
    chars: int = 0
    seconds: float = 0.0
    failure: str = ""
    by_tool: dict[str, int] = field(default_factory=dict)  # characters read, by the call that brought them
    # every read: ("step: call", characters, milliseconds from the call to its answer)
    reads: list[tuple[str, int, float]] = field(default_factory=list)

    def largest(self, count: int) -> list[tuple[str, int, float]]:
        return sorted(self.reads, key=lambda read: -read[1])[:count]


class FlowFailed(Exception):
    """The scripted agent could not go on: a call failed, or what it needed is not on the page it read."""


class Agent:
    """A scripted agent on one side: it acts through the side's tools and reads what comes back."""

    # How the agent reads the page after an action: "answer" (ours: what the action answered, and what a
    # "Left out" line sends it to), "linked" (Playwright MCP's defaults: the answer's snapshot or the file
    # it links), "snapshot" (Playwright MCP with --snapshot-mode none: a browser_snapshot after each action),
    # "asked" (chrome-devtools-mcp: its answers carry no page; a snapshot when what it read lacks what it needs,
    # and what it read forgotten when an answer says the page is another document). ``dialect``: how the flows'
    # calls reach the side and how its snapshots are read (:mod:`.dialects`).
    def __init__(
        self, name: str, client: Client, reads: str, workdir: Path | None = None, dialect: Dialect = YAML
    ) -> None:
        self.name = name
        self.client = client
        self.reads = reads
        self.workdir = workdir  # where the linked files' paths start
        self.dialect = dialect
        self.page: int | None = None  # the page the side acts in, when its tools name one (chrome-devtools-mcp)
        self.view = View(dialect)
        self.flow = FlowResult("")
        self.step = ""
        self.rejects_changes = False  # browser_snapshot refused `changes` once: the broker predates it
        self.left_out_targets: list[str] = []  # parts an answer left out, each named by a ref to expand

    def start(self, flow: str) -> None:
        self.flow = FlowResult(flow)
        self.view = View(self.dialect)
        self.left_out_targets = []

    async def finish(self) -> None:
        """The task done: the page it opened closed, when the side lists its pages in its answers (so the next
        task's answers list no more of them). The bench's call, not the agent's: never counted."""
        if self.dialect.closes_pages and self.page is not None:
            await self.client.call_tool("close_page", {"pageId": self.page})
        self.page = None

    def opened_dialog(self, answer: str) -> bool:
        """The answer says that a dialog holds the page: the next call answers it."""
        return self.dialect.modal in answer

    def _count(self, what: str, chars: int, seconds: float = 0.0) -> None:
        self.flow.calls += 1
        self.flow.chars += chars
        self.flow.by_tool[what] = self.flow.by_tool.get(what, 0) + chars
        self.flow.reads.append((f"{self.step}: {what}", chars, round(seconds * 1e3, 1)))

    def _uncount_last(self) -> None:
        what, chars, _ms = self.flow.reads.pop()
        self.flow.calls -= 1
        self.flow.chars -= chars
        tool = what.rsplit(": ", 1)[-1]
        self.flow.by_tool[tool] -= chars

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """The text of the tool's answer, counted.

        Raises:
            FlowFailed: when the tool answers with an error.
        """
        try:
            tool, arguments = self.dialect.translate(tool, arguments, self.page)
        except Untranslated as exc:
            raise FlowFailed(str(exc)) from None
        started = time.perf_counter()
        result: types.CallToolResult = await self.client.call_tool(tool, arguments)
        text = text_of(result)
        self._count(tool, len(text), time.perf_counter() - started)
        if result.is_error:
            raise FlowFailed(f"{tool} {arguments} failed: {text[:500]}")
        page = self.dialect.page_of(text)
        if page is not None and page != self.page:
            self.page = page
            self.view.replace("")  # another page: nothing read of it yet
        return text

    def absorb(self, text: str, target: str | None = None) -> None:
        """What a snapshot or an answer shows, into the view: a whole page replaces it (a part read with
        ``target`` is merged), a diff is applied."""
        for kind, body in self.dialect.blocks(text):
            if kind == "diff":
                self.view.apply_diff(body)
            elif target is not None:
                self.view.read_part(target, body)
            else:
                self.view.replace(body)

    async def snapshot(self, *, target: str | None = None, changes: bool = False) -> str:
        arguments: dict[str, Any] = {}
        if target is not None:
            arguments["target"] = target
        if changes and self.reads == "answer" and not self.rejects_changes:
            arguments["changes"] = True
        try:
            text = await self.call("browser_snapshot", arguments)
        except FlowFailed:
            if "changes" not in arguments:
                raise
            # The broker predates `changes`: the refused call is not counted, and a plain snapshot read instead.
            self.rejects_changes = True
            self._uncount_last()
            return await self.snapshot(target=target)
        self.absorb(text, target)
        return text

    async def act(self, tool: str, arguments: dict[str, Any]) -> str:
        """Do the action, then read the page's new state as this side's agent must; what it read."""
        text = await self.call(tool, arguments)
        self.absorb(text)
        if self.opened_dialog(text):
            return text  # a dialog holds the page: the next call answers it
        if self.reads == "asked":
            if not self.dialect.blocks(text) and self.dialect.new_document(text):
                self.view.replace("")  # another document: what was read of the last one is gone
            return text
        if self.reads == "snapshot":
            return text + await self.snapshot()
        if self.reads == "linked":
            linked = SNAPSHOT_FILE.search(text)
            if linked is not None:
                assert self.workdir is not None
                content = (self.workdir / linked.group(1)).read_text()
                self._count("read the linked snapshot file", len(content))
                self.view.replace(content)
                return text + content
            return text
        left_out = LEFT_OUT.search(text)
        if left_out is not None:
            note = left_out.group(1)
            if LEFT_OUT_CHANGES.search(note):
                return text + await self.snapshot(changes=True)
            named = LEFT_OUT_TARGET.search(note)
            if named is not None:
                if FOLLOW_TARGETS_AT_ONCE:
                    return text + await self.snapshot(target=named.group(1))
                self.left_out_targets.append(named.group(1))
            # Otherwise what was left out is read (the whole page) when the agent needs something it lacks.
        if TOO_LARGE.search(text):
            return text + await self.snapshot()
        return text

    async def ref(self, role: str, name: str, within: str = "") -> str:
        """The ref of the element, from what the agent read; when it is not there, the snapshots a real
        agent would take (see :meth:`_seek`); ``within``: the role of the items it is among (a fold of
        them is worth expanding).

        Raises:
            FlowFailed: when even the whole page does not show it.
        """
        return await self._seek(lambda: self.view.find(role, name), f'{role} "{name}"', {role, within})

    async def refs(self, role: str, name_pattern: str, count: int) -> list[tuple[str, str]]:
        """The first ``count`` elements of ``role`` whose name matches, as (name, ref)."""

        def found() -> list[tuple[str, str]] | None:
            matches = self.view.find_all(role, name_pattern)
            return matches[:count] if len(matches) >= count else None

        return await self._seek(found, f"{count} {role} named like {name_pattern!r}", {role})

    async def _seek(self, look: Callable[[], FoundT | None], what: str, kinds: set[str] | None = None) -> FoundT:
        """What ``look`` finds in what the agent read; else it reads more until it does, as a real agent would.

        For an element of one of ``kinds`` (roles): the parts answers left out, then elements a diff
        showed holding more without it (the latest first, up to UNEXPANDED_TRIES), then folds of items
        of those roles, one targeted snapshot each; for a text (``kinds`` None): the parts left out,
        then what changed. Then the whole page.

        Raises:
            FlowFailed: when even the whole page does not show it.
        """
        found = look()
        expanded: set[str] = set()
        while not found:
            parts = [*self.left_out_targets]
            if kinds is not None:
                parts += self.view.unexpanded[:UNEXPANDED_TRIES]
                parts += [ref for role, ref in self.view.folds() if role in kinds]
            part = next((ref for ref in parts if ref not in expanded), None)
            if part is None:
                break
            expanded.add(part)
            self.left_out_targets = [ref for ref in self.left_out_targets if ref != part]
            await self.snapshot(target=part)
            found = look()
        if not found and kinds is None and self.reads == "answer":
            await self.snapshot(changes=True)
            found = look()
        if not found:
            await self.snapshot()
            found = look()
        if not found:
            raise FlowFailed(f"no {what} on the page; it shows:\n{self.view.text[:2000]}")
        return found

    async def expect_match(self, pattern: re.Pattern[str]) -> None:
        """As :meth:`expect`, for a line matching ``pattern``.

        Raises:
            FlowFailed: when the page does not show it.
        """
        await self._seek(lambda: pattern.search(self.view.text) is not None or None, pattern.pattern)

    async def expect(self, needle: str) -> None:
        """The agent checks that the page shows ``needle`` in what it read; if not, it looks again (a snapshot).

        Raises:
            FlowFailed: when the page does not show it.
        """
        await self._seek(lambda: self.view.shows(needle) or None, repr(needle))
