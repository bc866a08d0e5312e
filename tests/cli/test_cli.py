"""The ``browser-mcp`` command line, run as a user runs it: real subprocesses of the console
script against real broker subprocesses, with a fake extension on the broker's link so that
tabs and page tools exist. Here the brokers themselves: status, tabs, choosing a broker, stop,
serve refusing to start, and a token file that cannot be written.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from broker.daemon.runtime import VERSION
from broker.paths import ENV_TOKEN_FILE

from ..support.cli_helpers import (
    CLI,
    BrokerProcess,
    Brokers,
    CliResult,
    SharedBroker,
    broker_process_fixtures,
    claim,
    cli_env,
    connect_extension,
    discovery_files,
    run_cli,
    shared_shop_fixture,
    start_shared_broker,
    table_rows,
)
from ..support.fakes import FakeExtension, FakeTab
from .shop_cli import NEWS_URL, SHOP_URL, cli, shop_tabs

broker, shop = broker_process_fixtures(shop_tabs)
shared_shop = shared_shop_fixture(shop_tabs)


@pytest.fixture(scope="module")
def two_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SharedBroker, SharedBroker]]:
    """Two brokers alive on one discovery folder, for the tests that choose between them and stop neither."""
    folder = tmp_path_factory.mktemp("two-brokers")
    first = start_shared_broker(folder / "discovery", folder / "first.log")
    try:
        second = start_shared_broker(folder / "discovery", folder / "second.log")
        try:
            yield first, second
        finally:
            second.stop()
    finally:
        first.stop()


# status


async def test_status_shows_a_table_of_the_running_broker(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    result = await cli(discovery_dir, "status")

    assert result.returncode == 0, result.stderr
    [row] = table_rows(result.stdout)
    assert row["PORT"] == str(broker.port)
    assert row["PID"] == str(broker.pid)
    assert re.fullmatch(r"\d+m\d\ds|\d+h\d\dm", row["UPTIME"])
    assert "FakeChrome 1.0" in row["BROWSERS"]
    assert row["SESSIONS"] == "none"
    assert row["TABS"] == "2"
    assert row["VERSION"] == VERSION


async def test_status_lists_the_session_a_call_opened(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension, session: aiohttp.ClientSession
) -> None:
    await claim(session, broker, 7)
    called = await cli(discovery_dir, "call", "7", "greet", '{"name": "Ada"}')
    assert called.returncode == 0, called.stderr

    result = await cli(discovery_dir, "status")

    [row] = table_rows(result.stdout)
    assert row["SESSIONS"] == "rest"


async def test_status_json_describes_the_broker_for_scripts(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    result = await cli(discovery_dir, "status", "--json")

    assert result.returncode == 0, result.stderr
    [status] = json.loads(result.stdout)["brokers"]
    assert (status["pid"], status["port"], status["tabs"]) == (broker.pid, broker.port, 2)
    assert status["version"] == VERSION
    assert status["uptimeSeconds"] >= 0
    assert [(b["name"], b["version"], b["connected"]) for b in status["browsers"]] == [("FakeChrome", "1.0", True)]
    assert status["sessions"] == []
    assert status["discoveryFile"] == str(broker.discovery_file)


async def test_status_lists_every_live_broker(two_brokers: tuple[SharedBroker, SharedBroker]) -> None:
    first, second = two_brokers

    result = await cli(first.discovery_dir, "status")

    assert result.returncode == 0, result.stderr
    assert sorted((r["PORT"], r["PID"]) for r in table_rows(result.stdout)) == sorted(
        [(str(first.port), str(first.pid)), (str(second.port), str(second.pid))]
    )


async def test_status_says_no_broker_is_running(discovery_dir: Path) -> None:
    result = await cli(discovery_dir, "status")

    assert "no broker is running" in result.stdout + result.stderr
    assert result.returncode != 0
    assert "Traceback" not in result.stderr


async def test_status_json_with_no_broker_is_an_empty_list(discovery_dir: Path) -> None:
    result = await cli(discovery_dir, "status", "--json")

    assert json.loads(result.stdout) == {"brokers": []}


async def test_status_reads_the_discovery_folder_from_the_env_var(shared_broker: SharedBroker) -> None:
    result = await run_cli("status", "--json", discovery_dir=shared_broker.discovery_dir, as_flag=False)

    assert [b["pid"] for b in json.loads(result.stdout)["brokers"]] == [shared_broker.pid]


# tabs


async def test_tabs_shows_a_table_of_tabs_and_their_tools(
    shared_broker: SharedBroker, shared_shop: FakeExtension
) -> None:
    result = await cli(shared_broker.discovery_dir, "tabs")

    assert result.returncode == 0, result.stderr
    rows = {row["TAB"]: row for row in table_rows(result.stdout)}
    assert rows.keys() == {"7", "8"}
    assert rows["7"]["TOOLS"] == "search, greet, buy"
    assert (rows["7"]["TITLE"], rows["7"]["URL"], rows["7"]["OWNER"]) == ("Shoe shop", SHOP_URL, "-")
    assert (rows["8"]["TITLE"], rows["8"]["URL"]) == ("News", NEWS_URL)


async def test_tabs_json_lists_tabs_with_their_tools(shared_broker: SharedBroker, shared_shop: FakeExtension) -> None:
    result = await cli(shared_broker.discovery_dir, "tabs", "--json")

    assert result.returncode == 0, result.stderr
    tabs = {tab["id"]: tab for tab in json.loads(result.stdout)["tabs"]}
    assert tabs.keys() == {7, 8}
    assert [tool["name"] for tool in tabs[7]["tools"]] == ["search", "greet", "buy"]
    assert all("inputSchema" in tool for tool in tabs[7]["tools"])
    assert tabs[8]["tools"] == []
    assert (tabs[7]["url"], tabs[7]["title"], tabs[7]["owner"]) == (SHOP_URL, "Shoe shop", None)


async def test_tabs_without_an_extension_says_so(shared_broker: SharedBroker) -> None:
    result = await cli(shared_broker.discovery_dir, "tabs")

    assert result.returncode == 0, result.stderr
    assert "no tabs" in result.stdout
    assert "extension" in result.stdout


# choosing a broker


async def test_tabs_with_two_brokers_alive_asks_to_choose_one(two_brokers: tuple[SharedBroker, SharedBroker]) -> None:
    first, second = two_brokers

    result = await cli(first.discovery_dir, "tabs")

    result.assert_failed_saying("--pid or --port", str(first.port), str(second.port))
    assert result.stdout == ""


@pytest.mark.parametrize("choice", ["--port", "--pid"])
async def test_tabs_with_two_brokers_alive_uses_the_one_chosen(
    two_brokers: tuple[SharedBroker, SharedBroker],
    session: aiohttp.ClientSession,
    fakes: list[FakeExtension],
    choice: str,
) -> None:
    idle, busy = two_brokers
    fakes.append(await connect_extension(session, busy, *shop_tabs()))

    def chosen(broker: SharedBroker) -> str:
        return str(broker.port if choice == "--port" else broker.pid)

    on_busy = await cli(busy.discovery_dir, "tabs", "--json", choice, chosen(busy))
    on_idle = await cli(idle.discovery_dir, "tabs", "--json", choice, chosen(idle))

    assert on_busy.returncode == 0, on_busy.stderr
    assert sorted(tab["id"] for tab in json.loads(on_busy.stdout)["tabs"]) == [7, 8]
    assert on_idle.returncode == 0, on_idle.stderr
    assert json.loads(on_idle.stdout)["tabs"] == []


async def test_call_with_two_brokers_alive_reaches_the_chosen_one(
    two_brokers: tuple[SharedBroker, SharedBroker], session: aiohttp.ClientSession, fakes: list[FakeExtension]
) -> None:
    _, busy = two_brokers
    fake = await connect_extension(session, busy, *shop_tabs())
    fakes.append(fake)
    await claim(session, busy, 7)

    result = await cli(busy.discovery_dir, "call", "7", "greet", '{"name": "Bo"}', "--port", str(busy.port))

    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello Bo\n"


async def test_choosing_a_broker_that_is_not_running_lists_those_that_are(shared_broker: SharedBroker) -> None:
    result = await cli(shared_broker.discovery_dir, "tabs", "--pid", str(shared_broker.pid + 100_000))

    result.assert_failed_saying(f"port {shared_broker.port}")


async def test_tabs_with_no_broker_says_none_is_running(discovery_dir: Path) -> None:
    result = await cli(discovery_dir, "tabs")

    result.assert_failed_saying("no broker is running", "browser-mcp serve")


# stop


async def test_stop_stops_the_broker_and_its_discovery_file_disappears(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    result = await cli(discovery_dir, "stop")

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"stopped the broker on port {broker.port} (pid {broker.pid})\n"
    assert not broker.discovery_file.exists()
    exited = await broker.exited()
    assert exited.returncode == 0, exited.stderr
    # The broker said goodbye to the extension rather than dropping it.
    async with asyncio.timeout(5):
        await shop.closed.wait()
    assert shop.close_code == aiohttp.WSCloseCode.GOING_AWAY
    after = await cli(discovery_dir, "status")
    assert "no broker is running" in after.stdout + after.stderr


async def test_stop_with_two_brokers_stops_only_the_chosen_one(discovery_dir: Path, brokers: Brokers) -> None:
    kept = await brokers.start()
    stopped = await brokers.start()

    result = await cli(discovery_dir, "stop", "--port", str(stopped.port))

    assert result.returncode == 0, result.stderr
    assert (await stopped.exited()).returncode == 0
    assert kept.process.returncode is None
    assert kept.discovery_file.exists()
    assert not stopped.discovery_file.exists()


# serve refusing to start


async def test_serve_on_a_taken_port_fails_clearly(discovery_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        result = await cli(discovery_dir, "serve", "--port", str(port))

    assert result.returncode not in (0, None)
    assert "already in use" in result.stderr
    assert str(port) in result.stderr, "the message should name the port that is taken"
    assert "Traceback" not in result.stderr
    assert discovery_files(discovery_dir) == []


async def test_serve_refuses_a_bogus_extension_id(discovery_dir: Path) -> None:
    result = await cli(discovery_dir, "serve", "--port", "0", "--allow-extension", "bogus")

    assert result.returncode not in (0, None)
    assert "bogus" in result.stderr
    assert "not an extension id" in result.stderr
    assert "Traceback" not in result.stderr
    assert discovery_files(discovery_dir) == []


async def test_serve_accepts_a_well_formed_extension_id_and_lets_it_connect(
    discovery_dir: Path, brokers: Brokers, session: aiohttp.ClientSession
) -> None:
    other_id = "abcdefghijklmnopabcdefghijklmnop"
    broker = await brokers.start("--allow-extension", other_id)

    fake = FakeExtension([FakeTab(3, "https://a.example/")])
    try:
        await fake.connect(session, broker.ws_url, headers={"Origin": f"chrome-extension://{other_id}"})
        start = len(fake.inbox)
        await fake.send({"type": "ping"})
        await fake.wait_for("pong", start=start)
    finally:
        await fake.close()
    assert fake.received("connect")


# The token file


def _token_files(folder: Path) -> list[Path]:
    return list(folder.glob("*token*"))


async def _run_without_room(command: list[str], discovery_dir: Path, token_file: Path) -> CliResult:
    """Run ``browser-mcp COMMAND`` where no file may grow (``ulimit -f 0``): every write to a file
    fails as on a full disk (EFBIG), while its output still goes to pipes."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        'ulimit -f 0 && exec "$@"',
        "bash",
        *CLI,
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(discovery_dir, **{ENV_TOKEN_FILE: str(token_file)}),
    )
    async with asyncio.timeout(30):
        out, err = await process.communicate()
    return CliResult(process.returncode, out.decode(), err.decode())


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["mcp-config"]])
async def test_a_token_file_that_cannot_be_written_is_one_clear_line(
    discovery_dir: Path, tmp_path: Path, command: list[str]
) -> None:
    full = await _run_without_room(command, discovery_dir, tmp_path / "token")
    full.assert_failed_saying(f"cannot write the token file {tmp_path / 'token'}: File too large")
    assert len(full.stderr.strip().splitlines()) == 1, full.stderr
    assert _token_files(tmp_path) == []  # nor a temp file left behind
    # A folder that is a file: the write fails before any byte, whatever the user may do.
    nowhere = await _run_without_room(command, discovery_dir, Path(__file__) / "token")
    nowhere.assert_failed_saying("cannot write the token file", "Not a directory")
