"""The daemon bench's claims: what one session claiming tabs costs the other sessions of a broker.

Sessions listen on MCP (tool-list notifications) while one claims tabs with page tools; the run
counts what each listener is sent and how long the claims take, against the broker idle with the
same sessions open.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from broker.core.security import client_token

from ..support import CALL_TIMEOUT, BenchError, progress
from ..support.fake_extension import FakeExtension, big_snapshot
from ..support.mcp_clients import CLIENT_LABEL, LEGACY, LEGACY_VERSION, RawHttp
from ..support.proc import run_seconds
from ..support.servers import Server, start_broker, wait_for_tabs
from ..support.stats import Timings

__all__ = [
    "CLAIM_METRICS",
    "CLAIM_TOOLS",
    "ClaimRun",
    "ClaimScenario",
    "IDLE_S",
    "Listener",
    "SETTLE_S",
    "bench_claims",
    "mcp_session",
]


SETTLE_S = 0.3
IDLE_S = 0.5  # the claims' broker, measured idle with its sessions open before the claims
CLAIM_TOOLS = 3


class Listener:
    """A 2025-11-25 session's GET stream, counting the ``notifications/tools/list_changed`` it brings."""

    def __init__(self, session: aiohttp.ClientSession, client: RawHttp) -> None:
        self.session = session
        self.client = client
        self.heard = 0
        self.response: aiohttp.ClientResponse | None = None
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        headers = {k: v for k, v in self.client.headers.items() if k != "Content-Type"}
        headers["Accept"] = "text/event-stream"
        self.response = await self.session.get(
            self.client.url, headers=headers, timeout=aiohttp.ClientTimeout(total=None, sock_read=None)
        )
        if self.response.status != 200:
            raise BenchError(f"the GET stream was refused: {self.response.status}")
        self.task = asyncio.create_task(self._read(self.response))

    async def _read(self, response: aiohttp.ClientResponse) -> None:
        async for line in response.content:
            if line.startswith(b"data:") and b"notifications/tools/list_changed" in line:
                self.heard += 1

    async def stop(self) -> None:
        if self.response is not None:
            self.response.close()
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


@dataclass
class ClaimRun(Timings):
    """One run of claims."""

    other_sessions: int
    tabs: int
    tools_per_tab: int
    total_s: float
    runs_ms: list[float]  # each claim's time, in order
    broker_cpu_ms_per_claim: float  # from the claims' start to SETTLE_S after the last
    idle_cpu_ms_per_s: float  # before the claims, every session open and idle
    heard_by_claimer: int  # list_changed notifications during and just after the claims
    heard_by_others: int  # all the idle sessions together
    tools_listed: int  # the claimer's tools/list afterwards

    @property
    def per_claim_ms(self) -> float:
        return self.total_s * 1e3 / self.tabs

    @property
    def first_ms(self) -> float:
        """The median of the first third of the claims."""
        return statistics.median(self.runs_ms[: max(1, self.tabs // 3)])

    @property
    def last_ms(self) -> float:
        """The median of the last third, when the claimer's list is longest."""
        return statistics.median(self.runs_ms[-max(1, self.tabs // 3) :])


CLAIM_METRICS = (
    "total_s", "per_claim_ms", "median_ms", "p90_ms", "first_ms", "last_ms", "broker_cpu_ms_per_claim",
    "idle_cpu_ms_per_s", "heard_by_claimer", "heard_by_others",
)  # fmt: skip


@dataclass
class ClaimScenario:
    """The runs with one number of other sessions; each figure is the median over the runs."""

    other_sessions: int
    runs: list[ClaimRun] = field(default_factory=list)

    def median(self, metric: str) -> float:
        return statistics.median(getattr(run, metric) for run in self.runs)


async def mcp_session(
    session: aiohttp.ClientSession, broker: Server, stack: AsyncExitStack
) -> tuple[RawHttp, Listener]:
    """A 2025-11-25 HTTP session, initialized, its tools listed once and its GET stream open."""
    client = RawHttp(session, broker.url + "/mcp", client_token(broker.token, CLIENT_LABEL), LEGACY)
    await client.open()
    stack.push_async_callback(client.close)
    if client.headers.get("MCP-Protocol-Version") != LEGACY_VERSION:
        raise BenchError("the 2025-11-25 handshake did not take")
    await client.request("tools/list", {})
    listener = Listener(session, client)
    await listener.start()
    stack.push_async_callback(listener.stop)
    return client, listener


async def bench_claims(tabs: int, others: int, workdir: Path, broker_cmd: list[str]) -> ClaimRun:
    broker = await start_broker(workdir, broker_cmd)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(broker.stop)
        # No cap on connections: every session's GET stream holds one for the whole run.
        session = await stack.enter_async_context(
            aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=CALL_TIMEOUT)
            )
        )
        fake = FakeExtension(big_snapshot(tabs, CLAIM_TOOLS))
        await fake.connect(session, broker.url + "/")
        stack.push_async_callback(fake.close)
        await wait_for_tabs(session, broker, tabs)
        claimer, heard = await mcp_session(session, broker, stack)
        idle = [(await mcp_session(session, broker, stack))[1] for _ in range(others)]
        await asyncio.sleep(SETTLE_S)  # whatever the sessions' start set off is over
        idle_before = run_seconds(broker.pid)
        await asyncio.sleep(IDLE_S)
        idle_cpu = (run_seconds(broker.pid) - idle_before) / IDLE_S
        claim_s: list[float] = []
        cpu_before = run_seconds(broker.pid)
        started = time.perf_counter()
        for tab in range(1, tabs + 1):
            begun = time.perf_counter()
            result, _ = await claimer.request(
                "tools/call", {"name": "tabs", "arguments": {"action": "claim", "tab": tab}}, name="tabs"
            )
            claim_s.append(time.perf_counter() - begun)
            if result.get("isError"):
                raise BenchError(f"claiming tab {tab} failed: {str(result)[:300]}")
        total = time.perf_counter() - started
        # The last claims' notification comes a coalescing window later.
        await asyncio.sleep(SETTLE_S)
        cpu = run_seconds(broker.pid) - cpu_before
        listed, _ = await claimer.request("tools/list", {})
    run = ClaimRun(
        other_sessions=others,
        tabs=tabs,
        tools_per_tab=CLAIM_TOOLS,
        total_s=total,
        runs_ms=[s * 1e3 for s in claim_s],
        broker_cpu_ms_per_claim=cpu * 1e3 / tabs,
        idle_cpu_ms_per_s=idle_cpu * 1e3,
        heard_by_claimer=heard.heard,
        heard_by_others=sum(listener.heard for listener in idle),
        tools_listed=len(listed["tools"]),
    )
    if run.tools_listed < tabs * CLAIM_TOOLS:
        raise BenchError(f"after the claims tools/list has {run.tools_listed} tools, not {tabs * CLAIM_TOOLS}+")
    progress(
        f"claims: {tabs} tabs with {others} other session(s): {run.total_s:.2f} s, {run.per_claim_ms:.2f} ms/claim"
        f" (median {run.median_ms:.2f}, first third {run.first_ms:.2f}, last third {run.last_ms:.2f}),"
        f" broker CPU {run.broker_cpu_ms_per_claim:.2f} ms/claim (idle before: {run.idle_cpu_ms_per_s:.1f} ms/s);"
        f" list_changed heard: claimer {run.heard_by_claimer},"
        f" others {run.heard_by_others}"
    )
    return run
