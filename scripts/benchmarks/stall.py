"""The stall part of scripts/bench: a client's page tool calls while another floods refreshes of the
tools of a tab whose page never finishes loading.

The bench runs ``browser-mcp serve --port 0`` and headless Chromium with the project's extension
(or ``--stall-extension``'s), led to the broker by the native host (``support.browser``), and
serves two sites: on 127.0.0.1 a page declaring an ``echo`` tool, which a client (a client token,
REST) opens in a tab of its own and calls; on ``localhost`` (another site: a process of its own,
as a hostile site would have) a page whose server sends a byte every two seconds and never ends it,
which another client token opens, then floods with ``GET /tabs/{id}/tools?refresh=true``,
``--stall-rate`` a second, each on its own without waiting for the others to answer.

Measured, each call timed from the request to its answer:

1. quiet: the calls with the endless tab open and nobody asking about it;
2. flooded: the calls while the flood runs, from its first answer on (the flood at its height);
   the flood's refreshes are timed as well.

The goal: the flooded calls' p99 at most 1.5 x the quiet p99. A benchmark, never a test:
verdicts are printed, the exit status ignores them.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from playwright.async_api import async_playwright

from broker.core.security import client_token
from tests.harness.chromium import EXTENSION
from tests.harness.stall_attack import endless_page

from .support import BenchError, progress
from .support.browser import Place, chromium, install_native_host
from .support.mcp_sides import wait_joined
from .support.report import Verdict, goal_lines
from .support.servers import start_broker
from .support.stats import percentile

P99_GOAL = 1.5  # the flooded calls' p99, over the quiet p99
TOOLS_TIMEOUT_S = 30.0
TOOL_PAGE = """<!doctype html><meta charset="utf-8"><title>Bench echo</title><script>
document.modelContext.registerTool({
  name: "echo", description: "Echo the text back", inputSchema: {type: "object", properties: {text: {type: "string"}}},
  execute: ({text}) => ({echoed: text}),
});
</script><p>echo</p>"""


@dataclass
class Phase:
    name: str
    call_ms: list[float] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return percentile(self.call_ms, 0.50)

    @property
    def p99(self) -> float:
        return percentile(self.call_ms, 0.99)

    @property
    def max(self) -> float:
        return max(self.call_ms)


@dataclass
class StallResults:
    browser: str
    extension: str
    rate: float
    quiet: Phase
    flooded: Phase
    refresh_ms: list[float]  # the flood's refreshes that answered, each timed
    refresh_failures: list[str]  # and those answered with an error

    @property
    def ratio(self) -> float:
        return self.flooded.p99 / self.quiet.p99


class Client:
    """A client token's REST session."""

    def __init__(self, http: aiohttp.ClientSession, base: str, token: str, name: str) -> None:
        self.http = http
        self.base = base
        self.headers = {"Authorization": f"Bearer {client_token(token, name)}"}

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.http.request(method, self.base + path, json=body, headers=self.headers) as response:
            return response.status, await response.json()

    async def open(self, url: str) -> str:
        status, answer = await self.request("POST", "/tabs", {"url": url})
        if status != 200:
            raise BenchError(f"POST /tabs answered {status}: {answer}")
        return str(answer["tab"]["ref"])

    async def wait_tool(self, ref: str, name: str) -> None:
        deadline = time.monotonic() + TOOLS_TIMEOUT_S
        while True:
            _, answer = await self.request("GET", f"/tabs/{ref}/tools?refresh=true")
            if any(tool.get("name") == name for tool in answer.get("tools", [])):
                return
            if time.monotonic() > deadline:
                raise BenchError(f"tab {ref} never declared {name!r}: {answer}")

    async def call(self, ref: str, n: int) -> float:
        """Milliseconds to the echo's answer. Raises: BenchError, when the call fails."""
        started = time.perf_counter()
        status, answer = await self.request("POST", f"/tabs/{ref}/tools/echo", {"text": f"call {n}"})
        elapsed = (time.perf_counter() - started) * 1e3
        if status != 200 or answer.get("result", {}).get("echoed") != f"call {n}":
            raise BenchError(f"a call failed ({status}): {answer}")
        return elapsed


