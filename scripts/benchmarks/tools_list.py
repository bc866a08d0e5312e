"""The tools-list suite: what a client's ``tools/list`` costs it to read, ours beside Playwright MCP's.

Both lists are read in the same run through the official MCP SDK client over stdio and counted as
compact JSON (the ``tools`` array, no spaces), as a model reads them: ours from ``browser-mcp mcp``
with the real extension in headless Chromium and a tab owned (so every tool a client has is
listed: the fixed ones, the built-in ones, the windows, history and bookmarks), Playwright MCP
0.0.83 (pinned, ``support/playwright_mcp.py``) with its defaults. Each side is also listed with
every capability group asked for (``--caps all``; Playwright's ``--caps`` with all its groups).
The goal: our default list at most 1.1x the characters of Playwright MCP's.
"""

from __future__ import annotations

import json
import shlex
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client

from .support import playwright_mcp as pw
from .support import progress
from .support.mcp_sides import another_client, start_ours, start_playwright, unwrapped
from .support.pages import PageServer
from .support.shop_pages import shop_page

GOAL = 1.1
PLAYWRIGHT_CAPS = "vision,pdf,devtools,storage,network,testing,tracing"
# Playwright MCP's tools that have no place in a person's own browser: code run outside any page, its
# debugger's resume, its own configuration.
NOT_OURS = frozenset({"browser_run_code_unsafe", "browser_resume", "browser_get_config"})


@dataclass
class Listed:
    side: str
    tools: int
    chars: int
    names: list[str]


async def _listed(side: str, client: Client) -> Listed:
    listed = (await client.list_tools()).tools
    tools = [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in listed]
    compact = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    return Listed(side, len(tools), len(compact), [tool["name"] for tool in tools])


async def bench_tools_list(args: Any) -> list[Listed]:
    """Each side's list, default and with every group.

    Raises:
        BenchError: when a side cannot be started.
    """
    result: list[Listed] = await unwrapped(_bench(args))
    return result


async def _bench(args: Any) -> list[Listed]:
    version = await pw.ensure_installed()
    with tempfile.TemporaryDirectory(prefix="browser-mcp-bench-tools-list-") as tmp:
        workdir = Path(tmp)
        async with AsyncExitStack() as stack:
            pages = PageServer(shop_page(4))
            await pages.start()
            stack.push_async_callback(pages.stop)
            ours, broker, browser_name = await start_ours(stack, workdir, shlex.split(args.broker_cmd))
            everything = await another_client(stack, workdir, broker, "--caps", "all")
            progress(f"tools-list: {browser_name} with the extension; Playwright MCP {version}")
            for client in (ours, everything):
                await client.call_tool("tabs", {"action": "open", "url": pages.url("/shop"), "focus": False})
            playwright = await start_playwright(stack, workdir, "playwright", None)
            playwright_all = await start_playwright(stack, workdir, "playwright-all", None, ("--caps", PLAYWRIGHT_CAPS))
            return [
                await _listed("ours", ours),
                await _listed("playwright", playwright),
                await _listed("ours --caps all", everything),
                await _listed("playwright --caps all", playwright_all),
            ]


def tools_list_report(results: list[Listed], args: Any) -> str:
    by_side = {listed.side: listed for listed in results}
    lines = ["tools/list, compact JSON, read through the MCP SDK client in the same run:"]
    lines += [f"  {listed.side:<24} {listed.tools:>3} tools  {listed.chars:>7,} characters" for listed in results]
    ratio = by_side["ours"].chars / by_side["playwright"].chars
    verdict = "within" if ratio <= GOAL else "over"
    lines.append(f"  default lists: ours / Playwright MCP = {ratio:.2f}x ({verdict} the {GOAL}x goal)")
    theirs = set(by_side["playwright --caps all"].names) - NOT_OURS
    missing = sorted(theirs - set(by_side["ours --caps all"].names))
    lacking = ", ".join(missing) or "none"
    lines.append(f"  Playwright MCP's tools but {', '.join(sorted(NOT_OURS))} that we lack: {lacking}")
    return "\n".join(lines)


def tools_list_json(results: list[Listed], args: Any) -> dict[str, Any]:
    return {listed.side: {"tools": listed.tools, "chars": listed.chars, "names": listed.names} for listed in results}
