"""The discovery part of scripts/bench: how soon the real extension joins a broker that starts.

The project's extension runs in headless Chromium (``support.browser``: Playwright's
``launch_persistent_context``, a temporary profile, HOME and XDG_CONFIG_HOME; one Chromium at a
time, each takes about 400 MB), launched with the real-browser tests' own arguments
(``tests/harness/chromium.py``).
Each run starts ``browser-mcp serve`` and measures the time from its discovery file appearing to
``GET /status`` first listing this browser (its ``instanceId``, read from the extension's
storage) as connected; then stops the broker with SIGTERM, which removes its file. Two paths:

1. **Native host.** ``browser-mcp install-native-host --user-data-dir PROFILE --discovery-dir
   DIR`` puts the host into the profile; Chromium starts it for the extension, and it streams the
   brokers of DIR. The brokers listen on ``--port 0``, outside the probed range, so only the host
   can lead the extension to them. A first broker, started right after launch while the host may
   still be starting, is reported apart and not counted. Between runs the bench waits a second,
   so the host has announced the stopped broker's departure and each run starts from a browser
   joined to nothing.
2. **Port probing**, the baseline, in the same run: a second profile without the host, brokers
   on a free port of 8765-8785 (other runs on the machine may hold some). The extension sweeps
   the range with a backoff that doubles from 0.5 s to 2 s, and starts over when a joined broker
   leaves. To measure what a user sees (a broker started while the extension has long been
   sweeping), each broker starts once the backoff has settled after the previous one left, at
   offsets spread evenly over one sweep period.

When the file appeared: its ``st_mtime_ns``, which the kernel stamps as the broker writes it,
before the fsync and the rename that make it visible (on this machine the folder's mtime, which the
rename sets, is the same to the nanosecond). Watching the folder ourselves would instead stamp the
moment this process got round to the event, late by however long the scheduler kept it waiting on a
busy 2-core machine, which would make the joins look faster than they are. The file timestamp errs
the other way: the kernel's coarse clock lags by at most one tick (4 ms here). The end is when the
answer of the first ``/status`` showing the browser arrives; polls are 10 ms apart, so the join
happened at most one interval plus one round trip earlier.

A benchmark, never a test: the verdict against the 1 s goal is printed, the exit status ignores it.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import Playwright, async_playwright

from broker.discovery import load_or_create_token
from tests.harness.chromium import CHROMIUM, trust_broker

from .support import BenchError, progress
from .support.browser import Browser, Place, chromium, install_native_host
from .support.report import Verdict, goal_lines
from .support.servers import Server, start_broker
from .support.stats import Timings

# extension/base/protocol.js PORT_FIRST..PORT_LAST
PROBED_PORTS = range(8765, 8786)
# extension/link/discovery.js SWEEP_FIRST_MS..SWEEP_MAX_MS: 0.5 s doubling to 2 s, settled after 3.5 s.
SWEEP_PERIOD_S = 2.0
SWEEP_SETTLE_S = 4.0
BETWEEN_NATIVE_RUNS_S = 1.0
POLL_INTERVAL_S = 0.01
JOIN_TIMEOUT_S = 30.0

# The goal: joined within 1 s of the discovery file appearing.
JOIN_GOAL_MS = 1000.0


async def joined_at(http: aiohttp.ClientSession, broker: Server, instance_id: str) -> int:
    """``time.time_ns()`` when ``/status`` first lists the browser ``instance_id`` as connected."""
    headers = {"Authorization": f"Bearer {broker.token}"}
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    while True:
        async with http.get(broker.url + "/status", headers=headers) as response:
            status = await response.json()
        answered = time.time_ns()
        if any(b["connected"] and b["instanceId"] == instance_id for b in status["browsers"]):
            return answered
        if time.monotonic() > deadline:
            raise BenchError(f"the extension did not join the broker on port {broker.port} in {JOIN_TIMEOUT_S:g} s")
        await asyncio.sleep(POLL_INTERVAL_S)


async def join_latency_ms(http: aiohttp.ClientSession, broker: Server, browser: Browser) -> float:
    """Ms from ``broker``'s discovery file appearing to ``browser`` joining it; the broker is stopped after."""
    try:
        assert broker.discovery_file is not None
        appeared = broker.discovery_file.stat().st_mtime_ns
        joined = await joined_at(http, broker, browser.instance_id)
    finally:
        await broker.stop()
    return (joined - appeared) / 1e6


