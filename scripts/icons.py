"""Render the extension's icons from their SVG sources, and the README's picture of the toolbar states.

Each ``extension/icons/NAME.svg`` becomes ``NAME-SIZE.png``: the mark (``icon``, the connected
state) at the four sizes a manifest names, the other toolbar states at the toolbar's two (16 px,
and 32 px for high-density screens). What each state means is ``extension/person/toolbar.js``'s.

Rendered by Debian's Chromium through Playwright (already there for the browser tests), with a
transparent background: no drawing library is needed for a few squares and circles.
"""

from __future__ import annotations

import argparse
import base64
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "extension" / "icons"
CHROMIUM = "/usr/bin/chromium"
SIZES = {"icon": (16, 32, 48, 128), "icon-off": (16, 32), "icon-paused": (16, 32)}
# The picture: each state as the toolbar shows it (its 16 px place, drawn from the 32 px PNG on a
# high-density screen), large, and in words.
STATES = (
    ("icon", "connected", "a broker is joined: agents reach the tabs they claim", ""),
    ("icon-off", "not connected", "no broker is joined: agents reach nothing", ""),
    ("icon-paused", "paused", "you paused agents: every call is refused", "II"),
)
PAGE = """<!doctype html><meta charset="utf-8"><style>
html, body {{ margin: 0; background: transparent; }}
svg {{ display: block; width: {size}px; height: {size}px; }}
</style>{svg}"""
PICTURE = """<!doctype html><meta charset="utf-8"><style>
body {{ margin: 0; font: 13px/1.4 system-ui, sans-serif; color: #202124; background: #fff; }}
main {{ display: flex; gap: 28px; padding: 20px 24px; width: max-content; }}
figure {{ margin: 0; width: 190px; display: flex; flex-direction: column; align-items: center; gap: 10px; }}
.large {{ width: 64px; height: 64px; }}
.toolbar {{ display: flex; align-items: center; gap: 10px; padding: 6px 12px; border-radius: 16px;
  background: #f1f3f4; }}
.toolbar i {{ width: 16px; height: 16px; border-radius: 50%; background: #c4c7c5; }}
.action {{ position: relative; width: 16px; height: 16px; }}
.action img {{ width: 16px; height: 16px; display: block; }}
.badge {{ position: absolute; left: 6px; top: 7px; min-width: 8px; padding: 0 2px; border-radius: 3px;
  background: #c5221f; color: #fff; text-align: center; font: bold 8px/11px system-ui, sans-serif; }}
figcaption {{ text-align: center; }}
b {{ display: block; }}
</style><main>{figures}</main>"""
FIGURE = """<figure><img class="large" src="{large}"><div class="toolbar"><i></i><i></i>
<span class="action"><img src="{small}">{badge}</span></div>
<figcaption><b>{label}</b>{meaning}</figcaption></figure>"""


def _data_uri(path: Path, kind: str) -> str:
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}"


def render_icons(browser: Browser, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    page = browser.new_page()
    for name, sizes in SIZES.items():
        svg = (ICONS / f"{name}.svg").read_text()
        for size in sizes:
            page.set_viewport_size({"width": size, "height": size})
            page.set_content(PAGE.format(size=size, svg=svg))
            target = out / f"{name}-{size}.png"
            page.screenshot(path=str(target), omit_background=True)
            written.append(target)
    page.close()
    return written


def render_picture(browser: Browser, icons: Path, picture: Path) -> None:
    figures = "".join(
        FIGURE.format(
            large=_data_uri(ICONS / f"{name}.svg", "image/svg+xml"),
            small=_data_uri(icons / f"{name}-32.png", "image/png"),
            badge=f'<span class="badge">{badge}</span>' if badge else "",
            label=label,
            meaning=meaning,
        )
        for name, label, meaning, badge in STATES
    )
    page = browser.new_page(device_scale_factor=2)
    page.set_content(PICTURE.format(figures=figures))
    picture.parent.mkdir(parents=True, exist_ok=True)
    page.locator("main").screenshot(path=str(picture))
    page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ICONS, help="where the PNGs go (default: %(default)s)")
    parser.add_argument(
        "--picture", type=Path, default=ROOT / "docs" / "toolbar-icons.png", help="the README's picture"
    )
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            written = render_icons(browser, args.out)
            render_picture(browser, args.out, args.picture)
        finally:
            browser.close()
    for path in [*written, args.picture]:
        print(path)


if __name__ == "__main__":
    main()
