"""The tokens part of scripts/bench: what a whole task costs an agent, ours beside Playwright MCP's.

A scripted agent does the same tasks on the bench's pages (``benchlib.pages``) through each side,
in the same run, each side with its own headless Chromium (``benchlib.mcp_sides``):

1. **Shop**: search the catalogue (``browser_type`` in the search box, which filters the products as
   one types), filter by category (``browser_select_option``), open a product, add it and two
   products "customers also bought" to the cart, open the cart, change a quantity (the total
   follows), go to the checkout, fill its eight fields (one ``browser_fill_form``), place the order
   and read the confirmation, which must show the name, the items and the total expected.
2. **Support**: a form whose second part is in an iframe: fill both parts (one ``browser_fill_form``
   with the frame's refs), send it, accept the ``confirm`` dialog it asks (``browser_handle_dialog``)
   and read that the request was sent.

Ours opens a tab of its own for each round (``browser_tabs`` ``action=new``: behind the person's
tab, where Chromium runs a page's timers about once a second) and goes to each page with
``browser_navigate``; every call counts, that one too.

The agent reads the page's new state after every action, as a real agent must, and finds every ref
it needs in what it has read (the YAML lines of any ```yaml or ```diff block), never elsewhere:

- **ours** (``browser-mcp mcp`` over stdio): what the action answered. A ```yaml block is the page
  (whole, or folded: then its ``… N more`` lines name refs to expand); a ```diff block holds what
  changed (lines prefixed ``+ ``, ``- ``, ``~ `` or two spaces), applied to what it read before. A
  line starting ``- Left out:`` is followed as it says: ``browser_snapshot`` with ``target`` set to
  the ref it names, or with ``changes: true`` (a plain one when the broker rejects that argument).
  Before such answers existed, an answer too large to hold its snapshot said so
  ("call browser_snapshot to read it"); that too is followed, with a plain snapshot.
- **Playwright MCP, defaults**: the snapshot its answer carries, or the file it links, which the
  agent reads: its characters count, and so does one call for reading it (an agent's Read tool call
  is one).
- **Playwright MCP, ``--snapshot-mode none``**: its answer, then an explicit ``browser_snapshot``.

Whenever a ref the agent needs is not in what it read, it makes the call a real agent would, and
that call counts: a snapshot targeted at the part that may hold it (one an answer said it left out,
an element a diff showed without what it holds, a fold of items of the kind it looks for), else of
the whole page. A text it checks and has not read: what changed, then the whole page.

Per side: success, calls, characters the agent read (every text block of every answer, and the
files it read) and the time from the first call to the last answer. Ours is compared with the
smaller of Playwright MCP's two runs for characters, and with each for calls and time. The goals:
success equal, characters at most 0.25x, calls no more, time no more. A benchmark, never a test:
verdicts are printed, the exit status ignores them.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from benchlib import BenchError, progress
from benchlib.mcp_sides import shop_stage, start_playwright, text_of, unwrapped
from benchlib.pages import (
    COUNTRIES,
    ORDER_CONFIRMED,
    SIGNED_UP,
    SUPPORT_SENT,
    Product,
    ShopPage,
    shop_page,
)
from benchlib.report import Verdict
from mcp import Client

from tests.chromium import CHROMIUM

# The goals, ours over Playwright MCP's.
CHARS_GOAL = 0.25
SMALL_CHARS_GOAL = 0.6  # the small pages' flow alone
CALLS_GOAL = 1.0
TIME_GOAL = 1.0

SEARCH = "desk lamp"
WANTED_CATEGORY = "Office"
# Who orders, and what the eight fields of the checkout get.
CUSTOMER = {
    "Full name": "Ada Lovelace",
    "Email": "ada@example.com",
    "Phone": "+44 20 7946 0000",
    "Street address": "12 St James's Square",
    "City": "London",
    "Postal code": "SW1Y 4JH",
}
COUNTRY = COUNTRIES[3]
ORDER_NUMBER = "BS-12345"
NOTES = ("Call the printer about the invoice", "Order more paper")
# The tasks the totals (calls, characters, time) and their goals are of; the small pages' flow is judged apart.
TASKS = ("shop", "support")
FLOWS = (*TASKS, "small")
QUANTITY = 2  # of the first product in the cart

# A fenced block of an answer: ```yaml or ```diff, up to its closing fence.
BLOCK = re.compile(r"^```(yaml|diff)\n(.*?)^```", re.MULTILINE | re.DOTALL)
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
MODAL = "### Modal state"
DIFF_PREFIXES = ("+ ", "- ", "~ ", "  ")

FoundT = TypeVar("FoundT")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def yaml_line(role: str, name: str) -> re.Pattern[str]:
    """A snapshot line of the element of ``role`` named ``name`` exactly, with its ref; quoted or not in YAML."""
    return re.compile(rf'^\s*-\s+\'?{re.escape(role)}\s+"{re.escape(name)}"[^\n]*?\[ref=([^\]\s]+)\]', re.MULTILINE)


def yaml_lines(role: str, name_pattern: str) -> re.Pattern[str]:
    """Snapshot lines of elements of ``role`` whose name matches ``name_pattern``: the name, then the ref."""
    return re.compile(rf'^\s*-\s+\'?{re.escape(role)}\s+"({name_pattern})"[^\n]*?\[ref=([^\]\s]+)\]', re.MULTILINE)


class View:
    """What the agent has read of its tab's page, as YAML lines: the page's last whole snapshot, with the
    changes and the parts it read since applied; and which parts it has yet to read whole."""

    def __init__(self) -> None:
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
            if (found := REF.search(line)) and not FOLD.search(line)
        }

    def merge(self, yaml: str) -> None:
        """Lines read on their own (a part, or what a diff shows as it is now): each replaces the line of
        the same ref, or is added."""
        known = self._known()
        for line in yaml.splitlines():
            found = REF.search(line)
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
        found = yaml_line(role, name).search(self.text)
        return found.group(1) if found else None

    def find_all(self, role: str, name_pattern: str) -> list[tuple[str, str]]:
        """Every (name, ref) of ``role`` whose name matches ``name_pattern``, in the order read."""
        return [(name, ref) for name, ref in yaml_lines(role, name_pattern).findall(self.text)]

    def folds(self) -> list[tuple[str, str]]:
        """Each fold not yet read whole: its items' role and the ref that expands it."""
        return [(role, ref) for role, ref in FOLD.findall(self.text) if ref not in self.expanded]

    def shows(self, needle: str) -> bool:
        return needle in self.text


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


