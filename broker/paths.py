"""Where the broker keeps its files, and how to start it again; the only module that asks platformdirs.

Discovery files live in ``/tmp/browser-mcp`` so every reader (CLI, stdio adapter, native host)
finds them without configuration. When that folder belongs to another user (who could read or
plant files there) the per-user runtime directory is used instead, and readers look in both.
``--discovery-dir`` / ``BROWSER_MCP_DISCOVERY_DIR`` replace both.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import platformdirs

from .files import owned_by_another_user

__all__ = [
    "DEFAULT_DISCOVERY_DIR",
    "broker_command",
    "ENV_DISCOVERY_DIR",
    "ENV_SCRIPTS_DIR",
    "ENV_TOKEN_FILE",
    "discovery_dirs",
    "firefox_extension_dir",
    "log_dir",
    "runtime_discovery_dir",
    "scripts_dir",
    "token_file",
    "writable_discovery_dir",
]

APP_NAME = "browser-mcp"
DEFAULT_DISCOVERY_DIR = Path("/tmp/browser-mcp")
ENV_DISCOVERY_DIR = "BROWSER_MCP_DISCOVERY_DIR"
ENV_TOKEN_FILE = "BROWSER_MCP_TOKEN_FILE"
ENV_SCRIPTS_DIR = "BROWSER_MCP_SCRIPTS_DIR"


def runtime_discovery_dir() -> Path:
    with warnings.catch_warnings():
        # Without XDG_RUNTIME_DIR platformdirs warns and picks a per-user folder under /tmp,
        # which is what we want; the warning would only clutter every command's output.
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir(APP_NAME))


def log_dir() -> Path:
    return Path(platformdirs.user_log_dir(APP_NAME))


def firefox_extension_dir() -> Path:
    """Where ``browser-mcp extension path --browser firefox`` writes the extension's Firefox build."""
    return Path(platformdirs.user_data_dir(APP_NAME)) / "extension-firefox"


def token_file() -> Path:
    """The broker's token, kept across runs so HTTP client configurations keep working."""
    from_env = os.environ.get(ENV_TOKEN_FILE)
    return Path(from_env) if from_env else Path(platformdirs.user_config_dir(APP_NAME)) / "token"


def scripts_dir() -> Path:
    """The person's script library (browser_scripts): ``scripts/`` in the user config folder."""
    from_env = os.environ.get(ENV_SCRIPTS_DIR)
    return Path(from_env) if from_env else Path(platformdirs.user_config_dir(APP_NAME)) / "scripts"


def _override(explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    from_env = os.environ.get(ENV_DISCOVERY_DIR)
    return Path(from_env) if from_env else None


def writable_discovery_dir(explicit: Path | None = None) -> tuple[Path, str | None]:
    """The folder this broker writes its discovery file to, and a warning when it fell back."""
    override = _override(explicit)
    if override is not None:
        return override, None
    if owned_by_another_user(DEFAULT_DISCOVERY_DIR):
        fallback = runtime_discovery_dir()
        return fallback, (f"{DEFAULT_DISCOVERY_DIR} belongs to another user; writing the discovery file to {fallback}")
    return DEFAULT_DISCOVERY_DIR, None


def discovery_dirs(explicit: Path | None = None) -> list[Path]:
    """Every folder readers look in, the override alone when there is one."""
    override = _override(explicit)
    if override is not None:
        return [override]
    return [DEFAULT_DISCOVERY_DIR, runtime_discovery_dir()]


def broker_command() -> list[str]:
    """How another program starts this installation: its console script, else ``python -m broker``."""
    # sys.executable is not resolved: in a venv the symlink is what selects the venv.
    script = Path(sys.executable).with_name("browser-mcp")
    return [str(script)] if script.exists() else [sys.executable, "-m", "broker"]
