"""End to end: refs that last as long as their elements, for every client, in the page and its frames.

An element keeps its ref while it stays in its document, whatever re-renders around it and
whichever client's snapshot gave it; a ref whose element left is refused as stale, and a ref is
never given to another element. Through a real broker, the real extension and MCP SDK clients.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Frame, Page

from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.extension_world import World, open_world, stop_worker
from ..support.mcp_clients import McpClient, text
from .test_e2e_browser_tools import ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

# A list the page's script re-renders, a menu it hides and shows, and a frame (of this site, in
# process, or of another site, out of process) with a list of its own; a click says what it hit.
PAGE_SCRIPT = """<script>
document.addEventListener("click", (event) => {
  const said = "clicked " + event.target.textContent;
  if (event.target.localName === "button") document.getElementById("said").textContent = said;
});
const fruit = () => document.getElementById("fruit");
const named = (name) => [...document.querySelectorAll("li")].find((item) => item.textContent === name);
window.rerenderKeeping = (added) => {
  const item = document.createElement("li");
  item.innerHTML = `<button>${added}</button>`;
  fruit().replaceChildren(...fruit().children, item);
  document.getElementById("said").textContent = "re-rendered";
};
window.moveToBasket = (name) => {
  document.getElementById("basket").append(named(name));
  fruit().append(...[...fruit().children].reverse());
};
window.replaceList = () => { fruit().innerHTML = fruit().innerHTML; };
window.removeItem = (name) => named(name).remove();
window.showMenu = (shown) => { document.getElementById("menu").hidden = !shown; };
</script>"""
LIST = """<ul id="fruit"><li><button>Apple</button></li><li><button>Pear</button></li></ul>
<ul id="basket" aria-label="Basket"></ul>
<div id="menu"><button>Settings</button></div>
<p id="said">nothing</p>"""
PAGE = f"""<!doctype html><title>Refs</title><h1>Refs</h1>{LIST}
<iframe id="inner" title="Inner" src="about:blank"></iframe>{PAGE_SCRIPT}
<script>
document.getElementById("inner").src = new URLSearchParams(location.search).get("frame") + "/inner.html";
</script>"""
INNER = f"<!doctype html><title>Inner</title>{LIST.replace('Apple', 'Fig').replace('Pear', 'Kiwi')}{PAGE_SCRIPT}"


class RefsWorld(World):
    home: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RefsWorld]:
    home = tmp_path_factory.mktemp("e2e-refs")
    async with (
        serve_pages({"refs.html": PAGE, "inner.html": INNER}) as site,
        open_world(home, site, RefsWorld, no_viewport=True) as world,
    ):
        world.home = home
        yield world


def refs_in(snapshot: str) -> set[str]:
    return set(re.findall(r"\[ref=((?:f\d+)?e\d+)\]", snapshot))


async def open_refs_page(client: McpClient, world: World, tag: str, frame_site: str = "") -> tuple[str, Page]:
    """Open the page in a new tab of the client's: its tab ref and the page, once its frame loaded."""
    url = f"{world.site}/refs.html?tag={tag}&frame={frame_site or world.site}"
    opened = await client.call_json("tabs", {"action": "open", "url": url, "focus": False})

    async def loaded() -> Page | None:
        for page in world.context.pages:
            if page.url == url and any(frame.url.endswith("/inner.html") for frame in page.frames):
                inner = inner_frame(page)
                if await inner.evaluate("document.readyState") == "complete":
                    return page
        return None

    page = await eventually(loaded, "the page and its frame to load")
    return opened["opened"]["ref"], page


def inner_frame(page: Page) -> Frame:
    [inner] = [frame for frame in page.frames if frame.url.endswith("/inner.html")]
    return inner


async def snapshot(client: McpClient) -> str:
    result = await client.call("browser_snapshot", {})
    assert not result.is_error, text(result)
    return text(result)


async def click(client: McpClient, ref: str) -> str:
    """Click the element ``ref`` names: the error's text, or "" when it worked."""
    result = await client.call("browser_click", {"element": "the button", "target": ref})
    return text(result) if result.is_error else ""