@dataclass
class SideRun:
    side: str
    flows: list[FlowResult]

    @property
    def success(self) -> bool:
        return all(flow.success for flow in self.flows)

    @property
    def calls(self) -> int:
        return sum(flow.calls for flow in self.flows if flow.flow in TASKS)

    @property
    def chars(self) -> int:
        return sum(flow.chars for flow in self.flows if flow.flow in TASKS)

    @property
    def seconds(self) -> float:
        return sum(flow.seconds for flow in self.flows if flow.flow in TASKS)

    def of(self, flow: str) -> FlowResult:
        """That flow's result (an empty one when it was not run: see --tokens-flows)."""
        return next((found for found in self.flows if found.flow == flow), FlowResult(flow))


class FlowFailed(Exception):
    """The scripted agent could not go on: a call failed, or what it needed is not on the page it read."""


class Agent:
    """A scripted agent on one side: it acts through the side's tools and reads what comes back."""

    # How the agent reads the page after an action: "answer" (ours: what the action answered, and what a
    # "Left out" line sends it to), "linked" (Playwright MCP's defaults: the answer's snapshot or the file
    # it links), "snapshot" (Playwright MCP with --snapshot-mode none: a browser_snapshot after each action).
    def __init__(self, name: str, client: Client, reads: str, workdir: Path | None = None) -> None:
        self.name = name
        self.client = client
        self.reads = reads
        self.workdir = workdir  # where the linked files' paths start
        self.view = View()
        self.flow = FlowResult("")
        self.step = ""
        self.rejects_changes = False  # browser_snapshot refused `changes` once: the broker predates it
        self.left_out_targets: list[str] = []  # parts an answer left out, each named by a ref to expand

    def start(self, flow: str) -> None:
        self.flow = FlowResult(flow)
        self.view = View()
        self.left_out_targets = []

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
        started = time.perf_counter()
        result: types.CallToolResult = await self.client.call_tool(tool, arguments)
        text = text_of(result)
        self._count(tool, len(text), time.perf_counter() - started)
        if result.is_error:
            raise FlowFailed(f"{tool} {arguments} failed: {text[:500]}")
        return text

    def absorb(self, text: str, target: str | None = None) -> None:
        """What a snapshot or an answer shows, into the view: a whole page replaces it (a part read with
        ``target`` is merged), a diff is applied."""
        for kind, body in BLOCK.findall(text):
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
        if MODAL in text:
            return text  # a dialog holds the page: the next call answers it
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


