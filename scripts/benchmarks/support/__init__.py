"""The harness the benchmarks of ``scripts/bench`` share; one module for each thing it owns.

- this package: the project's root (put on ``sys.path``, so ``broker`` and ``tests`` import from
  this checkout), :class:`BenchError`, :func:`progress`, the payload sizes and the time limits;
- :mod:`benchlib.proc`: a process's own counters from ``/proc`` (CPU seconds, RSS, open files) and finding a
  child process;
- :mod:`benchlib.servers`: starting the servers measured (the broker, the two baselines) and
  stopping them;
- :mod:`benchlib.stats`: percentiles and timings (a result's lists of timings, named);
- :mod:`benchlib.report`: what the reports share (verdicts against the goals and their lines, labels, the machine);
- :mod:`benchlib.fake_extension`: the lean fake extension that answers tool calls;
- :mod:`benchlib.mcp_clients`: MCP as the benchmarks speak it (eras, ``browser-mcp mcp``, raw
  JSON-RPC over HTTP and stdio);
- :mod:`benchlib.relay_link`: the baselines' end of the extension link, which
  ``scripts/bench_relay.py`` and ``scripts/bench_mcp_relay.py`` both serve;
- :mod:`benchlib.browser`: the project's extension in headless Chromium, with the native host;
- :mod:`benchlib.pages`: the pages the actions, tokens, overhead and soak benchmarks drive, served on
  127.0.0.1 (the shop's in :mod:`benchlib.shop_pages`, the other tasks' in :mod:`benchlib.task_pages`);
- :mod:`benchlib.playwright_mcp`: Playwright MCP, pinned, installed into the bench's cache and run
  over stdio;
- :mod:`benchlib.mcp_sides`: both sides of those benchmarks started behind the MCP SDK client (ours:
  the broker, Chromium with the extension, ``browser-mcp mcp``; Playwright MCP).

Chromium's launch arguments are the tests' own, ``tests/harness/chromium.py``.

The benchmarks themselves are ``scripts/bench_rest.py``, ``scripts/bench_mcp.py`` (with
``scripts/bench_mcp_list.py``), ``scripts/bench_daemon.py``, ``scripts/bench_discovery.py``,
``scripts/bench_actions.py``, ``scripts/bench_tokens.py``, ``scripts/bench_overhead.py``, ``scripts/bench_keys.py``,
``scripts/bench_flood.py`` and ``scripts/bench_soak.py`` (with ``scripts/bench_soak_clients.py``);
``scripts/bench.py`` parses the command line and runs them. This module imports only the standard
library: the baselines import the package too (for :mod:`benchlib.relay_link`), and their memory is
measured.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SMALL, LARGE = 100, 100 * 1024
START_TIMEOUT = 20.0
READY_TIMEOUT = 10.0
CALL_TIMEOUT = 60.0


def words_of(size: int) -> str:
    """``size`` characters of text, in words: a run of letters with no space would be withheld by
    the broker as base64-looking (``broker/core/results.py``)."""
    return ("x" * 9 + " ") * (size // 10) + "x" * (size % 10)


class BenchError(Exception):
    """The benchmark could not run a scenario; the message says why."""


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
