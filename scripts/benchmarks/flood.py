"""The flood part of scripts/bench: a client's clicks while a page floods the extension.

The page's own world has no extension messaging (the manifest names no web page in
``externally_connectable``); what reaches the extension is the polyfill's signal to waker.js, a
window event the page can dispatch too, which the waker turns into one request per document.

The bench runs ``browser-mcp serve --port 0`` and headless Chromium with the project's extension,
led to the broker by the native host (``support.browser``), and serves two pages on 127.0.0.1: the
bench's counter page, which a REST session opens in a tab of its own and clicks ("Add one", by the
ref a snapshot gave, ``POST /tabs/{id}/actions/click``), and the tests' hostile page
(``tests/pages/flood.html``), which the person opens in another tab at ``localhost`` (another site:
a process of its own, as a hostile site would have).

Measured, each click timed from the request to its answer:

1. quiet: the clicks with no flooding page open;
2. for each attack, the clicks while the page sends ``--flood-messages`` of them (fewer make a
   shorter run): ``kept``, messages through a reference to ``chrome.runtime.sendMessage`` kept from
   the start, 100 between yields (the page has none: each fails in the page); ``loop``, those
   messages in one loop, never yielding; ``signal``, the waker's signal, 100 between yields;
   ``signal-loop``, the signal in one loop.

The goal: with a flooding page open, the click's p99 at most 1.5 x the quiet p99. After each
attack the page is closed and the bench waits for clicks to be quick again. A benchmark, never a
test: verdicts are printed, the exit status ignores them.
"""

from __future__ import annotations

import re
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from playwright.async_api import async_playwright

from broker.core.security import PROJECT_EXTENSION_ID

from .support import ROOT, BenchError, progress
from .support.browser import Place, chromium, install_native_host
from .support.mcp_sides import wait_joined
from .support.pages import COUNTER_TEXT, SMALL_PAGE
from .support.report import Verdict, goal_lines
from .support.servers import start_broker
from .support.shop_pages import ADD_BUTTON
from .support.stats import percentile

FLOOD_PAGE = ROOT / "tests" / "pages" / "flood.html"
P99_GOAL = 1.5  # the click's p99 with a flooding page open, over the quiet p99
# what the page sends, how many between yields (0: all in one loop)
ATTACKS = {"kept": ("message", 100), "loop": ("message", 0), "signal": ("signal", 100), "signal-loop": ("signal", 0)}
CALM_CLICK_MS = 500.0  # after an attack, clicks this quick again mean the flood is over
CALM_TIMEOUT_S = 600.0
REF = re.compile(rf'button "{re.escape(ADD_BUTTON)}" \[ref=([^\]\s]+)\]')


@dataclass
class Phase:
    name: str
    click_ms: list[float] = field(default_factory=list)
    sent: int = 0  # messages the page had sent when the clicks were done
    refused: int = 0  # of those, the ones the page could not send at all
    flood_s: float = 0.0  # how long the page took to send them all (0 when it had not finished)
    calm_s: float = 0.0  # after the page closed, until clicks were quick again
    failures: list[str] = field(default_factory=list)  # the clicks that failed, and why

    @property
    def p50(self) -> float:
        return percentile(self.click_ms, 0.50)

    @property
    def p99(self) -> float:
        return percentile(self.click_ms, 0.99)

    @property
    def max(self) -> float:
        return max(self.click_ms)


@dataclass
class FloodResults:
    browser: str
    messages: int
    clicks: int
    phases: list[Phase]

    def ratio(self, phase: Phase) -> float:
        return phase.p99 / self.phases[0].p99


