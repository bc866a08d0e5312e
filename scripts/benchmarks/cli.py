"""scripts/bench: the command line of the benchmarks, and where their results go.

It parses the options, runs the suites asked for and prints their reports (and writes them as
JSON with ``--json``). The suites are modules of this package: ``rest.py`` (REST calls beside a
minimal aiohttp relay), ``mcp/`` (MCP calls, spawn time and a long tools/list beside an SDK-based
relay), ``daemon/`` (start-up, idle memory, a page tool's definition, claiming tabs and slow bodies,
each beside its baseline), ``discovery.py`` (how soon the real extension joins a new broker),
``actions/`` (the built-in browser tools beside Playwright MCP's, or Firefox beside Chromium) and
``tokens/`` (a scripted agent's tasks through ours, Playwright MCP and chrome-devtools-mcp: calls,
characters read, time), ``overhead/``
(what the extension costs the pages a person opens), ``keys.py`` (the broker's memory under a
client's keyed calls of a page tool with a large answer), ``flood.py`` (clicks while a page floods
the extension), ``stall.py`` (page tool calls while another client floods refreshes of a page that
never finishes loading) and ``soak/`` (20 clients on the real extension for an hour: nothing lost,
memory flat); what they share is ``support/``, the baselines ``baselines/``. Every suite but REST is
imported only when it runs, so the MCP SDK and Playwright load only then.

Linux only (``/proc``). Run it through ``scripts/bench``; ``--help`` for the knobs.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.harness.chromium import EXTENSION

from . import rest as bench_rest
from .support import LARGE, SMALL, BenchError
from .support.report import machine
from .support.servers import BROWSER_MCP

CONCURRENCY = (1, 8, 64)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Relay tool calls REST -> broker -> fake extension beside a minimal aiohttp relay, as ratios.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 300 / 100 calls, 30 warm-up, no repeat, 5 start-ups and one claim round, 3 discovery"
        " runs, 5 snapshots and 10 clicks, one round of the tokens suite's tasks, 10 loads in one launch for overhead,"
        " 10 s of calls and 5 s after them for keys, 20,000 messages and 20 clicks a phase for flood",
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
        # The rate limits are off: the bench drives one session (and one client token) as hard as it can;
        # a 100 KB answer goes through whole, as it does through the baselines (still checked for its size).
        default=f"{BROWSER_MCP} serve --rate-limit 0 --client-rate-limit 0 --max-result-chars 1000000",
        help="how to start the broker; --port and --discovery-dir are appended (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument(
        "--suite",
        choices=[
            "rest",
            "mcp",
            "daemon",
            "all",
            "discovery",
            "actions",
            "tokens",
            "overhead",
            "keys",
            "flood",
            "stall",
            "soak",
            "tools-list",
        ],
        default="all",
        help="rest: the REST calls above; mcp: MCP calls (stdio and HTTP) beside an SDK-based relay, spawn time and "
        "tools/list of 500 tabs x 20 tools (scripts/benchmarks/mcp/); daemon: start-up and idle memory beside a "
        "minimal aiohttp server, a page tool's MCP definition beside what the page declared, and claiming 300 "
        "tabs one by one with 1 and with 10 other MCP sessions (scripts/benchmarks/daemon/; under a minute); "
        "all: rest, mcp and daemon (the default); discovery: how soon the real extension in headless Chromium "
        "joins a broker that starts, through the native host and by port probing "
        "(scripts/benchmarks/discovery.py; not part of all: it takes about four minutes and two Chromium "
        "launches); actions: the built-in browser tools (browser_snapshot of a large page, browser_click) beside "
        "Playwright MCP's, each in headless Chromium (scripts/benchmarks/actions/; not part of all: it needs "
        "Chromium, node and npm, and installs Playwright MCP, pinned, into scripts/.bench-cache/); tokens: a "
        "scripted agent's tasks on the bench's shop and a form with a dialog and an iframe, through ours and "
        "through Playwright MCP (its defaults, and --snapshot-mode none) and chrome-devtools-mcp (its defaults; "
        "pinned, installed into scripts/.bench-cache/ too): success, calls, characters read and time "
        "(scripts/benchmarks/tokens/; not part of all; needs what actions needs); overhead: what the "
        "extension costs the pages a person opens: load times and a tab's memory with no extension, a do-nothing "
        "one, ours and ours joined to a broker (scripts/benchmarks/overhead/; not part of all: four Chromiums, "
        "some minutes); keys: the broker's memory while a client token makes keyed calls of a page tool with a "
        "large answer, beside the same calls without keys (scripts/benchmarks/keys.py; not part of all: about "
        "2.5 minutes); flood: a REST client's clicks in one tab, quiet and while a page in another floods the "
        "extension with messages or the waker's signal (scripts/benchmarks/flood.py; not part of all: one "
        "Chromium, a few minutes); stall: a client's page tool calls in its tab, quiet and while another client "
        "floods refreshes of the tools of a tab whose page never finishes loading (scripts/benchmarks/stall.py; "
        "not part of all: one Chromium, under a minute); soak: 20 clients (MCP over HTTP and stdio in both eras, "
        "REST) work their own tabs through the real extension for --minutes, every answer checked, the broker's "
        "memory, descriptors and idle CPU followed (scripts/benchmarks/soak/; not part of all: an hour by "
        "default)",
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
    daemon = parser.add_argument_group("daemon suite")
    daemon.add_argument(
        "--daemon-runs", type=int, default=10, help="spawns of the broker and of the minimal server, for start-up"
    )
    daemon.add_argument("--daemon-tabs", type=int, default=300, help="tabs claimed one by one")
    daemon.add_argument(
        "--daemon-rounds", type=int, default=3, help="claim runs for each --daemon-sessions N, taking turns"
    )
    daemon.add_argument(
        "--daemon-sessions",
        type=int,
        nargs="+",
        default=[1, 10],
        metavar="N",
        help="other idle MCP sessions while the tabs are claimed, one fresh broker for each N",
    )
    discovery = parser.add_argument_group("discovery suite")
    discovery.add_argument(
        "--discovery-runs", type=int, default=10, help="brokers started for the native host to announce"
    )
    discovery.add_argument(
        "--discovery-probing-runs",
        type=int,
        help="brokers started for port probing to find, about 10 s each (default: as many as --discovery-runs)",
    )
    _browser_suites_options(parser)
    _keys_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        _quick_counts(args)
    if args.discovery_probing_runs is None:
        args.discovery_probing_runs = args.discovery_runs
    counts = (args.calls_small, args.calls_large, args.repeat, args.mcp_calls, args.mcp_calls_large)
    runs = (args.spawn_runs, args.list_requests, args.discovery_runs, args.discovery_probing_runs)
    action_counts = (
        args.actions_products,
        args.actions_snapshots,
        args.actions_clicks,
        args.tokens_products,
        args.tokens_runs,
        args.overhead_loads,
        args.overhead_products,
        args.overhead_launches,
        args.overhead_traced,
    )
    warmups = (args.warmup, args.actions_click_warmup, args.overhead_warmup, args.overhead_settle)
    if min(*counts, *runs, *action_counts) < 1 or min(warmups) < 0:
        parser.error(
            "call counts, run counts and --repeat must be positive, warm-ups and --overhead-settle not negative"
        )
    if args.overhead_loads < args.overhead_launches:
        parser.error("--overhead-loads must be at least --overhead-launches: each launch measures some loads")
    if min(args.daemon_runs, args.daemon_tabs, args.daemon_rounds) < 1 or min(args.daemon_sessions) < 0:
        parser.error(
            "--daemon-runs, --daemon-tabs and --daemon-rounds must be positive, --daemon-sessions not negative"
        )
    return args


def _quick_counts(args: argparse.Namespace) -> None:
    """--quick: a smoke run of every suite."""
    args.calls_small, args.calls_large, args.warmup, args.repeat = 300, 100, 30, 1
    args.mcp_calls, args.mcp_calls_large, args.spawn_runs, args.list_requests = 200, 50, 5, 10
    args.discovery_runs = 3
    args.daemon_runs, args.daemon_rounds = 5, 1
    args.actions_snapshots, args.actions_clicks = 5, 10
    args.tokens_runs, args.flood_messages, args.flood_clicks = 1, 20_000, 20
    args.stall_calls = 100
    args.overhead_loads, args.overhead_warmup, args.overhead_launches, args.overhead_traced = 10, 1, 1, 4
    args.keys_seconds, args.keys_after = 10.0, 5.0


def _keys_options(parser: argparse.ArgumentParser) -> None:
    keys = parser.add_argument_group("keys suite")
    keys.add_argument("--keys-seconds", type=float, default=65.0, help="how long the calls go on")
    keys.add_argument("--keys-rate", type=float, default=20.0, help="calls a second (a client token's default limit)")
    keys.add_argument(
        "--keys-after",
        type=float,
        default=70.0,
        help="seconds after the calls when RSS is read last (keys lapse at 60)",
    )
    keys.add_argument("--keys-answer-chars", type=int, default=1_000_000, help="characters of the page tool's answer")
    keys.add_argument(
        "--keys-broker-cmd",
        default=f"{BROWSER_MCP} serve",
        help="how to start each broker, its limits its own (another checkout's for a before and after);"
        " --port and --discovery-dir are appended (default: %(default)s)",
    )


def _browser_suites_options(parser: argparse.ArgumentParser) -> None:
    """The options of the suites that drive headless Chromium: actions and tokens (beside Playwright MCP), overhead,
    stall, soak."""
    _stall_options(parser)
    _soak_options(parser)
    actions = parser.add_argument_group("actions suite")
    actions.add_argument(
        "--actions-products",
        type=int,
        default=160,
        help="products on the large page (160: a snapshot of about 80,000 characters in Playwright MCP, the size"
        " a snapshot must bring back whole)",
    )
    actions.add_argument(
        "--browser",
        choices=["chromium", "firefox"],
        default="chromium",
        help="chromium: ours beside Playwright MCP, each in headless Chromium (the default); firefox: ours in"
        " headless Firefox ESR (the WebExtension driver) beside ours in headless Chromium (the DevTools driver),"
        " snapshot, click and type, as Firefox/Chromium ratios (scripts/benchmarks/actions/firefox.py)",
    )
    actions.add_argument("--actions-snapshots", type=int, default=20, help="measured snapshots of the large page")
    actions.add_argument("--actions-clicks", type=int, default=30, help="measured clicks on the small page")
    actions.add_argument("--actions-click-warmup", type=int, default=5, help="clicks before measuring")
    actions.add_argument(
        "--actions-playwright-settle",
        type=int,
        metavar="MS",
        help="Playwright MCP's --timeout-settle, the fixed wait after each of its actions (default: its own, 500 ms)",
    )
    tokens = parser.add_argument_group("tokens suite")
    tokens.add_argument(
        "--tokens-products", type=int, default=160, help="products in the shop's catalogue (as --actions-products)"
    )
    tokens.add_argument("--tokens-runs", type=int, default=3, help="rounds of the tasks per side (medians reported)")
    tokens.add_argument(
        "--tokens-flows",
        nargs="+",
        choices=["shop", "support", "small"],
        default=["shop", "support", "small"],
        help="the flows to run (default all; the goals need all)",
    )
    overhead = parser.add_argument_group("overhead suite")
    overhead.add_argument(
        "--overhead-loads",
        type=int,
        default=30,
        help="measured loads of each page in each browser, split over the launches",
    )
    overhead.add_argument(
        "--overhead-launches",
        type=int,
        default=3,
        help="launches of the browsers, one after another, each with fresh profiles: a Chromium can sit up to"
        " 0.7 MB above its twin set up alike on every load of a page, and the launches average that out and put it"
        " in the goals' intervals (--quick: 1)",
    )
    overhead.add_argument(
        "--overhead-settle",
        type=int,
        default=500,
        metavar="MS",
        help="the wait between a tab's garbage collection and reading its memory: read at once, a frames page is"
        " 2-5 MB larger one time in four, an excess gone some 100 ms later (default: %(default)s)",
    )
    overhead.add_argument(
        "--overhead-traced",
        type=int,
        default=30,
        help="loads of each page in each browser traced by Chromium, split over the launches (at least 2 in each):"
        " the page's main-thread work until its load, which a busy machine does not stretch (--quick: 4)",
    )
    overhead.add_argument(
        "--overhead-warmup", type=int, default=3, help="loads of each page in each browser after each launch, first"
    )
    overhead.add_argument("--overhead-products", type=int, default=160, help="products in the shop page loaded")
    overhead.add_argument(
        "--overhead-extension",
        type=Path,
        default=EXTENSION,
        metavar="FOLDER",
        help="the extension measured as ours (default: %(default)s)",
    )
    overhead.add_argument(
        "--overhead-compare",
        type=Path,
        metavar="FOLDER",
        help="another version of the extension (another checkout's extension/) in a fifth browser, as 'compared'"
        " (without a broker): a before and after in the same run",
    )
    flood = parser.add_argument_group("flood suite")
    flood.add_argument(
        "--flood-messages",
        type=int,
        default=100_000,
        help="messages or signals each flooding page sends (fewer: a shorter run)",
    )
    flood.add_argument("--flood-clicks", type=int, default=50, help="measured clicks per phase (quiet, each attack)")
    flood.add_argument("--flood-click-warmup", type=int, default=5, help="clicks before the quiet ones")
    flood.add_argument(
        "--flood-attacks",
        nargs="+",
        default=["kept", "loop", "signal", "signal-loop"],
        choices=["kept", "loop", "signal", "signal-loop"],
        help="how the page sends: kept (chrome.runtime.sendMessage through a reference kept from the start), loop"
        " (the same in one loop, never yielding), signal (the waker's window event), signal-loop (the same in one"
        " loop)",
    )


def _stall_options(parser: argparse.ArgumentParser) -> None:
    stall = parser.add_argument_group("stall suite")
    stall.add_argument(
        "--stall-calls", type=_positive_int, default=1000, help="measured calls per phase (quiet, flooded)"
    )
    stall.add_argument("--stall-warmup", type=int, default=20, help="calls before the quiet ones")
    stall.add_argument(
        "--stall-rate",
        type=_positive,
        default=16.0,
        help="refreshes the flooding client asks a second (default: %(default)s)",
    )
    stall.add_argument(
        "--stall-extension",
        type=Path,
        metavar="FOLDER",
        help="another version of the extension (another checkout's extension/) to run instead of this one's",
    )


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0")
    return value


def _soak_options(parser: argparse.ArgumentParser) -> None:
    """The soak suite's options (scripts/benchmarks/soak/)."""
    soak = parser.add_argument_group("soak suite")
    soak.add_argument(
        "--minutes", type=_positive, default=60.0, help="how long the soak runs, its idle tail included (default: 60)"
    )
    soak.add_argument(
        "--soak-clients",
        type=_positive_int,
        default=20,
        help="clients, taking the five doors in turn",
    )
    soak.add_argument(
        "--soak-pause", type=_positive, default=1.0, metavar="S", help="a client's pause between its rounds, on average"
    )
    soak.add_argument(
        "--soak-idle-minutes",
        type=_positive,
        help="the idle tail at the end, the broker's CPU measured (default: 5 of 60 minutes, a twelfth of a shorter"
        " run, at least 30 s)",
    )


