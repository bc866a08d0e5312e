"""The ``browser-mcp`` command line: ``serve`` runs a broker; the rest talk to live ones.

``status``, ``tabs``, ``call``, ``pair`` and ``stop`` find brokers through the discovery files
(port and token; :mod:`broker.relay.client` sends the token only to a server that proved it is that
broker), choose one with ``--pid`` / ``--port`` when several are alive, and print tables for a
person or JSON with ``--json``. This module only dispatches: the commands are in
:mod:`broker.cli` (and :mod:`broker.install`), the broker is :mod:`broker.app` and talking to it is
:mod:`broker.relay.client`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import serve
from .cli.manage import mcp_config, pair, stop
from .cli.parser import build_parser, command_in
from .cli.records import records, windows
from .cli.serve import check_serve_options
from .cli.tabs import act_command, call, change_tab, screenshot, snapshot, status, tabs
from .relay.client import ClientError

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
            return serve.run(args)
        if args.command == "mcp":
            # Imported here: it owns stdout from its first line, and AI clients time its start.
            from .relay.stdio_relay import main as relay  # noqa: PLC0415

            return relay(args.discovery_dir, args.pid, args.port)
        if args.command in ("native-host", "install-native-host"):
            from .install import native_host, native_install  # noqa: PLC0415

            return (native_host.main if args.command == "native-host" else native_install.main)(args)
        if args.command == "doctor":
            from .install import doctor  # noqa: PLC0415

            return doctor.main(args)
        if args.command == "service":
            from .install import service  # noqa: PLC0415

            return service.main(args, serve_options or [], check_serve_options)
        if args.command == "extension":
            from .install import extension_package  # noqa: PLC0415

            return extension_package.main(args)
        return _CLIENT_COMMANDS[args.command](args)
    except ClientError as exc:
        print(f"browser-mcp {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


_CLIENT_COMMANDS = {
    "status": status,
    "tabs": tabs,
    "call": call,
    "claim": change_tab,
    "release": change_tab,
    "snapshot": snapshot,
    "screenshot": screenshot,
    "act": act_command,
    "windows": windows,
    "history": records,
    "bookmarks": records,
    "pair": pair,
    "stop": stop,
    "mcp-config": mcp_config,
}


if __name__ == "__main__":
    sys.exit(main())
