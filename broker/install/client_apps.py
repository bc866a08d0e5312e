"""The MCP configuration files of AI applications: where each is, what our server looks like there.

``browser-mcp mcp-config --client-app APP`` prints the entry that starts this installation's
``browser-mcp mcp`` (stdio) for that application, and with ``--write`` merges it into the
application's file; ``browser-mcp doctor`` reads the same files to tell whether they point here.

=================  =============================================================  ==============
application        file (Linux; macOS where it differs)                           servers under
=================  =============================================================  ==============
``claude-code``    ``~/.claude.json`` (user scope; also ``projects.*``)           ``mcpServers``
``claude-desktop`` ``$XDG_CONFIG_HOME/Claude/claude_desktop_config.json``;        ``mcpServers``
                   ``~/Library/Application Support/Claude/...``
``cursor``         ``~/.cursor/mcp.json``                                         ``mcpServers``
``vscode``         ``$XDG_CONFIG_HOME/Code/User/mcp.json``;                       ``servers``
                   ``~/Library/Application Support/Code/User/mcp.json``
``codex``          ``$CODEX_HOME/config.toml``, else ``~/.codex/config.toml``     ``[mcp_servers.NAME]``
=================  =============================================================  ==============

Claude Code and VS Code entries carry ``"type": "stdio"``, as their documentation writes them.
Writing keeps every other key and server: the file is read, the one entry set, and the whole
written back atomically with its mode, the old content kept beside it as ``FILE.bak``; a link
is followed to the file it names. A file that is not a JSON object is refused and left alone.
Codex's TOML is read and written with ``tomlkit``, which keeps the file's comments, order and
layout: only our ``[mcp_servers.NAME]`` table is set. A file that is not valid TOML, or whose
``mcp_servers`` is not a table, is refused and left alone, as a JSON file is.
VS Code's older place, ``"mcp": {"servers": ...}`` in ``settings.json``, is read when it is plain
JSON (settings files often hold comments, which are skipped with a note).
"""

from __future__ import annotations

import itertools
import os
import shlex
import stat
import sys
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import tomlkit
from tomlkit.exceptions import TOMLKitError

from .. import codec, paths
from ..core.security import CLIENT_TOKEN_PREFIX
from ..files import write_atomic

__all__ = [
    "APPS",
    "ClientApp",
    "ConfigFileError",
    "entry",
    "http_reach",
    "is_ours",
    "points_here",
    "read_servers",
    "snippet",
    "stdio_command",
    "write_entry",
]


class ConfigFileError(Exception):
    """An application's file cannot be read or written as asked; the message says why and what to do."""


@attrs.frozen
class ClientApp:
    key: str
    title: str
    servers_key: str
    # Whether its stdio entries say "type": "stdio" (its documentation writes them so).
    typed: bool

    def config_path(self, env: dict[str, str] | None = None, platform: str = sys.platform) -> Path:
        env = dict(os.environ if env is None else env)
        home = Path(env.get("HOME") or Path.home())
        config = env.get("XDG_CONFIG_HOME")
        config_root = Path(config) if config and Path(config).is_absolute() else home / ".config"
        app_support = home / "Library" / "Application Support"
        if self.key == "claude-code":
            return home / ".claude.json"
        if self.key == "claude-desktop":
            root = app_support if platform == "darwin" else config_root
            return root / "Claude" / "claude_desktop_config.json"
        if self.key == "cursor":
            return home / ".cursor" / "mcp.json"
        if self.key == "vscode":
            return (app_support if platform == "darwin" else config_root) / "Code" / "User" / "mcp.json"
        codex_home = env.get("CODEX_HOME")
        return (Path(codex_home) if codex_home else home / ".codex") / "config.toml"


APPS: dict[str, ClientApp] = {
    app.key: app
    for app in (
        ClientApp("claude-code", "Claude Code", "mcpServers", typed=True),
        ClientApp("claude-desktop", "Claude Desktop", "mcpServers", typed=False),
        ClientApp("cursor", "Cursor", "mcpServers", typed=False),
        ClientApp("vscode", "VS Code", "servers", typed=True),
        ClientApp("codex", "Codex", "mcp_servers", typed=False),
    )
}


