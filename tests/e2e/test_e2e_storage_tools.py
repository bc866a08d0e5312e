"""End to end: the storage group (cookies, localStorage, sessionStorage, storage states) through a
real broker, the real extension in headless Chromium and the MCP SDK client asking for ``caps=storage``.

The person's profile holds their logins, so every test here is one of the safeguards: refused
until the person turns on "Share cookies and site storage with AI agents" in the options page;
only the sites of the client's own tabs (127.0.0.1 here, while the person also has cookies on
localhost, a second site of the same server); every change and every read of cookies asked in the
approval window, which names the site and each cookie or key and never offers "Always allow" (nor
honours one forged at it); HttpOnly values withheld until the person allows them on a button that
says HttpOnly; browser_cookie_clear and browser_set_storage_state leaving other sites alone; and a
storage state file read by the broker under the upload rules. The approval windows are saved as
pictures in ``tests/output/e2e_storage/`` (or ``$BROWSER_MCP_E2E_OUTPUT``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import types
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT
from ..support.extension_world import World, open_world
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, refused, text
from ..support.person_world import EXTENSION_URL, answer, approval_window, change_settings, page_at

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_storage"
APP = "<!doctype html><title>Web mail</title><h1>Inbox</h1><p>3 unread</p>"
SWITCH = "Share cookies and site storage with AI agents"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with (
        serve_pages({"app.html": APP}) as site,
        open_world(tmp_path_factory.mktemp("e2e-storage"), site, World) as world,
    ):
        await change_settings(world, approvalTimeoutMs=20_000)
        yield world


def other_site(world: World) -> str:
    """The same server under another host name: another site, where the person is signed in too."""
    return world.site.replace("127.0.0.1", "localhost")


async def person_cookie(world: World, site: str, name: str, value: str, http_only: bool = False) -> None:
    """A cookie the person's own browsing left (a login's session cookie is HttpOnly)."""
    details = {"url": f"{site}/", "name": name, "value": value, "httpOnly": http_only}
    assert await world.worker.evaluate("(d) => chrome.cookies.set(d).then((c) => Boolean(c))", details)


async def cookies_of(world: World, host: str) -> dict[str, str]:
    """The browser's cookies of ``host``, by name."""
    found = await world.worker.evaluate("(domain) => chrome.cookies.getAll({domain})", host)
    return {cookie["name"]: cookie["value"] for cookie in found if cookie["domain"].lstrip(".") == host}


async def clear_cookies(world: World) -> None:
    await world.worker.evaluate(
        """async () => { for (const c of await chrome.cookies.getAll({}))
             await chrome.cookies.remove({url: `http://${c.domain.replace(/^\\./, "")}${c.path}`, name: c.name}); }"""
    )


async def open_tab(client: McpClient, world: World, url: str) -> tuple[str, Page]:
    opened = await client.call_json(
        "tabs", {"action": "open", "url": url, "focus": False, "browser": world.browser_key}
    )
    return opened["opened"]["ref"], await page_at(world, url)


async def approved(world: World, client: McpClient, tool: str, args: dict[str, Any], button: str) -> Any:
    """Call ``tool``, check its approval window offers no "Always allow", press ``button``; the result."""
    call = asyncio.ensure_future(client.call(tool, args))
    window = await approval_window(world, call)
    assert await window.locator("#always").is_hidden()
    await answer(window, button)
    async with asyncio.timeout(WAIT):
        return await call


def ok(result: types.CallToolResult) -> str:
    assert not result.is_error, text(result)
    return text(result)


@pytest_asyncio.fixture(loop_scope="module")
async def shared(world: World) -> AsyncIterator[None]:
    """The person's cookies on both sites, and the switch turned on, as a test needs them."""
    await clear_cookies(world)
    await person_cookie(world, world.site, "theme", "dark")
    await person_cookie(world, world.site, "sid", "secret-127", http_only=True)
    await person_cookie(world, other_site(world), "other", "keep-me")
    await person_cookie(world, other_site(world), "lsid", "localhost-secret", http_only=True)
    await change_settings(world, shareStorage=True)
    yield
    await change_settings(world, shareStorage=False)


