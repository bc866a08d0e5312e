"""End to end: the real extension trusts only the person's broker, and is paired with it through the popup.

One Chromium for the module, without a native host, so brokers are found by probing 8765-8785;
the module's broker is trusted the way pairing leaves it (:func:`tests.chromium.trust_broker`),
and a page whose title and address are secrets is open. Then:

- a second broker, never paired, is found, told nothing, shown in the popup as "not paired", and
  paired by the person: ``browser-mcp pair`` prints a code, typed into the popup (pictures of
  both moments go to ``tests/output/e2e_pairing/``); it survives the broker's restart (the token
  persists);
- servers squatting on a probed port, speaking the old protocol and sending the broker header,
  learn nothing (no tab title, no address, no answer to an action), whether they ignore the
  challenge, answer it with a key of their own, name the paired broker with a wrong key, or
  relay the real broker's own proof from its port.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import WSMsgType, web
from playwright.async_api import Page

from broker.core import link_auth
from broker.core.security import PROJECT_EXTENSION_ID
from broker.version import BROKER_HEADER

from ..harness.chromium import answer_challenge
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.cli_helpers import BrokerProcess, Brokers, run_cli
from ..support.extension_world import World, open_world
from ..support.fakes import EXTENSION_ORIGIN
from ..support.probed_ports import serve_on_probed_port, start_probed_broker

pytestmark = pytest.mark.asyncio(loop_scope="module")

SECRET_TITLE = "Bank of Secrets: balance 1234"
SECRET_PAGE = f"<!doctype html><title>{SECRET_TITLE}</title><p>account 9876</p>"
POPUP = f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html"
# Where the popup's pictures go, to be looked at: tests/output/e2e_pairing (or $BROWSER_MCP_E2E_OUTPUT).
OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_pairing"


class Browser(World):
    """The module's browser, trusting its broker, with a page whose title and address are secrets."""

    secret_url = ""

    @property
    def instance(self) -> str:
        return self.instance_id

    @property
    def home(self) -> Path:
        return Path(self.broker.discovery_file).parent.parent

    async def popup(self) -> Page:
        page = await self.context.new_page()
        await page.set_viewport_size({"width": 440, "height": 720})
        await page.goto(POPUP)
        return page


async def joined(broker: BrokerProcess, instance_id: str) -> list[dict[str, Any]]:
    """This browser, once it sent ``broker`` its snapshot (other test runs' browsers probe the range too)."""
    headers = {"Authorization": f"Bearer {broker.token}"}
    async with (
        aiohttp.ClientSession(headers=headers) as http,
        http.get(f"http://127.0.0.1:{broker.port}/status") as response,
    ):
        status = await response.json()
    return [b for b in status["browsers"] if b["connected"] and b["instanceId"] == instance_id]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    home = tmp_path_factory.mktemp("e2e-pairing")
    async with serve_pages({"secret.html": SECRET_PAGE}) as site, open_world(home, site, Browser) as world:
        world.secret_url = f"{site}/secret.html?account=9876"
        secret = await world.context.new_page()
        await secret.goto(world.secret_url)
        yield world


async def popup_text(page: Page) -> str:
    text: str = await page.locator("body").inner_text()
    return text


async def test_an_unpaired_broker_learns_nothing_until_the_person_pairs_it_in_the_popup(browser: Browser) -> None:
    async with Brokers(browser.home / "discovery-second") as brokers:
        second = await start_probed_broker(brokers)
        popup = await browser.popup()
        notice = f"Found a broker on port {second.port} that is not paired."
        await eventually(lambda: _shows(popup, notice), "the popup to show the unpaired broker")
        assert await joined(second, browser.instance) == [], "an unpaired broker got the browser's snapshot"
        assert "browser-mcp pair" in await popup_text(popup)

        paired = await run_cli("pair", "--port", str(second.port), discovery_dir=brokers.discovery_dir)
        assert paired.returncode == 0, paired
        found = re.search(r"port \d+: ([A-Z0-9]{4}-[A-Z0-9]{4})", paired.stdout)
        assert found, paired.stdout
        code = found.group(1)

        item = popup.locator(".pair-broker", has_text=f"port {second.port}")
        await item.locator("input").fill("WRONG-CODE")
        await item.locator("button").click()
        await eventually(lambda: _shows(popup, "Not paired: wrong pairing code"), "the popup to say the code is wrong")
        assert await joined(second, browser.instance) == []

        item = popup.locator(".pair-broker", has_text=f"port {second.port}")
        await item.locator("input").fill(code.lower())
        OUTPUT.mkdir(parents=True, exist_ok=True)
        await popup.screenshot(path=str(OUTPUT / "popup_pairing.png"))
        await item.locator("button").click()
        [joined_browser] = await eventually(
            lambda: joined(second, browser.instance), "the extension to join the paired broker"
        )
        await eventually(lambda: _shows(popup, f"Port {second.port}: connected"), "the popup to show it connected")
        assert notice not in await popup_text(popup)
        await popup.screenshot(path=str(OUTPUT / "popup_paired.png"))

        # The token persists: the broker started again on its port is still believed, unpaired anew.
        port = second.port
        second.send_signal(signal.SIGTERM)
        await second.exited()
        again = await brokers.start(port=port)
        [rejoined] = await eventually(
            lambda: joined(again, browser.instance), "the extension to rejoin the restarted broker"
        )
        assert rejoined["instanceId"] == joined_browser["instanceId"]
        await popup.close()


