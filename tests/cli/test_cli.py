"""The ``browser-mcp`` command line, run as a user runs it: real subprocesses of the console
script against real broker subprocesses, with a fake extension on the broker's link so that
tabs and page tools exist.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from broker.daemon.runtime import VERSION
from broker.paths import ENV_TOKEN_FILE

from ..conftest import ConnectFake
from ..support.cli_helpers import (
    CLI,
    BrokerProcess,
    Brokers,
    CliResult,
    broker_process_fixtures,
    claim,
    cli_env,
    connect_extension,
    discovery_files,
    run_cli,
    table_rows,
)
from ..support.fakes import FakeExtension, FakeTab, PageError

SHOP_URL = "https://shop.example/shoes"
NEWS_URL = "https://news.example/"


def search(args: dict[str, Any]) -> Any:
    return {"query": args.get("query"), "hits": ["red shoes", "blue shoes"]}


def greet(args: dict[str, Any]) -> Any:
    return f"hello {args.get('name', 'nobody')}"


def buy(args: dict[str, Any]) -> Any:
    raise PageError("size 42 is out of stock", code="sold_out")


def shop_tabs() -> list[FakeTab]:
    return [
        FakeTab(7, SHOP_URL, "Shoe shop", {"search": search, "greet": greet, "buy": buy}),
        FakeTab(8, NEWS_URL, "News", {}),
    ]


broker, shop = broker_process_fixtures(shop_tabs)


async def cli(discovery_dir: Path, *args: str) -> CliResult:
    return await run_cli(*args, discovery_dir=discovery_dir)


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


async def test_status_lists_every_live_broker(discovery_dir: Path, brokers: Brokers) -> None:
    first = await brokers.start()
    second = await brokers.start()

    result = await cli(discovery_dir, "status")

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


async def test_status_reads_the_discovery_folder_from_the_env_var(broker: BrokerProcess, discovery_dir: Path) -> None:
    result = await run_cli("status", "--json", discovery_dir=discovery_dir, as_flag=False)

    assert [b["pid"] for b in json.loads(result.stdout)["brokers"]] == [broker.pid]


# tabs


async def test_tabs_shows_a_table_of_tabs_and_their_tools(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    result = await cli(discovery_dir, "tabs")

    assert result.returncode == 0, result.stderr
    rows = {row["TAB"]: row for row in table_rows(result.stdout)}
    assert rows.keys() == {"7", "8"}
    assert rows["7"]["TOOLS"] == "search, greet, buy"
    assert (rows["7"]["TITLE"], rows["7"]["URL"], rows["7"]["OWNER"]) == ("Shoe shop", SHOP_URL, "-")
    assert (rows["8"]["TITLE"], rows["8"]["URL"]) == ("News", NEWS_URL)


async def test_tabs_json_lists_tabs_with_their_tools(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    result = await cli(discovery_dir, "tabs", "--json")

    assert result.returncode == 0, result.stderr
    tabs = {tab["id"]: tab for tab in json.loads(result.stdout)["tabs"]}
    assert tabs.keys() == {7, 8}
    assert [tool["name"] for tool in tabs[7]["tools"]] == ["search", "greet", "buy"]
    assert all("inputSchema" in tool for tool in tabs[7]["tools"])
    assert tabs[8]["tools"] == []
    assert (tabs[7]["url"], tabs[7]["title"], tabs[7]["owner"]) == (SHOP_URL, "Shoe shop", None)


async def test_tabs_without_an_extension_says_so(discovery_dir: Path, broker: BrokerProcess) -> None:
    result = await cli(discovery_dir, "tabs")

    assert result.returncode == 0, result.stderr
    assert "no tabs" in result.stdout
    assert "extension" in result.stdout


# call


async def test_call_prints_the_pages_result(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension, session: aiohttp.ClientSession
) -> None:
    await claim(session, broker, 7)
    result = await cli(discovery_dir, "call", "7", "search", '{"query": "shoes"}')

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"query": "shoes", "hits": ["red shoes", "blue shoes"]}
    [sent] = shop.received("callTool")
    assert (sent["tabId"], sent["toolName"], sent["args"]) == (7, "search", {"query": "shoes"})


async def test_call_prints_a_text_result_as_text(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension, session: aiohttp.ClientSession
) -> None:
    await claim(session, broker, 7)
    result = await cli(discovery_dir, "call", "7", "greet", '{"name": "Ada"}')

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
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension, session: aiohttp.ClientSession
) -> None:
    await claim(session, broker, 7)
    result = await cli(discovery_dir, "call", "7", "greet")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello nobody\n"
    assert shop.received("callTool")[0]["args"] == {}


async def test_call_json_wraps_the_result(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension, session: aiohttp.ClientSession
) -> None:
    await claim(session, broker, 7)
    result = await cli(discovery_dir, "call", "7", "greet", '{"name": "Ada"}', "--json")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"result": "hello Ada"}


async def test_call_page_error_exits_1_with_the_message_on_stderr(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension, session: aiohttp.ClientSession
) -> None:
    await claim(session, broker, 7)
    result = await cli(discovery_dir, "call", "7", "buy", '{"size": 42}')

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
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension, args: str, message: str
) -> None:
    result = await cli(discovery_dir, "call", "7", "search", args)

    result.assert_failed_saying(message, "ARGS")
    assert shop.received("callTool") == []


async def test_call_on_the_persons_tab_says_to_claim_it_first(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    refused = await cli(discovery_dir, "call", "7", "greet")

    refused.assert_failed_saying("claim it first", "browser-mcp claim b1:7", "tab_not_claimed")
    assert shop.received("callTool") == []
    assert (await cli(discovery_dir, "claim", "7")).returncode == 0
    assert (await cli(discovery_dir, "call", "7", "greet")).stdout == "hello nobody\n"


async def test_call_on_an_unknown_tab_names_the_tab(
    discovery_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    result = await cli(discovery_dir, "call", "999", "search", "{}")

    result.assert_failed_saying("no tab 999")
    assert shop.received("callTool") == []


# choosing a broker


async def test_tabs_with_two_brokers_alive_asks_to_choose_one(discovery_dir: Path, brokers: Brokers) -> None:
    first = await brokers.start()
    second = await brokers.start()

    result = await cli(discovery_dir, "tabs")

    result.assert_failed_saying("--pid or --port", str(first.port), str(second.port))
    assert result.stdout == ""


@pytest.mark.parametrize("choice", ["--port", "--pid"])
async def test_tabs_with_two_brokers_alive_uses_the_one_chosen(
    discovery_dir: Path,
    brokers: Brokers,
    session: aiohttp.ClientSession,
    fakes: list[FakeExtension],
    choice: str,
) -> None:
    idle = await brokers.start()
    busy = await brokers.start()
    fakes.append(await connect_extension(session, busy, *shop_tabs()))

    def chosen(broker: BrokerProcess) -> str:
        return str(broker.port if choice == "--port" else broker.pid)

    on_busy = await cli(discovery_dir, "tabs", "--json", choice, chosen(busy))
    on_idle = await cli(discovery_dir, "tabs", "--json", choice, chosen(idle))

    assert on_busy.returncode == 0, on_busy.stderr
    assert sorted(tab["id"] for tab in json.loads(on_busy.stdout)["tabs"]) == [7, 8]
    assert on_idle.returncode == 0, on_idle.stderr
    assert json.loads(on_idle.stdout)["tabs"] == []


async def test_call_with_two_brokers_alive_reaches_the_chosen_one(
    discovery_dir: Path, brokers: Brokers, session: aiohttp.ClientSession, fakes: list[FakeExtension]
) -> None:
    await brokers.start()
    busy = await brokers.start()
    fake = await connect_extension(session, busy, *shop_tabs())
    fakes.append(fake)
    await claim(session, busy, 7)

    result = await cli(discovery_dir, "call", "7", "greet", '{"name": "Bo"}', "--port", str(busy.port))

    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello Bo\n"


async def test_choosing_a_broker_that_is_not_running_lists_those_that_are(
    discovery_dir: Path, broker: BrokerProcess
) -> None:
    result = await cli(discovery_dir, "tabs", "--pid", str(broker.pid + 100_000))

    result.assert_failed_saying(f"port {broker.port}")


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


# claim, snapshot, screenshot, act: the built-in browser tools from a shell


@pytest.fixture
async def browser(broker: BrokerProcess, connect_fake: ConnectFake) -> FakeExtension:
    """A fake browser whose extension carries out the built-in browser actions."""
    return await connect_fake(broker, *shop_tabs(), actions=["snapshot", "click", "take_screenshot", "navigate"])


async def test_snapshot_needs_a_claim_and_then_prints_the_page(
    discovery_dir: Path, broker: BrokerProcess, browser: FakeExtension
) -> None:
    refused = await cli(discovery_dir, "snapshot", "7")
    refused.assert_failed_saying("browser-mcp claim b1:7")

    claimed = await cli(discovery_dir, "claim", "7")
    assert claimed.returncode == 0, claimed.stderr
    assert claimed.stdout == "tab b1:7 (Shoe shop) is yours (the command line's)\n"
    result = await cli(discovery_dir, "snapshot", "7")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "snapshot in tab 7 with {}\n"

    released = await cli(discovery_dir, "release", "7")
    assert released.returncode == 0 and "the person's again" in released.stdout
    assert (await cli(discovery_dir, "snapshot", "7")).returncode == 1


async def test_screenshot_writes_the_picture(
    discovery_dir: Path, tmp_path: Path, broker: BrokerProcess, browser: FakeExtension
) -> None:
    await cli(discovery_dir, "claim", "7")
    result = await cli(discovery_dir, "screenshot", "7", "-o", str(tmp_path / "shot.png"), "--full-page")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "shot.png").read_bytes().startswith(b"\x89PNG")
    assert result.stdout.startswith(f"saved {tmp_path / 'shot.png'} (")
    [sent] = browser.received("browserAction")
    assert sent["args"] == {"type": "png", "fullPage": True}


async def test_act_runs_a_tool_by_its_name(discovery_dir: Path, broker: BrokerProcess, browser: FakeExtension) -> None:
    await cli(discovery_dir, "claim", "7")
    result = await cli(discovery_dir, "act", "7", "browser_click", '{"element": "Buy", "ref": "e4"}')
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'click in tab 7 with {"element": "Buy", "target": "e4"}\n'
    bad = await cli(discovery_dir, "act", "7", "click", "[1]")
    bad.assert_failed_saying("must be a JSON object")
    unknown = await cli(discovery_dir, "act", "7", "fly")
    unknown.assert_failed_saying("no built-in action 'fly'")


async def test_act_uploads_files_only_from_the_brokers_upload_dirs(
    tmp_path: Path, discovery_dir: Path, brokers: Brokers, connect_fake: ConnectFake
) -> None:
    refused = await cli(discovery_dir, "serve", "--port", "0", "--upload-dir", str(tmp_path / "nowhere"))
    refused.assert_failed_saying("--upload-dir must name folders", "nowhere")
    uploads, elsewhere = tmp_path / "uploads", tmp_path / "elsewhere"
    for folder in (uploads, elsewhere):
        folder.mkdir()
        (folder / "report.txt").write_text("report\n")
    broker = await brokers.start("--upload-dir", str(uploads), "--upload-max-mb", "1")
    fake = await connect_fake(broker, *shop_tabs(), actions=["file_upload"])
    await cli(discovery_dir, "claim", "7")
    outside = await cli(
        discovery_dir, "act", "7", "file_upload", json.dumps({"paths": [str(elsewhere / "report.txt")]})
    )
    outside.assert_failed_saying("outside the folders files may be uploaded from", str(uploads))
    assert fake.received("browserAction") == []
    # A path relative to where the command runs.
    result = await run_cli(
        "act", "7", "browser_file_upload", '{"paths": ["report.txt"]}', discovery_dir=discovery_dir, cwd=uploads
    )
    assert result.returncode == 0, result.stderr
    sent = await fake.wait_for("browserAction")
    described = [{key: file[key] for key in ("path", "name", "size", "data")} for file in sent["args"]["files"]]
    report = {"path": str((uploads / "report.txt").resolve()), "name": "report.txt", "size": 7, "data": "cmVwb3J0Cg=="}
    assert described == [report]  # its bytes go with it, as read when checked


# windows, history, bookmarks


@pytest.fixture
async def windowed(broker: BrokerProcess, connect_fake: ConnectFake) -> FakeExtension:
    """A fake browser that knows windows, history and bookmarks: the person's shop tab in window 1."""
    tab = FakeTab(7, SHOP_URL, "Shoe shop", window_id=1)
    return await connect_fake(broker, tab, features=["windows", "history", "bookmarks"])


