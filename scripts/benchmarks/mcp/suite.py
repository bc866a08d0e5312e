"""The MCP part of scripts/bench: the broker's MCP paths beside a minimal SDK-based relay.

Three measurements, each against fresh processes (Linux ``/proc`` counters, as the REST part):

1. **Call CPU.** The official SDK client (``mcp.Client``) calls ``call_page_tool {tab: 1, tool:
   "echo", arguments: {"data": "<size bytes>"}}`` ``calls`` times through ``concurrency`` workers
   sharing one MCP session, over

   - Streamable HTTP at ``/mcp``, 2025-11-25 era (``mode="legacy"``) and 2026-07-28 era
     (stateless; the bearer is a client token from ``broker.core.security.client_token``);
   - stdio: the client spawns ``browser-mcp mcp`` (the console script), which relays to the
     broker's ``/mcp/stream``; the CPU of the broker and of the relay process are both counted
     and reported apart;

   beside ``scripts/benchmarks/baselines/mcp_relay.py`` (the SDK's low-level ``Server`` with one forwarding tool,
   served by ``streamable_http_app()`` under uvicorn, or by ``stdio_server()``). The same lean
   fake extension answers both. Server CPU per call is ``utime + stime`` over the measured calls.
2. **Spawn.** With a broker running, the time from spawning ``browser-mcp mcp`` to the first line
   on its stdout answering an ``initialize`` written to its stdin at once (median and p90), and
   the same for the SDK stdio baseline server for context.
3. **tools/list** with a fake extension of 500 tabs x 20 tools, all owned by one MCP session
   (claimed with the ``tabs`` tool): the broker's CPU per ``tools/list`` request (many requests,
   divided) and the client's round trip, over HTTP in both eras (raw HTTP: the SDK client takes
   about half a second to parse 10,000 tools) and over stdio (broker + relay CPU); and the
   broker's CPU serving the official SDK client over HTTP, its 2025-11-25 era (a stateful
   session, its GET stream open) beside its 2026-07-28 era; in ``scripts/benchmarks/mcp/lists.py``.

This module runs the suite and writes its report. The harness (servers, ``/proc`` counters, the
fake extension, the raw MCP clients) is ``scripts/benchmarks/support/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import mcp_types as types
import orjson
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from broker.core.security import client_token

from ..support import LARGE, READY_TIMEOUT, ROOT, START_TIMEOUT, BenchError, progress, words_of
from ..support.fake_extension import FakeExtension
from ..support.mcp_clients import CLIENT_LABEL, INITIALIZE, era_of, loopback_http, mcp_env, relay_command
from ..support.proc import child_pid, status_kib, total_cpu
from ..support.report import Verdict, goal_lines, size_label
from ..support.servers import BROWSER_MCP, MCP_RELAY, Server, start_broker, start_mcp_baseline_http
from ..support.stats import Medians, Timings, call_figures, taking_turns, timed_calls
from .lists import LIST_PATHS, TABS, TOOLS_PER_TAB, ListResult, bench_tools_list

MCP_SERVERS = ("broker", "baseline")
# The fake's tab the calls go to.
CALLED_TAB = 1

# The goals.
CPU_GOAL = 1.0
SPAWN_GOAL_MS = 600.0
LIST_GOAL_MS = 20.0
LIST_ERA_GOAL = 1.5


# The call benchmark


@dataclass
class McpRun:
    server: str
    path: str
    size: int
    concurrency: int
    calls: int
    p50_ms: float
    p99_ms: float
    cpu_us_per_call: float  # every server process: broker (+ relay over stdio)
    main_cpu_us_per_call: float  # the broker, or the baseline server
    relay_cpu_us_per_call: float  # browser-mcp mcp over stdio, else 0
    peak_rss_mb: float
    calls_per_s: float
    client_cpu_us_per_call: float


@contextlib.asynccontextmanager
async def mcp_session(
    kind: str, path: str, workdir: Path, broker_cmd: list[str]
) -> AsyncIterator[tuple[Client, list[int], Server | None]]:
    """A fresh server with the lean fake on its link and an SDK client session to it.

    Yields the client, the pids to count (the server first) and the broker or HTTP server.
    """
    era = era_of(path)
    async with AsyncExitStack() as stack:
        fake_session = await stack.enter_async_context(aiohttp.ClientSession())
        fake = FakeExtension()
        info = types.Implementation(name="bench", version="1")
        errlog = stack.enter_context((workdir / f"{kind}-stdio.log").open("a"))
        server: Server | None = None
        if kind == "broker":
            server = await start_broker(workdir, broker_cmd)
            stack.push_async_callback(server.stop)
            await fake.connect(fake_session, server.url + "/")
            stack.push_async_callback(fake.close)
            if path.startswith("http"):
                http = await stack.enter_async_context(
                    loopback_http({"Authorization": f"Bearer {client_token(server.token, CLIENT_LABEL)}"})
                )
                transport: Any = streamable_http_client(server.url + "/mcp", http_client=http)
                pids = [server.pid]
            else:
                command, *relay_args = relay_command(server)
                params = StdioServerParameters(command=command, args=relay_args, env=mcp_env(workdir))
                transport = stdio_client(params, errlog=errlog)
                pids = [server.pid]
            client = await stack.enter_async_context(Client(transport, mode=era, client_info=info))
            if path.startswith("stdio"):
                pids.append(child_pid(f"{BROWSER_MCP} mcp"))
            await mcp_claim(client, CALLED_TAB)
        elif path.startswith("http"):
            server, link = await start_mcp_baseline_http(workdir)
            stack.push_async_callback(server.stop)
            await fake.connect(fake_session, link)
            stack.push_async_callback(fake.close)
            http = await stack.enter_async_context(loopback_http({"Authorization": f"Bearer {server.token}"}))
            transport = streamable_http_client(server.url + "/mcp", http_client=http)
            client = await stack.enter_async_context(Client(transport, mode=era, client_info=info))
            pids = [server.pid]
        else:
            port_file = Path(tempfile.mktemp(prefix="port-", dir=workdir))
            params = StdioServerParameters(
                command=sys.executable, args=["-m", MCP_RELAY, "stdio", "--port-file", str(port_file)], cwd=ROOT
            )
            client = await stack.enter_async_context(
                Client(stdio_client(params, errlog=errlog), mode=era, client_info=info)
            )
            pids = [child_pid(MCP_RELAY)]
            deadline = time.monotonic() + START_TIMEOUT
            while (port := read_port(port_file)) is None:
                if time.monotonic() > deadline:
                    raise BenchError("the stdio baseline did not write its port")
                await asyncio.sleep(0.01)
            await fake.connect(fake_session, f"ws://127.0.0.1:{port}/")
            stack.push_async_callback(fake.close)
        yield client, pids, server


def read_port(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except FileNotFoundError:
        return None


def result_text(result: types.CallToolResult) -> str:
    block = result.content[0] if result.content else None
    return block.text if isinstance(block, types.TextContent) else ""


async def mcp_claim(client: Client, tab: int) -> None:
    """Claim the called tab (the broker calls page tools only in the client's own), once the
    fake's snapshot has reached the broker; the baselines have no owners."""
    deadline = time.monotonic() + READY_TIMEOUT
    while (result := await client.call_tool("tabs", {"action": "claim", "tab": tab})).is_error:
        if time.monotonic() > deadline:
            raise BenchError(f"claiming tab {tab} failed: {result_text(result)[:300]!r}")
        await asyncio.sleep(0.02)


async def mcp_call(client: Client, arguments: dict[str, Any], size: int) -> None:
    result = await client.call_tool("call_page_tool", arguments)
    text = result_text(result)
    if result.is_error or len(text) < size * 9 // 10:
        raise BenchError(f"the call failed: {text[:300]!r}")


async def mcp_ready(client: Client, arguments: dict[str, Any], size: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        try:
            await mcp_call(client, arguments, size)
        except BenchError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.02)
        else:
            return


async def mcp_drive(client: Client, arguments: dict[str, Any], size: int, concurrency: int, calls: int) -> list[float]:
    return await timed_calls(lambda: mcp_call(client, arguments, size), concurrency, calls)


async def run_mcp_scenario(
    kind: str, path: str, size: int, concurrency: int, calls: int, warmup: int, workdir: Path, broker_cmd: list[str]
) -> McpRun:
    arguments = {"tab": CALLED_TAB, "tool": "echo", "arguments": {"data": words_of(size)}}
    async with mcp_session(kind, path, workdir, broker_cmd) as (client, pids, _server):
        await mcp_ready(client, arguments, size)
        await mcp_drive(client, arguments, size, concurrency, max(warmup, concurrency))
        before, client_before = [total_cpu(p) for p in pids], time.process_time()
        started = time.perf_counter()
        latencies = await mcp_drive(client, arguments, size, concurrency, calls)
        wall = time.perf_counter() - started
        after, client_after = [total_cpu(p) for p in pids], time.process_time()
        peak_rss = sum(status_kib(p, "VmHWM") for p in pids)
    spent = [(a - b) / calls * 1e6 for a, b in zip(after, before, strict=True)]
    return McpRun(
        server=kind,
        path=path,
        size=size,
        concurrency=concurrency,
        cpu_us_per_call=sum(spent),
        main_cpu_us_per_call=spent[0],
        relay_cpu_us_per_call=sum(spent[1:]),
        peak_rss_mb=peak_rss / 1024,
        **call_figures(latencies, wall, client_after - client_before),
    )


@dataclass
class McpScenario(Medians):
    baseline = "baseline"

    path: str
    size: int
    concurrency: int
    runs: dict[str, list[McpRun]] = field(default_factory=lambda: {kind: [] for kind in MCP_SERVERS})

    def label(self) -> str:
        return f"{self.path} {size_label(self.size)} x{self.concurrency}"


# Spawn to the first initialize reply


async def spawn_once(command: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning ``command`` to the first line it writes answering an ``initialize``."""
    line = orjson.dumps(INITIALIZE) + b"\n"
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env, cwd=ROOT,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line)
    try:
        answer = await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT)
        elapsed = time.perf_counter() - started
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
    if b'"protocolVersion"' not in answer:
        raise BenchError(f"{shlex.join(command)} answered initialize with {answer[:300]!r}")
    return elapsed


@dataclass
class SpawnResult(Timings):
    server: str
    runs_ms: list[float]


async def bench_spawn(runs: int, workdir: Path, broker_cmd: list[str]) -> list[SpawnResult]:
    broker = await start_broker(workdir, broker_cmd)
    env = {**os.environ, **mcp_env(workdir)}
    env.pop("LOG_LEVEL", None)
    results = {"broker": SpawnResult("broker", []), "baseline": SpawnResult("baseline", [])}
    commands = {
        "broker": relay_command(broker),
        "baseline": [sys.executable, "-m", MCP_RELAY, "stdio"],
    }
    try:
        for turn in range(runs):
            order = MCP_SERVERS if turn % 2 == 0 else MCP_SERVERS[::-1]
            for kind in order:
                results[kind].runs_ms.append(await spawn_once(commands[kind], env) * 1e3)
    finally:
        await broker.stop()
    for result in results.values():
        progress(f"spawn {result.server:<8} median {result.median_ms:5.0f} ms  p90 {result.p90_ms:5.0f} ms")
    return list(results.values())


# The suite


@dataclass
class McpResults:
    scenarios: list[McpScenario]
    spawn: list[SpawnResult]
    tools_list: list[ListResult]


async def bench_mcp(args: Any) -> McpResults:
    broker_cmd = shlex.split(args.broker_cmd)
    scenarios = [
        McpScenario(path, size, n) for path in args.mcp_paths for size in args.mcp_sizes for n in args.mcp_concurrency
    ]
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-mcp-") as tmp:
        workdir = Path(tmp)
        spawn = await bench_spawn(args.spawn_runs, workdir, broker_cmd)
        listed = [await bench_tools_list(path, args.list_requests, workdir, broker_cmd) for path in LIST_PATHS]
        for round_number, scenario, kind in taking_turns(scenarios, MCP_SERVERS, args.repeat):
            calls = args.mcp_calls if scenario.size < LARGE else args.mcp_calls_large
            run = await run_mcp_scenario(
                kind, scenario.path, scenario.size, scenario.concurrency, calls, args.warmup, workdir, broker_cmd
            )
            scenario.runs[kind].append(run)
            relay = f" (relay {run.relay_cpu_us_per_call:.0f})" if run.relay_cpu_us_per_call else ""
            progress(
                f"[{round_number}/{args.repeat}] {scenario.label():<22} {kind:<8}"
                f" p50 {run.p50_ms:7.3f} ms  p99 {run.p99_ms:7.3f} ms  CPU {run.cpu_us_per_call:6.0f}"
                f"{relay} us/call  {run.calls_per_s:5.0f} calls/s"
            )
    return McpResults(scenarios, spawn, listed)


# Report


def mcp_table(scenarios: list[McpScenario]) -> str:
    sub = (
        f"{'path size x conc':<22} | {'p50 ms':>7} {'p99 ms':>7} {'CPU us':>7} {'relay us':>8} {'RSS MB':>7}"
        f" | {'p50 ms':>7} {'p99 ms':>7} {'CPU us':>7} {'RSS MB':>7} | {'CPU':>6} {'p99':>6}"
    )
    head = f"{'scenario':<22} | {'broker (CPU = broker + relay)':^41} | {'SDK baseline':^31} | {'ratio':^13}"
    lines = [head, sub, "-" * len(sub)]
    for s in scenarios:
        b = {m: s.median("broker", m) for m in ("p50_ms", "p99_ms", "cpu_us_per_call", "relay_cpu_us_per_call")}
        relay = f"{b['relay_cpu_us_per_call']:>8.0f}" if s.path.startswith("stdio") else f"{'-':>8}"
        lines.append(
            f"{s.label():<22} | {b['p50_ms']:>7.3f} {b['p99_ms']:>7.3f} {b['cpu_us_per_call']:>7.0f} {relay}"
            f" {s.median('broker', 'peak_rss_mb'):>7.1f}"
            f" | {s.median('baseline', 'p50_ms'):>7.3f} {s.median('baseline', 'p99_ms'):>7.3f}"
            f" {s.median('baseline', 'cpu_us_per_call'):>7.0f} {s.median('baseline', 'peak_rss_mb'):>7.1f}"
            f" | {s.ratio():>5.2f}x {s.ratio('p99_ms'):>5.2f}x"
        )
    return "\n".join(lines)


def mcp_verdicts(results: McpResults) -> list[Verdict]:
    found: list[Verdict] = []
    if results.scenarios:
        found.append(
            Verdict.at_most(
                f"broker CPU per MCP call (stdio: broker + relay) <= {CPU_GOAL}x the SDK baseline's",
                {s.label(): s.ratio() for s in results.scenarios},
                CPU_GOAL,
            )
        )
    broker_spawn = next((s for s in results.spawn if s.server == "broker"), None)
    if broker_spawn is not None:
        baseline = next(s for s in results.spawn if s.server == "baseline")
        found.append(
            Verdict(
                f"spawn of browser-mcp mcp to its first initialize reply <= {SPAWN_GOAL_MS:g} ms",
                broker_spawn.median_ms <= SPAWN_GOAL_MS,
                f"median {broker_spawn.median_ms:.0f} ms, p90 {broker_spawn.p90_ms:.0f} ms"
                f" (SDK stdio baseline: median {baseline.median_ms:.0f} ms, p90 {baseline.p90_ms:.0f} ms)",
                {"median_ms": broker_spawn.median_ms, "p90_ms": broker_spawn.p90_ms},
            )
        )
    if results.tools_list:
        found.append(
            Verdict.at_most(
                f"tools/list of {TABS} tabs x {TOOLS_PER_TAB} tools <= {LIST_GOAL_MS:g} ms broker-side (CPU/request)",
                {r.path: r.cpu_ms for r in results.tools_list},
                LIST_GOAL_MS,
                unit=" ms",
                digits=1,
            )
        )
        by_path = {r.path: r.cpu_ms for r in results.tools_list}
        if {"sdk-2025", "sdk-2026"} <= by_path.keys():
            ratio = by_path["sdk-2025"] / max(by_path["sdk-2026"], 1e-3)
            found.append(
                Verdict(
                    f"tools/list with the SDK client, 2025-11-25 session (GET stream open) <= {LIST_ERA_GOAL:g}x"
                    " the 2026-07-28 era's broker CPU",
                    ratio <= LIST_ERA_GOAL,
                    f"{ratio:.2f}x ({by_path['sdk-2025']:.1f} ms vs {by_path['sdk-2026']:.1f} ms a request)",
                    {"ratio": ratio, "sdk-2025": by_path["sdk-2025"], "sdk-2026": by_path["sdk-2026"]},
                )
            )
    return found


def mcp_report(results: McpResults, args: Any) -> str:
    lines = [
        "browser-mcp bench, MCP: SDK client -> call_page_tool -> server -> fake extension -> back;"
        f" {args.mcp_calls} calls (100 B) / {args.mcp_calls_large} calls (100 KB) measured per scenario after"
        f" {args.warmup} warm-up, fresh processes per scenario, median of {args.repeat} run(s)",
        "broker: browser-mcp serve (/mcp; stdio = browser-mcp mcp -> /mcp/stream);"
        " SDK baseline: scripts/benchmarks/baselines/mcp_relay.py (low-level Server; streamable_http_app under uvicorn,"
        " or stdio_server)",
        "",
    ]
    if results.scenarios:
        lines += [mcp_table(results.scenarios), ""]
    if results.spawn:
        lines.append(f"spawn to first initialize reply ({args.spawn_runs} runs each, a broker already running):")
        for s in results.spawn:
            what = "browser-mcp mcp" if s.server == "broker" else "SDK stdio baseline"
            lines.append(
                f"  {what:<20} median {s.median_ms:5.0f} ms  p90 {s.p90_ms:5.0f} ms"
                f"  min {min(s.runs_ms):5.0f}  max {max(s.runs_ms):5.0f}"
            )
        lines.append("")
    if results.tools_list:
        lines.append(
            f"tools/list, {TABS} tabs x {TOOLS_PER_TAB} tools owned by the client ({args.list_requests} requests):"
        )
        lines.append(
            f"  {'path':<10} {'tools':>6} {'MB':>5} {'broker CPU ms':>13} {'relay CPU ms':>12}"
            f" {'RTT p50 ms':>10} {'RTT max':>8} {'first':>7} {'tools/call CPU ms':>17}"
        )
        for r in results.tools_list:
            relay = f"{r.relay_cpu_ms:>12.1f}" if r.path.startswith("stdio") else f"{'-':>12}"
            size = f"{r.answer_mb:>5.2f}" if r.answer_mb else f"{'-':>5}"
            lines.append(
                f"  {r.path:<10} {r.tools:>6} {size} {r.cpu_ms:>13.1f} {relay}"
                f" {r.rtt_p50_ms:>10.1f} {r.rtt_max_ms:>8.1f} {r.first_rtt_ms:>7.1f} {r.call_cpu_ms:>17.1f}"
            )
        lines.append("  (sdk-: the official SDK client; its round trips include its own parsing of the list)")
        lines.append("")
    lines += goal_lines("MCP goals (a benchmark, not a test):", mcp_verdicts(results))
    if results.scenarios:
        lines += [
            "",
            "details: broker CPU alone and the client's CPU (SDK client + fake extension; never counted above)",
            f"  {'scenario':<22} {'broker us':>9} {'relay us':>8} {'calls/s':>8} {'client us':>9}"
            f" | {'baseline calls/s':>16} {'client us':>9}",
        ]
        for s in results.scenarios:
            lines.append(
                f"  {s.label():<22} {s.median('broker', 'main_cpu_us_per_call'):>9.0f}"
                f" {s.median('broker', 'relay_cpu_us_per_call'):>8.0f} {s.median('broker', 'calls_per_s'):>8.0f}"
                f" {s.median('broker', 'client_cpu_us_per_call'):>9.0f}"
                f" | {s.median('baseline', 'calls_per_s'):>16.0f}"
                f" {s.median('baseline', 'client_cpu_us_per_call'):>9.0f}"
            )
    return "\n".join(lines)


def mcp_json(results: McpResults, args: Any) -> dict[str, Any]:
    metrics = ("p50_ms", "p99_ms", "cpu_us_per_call", "main_cpu_us_per_call", "relay_cpu_us_per_call", "peak_rss_mb")
    return {
        "config": {
            "calls": args.mcp_calls,
            "calls_large": args.mcp_calls_large,
            "paths": args.mcp_paths,
            "spawn_runs": args.spawn_runs,
            "list_requests": args.list_requests,
        },
        "scenarios": [
            {
                "path": s.path,
                "size": s.size,
                "concurrency": s.concurrency,
                **{kind: {m: s.median(kind, m) for m in (*metrics, "calls_per_s")} for kind in MCP_SERVERS},
                "runs": [asdict(run) for kind in MCP_SERVERS for run in s.runs[kind]],
                "ratios": {m: s.ratio(m) for m in ("cpu_us_per_call", "p50_ms", "p99_ms")},
            }
            for s in results.scenarios
        ],
        "spawn": [{**asdict(s), "median_ms": s.median_ms, "p90_ms": s.p90_ms} for s in results.spawn],
        "tools_list": [asdict(r) for r in results.tools_list],
        "goals": [asdict(v) for v in mcp_verdicts(results)],
    }
