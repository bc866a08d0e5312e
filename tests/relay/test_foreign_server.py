"""The owner's token goes only to a server that proved it is the broker, and never through a proxy.

A discovery file can outlive its broker: its pid may then belong to another program of the same
user, and its port to any server. Such a server (here an aiohttp app that records every request's
headers and answers like a broker would, bogus proof included) must receive no token from the
command line, the stdio relay or the native host, and the person hears a clear error. And the
environment's proxy settings, meant for the web, never see a loopback request.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from broker.version import BROKER_HEADER

from ..harness.page_server import serve_app
from ..install.test_native_host import Host
from ..support.cli_helpers import Brokers, discovery_fields, lookalike_broker, plant, run_cli
from .test_mcp_stdio import raw_relay


class Recorder:
    """A server that answers every request as a broker would and keeps every request's headers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.answer)

    async def answer(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.method, request.path_qs, dict(request.headers)))
        if request.path == "/auth/challenge":
            body: dict[str, Any] = {"brokerId": "0" * 32, "proof": "A" * 43}
        else:
            body = {"tabs": [], "brokers": []}
        return web.json_response(body, headers={BROKER_HEADER: "0.1.0"})

    def saw(self, secret: str) -> list[tuple[str, str]]:
        """The requests that carried ``secret`` anywhere in their line or headers."""
        return [(m, p) for m, p, h in self.requests if secret in p or any(secret in v for v in h.values())]


@pytest.fixture
async def foreign() -> AsyncIterator[tuple[Recorder, int]]:
    recorder = Recorder()
    async with serve_app(recorder.app) as url:
        yield recorder, int(url.rsplit(":", 1)[1])


@contextlib.contextmanager
def process(kind: str) -> Iterator[int]:
    """A live process of this user: another program (``sleep``), or one whose command line is a broker's."""
    child = lookalike_broker() if kind == "broker-lookalike" else subprocess.Popen(["sleep", "120"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


TOKEN = "the-owners-token-0123456789abcdef"


async def relay_until(relay: asyncio.subprocess.Process, phrase: str) -> str:
    """What ``browser-mcp mcp`` logged up to ``phrase``; its stdin is then closed, and it ends."""
    assert relay.stdin is not None and relay.stderr is not None
    heard = b""
    async with asyncio.timeout(20):
        while phrase.encode() not in heard:
            line = await relay.stderr.readline()
            assert line, f"the relay ended without saying {phrase!r}: {heard.decode()}"
            heard += line
    relay.stdin.close()
    async with asyncio.timeout(20):
        await relay.communicate()
    return heard.decode()


@pytest.mark.parametrize("kind", ["other-program", "broker-lookalike"])
async def test_the_command_line_never_sends_the_token_to_a_server_that_did_not_prove_it_is_the_broker(
    discovery_dir: Path, foreign: tuple[Recorder, int], kind: str
) -> None:
    recorder, port = foreign
    with process(kind) as pid:
        plant(discovery_dir, f"server-{pid}.json", discovery_fields(pid, port, token=TOKEN))
        for command in (["tabs"], ["status"], ["stop"], ["call", "7", "search"]):
            result = await run_cli(*command, discovery_dir=discovery_dir)
            if kind == "other-program":
                # The file is not believed, and the person is told why.
                assert result.returncode == 1, (command, result)
                assert f"pid {pid} is not a browser-mcp broker" in result.stderr, (command, result)
            elif command == ["status"]:
                # status lists every broker, with what went wrong in the place of its details.
                assert f"the server on port {port} did not prove it is the broker" in result.stdout, result
            else:
                result.assert_failed_saying(f"the server on port {port} did not prove it is the broker", "not sending")
    assert recorder.saw(TOKEN) == []
    if kind == "other-program":
        assert recorder.requests == []


@pytest.mark.parametrize("kind", ["other-program", "broker-lookalike"])
async def test_the_stdio_relay_never_sends_the_token_to_a_server_that_did_not_prove_it_is_the_broker(
    discovery_dir: Path, foreign: tuple[Recorder, int], kind: str, tmp_path: Path
) -> None:
    recorder, port = foreign
    with process(kind) as pid:
        plant(discovery_dir, f"server-{pid}.json", discovery_fields(pid, port, token=TOKEN))
        relay = await raw_relay(discovery_dir, tmp_path / "state", "--pid", str(pid))
        expected = "no live broker has pid" if kind == "other-program" else "did not prove it is the broker"
        heard = await relay_until(relay, expected)
    assert "Traceback" not in heard
    assert recorder.saw(TOKEN) == []
    assert all(path == "/auth/challenge" for _, path, _ in recorder.requests)


async def test_the_native_host_does_not_name_a_file_whose_pid_is_not_a_broker(
    discovery_dir: Path, foreign: tuple[Recorder, int]
) -> None:
    recorder, port = foreign
    with process("other-program") as pid:
        plant(discovery_dir, f"server-{pid}.json", discovery_fields(pid, port, token=TOKEN))
        host = await Host.start(discovery_dir)
        try:
            assert await host.brokers() == []
        finally:
            returncode, _, stderr = await host.close()
    assert returncode == 0
    assert f"pid {pid} is not a browser-mcp broker" in stderr
    assert recorder.requests == []


PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")


async def test_the_command_line_and_the_relay_never_go_through_a_proxy(
    brokers: Brokers, discovery_dir: Path, foreign: tuple[Recorder, int], tmp_path: Path
) -> None:
    proxy, port = foreign
    broker = await brokers.start()
    env = {name: f"http://127.0.0.1:{port}" for name in PROXY_VARIABLES} | {"no_proxy": "", "NO_PROXY": ""}
    for command in (["status"], ["tabs"], ["pair"]):
        result = await run_cli(*command, discovery_dir=discovery_dir, env=env)
        assert result.returncode == 0, (command, result)
    relay = await raw_relay(discovery_dir, tmp_path / "state", LOG_LEVEL="debug", **env)
    await relay_until(relay, f"using the broker (pid {broker.pid}")
    assert proxy.requests == []
