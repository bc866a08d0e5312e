"""The ``browser-mcp`` command line's arguments: every subcommand and its options.

The options of the commands that live in :mod:`broker.install` are built by those modules, and
imported only for the command that runs, so a starting broker loads none of them.
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import paths
from ..core.config import DEFAULTS
from ..version import VERSION

__all__ = ["ENV_ALLOWED_EXTENSIONS", "build_parser", "command_in"]


ENV_ALLOWED_EXTENSIONS = "BROWSER_MCP_ALLOWED_EXTENSIONS"


def _add_broker_choice(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pid", type=int, help="the broker with this pid, when several are alive")
    parser.add_argument("--port", type=int, help="the broker on this port, when several are alive")
    parser.add_argument("--discovery-dir", type=Path, help="where discovery files are (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def _add_browser_and_broker_choice(parser: argparse.ArgumentParser) -> None:
    """The options of a command on the browser beyond its pages: which browser, then which broker."""
    parser.add_argument("--browser", help="which connected browser (b1, b2...)")
    _add_broker_choice(parser)


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
    _add_browser_and_broker_choice(windows)
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
    _add_browser_and_broker_choice(history)
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
    _add_browser_and_broker_choice(bookmarks)


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
        "--output-dir",
        type=Path,
        metavar="FOLDER",
        help="where the files tools write go (PDFs, traces, a `filename` given), a folder per client inside it"
        " (default: output/ in the broker's data folder)",
    )
    serve.add_argument(
        "--no-evaluate",
        action="store_true",
        help="do not offer browser_evaluate (JavaScript of the client's choosing in its tabs)",
    )
    serve.add_argument(
        "--no-scripts",
        action="store_true",
        help="do not offer the person's script library (browser_scripts, browser_run_script)",
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

    scripts = commands.add_parser("scripts", help="the person's script library, which browser_run_script runs")
    scripts_actions = scripts.add_subparsers(dest="scripts_command", required=True, metavar="ACTION")
    scripts_actions.add_parser("path", help="print its folder (created 0700 when missing)")
    scripts_list = scripts_actions.add_parser("list", help="its scripts and their descriptions, as browser_scripts")
    scripts_list.add_argument("--json", action="store_true", help="print JSON")

    mcp = commands.add_parser(
        "mcp", help="serve MCP over stdio for one AI client, through a live broker (started if none is alive)"
    )
    mcp.add_argument("--pid", type=int, help="the broker with this pid, when several are alive")
    mcp.add_argument("--port", type=int, help="the broker on this port; one is started there if none is alive")
    mcp.add_argument("--discovery-dir", type=Path, help="where discovery files are")
    mcp.add_argument("--caps", type=_caps, metavar="CAPS", help=_CAPS_HELP)

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
    config.add_argument("--caps", type=_caps, metavar="CAPS", help=_CAPS_HELP)
    if wanted("mcp-config"):
        from ..install.client_apps import APPS  # noqa: PLC0415 - kept beside its options

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


_CAPS_HELP = (
    "the groups of built-in tools to offer beside the default ones, as Playwright MCP's --caps:"
    " vision, pdf, devtools, storage, network, testing, or all (comma-separated)"
)


def _caps(text: str) -> str:
    """``--caps``, checked and written the one way the broker reads it."""
    from ..core import browser_tools  # noqa: PLC0415 - only for the commands that take it
    from ..core.errors import InvalidRequest  # noqa: PLC0415

    try:
        caps = browser_tools.capabilities(text)
    except InvalidRequest as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    return ",".join(group for group in browser_tools.GROUPS[1:] if group in caps)


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
            importlib.import_module(f"broker.{module}").add_arguments(command)


def command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (the top level takes no option with a value), if any."""
    return next((word for word in argv if not word.startswith("-")), None)
