"""End to end in headless Firefox ESR: the person's script library (browser_scripts,
browser_run_script) and browser_page_info on the WebExtension driver, through a real broker (its
scripts folder this module's own) and the MCP SDK's client, on the page of
``tests/e2e/test_e2e_scripts.py``: a blog post whose own script forges its title.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from unittest import mock

import pytest
import pytest_asyncio

from broker.paths import ENV_SCRIPTS_DIR

from ..e2e.test_e2e_scripts import SUM, changed_script_runs_as_it_is
from ..harness.page_server import serve_test_pages
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, refused, text

pytestmark = pytest.mark.asyncio(loop_scope="module")


class ScriptsFox:
    def __init__(self, fox: Fox, folder: Path) -> None:
        self.fox = fox
        self.folder = folder


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ScriptsFox]:
    home: Path = tmp_path_factory.mktemp("firefox-scripts")
    folder = home / "config" / "scripts"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "sum.js").write_text(SUM)
    with mock.patch.dict(os.environ, {ENV_SCRIPTS_DIR: str(folder)}):
        async with serve_test_pages() as site, joined_firefox(home, site) as fox:
            yield ScriptsFox(fox, folder)


async def open_post(client: McpClient, fox: Fox, tag: str) -> str:
    url = f"{fox.site}/pages/page_info.html?{tag}"
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    return text(await client.call("browser_snapshot", {}))


async def test_page_info_in_firefox_reads_the_head_not_the_pages_forgeries(world: ScriptsFox) -> None:
    async with world.fox.mcp("reader", caps="dom") as client:
        await open_post(client, world.fox, "info")
        answer = text(await client.call("browser_page_info", {}))
    blog = f"{world.fox.site}/pages/blog/"
    for line in (
        "- Title: Field notes: the river in spring",
        "- Language: en-GB",
        f"- Canonical: {blog}posts/river-in-spring",
        "- Robots: index, nofollow",
        f"- og:image: {blog}img/river.jpg",
        "- twitter:card: summary_large_image",
        f"- Icon (32x32): {blog}icons/favicon-32.png",
        f'- Feed (RSS): {blog}feed.xml "Field notes (RSS)"',
    ):
        assert line in answer, (line, answer)
    assert "Forged" not in answer, answer


async def test_a_script_runs_in_firefox_with_its_args_and_element(world: ScriptsFox) -> None:
    async with world.fox.mcp("builder", caps="scripts") as client:
        snapshot = await open_post(client, world.fox, "run")
        assert "- sum: Adds a and b" in text(await client.call("browser_scripts", {}))
        plain = text(await client.call("browser_run_script", {"name": "sum", "args": {"a": 2, "b": 40}}))
        assert '"sum": 42' in plain and '"element": null' in plain, plain
        button = re.search(r'button "Count visitors".*?\[ref=(e\d+)\]', snapshot)
        assert button, snapshot
        args = {"name": "sum", "args": {"a": 1, "b": 1}, "element": "the button", "target": button.group(1)}
        on_element = text(await client.call("browser_run_script", args))
        assert '"sum": 2' in on_element and '"element": "Count visitors"' in on_element, on_element


async def test_in_firefox_bad_names_a_link_out_and_a_world_writable_folder_are_refused(
    world: ScriptsFox, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.js"
    outside.write_text("() => document.cookie\n")
    link = world.folder / "cookie.js"
    link.symlink_to(outside)
    try:
        async with world.fox.mcp("attacker", caps="scripts") as client:
            await open_post(client, world.fox, "refused")
            for name in ("../../etc/passwd", ".hidden", "a/b", "x" * 65, "\u2025"):
                await refused(client, "browser_run_script", {"name": name}, "invalid_script_name")
            assert "it is a link" in await refused(client, "browser_run_script", {"name": "cookie"}, "forbidden")
            os.chmod(world.folder, 0o757)
            try:
                said = await refused(client, "browser_run_script", {"name": "sum"}, "forbidden")
                assert "may be written by other users" in said, said
            finally:
                os.chmod(world.folder, 0o700)
    finally:
        link.unlink()


async def test_in_firefox_a_script_changed_after_listing_says_so(world: ScriptsFox) -> None:
    async with world.fox.mcp("lister", caps="scripts") as client:
        await open_post(client, world.fox, "changed")
        await changed_script_runs_as_it_is(client, world.folder)
