"""The project's extension in headless Chromium, for the benchmarks that need a real browser.

Playwright's ``launch_persistent_context`` with the real-browser tests' own arguments
(``tests/harness/chromium.py``), in a folder of the bench's own (profile, home, config root, the
brokers' discovery folder): nothing of the user's is read or written. One Chromium takes about
400 MB. The discovery, actions, tokens, overhead, flood, stall and soak suites use it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import BrowserContext, Playwright

from broker.core.security import PROJECT_EXTENSION_ID
from broker.paths import ENV_DISCOVERY_DIR, ENV_TOKEN_FILE
from tests.harness.chromium import CHROMIUM, EXTENSION, chromium_args

from . import START_TIMEOUT, BenchError
from .servers import BROWSER_MCP

WORKER_TIMEOUT_S = 30.0


@dataclass
class Place:
    """One browser's folders: Chromium's profile, home and config root, and the brokers' discovery folder."""

    root: Path

    @property
    def profile(self) -> Path:
        return self.root / "profile"

    @property
    def discovery_dir(self) -> Path:
        return self.root / "discovery"

    def create(self) -> None:
        (self.root / "home").mkdir(parents=True)
        # Before Chromium starts, so the host watches it from the start rather than finding it
        # on its next one-second rescan.
        self.discovery_dir.mkdir(mode=0o700)

    @property
    def env(self) -> dict[str, str]:
        """Chromium's environment, which the native host inherits: nothing of the user's is read or written."""
        return {
            **os.environ,
            "HOME": str(self.root / "home"),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            ENV_DISCOVERY_DIR: str(self.discovery_dir),
            ENV_TOKEN_FILE: str(self.root / "broker-token"),
        }


async def install_native_host(place: Place, *where: str) -> None:
    """``browser-mcp install-native-host`` into the place's profile (or ``where``: ``--browser firefox`` for
    Firefox's manifest under the place's home), watching its discovery folder.

    Raises:
        BenchError: when the installer fails.
    """
    process = await asyncio.create_subprocess_exec(
        str(BROWSER_MCP), "install-native-host", *(where or ("--user-data-dir", str(place.profile))),
        "--discovery-dir", str(place.discovery_dir),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=place.env,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(process.communicate(), START_TIMEOUT)
    if process.returncode != 0:
        raise BenchError(f"install-native-host failed (exit {process.returncode}): {output.decode()}")


@dataclass
class Browser:
    instance_id: str
    started: float  # time.monotonic() when its service worker was there
    context: BrowserContext


@asynccontextmanager
async def chromium(playwright: Playwright, place: Place, extension: Path = EXTENSION) -> AsyncIterator[Browser]:
    """Chromium with the extension (the project's, or a copy of it in ``extension``), once its service
    worker has stored its ``instanceId``.

    Raises:
        BenchError: when Chromium is missing or the project's worker does not start.
    """
    if not os.access(CHROMIUM, os.X_OK):
        raise BenchError(f"{CHROMIUM} is missing: install Debian's chromium package")
    launch_env: dict[str, str | float | bool] = {**place.env}
    context = await playwright.chromium.launch_persistent_context(
        str(place.profile),
        executable_path=CHROMIUM,
        headless=True,
        env=launch_env,
        args=chromium_args(extension=extension),
    )
    # Playwright answers a page's dialog itself unless someone listens; this listener answers nothing, so
    # dialogs are left to the extension's client, as in a browser Playwright does not drive.
    context.on("dialog", lambda dialog: None)
    try:
        worker = context.service_workers[0] if context.service_workers else None
        if worker is None:
            worker = await context.wait_for_event("serviceworker", timeout=WORKER_TIMEOUT_S * 1000)
        started = time.monotonic()
        if worker.url != f"chrome-extension://{PROJECT_EXTENSION_ID}/background.js":
            raise BenchError(f"the service worker is {worker.url}, not the project's extension")
        instance_id = ""
        # The worker stores its id as it starts; it may not have yet.
        while not instance_id:
            if time.monotonic() - started > WORKER_TIMEOUT_S:
                raise BenchError("the extension has stored no instanceId")
            instance_id = await worker.evaluate("chrome.storage.local.get('instanceId').then(v => v.instanceId)")
            if not instance_id:
                await asyncio.sleep(0.05)
        yield Browser(instance_id, started, context)
    finally:
        await context.close()
