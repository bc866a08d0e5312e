"""The actions part of scripts/bench: the broker's built-in browser tools beside Playwright MCP's.

Both sides run in the same run, on the same pages (``support.pages``, served by the bench on
127.0.0.1), each in its own headless Debian Chromium:

- **Ours**: ``browser-mcp serve --port 0``, and Chromium with the project's extension, led to the
  broker by the native host (``support.browser``, as the discovery suite). The official MCP SDK
  client spawns ``browser-mcp mcp`` (stdio, as an AI client's configuration would), opens the
  page in a tab of its own with the ``tabs`` tool (``action=open``), and calls the built-in tools
  on its current tab, the one it opened.
- **Playwright MCP**, pinned (``scripts/playwright-mcp/``, installed into
  ``scripts/.bench-cache/`` by ``support.playwright_mcp``), which the same SDK client spawns over
  stdio with ``--headless --isolated --executable-path /usr/bin/chromium``, and which goes to the
  page with ``browser_navigate``.

Measured, each call timed from the client's ``tools/call`` to its result, the two sides taking
turns call by call so that the machine's load falls on both alike:

1. ``browser_snapshot`` of the large page (160 products by default: about 80,000 characters of
   snapshot in Playwright MCP, the size of page a snapshot must bring back whole): its time, and
   the characters of its text (everything the model would read). The refs it gives, counted by
   role (links, buttons, and form fields: textbox, searchbox, combobox, spinbutton, checkbox,
   radio...), set beside what the page holds, as counted when it was generated.
2. ``browser_click`` on the "Add one" button of a small counter page, by the ref taken from a
   snapshot: the round trip's median. After the clicks a snapshot must show the counter at the
   number of clicks made, on both sides.
3. ``browser_snapshot`` of a page of three iframes (this origin, another port, another site: an
   out-of-process frame) holding a form, a list and a counter with a few buttons: its time and
   characters; every snapshot must show each frame's content. Then ``browser_click`` on the "Add
   one" button inside the cross-site frame, by the ref a snapshot gave, as in 2.
4. Where our time goes: the same two measurements on our side over REST (``POST
   /tabs/{id}/actions/{name}`` with the broker's token, in tabs the REST session opens), without
   MCP and the relay process; after the others, so it never slows them.

The goals: snapshot characters at most 1.0 x Playwright MCP's; every link, button and
field of the page reachable by a ref; snapshot time at most 1.5 x Playwright MCP's; a click's
round trip under 100 ms; on the frames page, characters at most 1.0 x and time at most 1.5 x
Playwright MCP's, and a click in the cross-site frame under 100 ms. A benchmark, never a test:
verdicts are printed, the exit status ignores them.

With ``--browser firefox`` the suite measures ours in Firefox beside ours in Chromium instead
(``firefox.py``), with the same sides (``sides.py``) and measurements (``measures.py``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from operator import attrgetter
from typing import Any

import aiohttp

from tests.harness.chromium import CHROMIUM

from ..support import progress
from ..support.mcp_sides import shop_stage, start_playwright, unwrapped
from ..support.report import Verdict, goal_lines
from ..support.shop_pages import PageCounts, shop_page
from . import firefox
from .measures import measure_clicks, measure_frame_clicks, measure_frames_snapshots, measure_snapshots
from .sides import (
    OurSide,
    PlaywrightSide,
    RestSide,
    Side,
    SideResult,
)

# The goals.
CHARS_GOAL = 1.0  # snapshot characters, ours / Playwright MCP's
SNAPSHOT_TIME_GOAL = 1.5  # snapshot time (median), ours / Playwright MCP's
CLICK_GOAL_MS = 100.0  # a click's round trip, median (on the small page, and in the cross-site frame)


@dataclass
class ActionsResults:
    page: PageCounts
    products: int
    page_kb: float
    snapshots: int
    clicks: int
    playwright_mcp: str
    browser: str
    sides: dict[str, SideResult]

    def ratio(self, metric: str) -> float:
        """Ours over Playwright MCP's, of ``metric``: a field, or a dotted path such as ``click.median_ms``."""
        figure = attrgetter(metric)
        return float(figure(self.sides["ours"]) / figure(self.sides["playwright"]))

    @property
    def like_for_like(self) -> bool:
        """A side's snapshot was cut short: the characters are compared on the part both show."""
        return not all(side.whole_page for side in self.sides.values())

    @property
    def chars_ratio(self) -> float:
        return self.ratio("same_part_chars" if self.like_for_like else "snapshot_chars")


