"""End to end in Firefox ESR: the person in charge through the real add-on's popup.

The Firefox counterpart of ``test_e2e_person.py``'s popup tests and ``test_e2e_toolbar.py``'s
pause: one Firefox with the add-on trusting a broker on a port of its own, AI clients over MCP,
and the popup (``popup.html`` opened in a tab, 424 px wide as the toolbar shows it) driven with
real clicks over WebDriver BiDi: who holds which tab, the person taking a tab back, ending a
session, pausing every agent and resuming them, and the native host command for this browser.
Each state of the popup is saved as a picture in ``tests/output/firefox_person/`` (or
``$BROWSER_MCP_E2E_OUTPUT``) for a reviewer to look at.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from ..harness.chromium import tab_group_title
from ..harness.firefox import Context
from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text
from ..support.person_world import GROUP_COLORS, PERSON, SHOP, SHOP_TOOLS, session_ended_then_claimed_again

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "firefox_person"
PAUSED_TITLE = "browser-mcp: AI agents paused"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    home: Path = tmp_path_factory.mktemp("firefox-person")
    async with serve_pages({"shop.html": SHOP, "person.html": PERSON}) as site, joined_firefox(home, site) as world:
        yield world


async def open_popup(fox: Fox) -> Context:
    popup = await fox.firefox.extension_page("person/popup.html")
    await popup.set_viewport(424, 600)
    return popup


async def picture(popup: Context, name: str) -> None:
    """Save what the person sees, the whole popup."""
    await popup.evaluate("new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn)))")
    (OUTPUT / f"{name}.png").write_bytes(await popup.screenshot(origin="document"))


async def shown(popup: Context, selector: str) -> str:
    return str(await popup.evaluate("(selector) => document.querySelector(selector).innerText", selector))


def says(popup: Context, selector: str, words: str) -> Any:
    async def check() -> bool:
        return words in await shown(popup, selector)

    return check


def row_of(popup: Context, selector: str, words: str) -> Any:
    """The text of the row of ``selector``'s list that has ``words``, once there is one."""

    async def find() -> str | None:
        found: str | None = await popup.evaluate(
            """([selector, words]) => [...document.querySelectorAll(`${selector} li`)]
                .map((li) => li.innerText).find((shown) => shown.includes(words)) ?? null""",
            [selector, words],
        )
        return found

    return find


def row_says(popup: Context, selector: str, row: str, words: str) -> Any:
    """Whether the row of ``selector``'s list that has ``row`` says ``words``."""

    async def check() -> bool:
        found = await row_of(popup, selector, row)()
        return found is not None and words in found

    return check


async def press(popup: Context, selector: str, words: str, label: str) -> None:
    """A real click on the ``label`` button of the row of ``selector``'s list that has ``words``."""
    point = await popup.evaluate(
        """([selector, words, label]) => {
            const row = [...document.querySelectorAll(`${selector} li`)].find((li) => li.innerText.includes(words));
            const button = [...(row?.querySelectorAll("button") ?? [])].find((b) => b.textContent === label);
            if (!button) return null;
            button.scrollIntoView({block: "center"});
            const box = button.getBoundingClientRect();
            return [Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2)];
        }""",
        [selector, words, label],
    )
    assert point, f"no {label!r} button in the popup's {selector} row with {words!r}"
    await popup.click_at(*point)


async def popup_pressed(fox: Fox, selector: str, row: str, label: str, *, once_it_shows: str) -> Context:
    """The popup, once its ``selector`` list shows ``once_it_shows``, after a real click on the
    ``label`` button of the row that has ``row``."""
    popup = await open_popup(fox)
    await eventually(row_of(popup, selector, once_it_shows), f"the popup's {selector} to show {once_it_shows!r}")
    await press(popup, selector, row, label)
    return popup


async def broker_tab(fox: Fox, url: str) -> dict[str, Any]:
    """The tab showing ``url`` as the broker lists it."""
    headers = {"Authorization": f"Bearer {fox.broker.token}"}
    async with aiohttp.ClientSession(headers=headers) as http, http.get(f"{fox.broker_url}/tabs") as answer:
        listed = (await answer.json())["tabs"]
    [tab] = [t for t in listed if t["url"] == url]
    return dict(tab)


async def assert_the_persons_again(fox: Fox, tab: dict[str, Any], url: str) -> None:
    """The client's ``tab`` (showing ``url``) is the person's again: the broker gives it no owner,
    it left the agents' tab group, and it is still open."""

    async def released() -> bool:
        return (await broker_tab(fox, url))["owner"] is None

    await eventually(released, "the broker to release the tab")
    assert await tab_group_title(fox.control, tab["id"]) is None
    assert await fox.control.evaluate("(id) => chrome.tabs.get(id).then(() => true, () => false)", tab["id"])


async def open_shop_for(client: McpClient, fox: Fox, tag: str) -> dict[str, Any]:
    """A shop tab ``client`` opened, once the broker knows its page tools."""
    opened = await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/shop.html?{tag}", "focus": False})
    ref = opened["opened"]["ref"]

    async def tools_known() -> bool:
        asked = await client.call("page_tools", {"tab": ref, "refresh": True})
        return not asked.is_error and {t["name"] for t in json.loads(text(asked))["tools"]} == SHOP_TOOLS

    await eventually(tools_known, f"the shop's tools in tab {tag}")
    tab: dict[str, Any] = opened["opened"]
    return tab


