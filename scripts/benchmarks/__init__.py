"""The benchmark that ``scripts/bench`` runs (``python -m scripts.benchmarks``): one module for each
suite, a package for a suite of several modules.

- :mod:`.cli`: the command line, which suites run, and where their reports and JSON go;
- :mod:`.rest`, :mod:`.mcp`, :mod:`.daemon`: the suites of ``--suite all`` (REST calls, MCP calls and
  tools/list, the daemon's start-up, memory, claims and slow bodies), each beside its baseline;
- :mod:`.discovery`, :mod:`.actions`, :mod:`.tokens`, :mod:`.overhead`, :mod:`.keys`, :mod:`.flood`,
  :mod:`.stall`, :mod:`.soak`: the suites that run alone, most on the real extension in a browser;
- :mod:`.baselines`: the servers the broker is measured beside, each a process of its own;
- :mod:`.support`: what the suites share (servers, ``/proc`` counters, statistics, reports, the fake
  extension, MCP clients, the bench's pages, Playwright MCP and both sides behind the MCP SDK client).

The browsers with the extension, the page server and the endless page are the tests' own
(``tests.harness``), shared rather than copied. A suite imports ``support``, ``tests.harness`` and
``broker``, never another suite, so that a change to one suite stays in its own files. This file and
the packages' ``__init__`` import nothing: the baselines run as modules of this package, and their
memory is measured.
"""
