"""The measurements the actions suite takes on its sides, in turns call by call: snapshots of the shop
and of the frames page, and clicks on a counter, in a frame or not. The comparison with Playwright MCP
(``suite.py``) and Firefox's beside Chromium (``firefox.py``) both run them, each on its own sides.
"""

from __future__ import annotations

from ..support import BenchError, progress
from ..support.pages import COUNTER_TEXT, CROSS_ORIGIN_TEXT, CROSS_SITE_TEXT, FRAMES_HEADING, SAME_ORIGIN_TEXT
from ..support.shop_pages import ADD_BUTTON, SHOP_END, SHOP_HEADING
from .sides import PRODUCT_LINK, Counts, Side, in_turns, ref_of, up_to_product

# What every snapshot of the frames page must show: its heading, and a text of each frame's own.
FRAMES_SHOWN = (f'heading "{FRAMES_HEADING}"', SAME_ORIGIN_TEXT, CROSS_ORIGIN_TEXT, CROSS_SITE_TEXT)


async def timed_snapshots(sides: list[Side], url: str, count: int, *shown: str) -> dict[str, list[tuple[float, str]]]:
    """``count`` snapshots of the page at ``url`` per side, once it shows ``shown`` twice alike; each must show it.

    Raises:
        BenchError: when a snapshot lacks one of ``shown``.
    """
    for side in sides:
        await side.open(url)
        await side.snapshot_until(*shown, settled=True)
    timed = await in_turns(sides, count, lambda side: side.call("browser_snapshot", {}))
    for name, runs in timed.items():
        for _ms, text in runs:
            missing = [needle for needle in shown if needle not in text]
            if missing:
                raise BenchError(f"{name}: a snapshot of {url} lacks {missing}: {text[:3000]}")
    return timed


async def measure_snapshots(sides: list[Side], url: str, count: int) -> None:
    timed = await timed_snapshots(sides, url, count, f'heading "{SHOP_HEADING}"')
    texts: dict[str, str] = {}
    for side in sides:
        runs = timed[side.name]
        text = texts[side.name] = runs[-1][1]
        found = side.result
        found.counts = Counts.of(text)
        found.snapshot_ms = [ms for ms, _text in runs]
        found.snapshot_chars = len(text)
        found.products_shown = len(PRODUCT_LINK.findall(text))
        found.whole_page = SHOP_END in text
    # Like for like: the snapshots from their start to the last product both show.
    common = min(side.result.products_shown for side in sides)
    for side in sides:
        side.result.same_part_chars = len(up_to_product(texts[side.name], common))
        found = side.result
        progress(
            f"actions: {side.name:<10} snapshot {found.snapshot_chars:>7} chars ({found.products_shown} products"
            f"{', the whole page' if found.whole_page else ', cut'}), p50 {found.snapshot.median_ms:6.1f} ms,"
            f" p90 {found.snapshot.p90_ms:6.1f} ms; refs {found.counts}"
        )


async def measure_frames_snapshots(sides: list[Side], url: str, count: int) -> None:
    timed = await timed_snapshots(sides, url, count, *FRAMES_SHOWN)
    for side in sides:
        found = side.result
        found.frames_snapshot_ms = [ms for ms, _text in timed[side.name]]
        found.frames_snapshot_chars = len(timed[side.name][-1][1])
        progress(
            f"actions: {side.name:<10} frames snapshot {found.frames_snapshot_chars:>5} chars (every frame's"
            f" content), p50 {found.frames_snapshot.median_ms:6.1f} ms, p90 {found.frames_snapshot.p90_ms:6.1f} ms"
        )


async def click_counter(sides: list[Side], url: str, warmup: int, count: int) -> dict[str, list[tuple[float, str]]]:
    """The measured clicks (after ``warmup``) on the "Add one" button of the page at ``url``, in a frame or
    not, by the ref a snapshot gave; then a snapshot must show the counter at every click made.
    """
    refs: dict[str, str] = {}
    for side in sides:
        await side.learn_click_argument()
        await side.open(url)
        refs[side.name] = ref_of(await side.snapshot_until(COUNTER_TEXT.format(0)), "button", ADD_BUTTON)
    timed = await in_turns(sides, warmup + count, lambda side: side.click(refs[side.name]))
    for side in sides:
        # Every click landed: the page counted them all.
        await side.snapshot_until(COUNTER_TEXT.format(warmup + count))
        progress(f"actions: {side.name:<10} {url}: the counter shows all {warmup + count} clicks")
    return {name: runs[warmup:] for name, runs in timed.items()}


async def measure_clicks(sides: list[Side], url: str, warmup: int, count: int) -> None:
    timed = await click_counter(sides, url, warmup, count)
    for side in sides:
        found = side.result
        found.click_ms = [ms for ms, _text in timed[side.name]]
        found.click_chars = len(timed[side.name][-1][1])
        found.clicks_seen = warmup + count
        progress(f"actions: {side.name:<10} click p50 {found.click.median_ms:.1f} ms, p90 {found.click.p90_ms:.1f} ms")


async def measure_frame_clicks(sides: list[Side], url: str, warmup: int, count: int) -> None:
    timed = await click_counter(sides, url, warmup, count)
    for side in sides:
        found = side.result
        found.frame_click_ms = [ms for ms, _text in timed[side.name]]
        found.frame_clicks_seen = warmup + count
        progress(
            f"actions: {side.name:<10} click in the cross-site frame p50 {found.frame_click.median_ms:6.1f} ms,"
            f" p90 {found.frame_click.p90_ms:6.1f} ms"
        )
