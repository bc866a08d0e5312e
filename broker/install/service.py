"""``browser-mcp service install | uninstall | status``: the broker as a login service.

On Linux a systemd user unit, ``$XDG_CONFIG_HOME/systemd/user/browser-mcp.service`` (else
``~/.config/systemd/user``), started with the person's session and restarted when it fails; on
macOS a launchd agent, ``~/Library/LaunchAgents/browser-mcp.broker.plist``, loaded at login and
kept alive unless it exits cleanly. Either runs this installation's ``browser-mcp serve`` (its
console script, else its Python with ``-m broker``) with the options given after ``install``, and
with the broker's environment variables (discovery folder, token file, allowed extensions) as they
were when it was installed. Clients, the native host and the command line find it through its
discovery file, as any broker; ``browser-mcp stop`` stops it (a clean exit is not restarted).

Options that name folders (``--discovery-dir``, ``--upload-dir``) are made absolute, since the
service does not start where ``install`` ran.

What it leaves out: starting before login (``loginctl enable-linger`` on Linux does that and is
the person's choice), system-wide services, and Windows.
"""

from __future__ import annotations

import argparse
import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from .. import codec, paths
from ..discovery import live_brokers
from ..files import write_atomic

__all__ = [
    "LAUNCHD_LABEL",
    "UNIT_NAME",
    "ServiceError",
    "add_arguments",
    "definition",
    "install",
    "main",
    "serve_command",
    "split_install_options",
    "status",
    "uninstall",
]

UNIT_NAME = "browser-mcp.service"
LAUNCHD_LABEL = "browser-mcp.broker"
# Carried into the service as they were when it was installed: they choose where it keeps its files.
CARRIED_ENV = (paths.ENV_DISCOVERY_DIR, paths.ENV_TOKEN_FILE, "BROWSER_MCP_ALLOWED_EXTENSIONS")
_PATH_OPTIONS = ("--discovery-dir", "--upload-dir")
_MANAGER_TIMEOUT = 30


class ServiceError(Exception):
    """The service manager is missing or refused; the message says what was done and what to do."""


@attrs.frozen
class Definition:
    """The file that describes the service to the system's service manager."""

    path: Path
    text: bytes


def serve_command(options: Sequence[str]) -> list[str]:
    """This installation's ``serve`` with ``options``, folder options made absolute."""
    absolute = []
    expect_path = False
    for option in options:
        name, equals, value = option.partition("=")
        if expect_path:
            absolute.append(str(Path(option).absolute()))
        elif equals and name in _PATH_OPTIONS:
            absolute.append(f"{name}={Path(value).absolute()}")
        else:
            absolute.append(option)
        expect_path = not expect_path and option in _PATH_OPTIONS
    return [*paths.broker_command(), "serve", *absolute]


def _carried_env(env: dict[str, str]) -> dict[str, str]:
    return {name: env[name] for name in CARRIED_ENV if env.get(name)}


