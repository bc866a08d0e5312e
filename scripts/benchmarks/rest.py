"""The REST part of scripts/bench: tool calls relayed REST -> broker -> fake extension, beside a minimal relay.

For each scenario (payload size x concurrent calls) it starts a fresh broker
(``browser-mcp serve --port 0``) and a fresh minimal relay (``scripts/benchmarks/baselines/rest_relay.py``: stock
asyncio loop, stdlib ``json``), one after the other and alternating which goes first, connects a
lean fake extension to each (Origin of the project's extension; it answers ``callTool`` by
echoing the arguments), warms up, then drives a fixed number of ``POST /tabs/1/tools/echo``
calls through ``concurrency`` workers that each call one after another. It prints, per server:

- latency p50 and p99, measured by the client (``time.perf_counter``) around each call;
- CPU per call of the server process only, from its own counters (``utime + stime`` of
  ``/proc/<pid>/stat``, read before and after the measured calls);
- peak RSS: ``VmHWM`` of ``/proc/<pid>/status``, the scenario's peak since the process is fresh;

then the broker / relay ratios and a verdict against the goals (a benchmark, never a test: the
exit status does not depend on them). The request body is ``{"data": "<size bytes>"}`` (or, with
``--shape nested``, a list of small objects of about that size) and the reply echoes it, so both
directions carry the size. The fake extension and the load generator share this process (on
uvloop when installed); their CPU is reported apart and never counted.

Linux only (``/proc``). Run it through ``scripts/bench``; ``--help`` for the knobs. The harness
(servers, ``/proc`` counters, the fake extension) is ``scripts/benchmarks/support/``.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import tempfile
import time
import timeit
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from broker import codec
from broker.core.config import DEFAULTS
from broker.core.results import bounded_result

from .support import CALL_TIMEOUT, LARGE, READY_TIMEOUT, SMALL, BenchError, progress, words_of
from .support.fake_extension import FakeExtension
from .support.proc import CLOCK_TICK, cpu_seconds, status_kib
from .support.report import Verdict, goal_lines, machine, size_label
from .support.servers import start_broker, start_relay
from .support.stats import Medians, call_figures, taking_turns, timed_calls

CALL_PATH = "/tabs/1/tools/echo"
# The broker calls page tools only in the caller's own tab; the relay has no owners.
CLAIM_PATH = "/tabs/1/claim"
SERVERS = ("broker", "relay")

# The goals, checked against the medians.
CPU_SMALL_GOAL = 1.0
CPU_LARGE_GOAL = 0.7
P99_GOAL = 2.0
RSS_GOAL_MB = 64.0


# Load


@dataclass
class Load:
    url: str
    headers: dict[str, str]
    body: bytes
    size: int


async def one_call(session: aiohttp.ClientSession, load: Load) -> tuple[int, bytes]:
    async with session.post(load.url, data=load.body, headers=load.headers) as response:
        return response.status, await response.read()


async def claim_ready(session: aiohttp.ClientSession, url: str, headers: dict[str, str]) -> None:
    """Claim the called tab once the fake's snapshot has reached the broker."""
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        async with session.post(url, headers=headers) as response:
            if response.status == 200:
                return
            body = await response.read()
        if time.monotonic() > deadline:
            raise BenchError(f"claiming the tab still fails after {READY_TIMEOUT:g} s: {body[:300]!r}")
        await asyncio.sleep(0.02)


async def wait_ready(session: aiohttp.ClientSession, load: Load) -> None:
    """Call until the first call works: the fake's snapshot has reached the server."""
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        status, body = await one_call(session, load)
        if status == 200:
            if len(body) < load.size:
                raise BenchError(f"the reply is {len(body)} bytes, less than the {load.size} sent")
            return
        if time.monotonic() > deadline:
            raise BenchError(f"the first call still fails after {READY_TIMEOUT:g} s: {status} {body[:300]!r}")
        await asyncio.sleep(0.02)


async def drive(session: aiohttp.ClientSession, load: Load, concurrency: int, calls: int) -> list[float]:
    """``calls`` calls from ``concurrency`` workers, each one call after another; latencies in s."""

    async def call() -> None:
        status, body = await one_call(session, load)
        if status != 200:
            raise BenchError(f"call failed: {status} {body[:300]!r}")

    return await timed_calls(call, concurrency, calls)


