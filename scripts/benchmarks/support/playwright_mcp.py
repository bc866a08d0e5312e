"""Playwright MCP, the actions benchmark's baseline: installed pinned into the bench's cache, run over stdio.

The version is pinned, exactly, in ``scripts/playwright-mcp/package.json`` and its lock file
(committed; its dependencies, ``playwright`` and ``playwright-core``, come locked with their
integrity hashes). :func:`ensure_installed` copies the two files into
``scripts/.bench-cache/playwright-mcp/`` (gitignored) and runs ``npm ci --ignore-scripts`` there
whenever the lock file there differs from the committed one, so a changed pin reinstalls and an
unchanged one costs nothing. No install script runs and no browser is downloaded: it drives
Debian's ``/usr/bin/chromium`` (``--executable-path``).

:func:`server_parameters` is the command line an MCP client's configuration would hold, as the
MCP SDK's stdio client spawns it: ``--headless``, ``--isolated`` (the profile in memory),
``--no-sandbox`` (the bench runs as root here, where Chromium refuses its sandbox, and our side's
Chromium runs without it too), the viewport of our side's headless Chromium, and everything it
writes (snapshot files of its navigations, console logs) into the bench's temporary folder.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tests.harness.chromium import CHROMIUM

from . import ROOT, BenchError, progress

PINNED = ROOT / "scripts" / "playwright-mcp"
CACHE = ROOT / "scripts" / ".bench-cache" / "playwright-mcp"
PACKAGE = "@playwright/mcp"
INSTALL_TIMEOUT_S = 300.0
FILES = ("package.json", "package-lock.json")


def pinned_version() -> str:
    """The exact version of Playwright MCP that ``scripts/playwright-mcp/package.json`` asks for."""
    version: str = json.loads((PINNED / "package.json").read_text())["dependencies"][PACKAGE]
    return version


def cli() -> Path:
    return CACHE / "node_modules" / "@playwright" / "mcp" / "cli.js"


def _installed() -> bool:
    if not cli().exists():
        return False
    return all(
        (CACHE / name).exists() and (CACHE / name).read_bytes() == (PINNED / name).read_bytes() for name in FILES
    )


async def ensure_installed() -> str:
    """Playwright MCP in the cache, as pinned; its version.

    Raises:
        BenchError: when node or npm is missing, or ``npm ci`` fails.
    """
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise BenchError(
                f"{tool} is not on PATH: the actions suite runs Playwright MCP (apt-get install nodejs npm)"
            )
    if not _installed():
        progress(f"installing {PACKAGE}@{pinned_version()} into {CACHE.relative_to(ROOT)} (npm ci)")
        CACHE.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            shutil.copyfile(PINNED / name, CACHE / name)
        process = await asyncio.create_subprocess_exec(
            "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error",
            cwd=CACHE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        try:
            output, _ = await asyncio.wait_for(process.communicate(), INSTALL_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise BenchError(f"npm ci of {PACKAGE} took over {INSTALL_TIMEOUT_S:g} s") from None
        if process.returncode != 0 or not cli().exists():
            # A half-done install must not pass for a done one next time.
            (CACHE / "package-lock.json").unlink(missing_ok=True)
            raise BenchError(f"npm ci of {PACKAGE} failed (exit {process.returncode}):\n{output.decode()[-3000:]}")
    package = json.loads((cli().parent / "package.json").read_text())
    version: str = package["version"]
    return version


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