class Clicker:
    """A REST session clicking the counter's button in a tab of its own."""

    def __init__(self, http: aiohttp.ClientSession, base: str, token: str) -> None:
        self.http = http
        self.base = base
        self.headers = {"Authorization": f"Bearer {token}", "X-Session-Name": "bench-flood"}
        self.tab = ""
        self.ref = ""
        self.count = 0

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        async with self.http.post(self.base + path, json=body, headers=self.headers) as response:
            return await response.json()

    async def open(self, url: str) -> None:
        answer = await self.post("/tabs", {"url": url})
        if "tab" not in answer:
            raise BenchError(f"POST /tabs answered {answer}")
        self.tab = answer["tab"]["ref"]
        deadline = time.monotonic() + 20
        while not self.ref:
            text = str(await self.post(f"/tabs/{self.tab}/actions/snapshot", {}))
            found = REF.search(text)
            if found:
                self.ref = found.group(1)
            elif time.monotonic() > deadline:
                raise BenchError(f"no {ADD_BUTTON!r} button in the counter's snapshot: {text[:1000]}")

    async def click(self, failures: list[str] | None = None) -> float:
        """Milliseconds to the click's answer; a failed one is kept in ``failures`` (raised without)."""
        started = time.perf_counter()
        answer = await self.post(f"/tabs/{self.tab}/actions/click", {"target": self.ref})
        elapsed = (time.perf_counter() - started) * 1e3
        if "result" not in answer:
            if failures is None:
                raise BenchError(f"a click failed: {answer}")
            failures.append(str(answer.get("error", answer)))
            return elapsed
        self.count += 1
        return elapsed

    async def check_count(self) -> None:
        text = str(await self.post(f"/tabs/{self.tab}/actions/snapshot", {}))
        if COUNTER_TEXT.format(self.count) not in text:
            raise BenchError(f"the counter does not show the {self.count} clicks made: {text[:1000]}")


async def serve_pages() -> tuple[web.AppRunner, int]:
    app = web.Application()

    async def counter(_request: web.Request) -> web.Response:
        return web.Response(text=SMALL_PAGE, content_type="text/html")

    async def flood(_request: web.Request) -> web.Response:
        return web.Response(text=FLOOD_PAGE.read_text(), content_type="text/html")

    app.router.add_get("/counter", counter)
    app.router.add_get("/flood", flood)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, runner.addresses[0][1]


async def bench_flood(args: Any) -> FloodResults:
    """The quiet clicks, then each attack's, in one browser.

    Raises:
        BenchError: when the broker or the browser cannot be started, or a click fails.
    """
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-flood-") as tmp:
        workdir = Path(tmp)
        place = Place(workdir / "browser")
        place.create()
        await install_native_host(place)
        broker = await start_broker(workdir, shlex.split(args.broker_cmd), 0, place.discovery_dir)
        runner, port = await serve_pages()
        try:
            async with async_playwright() as playwright, chromium(playwright, place) as browser:
                browser_name = await wait_joined(broker, browser.instance_id)
                async with aiohttp.ClientSession() as http:
                    clicker = Clicker(http, broker.url, broker.token)
                    await clicker.open(f"http://127.0.0.1:{port}/counter")
                    for _ in range(args.flood_click_warmup):
                        await clicker.click()
                    phases = [Phase("quiet", [await clicker.click() for _ in range(args.flood_clicks)])]
                    progress(f"flood: quiet p50 {phases[0].p50:.1f} ms, p99 {phases[0].p99:.1f} ms")
                    for attack in args.flood_attacks:
                        phases.append(await attacked(browser.context, clicker, port, attack, args))
                    await clicker.check_count()
        finally:
            await runner.cleanup()
            await broker.stop()
    return FloodResults(browser_name, args.flood_messages, args.flood_clicks, phases)