@dataclass
class Order:
    """What the shop flow buys, as the bench works it out from the catalogue it generated."""

    first: Product
    names: list[str] = field(default_factory=list)  # the three products added, in order
    total: float = 0.0


def order_total(shop: ShopPage, names: list[str], first_quantity: int) -> float:
    prices = {product.name: product.price for product in shop.catalogue}
    return round(sum(prices[name] * (first_quantity if index == 0 else 1) for index, name in enumerate(names)), 2)


def wanted_product(shop: ShopPage) -> Product:
    """The product the shop flow looks for: one matching the search in the wanted category, else the first match."""
    matches = [product for product in shop.catalogue if SEARCH in product.name.lower()]
    if not matches:
        raise BenchError(f"no product of the shop matches {SEARCH!r}: give it more products (--tokens-products)")
    return next((product for product in matches if product.category == WANTED_CATEGORY), matches[0])


async def shop_flow(agent: Agent, shop: ShopPage, url: Callable[[str], str], opens_tab: bool) -> Order:
    """Search, filter, open a product, add three to the cart, change a quantity, check out, read the confirmation.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    first = wanted_product(shop)
    order = Order(first)
    agent.step = "open the shop"
    if opens_tab:
        await agent.call("browser_tabs", {"action": "new"})
    await agent.act("browser_navigate", {"url": url("/shop?new")})
    agent.step = "search"
    search = await agent.ref("searchbox", "Search")
    await agent.act("browser_type", {"element": "the search box", "target": search, "text": SEARCH})
    found = [product for product in shop.catalogue if SEARCH in product.name.lower()]
    await agent.expect(f"Products found: {len(found)} of {shop.products}")
    agent.step = "filter"
    category = await agent.ref("combobox", "Category")
    await agent.act(
        "browser_select_option",
        {"element": "the category filter", "target": category, "values": [first.category]},
    )
    in_category = [product for product in found if product.category == first.category]
    await agent.expect(f"Products found: {len(in_category)} of {shop.products}")
    agent.step = "open a product"
    link = await agent.ref("link", first.name, within="article")
    await agent.act("browser_click", {"element": f"the link to {first.name}", "target": link})
    await agent.expect(f'heading "{first.name}"')
    agent.step = "add to cart"
    button = await agent.ref("button", "Add to cart")
    await agent.act("browser_click", {"element": "Add to cart", "target": button})
    order.names.append(first.name)
    for name, ref in await agent.refs("button", r"Add to cart: [^\"]+", 2):
        await agent.act("browser_click", {"element": name, "target": ref})
        order.names.append(name.removeprefix("Add to cart: "))
    await agent.expect("Cart (3)")
    await check_out(agent, shop, order)
    return order


async def check_out(agent: Agent, shop: ShopPage, order: Order) -> None:
    """From the product page, the cart in its cart: change a quantity, fill the checkout, place the order.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    first = order.first
    agent.step = "open the cart"
    cart = await agent.ref("link", "Cart (3)")
    await agent.act("browser_click", {"element": "the cart", "target": cart})
    await agent.expect("Your cart")
    agent.step = "change a quantity"
    quantity = await agent.ref("spinbutton", f"Quantity of {first.name}")
    await agent.act("browser_type", {"element": f"quantity of {first.name}", "target": quantity, "text": str(QUANTITY)})
    order.total = order_total(shop, order.names, QUANTITY)
    await agent.expect(f"Total: ${order.total:.2f} ({QUANTITY + 2} items)")
    agent.step = "checkout"
    checkout = await agent.ref("link", "Checkout")
    await agent.act("browser_click", {"element": "Checkout", "target": checkout})
    agent.step = "fill the form"
    fields = [
        {"name": label, "type": "textbox", "target": await agent.ref("textbox", label), "value": value}
        for label, value in CUSTOMER.items()
    ]
    fields.append(
        {"name": "Country", "type": "combobox", "target": await agent.ref("combobox", "Country"), "value": COUNTRY}
    )
    terms = await agent.ref("checkbox", "I accept the terms of sale")
    fields.append({"name": "I accept the terms of sale", "type": "checkbox", "target": terms, "value": "true"})
    await agent.act("browser_fill_form", {"fields": fields})
    agent.step = "place the order"
    place = await agent.ref("button", "Place order")
    await agent.act("browser_click", {"element": "Place order", "target": place})
    agent.step = "read the confirmation"
    for needle in (
        ORDER_CONFIRMED,
        f"Thank you, {CUSTOMER['Full name']}!",
        f"{QUANTITY + 2} items, total ${order.total:.2f}",
    ):
        await agent.expect(needle)


