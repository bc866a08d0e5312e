"""The package as a person installs it: the sdist and the wheel built as a release is (``python -m
build``: the sdist, then the wheel from that sdist alone), the wheel installed with its dependencies
into a fresh virtual environment, and its ``browser-mcp extension path | pack`` run from outside the
clone. The folder it names is loaded in headless Chromium; the zip it packs is checked against what
the extension's own files reference, so a file the browser needs cannot be left out nor a stray one
slip in.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.core.security import FIREFOX_EXTENSION_ID
from broker.install.extension_package import pack
from broker.version import VERSION

from ..harness.chromium import EXTENSION, extension_chromium
from ..harness.firefox import extension_firefox

ROOT = Path(__file__).resolve().parents[2]
# A file name the extension's sources mention: imports, pages, icons, setIcon paths.
_MENTION = re.compile(r"""["'`]((?:\.{1,2}/)?[\w./-]+\.(?:js|html|css|png))(?=[?"'`])""")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel and its dependencies, nothing of the clone."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (wheel,) = dist.glob("*.whl")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet"]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True)
    return venv


def _run(venv: Path, *args: str, cwd: Path, **extra_env: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | extra_env
    done = subprocess.run(
        [str(venv / "bin" / "browser-mcp"), *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _referenced(folder: Path) -> set[str]:
    """Every file the extension in ``folder`` reaches from its manifest: what the store must get."""
    manifest = json.loads((folder / "manifest.json").read_text())
    roots = {"manifest.json", manifest["background"]["service_worker"], manifest["action"]["default_popup"]}
    roots.add(manifest["options_ui"]["page"])
    roots |= {path for script in manifest["content_scripts"] for path in script.get("js", []) + script.get("css", [])}
    roots |= set(manifest["icons"].values()) | set(manifest["action"]["default_icon"].values())
    found: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        if not name.endswith((".js", ".html", ".css")):
            continue
        here = (folder / name).parent
        for mention in _MENTION.findall((folder / name).read_text()):
            # Imports are relative to the file; chrome.action and chrome.runtime paths to the root.
            for base in (here, folder):
                target = (base / mention).resolve()
                if target.is_file() and target.is_relative_to(folder.resolve()):
                    todo.append(target.relative_to(folder.resolve()).as_posix())
                    break
    return found


def _licences(folder: Path) -> set[str]:
    """The licences of what the extension vendors, which go with it wherever it goes."""
    return {path.relative_to(folder).as_posix() for path in folder.rglob("LICENSE*") if path.is_file()}


def _entries(names: Iterator[str], prefix: str) -> set[str]:
    return {name.removeprefix(prefix) for name in names if name.startswith(prefix) and not name.endswith("/")}


# Building the package and installing it into a fresh environment takes seconds of both cores: the
# full run (scripts/test) does it, the inner loop (--quick) does not (nor the browser tests below).
@pytest.mark.heavy
def test_the_sdist_and_the_wheel_carry_the_extension_and_every_module(dist: Path) -> None:
    extension = {path.relative_to(EXTENSION).as_posix() for path in EXTENSION.rglob("*") if path.is_file()}
    shipped = _referenced(EXTENSION)
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        (top,) = {name.split("/")[0] for name in archive.getnames()}
        assert shipped <= _entries(iter(archive.getnames()), f"{top}/extension/")
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    # A vendored library ships whole: its licence and where it came from beside its code.
    vendored = {name for name in extension if name.startswith("actions/vendor/")}
    assert {"actions/vendor/axe-core/LICENSE", "actions/vendor/axe-core/axe.min.js"} <= vendored
    assert (
        _entries(iter(names), "broker/extension/")
        == shipped | vendored
        == extension - {name for name in extension if not name.endswith((".js", ".html", ".css", ".png", ".json"))}
        | vendored
    )
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "broker").rglob("*.py")}
    assert modules <= set(names), f"modules left out of the wheel (setup.cfg packages): {modules - set(names)}"


@pytest.mark.browser
async def test_extension_path_names_the_installed_folder_and_chromium_loads_it(installed: Path, tmp_path: Path) -> None:
    folder = Path(_run(installed, "extension", "path", cwd=tmp_path).strip())
    assert folder.is_relative_to(installed), f"{folder} is not the installed package's"
    assert json.loads((folder / "manifest.json").read_text())["version"] == VERSION
    # extension_chromium checks the worker runs under the project's id, from this folder.
    async with extension_chromium(tmp_path, extension=folder) as (_, worker):
        assert await worker.evaluate("chrome.runtime.getManifest().version") == VERSION


@pytest.mark.heavy
def test_extension_pack_writes_what_the_store_needs_and_nothing_else(installed: Path, tmp_path: Path) -> None:
    out = tmp_path / "store" / "browser-mcp.zip"
    printed = _run(installed, "extension", "pack", "--out", str(out), cwd=tmp_path)
    assert str(out) in printed
    assert VERSION in printed
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("manifest.json"))
    assert names == _referenced(EXTENSION) | _licences(EXTENSION)
    assert "actions/vendor/axe-core/LICENSE" in names
    assert manifest["version"] == VERSION
    assert "key" not in manifest, "the Chrome Web Store refuses a manifest with a key"
    assert {f"icons/icon-{size}.png" for size in (16, 32, 48, 128)} <= names
    assert {f"icons/icon-{state}-{size}.png" for state in ("off", "paused") for size in (16, 32)} <= names


def _firefox_build(installed: Path, tmp_path: Path) -> tuple[Path, str]:
    """The installed package's Firefox folder, checked against the source; and its version."""
    data = tmp_path / "data"
    printed = _run(installed, "extension", "path", "--browser", "firefox", cwd=tmp_path, XDG_DATA_HOME=str(data))
    folder = Path(printed.strip())
    assert folder == data / "browser-mcp" / "extension-firefox"
    names = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert names == _referenced(EXTENSION) | _licences(EXTENSION)
    for name in names - {"manifest.json"}:
        assert (folder / name).read_bytes() == (EXTENSION / name).read_bytes(), f"{name} is not the source's"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["background"] == {"scripts": ["background.js"], "type": "module"}
    assert manifest["browser_specific_settings"]["gecko"] == {
        "id": FIREFOX_EXTENSION_ID,
        "strict_min_version": "128.0",
    }
    assert "upgrade-insecure-requests" not in manifest["content_security_policy"]["extension_pages"]
    assert not {"key", "minimum_chrome_version", "externally_connectable"} & manifest.keys()
    assert "debugger" not in manifest["permissions"]
    # Written again on each run: the folder follows the installed source.
    (folder / "person" / "popup.js").write_text("stale")
    _run(installed, "extension", "path", "--browser", "firefox", cwd=tmp_path, XDG_DATA_HOME=str(data))
    assert (folder / "person" / "popup.js").read_bytes() == (EXTENSION / "person" / "popup.js").read_bytes()
    return folder, str(manifest["version"])


@pytest.mark.browser
async def test_extension_path_for_firefox_writes_the_same_files_under_a_derived_manifest_firefox_loads(
    installed: Path, tmp_path: Path
) -> None:
    folder, version = _firefox_build(installed, tmp_path)
    async with extension_firefox(tmp_path / "firefox", extension=folder) as firefox:
        page = await firefox.extension_page("person/options.html")
        assert await page.evaluate("chrome.runtime.getManifest().version") == version


@pytest.mark.heavy
def test_extension_pack_for_firefox_writes_an_unsigned_xpi(installed: Path, tmp_path: Path) -> None:
    printed = _run(installed, "extension", "pack", "--browser", "firefox", cwd=tmp_path)
    out = tmp_path / f"browser-mcp-extension-{VERSION}.xpi"
    assert str(out.name) in printed and "addons.mozilla.org" in printed
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("manifest.json"))
    assert names == _referenced(EXTENSION) | _licences(EXTENSION)
    assert "actions/vendor/axe-core/LICENSE" in names
    assert manifest["version"] == VERSION
    assert manifest["browser_specific_settings"]["gecko"]["id"] == FIREFOX_EXTENSION_ID
    assert "service_worker" not in manifest["background"] and "key" not in manifest


def test_pack_leaves_out_tests_lint_and_sources(tmp_path: Path) -> None:
    folder = tmp_path / "extension"
    folder.mkdir()
    for name in _referenced(EXTENSION):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes((EXTENSION / name).read_bytes())
    for name in ("links.test.js", "actions/refs.spec.js", ".eslintrc.json", "tests/page.html", "icons/a.svg", "A.md"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("{}")
    names = pack(tmp_path / "out.zip", folder)
    assert set(names) == _referenced(EXTENSION)
    with zipfile.ZipFile(tmp_path / "out.zip") as archive:
        assert set(archive.namelist()) == set(names)


def test_the_clone_manifest_says_the_package_version() -> None:
    assert json.loads((EXTENSION / "manifest.json").read_text())["version"] == VERSION
