"""The keys part of scripts/bench: what a client's Idempotency-Keys cost the broker's memory.

A client token calls a page tool whose answer is large (1,000,000 characters of text by default,
more than ``--max-result-chars`` lets through) at its own rate limit (20 calls a second), for 65 s,
each call with a new ``Idempotency-Key``. Two brokers run side by side, each with its lean fake
extension (``support.fake_extension``) in this process: one gets the calls with keys, the other the
same calls without. Each broker's RSS is read from ``/proc`` before the calls, every second while
they run, when they end and once more after ``--keys-after`` seconds (past the 60 s a key's outcome
is kept, so what the keys held should be gone by then).

Some keyed calls are refused with 429 ``too_many_calls``: a session holds at most 1,000 keys of
the last 60 s, and the run makes 1,300; the others may meet the rate limit (``rate_limited``) when
calls bunch up on a busy machine.

Goal: the broker with keys stays within 100 MB all along. Without a bound in bytes it kept every
page's whole answer for 60 s: about 1 GB.

A benchmark, never a test: the verdict is printed, the exit status ignores it.
"""

from __future__ import annotations

import asyncio
import shlex
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from broker.core.security import client_token

from .support import progress
from .support.fake_extension import SNAPSHOT, FakeExtension
from .support.proc import status_kib
from .support.report import Verdict, goal_lines
from .support.servers import Server, start_broker, wait_for_tabs

GOAL_MB = 100.0
CLIENT = "bench"
# Text, not base64-looking: the broker cuts it rather than withholding it whole.
WORD = "word "


@dataclass
class MemoryRun:
    keyed: bool
    start_mb: float = 0.0
    peak_mb: float = 0.0  # the largest RSS read while the calls ran and after
    end_mb: float = 0.0
    after_mb: float = 0.0
    hwm_mb: float = 0.0  # VmHWM: the kernel's own peak
    statuses: dict[str, int] = field(default_factory=dict)  # "200", or "429 too_many_calls": calls
    calls: int = 0

    @property
    def label(self) -> str:
        return "with keys" if self.keyed else "without keys"


@dataclass
class KeysResults:
    runs: list[MemoryRun]
    broker_cmd: str


def _rss_mb(pid: int) -> float:
    return status_kib(pid, "VmRSS") / 1024