async def bench_actions(args: Any) -> Any:
    """Both sides measured in one run: ours and Playwright MCP's (ActionsResults), or with ``--browser firefox``
    ours in Firefox and in Chromium (``firefox.BrowsersResults``).

    Raises:
        BenchError: when a side cannot be started or a call fails.
    """
    if args.browser == "firefox":
        return await firefox.bench_browsers(args)
    results: ActionsResults = await unwrapped(_bench_actions(args))
    return results


async def _bench_actions(args: Any) -> ActionsResults:
    shop = shop_page(args.actions_products)
    async with shop_stage(shop, args.broker_cmd, "actions") as stage:
        stack, pages, version = stage.stack, stage.pages, stage.playwright_version
        ours = OurSide("ours", stage.ours)
        theirs = PlaywrightSide(
            "playwright", await start_playwright(stack, stage.workdir, "playwright", args.actions_playwright_settle)
        )
        progress(f"actions: {stage.browser_name} with the extension; Playwright MCP {version}; {pages.url('/shop')}")
        sides: list[Side] = [ours, theirs]
        await measure_snapshots(sides, pages.url("/shop"), args.actions_snapshots)
        await measure_clicks(sides, pages.url("/small"), args.actions_click_warmup, args.actions_clicks)
        await measure_frames_snapshots(sides, pages.url("/frames"), args.actions_snapshots)
        await measure_frame_clicks(sides, pages.url("/frames"), args.actions_click_warmup, args.actions_clicks)
        # Where our time goes: the same over REST, without MCP and the relay, in tabs of its own.
        http = await stack.enter_async_context(aiohttp.ClientSession())
        rest = RestSide(http, stage.broker, ours.click_key)
        await measure_snapshots([rest], pages.url("/shop"), args.actions_snapshots)
        await measure_clicks([rest], pages.url("/small"), args.actions_click_warmup, args.actions_clicks)
        await measure_frames_snapshots([rest], pages.url("/frames"), args.actions_snapshots)
        await measure_frame_clicks([rest], pages.url("/frames"), args.actions_click_warmup, args.actions_clicks)
        sides.append(rest)
        browser_name = stage.browser_name
    return ActionsResults(
        page=shop.counts,
        products=shop.products,
        page_kb=len(shop.html.encode()) / 1024,
        snapshots=args.actions_snapshots,
        clicks=args.actions_clicks,
        playwright_mcp=version,
        browser=browser_name,
        sides={side.name: side.result for side in sides},
    )


# Report


