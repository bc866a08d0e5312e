"""``browser-mcp mcp``: the stdio MCP server an AI client spawns, relayed to a broker.

The process is a relay, not an MCP server: each line the client writes on stdin goes to the
broker's ``/mcp/stream`` WebSocket as one text frame (bearer token from the discovery file), and
each frame back becomes one line on stdout. The broker runs the SDK's server over that stream,
so every MCP decision, in both protocol eras, is the SDK's; one relay is one broker session.
This module imports neither the ``mcp`` SDK nor :mod:`broker.app`: importing the SDK alone takes
about a second, and an AI client waits for its first ``initialize`` reply.

What it owns:

- Finding the broker: the live brokers of the discovery files, chosen by ``--pid`` / ``--port``;
  when several match, the oldest (an AI client cannot answer "which one?"). ``--pid`` names
  the first broker only, since a restarted one has another pid; ``--port`` holds for every
  reconnect. When none is alive (and no ``--pid`` was given) it starts ``python -m broker
  serve`` (with ``--port`` when given) detached: its own session, output appended to
  ``broker.log`` in the platformdirs user log dir, so the broker outlives this client. A lock
  file (``.start.lock``, ``flock``) in the discovery folder makes relays that start together
  start one broker: the first starts it and holds the lock until the broker's discovery file
  appears; the others then find that broker.
- Stdout: fd 1 is duplicated for the protocol and then pointed at stderr, before anything else
  runs, so a stray ``print`` in any library lands on stderr instead of corrupting the wire.
  Logging goes to stderr.
- Surviving the broker going away, with only the JSON-RPC bookkeeping that needs:

  - requests in flight when the link drops: ``tools/call`` gets an ``isError`` result saying the
    broker went away during the call; other requests a JSON-RPC error; ``initialize`` and
    ``subscriptions/listen`` are kept and sent again to the next broker;
  - while no broker is reachable, ``tools/call`` gets an ``isError`` result at once saying so;
    other requests wait for a broker;
  - each reconnect attempt re-reads the discovery files (a restarted broker has a new port and
    token), backing off up to :data:`RETRY_MAX` seconds; it never starts a broker itself after
    the first one, so ``browser-mcp stop`` stays stopped;
  - on reconnect: the client's ``initialize`` (and ``notifications/initialized``) is replayed
    under a private id whose reply is swallowed, open listen requests are sent again, and the
    client is told its tool list changed (2025: ``notifications/tools/list_changed``; 2026: the
    same on each listen stream that asked for it), since its tabs were in the old session.

What it leaves out: every other protocol rule (the SDK in the broker answers malformed messages,
unknown methods and era mismatches; lines that are not JSON are dropped, as the SDK's stdio
server drops them), and rotating ``broker.log`` beyond one old copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import attrs

from . import codec, paths
from .client import ClientError
from .discovery import BrokerRecord, live_brokers, read_record

__all__ = ["LOG_FILE_NAME", "LOCK_FILE_NAME", "Relay", "choose_broker", "main", "protect_stdout", "start_broker"]

logger = logging.getLogger(__name__)

LOG_FILE_NAME = "broker.log"
LOCK_FILE_NAME = ".start.lock"
# Starting Python and importing the SDK takes over a second here, several on a slow machine.
START_TIMEOUT = 20.0
RETRY_FIRST = 0.1
RETRY_MAX = 2.0
# After stdin closes, requests already read get this long to be answered before the relay exits.
DRAIN_TIMEOUT = 1.0
# Ping the broker this often; a broker that stops answering is treated as gone.
HEARTBEAT = 20.0
LINE_LIMIT = 64 * 1024 * 1024  # what the broker's /mcp/stream accepts in one frame
LOG_ROTATE_BYTES = 10 * 1024 * 1024

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
# JSON-RPC "connection closed", the code the SDK uses for a peer that went away.
CONNECTION_CLOSED = -32000
# Requests that are not failed when the link drops but sent again to the next broker.
_KEPT_METHODS = frozenset({"initialize", "subscriptions/listen"})

UNAVAILABLE = (
    "browser-mcp: the broker is not reachable (it stopped or is restarting). This session reconnects"
    " by itself when a broker is back; retry in a moment. If none comes back, start one with"
    " `browser-mcp serve`."
)
GONE_DURING_CALL = (
    "browser-mcp: the broker went away during this call, so whether the page tool ran is unknown."
    " This session reconnects by itself when a broker is back; retry in a moment."
)

Json = dict[str, Any]


# Finding and starting a broker


def choose_broker(records: list[BrokerRecord], pid: int | None, port: int | None) -> BrokerRecord | None:
    """The oldest of ``records`` matching ``pid`` and ``port`` (either may be None), if any.

    Unlike the one-shot commands, several matching brokers are not an error: an AI client that
    spawned this process cannot answer a question, and the oldest broker is the one the
    extension has most likely joined.
    """
    matching = [r for r in records if (pid is None or r.pid == pid) and (port is None or r.port == port)]
    if len(matching) > 1:
        logger.info("%d brokers are alive; using the oldest (pid %d)", len(matching), matching[0].pid)
    return matching[0] if matching else None


def _private_dir(directory: Path) -> None:
    try:
        directory.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        return
    directory.chmod(0o700)  # mkdir's mode is filtered by the umask


def _open_log(directory: Path) -> tuple[int, Path]:
    """The broker's log file, opened for appending; one previous copy is kept past 10 MB."""
    _private_dir(directory)
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
        _private_dir(directory)
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
        found = choose_broker(live_brokers(paths.discovery_dirs(discovery_dir)), None, port)
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


