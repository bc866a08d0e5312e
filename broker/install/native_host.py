"""``browser-mcp native-host``: tells the browser extension which brokers are alive.

An extension cannot read ``/tmp``, so Chrome starts this process for it
(``chrome.runtime.connectNative("browser_mcp.broker")``) and the two speak Chrome native
messaging on stdin/stdout: each message is a 4-byte length in native byte order followed by that
many bytes of UTF-8 JSON. Chrome passes the caller's origin (``chrome-extension://<id>/``) as an
argument, and on Windows a ``--parent-window`` handle; both are only logged.

To the extension, on start, on ``{"type": "refresh"}``, and whenever the set of live brokers
changes::

    {"type": "brokers", "brokers": [{"port", "pid", "token", "version", "protocol", "startedAt"}]}

oldest broker first. ``{"type": "ping"}`` is answered with ``{"type": "pong"}``; any other
message is logged to stderr and ignored. The host exits with 0 when stdin closes (the extension
disconnected) or stdout breaks.

How it notices changes:

- The folders of :func:`broker.paths.discovery_dirs` (or ``--discovery-dir`` /
  ``BROWSER_MCP_DISCOVERY_DIR``) that exist are watched with watchfiles (50 ms debounce, not
  recursive); any event rescans them, so a broker appears or vanishes within about 100 ms.
- Every second the folders are rescanned anyway. That catches a broker whose pid died without
  removing its file (its file is deleted on the way, as every reader does), and folders that
  appear, disappear or are replaced later: the watcher is restarted on the folders that exist
  then. The host never creates a discovery folder (that is the broker's job, with its mode) and
  does not watch their parent, since watching ``/tmp`` would wake it for every file there.
- Every file is judged by :func:`broker.discovery.read_record`: a regular 0600 file of this user,
  well formed, whose pid is alive and is this user's broker (a file that fails is named once on
  stderr).

Stdin and stdout are handled by :mod:`broker.relay.stdio` (stdout protected before anything else runs,
stdin read in a thread); this module owns the framing on them. A list that would exceed Chrome's
1 MB limit for messages to the extension is cut (newest brokers dropped) and the cut logged.
Messages from the extension larger than :data:`MAX_FROM_BROWSER` are skipped.

What it leaves out: connecting to brokers (the extension does that with the port, and makes the
broker prove the link key derived from the token before it tells it anything; the token itself
never leaves the extension), and
Windows registration (see :mod:`broker.install.native_install`). This module imports neither aiohttp nor
the ``mcp`` SDK: Chrome starts a host for every ``connectNative``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .. import codec, paths
from ..discovery import BrokerRecord, live_brokers
from ..relay import stdio
from .native_install import HOST_NAME

__all__ = [
    "HOST_NAME",
    "MAX_FROM_BROWSER",
    "MAX_TO_BROWSER",
    "RESCAN_INTERVAL",
    "Host",
    "add_arguments",
    "brokers_message",
    "encode_frame",
    "main",
]

logger = logging.getLogger(__name__)

# Chrome refuses messages from a host larger than 1 MB.
MAX_TO_BROWSER = 1024 * 1024
# Chrome allows 64 MiB towards the host; the extension only ever sends small commands.
MAX_FROM_BROWSER = 1024 * 1024
RESCAN_INTERVAL = 1.0
WATCH_DEBOUNCE_MS = 50

_LENGTH = struct.Struct("=I")  # native byte order, as Chrome writes it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--discovery-dir", type=Path, help="where discovery files are (default: the usual folders)")
    # Chrome adds the caller's origin, and on Windows --parent-window=N: accepted and logged.
    parser.add_argument("caller", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def encode_frame(message: Any) -> bytes:
    body = codec.dumps(message)
    return _LENGTH.pack(len(body)) + body


def _wire(record: BrokerRecord) -> dict[str, Any]:
    """The record's discovery-file fields, as the codec spells them; where it was read stays here."""
    fields: dict[str, Any] = codec.unstructure(record)
    fields.pop("path", None)
    return fields


def brokers_message(records: Sequence[BrokerRecord]) -> dict[str, Any]:
    """The ``brokers`` message for ``records``, cut so that its frame stays within 1 MB."""
    brokers = [_wire(r) for r in records]
    while brokers and len(encode_frame({"type": "brokers", "brokers": brokers})) > MAX_TO_BROWSER:
        dropped = brokers.pop()
        logger.warning("too many brokers for one message; not listing pid %s", dropped["pid"])
    return {"type": "brokers", "brokers": brokers}


