"""The tools/list part of the MCP benchmark (``scripts/benchmarks/mcp/suite.py``): what a long list costs the broker.

A fake extension of 500 tabs x 20 tools, all owned by one MCP session (claimed with the ``tabs``
tool): the broker's CPU per ``tools/list`` request (many requests, divided; the scheduler's
nanoseconds, not clock ticks, which would swamp a few milliseconds) and the client's round
trip, over HTTP in both eras (raw HTTP: the SDK client takes about half a second to parse 10,000
tools) and over stdio (broker + relay CPU); then the broker's CPU per ``call_page_tool`` call while
the session's list is that long. The ``sdk-`` paths measure the broker's CPU serving the official
SDK client itself over HTTP, in the 2025-11-25 era (a stateful session, its GET stream open) beside
the 2026-07-28 era; their round trips include the client's parsing.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from broker.core.security import client_token

from ..support import CALL_TIMEOUT, BenchError, progress
from ..support.fake_extension import FakeExtension, big_snapshot
from ..support.mcp_clients import CLIENT_LABEL, RawHttp, RawStdio, SdkHttp, era_of, mcp_env, relay_command
from ..support.proc import run_seconds
from ..support.servers import start_broker, wait_for_tabs

TABS, TOOLS_PER_TAB = 500, 20
# measured on these paths, whichever --mcp-paths the call scenarios take
LIST_PATHS = ("http-2025", "http-2026", "stdio-2025", "sdk-2025", "sdk-2026")


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


Client = RawHttp | RawStdio | SdkHttp


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if isinstance(client, SdkHttp):
        result = await client.call_tool(name, arguments)
    else:
        result, _ = await client.request("tools/call", {"name": name, "arguments": arguments}, name=name)
    if result.get("isError"):
        raise BenchError(f"{name} {arguments} failed: {result}")
    return result


async def list_once(client: Client, size: int) -> None:
    """One ``tools/list``, its answer checked as cheaply as the client allows.

    Raises: BenchError, for an answer that is not the list.
    """
    if isinstance(client, SdkHttp):
        if len(await client.list_tools()) < TABS * TOOLS_PER_TAB:
            raise BenchError("tools/list lost tools")
        return
    data = await client.exchange("tools/list", {})
    if b'"tools"' not in data[:200] or len(data) < size // 2:
        raise BenchError(f"tools/list failed: {data[:300]!r}")


async def first_list(client: Client) -> tuple[int, int]:
    """How many tools the first ``tools/list`` holds, and its size in bytes (0: the SDK's client does not say)."""
    if isinstance(client, SdkHttp):
        return len(await client.list_tools()), 0
    result, size = await client.request("tools/list", {})
    return len(result["tools"]), size


async def bench_tools_list(path: str, requests: int, workdir: Path, broker_cmd: list[str]) -> ListResult:
    broker = await start_broker(workdir, broker_cmd)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(broker.stop)
        session = await stack.enter_async_context(
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=CALL_TIMEOUT))
        )
        fake = FakeExtension(big_snapshot(TABS, TOOLS_PER_TAB))
        await fake.connect(session, broker.url + "/")
        stack.push_async_callback(fake.close)
        await wait_for_tabs(session, broker, TABS)
        pids = [broker.pid]
        client: Client
        if path.startswith("sdk"):
            client = SdkHttp(broker.url + "/mcp", client_token(broker.token, CLIENT_LABEL), era_of(path))
        elif path.startswith("http"):
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
            await call(client, "tabs", {"action": "claim", "tab": tab})
        if isinstance(client, SdkHttp):
            await client.event_stream_open()
        started = time.perf_counter()
        count, size = await first_list(client)
        first = time.perf_counter() - started
        if count < TABS * TOOLS_PER_TAB:
            raise BenchError(f"tools/list has {count} tools, not the {TABS * TOOLS_PER_TAB} of the claimed tabs")
        for _ in range(3):
            await list_once(client, size)
        latencies: list[float] = []
        before = [run_seconds(p) for p in pids]
        for _ in range(requests):
            started = time.perf_counter()
            await list_once(client, size)
            latencies.append(time.perf_counter() - started)
        after = [run_seconds(p) for p in pids]
        # A page tool call while the session's list is this long: does a call pay for the list?
        page_call = {"tab": 1, "tool": "search_products_0", "arguments": {"q": 1}}
        await call(client, "call_page_tool", page_call)
        calls_before = run_seconds(broker.pid)
        for _ in range(requests):
            await call(client, "call_page_tool", page_call)
        call_cpu = (run_seconds(broker.pid) - calls_before) / requests * 1e3
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
