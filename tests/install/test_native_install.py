"""``browser-mcp install-native-host`` writing manifests and launchers for each browser's folders, and
Chromium starting the installed host for the project's extension.

Every folder is under ``tmp_path`` (browser folders through ``XDG_CONFIG_HOME``/``HOME``).
"""

from __future__ import annotations

import asyncio
import json
import signal
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from broker.core.security import FIREFOX_EXTENSION_ID
from broker.install import native_install
from broker.install.native_host import HOST_NAME

from ..support.cli_helpers import CLI, START_TIMEOUT, Brokers, cli_env, lookalike_broker, plant
from .native_host_driver import ORIGIN, Host, fields

OTHER_ID = "abcdefghijklmnopabcdefghijklmnop"


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
