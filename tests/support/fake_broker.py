"""A scripted fake broker the real extension joins: it answers the probe as a broker does, proves
the link key of the token the extension is paired with, and keeps every link that opens.

It listens on a free port of 8765-8785, which the extension probes when no native messaging host
is installed, or on a port of its own that a browser is told to look at alone. Each
:class:`Link` keeps every frame the extension sent, in order, for a test to wait on; other test
runs' browsers may join too, and :meth:`FakeBroker.link_of` tells a browser's link by the
instance id the extension keeps in its storage.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import WSMsgType, web

from broker.version import BROKER_HEADER

from ..harness.chromium import answer_challenge
from .probed_ports import serve_on_probed_port

WAIT = 20.0
# The fake broker's token: the extension is paired with it, and it proves it on every link.
FAKE_TOKEN = "fake-broker-token-0123456789abcdef"


class Link:
    """One extension's WebSocket to the fake broker, with everything it sent, in order."""

    def __init__(self, ws: web.WebSocketResponse, port: int):
        self.ws = ws
        self.port = port
        self.inbox: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()

    async def receive(self) -> None:
        async for frame in self.ws:
            if frame.type != WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            if message.get("type") == "ping":
                await self.ws.send_json({"type": "pong"})
            elif message.get("type") == "authChallenge":
                await self.ws.send_json(answer_challenge(FAKE_TOKEN, self.port, message["nonce"]))
            async with self.changed:
                self.inbox.append(message)
                self.changed.notify_all()

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_json(message)

    async def wait_for(self, what: str, match: Any, within: float = WAIT) -> dict[str, Any]:
        """The first message so far or to come that ``match(message)`` accepts."""
        try:
            async with asyncio.timeout(within), self.changed:
                while True:
                    found = next((m for m in self.inbox if match(m)), None)
                    if found is not None:
                        return found
                    await self.changed.wait()
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}") from None


class FakeBroker:
    """Answers the extension's probe as a broker does and keeps every link that opens."""

    def __init__(self, hello: dict[str, Any] | None = None) -> None:
        # The link's first frame, as a broker's ``connect`` on a link that opens.
        self.hello = hello or {"type": "connect", "serverVersion": "fake", "sessionIds": []}
        self.links: list[Link] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return web.Response(status=426, text="a WebSocket, please", headers={BROKER_HEADER: "fake"})
        ws = web.WebSocketResponse(heartbeat=None)
        await ws.prepare(request)
        link = Link(ws, self.port)
        self.links.append(link)
        await ws.send_json(self.hello)
        await link.receive()
        return ws

    async def start(self, probed: bool = True) -> None:
        """Listen on a free port the extension probes by default, or (not ``probed``) on any free
        port, for a browser told to look there alone (:func:`tests.chromium.probe_only`)."""
        app = web.Application()
        app.router.add_get("/", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        if not probed:
            await web.TCPSite(self.runner, "127.0.0.1", 0).start()
            self.port = self.runner.addresses[0][1]
            return
        self.port = await serve_on_probed_port(self.runner)

    async def link_of(self, instance_id: str) -> Link:
        """The link whose ``connected`` names this browser instance."""

        def ours(message: dict[str, Any]) -> bool:
            return message.get("type") == "connected" and message["browser"].get("instanceId") == instance_id

        try:
            async with asyncio.timeout(WAIT):
                while True:
                    for link in list(self.links):
                        if any(ours(m) for m in link.inbox):
                            return link
                    await asyncio.sleep(0.1)
        except TimeoutError:
            raise AssertionError("timed out waiting for the extension to join the fake broker") from None

    async def stop(self) -> None:
        for link in self.links:
            await link.ws.close()
        if self.runner:
            await self.runner.cleanup()
