"""Fixtures: a real broker on a loopback port, an authorised REST client, fake extensions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import hypothesis
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from broker.app import answer_tool_calls_first, gate_connections, make_app
from broker.core.config import Config
from broker.core.security import PROJECT_EXTENSION_ID
from broker.daemon.hub import Hub
from broker.daemon.runtime import HUB, Runtime, Settings
from broker.discovery import live_brokers
from broker.mcp.door import MCP
from broker.mcp.transports import RunningMcp
from broker.version import VERSION

from .support.cli_helpers import (
    Brokers,
    ReachableBroker,
    SharedBroker,
    connect_extension,
    run_cli,
    start_shared_broker,
)
from .support.fakes import FakeExtension, FakeTab
from .support.mcp_clients import McpClient, mcp_client

TOKEN = "test-token-0123456789"

# Modules whose every test runs a real browser; a test elsewhere that does says so itself
# (``@pytest.mark.browser``). ``scripts/test --quick`` leaves them out: ``-m "not browser"``.
BROWSER_MODULES = ("test_e2e_", "test_firefox_")

# scripts/test --quick runs with --hypothesis-profile=quick: each fuzz test throws a tenth of its
# examples (tests/daemon/fuzzing.py); the full run throws them all.
hypothesis.settings.register_profile("quick")

# Test files that take longest, slowest first. scripts/test runs them first (xdist hands out whole
# files in collection order with --no-loadscope-reorder), so that no worker is left running one
# long file alone at the end of the run.
SLOW_FILES = Path(__file__).with_name("slow_files.txt")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name.startswith(BROWSER_MODULES):
            item.add_marker(pytest.mark.browser)
    slowest_first(items)


def slowest_first(items: list[pytest.Item]) -> None:
    """Put the tests of SLOW_FILES first, in the table's order; every other test keeps its place."""
    names = [line for line in SLOW_FILES.read_text().splitlines() if line and not line.startswith("#")]
    root = SLOW_FILES.parent.parent
    rank = {root / name: place for place, name in enumerate(names)}
    items.sort(key=lambda item: rank.get(item.path, len(rank)))


class BrokerUnderTest:
    def __init__(self, server: TestServer, client: TestClient[web.Request, web.Application], app: web.Application):
        self.server = server
        self.client = client
        self.app = app
        self.fakes: list[FakeExtension] = []

    @property
    def hub(self) -> Hub:
        return self.app[HUB]

    @property
    def ws_url(self) -> str:
        return str(self.server.make_url("/"))

    async def extension(self, *tabs: FakeTab, instance_id: str | None = None, **kwargs: Any) -> FakeExtension:
        fake = FakeExtension(list(tabs), instance_id=instance_id, **kwargs)
        await fake.connect(self.client.session, self.ws_url)
        # The snapshot is applied once the broker answers a frame sent after it.
        await self.settled(fake)
        self.fakes.append(fake)
        return fake

    async def settled(self, fake: FakeExtension) -> None:
        """Wait until the broker has handled everything ``fake`` sent so far."""
        start = len(fake.inbox)
        await fake.send({"type": "ping"})
        await fake.wait_for("pong", start=start)

    @property
    def mcp_url(self) -> str:
        return str(self.server.make_url("/mcp"))

    async def mcp_running(self) -> RunningMcp:
        """The broker's MCP surface and endpoint, which start with the first MCP request."""
        return await self.app[MCP].running()

    @contextlib.asynccontextmanager
    async def mcp(
        self, name: str, era: str, token: str = TOKEN, roots: list[str] | None = None, caps: str | None = None
    ) -> AsyncIterator[McpClient]:
        """An SDK client of ``/mcp`` named ``name`` in protocol ``era``, declaring ``roots`` (file URIs) if
        given, offered the tool groups ``caps`` (``/mcp?caps=``)."""
        legacy = (await self.mcp_running()).endpoint.legacy

        def open_streams() -> int:
            return sum(1 for count in legacy.event_streams.values() if count > 0)

        before = open_streams()

        async def legacy_ready() -> None:
            async with asyncio.timeout(5), legacy.event_streams_changed:
                await legacy.event_streams_changed.wait_for(lambda: open_streams() > before)

        url = self.mcp_url if caps is None else f"{self.mcp_url}?caps={caps}"
        async with mcp_client(url, token, name, era, legacy_ready, roots) as client:
            yield client

    async def claim(self, *refs: str | int, session: str | None = None) -> None:
        """Claim tabs for a REST session (the default one when None), as page tool calls need."""
        headers = {} if session is None else {"X-Session-Id": session}
        for ref in refs:
            status, body = await self.post(f"/tabs/{ref}/claim", headers=headers)
            assert status == 200, body

    async def get(self, path: str, **kwargs: Any) -> tuple[int, Any]:
        async with self.client.get(path, **kwargs) as response:
            return response.status, await response.json()

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
        async with self.client.post(path, json=body, **kwargs) as response:
            return response.status, await response.json()

    async def delete(self, path: str, **kwargs: Any) -> tuple[int, Any]:
        async with self.client.delete(path, **kwargs) as response:
            return response.status, await response.json()


