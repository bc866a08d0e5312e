"""The tokens part of scripts/bench: what a whole task costs an agent, ours beside two peers': Playwright
MCP's and chrome-devtools-mcp's.

A scripted agent does the same tasks on the bench's pages (``support.pages``) through each side,
in the same run, each side with its own headless Chromium (``support.mcp_sides``):

1. **Shop**: search the catalogue (``browser_type`` in the search box, which filters the products as
   one types), filter by category (``browser_select_option``), open a product, add it and two
   products "customers also bought" to the cart, open the cart, change a quantity (the total
   follows), go to the checkout, fill its eight fields (one ``browser_fill_form``), place the order
   and read the confirmation, which must show the name, the items and the total expected.
2. **Support**: a form whose second part is in an iframe: fill both parts (one ``browser_fill_form``
   with the frame's refs), send it, accept the ``confirm`` dialog it asks (``browser_handle_dialog``)
   and read that the request was sent.

Ours opens a tab of its own for each round (``browser_tabs`` ``action=new``: behind the person's
tab, where Chromium runs a page's timers about once a second) and goes to each page with
``browser_navigate``; every call counts, that one too.

The agent reads the page's new state after every action, as a real agent must, and finds every ref
it needs in what it has read (the YAML lines of any ```yaml or ```diff block), never elsewhere:

- **ours** (``browser-mcp mcp`` over stdio): what the action answered. A ```yaml block is the page
  (whole, or folded: then its ``… N more`` lines name refs to expand); a ```diff block holds what
  changed (lines prefixed ``+ ``, ``- ``, ``~ `` or two spaces), applied to what it read before. A
  line starting ``- Left out:`` is followed as it says: ``browser_snapshot`` with ``target`` set to
  the ref it names, or with ``changes: true`` (a plain one when the broker rejects that argument).
  Before such answers existed, an answer too large to hold its snapshot said so
  ("call browser_snapshot to read it"); that too is followed, with a plain snapshot.
- **Playwright MCP, defaults**: the snapshot its answer carries, or the file it links, which the
  agent reads: its characters count, and so does one call for reading it (an agent's Read tool call
  is one).
- **Playwright MCP, ``--snapshot-mode none``**: its answer, then an explicit ``browser_snapshot``.
- **chrome-devtools-mcp**, its defaults (``support.chrome_devtools_mcp``): the same flows, each call
  translated to its tools (``.dialects``: ``new_page`` for a task's first navigation, as ours opens a
  tab of its own, then ``navigate_page``; ``click``, ``fill``, ``fill_form``, ``handle_dialog``,
  ``take_snapshot``, each with the task's ``pageId``). Its actions answer a line and no page, so the
  agent reads a ``take_snapshot`` whenever what it read lacks what it needs (and forgets what it read
  when an answer says the page navigated). The bench closes each task's page once the task is done
  (uncounted), so that its answers' list of pages stays as short in every round.

Whenever a ref the agent needs is not in what it read, it makes the call a real agent would, and
that call counts: a snapshot targeted at the part that may hold it (one an answer said it left out,
an element a diff showed without what it holds, a fold of items of the kind it looks for), else of
the whole page. A text it checks and has not read: what changed, then the whole page.

Beside the flows, the scale of one long page (the catalogue): the characters of a whole
``browser_snapshot`` of it, and of ``browser_find`` for one product's name on it, on each side;
and ours' ``browser_get_text`` of a news article (``/article``) beside a whole snapshot of it.

Per side: success, calls, characters the agent read (every text block of every answer, and the
files it read) and the time from the first call to the last answer. Ours is compared with the
smaller of Playwright MCP's two runs for characters, and with each for calls and time. The goals:
success equal, characters at most 0.25x, calls no more, time no more; and ``browser_find`` at most
0.25x the characters of a whole snapshot of the catalogue, ``browser_get_text`` at most 0.3x of
the article's. Beside them, against the leaner of the two peers (the smaller of Playwright MCP's
runs and chrome-devtools-mcp, flow by flow): characters at most 0.7x, on the small pages and on the
shop, each. A benchmark, never a test: verdicts are printed, the exit status ignores them.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from tests.harness.chromium import CHROMIUM

from ..support import progress
from ..support.mcp_sides import another_client, shop_stage, start_chrome_devtools, start_playwright, unwrapped
from ..support.report import Verdict, goal_lines
from ..support.shop_pages import ShopPage, shop_page
from .agent import Agent, FlowFailed, FlowResult
from .dialects import DEVTOOLS
from .flows import shop_flow, small_flow, support_flow

# The goals, ours over Playwright MCP's.
CHARS_GOAL = 0.25
SMALL_CHARS_GOAL = 0.6  # the small pages' flow alone
FIND_GOAL = 0.25  # ours: browser_find over a whole browser_snapshot of the catalogue
TEXT_GOAL = 0.3  # ours: browser_get_text over a whole browser_snapshot of the article
CALLS_GOAL = 1.0
TIME_GOAL = 1.0
LEANEST_GOAL = 0.7  # ours over the leaner of the two peers, on the small pages and on the shop, each

# The tasks the totals (calls, characters, time) and their goals are of; the small pages' flow is judged apart.
TASKS = ("shop", "support")
FLOWS = (*TASKS, "small")


@dataclass
class SideRun:
    side: str
    flows: list[FlowResult]

    @property
    def success(self) -> bool:
        return all(flow.success for flow in self.flows)

    @property
    def calls(self) -> int:
        return sum(flow.calls for flow in self.flows if flow.flow in TASKS)

    @property
    def chars(self) -> int:
        return sum(flow.chars for flow in self.flows if flow.flow in TASKS)

    @property
    def seconds(self) -> float:
        return sum(flow.seconds for flow in self.flows if flow.flow in TASKS)

    def of(self, flow: str) -> FlowResult:
        """That flow's result (an empty one when it was not run: see --tokens-flows)."""
        return next((found for found in self.flows if found.flow == flow), FlowResult(flow))