def _event_loop_runner() -> Callable[[Awaitable[Any]], Any]:
    """uvloop for the client side when installed: it keeps the load generator out of the way."""
    try:
        import uvloop  # noqa: PLC0415
    except ImportError:
        return asyncio.run  # type: ignore[return-value]
    return uvloop.run  # type: ignore[no-any-return]


# The suites that are not part of all run alone and alike: bench_<suite>(args) of the module named here
# (a suite of several modules has its own package, led by its suite.py), imported only then (the SDK
# and Playwright load only for the suites that need them).
LONE_SUITES = {
    "discovery": ".discovery",
    "actions": ".actions.suite",
    "tokens": ".tokens.suite",
    "overhead": ".overhead.suite",
    "keys": ".keys",
    "flood": ".flood",
    "stall": ".stall",
    "soak": ".soak.suite",
    "tools-list": ".tools_list",
}


async def bench_all(args: argparse.Namespace) -> tuple[list[bench_rest.Scenario], Any, Any, Any]:
    """What the suites asked for found: REST's scenarios, the MCP and daemon results, and a lone
    suite's (None for each not run)."""
    scenarios = await bench_rest.bench_rest(args) if args.suite in ("rest", "all") else []
    mcp_results = None
    if args.suite in ("mcp", "all"):
        from .mcp import suite as bench_mcp  # noqa: PLC0415 - the SDK loads only for the MCP suite

        mcp_results = await bench_mcp.bench_mcp(args)
    daemon_results = None
    if args.suite in ("daemon", "all"):
        from .daemon import suite as bench_daemon  # noqa: PLC0415 - the SDK loads only for the suites that speak MCP

        daemon_results = await bench_daemon.bench_daemon(args)
    lone_results = None
    if args.suite in LONE_SUITES:
        module = importlib.import_module(LONE_SUITES[args.suite], __package__)
        lone_results = await getattr(module, f"bench_{args.suite.replace('-', '_')}")(args)
    return scenarios, mcp_results, daemon_results, lone_results