async def test_windows_lists_opens_and_refuses_the_persons(discovery_dir: Path, windowed: FakeExtension) -> None:
    opened = await cli(discovery_dir, "windows", "open", "https://mine.example/")
    assert opened.returncode == 0, opened.stderr
    window = json.loads(opened.stdout)["window"]["id"]
    listed = await cli(discovery_dir, "windows")
    rows = {row["WINDOW"]: row for row in table_rows(listed.stdout)}
    assert (rows["b1:1"]["YOURS"], rows["b1:1"]["TABS"]) == ("-", "7")
    assert rows[f"b1:{window}"]["YOURS"] == "yes"
    refused = await cli(discovery_dir, "windows", "close", "1")
    refused.assert_failed_saying("the person's tab b1:7", "window_not_owned")
    closed = await cli(discovery_dir, "windows", "close", str(window))
    assert closed.returncode == 0 and json.loads(closed.stdout)["closed"]["id"] == window
    tabs = await cli(discovery_dir, "tabs")
    assert [row["WINDOW"] for row in table_rows(tabs.stdout)] == ["1#0"]


async def test_history_and_bookmarks_say_where_to_share_them(discovery_dir: Path, windowed: FakeExtension) -> None:
    refused = await cli(discovery_dir, "history", "shoes")
    refused.assert_failed_saying("consent_required", "options")
    windowed.shared = True
    windowed.history = [{"title": "Red shoes", "url": SHOP_URL, "time": "2026-05-01T09:00:00.000Z"}]
    found = await cli(discovery_dir, "history", "shoes", "--max", "5", "--since", "2026-04-01")
    assert found.returncode == 0, found.stderr
    assert table_rows(found.stdout) == [{"TIME": "2026-05-01T09:00:00.000Z", "TITLE": "Red shoes", "URL": SHOP_URL}]
    added = await cli(discovery_dir, "bookmarks", "--add", SHOP_URL, "--title", "Shoes to buy")
    assert added.returncode == 0 and json.loads(added.stdout)["bookmark"]["title"] == "Shoes to buy"
    searched = await cli(discovery_dir, "bookmarks", "Shoes")
    assert [row["TITLE"] for row in table_rows(searched.stdout)] == ["Shoes to buy"]


