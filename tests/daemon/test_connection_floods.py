"""A credential holding many requests open with bodies that never come, a body trickling in, and a
body declared too large: none of them keeps the owner, other clients or the browser's extension
out, on a real broker (a ``browser-mcp serve`` under a lowered limit of open files, or one on a
loopback port) and raw sockets writing what an attacker writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from broker.core.config import DEFAULTS
from broker.core.errors import TooManyConnections
from broker.core.limits import HeldConnections, connection_caps, descriptors_wanted
from broker.core.security import client_token
from broker.version import BROKER_HEADER, VERSION

from ..conftest import TOKEN, MakeBroker
from ..support.cli_helpers import BrokerProcess, Brokers, ReachableBroker, claim, connect_extension
from ..support.fakes import FakeTab
from ..support.mcp_clients import initialize_request
from .limits_shop import shop

# The limit of open files the subprocess brokers run under: a systemd user service's 1,024, made
# smaller so that filling it costs the test little.
FILE_LIMIT = 256
MEBIBYTE = 1024 * 1024

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def _few_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


def slow_request(path: str, token: str, declared: int = MEBIBYTE, method: str = "POST") -> bytes:
    """A request's headers declaring a body of ``declared`` bytes, and the first byte of it."""
    lines = [
        f"{method} {path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Authorization: Bearer {token}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {declared}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n{").encode()


async def open_slow(port: int, request: bytes) -> Connection | None:
    """A connection that sent ``request`` and nothing more; None when the broker closed it first."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
    except ConnectionError:
        writer.close()
        return None
    return reader, writer


async def answer_of(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], Any]:
    """The status, headers and JSON body the broker wrote before closing the connection.

    Raises:
        AssertionError: it closed without an answer.
    """
    try:
        raw = await reader.read()
    except ConnectionResetError:
        raw = b""
    assert raw, "the broker closed the connection without an answer"
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in header_lines)}
    return int(status_line.split()[1]), headers, json.loads(body)


@contextlib.asynccontextmanager
async def held(connections: list[Connection]) -> AsyncIterator[list[Connection]]:
    try:
        yield connections
    finally:
        for _, writer in connections:
            writer.close()


# Under a lowered limit of open files


async def test_client_tokens_holding_slow_bodies_keep_out_neither_the_owner_nor_a_new_extension_link(
    brokers: Brokers, session: aiohttp.ClientSession
) -> None:
    # The attack: client tokens open page tool calls in their own tab declaring a MiB of body and
    # sending one byte, many more than the broker may open files, and keep them open.
    broker: BrokerProcess = await brokers.start(preexec_fn=_few_files)
    await connect_extension(session, broker, shop(7), shop(8), shop(9), shop(10))
    attackers = {7 + n: client_token(broker.token, f"mallory-{n}") for n in range(3)}
    for tab, token in attackers.items():
        await _claim_as(session, broker, token, tab)
    await claim(session, broker, 10, session_id="owner")
    attempts = [
        slow_request(f"/tabs/{tab}/tools/search", token) for _ in range(100) for tab, token in attackers.items()
    ]
    opened = [await open_slow(broker.port, request) for request in attempts]
    flood = [connection for connection in opened if connection is not None]
    async with held(flood):
        # The broker answers those past the caps and closes them (or, not yet read, closes them
        # unanswered): at most the client tokens' share stays open.
        caps = connection_caps(DEFAULTS, FILE_LIMIT)
        ended = [asyncio.ensure_future(_answer_or_close(reader)) for reader, _ in flood]
        async with asyncio.timeout(30):
            while sum(read.done() for read in ended) < len(flood) - caps.clients:
                await asyncio.wait([read for read in ended if not read.done()], return_when=asyncio.FIRST_COMPLETED)
        answers = [read.result() for read in ended if read.done() and read.result() is not None]
        refusals = [error for status, error in answers if status == 429]
        assert refusals, "no refusal was answered"
        for error in refusals:
            assert error["code"] == "too_many_connections" and "open connections" in error["message"], error
            assert f"limit of {FILE_LIMIT} open files" in error["message"]
        # Any other answer is a held body's, cut off at its deadline on a slow machine.
        assert {status for status, _ in answers} <= {429, 408}
        assert len(os.listdir(f"/proc/{broker.pid}/fd")) < FILE_LIMIT - 32
        # With the rest still held: the owner's status, the owner's call, and a new extension link.
        async with asyncio.timeout(30):
            owner = {"Authorization": f"Bearer {broker.token}"}
            async with session.get(f"http://127.0.0.1:{broker.port}/status", headers=owner) as response:
                assert response.status == 200
                assert (await response.json())["connectionLimits"]["fileLimit"] == FILE_LIMIT
            url = f"http://127.0.0.1:{broker.port}/tabs/10/tools/search"
            async with session.post(url, json={}, headers={**owner, "X-Session-Id": "owner"}) as response:
                assert response.status == 200, await response.text()
            second = await connect_extension(session, broker, FakeTab(11, "https://news.example/", "News"))
            await second.close()
        for read in ended:
            read.cancel()


def _low_soft_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


async def test_a_broker_started_under_a_low_soft_limit_raises_it_to_what_its_caps_want(
    brokers: Brokers, session: aiohttp.ClientSession
) -> None:
    # A login service's soft limit is often 1,024 under a far higher hard one.
    broker = await brokers.start(preexec_fn=_low_soft_limit)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    wanted = descriptors_wanted(DEFAULTS)
    raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    async with session.get(
        f"http://127.0.0.1:{broker.port}/status", headers={"Authorization": f"Bearer {broker.token}"}
    ) as response:
        limits = (await response.json())["connectionLimits"]
    caps = connection_caps(DEFAULTS, raised)
    assert limits == {
        "fileLimit": raised,
        "withoutToken": caps.unproven,
        "ownerToken": caps.owner,
        "clientTokens": caps.clients,
        "eachClientToken": caps.per_client,
    }
    if raised == wanted:
        assert (caps.owner, caps.per_client) == (DEFAULTS.max_owner_connections, DEFAULTS.max_connections_per_client)
    assert resource.prlimit(broker.pid, resource.RLIMIT_NOFILE)[0] == raised
    broker.log.seek(0)
    assert f"limit of open files raised from {FILE_LIMIT} to {raised}" in broker.log.read().decode()


async def _claim_as(session: aiohttp.ClientSession, broker: ReachableBroker, token: str, tab: int) -> None:
    url = f"http://127.0.0.1:{broker.port}/tabs/{tab}/claim"
    async with session.post(url, headers={"Authorization": f"Bearer {token}"}) as answer:
        assert answer.status == 200, await answer.text()


async def _answer_or_close(reader: asyncio.StreamReader) -> tuple[int, Any] | None:
    """The broker's answer on a flood connection as (status, error), or None if closed unanswered."""
    try:
        raw = await reader.read()
    except ConnectionResetError:
        return None
    if not raw:
        return None
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"]


