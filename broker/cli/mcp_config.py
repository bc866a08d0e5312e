"""``browser-mcp mcp-config``: the configuration that connects an AI client, printed ready to paste
or merged into one application's file. It reads the discovery files for a live broker's port and
never talks to one.
"""

from __future__ import annotations

import argparse
import shlex

from .. import codec, paths
from ..core.security import client_token
from ..discovery import live_brokers
from ..relay.errors import ClientError
from .serve import broker_token

__all__ = ["mcp_config"]


def mcp_config(args: argparse.Namespace) -> int:
    from ..install import client_apps  # noqa: PLC0415

    if args.client_app is not None:
        return client_apps.print_config(args.client_app, args.name, args.discovery_dir, args.write, args.caps)
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
    command, *stdio_args = client_apps.stdio_command(args.discovery_dir, args.caps)
    url = f"http://127.0.0.1:{port}/mcp" + (f"?caps={args.caps}" if args.caps else "")
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
