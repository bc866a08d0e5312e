"""The layers of ``extension/``: each folder imports only its own modules and the layers below it.

Lowest first: ``base/`` (the leaves every folder shares), ``link/``, ``page_tools/``, ``tabs/``,
``actions/`` (with its sub-folders), ``person/``, then the wiring at the top: ``broker_requests.js``
and, above it, ``background.js``. What a lower layer needs of a higher one is passed in by the
wiring. Every relative import must name a module that exists."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[2] / "extension"

# Lowest first; a module may import modules of its own layer and of any layer before it.
LAYERS = ["base", "link", "page_tools", "tabs", "actions", "person", "broker_requests.js", "background.js"]

# `import ... from "x"`, `export ... from "x"`, `import "x"` and `import("x")`.
IMPORT = re.compile(
    r"""(?:^|;|\s)(?:import|export)\s[^;"'`]*?\bfrom\s*(["'])(?P<a>[^"']+)\1"""
    r"""|^\s*import\s*(["'])(?P<b>[^"']+)\3"""
    r"""|\bimport\s*\(\s*(["'])(?P<c>[^"']+)\5\s*\)""",
    re.MULTILINE,
)


def _modules() -> list[Path]:
    return sorted(EXTENSION.rglob("*.js"))


def _layer(path: Path) -> str:
    """A module's layer: its first folder inside extension/, or its own name at the top."""
    parts = path.relative_to(EXTENSION).parts
    return parts[0]


def _imports(path: Path) -> list[tuple[str, Path]]:
    """The extension modules `path` imports: each as written and as the file it names."""
    found = []
    for match in IMPORT.finditer(path.read_text()):
        written = match.group("a") or match.group("b") or match.group("c")
        if written.startswith("."):
            found.append((written, (path.parent / written).resolve()))
    return found


def _edges() -> dict[tuple[str, str], list[str]]:
    """(importing layer, imported layer) -> the imports between two different layers."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in _modules():
        for _, target in _imports(path):
            if target.is_relative_to(EXTENSION) and _layer(path) != _layer(target):
                edges[_layer(path), _layer(target)].append(
                    f"{path.relative_to(EXTENSION)} -> {target.relative_to(EXTENSION)}"
                )
    return edges


def test_every_module_of_the_extension_has_a_layer() -> None:
    unplaced = sorted(str(path.relative_to(EXTENSION)) for path in _modules() if _layer(path) not in LAYERS)
    assert not unplaced, f"modules in no layer of {LAYERS}: {unplaced}"


def test_every_import_names_a_module_that_exists() -> None:
    missing = [
        f"{path.relative_to(EXTENSION)}: {written}"
        for path in _modules()
        for written, target in _imports(path)
        if not target.is_file()
    ]
    assert not missing, "imports of no module:\n" + "\n".join(missing)


def test_each_layer_imports_only_its_own_and_lower_layers() -> None:
    against = [
        f"{edge}  ({low_to_high[0]} may import only {LAYERS[: LAYERS.index(low_to_high[0])] or 'itself'})"
        for low_to_high, found in sorted(_edges().items())
        if LAYERS.index(low_to_high[1]) > LAYERS.index(low_to_high[0])
        for edge in found
    ]
    assert not against, "imports against the layer order (pass what is needed in from the wiring):\n" + "\n".join(
        against
    )


def test_no_two_layers_import_each_other() -> None:
    edges = _edges()
    pairs = sorted({tuple(sorted(pair)) for pair in edges if pair[::-1] in edges})
    assert not pairs, "layers that import each other: " + "; ".join(
        f"{a} <-> {b}: {edges[a, b] + edges[b, a]}" for a, b in pairs
    )
