"""How Chromium is launched with the real extension: Debian's binary, headless, on a 2-core Linux machine.

The one home of these arguments for the real-browser tests (``tests/e2e/test_e2e_*.py``) and the
benchmark's browser suites (``scripts/benchmarks/``, which import this as ``tests.harness.chromium``
with the project's root on ``sys.path``, where it already is for ``broker``). It pulls in no test
tools: the standard library, Playwright (which the bench uses too) and :mod:`broker.core.link_auth`
only.

The extension believes only brokers that prove they hold their link key: a test broker on a
probed port is trusted the way pairing would leave it (:func:`trust_broker` stores its key in the
extension's storage through the service worker; ``tests/e2e/test_e2e_pairing.py`` runs the real
pairing through the popup), and a fake broker answers the challenge (:func:`answer_challenge`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from playwright.async_api import BrowserContext, Page, Worker, async_playwright

from broker.core import link_auth
from broker.core.security import PROJECT_EXTENSION_ID

CHROMIUM = "/usr/bin/chromium"
EXTENSION = Path(__file__).resolve().parents[2] / "extension"


def chromium_args(*extra: str, extension: Path | None = EXTENSION) -> list[str]:
    """Chromium headless with the real extension loaded: what works on a 2-core Linux machine.

    ``extension`` is the folder it is loaded from: the clone's, or an installed package's
    (``browser-mcp extension path``, ``tests/install/test_package.py``); None loads none.
    """
    loaded = [] if extension is None else [
        # Playwright adds --disable-extensions; without this exception the worker never starts.
        f"--disable-extensions-except={extension}",
        f"--load-extension={extension}",
    ]  # fmt: skip
    return [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        *loaded,
        *extra,
    ]


@contextlib.asynccontextmanager
async def extension_chromium(
    home: Path,
    *extra: str,
    extension: Path = EXTENSION,
    wait: float = 30.0,
    env: Mapping[str, str] | None = None,
    **launch: Any,
) -> AsyncIterator[tuple[BrowserContext, Worker]]:
    """Headless Chromium with the extension from ``extension``, its profile and config under
    ``home``, once the extension's service worker runs (the project's id, whatever the folder).
    ``env``, which its native host inherits too, replaces this process's environment."""
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing: install Debian's chromium package"
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(home / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            env=dict(env) if env is not None else {**os.environ, "XDG_CONFIG_HOME": str(home / "config")},
            args=chromium_args(*extra, extension=extension),
            **launch,
        )
        try:
            async with asyncio.timeout(wait):
                worker = context.service_workers[0] if context.service_workers else None
                worker = worker or await context.wait_for_event("serviceworker")
            assert worker.url == f"chrome-extension://{PROJECT_EXTENSION_ID}/background.js"
            yield context, worker
        finally:
            await context.close()


async def instance_id(worker: Worker, wait: float = 30.0) -> str:
    """The browser instance id the extension keeps in its storage (its ``connected`` names it)."""
    async with asyncio.timeout(wait):
        while True:
            found: str | None = await worker.evaluate(
                "chrome.storage.local.get('instanceId').then((v) => v.instanceId ?? null)"
            )
            if found:
                return found
            await asyncio.sleep(0.1)


class _Worker(Protocol):
    async def evaluate(self, expression: str, arg: Any = None) -> Any: ...


async def trust_broker(worker: _Worker, token: str) -> None:
    """Store the link key of the broker holding ``token`` in the extension, as pairing does."""
    await worker.evaluate(
        """([id, key]) => chrome.storage.local.get("pairedBrokers").then(({pairedBrokers}) =>
            chrome.storage.local.set({pairedBrokers: {...(pairedBrokers ?? {}), [id]: key}}))""",
        [link_auth.broker_id(token), link_auth.b64(link_auth.link_key(token))],
    )


async def change_settings(worker: _Worker, **changes: Any) -> None:
    """Change the extension's settings where its options page keeps them, and return once the
    worker has heard the change: its own ``chrome.storage.onChanged`` listener, added at its start,
    runs before the one added here, so the settings it acts on are the new ones by then."""
    await worker.evaluate(
        """async (changes) => {
            let heard;
            const listener = (change, area) => {
                if (area === "local" && change.settings) heard();
            };
            const told = new Promise((resolve) => (heard = resolve));
            chrome.storage.onChanged.addListener(listener);
            const {settings} = await chrome.storage.local.get("settings");
            const changed = {...settings, ...changes};
            await chrome.storage.local.set({settings: changed});
            // Storage tells no one of a write that changed nothing.
            if (JSON.stringify(changed) !== JSON.stringify(settings)) await told;
            chrome.storage.onChanged.removeListener(listener);
        }""",
        changes,
    )


async def tab_group_title(worker: _Worker, tab_id: int) -> str | None:
    """The title of the tab group the browser shows the tab in, if any (asked of the extension)."""
    title: str | None = await worker.evaluate(
        """async (id) => {
            const tab = await chrome.tabs.get(id);
            // A group emptied meanwhile is gone before the tab's groupId says so.
            if (tab.groupId === -1) return null;
            const group = await chrome.tabGroups.get(tab.groupId).catch(() => null);
            return group?.title ?? null;
        }""",
        tab_id,
    )
    return title


async def probe_only(worker: _Worker, port: int) -> None:
    """Have the extension look for brokers on ``port`` alone (its options' port range), so that
    a test's broker on a port of its own is found, and no other run's browser finds it."""
    await change_settings(worker, portFirst=port, portLast=port)


async def in_front(worker: _Worker, *, tab_id: int | None = None, url: str | None = None) -> None:
    """Return once the browser has the tab (by id, or by the URL it shows) as the active tab of
    the window last focused. Bringing a page to the front returns before the browser's tab and
    window events have run: what the extension reads may still be the tab in front before it."""
    try:
        async with asyncio.timeout(30.0):
            await _in_front(worker, tab_id, url)
    except TimeoutError:
        raise AssertionError(f"the browser never put tab {tab_id or url} in front") from None


async def _in_front(worker: _Worker, tab_id: int | None, url: str | None) -> None:
    await worker.evaluate(
        """([tabId, url]) => new Promise((resolve) => {
            const check = async () => {
                const [tab] = await chrome.tabs.query({active: true, lastFocusedWindow: true});
                if (!tab || (tabId !== null ? tab.id !== tabId : tab.url !== url)) return;
                chrome.tabs.onActivated.removeListener(check);
                chrome.windows.onFocusChanged.removeListener(check);
                resolve();
            };
            chrome.tabs.onActivated.addListener(check);
            chrome.windows.onFocusChanged.addListener(check);
            check();
        })""",
        [tab_id, url],
    )


async def visible(page: Page) -> None:
    """Return once the page is visible (it hears so after the browser put its tab in front)."""
    await page.evaluate(
        """() => document.visibilityState === "visible" || new Promise((resolve) =>
            document.addEventListener("visibilitychange", () => document.visibilityState === "visible" && resolve()))"""
    )


def answer_challenge(token: str, port: int, nonce: str) -> dict[str, Any]:
    """The ``authProof`` a broker holding ``token`` on ``port`` answers ``authChallenge {nonce}`` with."""
    ours = link_auth.b64(secrets.token_bytes(32))
    key = link_auth.link_key(token)
    return {
        "type": "authProof",
        "brokerId": link_auth.broker_id(token),
        "nonce": ours,
        "proof": link_auth.proof(key, link_auth.Role.BROKER, port, nonce, ours),
    }