async def run_flows(
    agent: Agent, shop: ShopPage, url: Callable[[str], str], opens_tab: bool, names: tuple[str, ...] = FLOWS
) -> SideRun:
    """The flows on one side; a flow that fails is reported as failed, and the next one runs."""
    flows: list[FlowResult] = []
    for name in names:
        agent.start(name)
        started = time.perf_counter()
        try:
            if name == "shop":
                await shop_flow(agent, shop, url, opens_tab)
            elif name == "support":
                await support_flow(agent, url)
            else:
                await small_flow(agent, url, opens_tab and "shop" not in names)
            agent.flow.success = True
        except FlowFailed as exc:
            agent.flow.failure = f"{agent.step}: {exc}"
        agent.flow.seconds = time.perf_counter() - started
        await agent.finish()
        flows.append(agent.flow)
        progress(
            f"tokens: {agent.name:<16} {name:<8} {'ok' if agent.flow.success else 'FAILED'}, {agent.flow.calls} calls,"
            f" {agent.flow.chars} characters, {agent.flow.seconds:.1f} s"
            + (f"; {agent.flow.failure[:300]}" if agent.flow.failure else "")
        )
    return SideRun(agent.name, flows)


SIDES = ("ours", "playwright", "playwright-none", "chrome-devtools")
PLAYWRIGHT = ("playwright", "playwright-none")
PEERS = SIDES[1:]
LABELS = {"ours": "ours", "playwright": "Playwright", "playwright-none": "PW none", "chrome-devtools": "CDT"}


