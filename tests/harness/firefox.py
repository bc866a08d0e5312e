"""How Firefox ESR is launched with the real extension, and driven over WebDriver BiDi.

The Firefox counterpart of ``tests/harness/chromium.py`` for the real-browser tests
(``tests/firefox/test_firefox_*.py``). Debian's ``firefox-esr`` runs headless with a profile and ``HOME``
of the test's own (Firefox reads native messaging manifests under ``$HOME/.mozilla``), prints the
port its WebDriver BiDi server listens on, and takes the extension's Firefox build (the folder
``browser-mcp extension path --browser firefox`` prints) as a temporary add-on over
``webExtension.install``. No Selenium or geckodriver: :class:`Bidi` is a small client over
aiohttp's WebSocket, with only the commands the tests use.

The extension's pages get the origin ``moz-extension://<uuid>``; the profile's ``user.js`` fixes
that uuid before launch (``extensions.webextensions.uuids``), so the tests know it. What the
Chromium tests evaluate in the service worker they evaluate in one of the extension's own pages
opened in a tab (:meth:`Firefox.extension_page`; BiDi navigates to ``moz-extension:`` only with
``--remote-allow-system-access``): it shares the background's storage and APIs,
so ``tests.chromium``'s ``trust_broker``, ``probe_only``, ``change_settings`` and ``in_front``
take it as they take a worker.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from broker.core.security import FIREFOX_EXTENSION_ID
from broker.install import extension_package, firefox_extension

from .processes import terminate_or_kill
from .waiting import eventually

FIREFOX = "/usr/bin/firefox-esr"
_LISTENING = re.compile(rb"WebDriver BiDi listening on (ws://\S+)")

# Quiet, fast and predictable in a test: no first-run pages, updates, telemetry or network
# services, and the event page kept (tests of its unloading lower the idle timeout).
BASE_PREFS: dict[str, Any] = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "browser.tabs.warnOnClose": False,
    "xpinstall.signatures.required": False,
    "extensions.background.idle.timeout": 600_000,
}


class BidiError(AssertionError):
    """A WebDriver BiDi command answered with an error, or a script threw."""


class Bidi:
    """One WebDriver BiDi session over a WebSocket: commands by id, events by method."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._listeners: list[tuple[str, asyncio.Queue[dict[str, Any]]]] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            frame = json.loads(message.data)
            answered = self._waiting.pop(frame.get("id", -1), None)
            if answered is not None and not answered.done():
                answered.set_result(frame)
            elif frame.get("type") == "event":
                for method, queue in self._listeners:
                    if method == frame["method"]:
                        queue.put_nowait(frame["params"])
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(BidiError("Firefox closed the WebDriver BiDi connection"))

    async def call(self, method: str, params: Mapping[str, Any] | None = None, wait: float = 60.0) -> Any:
        number = next(self._ids)
        answer = self._waiting[number] = asyncio.get_running_loop().create_future()
        await self._ws.send_json({"id": number, "method": method, "params": dict(params or {})})
        async with asyncio.timeout(wait):
            frame = await answer
        if frame.get("type") == "error":
            raise BidiError(f"{method}: {frame.get('error')}: {frame.get('message')}")
        return frame["result"]

    @contextlib.asynccontextmanager
    async def events(self, method: str) -> AsyncIterator[asyncio.Queue[dict[str, Any]]]:
        """The ``method`` events heard while inside (subscribed for the session)."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        entry = (method, queue)
        self._listeners.append(entry)
        await self.call("session.subscribe", {"events": [method]})
        try:
            yield queue
        finally:
            self._listeners.remove(entry)

    async def close(self) -> None:
        self._reader.cancel()
        await self._ws.close()


def _as_json(expression: str, arg: Any) -> str:
    """A script whose value is the JSON of ``expression``'s (a function called with ``arg``)."""
    called = f"({expression})(JSON.parse({json.dumps(json.dumps(arg))}))" if arg is not None else f"({expression})"
    return f"Promise.resolve({called}).then((value) => JSON.stringify(value === undefined ? null : value))"


