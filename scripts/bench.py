#!/usr/bin/env python3
"""scripts/bench: tool calls relayed REST -> broker -> fake extension, beside a minimal relay.

For each scenario (payload size x concurrent calls) it starts a fresh broker
(``browser-mcp serve --port 0``) and a fresh minimal relay (``scripts/bench_relay.py``: stock
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

Linux only (``/proc``). Run it through ``scripts/bench``; ``--help`` for the knobs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import re
import secrets
import shlex
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from broker.core.security import PROJECT_EXTENSION_ID  # noqa: E402
from broker.paths import ENV_TOKEN_FILE  # noqa: E402

ORIGIN = f"chrome-extension://{PROJECT_EXTENSION_ID}"
SNAPSHOT = {
    "type": "connected",
    "browser": {"name": "Bench", "version": "1"},
    "tabs": [
        {
            "id": 1,
            "title": "t",
            "url": "http://x/",
            "tools": [{"name": "echo", "description": "echo", "inputSchema": {"type": "object"}}],
        }
    ],
}
CALL_PATH = "/tabs/1/tools/echo"
CLOCK_TICK = os.sysconf("SC_CLK_TCK")
SMALL, LARGE = 100, 100 * 1024
CONCURRENCY = (1, 8, 64)
SERVERS = ("broker", "relay")
START_TIMEOUT = 20.0
READY_TIMEOUT = 10.0
CALL_TIMEOUT = 60.0

# The goals of the issue, checked against the medians.
CPU_SMALL_GOAL = 0.6
CPU_LARGE_GOAL = 1.0
P99_GOAL = 2.0
RSS_GOAL_MB = 64.0


class BenchError(Exception):
    """The benchmark could not run a scenario; the message says why."""


# The server process's own counters


def cpu_seconds(pid: int) -> tuple[float, float]:
    """utime and stime of ``pid`` (all its threads), in seconds."""
    data = Path(f"/proc/{pid}/stat").read_text()
    fields = data[data.rfind(")") + 2 :].split()
    # fields[0] is field 3 (state) of proc(5); utime and stime are fields 14 and 15.
    return int(fields[11]) / CLOCK_TICK, int(fields[12]) / CLOCK_TICK


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise BenchError(f"no {key} in /proc/{pid}/status")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:]


# Servers


@dataclass
class Server:
    kind: str
    process: asyncio.subprocess.Process
    pid: int  # the server itself, which a --broker-cmd wrapper may have started
    port: int
    token: str
    log: Path
    discovery_dir: Path | None = None
    discovery_file: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


async def _announcement(process: asyncio.subprocess.Process, log: Path, what: str, pattern: str) -> re.Match[str]:
    """The line of the server's stdout that matches ``pattern``; lines before it are skipped.

    Whatever comes after is drained in the background, so a chatty wrapper never blocks.
    """
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    skipped: list[str] = []
    while True:
        try:
            line = (await asyncio.wait_for(process.stdout.readline(), deadline - time.monotonic())).decode()
        except TimeoutError:
            process.kill()
            line = ""
        if not line:
            await process.wait()
            raise BenchError(
                f"{what} did not start (exit {process.returncode}); stdout: {skipped!r}; its log:\n{tail(log)}"
            )
        found = re.search(pattern, line)
        if found is not None:
            drain = asyncio.create_task(process.stdout.read())
            _background.add(drain)
            drain.add_done_callback(_background.discard)
            return found
        skipped.append(line)


_background: set[asyncio.Task[bytes]] = set()


async def start_broker(workdir: Path, command: list[str], port: int = 0, discovery_dir: Path | None = None) -> Server:
    """A broker on ``port`` (0: any free one) writing its discovery file to ``discovery_dir`` (a fresh one)."""
    discovery_dir = discovery_dir or Path(tempfile.mkdtemp(prefix="discovery-", dir=workdir))
    log = workdir / "broker.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command, "--port", str(port), "--discovery-dir", str(discovery_dir),
            stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT,
            # Its lasting token stays in the bench's folder, not the user's configuration.
            env={**os.environ, ENV_TOKEN_FILE: str(workdir / "broker-token")},
        )  # fmt: skip
    found = await _announcement(process, log, "the broker", r"listening on .*\(discovery file (.+)\)\s*$")
    discovery_file = Path(found.group(1))
    record = read_json(discovery_file)
    return Server(
        "broker", process, int(record["pid"]), int(record["port"]), record["token"], log, discovery_dir, discovery_file
    )


async def start_relay(workdir: Path) -> Server:
    token = secrets.token_urlsafe(32)
    log = workdir / "relay.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "scripts" / "bench_relay.py"), "0",
            stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT,
            env={**os.environ, "BENCH_RELAY_TOKEN": token},
        )  # fmt: skip
    found = await _announcement(process, log, "the relay", r"listening on http://127\.0\.0\.1:(\d+)")
    return Server("relay", process, process.pid, int(found.group(1)), token, log)


# The fake extension


class FakeExtension:
    """Answers ``connect`` once with the snapshot and every ``callTool`` by echoing its args."""

    def __init__(self, snapshot: dict[str, Any] = SNAPSHOT) -> None:
        self.snapshot = snapshot
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.task: asyncio.Task[None] | None = None

    async def connect(self, session: aiohttp.ClientSession, url: str) -> None:
        self.ws = await session.ws_connect(url, headers={"Origin": ORIGIN}, max_msg_size=0, autoping=True)
        self.task = asyncio.create_task(self._serve(self.ws))

    async def _serve(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        snapshot_sent = False
        async for frame in ws:
            if frame.type is not aiohttp.WSMsgType.TEXT and frame.type is not aiohttp.WSMsgType.BINARY:
                continue
            message = orjson.loads(frame.data)
            kind = message.get("type")
            if kind == "callTool":
                reply = {"type": "toolResult", "callId": message["callId"], "result": message["args"], "error": None}
                await ws.send_frame(orjson.dumps(reply), aiohttp.WSMsgType.TEXT)
            elif kind == "connect" and not snapshot_sent:
                snapshot_sent = True
                await ws.send_frame(orjson.dumps(self.snapshot), aiohttp.WSMsgType.TEXT)
            elif kind == "ping":
                await ws.send_frame(orjson.dumps({"type": "pong"}), aiohttp.WSMsgType.TEXT)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.task is not None:
            await self.task


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
    latencies: list[float] = []
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            started = time.perf_counter()
            status, body = await one_call(session, load)
            latencies.append(time.perf_counter() - started)
            if status != 200:
                raise BenchError(f"call failed: {status} {body[:300]!r}")

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies


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


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Timings:
    """Median, p90 and max of ``runs_ms``, for result classes that hold one run per measurement."""

    runs_ms: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.runs_ms)

    @property
    def p90_ms(self) -> float:
        return percentile(self.runs_ms, 0.90)

    @property
    def max_ms(self) -> float:
        return max(self.runs_ms)


def tool_args(size: int, shape: str) -> dict[str, Any]:
    """The call's arguments, about ``size`` bytes of JSON: one string, or many small objects."""
    if shape == "flat":
        return {"data": "x" * size}
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
        calls=calls,
        p50_ms=percentile(latencies, 0.50) * 1e3,
        p99_ms=percentile(latencies, 0.99) * 1e3,
        cpu_us_per_call=(sum(cpu_after) - sum(cpu_before)) / calls * 1e6,
        user_us_per_call=(cpu_after[0] - cpu_before[0]) / calls * 1e6,
        system_us_per_call=(cpu_after[1] - cpu_before[1]) / calls * 1e6,
        peak_rss_mb=peak_rss / 1024,
        idle_rss_mb=idle_rss / 1024,
        calls_per_s=calls / wall,
        client_cpu_us_per_call=(client_after - client_before) / calls * 1e6,
    )


