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

   beside ``scripts/bench_mcp_relay.py`` (the SDK's low-level ``Server`` with one forwarding tool,
   served by ``streamable_http_app()`` under uvicorn, or by ``stdio_server()``). The same lean
   fake extension answers both. Server CPU per call is ``utime + stime`` over the measured calls.
2. **Spawn.** With a broker running, the time from spawning ``browser-mcp mcp`` to the first line
   on its stdout answering an ``initialize`` written to its stdin at once (median and p90), and
   the same for the SDK stdio baseline server for context.
3. **tools/list** with a fake extension of 500 tabs x 20 tools, all owned by one MCP session
   (claimed with the ``tabs`` tool): the broker's CPU per ``tools/list`` request (many requests,
   divided) and the client's round trip, over HTTP in both eras (raw HTTP: the SDK client takes
   about half a second to parse 10,000 tools) and over stdio (broker + relay CPU).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import bench
import mcp_types as types
import orjson
from bench import (
    ROOT,
    BenchError,
    FakeExtension,
    Server,
    Timings,
    cpu_seconds,
    percentile,
    progress,
    size_label,
    status_kib,
)
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from broker.core.security import client_token
from broker.paths import ENV_TOKEN_FILE

BROWSER_MCP = ROOT / ".venv" / "bin" / "browser-mcp"
RELAY_SCRIPT = ROOT / "scripts" / "bench_mcp_relay.py"
LEGACY, MODERN = "legacy", "2026-07-28"
LEGACY_VERSION = "2025-11-25"
# transport/era paths of the call benchmark
PATHS = ("http-2025", "http-2026", "stdio-2025")
MCP_SERVERS = ("broker", "baseline")
MCP_CONCURRENCY = (1, 8)
CLIENT_LABEL = "bench"
TABS, TOOLS_PER_TAB = 500, 20

# The goals of the issue.
CPU_GOAL = 1.0
SPAWN_GOAL_MS = 600.0
LIST_GOAL_MS = 20.0


def era_of(path: str) -> str:
    return LEGACY if path.endswith("2025") else MODERN


def mcp_env(workdir: Path) -> dict[str, str]:
    """What a spawned ``browser-mcp mcp`` needs on top of the few variables the SDK passes on."""
    return {ENV_TOKEN_FILE: str(workdir / "broker-token"), "XDG_STATE_HOME": str(workdir / "state")}


def child_pid(marker: str) -> int:
    """The pid of this process's child whose command line contains ``marker``."""
    me = str(os.getpid())
    deadline = time.monotonic() + bench.START_TIMEOUT
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with suppress(OSError):
                stat = (entry / "stat").read_text()
                if stat[stat.rfind(")") + 2 :].split()[1] != me:
                    continue
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    return int(entry.name)
        time.sleep(0.01)
    raise BenchError(f"no child process running {marker!r}")


def total_cpu(pid: int) -> float:
    return sum(cpu_seconds(pid))


# Servers


async def start_baseline_http(workdir: Path) -> tuple[Server, str]:
    """The SDK relay over HTTP; returns it and the URL of its extension link."""
    token = "bench-baseline-token"
    log = workdir / "baseline.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(RELAY_SCRIPT), "http",
            stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT,
            env={**os.environ, "BENCH_RELAY_TOKEN": token},
        )  # fmt: skip
    found = await bench._announcement(
        process, log, "the MCP baseline", r"listening on http://127\.0\.0\.1:(\d+)/mcp; extension link on (\S+)"
    )
    return Server("baseline", process, process.pid, int(found.group(1)), token, log), found.group(2)


async def start_mcp_broker(workdir: Path, command: list[str]) -> Server:
    return await bench.start_broker(workdir, command)


