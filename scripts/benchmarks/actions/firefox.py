"""``--suite actions --browser firefox``: the built-in tools in Firefox beside the same tools in Chromium.

Our extension drives a page through one of two drivers: in Chromium the DevTools driver
(``chrome.debugger``), in Firefox the WebExtension driver (``scripting.executeScript`` and synthetic
input). This part of the actions suite measures the same calls through each, in the same run, on the
actions suite's pages (``support.pages``), with its sides and turns (``sides.py``) and its snapshot
and click measurements (``measures.py``):

- **chromium**: a broker, headless Chromium with the extension led to it by the native host, and the
  official MCP SDK client through ``browser-mcp mcp`` (``support.mcp_sides.start_ours``);
- **firefox**: a second broker, headless Firefox ESR with the extension's Firefox build installed over
  WebDriver BiDi (``tests/harness/firefox.py``) and led to it by Firefox's native host, and the same client
  (``support.mcp_sides.start_ours_in_firefox``).

Measured, the two taking turns call by call: ``browser_snapshot`` of the large shop page (its time and
characters), ``browser_click`` on the small page's "Add one" button (a snapshot must then show every
click counted) and ``browser_type`` into its "Note" field (a snapshot must then show the text). The
figures are Firefox's over Chromium's. A benchmark with no goals: what the WebExtension driver costs.
"""

from __future__ import annotations

import shlex
import tempfile
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.chromium import CHROMIUM
from tests.harness.firefox import FIREFOX

from ..support import BenchError, progress
from ..support.mcp_sides import start_ours, start_ours_in_firefox, unwrapped
from ..support.pages import PageServer
from ..support.shop_pages import shop_page
from ..support.stats import Timings
from .measures import measure_clicks, measure_snapshots
from .sides import OurSide, Side, in_turns, ref_of

NOTE_FIELD = "Note"  # the small page's text field
TYPED = "a note typed by the bench"
BROWSERS = ("chromium", "firefox")


@dataclass
class BrowsersResults:
    """Each browser's figures (``sides.SideResult``) and the typing times beside them."""

    products: int
    snapshots: int
    clicks: int
    browsers: dict[str, str]  # side -> the browser's name and version, as the broker heard it
    sides: dict[str, Any]  # side -> sides.SideResult
    type_ms: dict[str, list[float]] = field(default_factory=dict)

    def figure(self, side: str, metric: str) -> float:
        """``metric`` of ``side``: snapshot_chars, or a median/p90 of snapshot, click or type."""
        found = self.sides[side]
        if metric == "snapshot_chars":
            return float(found.snapshot_chars)
        action, statistic = metric.split(".")
        timings = Timings(self.type_ms[side]) if action == "type" else getattr(found, action)
        return float(getattr(timings, statistic))

    def ratio(self, metric: str) -> float:
        """Firefox's over Chromium's."""
        return self.figure("firefox", metric) / self.figure("chromium", metric)


METRICS = (
    ("snapshot characters", "snapshot_chars", "d"),
    ("snapshot ms, median", "snapshot.median_ms", ".1f"),
    ("snapshot ms, p90", "snapshot.p90_ms", ".1f"),
    ("click ms, median", "click.median_ms", ".1f"),
    ("click ms, p90", "click.p90_ms", ".1f"),
    ("type ms, median", "type.median_ms", ".1f"),
    ("type ms, p90", "type.p90_ms", ".1f"),
)


async def measure_typing(sides: list[Side], url: str, warmup: int, count: int) -> dict[str, list[float]]:
    """The measured ``browser_type`` calls (after ``warmup``) into the page's Note field, by the ref a
    snapshot gave; then a snapshot must show the text typed."""
    refs: dict[str, str] = {}
    for side in sides:
        await side.open(url)
        refs[side.name] = ref_of(await side.snapshot_until(NOTE_FIELD), "textbox", NOTE_FIELD)

    async def type_note(side: Side) -> Any:
        return await side.call(
            "browser_type", {"element": f"{NOTE_FIELD} field", side.click_key: refs[side.name], "text": TYPED}
        )

    timed = await in_turns(sides, warmup + count, type_note)
    for side in sides:
        await side.snapshot_until(TYPED)
    found = {name: [ms for ms, _text in runs[warmup:]] for name, runs in timed.items()}
    for name, runs in found.items():
        progress(f"actions: {name:<10} type p50 {Timings(runs).median_ms:.1f} ms, p90 {Timings(runs).p90_ms:.1f} ms")
    return found


