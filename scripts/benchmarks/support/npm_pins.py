"""An npm package the bench runs as a peer, pinned: installed into the bench's cache from a committed lock file.

Each peer has its folder in ``scripts/`` (``scripts/playwright-mcp/``, ``scripts/chrome-devtools-mcp/``)
holding a ``package.json`` that asks for one exact version and its ``package-lock.json`` (committed;
every package in it locked with its integrity hash). :meth:`Pin.ensure_installed` copies the two
files into ``scripts/.bench-cache/<folder>/`` (gitignored) and runs ``npm ci --ignore-scripts`` there
whenever the lock file there differs from the committed one, so a changed pin reinstalls and an
unchanged one costs nothing. No install script runs and no browser is downloaded: each peer drives
Debian's ``/usr/bin/chromium``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from . import ROOT, BenchError, progress

INSTALL_TIMEOUT_S = 300.0
FILES = ("package.json", "package-lock.json")


@dataclass(frozen=True)
class Pin:
    """One pinned package: its folder's name in ``scripts/``, its npm name and its entry script in the package."""

    folder: str
    package: str
    entry: str  # relative to the package's own folder in node_modules
    suite: str  # the suites that need it, for the message when node is missing

    @property
    def pinned(self) -> Path:
        return ROOT / "scripts" / self.folder

    @property
    def cache(self) -> Path:
        return ROOT / "scripts" / ".bench-cache" / self.folder

    def pinned_version(self) -> str:
        """The exact version that the folder's ``package.json`` asks for."""
        version: str = json.loads((self.pinned / "package.json").read_text())["dependencies"][self.package]
        return version

    def cli(self) -> Path:
        return self.cache / "node_modules" / self.package / self.entry

    def _installed(self) -> bool:
        if not self.cli().exists():
            return False
        return all(
            (self.cache / name).exists() and (self.cache / name).read_bytes() == (self.pinned / name).read_bytes()
            for name in FILES
        )

    async def ensure_installed(self) -> str:
        """The package in the cache, as pinned; its version.

        Raises:
            BenchError: when node or npm is missing, or ``npm ci`` fails.
        """
        for tool in ("node", "npm"):
            if shutil.which(tool) is None:
                raise BenchError(
                    f"{tool} is not on PATH: {self.suite} runs {self.package} (apt-get install nodejs npm)"
                )
        if not self._installed():
            progress(f"installing {self.package}@{self.pinned_version()} into {self.cache.relative_to(ROOT)} (npm ci)")
            self.cache.mkdir(parents=True, exist_ok=True)
            for name in FILES:
                shutil.copyfile(self.pinned / name, self.cache / name)
            process = await asyncio.create_subprocess_exec(
                "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error",
                cwd=self.cache, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            try:
                output, _ = await asyncio.wait_for(process.communicate(), INSTALL_TIMEOUT_S)
            except TimeoutError:
                process.kill()
                await process.wait()
                raise BenchError(f"npm ci of {self.package} took over {INSTALL_TIMEOUT_S:g} s") from None
            if process.returncode != 0 or not self.cli().exists():
                # A half-done install must not pass for a done one next time.
                (self.cache / "package-lock.json").unlink(missing_ok=True)
                raise BenchError(
                    f"npm ci of {self.package} failed (exit {process.returncode}):\n{output.decode()[-3000:]}"
                )
        package_json = self.cache / "node_modules" / self.package / "package.json"
        version: str = json.loads(package_json.read_text())["version"]
        return version
