"""The daemon part of scripts/bench: what the broker costs as a background process, beside its baselines.

Five figures of the daemon, each measured in the same run as its baseline (Linux ``/proc``):

1. **Start-up.** Spawn to the first answered ``GET /status`` of ``browser-mcp serve --port 0``
   (its announcement read from stdout, the port and token from its discovery file, then the
   request), beside a minimal aiohttp server started with the same Python (``MINIMAL_SERVER``
   below: one ``GET /status`` route, on port 0, announcing its port on stdout the same way).
   ``runs`` spawns of each, taking turns and alternating which goes first; median and p90, and
   beside them each server's own CPU until that answer, which a shared machine's load moves less.
2. **Idle memory.** Each of those processes' ``VmRSS`` ``SETTLE_S`` after it answered its first
   ``GET /status``, before any MCP client; then, for the broker, its ``VmRSS`` ``SETTLE_S`` after
   its first MCP request (a 2025-11-25 ``initialize`` over HTTP, which loads the MCP SDK).
3. **A page tool's definition.** A fake extension whose one tab declares a typical tool
   (``TYPICAL_TOOL``: a name, a sentence of description, three described properties, one
   required); the official SDK client claims the tab over HTTP (2025-11-25) and lists its tools;
   the byte size of the broker's definition of that tool, as compact JSON, beside the declared
   tool's.
4. **Claiming tabs one by one.** A fake extension with ``tabs`` tabs of ``CLAIM_TOOLS`` page tools
   each; one MCP session (raw JSON-RPC over HTTP, 2025-11-25, its GET stream open to hear
   ``notifications/tools/list_changed``) claims every tab with the ``tabs`` tool, each call
   awaited before the next, while N other sessions sit idle (initialized, tools listed once, GET
   stream open). Total time, time per claim (median, p90, and the medians of the first and last
   third of the claims, to show whether a claim costs more as the claimed tabs pile up), the
   broker's CPU per claim and, for context, while the sessions sat idle just before (CPU from
   the scheduler's ``schedstat``, in nanoseconds), and the notifications each side heard. A fresh
   broker per run; ``rounds`` runs for each N of ``sessions`` (1 and 10 by default), taking
   turns, to show whether it grows with the sessions; each figure is the median of the rounds.

5. **Slow bodies.** The owner's ``GET /status``, each on a new connection, with the broker quiet
   and while a client token opens a request declaring a MiB of body and sending one byte every
   20 ms, under a limit of 1,024 open files (``scripts/benchmarks/daemon/flood.py``): median and p99 of
   each, the owner's requests left unanswered, and what the flood met (429, 408, still held).

Of the goals, "grows with what changed, not with sessions x tabs" is read here as:
the per-claim median with the most idle sessions at most ``GROWTH_LIMIT`` x the one with the
fewest, and for every N the last third's median at most ``GROWTH_LIMIT`` x the first third's.
Medians, because on a shared machine a burst of someone else's load makes a few claims take tens
of milliseconds, which moves the totals by half but the medians hardly at all.
"""

from __future__ import annotations

import asyncio
import compileall
import shlex
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import mcp_types as types
import orjson
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from broker.core.security import client_token

from ..support import CALL_TIMEOUT, READY_TIMEOUT, ROOT, BenchError, progress
from ..support.fake_extension import FakeExtension
from ..support.mcp_clients import CLIENT_LABEL, LEGACY, RawHttp, loopback_http
from ..support.proc import run_seconds, status_kib
from ..support.report import Verdict, goal_lines
from ..support.servers import Server, announcement, start_broker, wait_for_tabs
from ..support.stats import Timings
from .claims import CLAIM_METRICS, CLAIM_TOOLS, SETTLE_S, ClaimScenario, bench_claims
from .flood import FILE_LIMIT, SlowBodies, bench_slow_bodies

SERVERS = ("broker", "minimal")

# The goals.
STARTUP_GOAL = 1.5  # x the minimal aiohttp server's median
IDLE_RSS_GOAL_MB = 45.0
DEFINITION_GOAL = 1.3  # x the declared tool's bytes
GROWTH_LIMIT = 1.5  # this bench's reading of "grows with what changed"
FLOOD_GOAL = 2.0  # x the quiet p99 of the owner's GET /status, with every one answered