async def support_flow(agent: Agent, url: Callable[[str], str]) -> None:
    """Fill the form and its part in the iframe at once, send it, accept the confirm dialog, read that it was sent.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    agent.step = "open the form"
    await agent.act("browser_navigate", {"url": url("/support")})
    agent.step = "fill the form and its frame"
    fields = [
        {"name": "Your name", "type": "textbox", "target": await agent.ref("textbox", "Your name"),
         "value": CUSTOMER["Full name"]},
        {"name": "Your email", "type": "textbox", "target": await agent.ref("textbox", "Your email"),
         "value": CUSTOMER["Email"]},
        {"name": "Topic", "type": "combobox", "target": await agent.ref("combobox", "Topic"), "value": "Returns"},
        {"name": "Order number", "type": "textbox", "target": await agent.ref("textbox", "Order number"),
         "value": ORDER_NUMBER},
        {"name": "Message", "type": "textbox", "target": await agent.ref("textbox", "Message"),
         "value": "The lamp arrived broken; I would like to return it."},
    ]  # fmt: skip
    await agent.act("browser_fill_form", {"fields": fields})
    agent.step = "send"
    send = await agent.ref("button", "Send request")
    answer = await agent.act("browser_click", {"element": "Send request", "target": send})
    if MODAL not in answer:
        raise FlowFailed(f"the click on Send request shows no dialog: {answer[:1000]}")
    agent.step = "accept the dialog"
    await agent.act("browser_handle_dialog", {"accept": True})
    await agent.expect(f"{SUPPORT_SENT}: {CUSTOMER['Full name']}, order {ORDER_NUMBER}, topic Returns")


async def small_flow(agent: Agent, url: Callable[[str], str], opens_tab: bool = False) -> None:
    """Small pages: a form of three fields and a button, one field at a time; then a form that resets itself
    once sent, two notes saved with it.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    agent.step = "open the small form"
    if opens_tab:
        await agent.call("browser_tabs", {"action": "new"})
    await agent.act("browser_navigate", {"url": url("/small-form")})
    for label, value in (("Name", CUSTOMER["Full name"]), ("Email", CUSTOMER["Email"]), ("City", CUSTOMER["City"])):
        agent.step = f"type the {label.lower()}"
        field = await agent.ref("textbox", label)
        await agent.act("browser_type", {"element": label, "target": field, "text": value})
    agent.step = "sign up"
    button = await agent.ref("button", "Sign up")
    await agent.act("browser_click", {"element": "Sign up", "target": button})
    await agent.expect(f"{SIGNED_UP}: {CUSTOMER['Full name']}, {CUSTOMER['Email']}, {CUSTOMER['City']}")
    agent.step = "open the notes"
    await agent.act("browser_navigate", {"url": url("/small-notes")})
    for note in NOTES:
        agent.step = "type a note"
        field = await agent.ref("textbox", "Note")
        await agent.act("browser_type", {"element": "Note", "target": field, "text": note})
        agent.step = "save the note"
        button = await agent.ref("button", "Save note")
        await agent.act("browser_click", {"element": "Save note", "target": button})
        # The note is an item of the list now, and the field it was typed in is empty again.
        saved = re.compile(rf"^\s*- listitem(?: \[ref=[^\]\s]+\])?: {re.escape(note)}$", re.MULTILINE)
        await agent.expect_match(saved)
        if re.search(rf'textbox "Note"[^\n]*: {re.escape(note)}$', agent.view.text, re.MULTILINE):
            raise FlowFailed(f"the note's field still shows {note!r} after it was saved:\n{agent.view.text[:2000]}")


