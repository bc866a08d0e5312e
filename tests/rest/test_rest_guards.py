"""The REST door's guards over a real loopback socket: the token, the Host and the Origin, page tool
calls guarded as every request, the broker's header on every answer, and requests that trickle
their headers or come compressed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from typing import Any

import aiohttp
import pytest
import yarl

from broker.version import BROKER_HEADER, VERSION

from ..conftest import TOKEN, BrokerUnderTest, MakeBroker
from ..support.fakes import EXTENSION_ORIGIN
from .rest_shop import shop


async def raw(
    session: aiohttp.ClientSession, broker: BrokerUnderTest, method: str, path: str, **kwargs: Any
) -> tuple[int, Any]:
    async with session.request(method, str(broker.server.make_url(path)), **kwargs) as response:
        return response.status, await response.json()


@pytest.mark.parametrize("path", ["/status", "/tabs", "/tabs/7/tools"])
async def test_missing_token_is_refused(broker: BrokerUnderTest, session: aiohttp.ClientSession, path: str) -> None:
    status, body = await raw(session, broker, "GET", path)
    assert status == 401 and body["error"]["code"] == "unauthorized"
    assert "discovery file" in body["error"]["message"]


@pytest.mark.parametrize("header", [f"Bearer {TOKEN}x", f"Basic {TOKEN}", "Bearer", TOKEN])
async def test_wrong_token_is_refused(broker: BrokerUnderTest, session: aiohttp.ClientSession, header: str) -> None:
    status, body = await raw(session, broker, "GET", "/tabs", headers={"Authorization": header})
    assert status == 401 and body["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8765",
        "127.0.0.1.nip.io",
        "192.168.1.2:80",
        "[::1]evil.example",
        "[::1]:80evil.example",
        "localhost@evil.example",
        "127.0.0.1:80:90",
    ],
)
async def test_foreign_host_is_refused_even_with_the_token(broker: BrokerUnderTest, host: str) -> None:
    status, body = await broker.get("/tabs", headers={"Host": host})
    assert status == 403 and "loopback" in body["error"]["message"]


@pytest.mark.parametrize("host", ["localhost", "localhost:8765", "127.0.0.1:1", "[::1]:8765", "127.1.2.3"])
async def test_loopback_hosts_are_served(broker: BrokerUnderTest, host: str) -> None:
    status, _ = await broker.get("/tabs", headers={"Host": host})
    assert status == 200


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://localhost:3000"])
async def test_web_origin_is_refused_even_with_the_token(broker: BrokerUnderTest, origin: str) -> None:
    status, body = await broker.post("/tabs/7/tools/search", {}, headers={"Origin": origin})
    assert status == 403 and body["error"]["code"] == "forbidden"


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 401, "unauthorized"),
        ({"Authorization": f"Bearer {TOKEN}x"}, 401, "unauthorized"),
        ({"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}, 403, "forbidden"),
        ({"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"}, 403, "forbidden"),
        ({"Authorization": f"Bearer {TOKEN}", "X-Session-Id": "a b"}, 400, "invalid_request"),
        ({"Authorization": f"Bearer {TOKEN}"}, 200, None),
    ],
)
async def test_a_page_tool_call_is_guarded_and_answered_as_every_request(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, headers: dict[str, str], status: int, code: str | None
) -> None:
    """Page tool calls are answered ahead of aiohttp's router (app.answer_tool_calls_first): the same
    guard, error shape and broker header as any other route."""
    await broker.extension(shop())
    await broker.claim(7)
    url = str(broker.server.make_url("/tabs/7/tools/search"))
    async with session.post(url, json={"q": "x"}, headers=headers) as response:
        body = await response.json()
        assert response.status == status, body
        assert response.headers[BROKER_HEADER] == VERSION
    assert body == ({"result": {"q": "x"}} if code is None else body | {"error": body["error"] | {"code": code}})


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/tabs/7/tools/se%61rch", {}),
        ("/tabs/b1%3A7/tools/search", {}),
        ("/tabs/7/tools/search", {"Expect": "100-continue"}),
    ],
)
async def test_a_page_tool_call_through_the_router_is_answered_alike(
    broker: BrokerUnderTest, path: str, headers: dict[str, str]
) -> None:
    """A path with an escape, or a request that expects 100-continue, takes aiohttp's router to the
    same handler: the same answer and header."""
    await broker.extension(shop())
    await broker.claim(7)
    async with broker.client.post(yarl.URL(path, encoded=True), json={"q": "x"}, headers=headers) as response:
        assert (response.status, await response.json()) == (200, {"result": {"q": "x"}})
        assert response.headers[BROKER_HEADER] == VERSION
    status, body = await broker.post("/tabs/7/tools/a%2Fb", {})
    assert status == 404 and body["error"]["code"] == "tool_not_found" and "'a/b'" in body["error"]["message"]


async def test_the_extensions_own_origin_is_served(broker: BrokerUnderTest) -> None:
    status, _ = await broker.get("/status", headers={"Origin": EXTENSION_ORIGIN})
    assert status == 200


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/tabs", {"Authorization": f"Bearer {TOKEN}"}, 200),
        ("/status", {}, 401),
        ("/", {"Origin": EXTENSION_ORIGIN}, 426),
    ],
)
async def test_every_answer_says_it_comes_from_a_broker(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, path: str, headers: dict[str, str], status: int
) -> None:
    """What the extension looks for when it probes a port: errors and refusals carry it too."""
    async with session.get(str(broker.server.make_url(path)), headers=headers) as response:
        assert response.status == status
        assert response.headers[BROKER_HEADER] == VERSION
        if status == 426:
            assert "open a WebSocket" in (await response.json())["error"]["message"]


async def test_a_request_trickling_its_headers_is_dropped(make_broker: MakeBroker) -> None:
    broker = await make_broker(header_timeout=0.5)
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.server.port)
    started = asyncio.get_running_loop().time()
    writer.write(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    await writer.drain()

    async def trickle() -> None:
        with contextlib.suppress(ConnectionError):
            while True:
                writer.write(b"X-Slow: 1\r\n")
                await writer.drain()
                await asyncio.sleep(0.1)

    dripping = asyncio.create_task(trickle())
    try:
        async with asyncio.timeout(5):
            try:
                answer = await reader.read()
            except ConnectionResetError:
                # Closed while headers it had not read were still arriving: the kernel answers
                # the next of them with a reset rather than a plain close.
                answer = b""
            assert answer == b""  # closed by the broker, nothing answered
    finally:
        dripping.cancel()
        writer.close()
    assert asyncio.get_running_loop().time() - started < 5
    assert (await broker.get("/status"))[0] == 200


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", b'{"q": "plain, not gzip"}'),
        ("gzip", gzip.compress(b'{"q": "gzip indeed"}', mtime=0)),
        ("br", b'{"q": "plain"}'),
        ("deflate", b"\x00\x01 not deflate"),
        ("zstd", b"{}"),
        ("x-unknown", b"{}"),
    ],
)
@pytest.mark.parametrize("path", ["/tabs/7/tools/search", "/mcp"])
async def test_a_compressed_body_is_refused_with_415_and_the_connection_serves_on(
    broker: BrokerUnderTest, coding: str, body: bytes, path: str
) -> None:
    await broker.extension(shop())
    await broker.claim(7)
    headers = {"Content-Encoding": coding, "Content-Type": "application/json"}
    headers["Accept"] = "application/json, text/event-stream"
    async with broker.client.post(path, data=body, headers=headers) as response:
        assert response.status == 415
        assert response.headers[BROKER_HEADER] == VERSION
        error = (await response.json())["error"]
    assert error["code"] == "unsupported_encoding" and f"Content-Encoding: {coding}" in error["message"]
    status, answer = await broker.post("/tabs/7/tools/search", {"q": "after"}, headers={"Content-Encoding": "identity"})
    assert status == 200, answer
