"""Discovery files: how CLIs, the stdio relay and the native host find live brokers.

Each broker writes ``server-<pid>.json`` (``port``, ``pid``, ``startedAt``, ``version``,
``protocol``, ``token``; extra keys allowed) with :func:`broker.files.write_atomic`, so a reader
sees the old file, the new one or none, never half of one. The file is 0600 and a folder the
broker creates is 0700, because the token in it opens the broker. Readers trust only regular
files owned by the current user that no one else may read or write (others are ignored, with a
log line), whose pid is alive and is a browser-mcp broker of this user
(:func:`is_broker_process`: ``/proc/<pid>`` on Linux, ``ps`` elsewhere); anyone who finds a file
of a dead pid deletes it. A file whose pid was reused by another program is ignored, not deleted:
that program may be anything. None of this proves the server on the file's port is the broker;
readers that send the token check that first (:mod:`broker.relay.client`).

:func:`matching_brokers` is the one rule for which live brokers ``--pid`` and ``--port`` name;
what to do when several or none match is the caller's (the CLI refuses to guess, the stdio relay
takes the oldest). Watching the folders is the native host's.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import re
import secrets
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from . import codec
from .core.errors import InvalidMessage
from .files import is_own_file, owned_by_this_user, private_dir, write_atomic

__all__ = [
    "BrokerRecord",
    "is_broker_process",
    "load_or_create_token",
    "live_brokers",
    "matching_brokers",
    "pid_alive",
    "printed_words",
    "prune",
    "publish",
    "read_record",
    "remove",
]

logger = logging.getLogger(__name__)

_FILE_NAME = re.compile(r"^server-(\d{1,10})\.json$")


@attrs.frozen
class BrokerRecord:
    port: int
    pid: int
    started_at: str
    version: str
    protocol: int
    token: str
    path: Path = attrs.field(default=Path(), eq=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True  # alive, another user's; the owner check keeps its file out
    return True


_PROC = Path("/proc")


def _command_line(pid: int) -> tuple[int, list[str]] | None:
    """The owner (uid) and arguments of process ``pid``, or None when they cannot be read."""
    if (_PROC / "self").is_dir():
        proc = _PROC / str(pid)
        try:
            uid = proc.stat().st_uid
            arguments = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            return None
        return uid, [a.decode(errors="replace") for a in arguments if a]
    # macOS and the BSDs have no /proc: ps gives the owner and the command line, split on spaces
    # (a path with a space in it then reads as two words, which only makes the check stricter).
    shown = printed_words(["ps", "-o", "uid=", "-o", "command=", "-p", str(pid)])
    if not shown or not shown[0].isdigit():
        return None
    return int(shown[0]), shown[1:]


def printed_words(command: list[str], timeout: float = 5) -> list[str] | None:
    """What a short system command (``ps``, ``lsof``) prints, split on spaces; None when it cannot run."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.split()


def is_broker_process(pid: int) -> bool:
    """Whether ``pid`` is this user's ``browser-mcp serve`` (or ``python -m broker serve``), or this process."""
    if pid == os.getpid():
        return True
    found = _command_line(pid)
    if found is None:
        return False
    uid, arguments = found
    if uid != os.getuid() or "serve" not in arguments:
        return False
    pairs = itertools.pairwise(arguments)
    return any(Path(a).name == "browser-mcp" for a in arguments[:2]) or ("-m", "broker") in pairs


_warned: set[tuple[Path, str]] = set()


def _ignore(path: Path, why: str) -> None:
    """Say once per file and reason why it is not trusted (the native host rescans every second)."""
    if (path, why) not in _warned:
        _warned.add((path, why))
        logger.warning("ignoring %s: %s", path, why)


def publish(directory: Path, fields: dict[str, Any]) -> Path:
    """Write ``server-<pid>.json`` atomically and prune files of dead brokers.

    Raises:
        OSError: the folder cannot be created or written.
    """
    private_dir(directory)
    prune(directory)
    target = directory / f"server-{int(fields['pid'])}.json"
    write_atomic(target, codec.dumps(fields))
    return target


def load_or_create_token(path: Path) -> str:
    """The token in ``path``, or a new random one written there (0600, folder 0700).

    A file that is not a regular file of this user, or that others may read, is not trusted: a
    new token replaces it.

    Raises:
        OSError: the file cannot be written.
    """
    if is_own_file(path, private=True):
        token = path.read_text().strip()
        if len(token) >= 32:
            return token
    private_dir(path.parent)
    token = secrets.token_urlsafe(32)
    write_atomic(path, token.encode() + b"\n")
    return token


def remove(path: Path) -> None:
    """Delete ``path`` if it can be; a file that is already gone, or not ours to delete, is left."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        logger.debug("cannot remove %s: %s", path, exc)


def read_record(path: Path) -> BrokerRecord | None:
    """The broker a file describes, or None when the file is not one to trust or its pid is dead.

    A file of a dead pid is deleted on the way, when it is ours to delete.
    """
    match = _FILE_NAME.match(path.name)
    if match is None:
        return None
    if not is_own_file(path):
        _ignore(path, "not a regular file of this user")
        return None
    pid = int(match.group(1))
    if not pid_alive(pid):
        logger.debug("removing %s: its broker is gone", path)
        remove(path)
        return None
    if not is_own_file(path, private=True):
        _ignore(path, "other users may read or write it (a broker writes it 0600)")
        return None
    if not is_broker_process(pid):
        _ignore(path, f"pid {pid} is not a browser-mcp broker of this user (a stale file whose pid was reused?)")
        return None
    try:
        data = codec.loads(path.read_bytes())
        record = codec.structure(data, BrokerRecord)
    except (OSError, ValueError, InvalidMessage) as exc:
        logger.debug("ignoring %s: %s", path, exc)
        return None
    if record.pid != int(match.group(1)):
        return None
    return attrs.evolve(record, path=path)


def prune(directory: Path) -> list[Path]:
    """Delete the files of brokers whose pid is dead; return what was deleted."""
    removed = []
    for path in _candidates(directory):
        match = _FILE_NAME.match(path.name)
        if match and not pid_alive(int(match.group(1))) and owned_by_this_user(path):
            remove(path)
            removed.append(path)
    return removed


def live_brokers(directories: Iterable[Path]) -> list[BrokerRecord]:
    """Every live broker described in ``directories``, oldest first."""
    records: dict[int, BrokerRecord] = {}
    for directory in directories:
        for path in _candidates(directory):
            record = read_record(path)
            if record is not None:
                records.setdefault(record.pid, record)
    return sorted(records.values(), key=lambda r: (r.started_at, r.pid))


def matching_brokers(records: Iterable[BrokerRecord], pid: int | None, port: int | None) -> list[BrokerRecord]:
    """The ``records`` with ``pid`` and on ``port`` (None matches any), in their order."""
    return [r for r in records if (pid is None or r.pid == pid) and (port is None or r.port == port)]


def _candidates(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if _FILE_NAME.match(p.name))
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
            logger.debug("cannot list %s: %s", directory, exc)
        return []