async def bench_browsers(args: Any) -> BrowsersResults:
    """Both browsers measured in one run.

    Raises:
        BenchError: when a browser cannot be started or a call fails.
    """
    results: BrowsersResults = await unwrapped(_bench_browsers(args))
    return results


async def _bench_browsers(args: Any) -> BrowsersResults:
    shop = shop_page(args.actions_products)
    broker_cmd = shlex.split(args.broker_cmd)
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-browsers-") as tmp:
        async with AsyncExitStack() as stack:
            pages = PageServer(shop)
            await pages.start()
            stack.push_async_callback(pages.stop)
            names: dict[str, str] = {}
            sides: list[Side] = []
            for side_name, start in (("chromium", start_ours), ("firefox", start_ours_in_firefox)):
                workdir = Path(tmp) / side_name
                workdir.mkdir()
                client, _broker, names[side_name] = await start(stack, workdir, broker_cmd)
                sides.append(OurSide(side_name, client))
            progress(f"actions: {names['chromium']} beside {names['firefox']}, each with the extension")
            for side in sides:
                await side.learn_click_argument()
            await measure_snapshots(sides, pages.url("/shop"), args.actions_snapshots)
            await measure_clicks(sides, pages.url("/small"), args.actions_click_warmup, args.actions_clicks)
            type_ms = await measure_typing(sides, pages.url("/small"), args.actions_click_warmup, args.actions_clicks)
    if set(type_ms) != set(BROWSERS):
        raise BenchError(f"typing measured in {sorted(type_ms)}, not in both browsers")
    return BrowsersResults(
        products=shop.products,
        snapshots=args.actions_snapshots,
        clicks=args.actions_clicks,
        browsers=names,
        sides={side.name: side.result for side in sides},
        type_ms=type_ms,
    )


def browsers_report(results: BrowsersResults, args: Any) -> str:
    lines = [
        "browser-mcp bench, actions in Firefox beside Chromium: the same built-in tools through the extension's"
        " WebExtension driver (Firefox: scripting and synthetic input) and its DevTools driver (Chromium:"
        " chrome.debugger); MCP SDK client over stdio to a broker per browser, each call timed to its result,"
        " the browsers taking turns",
        f"chromium: {results.browsers['chromium']} ({CHROMIUM}); firefox: {results.browsers['firefox']} ({FIREFOX})",
        f"large page: {results.products} products; {results.snapshots} snapshots, {results.clicks} clicks and"
        f" {results.clicks} browser_type calls measured per browser ({args.actions_click_warmup} of warm-up)",
        "",
        f"  {'':<24} {'Chromium':>10} {'Firefox':>10} {'Firefox/Chromium':>17}",
    ]
    for label, metric, fmt in METRICS:
        chromium, firefox = (results.figure(side, metric) for side in BROWSERS)
        if fmt == "d":
            chromium, firefox = int(chromium), int(firefox)  # type: ignore[assignment]
        lines.append(f"  {label:<24} {chromium:>10{fmt}} {firefox:>10{fmt}} {results.ratio(metric):>16.2f}x")
    lines.append("")
    lines.append("  (a benchmark: no goals; what Firefox's synthetic, script-run driver costs beside DevTools)")
    return "\n".join(lines)


def browsers_json(results: BrowsersResults, args: Any) -> dict[str, Any]:
    return {
        "config": {
            "products": results.products,
            "snapshots": results.snapshots,
            "clicks": results.clicks,
            "warmup": args.actions_click_warmup,
            "browsers": results.browsers,
            "transport": "stdio (browser-mcp mcp), a broker per browser",
        },
        "figures": {
            side: {metric: results.figure(side, metric) for _label, metric, _fmt in METRICS} for side in BROWSERS
        },
        "runs": {side: {**asdict(results.sides[side]), "type_ms": results.type_ms[side]} for side in BROWSERS},
        "ratios": {metric: results.ratio(metric) for _label, metric, _fmt in METRICS},
    }
