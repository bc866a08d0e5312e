"""browser_file_upload from the broker's side: which files a caller may send to a page.

A scripted fake extension that carries out browser actions stands in for the browser
(``tests/e2e/test_e2e_upload.py`` runs the real one). What is tested is what an MCP or REST client
sees: a file under its MCP roots or a ``--upload-dir`` folder reaches the extension as an
absolute resolved path with its name and size; anything else is a clear error and no frame
reaches the extension. ``tests/relay/test_mcp_stdio.py`` has the folder ``browser-mcp mcp`` starts in.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from mcp.client.streamable_http import streamable_http_client

from broker.core.browser_tools import ACTIONS
from broker.core.security import client_token
from broker.uploads import LARGE_BYTES, WORKDIR_HEADER

from ..conftest import TOKEN, MakeBroker
from ..support.fakes import FakeTab
from ..support.mcp_clients import ERAS, LEGACY, MODERN, loopback_http, sdk_client, text

ALL_ACTIONS = list(ACTIONS)
TAB = FakeTab(7, "https://upload.example/form", "Upload form")


def uploaded(path: Path, flags: list[str] | None = None) -> dict[str, Any]:
    """browser_file_upload's arguments as the extension gets them for one file: its bytes with it."""
    resolved = path.resolve()
    info = resolved.stat()
    return {
        "paths": [str(resolved)],
        "files": [
            {
                "path": str(resolved),
                "name": resolved.name,
                "size": info.st_size,
                "flags": flags or [],
                "type": "text/plain",
                "modified": info.st_mtime_ns // 1_000_000,
                "data": base64.b64encode(resolved.read_bytes()).decode(),
            }
        ],
    }


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """A root the client declares, an --upload-dir folder, and a folder outside both, each with a file."""
    made = {}
    for name in ("root", "uploads", "outside"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.txt").write_text(f"a file in {name}\n")
        made[name] = folder
    return made


@pytest.mark.parametrize("era", ERAS)
async def test_a_file_under_the_clients_roots_reaches_the_extension_resolved(
    make_broker: MakeBroker, folders: dict[str, Path], era: str
) -> None:
    broker = await make_broker(upload_dirs=(str(folders["uploads"]),))
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    # 2025: the broker asks the client for its roots; 2026: the call asks for them as input.
    async with broker.mcp("Claude Code", era, roots=[folders["root"].as_uri()]) as client:
        tools = await client.tools()
        annotations = tools["browser_file_upload"].annotations
        assert annotations is not None and annotations.destructive_hint is True
        assert tools["browser_file_upload"].input_schema["properties"]["paths"]["type"] == "array"
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        # Named through a detour (..), the file goes as the path it resolves to.
        detour = folders["root"] / ".." / "root" / "root.txt"
        # What a client says of the files is not taken: the broker describes them itself.
        claimed = [{"path": "/elsewhere/cat.jpg", "name": "cat.jpg", "size": 1}]
        result = await client.call("browser_file_upload", {"paths": [str(detour)], "files": claimed})
        assert not result.is_error, text(result)
        sent = await fake.wait_for("browserAction")
        assert (sent["action"], sent["args"]) == ("file_upload", uploaded(folders["root"] / "root.txt"))
        # --upload-dir holds for every caller, beside its roots.
        result = await client.call("browser_file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]})
        assert not result.is_error, text(result)
        # A symlink inside the roots to a file inside them is that file.
        (folders["root"] / "link.txt").symlink_to(folders["root"] / "root.txt")
        result = await client.call("browser_file_upload", {"paths": [str(folders["root"] / "link.txt")]})
        assert not result.is_error, text(result)
        linked = uploaded(folders["root"] / "root.txt", flags=["through a symlink"])
        assert fake.received("browserAction")[-1]["args"] == linked
        # No paths cancels the chooser: nothing to check.
        result = await client.call("browser_file_upload", {})
        assert not result.is_error, text(result)
        assert fake.received("browserAction")[-1]["args"] == {"paths": [], "files": []}


@pytest.mark.parametrize(
    ("case", "code", "words"),
    [
        ("outside", "upload_not_allowed", "outside the folders files may be uploaded from"),
        ("symlink outside", "upload_not_allowed", "which leads to"),
        ("folder", "upload_not_allowed", "is a folder"),
        ("missing", "upload_not_allowed", "does not exist"),
        ("too large", "upload_too_large", "over the upload limit of 1,000 bytes"),
        ("relative", "invalid_request", "not an absolute path"),
        ("home-relative", "invalid_request", "not an absolute path"),
        ("symlink loop", "upload_not_allowed", "cannot be resolved"),
        ("nul", "upload_not_allowed", "cannot be resolved"),
        ("name too long", "upload_not_allowed", "name too long"),
        ("one bad of two", "upload_not_allowed", "outside the folders"),
    ],
)
@pytest.mark.parametrize("era", ERAS)
async def test_a_file_it_may_not_send_is_a_clear_error_and_nothing_is_sent(
    make_broker: MakeBroker, folders: dict[str, Path], case: str, code: str, words: str, era: str
) -> None:
    root = folders["root"]
    (root / "big.bin").write_bytes(b"x" * 1001)
    (root / "escape.txt").symlink_to(folders["outside"] / "outside.txt")
    (root / "sub").mkdir()
    (root / "loop").symlink_to(root / "loop")
    paths = {
        "outside": [str(folders["outside"] / "outside.txt")],
        "symlink outside": [str(root / "escape.txt")],
        "folder": [str(root / "sub")],
        "missing": [str(root / "gone.txt")],
        "too large": [str(root / "big.bin")],
        "relative": ["root.txt"],
        "home-relative": ["~/root.txt"],
        "symlink loop": [str(root / "loop")],
        "nul": [str(root / "root.txt\x00.png")],
        "name too long": [str(root / ("x" * 5000))],
        "one bad of two": [str(root / "root.txt"), str(folders["outside"] / "outside.txt")],
    }[case]
    broker = await make_broker(upload_max_bytes=1000)
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", era, roots=[root.as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_file_upload", {"paths": paths})
        assert refused.is_error and text(refused).startswith(f"{code}:") and words in text(refused), text(refused)
        assert fake.received("browserAction") == []
        # Nothing else is disturbed: the next good call goes through.
        result = await client.call("browser_file_upload", {"paths": [str(root / "root.txt")]})
        assert not result.is_error, text(result)


async def test_a_client_without_roots_over_http_uploads_from_upload_dirs_alone(
    make_broker: MakeBroker, folders: dict[str, Path]
) -> None:
    broker = await make_broker(upload_dirs=(str(folders["uploads"]),))
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    for era in (LEGACY, MODERN):
        async with broker.mcp(f"client {era}", era) as client:
            await client.call_json("tabs", {"action": "claim", "tab": 7})
            refused = await client.call("browser_file_upload", {"paths": [str(folders["root"] / "root.txt")]})
            assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
            assert str(folders["uploads"].resolve()) in text(refused)
            result = await client.call("browser_file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]})
            assert not result.is_error, text(result)
            await client.call_json("tabs", {"action": "release", "tab": 7})
    expected = uploaded(folders["uploads"] / "uploads.txt")
    assert [sent["args"] for sent in fake.received("browserAction")] == [expected, expected]


async def test_a_working_folder_is_taken_from_browser_mcp_mcp_alone(
    make_broker: MakeBroker, folders: dict[str, Path]
) -> None:
    # The header browser-mcp mcp sends on its WebSocket, sent by an HTTP client instead.
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    headers = {"Authorization": f"Bearer {TOKEN}", WORKDIR_HEADER: quote(str(folders["root"]))}
    async with (
        loopback_http(headers) as http,
        sdk_client(streamable_http_client(broker.mcp_url, http_client=http), "posing", MODERN) as client,
    ):
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_file_upload", {"paths": [str(folders["root"] / "root.txt")]})
        assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
    assert fake.received("browserAction") == []


async def test_rest_uploads_only_from_upload_dirs(make_broker: MakeBroker, folders: dict[str, Path]) -> None:
    without = await make_broker()
    fake = await without.extension(TAB, actions=ALL_ACTIONS)
    await without.claim(7)
    status, body = await without.post(
        "/tabs/7/actions/file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]}
    )
    assert (status, body["error"]["code"]) == (403, "upload_not_allowed"), body
    assert "none here" in body["error"]["message"] and "--upload-dir" in body["error"]["message"]
    assert fake.received("browserAction") == []

    broker = await make_broker(upload_dirs=(str(folders["uploads"]),))
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    await broker.claim(7)
    status, body = await broker.post("/tabs/7/actions/file_upload", {"paths": [str(folders["root"] / "root.txt")]})
    assert (status, body["error"]["code"]) == (403, "upload_not_allowed"), body
    status, body = await broker.post("/tabs/7/actions/file_upload", {"paths": "not a list"})
    assert (status, body["error"]["code"]) == (400, "invalid_request"), body
    assert fake.received("browserAction") == []
    status, body = await broker.post(
        "/tabs/7/actions/file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]}
    )
    assert status == 200, body
    sent = await fake.wait_for("browserAction")
    assert sent["args"] == uploaded(folders["uploads"] / "uploads.txt")


# Attacks: what a client may try to send away


def page_receives(frame: dict[str, Any]) -> list[tuple[str, bytes]]:
    """What the page gets for an upload the extension carries out: the bytes the broker sent with
    each file, or, for a file sent without them, what its path holds now (as Chromium reads a
    path it is given)."""
    return [
        (file["name"], base64.b64decode(file["data"]) if "data" in file else Path(file["path"]).read_bytes())
        for file in frame["args"]["files"]
    ]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person's home folder holding the broker's token and discovery files and the usual secrets."""
    home = tmp_path / "home"
    for folder in ("project", ".config/browser-mcp", ".ssh", "run/browser-mcp", "profiles/work/Default"):
        (home / folder).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("BROWSER_MCP_TOKEN_FILE", raising=False)
    monkeypatch.setenv("BROWSER_MCP_DISCOVERY_DIR", str(home / "run" / "browser-mcp"))
    (home / ".config/browser-mcp/token").write_text(TOKEN + "\n")
    (home / "run/browser-mcp/server-4242.json").write_text(f'{{"port": 8765, "token": "{TOKEN}"}}')
    (home / ".ssh/id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / ".ssh/id_ed25519.pub").write_text("ssh-ed25519 AAAA person@laptop\n")
    # A browser profile kept where the person likes (chromium --user-data-dir).
    (home / "profiles/work/Local State").write_text("{}")
    (home / "profiles/work/Default/Cookies").write_text("session=1")
    (home / "project/cv.txt").write_text("my cv")
    return home


async def test_a_file_swapped_for_a_link_to_the_token_while_the_person_looks_sends_what_they_saw(
    make_broker: MakeBroker, home: Path
) -> None:
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    waiting: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def approval_window(message: dict[str, Any]) -> None:
        await waiting.put(message)  # the person reads the window; the call waits

    fake.on_action = approval_window
    cv = home / "project" / "cv.txt"
    mallory = client_token(TOKEN, "mallory")
    async with broker.mcp("mallory", MODERN, token=mallory, roots=[(home / "project").as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        upload = asyncio.ensure_future(client.call("browser_file_upload", {"paths": [str(cv)]}))
        shown = await asyncio.wait_for(waiting.get(), 5)
        assert [(f["name"], f["size"], f["path"]) for f in shown["args"]["files"]] == [("cv.txt", 5, str(cv))]
        # While the window is open, the client swaps the file for a link to the broker's token.
        cv.unlink()
        cv.symlink_to(home / ".config/browser-mcp/token")
        await fake.answer_action(shown)  # "Allow once"
        assert not (await upload).is_error
    assert page_receives(shown) == [("cv.txt", b"my cv")]


async def test_the_brokers_token_and_the_persons_secrets_never_go_whatever_the_roots(
    make_broker: MakeBroker, home: Path
) -> None:
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    mallory = client_token(TOKEN, "mallory")
    secrets = [
        home / ".config/browser-mcp/token",
        home / "run/browser-mcp/server-4242.json",
        home / ".ssh/id_ed25519",
        home / "profiles/work/Default/Cookies",
    ]
    (home / "project/innocent.txt").symlink_to(home / ".config/browser-mcp/token")
    async with broker.mcp("mallory", MODERN, token=mallory, roots=[home.as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for secret in [*secrets, home / "project/innocent.txt"]:
            refused = await client.call("browser_file_upload", {"paths": [str(secret)]})
            assert refused.is_error and text(refused).startswith("upload_not_allowed:"), (secret, text(refused))
            assert "never uploaded unless the person names that folder with `serve --upload-dir`" in text(refused)
        assert fake.received("browserAction") == []
        result = await client.call("browser_file_upload", {"paths": [str(home / "project/cv.txt")]})
        assert not result.is_error, text(result)
        # Flagged for the window: what lies below a hidden folder of the root.
        (home / ".notes").mkdir()
        (home / ".notes/plan.txt").write_text("plan")
        assert not (await client.call("browser_file_upload", {"paths": [str(home / ".notes/plan.txt")]})).is_error
    assert [file["flags"] for sent in fake.received("browserAction") for file in sent["args"]["files"]] == [
        [],
        ["hidden"],
    ]
    # Naming the folder itself with --upload-dir opens it, and only it; naming the home does not.
    for upload_dir, allowed in ((home, False), (home / ".ssh", True)):
        named = await make_broker(upload_dirs=(str(upload_dir),))
        await named.extension(TAB, actions=ALL_ACTIONS)
        await named.claim(7)
        status, body = await named.post("/tabs/7/actions/file_upload", {"paths": [str(home / ".ssh/id_ed25519.pub")]})
        assert (status == 200) is allowed, body
        status, body = await named.post("/tabs/7/actions/file_upload", {"paths": [str(secrets[0])]})
        assert status == 403 and body["error"]["code"] == "upload_not_allowed", body


# What a person's home holds besides the broker's: other tools' tokens and passwords, the commands
# typed with them, and the AI clients' own configurations (which may hold client tokens).
CREDENTIALS = [
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".npmrc",
    ".pypirc",
    ".bash_history",
    ".local/share/keyrings/login.keyring",
    ".password-store/bank.example.gpg",
    ".claude.json",
    ".claude/.credentials.json",
    ".cursor/mcp.json",
    ".config/Claude/claude_desktop_config.json",
    ".config/Code/User/mcp.json",
    ".codex/config.toml",
]


async def test_the_usual_credentials_never_go_even_with_the_home_or_the_root_as_upload_dir(
    make_broker: MakeBroker, home: Path
) -> None:
    for name in CREDENTIALS:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"password for {name}\n")
    # A private key under a name that says nothing, and a hard link to .netrc under another name.
    (home / "project/backup.txt").write_text(
        "notes\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
    )
    (home / "project/invoice.txt").hardlink_to(home / ".netrc")
    (home / "project/report.txt").symlink_to(home / ".git-credentials")
    refused = [home / name for name in CREDENTIALS] + [home / "project" / n for n in ("backup.txt", "invoice.txt")]
    refused += [home / "project/report.txt", Path("/etc/shadow"), Path("/etc/gshadow")]
    for upload_dir in (home, Path("/")):
        broker = await make_broker(upload_dirs=(str(upload_dir),))
        fake = await broker.extension(TAB, actions=ALL_ACTIONS)
        await broker.claim(7)
        for path in refused:
            status, body = await broker.post("/tabs/7/actions/file_upload", {"paths": [str(path)]})
            assert (status, body["error"]["code"]) == (403, "upload_not_allowed"), (upload_dir, path, body)
        assert fake.received("browserAction") == []
        status, body = await broker.post("/tabs/7/actions/file_upload", {"paths": [str(home / "project/cv.txt")]})
        assert status == 200, body
    # Naming a credentials folder itself opens its other files, never a file of credentials.
    named = await make_broker(upload_dirs=(str(home / ".docker"), str(home)))
    await named.extension(TAB, actions=ALL_ACTIONS)
    await named.claim(7)
    (home / ".docker/notes.txt").write_text("which images to build\n")
    status, body = await named.post("/tabs/7/actions/file_upload", {"paths": [str(home / ".docker/notes.txt")]})
    assert status == 200, body
    status, body = await named.post("/tabs/7/actions/file_upload", {"paths": [str(home / ".netrc")]})
    assert status == 403 and "holds credentials" in body["error"]["message"], body


async def test_a_client_token_cannot_send_a_credential_file_from_its_roots(make_broker: MakeBroker, home: Path) -> None:
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    (home / "project/.npmrc").write_text("//registry.npmjs.org/:_authToken=npm_secret\n")
    (home / ".npmrc").hardlink_to(home / "project/.npmrc")
    (home / "project/id_work").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n")
    mallory = client_token(TOKEN, "mallory")
    async with broker.mcp("mallory", MODERN, token=mallory, roots=[(home / "project").as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for path, why in (("project/.npmrc", "holds credentials"), ("project/id_work", "holds a private key")):
            refused = await client.call("browser_file_upload", {"paths": [str(home / path)]})
            assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
            assert why in text(refused)
    assert fake.received("browserAction") == []


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_token_cannot_make_the_root_folder_or_a_folder_outside_home_its_root(
    make_broker: MakeBroker, home: Path, tmp_path: Path, era: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.txt").write_text("notes")
    broker = await make_broker()
    fake = await broker.extension(TAB, FakeTab(8, "https://upload.example/other"), actions=ALL_ACTIONS)
    mallory = client_token(TOKEN, "mallory")
    async with broker.mcp("mallory", era, token=mallory, roots=["file:///", outside.as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for path, why in (
            ("/etc/hostname", "the root folder is never"),
            (outside / "notes.txt", "inside the person's home"),
        ):
            refused = await client.call("browser_file_upload", {"paths": [str(path)]})
            assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
            assert why in text(refused), text(refused)
    # The person's own token keeps the roots it declares.
    async with broker.mcp("person", era, roots=[outside.as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 8})
        assert not (await client.call("browser_file_upload", {"paths": [str(outside / "notes.txt")]})).is_error
    assert len(fake.received("browserAction")) == 1


async def test_a_client_token_cannot_declare_the_root_folder_its_working_folder(
    make_broker: MakeBroker, home: Path
) -> None:
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    headers = {"Authorization": f"Bearer {client_token(TOKEN, 'mallory')}", WORKDIR_HEADER: quote("/")}
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(broker.server.make_url("/mcp/stream"), headers=headers) as ws,
    ):

        async def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            await ws.send_json({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            async with asyncio.timeout(5):
                while (frame := await ws.receive_json()).get("id") != request_id:
                    pass
            return frame

        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "relay", "version": "1"}}
        await request(1, "initialize", hello)
        await ws.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await request(2, "tools/call", {"name": "tabs", "arguments": {"action": "claim", "tab": 7}})
        answer = await request(
            3, "tools/call", {"name": "browser_file_upload", "arguments": {"paths": ["/etc/hostname"]}}
        )
    result = answer["result"]
    assert result["isError"] and "the root folder is never a client token's root" in result["content"][0]["text"]
    assert fake.received("browserAction") == []


async def test_files_outside_the_project_or_large_are_flagged_for_the_window(
    make_broker: MakeBroker, folders: dict[str, Path]
) -> None:
    large = folders["root"] / "video.bin"
    large.write_bytes(b"\0" * LARGE_BYTES)
    broker = await make_broker(upload_dirs=(str(folders["uploads"]),))
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", MODERN, roots=[folders["root"].as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        paths = [str(folders["root"] / "root.txt"), str(folders["uploads"] / "uploads.txt"), str(large)]
        result = await client.call("browser_file_upload", {"paths": paths})
        assert not result.is_error, text(result)
    files = (await fake.wait_for("browserAction"))["args"]["files"]
    assert [(file["name"], file["flags"]) for file in files] == [
        ("root.txt", []),
        ("uploads.txt", ["outside the project folder"]),
        ("video.bin", ["large"]),
    ]
    assert base64.b64decode(files[2]["data"]) == large.read_bytes()