# What the popup shows when a server fails its proof: after a right pairing it must never appear.
WATCH_ALARMS = """() => {
  window.alarms = [];
  const look = () => {
    for (const item of document.querySelectorAll(".pair-refused")) window.alarms.push(item.innerText);
  };
  new MutationObserver(look).observe(document.body, {childList: true, subtree: true, characterData: true});
  look();
}"""


async def test_pairing_ends_connected_with_no_false_alarm_round_after_round(browser: Browser) -> None:
    popup = await browser.popup()
    await popup.evaluate(WATCH_ALARMS)
    for round_ in range(4):
        async with Brokers(browser.home / f"discovery-round-{round_}") as brokers:
            broker = await start_probed_broker(brokers)
            await _pair_in_the_popup(browser, popup, broker, brokers.discovery_dir)
            # Only about this broker: another process's server on a probed port (another suite's
            # squatter, say) is rightly refused, and says so.
            alarms = [alarm for alarm in await popup.evaluate("window.alarms") if f"port {broker.port}:" in alarm]
            assert alarms == [], f"round {round_}: a false alarm after a right pairing"
            broker.send_signal(signal.SIGTERM)
            await broker.exited()
    await popup.close()


async def _pair_in_the_popup(browser: Browser, popup: Page, broker: BrokerProcess, discovery_dir: Path) -> None:
    """The person pairs ``broker``: its code typed into the popup, until the popup shows it connected."""
    await eventually(
        lambda: _shows(popup, f"Found a broker on port {broker.port} that is not paired."),
        "the popup to show the unpaired broker",
    )
    paired = await run_cli("pair", "--port", str(broker.port), discovery_dir=discovery_dir)
    found = re.search(r"port \d+: ([A-Z0-9]{4}-[A-Z0-9]{4})", paired.stdout)
    assert found, paired.stdout
    item = popup.locator(".pair-broker", has_text=f"port {broker.port}")
    await item.locator("input").fill(found.group(1))
    await item.locator("button").click()
    await eventually(lambda: joined(broker, browser.instance), "the extension to join the paired broker")
    await eventually(lambda: _shows(popup, f"Port {broker.port}: connected"), "the popup to show it connected")


async def _shows(page: Page, text: str) -> bool:
    return text in await popup_text(page)


# Squatters