@dataclass
class Scenario:
    size: int
    concurrency: int
    runs: dict[str, list[Run]] = field(default_factory=lambda: {kind: [] for kind in SERVERS})

    def median(self, kind: str, metric: str) -> float:
        return statistics.median(getattr(run, metric) for run in self.runs[kind])

    def ratio(self, metric: str) -> float:
        relay = self.median("relay", metric)
        return self.median("broker", metric) / relay if relay else math.nan

    def label(self) -> str:
        return f"{size_label(self.size)} x{self.concurrency}"


def size_label(size: int) -> str:
    return f"{size // 1024} KB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


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


@dataclass
class Verdict:
    goal: str
    passed: bool
    detail: str
    values: dict[str, float]


def _ratio_goal(goal: str, scenarios: list[Scenario], metric: str, limit: float) -> Verdict | None:
    if not scenarios:
        return None
    values = {s.label(): s.ratio(metric) for s in scenarios}
    passed = all(v <= limit for v in values.values())
    detail = ", ".join(f"{label} {value:.2f}x" for label, value in values.items())
    return Verdict(goal, passed, detail, values)


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
        "broker: browser-mcp serve (uvloop, orjson, cattrs); relay: scripts/bench_relay.py (asyncio, stdlib json)",
        "",
        table(scenarios),
        "",
        "goals (a benchmark, not a test):",
    ]
    for verdict in verdicts(scenarios):
        lines.append(f"  {'PASS' if verdict.passed else 'MISS'}  {verdict.goal}: {verdict.detail}")
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


