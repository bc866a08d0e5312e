"""How the overhead bench loads pages and measures each load: the Chromiums it starts (no extension,
a do-nothing one, ours, ours joined to a broker), a load's timing and trace, the tab's memory and
the renderers' CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import BrowserContext, Playwright

from tests.harness.chromium import CHROMIUM, chromium_args

from ..support import BenchError
from ..support.browser import Place, chromium, install_native_host
from ..support.mcp_sides import wait_joined
from ..support.proc import run_seconds
from ..support.servers import start_broker

__all__ = [
    "COMPARED",
    "JOINED",
    "NONE",
    "NOTHING",
    "OURS",
    "CLOSE_TIMEOUT_S",
    "Load",
    "NAVIGATION_TIMING",
    "NOTHING_MANIFEST",
    "TASK",
    "TRACE_CATEGORIES",
    "Tabs",
    "TracedLoad",
    "cpu_seconds",
    "plain_chromium",
    "renderers",
    "start_browsers",
    "traced_load",
    "write_nothing_extension",
]

# The browsers the bench loads pages in: no extension, a do-nothing one, ours, ours joined to a broker,
# and another build of ours to compare with (--overhead-compare).
NONE, NOTHING, OURS, JOINED, COMPARED = "none", "do-nothing", "ours", "ours + broker", "compared"


CLOSE_TIMEOUT_S = 10.0
NOTHING_MANIFEST = {
    "manifest_version": 3,
    "name": "do nothing",
    "version": "1.0",
    "content_scripts": [
        {"matches": ["http://*/*", "https://*/*"], "js": ["nothing.js"], "run_at": "document_start", "all_frames": True}
    ],
}
# The page's Navigation Timing once its load event has ended (loadEventEnd is 0 until then).
NAVIGATION_TIMING = """() => new Promise((resolve) => {
  const read = () => {
    const [entry] = performance.getEntriesByType("navigation");
    if (entry && entry.loadEventEnd > 0) resolve([entry.domContentLoadedEventEnd, entry.loadEventEnd]);
    else requestAnimationFrame(read);
  };
  read();
})"""


@dataclass
class Load:
    launch: int  # which launch of the browsers, from 1
    dom_content_loaded_ms: float
    load_ms: float
    uss_mb: float  # the tab's renderer processes' private memory
    pss_mb: float
    js_heap_mb: float  # the main renderer's isolate, after a garbage collection
    renderer_cpu_ms: float  # the tab's renderer processes, from their start to the page's load
    worker_cpu_ms: float  # the extension's process, from opening the tab to its end
    broker_cpu_ms: float
    processes: int  # the tab's renderer processes: those that ended with it


@dataclass
class TracedLoad:
    """A load traced by Chromium (``Tracing``), apart from the timed ones, which tracing would slow."""

    launch: int
    main_thread_cpu_ms: float  # the page's renderer's main thread, its tasks from the navigation's commit to its load
    scripts_ms: float  # of which in extension scripts (their compiling and running, and their callbacks)


# Trace categories for TracedLoad: the main thread's tasks, and the scripts run in them.
TRACE_CATEGORIES = ["toplevel", "devtools.timeline", "loading"]
TASK = "ThreadControllerImpl::RunTask"


def traced_load(events: list[dict[str, Any]], launch: int) -> TracedLoad:
    """The figures of a trace of a page's load: the tasks of the main thread of the renderer whose outermost
    frame loaded, from the task that committed its navigation (content scripts run after it) up to that
    load, in CPU time (a busy machine stretches their wall time, not this).

    Raises:
        BenchError: when the trace holds no commit or no load of an outermost frame.
    """

    def outermost(name: str) -> list[dict[str, Any]]:
        found = [e for e in events if e["name"] == name]
        return [e for e in found if e.get("args", {}).get("data", {}).get("isOutermostMainFrame")]

    loads, commits = outermost("MarkLoad"), outermost("CommitLoad")
    if not loads or not commits:
        raise BenchError("the trace holds no commit or no load of the page")
    load = loads[-1]
    pid, tid, end = load["pid"], load["tid"], load["ts"]
    # From the task that committed the page on: before it, the renderer may be a spare one setting itself
    # up, whatever the extension (the page's frames commit later, in the same renderer or another).
    start = max((e["ts"] for e in commits if e["pid"] == pid and e["ts"] <= end), default=0)
    main = [
        e for e in events
        if e["pid"] == pid and e["tid"] == tid and e.get("ph") == "X" and e["ts"] + e.get("dur", 0) >= start
        and e["ts"] <= end
    ]  # fmt: skip
    scripts = [
        e for e in main
        if e["name"] in ("EvaluateScript", "FunctionCall") and "chrome-extension://" in json.dumps(e.get("args", {}))
    ]  # fmt: skip
    return TracedLoad(
        launch=launch,
        main_thread_cpu_ms=sum(e.get("tdur", 0) for e in main if e["name"] == TASK) / 1000,
        scripts_ms=sum(e.get("tdur", 0) for e in scripts) / 1000,
    )


def _smaps(pid: int) -> dict[str, int]:
    """``/proc/<pid>/smaps_rollup`` in KiB."""
    figures = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value, *_ = line.split()
        figures[key.rstrip(":")] = int(value)
    return figures


def renderers(profile: Path, extension: bool = False) -> list[int]:
    """The page renderer processes (or, with ``extension``, the extension's) of the Chromium whose profile
    is ``profile``.

    Chromium rewrites its processes' titles, so the command line is one string of words.
    """
    marker = f"--user-data-dir={profile}"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            words = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
            if "--type=renderer" in words and marker in words and ("--extension-process" in words) == extension:
                found.append(int(entry.name))
    return found


def cpu_seconds(pids: list[int]) -> float:
    """CPU time of the live threads of ``pids``, those that still run."""
    total = 0.0
    for pid in pids:
        with suppress(OSError):
            total += run_seconds(pid)
    return total


@dataclass
class Tabs:
    """A browser of the bench: its context and its profile, where its processes are found, and the broker
    it joined."""

    variant: str
    context: BrowserContext
    profile: Path
    broker_pid: int | None = None

    async def load(self, url: str, launch: int, settle_s: float) -> Load:
        """A new tab loads ``url``: its timing, and its memory once it has loaded, a garbage collection
        and ``settle_s`` later; then it closes. The CPU time the extension's process (its service worker)
        and the broker spent meanwhile.

        Raises:
            BenchError: when no renderer process ends with the tab.
        """
        workers = renderers(self.profile, extension=True)
        brokers = [] if self.broker_pid is None else [self.broker_pid]
        worker_cpu, broker_cpu = cpu_seconds(workers), cpu_seconds(brokers)
        page = await self.context.new_page()
        try:
            await page.goto(url, wait_until="load")
            dom_content_loaded, loaded = await page.evaluate(NAVIGATION_TIMING)
            spent = {pid: cpu_seconds([pid]) for pid in renderers(self.profile)}
            devtools = await self.context.new_cdp_session(page)
            await devtools.send("HeapProfiler.collectGarbage")
            heap = await devtools.send("Runtime.getHeapUsage")
            await devtools.detach()
            # Read at once after the collection, one frames page in four was 2-5 MB larger, whatever the
            # extension, and the excess was gone some 100 ms later.
            await asyncio.sleep(settle_s)
            memory = {}
            for pid in renderers(self.profile):
                with suppress(OSError):
                    memory[pid] = _smaps(pid)
        finally:
            await page.close()
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        while not (ended := memory.keys() - set(renderers(self.profile))):
            if time.monotonic() > deadline:
                raise BenchError(f"{self.variant}: no renderer process ended with the tab of {url}")
            await asyncio.sleep(0.02)
        tab = [memory[pid] for pid in ended]
        return Load(
            launch=launch,
            dom_content_loaded_ms=dom_content_loaded,
            load_ms=loaded,
            uss_mb=sum(m["Private_Clean"] + m["Private_Dirty"] for m in tab) / 1024,
            pss_mb=sum(m["Pss"] for m in tab) / 1024,
            js_heap_mb=heap["usedSize"] / 2**20,
            renderer_cpu_ms=sum(spent.get(pid, 0.0) for pid in ended) * 1e3,
            worker_cpu_ms=(cpu_seconds(workers) - worker_cpu) * 1e3,
            broker_cpu_ms=(cpu_seconds(brokers) - broker_cpu) * 1e3,
            processes=len(tab),
        )

    async def traced_load(self, url: str, launch: int) -> TracedLoad:
        """A new tab loads ``url`` while Chromium traces; then it closes."""
        page = await self.context.new_page()
        try:
            devtools = await self.context.new_cdp_session(page)
            events: list[dict[str, Any]] = []
            complete = asyncio.Event()
            devtools.on("Tracing.dataCollected", lambda params: events.extend(params["value"]))
            devtools.on("Tracing.tracingComplete", lambda _params: complete.set())
            await devtools.send(
                "Tracing.start",
                {"traceConfig": {"includedCategories": TRACE_CATEGORIES}, "transferMode": "ReportEvents"},
            )
            await page.goto(url, wait_until="load")
            await devtools.send("Tracing.end")
            await complete.wait()
        finally:
            await page.close()
        return traced_load(events, launch)


@asynccontextmanager
async def plain_chromium(playwright: Playwright, place: Place, extension: Path | None) -> AsyncIterator[BrowserContext]:
    """Chromium with no extension, or with ``extension`` (which has no worker to wait for)."""
    launch_env: dict[str, str | float | bool] = {**place.env}
    context = await playwright.chromium.launch_persistent_context(
        str(place.profile), executable_path=CHROMIUM, headless=True, env=launch_env,
        args=chromium_args(extension=extension),
    )  # fmt: skip
    try:
        yield context
    finally:
        await context.close()


def write_nothing_extension(folder: Path) -> Path:
    """The do-nothing extension, in ``folder``."""
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(NOTHING_MANIFEST, indent=2))
    (folder / "nothing.js").write_text("// Does nothing: the cost of a content script itself.\n")
    return folder


async def start_browsers(
    stack: AsyncExitStack, playwright: Playwright, workdir: Path, nothing: Path, args: argparse.Namespace
) -> tuple[dict[str, Tabs], str]:
    """The four browsers with fresh profiles in ``workdir`` (the broker the last one joins), a fifth with
    ``--overhead-compare``'s extension, and the browser's name and version."""
    browsers: dict[str, Tabs] = {}
    for variant, extension in ((NONE, None), (NOTHING, nothing)):
        place = Place(workdir / variant.replace(" ", ""))
        place.create()
        context = await stack.enter_async_context(plain_chromium(playwright, place, extension))
        browsers[variant] = Tabs(variant, context, place.profile)
    place = Place(workdir / "ours")
    place.create()
    ours = await stack.enter_async_context(chromium(playwright, place, args.overhead_extension))
    browsers[OURS] = Tabs(OURS, ours.context, place.profile)
    place = Place(workdir / "ours-broker")
    place.create()
    await install_native_host(place)
    broker = await start_broker(workdir, shlex.split(args.broker_cmd), 0, place.discovery_dir)
    stack.push_async_callback(broker.stop)
    joined = await stack.enter_async_context(chromium(playwright, place, args.overhead_extension))
    browser_name = await wait_joined(broker, joined.instance_id)
    browsers[JOINED] = Tabs(JOINED, joined.context, place.profile, broker.pid)
    if args.overhead_compare:
        place = Place(workdir / "compared")
        place.create()
        compared = await stack.enter_async_context(chromium(playwright, place, args.overhead_compare))
        browsers[COMPARED] = Tabs(COMPARED, compared.context, place.profile)
    return browsers, browser_name