def settings(**overrides: Any) -> Settings:
    """Settings for a test broker: the test token, the project's extension, a 5 s call timeout.

    An override named like a field of the core's Config (``max_sessions=2``) changes that limit.
    """
    limit_names = attrs.fields_dict(Config).keys() & overrides.keys()
    limits = {"call_timeout": 5.0} | {name: overrides.pop(name) for name in limit_names}
    values: dict[str, Any] = {"token": TOKEN, "allowed_extensions": frozenset({PROJECT_EXTENSION_ID})}
    return Settings(**(values | overrides), limits=Config(server_version=VERSION, **limits))


MakeBroker = Callable[..., Awaitable[BrokerUnderTest]]


@pytest.fixture
async def make_broker(aiohttp_server: Any, aiohttp_client: Any) -> AsyncIterator[MakeBroker]:
    made: list[BrokerUnderTest] = []

    async def make(**overrides: Any) -> BrokerUnderTest:
        runtime = Runtime(settings(**overrides))
        app = make_app(runtime)
        server = await aiohttp_server(app)
        gate_connections(app, server.runner)
        answer_tool_calls_first(app, server.runner)
        runtime.port = server.port
        client = await aiohttp_client(server, headers={"Authorization": f"Bearer {TOKEN}"})
        broker = BrokerUnderTest(server, client, app)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        for fake in broker.fakes:
            await fake.close()


@pytest.fixture
async def broker(make_broker: MakeBroker) -> BrokerUnderTest:
    return await make_broker()


@pytest.fixture
def discovery_dir(tmp_path: Path) -> Path:
    """A test's own discovery folder: no test reads or writes /tmp/browser-mcp."""
    return tmp_path / "discovery"


@pytest.fixture
async def brokers(discovery_dir: Path) -> AsyncIterator[Brokers]:
    """Real ``browser-mcp serve`` subprocesses on ``discovery_dir``, stopped after the test."""
    async with Brokers(discovery_dir) as launched:
        yield launched


@pytest.fixture(scope="module")
def shared_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedBroker]:
    """One ``browser-mcp serve`` subprocess for the tests of a module that only talk to a broker."""
    folder = tmp_path_factory.mktemp("shared-broker")
    broker = start_shared_broker(folder / "discovery", folder / "broker.log")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """Where brokers a test's relays start write their logs (``XDG_STATE_HOME``)."""
    return tmp_path / "state"


@pytest.fixture
async def background_brokers(discovery_dir: Path) -> AsyncIterator[None]:
    """Stops, at the end of the test, every broker a relay started in the background."""
    yield
    for record in live_brokers([discovery_dir]):
        result = await run_cli("stop", "--pid", str(record.pid), discovery_dir=discovery_dir)
        assert result.returncode == 0, result.stderr


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    """A client session for fake extensions and requests to broker subprocesses."""
    async with aiohttp.ClientSession() as client_session:
        yield client_session


@pytest.fixture
async def fakes() -> AsyncIterator[list[FakeExtension]]:
    """Fake extensions a test connected by hand, closed after it."""
    connected: list[FakeExtension] = []
    yield connected
    for fake in connected:
        await fake.close()


ConnectFake = Callable[..., Awaitable[FakeExtension]]


@pytest.fixture
def connect_fake(session: aiohttp.ClientSession, fakes: list[FakeExtension]) -> ConnectFake:
    """Connect a fake extension with these tabs to a broker subprocess; closed after the test."""

    async def connect(
        broker: ReachableBroker,
        *tabs: FakeTab,
        actions: list[str] | None = None,
        features: list[str] | None = None,
    ) -> FakeExtension:
        fake = await connect_extension(session, broker, *tabs, actions=actions, features=features)
        fakes.append(fake)
        return fake

    return connect
