"""The baseline of scripts/bench: a minimal REST -> WebSocket tool-call relay.

What a competent person would write in an hour with aiohttp on the stock asyncio loop and the
standard library's ``json``: the extension connects to ``/`` (its Origin checked; the link is
``scripts/benchmarks/baselines/link.py``, shared with the MCP baseline), and ``POST /tabs/{id}/tools/{name}``
(bearer token checked) forwards the body as the call's arguments, waits for the ``toolResult``
with the same ``callId`` and answers ``{"result": ...}``.

Usage: ``BENCH_RELAY_TOKEN=secret python -m scripts.benchmarks.baselines.rest_relay [PORT]``; prints
``relay listening on http://127.0.0.1:PORT`` and runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import signal
import sys

from aiohttp import web

from .link import LIMIT, Link


class Relay:
    def __init__(self, token: str) -> None:
        self.expected = f"Bearer {token}".encode()
        self.link = Link()

    async def call_tool(self, request: web.Request) -> web.Response:
        if not hmac.compare_digest(request.headers.get("Authorization", "").encode(), self.expected):
            raise web.HTTPUnauthorized(text="wrong bearer token")
        if self.link.ws is None:
            return web.json_response({"error": "no extension is connected"}, status=503)
        args = await request.json()
        try:
            reply = await self.link.call(int(request.match_info["tab"]), request.match_info["tool"], args)
        except TimeoutError:
            return web.json_response({"error": "the page did not answer"}, status=504)
        if reply.get("error") is not None:
            return web.json_response({"error": reply["error"]}, status=502)
        return web.json_response({"result": reply.get("result")})


async def main(port: int) -> None:
    relay = Relay(os.environ["BENCH_RELAY_TOKEN"])
    app = web.Application(client_max_size=LIMIT)
    app.router.add_get("/", relay.link.extension)
    app.router.add_post("/tabs/{tab}/tools/{tool}", relay.call_tool)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    bound = runner.addresses[0][1]
    print(f"relay listening on http://127.0.0.1:{bound}", flush=True)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
