"""The world of the end-to-end tests with a real broker: headless Chromium with the real extension,
joined to a real broker subprocess, and pages that declare tools.

One Chromium per test module (its process tree takes about 400 MB), launched with the unpacked
extension from ``extension/`` (headless, see :func:`~tests.harness.chromium.chromium_args`); one
broker started on a free port of 8765-8785, the range the extension probes when no native
messaging host is installed; local pages served by aiohttp on 127.0.0.1 that declare tools through
the extension's polyfill (``document.modelContext.registerTool`` with an AbortSignal, and the
older ``navigator.modelContext``). :class:`World` is what a test sees of it: the broker's REST and
MCP, the browser's context and the extension's service worker. The ``site`` and ``world`` fixtures
build it for a module that imports them, once with the polyfill and once with Chromium's own
WebMCP. A missing Chromium fails loudly: these tests never skip.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest
import pytest_asyncio
from playwright.async_api import BrowserContext, Page, Worker

from ..harness.chromium import extension_chromium, probe_only, tab_group_title, trust_broker
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from .cli_helpers import BrokerProcess, Brokers
from .mcp_clients import LEGACY, McpClient, mcp_client
from .probed_ports import start_probed_broker

MODERN_PAGE = """<!doctype html><title>Modern tools</title><script>
const temporary = new AbortController();
document.modelContext.registerTool({
  name: "echo",
  description: "Echo the text back",
  inputSchema: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  annotations: {readOnlyHint: true},
  execute: async ({text}) => ({echoed: text, from: location.pathname}),
});
document.modelContext.registerTool({
  name: "fail",
  description: "Always throws",
  inputSchema: {type: "object", properties: {}},
  execute: () => { throw new Error("the page says no"); },
});
document.modelContext.registerTool(
  {name: "temporary", description: "Goes away", inputSchema: {type: "object"}, execute: () => "here"},
  {signal: temporary.signal},
);
window.dropTemporary = () => temporary.abort();
window.addLater = () => document.modelContext.registerTool({
  name: "later", description: "Registered after load", inputSchema: {type: "object"}, execute: () => "late",
});
</script><p>modern</p>"""

LEGACY_PAGE = """<!doctype html><title>Legacy tools</title><script>
navigator.modelContext.provideContext({tools: [{
  name: "add",
  description: "Add two numbers",
  inputSchema: {type: "object", properties: {a: {type: "number"}, b: {type: "number"}}},
  execute: async ({a, b}) => ({content: [{type: "text", text: String(a + b)}]}),
}]});
navigator.modelContext.registerTool({
  name: "shout",
  description: "Upper-case the text",
  inputSchema: {type: "object", properties: {text: {type: "string"}}},
  execute: ({text}) => text.toUpperCase(),
});
window.dropShout = () => navigator.modelContext.unregisterTool("shout");
</script><p>legacy</p>"""

SLOW_PAGE = """<!doctype html><title>Slow tools</title><script>
document.modelContext.registerTool({
  name: "wait",
  description: "Never answers",
  inputSchema: {type: "object"},
  execute: () => { window.waiting = true; return new Promise(() => {}); },
});
</script><p>slow</p>"""

PLAIN_PAGE = "<!doctype html><title>Plain</title><p>no tools here</p>"

PAGES = {"modern.html": MODERN_PAGE, "legacy.html": LEGACY_PAGE, "slow.html": SLOW_PAGE, "plain.html": PLAIN_PAGE}


def tool_prefix(names: list[str], tab: dict[str, Any]) -> str:
    """How the broker's MCP names start for ``tab``: ``t12_``, or ``b2_t12_`` when ids are shared."""
    short = f"t{tab['id']}_"
    return short if any(n.startswith(short) for n in names) else f"{tab['browser']}_{short}"


