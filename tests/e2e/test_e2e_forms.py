"""End to end: declarative page tools (``<form toolname>``) through the extension's polyfill.

On a browser without WebMCP of its own, a form that names itself a tool is one: its input schema
comes from its fields, a call fills them as a person would, and submits the form when it says
``toolautosubmit``, or waits for the person to. Through a real broker and an MCP client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.extension_world import World, open_world
from ..support.mcp_clients import text

pytestmark = pytest.mark.asyncio(loop_scope="module")

FORMS = """<!doctype html><title>Booking</title>
<form toolname="search_flights" tooldescription="Find flights between two cities" toolautosubmit>
  <label>From <input name="from" required></label>
  <input name="to" toolparamdescription="the city to fly to, e.g. Lisbon" required>
  <label>Passengers <input type="number" name="passengers" min="1" max="9"></label>
  <label>Class <select name="class"><option value="economy">Economy</option>
    <option value="business">Business</option></select></label>
  <label><input type="checkbox" name="flexible"> Flexible dates</label>
  <button>Search</button>
</form>
<p id="found">nothing yet</p>
<form toolname="book" tooldescription="Book the chosen flight" action="/done.html">
  <label>Name <input name="name" required></label>
  <button>Book</button>
</form>
<script>
  document.forms[0].addEventListener("submit", (event) => {
    event.preventDefault();
    const data = Object.fromEntries(new FormData(event.target));
    document.getElementById("found").textContent = `${data.from} to ${data.to}`;
    if (event.agentInvoked) event.respondWith(Promise.resolve({flights: 3, from: data.from, to: data.to,
      passengers: data.passengers, class: data.class, flexible: data.flexible ?? "off"}));
  });
</script>"""
DONE = "<!doctype html><title>Booked</title><h1>Booked</h1>"
# A page whose first script makes the document's querySelector find nothing, then a tool form.
BLINDING = """<!doctype html><title>Blinding</title><script>
  Document.prototype.querySelector = () => null;
</script>
<form toolname="subscribe" tooldescription="Subscribe to the newsletter"><input name="email"></form>"""

# A page that declares no tool and hears every window message from its first script on.
QUIET = """<!doctype html><title>Quiet</title><script>
  window.heard = [];
  addEventListener("message", (event) => heard.push(event.data?.source ?? null));
</script><div id="later"></div>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    home: Path = tmp_path_factory.mktemp("e2e-forms")
    async with (
        serve_pages({"forms.html": FORMS, "done.html": DONE, "quiet.html": QUIET, "blinding.html": BLINDING}) as site,
        open_world(home, site, World) as world,
    ):
        yield world


async def test_a_form_that_names_itself_a_tool_is_one_with_a_schema_from_its_fields(world: World) -> None:
    page, tab = await world.open_page("forms.html", "schema", {"search_flights", "book"})
    async with world.mcp("planner") as client:
        listed = await client.call_json("page_tools", {"tab": tab["ref"]})
        tools = {tool["name"]: tool for tool in listed["tools"]}
        search = tools["search_flights"]
        assert search["description"] == "Find flights between two cities"
        assert search["inputSchema"] == {
            "type": "object",
            "properties": {
                "from": {"type": "string", "description": "From"},
                "to": {"type": "string", "description": "the city to fly to, e.g. Lisbon"},
                "passengers": {"type": "number", "minimum": 1, "maximum": 9, "description": "Passengers"},
                "class": {"type": "string", "enum": ["economy", "business"], "description": "Class"},
                "flexible": {"type": "boolean", "description": "Flexible dates"},
            },
            "required": ["from", "to"],
        }
        # A form that stops being a tool takes its tool with it.
        await page.evaluate("document.forms[1].removeAttribute('toolname')")
        await world.tab_at(world.url("forms.html", "schema"), {"search_flights"})
    await page.close()


async def test_an_autosubmit_form_is_filled_submitted_and_answers_with_what_the_page_said(world: World) -> None:
    page, tab = await world.open_page("forms.html", "auto", {"search_flights", "book"})
    async with world.mcp("planner") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        args = {"from": "Paris", "to": "Lisbon", "passengers": 2, "class": "business", "flexible": True}
        result = await client.call("call_page_tool", {"tab": tab["ref"], "tool": "search_flights", "arguments": args})
        assert not result.is_error, text(result)
        assert json.loads(text(result)) == {
            "flights": 3,
            "from": "Paris",
            "to": "Lisbon",
            "passengers": "2",
            "class": "business",
            "flexible": "on",
        }
        assert await page.locator("#found").inner_text() == "Paris to Lisbon"
        # A field the form lacks, or one left out that it needs, fails clearly and submits nothing.
        bad = await client.call(
            "call_page_tool", {"tab": tab["ref"], "tool": "search_flights", "arguments": {"fly": 1}}
        )
        assert bad.is_error and "the form has no field fly" in text(bad), text(bad)
        empty = {"from": "", "to": "Rome"}
        bad = await client.call("call_page_tool", {"tab": tab["ref"], "tool": "search_flights", "arguments": empty})
        assert bad.is_error and "not valid: from" in text(bad), text(bad)
        assert await page.locator("#found").inner_text() == "Paris to Lisbon"
    await page.close()


async def test_a_form_without_autosubmit_waits_for_the_person_to_submit_it(world: World) -> None:
    page, tab = await world.open_page("forms.html", "person", {"search_flights", "book"})
    async with world.mcp("booker") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        call = asyncio.ensure_future(
            client.call("call_page_tool", {"tab": tab["ref"], "tool": "book", "arguments": {"name": "Ada"}})
        )
        field = page.locator("form[toolname=book] input[name=name]")
        await eventually(field.input_value, "the form to be filled")
        assert await field.input_value() == "Ada" and not call.done()
        await page.get_by_role("button", name="Book").click()
        async with asyncio.timeout(WAIT):
            result = await call
        assert not result.is_error, text(result)
        assert text(result) == f"The form was submitted: the page is going to {world.site}/done.html."
    await page.close()


async def test_a_tool_form_a_page_adds_later_inside_other_elements_is_a_tool(world: World) -> None:
    # The page declared none when it loaded: the polyfill looks only at what is added, here a form
    # nested in a section, and finds it.
    page, _tab = await world.open_page("quiet.html", "later", set())
    await page.evaluate(
        """document.getElementById("later").innerHTML = `<section><form toolname="subscribe"
             tooldescription="Subscribe to the newsletter"><input name="email"></form></section>`"""
    )
    await world.tab_at(world.url("quiet.html", "later"), {"subscribe"})
    await page.close()


async def test_a_page_without_tools_hears_nothing_from_the_extension(world: World) -> None:
    # The bridge and the polyfill say nothing on the page's window until there is something to say.
    page, _tab = await world.open_page("quiet.html", "silent", set())
    await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)))")
    assert await page.evaluate("heard") == []
    await page.close()


async def test_a_page_that_replaced_querySelector_first_still_has_its_tool_form_found(world: World) -> None:
    """The polyfill looks for tool forms with the methods the page had before its first script."""
    page, _ = await world.open_page("blinding.html", "blinding", {"subscribe"})
    assert await page.evaluate("document.querySelector('form')") is None  # the page's own, still replaced
    await page.close()
