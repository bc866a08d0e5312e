"""The soak suite's clients: one door each to the broker, and the work every one of them does.

A door is how a client speaks to the broker, with the same few verbs for all:

- :class:`McpDoor`: the official MCP SDK client, over Streamable HTTP (``/mcp``) or over stdio
  through a spawned ``browser-mcp mcp``, in either protocol era (2025-11-25 or 2026-07-28);
- :class:`RestDoor`: plain aiohttp on the REST routes, in a session of its own (``X-Session-Id``).

:func:`work` is one client's loop on its own tabs of the soak page (``support.pages.SOAK_PAGE``):
snapshot, type a nonce into the note, click "Add one", ask the page tool for the page's state,
now and then navigate to the next step, close a tab and open another. Every answer is checked
against what was asked: the page it names must be the client's own, its URL, counts and note
those the client made. Each call lands in :class:`Tally` as ok, an error answer, wrong,
misrouted (it names another client's page) or lost (no answer: a timeout or a broken door).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import random
import re
import secrets
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ..support import CALL_TIMEOUT
from ..support.mcp_clients import LEGACY, MODERN, loopback_http, mcp_env, relay_command
from ..support.servers import Server

# A client that closes while its event stream brings a message has the SDK log that message's
# traceback: the SDK's own teardown, not an answer lost (every call is tallied below).
logging.getLogger("mcp.client.streamable_http").setLevel(logging.CRITICAL)

OUTCOMES = ("ok", "error", "wrong", "misrouted", "lost")
KINDS = ("mcp-http-2025", "mcp-http-2026", "mcp-stdio-2025", "mcp-stdio-2026", "rest")
OTHER_CLIENT = re.compile(r"Soak page of (c\d+)|Soak (c\d+) tab")


class Refused(Exception):
    """The broker answered with an error: its text."""


@dataclass
class Tally:
    """Every call's outcome and latency by tool, and the first few problems, said in full."""

    outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    problems: list[str] = field(default_factory=list)

    def add(self, tool: str, outcome: str, ms: float, problem: str = "") -> None:
        self.outcomes[tool][outcome] += 1
        if outcome == "ok":
            self.latencies_ms[tool].append(ms)
        elif len(self.problems) < 20:
            self.problems.append(f"{tool}: {outcome}: {problem[:300]}")


class Door(Protocol):
    """A client's way to the broker: tabs, built-in tools by their MCP names, the page tool."""

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def open_tab(self, url: str) -> str: ...
    async def close_tab(self, ref: str) -> None: ...
    async def action(self, ref: str, tool: str, args: dict[str, Any]) -> str: ...
    async def page_tool(self, ref: str, name: str, args: dict[str, Any]) -> Any: ...


class McpDoor(Door):
    """The MCP SDK client over HTTP or stdio (``browser-mcp mcp``), in ``era``, named ``name``."""

    def __init__(self, broker: Server, workdir: Path, name: str, transport: str, era: str) -> None:
        self.broker, self.workdir, self.name, self.transport, self.era = broker, workdir, name, transport, era
        self.stack = contextlib.AsyncExitStack()
        self.client: Client | None = None

    async def open(self) -> None:
        if self.transport == "http":
            http = await self.stack.enter_async_context(loopback_http({"Authorization": f"Bearer {self.broker.token}"}))
            target: Any = streamable_http_client(self.broker.url + "/mcp", http_client=http)
        else:
            command, *args = relay_command(self.broker)
            params = StdioServerParameters(
                command=command, args=args, env={**mcp_env(self.workdir), "LOG_LEVEL": "warning"}
            )
            errlog = self.stack.enter_context((self.workdir / f"{self.name}-stdio.log").open("a"))
            target = stdio_client(params, errlog=errlog)
        self.client = await self.stack.enter_async_context(
            Client(target, mode=self.era, client_info=types.Implementation(name=self.name, version="1"),
                   read_timeout_seconds=CALL_TIMEOUT)
        )  # fmt: skip

    async def close(self) -> None:
        await self.stack.aclose()
        self.stack, self.client = contextlib.AsyncExitStack(), None

    async def _call(self, tool: str, args: dict[str, Any]) -> str:
        assert self.client is not None
        result = await self.client.call_tool(tool, args)
        text = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
        if result.is_error:
            raise Refused(text)
        return text

    async def open_tab(self, url: str) -> str:
        opened = json.loads(await self._call("tabs", {"action": "open", "url": url, "focus": False}))
        return str(opened["opened"]["ref"])

    async def close_tab(self, ref: str) -> None:
        await self._call("tabs", {"action": "close", "tab": ref})

    async def action(self, ref: str, tool: str, args: dict[str, Any]) -> str:
        return await self._call(tool, {**args, "tab": ref})

    async def page_tool(self, ref: str, name: str, args: dict[str, Any]) -> Any:
        return json.loads(await self._call("call_page_tool", {"tab": ref, "tool": name, "arguments": args}))


