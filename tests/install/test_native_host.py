"""The native messaging host as Chrome runs it (a subprocess speaking length-prefixed JSON on
stdin/stdout), and ``browser-mcp install-native-host`` writing manifests and launchers.

Brokers are real ``browser-mcp serve`` subprocesses; every folder is under ``tmp_path``
(discovery folder through the environment, browser folders through ``XDG_CONFIG_HOME``/``HOME``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import struct
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from watchfiles import awatch

from broker.core.security import FIREFOX_EXTENSION_ID, PROJECT_EXTENSION_ID
from broker.daemon.runtime import PROTOCOL_VERSION, VERSION
from broker.discovery import BrokerRecord, pid_alive
from broker.install import native_install
from broker.install.native_host import HOST_NAME, MAX_TO_BROWSER, brokers_message

from ..support.cli_helpers import (
    CLI,
    EXIT_TIMEOUT,
    START_TIMEOUT,
    Brokers,
    cli_env,
    discovery_fields,
    lookalike_broker,
    plant,
)

ORIGIN = f"chrome-extension://{PROJECT_EXTENSION_ID}/"
OTHER_ID = "abcdefghijklmnopabcdefghijklmnop"
ANOTHER_UID = 12345
_LENGTH = struct.Struct("=I")


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return _LENGTH.pack(len(body)) + body


def split_frames(data: bytes) -> list[dict[str, Any]]:
    """Every message in ``data``; fails when anything but whole frames of JSON objects is there."""
    messages = []
    while data:
        assert len(data) >= _LENGTH.size, f"a partial length prefix: {data!r}"
        (size,) = _LENGTH.unpack(data[: _LENGTH.size])
        body, data = data[_LENGTH.size : _LENGTH.size + size], data[_LENGTH.size + size :]
        assert len(body) == size, f"a frame cut short: {body!r}"
        message = json.loads(body)
        assert isinstance(message, dict) and "type" in message, message
        messages.append(message)
    return messages


class Host:
    """``browser-mcp native-host`` in a subprocess, driven as the browser drives it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, discovery_dir: Path, *args: str, command: tuple[str, ...] | None = None) -> Host:
        process = await asyncio.create_subprocess_exec(
            *(command or (*CLI, "native-host")),
            *(args or (ORIGIN,)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=cli_env(discovery_dir),
        )
        return cls(process)

    async def read(self, within: float = START_TIMEOUT) -> dict[str, Any]:
        assert self.process.stdout is not None
        async with asyncio.timeout(within):
            header = await self.process.stdout.readexactly(_LENGTH.size)
            body = await self.process.stdout.readexactly(_LENGTH.unpack(header)[0])
        message: dict[str, Any] = json.loads(body)
        return message

    async def brokers(self, within: float = START_TIMEOUT) -> list[dict[str, Any]]:
        message = await self.read(within)
        assert message["type"] == "brokers", message
        assert set(message) == {"type", "brokers"}
        brokers: list[dict[str, Any]] = message["brokers"]
        return brokers

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame(message))

    async def close(self) -> tuple[int | None, list[dict[str, Any]], str]:
        """Close stdin as the browser does; exit code, the messages after, and stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            async with asyncio.timeout(EXIT_TIMEOUT):
                out, err = await self.process.communicate()
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.communicate()
        return self.process.returncode, split_frames(out), err.decode()


@pytest.fixture
async def brokers(tmp_path: Path) -> AsyncIterator[Brokers]:
    async with Brokers(tmp_path / "discovery") as launched:
        yield launched


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


def fields(pid: int, port: int = 8765) -> dict[str, Any]:
    return discovery_fields(pid, port, extra="not sent")


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
    host.process.stdin.write(_LENGTH.pack(len(body)) + body)
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
    host.process.stdin.write(_LENGTH.pack(100) + b'{"type"')

    returncode, _, stderr = await host.close()

    assert returncode == 0, stderr


# install-native-host


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment whose home, config root and discovery folder are in ``tmp_path``."""
    (tmp_path / "home").mkdir()
    return cli_env(tmp_path / "discovery", HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"))


def install(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "install-native-host", *args], check=False, env=env, capture_output=True, text=True, timeout=60
    )


def hosts_dir(env: dict[str, str], browser: str) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / native_install.BROWSERS[browser][0] / "NativeMessagingHosts"


def check_installed(folder: Path, origins: list[str]) -> Path:
    """The launcher the manifest in ``folder`` names, after checking the manifest."""
    manifest = json.loads((folder / f"{HOST_NAME}.json").read_text())
    assert manifest["name"] == HOST_NAME == "browser_mcp.broker"
    assert manifest["type"] == "stdio"
    assert manifest["description"]
    assert manifest["allowed_origins"] == origins
    launcher = Path(manifest["path"])
    assert launcher.is_absolute()
    assert launcher.parent == folder
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o755
    return launcher


