"""End to end: the extension's link survives a long idle stretch in a Chromium nobody debugs.

Under Playwright the service worker never sleeps (a DevTools session stays attached to it), so
this test runs plain ``/usr/bin/chromium`` as a subprocess, the way a person runs it. Chromium
stops a worker after about 30 s without events; the link lives on only because messages keep
flowing (the extension's ``ping`` every 20 s, the broker's own). The broker must see the same
browser connected, without a gap, for 70 s, and then a page tool must still answer. It takes
that long by design. With no DevTools on the worker to store a pairing, the extension learns
the broker's token from the native messaging host, installed into the profile.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ..harness.chromium import CHROMIUM, chromium_args
from ..harness.page_server import serve_pages
from ..harness.processes import terminate_or_kill
from ..harness.waiting import WAIT, eventually
from ..support.cli_helpers import CLI, Brokers, cli_env
from ..support.extension_world import MODERN_PAGE
from ..support.probed_ports import start_probed_broker

IDLE = 70.0


@pytest.mark.timeout(IDLE + 60)
async def test_an_idle_browser_stays_joined_and_its_page_tools_answer(tmp_path: Path) -> None:
    async with Brokers(tmp_path / "discovery") as brokers, serve_pages({"modern.html": MODERN_PAGE}) as site:
        broker = await start_probed_broker(brokers)
        token = broker.token
        await _install_native_host(tmp_path, brokers.discovery_dir)
        # A page only this browser shows tells it apart from browsers of other test runs.
        marker = f"{site}/modern.html?idle={uuid.uuid4().hex}"
        process = await _start_chromium(tmp_path, marker)
        try:
            async with aiohttp.ClientSession(
                f"http://127.0.0.1:{broker.port}", headers={"Authorization": f"Bearer {token}"}
            ) as http:

                async def get(path: str) -> Any:
                    async with http.get(path) as response:
                        return await response.json()

                async def ours() -> dict[str, Any] | None:
                    return next((t for t in (await get("/tabs"))["tabs"] if t["url"] == marker and t["tools"]), None)

                tab = await eventually(
                    ours, "plain Chromium's extension to join with the page's tools", within=WAIT * 2
                )
                key = tab["browser"]
                async with http.post(f"/tabs/{tab['ref']}/claim") as response:
                    assert response.status == 200, await response.text()
                started = time.monotonic()
                while time.monotonic() - started < IDLE:
                    status = await get("/status")
                    browser = next(b for b in status["browsers"] if b["browser"] == key)
                    assert browser["connected"], f"the link dropped after {time.monotonic() - started:.1f} s idle"
                    await asyncio.sleep(0.25)
                async with http.post(f"/tabs/{tab['ref']}/tools/echo", json={"text": "still here"}) as response:
                    assert response.status == 200, await response.text()
                    assert (await response.json())["result"] == {"echoed": "still here", "from": "/modern.html"}
        finally:
            await terminate_or_kill(process, 10)


async def _install_native_host(tmp_path: Path, discovery_dir: Path) -> None:
    installer = await asyncio.create_subprocess_exec(
        *CLI,
        "install-native-host",
        "--user-data-dir",
        str(tmp_path / "profile"),
        "--discovery-dir",
        str(discovery_dir),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=cli_env(discovery_dir),
    )
    async with asyncio.timeout(60):
        output, _ = await installer.communicate()
    assert installer.returncode == 0, output.decode()


async def _start_chromium(tmp_path: Path, url: str) -> asyncio.subprocess.Process:
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing: install Debian's chromium package"
    return await asyncio.create_subprocess_exec(
        CHROMIUM,
        *chromium_args(f"--user-data-dir={tmp_path / 'profile'}", url),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
