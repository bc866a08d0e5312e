"""The actions bench's sides and how it reads their snapshots.

A side is one way to reach the browser: ours through MCP (``browser-mcp mcp``) or REST, Playwright
MCP through MCP. Each answers the same snapshot and click requests and keeps its own timings; the
sides take turns, each turn in another order, so neither always goes first on a warm page. What a
snapshot holds is counted from its YAML lines (the refs by role), the same way for both.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import mcp_types as types
from mcp import Client

from ..support import READY_TIMEOUT, BenchError
from ..support.mcp_sides import text_of
from ..support.servers import Server
from ..support.shop_pages import ADD_BUTTON, PageCounts
from ..support.stats import TimingsOf

__all__ = [
    "Counts",
    "FIELD_ROLES",
    "McpSide",
    "OurSide",
    "PRODUCT_LINK",
    "PlaywrightSide",
    "REF",
    "REF_LINE",
    "RestSide",
    "Side",
    "SideResult",
    "in_turns",
    "ref_of",
    "refs_by_role",
    "turns",
    "up_to_product",
]


# The roles a form field has in the accessibility tree (Chromium's, as both sides report it).
FIELD_ROLES = frozenset(
    ("textbox", "searchbox", "combobox", "spinbutton", "checkbox", "radio", "listbox", "slider", "switch")
)
# A line of a snapshot that gives a ref, its role first: `- button "Add one" [ref=e4]`, or in YAML
# quotes where the name holds a colon: `- 'button "Add to cart: Mug 1" [ref=e9]': Add to cart`.
REF_LINE = re.compile(r"^\s*-\s+'?([A-Za-z]+)\b[^\n]*?\[ref=([^\]\s]+)\]", re.MULTILINE)
REF = re.compile(r"\[ref=[^\]\s]+\]")
# The target of a product's link, once per product: `- /url: /product/12`.
PRODUCT_LINK = re.compile(r"^\s*-\s+/url:\s+\"?/product/(\d+)\b", re.MULTILINE)


def refs_by_role(snapshot: str) -> Counter[str]:
    """How many refs the snapshot gives for each role."""
    return Counter(role.lower() for role, _ref in REF_LINE.findall(snapshot))


def up_to_product(snapshot: str, number: int) -> str:
    """The snapshot from its start to the line of product ``number``'s link (all of it for 0)."""
    if number == 0:
        return snapshot
    found = re.search(rf"^\s*-\s+/url:\s+\"?/product/{number}\b[^\n]*$", snapshot, re.MULTILINE)
    return snapshot if found is None else snapshot[: found.end()]


def ref_of(snapshot: str, role: str, name: str) -> str:
    """The ref of the first element of ``role`` named ``name`` in the snapshot.

    Raises:
        BenchError: when there is none.
    """
    pattern = rf'^\s*-\s+\'?{re.escape(role)}\s+"{re.escape(name)}"[^\n]*?\[ref=([^\]\s]+)\]'
    found = re.search(pattern, snapshot, re.MULTILINE)
    if found is None:
        raise BenchError(f"no {role} {name!r} with a ref in the snapshot:\n{snapshot[:2000]}")
    return found.group(1)


@dataclass
class Counts:
    """Refs of a snapshot by kind: what a client can act on."""

    links: int
    buttons: int
    fields: int
    refs: int  # every ref, whatever its role
    by_role: dict[str, int]

    @classmethod
    def of(cls, snapshot: str) -> Counts:
        roles = refs_by_role(snapshot)
        return cls(
            links=roles["link"],
            buttons=roles["button"],
            fields=sum(n for role, n in roles.items() if role in FIELD_ROLES),
            refs=sum(roles.values()),
            by_role=dict(sorted(roles.items())),
        )

    def covers(self, page: PageCounts) -> bool:
        return self.links >= page.links and self.buttons >= page.buttons and self.fields >= page.fields


@dataclass
class SideResult:
    side: str
    snapshot_ms: list[float] = field(default_factory=list)
    snapshot_chars: int = 0
    products_shown: int = 0  # products whose link the snapshot shows
    whole_page: bool = False  # the snapshot shows the page to its end
    same_part_chars: int = 0  # characters up to the last product both sides' snapshots show
    counts: Counts | None = None
    click_ms: list[float] = field(default_factory=list)
    clicks_seen: int = 0  # the counter after the clicks, read from a snapshot
    click_chars: int = 0  # characters of a click's answer
    frames_snapshot_ms: list[float] = field(default_factory=list)
    frames_snapshot_chars: int = 0
    frame_click_ms: list[float] = field(default_factory=list)  # in the cross-site frame
    frame_clicks_seen: int = 0

    snapshot = TimingsOf("snapshot_ms")
    click = TimingsOf("click_ms")
    frames_snapshot = TimingsOf("frames_snapshot_ms")
    frame_click = TimingsOf("frame_click_ms")


