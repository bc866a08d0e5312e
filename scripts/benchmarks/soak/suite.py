"""The soak suite: the real extension in headless Chromium and 20 clients for N minutes, nothing lost.

One broker (``browser-mcp serve --port 0``), one Chromium with the project's extension, led to it by
the native host (:mod:`support.browser`), and the soak page served on 127.0.0.1
(:mod:`support.pages`). The clients (:mod:`.clients`) take the five doors in turn: MCP
over Streamable HTTP and over stdio (``browser-mcp mcp``), each in both protocol eras, and REST.
Each works two tabs of its own: snapshot, type, click, the page's tool, navigate, a tab closed and
another opened now and then; every answer is checked against what was asked. One stdio client
restarts now and then: it closes its tabs and its ``browser-mcp mcp``, and starts again.

After the load, the clients close their tabs and go, and the broker sits idle with the browser
linked for the last minutes (5 of 60; a shorter run, a share of it). Reported:

- every call by tool and outcome: ok, error, wrong, misrouted, lost (goal: nothing but ok);
- p50 and p99 of each tool's answered calls;
- the broker's RSS and open file descriptors, sampled through the run and shown a minute apart
  (goal: after the warm-up, within 10% of their lowest);
- the broker's CPU during the idle tail, in ms a minute (goal: at most 10).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from ..support import BenchError, progress
from ..support.browser import Place, chromium, install_native_host
from ..support.mcp_sides import wait_joined
from ..support.pages import PageServer
from ..support.proc import open_fds, run_seconds, status_kib
from ..support.report import Verdict, goal_lines
from ..support.servers import Server, start_broker
from ..support.shop_pages import shop_page
from ..support.stats import percentile
from .clients import KINDS, OUTCOMES, SoakClient, Tally, door_of, work

TABS_PER_CLIENT = 2
FLAT_WITHIN = 0.10  # RSS and descriptors after the warm-up: within 10% of their lowest
IDLE_CPU_GOAL_MS = 10.0  # a minute, with a browser linked
IDLE_SETTLE_S = 5.0  # after the clients went, before the idle CPU is counted
IDLE_SLICE_S = 5.0


@dataclass
class Sample:
    at_s: float  # since the load started
    rss_kib: int
    fds: int


@dataclass
class SoakResults:
    browser: str
    clients: dict[str, int]  # kind -> how many
    load_s: float
    idle_s: float
    warmup_s: float
    restarts: int
    tally: Tally
    samples: list[Sample] = field(default_factory=list)
    idle_cpu_ms: float = 0.0  # a minute
    idle_slices_ms: list[float] = field(default_factory=list)  # each IDLE_SLICE_S of the idle tail


def timings(args: argparse.Namespace) -> tuple[float, float, float]:
    """The load's, the idle tail's and the warm-up's length in seconds: the tail is 5 minutes of 60,
    for a shorter run a twelfth of it (30 s at least), unless ``--soak-idle-minutes`` says."""
    total = args.minutes * 60
    idle = args.soak_idle_minutes * 60 if args.soak_idle_minutes is not None else max(30.0, min(300.0, total / 12))
    if idle >= total:
        raise BenchError(f"the idle tail ({idle:g} s) leaves no time for the load in {args.minutes:g} minutes")
    load = total - idle
    return load, idle, min(300.0, load / 4)


async def sample_broker(broker: Server, started: float, every_s: float, samples: list[Sample]) -> None:
    while True:
        samples.append(Sample(time.monotonic() - started, status_kib(broker.pid, "VmRSS"), open_fds(broker.pid)))
        await asyncio.sleep(every_s)


async def idle_cpu(broker: Server, seconds: float) -> list[float]:
    """The broker's CPU in ms in each slice of ``seconds`` (at least one slice)."""
    slices = []
    for _ in range(max(1, round(seconds / IDLE_SLICE_S))):
        before = run_seconds(broker.pid)
        await asyncio.sleep(IDLE_SLICE_S)
        slices.append((run_seconds(broker.pid) - before) * 1000)
    return slices


async def bench_soak(args: argparse.Namespace) -> SoakResults:
    load_s, idle_s, warmup_s = timings(args)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-soak-") as tmp:
        workdir = Path(tmp)
        async with contextlib.AsyncExitStack() as stack:
            pages = PageServer(shop_page(10))
            await pages.start()
            stack.push_async_callback(pages.stop)
            place = Place(workdir / "browser")
            place.create()
            await install_native_host(place)
            broker = await start_broker(workdir, shlex.split(args.broker_cmd), 0, place.discovery_dir)
            stack.push_async_callback(broker.stop)
            playwright = await stack.enter_async_context(async_playwright())
            browser = await stack.enter_async_context(chromium(playwright, place))
            name = await wait_joined(broker, browser.instance_id)
            tally = Tally()
            clients = []
            for number in range(1, args.soak_clients + 1):
                kind = KINDS[(number - 1) % len(KINDS)]
                door = door_of(kind, broker, workdir, f"c{number}")
                clients.append(SoakClient(f"c{number}", kind, door, pages.url(""), tally))
            kinds = {kind: sum(1 for c in clients if c.kind == kind) for kind in KINDS}
            results = SoakResults(name, kinds, load_s, idle_s, warmup_s, 0, tally)
            progress(f"soak: {len(clients)} clients for {load_s:g} s, then {idle_s:g} s idle; {name}")
            started = time.monotonic()
            until = started + load_s
            sampler = asyncio.create_task(
                sample_broker(broker, started, min(60.0, (load_s + idle_s) / 12), results.samples)
            )
            # One stdio client restarts (its browser-mcp mcp too) ten times a run, every 20 s at most.
            restarter = next((c for c in clients if c.kind.startswith("mcp-stdio")), None)
            if restarter is not None:
                restarter.restart_every_s = max(20.0, load_s / 10)
            await asyncio.gather(
                *(work(c, until, args.soak_pause, TABS_PER_CLIENT, random.Random(rng.random())) for c in clients)
            )
            results.restarts = sum(c.restarts for c in clients)
            progress(f"soak: load done at {time.monotonic() - started:.0f} s; the clients closed their tabs and went")
            await asyncio.sleep(IDLE_SETTLE_S)
            results.idle_slices_ms = await idle_cpu(broker, idle_s - IDLE_SETTLE_S)
            results.idle_cpu_ms = sum(results.idle_slices_ms) / len(results.idle_slices_ms) * 60 / IDLE_SLICE_S
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
            results.samples.append(
                Sample(time.monotonic() - started, status_kib(broker.pid, "VmRSS"), open_fds(broker.pid))
            )
            return results