async def run_flows(
    agent: Agent, shop: ShopPage, url: Callable[[str], str], opens_tab: bool, names: tuple[str, ...] = FLOWS
) -> SideRun:
    """The flows on one side; a flow that fails is reported as failed, and the next one runs."""
    flows: list[FlowResult] = []
    for name in names:
        agent.start(name)
        started = time.perf_counter()
        try:
            if name == "shop":
                await shop_flow(agent, shop, url, opens_tab)
            elif name == "support":
                await support_flow(agent, url)
            else:
                await small_flow(agent, url, opens_tab and "shop" not in names)
            agent.flow.success = True
        except FlowFailed as exc:
            agent.flow.failure = f"{agent.step}: {exc}"
        agent.flow.seconds = time.perf_counter() - started
        flows.append(agent.flow)
        progress(
            f"tokens: {agent.name:<16} {name:<8} {'ok' if agent.flow.success else 'FAILED'}, {agent.flow.calls} calls,"
            f" {agent.flow.chars} characters, {agent.flow.seconds:.1f} s"
            + (f"; {agent.flow.failure[:300]}" if agent.flow.failure else "")
        )
    return SideRun(agent.name, flows)


SIDES = ("ours", "playwright", "playwright-none")


@dataclass
class TokensResults:
    products: int
    shop_snapshot_chars: dict[str, int]
    playwright_mcp: str
    browser: str
    runs: dict[str, list[SideRun]]  # side -> one SideRun per round

    def median(self, side: str, metric: str) -> float:
        return float(statistics.median(getattr(run, metric) for run in self.runs[side]))

    def success(self, side: str) -> bool:
        return all(run.success for run in self.runs[side])

    def best_playwright(self, metric: str) -> float:
        return min(self.median(side, metric) for side in SIDES[1:])

    def flow_median(self, side: str, flow: str, metric: str) -> float:
        return float(statistics.median(getattr(run.of(flow), metric) for run in self.runs[side]))

    def small_chars_ratio(self) -> tuple[float, float, float]:
        """The small pages' flow: ours' characters over the smaller of Playwright MCP's two runs, and both."""
        ours = self.flow_median("ours", "small", "chars")
        theirs = min(self.flow_median(side, "small", "chars") for side in SIDES[1:])
        return (ours / theirs if theirs else float("inf")), ours, theirs

    def ratio(self, metric: str, side: str) -> float:
        theirs = self.median(side, metric)
        return self.median("ours", metric) / theirs if theirs else float("inf")


def rounds(count: int) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Each round's order of the sides: each goes first in turn, so that the machine's load falls on all alike."""
    for number in range(count):
        shift = number % len(SIDES)
        yield number, SIDES[shift:] + SIDES[:shift]


async def bench_tokens(args: Any) -> TokensResults:
    """The flows through each side, ``args.tokens_runs`` rounds.

    Raises:
        BenchError: when a side cannot be started.
    """
    results: TokensResults = await unwrapped(_bench_tokens(args))
    return results


async def _bench_tokens(args: Any) -> TokensResults:
    shop = shop_page(args.tokens_products)
    async with shop_stage(shop, args.broker_cmd, "tokens") as stage:
        stack, workdir, pages, version = stage.stack, stage.workdir, stage.pages, stage.playwright_version
        settle = args.actions_playwright_settle
        agents = {
            "ours": Agent("ours", stage.ours, "answer"),
            "playwright": Agent(
                "playwright", await start_playwright(stack, workdir, "playwright", settle), "linked",
                workdir / "playwright",
            ),
            "playwright-none": Agent(
                "playwright-none",
                await start_playwright(stack, workdir, "playwright-none", settle, ("--snapshot-mode", "none")),
                "snapshot",
            ),
        }  # fmt: skip
        progress(f"tokens: {stage.browser_name} with the extension; Playwright MCP {version}; {pages.url('/shop')}")
        runs: dict[str, list[SideRun]] = {side: [] for side in SIDES}
        for number, order in rounds(args.tokens_runs):
            progress(f"tokens: round {number + 1} of {args.tokens_runs}")
            for side in order:
                # Ours opens a tab of its own for the task (Playwright MCP has its page from the start).
                runs[side].append(
                    await run_flows(agents[side], shop, pages.url, side == "ours", tuple(args.tokens_flows))
                )
        sizes = {side: await whole_snapshot_chars(agents[side], pages.url("/shop")) for side in SIDES[:2]}
    return TokensResults(args.tokens_products, sizes, version, stage.browser_name, runs)


async def whole_snapshot_chars(agent: Agent, url: str) -> int:
    """The characters of a plain browser_snapshot of the catalogue, for the report's scale."""
    agent.start("scale")
    await agent.call("browser_navigate", {"url": url})
    return len(await agent.call("browser_snapshot", {}))