# Scenarios


@dataclass
class Run:
    server: str
    size: int
    concurrency: int
    calls: int
    p50_ms: float
    p99_ms: float
    cpu_us_per_call: float
    user_us_per_call: float
    system_us_per_call: float
    peak_rss_mb: float
    idle_rss_mb: float
    calls_per_s: float
    client_cpu_us_per_call: float


def tool_args(size: int, shape: str) -> dict[str, Any]:
    """The call's arguments, about ``size`` bytes of JSON: one string, or many small objects."""
    if shape == "flat":
        return {"data": words_of(size)}
    item = {"id": 1000, "name": "item", "tags": ["a", "b"], "price": 1.5}
    count = max(1, round((size - 12) / (len(orjson.dumps(item)) + 1)))
    return {"data": [{**item, "id": 1000 + i} for i in range(count)]}


async def run_scenario(
    kind: str,
    size: int,
    concurrency: int,
    calls: int,
    warmup: int,
    workdir: Path,
    broker_cmd: list[str],
    shape: str = "flat",
) -> Run:
    server = await (start_broker(workdir, broker_cmd) if kind == "broker" else start_relay(workdir))
    try:
        async with AsyncExitStack() as stack:
            # The fake's WebSocket has a session of its own: it must not take a slot of the pool.
            fake_session = await stack.enter_async_context(aiohttp.ClientSession())
            session = await stack.enter_async_context(
                aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=concurrency),
                    timeout=aiohttp.ClientTimeout(total=CALL_TIMEOUT),
                )
            )
            fake = FakeExtension()
            await fake.connect(fake_session, server.url + "/")
            stack.push_async_callback(fake.close)
            load = Load(
                url=server.url + CALL_PATH,
                headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"},
                body=orjson.dumps(tool_args(size, shape)),
                size=size * 9 // 10,
            )
            if kind == "broker":
                await claim_ready(session, server.url + CLAIM_PATH, load.headers)
            await wait_ready(session, load)
            idle_rss = status_kib(server.pid, "VmRSS")
            # Every worker calls at least once while warming up, so every connection is open.
            await drive(session, load, concurrency, max(warmup, concurrency))
            cpu_before, client_before = cpu_seconds(server.pid), time.process_time()
            started = time.perf_counter()
            latencies = await drive(session, load, concurrency, calls)
            wall = time.perf_counter() - started
            cpu_after, client_after = cpu_seconds(server.pid), time.process_time()
            peak_rss = status_kib(server.pid, "VmHWM")
    finally:
        await server.stop()
    return Run(
        server=kind,
        size=size,
        concurrency=concurrency,
        cpu_us_per_call=(sum(cpu_after) - sum(cpu_before)) / calls * 1e6,
        user_us_per_call=(cpu_after[0] - cpu_before[0]) / calls * 1e6,
        system_us_per_call=(cpu_after[1] - cpu_before[1]) / calls * 1e6,
        peak_rss_mb=peak_rss / 1024,
        idle_rss_mb=idle_rss / 1024,
        **call_figures(latencies, wall, client_after - client_before),
    )


@dataclass
class Scenario(Medians):
    baseline = "relay"

    size: int
    concurrency: int
    runs: dict[str, list[Run]] = field(default_factory=lambda: {kind: [] for kind in SERVERS})

    def label(self) -> str:
        return f"{size_label(self.size)} x{self.concurrency}"


# Report


METRICS = ("p50_ms", "p99_ms", "cpu_us_per_call", "peak_rss_mb")
FLOAT_METRICS = (
    *METRICS,
    "user_us_per_call",
    "system_us_per_call",
    "idle_rss_mb",
    "calls_per_s",
    "client_cpu_us_per_call",
)