def test_install_writes_a_manifest_and_launcher_for_each_browser(home: dict[str, str]) -> None:
    result = install(
        home, *(f"--browser={b}" for b in native_install.BROWSERS), "--allow-extension", OTHER_ID, "--json"
    )

    assert result.returncode == 0, result.stderr
    origins = [ORIGIN, f"chrome-extension://{OTHER_ID}/"]
    written = json.loads(result.stdout)["installed"]
    assert [w["browser"] for w in written] == list(native_install.BROWSERS)
    for item, browser in zip(written, native_install.BROWSERS, strict=True):
        folder = hosts_dir(home, browser)
        launcher = check_installed(folder, origins)
        assert item == {
            "browser": browser,
            "manifest": str(folder / f"{HOST_NAME}.json"),
            "launcher": str(launcher),
            "allowedOrigins": origins,
        }
    assert hosts_dir(home, "brave") == Path(home["XDG_CONFIG_HOME"], "BraveSoftware/Brave-Browser/NativeMessagingHosts")


def test_install_without_browser_chooses_those_present_else_chromium(home: dict[str, str]) -> None:
    result = install(home)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in Path(home["XDG_CONFIG_HOME"]).iterdir()) == ["chromium"]
    assert str(hosts_dir(home, "chromium") / f"{HOST_NAME}.json") in result.stdout

    (Path(home["XDG_CONFIG_HOME"]) / "microsoft-edge").mkdir()
    result = install(home)

    assert result.returncode == 0, result.stderr
    check_installed(hosts_dir(home, "edge"), [ORIGIN])
    check_installed(hosts_dir(home, "chromium"), [ORIGIN])
    assert not hosts_dir(home, "chrome").exists()


def test_install_for_firefox_allows_the_add_ons_gecko_id_under_dot_mozilla(home: dict[str, str]) -> None:
    result = install(home, "--browser", "firefox", "--json")
    assert result.returncode == 0, result.stderr
    folder = Path(home["HOME"]) / ".mozilla" / "native-messaging-hosts"
    manifest = json.loads((folder / f"{HOST_NAME}.json").read_text())
    assert manifest["allowed_extensions"] == [FIREFOX_EXTENSION_ID] and "allowed_origins" not in manifest
    assert Path(manifest["path"]) == folder / native_install.LAUNCHER_NAME
    assert json.loads(result.stdout)["installed"][0]["allowedOrigins"] == [FIREFOX_EXTENSION_ID]
    # Once Firefox's folder exists, installing without --browser writes there too.
    result = install(home)
    assert result.returncode == 0 and str(folder) in result.stdout, result.stdout


def test_install_into_a_custom_user_data_dir(home: dict[str, str], tmp_path: Path) -> None:
    profile = tmp_path / "profile"

    result = install(home, "--user-data-dir", str(profile))

    assert result.returncode == 0, result.stderr
    check_installed(profile / "NativeMessagingHosts", [ORIGIN])
    assert not Path(home["XDG_CONFIG_HOME"]).exists(), "a custom profile alone installs nowhere else"


async def test_the_launcher_starts_the_host(home: dict[str, str], tmp_path: Path) -> None:
    discovery_dir = tmp_path / "discovery"
    result = install(home, "--browser", "chromium", "--discovery-dir", str(discovery_dir))
    assert result.returncode == 0, result.stderr
    launcher = check_installed(hosts_dir(home, "chromium"), [ORIGIN])
    broker = lookalike_broker()
    try:
        plant(discovery_dir, f"server-{broker.pid}.json", fields(broker.pid))
        host = await Host.start(tmp_path / "elsewhere", command=(str(launcher),))
        try:
            [listed] = await host.brokers()
        finally:
            returncode, after, stderr = await host.close()
    finally:
        broker.kill()
        broker.wait()

    assert listed["pid"] == broker.pid, "the launcher passes its --discovery-dir"
    assert (returncode, after) == (0, []), stderr