def stale(error: str) -> bool:
    """Whether the call was refused as the extension refuses a stale ref (stale_ref, "take a new snapshot")."""
    return "take a new snapshot with browser_snapshot" in error


async def said(where: Page | Frame) -> str:
    found: str = await where.evaluate("document.getElementById('said').textContent")
    return found


async def around(client: McpClient, world: World, tag: str, change: str) -> tuple[Page, str, str]:
    """Open the page, snapshot it, run ``change`` in it and snapshot it again: the page and both snapshots."""
    _, page = await open_refs_page(client, world, tag)
    before = await snapshot(client)
    await page.evaluate(change)
    return page, before, await snapshot(client)


async def test_refs_stay_when_the_page_re_renders_and_keeps_its_elements(world: World) -> None:
    async with world.mcp("rerender") as client:
        page, before, after = await around(client, world, "rerender", "rerenderKeeping('Plum')")
        apple, pear = ref_of(before, 'button "Apple"'), ref_of(before, 'button "Pear"')
        assert (ref_of(after, 'button "Apple"'), ref_of(after, 'button "Pear"')) == (apple, pear), after
        assert ref_of(after, 'button "Plum"') not in refs_in(before), "a new element gets a ref never given before"
        assert await click(client, apple) == ""
        assert await said(page) == "clicked Apple"


async def test_refs_follow_elements_the_page_moves(world: World) -> None:
    async with world.mcp("mover") as client:
        page, before, after = await around(client, world, "mover", "moveToBasket('Apple')")
        apple, pear = ref_of(before, 'button "Apple"'), ref_of(before, 'button "Pear"')
        basket = after.split('list "Basket"')[1]
        assert f'button "Apple" [ref={apple}]' in basket, after
        assert ref_of(after, 'button "Pear"') == pear, after
        assert await click(client, apple) == ""
        assert await said(page) == "clicked Apple"


async def test_a_replaced_element_is_refused_and_the_new_one_gets_a_new_ref(world: World) -> None:
    async with world.mcp("replacer") as client:
        _, page = await open_refs_page(client, world, "replacer")
        before = await snapshot(client)
        apple = ref_of(before, 'button "Apple"')
        await page.evaluate("replaceList()")
        refused = await click(client, apple)
        assert stale(refused) and "no longer on the page" in refused, refused
        after = await snapshot(client)
        fresh = ref_of(after, 'button "Apple"')
        assert fresh not in refs_in(before), after
        assert stale(await click(client, apple)), "a new snapshot does not bring the old ref back"
        assert await click(client, fresh) == ""
        assert await said(page) == "clicked Apple"


async def test_a_ref_a_later_snapshot_did_not_show_still_works_while_its_element_stays(world: World) -> None:
    async with world.mcp("hider") as client:
        _, page = await open_refs_page(client, world, "hider")
        settings = ref_of(await snapshot(client), 'button "Settings"')
        await page.evaluate("showMenu(false)")
        assert 'button "Settings"' not in (await snapshot(client)).split('iframe "Inner"')[0]
        await page.evaluate("showMenu(true)")
        assert await click(client, settings) == ""
        assert await said(page) == "clicked Settings"