def _spread(values: list[float]) -> float:
    """How far the largest is above the lowest, as a share of the lowest."""
    return (max(values) - min(values)) / min(values) if values and min(values) > 0 else 0.0


def verdicts(results: SoakResults) -> list[Verdict]:
    bad = {outcome: sum(c[outcome] for c in results.tally.outcomes.values()) for outcome in OUTCOMES[1:]}
    # While the clients work: the idle tail holds fewer connections, which says nothing of a leak.
    settled = [s for s in results.samples if results.warmup_s <= s.at_s <= results.load_s] or results.samples
    rss, fds = _spread([s.rss_kib for s in settled]), _spread([s.fds for s in settled])
    return [
        Verdict.at_most("answers lost, misrouted, wrong or errors", {k: float(v) for k, v in bad.items()}, 0, "", 0),
        Verdict.at_most(
            f"broker RSS and open descriptors under load after the warm-up ({results.warmup_s:.0f} s), above their"
            " lowest",
            {"RSS": rss * 100, "descriptors": fds * 100},
            FLAT_WITHIN * 100,
            "%",
            1,
        ),
        Verdict.at_most(
            f"broker CPU idle, browser linked, the last {results.idle_s:.0f} s",
            {"a minute": results.idle_cpu_ms},
            IDLE_CPU_GOAL_MS,
            " ms",
            1,
        ),
    ]


def soak_report(results: SoakResults, args: argparse.Namespace) -> str:
    tally = results.tally
    calls = sum(sum(c.values()) for c in tally.outcomes.values())
    lines = [
        f"Soak: {sum(results.clients.values())} clients ({', '.join(f'{n} {k}' for k, n in results.clients.items())}),"
        f" {results.load_s / 60:.1f} min of load, {results.idle_s / 60:.1f} min idle; {results.browser}",
        f"{calls} calls, {results.restarts} client restarts",
        "",
        f"{'tool':<18} {'calls':>6} " + " ".join(f"{o:>9}" for o in OUTCOMES) + f" {'p50 ms':>8} {'p99 ms':>8}",
    ]
    for tool in sorted(tally.outcomes):
        outcomes, latencies = tally.outcomes[tool], tally.latencies_ms[tool]
        p50, p99 = (_percentile(latencies, q) or 0.0 for q in (0.5, 0.99))
        lines.append(
            f"{tool:<18} {sum(outcomes.values()):>6} "
            + " ".join(f"{outcomes[o]:>9}" for o in OUTCOMES)
            + f" {p50:>8.0f} {p99:>8.0f}"
        )
    lines += ["", "broker, a minute apart (the last sample at the end of the idle tail):", "  min   RSS MB   fds"]
    for sample in _minutely(results.samples):
        lines.append(f"  {sample.at_s / 60:>4.1f} {sample.rss_kib / 1024:>7.1f} {sample.fds:>5}")
    slices = " ".join(f"{ms:.1f}" for ms in results.idle_slices_ms)
    lines += ["", f"broker CPU idle, ms in each {IDLE_SLICE_S:g} s: {slices}"]
    lines += ["", *goal_lines("goals:", verdicts(results))]
    if tally.problems:
        lines += ["", "first problems:", *(f"  {problem}" for problem in tally.problems)]
    return "\n".join(lines)


def _minutely(samples: list[Sample]) -> list[Sample]:
    """The first sample, one a minute after it, and the last."""
    shown: list[Sample] = []
    for sample in samples:
        if not shown or sample.at_s - shown[-1].at_s >= 59.5:
            shown.append(sample)
    if samples and shown[-1] is not samples[-1]:
        shown[-1] = samples[-1]
    return shown


def _percentile(values: list[float], q: float) -> float | None:
    return percentile(values, q) if values else None


def soak_json(results: SoakResults, args: argparse.Namespace) -> dict[str, Any]:
    return {
        "browser": results.browser,
        "clients": results.clients,
        "load_s": results.load_s,
        "idle_s": results.idle_s,
        "warmup_s": results.warmup_s,
        "restarts": results.restarts,
        "tools": {
            tool: {
                "outcomes": dict(results.tally.outcomes[tool]),
                "p50_ms": _percentile(results.tally.latencies_ms[tool], 0.5),
                "p99_ms": _percentile(results.tally.latencies_ms[tool], 0.99),
            }
            for tool in sorted(results.tally.outcomes)
        },
        "samples": [{"at_s": s.at_s, "rss_kib": s.rss_kib, "fds": s.fds} for s in results.samples],
        "idle_cpu_ms_per_minute": results.idle_cpu_ms,
        "idle_cpu_ms_slices": results.idle_slices_ms,
        "problems": results.tally.problems,
        "goals": [verdict.brief_json() for verdict in verdicts(results)],
    }