def taken_probed_ports() -> list[int]:
    """The ports of the probed range that something listens on."""
    taken = []
    for port in PROBED_PORTS:
        with socket.socket() as probe:
            # As the broker binds: connections of a stopped broker left in TIME_WAIT do not count.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                taken.append(port)
    return taken


def first_free(taken: list[int]) -> int:
    for port in PROBED_PORTS:
        if port not in taken:
            return port
    raise BenchError(f"every port of {PROBED_PORTS.start}-{PROBED_PORTS.stop - 1} is taken")


async def start_probed_broker(place: Place, workdir: Path, command: list[str]) -> tuple[Server, list[int]]:
    """A broker on a free port of the probed range, and the ports others held when it was chosen."""
    taken = taken_probed_ports()
    try:
        return await start_broker(workdir, command, first_free(taken), place.discovery_dir), taken
    except BenchError:
        # Another run on this machine may have taken the port since it was found free: one more try.
        taken = taken_probed_ports()
        return await start_broker(workdir, command, first_free(taken), place.discovery_dir), taken


@dataclass
class JoinResult(Timings):
    path: str
    runs_ms: list[float] = field(default_factory=list)


@dataclass
class DiscoveryResults:
    native: JoinResult
    probing: JoinResult
    first_native_ms: float  # right after launch, the host perhaps still starting; not in ``native``
    # Brokers of other runs in the probed range: the extension joins them too, and each one that
    # leaves restarts its backoff, which moves the sweeps the probing runs were timed against.
    ports_of_others: list[int]

    def ratio(self, metric: str) -> float:
        return float(getattr(self.native, metric) / getattr(self.probing, metric))


async def bench_native(
    playwright: Playwright, http: aiohttp.ClientSession, runs: int, workdir: Path, command: list[str]
) -> tuple[JoinResult, float]:
    place = Place(workdir / "native")
    place.create()
    await install_native_host(place)
    result = JoinResult("native")
    async with chromium(playwright, place) as browser:
        first = await join_latency_ms(http, await start_broker(workdir, command, 0, place.discovery_dir), browser)
        progress(f"discovery native  first after launch (not counted) {first:7.1f} ms")
        for run in range(1, runs + 1):
            await asyncio.sleep(BETWEEN_NATIVE_RUNS_S)
            broker = await start_broker(workdir, command, 0, place.discovery_dir)
            result.runs_ms.append(await join_latency_ms(http, broker, browser))
            progress(f"discovery native  [{run}/{runs}] {result.runs_ms[-1]:7.1f} ms")
    return result, first


async def bench_probing(
    playwright: Playwright, http: aiohttp.ClientSession, runs: int, workdir: Path, command: list[str]
) -> tuple[JoinResult, list[int]]:
    place = Place(workdir / "probing")
    place.create()
    result = JoinResult("probing")
    ports_of_others: set[int] = set()
    # Without the host, the extension joins only a broker it was paired with: the bench's brokers
    # share one token file (start_broker), whose link key is stored as pairing would before any starts.
    token = load_or_create_token(workdir / "broker-token")
    async with chromium(playwright, place) as browser:
        await trust_broker(browser.context.service_workers[0], token)
        # The worker's start restarts the backoff, as a departing broker does.
        backoff_restarted = browser.started
        for run in range(runs):
            offset = SWEEP_SETTLE_S + SWEEP_PERIOD_S * (run + 0.5) / runs
            await asyncio.sleep(max(0.0, backoff_restarted + offset - time.monotonic()))
            broker, taken = await start_probed_broker(place, workdir, command)
            ports_of_others.update(taken)
            result.runs_ms.append(await join_latency_ms(http, broker, browser))
            backoff_restarted = time.monotonic()
            others = f"; others listen on {', '.join(map(str, taken))}" if taken else ""
            progress(f"discovery probing [{run + 1}/{runs}] {result.runs_ms[-1]:7.1f} ms (port {broker.port}{others})")
    return result, sorted(ports_of_others)


