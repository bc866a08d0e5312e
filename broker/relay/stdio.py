"""The process's own stdin and stdout, for the commands that speak a protocol over them.

``browser-mcp mcp`` (JSON-RPC lines to an AI client) and ``browser-mcp native-host`` (length-
prefixed frames to the browser) both need the same care:

- :func:`protect_stdout`, first thing: fd 1 is kept for the protocol under a new number and then
  pointed at stderr, so a stray ``print`` in any library lands on stderr instead of corrupting
  the wire.
- :func:`read_in_thread`: stdin is read by blocking reads in a thread, whose items are posted to
  an asyncio queue, then ``None`` at end of input. That works for every kind of stdin (pipe,
  terminal, file), where the event loop's pipe transport refuses files and would make a terminal
  non-blocking. :func:`lines` is the reader for newline-delimited messages.
- :func:`write_all`: a whole buffer to the protocol fd.
- :func:`log_to_stderr`: logging to stderr at ``LOG_LEVEL`` (debug, info, warning, error).

What it leaves out: what the bytes mean (each command parses its own), and native messaging's
framing (:mod:`broker.install.native_host`). It imports neither aiohttp nor the ``mcp`` SDK: both
commands must start fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["lines", "log_to_stderr", "protect_stdout", "read_in_thread", "write_all"]

logger = logging.getLogger(__name__)

_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def protect_stdout() -> int:
    """Keep fd 1 for the protocol under a new number; point fd 1 (and ``print``) at stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    return protocol_fd


def log_to_stderr(fmt: str) -> None:
    level = os.environ.get("LOG_LEVEL", "info").upper()
    logging.basicConfig(level=level if level in _LEVELS else "INFO", format=fmt, stream=sys.stderr)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``.

    Raises:
        OSError: the reader is gone (``BrokenPipeError``) or the fd is broken.
    """
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def lines(fd: int, limit: int) -> Iterator[bytes]:
    """Each line of ``fd`` without its newline; a line longer than ``limit`` bytes is dropped whole."""
    buffer = bytearray()
    skipping = False  # the rest of a line that was too long
    try:
        while chunk := os.read(fd, 1 << 16):
            start = len(buffer)  # only new bytes can hold a newline not seen yet
            buffer += chunk
            while (end := buffer.find(b"\n", start)) >= 0:
                if not skipping:
                    yield bytes(buffer[:end])
                skipping = False
                del buffer[: end + 1]
                start = 0
            if len(buffer) > limit:
                logger.error("dropping a line longer than %d bytes", limit)
                skipping = True
                buffer.clear()
    except OSError as exc:
        logger.debug("stdin: %s", exc)
    if buffer.strip() and not skipping:
        yield bytes(buffer)


def read_in_thread(items: Iterator[bytes], queue: asyncio.Queue[bytes | None]) -> None:
    """Post each of ``items`` to ``queue`` from a daemon thread, then None when they end.

    Must be called from the running loop that reads ``queue``; ``items`` runs in the thread.
    """
    loop = asyncio.get_running_loop()

    def post(item: bytes | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is listening
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def run() -> None:
        try:
            for item in items:
                post(item)
        except OSError as exc:
            logger.debug("stdin: %s", exc)
        finally:
            post(None)

    threading.Thread(target=run, name="stdin", daemon=True).start()