def stdio_command(discovery_dir: Path | None = None, caps: str | None = None) -> list[str]:
    """What an application runs to reach the broker: this installation's ``browser-mcp mcp``,
    offering the tool groups ``caps`` beside the default ones."""
    command = [*paths.broker_command(), "mcp"]
    if discovery_dir is not None:
        command += ["--discovery-dir", str(discovery_dir.resolve())]
    if caps:
        command += ["--caps", caps]
    return command


def entry(app: ClientApp, command: Sequence[str]) -> dict[str, Any]:
    """The server entry ``app`` reads, running ``command``."""
    typed: dict[str, Any] = {"type": "stdio"} if app.typed else {}
    return {**typed, "command": command[0], "args": list(command[1:])}


def snippet(app: ClientApp, name: str, command: Sequence[str]) -> str:
    """The text to paste into ``app``'s file: JSON, or TOML for Codex."""
    server = entry(app, command)
    if app.key == "codex":
        servers = tomlkit.table(is_super_table=True)
        servers[name] = server
        return tomlkit.dumps({app.servers_key: servers})
    return codec.dumps_pretty({app.servers_key: {name: server}}) + "\n"


def _invocation(server: Any) -> list[str] | None:
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        return None
    args = server.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    return [server["command"], *args]


def http_reach(server: Any) -> tuple[int, str | None] | None:
    """The port and ``Authorization`` header of an entry that names a loopback ``/mcp`` URL, else None."""
    url = server.get("url") if isinstance(server, dict) else None
    if not isinstance(url, str):
        return None
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.hostname not in ("127.0.0.1", "localhost") or parts.path.rstrip("/") != "/mcp" or port is None:
        return None
    headers = server.get("headers")
    found = {k.lower(): v for k, v in headers.items()} if isinstance(headers, dict) else {}
    authorization = found.get("authorization")
    return port, authorization if isinstance(authorization, str) else None


def is_ours(server: Any, token: str | None = None) -> bool:
    """Whether an entry reaches some installation's broker: its ``browser-mcp mcp``, or HTTP with a
    client token (``mcp-config --client``) or ``token``, the broker's own."""
    reach = http_reach(server)
    if reach is not None:
        bearer = (reach[1] or "").partition(" ")[2].strip()
        return bearer.startswith(CLIENT_TOKEN_PREFIX) or (token is not None and bearer == token)
    words = _invocation(server)
    if words is None or "mcp" not in words:
        return False
    return Path(words[0]).name == "browser-mcp" or ("-m", "broker") in itertools.pairwise(words)


def points_here(server: Any) -> bool:
    """Whether an entry runs this installation's ``browser-mcp mcp``."""
    words = _invocation(server)
    here = stdio_command()
    return words is not None and words[: len(here)] == here


