"""The core stays free of I/O: its modules import no event loop, web, file-watching or JSON library."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import broker

FORBIDDEN = {"asyncio", "aiohttp", "watchfiles", "json", "orjson", "socket", "mcp", "uvloop", "platformdirs"}
PURE_MODULES = ["state.py", "messages.py", "errors.py"]


@pytest.mark.parametrize("module", PURE_MODULES)
def test_core_module_imports_no_io_library(module: str) -> None:
    source = Path(broker.__file__).with_name(module).read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert imported & FORBIDDEN == set()