def relay_command(broker: Server) -> list[str]:
    """``browser-mcp mcp`` for this broker, as an AI client's configuration would spawn it."""
    assert broker.discovery_dir is not None
    return [str(BROWSER_MCP), "mcp", "--pid", str(broker.pid), "--discovery-dir", str(broker.discovery_dir)]


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
            server = await start_mcp_broker(workdir, broker_cmd)
            stack.push_async_callback(server.stop)
            await fake.connect(fake_session, server.url + "/")
            stack.push_async_callback(fake.close)
            if path.startswith("http"):
                http = await stack.enter_async_context(
                    create_mcp_http_client(
                        headers={"Authorization": f"Bearer {client_token(server.token, CLIENT_LABEL)}"}
                    )
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
        elif path.startswith("http"):
            server, link = await start_baseline_http(workdir)
            stack.push_async_callback(server.stop)
            await fake.connect(fake_session, link)
            stack.push_async_callback(fake.close)
            http = await stack.enter_async_context(
                create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"})
            )
            transport = streamable_http_client(server.url + "/mcp", http_client=http)
            client = await stack.enter_async_context(Client(transport, mode=era, client_info=info))
            pids = [server.pid]
        else:
            port_file = Path(tempfile.mktemp(prefix="port-", dir=workdir))
            params = StdioServerParameters(
                command=sys.executable, args=[str(RELAY_SCRIPT), "stdio", "--port-file", str(port_file)], cwd=ROOT
            )
            client = await stack.enter_async_context(
                Client(stdio_client(params, errlog=errlog), mode=era, client_info=info)
            )
            pids = [child_pid(str(RELAY_SCRIPT))]
            deadline = time.monotonic() + bench.START_TIMEOUT
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


async def mcp_call(client: Client, arguments: dict[str, Any], size: int) -> None:
    result = await client.call_tool("call_page_tool", arguments)
    text = result_text(result)
    if result.is_error or len(text) < size * 9 // 10:
        raise BenchError(f"the call failed: {text[:300]!r}")


async def mcp_ready(client: Client, arguments: dict[str, Any], size: int) -> None:
    deadline = time.monotonic() + bench.READY_TIMEOUT
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
    latencies: list[float] = []
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            started = time.perf_counter()
            await mcp_call(client, arguments, size)
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies


async def run_mcp_scenario(
    kind: str, path: str, size: int, concurrency: int, calls: int, warmup: int, workdir: Path, broker_cmd: list[str]
) -> McpRun:
    arguments = {"tab": 1, "tool": "echo", "arguments": {"data": "x" * size}}
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
        calls=calls,
        p50_ms=percentile(latencies, 0.50) * 1e3,
        p99_ms=percentile(latencies, 0.99) * 1e3,
        cpu_us_per_call=sum(spent),
        main_cpu_us_per_call=spent[0],
        relay_cpu_us_per_call=sum(spent[1:]),
        peak_rss_mb=peak_rss / 1024,
        calls_per_s=calls / wall,
        client_cpu_us_per_call=(client_after - client_before) / calls * 1e6,
    )


@dataclass
class McpScenario:
    path: str
    size: int
    concurrency: int
    runs: dict[str, list[McpRun]] = field(default_factory=lambda: {kind: [] for kind in MCP_SERVERS})

    def median(self, kind: str, metric: str) -> float:
        return statistics.median(getattr(run, metric) for run in self.runs[kind])

    def ratio(self, metric: str = "cpu_us_per_call") -> float:
        baseline = self.median("baseline", metric)
        return self.median("broker", metric) / baseline if baseline else math.nan

    def label(self) -> str:
        return f"{self.path} {size_label(self.size)} x{self.concurrency}"


# Spawn to the first initialize reply

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


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
        answer = await asyncio.wait_for(process.stdout.readline(), bench.START_TIMEOUT)
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
    broker = await start_mcp_broker(workdir, broker_cmd)
    env = {**os.environ, **mcp_env(workdir)}
    env.pop("LOG_LEVEL", None)
    results = {"broker": SpawnResult("broker", []), "baseline": SpawnResult("baseline", [])}
    commands = {
        "broker": relay_command(broker),
        "baseline": [sys.executable, str(RELAY_SCRIPT), "stdio"],
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


# tools/list with 500 tabs x 20 tools

VERBS = ("search", "get", "list", "add", "remove", "update", "open", "show", "filter", "sort")
NOUNS = ("products", "cart", "orders", "reviews", "account")


def big_snapshot(tabs: int = TABS, tools: int = TOOLS_PER_TAB) -> dict[str, Any]:
    """A browser with ``tabs`` tabs of ``tools`` page tools each, with small realistic schemas."""

    def tool(i: int) -> dict[str, Any]:
        verb, noun = VERBS[i % len(VERBS)], NOUNS[i // len(VERBS) % len(NOUNS)]
        spec: dict[str, Any] = {
            "name": f"{verb}_{noun}_{i}",
            "description": f"{verb.capitalize()} the {noun} on this page.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for"},
                    "limit": {"type": "integer"},
                },
                "required": ["query"],
            },
        }
        if i % 2 == 0:
            spec["annotations"] = {"readOnlyHint": True}
        return spec

    page_tools = [tool(i) for i in range(tools)]
    return {
        "type": "connected",
        "browser": {"name": "Bench", "version": "1"},
        "tabs": [
            {
                "id": t,
                "title": f"Shop page {t}",
                "url": f"https://shop{t}.example/catalog?page={t}",
                "tools": page_tools,
            }
            for t in range(1, tabs + 1)
        ],
    }


