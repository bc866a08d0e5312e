"""Discovery files: atomic private writes, what readers trust, stale-file pruning, where they go,
and that a real ``browser-mcp serve`` removes its file when it stops.

Everything happens in ``tmp_path``; ``/tmp/browser-mcp`` is only ever named through a
monkeypatched ``broker.paths.DEFAULT_DISCOVERY_DIR``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import subprocess
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from broker import discovery, paths
from broker.core.security import PROJECT_EXTENSION_ID
from broker.daemon.runtime import PROTOCOL_VERSION, VERSION, Runtime, Settings

from ..support.cli_helpers import Brokers, discovery_fields, discovery_files, lookalike_broker, plant, run_cli

ANOTHER_UID = 12345


def fields(pid: int, port: int = 8765, **extra: Any) -> dict[str, Any]:
    return discovery_fields(pid, port, **extra)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.Popen(["true"])
    child.wait()
    assert not discovery.pid_alive(child.pid)
    return child.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    """The pid of a live process other than this one, whose command line is a broker's."""
    child = lookalike_broker()
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


@pytest.fixture
def umask() -> Iterator[None]:
    """Restores the process umask that a test changes."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def foreign(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Makes a path belong to another user: chown as root, else make this process look like another uid."""

    def make(path: Path) -> None:
        if os.geteuid() == 0:
            os.chown(path, ANOTHER_UID, ANOTHER_UID, follow_symlinks=False)
        else:
            real = os.getuid()
            monkeypatch.setattr(os, "getuid", lambda: real + 1)

    return make


# What the file holds


def test_published_file_is_complete_json_with_the_brokers_identity(tmp_path: Path) -> None:
    runtime = Runtime(Settings(token="s3cret", allowed_extensions=frozenset({PROJECT_EXTENSION_ID})), port=8777)

    path = discovery.publish(tmp_path / "d", runtime.discovery_fields())

    assert path == tmp_path / "d" / f"server-{os.getpid()}.json"
    data = json.loads(path.read_text())
    assert data["port"] == 8777
    assert data["pid"] == os.getpid()
    assert data["version"] == VERSION
    assert data["protocol"] == PROTOCOL_VERSION
    assert data["token"] == "s3cret"
    started = datetime.fromisoformat(data["startedAt"])
    assert started.utcoffset() == timedelta(0), "startedAt must be UTC"
    assert abs((datetime.now(started.tzinfo) - started).total_seconds()) < 60


def test_published_record_reads_back_as_a_live_broker(tmp_path: Path) -> None:
    path = discovery.publish(tmp_path, fields(os.getpid(), port=8770, extra="kept"))

    [record] = discovery.live_brokers([tmp_path])

    assert (record.pid, record.port, record.token, record.path) == (os.getpid(), 8770, f"token-of-{os.getpid()}", path)
    assert record.url == "http://127.0.0.1:8770"


# Atomic writes


def test_publishing_over_an_existing_file_replaces_it_and_leaves_no_temp_file(tmp_path: Path) -> None:
    old = plant(tmp_path, f"server-{os.getpid()}.json", fields(os.getpid(), port=1111))
    with old.open() as reader_of_old:
        path = discovery.publish(tmp_path, fields(os.getpid(), port=2222))

        # A reader that opened the old file still reads all of it: the new file is a new inode
        # renamed over the old name, not the old file truncated and rewritten.
        assert json.loads(reader_of_old.read())["port"] == 1111
    assert json.loads(path.read_text())["port"] == 2222
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"server-{os.getpid()}.json"]


def test_a_reader_never_sees_a_partial_file_while_the_broker_republishes(tmp_path: Path) -> None:
    # A large extra key makes a non-atomic write take long enough for the reader to catch it.
    big = "x" * 2_000_000
    path = discovery.publish(tmp_path, fields(os.getpid(), padding=big, round=-1))
    stop = threading.Event()
    reads: list[int] = []
    broken: list[str] = []

    def read_forever() -> None:
        while not stop.is_set():
            try:
                data = json.loads(path.read_bytes())
            except FileNotFoundError:
                broken.append("the file was missing")
            except ValueError as exc:
                broken.append(f"partial file: {exc}")
            else:
                reads.append(data["round"])

    reader = threading.Thread(target=read_forever)
    reader.start()
    try:
        for round_ in range(40):
            discovery.publish(tmp_path, fields(os.getpid(), padding=big, round=round_))
    finally:
        stop.set()
        reader.join()

    assert broken == []
    assert reads, "the reader never got to read"
    assert json.loads(path.read_bytes())["round"] == 39
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


