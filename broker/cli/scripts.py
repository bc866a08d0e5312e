"""``browser-mcp scripts path|list``: the person's script library, which browser_run_script runs
without asking them (:mod:`broker.scripts_library` reads it, :mod:`broker.core.script_rules`
holds its rules)."""

from __future__ import annotations

import argparse

import attrs

from .. import paths, scripts_library
from ..core.errors import BrokerError
from ..files import private_dir
from ..relay.errors import ClientError
from .output import print_listing

__all__ = ["scripts"]


def _row(script: dict[str, str]) -> list[str]:
    return [script["name"], f"refused: {script['refused']}" if script["refused"] else script["description"]]


def scripts(args: argparse.Namespace) -> int:
    folder = paths.scripts_dir()
    if args.scripts_command == "path":
        try:
            private_dir(folder)
        except OSError as exc:
            raise ClientError(f"cannot create {folder}: {exc.strerror}") from None
        print(folder)
        return 0
    try:
        listed = scripts_library.listed(folder)  # creates the folder 0700 when missing
    except BrokerError as exc:
        raise ClientError(exc.message) from None
    shown = [attrs.asdict(script, filter=lambda field, _: field.name != "source") for script in listed]
    print_listing(
        args.json,
        {"folder": str(folder), "scripts": shown},
        "scripts",
        ["NAME", "DESCRIPTION"],
        lambda script: [
            script["name"],
            f"refused: {script['refused']}" if script["refused"] else script["description"],
        ],
        f"no scripts in {folder}: add a .js file holding a function, such as (args) => document.title",
    )
    return 0