class Context:
    """One browsing context (a tab), as the tests drive it."""

    def __init__(self, bidi: Bidi, context: str) -> None:
        self.bidi = bidi
        self.id = context

    async def goto(self, url: str, wait: str = "complete") -> None:
        await self.bidi.call("browsingContext.navigate", {"context": self.id, "url": url, "wait": wait})

    async def evaluate(self, expression: str, arg: Any = None) -> Any:
        """``expression``'s value (awaited, through JSON); a function is called with ``arg``."""
        result = await self.bidi.call(
            "script.evaluate",
            {"expression": _as_json(expression, arg), "target": {"context": self.id}, "awaitPromise": True},
        )
        if result["type"] == "exception":
            raise BidiError(f"script threw: {result['exceptionDetails'].get('text')}")
        return json.loads(result["result"]["value"])

    async def click(self, selector: str) -> None:
        """A real (trusted) click in the middle of the first element ``selector`` finds."""
        box = await self.evaluate(
            """(selector) => { const r = document.querySelector(selector).getBoundingClientRect();
                return [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)]; }""",
            selector,
        )
        await self.click_at(box[0], box[1])

    async def click_at(self, x: int, y: int) -> None:
        """A real (trusted) click at the viewport's point ``x``, ``y``."""
        pointer = [
            {"type": "pointerMove", "x": x, "y": y},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
        ]
        await self.bidi.call(
            "input.performActions",
            {"context": self.id, "actions": [{"type": "pointer", "id": "mouse", "actions": pointer}]},
        )

    async def type_text(self, text: str) -> None:
        """Real key presses of ``text`` into whatever has the focus."""
        keys = [
            action for char in text for action in ({"type": "keyDown", "value": char}, {"type": "keyUp", "value": char})
        ]
        await self.bidi.call(
            "input.performActions",
            {"context": self.id, "actions": [{"type": "key", "id": "keyboard", "actions": keys}]},
        )

    async def screenshot(self, origin: str = "viewport") -> bytes:
        """The tab's viewport (or with ``origin="document"`` its whole page) as PNG bytes."""
        result = await self.bidi.call("browsingContext.captureScreenshot", {"context": self.id, "origin": origin})
        return base64.b64decode(result["data"])

    async def set_viewport(self, width: int, height: int) -> None:
        await self.bidi.call(
            "browsingContext.setViewport", {"context": self.id, "viewport": {"width": width, "height": height}}
        )

    async def close(self) -> None:
        await self.bidi.call("browsingContext.close", {"context": self.id})


class Firefox:
    """A running Firefox with the extension installed."""

    def __init__(self, process: asyncio.subprocess.Process, bidi: Bidi, extension_uuid: str, profile: Path) -> None:
        self.process = process
        self.bidi = bidi
        self.extension_uuid = extension_uuid
        self.profile = profile

    @property
    def extension_origin(self) -> str:
        """The ``Origin`` the extension's pages and background send: per profile, never fixed."""
        return f"moz-extension://{self.extension_uuid}"

    async def new_tab(self, url: str | None = None) -> Context:
        # Firefox opens a tab in front once the tab in front before it is hidden. A tab a client
        # has just closed may still be in front, its page being asked whether it may unload, and
        # the tab in its place was once never opened (60 s): open it after the closing is done.
        await eventually(self._no_tab_closing, "Firefox to finish closing its tabs")
        created = await self.bidi.call("browsingContext.create", {"type": "tab"})
        tab = Context(self.bidi, created["context"])
        if url is not None:
            await tab.goto(url)
        return tab

    async def _no_tab_closing(self) -> bool:
        return bool(
            await self.privileged(
                """[...Services.wm.getEnumerator("navigator:browser")].every((window) =>
                    window.gBrowser.tabs.every((tab) => !tab.closing && !tab._pendingPermitUnload))"""
            )
        )

    async def contexts(self) -> list[dict[str, Any]]:
        """The top-level browsing contexts, each with its ``context`` id and ``url``."""
        tree = await self.bidi.call("browsingContext.getTree", {"maxDepth": 0})
        return list(tree["contexts"])

    async def extension_page(self, page: str = "person/popup.html") -> Context:
        """One of the extension's pages opened in a tab: its realm has the background's APIs."""
        return await self.new_tab(f"{self.extension_origin}/{page}")

    async def privileged(self, expression: str) -> Any:
        """``expression``'s value (awaited, through JSON) in the browser window's own, privileged
        realm, where Firefox's add-on machinery is reachable (``--remote-allow-system-access``)."""
        tree = await self.bidi.call("browsingContext.getTree", {"maxDepth": 0, "moz:scope": "chrome"})
        window = Context(self.bidi, tree["contexts"][0]["context"])
        return await window.evaluate(expression)

    async def watch_background(self) -> None:
        """From now on, count the times Firefox unloads the add-on's background page
        (:meth:`background_unloads`)."""
        await self.privileged(
            f"""(() => {{
                const extension = WebExtensionPolicy.getByID({json.dumps(FIREFOX_EXTENSION_ID)}).extension;
                globalThis.browserMcpUnloads = 0;
                extension.on("shutdown-background-script", () => (globalThis.browserMcpUnloads += 1));
            }})()"""
        )

    async def background_unloads(self) -> int:
        """How many times the background page unloaded since :meth:`watch_background`."""
        return int(await self.privileged("globalThis.browserMcpUnloads"))

    async def unload_background(self) -> None:
        """Have Firefox unload the add-on's background page now, as its idle time or
        about:debugging's "Terminate background script" does; the next event starts it again."""
        await self.privileged(
            f"""WebExtensionPolicy.getByID({json.dumps(FIREFOX_EXTENSION_ID)})
                .extension.terminateBackground({{disableResetIdleForTest: true}})"""
        )


