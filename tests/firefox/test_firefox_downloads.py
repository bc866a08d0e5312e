"""End to end in Firefox ESR: the downloads a client's action starts, reported as in Chromium.

The Firefox counterpart of ``test_e2e_newtabs.py``'s download test: a real broker, Firefox with
the add-on, an MCP client clicking a link to a file, a ``download`` link to it and a ``download``
link answered with 404, on a slow route (the click is handled well before the download begins).
Firefox saves downloads into the profile's own folder, with no question asked (``browser.download.*``
preferences, as a person who set a download folder has them). A probe beside the background
(``tests/support/firefox_downloads_probe.js``) tells which downloads it still keeps for a tab, so the test
sees them let go once the tab closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from ..e2e.test_e2e_browser_tools import ref_of
from ..e2e.test_e2e_newtabs import REPORT, report_link_downloads, slow_report_download
from ..harness.firefox import build_extension
from ..harness.page_server import serve_app
from ..harness.waiting import eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROBE = Path(__file__).resolve().parents[1] / "support" / "firefox_downloads_probe.js"
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Downloads</title></head>
<body><h1>Downloads</h1>
<a href="/download/report.csv">Download the report</a>
<a href="/download/report.csv?attribute" download>Save the report</a>
<a href="/download/missing.csv" download>Download a missing file</a>
</body></html>"""


@contextlib.asynccontextmanager
async def serve_site() -> AsyncIterator[str]:
    """The page of links, and a file to download under ``/download/``."""

    async def page(_: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/downloads.html", page)
    app.router.add_get("/download/{name}", slow_report_download)
    async with serve_app(app) as url:
        yield url


def with_probe(folder: Path) -> Path:
    """The extension's Firefox build, with the probe beside its background."""
    copy = build_extension(folder)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["background"]["scripts"].append(PROBE.name)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    shutil.copy(PROBE, copy / PROBE.name)
    return copy


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-downloads")
    saved = home / "Downloads"
    saved.mkdir()
    prefs: dict[str, Any] = {
        "browser.download.dir": str(saved),
        "browser.download.folderList": 2,
        "browser.download.useDownloadDir": True,
        "browser.download.always_ask_before_handling_new_types": False,
        "browser.download.alwaysOpenPanel": False,
    }
    extension = with_probe(home / "extension")
    async with serve_site() as site, joined_firefox(home, site, extension=extension, prefs=prefs) as world:
        yield world


async def open_page(client: McpClient, fox: Fox, tag: str) -> tuple[dict[str, Any], str]:
    """A tab of the client's at the downloads page, and its snapshot once loaded."""
    opened = await client.call_json(
        "tabs", {"action": "open", "url": f"{fox.site}/downloads.html?{tag}", "focus": False}
    )
    tab: dict[str, Any] = opened["opened"]

    async def loaded() -> str | None:
        snapshot = await client.call("browser_snapshot", {"tab": tab["ref"]})
        return None if snapshot.is_error or 'heading "Downloads"' not in text(snapshot) else text(snapshot)

    return tab, await eventually(loaded, "the downloads page")


async def kept_for(fox: Fox, tab_id: int) -> list[str]:
    """The downloads the background keeps for the tab, as browser_network_requests lists them."""
    kept: list[str] = await fox.control.evaluate(
        "async (id) => (await browser.runtime.getBackgroundPage()).browserMcpDownloadsOf(id)", tab_id
    )
    return kept


async def test_a_download_a_clients_click_starts_in_firefox_is_reported_with_its_name_size_and_place(
    fox: Fox,
) -> None:
    async with fox.mcp("Downloading Client") as client:
        tab, snapshot = await open_page(client, fox, "download")
        await report_link_downloads(client, snapshot)

        # A `download` link: no navigation, nothing in the tab until the slow server answers.
        saved = await client.call(
            "browser_click", {"element": "save", "target": ref_of(snapshot, r'link "Save the report"')}
        )
        assert not saved.is_error, text(saved)
        found = re.search(
            r"^### Downloads\n- (report.*\.csv): finished, (\d+) bytes, saved to (.+) \(from (\S+)\)$",
            text(saved),
            re.M,
        )
        assert found, text(saved)
        assert int(found.group(2)) == len(REPORT) and found.group(4).endswith("/download/report.csv?attribute")
        assert await asyncio.to_thread(Path(found.group(3)).read_bytes) == REPORT

        # Firefox begins no download for a `download` link its server answers with 404 (Chromium
        # begins one that fails): the click says nothing of one, and nothing else goes wrong.
        missing = await client.call(
            "browser_click", {"element": "missing", "target": ref_of(snapshot, r'link "Download a missing file"')}
        )
        assert not missing.is_error and "### Downloads" not in text(missing), text(missing)

        listed = await client.call("browser_network_requests", {})
        downloads = text(listed).split("### Downloads\n", 1)[1].splitlines()
        assert [line.split(":", 1)[0][:8] for line in downloads] == ["- report", "- report"], text(listed)
        assert await kept_for(fox, tab["id"]) == downloads
        await client.call_json("tabs", {"action": "close", "tab": tab["ref"]})

        async def let_go() -> bool:
            return await kept_for(fox, tab["id"]) == []

        await eventually(let_go, "the closed tab's downloads to be let go")
