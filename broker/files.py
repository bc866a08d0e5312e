"""Files the broker's processes write for themselves or for other programs, and whose they are.

- :func:`write_atomic`: a private temp file beside the target, written, synced and then moved
  over it with ``os.replace``, so a reader (another broker, the native host, a browser reading a
  host manifest) sees the old file, the new one or none, never half of one. The mode is set with
  ``fchmod`` as well as at creation, since ``open``'s mode is filtered by the umask.
- :func:`private_dir`: a folder only this user may enter (0700 when this call creates it; a
  folder that already exists keeps its mode, since it may be shared on purpose).
- :func:`owned_by_this_user` / :func:`owned_by_another_user`: whose a path is, without following
  a symlink at its end; a path that does not exist is nobody's. :func:`is_own_file`: a regular
  file of this user (not a link someone planted), optionally one nobody else may read.

What it leaves out: which folders and file names these are (:mod:`broker.paths`,
:mod:`broker.discovery`), and reading files back.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["is_own_file", "owned_by_another_user", "owned_by_this_user", "private_dir", "write_atomic"]


def private_dir(directory: Path) -> None:
    """Create ``directory`` (and its parents) 0700 unless it exists.

    Raises:
        OSError: it cannot be created.
    """
    try:
        directory.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        return
    directory.chmod(0o700)  # mkdir's mode is filtered by the umask


def write_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with a file holding ``data`` with ``mode``, all at once.

    Raises:
        OSError: the folder cannot be written.
    """
    # The pid keeps two processes writing the same file from sharing a temp file.
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # O_NOFOLLOW: a link planted under the temp name must not redirect the write.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            # Synced before the rename, so a crash cannot leave an empty file under the real name.
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _owner(path: Path) -> int | None:
    try:
        return path.lstat().st_uid
    except FileNotFoundError:
        return None


def owned_by_this_user(path: Path) -> bool:
    return _owner(path) == os.getuid()


def owned_by_another_user(path: Path) -> bool:
    owner = _owner(path)
    return owner is not None and owner != os.getuid()


def is_own_file(path: Path, *, private: bool = False) -> bool:
    """A regular file of this user; with ``private``, one that no other user may read or write."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        return False
    return not (private and info.st_mode & 0o077)
