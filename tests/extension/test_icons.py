"""The extension's icons: each SVG source has its PNGs at the sizes the manifest and the toolbar
use, the manifest and ``extension/person/toolbar.js`` name only PNGs that exist, and ``scripts/icons``
renders them (and the README's picture) from the sources.
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ICONS = ROOT / "extension" / "icons"
SIZES = {"icon": (16, 32, 48, 128), "icon-off": (16, 32), "icon-paused": (16, 32)}


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_every_source_has_its_pngs_at_their_sizes() -> None:
    assert {path.stem for path in ICONS.glob("*.svg")} == set(SIZES)
    expected = {f"{name}-{size}.png": size for name, sizes in SIZES.items() for size in sizes}
    assert {path.name for path in ICONS.glob("*.png")} == set(expected)
    for name, size in expected.items():
        assert _png_size(ICONS / name) == (size, size), f"{name}: run scripts/icons"


def test_the_manifest_and_the_toolbar_name_existing_icons() -> None:
    manifest = json.loads((ROOT / "extension" / "manifest.json").read_text())
    assert set(manifest["icons"]) == {"16", "32", "48", "128"}
    named = [*manifest["icons"].values(), *manifest["action"]["default_icon"].values()]
    toolbar = (ROOT / "extension" / "person" / "toolbar.js").read_text()
    named += re.findall(r'"(icons/[\w-]+\.png)"', toolbar)
    assert len(named) == 4 + 2 + 6
    for path in named:
        assert (ROOT / "extension" / path).is_file(), path


@pytest.mark.browser  # scripts/icons renders with headless Chromium
def test_scripts_icons_renders_the_pngs_and_the_picture(tmp_path: Path) -> None:
    picture = tmp_path / "toolbar.png"
    subprocess.run(
        [ROOT / "scripts" / "icons", "--out", str(tmp_path), "--picture", str(picture)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    for name, sizes in SIZES.items():
        for size in sizes:
            assert _png_size(tmp_path / f"{name}-{size}.png") == (size, size)
    width, height = _png_size(picture)
    assert width > 3 * height > 0, "the three states side by side"
