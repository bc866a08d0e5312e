"""How Chromium is launched with the real extension: Debian's binary, headless, on a 2-core Linux machine.

The one home of these arguments for the real-browser tests (``tests/test_e2e_*.py``) and the
discovery benchmark (``scripts/bench_discovery.py``, which imports this as ``tests.chromium``
with the project's root on ``sys.path``, where it already is for ``broker``). It lives with the
tests rather than under ``scripts/`` because the tests are where this recipe is proven, and pytest
and tox run them without ``scripts/`` on the path; the bench reaching into ``tests/`` costs
nothing. Standard library only, so importing it pulls in no test tools.
"""

from __future__ import annotations

from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
EXTENSION = Path(__file__).resolve().parent.parent / "extension"


def chromium_args(*extra: str) -> list[str]:
    """Chromium headless with the real extension loaded: what works on a 2-core Linux machine."""
    return [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        # Playwright adds --disable-extensions; without this exception the worker never starts.
        f"--disable-extensions-except={EXTENSION}",
        f"--load-extension={EXTENSION}",
        *extra,
    ]
