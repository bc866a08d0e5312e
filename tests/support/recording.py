"""The recording tests' own helpers (browser_start_recording, browser_stop_recording), for Chromium
and Firefox alike: the form page a person fills in, what its state then is, and the recorded code
replayed line by line with Playwright for Python in a plain Chromium of the test's own."""

from __future__ import annotations

import re
from typing import Any

from playwright.async_api import Page

from .testing_tools import plain_chromium, replayed

FORM = "pages/recording_form.html"
DONE = "pages/recording_done.html"
NAME = "Ada Lovelace"
PASSWORD = "hunter2-secret"
CODE = "424242"
COMMENT = "Nice form"
# What the second page shows once the form was saved with the person's values.
SAVED = f"{NAME} chose green, agreed, said {COMMENT}"

_ACTION = re.compile(
    r"^await page\.(?P<locator>.+)\.(?P<action>click|fill|selectOption|check|uncheck|press)\((?P<arg>.*)\);$"
)
_STRING = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _unquoted(argument: str) -> str:
    found = _STRING.fullmatch(argument)
    assert found, f"not one quoted string: {argument!r}"
    return re.sub(r"\\(.)", lambda escaped: {"n": "\n", "r": "\r"}.get(escaped[1], escaped[1]), found[1])


async def _run(page: Page, code: str) -> None:
    for line in code.splitlines():
        if not line.strip() or line.startswith("//"):
            continue
        goto = re.fullmatch(r"await page\.goto\((.*)\);", line)
        if goto:
            await page.goto(_unquoted(goto[1]))
            continue
        if line == "await page.reload();":
            await page.reload()
            continue
        found = _ACTION.fullmatch(line)
        assert found, f"a line Playwright would not run as recorded: {line!r}"
        locator = replayed(page, found["locator"])
        action, argument = found["action"], found["arg"]
        if action == "click":
            await locator.click()
        elif action == "fill":
            await locator.fill(_unquoted(argument))
        elif action == "selectOption":
            await locator.select_option(_unquoted(argument))
        elif action == "check":
            await locator.check()
        elif action == "uncheck":
            await locator.uncheck()
        else:
            await locator.press(_unquoted(argument))


async def replayed_state(code: str) -> tuple[str, str]:
    """The final page's URL and what its ``#saved`` shows, once Playwright ran ``code``."""
    async with plain_chromium() as browser:
        page = await browser.new_page()
        await _run(page, code)
        await page.wait_for_load_state()
        return page.url, await page.locator("#saved").inner_text()


def everything_said(result: Any) -> str:
    """Every text item of a tool's answer, together."""
    return "\n".join(getattr(item, "text", "") for item in result.content)