async def test_nothing_is_reached_until_the_person_turns_the_switch_on_in_the_options(world: World) -> None:
    await person_cookie(world, world.site, "theme", "dark")
    async with world.mcp("Mailer", caps="storage") as client:
        assert {"browser_cookie_list", "browser_set_storage_state"} <= set(await client.tool_names())
        ref, page = await open_tab(client, world, world.url("app.html", "off"))
        await page.evaluate("localStorage.setItem('draft', 'hello')")
        for tool, args in [
            ("browser_cookie_list", {}),
            ("browser_cookie_set", {"name": "x", "value": "1"}),
            ("browser_localstorage_list", {}),
            ("browser_sessionstorage_get", {"key": "draft"}),
            ("browser_storage_state", {}),
        ]:
            says = await refused(client, tool, {"tab": ref, **args}, "consent_required")
            assert SWITCH in says and "options page" in says, says
            assert "dark" not in says and "hello" not in says
        assert "x" not in await cookies_of(world, "127.0.0.1")

        # The person turns it on where they are told to, and the same call answers.
        options = await world.context.new_page()
        await options.goto(f"{EXTENSION_URL}/person/options.html")
        switch = options.get_by_label(SWITCH)
        assert not await switch.is_checked()
        await switch.check()
        try:
            listed = ok(await client.call("browser_localstorage_list", {"tab": ref}))
            assert "- draft: hello" in listed, listed
        finally:
            await switch.uncheck()
            await options.close()
        await refused(client, "browser_localstorage_list", {"tab": ref}, "consent_required")
        await page.close()


async def test_cookies_are_listed_got_set_deleted_and_cleared_on_the_clients_own_site_alone(
    world: World, shared: None
) -> None:
    async with world.mcp("Mailer", caps="storage") as client:
        ref, page = await open_tab(client, world, world.url("app.html", "cookies"))

        call = asyncio.ensure_future(client.call("browser_cookie_list", {"tab": ref}))
        window = await approval_window(world, call)
        shown = await window.locator("body").inner_text()
        assert "browser_cookie_list" in shown and "Reads cookies" in shown and world.site in shown, shown
        assert "theme (127.0.0.1" in shown and "sid (127.0.0.1, path /, HttpOnly)" in shown, shown
        assert "⚠ HttpOnly: sid" in shown
        assert "localhost" not in shown and "lsid" not in shown and "secret" not in shown
        assert await window.locator("#always").is_hidden()
        assert await window.get_by_role("button", name="Allow with HttpOnly values").is_visible()
        await window.set_viewport_size({"width": 600, "height": 700})
        await window.wait_for_timeout(150)
        await window.locator("body").screenshot(path=str(OUTPUT / "approval_cookie_read.png"))
        await answer(window, "Allow without HttpOnly values")
        async with asyncio.timeout(WAIT):
            listed = ok(await call)
        assert "- theme=dark (domain 127.0.0.1" in listed and "- sid=<withheld: HttpOnly>" in listed, listed
        assert "secret" not in listed and "keep-me" not in listed and "localhost" not in listed
        assert "HttpOnly values are withheld" in listed

        # Only when the person says so on the button that names HttpOnly is its value read.
        listed = ok(await approved(world, client, "browser_cookie_list", {"tab": ref}, "Allow with HttpOnly values"))
        assert "- sid=secret-127 (" in listed and "withheld" not in listed, listed

        got = ok(await approved(world, client, "browser_cookie_get", {"tab": ref, "name": "theme"}, "Allow once"))
        assert got.startswith("### Result\n- theme=dark ("), got

        call = asyncio.ensure_future(client.call("browser_cookie_set", {"tab": ref, "name": "lang", "value": "fr"}))
        window = await approval_window(world, call)
        shown = await window.locator("#code").inner_text()
        assert shown.startswith("lang=fr (host 127.0.0.1 only, path /"), shown
        assert await window.locator("#code-label").inner_text() == "Sets cookie"
        await answer(window, "Deny")
        assert (await call).is_error and "lang" not in await cookies_of(world, "127.0.0.1")
        said = ok(
            await approved(
                world, client, "browser_cookie_set", {"tab": ref, "name": "lang", "value": "fr"}, "Allow once"
            )
        )
        assert "Set cookie lang on 127.0.0.1" in said
        # The page sees it as its own cookie.
        await page.reload()
        assert "lang=fr" in await page.evaluate("document.cookie")

        said = ok(await approved(world, client, "browser_cookie_delete", {"tab": ref, "name": "theme"}, "Allow once"))
        assert "Deleted cookie theme" in said
        await page.reload()
        assert "theme" not in await page.evaluate("document.cookie")

        call = asyncio.ensure_future(client.call("browser_cookie_clear", {"tab": ref}))
        window = await approval_window(world, call)
        shown = await window.locator("#code").inner_text()
        assert "sid (127.0.0.1" in shown and "lang (127.0.0.1" in shown and "localhost" not in shown, shown
        await answer(window, "Allow once")
        async with asyncio.timeout(WAIT):
            cleared = ok(await call)
        assert "Deleted 2 cookies of 127.0.0.1; no other site's" in cleared, cleared
        assert await cookies_of(world, "127.0.0.1") == {}
        # The other site's cookies, the person's login there among them, are untouched.
        assert await cookies_of(world, "localhost") == {"other": "keep-me", "lsid": "localhost-secret"}
        await page.close()