class RawHttp:
    """JSON-RPC over the broker's ``/mcp`` with plain aiohttp, in either era."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str, era: str) -> None:
        self.session = session
        self.url = url
        self.era = era
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.ids = 0

    async def open(self) -> None:
        if self.era == MODERN:
            self.headers["MCP-Protocol-Version"] = MODERN
            return
        async with self.session.post(self.url, data=orjson.dumps(INITIALIZE), headers=self.headers) as response:
            await response.read()
            session_id = response.headers.get("mcp-session-id")
            if response.status != 200 or session_id is None:
                raise BenchError(f"initialize failed: {response.status}")
        self.headers["mcp-session-id"] = session_id
        self.headers["MCP-Protocol-Version"] = LEGACY_VERSION
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self.session.post(self.url, data=orjson.dumps(note), headers=self.headers) as response:
            await response.read()

    async def close(self) -> None:
        if "mcp-session-id" in self.headers:
            async with self.session.delete(self.url, headers=self.headers) as response:
                await response.read()

    async def request(self, method: str, params: dict[str, Any], name: str | None = None) -> tuple[Any, int]:
        """The result and the size of the answer in bytes."""
        data = await self.exchange(method, params, name)
        return parse_answer(method, data), len(data)

    async def exchange(self, method: str, params: dict[str, Any], name: str | None = None) -> bytes:
        """The answer's bytes, unparsed (parsing 5 MB takes the client longer than the broker's work)."""
        self.ids += 1
        headers = self.headers
        if self.era == MODERN:
            params = {
                **params,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
            headers = {**headers, "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
        body = orjson.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        async with self.session.post(self.url, data=body, headers=headers) as response:
            data = await response.read()
        if data.startswith(b"event:") or data.startswith(b"data:"):
            data = next(line[5:] for line in data.splitlines() if line.startswith(b"data:"))
        return data


def parse_answer(method: str, data: bytes) -> Any:
    message = orjson.loads(data)
    if "result" not in message:
        raise BenchError(f"{method} failed: {data[:300]!r}")
    return message["result"]


class RawStdio:
    """JSON-RPC lines through a spawned ``browser-mcp mcp`` (2025-11-25 handshake)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = 0

    async def open(self) -> None:
        await self._send(INITIALIZE)
        await self._answer(0)
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(orjson.dumps(message) + b"\n")
        await self.process.stdin.drain()

    async def _answer(self, request_id: int) -> tuple[Any, int]:
        line = await self._line()
        message = orjson.loads(line)
        if message.get("id") != request_id or "result" not in message:
            raise BenchError(f"request {request_id} failed: {line[:300]!r}")
        return message["result"], len(line)

    async def _line(self) -> bytes:
        """The next answer's line; notifications (tool list changes after claims) are skipped."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), bench.CALL_TIMEOUT)
            if not line:
                raise BenchError("browser-mcp mcp closed its stdout")
            if b'"method"' not in line[:80]:
                return line

    async def request(self, method: str, params: dict[str, Any], name: str | None = None) -> tuple[Any, int]:
        self.ids += 1
        await self._send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return await self._answer(self.ids)

    async def exchange(self, method: str, params: dict[str, Any], name: str | None = None) -> bytes:
        self.ids += 1
        await self._send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return await self._line()

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


@dataclass
class ListResult:
    path: str
    requests: int
    tools: int
    answer_mb: float
    cpu_ms: float  # broker CPU per request
    relay_cpu_ms: float  # browser-mcp mcp CPU per request (stdio), else 0
    rtt_p50_ms: float
    rtt_max_ms: float
    first_rtt_ms: float  # the first tools/list after the claims (the broker's cache is cold)
    call_cpu_ms: float  # broker CPU per call_page_tool call while the session owns all those tools


LIST_PATHS = ("http-2025", "http-2026", "stdio-2025")


async def claim(client: RawHttp | RawStdio, tab: int) -> None:
    result, _ = await client.request(
        "tools/call", {"name": "tabs", "arguments": {"action": "claim", "tab": tab}}, name="tabs"
    )
    if result.get("isError"):
        raise BenchError(f"claiming tab {tab} failed: {result}")


async def wait_for_tabs(session: aiohttp.ClientSession, broker: Server) -> None:
    """Until the broker lists the fake's tabs."""
    rest_headers = {"Authorization": f"Bearer {broker.token}"}
    deadline = time.monotonic() + bench.READY_TIMEOUT
    while True:
        async with session.get(broker.url + "/tabs", headers=rest_headers) as response:
            listed = orjson.loads(await response.read())
        if len(listed["tabs"]) >= TABS:
            return
        if time.monotonic() > deadline:
            raise BenchError("the broker did not list the fake's 500 tabs")
        await asyncio.sleep(0.05)


