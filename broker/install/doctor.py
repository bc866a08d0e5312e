"""``browser-mcp doctor``: why "the agent sees no tabs", in one command.

Checks, in this order, and prints each finding with its fix:

1. a broker running (pid, port, version), found as every command finds one and proven by it;
   with each, its limit of open files and the caps on connections sized from it (with none
   running, what a broker started here would have): a limit below what the caps want is a note;
2. the token file: this user's, mode 0600 (a broker replaces a token others may read);
3. the discovery folder: this user's, no one else may write it (or read it);
4. a browser connected to each broker, with its extension's version;
5. the native messaging host: registered for which browsers, and whether each manifest's launcher
   runs this installation (:mod:`broker.install.native_install`);
6. ports 8765-8785, where the extension looks for brokers: free, a broker of ours, or another
   process (named from ``/proc`` on Linux, ``lsof`` elsewhere, when the system says);
7. MCP client configurations (:mod:`broker.install.client_apps`): which applications have one that runs
   ``browser-mcp mcp``, and whether it is this installation's.

A finding is ``ok``, a ``note`` (worth knowing, works as it is) or a ``PROBLEM``; the exit code is
1 when there is a problem, else 0.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from .. import codec, paths
from ..core.config import DEFAULTS
from ..core.errors import Unauthorized
from ..core.limits import ConnectionCaps, connection_caps, descriptors_wanted, raised_file_limit
from ..core.security import FIREFOX_EXTENSION_ID, PROJECT_EXTENSION_ID, check_bearer
from ..files import is_own_file
from ..version import VERSION
from . import client_apps, native_install
from .doctor_findings import ANSWER_TIMEOUT, Finding, Level, LiveBroker, find_brokers, user_name
from .doctor_ports import PORTS, port_findings

__all__ = ["PORTS", "Finding", "add_arguments", "checks", "main"]

_LABELS: dict[Level, str] = {"ok": "ok", "note": "note", "problem": "PROBLEM"}


# 1. brokers


def _broker_findings(brokers: list[LiveBroker]) -> Iterator[Finding]:
    if not brokers:
        yield Finding(
            "broker",
            "problem",
            "no broker is running",
            "browser-mcp serve (or browser-mcp service install, to keep one running)",
        )
    for broker in brokers:
        where = f"pid {broker.record.pid}, port {broker.record.port}"
        if broker.status is None:
            yield Finding(
                "broker",
                "problem",
                f"{where} ({broker.record.path}) does not answer: {broker.error}",
                f"if pid {broker.record.pid} is a hung broker, end it (kill {broker.record.pid}) and start another"
                f" (browser-mcp serve); if it is another program, delete {broker.record.path}",
            )
            continue
        version = broker.status.get("version")
        yield Finding("broker", "ok", f"running: {where}, version {version} ({broker.record.path})")
        if version != VERSION:
            yield Finding(
                "broker",
                "note",
                f"the broker on port {broker.record.port} is version {version}; this install is {VERSION}",
                f"browser-mcp stop --pid {broker.record.pid}, then start it again from this install",
            )


def _open_file_findings(brokers: list[LiveBroker]) -> Iterator[Finding]:
    wanted = descriptors_wanted(DEFAULTS)
    raise_it = (
        f"raise the hard limit of open files to {wanted} or more: LimitNOFILE={wanted} in the broker's systemd"
        f" unit, or ulimit -Hn {wanted} (as root) where it starts; the broker raises its own soft limit"
    )
    answering = [b for b in brokers if b.status is not None]
    for broker in answering:
        assert broker.status is not None
        limits = broker.status.get("connectionLimits")
        if not isinstance(limits, dict):
            continue  # a broker of a version that does not say
        caps = ConnectionCaps(
            limits["fileLimit"],
            limits["withoutToken"],
            limits["ownerToken"],
            limits["clientTokens"],
            limits["eachClientToken"],
        )
        where = f"the broker on port {broker.record.port}"
        if caps.descriptors < wanted:
            yield Finding("open files", "note", f"{where}: {_caps_text(caps)}, below the {wanted} wanted", raise_it)
        else:
            yield Finding("open files", "ok", f"{where}: {_caps_text(caps)}")
    if answering:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    would = raised_file_limit(soft, hard, wanted, resource.RLIM_INFINITY)
    if would == resource.RLIM_INFINITY:
        would = wanted
    text = f"a broker started here: {_caps_text(connection_caps(DEFAULTS, would))}"
    if would < wanted:
        yield Finding("open files", "note", f"{text}, below the {wanted} wanted", raise_it)
    else:
        yield Finding("open files", "ok", text)


def _caps_text(caps: ConnectionCaps) -> str:
    return (
        f"a limit of {caps.descriptors} open files; connections at most {caps.unproven} without a token,"
        f" {caps.owner} of the broker's token, {caps.clients} of client tokens ({caps.per_client} each)"
    )


# 2. token file


def _token_findings(brokers: list[LiveBroker]) -> Iterator[Finding]:
    path = paths.token_file()
    try:
        info = path.lstat()
    except FileNotFoundError:
        yield Finding("token file", "note", f"{path} is not made yet; the first browser-mcp serve makes it")
        return
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        yield Finding(
            "token file",
            "problem",
            f"{path} is not a regular file of yours (it is {user_name(info.st_uid)}'s"
            f"{', a link' if stat.S_ISLNK(info.st_mode) else ''}); a broker will not trust it",
            f"rm {shlex.quote(str(path))}, then restart the broker and run mcp-config again for HTTP clients",
        )
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        yield Finding(
            "token file",
            "problem",
            f"{path} has mode {mode:04o}: other users may read the token that opens the broker, and the next"
            " broker start replaces it (HTTP client configurations made with it stop working)",
            f"chmod 600 {shlex.quote(str(path))}",
        )
        return
    yield Finding("token file", "ok", f"{path}: yours, mode {mode:04o}")
    token = path.read_text().strip()
    for broker in brokers:
        if broker.record.token != token:
            yield Finding(
                "token file",
                "note",
                f"the broker on port {broker.record.port} holds another token than {path} (it was replaced"
                " after the broker started)",
                f"browser-mcp stop --pid {broker.record.pid}, then start it again",
            )


# 3. discovery folder


def _discovery_findings(discovery_dir: Path | None) -> Iterator[Finding]:
    folder, fell_back = paths.writable_discovery_dir(discovery_dir)
    if fell_back:
        yield Finding("discovery folder", "note", fell_back)
    try:
        info = folder.lstat()
    except FileNotFoundError:
        yield Finding("discovery folder", "ok", f"{folder} is not made yet; a broker makes it, mode 0700")
        return
    if not stat.S_ISDIR(info.st_mode):
        yield Finding(
            "discovery folder",
            "problem",
            f"{folder} is not a folder{' (a link)' if stat.S_ISLNK(info.st_mode) else ''}",
            f"remove it, or choose another with --discovery-dir or {paths.ENV_DISCOVERY_DIR}",
        )
        return
    mode = stat.S_IMODE(info.st_mode)
    quoted = shlex.quote(str(folder))
    if info.st_uid != os.getuid():
        yield Finding(
            "discovery folder",
            "problem",
            f"{folder} belongs to {user_name(info.st_uid)}",
            f"choose a folder of yours with --discovery-dir or {paths.ENV_DISCOVERY_DIR}",
        )
    elif mode & 0o022:
        yield Finding(
            "discovery folder",
            "problem",
            f"{folder} has mode {mode:04o}: other users may add or delete files in it",
            f"chmod 700 {quoted}",
        )
    elif mode & 0o055:
        yield Finding(
            "discovery folder", "note", f"{folder} has mode {mode:04o}: other users may list it", f"chmod 700 {quoted}"
        )
    else:
        yield Finding("discovery folder", "ok", f"{folder}: yours, mode {mode:04o}")


# 4. browsers


def _browser_findings(brokers: list[LiveBroker]) -> Iterator[Finding]:
    answering = [b for b in brokers if b.status is not None]
    if not answering:
        yield Finding("browser", "note", "not checked: no broker answers")
    for broker in answering:
        assert broker.status is not None
        connected = [b for b in broker.status.get("browsers", []) if b.get("connected")]
        if not connected:
            yield Finding(
                "browser",
                "problem",
                f"no browser is connected to the broker on port {broker.record.port}",
                "open the browser with the browser-mcp extension loaded; if it is, let it trust the broker:"
                " browser-mcp install-native-host (then restart the browser), or browser-mcp pair and type the"
                " code into the extension's popup",
            )
        for browser in connected:
            extension = browser.get("extensionVersion")
            said = f"extension {extension}" if extension else "its extension does not say its version"
            name = f"{browser.get('browser')} {browser.get('name', '')} {browser.get('version', '')}"
            yield Finding(
                "browser", "ok", f"{name} on port {broker.record.port}: {browser.get('tabs', 0)} tabs; {said}"
            )
            if browser.get("extensionOutdated"):
                yield Finding(
                    "browser",
                    "problem",
                    f"{name}: its extension ({extension or 'no version'}) is older than this broker needs",
                    "load this install's extension folder again (chrome://extensions, Load unpacked or the"
                    " reload button), then reopen the browser's popup",
                )


# 5. native messaging host


def _launcher_command(launcher: Path) -> list[str] | None:
    try:
        lines = launcher.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    line = next((x for x in lines if x.startswith("exec ")), None)
    try:
        return None if line is None else [w for w in shlex.split(line)[1:] if w != "$@"]
    except ValueError:
        return None


def _native_host_findings(brokers: list[LiveBroker]) -> Iterator[Finding]:
    here = [*paths.broker_command(), "native-host"]
    registered, elsewhere = [], []
    for target in native_install.targets([*native_install.BROWSERS, native_install.FIREFOX], []):
        try:
            manifest = codec.loads(target.manifest.read_bytes())
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            elsewhere.append(f"{target.label}: {target.manifest} cannot be read ({exc})")
            continue
        launcher = Path(str(manifest.get("path", ""))) if isinstance(manifest, dict) else Path()
        command = _launcher_command(launcher)
        allowed_key, ours = (
            ("allowed_extensions", FIREFOX_EXTENSION_ID)
            if target.firefox
            else ("allowed_origins", f"chrome-extension://{PROJECT_EXTENSION_ID}/")
        )
        origins = manifest.get(allowed_key, []) if isinstance(manifest, dict) else []
        if command is None:
            elsewhere.append(f"{target.label}: its manifest names {launcher}, which is not a launcher it can run")
        elif command[: len(here)] != here:
            elsewhere.append(f"{target.label}: it runs {shlex.join(command)}, not this install")
        elif ours not in origins:
            elsewhere.append(f"{target.label}: its manifest does not let this project's extension start it")
        else:
            registered.append(target.label)
    fix = "browser-mcp install-native-host (it rewrites the manifests), then restart the browser"
    for problem in elsewhere:
        yield Finding("native host", "problem", problem, fix)
    if registered:
        yield Finding("native host", "ok", f"registered for {', '.join(registered)}; it runs this install")
        return
    unseen = [b.record.port for b in brokers if b.record.port not in PORTS]
    if unseen:
        yield Finding(
            "native host",
            "problem",
            f"not registered, and the broker listens on port {', '.join(map(str, unseen))}: without the native host"
            f" the extension looks for brokers on ports {PORTS.start}-{PORTS.stop - 1} alone",
            "browser-mcp install-native-host (then restart the browser), or start the broker without --port",
        )
    elif not elsewhere:
        yield Finding(
            "native host",
            "note",
            "not registered with any browser: the extension finds brokers on ports 8765-8785 alone and trusts"
            " one once paired",
            "browser-mcp install-native-host (then restart the browser), or pair: browser-mcp pair",
        )


# 6. ports


# 7. MCP client configurations


def _token() -> str | None:
    path = paths.token_file()
    return path.read_text().strip() if is_own_file(path, private=True) else None


def _bearer_of(authorization: str | None, token: str | None) -> bool:
    """Whether ``authorization`` carries ``token`` or a client token made from it."""
    if token is None:
        return False
    try:
        check_bearer(authorization, token)
    except Unauthorized:
        return False
    return True


def _http_client_findings(
    where: str, reach: tuple[int, str | None], token: str | None, ports: set[int], fix: str
) -> Iterator[Finding]:
    port, authorization = reach
    if not _bearer_of(authorization, token):
        yield Finding(
            "MCP clients",
            "problem",
            f"{where} reaches port {port} over HTTP with a token that is not this install's broker's (the token"
            " file was replaced, or it is another install's)",
            f"{fix} (stdio, no token), or paste the header browser-mcp mcp-config --client NAME prints",
        )
        return
    yield Finding("MCP clients", "ok", f"{where} reaches port {port} over HTTP with a token of this install")
    if port not in ports:
        yield Finding(
            "MCP clients",
            "note",
            f"{where}: no broker listens on port {port} now; an HTTP configuration names one port",
            f"{fix} (stdio finds the broker wherever it is), or serve --port {port}",
        )


def _client_files() -> Iterator[tuple[client_apps.ClientApp, Path, dict[str, Any] | Finding]]:
    """Each application's file that exists: its servers, or the finding that it cannot be read."""
    for app in client_apps.APPS.values():
        path = app.config_path()
        try:
            yield app, path, client_apps.read_servers(app, path)
        except FileNotFoundError:
            pass
        except client_apps.ConfigFileError as exc:
            yield app, path, Finding("MCP clients", "problem", f"{app.title}: {exc}; {app.title} cannot read it either")
        if app.key == "vscode":
            settings = path.with_name("settings.json")
            try:
                yield app, settings, client_apps.vscode_settings_servers(settings)
            except FileNotFoundError:
                pass
            except client_apps.ConfigFileError:
                yield (
                    app,
                    settings,
                    Finding("MCP clients", "note", f"VS Code: {settings} is not plain JSON (comments?); not read"),
                )


