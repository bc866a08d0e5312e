"""End to end in Firefox ESR: the tools whose product is a file are refused, never pretended.

Firefox gives a WebExtension no PDF's bytes (``tabs.saveAsPDF`` prints through the person's save
dialog and answers only a status) and no DevTools protocol, so no trace either: its driver
announces none of browser_pdf_save, browser_start_tracing and browser_stop_tracing
(docs/page-drivers.md says why). A client that asks for their groups is not offered them in
Firefox, and a call of one (REST serves every tool) answers not_supported naming Firefox, with no
file written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio

from ..harness.page_server import serve_pages
from ..support.firefox_world import Fox, joined_firefox

pytestmark = pytest.mark.asyncio(loop_scope="module")

CAPTURES = ("pdf_save", "start_tracing", "stop_tracing")
REPORT = "<!doctype html><title>Report</title><h1>Quarterly report</h1>"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-capture")
    async with serve_pages({"report.html": REPORT}) as site, joined_firefox(home, site) as world:
        yield world


async def test_a_client_that_asks_for_the_groups_is_not_offered_them_in_firefox(fox: Fox) -> None:
    async with fox.mcp("Capture Lister", caps="pdf,devtools") as client:
        names = set(await client.tool_names())
        assert "browser_snapshot" in names, names
        assert not names & {f"browser_{name}" for name in CAPTURES}, names


async def test_each_capture_answers_not_supported_naming_firefox(fox: Fox) -> None:
    headers = {"Authorization": f"Bearer {fox.broker.token}"}
    async with aiohttp.ClientSession(fox.broker_url, headers=headers) as http:
        async with http.post("/tabs", json={"url": f"{fox.site}/report.html", "focus": False}) as opened:
            assert opened.status == 200, await opened.text()
            ref = (await opened.json())["tab"]["ref"]
        for name in CAPTURES:
            async with http.post(f"/tabs/{ref}/actions/{name}", json={}) as answer:
                body = await answer.json()
                assert answer.status == 501, body
                error = body["error"]
                assert error["code"] == "not_supported" and "Firefox" in error["message"], error
                assert f"browser_{name}" in error["message"], error
