"""The MCP servers of the browser benchmarks, each behind the official MCP SDK client over stdio.

- **Ours** (:func:`start_ours`): ``browser-mcp serve --port 0``, and Chromium with the project's
  extension, led to the broker by the native host (:mod:`support.browser`); the SDK client spawns
  ``browser-mcp mcp`` (as an AI client's configuration would) once the extension has joined, and is
  handed over when the session lists the built-in browser tools. :func:`start_ours_in_firefox` does the
  same with headless Firefox ESR (``tests/harness/firefox.py``) and the extension's Firefox build.
- **Playwright MCP** (:func:`start_playwright`), pinned (:mod:`support.playwright_mcp`), which the
  same SDK client spawns; it launches its own Chromium at its first call.
- **chrome-devtools-mcp** (:func:`start_chrome_devtools`, the tokens suite's), pinned
  (:mod:`support.chrome_devtools_mcp`), spawned the same way; it launches its Chromium at its first call too.

``scripts/benchmarks/actions/suite.py`` and ``scripts/benchmarks/tokens/suite.py`` drive them, each on the stage
:func:`shop_stage` sets: the shop's pages served, ours started, Playwright MCP installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from playwright.async_api import async_playwright

from tests.harness.firefox import extension_firefox

from . import CALL_TIMEOUT, BenchError
from . import chrome_devtools_mcp as cdt
from . import playwright_mcp as pw
from .browser import Place, chromium, install_native_host
from .mcp_clients import mcp_env, relay_command
from .pages import PageServer
from .servers import Server, start_broker
from .shop_pages import ShopPage

CLIENT_INFO = types.Implementation(name="bench", version="1")
VIEWPORT = "1280x720"  # Playwright's default for a persistent context, which our side's Chromium has
JOIN_TIMEOUT_S = 30.0
TOOLS_TIMEOUT_S = 15.0


def text_of(result: types.CallToolResult) -> str:
    """Every text block of a tool's result, joined: what the model reads of it."""
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def wait_joined(broker: Server, instance_id: str | None) -> str:
    """The browser's name and version once ``/status`` lists it as connected (any browser when
    ``instance_id`` is None: the broker has only the one).

    Raises:
        BenchError: when it does not join in time.
    """
    headers = {"Authorization": f"Bearer {broker.token}"}
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(broker.url + "/status", headers=headers) as response:
                status = await response.json()
            for browser in status["browsers"]:
                if browser["connected"] and instance_id in (None, browser["instanceId"]):
                    return f"{browser['name']} {browser['version']}"
            if time.monotonic() > deadline:
                raise BenchError(f"the extension did not join the broker in {JOIN_TIMEOUT_S:g} s")
            await asyncio.sleep(0.05)


async def wait_for_builtin_tools(client: Client) -> None:
    """Until the broker lists ``browser_snapshot`` and ``browser_click`` for this session.

    Raises:
        BenchError: when it does not in time: this broker or extension has no built-in tools.
    """
    deadline = time.monotonic() + TOOLS_TIMEOUT_S
    while True:
        names = {tool.name for tool in (await client.list_tools()).tools}
        if {"browser_snapshot", "browser_click"} <= names:
            return
        if time.monotonic() > deadline:
            raise BenchError(
                "the broker lists no built-in browser tools (browser_snapshot, browser_click) with the extension"
                f" connected; it lists {sorted(names)}. Do this broker and extension have the built-in tools?"
            )
        await asyncio.sleep(0.1)


async def start_ours(stack: AsyncExitStack, workdir: Path, broker_cmd: list[str]) -> tuple[Client, Server, str]:
    """The broker, Chromium with the extension (the native host leads it to the broker) and the SDK
    client through ``browser-mcp mcp``, once the session lists the built-in tools; and the browser's name.
    """
    place = Place(workdir / "ours")
    place.create()
    await install_native_host(place)
    broker = await start_broker(workdir, broker_cmd, 0, place.discovery_dir)
    stack.push_async_callback(broker.stop)
    playwright = await stack.enter_async_context(async_playwright())
    browser = await stack.enter_async_context(chromium(playwright, place))
    browser_name = await wait_joined(broker, browser.instance_id)
    return await _relay_client(stack, workdir, broker), broker, browser_name


async def start_ours_in_firefox(
    stack: AsyncExitStack, workdir: Path, broker_cmd: list[str]
) -> tuple[Client, Server, str]:
    """As :func:`start_ours`, with headless Firefox ESR and the extension's Firefox build (its WebExtension
    driver), which Firefox's native host leads to a broker of its own."""
    place = Place(workdir / "ours")
    place.create()
    await install_native_host(place, "--browser", "firefox")
    broker = await start_broker(workdir, broker_cmd, 0, place.discovery_dir)
    stack.push_async_callback(broker.stop)
    await stack.enter_async_context(extension_firefox(place.root / "home", env=place.env))
    browser_name = await wait_joined(broker, None)
    return await _relay_client(stack, workdir, broker), broker, browser_name


