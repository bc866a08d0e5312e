"""``browser-mcp mcp``: the stdio MCP server an AI client spawns, relayed to a broker.

The process is a relay, not an MCP server: each line the client writes on stdin goes to the
broker's ``/mcp/stream`` WebSocket as one text frame (bearer token from the discovery file), and
each frame back becomes one line on stdout. The broker runs the SDK's server over that stream,
so every MCP decision, in both protocol eras, is the SDK's; one relay is one broker session.
This module imports neither the ``mcp`` SDK nor :mod:`broker.app`: importing the SDK alone takes
about a second, and an AI client waits for its first ``initialize`` reply.

This module is the adapter gluing three parts:

- :mod:`broker.relay.finder`: which broker (``--pid`` names the first broker only, since a
  restarted one has another pid; ``--port`` holds for every reconnect), and starting one when
  none is alive at first;
- :mod:`broker.relay.stdio`: stdout protected before anything else runs, stdin read in a thread,
  logging to stderr;
- :class:`broker.core.relay_state.RelayState`: what to send where as messages pass and the broker
  link comes and goes (what in-flight requests are answered, what is replayed after a restart).

What it owns itself: JSON parsing (lines that are not JSON are dropped, as the SDK's stdio server
drops them; a long request line or answer frame is routed by its head and passed on unparsed),
the aiohttp WebSocket to the broker with its heartbeat (opened only once the server on the
record's port proved it holds the record's token, ``POST /auth/challenge``; never through a
proxy), and reconnecting: each attempt re-reads
the discovery files (a restarted broker has a new port and token), backing off up to
:data:`RETRY_MAX` seconds. A broker that refuses the session (its token holds as many sessions
as it may: 429 ``too_many_sessions``) is asked why, and the client hears that error at once on
every request that waits or comes (:meth:`RelayState.refused`); the relay then tries again from
:data:`REFUSED_FIRST` seconds, doubling up to :data:`REFUSED_MAX`, so a slot that frees is taken
without a busy broker being asked several times a second. It never starts a broker itself after the first one, so
``browser-mcp stop`` stays stopped. After stdin closes, requests already read get
:data:`DRAIN_TIMEOUT` seconds to be answered; a broken stdout ends the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
from pathlib import Path
from urllib.parse import quote

import aiohttp

from .. import codec, loop
from ..core import link_auth
from ..core.relay_state import READS_PARAMS, Effect, RelayState, RequestId, SendToClient
from ..discovery import BrokerRecord
from ..uploads import WORKDIR_HEADER
from . import stdio
from .client import ClientError, check_broker_proof
from .finder import find_broker, find_or_start_broker

__all__ = ["Relay", "main"]

logger = logging.getLogger(__name__)

RETRY_FIRST = 0.1
RETRY_MAX = 2.0
# A refused upgrade whose answer named no error of the broker's (a proxy, an older broker).
SESSION_REFUSED = "session_refused"
# After the broker refused the session: the first wait before asking again, and the longest.
REFUSED_FIRST = 1.0
REFUSED_MAX = 30.0
DRAIN_TIMEOUT = 1.0
# Ping the broker this often; a broker that stops answering is treated as gone.
HEARTBEAT = 20.0
LINE_LIMIT = 64 * 1024 * 1024  # what the broker's /mcp/stream accepts in one frame


class _Refused(Exception):
    """The broker answered the link's upgrade with an error: its ``code``, and ``why``, the code and
    message as the client reads them."""

    def __init__(self, code: str, why: str) -> None:
        super().__init__(why)
        self.code = code
        self.why = why


class Relay:
    """One stdio session: client lines to the broker's ``/mcp/stream`` and frames back."""

    def __init__(
        self, output_fd: int, discovery_dir: Path | None, pid: int | None, port: int | None, caps: str | None = None
    ) -> None:
        self.output_fd = output_fd
        self.caps = caps
        self.discovery_dir = discovery_dir
        self.pid = pid
        self.port = port
        self.state = RelayState(read=codec.loads)
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        # The current link's frames to send, in the order the state gave them; None while down.
        self._to_broker: asyncio.Queue[str] | None = None
        self._settled = asyncio.Event()
        self._settled.set()
        self._client_gone = False

    async def run(self) -> None:
        """Relay until stdin ends or stdout breaks.

        Raises:
            ClientError: no broker is alive and none could be started.
        """
        stdio.read_in_thread(stdio.lines(0, LINE_LIMIT), self._lines)
        link = asyncio.create_task(self._link())
        client = asyncio.create_task(self._serve_client())
        try:
            await asyncio.wait({link, client}, return_when=asyncio.FIRST_COMPLETED)
            if link.done():
                link.result()  # it only ends by failing to find or start a broker
        finally:
            for task in (client, link):
                task.cancel()
            await asyncio.gather(client, link, return_exceptions=True)

    def _apply(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, SendToClient):
                line = effect.line
                # Frames are single lines of compact JSON; re-encode only one that is not.
                self._to_client(line.encode() if line is not None and "\n" not in line else codec.dumps(effect.message))
            elif self._to_broker is not None:
                self._to_broker.put_nowait(effect.line if effect.line is not None else codec.dumps_text(effect.message))
            else:
                # Only while the relay is being cancelled: the state sends only while a link is up.
                logger.debug("not sending to the broker: the link is closing")
        if self.state.settled:
            self._settled.set()
        else:
            self._settled.clear()

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
        head = _request_head(line) if len(line) > _READ_WHOLE else None
        if head is not None:
            self._apply(self.state.from_client_head(*head, line))
            return
        try:
            message = codec.loads(line)
        except codec.JSONDecodeError:
            # As the SDK's own stdio server does: a line that is not JSON has no id to answer.
            logger.warning("dropping a line from the client that is not JSON: %.80s", line)
            return
        self._apply(self.state.from_client(message, line))

    def _to_client(self, data: bytes) -> None:
        if self._client_gone:
            return
        try:
            stdio.write_all(self.output_fd, data + b"\n")
        except OSError as exc:  # BrokenPipeError: the client has gone, so the session ends
            logger.debug("stdout: %s", exc)
            self._client_gone = True
            self._lines.put_nowait(None)

    # Broker side

    async def _link(self) -> None:
        record: BrokerRecord | None = await find_or_start_broker(self.discovery_dir, self.pid, self.port)
        loop = asyncio.get_running_loop()
        delay = RETRY_FIRST
        failures = 0
        # trust_env stays off: a proxy of the environment must never see the link or the token.
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10), trust_env=False) as http:
            refusals = 0
            while True:
                try:
                    ws = await self._connect(http, record, loud=failures == 0) if record is not None else None
                except _Refused as refused:
                    ws = None
                    refusals += 1
                    self._refused(refused.code, refused.why, refusals == 1)
                else:
                    refusals = 0
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
                    # Only a link that held resets the backoff: one dropped at once must not spin.
                    if loop.time() - linked_at > RETRY_MAX:
                        delay = RETRY_FIRST
                elif record is not None:
                    failures += 1
                # A refusal holds until a session ends: asked again ever less often, not spun on.
                cap = REFUSED_MAX if refusals else RETRY_MAX
                delay = min(max(delay, REFUSED_FIRST) if refusals else delay, cap)
                if refusals:
                    logger.debug("refused %d times; asking again in %g s", refusals, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, cap)
                # --pid chooses the first broker only: a restarted broker has another pid.
                record = find_broker(self.discovery_dir, None if self.state.linked_before else self.pid, self.port)

    def _refused(self, code: str, why: str, first: bool) -> None:
        # Said once per run of refusals; the client hears it on each of its requests.
        logger.log(logging.WARNING if first else logging.DEBUG, "the broker refused this session: %s", why)
        text = (
            f"browser-mcp: the broker refused this session: {why}. This session asks again by itself,"
            f" less and less often (at most every {REFUSED_MAX:g} s), and works once the broker takes it."
        )
        self._apply(self.state.refused(code, text))

    async def _connect(
        self, http: aiohttp.ClientSession, record: BrokerRecord, loud: bool
    ) -> aiohttp.ClientWebSocketResponse | None:
        """The link, or None when the broker cannot be reached or did not prove itself.

        Raises:
            _Refused: the broker answered the upgrade with a client error (429 ``too_many_sessions``).
        """
        url = f"ws://127.0.0.1:{record.port}/mcp/stream"
        if self.caps:
            url += f"?caps={quote(self.caps)}"
        headers = {"Authorization": f"Bearer {record.token}", WORKDIR_HEADER: quote(os.getcwd())}
        try:
            if not await self._proven(http, record, loud):
                return None
            return await http.ws_connect(
                url,
                headers=headers,
                heartbeat=HEARTBEAT,
                max_msg_size=0,  # the broker bounds what it sends; a page's result may be large
            )
        except aiohttp.WSServerHandshakeError as exc:
            if not 400 <= exc.status < 500:
                logger.log(logging.WARNING if loud else logging.DEBUG, "the broker answered %d", exc.status)
                return None
            raise _Refused(*await _why_refused(http, record, headers, exc.status)) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            # Said once per outage; the attempts after it would only repeat it.
            logger.log(
                logging.WARNING if loud else logging.DEBUG, "cannot reach the broker on port %d: %s", record.port, exc
            )
            return None

    async def _proven(self, http: aiohttp.ClientSession, record: BrokerRecord, loud: bool) -> bool:
        """Whether the server on the record's port proved it holds the record's token (before the token goes).

        Raises:
            aiohttp.ClientError, OSError, TimeoutError: it cannot be reached.
        """
        nonce = link_auth.b64(secrets.token_bytes(32))
        async with http.post(f"{record.url}/auth/challenge", json={"nonce": nonce}) as response:
            try:
                answer = await response.json(content_type=None) if response.status == 200 else None
            except ValueError:
                answer = None
        try:
            check_broker_proof(record, nonce, answer)
        except ClientError as exc:
            logger.log(logging.WARNING if loud else logging.DEBUG, "%s", exc)
            return False
        return True

    async def _serve_link(self, ws: aiohttp.ClientWebSocketResponse, record: BrokerRecord) -> None:
        """Carry frames both ways until the link closes.

        Raises:
            ConnectionError, aiohttp.ClientError: the link failed.
        """
        reconnect = self.state.linked_before
        outbox: asyncio.Queue[str] = asyncio.Queue()
        # One sender per link keeps frames in order; frames of a lost link die with its queue.
        sender = asyncio.create_task(self._send_all(ws, outbox))
        self._to_broker = outbox
        cancelled = False
        try:
            self._apply(self.state.link_up())
            logger.info(
                "%s the broker (pid %d, port %d)", "reconnected to" if reconnect else "using", record.pid, record.port
            )
            async for frame in ws:
                if frame.type is aiohttp.WSMsgType.TEXT:
                    self._from_broker(frame.data)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            self._to_broker = None
            # Before the socket's closing handshake, so that what the client sends meanwhile
            # waits for the next broker; a relay being cancelled is ending and answers nothing.
            if not cancelled:
                self._apply(self.state.link_down())
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)

    async def _send_all(self, ws: aiohttp.ClientWebSocketResponse, outbox: asyncio.Queue[str]) -> None:
        while True:
            line = await outbox.get()
            try:
                await ws.send_str(line)
            except (ConnectionError, aiohttp.ClientError) as exc:
                # The link is dying; its end answers or replays what was sent on it.
                logger.debug("sending to the broker failed: %s", exc)
                return

    def _from_broker(self, data: str) -> None:
        message = _answer_head(data) if len(data) > _READ_WHOLE else None
        if message is None:
            try:
                message = codec.loads(data)
            except codec.JSONDecodeError:
                logger.warning("dropping a frame from the broker that is not JSON")
                return
        self._apply(self.state.from_broker(message, data))


