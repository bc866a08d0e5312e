"""The native messaging host as Chrome runs it (a subprocess speaking length-prefixed JSON on
stdin/stdout): the list of brokers it keeps current, the extension's messages, its lifetime and
its wire. ``browser-mcp install-native-host`` is tested in test_native_install.py.

Brokers are real ``browser-mcp serve`` subprocesses; every folder is under ``tmp_path``
(the discovery folder through the environment).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from watchfiles import awatch

from broker.daemon.runtime import PROTOCOL_VERSION, VERSION
from broker.discovery import BrokerRecord, pid_alive
from broker.install.native_host import MAX_TO_BROWSER, brokers_message

from ..support.cli_helpers import START_TIMEOUT, Brokers, lookalike_broker, plant
from .native_host_driver import LENGTH, ORIGIN, Host, fields, frame

ANOTHER_UID = 12345


@pytest.fixture
async def hosts() -> AsyncIterator[Callable[..., Any]]:
    started: list[Host] = []

    async def start(discovery_dir: Path, *args: str, **kwargs: Any) -> Host:
        host = await Host.start(discovery_dir, *args, **kwargs)
        started.append(host)
        return host

    yield start
    for host in started:
        if host.process.returncode is None:
            await host.close()


@pytest.fixture
def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    assert not pid_alive(child.pid)
    return child.pid


# The list of brokers


async def test_host_sends_the_live_brokers_when_it_starts(brokers: Brokers, hosts: Any) -> None:
    broker = await brokers.start()
    record = json.loads(broker.discovery_file.read_text())

    host = await hosts(brokers.discovery_dir)

    assert await host.brokers() == [
        {
            "port": broker.port,
            "pid": broker.pid,
            "token": record["token"],
            "version": VERSION,
            "protocol": PROTOCOL_VERSION,
            "startedAt": record["startedAt"],
        }
    ]


async def test_broker_started_after_the_host_is_sent_within_a_second(brokers: Brokers, hosts: Any) -> None:
    brokers.discovery_dir.mkdir(mode=0o700)
    host = await hosts(brokers.discovery_dir)
    assert await host.brokers() == []

    broker = await brokers.start()  # its file is written before it prints where it listens

    assert [b["port"] for b in await host.brokers(within=1.0)] == [broker.port]


async def test_folder_created_after_the_host_starts_is_watched(brokers: Brokers, hosts: Any) -> None:
    host = await hosts(brokers.discovery_dir)
    assert await host.brokers() == []
    assert not brokers.discovery_dir.exists()

    first = await brokers.start()
    assert [b["pid"] for b in await host.brokers(within=2.5)] == [first.pid]
    second = await brokers.start()

    listed = await host.brokers(within=1.0)

    assert [b["pid"] for b in listed] == [first.pid, second.pid]


async def test_stopped_broker_disappears_within_a_second(brokers: Brokers, hosts: Any) -> None:
    stays, stops = await brokers.start(), await brokers.start()
    host = await hosts(brokers.discovery_dir)
    assert {b["pid"] for b in await host.brokers()} == {stays.pid, stops.pid}

    stops.send_signal(signal.SIGTERM)
    await stops.exited()

    assert [b["pid"] for b in await host.brokers(within=1.0)] == [stays.pid]


async def test_broker_killed_without_removing_its_file_disappears(brokers: Brokers, hosts: Any) -> None:
    broker = await brokers.start()
    host = await hosts(brokers.discovery_dir)
    assert [b["pid"] for b in await host.brokers()] == [broker.pid]

    broker.send_signal(signal.SIGKILL)
    await broker.process.wait()
    assert broker.discovery_file.exists()

    # Found by the host's next rescan (once a second), however late a loaded machine runs it.
    assert await host.brokers() == []
    # A rescan between the kill and the reaping above saw a zombie: a pid alive but no broker's,
    # left out of the list, its file kept as another program's would be. The rescan after the
    # reaping deletes it, with no list to send, as nothing changed for the browser.
    async with asyncio.timeout(START_TIMEOUT):
        # Also woken every half second: a deletion before the watch began is seen then.
        async for _ in awatch(brokers.discovery_dir, rust_timeout=500, yield_on_timeout=True):
            if not broker.discovery_file.exists():
                break


async def test_untrusted_files_are_not_listed(tmp_path: Path, hosts: Any, dead_pid: int) -> None:
    directory = tmp_path / "discovery"
    broker = lookalike_broker()
    stale = plant(directory, f"server-{dead_pid}.json", fields(dead_pid))
    live = await asyncio.create_subprocess_exec("sleep", "60")
    try:
        plant(directory, f"server-{broker.pid}.json", fields(broker.pid))
        plant(directory, f"server-{live.pid}.json", '{"port": 8765, "pid": ')
        (directory / "server-1.json").symlink_to(directory / f"server-{broker.pid}.json")
        # A well-formed file whose pid is another program (this test's).
        plant(directory, f"server-{os.getpid()}.json", fields(os.getpid()))

        host = await hosts(directory)

        [listed] = await host.brokers()
        assert listed == {k: v for k, v in fields(broker.pid).items() if k != "extra"}
        assert not stale.exists()
    finally:
        live.kill()
        await live.wait()
        broker.kill()
        broker.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
async def test_file_of_another_user_is_not_listed(tmp_path: Path, hosts: Any) -> None:
    directory = tmp_path / "discovery"
    foreign = plant(directory, f"server-{os.getpid()}.json", fields(os.getpid()))
    os.chown(foreign, ANOTHER_UID, ANOTHER_UID)

    host = await hosts(directory)

    assert await host.brokers() == []
    assert foreign.exists()


def test_a_list_too_big_for_one_message_is_cut_to_fit() -> None:
    records = [BrokerRecord(8765, pid, "2025-01-02T03:04:05Z", VERSION, 1, "t" * 100_000) for pid in range(1, 30)]

    message = brokers_message(records)

    assert len(frame(message)) <= MAX_TO_BROWSER
    assert [b["pid"] for b in message["brokers"]] == list(range(1, len(message["brokers"]) + 1))
    assert len(message["brokers"]) >= 9


# Messages from the extension


async def test_refresh_resends_the_list_and_ping_is_answered(brokers: Brokers, hosts: Any) -> None:
    broker = await brokers.start()
    host = await hosts(brokers.discovery_dir)
    first = await host.brokers()

    host.send({"type": "ping"})
    assert await host.read() == {"type": "pong"}
    host.send({"type": "refresh"})

    assert await host.brokers() == first
    assert [b["pid"] for b in first] == [broker.pid]


async def test_unknown_and_malformed_messages_are_logged_and_ignored(tmp_path: Path, hosts: Any) -> None:
    host = await hosts(tmp_path / "discovery")
    assert await host.brokers() == []

    host.send({"type": "launchMissiles"})
    host.send([1, 2])
    assert host.process.stdin is not None
    body = b"{not json"
    host.process.stdin.write(LENGTH.pack(len(body)) + body)
    host.send({"type": "refresh"})

    assert await host.brokers() == []
    returncode, after, stderr = await host.close()
    assert returncode == 0
    assert after == []
    assert "launchMissiles" in stderr and "not JSON" in stderr
    assert "Traceback" not in stderr


# Lifetime and the wire


async def test_closing_stdin_ends_the_host_with_exit_0_and_stdout_holds_only_frames(
    brokers: Brokers, hosts: Any
) -> None:
    broker = await brokers.start()
    # Chrome on Windows adds a window handle after the origin.
    host = await hosts(brokers.discovery_dir, ORIGIN, "--parent-window=0")

    returncode, messages, stderr = await host.close()

    assert returncode == 0, stderr
    assert [m["type"] for m in messages] == ["brokers"]
    assert [b["pid"] for b in messages[0]["brokers"]] == [broker.pid]
    assert ORIGIN in stderr, "the caller is logged"
    assert "Traceback" not in stderr


async def test_host_exits_when_stdin_closes_in_the_middle_of_a_message(tmp_path: Path, hosts: Any) -> None:
    host = await hosts(tmp_path / "discovery")
    assert await host.brokers() == []
    assert host.process.stdin is not None
    host.process.stdin.write(LENGTH.pack(100) + b'{"type"')

    returncode, _, stderr = await host.close()

    assert returncode == 0, stderr