def test_uninstall_removes_manifest_and_launcher(home: dict[str, str], tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    assert install(home, "--browser", "chrome", "--browser", "brave").returncode == 0
    assert install(home, "--user-data-dir", str(profile)).returncode == 0
    (hosts_dir(home, "chrome") / "someone-elses.json").write_text("{}")

    removed = install(home, "--uninstall", "--json")
    removed_custom = install(home, "--uninstall", "--user-data-dir", str(profile))

    assert removed.returncode == 0, removed.stderr
    assert len(json.loads(removed.stdout)["removed"]) == 4
    assert removed_custom.returncode == 0, removed_custom.stderr
    assert sorted(p.name for p in hosts_dir(home, "chrome").iterdir()) == ["someone-elses.json"]
    assert list(hosts_dir(home, "brave").iterdir()) == []
    assert list((profile / "NativeMessagingHosts").iterdir()) == []


@pytest.mark.parametrize("bad", ["ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP", "short", "abcdefghijklmnopabcdefghijklmnoz"])
def test_a_bad_extension_id_is_refused_and_nothing_is_written(home: dict[str, str], bad: str) -> None:
    result = install(home, "--browser", "chromium", "--allow-extension", bad)

    assert result.returncode == 1
    assert bad in result.stderr and "extension id" in result.stderr
    assert not Path(home["XDG_CONFIG_HOME"]).exists()


def test_macos_folders_are_under_application_support(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    support = tmp_path / "Library" / "Application Support"

    found = native_install.targets(list(native_install.BROWSERS), [], platform="darwin")

    assert [t.folder for t in found] == [
        support / "Google/Chrome/NativeMessagingHosts",
        support / "Chromium/NativeMessagingHosts",
        support / "BraveSoftware/Brave-Browser/NativeMessagingHosts",
        support / "Microsoft Edge/NativeMessagingHosts",
    ]
    (support / "Google" / "Chrome").mkdir(parents=True)
    assert [t.label for t in native_install.default_targets(platform="darwin")] == ["chrome"]
    [firefox] = native_install.targets([native_install.FIREFOX], [], platform="darwin")
    assert firefox.folder == support / "Mozilla/NativeMessagingHosts" and firefox.firefox


def test_linux_folders_follow_xdg_config_home_else_dot_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert native_install.targets(["chrome"], [], platform="linux")[0].folder == (
        tmp_path / "xdg" / "google-chrome" / "NativeMessagingHosts"
    )

    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert native_install.targets(["chrome"], [], platform="linux")[0].folder == (
        tmp_path / "home" / ".config" / "google-chrome" / "NativeMessagingHosts"
    )


# A real browser


SMOKE_WORKER = """
self.received = [];
self.port = chrome.runtime.connectNative("browser_mcp.broker");
self.port.onMessage.addListener((message) => self.received.push(message));
self.port.onDisconnect.addListener(() => {
  self.received.push({ type: "disconnected", error: chrome.runtime.lastError?.message ?? null });
});
"""
# Resolves with the messages once there are ``count`` of them (polled inside the worker).
WAIT_FOR_MESSAGES = """(count) => new Promise((resolve) => {
  const check = () => (self.received.length >= count ? resolve(self.received) : setTimeout(check, 20));
  check();
})"""


@pytest.mark.browser
async def test_chromium_starts_the_installed_host_for_the_projects_extension(
    brokers: Brokers, home: dict[str, str], tmp_path: Path
) -> None:
    """Chromium reads the manifest of ``--user-data-dir``, runs the launcher and relays the list.

    A throwaway extension with the project's manifest ``key`` (so the project's id, the one
    origin allowed by default) calls ``connectNative``; nothing else of the real extension is used.
    """
    from playwright.async_api import async_playwright  # noqa: PLC0415 - only this test needs it

    key = json.loads((Path(__file__).parents[2] / "extension" / "manifest.json").read_text())["key"]
    extension = tmp_path / "extension"
    extension.mkdir()
    (extension / "manifest.json").write_text(
        json.dumps(
            {
                "manifest_version": 3,
                "name": "native host check",
                "version": "0.0.1",
                "key": key,
                "background": {"service_worker": "worker.js"},
                "permissions": ["nativeMessaging"],
            }
        )
    )
    (extension / "worker.js").write_text(SMOKE_WORKER)
    profile = tmp_path / "profile"
    result = install(home, "--user-data-dir", str(profile), "--discovery-dir", str(brokers.discovery_dir))
    assert result.returncode == 0, result.stderr
    broker = await brokers.start()

    async def received(count: int) -> list[dict[str, Any]]:
        async with asyncio.timeout(START_TIMEOUT):
            messages: list[dict[str, Any]] = await worker.evaluate(WAIT_FOR_MESSAGES, count)
        return messages

    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path="/usr/bin/chromium",
            headless=True,
            env=home,
            args=[
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--disable-extensions-except={extension}",
                f"--load-extension={extension}",
            ],
        )
        try:
            worker = (
                context.service_workers[0] if context.service_workers else await context.wait_for_event("serviceworker")
            )
            [first] = await received(1)
            assert first["type"] == "brokers", first
            assert [(b["pid"], b["port"]) for b in first["brokers"]] == [(broker.pid, broker.port)]

            broker.send_signal(signal.SIGTERM)
            await broker.exited()
            assert (await received(2))[1] == {"type": "brokers", "brokers": []}
        finally:
            await context.close()
