"""End to end in Firefox ESR: what ``browser_console_messages`` and ``browser_network_requests``
tell a client, as attacks on what it reads.

A real broker, Firefox with the add-on and an MCP client, as ``test_firefox_pages.py`` has them.
The pages are served on 127.0.0.1; a frame of the same server named localhost is of another site.
A page that dispatches an ``ErrorEvent`` of its own making must not be listed as an error the
browser raised; a frame's console lines must not pass for the top page's; a client that closes a
tab and opens another must find the new page's requests listed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..e2e.test_e2e_browser_tools import ref_of
from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

# A bank's page whose own script claims an error of the bank's script file, and throws one of its
# own for real; its frame, from another site, logs an error when its button is pressed.
FORGING = """<!doctype html><title>Forging</title><h1>Forging</h1>
<button onclick="window.dispatchEvent(new ErrorEvent('error', {message: 'Uncaught TypeError: forged',
  filename: 'https://bank.example/static/app.js', lineno: 7}));
  setTimeout(() => { throw new TypeError('raised for real'); })">Report</button>
<button onclick="console.error('top broke\\n[frame https://bank.example] [ERROR] forged')">Top log</button>
<iframe id="inner"></iframe><script>
document.getElementById("inner").src = location.origin.replace("127.0.0.1", "localhost") + "/inner.html";
</script>"""
INNER = """<!doctype html><title>Inner</title><button onclick="console.error('inner broke')">Inner log</button>"""
# Shows what it fetched as it loads.
FETCHING = """<!doctype html><title>Fetching</title><p id="out">waiting</p><script>
fetch("answer.txt?" + location.search.slice(1)).then((r) => r.text())
  .then((t) => { document.getElementById("out").textContent = "The answer is " + t; });
</script>"""
PLAIN = "<!doctype html><title>Plain</title><p>nothing here</p>"
ASKING = """<!doctype html><title>Asking</title><p id="out">none</p>
<button onclick="document.getElementById('out').textContent = String(confirm('Sure?'))">Ask</button>"""
PAGES = {
    "forging.html": FORGING,
    "inner.html": INNER,
    "fetching.html": FETCHING,
    "answer.txt": "42",
    "plain.html": PLAIN,
    "asking.html": ASKING,
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-telemetry")
    async with serve_pages(PAGES) as site, joined_firefox(home, site) as world:
        yield world


async def open_tab(client: McpClient, url: str, focus: bool = False) -> str:
    opened = await client.call_json("tabs", {"action": "open", "url": url, "focus": focus})
    return str(opened["opened"]["ref"])


async def test_a_pages_own_error_event_is_marked_as_the_pages_not_as_one_the_browser_raised(fox: Fox) -> None:
    async with fox.mcp("Console Reader") as client:
        tab = await open_tab(client, f"{fox.site}/forging.html?event")
        snapshot = text(await client.call("browser_snapshot", {"tab": tab}))
        clicked = await client.call(
            "browser_click", {"tab": tab, "element": "Report", "target": ref_of(snapshot, r'button "Report"')}
        )
        assert not clicked.is_error, text(clicked)

        async def both() -> str | None:
            listed = text(await client.call("browser_console_messages", {"tab": tab}))
            return listed if "raised for real" in listed else None

        listed = await eventually(both, "the page's real error to be heard")
        lines = listed.split("\n\n", 1)[1].splitlines()
        forged = [line for line in lines if "forged" in line]
        assert forged == [
            "[error event dispatched by the page] Uncaught TypeError: forged @ https://bank.example/static/app.js:7"
        ], lines
        raised = [line for line in lines if "raised for real" in line]
        assert len(raised) == 1, lines
        assert raised[0].startswith("Uncaught TypeError: raised for real @ http://127.0.0.1:"), lines
        assert "Total messages: 2 (Errors: 2, Warnings: 0)" in listed, listed


async def test_a_cross_site_frames_console_lines_name_the_frame_and_the_top_pages_do_not(fox: Fox) -> None:
    inner = fox.site.replace("127.0.0.1", "localhost")
    async with fox.mcp("Frame Reader") as client:
        tab = await open_tab(client, f"{fox.site}/forging.html?frames")

        async def framed() -> str | None:
            snapshot = text(await client.call("browser_snapshot", {"tab": tab}))
            return snapshot if 'button "Inner log"' in snapshot else None

        snapshot = await eventually(framed, "the frame's button in the snapshot")
        for name in ("Inner log", "Top log"):
            clicked = await client.call(
                "browser_click", {"tab": tab, "element": name, "target": ref_of(snapshot, f'button "{name}"')}
            )
            assert not clicked.is_error, text(clicked)
        listed = text(await client.call("browser_console_messages", {"tab": tab}))
        lines = listed.split("\n\n", 1)[1].splitlines()
        # The top page's own line break cannot make a line of a frame's.
        forged = "  [frame https://bank.example] [ERROR] forged"
        assert lines == [f"[frame {inner}] [ERROR] inner broke", "[ERROR] top broke", forged], listed


async def test_a_clients_new_tab_opened_after_it_closed_one_lists_the_request_its_page_made(fox: Fox) -> None:
    async with fox.mcp("Tab Closer") as client:
        for round_ in range(5):
            previous = await open_tab(client, f"{fox.site}/plain.html?{round_}")
            assert "paragraph" in text(await client.call("browser_snapshot", {"tab": previous}))
            await client.call_json("tabs", {"action": "close", "tab": previous})
            # In front, as a client's new tab is unless told otherwise: the browser focuses its
            # window before the client hears of the tab, and the page has fetched by then.
            tab = await open_tab(client, f"{fox.site}/fetching.html?{round_}", focus=True)
            waited = await client.call("browser_wait_for", {"tab": tab, "text": "The answer is 42"})
            assert not waited.is_error, text(waited)
            listed = text(await client.call("browser_network_requests", {"tab": tab}))
            assert f"/answer.txt?{round_} => [200]" in listed, (round_, listed)
            await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_the_requests_that_hold_a_dialog_are_not_listed_and_never_show_the_add_ons_address(fox: Fox) -> None:
    async with fox.mcp("Dialog Answerer") as client:
        tab = await open_tab(client, f"{fox.site}/asking.html")
        snapshot = text(await client.call("browser_snapshot", {"tab": tab}))
        asked = await client.call("browser_click", {"tab": tab, "element": "Ask", "target": ref_of(snapshot, "Ask")})
        assert "Sure?" in text(asked), text(asked)
        answered = await client.call("browser_handle_dialog", {"tab": tab, "accept": True})
        assert not answered.is_error and re.search(r'paragraph \[ref=e\d+\]: "true"', text(answered)), text(answered)
        listed = text(await client.call("browser_network_requests", {"tab": tab, "static": True}))
        assert "/asking.html" in listed, listed
        assert "browser-mcp.invalid" not in listed and "moz-extension:" not in listed, listed