def _client_findings(brokers: list[LiveBroker]) -> Iterator[Finding]:
    token = _token()
    ports = {b.record.port for b in brokers}
    found_any = False
    for app, path, servers in _client_files():
        found_any = True
        if isinstance(servers, Finding):
            yield servers
            continue
        fix = f"browser-mcp mcp-config --client-app {app.key}" + ("" if app.key == "codex" else " --write")
        ours = {name: s for name, s in servers.items() if client_apps.is_ours(s, token)}
        if not ours and path.name != "settings.json":
            yield Finding("MCP clients", "note", f"{app.title} ({path}): no browser-mcp server in it", fix)
        for name, server in ours.items():
            where = f"{app.title} ({path}): server {name!r}"
            named_fix = fix + (f" --name {shlex.quote(name)}" if " (in " not in name else "")
            reach = client_apps.http_reach(server)
            if reach is not None:
                yield from _http_client_findings(where, reach, token, ports, named_fix)
            elif client_apps.points_here(server):
                yield Finding("MCP clients", "ok", f"{where} runs this install")
            else:
                yield Finding(
                    "MCP clients", "problem", f"{where} runs {server.get('command')}, not this install", named_fix
                )
    if not found_any:
        looked = ", ".join(str(app.config_path()) for app in client_apps.APPS.values())
        yield Finding(
            "MCP clients",
            "note",
            f"no MCP client configuration found (looked at {looked})",
            "browser-mcp mcp-config --client-app claude-code|claude-desktop|cursor|vscode|codex --write",
        )