# Report


def tokens_verdicts(results: TokensResults) -> list[Verdict]:
    ours_chars = results.median("ours", "chars")
    best_chars = results.best_playwright("chars")
    chars_ratio = ours_chars / best_chars if best_chars else float("inf")
    small_ratio, small_ours, small_theirs = results.small_chars_ratio()
    calls = {side: results.ratio("calls", side) for side in SIDES[1:]}
    seconds = {side: results.ratio("seconds", side) for side in SIDES[1:]}
    successes = {side: results.success(side) for side in SIDES}
    return [
        Verdict(
            "success equal to Playwright MCP's",
            all(success == successes["ours"] for success in successes.values()) and successes["ours"],
            ", ".join(f"{side} {'ok' if success else 'FAILED'}" for side, success in successes.items()),
            {side: float(success) for side, success in successes.items()},
        ),
        Verdict(
            f"characters read <= {CHARS_GOAL:g}x Playwright MCP's (the smaller of its two runs)",
            chars_ratio <= CHARS_GOAL,
            f"{chars_ratio:.2f}x ({ours_chars:.0f} / {best_chars:.0f})",
            {"ratio": chars_ratio, "ours": ours_chars, "playwright": best_chars},
        ),
        Verdict(
            f"small pages' flow: characters read <= {SMALL_CHARS_GOAL:g}x Playwright MCP's"
            " (the smaller of its two runs)",
            small_ratio <= SMALL_CHARS_GOAL,
            f"{small_ratio:.2f}x ({small_ours:.0f} / {small_theirs:.0f})",
            {"ratio": small_ratio, "ours": small_ours, "playwright": small_theirs},
        ),
        Verdict.at_most(f"calls <= {CALLS_GOAL:g}x Playwright MCP's", calls, CALLS_GOAL),
        Verdict.at_most(f"time <= {TIME_GOAL:g}x Playwright MCP's", seconds, TIME_GOAL),
    ]


