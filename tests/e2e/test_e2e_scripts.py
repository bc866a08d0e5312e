"""End to end in headless Chromium: the person's script library (browser_scripts,
browser_run_script) and browser_page_info, through a real broker (its scripts folder this module's
own, ``BROWSER_MCP_SCRIPTS_DIR``), the real extension and the MCP SDK's client.

``tests/pages/page_info.html`` is a blog post: canonical link, meta description and robots, Open
Graph and Twitter cards, an icon and two feeds under a ``<base>``, so that every address must be
made absolute; its own script forges ``document.title`` and breaks ``querySelectorAll`` in the
page's world, which page info (read in the isolated world) must not hear.
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

from ..harness.page_server import serve_test_pages
from ..support.extension_world import World, open_world
from ..support.mcp_clients import McpClient, refused, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGE = "pages/page_info.html"
SUM = """// Adds a and b, and reads the element it is given
(args, element) => ({
  sum: args.a + args.b,
  element: element ? element.textContent.trim() : null,
  lede: document.querySelector("#lede").textContent,
});
"""


class ScriptsWorld(World):
    folder: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ScriptsWorld]:
    home = tmp_path_factory.mktemp("e2e-scripts")
    folder = home / "config" / "scripts"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "sum.js").write_text(SUM)
    with mock.patch.dict(os.environ, {ENV_SCRIPTS_DIR: str(folder)}):
        async with serve_test_pages() as site, open_world(home, site, ScriptsWorld, probed=False) as world:
            world.folder = folder
            yield world


async def open_post(client: McpClient, world: World, tag: str) -> str:
    """The blog post opened in a tab of the client's own: its snapshot."""
    await client.call_json("tabs", {"action": "open", "url": world.url(PAGE, tag), "focus": False})
    return text(await client.call("browser_snapshot", {}))


def ref_of(snapshot: str, pattern: str) -> str:
    found = re.search(pattern + r".*?\[ref=(e\d+)\]", snapshot)
    assert found, snapshot
    return found.group(1)


async def test_page_info_tells_the_cards_links_icon_and_feeds_as_absolute_addresses(world: ScriptsWorld) -> None:
    async with world.mcp("reader", caps="dom") as client:
        await open_post(client, world, "info")
        answer = text(await client.call("browser_page_info", {}))
    blog = world.url("pages/blog/", "x").split("?")[0]
    for line in (
        "- Title: Field notes: the river in spring",  # not the page's forged one
        "- Language: en-GB",
        f"- Canonical: {blog}posts/river-in-spring",
        "- Description: What the river did in April, with photographs.",
        "- Robots: index, nofollow",
        "- og:title: The river in spring",
        f"- og:image: {blog}img/river.jpg",
        f"- og:url: {blog}posts/river-in-spring",
        "- twitter:card: summary_large_image",
        "- twitter:site: @fieldnotes",
        f"- Icon (32x32): {blog}icons/favicon-32.png",
        f'- Feed (RSS): {blog}feed.xml "Field notes (RSS)"',
        f"- Feed (Atom): {blog}atom.xml",
    ):
        assert line in answer, (line, answer)
    assert "Forged" not in answer and "fr/" not in answer and "style.css" not in answer, answer


async def test_a_script_of_the_folder_runs_with_its_args_and_its_element_unasked(world: ScriptsWorld) -> None:
    async with world.mcp("builder", caps="scripts") as client:
        snapshot = await open_post(client, world, "run")
        listing = text(await client.call("browser_scripts", {}))
        assert "- sum: Adds a and b, and reads the element it is given" in listing, listing
        plain = await client.call("browser_run_script", {"name": "sum", "args": {"a": 2, "b": 40}})
        assert not plain.is_error, text(plain)
        assert '"sum": 42' in text(plain) and '"element": null' in text(plain), text(plain)
        assert "The water rose by a metre" in text(plain) and "Ran the person's script sum" in text(plain)
        button = ref_of(snapshot, r'button "Count visitors"')
        on_element = await client.call(
            "browser_run_script", {"name": "sum", "args": {"a": 1, "b": 1}, "element": "the button", "target": button}
        )
        assert '"sum": 2' in text(on_element) and '"element": "Count visitors"' in text(on_element), text(on_element)
        assert "changed since you listed it" not in text(on_element)


async def test_names_that_leave_the_folder_and_a_source_of_the_clients_are_refused(world: ScriptsWorld) -> None:
    async with world.mcp("attacker", caps="scripts") as client:
        await open_post(client, world, "names")
        for name in ("../../etc/passwd", ".hidden", "a/b", "x" * 65, "\uff0e\uff0e"):
            await refused(client, "browser_run_script", {"name": name}, "invalid_script_name")
        said = await refused(client, "browser_run_script", {"name": "sum", "source": "() => 1"}, "invalid_request")
        assert "takes no `source`" in said


async def test_a_world_writable_folder_and_a_link_out_of_it_are_refused(world: ScriptsWorld, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.js"
    outside.write_text("() => document.cookie\n")
    link = world.folder / "cookie.js"
    link.symlink_to(outside)
    try:
        async with world.mcp("careful", caps="scripts") as client:
            await open_post(client, world, "refused")
            said = await refused(client, "browser_run_script", {"name": "cookie"}, "forbidden")
            assert "it is a link" in said, said
            os.chmod(world.folder, 0o777)
            try:
                said = await refused(
                    client, "browser_run_script", {"name": "sum", "args": {"a": 1, "b": 2}}, "forbidden"
                )
                assert "may be written by other users" in said, said
                await refused(client, "browser_scripts", {}, "forbidden")
            finally:
                os.chmod(world.folder, 0o700)
    finally:
        link.unlink()


async def changed_script_runs_as_it_is(client: McpClient, folder: Path) -> None:
    """A script the client listed, changed after: it runs as it is now, and the answer says so
    (the tab is the client's current one; Firefox's test runs this too)."""
    script = folder / "greet.js"
    script.write_text("// Greets\n() => 'hello'\n")
    try:
        assert "- greet: Greets" in text(await client.call("browser_scripts", {}))
        script.write_text("// Greets anew\n() => 'hello again'\n")
        ran = text(await client.call("browser_run_script", {"name": "greet"}))
        assert '"hello again"' in ran and "It changed since you listed it: it ran as it is now" in ran, ran
    finally:
        script.unlink()


async def test_a_script_changed_after_listing_runs_as_it_is_now_and_says_so(world: ScriptsWorld) -> None:
    async with world.mcp("lister", caps="scripts") as client:
        await open_post(client, world, "changed")
        await changed_script_runs_as_it_is(client, world.folder)