def main(argv: list[str] | None = None) -> int:
    if not Path("/proc/self/stat").exists():
        print("scripts/bench needs Linux: it reads the servers' counters from /proc", file=sys.stderr)
        return 2
    args = parse_args(argv)
    try:
        scenarios, mcp_results, daemon_results, lone_results = _event_loop_runner()(bench_all(args))
    except BenchError as exc:
        print(f"scripts/bench: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    output: dict[str, Any] = {}
    if scenarios:
        print(bench_rest.report(scenarios, args))
        output = bench_rest.json_report(scenarios, args)
    if mcp_results is not None:
        from .mcp import suite as bench_mcp  # noqa: PLC0415

        print(("\n\n" if scenarios else "") + bench_mcp.mcp_report(mcp_results, args))
        output.setdefault("config", {"warmup": args.warmup, "repeat": args.repeat, "broker_cmd": args.broker_cmd})
        output.setdefault("machine", machine())
        output["mcp"] = bench_mcp.mcp_json(mcp_results, args)
    if daemon_results is not None:
        from .daemon import suite as bench_daemon  # noqa: PLC0415

        print(("\n\n" if output else "") + bench_daemon.daemon_report(daemon_results, args))
        output.setdefault("config", {"broker_cmd": args.broker_cmd})
        output.setdefault("machine", machine())
        output["daemon"] = bench_daemon.daemon_json(daemon_results, args)
    if lone_results is not None:
        # A lone suite reports alike: <suite>_report and <suite>_json of its module.
        suite = args.suite
        module = importlib.import_module(LONE_SUITES[suite], __package__)
        named = suite.replace("-", "_")
        print(getattr(module, f"{named}_report")(lone_results, args))
        output.setdefault("config", {"broker_cmd": args.broker_cmd})
        output.setdefault("machine", machine())
        output[suite] = getattr(module, f"{named}_json")(lone_results, args)
    if args.json:
        args.json.write_text(json.dumps(output, indent=2) + "\n")
        print(f"\nresults written to {args.json}")
    return 0