# Permissions


@pytest.mark.parametrize("mask", [0o022, 0o000], ids=["umask-022", "umask-000"])
def test_file_is_0600_and_the_folder_the_broker_creates_is_0700(tmp_path: Path, umask: None, mask: int) -> None:
    os.umask(mask)
    directory = tmp_path / "not-yet" / "browser-mcp"

    path = discovery.publish(directory, fields(os.getpid()))

    assert mode(path) == 0o600
    assert mode(directory) == 0o700


def test_file_stays_0600_when_it_replaces_a_readable_one(tmp_path: Path, umask: None) -> None:
    os.umask(0o000)
    old = plant(tmp_path, f"server-{os.getpid()}.json", fields(os.getpid()))
    old.chmod(0o644)

    path = discovery.publish(tmp_path, fields(os.getpid()))

    assert mode(path) == 0o600


# Stale files


@pytest.mark.parametrize(
    "reader",
    [
        pytest.param(lambda d: discovery.publish(d, fields(os.getpid())), id="publish"),
        pytest.param(discovery.prune, id="prune"),
        pytest.param(lambda d: discovery.live_brokers([d]), id="live_brokers"),
    ],
)
def test_stale_file_of_dead_pid_is_deleted(tmp_path: Path, dead_pid: int, reader: Any) -> None:
    stale = plant(tmp_path, f"server-{dead_pid}.json", fields(dead_pid))

    reader(tmp_path)

    assert not stale.exists()
    assert all(r.pid != dead_pid for r in discovery.live_brokers([tmp_path]))


def test_prune_names_what_it_deleted_and_keeps_live_brokers(tmp_path: Path, dead_pid: int, live_pid: int) -> None:
    stale = plant(tmp_path, f"server-{dead_pid}.json", fields(dead_pid))
    alive = plant(tmp_path, f"server-{live_pid}.json", fields(live_pid))

    assert discovery.prune(tmp_path) == [stale]
    assert alive.exists()
    assert [r.pid for r in discovery.live_brokers([tmp_path])] == [live_pid]


# What readers refuse to trust


def test_file_owned_by_another_user_is_ignored(tmp_path: Path, foreign: Any) -> None:
    path = plant(tmp_path, f"server-{os.getpid()}.json", fields(os.getpid()))
    foreign(path)

    assert discovery.live_brokers([tmp_path]) == []
    assert path.exists(), "another user's file is not ours to delete"


def test_symlink_is_ignored_and_its_target_left_alone(tmp_path: Path) -> None:
    target = plant(tmp_path / "elsewhere", "record.json", fields(os.getpid()))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / f"server-{os.getpid()}.json").symlink_to(target)

    assert discovery.live_brokers([tmp_path / "d"]) == []
    assert json.loads(target.read_text())["pid"] == os.getpid()


def test_fifo_named_like_a_discovery_file_is_ignored_without_blocking(tmp_path: Path) -> None:
    # Opening a FIFO for reading blocks until a writer comes: a reader must not even open it.
    os.mkfifo(tmp_path / f"server-{os.getpid()}.json", 0o600)

    assert discovery.live_brokers([tmp_path]) == []


@pytest.mark.parametrize(
    "content",
    [
        pytest.param('{"port": 8765, "pid": ', id="truncated"),
        pytest.param("not json at all", id="not-json"),
        pytest.param("[1, 2, 3]", id="not-an-object"),
        pytest.param({"port": 8765, "pid": os.getpid()}, id="missing-token"),
        pytest.param({**fields(os.getpid()), "port": "8765"}, id="port-is-a-string"),
    ],
)
def test_malformed_file_is_ignored_and_others_still_found(tmp_path: Path, live_pid: int, content: Any) -> None:
    plant(tmp_path, f"server-{os.getpid()}.json", content)
    plant(tmp_path, f"server-{live_pid}.json", fields(live_pid))

    assert [r.pid for r in discovery.live_brokers([tmp_path])] == [live_pid]


