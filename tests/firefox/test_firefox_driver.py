"""End to end in headless Firefox ESR: the built-in tools on the WebExtension page driver.

Firefox has no chrome.debugger, so the extension's driver choice (``extension/actions/driver.js``)
takes the WebExtension driver there. The extension's Firefox build (``broker.install.firefox_extension``)
is installed over WebDriver BiDi (``tests/harness/firefox.py``) with a probe beside its background
(``tests/support/firefox_driver_probe.js``): it runs browser actions through ``actions/run.js`` on pages
this module serves, one on 127.0.0.1 holding a frame from localhost (another site), and posts
each answer back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from ..harness.firefox import build_extension, extension_firefox

PROBE = Path(__file__).resolve().parents[1] / "support" / "firefox_driver_probe.js"

PAGES = {
    "a.html": """<!doctype html><title>Page A</title><h1>Hello A</h1><a href="b.html">to B</a>
        <button onclick="document.title='clicked'">Press</button><input aria-label="Name">
        <iframe src="FRAME"></iframe>""",
    "b.html": """<!doctype html><title>Page B</title><h1>Hello B</h1><p>second page</p>
        <script>fetch("/b.json").then(() => document.body.append("fetched"))</script>""",
    "b.json": "{}",
    "f.html": """<!doctype html><title>Frame</title><button>Inner button</button><script>
        addEventListener("click", (e) => parent.postMessage(["frame", e.target.localName, e.clientX, e.clientY,
          e.isTrusted], "*"));
        </script>""",
    # Things at known points: a button under a cover, a button in a closed shadow root, a pad
    # that follows the mouse, and the cross-site frame (its button at 8, 8 of its viewport).
    "xy.html": """<!doctype html><title>XY</title><style>body { margin: 0 } .at { position: absolute }</style>
        <button id="under" class="at" style="left: 10px; top: 10px; width: 100px; height: 40px">Under</button>
        <div id="cover" class="at" style="left: 0; top: 0; width: 150px; height: 60px; z-index: 1"></div>
        <div id="host" class="at" style="left: 10px; top: 100px"></div>
        <div id="pad" class="at" style="left: 400px; top: 10px; width: 200px; height: 100px"></div>
        <iframe class="at" style="left: 10px; top: 200px; width: 300px; height: 150px; border: 0" src="FRAME"></iframe>
        <script>
        window.hits = [];
        const note = (...what) => window.hits.push(what.join(" "));
        addEventListener("message", (event) => note(...event.data));
        const shadow = document.getElementById("host").attachShadow({ mode: "closed" });
        shadow.innerHTML = '<button style="width: 100px; height: 40px">Deep</button>';
        shadow.querySelector("button").addEventListener("click", (event) => note("deep", event.isTrusted));
        document.addEventListener("click", (e) => note("click", e.target.id, e.clientX, e.clientY, e.isTrusted));
        const pad = document.getElementById("pad");
        pad.addEventListener("mouseover", () => note("over pad"));
        pad.addEventListener("pointerdown", (e) => note("down", e.clientX, e.clientY));
        pad.addEventListener("mouseup", (e) => note("up", e.clientX, e.clientY));
        </script>""",
    "upload.html": """<!doctype html><title>Upload</title><input type="file" aria-label="Choose">
        <script>
        // A promise, as the file's text is read after the change: browser_evaluate awaits it.
        window.uploaded = new Promise((resolve) =>
          document.querySelector("input").addEventListener("change", async (event) => {
            const [file] = event.target.files;
            resolve([file.name, await file.text(), event.isTrusted]);
          }));
        </script>""",
    "form.html": """<!doctype html><title>Form</title>
        <form onsubmit="event.preventDefault(); window.seen.push('submit:' + this.elements[0].value)">
        <input aria-label="Name"></form>
        <script>
        window.seen = [];
        document.querySelector("input").addEventListener("input", (event) => window.seen.push(event.isTrusted));
        </script>""",
    # A page that replaces what input and dialog hooks would use before any of ours could run.
    "hostile.html": """<!doctype html><title>Hostile</title><script>
        window.hostileSaw = [];
        Element.prototype.dispatchEvent = function () { window.hostileSaw.push("dispatch"); return true; };
        window.alert = () => window.hostileSaw.push("alert");
        Object.defineProperty(window, "__browserMcpAgent", { get() { window.hostileSaw.push("agent"); } });
        </script><button onclick="window.baitClicks = (window.baitClicks ?? 0) + 1">Bait</button>""",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def firefox_copy(folder: Path, config: dict[str, str], probe: Path = PROBE) -> Path:
    """The extension's Firefox build, with ``probe`` beside its background."""
    copy = build_extension(folder / "extension")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["background"]["scripts"].append(probe.name)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    shutil.copy(probe, copy / probe.name)
    (copy / "probe_config.json").write_text(json.dumps(config))
    return copy