class World:
    """The browser, the broker and the page server of this module."""

    def __init__(
        self, context: BrowserContext, worker: Worker, broker: BrokerProcess, token: str, site: str, flavour: str
    ):
        self.flavour = flavour
        self.instance_id = ""
        self.browser_key = ""
        self.context = context
        self.worker = worker
        self.broker = broker
        self.token = token
        self.site = site
        self.http = aiohttp.ClientSession(
            f"http://127.0.0.1:{broker.port}", headers={"Authorization": f"Bearer {token}"}
        )

    def url(self, page: str, tag: str) -> str:
        return f"{self.site}/{page}?{tag}"

    async def get(self, path: str) -> Any:
        async with self.http.get(path) as response:
            assert response.status == 200, await response.text()
            return await response.json()

    async def post(self, path: str, body: Any) -> tuple[int, Any]:
        async with self.http.post(path, json=body) as response:
            return response.status, await response.json()

    async def browser(self) -> dict[str, Any] | None:
        """This browser as the broker lists it (other browsers may join a broker in the range)."""
        browsers = (await self.get("/status"))["browsers"]
        return next((b for b in browsers if b["instanceId"] == self.instance_id), None)

    async def tabs(self) -> list[dict[str, Any]]:
        return [t for t in (await self.get("/tabs"))["tabs"] if t["browser"] == self.browser_key]

    async def tab_at(self, url: str, tools: set[str] | None = None) -> dict[str, Any]:
        """The broker's tab showing ``url``, once it reports ``tools`` (when given)."""

        async def find() -> dict[str, Any] | None:
            for tab in await self.tabs():
                if tab["url"] == url and (tools is None or {t["name"] for t in tab["tools"]} == tools):
                    return tab
            return None

        return await eventually(find, f"a tab at {url} with tools {tools}")

    async def claim(self, ref: str) -> None:
        """Make a tab the default REST session's, as calling its page tools needs."""
        status, body = await self.post(f"/tabs/{ref}/claim", {})
        assert status == 200, body

    async def open_page(self, page: str, tag: str, tools: set[str] | None = None) -> tuple[Page, dict[str, Any]]:
        browser_page = await self.context.new_page()
        await browser_page.goto(self.url(page, tag))
        return browser_page, await self.tab_at(self.url(page, tag), tools)

    async def joined(self) -> None:
        """Wait for this browser's snapshot and learn its instance id and its key in the broker."""

        async def stored() -> str | None:
            return await self.worker.evaluate(
                "chrome.storage.local.get('instanceId').then((v) => v.instanceId ?? null)"
            )

        self.instance_id = await eventually(stored, "the extension to choose its instance id")
        browser = await eventually(self.browser, "the extension to join the broker")
        self.browser_key = browser["browser"]

    def mcp(self, name: str, caps: str | None = None) -> contextlib.AbstractAsyncContextManager[McpClient]:
        """An MCP client named ``name``, offered the tool groups ``caps`` beside the default ones."""
        query = f"?caps={caps}" if caps else ""
        return mcp_client(f"http://127.0.0.1:{self.broker.port}/mcp{query}", self.token, name, LEGACY)


WorldT = TypeVar("WorldT", bound=World)


@contextlib.asynccontextmanager
async def open_world(
    home: Path,
    site: str,
    kind: type[WorldT],
    flavour: str = "polyfill",
    extra_args: tuple[str, ...] = (),
    probed: bool = True,
    **launch: Any,
) -> AsyncIterator[WorldT]:
    """A broker on a probed port, and headless Chromium with the extension, once it has joined.

    Not ``probed``: the broker takes any free port and the extension is told to look there
    alone, so that no other run's broker or browser meets this one."""
    async with Brokers(home / "discovery") as brokers:
        broker = await (start_probed_broker(brokers) if probed else brokers.start())
        async with extension_chromium(home, *extra_args, wait=WAIT, **launch) as (context, worker):
            await trust_broker(worker, broker.token)
            if not probed:
                await probe_only(worker, broker.port)
            world = kind(context, worker, broker, broker.token, site, flavour)
            try:
                await world.joined()
                yield world
            finally:
                await world.http.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site() -> AsyncIterator[str]:
    async with serve_pages(PAGES) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["polyfill", "native"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, site: str
) -> AsyncIterator[World]:
    """The browser of one WebMCP flavour: the extension's polyfill, or Chromium's own WebMCP.

    Module-scoped and parametrized, so pytest runs every test against one browser, closes it,
    then runs them all against the other: one Chromium at a time.
    """
    flags = ("--enable-features=WebMCP",) if request.param == "native" else ()
    async with open_world(tmp_path_factory.mktemp("e2e"), site, World, request.param, flags) as world:
        yield world


async def stop_worker(world: World, page: Page) -> None:
    """Stop the extension's service worker, as Chromium does an idle one, and wait until the broker
    has seen its link close."""
    cdp = await world.context.new_cdp_session(page)
    targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    worker_target = next(t for t in targets if t["type"] == "service_worker" and t["url"] == world.worker.url)
    await cdp.send("Target.closeTarget", {"targetId": worker_target["targetId"]})
    await cdp.detach()

    async def detached() -> bool:
        browser = await world.browser()
        return browser is not None and not browser["connected"]

    await eventually(detached, "the broker to see the stopped worker's link close")


async def tab_absent(world: World, tab_id: int) -> bool:
    """Whether the broker no longer lists the tab."""
    return all(t["id"] != tab_id for t in await world.tabs())


async def group_title(world: World, tab_id: int) -> str | None:
    """The title of the tab group the browser shows the tab in, if any."""
    return await tab_group_title(world.worker, tab_id)


async def tab_gone(world: World, tab_id: int) -> bool:
    """Whether the browser has closed the tab (asked of its own tabs API)."""
    exists = await world.worker.evaluate(
        "async (id) => { try { await chrome.tabs.get(id); return true; } catch { return false; } }", tab_id
    )
    return not exists