class Host:
    """One extension's connection: the last list it was sent, and what it asks for."""

    def __init__(self, directories: Sequence[Path], out_fd: int) -> None:
        self.directories = list(directories)
        self._out_fd = out_fd
        self._sent: list[dict[str, Any]] | None = None
        self.changed = asyncio.Event()  # something may have changed: rescan now
        self._force = False

    def send(self, message: Any) -> None:
        """Write one frame to the extension.

        Raises:
            BrokenPipeError: the extension is gone.
        """
        stdio.write_all(self._out_fd, encode_frame(message))

    def rescan(self) -> None:
        """Send the live brokers when they differ from what was sent last, or when asked to.

        Raises:
            BrokenPipeError: the extension is gone.
        """
        message = brokers_message(live_brokers(self.directories))
        if self._force or message["brokers"] != self._sent:
            self._force = False
            self._sent = message["brokers"]
            logger.debug("sending %d broker(s)", len(message["brokers"]))
            self.send(message)

    def receive(self, body: bytes) -> None:
        """Handle one message from the extension.

        Raises:
            BrokenPipeError: the extension is gone.
        """
        try:
            message = codec.loads(body)
        except codec.JSONDecodeError as exc:
            logger.warning("ignoring a message that is not JSON: %s", exc)
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "refresh":
            self._force = True
            self.changed.set()
        elif kind == "ping":
            self.send({"type": "pong"})
        else:
            logger.warning("ignoring an unknown message: %.200s", body.decode(errors="replace"))


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes of ``fd``, or None when it ends first."""
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(fd, min(size - len(chunks), 1 << 16))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _frames(fd: int) -> Iterator[bytes]:
    """The body of each message on ``fd``, until it ends (for :func:`broker.relay.stdio.read_in_thread`).

    Raises:
        OSError: reading failed.
    """
    while (header := _read_exactly(fd, _LENGTH.size)) is not None:
        (size,) = _LENGTH.unpack(header)
        if size > MAX_FROM_BROWSER:
            logger.warning("skipping a message of %d bytes from the extension", size)
            while size:
                skipped = _read_exactly(fd, min(size, 1 << 16))
                if skipped is None:
                    return
                size -= len(skipped)
            continue
        body = _read_exactly(fd, size)
        if body is None:
            return
        yield body


def _watchable(directories: Sequence[Path]) -> tuple[tuple[Path, int, int], ...]:
    """The folders that exist and can be listed, with their identity (a replaced folder differs)."""
    found = []
    for directory in directories:
        try:
            info = directory.stat()
        except OSError:
            continue
        if os.access(directory, os.R_OK | os.X_OK):
            found.append((directory, info.st_dev, info.st_ino))
    return tuple(found)


async def _watch(host: Host, stop: asyncio.Event) -> None:
    """Wake ``host`` on every change in its folders, following folders that come and go."""
    from watchfiles import awatch  # noqa: PLC0415 - only the running host needs it

    while not stop.is_set():
        folders = _watchable(host.directories)
        if not folders:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RESCAN_INTERVAL):
                    await stop.wait()
            continue
        # Runs when this task next waits, by which time awatch has set up its watches (watchfiles
        # creates them before its first wait): a rescan then catches whatever changed before.
        asyncio.get_running_loop().call_soon(host.changed.set)
        try:
            async for changes in awatch(
                *(f[0] for f in folders),
                watch_filter=None,
                debounce=WATCH_DEBOUNCE_MS,
                step=WATCH_DEBOUNCE_MS,
                stop_event=stop,
                rust_timeout=int(RESCAN_INTERVAL * 1000),
                yield_on_timeout=True,
                recursive=False,
            ):
                if changes:
                    host.changed.set()
                if _watchable(host.directories) != folders:
                    break  # a folder came, went or was replaced: watch what is there now
        except (OSError, RuntimeError) as exc:
            logger.debug("watching %s: %s", [str(f[0]) for f in folders], exc)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RESCAN_INTERVAL):
                    await stop.wait()


async def _rescan_forever(host: Host) -> None:
    while True:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RESCAN_INTERVAL):
                await host.changed.wait()
        host.changed.clear()
        host.rescan()


async def serve(directories: Sequence[Path], in_fd: int, out_fd: int) -> None:
    """Serve one extension until its stdin ends or its stdout breaks.

    Raises:
        BrokenPipeError: the extension is gone.
    """
    inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
    stdio.read_in_thread(_frames(in_fd), inbox)
    host = Host(directories, out_fd)
    host.rescan()
    stop = asyncio.Event()
    watcher = asyncio.create_task(_watch(host, stop))
    tasks = {asyncio.create_task(_receive_all(host, inbox)), asyncio.create_task(_rescan_forever(host))}
    try:
        # Either stdin ends, or one of them raises (stdout broke).
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()
    finally:
        for task in tasks:
            task.cancel()
        # The watcher runs in a thread that only ``stop`` ends (within one watchfiles step).
        stop.set()
        await asyncio.gather(watcher, *tasks, return_exceptions=True)


async def _receive_all(host: Host, inbox: asyncio.Queue[bytes | None]) -> None:
    while (body := await inbox.get()) is not None:
        host.receive(body)
    logger.debug("stdin closed")


def main(args: argparse.Namespace) -> int:
    """Run the host; 0 when the extension disconnects."""
    out_fd = stdio.protect_stdout()
    stdio.log_to_stderr("%(asctime)s %(levelname)s browser-mcp native-host: %(message)s")
    directories = paths.discovery_dirs(args.discovery_dir)
    logger.info(
        "serving %s; watching %s", " ".join(args.caller) or "an unnamed caller", ", ".join(map(str, directories))
    )
    try:
        asyncio.run(serve(directories, 0, out_fd))
    except BrokenPipeError:
        logger.debug("stdout closed")
    return 0