def table(scenarios: list[Scenario]) -> str:
    head = f"{'scenario':<12}"
    sub = f"{'size x conc':<12}"
    for kind in SERVERS:
        head += f" | {kind:^38}"
        sub += f" | {'p50 ms':>8} {'p99 ms':>8} {'CPU us/call':>11} {'RSS MB':>8}"
    head += f" | {'broker / relay':^21}"
    sub += f" | {'CPU':>6} {'p99':>6} {'RSS':>6}"
    lines = [head, sub, "-" * len(sub)]
    for scenario in scenarios:
        row = f"{scenario.label():<12}"
        for kind in SERVERS:
            p50, p99, cpu, rss = (scenario.median(kind, metric) for metric in METRICS)
            row += f" | {p50:>8.3f} {p99:>8.3f} {cpu:>11.0f} {rss:>8.1f}"
        cpu_r, p99_r, rss_r = (scenario.ratio(m) for m in ("cpu_us_per_call", "p99_ms", "peak_rss_mb"))
        row += f" | {cpu_r:>5.2f}x {p99_r:>5.2f}x {rss_r:>5.2f}x"
        lines.append(row)
    return "\n".join(lines)


def _ratio_goal(goal: str, scenarios: list[Scenario], metric: str, limit: float) -> Verdict | None:
    if not scenarios:
        return None
    return Verdict.at_most(goal, {s.label(): s.ratio(metric) for s in scenarios}, limit)


def verdicts(scenarios: list[Scenario]) -> list[Verdict]:
    found = [
        _ratio_goal(
            f"broker CPU per 100 B call <= {CPU_SMALL_GOAL}x the relay's",
            [s for s in scenarios if s.size == SMALL], "cpu_us_per_call", CPU_SMALL_GOAL,
        ),
        _ratio_goal(
            f"broker CPU per 100 KB call <= {CPU_LARGE_GOAL}x the relay's",
            [s for s in scenarios if s.size == LARGE], "cpu_us_per_call", CPU_LARGE_GOAL,
        ),
        _ratio_goal(f"broker p99 <= {P99_GOAL}x the relay's", scenarios, "p99_ms", P99_GOAL),
    ]  # fmt: skip
    heavy = [s for s in scenarios if s.size == LARGE and s.concurrency == 64]
    if heavy:
        rss = heavy[0].median("broker", "peak_rss_mb")
        found.append(
            Verdict(
                f"broker peak RSS under 64 concurrent 100 KB calls <= {RSS_GOAL_MB:g} MB",
                rss <= RSS_GOAL_MB,
                f"{rss:.1f} MB (relay {heavy[0].median('relay', 'peak_rss_mb'):.1f} MB)",
                {heavy[0].label(): rss},
            )
        )
    return [v for v in found if v is not None]


def report(scenarios: list[Scenario], args: argparse.Namespace) -> str:
    lines = [
        "browser-mcp bench: POST /tabs/1/tools/echo -> server -> fake extension -> back;"
        f" {args.calls_small} calls (100 B) / {args.calls_large} calls (100 KB) measured per scenario"
        f" after {args.warmup} warm-up, fresh server per scenario, median of {args.repeat} run(s),"
        f" {args.shape} arguments",
        "broker: browser-mcp serve (uvloop, orjson, cattrs);"
        " relay: scripts/benchmarks/baselines/rest_relay.py (asyncio, stdlib json)",
        "",
        table(scenarios),
        "",
        guard_line(scenarios, args),
        "",
        *goal_lines("goals (a benchmark, not a test):", verdicts(scenarios)),
    ]
    tick_us = 1e6 / CLOCK_TICK
    lines += [
        "",
        f"CPU comes in {tick_us / 1e3:g} ms clock ticks: +-{tick_us / args.calls_small:.0f} us/call at"
        f" {args.calls_small} calls, +-{tick_us / args.calls_large:.0f} us/call at {args.calls_large}.",
        "details: server CPU split into user and system time, throughput, RSS when idle, and the CPU",
        "of this process (fake extension + load generator; never counted above)",
        "",
        details(scenarios),
    ]
    return "\n".join(lines)


DETAILS = (
    ("user_us_per_call", "user us", 8, 0),
    ("system_us_per_call", "sys us", 7, 0),
    ("calls_per_s", "calls/s", 8, 0),
    ("idle_rss_mb", "idle MB", 8, 1),
    ("client_cpu_us_per_call", "client us", 10, 0),
)


def details(scenarios: list[Scenario]) -> str:
    head = f"{'scenario':<12}"
    sub = f"{'size x conc':<12}"
    width = sum(w + 1 for _, _, w, _ in DETAILS) - 1
    for kind in SERVERS:
        head += f" | {kind:^{width}}"
        sub += " | " + " ".join(f"{label:>{w}}" for _, label, w, _ in DETAILS)
    lines = [head, sub, "-" * len(sub)]
    for scenario in scenarios:
        row = f"{scenario.label():<12}"
        for kind in SERVERS:
            row += " | " + " ".join(f"{scenario.median(kind, m):>{w}.{d}f}" for m, _, w, d in DETAILS)
        lines.append(row)
    return "\n".join(lines)


