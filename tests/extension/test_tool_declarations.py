"""The built-in browser tools as the broker declares them (``broker/core/browser_tools.py``) and as
the extension does (``extension/actions/tools.js``, read under Node without a browser): the same
tools by their wire names, each as destructive, as read-only and carried out by the same page
drivers on both sides. A tool one side lacks, or a flag they disagree on, fails naming the tool
and the side."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from broker.core.browser_tools import DRIVERS, TOOLS, BuiltinTool

ROOT = Path(__file__).resolve().parents[2]
DECLARATIONS = ROOT / "extension" / "actions" / "tools.js"


def extension_tools() -> dict[str, dict[str, Any]]:
    """The extension's declarations by wire name, as Node imports the module."""
    node = shutil.which("node")
    assert node, "node is missing: scripts/test needs Node (apt-get install nodejs npm)"
    script = f"const m = await import({DECLARATIONS.as_uri()!r}); console.log(JSON.stringify(m.TOOLS));"
    done = subprocess.run(
        [node, "--input-type=module", "-e", script], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    return {tool["name"]: tool for tool in listed}


def broker_tools() -> dict[str, BuiltinTool]:
    return {tool.action: tool for tool in TOOLS}


@pytest.fixture(scope="module")
def extension() -> dict[str, dict[str, Any]]:
    return extension_tools()


def test_both_sides_declare_the_same_tools_by_their_wire_names(extension: dict[str, dict[str, Any]]) -> None:
    ours = broker_tools()
    only_broker = sorted(set(ours) - set(extension))
    only_extension = sorted(set(extension) - set(ours))
    assert not only_broker, f"declared by the broker, not by extension/actions/tools.js: {only_broker}"
    assert not only_extension, f"declared by extension/actions/tools.js, not by the broker: {only_extension}"


def test_both_sides_list_the_tools_in_the_same_order(extension: dict[str, dict[str, Any]]) -> None:
    # The extension announces its actions in its order, which the broker's list is read against.
    ours = [name for name in broker_tools() if name in extension]
    theirs = [name for name in extension if name in ours]
    first = next((index for index, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b), None)
    assert first is None, (
        f"at {first}: the broker lists {ours[first : first + 3]}, tools.js {theirs[first : first + 3]}"
    )


def test_each_tool_is_destructive_on_both_sides_or_on_neither(extension: dict[str, dict[str, Any]]) -> None:
    wrong = [
        f"{name}: broker destructive={tool.destructive}, extension destructive={extension[name].get('destructive')}"
        for name, tool in broker_tools().items()
        if name in extension and extension[name].get("destructive") is not tool.destructive
    ]
    assert not wrong, "the approval rule differs: " + "; ".join(wrong)


def test_each_tool_is_read_only_on_both_sides_or_on_neither(extension: dict[str, dict[str, Any]]) -> None:
    wrong = [
        f"{name}: broker read_only={tool.read_only}, extension readOnly={extension[name].get('readOnly')}"
        for name, tool in broker_tools().items()
        if name in extension and extension[name].get("readOnly") is not tool.read_only
    ]
    assert not wrong, "; ".join(wrong)


def test_each_tool_is_carried_out_by_the_same_page_drivers(extension: dict[str, dict[str, Any]]) -> None:
    wrong = [
        f"{name}: broker drivers={sorted(tool.drivers)}, extension drivers={sorted(extension[name].get('drivers', []))}"
        for name, tool in broker_tools().items()
        if name in extension and sorted(tool.drivers) != sorted(extension[name].get("drivers", []))
    ]
    assert not wrong, "; ".join(wrong)


def test_the_drivers_named_are_the_two_page_drivers(extension: dict[str, dict[str, Any]]) -> None:
    named = {driver for tool in extension.values() for driver in tool.get("drivers", [])}
    named |= {driver for tool in TOOLS for driver in tool.drivers}
    assert named <= set(DRIVERS), f"drivers neither side has: {sorted(named - set(DRIVERS))}"