# Caps per credential, on a loopback broker


async def test_a_client_token_past_its_connections_is_answered_429_and_the_owner_and_others_go_on(
    make_broker: MakeBroker,
) -> None:
    broker = await make_broker(max_connections_per_client=2, max_client_token_connections=4)
    await broker.extension(shop())
    port = broker.server.port
    mallory, alice, bob = (client_token(TOKEN, name) for name in ("mallory", "alice", "bob"))
    opened: list[Connection] = []
    async with held(opened), asyncio.timeout(30):

        async def slow(token: str, path: str = "/tabs/7/tools/search", method: str = "POST") -> Connection:
            connection = await open_slow(port, slow_request(path, token, method=method))
            assert connection is not None
            opened.append(connection)
            return connection

        for _ in range(2):
            await slow(mallory)
        status, headers, body = await answer_of((await slow(mallory))[0])
        assert status == 429 and body["error"]["code"] == "too_many_connections"
        assert "client token 'mallory' holds 2 open connections" in body["error"]["message"]
        assert headers["connection"] == "close" and headers[BROKER_HEADER.lower()] == VERSION
        # Another client token has room of its own, until the client tokens together fill theirs.
        for _ in range(2):
            await slow(alice)
        status, _, body = await answer_of((await slow(bob, "/status", "GET"))[0])
        assert status == 429 and "client tokens hold 4 open connections together" in body["error"]["message"]
        # The owner and a new extension link still get in.
        assert (await broker.get("/status"))[0] == 200
        await broker.claim(7)
        assert (await broker.post("/tabs/7/tools/search", {}))[0] == 200
        second = await broker.extension(FakeTab(9, "https://news.example/", "News"), instance_id="second")
        await broker.settled(second)


async def test_the_owners_token_past_its_connections_is_answered_429_and_the_extension_still_links(
    make_broker: MakeBroker,
) -> None:
    # A runaway script of the owner's must not take the extension's room either.
    broker = await make_broker(max_owner_connections=2)
    opened: list[Connection] = []
    async with held(opened):
        for _ in range(3):
            connection = await open_slow(broker.server.port, slow_request("/tabs", TOKEN))
            assert connection is not None
            opened.append(connection)
        async with asyncio.timeout(10):
            status, _, body = await answer_of(opened[-1][0])
        assert status == 429 and "the broker's own token holds 2 open connections" in body["error"]["message"]
        fake = await broker.extension(shop())
        await broker.settled(fake)