class Squatter:
    """A server on a probed port that says it is a broker and speaks the old protocol.

    On every link it announces a session and asks for everything a broker may ask for; it records
    every frame the extension sends. ``answer`` decides what it says to ``authChallenge``.
    """

    def __init__(self, answer: str, real: BrokerProcess) -> None:
        self.answer = answer
        self.real = real
        self.port = 0
        # Every link's frames: other test runs' browsers on this machine may probe the range too.
        self.links: list[list[dict[str, Any]]] = []
        self.sockets: list[web.WebSocketResponse] = []
        self.connected = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return web.Response(status=426, text="a WebSocket, please", headers={BROKER_HEADER: "0.1.0"})
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        frames: list[dict[str, Any]] = []
        self.links.append(frames)
        self.sockets.append(ws)
        self.connected.set()
        for order in _old_protocol_orders():
            await ws.send_json(order)
        async for frame in ws:
            if frame.type is not WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            frames.append(message)
            if message.get("type") == "authChallenge":
                reply = await self.challenged(message["nonce"])
                if reply is not None:
                    await ws.send_json(reply)
                    for order in _old_protocol_orders():
                        await ws.send_json(order)
        return ws

    async def challenged(self, nonce: str) -> dict[str, Any] | None:
        if self.answer == "old-protocol":
            return None
        if self.answer == "own-key":
            return answer_challenge("the-squatters-own-token-0123456789", self.port, nonce)
        if self.answer == "paired-id-wrong-key":
            forged = answer_challenge("the-squatters-own-token-0123456789", self.port, nonce)
            return {**forged, "brokerId": link_auth.broker_id(self.real.token)}
        # relay: ask the real broker (the origin is easy to forge from outside a browser).
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(self.real.ws_url, headers={"Origin": EXTENSION_ORIGIN}) as real,
        ):
            await real.send_json({"type": "authChallenge", "nonce": nonce})
            async for frame in real:
                message = json.loads(frame.data)
                if message["type"] == "authProof":
                    return dict(message)
        return None

    @property
    def frames(self) -> list[dict[str, Any]]:
        return [frame for link in self.links for frame in link]

    def told(self, instance: str) -> list[dict[str, Any]]:
        """What this project's extension (``instance``) sent beyond its side of the handshake and keepalive.

        Its links are those that open with ``authChallenge``; an older extension of another test
        run joins at once, and must not name ``instance`` either.
        """
        assert instance not in json.dumps(self.frames)
        ours = [link for link in self.links if link and link[0].get("type") == "authChallenge"]
        return [f for link in ours for f in link if f.get("type") not in ("authChallenge", "ping", "pong")]


def _old_protocol_orders() -> list[dict[str, Any]]:
    """What a broker of the old protocol sends: connect, then asks for tabs, actions and tools."""
    return [
        {"type": "connect", "serverVersion": "0.1.0", "sessionIds": []},
        {"type": "connect", "sessionId": "squat", "clientName": "Squatter", "serverVersion": "0.1.0"},
        {"type": "openTab", "sessionId": "squat", "url": "https://evil.example/", "focus": True, "requestId": "r1"},
        {"type": "browserAction", "sessionId": "squat", "callId": "c1", "tabId": 1, "action": "snapshot", "args": {}},
        {"type": "discoverTools", "sessionId": "squat", "callId": "c2", "tabId": 1},
        {"type": "browserRequest", "sessionId": "squat", "callId": "c3", "request": "listWindows", "args": {}},
    ]


@contextlib.asynccontextmanager
async def squatting(answer: str, real: BrokerProcess, probed: bool = True) -> AsyncIterator[Squatter]:
    """A squatter on a port the extension probes, or (not ``probed``) on any free port, where only
    what names it leads a browser."""
    squatter = Squatter(answer, real)
    app = web.Application()
    app.router.add_get("/", squatter.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        if probed:
            squatter.port = await serve_on_probed_port(runner)
        else:
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            squatter.port = runner.addresses[0][1]
        yield squatter
    finally:
        # A link waiting to be paired stays open until the server goes: close it first.
        for ws in squatter.sockets:
            await ws.close()
        await runner.cleanup()


@pytest.mark.parametrize("answer", ["old-protocol", "own-key", "paired-id-wrong-key", "relay"])
async def test_a_squatter_on_a_probed_port_learns_nothing(browser: Browser, answer: str) -> None:
    async with squatting(answer, browser.broker) as squatter:
        async with asyncio.timeout(WAIT):
            await squatter.connected.wait()
        popup = await browser.popup()
        if answer == "own-key":
            said = f"Found a broker on port {squatter.port} that is not paired."
        else:
            said = f"Dropped the server on port {squatter.port}"
        # Once the popup says so, the extension has judged the server: nothing follows. It gives
        # a server 5 s to prove itself, then shows the refusal for 10 s before it asks again, and
        # the popup looks every 2 s: on a busy machine that cycle may take longer than WAIT.
        await eventually(lambda: _shows(popup, said), f"the popup to say {said!r}", within=2 * WAIT)
        await popup.close()
    assert squatter.told(browser.instance) == []
    everything = json.dumps(squatter.frames)
    for secret in (SECRET_TITLE, "account=9876", "secret.html", browser.secret_url):
        assert secret not in everything
    # The person's broker still has the browser, and its tabs stayed where they were.
    assert await joined(browser.broker, browser.instance)