# The baseline of start-up and idle memory: what a minimal aiohttp server is, started with the
# same Python as the broker's console script. Plain asyncio loop; SIGTERM's default action ends it.
MINIMAL_SERVER = """
import asyncio, os
from aiohttp import web

async def status(request):
    return web.json_response({"status": "ok", "pid": os.getpid()})

async def main():
    app = web.Application()
    app.router.add_get("/status", status)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    print(f"minimal server listening on http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""

# What a page declares for a typical tool: 339 bytes of compact JSON.
TYPICAL_TOOL: dict[str, Any] = {
    "name": "search_products",
    "description": "Search the shop for products matching the query.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "words to look for"},
            "limit": {"type": "integer", "description": "at most this many"},
            "inStock": {"type": "boolean", "description": "only in stock"},
        },
        "required": ["query"],
    },
}
TYPICAL_TAB = {"id": 1, "title": "Shop: catalogue", "url": "https://shop.example/catalogue", "tools": [TYPICAL_TOOL]}


def compact(value: Any) -> bytes:
    return orjson.dumps(value)


# Start-up and idle memory


async def start_minimal(workdir: Path) -> Server:
    log = workdir / "minimal.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", MINIMAL_SERVER, stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT
        )
    found = await announcement(process, log, "the minimal server", r"listening on http://127\.0\.0\.1:(\d+)")
    return Server("minimal", process, process.pid, int(found.group(1)), "", log)


async def first_status(session: aiohttp.ClientSession, server: Server) -> None:
    """Until ``GET /status`` is answered with 200 (the first one is, once the server announced itself)."""
    headers = {"Authorization": f"Bearer {server.token}"} if server.token else {}
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        try:
            async with session.get(server.url + "/status", headers=headers) as response:
                body = await response.read()
                if response.status == 200:
                    return
                problem = f"{response.status} {body[:200]!r}"
        except aiohttp.ClientConnectionError as exc:
            problem = str(exc)
        if time.monotonic() > deadline:
            raise BenchError(f"the {server.kind} did not answer GET /status: {problem}")
        await asyncio.sleep(0.005)


@dataclass
class StartupResult(Timings):
    server: str
    runs_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # the server's CPU until that first answer
    idle_rss_mb: list[float] = field(default_factory=list)
    mcp_rss_mb: list[float] = field(default_factory=list)  # the broker after its first MCP request


async def startup_once(
    kind: str, result: StartupResult, session: aiohttp.ClientSession, workdir: Path, broker_cmd: list[str]
) -> None:
    started = time.perf_counter()
    server = await (start_broker(workdir, broker_cmd) if kind == "broker" else start_minimal(workdir))
    try:
        await first_status(session, server)
        result.runs_ms.append((time.perf_counter() - started) * 1e3)
        result.cpu_ms.append(run_seconds(server.pid) * 1e3)
        await asyncio.sleep(SETTLE_S)
        result.idle_rss_mb.append(status_kib(server.pid, "VmRSS") / 1024)
        if kind == "broker":
            client = RawHttp(session, server.url + "/mcp", server.token, LEGACY)
            await client.open()
            await asyncio.sleep(SETTLE_S)
            result.mcp_rss_mb.append(status_kib(server.pid, "VmRSS") / 1024)
            await client.close()
    finally:
        await server.stop()


async def bench_startup(runs: int, workdir: Path, broker_cmd: list[str]) -> dict[str, StartupResult]:
    results = {kind: StartupResult(kind) for kind in SERVERS}
    # The broker's modules from bytecode, as an installed wheel (or an earlier run) has them and as the
    # minimal server's aiohttp has its own: with PYTHONDONTWRITEBYTECODE set, each spawn would otherwise
    # compile ours from source, some 70 ms that no user's start pays twice.
    compileall.compile_dir(ROOT / "broker", quiet=1)
    # A new connection per request, as a first request to a fresh server always is.
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(force_close=True), timeout=aiohttp.ClientTimeout(total=CALL_TIMEOUT)
    ) as session:
        for turn in range(runs):
            for kind in SERVERS if turn % 2 == 0 else SERVERS[::-1]:
                await startup_once(kind, results[kind], session, workdir, broker_cmd)
    for r in results.values():
        mcp = f"  after the first MCP request {statistics.median(r.mcp_rss_mb):5.1f} MB" if r.mcp_rss_mb else ""
        progress(
            f"start-up {r.server:<7} median {r.median_ms:5.0f} ms  p90 {r.p90_ms:5.0f} ms"
            f"  CPU {statistics.median(r.cpu_ms):4.0f} ms"
            f"  idle RSS {statistics.median(r.idle_rss_mb):5.1f} MB{mcp}"
        )
    return results


# A page tool's definition


@dataclass
class DefinitionResult:
    declared_bytes: int
    broker_bytes: int
    declared: str
    broker: str

    @property
    def ratio(self) -> float:
        return self.broker_bytes / self.declared_bytes


async def bench_definition(workdir: Path, broker_cmd: list[str]) -> DefinitionResult:
    snapshot = {"type": "connected", "browser": {"name": "Bench", "version": "1"}, "tabs": [TYPICAL_TAB]}
    broker = await start_broker(workdir, broker_cmd)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(broker.stop)
        session = await stack.enter_async_context(aiohttp.ClientSession())
        fake = FakeExtension(snapshot)
        await fake.connect(session, broker.url + "/")
        stack.push_async_callback(fake.close)
        await wait_for_tabs(session, broker, 1)
        http = await stack.enter_async_context(
            loopback_http({"Authorization": f"Bearer {client_token(broker.token, CLIENT_LABEL)}"})
        )
        transport = streamable_http_client(broker.url + "/mcp", http_client=http)
        info = types.Implementation(name="bench", version="1")
        client = await stack.enter_async_context(Client(transport, mode=LEGACY, client_info=info))
        claimed = await client.call_tool("tabs", {"action": "claim", "tab": 1})
        if claimed.is_error:
            raise BenchError(f"claiming the tab failed: {claimed.content}")
        listed = await client.list_tools()
    found = [t for t in listed.tools if t.name.endswith(str(TYPICAL_TOOL["name"]))]
    if len(found) != 1:
        raise BenchError(f"tools/list has no single definition of the page's tool: {[t.name for t in listed.tools]}")
    # Only what came over the wire: the fields the server set, none the client's model fills in.
    ours = found[0].model_dump(by_alias=True, mode="json", exclude_unset=True, exclude_none=True)
    result = DefinitionResult(
        len(compact(TYPICAL_TOOL)), len(compact(ours)), compact(TYPICAL_TOOL).decode(), compact(ours).decode()
    )
    progress(
        f"definition: declared {result.declared_bytes} B, the broker's {result.broker_bytes} B ({result.ratio:.2f}x)"
    )
    return result


# The suite


@dataclass
class DaemonResults:
    startup: dict[str, StartupResult]
    definition: DefinitionResult
    claims: list[ClaimScenario]
    slow_bodies: SlowBodies


async def bench_daemon(args: Any) -> DaemonResults:
    broker_cmd = shlex.split(args.broker_cmd)
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-daemon-") as tmp:
        workdir = Path(tmp)
        startup = await bench_startup(args.daemon_runs, workdir, broker_cmd)
        definition = await bench_definition(workdir, broker_cmd)
        slow_bodies = await bench_slow_bodies(workdir, broker_cmd)
        claims = [ClaimScenario(n) for n in args.daemon_sessions]
        # Rounds taking turns, so a burst of load on a shared machine hits every N alike.
        for _ in range(args.daemon_rounds):
            for scenario in claims:
                scenario.runs.append(await bench_claims(args.daemon_tabs, scenario.other_sessions, workdir, broker_cmd))
    return DaemonResults(startup, definition, claims, slow_bodies)


# Report


def daemon_verdicts(results: DaemonResults) -> list[Verdict]:
    broker, minimal = results.startup["broker"], results.startup["minimal"]
    startup_ratio = broker.median_ms / minimal.median_ms
    cpu_ratio = statistics.median(broker.cpu_ms) / statistics.median(minimal.cpu_ms)
    idle = statistics.median(broker.idle_rss_mb)
    after_mcp = statistics.median(broker.mcp_rss_mb)
    definition = results.definition
    found = [
        Verdict(
            f"start-up, spawn to the first answered GET /status <= {STARTUP_GOAL}x the minimal aiohttp server's",
            startup_ratio <= STARTUP_GOAL,
            f"{startup_ratio:.2f}x (median {broker.median_ms:.0f} ms, p90 {broker.p90_ms:.0f} ms;"
            f" minimal: median {minimal.median_ms:.0f} ms, p90 {minimal.p90_ms:.0f} ms; CPU until then"
            f" {cpu_ratio:.2f}x)",
            {
                "ratio": startup_ratio,
                "broker_median_ms": broker.median_ms,
                "minimal_median_ms": minimal.median_ms,
                "cpu_ratio": cpu_ratio,
            },
        ),
        Verdict(
            f"memory, idle, before any MCP client <= {IDLE_RSS_GOAL_MB:g} MB",
            idle <= IDLE_RSS_GOAL_MB,
            f"{idle:.1f} MB (minimal server {statistics.median(minimal.idle_rss_mb):.1f} MB;"
            f" the broker after its first MCP request: {after_mcp:.1f} MB)",
            {"idle_mb": idle, "minimal_idle_mb": statistics.median(minimal.idle_rss_mb), "after_mcp_mb": after_mcp},
        ),
        Verdict(
            f"a page tool's MCP definition <= {DEFINITION_GOAL}x the bytes the page declared",
            definition.ratio <= DEFINITION_GOAL,
            f"{definition.ratio:.2f}x ({definition.broker_bytes} vs {definition.declared_bytes} bytes)",
            {
                "ratio": definition.ratio,
                "broker_bytes": definition.broker_bytes,
                "declared_bytes": definition.declared_bytes,
            },
        ),
    ]
    slow = results.slow_bodies
    flooded_p99 = slow.p99(flooded=True) if slow.flooded_ms else float("inf")
    flood_ratio = flooded_p99 / slow.p99(flooded=False)
    found.append(
        Verdict(
            f"the owner's GET /status under a client token's slow-body flood: every one answered, p99"
            f" <= {FLOOD_GOAL}x the quiet p99",
            slow.shut_out == 0 and flood_ratio <= FLOOD_GOAL,
            f"{flood_ratio:.2f}x (p99 {flooded_p99:.2f} ms flooded, {slow.p99(flooded=False):.2f} ms quiet);"
            f" {slow.shut_out} of {len(slow.flooded_ms) + slow.shut_out} unanswered",
            {"ratio": flood_ratio, "flooded_p99_ms": flooded_p99, "shut_out": slow.shut_out},
        )
    )
    if results.claims:
        fewest = min(results.claims, key=lambda c: c.other_sessions)
        most = max(results.claims, key=lambda c: c.other_sessions)
        with_sessions = most.median("median_ms") / fewest.median("median_ms")
        cpu_with_sessions = most.median("broker_cpu_ms_per_claim") / fewest.median("broker_cpu_ms_per_claim")
        with_tabs = {c.other_sessions: c.median("last_ms") / c.median("first_ms") for c in results.claims}
        found.append(
            Verdict(
                f"claiming {fewest.runs[0].tabs} tabs one by one grows with what changed, not with sessions x tabs"
                f" (<= {GROWTH_LIMIT}x)",
                with_sessions <= GROWTH_LIMIT and all(v <= GROWTH_LIMIT for v in with_tabs.values()),
                f"median per claim {fewest.median('median_ms'):.2f} ms with {fewest.other_sessions} other"
                f" session(s), {most.median('median_ms'):.2f} ms with {most.other_sessions} ({with_sessions:.2f}x;"
                f" broker CPU {cpu_with_sessions:.2f}x); last third of the claims / first third: "
                + ", ".join(f"{v:.2f}x with {n}" for n, v in with_tabs.items()),
                {
                    "with_sessions": with_sessions,
                    "cpu_with_sessions": cpu_with_sessions,
                    **{f"last_over_first_{n}": v for n, v in with_tabs.items()},
                },
            )
        )
    return found


def daemon_report(results: DaemonResults, args: Any) -> str:
    broker, minimal = results.startup["broker"], results.startup["minimal"]
    lines = [
        "browser-mcp bench, daemon: start-up, idle memory, a page tool's definition, claiming tabs one by one;"
        " fresh processes",
        "broker: browser-mcp serve --port 0; minimal: an aiohttp app with one GET /status route, same Python",
        "",
        f"start-up, spawn to the first answered GET /status ({args.daemon_runs} runs each, alternating), the"
        f" server's CPU until then (less moved by a shared machine's load), and VmRSS {SETTLE_S:g} s after it:",
        f"  {'':<22} {'median ms':>9} {'p90 ms':>7} {'min':>6} {'max':>6} {'CPU ms':>6} {'idle RSS MB':>11}"
        f" {'after 1st MCP MB':>16}",
    ]
    for r, what in ((broker, "browser-mcp serve"), (minimal, "minimal aiohttp")):
        after = f"{statistics.median(r.mcp_rss_mb):>16.1f}" if r.mcp_rss_mb else f"{'-':>16}"
        lines.append(
            f"  {what:<22} {r.median_ms:>9.0f} {r.p90_ms:>7.0f} {min(r.runs_ms):>6.0f} {max(r.runs_ms):>6.0f}"
            f" {statistics.median(r.cpu_ms):>6.0f} {statistics.median(r.idle_rss_mb):>11.1f} {after}"
        )
    d = results.definition
    lines += [
        f"  ratio of the medians: start-up {broker.median_ms / minimal.median_ms:.2f}x,"
        f" CPU to the first answer {statistics.median(broker.cpu_ms) / statistics.median(minimal.cpu_ms):.2f}x,"
        f" idle RSS {statistics.median(broker.idle_rss_mb) / statistics.median(minimal.idle_rss_mb):.2f}x",
        "",
        "a page tool's definition, compact JSON (claimed and listed by the SDK client, HTTP 2025-11-25):",
        f"  declared by the page {d.declared_bytes:>4} B  {d.declared}",
        f"  the broker's         {d.broker_bytes:>4} B  {d.broker}",
        "",
    ]
    if results.claims:
        lines += [
            f"claiming {args.daemon_tabs} tabs ({CLAIM_TOOLS} tools each) one by one, one session listening for list"
            f" changes (HTTP 2025-11-25), the others idle and listening; medians of {args.daemon_rounds} run(s):",
            f"  {'others':>6} {'total s':>7} {'ms/claim':>8} {'median':>7} {'p90':>6} {'1st third':>9}"
            f" {'last third':>10} {'broker CPU ms/claim':>19} {'idle CPU ms/s':>13}"
            f" {'list_changed: claimer / others':>30}",
        ]
        for c in results.claims:
            heard = f"{c.median('heard_by_claimer'):.0f} / {c.median('heard_by_others'):.0f}"
            lines.append(
                f"  {c.other_sessions:>6} {c.median('total_s'):>7.2f} {c.median('per_claim_ms'):>8.2f}"
                f" {c.median('median_ms'):>7.2f} {c.median('p90_ms'):>6.2f} {c.median('first_ms'):>9.2f}"
                f" {c.median('last_ms'):>10.2f} {c.median('broker_cpu_ms_per_claim'):>19.2f}"
                f" {c.median('idle_cpu_ms_per_s'):>13.1f} {heard:>30}"
            )
        lines.append("")
    slow = results.slow_bodies
    flooded = (
        f"{slow.median(flooded=True):>9.2f} {slow.p99(flooded=True):>7.2f}" if slow.flooded_ms else f"{'-':>9} {'-':>7}"
    )
    lines += [
        f"the owner's GET /status on a new connection, {len(slow.quiet_ms)} quiet, then while a client token opens a"
        f" slow-body request every 20 ms (a limit of {FILE_LIMIT} open files):",
        f"  {'':<10} {'median ms':>9} {'p99 ms':>7} {'unanswered':>10}",
        f"  {'quiet':<10} {slow.median(flooded=False):>9.2f} {slow.p99(flooded=False):>7.2f} {0:>10}",
        f"  {'flooded':<10} {flooded} {slow.shut_out:>10}",
        f"  the flood: {slow.opened} opened, {slow.refused} refused (429), {slow.cut_off} cut off at the body"
        f" deadline (408), {slow.held_at_end} held at the end; the broker's open files then:"
        f" {slow.broker_files_at_end}",
        "",
    ]
    lines += goal_lines("daemon goals (a benchmark, not a test):", daemon_verdicts(results))
    return "\n".join(lines)


def daemon_json(results: DaemonResults, args: Any) -> dict[str, Any]:
    return {
        "config": {
            "runs": args.daemon_runs,
            "tabs": args.daemon_tabs,
            "other_sessions": args.daemon_sessions,
            "rounds": args.daemon_rounds,
            "tools_per_tab": CLAIM_TOOLS,
            "settle_s": SETTLE_S,
        },
        "startup": {
            kind: {
                **asdict(r),
                "median_ms": r.median_ms,
                "p90_ms": r.p90_ms,
                "cpu_ms_median": statistics.median(r.cpu_ms),
                "idle_rss_mb_median": statistics.median(r.idle_rss_mb),
                **({"mcp_rss_mb_median": statistics.median(r.mcp_rss_mb)} if r.mcp_rss_mb else {}),
            }
            for kind, r in results.startup.items()
        },
        "definition": {**asdict(results.definition), "ratio": results.definition.ratio},
        "claims": [
            {
                "other_sessions": c.other_sessions,
                **{m: c.median(m) for m in CLAIM_METRICS},
                "runs": [{**asdict(run), **{m: getattr(run, m) for m in CLAIM_METRICS}} for run in c.runs],
            }
            for c in results.claims
        ],
        "slow_bodies": asdict(results.slow_bodies),
        "goals": [asdict(v) for v in daemon_verdicts(results)],
    }