def _home(env: dict[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _unit_dir(env: dict[str, str]) -> Path:
    config = env.get("XDG_CONFIG_HOME")
    root = Path(config) if config and Path(config).is_absolute() else _home(env) / ".config"
    return root / "systemd" / "user"


_SYSTEMD_PLAIN = re.compile(r"^[A-Za-z0-9/_.:,+@=-]+$")


def _systemd_word(word: str, *, command: bool = True) -> str:
    """One word of ``ExecStart=`` (``command``) or ``Environment=``, as systemd reads it back.

    Quoted when it holds more than plain characters; ``%`` escaped (both expand specifiers), and
    ``$`` in a command, where systemd expands variables (``Environment=`` takes it as it is).
    """
    word = word.replace("%", "%%")
    if command:
        word = word.replace("$", "$$")
    if _SYSTEMD_PLAIN.match(word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _unit_text(command: Sequence[str], env: dict[str, str]) -> str:
    carried = _carried_env(env).items()
    environment = "".join(f"Environment={_systemd_word(f'{k}={v}', command=False)}\n" for k, v in carried)
    return (
        "# Written by browser-mcp service install; browser-mcp service uninstall removes it.\n"
        "[Unit]\n"
        "Description=browser-mcp broker: shares this browser with AI clients\n"
        "\n"
        "[Service]\n"
        f"ExecStart={' '.join(_systemd_word(w) for w in command)}\n"
        f"{environment}"
        "Restart=on-failure\n"
        "RestartSec=2\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def _plist(command: Sequence[str], env: dict[str, str]) -> bytes:
    log = paths.log_dir() / "service.log"
    agent: dict[str, Any] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        # Restarted when it fails, not after a clean exit (browser-mcp stop).
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
    }
    carried = _carried_env(env)
    if carried:
        agent["EnvironmentVariables"] = carried
    return plistlib.dumps(agent)


def definition(options: Sequence[str], platform: str = sys.platform, env: dict[str, str] | None = None) -> Definition:
    """The unit (Linux) or agent (macOS) that runs ``serve`` with ``options``.

    Raises:
        ServiceError: neither Linux nor macOS.
    """
    env = dict(os.environ if env is None else env)
    command = serve_command(options)
    if platform == "darwin":
        path = _home(env) / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        return Definition(path, _plist(command, env))
    if platform.startswith("linux"):
        return Definition(_unit_dir(env) / UNIT_NAME, _unit_text(command, env).encode())
    raise ServiceError(f"a login service is made with systemd (Linux) or launchd (macOS), not on {platform}")


def _manager(platform: str) -> list[str]:
    return ["launchctl"] if platform == "darwin" else ["systemctl", "--user"]


def _run(platform: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the service manager.

    Raises:
        ServiceError: it is not installed.
    """
    command = [*_manager(platform), *args]
    if shutil.which(command[0]) is None:
        raise ServiceError(f"{command[0]} is not on PATH")
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=_MANAGER_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise ServiceError(f"{shlex.join(command)} did not answer within {_MANAGER_TIMEOUT} s") from None


def _must(platform: str, *args: str) -> None:
    """Raises: ServiceError, with the manager's words, when it fails."""
    done = _run(platform, *args)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip() or f"exit code {done.returncode}"
        raise ServiceError(f"{shlex.join([*_manager(platform), *args])} failed: {said}")


def _answer(platform: str, *args: str) -> str:
    """The one word ``systemctl is-*`` prints (its exit code says no as well as cannot).

    Raises:
        ServiceError: it printed nothing: it could not ask the service manager.
    """
    done = _run(platform, *args)
    word = done.stdout.strip()
    if not word:
        raise ServiceError(f"{shlex.join([*_manager(platform), *args])} failed: {done.stderr.strip()}")
    return word


def _domain() -> str:
    return f"gui/{os.getuid()}"


def _no_manager_hint(platform: str) -> str:
    if platform == "darwin":
        return "launchctl is part of macOS; is this a normal login session?"
    return (
        "a systemd user instance is needed (containers and sessions without a login, such as su or some"
        " ssh setups, have none: try systemctl --user status); without one, run browser-mcp serve yourself"
    )


def install(options: Sequence[str], platform: str = sys.platform) -> Definition:
    """Write the service's file and start it (restart it when it was running with other options).

    Raises:
        ServiceError: the file was written but the manager is missing or refused to start it.
        OSError: the file cannot be written.
    """
    written = definition(options, platform)
    written.path.parent.mkdir(parents=True, exist_ok=True)
    if platform == "darwin":
        paths.log_dir().mkdir(parents=True, exist_ok=True)  # launchd opens the log there, but makes no folder
    write_atomic(written.path, written.text, 0o644)
    try:
        if platform == "darwin":
            _run(platform, "bootout", f"{_domain()}/{LAUNCHD_LABEL}")  # an older one; fails when none
            _must(platform, "bootstrap", _domain(), str(written.path))
        else:
            _must(platform, "daemon-reload")
            _must(platform, "enable", UNIT_NAME)
            _must(platform, "restart", UNIT_NAME)
    except ServiceError as exc:
        raise ServiceError(
            f"wrote {written.path}, but could not start it ({exc}); {_no_manager_hint(platform)}"
        ) from None
    return written


def uninstall(platform: str = sys.platform) -> Path | None:
    """Stop and disable the service and remove its file; the file removed, None when there was none.

    Raises:
        ServiceError: the file was removed but the manager is missing or refused to stop the service.
    """
    path = definition([], platform).path
    if not path.exists():
        return None
    problem = None
    try:
        if platform == "darwin":
            _run(platform, "bootout", f"{_domain()}/{LAUNCHD_LABEL}")  # fails when not loaded: nothing to stop
        else:
            _must(platform, "disable", "--now", UNIT_NAME)
    except ServiceError as exc:
        problem = exc
    path.unlink()
    if platform != "darwin" and problem is None:
        _run(platform, "daemon-reload")
    if problem is not None:
        raise ServiceError(f"removed {path}, but could not stop the service ({problem})") from None
    return path


def status(platform: str = sys.platform, discovery_dir: Path | None = None) -> dict[str, Any]:
    """Whether the service is installed, enabled and running, and the broker it runs.

    ``error`` says why the manager could not be asked (then ``enabled`` and ``running`` are None).
    """
    path = definition([], platform).path
    found: dict[str, Any] = {
        "installed": path.exists(),
        "file": str(path),
        "enabled": None,
        "running": None,
        "pid": None,
        "port": None,
        "error": None,
    }
    try:
        if platform == "darwin":
            shown = _run(platform, "print", f"{_domain()}/{LAUNCHD_LABEL}")
            found["enabled"] = shown.returncode == 0
            state = re.search(r"^\s*state = (\w+)", shown.stdout, re.MULTILINE)
            pid = re.search(r"^\s*pid = (\d+)", shown.stdout, re.MULTILINE)
            found["running"] = bool(state and state.group(1) == "running")
            found["pid"] = int(pid.group(1)) if pid else None
        else:
            found["enabled"] = _answer(platform, "is-enabled", UNIT_NAME) == "enabled"
            found["running"] = _answer(platform, "is-active", UNIT_NAME) == "active"
            main_pid = _run(platform, "show", "--property=MainPID", "--value", UNIT_NAME).stdout.strip()
            found["pid"] = int(main_pid) if main_pid.isdigit() and int(main_pid) > 0 else None
    except ServiceError as exc:
        found["error"] = f"{exc}; {_no_manager_hint(platform)}"
    record = next((r for r in live_brokers(paths.discovery_dirs(discovery_dir)) if r.pid == found["pid"]), None)
    found["port"] = None if record is None else record.port
    return found


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser(
        "install",
        help="write the service and start it; options after install are browser-mcp serve's, such as --port 8770",
    )
    actions.add_parser("uninstall", help="stop the service and remove it")
    shown = actions.add_parser("status", help="whether the service is installed, enabled and running")
    shown.add_argument("--discovery-dir", type=Path, help="where discovery files are (to name the port)")
    shown.add_argument("--json", action="store_true", help="print JSON for scripts")


def split_install_options(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``service install`` and the options for ``serve`` after it (argparse cannot take unknown options)."""
    if argv[:2] == ["service", "install"]:
        return argv[:2], argv[2:]
    return argv, None


def main(args: argparse.Namespace, serve_options: list[str], check_serve_options: Callable[[list[str]], None]) -> int:
    """``check_serve_options`` refuses options that ``serve`` would refuse (and exits, as argparse does)."""
    try:
        if args.action == "install":
            check_serve_options(serve_options)
            written = install(serve_options)
            print(f"installed {written.path}, enabled and started; browser-mcp service status shows it")
        elif args.action == "uninstall":
            removed = uninstall()
            print(f"stopped the service and removed {removed}" if removed else "no service is installed")
        else:
            return _print_status(status(discovery_dir=args.discovery_dir), args.json)
    except (ServiceError, OSError) as exc:
        print(f"browser-mcp service {args.action}: {exc}", file=sys.stderr)
        return 1
    return 0


def _print_status(found: dict[str, Any], as_json: bool) -> int:
    """Exit code 0 when installed and running, 3 when not (as systemctl status), 1 when the manager cannot say."""
    if as_json:
        print(codec.dumps_pretty(found))
    else:
        print(f"installed: {_yes(found['installed'])} ({found['file']})")
        print(f"enabled:   {_yes(found['enabled'])}")
        running = _yes(found["running"])
        if found["pid"]:
            running += f", pid {found['pid']}"
        if found["port"]:
            running += f", port {found['port']}"
        print(f"running:   {running}")
        if found["error"]:
            print(f"browser-mcp service status: {found['error']}", file=sys.stderr)
    if found["error"]:
        return 1
    return 0 if found["installed"] and found["running"] else 3