def test_file_whose_pid_differs_from_its_name_is_ignored(tmp_path: Path, live_pid: int) -> None:
    plant(tmp_path, f"server-{os.getpid()}.json", fields(live_pid))
    plant(tmp_path, f"server-{live_pid}.json", fields(os.getpid()))

    assert discovery.live_brokers([tmp_path]) == []


@pytest.mark.parametrize("name", ["server-99999999999999999999.json", f"server-{2**40}.json"])
def test_file_named_with_an_impossible_pid_is_ignored(tmp_path: Path, live_pid: int, name: str) -> None:
    plant(tmp_path, name, fields(int(name[7:-5])))
    plant(tmp_path, f"server-{live_pid}.json", fields(live_pid))

    assert [r.pid for r in discovery.live_brokers([tmp_path])] == [live_pid]
    discovery.prune(tmp_path)


def test_other_files_in_the_folder_are_not_touched(tmp_path: Path, dead_pid: int) -> None:
    others = [
        plant(tmp_path, "notes.txt", "mine"),
        plant(tmp_path, f"server-{dead_pid}.json.bak", fields(dead_pid)),
        plant(tmp_path, f"client-{dead_pid}.json", fields(dead_pid)),
    ]

    assert discovery.live_brokers([tmp_path]) == []
    discovery.prune(tmp_path)

    assert all(p.exists() for p in others)


def test_missing_folder_means_no_brokers(tmp_path: Path) -> None:
    assert discovery.live_brokers([tmp_path / "absent"]) == []
    assert discovery.prune(tmp_path / "absent") == []


def test_broker_listed_in_two_folders_is_listed_once(tmp_path: Path) -> None:
    discovery.publish(tmp_path / "a", fields(os.getpid()))
    discovery.publish(tmp_path / "b", fields(os.getpid()))

    assert [r.pid for r in discovery.live_brokers([tmp_path / "a", tmp_path / "b"])] == [os.getpid()]


# Which folder