class RestDoor(Door):
    """The REST routes in the session ``name``, which ends (its tabs released) on close."""

    def __init__(self, broker: Server, name: str) -> None:
        self.broker, self.name = broker, name
        self.http: aiohttp.ClientSession | None = None

    async def open(self) -> None:
        headers = {"Authorization": f"Bearer {self.broker.token}", "X-Session-Id": self.name}
        timeout = aiohttp.ClientTimeout(total=CALL_TIMEOUT)
        self.http = aiohttp.ClientSession(self.broker.url, headers=headers, timeout=timeout)

    async def close(self) -> None:
        if self.http is not None:
            with contextlib.suppress(aiohttp.ClientError, Refused):
                await self._send("DELETE", f"/sessions/{self.name}")
            await self.http.close()
            self.http = None

    async def _send(self, method: str, path: str, body: Any = None) -> Any:
        assert self.http is not None
        async with self.http.request(method, path, json=body) as response:
            answer = await response.json()
        if response.status != 200:
            raise Refused(f"{response.status} {answer}")
        return answer

    async def open_tab(self, url: str) -> str:
        return str((await self._send("POST", "/tabs", {"url": url, "focus": False}))["tab"]["ref"])

    async def close_tab(self, ref: str) -> None:
        await self._send("DELETE", f"/tabs/{ref}")

    async def action(self, ref: str, tool: str, args: dict[str, Any]) -> str:
        answer = await self._send("POST", f"/tabs/{ref}/actions/{tool.removeprefix('browser_')}", args)
        return "".join(part.get("text", "") for part in answer["result"]["content"])

    async def page_tool(self, ref: str, name: str, args: dict[str, Any]) -> Any:
        return (await self._send("POST", f"/tabs/{ref}/tools/{name}", args))["result"]


def door_of(kind: str, broker: Server, workdir: Path, name: str) -> Door:
    if kind == "rest":
        return RestDoor(broker, f"soak-{name}")
    _, transport, year = kind.split("-")
    return McpDoor(broker, workdir, name, transport, LEGACY if year == "2025" else MODERN)


class Wrong(Exception):
    """The answer is not what was asked for; ``outcome`` says how (wrong or misrouted)."""

    def __init__(self, outcome: str, why: str) -> None:
        super().__init__(why)
        self.outcome = outcome


def ref_of(snapshot: str, line: str) -> str:
    # A state may come between the name and the ref: `[active]` on what has the focus.
    found = re.search(rf"- {re.escape(line)}[^\n]*?\[ref=(e\d+)\]", snapshot)
    if found is None:
        raise Wrong("wrong", f"no {line!r} in the snapshot: {snapshot[:300]!r}")
    return found.group(1)


@dataclass
class SoakTab:
    """One of a client's tabs: its ref, number and step (its URL), and what the client did there."""

    ref: str
    number: int
    step: int = 0
    clicks: int = 0
    note: str = ""