async def test_a_client_reaches_no_cookie_of_a_site_it_has_no_tab_on(world: World, shared: None) -> None:
    async with world.mcp("Intruder", caps="storage") as client:
        ref, page = await open_tab(client, world, world.url("app.html", "intruder"))
        # Each refused at once, no window opened for the person to misclick.
        says = await refused(
            client,
            "browser_cookie_set",
            {"tab": ref, "name": "lsid", "value": "forged", "domain": "localhost"},
            "tool_failed",
        )
        assert "not a site of your tabs (127.0.0.1)" in says, says
        says = await refused(client, "browser_cookie_get", {"tab": ref, "name": "lsid"}, "tool_failed")
        assert 'no cookie named "lsid" on your tabs\' sites (127.0.0.1)' in says, says
        assert "localhost-secret" not in says
        says = await refused(client, "browser_cookie_get", {"tab": ref, "name": "other"}, "tool_failed")
        assert "keep-me" not in says
        says = await refused(client, "browser_cookie_list", {"tab": ref, "domain": "localhost"}, "tool_failed")
        assert 'domain "localhost" is of localhost, not a site of your tabs' in says, says
        says = await refused(client, "browser_cookie_delete", {"tab": ref, "name": "other"}, "tool_failed")
        assert "no cookie named" in says
        assert not [p for p in world.context.pages if p.url.startswith(f"{EXTENSION_URL}/person/approval.html")]
        assert await cookies_of(world, "localhost") == {"other": "keep-me", "lsid": "localhost-secret"}
        # A tab of the person's on localhost is not the client's either.
        mine = await world.context.new_page()
        await mine.goto(f"{other_site(world)}/app.html?person")
        await refused(client, "browser_cookie_get", {"tab": ref, "name": "lsid"}, "tool_failed")
        await mine.close()
        await page.close()


async def test_always_allow_is_never_offered_nor_honoured_for_cookies(world: World, shared: None) -> None:
    async with world.mcp("Mailer", caps="storage") as client:
        ref, page = await open_tab(client, world, world.url("app.html", "always"))
        before = await world.worker.evaluate("chrome.storage.local.get('settings').then((s) => s.settings.alwaysAllow)")
        call = asyncio.ensure_future(client.call("browser_cookie_set", {"tab": ref, "name": "a", "value": "1"}))
        window = await approval_window(world, call)
        assert await window.locator("#always").is_hidden()
        # A window made to send "always" anyway (its hidden button) is a no, and nothing is remembered.
        with contextlib.suppress(PlaywrightError):  # the window closes itself as it answers
            await window.evaluate("document.getElementById('always').click()")
        async with asyncio.timeout(WAIT):
            result = await call
        assert result.is_error and text(result).startswith("not_approved:"), text(result)
        assert "never given for cookies" in text(result)
        assert "a" not in await cookies_of(world, "127.0.0.1")
        after = await world.worker.evaluate("chrome.storage.local.get('settings').then((s) => s.settings.alwaysAllow)")
        assert after == before
        # So the next call asks again.
        ok(await approved(world, client, "browser_cookie_set", {"tab": ref, "name": "a", "value": "1"}, "Allow once"))
        await page.close()


async def test_local_and_session_storage_read_freely_and_change_only_once_the_person_allows(
    world: World, shared: None
) -> None:
    async with world.mcp("Mailer", caps="storage") as client:
        ref, page = await open_tab(client, world, world.url("app.html", "storage"))
        await page.evaluate("localStorage.setItem('draft', 'hello'); sessionStorage.setItem('step', '2')")
        assert "- draft: hello" in ok(await client.call("browser_localstorage_list", {"tab": ref}))
        assert ok(await client.call("browser_localstorage_get", {"tab": ref, "key": "draft"})) == "### Result\nhello"
        assert "- step: 2" in ok(await client.call("browser_sessionstorage_list", {"tab": ref}))

        call = asyncio.ensure_future(client.call("browser_localstorage_set", {"tab": ref, "key": "k", "value": "v"}))
        window = await approval_window(world, call)
        assert world.site in await window.locator("#code").inner_text()
        assert "k = v" in await window.locator("#code").inner_text()
        await answer(window, "Deny")
        assert (await call).is_error and await page.evaluate("localStorage.getItem('k')") is None
        args = {"tab": ref, "key": "k", "value": "v"}
        ok(await approved(world, client, "browser_localstorage_set", args, "Allow once"))
        assert await page.evaluate("localStorage.getItem('k')") == "v"
        ok(await approved(world, client, "browser_localstorage_delete", {"tab": ref, "key": "draft"}, "Allow once"))
        assert await page.evaluate("localStorage.getItem('draft')") is None
        ok(
            await approved(
                world, client, "browser_sessionstorage_set", {"tab": ref, "key": "s", "value": "t"}, "Allow once"
            )
        )
        ok(await approved(world, client, "browser_sessionstorage_clear", {"tab": ref}, "Allow once"))
        assert await page.evaluate("sessionStorage.length") == 0
        assert await page.evaluate("localStorage.getItem('k')") == "v"
        await page.close()