@dataclass
class TokensResults:
    products: int
    shop_snapshot_chars: dict[str, int]
    shop_find_chars: dict[str, int]
    article_chars: dict[str, int]  # ours: "snapshot" and "text" of the article page
    playwright_mcp: str
    browser: str
    runs: dict[str, list[SideRun]]  # side -> one SideRun per round
    chrome_devtools_mcp: str = ""

    def median(self, side: str, metric: str) -> float:
        return float(statistics.median(getattr(run, metric) for run in self.runs[side]))

    def success(self, side: str) -> bool:
        return all(run.success for run in self.runs[side])

    def best_playwright(self, metric: str) -> float:
        return min(self.median(side, metric) for side in PLAYWRIGHT)

    def flow_median(self, side: str, flow: str, metric: str) -> float:
        return float(statistics.median(getattr(run.of(flow), metric) for run in self.runs[side]))

    def small_chars_ratio(self) -> tuple[float, float, float]:
        """The small pages' flow: ours' characters over the smaller of Playwright MCP's two runs, and both."""
        ours = self.flow_median("ours", "small", "chars")
        theirs = min(self.flow_median(side, "small", "chars") for side in PLAYWRIGHT)
        return (ours / theirs if theirs else float("inf")), ours, theirs

    def leanest_ratio(self, flow: str) -> tuple[float, float, float, str]:
        """That flow: ours' characters over the leaner of the two peers' (Playwright MCP's smaller run,
        chrome-devtools-mcp), ours', theirs and which side that is."""
        ours = self.flow_median("ours", flow, "chars")
        side = min(PEERS, key=lambda peer: self.flow_median(peer, flow, "chars"))
        theirs = self.flow_median(side, flow, "chars")
        return (ours / theirs if theirs else float("inf")), ours, theirs, side

    def ratio(self, metric: str, side: str) -> float:
        theirs = self.median(side, metric)
        return self.median("ours", metric) / theirs if theirs else float("inf")


