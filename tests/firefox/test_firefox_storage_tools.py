"""End to end in Firefox ESR: the storage group, the Firefox counterpart of ``test_e2e_storage_tools.py``.

The same extension code runs on Firefox's ``cookies`` WebExtension API and a script in the page:
refused until the person turns on "Share cookies and site storage with AI agents" (here on the
options page itself, the module's control page); then only the sites of the client's own tabs
(127.0.0.1, while the person also has cookies on localhost): a cookie read asked in the approval
window with no "Always allow", an HttpOnly value withheld until the person allows it, a cookie set
on the other site refused, browser_cookie_clear leaving the other site alone, localStorage, a
storage state saved by the broker and one restored from a file under the client's roots (one
outside them refused). One Firefox for the module, trusting a broker of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import types

from ..harness.chromium import change_settings
from ..harness.firefox import Context
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, refused, text
from .test_firefox_pages import approval_window

pytestmark = pytest.mark.asyncio(loop_scope="module")

APP = "<!doctype html><title>Web mail</title><h1>Inbox</h1>"
SWITCH = "Share cookies and site storage with AI agents"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-storage")
    async with serve_pages({"app.html": APP}) as site, joined_firefox(home, site) as world:
        await change_settings(world.control, approvalTimeoutMs=20_000)
        yield world


def other_site(fox: Fox) -> str:
    return fox.site.replace("127.0.0.1", "localhost")


async def person_cookie(fox: Fox, site: str, name: str, value: str, http_only: bool = False) -> None:
    details = {"url": f"{site}/", "name": name, "value": value, "httpOnly": http_only}
    assert await fox.control.evaluate("(d) => chrome.cookies.set(d).then((c) => Boolean(c))", details)


async def cookies_of(fox: Fox, host: str) -> dict[str, str]:
    found = await fox.control.evaluate("(domain) => chrome.cookies.getAll({domain})", host)
    return {cookie["name"]: cookie["value"] for cookie in found if cookie["domain"].lstrip(".") == host}


async def tab_context(fox: Fox, url: str) -> Context:
    async def find() -> Context | None:
        found = next((c for c in await fox.firefox.contexts() if c["url"] == url), None)
        return Context(fox.firefox.bidi, found["context"]) if found else None

    context: Context = await eventually(find, f"the tab at {url}")
    return context


async def open_tab(client: McpClient, fox: Fox, url: str) -> tuple[str, Context]:
    opened = await client.call_json("tabs", {"action": "open", "url": url})
    return opened["opened"]["ref"], await tab_context(fox, url)


async def window_after(fox: Fox, call: asyncio.Future[Any], seen: set[str]) -> Context:
    """The approval window ``call`` opened (not one of ``seen``), once it shows the request."""

    async def new() -> Context | None:
        window = await approval_window(fox)
        return window if window is not None and window.id not in seen else None

    window: Context = await eventually(new, "the approval window")
    seen.add(window.id)
    assert not call.done()
    return window


async def answered(fox: Fox, client: McpClient, tool: str, args: dict[str, Any], button: str, seen: set[str]) -> Any:
    call = asyncio.ensure_future(client.call(tool, args))
    window = await window_after(fox, call, seen)
    assert await window.evaluate("document.querySelector('#always').hidden")
    await window.click(button)
    async with asyncio.timeout(WAIT):
        return await call


def ok(result: types.CallToolResult) -> str:
    assert not result.is_error, text(result)
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest_asyncio.fixture(loop_scope="module")
async def shared(fox: Fox, tmp_path: Path) -> AsyncIterator[Path]:
    """The person's cookies on both sites and the switch on; an MCP root for the client."""
    await fox.control.evaluate(
        """async () => { for (const c of await chrome.cookies.getAll({}))
             await chrome.cookies.remove({url: `http://${c.domain.replace(/^\\./, "")}${c.path}`, name: c.name}); }""",
        {},
    )
    await person_cookie(fox, fox.site, "theme", "dark")
    await person_cookie(fox, fox.site, "sid", "secret-127", http_only=True)
    await person_cookie(fox, other_site(fox), "other", "keep-me")
    await person_cookie(fox, other_site(fox), "lsid", "localhost-secret", http_only=True)
    root = tmp_path / "project"
    root.mkdir()
    await change_settings(fox.control, shareStorage=True)
    yield root
    await change_settings(fox.control, shareStorage=False)


def roots_client(fox: Fox, root: Path) -> Any:
    url = f"http://127.0.0.1:{fox.broker.port}/mcp?caps=storage"
    return mcp_client(url, fox.broker.token, "Mailer", LEGACY, roots=[root.as_uri()])


async def test_nothing_is_reached_until_the_person_turns_the_switch_on_in_the_options(fox: Fox) -> None:
    async with fox.mcp("Mailer", caps="storage") as client:
        ref, _ = await open_tab(client, fox, f"{fox.site}/app.html?off")
        says = await refused(client, "browser_cookie_list", {"tab": ref}, "consent_required")
        assert SWITCH in says and "about:addons" in says, says
        await refused(client, "browser_localstorage_list", {"tab": ref}, "consent_required")
        # The person turns the switch on in the options page (the module's control page is it).
        label = await fox.control.evaluate("document.querySelector('#share-storage').parentElement.textContent")
        assert SWITCH in label
        assert not await fox.control.evaluate("document.querySelector('#share-storage').checked")
        await fox.control.click("#share-storage")

        async def on() -> bool:
            return bool(
                await fox.control.evaluate(
                    "chrome.storage.local.get('settings').then((s) => s.settings.shareStorage === true)"
                )
            )

        await eventually(on, "the switch to be saved")
        try:
            listed = ok(await client.call("browser_localstorage_list", {"tab": ref}))
            assert "is empty" in listed, listed
        finally:
            await change_settings(fox.control, shareStorage=False)
        await client.call_json("tabs", {"action": "close", "tab": ref})


