"""The stall attack, in whichever browser: one client floods refreshes of the tools of a tab whose
page never finishes loading, while another client calls a page tool in its own tab.

The endless page comes from a server of its own on ``localhost``, another site than the world's
pages on ``127.0.0.1``, as a hostile site would be. What this module needs of a world is its
broker's port and token and its pages' site: the Chromium and Firefox tests share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from aiohttp import web

from broker.core.security import client_token

from .page_server import serve_app
from .waiting import eventually

# The endless page declares its tool as it begins, then its server trickles a byte every
# TRICKLE_SECONDS: its parse never ends, nor its load.
TRICKLE_SECONDS = 2.0
ENDLESS_HEAD = """<!doctype html><meta charset="utf-8"><title>Endless</title><script>
document.modelContext.registerTool({
  name: "still_loading", description: "Declared before the page ends (it never does)",
  inputSchema: {type: "object"}, execute: () => "loading",
});
</script><p>loading"""
# Each of the other client's calls answers well within the stall the flood used to cause (a
# refresh waited 5 s for the endless page to be parsed, then 2 s for its bridge): a bound that holds
# on a loaded machine, yet fails where that stall reaches across.
PROMPT_SECONDS = 4.0
# Refreshes the flooding client starts a second, each without waiting for the others: within its
# token's 20 calls a second, so none is refused, and with answers that took 7 s, about a hundred in
# flight.
FLOOD_RATE = 16
CALLS = 12


async def endless_page(request: web.Request) -> web.StreamResponse:
    """The page that never ends: its tool declared at once, then a byte every TRICKLE_SECONDS."""
    response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
    await response.prepare(request)
    await response.write(ENDLESS_HEAD.encode())
    with contextlib.suppress(ConnectionResetError):
        while True:
            await asyncio.sleep(TRICKLE_SECONDS)
            await response.write(b".")
    return response


@contextlib.asynccontextmanager
async def endless_site() -> AsyncIterator[str]:
    """A server whose page never ends, on ``localhost``; yields its URL."""
    app = web.Application()
    app.router.add_get("/endless.html", endless_page)
    async with serve_app(app) as url:
        yield url.replace("127.0.0.1", "localhost")


class Client:
    """A client token's REST, as a script of that client would use it."""

    def __init__(self, port: int, token: str, name: str):
        self.http = aiohttp.ClientSession(
            f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {client_token(token, name)}"}
        )

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.http.request(method, path, json=body) as response:
            return response.status, await response.json()

    async def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, answer = await self.request(method, path, body)
        assert status == 200, answer
        return answer

    async def open_tab(self, url: str) -> str:
        """Open ``url`` in a tab of the client's; its ref."""
        opened = await self.ok("POST", "/tabs", {"url": url})
        return str(opened["tab"]["ref"])

    async def tool_names(self, ref: str) -> set[str]:
        return {tool["name"] for tool in (await self.ok("GET", f"/tabs/{ref}/tools"))["tools"]}

    async def timed_refresh(self, ref: str) -> tuple[float, list[str]]:
        """A refresh of the tab's tools: how long it took, and the tools it named."""
        started = time.monotonic()
        answer = await self.ok("GET", f"/tabs/{ref}/tools?refresh=true")
        return time.monotonic() - started, [tool["name"] for tool in answer["tools"]]

    async def timed_echo(self, ref: str, n: int) -> float:
        """One call of the page's echo tool (``MODERN_PAGE``'s): how long it took to answer."""
        started = time.monotonic()
        answer = await self.ok("POST", f"/tabs/{ref}/tools/echo", {"text": f"call {n}"})
        took = time.monotonic() - started
        assert answer["result"]["echoed"] == f"call {n}", answer
        return took


@contextlib.asynccontextmanager
async def client(port: int, token: str, name: str) -> AsyncIterator[Client]:
    opened = Client(port, token, name)
    try:
        yield opened
    finally:
        await opened.http.close()


@contextlib.asynccontextmanager
async def refresh_flood(client: Client, ref: str) -> AsyncIterator[list[float]]:
    """Refreshes of the tab's tools, FLOOD_RATE a second, each on its own; yields how long each took,
    as they end."""
    took: list[float] = []
    asked: set[asyncio.Task[None]] = set()

    async def refresh() -> None:
        started = time.monotonic()
        status, answer = await client.request("GET", f"/tabs/{ref}/tools?refresh=true")
        assert status == 200, answer
        took.append(time.monotonic() - started)

    async def flood() -> None:
        while True:
            task = asyncio.create_task(refresh())
            asked.add(task)
            task.add_done_callback(asked.discard)
            # The attacker's pace, not a wait for anything.
            await asyncio.sleep(1 / FLOOD_RATE)

    flooding = asyncio.create_task(flood())
    try:
        yield took
    finally:
        left = [flooding, *asked]
        for task in left:
            task.cancel()
        results = await asyncio.gather(*left, return_exceptions=True)
        failed = [result for result in results if not isinstance(result, asyncio.CancelledError)]
        assert not failed, failed


async def _answered(took: list[float]) -> bool:
    return bool(took)


async def attack(port: int, token: str, own_page: str) -> None:
    """The attack and what the clients see: ``own_page`` (a page of the world's site serving
    ``MODERN_PAGE``) is the calling client's tab."""
    async with (
        endless_site() as endless,
        client(port, token, "flooder") as flooder,
        client(port, token, "caller") as caller,
    ):
        slow = await flooder.open_tab(f"{endless}/endless.html")
        own = await caller.open_tab(own_page)

        async def declared() -> bool:
            return "echo" in await caller.tool_names(own)

        await eventually(declared, "the caller's page to declare its tools")
        # The endless tab is no longer one opened moments ago once its first refresh has answered.
        await flooder.timed_refresh(slow)
        quiet = [await caller.timed_echo(own, n) for n in range(3)]

        async with refresh_flood(flooder, slow) as refreshed:
            await eventually(lambda: _answered(refreshed), "the flood's first answer")
            flooded = [await caller.timed_echo(own, n) for n in range(CALLS)]
            # A tab the caller opens now still waits for its page, as one just opened does.
            fresh = await caller.open_tab(f"{own_page}-fresh")
            flooded.append(await caller.timed_echo(fresh, CALLS))
            while_flooded, names = await flooder.timed_refresh(slow)
        await flooder.ok("DELETE", f"/tabs/{slow}")
        for ref in (own, fresh):
            await caller.ok("DELETE", f"/tabs/{ref}")

        late = [took for took in flooded if took >= PROMPT_SECONDS]
        assert not late, f"calls held by another tab's page: {flooded} (quiet: {quiet})"
        assert names == ["still_loading"], names
        assert while_flooded < PROMPT_SECONDS, f"a refresh of the endless tab took {while_flooded:.1f} s"
        assert all(took < PROMPT_SECONDS for took in refreshed), refreshed