@contextlib.asynccontextmanager
async def two_sites(app: web.Application, page_port: int, frame_port: int) -> AsyncIterator[None]:
    """``app`` on 127.0.0.1 and on localhost: a frame from one in a page of the other is cross-site."""
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", page_port).start()
        await web.TCPSite(runner, "localhost", frame_port).start()
        yield
    finally:
        await runner.cleanup()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def answers(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[list[dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("firefox_driver")
    done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    page_port, frame_port = free_port(), free_port()

    async def page(request: web.Request) -> web.Response:
        text = PAGES.get(request.match_info["name"])
        if text is None:
            return web.Response(status=404)
        kind = "application/json" if request.match_info["name"].endswith(".json") else "text/html"
        return web.Response(text=text.replace("FRAME", f"http://localhost:{frame_port}/f.html"), content_type=kind)

    async def result(request: web.Request) -> web.Response:
        if not done.done():
            done.set_result(await request.text())
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/{name}", page)
    app.router.add_post("/result", result)
    extension = firefox_copy(folder, {"base": f"http://127.0.0.1:{page_port}"})
    async with two_sites(app, page_port, frame_port), extension_firefox(folder, extension=extension):
        yield json.loads(await asyncio.wait_for(done, 90))


def text_of(answer: dict[str, Any]) -> str:
    assert answer.get("error") is None, answer
    return "\n".join(part["text"] for part in answer["result"]["content"] if part["type"] == "text")


pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_snapshot_shows_the_page_and_a_cross_origin_frame_with_refs_that_stay(
    answers: list[dict[str, Any]],
) -> None:
    first, second, frame = answers[0], answers[1], answers[2]
    yaml = first["page"]["yaml"]
    # The page's body, which only holds it all, has no line: its content stands at the top.
    assert yaml.startswith('- heading "Hello A" [level=1] [ref=e1]\n'), yaml
    assert '\n- button "Press" [ref=e3]\n' in yaml
    assert "[origin=http://localhost:" in yaml
    assert 'button "Inner button" [ref=f1e1]' in yaml
    assert second["page"]["yaml"] == yaml
    assert frame["page"]["yaml"].strip() == '- button "Inner button" [ref=f1e1]'


async def test_navigate_and_back_move_the_tab_between_its_pages(
    answers: list[dict[str, Any]],
) -> None:
    navigated, back = answers[3], answers[5]
    assert "- Page Title: Page B" in text_of(navigated)
    assert 'heading "Hello B"' in navigated["page"]["yaml"]
    assert "- Page Title: Page A" in text_of(back)
    assert 'link "to B" [ref=' in back["page"]["yaml"]


async def test_network_requests_lists_what_the_page_fetched(answers: list[dict[str, Any]]) -> None:
    assert "/b.json => [200]" in text_of(answers[4])


async def test_a_screenshot_is_a_png_of_the_viewport(answers: list[dict[str, Any]]) -> None:
    shot = answers[6]
    assert "- Screenshot of the viewport" in text_of(shot)
    image = next(part for part in shot["result"]["content"] if part["type"] == "image")
    assert image["mimeType"] == "image/png" and image["data"].startswith("iVBORw0KGgo")


async def test_evaluate_runs_in_the_page_with_the_element_of_a_ref(answers: list[dict[str, Any]]) -> None:
    assert '"to B"' in text_of(answers[7])


async def test_wait_for_finds_the_pages_text(answers: list[dict[str, Any]]) -> None:
    assert "Waited for hello a" in text_of(answers[8])


async def test_an_action_the_driver_cannot_do_is_not_supported_naming_firefox(answers: list[dict[str, Any]]) -> None:
    error = answers[9]["error"]
    assert error["code"] == "not_supported" and "Firefox" in error["message"]


async def test_a_ref_never_given_is_refused_as_stale(answers: list[dict[str, Any]]) -> None:
    assert answers[10]["error"]["code"] == "stale_ref"


async def test_a_hostile_page_neither_sees_nor_stops_the_drivers_page_code(answers: list[dict[str, Any]]) -> None:
    hostile = answers[11]
    assert 'button "Bait"' in hostile["page"]["yaml"]
    assert text_of(answers[12]).split("\n", 1)[1].strip() == "[]"


async def test_a_tab_closed_mid_action_ends_that_action_with_a_clear_error_and_no_other(
    answers: list[dict[str, Any]],
) -> None:
    closed = answers[13]["error"]
    assert closed is not None and closed["code"] == "action_failed"
    assert "closed" in closed["message"] or "does not exist" in closed["message"]
    assert "- Page Title: Hostile" in text_of(answers[14])


async def test_a_click_is_synthetic_and_says_so_and_a_pages_own_dispatch_event_never_runs(
    answers: list[dict[str, Any]],
) -> None:
    clicked = text_of(answers[15])
    assert "isTrusted false" in clicked
    seen = json.loads(text_of(answers[16]).split("\n", 1)[1])
    assert seen == [[], 1]


async def test_a_click_on_a_link_waits_for_the_page_it_leads_to(answers: list[dict[str, Any]]) -> None:
    assert "- Page Title: Page B" in text_of(answers[20])


async def test_a_ref_in_a_frame_that_navigated_since_its_snapshot_is_refused_as_stale(
    answers: list[dict[str, Any]],
) -> None:
    assert text_of(answers[18]).endswith("true")
    assert answers[19]["error"]["code"] == "stale_ref", answers[19]


async def test_a_file_input_clicked_waits_for_browser_file_upload_which_sets_its_files(
    answers: list[dict[str, Any]],
) -> None:
    assert "[File chooser]" in text_of(answers[22])
    assert "Uploaded 1 file into the file chooser: note.txt (5 B)" in text_of(answers[23])
    assert json.loads(text_of(answers[24]).split("\n", 1)[1]) == ["note.txt", "hello", False]
    assert answers[25]["error"]["code"] == "no_file_chooser"


async def test_type_fills_a_field_with_synthetic_input_and_enter_submits_its_form(
    answers: list[dict[str, Any]],
) -> None:
    assert "isTrusted false" in text_of(answers[27])
    assert json.loads(text_of(answers[28]).split("\n", 1)[1]) == [False, "submit:Ada"]


async def test_a_click_at_a_point_goes_to_what_is_on_top_there_not_to_what_it_covers(
    answers: list[dict[str, Any]],
) -> None:
    assert "isTrusted false" in text_of(answers[30])
    hits = json.loads(text_of(answers[36]).split("\n", 1)[1])
    assert hits[0] == "click cover 50 30 false", hits
    assert not any("under" in hit for hit in hits), hits


async def test_a_click_at_a_point_reaches_into_a_closed_shadow_root_and_a_cross_site_frame(
    answers: list[dict[str, Any]],
) -> None:
    assert "isTrusted false" in text_of(answers[31]) and "isTrusted false" in text_of(answers[32])
    hits = json.loads(text_of(answers[36]).split("\n", 1)[1])
    assert hits[1:3] == ["deep false", "click host 50 120 false"], hits
    # The frame's own document heard it, at the point moved into the frame's viewport.
    assert "frame button 12 12 false" in hits, hits


async def test_a_move_and_a_drag_between_points_send_the_mouse_events_there(
    answers: list[dict[str, Any]],
) -> None:
    assert answers[33]["error"] is None and answers[34]["error"] is None, answers[33:35]
    hits = json.loads(text_of(answers[36]).split("\n", 1)[1])
    assert hits[-3:] == ["over pad", "down 420 20", "up 560 90"], hits


async def test_a_point_outside_the_viewport_is_refused_with_the_viewports_size(
    answers: list[dict[str, Any]],
) -> None:
    error = answers[35]["error"]
    assert error["code"] == "invalid_arguments", error
    assert "(5000, 10) is outside the tab's viewport" in error["message"], error