def json_report(scenarios: list[Scenario], args: argparse.Namespace) -> dict[str, Any]:
    return {
        "config": {
            "calls_small": args.calls_small,
            "calls_large": args.calls_large,
            "shape": args.shape,
            "warmup": args.warmup,
            "repeat": args.repeat,
            "broker_cmd": args.broker_cmd,
        },
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg_at_end": os.getloadavg(),
        },
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


# Main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Relay tool calls REST -> broker -> fake extension beside a minimal aiohttp relay, as ratios.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 300 / 100 calls, 30 warm-up, no repeat, 3 discovery runs"
    )
    parser.add_argument("--calls-small", type=int, default=2000, help="measured calls per scenario under 100 KB")
    parser.add_argument("--calls-large", type=int, default=2000, help="measured calls per scenario of 100 KB or more")
    parser.add_argument("--warmup", type=int, default=200, help="calls before measuring, per scenario")
    parser.add_argument("--repeat", type=int, default=3, help="run every scenario N times and report medians")
    parser.add_argument(
        "--shape",
        choices=["flat", "nested"],
        default="flat",
        help='the arguments: {"data": "<size bytes>"} (flat, the default) or {"data": [small objects]} (nested)',
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[SMALL, LARGE], metavar="BYTES", help="payload sizes")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=list(CONCURRENCY), metavar="N", help="concurrent calls"
    )
    parser.add_argument(
        "--broker-cmd",
        default=f"{ROOT / '.venv' / 'bin' / 'browser-mcp'} serve",
        help="how to start the broker; --port and --discovery-dir are appended (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument(
        "--suite",
        choices=["rest", "mcp", "all", "discovery"],
        default="all",
        help="rest: the REST calls above; mcp: MCP calls (stdio and HTTP) beside an SDK-based relay, spawn time"
        " and tools/list of 500 tabs x 20 tools (scripts/bench_mcp.py); all: both (the default); discovery: how"
        " soon the real extension in headless Chromium joins a broker that starts, through the native host and"
        " by port probing (scripts/bench_discovery.py; not part of all: it takes about four minutes and two"
        " Chromium launches)",
    )
    mcp = parser.add_argument_group("MCP suite")
    mcp.add_argument("--mcp-calls", type=int, default=1000, help="measured MCP calls per scenario under 100 KB")
    mcp.add_argument("--mcp-calls-large", type=int, default=300, help="measured MCP calls per scenario of 100 KB")
    mcp.add_argument(
        "--mcp-paths",
        nargs="+",
        default=["http-2025", "http-2026", "stdio-2025"],
        choices=["http-2025", "http-2026", "stdio-2025", "stdio-2026"],
        help="transport and protocol era of the MCP call scenarios",
    )
    mcp.add_argument("--mcp-sizes", type=int, nargs="+", default=[SMALL, LARGE], metavar="BYTES")
    mcp.add_argument("--mcp-concurrency", type=int, nargs="+", default=[1, 8], metavar="N")
    mcp.add_argument("--spawn-runs", type=int, default=15, help="spawns of browser-mcp mcp (and of the baseline)")
    mcp.add_argument("--list-requests", type=int, default=40, help="measured tools/list requests per path")
    discovery = parser.add_argument_group("discovery suite")
    discovery.add_argument(
        "--discovery-runs", type=int, default=10, help="brokers started for the native host to announce"
    )
    discovery.add_argument(
        "--discovery-probing-runs",
        type=int,
        help="brokers started for port probing to find, about 10 s each (default: as many as --discovery-runs)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.calls_small, args.calls_large, args.warmup, args.repeat = 300, 100, 30, 1
        args.mcp_calls, args.mcp_calls_large, args.spawn_runs, args.list_requests = 200, 50, 5, 10
        args.discovery_runs = 3
    if args.discovery_probing_runs is None:
        args.discovery_probing_runs = args.discovery_runs
    counts = (args.calls_small, args.calls_large, args.repeat, args.mcp_calls, args.mcp_calls_large)
    runs = (args.spawn_runs, args.list_requests, args.discovery_runs, args.discovery_probing_runs)
    if min(*counts, *runs) < 1 or args.warmup < 0:
        parser.error("call counts, run counts and --repeat must be positive, --warmup not negative")
    return args


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def bench(args: argparse.Namespace) -> list[Scenario]:
    scenarios = [Scenario(size, n) for size in args.sizes for n in args.concurrency]
    broker_cmd = shlex.split(args.broker_cmd)
    turn = 0
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-") as tmp:
        for round_number in range(1, args.repeat + 1):
            for scenario in scenarios:
                # Interleaved, and alternating who goes first, so noise hits both alike.
                order = SERVERS if turn % 2 == 0 else SERVERS[::-1]
                turn += 1
                calls = args.calls_small if scenario.size < LARGE else args.calls_large
                for kind in order:
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


def _event_loop_runner() -> Callable[[Awaitable[Any]], Any]:
    """uvloop for the client side when installed: it keeps the load generator out of the way."""
    try:
        import uvloop  # noqa: PLC0415
    except ImportError:
        return asyncio.run  # type: ignore[return-value]
    return uvloop.run  # type: ignore[no-any-return]


async def bench_all(args: argparse.Namespace) -> tuple[list[Scenario], Any, Any]:
    scenarios = await bench(args) if args.suite in ("rest", "all") else []
    mcp_results = None
    if args.suite in ("mcp", "all"):
        import bench_mcp  # noqa: PLC0415 - the SDK loads only for the MCP suite

        mcp_results = await bench_mcp.bench_mcp(args)
    discovery_results = None
    if args.suite == "discovery":
        import bench_discovery  # noqa: PLC0415 - Playwright loads only for the discovery suite

        discovery_results = await bench_discovery.bench_discovery(args)
    return scenarios, mcp_results, discovery_results


def main(argv: list[str] | None = None) -> int:
    if not Path("/proc/self/stat").exists():
        print("scripts/bench needs Linux: it reads the servers' counters from /proc", file=sys.stderr)
        return 2
    args = parse_args(argv)
    try:
        scenarios, mcp_results, discovery_results = _event_loop_runner()(bench_all(args))
    except BenchError as exc:
        print(f"scripts/bench: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    output: dict[str, Any] = {}
    if scenarios:
        print(report(scenarios, args))
        output = json_report(scenarios, args)
    if mcp_results is not None:
        import bench_mcp  # noqa: PLC0415

        print(("\n\n" if scenarios else "") + bench_mcp.mcp_report(mcp_results, args))
        output.setdefault("config", {"warmup": args.warmup, "repeat": args.repeat, "broker_cmd": args.broker_cmd})
        output.setdefault("machine", json_report([], args)["machine"])
        output["mcp"] = bench_mcp.mcp_json(mcp_results, args)
    if discovery_results is not None:
        import bench_discovery  # noqa: PLC0415

        print(bench_discovery.discovery_report(discovery_results, args))
        output.setdefault("config", {"broker_cmd": args.broker_cmd})
        output.setdefault("machine", json_report([], args)["machine"])
        output["discovery"] = bench_discovery.discovery_json(discovery_results, args)
    if args.json:
        args.json.write_text(json.dumps(output, indent=2) + "\n")
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    # scripts/bench_mcp.py and scripts/bench_discovery.py import this module as ``bench``: one module, not a
    # second copy.
    sys.modules.setdefault("bench", sys.modules[__name__])
    sys.exit(main())