async def test_the_popup_shows_which_agent_holds_each_tab_in_firefox(fox: Fox) -> None:
    persons = await fox.firefox.new_tab(f"{fox.site}/person.html?owners")
    async with fox.mcp("Claude Code") as client:
        tab = await open_shop_for(client, fox, "owners")
        popup = await open_popup(fox)
        held = await eventually(row_of(popup, "#tabs", "Claude Code"), "the popup to name the tab's agent")
        assert "shop.html?owners" in held and "Release" in held, held
        colour = await popup.evaluate(
            """getComputedStyle([...document.querySelectorAll("#tabs li")]
                .find((li) => li.innerText.includes("Claude Code")).querySelector(".agent")).backgroundColor"""
        )
        group = await fox.control.evaluate(
            "async (id) => (await chrome.tabGroups.get((await chrome.tabs.get(id)).groupId)).color", tab["id"]
        )
        assert colour == GROUP_COLORS[group], (colour, group)
        mine = await eventually(row_of(popup, "#tabs", "person.html?owners"), "the popup to list the person's tab")
        assert "No agent" in mine and "Release" not in mine, mine
        sessions = await shown(popup, "#sessions")
        assert "Claude Code" in sessions and "1 tab" in sessions and "End session" in sessions, sessions
        await picture(popup, "popup-owners")
        await popup.close()
        await client.call_json("tabs", {"action": "close", "tab": tab["ref"]})
    await persons.close()


async def test_the_person_releases_a_tab_from_the_popup_in_firefox(fox: Fox) -> None:
    async with fox.mcp("Releasing Agent") as client:
        tab = await open_shop_for(client, fox, "release")
        popup = await popup_pressed(fox, "#tabs", "shop.html?release", "Release", once_it_shows="Releasing Agent")
        released = row_says(popup, "#tabs", "shop.html?release", "No agent")
        await eventually(released, "the popup to show the tab released")
        await picture(popup, "popup-released")
        url = f"{fox.site}/shop.html?release"
        assert (await broker_tab(fox, url))["owner"] is None
        await assert_the_persons_again(fox, tab, url)
        refused = await client.call("browser_snapshot", {"tab": tab["ref"]})
        assert refused.is_error and text(refused).startswith("tab_not_claimed:"), text(refused)
        assert "The person took this tab back" in text(refused)
        await popup.close()


async def test_the_person_ends_a_session_from_the_popup_in_firefox(fox: Fox) -> None:
    async with fox.mcp("Ended Agent") as client:
        tab = await open_shop_for(client, fox, "end")
        popup = await popup_pressed(fox, "#sessions", "Ended Agent", "End session", once_it_shows="Ended Agent")

        async def left() -> bool:
            return "Ended Agent" not in await shown(popup, "#sessions")

        await eventually(left, "the session to leave the popup")
        await picture(popup, "popup-session-ended")
        await assert_the_persons_again(fox, tab, f"{fox.site}/shop.html?end")
        await session_ended_then_claimed_again(client, tab, "Ended Agent")
        await popup.close()
        await client.call_json("tabs", {"action": "close", "tab": tab["ref"]})


async def test_pause_in_the_firefox_popup_fails_every_call_at_once_and_resume_lets_them_through(fox: Fox) -> None:
    async with fox.mcp("Paused Agent") as client:
        tab = await open_shop_for(client, fox, "pause")
        popup = await open_popup(fox)
        await eventually(says(popup, "#sessions", "Paused Agent"), "the popup to list the session")
        await popup.click("#pause")
        await eventually(says(popup, "#paused", "AI agents are paused"), "the popup to say agents are paused")
        await picture(popup, "popup-paused")
        toolbar = "Promise.all([chrome.action.getTitle({}), chrome.action.getBadgeText({})])"

        async def toolbar_shows(title: str | None, badge: str) -> bool:
            shown = await popup.evaluate(toolbar)
            return shown[1] == badge and title in (None, shown[0])

        # The worker draws the toolbar as it answers the popup, not before: soon, not at once.
        await eventually(lambda: toolbar_shows(PAUSED_TITLE, "II"), "the toolbar to show agents paused")

        async def paused_in_broker() -> bool:
            browser = await fox.joined()
            return browser is not None and browser["paused"] is True

        await eventually(paused_in_broker, "the broker to hear of the pause")
        started = asyncio.get_running_loop().time()
        for name, args in (("call_page_tool", {"tab": tab["ref"], "tool": "buy"}), ("browser_snapshot", {})):
            refused = await client.call(name, args)
            assert refused.is_error and text(refused).startswith("paused: the person paused AI agents"), text(refused)
        assert asyncio.get_running_loop().time() - started < 5, "refusals must come at once"

        await popup.click("#pause")

        async def resumed() -> bool:
            return bool(await popup.evaluate("document.querySelector('#paused').hidden"))

        await eventually(resumed, "the popup to show agents resumed")
        await picture(popup, "popup-resumed")
        await eventually(lambda: toolbar_shows(None, ""), "the toolbar to leave its pause badge")

        async def resumed_in_broker() -> bool:
            browser = await fox.joined()
            return browser is not None and browser["paused"] is False

        await eventually(resumed_in_broker, "the broker to hear agents resumed")
        looked = await client.call("call_page_tool", {"tab": tab["ref"], "tool": "look"})
        assert not looked.is_error and text(looked) == "12 EUR", text(looked)
        await popup.close()
        await client.call_json("tabs", {"action": "close", "tab": tab["ref"]})


async def test_the_firefox_popup_names_the_native_host_command_for_firefox(fox: Fox) -> None:
    popup = await open_popup(fox)
    await eventually(says(popup, "#native", "Native host missing"), "the popup to say the native host is missing")
    command = await popup.evaluate("document.querySelector('#native code').textContent")
    assert command == "browser-mcp install-native-host --browser firefox"
    # Firefox says why on the port, where Chromium says it in runtime.lastError.
    assert "No such native application" in await shown(popup, "#native"), await shown(popup, "#native")
    await picture(popup, "popup-native-host")
    await popup.close()