async def _why_refused(
    http: aiohttp.ClientSession, record: BrokerRecord, headers: dict[str, str], status: int
) -> tuple[str, str]:
    """The broker's error for a refused upgrade (its code, and ``code: message``), asked again
    without the upgrade: the handshake's answer keeps its body from the WebSocket client."""
    try:
        async with http.get(f"{record.url}/mcp/stream", headers=headers) as response:
            error = (await response.json(content_type=None)).get("error")
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str):
        return error["code"], f"{error['code']}: {error['message']}"
    return SESSION_REFUSED, f"HTTP {status}"


# Lines and frames up to this size are parsed whole; a larger one (a tools/call with large
# arguments, the tools/list of many tabs) is routed by its head when it is a plain request or
# answer, and passed on as it came.
_READ_WHOLE = 64 * 1024
_ID = r'(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")'
# How the broker's SDK writes an answer: compact, jsonrpc then id then result.
_ANSWER_HEAD = re.compile(r'\{"jsonrpc":"2\.0","id":' + _ID + r',"result":')
# How the SDKs write a request, compact: the Python one jsonrpc, id, method, params; the
# TypeScript one method, params, jsonrpc, id. A line that ends with `"id":X}` has its own id
# there: a nested object's would be followed by the outer object's closing brace.
_REQUEST_HEAD = re.compile(r'\{"jsonrpc":"2\.0","id":' + _ID + r',"method":"([\w/.-]{1,100})"')
_METHOD_HEAD = re.compile(r'\{"method":"([\w/.-]{1,100})"')
_ID_TAIL = re.compile(r',"jsonrpc":"2\.0","id":' + _ID + r"\}\Z")


