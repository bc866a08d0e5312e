"""``browser-mcp mcp`` as AI clients run it: the official SDK client spawns the real command over
stdio, in both protocol eras, against real broker subprocesses with a fake extension on their link.

Discovery files go to a temporary folder, and the platformdirs log folder is moved there too
(``XDG_STATE_HOME``: on Linux ``user_log_dir`` is ``$XDG_STATE_HOME/<app>/log``), so that a
broker the relay starts writes nothing in the real user folders. Such brokers are stopped at the
end of each test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from mcp.client.stdio import StdioServerParameters

from broker.core.browser_tools import ACTIONS
from broker.discovery import BrokerRecord, live_brokers, pid_alive

from ..conftest import ConnectFake
from ..support.cli_helpers import (
    CLI,
    START_TIMEOUT,
    BrokerProcess,
    Brokers,
    SharedBroker,
    broker_process_fixtures,
    cli_env,
    connect_extension,
    finish,
    run_cli,
    shared_shop_fixture,
)
from ..support.fakes import FakeExtension, FakeTab
from ..support.mcp_clients import (
    ERAS,
    LEGACY,
    LEGACY_VERSION,
    MODERN,
    McpClient,
    initialize_request,
    mcp_client,
    sdk_client,
    stdio_relay,
    text,
)

FIXED_TOOLS = {"tabs", "page_tools", "call_page_tool"}
SHOP_URL = "https://shop.example/shoes"
WAIT = 10.0  # a reconnect waits out a backoff of up to 2 s; starting a broker takes seconds


def search(args: dict[str, Any]) -> Any:
    return {"query": args.get("query"), "hits": ["red shoes", "blue shoes"]}


def shop_tabs() -> list[FakeTab]:
    return [FakeTab(7, SHOP_URL, "Shoe shop", {"search": search}), FakeTab(8, "https://news.example/", "News", {})]


# Fixtures


@pytest.fixture
def log_file(state_dir: Path) -> Path:
    return state_dir / "browser-mcp" / "log" / "broker.log"


broker, shop = broker_process_fixtures(shop_tabs)
shared_shop = shared_shop_fixture(shop_tabs)


# The SDK client over stdio


def read(path: Path) -> str:
    return path.read_text()


def stdio_session(
    params: StdioServerParameters, era: str, name: str = "stdio-test"
) -> contextlib.AbstractAsyncContextManager[McpClient]:
    """A client that spawned ``params``, in ``era``, counting list changes (2026: on a listen stream)."""
    return sdk_client(params, name, era, start_timeout=START_TIMEOUT)


# With a broker running


@pytest.mark.parametrize("era", ERAS)
async def test_serves_the_fixed_tools_in_both_eras(era: str, state_dir: Path, shared_broker: SharedBroker) -> None:
    async with stdio_session(stdio_relay(shared_broker.discovery_dir, state_dir), era) as client:
        assert client.client.protocol_version == (LEGACY_VERSION if era == LEGACY else MODERN)
        if era == LEGACY:
            capabilities = client.client.server_capabilities.tools
            assert capabilities is not None and capabilities.list_changed
        assert set(await client.tool_names()) == FIXED_TOOLS


@pytest.mark.parametrize("era", ERAS)
async def test_a_large_tool_list_comes_through_whole(
    era: str, state_dir: Path, shared_broker: SharedBroker, connect_fake: ConnectFake
) -> None:
    # Over 64 KB, the relay routes the broker's answer by its head and passes it on unparsed.
    tools = {f"tool_{i:03}_{'x' * 40}": (lambda args: "ok") for i in range(400)}
    await connect_fake(shared_broker, FakeTab(9, "https://big.example/", "Big", tools))
    async with stdio_session(stdio_relay(shared_broker.discovery_dir, state_dir), era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 9})
        names = [name for name in await client.tool_names() if name.startswith("t9_")]
        assert names == [f"t9_{name}" for name in tools]
        result = await client.call(names[-1], {})
        assert not result.is_error and text(result) == "ok"


@pytest.mark.parametrize("era", ERAS)
async def test_a_claimed_tab_brings_its_page_tool_with_a_list_change(
    era: str, state_dir: Path, shared_broker: SharedBroker, shared_shop: FakeExtension
) -> None:
    async with stdio_session(stdio_relay(shared_broker.discovery_dir, state_dir), era) as client:
        assert "t7_search" not in await client.tool_names()
        refused = await client.call("t7_search", {"query": "shoes"})
        assert refused.is_error and refused.structured_content is not None
        assert refused.structured_content["error"]["code"] == "tab_not_claimed", "a code to branch on, over stdio too"
        before = client.changes.count

        claimed = await client.call_json("tabs", {"action": "claim", "tab": 7})
        await client.changes.next(before)

        assert claimed["claim"]["id"] == 7
        assert "t7_search" in await client.tool_names()
        async with asyncio.timeout(WAIT):
            answer = await client.call_json("t7_search", {"query": "shoes"})
        assert answer == {"query": "shoes", "hits": ["red shoes", "blue shoes"]}


@pytest.mark.parametrize("era", ERAS)
async def test_tools_learnt_by_asking_are_the_claimers_tools_with_a_list_change(
    era: str, state_dir: Path, shared_broker: SharedBroker, connect_fake: ConnectFake
) -> None:
    # An extension of the original protocol: "tools": [] until asked, never toolsChanged, and the
    # person's focus reports the tools it pushed, none.
    literal = FakeTab(9, SHOP_URL, "Shoe shop", {"search": search})
    literal.announce_empty, literal.push_tools = True, False
    fake = await connect_fake(shared_broker, literal)
    async with stdio_session(stdio_relay(shared_broker.discovery_dir, state_dir), era) as client:
        listed = await client.call_json("page_tools", {"tab": 9})
        assert [tool["name"] for tool in listed["tools"]] == ["search"]
        await fake.send({"type": "tabFocused", "tabId": 9, "tools": []})
        before = client.changes.count
        await client.call_json("tabs", {"action": "claim", "tab": 9})
        await client.changes.next(before)
        assert "t9_search" in await client.tool_names()
        # The page gains a tool and is asked again: the owner's list follows.
        fake.tabs[9].functions["compare"] = lambda args: "compared"
        before = client.changes.count
        listed = await client.call_json("page_tools", {"tab": 9, "refresh": True})
        await client.changes.next(before)
        assert "t9_compare" in await client.tool_names()


@pytest.mark.parametrize("era", ERAS)
async def test_tools_the_owner_learnt_over_rest_stay_when_a_stdio_client_claims_the_tab(
    era: str,
    discovery_dir: Path,
    state_dir: Path,
    broker: BrokerProcess,
    connect_fake: ConnectFake,
    session: aiohttp.ClientSession,
) -> None:
    # The original protocol's extensions answer each session's `connect` with every tab's
    # "tools": [] again, which says nothing of the page the owner already asked. A broker of its
    # own: the owner's question leaves its REST session behind.
    literal = FakeTab(9, SHOP_URL, "Shoe shop", {"search": search, "echo": lambda args: args})
    literal.announce_empty = True
    fake = await connect_fake(broker, literal)
    fake.snapshot_per_session = True
    owner = {"Authorization": f"Bearer {broker.token}"}
    async with session.get(f"http://127.0.0.1:{broker.port}/tabs/9/tools", headers=owner) as response:
        assert response.status == 200
        assert [tool["name"] for tool in (await response.json())["tools"]] == ["search", "echo"]
    async with stdio_session(stdio_relay(discovery_dir, state_dir), era) as client:
        claimed = await client.call_json("tabs", {"action": "claim", "tab": 9})
        assert [tool["name"] for tool in claimed["claim"]["tools"]] == ["search", "echo"]
        await fake.wait_for("connect", lambda message: bool(message.get("sessionId")))
        start = len(fake.inbox)
        await fake.send({"type": "ping"})
        await fake.wait_for("pong", start=start)
        assert {"t9_search", "t9_echo"} <= set(await client.tool_names())
    assert len(fake.received("discoverTools")) == 1


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_with_large_arguments_comes_through_whole(
    era: str, state_dir: Path, shared_broker: SharedBroker, shared_shop: FakeExtension
) -> None:
    # Over 64 KB, the relay routes the client's request by its head and passes it on unparsed.
    query = "shoes " * 12_000  # a request over 64 KB, an answer within the result limit
    async with stdio_session(stdio_relay(shared_broker.discovery_dir, state_dir), era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        async with asyncio.timeout(WAIT):
            answer = await client.call_json("t7_search", {"query": query})
        assert answer["query"] == query


async def test_the_session_is_one_broker_session_named_after_the_client(
    state_dir: Path, shared_broker: SharedBroker
) -> None:
    async with stdio_session(stdio_relay(shared_broker.discovery_dir, state_dir), LEGACY, name="claude-code") as client:
        await client.tool_names()
        result = await run_cli("status", "--json", discovery_dir=shared_broker.discovery_dir)

    [status] = json.loads(result.stdout)["brokers"]
    assert [s["name"] for s in status["sessions"]] == ["claude-code"]


@pytest.mark.parametrize("era", ERAS)
async def test_without_roots_files_in_the_folder_it_was_started_in_may_be_uploaded(
    era: str, tmp_path: Path, state_dir: Path, shared_broker: SharedBroker, connect_fake: ConnectFake
) -> None:
    started_in, elsewhere = tmp_path / "projekt ü", tmp_path / "elsewhere"
    for folder in (started_in, elsewhere):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "notes.txt").write_text("notes\n")
    fake = await connect_fake(shared_broker, FakeTab(9, "https://upload.example/", "Upload"), actions=list(ACTIONS))
    params = stdio_relay(shared_broker.discovery_dir, state_dir).model_copy(update={"cwd": started_in})
    async with stdio_session(params, era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 9})
        refused = await client.call("browser_file_upload", {"paths": [str(elsewhere / "sub" / "notes.txt")]})
        assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
        assert fake.received("browserAction") == []
        result = await client.call("browser_file_upload", {"paths": [str(started_in / "sub" / "notes.txt")]})
        assert not result.is_error, text(result)
    sent = await fake.wait_for("browserAction")
    assert sent["args"]["paths"] == [str((started_in / "sub" / "notes.txt").resolve())]
    # A client that declares roots uploads from those, not from where it was started.
    rooted = sdk_client(params, "rooted", era, start_timeout=START_TIMEOUT, roots=[elsewhere.as_uri()])
    async with rooted as client:
        await client.call_json("tabs", {"action": "claim", "tab": 9})
        refused = await client.call("browser_file_upload", {"paths": [str(started_in / "sub" / "notes.txt")]})
        assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
        result = await client.call("browser_file_upload", {"paths": [str(elsewhere / "sub" / "notes.txt")]})
        assert not result.is_error, text(result)
    assert fake.received("browserAction")[-1]["args"]["paths"] == [str((elsewhere / "sub" / "notes.txt").resolve())]


# The broker going away and coming back


@pytest.mark.parametrize("era", ERAS)
async def test_a_stopped_broker_is_reported_and_a_new_one_is_used_without_a_restart(
    era: str,
    discovery_dir: Path,
    state_dir: Path,
    brokers: Brokers,
    broker: BrokerProcess,
    shop: FakeExtension,
    session: aiohttp.ClientSession,
    fakes: list[FakeExtension],
) -> None:
    async with stdio_session(stdio_relay(discovery_dir, state_dir), era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})

        broker.send_signal(signal.SIGTERM)
        await broker.exited()
        async with asyncio.timeout(WAIT):
            down = await client.call("tabs", {"action": "list"})
        assert down.is_error
        assert "broker is not reachable" in text(down) and "reconnects" in text(down)
        assert down.structured_content == {"error": {"code": "broker_unreachable", "message": text(down)}}

        # Requests other than tool calls wait for a broker instead of failing.
        listing = asyncio.create_task(client.tool_names())
        before = client.changes.count
        restarted = await brokers.start()
        fakes.append(await connect_extension(session, restarted, *shop_tabs()))

        await client.changes.next(before)  # the relay says the tools changed: the old session is gone
        async with asyncio.timeout(WAIT):
            assert set(await listing) == FIXED_TOOLS
        tabs = await client.call_json("tabs", {"action": "list"})
        assert [(t["id"], t["owner"]) for t in tabs["tabs"]] == [(7, None), (8, None)]
        # The new broker's own change notices reach the client (2025: the session was opened
        # again with the client's initialize; 2026: its listen stream was sent again).
        before = client.changes.count
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        await client.changes.next(before)
        assert "t7_search" in await client.tool_names()
        async with asyncio.timeout(WAIT):
            answer = await client.call_json("t7_search", {"query": "boots"})
        assert answer["query"] == "boots"


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_in_flight_when_the_broker_dies_ends_with_an_error_result(
    era: str, discovery_dir: Path, state_dir: Path, broker: BrokerProcess, shop: FakeExtension
) -> None:
    arrived = asyncio.Event()

    async def never_answer(message: dict[str, Any]) -> None:
        arrived.set()

    shop.on_call = never_answer
    async with stdio_session(stdio_relay(discovery_dir, state_dir), era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        call = asyncio.create_task(client.call("t7_search", {"query": "shoes"}))
        async with asyncio.timeout(WAIT):
            await arrived.wait()

        broker.send_signal(signal.SIGKILL)
        async with asyncio.timeout(WAIT):
            result = await call

        assert result.is_error
        assert "went away during this call" in text(result)
        assert result.structured_content == {"error": {"code": "broker_gone", "message": text(result)}}


# Starting a broker


async def test_starts_a_broker_in_the_background_that_outlives_the_client(
    discovery_dir: Path, state_dir: Path, log_file: Path, background_brokers: None
) -> None:
    async with stdio_session(stdio_relay(discovery_dir, state_dir), LEGACY) as client:
        assert own_tools(await client.tool_names()) == FIXED_TOOLS
        [record] = live_brokers([discovery_dir])

    assert pid_alive(record.pid)
    assert os.getsid(record.pid) == record.pid  # a session of its own: the client's signals miss it
    assert live_brokers([discovery_dir]) == [record]
    assert "listening on http://127.0.0.1:" in read(log_file)
    # And it still serves: a second client finds it instead of starting another.
    async with stdio_session(stdio_relay(discovery_dir, state_dir), MODERN) as client:
        assert own_tools(await client.tool_names()) == FIXED_TOOLS
    assert live_brokers([discovery_dir]) == [record]


def own_tools(names: list[str]) -> set[str]:
    """The broker's tools but the built-in browser ones, which a real browser on this machine that
    finds a broker on a port in 8765-8785 brings along."""
    return {name for name in names if not name.startswith("browser_")}


async def test_relays_starting_together_start_one_broker(
    discovery_dir: Path, state_dir: Path, background_brokers: None
) -> None:
    ready = [asyncio.Event(), asyncio.Event()]
    done = asyncio.Event()

    async def run(index: int) -> None:
        async with stdio_session(stdio_relay(discovery_dir, state_dir), LEGACY, name=f"client-{index}") as client:
            await client.tool_names()
            ready[index].set()
            await done.wait()

    tasks = [asyncio.create_task(run(0)), asyncio.create_task(run(1))]
    try:
        async with asyncio.timeout(START_TIMEOUT):
            await asyncio.gather(ready[0].wait(), ready[1].wait())
        records: list[BrokerRecord] = live_brokers([discovery_dir])
        status = await run_cli("status", "--json", discovery_dir=discovery_dir)
    finally:
        done.set()
        await asyncio.gather(*tasks)

    assert len(records) == 1
    [broker_status] = json.loads(status.stdout)["brokers"]
    assert sorted(s["name"] for s in broker_status["sessions"]) == ["client-0", "client-1"]


# Choosing a broker, and failing clearly


async def raw_relay(discovery_dir: Path, state_dir: Path, *extra: str, **env: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *CLI,
        "mcp",
        "--discovery-dir",
        str(discovery_dir),
        *extra,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(discovery_dir, XDG_STATE_HOME=str(state_dir), **env),
    )


async def finish_text(process: asyncio.subprocess.Process) -> tuple[str, str]:
    async with asyncio.timeout(START_TIMEOUT):
        out, err = await finish(process)
    return out.decode(), err.decode()


async def test_port_chooses_among_live_brokers(discovery_dir: Path, state_dir: Path, brokers: Brokers) -> None:
    await brokers.start()
    second = await brokers.start()

    async with stdio_session(stdio_relay(discovery_dir, state_dir, "--port", str(second.port)), LEGACY, "chooser") as c:
        await c.tool_names()
        result = await run_cli("status", "--json", discovery_dir=discovery_dir)

    sessions = {b["port"]: [s["name"] for s in b["sessions"]] for b in json.loads(result.stdout)["brokers"]}
    assert sessions[second.port] == ["chooser"]
    assert sum(len(names) for names in sessions.values()) == 1


async def test_a_pid_of_no_live_broker_is_an_error_and_starts_nothing(discovery_dir: Path, state_dir: Path) -> None:
    process = await raw_relay(discovery_dir, state_dir, "--pid", "999999")
    out, err = await finish_text(process)

    assert process.returncode == 1
    assert "no live broker has pid 999999" in err
    assert out == ""
    assert live_brokers([discovery_dir]) == []


async def test_a_broker_that_cannot_start_is_an_error_naming_its_log(
    discovery_dir: Path, state_dir: Path, log_file: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await raw_relay(discovery_dir, state_dir, "--port", str(port))
        out, err = await finish_text(process)

    assert process.returncode == 1
    assert "the broker it started exited with code 1" in err and str(log_file) in err
    assert "already in use" in read(log_file)
    assert out == ""


# The wire


async def test_stdout_carries_nothing_but_json_rpc(
    tmp_path: Path, state_dir: Path, shared_broker: SharedBroker
) -> None:
    # Code that writes to stdout behind the relay's back, through print() and through fd 1.
    noisy = tmp_path / "noisy"
    noisy.mkdir()
    (noisy / "sitecustomize.py").write_text(
        "import atexit, os\n"
        "def noise():\n"
        "    print('noise from print', flush=True)\n"
        "    os.write(1, b'noise from fd 1\\n')\n"
        "atexit.register(noise)\n"
    )
    process = await raw_relay(shared_broker.discovery_dir, state_dir, PYTHONPATH=str(noisy), LOG_LEVEL="debug")
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(initialize_request("raw")).encode() + b"\n")
    async with asyncio.timeout(START_TIMEOUT):
        first = await process.stdout.readline()
    for message in (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "tabs", "arguments": {"action": "list"}},
        },
    ):
        process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.close()  # requests already read are still answered
    out, err = await finish_text(process)

    lines = [first.decode(), *out.splitlines(keepends=True)]
    messages = [json.loads(line) for line in lines]
    assert all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    assert [m["id"] for m in messages] == [1, 2, 3]
    assert messages[0]["result"]["protocolVersion"] == LEGACY_VERSION
    assert {t["name"] for t in messages[1]["result"]["tools"]} == FIXED_TOOLS
    assert json.loads(messages[2]["result"]["content"][0]["text"]) == {"tabs": []}
    assert "noise from print" in err and "noise from fd 1" in err
    assert process.returncode == 0


async def test_a_relay_whose_token_is_at_its_session_quota_says_why_and_backs_off(
    discovery_dir: Path, state_dir: Path, brokers: Brokers
) -> None:
    full = await brokers.start("--max-sessions", "1")
    # The one session the broker's own token may hold, held by another client.
    async with mcp_client(f"http://127.0.0.1:{full.port}/mcp", full.token, "holder", LEGACY):
        process = await raw_relay(discovery_dir, state_dir, LOG_LEVEL="debug")
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        try:
            process.stdin.write(json.dumps(initialize_request("refused")).encode() + b"\n")
            async with asyncio.timeout(START_TIMEOUT):
                refused = json.loads(await process.stdout.readline())
            assert refused["id"] == 1 and refused["error"]["message"].startswith(
                "browser-mcp: the broker refused this session: too_many_sessions: 1 sessions of the broker's own"
            ), refused
            assert "--max-sessions" in refused["error"]["message"]
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "tabs", "arguments": {}}}
            process.stdin.write(json.dumps(call).encode() + b"\n")
            async with asyncio.timeout(START_TIMEOUT):
                answer = json.loads(await process.stdout.readline())
            assert answer["id"] == 2 and answer["result"]["isError"] is True
            assert "too_many_sessions" in answer["result"]["content"][0]["text"]
            assert answer["result"]["structuredContent"]["error"]["code"] == "too_many_sessions"
            # Asked again ever less often: 1 s, 2 s, 4 s between attempts, not several a second.
            waits: list[str] = []
            async with asyncio.timeout(START_TIMEOUT):
                while len(waits) < 3:
                    line = (await process.stderr.readline()).decode()
                    assert line, "the relay ended"
                    if "asking again in" in line:
                        waits.append(line.rsplit("asking again in ", 1)[1].strip())
            assert waits == ["1 s", "2 s", "4 s"]
        finally:
            process.kill()
            await finish(process)