async def bench_tools_list(path: str, requests: int, workdir: Path, broker_cmd: list[str]) -> ListResult:
    broker = await start_mcp_broker(workdir, broker_cmd)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(broker.stop)
        session = await stack.enter_async_context(
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=bench.CALL_TIMEOUT))
        )
        fake = FakeExtension(big_snapshot())
        await fake.connect(session, broker.url + "/")
        stack.push_async_callback(fake.close)
        await wait_for_tabs(session, broker)
        pids = [broker.pid]
        client: RawHttp | RawStdio
        if path.startswith("http"):
            client = RawHttp(session, broker.url + "/mcp", client_token(broker.token, CLIENT_LABEL), era_of(path))
        else:
            env = {**os.environ, **mcp_env(workdir)}
            env.pop("LOG_LEVEL", None)
            process = await asyncio.create_subprocess_exec(
                *relay_command(broker),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
                env=env, limit=64 * 1024 * 1024,
            )  # fmt: skip
            client = RawStdio(process)
            pids.append(process.pid)
        await client.open()
        stack.push_async_callback(client.close)
        for tab in range(1, TABS + 1):
            await claim(client, tab)
        started = time.perf_counter()
        result, size = await client.request("tools/list", {})
        first = time.perf_counter() - started
        count = len(result["tools"])
        if count < TABS * TOOLS_PER_TAB:
            raise BenchError(f"tools/list has {count} tools, not the {TABS * TOOLS_PER_TAB} of the claimed tabs")
        for _ in range(3):
            await client.request("tools/list", {})
        latencies: list[float] = []
        before = [total_cpu(p) for p in pids]
        for _ in range(requests):
            started = time.perf_counter()
            data = await client.exchange("tools/list", {})
            latencies.append(time.perf_counter() - started)
            if b'"tools"' not in data[:200] or len(data) < size // 2:
                raise BenchError(f"tools/list failed: {data[:300]!r}")
        after = [total_cpu(p) for p in pids]
        # A page tool call while the session's list is this long: does a call pay for the list?
        call = {"name": "call_page_tool", "arguments": {"tab": 1, "tool": "search_products_0", "arguments": {"q": 1}}}
        await client.request("tools/call", call, name="call_page_tool")
        calls_before = total_cpu(broker.pid)
        for _ in range(requests):
            await client.request("tools/call", call, name="call_page_tool")
        call_cpu = (total_cpu(broker.pid) - calls_before) / requests * 1e3
    spent = [(a - b) / requests * 1e3 for a, b in zip(after, before, strict=True)]
    found = ListResult(
        path=path,
        requests=requests,
        tools=count,
        answer_mb=size / 1e6,
        cpu_ms=spent[0],
        relay_cpu_ms=sum(spent[1:]),
        rtt_p50_ms=statistics.median(latencies) * 1e3,
        rtt_max_ms=max(latencies) * 1e3,
        first_rtt_ms=first * 1e3,
        call_cpu_ms=call_cpu,
    )
    progress(
        f"tools/list {path:<10} {count} tools {found.answer_mb:.1f} MB: broker CPU {found.cpu_ms:5.1f} ms/request"
        f"  relay {found.relay_cpu_ms:4.1f} ms  round trip p50 {found.rtt_p50_ms:5.1f} ms (first {first * 1e3:.0f} ms)"
        f"  a tools/call: {call_cpu:.1f} ms CPU"
    )
    return found


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
        turn = 0
        for round_number in range(1, args.repeat + 1):
            for scenario in scenarios:
                order = MCP_SERVERS if turn % 2 == 0 else MCP_SERVERS[::-1]
                turn += 1
                calls = args.mcp_calls if scenario.size < bench.LARGE else args.mcp_calls_large
                for kind in order:
                    run = await run_mcp_scenario(
                        kind, scenario.path, scenario.size, scenario.concurrency, calls, args.warmup, workdir,
                        broker_cmd,
                    )  # fmt: skip
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