def actions_verdicts(results: ActionsResults) -> list[Verdict]:
    ours, theirs = results.sides["ours"], results.sides["playwright"]
    assert ours.counts is not None and theirs.counts is not None
    page = results.page
    time_ratio = results.ratio("snapshot.median_ms")
    chars = results.chars_ratio
    frames_chars = results.ratio("frames_snapshot_chars")
    frames_time = results.ratio("frames_snapshot.median_ms")
    if results.like_for_like:
        shown = min(ours.products_shown, theirs.products_shown)
        chars_detail = (
            f"{chars:.2f}x on the part both show, to product {shown} ({ours.same_part_chars} /"
            f" {theirs.same_part_chars}); whole snapshots {ours.snapshot_chars} / {theirs.snapshot_chars}, "
            + "; ".join(
                f"{name} cut after {found.products_shown} of {results.products} products"
                for name, found in (("ours", ours), ("Playwright MCP", theirs))
                if not found.whole_page
            )
        )
    else:
        chars_detail = f"{chars:.2f}x ({ours.snapshot_chars} / {theirs.snapshot_chars}), both of the whole page"
    return [
        Verdict(
            f"snapshot characters <= {CHARS_GOAL:g}x Playwright MCP's",
            chars <= CHARS_GOAL,
            chars_detail,
            {
                "ratio": chars,
                "ours": ours.snapshot_chars,
                "playwright": theirs.snapshot_chars,
                "ours_same_part": ours.same_part_chars,
                "playwright_same_part": theirs.same_part_chars,
            },
        ),
        Verdict(
            "every link, button and field of the page reachable by a ref",
            ours.counts.covers(page),
            f"refs: {ours.counts.links} links / {ours.counts.buttons} buttons / {ours.counts.fields} fields;"
            f" the page has {page.links} / {page.buttons} / {page.fields}"
            + ("" if ours.whole_page else f" (the snapshot is cut after {ours.products_shown} products)"),
            {
                "links": ours.counts.links,
                "buttons": ours.counts.buttons,
                "fields": ours.counts.fields,
                "page_links": page.links,
                "page_buttons": page.buttons,
                "page_fields": page.fields,
            },
        ),
        Verdict(
            f"snapshot time <= {SNAPSHOT_TIME_GOAL:g}x Playwright MCP's (median)",
            time_ratio <= SNAPSHOT_TIME_GOAL,
            f"{time_ratio:.2f}x ({ours.snapshot.median_ms:.1f} ms / {theirs.snapshot.median_ms:.1f} ms)",
            {"ratio": time_ratio, "ours_ms": ours.snapshot.median_ms, "playwright_ms": theirs.snapshot.median_ms},
        ),
        Verdict(
            f"a click's round trip (median) < {CLICK_GOAL_MS:g} ms",
            ours.click.median_ms < CLICK_GOAL_MS,
            f"{ours.click.median_ms:.1f} ms (Playwright MCP: {theirs.click.median_ms:.1f} ms)",
            {"ours_ms": ours.click.median_ms, "playwright_ms": theirs.click.median_ms},
        ),
        Verdict(
            f"frames page: snapshot characters <= {CHARS_GOAL:g}x Playwright MCP's",
            frames_chars <= CHARS_GOAL,
            f"{frames_chars:.2f}x ({ours.frames_snapshot_chars} / {theirs.frames_snapshot_chars}), both showing"
            " every frame's content, the cross-site frame's too",
            {"ratio": frames_chars, "ours": ours.frames_snapshot_chars, "playwright": theirs.frames_snapshot_chars},
        ),
        Verdict(
            f"frames page: snapshot time <= {SNAPSHOT_TIME_GOAL:g}x Playwright MCP's (median)",
            frames_time <= SNAPSHOT_TIME_GOAL,
            f"{frames_time:.2f}x ({ours.frames_snapshot.median_ms:.1f} ms / {theirs.frames_snapshot.median_ms:.1f} ms)",
            {
                "ratio": frames_time,
                "ours_ms": ours.frames_snapshot.median_ms,
                "playwright_ms": theirs.frames_snapshot.median_ms,
            },
        ),
        Verdict(
            f"a click in the cross-site frame (median) < {CLICK_GOAL_MS:g} ms",
            ours.frame_click.median_ms < CLICK_GOAL_MS,
            f"{ours.frame_click.median_ms:.1f} ms (Playwright MCP: {theirs.frame_click.median_ms:.1f} ms)",
            {"ours_ms": ours.frame_click.median_ms, "playwright_ms": theirs.frame_click.median_ms},
        ),
    ]