def _answer(chars: int) -> Any:
    text = (WORD * (chars // len(WORD) + 1))[:chars]
    return lambda args: text


async def _run(args: Any, keyed: bool, workdir: Path, command: list[str]) -> MemoryRun:
    run = MemoryRun(keyed)
    broker = await start_broker(workdir, command)
    fake = FakeExtension(SNAPSHOT, _answer(args.keys_answer_chars))
    headers = {"Authorization": f"Bearer {client_token(broker.token, CLIENT)}"}
    try:
        async with aiohttp.ClientSession() as http:
            await fake.connect(http, broker.url.replace("http", "ws") + "/")
            await wait_for_tabs(http, broker, 1)
            async with http.post(broker.url + "/tabs/1/claim", headers=headers) as response:
                if response.status != 200:
                    raise RuntimeError(f"claiming the tab: {response.status} {await response.text()}")
            run.start_mb = run.peak_mb = _rss_mb(broker.pid)
            await _calls(http, broker, headers, run, args)
            run.end_mb = _rss_mb(broker.pid)
            await _watch(broker, run, args.keys_after)
            run.after_mb = _rss_mb(broker.pid)
            run.hwm_mb = status_kib(broker.pid, "VmHWM") / 1024
    finally:
        await fake.close()
        await broker.stop()
    return run


async def _calls(
    http: aiohttp.ClientSession, broker: Server, headers: dict[str, str], run: MemoryRun, args: Any
) -> None:
    """``--keys-rate`` calls a second for ``--keys-seconds``, each started on time whatever the others do."""
    count = int(args.keys_seconds * args.keys_rate)
    started = time.monotonic()
    tasks: set[asyncio.Task[None]] = set()

    async def call(number: int) -> None:
        once = {**headers, "Idempotency-Key": f"k{number}"} if run.keyed else headers
        async with http.post(broker.url + "/tabs/1/tools/echo", json={"n": number}, headers=once) as response:
            body = await response.read()
            outcome = str(response.status)
            if response.status != 200:
                outcome += " " + str(orjson.loads(body).get("error", {}).get("code"))
            run.statuses[outcome] = run.statuses.get(outcome, 0) + 1

    next_sample = started
    for number in range(count):
        await asyncio.sleep(max(0.0, started + number / args.keys_rate - time.monotonic()))
        task = asyncio.create_task(call(number))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        if time.monotonic() >= next_sample:
            run.peak_mb = max(run.peak_mb, _rss_mb(broker.pid))
            next_sample += 1.0
    await asyncio.gather(*tasks)
    run.calls = count
    run.peak_mb = max(run.peak_mb, _rss_mb(broker.pid))


async def _watch(broker: Server, run: MemoryRun, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run.peak_mb = max(run.peak_mb, _rss_mb(broker.pid))
        await asyncio.sleep(1.0)


async def bench_keys(args: Any) -> KeysResults:
    command = shlex.split(args.keys_broker_cmd)
    progress(
        f"keys: {args.keys_rate:g} calls/s for {args.keys_seconds:g} s of a {args.keys_answer_chars:,}-character"
        f" answer, with keys and without (two brokers side by side), then {args.keys_after:g} s quiet"
    )
    with tempfile.TemporaryDirectory(prefix="bench-keys-") as folder:
        places = [Path(folder) / name for name in ("keyed", "unkeyed")]
        for place in places:
            place.mkdir()
        runs = await asyncio.gather(_run(args, True, places[0], command), _run(args, False, places[1], command))
    return KeysResults(list(runs), args.keys_broker_cmd)


def keys_verdicts(results: KeysResults) -> list[Verdict]:
    keyed = next(run for run in results.runs if run.keyed)
    values = {"peak RSS": max(keyed.peak_mb, keyed.hwm_mb), "after": keyed.after_mb}
    return [Verdict.at_most(f"with keys, the broker within {GOAL_MB:g} MB", values, GOAL_MB, " MB", 1)]


def keys_report(results: KeysResults, args: Any) -> str:
    lines = [
        f"browser-mcp bench, keys: one client token's REST calls of a page tool answering {args.keys_answer_chars:,}"
        f" characters, {args.keys_rate:g} a second for {args.keys_seconds:g} s, each with a new Idempotency-Key or"
        f" none; broker RSS read every second; the last read {args.keys_after:g} s after the calls",
        f"broker: {results.broker_cmd}",
        "",
        f"  {'calls':<13} {'start MB':>9} {'peak MB':>8} {'end MB':>7} {'after MB':>9} {'VmHWM MB':>9}  statuses",
    ]
    for run in results.runs:
        statuses = ", ".join(f"{status}: {count}" for status, count in sorted(run.statuses.items()))
        lines.append(
            f"  {run.label:<13} {run.start_mb:>9.1f} {run.peak_mb:>8.1f} {run.end_mb:>7.1f} {run.after_mb:>9.1f}"
            f" {run.hwm_mb:>9.1f}  {statuses}"
        )
    lines += ["", *goal_lines("goals:", keys_verdicts(results))]
    return "\n".join(lines)


def keys_json(results: KeysResults, args: Any) -> dict[str, Any]:
    return {
        "config": {
            "seconds": args.keys_seconds,
            "rate": args.keys_rate,
            "after": args.keys_after,
            "answer_chars": args.keys_answer_chars,
            "broker_cmd": results.broker_cmd,
        },
        "runs": [{**asdict(run), "label": run.label} for run in results.runs],
        "goals": [asdict(verdict) for verdict in keys_verdicts(results)],
    }
