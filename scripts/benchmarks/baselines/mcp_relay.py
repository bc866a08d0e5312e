"""The MCP baseline of scripts/bench: a minimal MCP -> WebSocket tool-call relay on the official SDK.

What a competent person would write in an hour with the ``mcp`` SDK: a low-level ``Server``
(the layer the broker itself builds on) with one tool, ``call_page_tool {tab, tool, arguments}``,
that forwards the call to the extension over a WebSocket and answers the page's result as JSON
text (stdlib ``json``). The extension connects to ``/`` of an aiohttp site of its own (Origin
checked; uvicorn has no WebSocket library here; the link is ``scripts/benchmarks/baselines/link.py``, shared
with the REST baseline), and MCP is served

- ``http``: by the SDK's own ``streamable_http_app()`` (both protocol eras, JSON answers like the
  broker's, DNS-rebinding protection on as the SDK sets it for 127.0.0.1) under uvicorn, behind a
  small ASGI check of ``Authorization: Bearer <BENCH_RELAY_TOKEN>``; it prints
  ``mcp relay listening on http://127.0.0.1:PORT/mcp; extension link on ws://127.0.0.1:PORT2/``;
- ``stdio``: by ``stdio_server()`` and ``Server.run`` (both eras); the extension link's port is
  written to ``--port-file`` since stdout is the protocol.

Usage: ``BENCH_RELAY_TOKEN=secret python -m scripts.benchmarks.baselines.mcp_relay http|stdio [--port-file PATH]``.
Runs on uvloop when installed, as uvicorn would by default; until SIGTERM, SIGINT or end of stdin.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import mcp_types as types
from aiohttp import web
from mcp.server import Server, ServerRequestContext

from .link import LIMIT, Link

TOOL = types.Tool(
    name="call_page_tool",
    description="Call a tool a tab's web page declares, by tab and tool name.",
    input_schema={
        "type": "object",
        "properties": {
            "tab": {"type": "integer"},
            "tool": {"type": "string"},
            "arguments": {"type": "object"},
        },
        "required": ["tab", "tool"],
    },
)


def build_server(link: Link) -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[TOOL])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name != TOOL.name:
            return types.CallToolResult(content=[types.TextContent(text=f"no tool {params.name}")], is_error=True)
        try:
            reply = await link.call(int(args["tab"]), str(args["tool"]), args.get("arguments") or {})
        except (RuntimeError, TimeoutError, KeyError, ValueError) as exc:
            return types.CallToolResult(content=[types.TextContent(text=str(exc))], is_error=True)
        if reply.get("error") is not None:
            return types.CallToolResult(content=[types.TextContent(text=str(reply["error"]))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(reply.get("result")))])

    return Server("bench-mcp-relay", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def start_link(link: Link) -> tuple[web.AppRunner, int]:
    app = web.Application(client_max_size=LIMIT)
    app.router.add_get("/", link.extension)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, runner.addresses[0][1]


def bearer_guard(app: Any, token: str) -> Any:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <token>``."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            presented = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not hmac.compare_digest(presented, expected):
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"wrong bearer token"})
                return
        await app(scope, receive, send)

    return guarded


async def serve_http(token: str) -> None:
    import uvicorn  # noqa: PLC0415

    link = Link()
    runner, link_port = await start_link(link)
    server = build_server(link)
    app = bearer_guard(server.streamable_http_app(json_response=True, host="127.0.0.1"), token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    serving = asyncio.create_task(uv.serve(sockets=[sock]))
    while not uv.started:
        if serving.done():
            await serving
            return
        await asyncio.sleep(0.01)
    print(
        f"mcp relay listening on http://127.0.0.1:{port}/mcp; extension link on ws://127.0.0.1:{link_port}/",
        flush=True,
    )
    await serving  # uvicorn handles SIGTERM and SIGINT
    await runner.cleanup()


async def serve_stdio(port_file: Path | None) -> None:
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    link = Link()
    runner, link_port = await start_link(link)
    if port_file is not None:
        tmp = port_file.with_suffix(".tmp")
        tmp.write_text(str(link_port))
        tmp.rename(port_file)
    server = build_server(link)
    serving = asyncio.current_task()
    assert serving is not None
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, serving.cancel)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except asyncio.CancelledError:
        pass
    finally:
        await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("transport", choices=["http", "stdio"])
    parser.add_argument("--port-file", type=Path, help="stdio: write the extension link's port here")
    args = parser.parse_args()
    main_coro = serve_http(os.environ["BENCH_RELAY_TOKEN"]) if args.transport == "http" else serve_stdio(args.port_file)
    try:
        import uvloop  # noqa: PLC0415
    except ImportError:
        asyncio.run(main_coro)
    else:
        uvloop.run(main_coro)


if __name__ == "__main__":
    main()
