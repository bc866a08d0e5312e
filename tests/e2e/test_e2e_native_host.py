"""End to end: the real extension finds brokers through the installed native messaging host.

The host (``browser-mcp native-host``, installed into the test profile with
``install-native-host --user-data-dir``) streams the live brokers of a temporary discovery
folder to the extension. The brokers listen on ports outside 8765-8785 (``--port 0``), so only
the host can lead the extension to them: joining them proves the native path, not probing.

The last test follows the README from end to end: the host installed, the extension loaded, an AI
client that spawns ``browser-mcp mcp`` (which starts a broker), a page with tools, a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import BrowserContext, Page

from broker.core.security import PROJECT_EXTENSION_ID
from broker.paths import ENV_DISCOVERY_DIR

from ..harness.chromium import extension_chromium
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..relay.test_foreign_server import process
from ..support.cli_helpers import CLI, BrokerProcess, Brokers, cli_env, discovery_fields, plant
from ..support.extension_world import MODERN_PAGE
from ..support.mcp_clients import LEGACY, mcp_client, sdk_client, stdio_relay, text
from .test_e2e_pairing import SECRET_PAGE, SECRET_TITLE, squatting


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


async def joined_browsers(broker: BrokerProcess, token: str | None = None) -> list[dict[str, Any]] | None:
    """The browsers joined to ``broker`` (None while there are none)."""
    token = token or broker.token
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http,
        http.get(f"http://127.0.0.1:{broker.port}/status") as response,
    ):
        status = await response.json()
    return [b for b in status["browsers"] if b["connected"] and b["instanceId"]] or None


async def test_the_extension_joins_and_leaves_the_brokers_the_native_host_names(
    brokers: Brokers, env: dict[str, str], host: None, tmp_path: Path
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        context = await launched(stack, env, tmp_path)
        popup = await context.new_page()
        await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
        await eventually(lambda: _popup_shows(popup, "Native host: installed."), "the popup to see the host")
        await eventually(lambda: _popup_shows(popup, "No broker found."), "the popup to say no broker runs")

        # Brokers that refuse extensions without the token: the host hands it to the extension.
        first = await brokers.start("--require-extension-token")
        assert first.port not in range(8765, 8786)
        [browser] = await eventually(lambda: joined_browsers(first), "the extension to join the first broker")
        # A broker that starts later is joined as soon as its discovery file appears (scripts/bench
        # --suite discovery measures how soon).
        second = await brokers.start("--require-extension-token")
        [again] = await eventually(lambda: joined_browsers(second), "the extension to join the second broker")
        assert again["instanceId"] == browser["instanceId"]
        async with mcp_client(f"http://127.0.0.1:{second.port}/mcp", second.token, "Native Client", LEGACY) as client:
            # A browser hears of a session once it acts there: here, by opening a tab.
            await client.call_json("tabs", {"action": "open", "url": "about:blank"})
            for line in (f"Port {first.port}: connected", f"Port {second.port}: connected", "Native Client"):
                await eventually(lambda line=line: _popup_shows(popup, line), f"the popup to show {line!r}")

            # Its discovery file gone, a broker is left at once, even while it runs.
            token = second.token
            second.discovery_file.unlink()
            await eventually(lambda: _no_browser(second, token), "the extension to leave the second broker")
            await eventually(lambda: _popup_hides(popup, str(second.port)), "the popup to drop the broker")
            await eventually(lambda: _popup_hides(popup, "Native Client"), "the popup to drop its session")

        # A stopped broker removes its file and is left, not waited for.
        first.send_signal(signal.SIGTERM)
        await first.exited()
        await eventually(lambda: _popup_hides(popup, str(first.port)), "the popup to drop the stopped broker")
        await eventually(lambda: _popup_shows(popup, "No broker found."), "the popup to say no broker runs")
        assert await joined_browsers(second, token) is None, "the extension rejoined a broker it was told is gone"


async def launched(stack: contextlib.AsyncExitStack, env: dict[str, str], tmp_path: Path) -> BrowserContext:
    """Chromium with the extension and the installed host, closed with ``stack``."""
    context, _worker = await stack.enter_async_context(extension_chromium(tmp_path, env=env))
    return context


async def _no_browser(broker: BrokerProcess, token: str) -> bool:
    return await joined_browsers(broker, token) is None


async def _popup_shows(popup: Page, text: str) -> bool:
    return text in await popup.locator("body").inner_text()


async def _popup_hides(popup: Page, text: str) -> bool:
    return text not in await popup.locator("#brokers").inner_text()


async def test_the_readme_path_a_client_started_with_browser_mcp_mcp_calls_a_page_tool(
    env: dict[str, str],
    host: None,
    discovery_dir: Path,
    state_dir: Path,
    background_brokers: None,
    tmp_path: Path,
) -> None:
    """Host installed, extension loaded, `browser-mcp mcp` started by an AI client, a page opened."""
    assert env[ENV_DISCOVERY_DIR] == str(discovery_dir)
    async with contextlib.AsyncExitStack() as stack:
        site = await stack.enter_async_context(serve_pages({"tools.html": MODERN_PAGE}))
        context = await launched(stack, env, tmp_path)
        # No broker runs yet: the relay starts one in the background.
        client = await stack.enter_async_context(
            sdk_client(stdio_relay(discovery_dir, state_dir), "Claude Code", LEGACY)
        )
        page = await context.new_page()
        await page.goto(site + "/tools.html")

        async def the_page() -> dict[str, Any] | None:
            listed = await client.call_json("tabs", {"action": "list"})
            return next((t for t in listed["tabs"] if t["url"] == site + "/tools.html" and t["tools"]), None)

        tab = await eventually(the_page, "the extension to report the page and its tools to the client")
        heard = client.changes.count
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await client.changes.next(after=heard)
        echo = next(name for name in await client.tool_names() if name.endswith("_echo"))
        result = await client.call(echo, {"text": "from the README"})
        assert not result.is_error, text(result)
        assert json.loads(text(result)) == {"echoed": "from the README", "from": "/tools.html"}


@pytest.mark.parametrize("planted", ["pid-of-another-program", "readable-by-others", "token-the-server-lacks"])
async def test_a_planted_discovery_file_leads_the_extension_to_nothing(
    brokers: Brokers, env: dict[str, str], host: None, tmp_path: Path, planted: str
) -> None:
    """A file naming a squatter's port: ignored by the host, or the squatter cannot prove the token."""
    discovery_dir = Path(env[ENV_DISCOVERY_DIR])
    async with contextlib.AsyncExitStack() as stack:
        site = await stack.enter_async_context(serve_pages({"secret.html": SECRET_PAGE}))
        context = await launched(stack, env, tmp_path)
        secret = await context.new_page()
        await secret.goto(f"{site}/secret.html?account=9876")
        real = await brokers.start()
        await eventually(lambda: joined_browsers(real), "the extension to join the real broker")
        # On a port of its own: the planted file is the one way there, and no other run's browser,
        # probing 8765-8785, links to it and answers its challenge in this browser's place.
        squatter = await stack.enter_async_context(squatting("own-key", real, probed=False))
        pid = stack.enter_context(process("broker-lookalike" if planted == "token-the-server-lacks" else "other"))
        fields = discovery_fields(pid, squatter.port, token="a-token-the-squatter-does-not-know-0123")
        path = plant(discovery_dir, f"server-{pid}.json", fields)
        if planted == "readable-by-others":
            path.chmod(0o644)
        if planted == "token-the-server-lacks":
            # The host names it; the extension asks it to prove the token, and it cannot.
            async with asyncio.timeout(WAIT):
                await squatter.connected.wait()
            popup = await context.new_page()
            await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
            said = f"Dropped the server on port {squatter.port}"
            await eventually(lambda: _popup_shows(popup, said), f"the popup to say {said!r}")
        else:
            # A broker started after the planted file is joined once the host has judged both files.
            later = await brokers.start()
            await eventually(lambda: joined_browsers(later), "the extension to join the later broker")
            assert not any(link and link[0].get("type") == "authChallenge" for link in squatter.links)
        instance = await context.service_workers[0].evaluate(
            "chrome.storage.local.get('instanceId').then((v) => v.instanceId)"
        )
        assert squatter.told(instance) == []
        everything = json.dumps(squatter.frames)
        assert SECRET_TITLE not in everything and "account=9876" not in everything
