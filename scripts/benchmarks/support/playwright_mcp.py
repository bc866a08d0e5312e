"""Playwright MCP, the actions benchmark's baseline: installed pinned into the bench's cache, run over stdio.

The version is pinned, exactly, in ``scripts/playwright-mcp/package.json`` and its lock file
(committed; its dependencies, ``playwright`` and ``playwright-core``, come locked with their
integrity hashes), and installed as :mod:`.npm_pins` installs every pinned peer. No browser is
downloaded: it drives Debian's ``/usr/bin/chromium`` (``--executable-path``).

:func:`server_parameters` is the command line an MCP client's configuration would hold, as the
MCP SDK's stdio client spawns it: ``--headless``, ``--isolated`` (the profile in memory),
``--no-sandbox`` (the bench runs as root here, where Chromium refuses its sandbox, and our side's
Chromium runs without it too), the viewport of our side's headless Chromium, and everything it
writes (snapshot files of its navigations, console logs) into the bench's temporary folder.
"""

from __future__ import annotations

from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tests.harness.chromium import CHROMIUM

from .npm_pins import Pin

PIN = Pin("playwright-mcp", "@playwright/mcp", "cli.js", "the actions and tokens suites")
PINNED, CACHE, PACKAGE = PIN.pinned, PIN.cache, PIN.package


def pinned_version() -> str:
    """The exact version of Playwright MCP that ``scripts/playwright-mcp/package.json`` asks for."""
    return PIN.pinned_version()


def cli() -> Path:
    return PIN.cli()


async def ensure_installed() -> str:
    """Playwright MCP in the cache, as pinned (:mod:`.npm_pins`); its version.

    Raises:
        BenchError: when node or npm is missing, or ``npm ci`` fails.
    """
    return await PIN.ensure_installed()


def server_parameters(
    workdir: Path, viewport: str, settle_ms: int | None = None, extra_args: tuple[str, ...] = ()
) -> StdioServerParameters:
    """Playwright MCP as a stdio MCP server; its files go to ``workdir``.

    ``settle_ms``: its ``--timeout-settle``, the fixed wait after every action (None: its default, 500 ms);
    ``extra_args``: more of its options (``--snapshot-mode none``).
    """
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    args = [str(cli()), "--headless", "--isolated", "--no-sandbox", "--executable-path", CHROMIUM,
            "--viewport-size", viewport, "--output-dir", str(workdir / "output")]  # fmt: skip
    if settle_ms is not None:
        args += ["--timeout-settle", str(settle_ms)]
    args += extra_args
    return StdioServerParameters(
        command="node",
        args=args,
        # Its workspace root (where relative output paths resolve) is its working directory.
        cwd=workdir,
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(workdir / "config")},
    )