@pytest.mark.parametrize("refused", ["a link past --max-links", "a plain GET"])
async def test_a_request_to_the_extension_link_that_opens_no_link_leaves_no_connection_open(
    make_broker: MakeBroker, refused: str
) -> None:
    # Such a connection is counted neither as a link nor as one without a token: kept alive, a
    # flood of them would take the files the caps keep.
    broker = await make_broker(max_links=1, header_timeout=60)
    await broker.extension(shop())
    upgrade = (
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n"
        if refused == "a link past --max-links"
        else ""
    )
    request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n{upgrade}\r\n"
    connection = await open_slow(broker.server.port, request.encode())
    assert connection is not None
    async with held([connection]), asyncio.timeout(10):
        status, _, body = await answer_of(connection[0])
    expected = (429, "too_many_links") if upgrade else (426, "websocket_required")
    assert (status, body["error"]["code"]) == expected


def test_the_caps_fit_the_file_limit_and_leave_the_owner_and_the_links_room() -> None:
    for files in (128, 256, 1024, 4096):
        caps = connection_caps(DEFAULTS, files)
        links = DEFAULTS.max_links + DEFAULTS.max_unproven_links
        assert caps.unproven + caps.clients + caps.owner + links + DEFAULTS.spare_descriptors <= files
        assert caps.owner >= caps.unproven + caps.clients and caps.per_client <= caps.clients // 2
    assert connection_caps(DEFAULTS, 1 << 20).owner == DEFAULTS.max_owner_connections


def test_a_connection_kept_alive_that_changes_credential_changes_count() -> None:
    caps = connection_caps(DEFAULTS, FILE_LIMIT)
    held = HeldConnections[str](caps)
    for n in range(caps.per_client):
        held.admit(f"c{n}", "mallory")
    held.admit("c0", "mallory")  # its next request on the same connection: counted once
    with pytest.raises(TooManyConnections, match="client token 'mallory' holds 22 open connections"):
        held.admit("another", "mallory")
    held.admit("c0", None)  # the owner's request on it: mallory's room comes back
    held.admit("another", "mallory")
    assert (held.held_by("mallory"), held.held_by(None)) == (caps.per_client, 1)
    held.closed("c0")
    assert held.held_by(None) == 0 and len(held) == caps.per_client


# Bodies: their time and their size


@pytest.mark.parametrize("path", ["/tabs/7/tools/search", "/tabs", "/mcp"])
async def test_a_body_that_trickles_in_is_cut_off_at_its_deadline_with_408(make_broker: MakeBroker, path: str) -> None:
    broker = await make_broker(body_timeout=0.5)
    await broker.extension(shop())
    await broker.claim(7)
    connection = await open_slow(broker.server.port, slow_request(path, TOKEN))
    assert connection is not None
    reader, writer = connection

    async def trickle() -> None:
        # The attacker's pace: a byte now and then, each well within any time between packets.
        with contextlib.suppress(ConnectionError):
            while True:
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.05)

    dripping = asyncio.create_task(trickle())
    try:
        async with asyncio.timeout(10):
            status, headers, body = await answer_of(reader)
    finally:
        dripping.cancel()
        writer.close()
    assert status == 408 and body["error"]["code"] == "request_timeout"
    assert "did not all come within 0.5 s" in body["error"]["message"]
    assert headers["connection"] == "close"
    assert (await broker.get("/status"))[0] == 200
    # The request cut off may have been the one that started the MCP surface: it started whole.
    mcp_headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with broker.client.post("/mcp", json=initialize_request("After"), headers=mcp_headers) as response:
        assert response.status == 200


async def test_a_body_that_comes_whole_is_served_within_its_deadline_on_a_connection_kept_alive(
    make_broker: MakeBroker,
) -> None:
    broker = await make_broker(body_timeout=0.5)
    await broker.extension(shop())
    await broker.claim(7)
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.server.port)
    body = b'{"q": "x"}'
    head = slow_request("/tabs/7/tools/search", TOKEN, declared=len(body))[:-1]
    writer.write(head)
    await writer.drain()
    writer.write(body)
    await writer.drain()
    async with asyncio.timeout(10):
        assert (await reader.readline()).startswith(b"HTTP/1.1 200")
    writer.close()


@pytest.mark.parametrize(
    ("method", "path"), [("POST", "/tabs/7/tools/search"), ("POST", "/tabs"), ("POST", "/mcp"), ("GET", "/status")]
)
async def test_a_body_declared_over_the_cap_is_refused_with_413_before_it_is_read(
    make_broker: MakeBroker, method: str, path: str
) -> None:
    broker = await make_broker(frame_limit=4096)
    await broker.extension(shop())
    await broker.claim(7)
    connection = await open_slow(broker.server.port, slow_request(path, TOKEN, declared=MEBIBYTE, method=method))
    assert connection is not None
    async with held([connection]), asyncio.timeout(10):
        status, headers, body = await answer_of(connection[0])
    assert status == 413 and body["error"]["code"] == "request_too_large"
    assert f"{MEBIBYTE} bytes is over the limit of 4096 bytes" in body["error"]["message"]
    assert headers["connection"] == "close"