@contextlib.asynccontextmanager
async def serve_sites() -> AsyncIterator[int]:
    """The tool page and the endless page on one port (reached as 127.0.0.1 and as localhost)."""

    async def tool_page(_request: web.Request) -> web.Response:
        return web.Response(text=TOOL_PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/echo", tool_page)
    app.router.add_get("/endless", endless_page)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def flood(client: Client, ref: str, rate: float, results: StallResults) -> AsyncIterator[None]:
    """Refreshes of the tab's tools, ``rate`` a second, each on its own, timed into ``results``;
    entered once the first has answered: by then as many are in flight as the flood keeps there
    (some 110 where each took 7 s)."""
    answered = asyncio.Event()
    asked: set[asyncio.Task[None]] = set()

    async def refresh() -> None:
        started = time.perf_counter()
        status, answer = await client.request("GET", f"/tabs/{ref}/tools?refresh=true")
        if status == 200:
            results.refresh_ms.append((time.perf_counter() - started) * 1e3)
        else:
            results.refresh_failures.append(f"{status}: {answer.get('error', answer)}")
        answered.set()

    async def pace() -> None:
        while True:
            task = asyncio.create_task(refresh())
            asked.add(task)
            task.add_done_callback(asked.discard)
            await asyncio.sleep(1 / rate)

    pacing = asyncio.create_task(pace())
    try:
        async with asyncio.timeout(TOOLS_TIMEOUT_S):
            await answered.wait()
        yield
    finally:
        for task in (pacing, *asked):
            task.cancel()
        await asyncio.gather(pacing, *asked, return_exceptions=True)


async def bench_stall(args: Any) -> StallResults:
    """The quiet calls, then the flooded ones, in one browser.

    Raises:
        BenchError: when the broker or the browser cannot be started, or a call fails.
    """
    extension = args.stall_extension or EXTENSION
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-stall-") as tmp:
        workdir = Path(tmp)
        place = Place(workdir / "browser")
        place.create()
        await install_native_host(place)
        broker = await start_broker(workdir, shlex.split(args.broker_cmd), 0, place.discovery_dir)
        try:
            async with (
                serve_sites() as port,
                async_playwright() as playwright,
                chromium(playwright, place, extension) as browser,
                aiohttp.ClientSession() as http,
            ):
                browser_name = await wait_joined(broker, browser.instance_id)
                caller = Client(http, broker.url, broker.token, "bench-caller")
                flooder = Client(http, broker.url, broker.token, "bench-flooder")
                own = await caller.open(f"http://127.0.0.1:{port}/echo")
                await caller.wait_tool(own, "echo")
                slow = await flooder.open(f"http://localhost:{port}/endless")
                # Its first refresh over, the endless tab is no longer one opened moments ago.
                await flooder.request("GET", f"/tabs/{slow}/tools?refresh=true")
                for n in range(args.stall_warmup):
                    await caller.call(own, n)
                results = StallResults(
                    browser_name, str(extension), args.stall_rate, Phase("quiet"), Phase("flooded"), [], []
                )
                results.quiet.call_ms = [await caller.call(own, n) for n in range(args.stall_calls)]
                progress(f"stall: quiet p50 {results.quiet.p50:.1f} ms, p99 {results.quiet.p99:.1f} ms")
                async with flood(flooder, slow, args.stall_rate, results):
                    results.flooded.call_ms = [await caller.call(own, n) for n in range(args.stall_calls)]
                progress(
                    f"stall: flooded p50 {results.flooded.p50:.1f} ms, p99 {results.flooded.p99:.1f} ms;"
                    f" {len(results.refresh_ms)} refreshes answered, {len(results.refresh_failures)} failed"
                )
        finally:
            await broker.stop()
    return results


def stall_verdicts(results: StallResults) -> list[Verdict]:
    return [
        Verdict(
            f"flooded call p99 <= {P99_GOAL:g}x the quiet p99",
            results.ratio <= P99_GOAL,
            f"{results.ratio:.2f}x ({results.flooded.p99:.1f} ms / {results.quiet.p99:.1f} ms)",
            {"ratio": results.ratio, "p99_ms": results.flooded.p99, "quiet_p99_ms": results.quiet.p99},
        )
    ]


def _refresh_line(results: StallResults) -> str:
    if not results.refresh_ms:
        return f"the flood's refreshes: none answered ({len(results.refresh_failures)} failed)"
    return (
        f"the flood's refreshes: {len(results.refresh_ms)} answered, p50 {percentile(results.refresh_ms, 0.5):.1f} ms,"
        f" p99 {percentile(results.refresh_ms, 0.99):.1f} ms, max {max(results.refresh_ms):.1f} ms;"
        f" {len(results.refresh_failures)} failed"
    )


def stall_report(results: StallResults, args: Any) -> str:
    lines = [
        "browser-mcp bench, stall: a client's page tool calls in its tab while another client floods refreshes"
        f" of the tools of a tab whose page never finishes loading; headless {results.browser}",
        f"extension: {results.extension}",
        f"{args.stall_calls} calls per phase ({args.stall_warmup} of warm-up before the quiet ones); the flood asks"
        f" {results.rate:g} refreshes a second from localhost, another site, each without waiting for the others",
        "",
        f"  {'phase':<8} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}",
    ]
    for phase in (results.quiet, results.flooded):
        lines.append(f"  {phase.name:<8} {phase.p50:>9.1f} {phase.p99:>9.1f} {phase.max:>9.1f}")
    lines += ["", _refresh_line(results), "", *goal_lines("goals:", stall_verdicts(results))]
    return "\n".join(lines)


def stall_json(results: StallResults, _args: Any) -> dict[str, Any]:
    return {
        "browser": results.browser,
        "extension": results.extension,
        "rate": results.rate,
        "phases": [
            {
                "name": phase.name,
                "p50_ms": phase.p50,
                "p99_ms": phase.p99,
                "max_ms": phase.max,
                "call_ms": phase.call_ms,
            }
            for phase in (results.quiet, results.flooded)
        ],
        "refresh_ms": results.refresh_ms,
        "refresh_failures": results.refresh_failures,
        "verdicts": [verdict.brief_json() for verdict in stall_verdicts(results)],
    }
