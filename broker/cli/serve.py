"""``browser-mcp serve``: the options checked, the settings built, the broker run until stopped."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from pathlib import Path

from .. import paths
from ..core.config import Config
from ..core.security import PROJECT_EXTENSION_ID, refuse_extension_ids
from ..discovery import load_or_create_token
from ..relay.errors import ClientError
from ..version import MIN_EXTENSION_VERSION, VERSION
from .parser import ENV_ALLOWED_EXTENSIONS, build_parser

__all__ = ["broker_token", "check_serve_options", "run"]


def _allowed_extensions(flags: list[str]) -> frozenset[str]:
    from_env = [i.strip() for i in os.environ.get(ENV_ALLOWED_EXTENSIONS, "").split(",") if i.strip()]
    ids = {PROJECT_EXTENSION_ID, *flags, *from_env}
    refused = refuse_extension_ids(sorted(ids))
    if refused:
        raise ClientError(refused)
    return frozenset(ids)


def check_serve_options(options: list[str]) -> None:
    """Exits as ``serve`` would (argparse's message, code 2) when it would refuse ``options``."""
    try:
        build_parser("serve").parse_args(["serve", *options])
    except SystemExit:
        print(
            "browser-mcp service install: the options after install are serve's (see browser-mcp serve --help)",
            file=sys.stderr,
        )
        raise


def _upload_dirs(flags: list[Path]) -> tuple[str, ...]:
    missing = [str(folder) for folder in flags if not folder.is_dir()]
    if missing:
        raise ClientError(f"--upload-dir must name folders; not one: {', '.join(missing)}")
    return tuple(str(folder.resolve()) for folder in flags)


def broker_token() -> str:
    """The broker's token, made and written on first use.

    Raises:
        ClientError: the token file cannot be read or written (a full disk, a read-only folder).
    """
    path = paths.token_file()
    try:
        return load_or_create_token(path)
    except OSError as exc:
        raise ClientError(
            f"cannot write the token file {path}: {exc.strerror or exc} ({paths.ENV_TOKEN_FILE} names another place)"
        ) from None


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    if args.call_timeout <= 0:
        raise ClientError("--call-timeout must be positive")
    if args.max_sessions < 1:
        raise ClientError("--max-sessions must be at least 1")
    if args.client_max_sessions < 1:
        raise ClientError("--client-max-sessions must be at least 1")
    for flag, rate in (("--rate-limit", args.rate_limit), ("--client-rate-limit", args.client_rate_limit)):
        if rate < 0:
            raise ClientError(f"{flag} must be 0 (off) or more")
    if not 0 < args.ping_interval < args.silence_timeout:
        raise ClientError("--ping-interval must be positive and shorter than --silence-timeout")
    if args.max_links < 1 or args.max_tabs < 1:
        raise ClientError("--max-links and --max-tabs must be at least 1")
    if args.upload_max_mb <= 0:
        raise ClientError("--upload-max-mb must be positive")
    if args.max_result_chars < 1:
        raise ClientError("--max-result-chars must be at least 1")
    from ..daemon.runtime import Runtime, Settings  # noqa: PLC0415 - aiohttp loads only for the command that serves

    first_run = not paths.token_file().exists()
    directory, warning = paths.writable_discovery_dir(args.discovery_dir)
    settings = Settings(
        token=broker_token(),
        allowed_extensions=_allowed_extensions(args.allow_extension),
        require_extension_token=args.require_extension_token,
        limits=Config(
            server_version=VERSION,
            min_extension_version=MIN_EXTENSION_VERSION,
            call_timeout=args.call_timeout,
            allow_evaluate=not args.no_evaluate,
            allow_scripts=not args.no_scripts,
            scripts_dir=str(paths.scripts_dir()),
            upload_dirs=_upload_dirs(args.upload_dir),
            upload_max_bytes=round(args.upload_max_mb * 1024 * 1024),
            output_dir=str(args.output_dir.resolve()) if args.output_dir else None,
            upload_protected=(str(directory),),
            max_sessions=args.max_sessions,
            client_max_sessions=args.client_max_sessions,
            rate_limit=args.rate_limit,
            rate_burst=max(1, round(2 * args.rate_limit)),
            client_rate_limit=args.client_rate_limit,
            client_rate_burst=max(1, round(2 * args.client_rate_limit)),
            ping_interval=args.ping_interval,
            silence_timeout=args.silence_timeout,
            max_links=args.max_links,
            max_tabs=args.max_tabs,
            max_result_chars=args.max_result_chars,
        ),
    )
    if warning:
        logging.getLogger("broker").warning(warning)

    def announce(line: str) -> None:
        print(line, flush=True)

    from .. import loop  # noqa: PLC0415 - asyncio loads only for the command that serves
    from ..app import serve  # noqa: PLC0415 - aiohttp loads only for the command that serves

    try:
        loop.run(serve(Runtime(settings), args.port, directory, announce, pair=first_run))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ClientError(
                f"cannot start: port {args.port} on 127.0.0.1 is already in use; choose another --port or omit it"
            ) from None
        raise ClientError(f"cannot start: {exc}") from None
    return 0