def _request_head(line: str) -> tuple[RequestId, str] | None:
    """A long request's id and method, read from its ends; None when it must be read whole."""
    found = _REQUEST_HEAD.match(line, 0, 400)
    if found is not None:
        key, method = found.group(1), found.group(2)
    else:
        head, tail = _METHOD_HEAD.match(line, 0, 200), _ID_TAIL.search(line, max(0, len(line) - 300))
        if head is None or tail is None:
            return None
        key, method = tail.group(1), head.group(1)
    if method in READS_PARAMS:
        return None
    request_id: RequestId = codec.loads(key)
    return request_id, method


def _answer_head(frame: str) -> dict[str, object] | None:
    """What the relay needs of a large answer (its id), read from its first bytes only."""
    found = _ANSWER_HEAD.match(frame, 0, 300)
    if found is None:
        return None
    return {"jsonrpc": "2.0", "id": codec.loads(found.group(1)), "result": None}


def main(discovery_dir: Path | None, pid: int | None, port: int | None, caps: str | None = None) -> int:
    """Run one stdio session; 0 when the client closed stdin.

    Raises:
        ClientError: no broker is alive and none could be started.
    """
    output_fd = stdio.protect_stdout()
    stdio.log_to_stderr("browser-mcp mcp: %(levelname)s %(message)s")

    async def relay() -> None:
        await Relay(output_fd, discovery_dir, pid, port, caps).run()

    loop.run(relay())
    return 0