async def _relay_client(stack: AsyncExitStack, workdir: Path, broker: Server, *extra: str) -> Client:
    """The SDK client through ``browser-mcp mcp`` (with ``extra`` options) to ``broker``, once its session
    lists the built-in tools."""
    command, *relay_args = [*relay_command(broker), *extra]
    params = StdioServerParameters(command=command, args=relay_args, env={**mcp_env(workdir), "LOG_LEVEL": "warning"})
    errlog = stack.enter_context((workdir / "ours-stdio.log").open("a"))
    client = await stack.enter_async_context(
        Client(stdio_client(params, errlog=errlog), mode="legacy", client_info=CLIENT_INFO,
               read_timeout_seconds=CALL_TIMEOUT)
    )  # fmt: skip
    await wait_for_builtin_tools(client)
    return client


async def another_client(stack: AsyncExitStack, workdir: Path, broker: Server, *extra: str) -> Client:
    """One more client of ours, as :func:`start_ours` made its first, with more options of ``browser-mcp mcp``."""
    return await _relay_client(stack, workdir, broker, *extra)


async def start_playwright(
    stack: AsyncExitStack, workdir: Path, name: str, settle_ms: int | None, extra_args: tuple[str, ...] = ()
) -> Client:
    """Playwright MCP with its files in the folder ``name`` of ``workdir``, spawned by the same SDK client
    (it launches its Chromium at its first call); ``extra_args``: more of its options."""
    folder = workdir / name
    folder.mkdir()
    errlog = stack.enter_context((workdir / f"{name}-mcp.log").open("a"))
    params = pw.server_parameters(folder, VIEWPORT, settle_ms, extra_args)
    client: Client = await stack.enter_async_context(
        Client(stdio_client(params, errlog=errlog), mode="legacy",
               client_info=CLIENT_INFO, read_timeout_seconds=CALL_TIMEOUT)
    )  # fmt: skip
    return client


async def start_chrome_devtools(stack: AsyncExitStack, workdir: Path, name: str) -> tuple[Client, str]:
    """chrome-devtools-mcp, installed as pinned, with its home and files in the folder ``name`` of ``workdir``,
    spawned by the same SDK client; and its version.

    Raises:
        BenchError: when it cannot be installed.
    """
    version = await cdt.ensure_installed()
    folder = workdir / name
    folder.mkdir()
    errlog = stack.enter_context((workdir / f"{name}-mcp.log").open("a"))
    client: Client = await stack.enter_async_context(
        Client(stdio_client(cdt.server_parameters(folder, VIEWPORT), errlog=errlog), mode="legacy",
               client_info=CLIENT_INFO, read_timeout_seconds=CALL_TIMEOUT)
    )  # fmt: skip
    return client, version


def first_bench_error(group: BaseExceptionGroup[Any]) -> BenchError | None:
    """The group's BenchError when that is all it holds (the SDK client's task groups wrap what is raised in them)."""
    matched, rest = group.split(BenchError)
    if matched is None or rest is not None:
        return None
    found: BaseException = matched
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found if isinstance(found, BenchError) else None


async def unwrapped(run: Any) -> Any:
    """``await run``, a BenchError raised in the SDK client's task groups raised as itself.

    Raises:
        BenchError: when a side cannot be started or a call fails.
    """
    try:
        return await run
    except BaseExceptionGroup as group:
        found = first_bench_error(group)
        if found is None:
            raise
        raise found from None


@dataclass
class Stage:
    """What a browser bench runs on: its exit stack and folder, the shop's pages, ours, and the
    pinned Playwright MCP's version (started by the bench itself, as it needs it)."""

    stack: AsyncExitStack
    workdir: Path
    pages: PageServer
    ours: Client
    broker: Server
    browser_name: str
    playwright_version: str


@contextlib.asynccontextmanager
async def shop_stage(shop: ShopPage, broker_cmd: str, name: str) -> AsyncIterator[Stage]:
    """The shop served and ours started, in a temporary folder named after the suite ``name``.

    Raises:
        BenchError: when Playwright MCP cannot be installed or ours cannot be started.
    """
    version = await pw.ensure_installed()
    with tempfile.TemporaryDirectory(prefix=f"browser-mcp-bench-{name}-") as tmp:
        workdir = Path(tmp)
        async with AsyncExitStack() as stack:
            pages = PageServer(shop)
            await pages.start()
            stack.push_async_callback(pages.stop)
            ours, broker, browser_name = await start_ours(stack, workdir, shlex.split(broker_cmd))
            yield Stage(stack, workdir, pages, ours, broker, browser_name, version)