# Stdio


def protect_stdout() -> int:
    """Keep fd 1 for the protocol under a new number; point fd 1 (and ``print``) at stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    return protocol_fd


def _read_lines(fd: int, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes | None]) -> None:
    """A thread: post each line of ``fd`` to ``queue``, then None at end of input.

    Blocking reads in a thread work for every kind of stdin (pipe, terminal, file), where the
    event loop's pipe transport refuses files and would make a terminal non-blocking.
    """

    def post(item: bytes | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is listening
            loop.call_soon_threadsafe(queue.put_nowait, item)

    buffer = bytearray()
    skipping = False  # the rest of a line that was too long
    try:
        while chunk := os.read(fd, 1 << 16):
            start = len(buffer)  # only new bytes can hold a newline not seen yet
            buffer += chunk
            while (end := buffer.find(b"\n", start)) >= 0:
                if not skipping:
                    post(bytes(buffer[:end]))
                skipping = False
                del buffer[: end + 1]
                start = 0
            if len(buffer) > LINE_LIMIT:
                logger.error("dropping a line longer than %d bytes", LINE_LIMIT)
                skipping = True
                buffer.clear()
    except OSError as exc:
        logger.debug("stdin: %s", exc)
    if buffer.strip() and not skipping:
        post(bytes(buffer))
    post(None)


def _request_id(message: Json) -> str | int | None:
    """The message's id when it is one the relay can track (a string or an integer)."""
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


@attrs.define(eq=False)
class _Request:
    """A client request the broker has not answered yet."""

    message: Json
    line: str
    sent: bool = False

    @property
    def method(self) -> str:
        return str(self.message["method"])

    @property
    def modern(self) -> bool:
        params = self.message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        return isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta

    @property
    def wants_tool_changes(self) -> bool:
        params = self.message.get("params")
        wanted = params.get("notifications") if isinstance(params, dict) else None
        return isinstance(wanted, dict) and wanted.get("toolsListChanged") is True


