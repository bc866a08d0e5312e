"""What the suites of ``scripts/bench`` share; one module for each thing it owns.

- this package: the project's root, :class:`BenchError`, :func:`progress`, the payload sizes and the
  time limits;
- :mod:`.proc`: a process's own counters from ``/proc`` (CPU seconds, RSS, open files) and finding a
  child process;
- :mod:`.servers`: starting the servers measured (the broker, the two baselines of
  ``scripts.benchmarks.baselines``) and stopping them;
- :mod:`.stats`: percentiles and timings (a result's lists of timings, named);
- :mod:`.report`: what the reports share (verdicts against the goals and their lines, labels, the machine);
- :mod:`.fake_extension`: the lean fake extension that answers tool calls, and a browser of many tools;
- :mod:`.mcp_clients`: MCP as the benchmarks speak it (eras, ``browser-mcp mcp``, raw JSON-RPC over
  HTTP and stdio);
- :mod:`.browser`: the project's extension in headless Chromium, with the native host;
- :mod:`.pages`: the pages the actions, tokens, overhead and soak suites drive, served on 127.0.0.1
  (the shop's in :mod:`.shop_pages`, the other tasks' in :mod:`.task_pages`);
- :mod:`.playwright_mcp`: Playwright MCP, pinned, installed into the bench's cache and run over stdio;
- :mod:`.mcp_sides`: both sides of those suites started behind the MCP SDK client (ours: the broker,
  Chromium or Firefox with the extension, ``browser-mcp mcp``; Playwright MCP).

Chromium and Firefox are launched as the tests launch them (``tests.harness``), and the stall suite
serves the tests' endless page from there too. A module here is shared by two suites or more; what
one suite alone uses stays in its own module. This module imports only the standard library.
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