def tokens_report(results: TokensResults, args: Any) -> str:
    settle = "its default, 500 ms" if args.actions_playwright_settle is None else f"{args.actions_playwright_settle} ms"
    lines = [
        "browser-mcp bench, tokens: a scripted agent's tasks through ours and through Playwright MCP, each side in its"
        f" own headless {results.browser}; MCP SDK client over stdio",
        f"ours: browser-mcp mcp -> browser-mcp serve -> the extension; Playwright MCP {results.playwright_mcp}"
        f" (--headless --isolated --executable-path {CHROMIUM}; --timeout-settle {settle}) with its defaults, and"
        " with --snapshot-mode none and a browser_snapshot after each action",
        f"shop: {results.products} products (a whole snapshot of the catalogue: ours"
        f" {results.shop_snapshot_chars.get('ours', 0)} characters, Playwright MCP"
        f" {results.shop_snapshot_chars.get('playwright', 0)}); search, filter, open a product, add three to the"
        " cart, change a quantity, fill the checkout's 8 fields, place the order, read the confirmation",
        "support: a form with a part in an iframe (one browser_fill_form), a confirm dialog on sending it",
        "small (judged apart, not in the totals): a form of three fields and a button filled one field at a time,"
        " then a form that resets itself once sent, two notes saved with it",
        "the agent reads the new state after every action: ours what the action answered (and a snapshot where it"
        " says it left something out); Playwright MCP the file its answer links (reading it counts as one call, as"
        " an agent's Read tool call is one) or, with --snapshot-mode none, a browser_snapshot",
        f"medians of {args.tokens_runs} round(s); characters: every text the agent read; totals: shop and support",
        "",
        f"  {'':<24} {'ours':>10} {'Playwright':>11} {'PW none':>10} {'ours/PW':>8} {'ours/none':>10}",
    ]

    def row(label: str, metric: str, fmt: str) -> str:
        values = [results.median(side, metric) for side in SIDES]
        ratios = [results.ratio(metric, side) for side in SIDES[1:]]
        return (
            f"  {label:<24} {values[0]:>10{fmt}} {values[1]:>11{fmt}} {values[2]:>10{fmt}}"
            f" {ratios[0]:>7.2f}x {ratios[1]:>9.2f}x"
        )

    def small_row() -> str:
        values = [results.flow_median(side, "small", "chars") for side in SIDES]
        ratios = [values[0] / value if value else float("inf") for value in values[1:]]
        return (
            f"  {'small: characters read':<24} {values[0]:>10.0f} {values[1]:>11.0f} {values[2]:>10.0f}"
            f" {ratios[0]:>7.2f}x {ratios[1]:>9.2f}x"
        )

    success = [("yes" if results.success(side) else "NO") for side in SIDES]
    lines += [
        f"  {'success':<24} {success[0]:>10} {success[1]:>11} {success[2]:>10}",
        row("calls", "calls", ".0f"),
        row("characters read", "chars", ".0f"),
        row("time, s", "seconds", ".2f"),
        small_row(),
        "",
        "  by flow (the last round):",
    ]
    for index, flow in enumerate(results.runs["ours"][-1].flows):
        cells = []
        for side in SIDES:
            found = results.runs[side][-1].flows[index]
            cells.append(f"{side} {found.calls} calls / {found.chars} chars / {found.seconds:.1f} s")
        lines.append(f"    {flow.flow:<8} " + "; ".join(cells))
    lines.append("  every read of the small pages' flow (the last round): characters, the step and its call")
    for side in SIDES:
        reads = results.runs[side][-1].of("small").reads
        lines.append(f"    {side}: " + "; ".join(f"{chars} {what}" for what, chars, _ms in reads))
    lines.append("  ours' largest reads (the last round): characters, the step and its call (the call's time)")
    for flow in results.runs["ours"][-1].flows:
        lines += [f"    {flow.flow:<8} {chars:>7}  {what} ({ms:.0f} ms)" for what, chars, ms in flow.largest(4)]
    failures = [
        f"  {side} {flow.flow}: {flow.failure[:400]}"
        for side in SIDES
        for run in results.runs[side]
        for flow in run.flows
        if flow.failure
    ]
    if failures:
        lines += ["", "failures:", *failures]
    lines += ["", "tokens goals (a benchmark, not a test):"]
    lines += [verdict.line() for verdict in tokens_verdicts(results)]
    return "\n".join(lines)


def tokens_json(results: TokensResults, args: Any) -> dict[str, Any]:
    def side(name: str) -> dict[str, Any]:
        return {
            "success": results.success(name),
            "calls": results.median(name, "calls"),
            "chars": results.median(name, "chars"),
            "seconds": results.median(name, "seconds"),
            "small_chars": results.flow_median(name, "small", "chars"),
            "runs": [asdict(run) for run in results.runs[name]],
        }

    return {
        "config": {
            "products": results.products,
            "runs": args.tokens_runs,
            "chromium": CHROMIUM,
            "browser": results.browser,
            "playwright_mcp": results.playwright_mcp,
            "playwright_settle_ms": args.actions_playwright_settle,
            "transport": "stdio (ours: browser-mcp mcp)",
            "playwright_file_read_counts_as_a_call": True,
        },
        "shop_snapshot_chars": results.shop_snapshot_chars,
        **{name.replace("-", "_"): side(name) for name in SIDES},
        "ratios": {
            "chars_vs_smaller": results.median("ours", "chars") / (results.best_playwright("chars") or float("nan")),
            "small_chars_vs_smaller": results.small_chars_ratio()[0],
            **{
                f"{metric}_vs_{name.replace('-', '_')}": results.ratio(metric, name)
                for metric in ("calls", "chars", "seconds")
                for name in SIDES[1:]
            },
        },
        "goals": [asdict(verdict) for verdict in tokens_verdicts(results)],
    }
