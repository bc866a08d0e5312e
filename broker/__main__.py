"""The ``browser-mcp`` command line: ``serve`` runs a broker; the rest talk to live ones.

``status``, ``tabs``, ``call``, ``pair`` and ``stop`` find brokers through the discovery files
(port and token; :mod:`broker.relay.client` sends the token only to a server that proved it is that
broker), choose one with ``--pid`` / ``--port`` when several are alive, and print tables for a
person or JSON with ``--json``. This module only parses arguments and prints; the broker is
:mod:`broker.app` and talking to it is :mod:`broker.relay.client`.
"""

from __future__ import annotations

import argparse
import base64
import errno
import importlib
import logging
import os
import shlex
import sys
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import codec, loop, paths
from .core.config import DEFAULTS, Config
from .core.link_auth import pairing_text
from .core.security import PROJECT_EXTENSION_ID, client_token, refuse_extension_ids
from .discovery import BrokerRecord, live_brokers, load_or_create_token
from .relay.client import BrokerClient, ClientError, select_broker
from .version import MIN_EXTENSION_VERSION, VERSION

__all__ = ["main"]

ENV_ALLOWED_EXTENSIONS = "BROWSER_MCP_ALLOWED_EXTENSIONS"


def _add_broker_choice(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pid", type=int, help="the broker with this pid, when several are alive")
    parser.add_argument("--port", type=int, help="the broker on this port, when several are alive")
    parser.add_argument("--discovery-dir", type=Path, help="where discovery files are (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def _tab_command(commands: Any, name: str, about: str, runs: tuple[str, str] | None = None) -> Any:
    """A subcommand on one tab; ``runs`` names what it runs (a tool), which takes JSON arguments."""
    parser = commands.add_parser(name, help=about)
    parser.add_argument("tab", help="tab id, or <browser>:<tab id> such as b1:12")
    if runs is not None:
        parser.add_argument(runs[0], help=runs[1])
        parser.add_argument("args", nargs="?", default="{}", help="the tool's arguments as a JSON object")
        parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS")
    _add_broker_choice(parser)
    return parser


def _add_tab_commands(commands: Any) -> None:
    """call, claim, release, snapshot, screenshot and act: a tab's tools from a shell."""
    _tab_command(
        commands, "call", "call a page tool in a claimed tab, print its result", ("tool", "the page tool's name")
    )
    _tab_command(commands, "claim", "make a tab the command line's own (call, snapshot and act need that)")
    _tab_command(commands, "release", "give a claimed tab back to the person")
    snapshot = _tab_command(commands, "snapshot", "print a claimed tab's page as an accessibility snapshot")
    snapshot.add_argument("--target", help="only this element's subtree (a ref from an earlier snapshot)")
    screenshot = _tab_command(commands, "screenshot", "save a picture of a claimed tab's page")
    screenshot.add_argument("-o", "--output", type=Path, required=True, help="the file to write (.png or .jpg)")
    screenshot.add_argument("--full-page", action="store_true", help="the whole page, not only what is in view")
    _tab_command(
        commands,
        "act",
        "run a built-in browser tool (click, type, navigate ...) in a claimed tab",
        ("action", "the tool's name without browser_: click, type, navigate, press_key ..."),
    )


def _add_browser_wide_commands(commands: Any) -> None:
    """windows, history and bookmarks: the browser beyond its pages, from a shell."""
    windows = commands.add_parser(
        "windows", help="list the browser's windows, open one of the command line's own, focus or close one"
    )
    windows.add_argument("action", nargs="?", choices=["list", "open", "focus", "close"], default="list")
    windows.add_argument("target", nargs="?", help="open: the URL of its tab; focus, close: the window id")
    windows.add_argument("--browser", help="which connected browser (b1, b2...)")
    _add_broker_choice(windows)
    history = commands.add_parser(
        "history",
        help="search the pages the person visited, or delete some (--delete URL, or --delete --since --until)",
    )
    history.add_argument("query", nargs="?", default="", help="words of a title or address (default: the latest)")
    history.add_argument("--max", type=int, default=None, metavar="N", help="at most N results (default 20)")
    history.add_argument("--since", metavar="WHEN", help="ISO 8601 time (default: all of the history)")
    history.add_argument(
        "--delete",
        nargs="?",
        const="",
        metavar="URL",
        help="delete every visit of URL, or without it every visit from --since to --until (the person approves)",
    )
    history.add_argument("--until", metavar="WHEN", help="with --delete: the range's end, ISO 8601")
    history.add_argument("--browser", help="which connected browser (b1, b2...)")
    _add_broker_choice(history)
    bookmarks = commands.add_parser(
        "bookmarks",
        help="search the person's bookmarks, add one (--add URL), list them (--tree), delete one (--delete ID)",
    )
    bookmarks.add_argument("query", nargs="?", default="", help="words of a title or address (default: the latest)")
    bookmarks.add_argument("--add", metavar="URL", help="bookmark this URL instead of searching")
    bookmarks.add_argument("--title", help="the new bookmark's title (default: its URL)")
    bookmarks.add_argument(
        "--tree", nargs="?", const="", metavar="FOLDER", help="list bookmarks and folders (below the folder FOLDER)"
    )
    bookmarks.add_argument("--max", type=int, default=None, metavar="N", help="with --tree: at most N (default 200)")
    bookmarks.add_argument(
        "--delete", metavar="ID", help="delete the bookmark or empty folder ID (the person approves)"
    )
    bookmarks.add_argument("--recursive", action="store_true", help="with --delete: a folder with all it holds")
    bookmarks.add_argument("--browser", help="which connected browser (b1, b2...)")
    _add_broker_choice(bookmarks)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given the ``command`` about to run, the options of the others that
    live in their own modules are left out, so that a broker's start does not import those modules."""

    def wanted(name: str) -> bool:
        return command is None or command == name

    parser = argparse.ArgumentParser(
        prog="browser-mcp", description="Share one real browser, its tabs and page tools, with many AI clients."
    )
    parser.add_argument("--version", action="version", version=f"browser-mcp {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run a broker in the foreground")
    serve.add_argument(
        "--port", type=int, default=None, help="port on 127.0.0.1 (0 = any free; default: first free in 8765-8785)"
    )
    serve.add_argument(
        "--discovery-dir",
        type=Path,
        default=None,
        help=f"where to write the discovery file (env {paths.ENV_DISCOVERY_DIR};"
        f" default {paths.DEFAULT_DISCOVERY_DIR})",
    )
    serve.add_argument(
        "--allow-extension",
        action="append",
        default=[],
        metavar="ID",
        help=f"an extension id that may open the extension link (repeatable; env {ENV_ALLOWED_EXTENSIONS})",
    )
    serve.add_argument(
        "--require-extension-token",
        action="store_true",
        help="hear an extension link only once the extension has proven it holds this broker's link key (from the"
        " native host or pairing): then another local user cannot pose as the extension",
    )
    for flag, metavar, help_text in (
        ("--call-timeout", "SECONDS", "default: {}"),
        (
            "--max-sessions",
            "N",
            "live sessions at once, REST and MCP: the broker's token and all client tokens"
            " together have as many each (default: {})",
        ),
        ("--client-max-sessions", "N", "live sessions each client token may hold (default: {})"),
        ("--rate-limit", "N", "calls a second each session may make, in bursts of 2N (default: {}; 0 = off)"),
        (
            "--client-rate-limit",
            "N",
            "calls a second each client token may make across its sessions, in bursts of 2N (default: {}; 0 = off)",
        ),
        ("--ping-interval", "SECONDS", "a quiet extension link is pinged after this long (default: {})"),
        ("--silence-timeout", "SECONDS", "a link silent this long is closed, its calls failed (default: {})"),
        ("--max-links", "N", "extension links open at once; one more is refused (default: {})"),
        ("--max-tabs", "N", "tabs of all browsers together; more are ignored (default: {})"),
        (
            "--max-result-chars",
            "N",
            "characters of a page tool's result a client gets; past them it is cut, with a note (default: {})",
        ),
    ):
        default = getattr(DEFAULTS, flag[2:].replace("-", "_"))
        serve.add_argument(
            flag, type=type(default), default=default, metavar=metavar, help=help_text.format(f"{default:g}")
        )
    serve.add_argument(
        "--upload-dir",
        action="append",
        default=[],
        type=Path,
        metavar="FOLDER",
        help="a folder whose files browser_file_upload may send to pages, for every caller: REST and the CLI"
        " upload from these alone (repeatable; MCP clients also from their roots)",
    )
    serve.add_argument(
        "--upload-max-mb",
        type=float,
        default=DEFAULTS.upload_max_bytes / 1024 / 1024,
        metavar="MB",
        help="the most browser_file_upload sends, each file and all of one call together; files are read into"
        " memory when checked (default: %(default)g)",
    )
    serve.add_argument(
        "--no-evaluate",
        action="store_true",
        help="do not offer browser_evaluate (JavaScript of the client's choosing in its tabs)",
    )
    serve.add_argument(
        "--log-level",
        default=os.environ.get("LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
        help="debug logs every frame (env LOG_LEVEL; default info)",
    )

    status = commands.add_parser("status", help="every live broker: port, pid, uptime, browsers, sessions, tabs")
    _add_broker_choice(status)

    tabs = commands.add_parser("tabs", help="the tabs of a broker's browsers, with owners and tools")
    _add_broker_choice(tabs)

    _add_tab_commands(commands)
    _add_browser_wide_commands(commands)

    pair = commands.add_parser(
        "pair", help="show a code to type into the browser extension's popup, so it trusts this broker"
    )
    _add_broker_choice(pair)

    stop = commands.add_parser("stop", help="stop a broker")
    _add_broker_choice(stop)

    mcp = commands.add_parser(
        "mcp", help="serve MCP over stdio for one AI client, through a live broker (started if none is alive)"
    )
    mcp.add_argument("--pid", type=int, help="the broker with this pid, when several are alive")
    mcp.add_argument("--port", type=int, help="the broker on this port; one is started there if none is alive")
    mcp.add_argument("--discovery-dir", type=Path, help="where discovery files are")

    config = commands.add_parser("mcp-config", help="print ready-to-paste MCP client configuration")
    config.add_argument("--name", default="browser", help="the server's name in the client (default: browser)")
    config.add_argument(
        "--client",
        default="ai-client",
        metavar="LABEL",
        help="names the client in its HTTP token, so stateless (2026-07-28) clients are told apart"
        " (letters, digits, dashes; default: ai-client)",
    )
    config.add_argument("--port", type=int, help="port for the HTTP form (default: the live broker's, else 8765)")
    config.add_argument("--discovery-dir", type=Path, help="where discovery files are")
    if wanted("mcp-config"):
        from .install.client_apps import APPS  # noqa: PLC0415 - kept beside its options

        config.add_argument(
            "--client-app",
            choices=list(APPS),
            help="print the stdio configuration of this application alone (its file's format)",
        )
    config.add_argument(
        "--write",
        action="store_true",
        help="with --client-app: merge it into the application's configuration file, keeping all else",
    )

    _add_module_commands(commands, wanted)
    return parser


# The subcommands whose options live in their own modules: (command, module, help). Each module's
# add_arguments builds its command's options, and is imported only for the command that runs, so
# a starting broker loads none of them.
_MODULE_COMMANDS = (
    ("native-host", "install.native_host", "the native messaging host the browser extension starts"),
    ("install-native-host", "install.native_install", "register the native messaging host with the browsers"),
    ("doctor", "install.doctor", "check the broker, browser, native host, ports and MCP clients; say fixes"),
    ("service", "install.service", "run the broker as a login service (systemd user unit, launchd agent)"),
    ("extension", "install.extension_package", "the browser extension this install carries: its folder, a store zip"),
)


def _add_module_commands(commands: Any, wanted: Callable[[str], bool]) -> None:
    """The subcommands whose options live in their own modules, those options only where ``wanted``."""
    for name, module, help_text in _MODULE_COMMANDS:
        command = commands.add_parser(name, help=help_text)
        if wanted(name):
            importlib.import_module(f".{module}", __package__).add_arguments(command)


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (the top level takes no option with a value), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    serve_options = None
    command = _command_in(argv)
    if command == "service":
        from .install.service import split_install_options  # noqa: PLC0415

        argv, serve_options = split_install_options(argv)
    args = build_parser(command).parse_args(argv)
    try:
        if args.command == "serve":
            return _serve(args)
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

            return service.main(args, serve_options or [], _check_serve_options)
        if args.command == "extension":
            from .install import extension_package  # noqa: PLC0415

            return extension_package.main(args)
        return _CLIENT_COMMANDS[args.command](args)
    except ClientError as exc:
        print(f"browser-mcp {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


# serve


def _allowed_extensions(flags: list[str]) -> frozenset[str]:
    from_env = [i.strip() for i in os.environ.get(ENV_ALLOWED_EXTENSIONS, "").split(",") if i.strip()]
    ids = {PROJECT_EXTENSION_ID, *flags, *from_env}
    refused = refuse_extension_ids(sorted(ids))
    if refused:
        raise ClientError(refused)
    return frozenset(ids)


def _check_serve_options(options: list[str]) -> None:
    """Exits as ``serve`` would (argparse's message, code 2) when it would refuse ``options``."""
    try:
        build_parser("serve").parse_args(["serve", *options])
    except SystemExit:
        print(
            "browser-mcp service install: the options after install are serve's (see browser-mcp serve --help)",
            file=sys.stderr,
        )
        raise


def _upload_dirs(flags: list[Path]) -> tuple[str, ...]:
    missing = [str(folder) for folder in flags if not folder.is_dir()]
    if missing:
        raise ClientError(f"--upload-dir must name folders; not one: {', '.join(missing)}")
    return tuple(str(folder.resolve()) for folder in flags)


def _broker_token() -> str:
    """The broker's token, made and written on first use.

    Raises:
        ClientError: the token file cannot be read or written (a full disk, a read-only folder).
    """
    path = paths.token_file()
    try:
        return load_or_create_token(path)
    except OSError as exc:
        raise ClientError(
            f"cannot write the token file {path}: {exc.strerror or exc} ({paths.ENV_TOKEN_FILE} names another place)"
        ) from None


def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    if args.call_timeout <= 0:
        raise ClientError("--call-timeout must be positive")
    if args.max_sessions < 1:
        raise ClientError("--max-sessions must be at least 1")
    if args.client_max_sessions < 1:
        raise ClientError("--client-max-sessions must be at least 1")
    for flag, rate in (("--rate-limit", args.rate_limit), ("--client-rate-limit", args.client_rate_limit)):
        if rate < 0:
            raise ClientError(f"{flag} must be 0 (off) or more")
    if not 0 < args.ping_interval < args.silence_timeout:
        raise ClientError("--ping-interval must be positive and shorter than --silence-timeout")
    if args.max_links < 1 or args.max_tabs < 1:
        raise ClientError("--max-links and --max-tabs must be at least 1")
    if args.upload_max_mb <= 0:
        raise ClientError("--upload-max-mb must be positive")
    if args.max_result_chars < 1:
        raise ClientError("--max-result-chars must be at least 1")
    from .daemon.runtime import Runtime, Settings  # noqa: PLC0415 - aiohttp loads only for the command that serves

    first_run = not paths.token_file().exists()
    directory, warning = paths.writable_discovery_dir(args.discovery_dir)
    settings = Settings(
        token=_broker_token(),
        allowed_extensions=_allowed_extensions(args.allow_extension),
        require_extension_token=args.require_extension_token,
        limits=Config(
            server_version=VERSION,
            min_extension_version=MIN_EXTENSION_VERSION,
            call_timeout=args.call_timeout,
            allow_evaluate=not args.no_evaluate,
            upload_dirs=_upload_dirs(args.upload_dir),
            upload_max_bytes=round(args.upload_max_mb * 1024 * 1024),
            upload_protected=(str(directory),),
            max_sessions=args.max_sessions,
            client_max_sessions=args.client_max_sessions,
            rate_limit=args.rate_limit,
            rate_burst=max(1, round(2 * args.rate_limit)),
            client_rate_limit=args.client_rate_limit,
            client_rate_burst=max(1, round(2 * args.client_rate_limit)),
            ping_interval=args.ping_interval,
            silence_timeout=args.silence_timeout,
            max_links=args.max_links,
            max_tabs=args.max_tabs,
            max_result_chars=args.max_result_chars,
        ),
    )
    if warning:
        logging.getLogger("broker").warning(warning)

    def announce(line: str) -> None:
        print(line, flush=True)

    from .app import serve  # noqa: PLC0415 - aiohttp loads only for the command that serves

    try:
        loop.run(serve(Runtime(settings), args.port, directory, announce, pair=first_run))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ClientError(
                f"cannot start: port {args.port} on 127.0.0.1 is already in use; choose another --port or omit it"
            ) from None
        raise ClientError(f"cannot start: {exc}") from None
    return 0


# commands that talk to a live broker


def _client(args: argparse.Namespace) -> BrokerClient:
    return BrokerClient(select_broker(live_brokers(paths.discovery_dirs(args.discovery_dir)), args.pid, args.port))


def _print_json(value: Any) -> None:
    print(codec.dumps_pretty(value))


def _print_listing(
    as_json: bool,
    answer: dict[str, Any],
    key: str,
    headers: list[str],
    row: Callable[[dict[str, Any]], list[str]],
    empty: str,
) -> None:
    """``answer`` as JSON, or its ``key`` list as a table of ``row``s (``empty`` when there are none)."""
    if as_json:
        _print_json(answer)
        return
    items = answer[key]
    print(_table(headers, [row(item) for item in items]) if items else empty)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def _uptime(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _status(args: argparse.Namespace) -> int:
    records: list[BrokerRecord] = live_brokers(paths.discovery_dirs(args.discovery_dir))
    if args.pid is not None or args.port is not None:
        records = [select_broker(records, args.pid, args.port)]
    statuses = []
    for record in records:
        try:
            status = BrokerClient(record).get("/status")
        except ClientError as exc:
            status = {"pid": record.pid, "port": record.port, "error": str(exc)}
        status["discoveryFile"] = str(record.path)
        statuses.append(status)
    _print_listing(
        args.json,
        {"brokers": statuses},
        "brokers",
        ["PORT", "PID", "UPTIME", "BROWSERS", "SESSIONS", "TABS", "VERSION"],
        _status_row,
        "no broker is running (start one with: browser-mcp serve)",
    )
    outdated = [
        f"port {status['port']}, {browser['browser']}: {browser['extensionOutdated']}"
        for status in statuses
        for browser in status.get("browsers", [])
        if browser["connected"] and browser.get("extensionOutdated")
    ]
    if outdated and not args.json:
        print("", *outdated, sep="\n")
    return 0 if statuses or args.json else 1


def _status_row(status: dict[str, Any]) -> list[str]:
    if "error" in status:
        return [str(status["port"]), str(status["pid"]), "?", "?", "?", "?", status["error"]]
    browsers = [b for b in status["browsers"] if b["connected"]]
    return [
        str(status["port"]),
        str(status["pid"]),
        _uptime(status["uptimeSeconds"]),
        ", ".join(_browser_cell(b) for b in browsers) or "none",
        ", ".join(x["name"] for x in status["sessions"]) or "none",
        str(status["tabs"]),
        status["version"],
    ]


def _browser_cell(browser: dict[str, Any]) -> str:
    """``b1 Chrome 130.0 (extension 0.1.0)``; ``outdated`` after the extension's when it is."""
    extension = browser.get("extensionVersion") or "?"
    outdated = ", outdated" if browser.get("extensionOutdated") else ""
    who = f"{browser['browser']} {browser['name']} {browser['version']}".strip()
    return f"{who} (extension {extension}{outdated})"


def _tabs(args: argparse.Namespace) -> int:
    answer = _client(args).get("/tabs")
    several = len({t["browser"] for t in answer["tabs"]}) > 1

    def row(tab: dict[str, Any]) -> list[str]:
        return [
            tab["ref"] if several else str(tab["id"]),
            _place(tab),
            (tab["owner"] or {}).get("name") or "-",
            "?" if tab["tools"] is None else ", ".join(tool["name"] for tool in tab["tools"]) or "-",
            _clip(tab["title"], 40),
            _clip(tab["url"], 60),
        ]

    _print_listing(
        args.json,
        {"tabs": answer["tabs"]},
        "tabs",
        ["TAB", "WINDOW", "OWNER", "TOOLS", "TITLE", "URL"],
        row,
        "no tabs (is the browser extension connected? see browser-mcp status)",
    )
    return 0


def _place(tab: dict[str, Any]) -> str:
    """Its window and place there, 7#0 (leftmost), pinned or not; - when the extension does not say."""
    if tab.get("windowId") is None:
        return "-"
    index = "" if tab.get("index") is None else f"#{tab['index']}"
    return f"{tab['windowId']}{index}{' pinned' if tab.get('pinned') else ''}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _json_args(raw: str, example: str) -> dict[str, Any]:
    """ARGS of call and act. Raises: ClientError, unless it is a JSON object."""
    try:
        return codec.loads_object(raw, "ARGS")
    except ValueError as exc:
        raise ClientError(f"{exc}; for example '{example}'") from None


def _call(args: argparse.Namespace) -> int:
    tool_args = _json_args(args.args, '{"query": "shoes"}')
    query = f"?timeout={args.timeout}" if args.timeout else ""
    answer = _client(args).post(f"/tabs/{args.tab}/tools/{args.tool}{query}", tool_args)
    if args.json:
        _print_json(answer)
    else:
        result = answer["result"]
        print(result if isinstance(result, str) else codec.dumps_pretty(result))
    return 0


def _change_tab(args: argparse.Namespace) -> int:
    tab = _client(args).post(f"/tabs/{args.tab}/{args.command}", {})["tab"]
    if args.json:
        _print_json({"tab": tab})
    else:
        whose = "yours (the command line's)" if args.command == "claim" else "the person's again"
        print(f"tab {tab['ref']} ({tab['title'] or tab['url']}) is {whose}")
    return 0


def _act(args: argparse.Namespace, action: str, action_args: dict[str, Any], timeout: float | None = None) -> Any:
    query = f"?timeout={timeout}" if timeout else ""
    return _client(args).post(f"/tabs/{args.tab}/actions/{action}{query}", action_args)["result"]


def _show_result(args: argparse.Namespace, result: Any) -> int:
    """A built-in tool's MCP result as a person reads it (its text, a line per image), or JSON."""
    if args.json:
        _print_json({"result": result})
        return 0
    for part in result.get("content", []) if isinstance(result, dict) else []:
        if part.get("type") == "text":
            print(part.get("text", ""))
        else:
            size = len(part.get("data", "")) * 3 // 4
            print(
                f"[{part.get('type')} {part.get('mimeType', '')}, about {size} bytes: browser-mcp screenshot saves one]"
            )
    if not isinstance(result, dict) or "content" not in result:
        print(codec.dumps_pretty(result))
    return 0


def _snapshot(args: argparse.Namespace) -> int:
    return _show_result(args, _act(args, "snapshot", {} if args.target is None else {"target": args.target}))


def _screenshot(args: argparse.Namespace) -> int:
    kind = "jpeg" if args.output.suffix.lower() in (".jpg", ".jpeg") else "png"
    result = _act(args, "take_screenshot", {"type": kind, "fullPage": args.full_page})
    image = next((part for part in result.get("content", []) if part.get("type") == "image"), None)
    if image is None:
        raise ClientError(f"the browser sent no image: {codec.dumps_text(result)[:500]}")
    data = base64.b64decode(image["data"])
    args.output.write_bytes(data)
    if args.json:
        _print_json({"saved": str(args.output), "bytes": len(data), "mimeType": image.get("mimeType")})
    else:
        print(f"saved {args.output} ({len(data)} bytes)")
    return 0


def _act_command(args: argparse.Namespace) -> int:
    action_args = _json_args(args.args, '{"target": "e7", "element": "Buy button"}')
    action = args.action.removeprefix("browser_")
    paths = action_args.get("paths")
    if action == "file_upload" and isinstance(paths, list):
        # A person names files from where they are; the broker takes absolute paths alone.
        action_args["paths"] = [os.path.abspath(path) if isinstance(path, str) and path else path for path in paths]
    return _show_result(args, _act(args, action, action_args, args.timeout))


def _query(**values: Any) -> str:
    given = {name: str(value) for name, value in values.items() if value is not None}
    return f"?{urllib.parse.urlencode(given)}" if given else ""


def _windows(args: argparse.Namespace) -> int:
    client = _client(args)
    on = _query(browser=args.browser)
    if args.action == "list":
        answer = client.get(f"/windows{on}")
    elif args.action == "open":
        answer = client.post("/windows", {"url": args.target, "browser": args.browser})
    elif args.target is None:
        raise ClientError(f"windows {args.action} needs the window's id (browser-mcp windows lists them)")
    elif args.action == "focus":
        answer = client.post(f"/windows/{urllib.parse.quote(args.target)}/focus{on}", {})
    else:
        answer = client.delete(f"/windows/{urllib.parse.quote(args.target)}{on}")
    _print_listing(
        args.json or args.action != "list",
        answer,
        "windows",
        ["WINDOW", "YOURS", "FOCUSED", "STATE", "TABS"],
        lambda w: [
            f"{w['browser']}:{w['id']}",
            "yes" if w["yours"] else "-",
            "yes" if w["focused"] else "-",
            w["state"] or "?",
            ", ".join(map(str, w["tabs"])),
        ],
        "no windows",
    )
    return 0


def _records(args: argparse.Namespace) -> int:
    """history and bookmarks: what the person visited or kept, a line each."""
    client = _client(args)
    if args.command == "history" and args.delete is not None:
        since, until = (None, None) if args.delete else (args.since, args.until)
        answer = client.delete(
            f"/history{_query(url=args.delete or None, since=since, until=until, browser=args.browser)}"
        )
    elif args.command == "history":
        answer = client.get(f"/history{_query(q=args.query, max=args.max, since=args.since, browser=args.browser)}")
    elif args.add is not None:
        answer = client.post("/bookmarks", {"url": args.add, "title": args.title, "browser": args.browser})
    elif args.delete is not None:
        recursive = "true" if args.recursive else None
        answer = client.delete(
            f"/bookmarks/{urllib.parse.quote(args.delete, safe='')}{_query(recursive=recursive, browser=args.browser)}"
        )
    elif args.tree is not None:
        answer = client.get(f"/bookmarks/tree{_query(folder=args.tree or None, max=args.max, browser=args.browser)}")
        _print_listing(
            args.json,
            answer,
            "results",
            ["ID", "IN", "TITLE", "URL"],
            lambda r: [
                str(r.get("id")),
                str(r.get("parentId") or "-"),
                _clip(r.get("title") or "-", 40),
                f"(folder of {r.get('children', '?')})" if r.get("folder") else _clip(r.get("url") or "", 70),
            ],
            "no bookmarks",
        )
        if not args.json and answer.get("truncated"):
            print(
                f"(the first {len(answer['results'])} of {answer.get('total', '?')}: --max N or --tree FOLDER for more)"
            )
        return 0
    else:
        answer = client.get(f"/bookmarks{_query(q=args.query, browser=args.browser)}")
    _print_listing(
        args.json or "results" not in answer,
        answer,
        "results",
        ["TIME", "TITLE", "URL"],
        lambda r: [r.get("time") or "?", _clip(r.get("title") or "", 40), _clip(r.get("url") or "", 70)],
        "nothing found",
    )
    return 0


def _pair(args: argparse.Namespace) -> int:
    client = _client(args)
    issued = client.post("/pairing", {})
    if args.json:
        _print_json(issued)
        return 0
    print(pairing_text(client.record.port, issued["code"], issued["expiresIn"]))
    return 0


def _stop(args: argparse.Namespace) -> int:
    client = _client(args)
    client.post("/shutdown", {})
    deadline = time.monotonic() + 10
    while client.record.path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if client.record.path.exists():
        raise ClientError(f"broker {client.record.pid} did not stop within 10 s")
    if args.json:
        _print_json({"stopped": client.record.pid, "port": client.record.port})
    else:
        print(f"stopped the broker on port {client.record.port} (pid {client.record.pid})")
    return 0


def _mcp_config(args: argparse.Namespace) -> int:
    from .install import client_apps  # noqa: PLC0415

    if args.client_app is not None:
        return client_apps.print_config(args.client_app, args.name, args.discovery_dir, args.write)
    if args.write:
        raise ClientError("--write needs --client-app: which application's file to write")
    try:
        token = client_token(_broker_token(), args.client)
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


_CLIENT_COMMANDS = {
    "status": _status,
    "tabs": _tabs,
    "call": _call,
    "claim": _change_tab,
    "release": _change_tab,
    "snapshot": _snapshot,
    "screenshot": _screenshot,
    "act": _act_command,
    "windows": _windows,
    "history": _records,
    "bookmarks": _records,
    "pair": _pair,
    "stop": _stop,
    "mcp-config": _mcp_config,
}


if __name__ == "__main__":
    sys.exit(main())
