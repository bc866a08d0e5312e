"""The extension's page-side functions as source a test sends into a page's isolated world.

The WebExtension driver runs them with ``chrome.scripting.executeScript`` (func and args); a test
runs the same source in the same kind of world: Chromium's isolated world made over the DevTools
protocol, or a WebDriver BiDi sandbox in Firefox (which sees the page through Xray vision, as a
content script does). Each module is the source of its one exported function, read as it ships.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ACTIONS = Path(__file__).resolve().parents[2] / "extension" / "actions"

# The snapshot's agent, made as agent.js makes it: refs are resolved by it in the same world.
AGENT = "globalThis.__browserMcpAgent ??= snapshotAgent(pageItems, ariaRules, accessibleNames, yamlRenderer);"


def module_source(name: str) -> str:
    """A page-side module's source with its ``export`` keywords taken off: declarations only."""
    return re.sub(r"^export ", "", (ACTIONS / name).read_text(), flags=re.MULTILINE)


def declaration(modules: list[str], body: str) -> str:
    """``function (request) {...}`` declaring the modules' functions, then running ``body``."""
    sources = "\n".join(module_source(name) for name in modules)
    return f"function (request) {{\n{sources}\n{body}\n}}"


SNAPSHOT_MODULES = ["page/roles.js", "page/names.js", "page/yaml.js", "page/items.js", "page/snapshot.js"]
INPUT_MODULES = [*SNAPSHOT_MODULES, "webext/synthetic_kit.js", "webext/synthetic_input.js"]


def snapshot_call() -> str:
    """Make the agent and snapshot the page: its YAML, refs included."""
    return declaration(
        SNAPSHOT_MODULES,
        AGENT + "return globalThis.__browserMcpAgent.snapshot(null, {limit: 1e9, lastRef: 0}).yaml;",
    )


def input_call() -> str:
    """syntheticInput(request), its kit made first as the driver makes it."""
    return declaration(
        ["webext/synthetic_kit.js", "webext/synthetic_input.js"], "syntheticKit(); return syntheticInput(request);"
    )


def keys_call() -> str:
    """syntheticKeys(request), its kit made first and its keys defined as the driver does it."""
    return declaration(
        ["webext/synthetic_kit.js", "key_table.js", "webext/synthetic_keys.js"],
        "syntheticKit(); return syntheticKeys(withKeyDefinitions(request));",
    )


def ref_of(yaml: str, line: str) -> str:
    """The ref of the first snapshot line that contains ``line``."""
    for text in yaml.splitlines():
        if line in text:
            found = re.search(r"\[ref=((?:f\d+)?e\d+)\]", text)
            if found:
                return found.group(1)
    raise AssertionError(f"no line with {line!r} and a ref in:\n{yaml}")


def matched_ref(snapshot: str, pattern: str, what: str) -> str:
    """The ref that ``pattern`` (a regular expression over the snapshot's lines, the ref its first
    group) finds in ``snapshot``; none fails the test, naming ``what``."""
    found = re.search(pattern, snapshot, re.M)
    assert found, f"no {what} in:\n{snapshot}"
    return found.group(1)


def as_json(value: Any) -> str:
    return json.dumps(value)