def checks(discovery_dir: Path | None = None, timeout: float = ANSWER_TIMEOUT) -> list[Finding]:
    brokers = find_brokers(discovery_dir, timeout)
    return [
        *_broker_findings(brokers),
        *_open_file_findings(brokers),
        *_token_findings(brokers),
        *_discovery_findings(discovery_dir),
        *_browser_findings(brokers),
        *_native_host_findings(brokers),
        *port_findings(brokers),
        *_client_findings(brokers),
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--discovery-dir", type=Path, help="where discovery files are")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=ANSWER_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds each broker may take to answer before it is a problem (default {ANSWER_TIMEOUT:g})",
    )


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"a number of seconds more than 0, not {text!r}")
    return seconds


def main(args: argparse.Namespace) -> int:
    found = checks(args.discovery_dir, args.timeout)
    problems = sum(f.level == "problem" for f in found)
    if args.json:
        print(codec.dumps_pretty({"findings": [attrs.asdict(f) for f in found], "problems": problems}))
    else:
        for finding in found:
            print(f"{_LABELS[finding.level]:<8} {finding.check}: {finding.text}")
            if finding.fix:
                print(f"{'':<8} fix: {finding.fix}")
        print(f"\n{problems} problem{'s' if problems != 1 else ''} found" if problems else "\nall is well")
    return 1 if problems else 0