async def bench_discovery(args: Any) -> DiscoveryResults:
    command = shlex.split(args.broker_cmd)
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-discovery-") as tmp:
        workdir = Path(tmp)
        async with async_playwright() as playwright, aiohttp.ClientSession() as http:
            native, first = await bench_native(playwright, http, args.discovery_runs, workdir, command)
            probing, ports_of_others = await bench_probing(
                playwright, http, args.discovery_probing_runs, workdir, command
            )
    return DiscoveryResults(native, probing, first, ports_of_others)


# Report


def discovery_verdicts(results: DiscoveryResults) -> list[Verdict]:
    native = results.native
    return [
        Verdict(
            f"the extension joins a broker within {JOIN_GOAL_MS:g} ms of its discovery file appearing"
            " (native host, every run)",
            native.max_ms <= JOIN_GOAL_MS,
            f"max {native.max_ms:.0f} ms, p90 {native.p90_ms:.0f} ms, median {native.median_ms:.0f} ms"
            f" over {len(native.runs_ms)} runs",
            {"median_ms": native.median_ms, "p90_ms": native.p90_ms, "max_ms": native.max_ms},
        )
    ]


def discovery_report(results: DiscoveryResults, args: Any) -> str:
    lines = [
        "browser-mcp bench, discovery: the real extension in headless Chromium; from a broker's discovery file"
        f" appearing (its mtime) to GET /status first listing this browser connected (polled every"
        f" {POLL_INTERVAL_S * 1e3:g} ms)",
        "native: browser-mcp native-host installed in the profile, brokers on --port 0; probing: no host, brokers on"
        f" a free port of {PROBED_PORTS.start}-{PROBED_PORTS.stop - 1}, each started {SWEEP_SETTLE_S:g} s or more"
        f" after the last left, at offsets spread over the extension's {SWEEP_PERIOD_S:g} s sweep period",
        "",
        f"  {'path':<8} {'runs':>4} {'median ms':>10} {'p90 ms':>8} {'max ms':>8} {'min ms':>8}",
    ]
    for result in (results.native, results.probing):
        lines.append(
            f"  {result.path:<8} {len(result.runs_ms):>4} {result.median_ms:>10.1f} {result.p90_ms:>8.1f}"
            f" {result.max_ms:>8.1f} {min(result.runs_ms):>8.1f}"
        )
    lines += [
        f"  native / probing: median {results.ratio('median_ms'):.3f}x, p90 {results.ratio('p90_ms'):.3f}x,"
        f" max {results.ratio('max_ms'):.3f}x",
        "",
        f"first native join after launch, the host perhaps still starting (not counted): {results.first_native_ms:.1f}"
        " ms",
    ]
    if results.ports_of_others:
        lines.append(
            f"other brokers in {PROBED_PORTS.start}-{PROBED_PORTS.stop - 1} during the probing runs (ports"
            f" {', '.join(map(str, results.ports_of_others))}): the extension joined them too, and one that left"
            " restarted its backoff, so probing runs may have come sooner than an idle extension's"
        )
    lines += ["", *goal_lines("discovery goal (a benchmark, not a test):", discovery_verdicts(results))]
    return "\n".join(lines)


def discovery_json(results: DiscoveryResults, args: Any) -> dict[str, Any]:
    def summary(result: JoinResult) -> dict[str, Any]:
        return {**asdict(result), "median_ms": result.median_ms, "p90_ms": result.p90_ms, "max_ms": result.max_ms}

    return {
        "config": {
            "runs": args.discovery_runs,
            "probing_runs": args.discovery_probing_runs,
            "poll_interval_ms": POLL_INTERVAL_S * 1e3,
            "chromium": str(CHROMIUM),
        },
        "native": summary(results.native),
        "probing": summary(results.probing),
        "first_native_ms": results.first_native_ms,
        "ports_of_others": results.ports_of_others,
        "ratios": {m: results.ratio(m) for m in ("median_ms", "p90_ms", "max_ms")},
        "goals": [asdict(v) for v in discovery_verdicts(results)],
    }