def max_result_chars(broker_cmd: str) -> int:
    """The broker's ``--max-result-chars`` as the command gives it (the broker's default otherwise)."""
    words = shlex.split(broker_cmd)
    for index, word in enumerate(words):
        if word == "--max-result-chars" and index + 1 < len(words):
            return int(words[index + 1])
        if word.startswith("--max-result-chars="):
            return int(word.split("=", 1)[1])
    return DEFAULTS.max_result_chars


def guard_costs(args: argparse.Namespace) -> dict[int, float]:
    """What a result's guard (``broker.core.results.bounded_result``: the cap, binary-looking runs) costs,
    in microseconds, on the echo's result of each size: the best of 7 timings in this process, the
    broker's own code and codec, its cap as the broker command sets it."""
    cap = max_result_chars(args.broker_cmd)
    costs: dict[int, float] = {}
    for size in args.sizes:
        value = tool_args(size, args.shape)
        number = max(20, 2_000_000 // max(size, 1000))
        best = min(timeit.repeat(lambda v=value: bounded_result(v, cap, codec.dumps_text), number=number, repeat=7))
        costs[size] = best / number * 1e6
    return costs


def guard_line(scenarios: list[Scenario], args: argparse.Namespace) -> str:
    costs = guard_costs(args)
    shares = []
    for size, cost in costs.items():
        alone = next((s for s in scenarios if s.size == size and s.concurrency == 1), None)
        broker_us = alone.median("broker", "cpu_us_per_call") if alone else 0.0
        share = (
            f" ({cost / broker_us:.0%} of the broker's CPU per call, {alone.label()})" if alone and broker_us else ""
        )
        shares.append(f"{size_label(size)} {cost:.1f} us{share}")
    return (
        f"a result's guard (the cap, --max-result-chars {max_result_chars(args.broker_cmd)}, and binary-looking"
        " runs; timed in this process on the echo's result): " + ", ".join(shares)
    )


def json_report(scenarios: list[Scenario], args: argparse.Namespace) -> dict[str, Any]:
    return {
        "guard_us_per_result": {str(size): cost for size, cost in guard_costs(args).items()},
        "config": {
            "calls_small": args.calls_small,
            "calls_large": args.calls_large,
            "shape": args.shape,
            "warmup": args.warmup,
            "repeat": args.repeat,
            "broker_cmd": args.broker_cmd,
        },
        "machine": machine(),
        "scenarios": [
            {
                "size": s.size,
                "concurrency": s.concurrency,
                **{kind: {m: s.median(kind, m) for m in FLOAT_METRICS} for kind in SERVERS},
                "runs": [asdict(run) for kind in SERVERS for run in s.runs[kind]],
                "ratios": {m: s.ratio(m) for m in ("cpu_us_per_call", "p50_ms", "p99_ms", "peak_rss_mb")},
            }
            for s in scenarios
        ],
        "goals": [asdict(v) for v in verdicts(scenarios)],
    }  # fmt: skip


# The suite


async def bench_rest(args: argparse.Namespace) -> list[Scenario]:
    scenarios = [Scenario(size, n) for size in args.sizes for n in args.concurrency]
    broker_cmd = shlex.split(args.broker_cmd)
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-") as tmp:
        for round_number, scenario, kind in taking_turns(scenarios, SERVERS, args.repeat):
            calls = args.calls_small if scenario.size < LARGE else args.calls_large
            run = await run_scenario(
                kind, scenario.size, scenario.concurrency, calls, args.warmup, Path(tmp), broker_cmd, args.shape
            )
            scenario.runs[kind].append(run)
            progress(
                f"[{round_number}/{args.repeat}] {scenario.label():<10} {kind:<6}"
                f" p50 {run.p50_ms:7.3f} ms  p99 {run.p99_ms:7.3f} ms  CPU {run.cpu_us_per_call:6.0f} us/call"
                f"  peak RSS {run.peak_rss_mb:5.1f} MB  {run.calls_per_s:6.0f} calls/s"
            )
    return scenarios