def actions_report(results: Any, args: Any) -> str:
    if not isinstance(results, ActionsResults):
        return firefox.browsers_report(results, args)
    ours, theirs = results.sides["ours"], results.sides["playwright"]
    assert ours.counts is not None and theirs.counts is not None
    page = results.page
    settle = "its default, 500 ms" if args.actions_playwright_settle is None else f"{args.actions_playwright_settle} ms"
    lines = [
        "browser-mcp bench, actions: the built-in browser tools beside Playwright MCP's, each side in its own"
        f" headless {results.browser}; MCP SDK client over stdio, each call timed to its result, the sides"
        " taking turns",
        f"ours: browser-mcp mcp -> browser-mcp serve -> the extension (chrome.debugger); Playwright MCP"
        f" {results.playwright_mcp} (--headless --isolated --executable-path {CHROMIUM})",
        f"large page: {results.products} products, {results.page_kb:.0f} KB of HTML; {page.links} links,"
        f" {page.buttons} buttons, {page.fields} fields. {results.snapshots} snapshots and {results.clicks} clicks"
        f" measured per side ({args.actions_click_warmup} clicks of warm-up)",
        "frames page: three iframes (a form of this origin, a list on another port, a counter with buttons on"
        " localhost: another site, out of process); as many snapshots, and clicks on the counter in the"
        " cross-site frame; every snapshot shows each frame's content, on both sides",
        "Playwright MCP waits a fixed time after every action for the work it set off to settle"
        f" (--timeout-settle: {settle}); its click times include that wait",
        "ours over REST: POST /tabs/{id}/actions/{name} to the same broker and browser, in tabs of its own,"
        " measured after the rest (no MCP, no relay process): where our time goes",
        "",
        f"  {'':<28} {'ours':>12} {'Playwright':>12} {'ratio':>8} {'ours, REST':>12}",
    ]

    def row(label: str, metric: str, fmt: str = ".1f", ratio: bool = True) -> str:
        figure = attrgetter(metric)
        values = [figure(results.sides[name]) for name in ("ours", "playwright")]
        rest = results.sides.get("ours-rest")
        rest_value = format(figure(rest), fmt) if rest is not None else "-"
        quotient = f"{results.ratio(metric):>7.2f}x" if ratio else f"{'':>8}"
        return f"  {label:<28} {values[0]:>12{fmt}} {values[1]:>12{fmt}} {quotient} {rest_value:>12}"

    def yes_no(found: SideResult) -> str:
        return "yes" if found.whole_page else "no, cut"

    lines += [
        row("snapshot characters", "snapshot_chars", "d"),
        row("  to the last product both", "same_part_chars", "d"),
        row("products shown", "products_shown", "d", ratio=False),
        f"  {'the whole page':<28} {yes_no(ours):>12} {yes_no(theirs):>12} {'':>8}"
        f" {yes_no(results.sides['ours-rest']) if 'ours-rest' in results.sides else '-':>12}",
        row("snapshot ms, median", "snapshot.median_ms"),
        row("snapshot ms, p90", "snapshot.p90_ms"),
        row("click ms, median", "click.median_ms"),
        row("click ms, p90", "click.p90_ms"),
        row("click answer characters", "click_chars", "d", ratio=False),
        row("frames snapshot characters", "frames_snapshot_chars", "d"),
        row("frames snapshot ms, median", "frames_snapshot.median_ms"),
        row("frames snapshot ms, p90", "frames_snapshot.p90_ms"),
        row("cross-site frame click, p50", "frame_click.median_ms"),
        row("cross-site frame click, p90", "frame_click.p90_ms"),
        "",
        f"  refs by kind {'':<15} {'ours':>12} {'Playwright':>12} {'the page':>8}",
    ]
    for kind in ("links", "buttons", "fields"):
        lines.append(
            f"  {kind:<28} {getattr(ours.counts, kind):>12} {getattr(theirs.counts, kind):>12} {getattr(page, kind):>8}"
        )
    lines.append(f"  {'every ref':<28} {ours.counts.refs:>12} {theirs.counts.refs:>12}")
    for name, counts in (("ours", ours.counts), ("Playwright", theirs.counts)):
        lines.append(f"  {name} by role: " + ", ".join(f"{role} {n}" for role, n in counts.by_role.items()))
    lines += ["", *goal_lines("actions goals (a benchmark, not a test):", actions_verdicts(results))]
    return "\n".join(lines)


def actions_json(results: Any, args: Any) -> dict[str, Any]:
    if not isinstance(results, ActionsResults):
        return firefox.browsers_json(results, args)

    def side(found: SideResult) -> dict[str, Any]:
        return {
            **asdict(found),
            "snapshot_p50_ms": found.snapshot.median_ms,
            "snapshot_p90_ms": found.snapshot.p90_ms,
            "click_p50_ms": found.click.median_ms,
            "click_p90_ms": found.click.p90_ms,
            "frames_snapshot_p50_ms": found.frames_snapshot.median_ms,
            "frames_snapshot_p90_ms": found.frames_snapshot.p90_ms,
            "frame_click_p50_ms": found.frame_click.median_ms,
            "frame_click_p90_ms": found.frame_click.p90_ms,
        }

    return {
        "config": {
            "products": results.products,
            "snapshots": results.snapshots,
            "clicks": results.clicks,
            "click_warmup": args.actions_click_warmup,
            "chromium": CHROMIUM,
            "browser": results.browser,
            "playwright_mcp": results.playwright_mcp,
            "playwright_settle_ms": args.actions_playwright_settle,
            "transport": "stdio (ours: browser-mcp mcp)",
        },
        "page": {**asdict(results.page), "html_kb": results.page_kb},
        "ours": side(results.sides["ours"]),
        "playwright": side(results.sides["playwright"]),
        **({"ours_rest": side(results.sides["ours-rest"])} if "ours-rest" in results.sides else {}),
        "ratios": {
            "snapshot_chars": results.ratio("snapshot_chars"),
            "same_part_chars": results.ratio("same_part_chars"),
            "snapshot_p50_ms": results.ratio("snapshot.median_ms"),
            "click_p50_ms": results.ratio("click.median_ms"),
            "frames_snapshot_chars": results.ratio("frames_snapshot_chars"),
            "frames_snapshot_p50_ms": results.ratio("frames_snapshot.median_ms"),
            "frame_click_p50_ms": results.ratio("frame_click.median_ms"),
            "chars_goal": results.chars_ratio,
        },
        "goals": [asdict(v) for v in actions_verdicts(results)],
    }
