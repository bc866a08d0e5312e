"""The person's script library on disk: the folder ``browser-mcp scripts path`` names, its scripts
listed and read for browser_scripts and browser_run_script (:mod:`broker.core.script_rules` holds
the rules of names and descriptions).

What runs in a page without the person's approval must be what the person wrote, so the folder is
refused when it is not this user's or another user may write to it, and so is each script that is
a link (opened with ``O_NOFOLLOW`` beside the folder's own descriptor, so no link planted between
the check and the read is followed), not a regular file, not this user's, writable by another
user, too large or not UTF-8. Names are checked before anything is opened.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import attrs

from .core.errors import Forbidden, InvalidRequest, InvalidScriptName
from .core.messages import JsonObject
from .core.script_rules import MAX_SCRIPT_BYTES, MAX_SCRIPTS, SUFFIX, description_of, script_name
from .files import private_dir

__all__ = ["Library", "Script", "listed", "read_script"]


@attrs.frozen
class Script:
    """One script of the folder: its description and the hash of its text, or why it is refused."""

    name: str
    description: str = ""
    digest: str = ""
    source: str = ""
    refused: str = ""


def _others_write(info: os.stat_result) -> bool:
    return bool(info.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


@contextlib.contextmanager
def _folder(folder: Path) -> Iterator[int]:
    """The folder, created 0700 when missing, open as a directory once it passes the checks.

    Raises:
        Forbidden: it is not this user's, or another user may write to it.
    """
    try:
        private_dir(folder)
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise Forbidden(f"the person's scripts folder {folder} cannot be opened: {exc.strerror}") from None
    try:
        info = os.fstat(handle)
        if info.st_uid != os.getuid():
            raise Forbidden(f"the person's scripts folder {folder} belongs to another user: its scripts are not run")
        if _others_write(info):
            raise Forbidden(
                f"the person's scripts folder {folder} may be written by other users (mode"
                f" {stat.S_IMODE(info.st_mode):o}): its scripts are not run until it is chmod go-w"
            )
        yield handle
    finally:
        os.close(handle)


def _script(folder: int, name: str, *, with_source: bool) -> Script:
    """The script ``name`` (checked) of the open ``folder``, or why it is refused ("missing")."""
    try:
        handle = os.open(name + SUFFIX, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Script(name, refused="it is a link: a script must be a file of the folder itself")
        if exc.errno == errno.ENOENT:
            return Script(name, refused="missing")
        return Script(name, refused=f"it cannot be opened: {exc.strerror}")
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            return Script(name, refused="it is not a regular file")
        if info.st_uid != os.getuid():
            return Script(name, refused="it belongs to another user")
        if _others_write(info):
            return Script(name, refused=f"other users may write to it (mode {stat.S_IMODE(info.st_mode):o})")
        data = os.read(handle, MAX_SCRIPT_BYTES + 1)
    finally:
        os.close(handle)
    if len(data) > MAX_SCRIPT_BYTES:
        return Script(name, refused=f"it is larger than {MAX_SCRIPT_BYTES // 1024} KiB")
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        return Script(name, refused="it is not UTF-8 text")
    digest = hashlib.sha256(data).hexdigest()
    return Script(name, description_of(source), digest, source if with_source else "")


def listed(folder: Path) -> list[Script]:
    """The folder's scripts by name (at most :data:`MAX_SCRIPTS`), each with its description or
    why it is refused; files whose names no script may have are left out.

    Raises:
        Forbidden: the folder itself is refused.
    """
    with _folder(folder) as handle:
        names = []
        for entry in sorted(os.listdir(handle)):
            if not entry.endswith(SUFFIX):
                continue
            with contextlib.suppress(InvalidScriptName):
                if script_name(entry) == entry[: -len(SUFFIX)]:
                    names.append(entry[: -len(SUFFIX)])
        return [_script(handle, name, with_source=False) for name in names[:MAX_SCRIPTS]]


def read_script(folder: Path, name: str) -> Script:
    """The script ``name`` (checked by :func:`~broker.core.script_rules.script_name` before this)
    with its source.

    Raises:
        Forbidden: the folder or the script is refused.
        InvalidRequest: there is no such script.
    """
    with _folder(folder) as handle:
        script = _script(handle, name, with_source=True)
    if script.refused == "missing":
        raise InvalidRequest(f"the person has no script {name!r} in {folder}: browser_scripts lists theirs")
    if script.refused:
        raise Forbidden(f"the person's script {name!r} is refused: {script.refused}")
    return script


# The sessions whose listings are kept, the oldest forgotten first.
_KEPT_SESSIONS = 1024


class Library:
    """The folder, and what each session was last shown of it (name -> hash), so that a script
    changed since is run as it is and its answer says so."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._listed: OrderedDict[str, dict[str, str]] = OrderedDict()

    def arguments(self, session: str, action: str, args: JsonObject) -> JsonObject:
        """The action's arguments with what the broker adds: for browser_scripts the listing, for
        browser_run_script the script's source and whether it changed since the session listed it.

        Raises:
            Forbidden: the folder or the script is refused.
            InvalidRequest: there is no such script.
        """
        if action == "scripts":
            scripts = listed(self.folder)
            self._listed[session] = {script.name: script.digest for script in scripts if not script.refused}
            self._listed.move_to_end(session)
            while len(self._listed) > _KEPT_SESSIONS:
                self._listed.popitem(last=False)
            shown = [attrs.asdict(script, filter=lambda field, value: field.name != "source") for script in scripts]
            return {**args, "folder": str(self.folder), "scripts": shown}
        script = read_script(self.folder, args["name"])
        before = self._listed.get(session, {}).get(script.name)
        return {**args, "source": script.source, "changed": before is not None and before != script.digest}