def build_extension(out: Path) -> Path:
    """The extension's Firefox build, written from this clone's source into ``out``."""
    source = extension_package.extension_dir()
    return firefox_extension.build(source, extension_package.store_files(source), out)


def _user_js(prefs: Mapping[str, Any]) -> str:
    return "".join(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n" for name, value in prefs.items())


async def _listening(process: asyncio.subprocess.Process, seen: list[bytes]) -> str:
    assert process.stderr is not None and process.stdout is not None
    streams = [process.stderr, process.stdout]
    while True:
        lines = [asyncio.ensure_future(stream.readline()) for stream in streams]
        done, pending = await asyncio.wait(lines, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        for task in done:
            line = task.result()
            seen.append(line)
            if found := _LISTENING.search(line):
                return found.group(1).decode()
        if all(task.result() == b"" for task in done) and process.returncode is not None:
            raise AssertionError(f"Firefox ended before listening: {b''.join(seen)[-2000:]!r}")


async def _drain(stream: asyncio.StreamReader | None, log: Path) -> None:
    """Keep Firefox's output flowing into ``log`` (the extension's uncaught errors show there)."""
    if stream is None:
        return
    with log.open("ab") as sink:
        while line := await stream.readline():
            sink.write(line)
            sink.flush()


@contextlib.asynccontextmanager
async def extension_firefox(
    home: Path,
    *,
    extension: Path | None = None,
    prefs: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    wait: float = 60.0,
) -> AsyncIterator[Firefox]:
    """Headless Firefox ESR with the extension's Firefox build installed, ``HOME``, profile and
    output log (``home / "firefox.log"``) under ``home``. ``extension`` is a built folder (else
    this clone's is built under ``home``); ``prefs`` are added to :data:`BASE_PREFS`; ``env``
    (which a native host inherits) is added to this process's."""
    assert os.access(FIREFOX, os.X_OK), f"{FIREFOX} is missing: install Debian's firefox-esr package"
    profile = home / "profile"
    profile.mkdir(parents=True, exist_ok=True)
    folder = extension or build_extension(home / "extension-firefox")
    extension_uuid = str(uuid.uuid4())
    uuids = json.dumps({FIREFOX_EXTENSION_ID: extension_uuid})
    (profile / "user.js").write_text(
        _user_js({**BASE_PREFS, "extensions.webextensions.uuids": uuids, **(prefs or {})}), encoding="utf-8"
    )
    process = await asyncio.create_subprocess_exec(
        FIREFOX,
        "--headless",
        "--no-remote",
        "--profile",
        str(profile),
        "--remote-debugging-port=0",
        "--remote-allow-system-access",
        "about:blank",
        env={**os.environ, "HOME": str(home), "MOZ_CRASHREPORTER_DISABLE": "1", **(env or {})},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    drains: list[asyncio.Task[None]] = []
    http = aiohttp.ClientSession()
    bidi: Bidi | None = None
    try:
        seen: list[bytes] = []
        async with asyncio.timeout(wait):
            url = await _listening(process, seen)
        log = home / "firefox.log"
        log.write_bytes(b"".join(seen))
        drains = [asyncio.create_task(_drain(stream, log)) for stream in (process.stdout, process.stderr)]
        bidi = Bidi(await http.ws_connect(f"{url}/session", max_msg_size=0))
        await bidi.call("session.new", {"capabilities": {}})
        installed = await bidi.call(
            "webExtension.install", {"extensionData": {"type": "path", "path": str(folder.resolve())}}
        )
        assert installed["extension"] == FIREFOX_EXTENSION_ID, installed
        yield Firefox(process, bidi, extension_uuid, profile)
    finally:
        if bidi is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(10):
                    await bidi.call("session.end")
            await bidi.close()
        await http.close()
        await terminate_or_kill(process, 15)
        for drain in drains:
            drain.cancel()