@pytest.mark.parametrize("frame", ["page", "frame", "out-of-process frame"])
async def test_a_clients_refs_work_after_another_clients_snapshot_of_the_changed_page(world: World, frame: str) -> None:
    """Client A snapshots, lets the tab go; the page changes; client B claims it, snapshots (its
    snapshot shows neither the hidden menu nor the removed item) and lets it go; the menu shows again,
    and A, back, acts with its refs: the one of the element still there works, the other is refused."""
    other_site = world.site.replace("127.0.0.1", "localhost") if frame == "out-of-process frame" else ""
    names = ("Apple", "Pear") if frame == "page" else ("Fig", "Kiwi")
    async with world.mcp("client-a") as first, world.mcp("client-b") as second:
        tab, page = await open_refs_page(first, world, f"two-{frame.replace(' ', '-')}", other_site)
        where: Page | Frame = page if frame == "page" else inner_frame(page)
        mine = await snapshot(first)
        if frame != "page":
            # The frame's buttons: the refs under its iframe line.
            mine = mine.split('iframe "Inner"')[1]
        settings, kept, removed = (ref_of(mine, f'button "{name}"') for name in ("Settings", *names))
        assert frame == "page" or re.fullmatch(r"f\d+e\d+", settings), mine
        await first.call_json("tabs", {"action": "release", "tab": tab})
        await where.evaluate(f"showMenu(false); removeItem({names[1]!r})")
        await second.call_json("tabs", {"action": "claim", "tab": tab})
        theirs = await snapshot(second)
        assert 'button "Settings"' not in theirs.split('iframe "Inner"')[frame != "page"], theirs
        assert f'button "{names[1]}"' not in theirs, theirs
        await second.call_json("tabs", {"action": "release", "tab": tab})
        await where.evaluate("showMenu(true)")
        await first.call_json("tabs", {"action": "claim", "tab": tab})
        assert await click(first, settings) == ""
        assert await said(where) == "clicked Settings"
        assert await click(first, kept) == ""
        assert await said(where) == f"clicked {names[0]}"
        refused = await click(first, removed)
        assert stale(refused), refused
        # And B's snapshot gave the kept element the ref A has.
        assert ref_of(theirs, f'button "{names[0]}"') == kept, theirs


async def test_a_ref_does_not_keep_its_removed_element_alive(world: World) -> None:
    async with world.mcp("collector") as client:
        _, page = await open_refs_page(client, world, "collector")
        apple = ref_of(await snapshot(client), 'button "Apple"')
        await page.evaluate("window.watched = new WeakRef(document.querySelector('#fruit button'))")
        await page.evaluate("removeItem('Apple')")
        collector = await world.context.new_cdp_session(page)

        async def collected() -> bool:
            # A weak reference holds its element until the engine next runs microtasks: let the page run one.
            await page.evaluate("new Promise((done) => setTimeout(() => Promise.resolve().then(done)))")
            await collector.send("HeapProfiler.collectGarbage")
            return bool(await page.evaluate("window.watched.deref() === undefined"))

        try:
            await eventually(collected, "the removed button to be collected (nothing of the agent's holds it)")
        finally:
            await collector.detach()
        # Its ref is forgotten at the next snapshot, and still refused as one whose element left.
        await snapshot(client)
        refused = await click(client, apple)
        assert stale(refused) and "no longer on the page" in refused, refused


def numbers(refs: set[str]) -> set[int]:
    """The numbers of the page's own refs (e12), not its frames'."""
    return {int(ref[1:]) for ref in refs if ref.startswith("e")}


async def test_a_restarted_worker_never_gives_an_earlier_pages_ref_numbers_again(world: RefsWorld) -> None:
    """Last in the module: Playwright does not hand out the new worker, so ``world.worker`` is stale."""
    async with world.mcp("restarted") as client:
        tab, page = await open_refs_page(client, world, "restart")
        before = await snapshot(client)
        apple, fig = ref_of(before, 'button "Apple"'), ref_of(before, 'button "Fig"')
        await stop_worker(world, page)
        # Any tab event wakes the worker again.
        waking = await world.context.new_page()
        await waking.goto(world.url("refs.html", "wake"))

        async def rejoined() -> bool:
            browser = await world.browser()
            return browser is not None and browser["connected"]

        await eventually(rejoined, "the new worker to rejoin")
        url = f"{world.site}/refs.html?tag=restart-next&frame={world.site}"
        navigated = await client.call("browser_navigate", {"url": url, "tab": tab})
        assert not navigated.is_error, text(navigated)
        after = await snapshot(client)
        assert min(numbers(refs_in(after))) > max(numbers(refs_in(before))), (before, after)
        assert not refs_in(after) & refs_in(before), "a frame's refs are new too"
        refused = await click(client, apple)
        assert stale(refused) and "is from an earlier page of this tab" in refused, refused
        refused = await click(client, fig)
        assert stale(refused) and "navigated or was removed" in refused, refused
        await waking.close()
