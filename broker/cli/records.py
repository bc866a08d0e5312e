"""The commands on the browser's own windows, history and bookmarks: ``windows``, ``history``,
``bookmarks``."""

from __future__ import annotations

import argparse
import urllib.parse
from typing import Any

from ..relay.errors import ClientError
from .output import clip, print_listing
from .tabs import connect

__all__ = ["records", "windows"]


def _query(**values: Any) -> str:
    given = {name: str(value) for name, value in values.items() if value is not None}
    return f"?{urllib.parse.urlencode(given)}" if given else ""


def windows(args: argparse.Namespace) -> int:
    client = connect(args)
    on = _query(browser=args.browser)
    if args.action == "list":
        answer = client.get(f"/windows{on}")
    elif args.action == "open":
        answer = client.post("/windows", {"url": args.target, "browser": args.browser})
    elif args.target is None:
        raise ClientError(f"windows {args.action} needs the window's id (browser-mcp windows lists them)")
    elif args.action == "focus":
        answer = client.post(f"/windows/{urllib.parse.quote(args.target)}/focus{on}", {})
    else:
        answer = client.delete(f"/windows/{urllib.parse.quote(args.target)}{on}")
    print_listing(
        args.json or args.action != "list",
        answer,
        "windows",
        ["WINDOW", "YOURS", "FOCUSED", "STATE", "TABS"],
        lambda w: [
            f"{w['browser']}:{w['id']}",
            "yes" if w["yours"] else "-",
            "yes" if w["focused"] else "-",
            w["state"] or "?",
            ", ".join(map(str, w["tabs"])),
        ],
        "no windows",
    )
    return 0


def records(args: argparse.Namespace) -> int:
    """history and bookmarks: what the person visited or kept, a line each."""
    client = connect(args)
    if args.command == "history" and args.delete is not None:
        since, until = (None, None) if args.delete else (args.since, args.until)
        answer = client.delete(
            f"/history{_query(url=args.delete or None, since=since, until=until, browser=args.browser)}"
        )
    elif args.command == "history":
        answer = client.get(f"/history{_query(q=args.query, max=args.max, since=args.since, browser=args.browser)}")
    elif args.add is not None:
        answer = client.post("/bookmarks", {"url": args.add, "title": args.title, "browser": args.browser})
    elif args.delete is not None:
        recursive = "true" if args.recursive else None
        answer = client.delete(
            f"/bookmarks/{urllib.parse.quote(args.delete, safe='')}{_query(recursive=recursive, browser=args.browser)}"
        )
    elif args.tree is not None:
        answer = client.get(f"/bookmarks/tree{_query(folder=args.tree or None, max=args.max, browser=args.browser)}")
        print_listing(
            args.json,
            answer,
            "results",
            ["ID", "IN", "TITLE", "URL"],
            lambda r: [
                str(r.get("id")),
                str(r.get("parentId") or "-"),
                clip(r.get("title") or "-", 40),
                f"(folder of {r.get('children', '?')})" if r.get("folder") else clip(r.get("url") or "", 70),
            ],
            "no bookmarks",
        )
        if not args.json and answer.get("truncated"):
            print(
                f"(the first {len(answer['results'])} of {answer.get('total', '?')}: --max N or --tree FOLDER for more)"
            )
        return 0
    else:
        answer = client.get(f"/bookmarks{_query(q=args.query, browser=args.browser)}")
    print_listing(
        args.json or "results" not in answer,
        answer,
        "results",
        ["TIME", "TITLE", "URL"],
        lambda r: [r.get("time") or "?", clip(r.get("title") or "", 40), clip(r.get("url") or "", 70)],
        "nothing found",
    )
    return 0
