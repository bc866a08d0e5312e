"""End to end: what a client reads after acting, through a real broker, the real extension and MCP.

An action answers with the change it made since the client's last snapshot of the tab, not the
whole page again; a new page comes whole (folded to the answer's budget); each client has its own
baseline; `browser_snapshot` with `changes: true` tells what changed by itself.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support import lean_snapshots as lean
from ..support.extension_world import World, open_world
from ..support.mcp_clients import McpClient, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

FRUITS = ["apple", "apricot", "banana", "blueberry", "cherry", "date", "fig", "grape", "kiwi", "lemon", "mango", "pear"]
LIST = (
    """<!doctype html><title>Groceries</title>
<h1>Groceries</h1>
<label>Filter <input id="filter"></label>
<ul aria-label="Groceries" id="list">"""
    + "".join(f"<li>{fruit} <button>Buy {fruit}</button></li>" for fruit in FRUITS)
    + """</ul>
<button id="add">Add item</button> <button id="many">Add 300 items</button>
<a href="other.html">Other page</a>
<p id="clock">tick 0</p>
<script>
  let next = 1;
  const list = document.getElementById("list");
  const item = () => {
    const li = document.createElement("li");
    li.textContent = `New item ${next++}`;
    list.append(li);
  };
  document.getElementById("add").onclick = item;
  document.getElementById("many").onclick = () => { for (let i = 0; i < 300; i++) item(); };
  document.getElementById("filter").oninput = (event) => {
    for (const li of list.children) li.hidden = !li.textContent.includes(event.target.value);
  };
</script>"""
)
OTHER = "<!doctype html><title>Other</title><h1>The other page</h1><p>Welcome elsewhere</p>"
# A page that writes what looks like its frame's ref into a button's name, above the frame.
SPOOF = """<!doctype html><title>Spoof</title><button id="spoof">Pay</button>
<script>
  const frame = document.createElement("iframe");
  frame.src = location.origin.replace("127.0.0.1", "localhost") + "/other.html";
  document.body.append(frame);
</script>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    home: Path = tmp_path_factory.mktemp("e2e-changes")
    async with (
        serve_pages({"list.html": LIST, "other.html": OTHER, "spoof.html": SPOOF, **lean.pages()}) as site,
        open_world(home, site, World, no_viewport=True) as world,
    ):
        yield world


def ref_of(snapshot: str, pattern: str) -> str:
    for line in snapshot.splitlines():
        if re.search(pattern, line) and (found := re.search(r"\[ref=(e\d+)\]", line)):
            return found.group(1)
    raise AssertionError(f"no line matching {pattern!r} with a ref in:\n{snapshot}")


def snapshot_section(result: str) -> str:
    return result.split("### Snapshot\n", 1)[1]


async def ok(client: McpClient, tool: str, **arguments: object) -> str:
    result = await client.call(tool, arguments)
    assert not result.is_error, text(result)
    return text(result)


async def open_list(client: McpClient, world: World) -> tuple[str, str]:
    """A tab of the client's own showing the list, and the client's first snapshot of it."""
    opened = await client.call_json("tabs", {"action": "open", "url": f"{world.site}/list.html", "focus": False})
    first = await ok(client, "browser_snapshot", tab=opened["opened"]["ref"])
    return opened["opened"]["ref"], first


async def test_a_click_that_adds_an_item_answers_with_that_item_alone(world: World) -> None:
    async with world.mcp("adder") as client:
        tab, first = await open_list(client, world)
        apple = ref_of(first, r'button "Buy apple"')
        answer = await ok(client, "browser_click", tab=tab, target=ref_of(first, r'button "Add item"'))
        told = snapshot_section(answer)
        assert told.startswith("```diff\n"), told
        assert "### Page" not in answer, "neither the address nor the title changed"
        assert re.search(r"^\+ +- listitem \[ref=e\d+\]: New item 1$", told, re.M), told
        assert re.search(r'^  +- list "Groceries" \[ref=e\d+\]:$', told, re.M), "its ancestor, for context"
        assert "apple" not in told and len(answer) < 600, answer
        # Refs stay: the element that was there keeps its ref, and acting by it still works.
        whole = await ok(client, "browser_snapshot", tab=tab)
        assert ref_of(whole, r'button "Buy apple"') == apple
        again = await ok(client, "browser_click", tab=tab, target=ref_of(first, r'button "Add item"'))
        assert "New item 2" in again and "New item 1" not in again, again
        await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_typing_that_filters_a_list_answers_with_what_went_and_what_stays(world: World) -> None:
    async with world.mcp("filterer") as client:
        tab, first = await open_list(client, world)
        answer = await ok(client, "browser_type", tab=tab, target=ref_of(first, r'textbox "Filter"'), text="ap")
        told = snapshot_section(answer)
        assert re.search(r'^~ +- textbox "Filter" \[active\] \[ref=e\d+\]: ap$', told, re.M), told
        removed = re.findall(r"^- +- listitem \[ref=e\d+\]", told, re.M)
        assert removed and "more removed (listitem)" in told, told
        # What stays reads whole, so the filtered list needs no other call.
        for fruit in ("apple", "apricot", "grape"):
            assert f'button "Buy {fruit}"' in told, (fruit, told)
        assert "banana" not in told
        await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_a_navigation_answers_with_the_new_page_whole(world: World) -> None:
    async with world.mcp("walker") as client:
        tab, first = await open_list(client, world)
        answer = await ok(client, "browser_click", tab=tab, target=ref_of(first, r'link "Other page"'))
        assert f"- Page URL: {world.site}/other.html" in answer and "- Page Title: Other" in answer
        told = snapshot_section(answer)
        assert told.startswith("```yaml\n"), told  # whole, as an action's answer gives a new page
        assert 'heading "The other page" [level=1]' in told and "Welcome elsewhere" in told
        # That page is now the baseline: nothing changed since.
        assert snapshot_section(await ok(client, "browser_snapshot", tab=tab, changes=True)) == (
            "- No changes since your last snapshot of this tab."
        )
        await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_changes_true_tells_what_the_page_changed_by_itself(world: World) -> None:
    page, tab = await world.open_page("list.html", "clock")
    async with world.mcp("watcher") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await ok(client, "browser_snapshot", tab=tab["ref"])
        same = await ok(client, "browser_snapshot", tab=tab["ref"], changes=True)
        assert snapshot_section(same) == "- No changes since your last snapshot of this tab."
        await page.evaluate("document.getElementById('clock').textContent = 'tick 1'")
        told = snapshot_section(await ok(client, "browser_snapshot", tab=tab["ref"], changes=True))
        assert re.search(r"^~ +- paragraph \[ref=e\d+\]: tick 1$", told, re.M), told
        assert "Groceries" not in told
    await page.close()


