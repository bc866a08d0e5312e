"""The commands that manage a broker rather than a tab: ``pair``, ``stop`` and ``mcp-config``."""

from __future__ import annotations

import argparse
import shlex
import time

from .. import codec, paths
from ..core.link_auth import pairing_text
from ..core.security import client_token
from ..discovery import live_brokers
from ..relay.client import ClientError
from .output import print_json
from .serve import broker_token
from .tabs import connect

__all__ = ["mcp_config", "pair", "stop"]


def pair(args: argparse.Namespace) -> int:
    client = connect(args)
    issued = client.post("/pairing", {})
    if args.json:
        print_json(issued)
        return 0
    print(pairing_text(client.record.port, issued["code"], issued["expiresIn"]))
    return 0


def stop(args: argparse.Namespace) -> int:
    client = connect(args)
    client.post("/shutdown", {})
    deadline = time.monotonic() + 10
    while client.record.path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if client.record.path.exists():
        raise ClientError(f"broker {client.record.pid} did not stop within 10 s")
    if args.json:
        print_json({"stopped": client.record.pid, "port": client.record.port})
    else:
        print(f"stopped the broker on port {client.record.port} (pid {client.record.pid})")
    return 0


def mcp_config(args: argparse.Namespace) -> int:
    from ..install import client_apps  # noqa: PLC0415

    if args.client_app is not None:
        return client_apps.print_config(args.client_app, args.name, args.discovery_dir, args.write)
    if args.write:
        raise ClientError("--write needs --client-app: which application's file to write")
    try:
        token = client_token(broker_token(), args.client)
    except ValueError as exc:
        raise ClientError(str(exc)) from None
    port = args.port
    if port is None:
        alive = live_brokers(paths.discovery_dirs(args.discovery_dir))
        port = alive[0].port if alive else 8765
    command, *stdio_args = client_apps.stdio_command(args.discovery_dir)
    url = f"http://127.0.0.1:{port}/mcp"
    header = f"Authorization: Bearer {token}"
    stdio_json = {"mcpServers": {args.name: {"command": command, "args": stdio_args}}}
    http_json = {"mcpServers": {args.name: {"url": url, "headers": {"Authorization": f"Bearer {token}"}}}}
    print(
        f"""# Claude Code, stdio (starts a broker when none is running):
claude mcp add {shlex.quote(args.name)} -- {shlex.join([command, *stdio_args])}

# Claude Code, Streamable HTTP (the broker must be running; its port may differ after a restart):
claude mcp add --transport http {shlex.quote(args.name)} {url} --header {shlex.quote(header)}

# Claude Desktop, Cursor and other clients with an mcpServers file, stdio:
{codec.dumps_pretty(stdio_json)}

# Cursor and other clients that take a URL, Streamable HTTP:
{codec.dumps_pretty(http_json)}

# The HTTP token names this client ({args.client}); it stays valid across broker restarts.
# Make one per client with --client NAME. Keep it secret: it opens the broker.""",
    )
    return 0