@pytest.fixture
def default_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``/tmp/browser-mcp`` stood in for by a temporary folder, and a private XDG runtime dir."""
    monkeypatch.delenv(paths.ENV_DISCOVERY_DIR, raising=False)
    default = tmp_path / "tmp-browser-mcp"
    monkeypatch.setattr(paths, "DEFAULT_DISCOVERY_DIR", default)
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return default


def test_default_folder_is_used_when_it_does_not_exist_yet(default_dir: Path) -> None:
    assert paths.writable_discovery_dir() == (default_dir, None)


def test_default_folder_is_used_when_it_is_ours(default_dir: Path) -> None:
    default_dir.mkdir()

    assert paths.writable_discovery_dir() == (default_dir, None)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
def test_default_folder_of_another_user_falls_back_to_the_runtime_dir(default_dir: Path, tmp_path: Path) -> None:
    default_dir.mkdir()
    os.chown(default_dir, ANOTHER_UID, ANOTHER_UID)

    directory, warning = paths.writable_discovery_dir()

    assert directory == tmp_path / "xdg-runtime" / "browser-mcp"
    assert warning is not None
    assert str(default_dir) in warning and "another user" in warning and str(directory) in warning


def test_readers_look_in_the_default_folder_and_the_runtime_dir(default_dir: Path, tmp_path: Path) -> None:
    fallback = tmp_path / "xdg-runtime" / "browser-mcp"
    assert paths.discovery_dirs() == [default_dir, fallback]

    discovery.publish(fallback, fields(os.getpid()))

    assert [r.pid for r in discovery.live_brokers(paths.discovery_dirs())] == [os.getpid()]


def test_env_var_replaces_both_folders(default_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.ENV_DISCOVERY_DIR, str(tmp_path / "from-env"))

    assert paths.writable_discovery_dir() == (tmp_path / "from-env", None)
    assert paths.discovery_dirs() == [tmp_path / "from-env"]


def test_explicit_folder_wins_over_the_env_var(
    default_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(paths.ENV_DISCOVERY_DIR, str(tmp_path / "from-env"))

    assert paths.writable_discovery_dir(tmp_path / "flag") == (tmp_path / "flag", None)
    assert paths.discovery_dirs(tmp_path / "flag") == [tmp_path / "flag"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
def test_override_is_used_even_when_the_default_folder_is_another_users(
    default_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default_dir.mkdir()
    os.chown(default_dir, ANOTHER_UID, ANOTHER_UID)
    monkeypatch.setenv(paths.ENV_DISCOVERY_DIR, str(tmp_path / "from-env"))

    assert paths.writable_discovery_dir() == (tmp_path / "from-env", None)


# A real broker removes its file


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_serve_removes_its_file_on_signal(brokers: Brokers, signum: int) -> None:
    broker = await brokers.start()

    assert broker.discovery_file == brokers.discovery_dir / f"server-{broker.pid}.json"
    assert mode(broker.discovery_file) == 0o600
    data = json.loads(broker.discovery_file.read_text())
    assert (data["port"], data["pid"]) == (broker.port, broker.pid)

    broker.send_signal(signum)
    exited = await broker.exited()

    assert exited.returncode == 0, exited.stderr
    assert "Traceback" not in exited.stderr
    assert discovery_files(brokers.discovery_dir) == []


async def test_serve_makes_its_folder_0700_and_file_0600_under_umask_000(brokers: Brokers, tmp_path: Path) -> None:
    directory = tmp_path / "fresh" / "discovery"

    broker = await brokers.start(discovery_dir=directory, umask=0o000)

    assert mode(directory) == 0o700
    assert mode(broker.discovery_file) == 0o600


async def test_serve_file_holds_what_the_cli_needs(brokers: Brokers) -> None:
    broker = await brokers.start()

    data = json.loads(broker.discovery_file.read_text())

    assert {"port", "pid", "startedAt", "version", "protocol", "token"} <= data.keys()
    assert datetime.fromisoformat(data["startedAt"]).utcoffset() == timedelta(0)
    assert data["version"] == VERSION
    assert isinstance(data["token"], str) and len(data["token"]) >= 32


async def test_stop_command_removes_the_file(brokers: Brokers) -> None:
    broker = await brokers.start()

    result = await run_cli("stop", discovery_dir=brokers.discovery_dir)

    assert result.returncode == 0, result.stderr
    assert not broker.discovery_file.exists()
    exited = await broker.exited()
    assert exited.returncode == 0, exited.stderr
    assert discovery_files(brokers.discovery_dir) == []


async def test_serve_prunes_a_stale_file_when_it_starts(brokers: Brokers, dead_pid: int) -> None:
    stale = plant(brokers.discovery_dir, f"server-{dead_pid}.json", fields(dead_pid))

    broker = await brokers.start()

    assert not stale.exists()
    assert discovery_files(brokers.discovery_dir) == [broker.discovery_file.name]


def test_a_file_others_may_read_is_ignored_with_a_log_line(
    tmp_path: Path, live_pid: int, caplog: pytest.LogCaptureFixture
) -> None:
    path = plant(tmp_path, f"server-{live_pid}.json", fields(live_pid))
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING, "broker.discovery"):
        assert discovery.live_brokers([tmp_path]) == []
    assert f"ignoring {path}: other users may read or write it" in caplog.text
    path.chmod(0o600)
    assert [r.pid for r in discovery.live_brokers([tmp_path])] == [live_pid]


def test_a_file_whose_pid_is_now_another_program_is_ignored_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = subprocess.Popen(["sleep", "120"])
    try:
        path = plant(tmp_path, f"server-{other.pid}.json", fields(other.pid))
        with caplog.at_level(logging.WARNING, "broker.discovery"):
            assert discovery.live_brokers([tmp_path]) == []
        assert f"pid {other.pid} is not a browser-mcp broker of this user" in caplog.text
        assert path.exists(), "that program may be anything: its file is left alone"
    finally:
        other.kill()
        other.wait()


def test_only_a_broker_command_line_of_this_user_passes_the_process_check() -> None:
    assert discovery.is_broker_process(os.getpid())
    lookalike = lookalike_broker()
    try:
        assert discovery.is_broker_process(lookalike.pid)
    finally:
        lookalike.kill()
        lookalike.wait()
    assert not discovery.is_broker_process(1)  # init: another user's (root's) and not a broker
