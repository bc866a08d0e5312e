"""The daemon bench's slow bodies: the owner's ``GET /status`` while a client token floods the broker
with requests whose bodies never come.

A broker under a limit of ``FILE_LIMIT`` open files (a systemd user service's default; set with
``prlimit``), a fake extension with one tab, claimed by a client token. The owner's ``GET
/status``, each on a new connection (what a flood of connections would shut out), ``SAMPLES``
times one after the other: first with the broker quiet, then while the client token opens, every
``PACE_S``, a page tool call in its tab declaring a MiB of body and sending one byte, holding each
open until the broker answers or closes it (it reads what the broker says, so that its own files
are not what runs out). The flood starts ``WARMUP_S`` before the flooded samples, long enough to
fill the client token's cap of connections, and goes on until they end. Figures: the owner's
median and p99, quiet and flooded; the owner's requests that got no answer; and what the flood
met: refused with 429, cut off at the body deadline with 408, or still held at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from broker.core.security import client_token

from ..support import BenchError, progress
from ..support.fake_extension import FakeExtension
from ..support.servers import Server, start_broker, wait_for_tabs
from ..support.stats import percentile

__all__ = ["FILE_LIMIT", "SlowBodies", "bench_slow_bodies"]

FILE_LIMIT = 1024
SAMPLES = 300
PACE_S = 0.02  # the attack's pace: a new slow request every 20 ms
WARMUP_S = 4.0
ANSWER_TIMEOUT_S = 10.0  # an owner's request not answered within this is counted as shut out


@dataclass
class SlowBodies:
    quiet_ms: list[float] = field(default_factory=list)
    flooded_ms: list[float] = field(default_factory=list)
    shut_out: int = 0  # owner's requests under the flood that got no answer
    opened: int = 0  # slow requests the flood opened
    refused: int = 0  # answered 429 too_many_connections
    cut_off: int = 0  # answered 408 request_timeout
    held_at_end: int = 0
    broker_files_at_end: int = 0

    def median(self, flooded: bool) -> float:
        return percentile(self.flooded_ms if flooded else self.quiet_ms, 0.5)

    def p99(self, flooded: bool) -> float:
        return percentile(self.flooded_ms if flooded else self.quiet_ms, 0.99)


class Flood:
    """A client token's slow-body requests, one every ``PACE_S``, each held until the broker ends it."""

    def __init__(self, broker: Server, token: str, result: SlowBodies) -> None:
        self.request = (
            "POST /tabs/1/tools/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            "Content-Length: 1048576\r\n\r\n{"
        ).encode()
        self.broker = broker
        self.result = result
        self.held: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        while True:
            task = asyncio.create_task(self._one())
            self.held.add(task)
            task.add_done_callback(self.held.discard)
            await asyncio.sleep(PACE_S)

    async def _one(self) -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.broker.port)
        except OSError:
            return
        self.result.opened += 1
        try:
            writer.write(self.request)
            await writer.drain()
            answer = await reader.read(12)
        except OSError:
            answer = b""
        finally:
            writer.close()
        if answer.startswith(b"HTTP/1.1 429"):
            self.result.refused += 1
        elif answer.startswith(b"HTTP/1.1 408"):
            self.result.cut_off += 1

    async def stop(self) -> None:
        self.result.held_at_end = len(self.held)
        for task in list(self.held):
            task.cancel()
        await asyncio.gather(*self.held, return_exceptions=True)


async def _owner_status(broker: Server) -> float | None:
    """Milliseconds to the owner's ``GET /status`` answered on a new connection; None if none came."""
    connector = aiohttp.TCPConnector(force_close=True)
    timeout = aiohttp.ClientTimeout(total=ANSWER_TIMEOUT_S)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as owner:
        started = time.perf_counter()
        try:
            async with owner.get(broker.url + "/status", headers={"Authorization": f"Bearer {broker.token}"}) as r:
                await r.read()
                if r.status != 200:
                    raise BenchError(f"the owner's GET /status got {r.status}")
        except (TimeoutError, aiohttp.ClientConnectionError):
            return None
        return (time.perf_counter() - started) * 1e3


async def _samples(broker: Server, into: list[float], samples: int) -> int:
    """``samples`` of the owner's status into ``into``; returns how many got no answer."""
    missed = 0
    for _ in range(samples):
        took = await _owner_status(broker)
        if took is None:
            missed += 1
        else:
            into.append(took)
    return missed


async def bench_slow_bodies(
    workdir: Path, broker_cmd: list[str], samples: int = SAMPLES, warmup_s: float = WARMUP_S
) -> SlowBodies:
    """The figures of the module's docstring; ``warmup_s`` of flood before the flooded samples.

    Raises:
        BenchError: prlimit is missing, or the broker misbehaved.
    """
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise BenchError("the slow-body flood needs prlimit (util-linux) to start the broker under a file limit")
    # The flood's own sockets must not run out before the broker's: the bench takes its hard limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    result = SlowBodies()
    broker = await start_broker(workdir, [prlimit, f"--nofile={FILE_LIMIT}:{FILE_LIMIT}", *broker_cmd])
    try:
        async with aiohttp.ClientSession() as session:
            fake = FakeExtension()
            await fake.connect(session, broker.url + "/")
            try:
                await wait_for_tabs(session, broker, 1)
                token = client_token(broker.token, "flood")
                async with session.post(
                    broker.url + "/tabs/1/claim", headers={"Authorization": f"Bearer {token}"}
                ) as claimed:
                    if claimed.status != 200:
                        raise BenchError(f"the client token could not claim its tab: {claimed.status}")
                progress("slow bodies: the owner's status, quiet")
                if await _samples(broker, result.quiet_ms, samples):
                    raise BenchError("the owner's GET /status went unanswered on a quiet broker")
                flood = Flood(broker, token, result)
                flooding = asyncio.create_task(flood.run())
                try:
                    await asyncio.sleep(warmup_s)
                    progress("slow bodies: the owner's status, flooded")
                    result.shut_out = await _samples(broker, result.flooded_ms, samples)
                    result.broker_files_at_end = len(os.listdir(f"/proc/{broker.pid}/fd"))
                finally:
                    flooding.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await flooding
                    await flood.stop()
            finally:
                await fake.close()
    finally:
        await broker.stop()
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return result
