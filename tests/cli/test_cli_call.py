"""``browser-mcp call``, run as a user runs it against a real broker subprocess with a fake extension:
what it prints of a page tool's result, and what it refuses before the page hears of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from ..conftest import ConnectFake
from ..support.cli_helpers import (
    BrokerProcess,
    Brokers,
    SharedBroker,
    broker_process_fixtures,
    claim,
    shared_shop_fixture,
)
from ..support.fakes import FakeExtension
from .shop_cli import cli, shop_tabs

broker, shop = broker_process_fixtures(shop_tabs)
shared_shop = shared_shop_fixture(shop_tabs)


@pytest.fixture
async def claimed_shop(
    shared_broker: SharedBroker, shared_shop: FakeExtension, session: aiohttp.ClientSession
) -> FakeExtension:
    """The shop with its tab 7 claimed by the command line's own session, as a page tool call needs."""
    await claim(session, shared_broker, 7)
    return shared_shop


async def test_call_prints_the_pages_result(shared_broker: SharedBroker, claimed_shop: FakeExtension) -> None:
    result = await cli(shared_broker.discovery_dir, "call", "7", "search", '{"query": "shoes"}')

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"query": "shoes", "hits": ["red shoes", "blue shoes"]}
    [sent] = claimed_shop.received("callTool")
    assert (sent["tabId"], sent["toolName"], sent["args"]) == (7, "search", {"query": "shoes"})


async def test_call_prints_a_text_result_as_text(shared_broker: SharedBroker, claimed_shop: FakeExtension) -> None:
    result = await cli(shared_broker.discovery_dir, "call", "7", "greet", '{"name": "Ada"}')

    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello Ada\n"


async def test_serve_max_result_chars_cuts_what_call_prints(
    discovery_dir: Path, brokers: Brokers, connect_fake: ConnectFake
) -> None:
    refused = await cli(discovery_dir, "serve", "--port", "0", "--max-result-chars", "0")
    refused.assert_failed_saying("--max-result-chars must be at least 1")
    broker = await brokers.start("--max-result-chars", "20")
    await connect_fake(broker, *shop_tabs())
    await cli(discovery_dir, "claim", "7")
    result = await cli(discovery_dir, "call", "7", "greet", '{"name": "Ada Lovelace, who wrote the first program"}')

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("hello Ada Lovelace, \n[browser-mcp: the result cut at 20 of its 47 characters")


async def test_call_without_args_sends_an_empty_object(
    shared_broker: SharedBroker, claimed_shop: FakeExtension
) -> None:
    result = await cli(shared_broker.discovery_dir, "call", "7", "greet")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello nobody\n"
    assert claimed_shop.received("callTool")[0]["args"] == {}


async def test_call_json_wraps_the_result(shared_broker: SharedBroker, claimed_shop: FakeExtension) -> None:
    result = await cli(shared_broker.discovery_dir, "call", "7", "greet", '{"name": "Ada"}', "--json")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"result": "hello Ada"}


async def test_call_page_error_exits_1_with_the_message_on_stderr(
    shared_broker: SharedBroker, claimed_shop: FakeExtension
) -> None:
    result = await cli(shared_broker.discovery_dir, "call", "7", "buy", '{"size": 42}')

    result.assert_failed_saying("size 42 is out of stock")
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param("{query: shoes}", "not valid JSON", id="not-json"),
        pytest.param('["shoes"]', "must be a JSON object", id="not-an-object"),
    ],
)
async def test_call_with_bad_json_args_is_refused_before_reaching_the_page(
    shared_broker: SharedBroker, shared_shop: FakeExtension, args: str, message: str
) -> None:
    result = await cli(shared_broker.discovery_dir, "call", "7", "search", args)

    result.assert_failed_saying(message, "ARGS")
    assert shared_shop.received("callTool") == []


async def test_call_on_the_persons_tab_says_to_claim_it_first(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    refused = await cli(discovery_dir, "call", "7", "greet")

    refused.assert_failed_saying("claim it first", "browser-mcp claim b1:7", "tab_not_claimed")
    assert shop.received("callTool") == []
    assert (await cli(discovery_dir, "claim", "7")).returncode == 0
    assert (await cli(discovery_dir, "call", "7", "greet")).stdout == "hello nobody\n"


async def test_call_on_an_unknown_tab_names_the_tab(shared_broker: SharedBroker, shared_shop: FakeExtension) -> None:
    result = await cli(shared_broker.discovery_dir, "call", "999", "search", "{}")

    result.assert_failed_saying("no tab 999")
    assert shared_shop.received("callTool") == []