async def test_cookies_reach_only_the_clients_own_site_and_httponly_values_only_when_allowed(
    fox: Fox, shared: Path
) -> None:
    async with roots_client(fox, shared) as mcp:
        ref, page = await open_tab(mcp, fox, f"{fox.site}/app.html?cookies")
        await cookies_tried(fox, mcp, ref, page)
        await mcp.call_json("tabs", {"action": "close", "tab": ref})


async def cookies_tried(fox: Fox, mcp: McpClient, ref: str, page: Context) -> None:
    seen: set[str] = set()
    call = asyncio.ensure_future(mcp.call("browser_cookie_list", {"tab": ref}))
    window = await window_after(fox, call, seen)
    shown = await window.evaluate("document.body.innerText")
    assert "browser_cookie_list" in shown and "sid (127.0.0.1, path /, HttpOnly)" in shown, shown
    assert "lsid" not in shown and "secret" not in shown
    assert await window.evaluate("document.querySelector('#always').hidden")
    assert not await window.evaluate("document.querySelector('#httponly').hidden")
    (fox.firefox.profile.parent / "approval_cookie_read.png").write_bytes(await window.screenshot())
    await window.click("#once")
    async with asyncio.timeout(WAIT):
        listed = ok(await call)
    assert "- theme=dark (" in listed and "- sid=<withheld: HttpOnly>" in listed, listed
    assert "secret" not in listed and "keep-me" not in listed
    listed = ok(await answered(fox, mcp, "browser_cookie_get", {"tab": ref, "name": "sid"}, "#httponly", seen))
    assert "- sid=secret-127 (" in listed, listed

    # Attacks: the other site's cookies, read or written, from a tab of this one.
    says = await refused(mcp, "browser_cookie_get", {"tab": ref, "name": "lsid"}, "tool_failed")
    assert "no cookie named" in says and "localhost-secret" not in says
    forged = {"tab": ref, "name": "lsid", "value": "x", "domain": "localhost"}
    says = await refused(mcp, "browser_cookie_set", forged, "tool_failed")
    assert "not a site of your tabs (127.0.0.1)" in says, says
    assert await cookies_of(fox, "localhost") == {"other": "keep-me", "lsid": "localhost-secret"}

    ok(await answered(fox, mcp, "browser_cookie_set", {"tab": ref, "name": "lang", "value": "fr"}, "#once", seen))
    await page.goto(page_url := f"{fox.site}/app.html?set")
    assert "lang=fr" in await page.evaluate("document.cookie"), page_url

    cleared = ok(await answered(fox, mcp, "browser_cookie_clear", {"tab": ref}, "#once", seen))
    assert "Deleted 3 cookies of 127.0.0.1; no other site's" in cleared, cleared
    assert await cookies_of(fox, "127.0.0.1") == {}
    assert await cookies_of(fox, "localhost") == {"other": "keep-me", "lsid": "localhost-secret"}


async def test_local_storage_and_storage_states_saved_and_restored_for_the_clients_site_alone(
    fox: Fox, shared: Path, tmp_path: Path
) -> None:
    async with roots_client(fox, shared) as mcp:
        ref, page = await open_tab(mcp, fox, f"{fox.site}/app.html?state")
        await states_tried(fox, mcp, ref, page, shared, tmp_path)
        await mcp.call_json("tabs", {"action": "close", "tab": ref})


async def states_tried(fox: Fox, mcp: McpClient, ref: str, page: Context, root: Path, tmp_path: Path) -> None:
    seen: set[str] = set()
    await page.evaluate("(localStorage.clear(), localStorage.setItem('draft', 'hello'))")
    assert "- draft: hello" in ok(await mcp.call("browser_localstorage_list", {"tab": ref}))
    ok(await answered(fox, mcp, "browser_localstorage_set", {"tab": ref, "key": "k", "value": "v"}, "#once", seen))
    assert await page.evaluate("localStorage.getItem('k')") == "v"

    saved = ok(await answered(fox, mcp, "browser_storage_state", {"tab": ref}, "#once", seen))
    assert "1 HttpOnly cookie left out" in saved, saved
    path = Path(saved.split("Saved to ")[1].split(" (")[0])
    state = json.loads(await asyncio.to_thread(path.read_text))
    assert {c["name"]: c["value"] for c in state["cookies"]} == {"theme": "dark"}
    assert [o["origin"] for o in state["origins"]] == [fox.site]
    assert sorted(i["name"] for i in state["origins"][0]["localStorage"]) == ["draft", "k"]

    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(state))
    for filename in [str(outside), "../../.ssh/x"]:
        await refused(mcp, "browser_set_storage_state", {"tab": ref, "filename": filename}, "upload_not_allowed")
    restore = {
        "cookies": [
            {"name": "theme", "value": "light", "domain": "127.0.0.1", "path": "/"},
            {"name": "other", "value": "forged", "domain": "localhost", "path": "/"},
        ],
        "origins": [{"origin": fox.site, "localStorage": [{"name": "restored", "value": "yes"}]}],
    }
    (root / "state.json").write_text(json.dumps(restore))
    args = {"tab": ref, "filename": "state.json"}
    restored = ok(await answered(fox, mcp, "browser_set_storage_state", args, "#once", seen))
    assert "Left out, not of your tabs' sites: cookie other of localhost" in restored, restored
    assert await cookies_of(fox, "127.0.0.1") == {"theme": "light"}
    assert await cookies_of(fox, "localhost") == {"other": "keep-me", "lsid": "localhost-secret"}
    assert await page.evaluate("Object.keys(localStorage)") == ["restored"]
