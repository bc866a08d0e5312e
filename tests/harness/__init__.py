"""The real browsers and the pages they are led to, which the tests and the benchmark (``scripts/bench``)
both drive: Chromium and Firefox with the extension (chromium.py, firefox.py), pages served on 127.0.0.1
(page_server.py), the page that never finishes loading and the client that floods its refreshes
(stall_attack.py), waiting for what no event announces (waiting.py) and ending a process
(processes.py).

It lives under ``tests/`` rather than ``scripts/`` because the tests are the browsers' first users and
the project's root is on ``sys.path`` for both (pytest's rootdir, and ``scripts/bench``), so each side
imports it as ``tests.harness`` with no path of its own. It imports ``broker``, the standard library,
aiohttp and Playwright, never ``tests.support`` nor the tests' fixtures: the bench loads it without
pytest, and the tests' helpers build on it, not it on them.
"""
