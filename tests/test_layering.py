"""The core stays free of I/O: no module in ``broker/core/`` imports an event loop, web,
socket, process, file-watching or JSON library, nor the MCP SDK. And the MCP SDK is loaded only
for MCP: a broker serving REST and the extension, and the command line, never import it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import broker.core

FORBIDDEN = {
    "asyncio",
    "aiohttp",
    "watchfiles",
    "json",
    "orjson",
    "socket",
    "selectors",
    "subprocess",
    "mcp",
    "uvloop",
    "platformdirs",
}
CORE = Path(broker.core.__file__).parent
CORE_MODULES = sorted(path.name for path in CORE.glob("*.py"))


def test_the_core_folder_holds_the_rules() -> None:
    assert {"state.py", "messages.py", "errors.py", "tool_names.py", "security.py"} <= set(CORE_MODULES)


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_imports_no_io_library(module: str) -> None:
    imported = set()
    for node in ast.walk(ast.parse((CORE / module).read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level > 1:
            imported.add("broker." + (node.module or ""))
    assert imported & FORBIDDEN == set()
    assert not any(name.startswith("broker.") for name in imported), "the core imports nothing outside itself"


@pytest.mark.parametrize(
    "module", ["broker.app", "broker.__main__", "broker.stdio_relay", "broker.native_host", "broker.client"]
)
def test_the_mcp_sdk_loads_only_with_the_first_mcp_request(module: str) -> None:
    # A fresh interpreter: what importing the module pulls in, and nothing a test loaded before.
    heavy = "{'mcp', 'mcp_types', 'pydantic', 'starlette'}"
    probe = f"import sys, {module}; print(sorted({{m.split('.')[0] for m in sys.modules}} & {heavy}))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
