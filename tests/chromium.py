"""How Chromium is launched with the real extension: Debian's binary, headless, on a 2-core Linux machine.

The one home of these arguments for the real-browser tests (``tests/test_e2e_*.py``) and the
discovery benchmark (``scripts/bench_discovery.py``, which imports this as ``tests.chromium``
with the project's root on ``sys.path``, where it already is for ``broker``). It lives with the
tests rather than under ``scripts/`` because the tests are where this recipe is proven, and pytest
and tox run them without ``scripts/`` on the path; the bench reaching into ``tests/`` costs
nothing. It pulls in no test tools: the standard library, Playwright (which the bench uses too)
and :mod:`broker.core.link_auth` only.

The extension believes only brokers that prove they hold their link key: a test broker on a
probed port is trusted the way pairing would leave it (:func:`trust_broker` stores its key in the
extension's storage through the service worker; ``tests/test_e2e_pairing.py`` runs the real
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

from playwright.async_api import BrowserContext, Worker, async_playwright

from broker.core import link_auth
from broker.core.security import PROJECT_EXTENSION_ID

CHROMIUM = "/usr/bin/chromium"
EXTENSION = Path(__file__).resolve().parent.parent / "extension"


def chromium_args(*extra: str, extension: Path | None = EXTENSION) -> list[str]:
    """Chromium headless with the real extension loaded: what works on a 2-core Linux machine.

    ``extension`` is the folder it is loaded from: the clone's, or an installed package's
    (``browser-mcp extension path``, ``tests/test_package.py``); None loads none.
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
