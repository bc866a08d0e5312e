"""Finding a live broker for ``browser-mcp mcp``, or starting one in the background.

- Choosing: the live brokers of the discovery files that ``--pid`` / ``--port`` name (the rule
  of :func:`broker.discovery.matching_brokers`, which the one-shot commands share); when several
  match, the oldest, since an AI client that spawned the relay cannot answer "which one?", and
  the oldest broker is the one the extension has most likely joined.
- Starting: when none is alive (and no ``--pid`` was given) ``python -m broker serve`` (with
  ``--port`` when given) starts detached: its own session, so the AI client's kill of the
  relay's process group misses it, and its output appended to ``broker.log`` in the
  platformdirs user log dir, so the broker outlives the client. A lock file (``.start.lock``,
  ``flock``) in the discovery folder makes relays that start together start one broker: the
  first starts it and holds the lock until the broker's discovery file appears; the others then
  find that broker.

What it leaves out: connecting to the broker, and when to look again (the relay decides both),
and rotating ``broker.log`` beyond one old copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

from .. import paths
from ..discovery import BrokerRecord, live_brokers, matching_brokers, read_record
from ..files import private_dir
from .errors import ClientError

__all__ = ["LOCK_FILE_NAME", "LOG_FILE_NAME", "choose_broker", "find_broker", "find_or_start_broker", "start_broker"]

logger = logging.getLogger(__name__)

LOG_FILE_NAME = "broker.log"
LOCK_FILE_NAME = ".start.lock"
# Starting Python and importing the SDK takes over a second here, several on a slow machine.
START_TIMEOUT = 20.0
LOG_ROTATE_BYTES = 10 * 1024 * 1024


def choose_broker(records: list[BrokerRecord], pid: int | None, port: int | None) -> BrokerRecord | None:
    """The oldest of ``records`` (oldest first) matching ``pid`` and ``port`` (either may be None), if any."""
    matching = matching_brokers(records, pid, port)
    if len(matching) > 1:
        logger.info("%d brokers are alive; using the oldest (pid %d)", len(matching), matching[0].pid)
    return matching[0] if matching else None


def find_broker(discovery_dir: Path | None, pid: int | None, port: int | None) -> BrokerRecord | None:
    """The live broker to use now, read afresh from the discovery files."""
    return choose_broker(live_brokers(paths.discovery_dirs(discovery_dir)), pid, port)


async def find_or_start_broker(discovery_dir: Path | None, pid: int | None, port: int | None) -> BrokerRecord:
    """The live broker named by ``pid`` / ``port``; one started when none is and no ``pid`` was given.

    Raises:
        ClientError: the broker named by ``pid`` is not alive, or none could be started.
    """
    found = find_broker(discovery_dir, pid, port)
    if found is not None:
        return found
    if pid is not None:
        raise ClientError(f"no live broker has pid {pid}")
    return await start_broker(discovery_dir, port)


def _open_log(directory: Path) -> tuple[int, Path]:
    """The broker's log file, opened for appending; one previous copy is kept past 10 MB."""
    private_dir(directory)
    path = directory / LOG_FILE_NAME
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > LOG_ROTATE_BYTES:
            path.replace(path.with_name(LOG_FILE_NAME + ".1"))
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), path


@contextlib.asynccontextmanager
async def _start_lock(directory: Path, deadline: float) -> AsyncIterator[None]:
    """Hold ``directory/.start.lock`` (polled, so waiting stays cancellable and bounded).

    Raises:
        ClientError: the folder cannot be written, or another process held the lock past ``deadline``.
    """
    loop = asyncio.get_running_loop()
    try:
        private_dir(directory)
        fd = os.open(directory / LOCK_FILE_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ClientError(f"cannot start a broker: {exc}") from None
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if loop.time() > deadline:
                    raise ClientError(
                        f"another browser-mcp has been starting a broker for too long ({directory / LOCK_FILE_NAME})"
                    ) from None
                await asyncio.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def _spawn(discovery_dir: Path | None, port: int | None) -> tuple[subprocess.Popen[bytes], Path]:
    command = [sys.executable, "-m", "broker", "serve"]
    if discovery_dir is not None:
        command += ["--discovery-dir", str(discovery_dir)]
    if port is not None:
        command += ["--port", str(port)]
    log_fd, log_path = _open_log(paths.log_dir())
    try:
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        os.write(log_fd, f"--- {stamp} browser-mcp mcp (pid {os.getpid()}) starts: {' '.join(command)}\n".encode())
        # Its own session: the AI client's kill of this relay's process group must not reach it.
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd, start_new_session=True
        )
    finally:
        os.close(log_fd)
    # Reap it when it exits: a dead child left as a zombie would still look alive to pid checks.
    threading.Thread(target=process.wait, name="broker-reaper", daemon=True).start()
    return process, log_path


async def start_broker(discovery_dir: Path | None, port: int | None, within: float = START_TIMEOUT) -> BrokerRecord:
    """Start a broker in the background unless one matching ``port`` is alive; return it.

    Raises:
        ClientError: the broker could not be started, exited, or wrote no discovery file in time.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    directory, _ = paths.writable_discovery_dir(discovery_dir)
    async with _start_lock(directory, deadline):
        # Another relay may have started one while this one waited for the lock.
        found = find_broker(discovery_dir, None, port)
        if found is not None:
            return found
        try:
            process, log_path = _spawn(discovery_dir, port)
        except OSError as exc:
            raise ClientError(f"cannot start a broker: {exc}") from None
        logger.info("no broker was running; started one (pid %d, log %s)", process.pid, log_path)
        discovery_file = directory / f"server-{process.pid}.json"
        while True:
            record = read_record(discovery_file)
            if record is not None:
                return record
            code = process.poll()
            if code is not None:
                raise ClientError(f"the broker it started exited with code {code}; see {log_path}")
            if loop.time() > deadline:
                process.terminate()
                raise ClientError(f"the broker it started wrote no discovery file within {within:g} s; see {log_path}")
            await asyncio.sleep(0.05)