class SoakClient:
    """One soak client: its name and door, its tabs, and the pages it opens."""

    def __init__(self, name: str, kind: str, door: Door, site: str, tally: Tally) -> None:
        self.name, self.kind, self.door, self.site, self.tally = name, kind, door, site, tally
        self.tabs: list[SoakTab] = []
        self.numbers = itertools.count(1)
        self.restart_every_s: float | None = None  # this client restarts that often
        self.restarts = 0

    def url(self, tab: SoakTab) -> str:
        return f"{self.site}/soak?client={self.name}&tab={tab.number}&step={tab.step}"

    def heading(self, tab: SoakTab) -> str:
        return f"Soak page of {self.name}, tab {tab.number}, step {tab.step}"

    def check_page(self, text: str, tab: SoakTab, whole: bool = True) -> None:
        """An answer must name no other client's page; a ``whole`` page (a snapshot, a navigation's
        answer) must show this tab's heading. An action's answer shows what changed alone."""
        for found in OTHER_CLIENT.finditer(text):
            if self.name not in found.groups():
                raise Wrong("misrouted", f"{self.name} tab {tab.number} got {found.group(0)!r}")
        if whole and self.heading(tab) not in text:
            raise Wrong("wrong", f"expected {self.heading(tab)!r} in {text[:300]!r}")

    async def timed(self, tool: str, run: Any) -> Any:
        """``run``'s result, its outcome and latency tallied under ``tool``; None when it failed."""
        started = time.perf_counter()
        try:
            async with asyncio.timeout(CALL_TIMEOUT + 5):
                result = await run
        except Wrong as wrong:
            self.tally.add(tool, wrong.outcome, 0.0, str(wrong))
        except Refused as refused:
            self.tally.add(tool, "error", 0.0, f"{self.name}: {refused}")
        except (TimeoutError, OSError, aiohttp.ClientError, BaseExceptionGroup, RuntimeError) as lost:
            self.tally.add(tool, "lost", 0.0, f"{self.name}: {type(lost).__name__}: {lost}")
        else:
            self.tally.add(tool, "ok", (time.perf_counter() - started) * 1000)
            return result if result is not None else True
        return None

    async def open_tab(self) -> None:
        tab = SoakTab("", next(self.numbers))

        async def opening() -> str:
            return await self.door.open_tab(self.url(tab))

        ref = await self.timed("tabs open", opening())
        if ref:
            tab.ref = ref
            self.tabs.append(tab)

    async def close_tab(self, tab: SoakTab) -> None:
        self.tabs.remove(tab)
        await self.timed("tabs close", self.door.close_tab(tab.ref))

    async def round(self, tab: SoakTab, navigate: bool) -> None:
        """Snapshot, type, click, the page tool; then the next step when ``navigate``."""

        async def snapshot() -> str:
            text = await self.door.action(tab.ref, "browser_snapshot", {})
            self.check_page(text, tab)
            return text

        text = await self.timed("browser_snapshot", snapshot())
        if not text:
            return
        nonce = secrets.token_hex(4)

        async def type_note() -> None:
            args = {"element": "Note", "target": ref_of(text, 'textbox "Note"'), "text": nonce}
            self.check_page(await self.door.action(tab.ref, "browser_type", args), tab, whole=False)
            tab.note = nonce

        async def click() -> None:
            args = {"element": "Add one", "target": ref_of(text, 'button "Add one"')}
            answer = await self.door.action(tab.ref, "browser_click", args)
            tab.clicks += 1
            self.check_page(answer, tab, whole=False)

        async def state() -> None:
            found = await self.door.page_tool(tab.ref, "soak_state", {"nonce": nonce})
            asked = {"client": self.name, "tab": str(tab.number), "step": str(tab.step)}
            if {key: found.get(key) for key in asked} != asked:
                raise Wrong("misrouted", f"{self.name} asked {asked}, the page said {found}")
            if found != {**asked, "clicks": tab.clicks, "note": tab.note, "nonce": nonce}:
                raise Wrong("wrong", f"{self.name} expected {tab.clicks} clicks, note {tab.note!r}: {found}")

        await self.timed("browser_type", type_note())
        await self.timed("browser_click", click())
        await self.timed("page tool", state())
        if navigate:
            tab.step += 1

            async def onward() -> None:
                answer = await self.door.action(tab.ref, "browser_navigate", {"url": self.url(tab)})
                tab.clicks, tab.note = 0, ""
                if f"- Page URL: {self.url(tab)}\n" not in answer:
                    raise Wrong("wrong", f"{self.name} expected {self.url(tab)} in {answer[:300]!r}")
                self.check_page(answer, tab)

            await self.timed("browser_navigate", onward())


async def work(client: SoakClient, until: float, pause_s: float, tabs: int, rng: random.Random) -> None:
    """The client's life: its door opened, then its loop on its own tabs until ``until``
    (monotonic): a round on one of its tabs, then a pause of about ``pause_s``; every fourth round
    moves a tab on a step, every tenth closes one and opens another; a restart when due. Then its
    tabs closed and its door too. All in one task: the SDK client's task groups must end in the
    task they began in."""
    await client.door.open()
    restart_at = time.monotonic() + (client.restart_every_s or float("inf"))
    try:
        for turn in itertools.count(1):
            if time.monotonic() >= until:
                break
            if time.monotonic() >= restart_at:
                await close_all(client)
                await client.door.close()
                await client.door.open()
                client.restarts += 1
                restart_at = time.monotonic() + (client.restart_every_s or float("inf"))
            for _ in range(tabs - len(client.tabs)):
                await client.open_tab()
            if client.tabs:
                await client.round(rng.choice(client.tabs), navigate=turn % 4 == 0)
            if turn % 10 == 0 and client.tabs:
                await client.close_tab(rng.choice(client.tabs))
                await client.open_tab()
            await asyncio.sleep(rng.uniform(0.5, 1.5) * pause_s)
        await close_all(client)
    finally:
        await client.door.close()


async def close_all(client: SoakClient) -> None:
    for tab in list(client.tabs):
        await client.close_tab(tab)
