"""The layers of ``broker/`` (docs/development.md): each folder imports only the layers below it.

The core stays free of I/O: no module in ``broker/core/`` imports an event loop, web, socket,
process, file-watching or JSON library, nor the MCP SDK. The MCP SDK is loaded only for MCP: a
broker serving REST and the extension, and the command line, never import it."""

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
BROKER = CORE.parent

# Each layer and the layers it may import, besides itself. "shared" is the modules at broker/'s top
# (codec, files, paths, discovery, uploads, version, loop); "app" assembles the daemon's doors;
# "__main__" and "cli" are the command line, which may import anything.
SHARED = {"codec", "files", "paths", "discovery", "uploads", "version", "loop"}
MAY_IMPORT = {
    "core": set(),
    "shared": {"core"},
    "daemon": {"core", "shared"},
    "mcp": {"core", "shared", "daemon"},
    "rest": {"core", "shared", "daemon"},
    "link": {"core", "shared", "daemon"},
    "app": {"core", "shared", "daemon", "mcp", "rest", "link"},
    "relay": {"core", "shared"},
    "install": {"core", "shared", "relay"},
}
BROKER_MODULES = sorted(str(path.relative_to(BROKER)) for path in BROKER.rglob("*.py"))


def _layer(module: list[str]) -> str:
    """The layer of a module named by its path inside broker/ (``["mcp", "server"]``)."""
    if len(module) == 1:
        return module[0] if module[0] in {"app", "__main__", "__init__"} else "shared"
    return module[0]


def _imported_modules(path: Path) -> set[tuple[str, ...]]:
    """The broker modules (as paths inside broker/) that the module at ``path`` imports."""
    package = list(path.relative_to(BROKER).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "broker":
            base = node.module.split(".")[1:] if node.module else []
        else:
            continue
        for alias in node.names:
            whole = [*base, alias.name]
            found.add(tuple(whole if (BROKER.joinpath(*whole).with_suffix(".py")).exists() else base))
    return found


def test_every_module_of_the_broker_has_a_layer() -> None:
    layers = {_layer(Path(name).with_suffix("").parts) for name in BROKER_MODULES}
    assert layers - {"__main__", "__init__", "cli"} <= set(MAY_IMPORT), sorted(layers)


@pytest.mark.parametrize("module", BROKER_MODULES)
def test_a_module_imports_only_the_layers_below_its_own(module: str) -> None:
    layer = _layer(list(Path(module).with_suffix("").parts))
    if layer in {"__main__", "__init__", "cli"}:
        return
    crossing = sorted(
        ".".join(imported)
        for imported in _imported_modules(BROKER / module)
        if _layer(list(imported)) not in MAY_IMPORT[layer] | {layer}
    )
    assert crossing == [], f"broker/{module} ({layer}) may import only {sorted(MAY_IMPORT[layer])}"


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
    "module",
    ["broker.app", "broker.__main__", "broker.relay.stdio_relay", "broker.install.native_host", "broker.relay.client"],
)
def test_the_mcp_sdk_loads_only_with_the_first_mcp_request(module: str) -> None:
    # A fresh interpreter: what importing the module pulls in, and nothing a test loaded before.
    heavy = "{'mcp', 'mcp_types', 'pydantic', 'starlette'}"
    probe = f"import sys, {module}; print(sorted({{m.split('.')[0] for m in sys.modules}} & {heavy}))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