class Side:
    """A way to the built-in tools with a browser behind it, as the bench drives it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.result = SideResult(name)
        self.click_key = "ref"

    async def request(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        raise NotImplementedError

    async def open(self, url: str) -> None:
        """The page at ``url`` in the tab the next calls act on."""
        raise NotImplementedError

    async def learn_click_argument(self) -> None:
        """Which argument of ``browser_click`` names the element: ``self.click_key``."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, types.CallToolResult]:
        """Seconds from the call to its result, and the result.

        Raises:
            BenchError: when the tool answers with an error.
        """
        started = time.perf_counter()
        result = await self.request(tool, arguments)
        elapsed = time.perf_counter() - started
        if result.is_error:
            raise BenchError(f"{self.name}: {tool} {json.dumps(arguments)} failed: {text_of(result)[:500]}")
        return elapsed, result

    async def snapshot_until(self, *needles: str, settled: bool = False) -> str:
        """The first snapshot holding every one of ``needles`` (and, when ``settled``, the same as the one
        before it, refs aside: the page has loaded), within the ready timeout.

        Raises:
            BenchError: when none does in time.
        """
        deadline = time.monotonic() + READY_TIMEOUT
        last = before = ""
        while True:
            try:
                _, result = await self.call("browser_snapshot", {})
                last = text_of(result)
                if all(needle in last for needle in needles) and (not settled or REF.sub("", last) == before):
                    return last
                before = REF.sub("", last)
            except BenchError as exc:
                last = str(exc)
            if time.monotonic() > deadline:
                missing = " and ".join(repr(needle) for needle in needles if needle not in last) or "them"
                raise BenchError(f"{self.name}: no snapshot showed {missing}{' twice alike' if settled else ''}"
                                 f" in {READY_TIMEOUT:g} s; the last:\n{last[:3000]}")  # fmt: skip
            await asyncio.sleep(0.1)

    async def click(self, ref: str) -> tuple[float, types.CallToolResult]:
        return await self.call("browser_click", {"element": f"{ADD_BUTTON} button", self.click_key: ref})


class McpSide(Side):
    """Over MCP, through the official SDK client."""

    def __init__(self, name: str, client: Client) -> None:
        super().__init__(name)
        self.client = client

    async def request(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await self.client.call_tool(tool, arguments)

    async def learn_click_argument(self) -> None:
        """``ref`` (Playwright MCP until 0.0.7x) or ``target`` (its later versions): whichever the tool takes."""
        tools = {tool.name: tool for tool in (await self.client.list_tools()).tools}
        if "browser_click" not in tools:
            raise BenchError(f"{self.name}: no browser_click among {sorted(tools)}")
        properties = (tools["browser_click"].input_schema or {}).get("properties", {})
        self.click_key = "target" if "target" in properties and "ref" not in properties else "ref"


class OurSide(McpSide):
    async def open(self, url: str) -> None:
        """A new tab of this session's, which becomes its current tab."""
        _, result = await self.call("tabs", {"action": "open", "url": url})
        opened = json.loads(text_of(result)).get("opened")
        if not opened:
            raise BenchError(f"ours: tabs open answered {text_of(result)[:300]}")


class PlaywrightSide(McpSide):
    async def open(self, url: str) -> None:
        await self.call("browser_navigate", {"url": url})


class RestSide(Side):
    """Ours over REST (``POST /tabs/{id}/actions/{name}``): the same extension without MCP and the relay."""

    def __init__(self, http: aiohttp.ClientSession, broker: Server, click_key: str) -> None:
        super().__init__("ours-rest")
        self.http = http
        self.base = broker.url
        self.headers = {"Authorization": f"Bearer {broker.token}", "X-Session-Name": "bench"}
        self.click_key = click_key
        self.tab = ""

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        async with self.http.post(self.base + path, json=body, headers=self.headers) as response:
            return await response.json()

    async def request(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        answer = await self._post(f"/tabs/{self.tab}/actions/{tool.removeprefix('browser_')}", arguments)
        if "result" not in answer:
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(answer))], is_error=True)
        return types.CallToolResult.model_validate(answer["result"])

    async def open(self, url: str) -> None:
        """A new tab of the REST session's; the next calls name it."""
        answer = await self._post("/tabs", {"url": url})
        if "tab" not in answer:
            raise BenchError(f"ours-rest: POST /tabs answered {answer}")
        self.tab = answer["tab"]["ref"]


def turns(sides: list[Side], turn: int) -> list[Side]:
    """The sides in this turn's order: each goes first every other turn."""
    return sides if turn % 2 == 0 else sides[::-1]


async def in_turns(
    sides: list[Side], calls: int, act: Callable[[Side], Awaitable[tuple[float, types.CallToolResult]]]
) -> dict[str, list[tuple[float, str]]]:
    """``calls`` calls of ``act`` on each side, the sides taking turns: each side's (ms, text of the result)."""
    timed: dict[str, list[tuple[float, str]]] = {side.name: [] for side in sides}
    for turn in range(calls):
        for side in turns(sides, turn):
            elapsed, result = await act(side)
            timed[side.name].append((elapsed * 1e3, text_of(result)))
    return timed