def read_servers(app: ClientApp, path: Path) -> dict[str, Any]:
    """Every server entry in ``app``'s file, by name (Claude Code's per-project ones as ``NAME (in PROJECT)``).

    Raises:
        FileNotFoundError: there is no such file.
        ConfigFileError: it cannot be read or parsed.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    data: Any = _toml_document(path, raw).unwrap() if app.key == "codex" else _json_object(path, raw)
    servers = data.get(app.servers_key)
    found = dict(servers) if isinstance(servers, dict) else {}
    if app.key == "claude-code" and isinstance(data.get("projects"), dict):
        for project, settings in data["projects"].items():
            project_servers = settings.get("mcpServers") if isinstance(settings, dict) else None
            if isinstance(project_servers, dict):
                found.update({f"{name} (in {project})": s for name, s in project_servers.items()})
    return found


def vscode_settings_servers(path: Path) -> dict[str, Any]:
    """VS Code's older place for servers: ``"mcp": {"servers": ...}`` in ``settings.json``.

    Raises:
        FileNotFoundError: there is no such file.
        ConfigFileError: it is not plain JSON (settings files may hold comments).
    """
    data = _json_object(path, path.read_bytes())
    mcp = data.get("mcp")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    return dict(servers) if isinstance(servers, dict) else {}


def _toml_document(path: Path, raw: bytes) -> tomlkit.TOMLDocument:
    """Raises: ConfigFileError, unless ``raw`` is TOML."""
    try:
        return tomlkit.parse(raw.decode())
    except (TOMLKitError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"{path} is not valid TOML ({exc})") from None


def _json_object(path: Path, raw: bytes) -> dict[str, Any]:
    """Raises: ConfigFileError, unless ``raw`` is empty or a JSON object."""
    if not raw.strip():
        return {}
    try:
        data = codec.loads(raw)
    except ValueError as exc:
        raise ConfigFileError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path} holds JSON that is not an object")
    return data


def write_entry(app: ClientApp, path: Path, name: str, command: Sequence[str]) -> tuple[str, Path, Any]:
    """Merge our server, as ``name``, into ``app``'s file ``path``, keeping everything else.

    Returns what was done (``added``, ``replaced`` or ``unchanged``), the file written (a link's
    target) and the entry it replaced.

    Raises:
        ConfigFileError: a file that is not a JSON object (Codex's: not TOML) or whose servers are
            not one (the file is left as it was).
        OSError: the file cannot be written.
    """
    target = path.resolve() if path.is_symlink() else path
    try:
        raw: bytes | None = target.read_bytes()
    except FileNotFoundError:
        raw = None
    data: Any
    if app.key == "codex":
        data = tomlkit.document() if raw is None else _toml_document(target, raw)
        # A table of tables: each server is written as its own [mcp_servers.NAME].
        servers = data.setdefault(app.servers_key, tomlkit.table(is_super_table=True))
        kind = "a table"
    else:
        data = {} if raw is None else _json_object(target, raw)
        servers = data.setdefault(app.servers_key, {})
        kind = "an object"
    if not isinstance(servers, dict):
        raise ConfigFileError(f'{target}: "{app.servers_key}" is not {kind}; it is left as it was')
    new = entry(app, command)
    before = servers.get(name)
    if isinstance(before, tomlkit.items.Item):
        before = before.unwrap()
    if before == new:
        return "unchanged", target, before
    servers[name] = new
    if raw is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = 0o600
    else:
        mode = stat.S_IMODE(target.stat().st_mode)
        write_atomic(target.with_name(f"{target.name}.bak"), raw, mode)
    text = tomlkit.dumps(data) if app.key == "codex" else codec.dumps_pretty(data) + "\n"
    write_atomic(target, text.encode(), mode)
    return ("added" if before is None else "replaced"), target, before


def print_config(app_key: str, name: str, discovery_dir: Path | None, write: bool, caps: str | None = None) -> int:
    """``mcp-config --client-app APP [--write]``: the snippet on stdout, or merged into the app's file."""
    app = APPS[app_key]
    path = app.config_path()
    command = stdio_command(discovery_dir, caps)
    if not write:
        print(snippet(app, name, command), end="")
        print(f"# {app.title}: add this to {path} (--write does it for you)", file=sys.stderr)
        return 0
    try:
        done, target, before = write_entry(app, path, name, command)
    except ConfigFileError as exc:
        print(f"browser-mcp mcp-config: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"browser-mcp mcp-config: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if done == "unchanged":
        print(f"{target} already runs this install as server {name!r}; nothing changed")
        return 0
    was = "" if before is None else f" (it was {codec.dumps_text(before)}; the old file is {target}.bak)"
    print(f"{done} server {name!r} in {target}{was}; restart {app.title} to use it")
    if app.key == "claude-code":
        print(
            "Claude Code rewrites this file while it runs: if the server is missing there, quit it and run this"
            f" again, or use: claude mcp add --scope user {shlex.quote(name)} -- {shlex.join(command)}"
        )
    return 0