def mcp_verdicts(results: McpResults) -> list[bench.Verdict]:
    found: list[bench.Verdict] = []
    if results.scenarios:
        values = {s.label(): s.ratio() for s in results.scenarios}
        found.append(
            bench.Verdict(
                f"broker CPU per MCP call (stdio: broker + relay) <= {CPU_GOAL}x the SDK baseline's",
                all(v <= CPU_GOAL for v in values.values()),
                ", ".join(f"{label} {value:.2f}x" for label, value in values.items()),
                values,
            )
        )
    broker_spawn = next((s for s in results.spawn if s.server == "broker"), None)
    if broker_spawn is not None:
        baseline = next(s for s in results.spawn if s.server == "baseline")
        found.append(
            bench.Verdict(
                f"spawn of browser-mcp mcp to its first initialize reply <= {SPAWN_GOAL_MS:g} ms",
                broker_spawn.median_ms <= SPAWN_GOAL_MS,
                f"median {broker_spawn.median_ms:.0f} ms, p90 {broker_spawn.p90_ms:.0f} ms"
                f" (SDK stdio baseline: median {baseline.median_ms:.0f} ms, p90 {baseline.p90_ms:.0f} ms)",
                {"median_ms": broker_spawn.median_ms, "p90_ms": broker_spawn.p90_ms},
            )
        )
    if results.tools_list:
        values = {r.path: r.cpu_ms for r in results.tools_list}
        found.append(
            bench.Verdict(
                f"tools/list of {TABS} tabs x {TOOLS_PER_TAB} tools <= {LIST_GOAL_MS:g} ms broker-side (CPU/request)",
                all(v <= LIST_GOAL_MS for v in values.values()),
                ", ".join(f"{p} {v:.1f} ms" for p, v in values.items()),
                values,
            )
        )
    return found


def mcp_report(results: McpResults, args: Any) -> str:
    lines = [
        "browser-mcp bench, MCP: SDK client -> call_page_tool -> server -> fake extension -> back;"
        f" {args.mcp_calls} calls (100 B) / {args.mcp_calls_large} calls (100 KB) measured per scenario after"
        f" {args.warmup} warm-up, fresh processes per scenario, median of {args.repeat} run(s)",
        "broker: browser-mcp serve (/mcp; stdio = browser-mcp mcp -> /mcp/stream);"
        " SDK baseline: scripts/bench_mcp_relay.py (low-level Server; streamable_http_app under uvicorn,"
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
            lines.append(
                f"  {r.path:<10} {r.tools:>6} {r.answer_mb:>5.2f} {r.cpu_ms:>13.1f} {relay}"
                f" {r.rtt_p50_ms:>10.1f} {r.rtt_max_ms:>8.1f} {r.first_rtt_ms:>7.1f} {r.call_cpu_ms:>17.1f}"
            )
        lines.append("")
    lines.append("MCP goals (a benchmark, not a test):")
    for verdict in mcp_verdicts(results):
        lines.append(f"  {'PASS' if verdict.passed else 'MISS'}  {verdict.goal}: {verdict.detail}")
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