async def attacked(context: Any, clicker: Clicker, port: int, attack: str, args: Any) -> Phase:
    """The clicks while the page floods with ``attack``; then until clicks are quick again."""
    how, chunk = ATTACKS[attack]
    page = await context.new_page()
    await page.goto(f"http://localhost:{port}/flood?id={PROJECT_EXTENSION_ID}")
    phase = Phase(attack)
    started = time.monotonic()
    count = args.flood_messages
    await page.evaluate(f"window.startedAt = performance.now(); flood({count}, {how!r}, {chunk or count})")
    # A click may fail meanwhile (the broker gives up on it after its deadline): kept, with its time.
    phase.click_ms = [await clicker.click(phase.failures) for _ in range(args.flood_clicks)]
    state = await page.evaluate("[window.sent, window.done, performance.now() - window.startedAt, window.failures]")
    phase.sent = int(state[0])
    phase.refused = int(state[3])
    phase.flood_s = float(state[2]) / 1e3 if state[1] else 0.0
    await page.close()
    closed = time.monotonic()
    while await clicker.click([]) > CALM_CLICK_MS:
        if time.monotonic() - closed > CALM_TIMEOUT_S:
            raise BenchError(f"clicks were still slow {CALM_TIMEOUT_S:g} s after the {attack} flood's page closed")
    phase.calm_s = time.monotonic() - closed
    progress(
        f"flood: {attack:<11} p50 {phase.p50:.1f} ms, p99 {phase.p99:.1f} ms, max {phase.max:.1f} ms;"
        f" {phase.sent} messages sent {time.monotonic() - started:.1f} s after it began;"
        f" {len(phase.failures)} clicks failed"
    )
    return phase


def flood_verdicts(results: FloodResults) -> list[Verdict]:
    quiet = results.phases[0]
    return [
        Verdict(
            f"{phase.name} flood: click p99 <= {P99_GOAL:g}x the quiet p99",
            results.ratio(phase) <= P99_GOAL,
            f"{results.ratio(phase):.2f}x ({phase.p99:.1f} ms / {quiet.p99:.1f} ms)",
            {"ratio": results.ratio(phase), "p99_ms": phase.p99, "quiet_p99_ms": quiet.p99},
        )
        for phase in results.phases[1:]
    ]


def flood_report(results: FloodResults, args: Any) -> str:
    lines = [
        f"browser-mcp bench, flood: a REST client's clicks in one tab while a page in another floods the"
        f" extension; headless {results.browser}",
        f"{results.clicks} clicks per phase ({args.flood_click_warmup} of warm-up before the quiet ones); each attack"
        f" sends {results.messages} from localhost, another site",
        "kept: chrome.runtime.sendMessage through a reference kept from the start (refused: the page has none);"
        " loop: the same in one loop, never yielding; signal: the waker's window event, 100 between yields;"
        " signal-loop: the same in one loop",
        "",
        "failed: clicks answered with an error (the broker's 30 s deadline, then its breaker's circuit_open),"
        " counted with their time",
        "",
        f"  {'phase':<11} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} {'failed':>7} {'sent':>8} {'refused':>8}"
        f" {'flood s':>8} {'calm s':>8}",
    ]
    for phase in results.phases:
        lines.append(
            f"  {phase.name:<11} {phase.p50:>9.1f} {phase.p99:>9.1f} {phase.max:>9.1f} {len(phase.failures):>7}"
            f" {phase.sent:>8} {phase.refused:>8} {phase.flood_s:>8.1f} {phase.calm_s:>8.1f}"
        )
    lines += ["", *goal_lines("goals:", flood_verdicts(results))]
    return "\n".join(lines)


def flood_json(results: FloodResults, _args: Any) -> dict[str, Any]:
    return {
        "browser": results.browser,
        "messages": results.messages,
        "clicks": results.clicks,
        "phases": [
            {
                "name": phase.name,
                "p50_ms": phase.p50,
                "p99_ms": phase.p99,
                "max_ms": phase.max,
                "sent": phase.sent,
                "refused": phase.refused,
                "flood_s": phase.flood_s,
                "calm_s": phase.calm_s,
                "failures": phase.failures,
                "click_ms": phase.click_ms,
            }
            for phase in results.phases
        ],
        "verdicts": [verdict.brief_json() for verdict in flood_verdicts(results)],
    }
