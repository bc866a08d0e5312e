"""The ``browser-mcp`` command line: ``serve`` runs a broker; the rest talk to live ones.

``status``, ``tabs``, ``call``, ``pair`` and ``stop`` find brokers through the discovery files
(port and token; :mod:`broker.relay.client` sends the token only to a server that proved it is that
broker), choose one with ``--pid`` / ``--port`` when several are alive, and print tables for a
person or JSON with ``--json``. This module only dispatches: the commands are in
:mod:`broker.cli` (and :mod:`broker.install`), the broker is :mod:`broker.app` and talking to it is
:mod:`broker.relay.client`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .cli.parser import build_parser, command_in
from .relay.errors import ClientError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    serve_options = None
    command = command_in(argv)
    if command == "service":
        from .install.service import split_install_options  # noqa: PLC0415

        argv, serve_options = split_install_options(argv)
    args = build_parser(command).parse_args(argv)
    try:
        if args.command == "serve":
            from .cli import serve  # noqa: PLC0415

            return serve.run(args)
        if args.command == "mcp":
            # Imported here: it owns stdout from its first line, and AI clients time its start.
            from .relay.stdio_relay import main as relay  # noqa: PLC0415

            return relay(args.discovery_dir, args.pid, args.port, args.caps)
        if args.command in ("native-host", "install-native-host"):
            from .install import native_host, native_install  # noqa: PLC0415

            return (native_host.main if args.command == "native-host" else native_install.main)(args)
        if args.command == "doctor":
            from .install import doctor  # noqa: PLC0415

            return doctor.main(args)
        if args.command == "service":
            from .cli.serve import check_serve_options  # noqa: PLC0415
            from .install import service  # noqa: PLC0415

            return service.main(args, serve_options or [], check_serve_options)
        if args.command == "extension":
            from .install import extension_package  # noqa: PLC0415

            return extension_package.main(args)
        return _client_command(args.command)(args)
    except ClientError as exc:
        print(f"browser-mcp {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


# Each command's module is imported only when it runs: a command that writes a file or asks one
# broker a question starts in a fraction of the time it takes to load them all.
_CLIENT_COMMANDS = {
    "status": "tabs:status",
    "tabs": "tabs:tabs",
    "call": "tabs:call",
    "claim": "tabs:change_tab",
    "release": "tabs:change_tab",
    "snapshot": "tabs:snapshot",
    "screenshot": "tabs:screenshot",
    "act": "tabs:act_command",
    "windows": "records:windows",
    "history": "records:records",
    "bookmarks": "records:records",
    "pair": "manage:pair",
    "stop": "manage:stop",
    "scripts": "scripts:scripts",
    "mcp-config": "mcp_config:mcp_config",
}


def _client_command(command: str) -> Callable[[Any], int]:
    module, function = _CLIENT_COMMANDS[command].split(":")
    found: Callable[[Any], int] = getattr(importlib.import_module(f".cli.{module}", __package__), function)
    return found


if __name__ == "__main__":
    sys.exit(main())
