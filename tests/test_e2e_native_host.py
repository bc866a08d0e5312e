"""End to end: the real extension finds brokers through the installed native messaging host.

The host (``browser-mcp native-host``, installed into the test profile with
``install-native-host --user-data-dir``) streams the live brokers of a temporary discovery
folder to the extension. The brokers listen on ports outside 8765-8785 (``--port 0``), so only
the host can lead the extension to them: joining them proves the native path, not probing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import async_playwright

from broker.paths import ENV_DISCOVERY_DIR

from .cli_helpers import CLI, BrokerProcess, Brokers, cli_env
from .test_e2e_extension import CHROMIUM, chromium_args, eventually


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """Home, config root and discovery folder all in ``tmp_path``; Chromium passes it to the host."""
    (tmp_path / "home").mkdir()
    return cli_env(tmp_path / "discovery", HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"))


@pytest.fixture
def host(env: dict[str, str], tmp_path: Path) -> None:
    """The native host, installed into the test profile only."""
    installed = subprocess.run(
        [
            *CLI,
            "install-native-host",
            "--user-data-dir",
            str(tmp_path / "profile"),
            "--discovery-dir",
            env[ENV_DISCOVERY_DIR],
        ],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert installed.returncode == 0, installed.stderr


async def joined_browsers(broker: BrokerProcess) -> list[dict[str, Any]] | None:
    """The browsers joined to ``broker`` (None while there are none)."""
    token = json.loads(broker.discovery_file.read_text())["token"]
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http,
        http.get(f"http://127.0.0.1:{broker.port}/status") as response,
    ):
        status = await response.json()
    return [b for b in status["browsers"] if b["connected"] and b["instanceId"]] or None


async def test_the_extension_joins_the_brokers_the_native_host_names(
    brokers: Brokers, env: dict[str, str], host: None, tmp_path: Path
) -> None:
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing: install Debian's chromium package"
    profile = tmp_path / "profile"
    first = await brokers.start()
    assert first.port not in range(8765, 8786)
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            env=env,
            args=chromium_args(),
        )
        try:
            [browser] = await eventually(lambda: joined_browsers(first), "the extension to join the first broker")
            # A broker that starts later is joined as soon as its discovery file appears.
            second = await brokers.start()
            loop = asyncio.get_running_loop()
            started = loop.time()
            [again] = await eventually(lambda: joined_browsers(second), "the extension to join the second broker")
            assert loop.time() - started < 3.0
            assert again["instanceId"] == browser["instanceId"]
        finally:
            await context.close()