def roots_client(world: World, name: str, root: Path) -> Any:
    url = f"http://127.0.0.1:{world.broker.port}/mcp?caps=storage"
    return mcp_client(url, world.token, name, LEGACY, roots=[root.as_uri()])


async def test_storage_state_is_saved_and_restored_for_the_clients_own_sites_alone(
    world: World, shared: None, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    async with roots_client(world, "Saver", root) as client:
        ref, page = await open_tab(client, world, world.url("app.html", "state"))
        await page.evaluate("localStorage.clear(); localStorage.setItem('draft', 'hello')")
        result = await approved(world, client, "browser_storage_state", {"tab": ref}, "Allow with HttpOnly values")
        assert not result.is_error, text(result)
        # The broker wrote the file the extension answered with, and names it in its place.
        assert [block.type for block in result.content] == ["text", "text"], result.content
        saved = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
        assert saved.startswith("### Result\nStorage state of 127.0.0.1: 2 cookies, 1 origins"), saved
        path = Path(saved.split("Saved to ")[1].split(" (")[0])
        assert stat.S_IMODE((await asyncio.to_thread(path.stat)).st_mode) == 0o600
        state = json.loads(await asyncio.to_thread(path.read_text))
        assert {c["name"]: c["value"] for c in state["cookies"]} == {"theme": "dark", "sid": "secret-127"}
        assert all(c["domain"] == "127.0.0.1" and c["expires"] == -1 for c in state["cookies"])
        assert state["origins"] == [{"origin": world.site, "localStorage": [{"name": "draft", "value": "hello"}]}]

        # A file of the client's naming: a restore of its own site, and of another it may not touch.
        restore = {
            "cookies": [
                {
                    "name": "theme",
                    "value": "light",
                    "domain": "127.0.0.1",
                    "path": "/",
                    "expires": -1,
                    "httpOnly": False,
                    "secure": False,
                    "sameSite": "Lax",
                },
                {
                    "name": "lsid",
                    "value": "forged",
                    "domain": "localhost",
                    "path": "/",
                    "expires": -1,
                    "httpOnly": True,
                    "secure": False,
                    "sameSite": "Lax",
                },
            ],
            "origins": [
                {"origin": world.site, "localStorage": [{"name": "restored", "value": "yes"}]},
                {"origin": other_site(world), "localStorage": [{"name": "evil", "value": "1"}]},
            ],
        }
        (root / "state.json").write_text(json.dumps(restore))
        call = asyncio.ensure_future(client.call("browser_set_storage_state", {"tab": ref, "filename": "state.json"}))
        window = await approval_window(world, call)
        shown = await window.locator("#code").inner_text()
        assert "Deletes the cookies of 127.0.0.1 (2)" in shown and "theme=light" in shown, shown
        assert "Left out, not of your tabs' sites:" in shown and "cookie lsid of localhost" in shown, shown
        assert f"localStorage of {other_site(world)}" in shown
        await window.set_viewport_size({"width": 600, "height": 700})
        await window.locator("body").screenshot(path=str(OUTPUT / "approval_set_storage_state.png"))
        await answer(window, "Allow once")
        async with asyncio.timeout(WAIT):
            restored = ok(await call)
        assert "Restored from" in restored and "1 cookies and 1 localStorage items" in restored, restored
        assert await cookies_of(world, "127.0.0.1") == {"theme": "light"}
        assert await cookies_of(world, "localhost") == {"other": "keep-me", "lsid": "localhost-secret"}
        assert await page.evaluate("Object.keys(localStorage)") == ["restored"]
        await page.close()


async def test_a_storage_state_file_outside_the_roots_or_among_secrets_is_refused(
    world: World, shared: None, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"cookies": [], "origins": []}))
    async with roots_client(world, "Sneaky", root) as client:
        ref, page = await open_tab(client, world, world.url("app.html", "sneaky"))
        for filename in [str(outside), "../elsewhere.json", "../../.ssh/x", "/etc/shadow"]:
            says = await refused(
                client, "browser_set_storage_state", {"tab": ref, "filename": filename}, "upload_not_allowed"
            )
            assert "outside the folders" in says or "credentials" in says, says
        (root / "broken.json").write_text("{not json")
        await refused(client, "browser_set_storage_state", {"tab": ref, "filename": "broken.json"}, "invalid_request")
        assert await cookies_of(world, "127.0.0.1") == {"theme": "dark", "sid": "secret-127"}
        await page.close()