class Relay:
    """One stdio session: client lines to the broker's ``/mcp/stream`` and frames back."""

    def __init__(self, output_fd: int, discovery_dir: Path | None, pid: int | None, port: int | None) -> None:
        self.output_fd = output_fd
        self.discovery_dir = discovery_dir
        self.pid = pid
        self.port = port
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._outbox: asyncio.Queue[tuple[str, _Request | None]] = asyncio.Queue()
        self._pending: dict[str | int, _Request] = {}
        self._settled = asyncio.Event()
        self._settled.set()
        self._broker_requests: set[str | int] = set()
        self._private_ids: set[str] = set()
        self._ids = itertools.count(1)
        self._initialize: Json | None = None
        self._initialized: str | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._up = asyncio.Event()
        self._linked_before = False
        self._client_gone = False

    async def run(self) -> None:
        """Relay until stdin ends or stdout breaks.

        Raises:
            ClientError: no broker is alive and none could be started.
        """
        loop = asyncio.get_running_loop()
        reader = threading.Thread(target=_read_lines, args=(0, loop, self._lines), name="stdin", daemon=True)
        reader.start()
        link = asyncio.create_task(self._link())
        sender = asyncio.create_task(self._send_loop())
        client = asyncio.create_task(self._serve_client())
        try:
            await asyncio.wait({link, client}, return_when=asyncio.FIRST_COMPLETED)
            if link.done():
                link.result()  # it only ends by failing to find or start a broker
        finally:
            for task in (client, sender, link):
                task.cancel()
            await asyncio.gather(client, sender, link, return_exceptions=True)

    # Client side

    async def _serve_client(self) -> None:
        while (line := await self._lines.get()) is not None:
            self._from_client(line)
        logger.debug("stdin closed")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(DRAIN_TIMEOUT):
                await self._settled.wait()

    def _from_client(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return
        try:
            message = codec.loads(line)
        except codec.JSONDecodeError:
            # As the SDK's own stdio server does: a line that is not JSON has no id to answer.
            logger.warning("dropping a line from the client that is not JSON: %.80s", line)
            return
        if not isinstance(message, dict):
            self._outbox.put_nowait((line, None))  # the SDK decides what a wrong JSON-RPC shape gets
            return
        method = message.get("method")
        key = _request_id(message)
        if not isinstance(method, str):
            if key is not None and key in self._broker_requests:
                self._broker_requests.discard(key)
                self._outbox.put_nowait((line, None))
            else:
                logger.debug("dropping the answer to %r: the broker that asked has gone", message.get("id"))
            return
        if method == "notifications/initialized":
            self._initialized = line
        elif method == "notifications/cancelled":
            params = message.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(cancelled, (str, int)):
                self._pending.pop(cancelled, None)  # no answer comes; nothing to replay
                self._update_settled()
        if key is None:
            self._outbox.put_nowait((line, None))
            return
        request = _Request(message, line)
        if method == "initialize":
            self._initialize = message
        if method == "tools/call" and self._linked_before and not self._up.is_set():
            self._answer_unavailable(request, UNAVAILABLE)
            return
        self._pending[key] = request
        self._update_settled()
        self._outbox.put_nowait((line, request))

    def _update_settled(self) -> None:
        if any(r.method != "subscriptions/listen" for r in self._pending.values()):
            self._settled.clear()
        else:
            self._settled.set()

    def _to_client(self, data: bytes) -> None:
        if self._client_gone:
            return
        try:
            view = memoryview(data + b"\n")
            while view:
                view = view[os.write(self.output_fd, view) :]
        except OSError as exc:  # BrokenPipeError: the client has gone, so the session ends
            logger.debug("stdout: %s", exc)
            self._client_gone = True
            self._lines.put_nowait(None)

    def _answer_unavailable(self, request: _Request, text: str) -> None:
        key = request.message["id"]
        if request.method == "tools/call":
            result: Json = {"content": [{"type": "text", "text": text}], "isError": True}
            if request.modern:
                result["resultType"] = "complete"
            self._to_client(codec.dumps({"jsonrpc": "2.0", "id": key, "result": result}))
        else:
            error = {"code": CONNECTION_CLOSED, "message": text}
            self._to_client(codec.dumps({"jsonrpc": "2.0", "id": key, "error": error}))

    # Broker side

    async def _send_loop(self) -> None:
        while True:
            line, request = await self._outbox.get()
            while self._ws is None or not self._up.is_set():
                await self._up.wait()
            if request is not None:
                if self._pending.get(request.message["id"]) is not request:
                    continue  # answered for the broker while it waited: it must not run twice
                request.sent = True
            try:
                await self._ws.send_str(line)
            except (ConnectionError, aiohttp.ClientError) as exc:
                # The link is dying; its end fails or replays the request.
                logger.debug("sending to the broker failed: %s", exc)

    def _find(self) -> BrokerRecord | None:
        # --pid chooses the first broker only: a restarted broker has another pid.
        pid = None if self._linked_before else self.pid
        return choose_broker(live_brokers(paths.discovery_dirs(self.discovery_dir)), pid, self.port)

    async def _first_broker(self) -> BrokerRecord:
        """Raises: ClientError, when the broker named by --pid is not alive or none can be started."""
        found = self._find()
        if found is not None:
            return found
        if self.pid is not None:
            raise ClientError(f"no live broker has pid {self.pid}")
        return await start_broker(self.discovery_dir, self.port)

    async def _link(self) -> None:
        record: BrokerRecord | None = await self._first_broker()
        loop = asyncio.get_running_loop()
        delay = RETRY_FIRST
        failures = 0
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            while True:
                ws = await self._connect(http, record, loud=failures == 0) if record is not None else None
                if ws is not None and record is not None:
                    failures = 0
                    linked_at = loop.time()
                    try:
                        async with ws:
                            await self._serve_link(ws, record)
                    except (ConnectionError, aiohttp.ClientError) as exc:
                        logger.debug("the link to the broker failed: %s", exc)
                    logger.warning(
                        "the broker (pid %d, port %d) went away; reconnecting when one is back", record.pid, record.port
                    )
                    self._link_lost()
                    # Only a link that held resets the backoff: one dropped at once must not spin.
                    if loop.time() - linked_at > RETRY_MAX:
                        delay = RETRY_FIRST
                elif record is not None:
                    failures += 1
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                record = self._find()

    async def _connect(
        self, http: aiohttp.ClientSession, record: BrokerRecord, loud: bool
    ) -> aiohttp.ClientWebSocketResponse | None:
        try:
            return await http.ws_connect(
                f"ws://127.0.0.1:{record.port}/mcp/stream",
                headers={"Authorization": f"Bearer {record.token}"},
                heartbeat=HEARTBEAT,
                max_msg_size=0,  # the broker bounds what it sends; a page's result may be large
            )
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            # Said once per outage; the attempts after it would only repeat it.
            logger.log(
                logging.WARNING if loud else logging.DEBUG, "cannot reach the broker on port %d: %s", record.port, exc
            )
            return None

    async def _serve_link(self, ws: aiohttp.ClientWebSocketResponse, record: BrokerRecord) -> None:
        reconnect = self._linked_before
        self._linked_before = True
        self._broker_requests.clear()
        await self._resume(ws, reconnect)
        self._ws = ws
        self._up.set()
        logger.info(
            "%s the broker (pid %d, port %d)", "reconnected to" if reconnect else "using", record.pid, record.port
        )
        try:
            async for frame in ws:
                if frame.type is aiohttp.WSMsgType.TEXT:
                    self._from_broker(frame.data)
        finally:
            self._up.clear()
            self._ws = None

    async def _resume(self, ws: aiohttp.ClientWebSocketResponse, reconnect: bool) -> None:
        """Bring a new broker to where the old one was; the first link has nothing to resume."""
        if not reconnect:
            return
        init = self._initialize
        if init is not None and init["id"] not in self._pending:
            # The session was established with the old broker: open one like it on the new one.
            private = f"browser-mcp-relay-{next(self._ids)}"
            self._private_ids.add(private)
            await ws.send_str(codec.dumps_text({**init, "id": private}))
            if self._initialized is not None:
                await ws.send_str(self._initialized)
        for request in self._pending.values():
            # Kept requests the old broker had: initialize in flight, open listen streams.
            if request.sent:
                await ws.send_str(request.line)
        notice: Json = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        if init is not None and init["id"] not in self._pending:
            self._to_client(codec.dumps(notice))
        for key, request in self._pending.items():
            if request.method == "subscriptions/listen" and request.sent and request.wants_tool_changes:
                self._to_client(codec.dumps({**notice, "params": {"_meta": {SUBSCRIPTION_ID_META_KEY: key}}}))

    def _from_broker(self, data: str) -> None:
        try:
            message = codec.loads(data)
        except codec.JSONDecodeError:
            logger.warning("dropping a frame from the broker that is not JSON")
            return
        if not isinstance(message, dict):
            logger.warning("dropping a frame from the broker that is not a JSON-RPC message")
            return
        key = _request_id(message)
        if key is not None and "method" in message:
            self._broker_requests.add(key)
        elif key is not None:
            if isinstance(key, str) and key in self._private_ids:
                self._private_ids.discard(key)
                if "error" in message:
                    logger.warning("the broker refused the replayed initialize: %s", message["error"])
                return
            self._pending.pop(key, None)
            self._update_settled()
        # Frames are single lines of compact JSON; re-encode only one that is not.
        self._to_client(codec.dumps(message) if "\n" in data else data.encode())

    def _link_lost(self) -> None:
        self._broker_requests.clear()
        self._private_ids.clear()
        for key, request in list(self._pending.items()):
            if request.method == "tools/call":
                del self._pending[key]
                self._answer_unavailable(request, GONE_DURING_CALL if request.sent else UNAVAILABLE)
            elif request.sent and request.method not in _KEPT_METHODS:
                del self._pending[key]
                self._answer_unavailable(request, "browser-mcp: the broker went away before answering; retry")
            # Unsent requests wait for the next broker; kept ones are sent to it again.
        self._update_settled()


def _log_level() -> str:
    level = os.environ.get("LOG_LEVEL", "info").upper()
    return level if level in ("DEBUG", "INFO", "WARNING", "ERROR") else "INFO"


def main(discovery_dir: Path | None, pid: int | None, port: int | None) -> int:
    """Run one stdio session; 0 when the client closed stdin.

    Raises:
        ClientError: no broker is alive and none could be started.
    """
    output_fd = protect_stdout()
    logging.basicConfig(level=_log_level(), format="browser-mcp mcp: %(levelname)s %(message)s", stream=sys.stderr)

    async def relay() -> None:
        await Relay(output_fd, discovery_dir, pid, port).run()

    asyncio.run(relay())
    return 0
