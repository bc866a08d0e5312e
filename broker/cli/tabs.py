"""The commands on a live broker's tabs: ``status``, ``tabs``, ``call``, ``claim``, ``release``,
``snapshot``, ``screenshot`` and ``act``, through :mod:`broker.relay.client`."""

from __future__ import annotations

import argparse
import base64
import os
from typing import Any

from .. import codec, paths
from ..discovery import BrokerRecord, live_brokers
from ..relay.client import BrokerClient, ClientError, select_broker
from .output import clip, print_json, print_listing, uptime

__all__ = ["act_command", "call", "change_tab", "connect", "screenshot", "snapshot", "status", "tabs"]


def connect(args: argparse.Namespace) -> BrokerClient:
    return BrokerClient(select_broker(live_brokers(paths.discovery_dirs(args.discovery_dir)), args.pid, args.port))


def status(args: argparse.Namespace) -> int:
    records: list[BrokerRecord] = live_brokers(paths.discovery_dirs(args.discovery_dir))
    if args.pid is not None or args.port is not None:
        records = [select_broker(records, args.pid, args.port)]
    statuses = []
    for record in records:
        try:
            status = BrokerClient(record).get("/status")
        except ClientError as exc:
            status = {"pid": record.pid, "port": record.port, "error": str(exc)}
        status["discoveryFile"] = str(record.path)
        statuses.append(status)
    print_listing(
        args.json,
        {"brokers": statuses},
        "brokers",
        ["PORT", "PID", "UPTIME", "BROWSERS", "SESSIONS", "TABS", "VERSION"],
        _status_row,
        "no broker is running (start one with: browser-mcp serve)",
    )
    outdated = [
        f"port {status['port']}, {browser['browser']}: {browser['extensionOutdated']}"
        for status in statuses
        for browser in status.get("browsers", [])
        if browser["connected"] and browser.get("extensionOutdated")
    ]
    if outdated and not args.json:
        print("", *outdated, sep="\n")
    return 0 if statuses or args.json else 1


def _status_row(status: dict[str, Any]) -> list[str]:
    if "error" in status:
        return [str(status["port"]), str(status["pid"]), "?", "?", "?", "?", status["error"]]
    browsers = [b for b in status["browsers"] if b["connected"]]
    return [
        str(status["port"]),
        str(status["pid"]),
        uptime(status["uptimeSeconds"]),
        ", ".join(_browser_cell(b) for b in browsers) or "none",
        ", ".join(x["name"] for x in status["sessions"]) or "none",
        str(status["tabs"]),
        status["version"],
    ]


def _browser_cell(browser: dict[str, Any]) -> str:
    """``b1 Chrome 130.0 (extension 0.1.0)``; ``outdated`` after the extension's when it is."""
    extension = browser.get("extensionVersion") or "?"
    outdated = ", outdated" if browser.get("extensionOutdated") else ""
    who = f"{browser['browser']} {browser['name']} {browser['version']}".strip()
    return f"{who} (extension {extension}{outdated})"


def tabs(args: argparse.Namespace) -> int:
    answer = connect(args).get("/tabs")
    several = len({t["browser"] for t in answer["tabs"]}) > 1

    def row(tab: dict[str, Any]) -> list[str]:
        return [
            tab["ref"] if several else str(tab["id"]),
            _place(tab),
            (tab["owner"] or {}).get("name") or "-",
            "?" if tab["tools"] is None else ", ".join(tool["name"] for tool in tab["tools"]) or "-",
            clip(tab["title"], 40),
            clip(tab["url"], 60),
        ]

    print_listing(
        args.json,
        {"tabs": answer["tabs"]},
        "tabs",
        ["TAB", "WINDOW", "OWNER", "TOOLS", "TITLE", "URL"],
        row,
        "no tabs (is the browser extension connected? see browser-mcp status)",
    )
    return 0


def _place(tab: dict[str, Any]) -> str:
    """Its window and place there, 7#0 (leftmost), pinned or not; - when the extension does not say."""
    if tab.get("windowId") is None:
        return "-"
    index = "" if tab.get("index") is None else f"#{tab['index']}"
    return f"{tab['windowId']}{index}{' pinned' if tab.get('pinned') else ''}"


def _json_args(raw: str, example: str) -> dict[str, Any]:
    """ARGS of call and act. Raises: ClientError, unless it is a JSON object."""
    try:
        return codec.loads_object(raw, "ARGS")
    except ValueError as exc:
        raise ClientError(f"{exc}; for example '{example}'") from None


def call(args: argparse.Namespace) -> int:
    tool_args = _json_args(args.args, '{"query": "shoes"}')
    query = f"?timeout={args.timeout}" if args.timeout else ""
    answer = connect(args).post(f"/tabs/{args.tab}/tools/{args.tool}{query}", tool_args)
    if args.json:
        print_json(answer)
    else:
        result = answer["result"]
        print(result if isinstance(result, str) else codec.dumps_pretty(result))
    return 0


def change_tab(args: argparse.Namespace) -> int:
    tab = connect(args).post(f"/tabs/{args.tab}/{args.command}", {})["tab"]
    if args.json:
        print_json({"tab": tab})
    else:
        whose = "yours (the command line's)" if args.command == "claim" else "the person's again"
        print(f"tab {tab['ref']} ({tab['title'] or tab['url']}) is {whose}")
    return 0


def _act(args: argparse.Namespace, action: str, action_args: dict[str, Any], timeout: float | None = None) -> Any:
    query = f"?timeout={timeout}" if timeout else ""
    return connect(args).post(f"/tabs/{args.tab}/actions/{action}{query}", action_args)["result"]


def _show_result(args: argparse.Namespace, result: Any) -> int:
    """A built-in tool's MCP result as a person reads it (its text, a line per image), or JSON."""
    if args.json:
        print_json({"result": result})
        return 0
    for part in result.get("content", []) if isinstance(result, dict) else []:
        if part.get("type") == "text":
            print(part.get("text", ""))
        else:
            size = len(part.get("data", "")) * 3 // 4
            print(
                f"[{part.get('type')} {part.get('mimeType', '')}, about {size} bytes: browser-mcp screenshot saves one]"
            )
    if not isinstance(result, dict) or "content" not in result:
        print(codec.dumps_pretty(result))
    return 0


def snapshot(args: argparse.Namespace) -> int:
    return _show_result(args, _act(args, "snapshot", {} if args.target is None else {"target": args.target}))


def screenshot(args: argparse.Namespace) -> int:
    kind = "jpeg" if args.output.suffix.lower() in (".jpg", ".jpeg") else "png"
    result = _act(args, "take_screenshot", {"type": kind, "fullPage": args.full_page})
    image = next((part for part in result.get("content", []) if part.get("type") == "image"), None)
    if image is None:
        raise ClientError(f"the browser sent no image: {codec.dumps_text(result)[:500]}")
    data = base64.b64decode(image["data"])
    args.output.write_bytes(data)
    if args.json:
        print_json({"saved": str(args.output), "bytes": len(data), "mimeType": image.get("mimeType")})
    else:
        print(f"saved {args.output} ({len(data)} bytes)")
    return 0


def act_command(args: argparse.Namespace) -> int:
    action_args = _json_args(args.args, '{"target": "e7", "element": "Buy button"}')
    action = args.action.removeprefix("browser_")
    paths = action_args.get("paths")
    if action == "file_upload" and isinstance(paths, list):
        # A person names files from where they are; the broker takes absolute paths alone.
        action_args["paths"] = [os.path.abspath(path) if isinstance(path, str) and path else path for path in paths]
    return _show_result(args, _act(args, action, action_args, args.timeout))