async def test_history_and_bookmarks_are_deleted_and_the_tree_listed(
    discovery_dir: Path, broker: BrokerProcess, connect_fake: ConnectFake
) -> None:
    features = ["windows", "history", "bookmarks", "deleteHistory", "bookmarkTree", "deleteBookmark"]
    fake = await connect_fake(broker, FakeTab(7, SHOP_URL, "Shoe shop", window_id=1), features=features)
    fake.shared = True
    fake.history = [{"title": "Red shoes", "url": SHOP_URL, "time": "2026-05-01T09:00:00.000Z", "ms": 1777626000000}]
    fake.bookmark_nodes = [
        {"id": "1", "parentId": "0", "title": "Bookmarks bar", "folder": True, "depth": 0},
        {"id": "10", "parentId": "1", "title": "Shoes", "folder": True, "depth": 1},
        {"id": "11", "parentId": "10", "title": "Red shoes", "url": SHOP_URL, "depth": 2},
    ]
    tree = await cli(discovery_dir, "bookmarks", "--tree", "--max", "2")
    assert tree.returncode == 0, tree.stderr
    assert [row["ID"] for row in table_rows(tree.stdout.rsplit("\n(", 1)[0])] == ["1", "10"]
    assert "the first 2 of 3" in tree.stdout
    refused = await cli(discovery_dir, "bookmarks", "--delete", "10")
    refused.assert_failed_saying("folder_not_empty")
    fake.approval = "deny"
    denied = await cli(discovery_dir, "history", "--delete", SHOP_URL)
    denied.assert_failed_saying("not_approved")
    fake.approval = "allow"
    deleted = await cli(discovery_dir, "history", "--delete", SHOP_URL)
    assert deleted.returncode == 0 and json.loads(deleted.stdout)["deleted"] == {"url": SHOP_URL, "visits": 1}
    open_ended = await cli(discovery_dir, "history", "--delete", "--since", "2026-05-01")
    open_ended.assert_failed_saying("`endTime` is missing")
    ranged = await cli(discovery_dir, "history", "--delete", "--since", "2026-05-01", "--until", "2026-05-02")
    assert ranged.returncode == 0, ranged.stderr
    removed = await cli(discovery_dir, "bookmarks", "--delete", "10", "--recursive")
    assert removed.returncode == 0 and json.loads(removed.stdout)["deleted"]["id"] == "10"
    assert [n["id"] for n in fake.bookmark_nodes] == ["1"]
    asked = [(m["request"], m["args"]) for m in fake.received("browserRequest")]
    assert asked[-2:] == [
        ("deleteHistory", {"startTime": 1777593600000.0, "endTime": 1777680000000.0}),
        ("deleteBookmark", {"id": "10", "recursive": True}),
    ]


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


async def test_a_window_of_another_scheme_than_the_webs_is_refused(
    discovery_dir: Path, windowed: FakeExtension
) -> None:
    refused = await cli(discovery_dir, "windows", "open", "file:///etc/passwd")
    refused.assert_failed_saying("invalid_request", "cannot open 'file:///etc/passwd'")
    assert windowed.received("openTab") == []
