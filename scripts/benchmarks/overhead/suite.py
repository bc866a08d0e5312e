"""The overhead part of scripts/bench: what the extension costs the pages a person opens.

Four headless Debian Chromiums, launched as the real-browser tests launch it (``tests/harness/chromium.py``),
each with a profile of its own in the bench's folder, run side by side:

- **none**: no extension;
- **do-nothing**: an extension with one content script that does nothing, at ``document_start`` in
  every frame (written into the bench's folder): the cost of having an extension at all;
- **ours**: the project's extension (``--overhead-extension``, ``extension/`` by default), with no
  broker running;
- **ours + broker**: the same, joined to a running broker (``browser-mcp serve --port 0``, found
  through the native host), as a person's browser is.

With ``--overhead-compare FOLDER`` a fifth, **compared**, has another version of the extension (no
broker): a before and after in one run. They load the same pages, served by the bench on 127.0.0.1
(``support.pages``): a tiny page, the bench's shop (``shop_page``) and a page of ten iframes (this
origin, another port, another site), taking turns load by load. Each load opens a new tab, goes to
the page, reads the page's Navigation Timing (``domContentLoadedEventEnd`` and ``loadEventEnd``,
from the navigation's start) and the tab's memory and CPU, and closes the tab.

A Chromium can sit up to 0.7 MB above its twin set up alike on every load of a page, so the measured
loads are split over ``--overhead-launches`` launches of every browser (3; 1 with ``--quick``), each with fresh
profiles (every launch starts from the same state, so the launches are repeats of one experiment; a
profile kept would make the first launch unlike the others: empty caches, the extension installed
then) and its own broker, warm-up loads after each.

The tab's memory: Chromium's own figures are out of reach here. ``performance.measureUserAgentSpecificMemory``
needs a cross-origin isolated page, ``Memory.getProcessMemoryInfo`` does not exist in the DevTools
protocol, and ``SystemInfo.getProcessInfo`` (no memory anyway) answers only on the browser target,
which a persistent context does not give. So the bench reads ``/proc``: the renderer processes of
that Chromium (``--type=renderer`` with its profile, the extension's own process aside) are read
while the tab is open, and the tab's are those that end when it closes (its main renderer and, on
the frames page, the cross-site frames' one; a load may end fewer, when Chromium keeps a frames'
process for another tab, and its memory is then some 12 MB smaller: such loads are left out, see
below). They are read ``--overhead-settle`` (500 ms) after a garbage collection in the tab's main
renderer: read at once, one frames page in four was 2-5 MB larger, in every browser alike, and the
excess was gone some 100 ms later. Reported: their private memory (USS: private clean and dirty
pages, what closing the tab gives back; the goal's figure), their PSS, and the JavaScript heap of the
tab's main renderer after that collection (``Runtime.getHeapUsage``: the whole isolate, the page's
world and the content scripts' isolated worlds alike). Then CPU time, which the load of a busy
machine disturbs far less than the times above: the tab's renderer processes' from their start
(Chromium keeps one spare, started before the tab) to the page's load, and the extension's own
process's (its service worker) and the broker's from opening the tab to its end, what the extension
costs the browser outside the page.

Then, in each launch, ``--overhead-traced`` loads of each page in each browser (split over the launches)
with Chromium tracing (``Tracing`` of the DevTools protocol, apart from the timed loads, which tracing
would slow): the CPU time of the page's renderer's main thread, its tasks from the one that committed
the page to its load event, and of it the time in extension scripts (their compiling and running, and
their callbacks). Our content scripts run on that thread, in the parser's first task, and hold the
parsing up while they run: what they add there is the time they add to the load where the machine is
not busy, and a busy one, which stretches the wall-clock times above by milliseconds from load to load,
hardly moves it.

Medians are of the loads kept: a load whose tab ended another number of renderer processes than that
page's usual number (the most common over all its loads in all browsers) is left out, and the report
says how many per page and browser. The goals, against the do-nothing extension in the same run:
ours adds at most 1 ms to the time to ``load`` (judged twice: by the wall clock, and by the traced
main-thread work until the load), and at most 0.5 MB of private memory per tab, on every page, with and
without the broker. Each is judged by a 90% confidence interval of (ours'
median - the do-nothing extension's median), by a bootstrap of two levels
(``support.stats.median_difference``): the launches resampled, then each chosen launch's loads
kept, so that the interval covers how launches differ as well as how loads do. Met when its upper
bound is at most the goal, missed when its lower bound is above it, otherwise not resolved by this
run. Beside the memory's verdict: the difference in JS heap, the steady figure, and the difference
launch by launch; beside the traced work's: the difference in time in extension scripts (traced loads
are all kept: their figures are the page's main renderer's alone). A benchmark, never a test: verdicts
are printed, the exit status ignores them.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from ..support import progress
from ..support.pages import PageServer
from ..support.report import OUTCOMES, Verdict
from ..support.shop_pages import shop_page
from ..support.stats import Interval, median_difference, taking_turns
from .loads import (
    COMPARED,
    JOINED,
    NONE,
    NOTHING,
    OURS,
    Load,
    TracedLoad,
    start_browsers,
    write_nothing_extension,
)

LOAD_GOAL_MS = 1.0  # ours over the do-nothing extension, time to load (medians)
MEMORY_GOAL_MB = 0.5  # ours over the do-nothing extension, the tab's private memory (medians)

VARIANTS = (NONE, NOTHING, OURS, JOINED)
OUR_VARIANTS = (OURS, JOINED, COMPARED)
LABELS = {
    NONE: "no extension",
    NOTHING: "do-nothing extension",
    OURS: "ours",
    JOINED: "ours + broker",
    COMPARED: "compared",
}
PAGES = {"tiny": "/tiny", "shop": "/shop", "frames": "/many-frames"}


@dataclass
class Cell:
    """One page in one browser: its loads, and how many renderer processes a tab of that page usually ends
    (the mode over the page's loads in every browser, set once they are all in)."""

    loads: list[Load] = field(default_factory=list)
    traced: list[TracedLoad] = field(default_factory=list)
    usual_processes: int = 0

    @property
    def kept(self) -> list[Load]:
        """The loads like the page's others; those whose tab ended another number of processes are left out."""
        return [load for load in self.loads if load.processes == self.usual_processes]

    def values(self, metric: str, launch: int | None = None) -> list[float]:
        loads = self.traced if metric in TRACED_METRICS else self.kept
        return [getattr(load, metric) for load in loads if launch in (None, load.launch)]

    def median(self, metric: str, launch: int | None = None) -> float:
        values = self.values(metric, launch)
        return float(statistics.median(values)) if values else math.nan


@dataclass
class OverheadResults:
    loads: int
    launches: int
    browser: str
    extension: str
    cells: dict[str, dict[str, Cell]]  # page -> variant -> its loads
    compared: str | None  # the extension of the variant "compared", when there is one
    # (page, variant, metric) -> ours' median minus the do-nothing extension's, with its confidence interval
    intervals: dict[tuple[str, str, str], Interval] = field(default_factory=dict)

    def difference(self, page: str, variant: str, metric: str, baseline: str = NOTHING) -> float:
        cells = self.cells[page]
        return cells[variant].median(metric) - cells[baseline].median(metric)

    def by_launch(self, page: str, variant: str, metric: str) -> list[float]:
        """``difference`` within each launch of the browsers."""
        cells = self.cells[page]
        return [
            cells[variant].median(metric, launch) - cells[NOTHING].median(metric, launch)
            for launch in range(1, self.launches + 1)
        ]

    def ratio(self, page: str, variant: str, metric: str, baseline: str = NOTHING) -> float:
        cells = self.cells[page]
        return cells[variant].median(metric) / cells[baseline].median(metric)


def loads_per_launch(loads: int, launches: int) -> list[int]:
    """``loads`` split as evenly as can be over ``launches``."""
    return [loads // launches + (launch < loads % launches) for launch in range(launches)]


TRACED_METRICS = ("main_thread_cpu_ms", "scripts_ms")
INTERVAL_METRICS = ("load_ms", "uss_mb", "js_heap_mb", *TRACED_METRICS)


def judge(results: OverheadResults) -> None:
    """Once every load is in: each page's usual number of processes, which decides the loads kept, and the
    intervals of ours' differences from the do-nothing extension."""
    for cells in results.cells.values():
        usual = statistics.mode(load.processes for cell in cells.values() for load in cell.loads)
        for cell in cells.values():
            cell.usual_processes = usual
    for page, cells in results.cells.items():
        for variant in cells.keys() & set(OUR_VARIANTS):
            for metric in INTERVAL_METRICS:
                results.intervals[page, variant, metric] = median_difference(
                    [
                        (cells[variant].values(metric, launch), cells[NOTHING].values(metric, launch))
                        for launch in range(1, results.launches + 1)
                    ]
                )


async def bench_overhead(args: argparse.Namespace) -> OverheadResults:
    """Every page loaded ``--overhead-loads`` times in each browser, over ``--overhead-launches`` launches of
    the browsers, taking turns.

    Raises:
        BenchError: when a browser cannot start or a load cannot be measured.
    """
    variants = [*VARIANTS, COMPARED] if args.overhead_compare else list(VARIANTS)
    cells = {page: {variant: Cell() for variant in variants} for page in PAGES}
    launches = loads_per_launch(args.overhead_loads, args.overhead_launches)
    traced_per_launch = max(2, args.overhead_traced // len(launches))
    settle_s = args.overhead_settle / 1000
    browser_name = ""
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as folder:
        workdir = Path(folder)
        nothing = write_nothing_extension(workdir / "do-nothing-extension")
        server = PageServer(shop_page(args.overhead_products))
        await server.start()
        try:
            async with async_playwright() as playwright:
                for launch, loads in enumerate(launches, 1):
                    async with AsyncExitStack() as stack:
                        progress(
                            f"overhead: launch {launch} of {len(launches)}: starting {len(variants)} Chromiums with"
                            f" fresh profiles ({', '.join(variants)})"
                        )
                        browsers, browser_name = await start_browsers(
                            stack, playwright, workdir / f"launch-{launch}", nothing, args
                        )
                        for _round, page, variant in taking_turns(list(PAGES), variants, args.overhead_warmup):
                            await browsers[variant].load(server.url(PAGES[page]), launch, settle_s)
                        for round_number, page, variant in taking_turns(list(PAGES), variants, loads):
                            if page == next(iter(PAGES)) and variant == variants[0] and round_number % 10 == 1:
                                progress(f"overhead: launch {launch}, round {round_number} of {loads}")
                            load = await browsers[variant].load(server.url(PAGES[page]), launch, settle_s)
                            cells[page][variant].loads.append(load)
                        progress(f"overhead: launch {launch}, {traced_per_launch} traced loads of each page")
                        for _round, page, variant in taking_turns(list(PAGES), variants, traced_per_launch):
                            traced_one = await browsers[variant].traced_load(server.url(PAGES[page]), launch)
                            cells[page][variant].traced.append(traced_one)
        finally:
            await server.stop()
    compared = str(args.overhead_compare) if args.overhead_compare else None
    results = OverheadResults(
        args.overhead_loads, len(launches), browser_name, str(args.overhead_extension), cells, compared
    )
    judge(results)
    return results


METRICS = (
    ("dom_content_loaded_ms", "DOMContentLoaded", "ms", 1),
    ("load_ms", "load", "ms", 1),
    ("uss_mb", "private mem.", "MB", 2),
    ("pss_mb", "PSS", "MB", 2),
    ("js_heap_mb", "JS heap", "MB", 2),
    ("renderer_cpu_ms", "page CPU", "ms", 1),
    ("worker_cpu_ms", "worker CPU", "ms", 1),
    ("broker_cpu_ms", "broker CPU", "ms", 1),
    ("main_thread_cpu_ms", "main thread", "ms", 2),
    ("scripts_ms", "ext. scripts", "ms", 2),
)


def _interval_note(name: str, interval: Interval, unit: str, digits: int) -> str:
    """``interval`` said beside a verdict's: its estimate and bounds, named."""
    return f"{name} {interval.estimate:+.{digits}f} {unit} [{interval.low:+.{digits}f}, {interval.high:+.{digits}f}]"


def _notes(results: OverheadResults, labels: dict[str, tuple[str, str]], metric: str, heap: bool) -> dict[str, str]:
    """What goes beside each interval of a verdict: with ``heap``, the difference in JS heap (the steady
    figure), and with more than one launch, the difference launch by launch."""
    notes = {}
    for label, (page, variant) in labels.items():
        found = []
        if heap:
            found.append(_interval_note("JS heap", results.intervals[page, variant, "js_heap_mb"], "MB", 3))
        if results.launches > 1:
            digits = 2 if heap else 1
            found.append(
                "launch by launch " + ", ".join(f"{d:+.{digits}f}" for d in results.by_launch(page, variant, metric))
            )
        notes[label] = "; ".join(found)
    return notes


def verdicts(results: OverheadResults) -> list[Verdict]:
    labels = {f"{page}, {variant}": (page, variant) for page in PAGES for variant in (OURS, JOINED)}
    load = {label: results.intervals[page, variant, "load_ms"] for label, (page, variant) in labels.items()}
    memory = {label: results.intervals[page, variant, "uss_mb"] for label, (page, variant) in labels.items()}
    work = {label: results.intervals[page, variant, "main_thread_cpu_ms"] for label, (page, variant) in labels.items()}
    scripts = {
        label: _interval_note("in extension scripts", results.intervals[page, variant, "scripts_ms"], "ms", 2)
        for label, (page, variant) in labels.items()
    }
    return [
        Verdict.interval_at_most(
            f"ours adds at most {LOAD_GOAL_MS:g} ms to the time to load over the do-nothing extension",
            load, LOAD_GOAL_MS, " ms", 1, _notes(results, labels, "load_ms", heap=False),
        ),
        Verdict.interval_at_most(
            f"ours adds at most {LOAD_GOAL_MS:g} ms to the work of the page's main thread until its load over the"
            " do-nothing extension (traced loads: the load time it adds where the machine is not busy)",
            work, LOAD_GOAL_MS, " ms", 2, scripts,
        ),
        Verdict.interval_at_most(
            f"ours adds at most {MEMORY_GOAL_MB:g} MB of private memory per tab over the do-nothing extension",
            memory, MEMORY_GOAL_MB, " MB", 2, _notes(results, labels, "uss_mb", heap=True),
        ),
    ]  # fmt: skip


def _counted(count: int, thing: str, things: str) -> str:
    return f"{count} {thing if count == 1 else things}"


def overhead_report(results: OverheadResults, args: argparse.Namespace) -> str:
    launches = _counted(results.launches, "launch", "launches")
    warmup = _counted(args.overhead_warmup, "warm-up load", "warm-up loads")
    lines = [
        f"Overhead: {results.browser}, {results.loads} loads of each page in each browser over {launches} of the"
        f" browsers (fresh profiles at each, {warmup} of each page first), taking turns (a new tab each; the"
        f" extension: {results.extension})",
        "Medians of the loads kept: a load whose tab ended another number of renderer processes than the page's"
        f" usual one is left out; memory read {args.overhead_settle} ms after a garbage collection",
    ]
    if results.compared:
        lines.append(f"compared: ours from {results.compared}, without a broker")
    for page, path in PAGES.items():
        usual = next(iter(results.cells[page].values())).usual_processes
        lines += [
            "",
            f"{page} ({path}): renderer processes ending with a tab, as a rule: {usual}",
            f"  {'':22}{'kept':>8}" + "".join(f"{label + ' ' + unit:>20}" for _, label, unit, _ in METRICS),
        ]
        for variant in results.cells[page]:
            cell = results.cells[page][variant]
            row = f"  {LABELS[variant]:22}{f'{len(cell.kept)}/{len(cell.loads)}':>8}"
            for metric, _label, _unit, digits in METRICS:
                value = cell.median(metric)
                if variant in OUR_VARIANTS:
                    difference = results.difference(page, variant, metric)
                    row += f"{f'{value:.{digits}f} ({difference:+.{digits}f})':>20}"
                else:
                    row += f"{value:>20.{digits}f}"
            lines.append(row)
        ratios = ", ".join(
            f"{LABELS[variant]} {results.ratio(page, variant, 'load_ms'):.3f}x"
            for variant in results.cells[page]
            if variant != NOTHING
        )
        lines.append(f"  load time over the do-nothing extension's: {ratios}")
    lines += [
        "",
        "(ours: the difference from the do-nothing extension in brackets; kept: loads kept of those measured)",
        "",
        "Goals: ours' median minus the do-nothing extension's, and its 90% confidence interval by bootstrap (the"
        " launches resampled, then each one's loads kept); met when the interval is at or under the goal, missed"
        " when above it, otherwise not resolved by this run",
    ]
    if results.launches == 1:
        lines.append(
            "  (one launch: the intervals cover the loads' spread, not how two Chromiums set up alike differ;"
            " --overhead-launches 3 averages that out)"
        )
    lines += [verdict.line() for verdict in verdicts(results)]
    return "\n".join(lines)


def _interval_json(interval: Interval, limit: float | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "estimate": interval.estimate, "low": interval.low, "high": interval.high, "confidence": interval.confidence
    }  # fmt: skip
    if limit is not None:
        found["outcome"] = OUTCOMES[interval.meets(limit)]
    return found


def _cell_json(results: OverheadResults, page: str, variant: str) -> dict[str, Any]:
    cell = results.cells[page][variant]
    found: dict[str, Any] = {
        "medians": {metric: cell.median(metric) for metric, *_ in METRICS},
        "over_do_nothing": {metric: results.difference(page, variant, metric) for metric, *_ in METRICS},
        "kept": len(cell.kept),
        "left_out": len(cell.loads) - len(cell.kept),
        "processes": [load.processes for load in cell.loads],
        "loads": [asdict(load) for load in cell.loads],
        "traced": [asdict(load) for load in cell.traced],
    }
    if variant in OUR_VARIANTS:
        found["intervals"] = {
            metric: _interval_json(results.intervals[page, variant, metric]) for metric in INTERVAL_METRICS
        }
        found["over_do_nothing_by_launch"] = {
            metric: results.by_launch(page, variant, metric) for metric in INTERVAL_METRICS
        }
    return found


def overhead_json(results: OverheadResults, args: argparse.Namespace) -> dict[str, Any]:
    limits = (LOAD_GOAL_MS, LOAD_GOAL_MS, MEMORY_GOAL_MB)
    return {
        "loads": results.loads,
        "launches": results.launches,
        "profiles": "fresh at each launch",
        "warmup_per_launch": args.overhead_warmup,
        "settle_ms": args.overhead_settle,
        "traced_per_launch": max(2, args.overhead_traced // results.launches),
        "browser": results.browser,
        "extension": results.extension,
        "compared": results.compared,
        "usual_processes": {page: next(iter(cells.values())).usual_processes for page, cells in results.cells.items()},
        "pages": {
            page: {variant: _cell_json(results, page, variant) for variant in cells}
            for page, cells in results.cells.items()
        },
        "verdicts": [
            {
                "goal": verdict.goal,
                "passed": verdict.passed,
                "outcome": OUTCOMES[verdict.passed],
                "values": verdict.values,
                "intervals": {label: _interval_json(i, limit) for label, i in verdict.intervals.items()},
            }
            for verdict, limit in zip(verdicts(results), limits, strict=True)
        ],
    }