def rounds(count: int) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Each round's order of the sides: each goes first in turn, so that the machine's load falls on all alike."""
    for number in range(count):
        shift = number % len(SIDES)
        yield number, SIDES[shift:] + SIDES[:shift]


async def bench_tokens(args: Any) -> TokensResults:
    """The flows through each side, ``args.tokens_runs`` rounds.

    Raises:
        BenchError: when a side cannot be started.
    """
    results: TokensResults = await unwrapped(_bench_tokens(args))
    return results


async def _bench_tokens(args: Any) -> TokensResults:
    shop = shop_page(args.tokens_products)
    async with shop_stage(shop, args.broker_cmd, "tokens") as stage:
        stack, workdir, pages, version = stage.stack, stage.workdir, stage.pages, stage.playwright_version
        settle = args.actions_playwright_settle
        devtools, devtools_version = await start_chrome_devtools(stack, workdir, "chrome-devtools")
        agents = {
            "ours": Agent("ours", stage.ours, "answer"),
            "playwright": Agent(
                "playwright", await start_playwright(stack, workdir, "playwright", settle), "linked",
                workdir / "playwright",
            ),
            "playwright-none": Agent(
                "playwright-none",
                await start_playwright(stack, workdir, "playwright-none", settle, ("--snapshot-mode", "none")),
                "snapshot",
            ),
            "chrome-devtools": Agent("chrome-devtools", devtools, "asked", dialect=DEVTOOLS),
        }  # fmt: skip
        progress(
            f"tokens: {stage.browser_name} with the extension; Playwright MCP {version}; chrome-devtools-mcp"
            f" {devtools_version}; {pages.url('/shop')}"
        )
        runs: dict[str, list[SideRun]] = {side: [] for side in SIDES}
        for number, order in rounds(args.tokens_runs):
            progress(f"tokens: round {number + 1} of {args.tokens_runs}")
            for side in order:
                # Ours opens a tab of its own for the task (Playwright MCP has its page from the start).
                runs[side].append(
                    await run_flows(agents[side], shop, pages.url, side == "ours", tuple(args.tokens_flows))
                )
        sought = shop.product(shop.products // 2 or 1).name
        scales = {side: await scale_chars(agents[side], pages.url("/shop"), sought) for side in SIDES[:2]}
        shop_whole = await whole_chars(agents["chrome-devtools"], pages.url("/shop"))
        reader = Agent("ours-dom", await another_client(stack, workdir, stage.broker, "--caps", "dom"), "answer")
        article = await article_chars(reader, pages.url("/article"))
    return TokensResults(
        args.tokens_products,
        {**{side: whole for side, (whole, _found) in scales.items()}, "chrome-devtools": shop_whole},
        {side: found for side, (_whole, found) in scales.items()},
        article,
        version,
        stage.browser_name,
        runs,
        devtools_version,
    )


async def scale_chars(agent: Agent, url: str, sought: str) -> tuple[int, int]:
    """The characters of a plain browser_snapshot of the catalogue, and of browser_find for ``sought`` on it.

    Raises:
        FlowFailed: when the find answers no match.
    """
    whole = await whole_chars(agent, url)
    found = await agent.call("browser_find", {"text": sought})
    if sought.lower() not in found.lower():
        raise FlowFailed(f"browser_find {sought!r} did not show it: {found[:300]}")
    return whole, len(found)


async def whole_chars(agent: Agent, url: str) -> int:
    """The characters of a plain snapshot of the page at ``url`` (the side's own snapshot tool)."""
    agent.start("scale")
    await agent.call("browser_navigate", {"url": url})
    return len(await agent.call("browser_snapshot", {}))


async def article_chars(agent: Agent, url: str) -> dict[str, int]:
    """The characters of a whole browser_snapshot of the article, and of its browser_get_text, ours.

    Raises:
        FlowFailed: when the text lacks the article's heading or table.
    """
    agent.start("article")
    await agent.call("browser_tabs", {"action": "new"})
    await agent.call("browser_navigate", {"url": url})
    whole = await agent.call("browser_snapshot", {})
    read = await agent.call("browser_get_text", {})
    if "Tram line to reach the harbour" not in read or not re.search(r"\|\s*Station 8\s*\|", read):
        raise FlowFailed(f"browser_get_text left out the article's heading or table: {read[:300]}")
    return {"snapshot": len(whole), "text": len(read)}


# Report


def tokens_verdicts(results: TokensResults) -> list[Verdict]:
    ours_chars = results.median("ours", "chars")
    best_chars = results.best_playwright("chars")
    chars_ratio = ours_chars / best_chars if best_chars else float("inf")
    small_ratio, small_ours, small_theirs = results.small_chars_ratio()
    whole, found = results.shop_snapshot_chars.get("ours", 0), results.shop_find_chars.get("ours", 0)
    find_ratio = found / whole if whole else float("inf")
    article_whole, article_text = results.article_chars.get("snapshot", 0), results.article_chars.get("text", 0)
    text_ratio = article_text / article_whole if article_whole else float("inf")
    calls = {side: results.ratio("calls", side) for side in PLAYWRIGHT}
    seconds = {side: results.ratio("seconds", side) for side in PLAYWRIGHT}
    successes = {side: results.success(side) for side in SIDES}
    leanest = []
    for flow, label in (("small", "on the small pages"), ("shop", "on the shop")):
        ratio, ours, theirs, peer = results.leanest_ratio(flow)
        leanest.append(
            Verdict(
                f"characters <= {LEANEST_GOAL:g}x the leaner of the two peers {label}",
                ratio <= LEANEST_GOAL,
                f"{ratio:.2f}x ({ours:.0f} / {theirs:.0f}, {peer})",
                {"ratio": ratio, "ours": ours, "leaner": theirs},
            )
        )
    return [
        Verdict(
            "success equal to the peers'",
            all(success == successes["ours"] for success in successes.values()) and successes["ours"],
            ", ".join(f"{side} {'ok' if success else 'FAILED'}" for side, success in successes.items()),
            {side: float(success) for side, success in successes.items()},
        ),
        Verdict(
            f"characters read <= {CHARS_GOAL:g}x Playwright MCP's (the smaller of its two runs)",
            chars_ratio <= CHARS_GOAL,
            f"{chars_ratio:.2f}x ({ours_chars:.0f} / {best_chars:.0f})",
            {"ratio": chars_ratio, "ours": ours_chars, "playwright": best_chars},
        ),
        Verdict(
            f"small pages' flow: characters read <= {SMALL_CHARS_GOAL:g}x Playwright MCP's"
            " (the smaller of its two runs)",
            small_ratio <= SMALL_CHARS_GOAL,
            f"{small_ratio:.2f}x ({small_ours:.0f} / {small_theirs:.0f})",
            {"ratio": small_ratio, "ours": small_ours, "playwright": small_theirs},
        ),
        Verdict(
            f"browser_find <= {FIND_GOAL:g}x the characters of a whole browser_snapshot of the catalogue",
            find_ratio <= FIND_GOAL,
            f"{find_ratio:.3f}x ({found} / {whole})",
            {"ratio": find_ratio, "find": found, "snapshot": whole},
        ),
        Verdict(
            f"browser_get_text <= {TEXT_GOAL:g}x the characters of a whole browser_snapshot of the article",
            text_ratio <= TEXT_GOAL,
            f"{text_ratio:.3f}x ({article_text} / {article_whole})",
            {"ratio": text_ratio, "text": article_text, "snapshot": article_whole},
        ),
        *leanest,
        Verdict.at_most(f"calls <= {CALLS_GOAL:g}x Playwright MCP's", calls, CALLS_GOAL),
        Verdict.at_most(f"time <= {TIME_GOAL:g}x Playwright MCP's", seconds, TIME_GOAL),
    ]


def tokens_report(results: TokensResults, args: Any) -> str:
    settle = "its default, 500 ms" if args.actions_playwright_settle is None else f"{args.actions_playwright_settle} ms"
    lines = [
        "browser-mcp bench, tokens: a scripted agent's tasks through ours, Playwright MCP and chrome-devtools-mcp,"
        f" each side in its own headless {results.browser}; MCP SDK client over stdio",
        f"ours: browser-mcp mcp -> browser-mcp serve -> the extension; Playwright MCP {results.playwright_mcp}"
        f" (--headless --isolated --executable-path {CHROMIUM}; --timeout-settle {settle}) with its defaults, and"
        " with --snapshot-mode none and a browser_snapshot after each action; chrome-devtools-mcp"
        f" {results.chrome_devtools_mcp} (--headless --isolated --executablePath {CHROMIUM} --no-usage-statistics"
        " --no-performance-crux, no update checks) with its defaults",
        f"shop: {results.products} products (a whole snapshot of the catalogue: ours"
        f" {results.shop_snapshot_chars.get('ours', 0)} characters, Playwright MCP"
        f" {results.shop_snapshot_chars.get('playwright', 0)}, chrome-devtools-mcp"
        f" {results.shop_snapshot_chars.get('chrome-devtools', 0)}; browser_find of one product's name on it: ours"
        f" {results.shop_find_chars.get('ours', 0)}, Playwright MCP {results.shop_find_chars.get('playwright', 0)});"
        " search, filter, open a product, add three to the cart, change a quantity, fill the checkout's 8 fields,"
        " place the order, read the confirmation",
        "support: a form with a part in an iframe (one browser_fill_form), a confirm dialog on sending it",
        f"article (ours, --caps dom): a whole snapshot {results.article_chars.get('snapshot', 0)} characters,"
        f" browser_get_text {results.article_chars.get('text', 0)}",
        "small (judged apart, not in the totals): a form of three fields and a button filled one field at a time,"
        " then a form that resets itself once sent, two notes saved with it",
        "the agent reads the new state after every action: ours what the action answered (and a snapshot where it"
        " says it left something out); Playwright MCP the file its answer links (reading it counts as one call, as"
        " an agent's Read tool call is one) or, with --snapshot-mode none, a browser_snapshot; chrome-devtools-mcp"
        " (whose actions answer a line) a take_snapshot whenever what it read lacks what it needs",
        f"medians of {args.tokens_runs} round(s); characters: every text the agent read; totals: shop and support",
        "",
        f"  {'':<24}" + "".join(f" {LABELS[side]:>10}" for side in SIDES)
        + "".join(f" {'ours/' + LABELS[side]:>13}" for side in PEERS),
    ]  # fmt: skip

    def columns(values: list[float], fmt: str) -> str:
        ratios = [values[0] / value if value else float("inf") for value in values[1:]]
        return "".join(f" {value:>10{fmt}}" for value in values) + "".join(f" {ratio:>12.2f}x" for ratio in ratios)

    def row(label: str, metric: str, fmt: str) -> str:
        return f"  {label:<24}" + columns([results.median(side, metric) for side in SIDES], fmt)

    def flow_row(flow: str) -> str:
        values = [results.flow_median(side, flow, "chars") for side in SIDES]
        return f"  {flow + ': characters read':<24}" + columns(values, ".0f")

    lines += [
        f"  {'success':<24}" + "".join(f" {'yes' if results.success(side) else 'NO':>10}" for side in SIDES),
        row("calls", "calls", ".0f"),
        row("characters read", "chars", ".0f"),
        row("time, s", "seconds", ".2f"),
        *(flow_row(flow) for flow in FLOWS),
        "",
        "  by flow (the last round):",
    ]
    for index, flow in enumerate(results.runs["ours"][-1].flows):
        cells = []
        for side in SIDES:
            found = results.runs[side][-1].flows[index]
            cells.append(f"{side} {found.calls} calls / {found.chars} chars / {found.seconds:.1f} s")
        lines.append(f"    {flow.flow:<8} " + "; ".join(cells))
    lines.append("  every read of the small pages' flow (the last round): characters, the step and its call")
    for side in SIDES:
        reads = results.runs[side][-1].of("small").reads
        lines.append(f"    {side}: " + "; ".join(f"{chars} {what}" for what, chars, _ms in reads))
    lines.append("  ours' largest reads (the last round): characters, the step and its call (the call's time)")
    for flow in results.runs["ours"][-1].flows:
        lines += [f"    {flow.flow:<8} {chars:>7}  {what} ({ms:.0f} ms)" for what, chars, ms in flow.largest(4)]
    failures = [
        f"  {side} {flow.flow}: {flow.failure[:400]}"
        for side in SIDES
        for run in results.runs[side]
        for flow in run.flows
        if flow.failure
    ]
    if failures:
        lines += ["", "failures:", *failures]
    lines += ["", *goal_lines("tokens goals (a benchmark, not a test):", tokens_verdicts(results))]
    return "\n".join(lines)


def tokens_json(results: TokensResults, args: Any) -> dict[str, Any]:
    def side(name: str) -> dict[str, Any]:
        return {
            "success": results.success(name),
            "calls": results.median(name, "calls"),
            "chars": results.median(name, "chars"),
            "seconds": results.median(name, "seconds"),
            "small_chars": results.flow_median(name, "small", "chars"),
            "shop_chars": results.flow_median(name, "shop", "chars"),
            "runs": [asdict(run) for run in results.runs[name]],
        }

    return {
        "config": {
            "products": results.products,
            "runs": args.tokens_runs,
            "chromium": CHROMIUM,
            "browser": results.browser,
            "playwright_mcp": results.playwright_mcp,
            "playwright_settle_ms": args.actions_playwright_settle,
            "transport": "stdio (ours: browser-mcp mcp)",
            "playwright_file_read_counts_as_a_call": True,
            "chrome_devtools_mcp": results.chrome_devtools_mcp,
            "chrome_devtools_mcp_args": [
                "--headless",
                "--isolated",
                "--executablePath",
                CHROMIUM,
                "--chromeArg=--no-sandbox",
                "--no-usage-statistics",
                "--no-performance-crux",
            ],
            "chrome_devtools_mcp_env": [
                "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS",
                "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS",
            ],
        },
        "shop_snapshot_chars": results.shop_snapshot_chars,
        "shop_find_chars": results.shop_find_chars,
        "article_chars": results.article_chars,
        **{name.replace("-", "_"): side(name) for name in SIDES},
        "ratios": {
            "chars_vs_smaller": results.median("ours", "chars") / (results.best_playwright("chars") or float("nan")),
            "small_chars_vs_smaller": results.small_chars_ratio()[0],
            "small_chars_vs_leaner_peer": results.leanest_ratio("small")[0],
            "shop_chars_vs_leaner_peer": results.leanest_ratio("shop")[0],
            **{
                f"{metric}_vs_{name.replace('-', '_')}": results.ratio(metric, name)
                for metric in ("calls", "chars", "seconds")
                for name in PEERS
            },
        },
        "goals": [asdict(verdict) for verdict in tokens_verdicts(results)],
    }
