"""The page-tool bridge (``extension/page_tools/bridge.js`` with ``bridge_chromium.js``) on the WebMCP
shapes of Chromium versions this machine does not run, against scripted fakes of them under Node:
``executeTool`` taking a JSON string (Chromium 150-154) or an object (155 and later), found out
once per page, and the older ``navigator.modelContextTesting`` surface."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "js" / "bridge_shapes.mjs"
# In the order the worker puts them in (page_bridges.js).
BRIDGE = [ROOT / "extension" / "page_tools" / name for name in ("bridge_chromium.js", "bridge.js")]


def run_bridge(shape: str) -> Any:
    node = shutil.which("node")
    assert node, "node is missing: scripts/test needs Node (apt-get install nodejs npm)"
    done = subprocess.run(
        [node, str(HARNESS), shape, *map(str, BRIDGE)], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


@pytest.mark.parametrize(
    ("shape", "calls"), [("object-args", ["object", "object"]), ("string-args", ["object", "string", "string"])]
)
def test_execute_tool_gets_the_arguments_in_the_shape_its_chromium_takes_found_once(
    shape: str, calls: list[str]
) -> None:
    seen = run_bridge(shape)
    assert seen["idle"] == {"listening": False, "reported": 0}, "the bridge is idle until the page has a tool"
    assert seen["listed"]["tools"] == [{"name": "echo", "description": "Echo", "inputSchema": ECHO_SCHEMA}]
    assert seen["first"] == {"result": {"echoed": "one"}} and seen["second"] == {"result": {"echoed": "two"}}
    assert seen["calls"] == calls


def test_the_older_model_context_testing_surface_is_listed_called_and_followed() -> None:
    seen = run_bridge("testing")
    assert seen["idle"] == {"listening": False, "reported": 0}, "the bridge is idle until the page has a tool"
    assert seen["listed"]["tools"] == [{"name": "echo", "description": "Echo", "inputSchema": ECHO_SCHEMA}]
    assert seen["first"] == {"result": {"echoed": "one"}} and seen["calls"] == ["string", "string"]
    assert seen["reports"][-1] == ["echo", "later"], "a change it calls back about is reported"
