"""chrome-devtools-mcp, the tokens benchmark's second peer: installed pinned into the bench's cache, run over stdio.

The version is pinned, exactly, in ``scripts/chrome-devtools-mcp/package.json`` and its lock file
(committed; the package bundles its dependencies, so the lock holds it alone, with its integrity
hash), and installed as :mod:`.npm_pins` installs every pinned peer. No browser is downloaded: it
drives Debian's ``/usr/bin/chromium``.

:func:`server_parameters` is the command line an MCP client's configuration would hold, as the MCP
SDK's stdio client spawns it, from its ``--help`` and README: ``--headless``, ``--isolated`` (a
temporary profile, removed when it closes Chromium), ``--executablePath``, the viewport of our
side's headless Chromium, ``--chromeArg=--no-sandbox`` (the bench runs as root here, where Chromium
refuses its sandbox; the other sides' Chromium runs without it too), ``--no-usage-statistics``
(and ``CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS``), ``--no-performance-crux`` (no page URL sent to
the CrUX API), and ``CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS`` (no query of the npm registry for a
newer version). Its own defaults otherwise: every answer as it is, a snapshot only when asked.
"""

from __future__ import annotations

from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tests.harness.chromium import CHROMIUM

from .npm_pins import Pin

PIN = Pin("chrome-devtools-mcp", "chrome-devtools-mcp", "build/src/bin/chrome-devtools-mcp.js", "the tokens suite")


async def ensure_installed() -> str:
    """chrome-devtools-mcp in the cache, as pinned; its version.

    Raises:
        BenchError: when node or npm is missing, or ``npm ci`` fails.
    """
    return await PIN.ensure_installed()


def server_parameters(workdir: Path, viewport: str) -> StdioServerParameters:
    """chrome-devtools-mcp as a stdio MCP server; its home and files in ``workdir``."""
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    args = [str(PIN.cli()), "--headless", "--isolated", "--executablePath", CHROMIUM, "--viewport", viewport,
            "--chromeArg=--no-sandbox", "--no-usage-statistics", "--no-performance-crux"]  # fmt: skip
    return StdioServerParameters(
        command="node",
        args=args,
        cwd=workdir,
        env={
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(workdir / "config"),
            "TMPDIR": str(workdir),
            "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1",
            "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS": "1",
        },
    )