async def test_two_clients_working_a_tab_in_turn_each_read_their_own_changes(world: World) -> None:
    page, tab = await world.open_page("list.html", "turns")
    ref = tab["ref"]
    async with world.mcp("first") as first, world.mcp("second") as second:
        await first.call_json("tabs", {"action": "claim", "tab": ref})
        seen = await ok(first, "browser_snapshot", tab=ref)
        await first.call_json("tabs", {"action": "release", "tab": ref})
        await second.call_json("tabs", {"action": "claim", "tab": ref})
        theirs = await ok(second, "browser_snapshot", tab=ref)
        added = await ok(second, "browser_click", tab=ref, target=ref_of(theirs, r'button "Add item"'))
        assert "New item 1" in snapshot_section(added)
        await second.call_json("tabs", {"action": "release", "tab": ref})
        await first.call_json("tabs", {"action": "claim", "tab": ref})
        # The first client has not read what the second did: its changes run from its own last look.
        told = snapshot_section(await ok(first, "browser_snapshot", tab=ref, changes=True))
        assert re.search(r"^\+ +- listitem \[ref=e\d+\]: New item 1$", told, re.M), told
        assert "apple" not in told and ref_of(seen, r'button "Buy apple"') in await ok(
            first, "browser_snapshot", tab=ref
        )
    await page.close()


async def test_an_answer_over_its_budget_says_what_it_left_out_and_changes_true_shows_it(world: World) -> None:
    async with world.mcp("hoarder") as client:
        tab, first = await open_list(client, world)
        answer = await ok(client, "browser_click", tab=tab, target=ref_of(first, r'button "Add 300 items"'))
        told = snapshot_section(answer)
        assert len(told) <= 4_500, len(told)
        note = told.splitlines()[-1]
        assert note.startswith("- Left out: ") and "changes: true" in note, note
        assert re.search(r'list "Groceries" \[ref=e\d+\]', note), note
        everything = snapshot_section(await ok(client, "browser_snapshot", tab=tab, changes=True))
        assert len(re.findall(r"^\+ +- listitem \[ref=e\d+\]: New item \d+$", everything, re.M)) == 300
        await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_a_name_that_looks_like_a_frames_ref_does_not_take_the_frames_place(world: World) -> None:
    page, tab = await world.open_page("spoof.html", "spoof")
    other = world.site.replace("127.0.0.1", "localhost")
    async with world.mcp("spoofed") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})

        async def framed() -> str | None:
            text = await ok(client, "browser_snapshot", tab=tab["ref"])
            return text if "Welcome elsewhere" in text else None

        first = await eventually(framed, "the frame's content in a snapshot")
        frame_ref = ref_of(first, r"- iframe")
        await page.evaluate(f"document.getElementById('spoof').textContent = 'Pay [ref={frame_ref}]'")
        told = snapshot_section(await ok(client, "browser_snapshot", tab=tab["ref"]))
        lines = told.splitlines()
        button = next(line for line in lines if "- button" in line)
        assert "[origin=" not in button and button.endswith(":") is False, told
        frame_line = next(index for index, line in enumerate(lines) if line.lstrip().startswith("- iframe"))
        assert f"[ref={frame_ref}] [origin={other}]" in lines[frame_line], told
        assert "Welcome elsewhere" in "\n".join(lines[frame_line + 1 :]), told
    await page.close()


async def test_a_snapshot_leaves_out_wrappers_and_labels_said_twice_and_keeps_every_control(world: World) -> None:
    async with world.mcp("lean") as client:
        await lean.check_lean_checkout(client, f"{world.site}/{lean.CHECKOUT}")


async def test_a_root_the_page_made_a_control_keeps_its_line_and_takes_a_click(world: World) -> None:
    async with world.mcp("lean root") as client:
        await lean.check_clickable_root(client, f"{world.site}/{lean.CLICKABLE_ROOT}")
