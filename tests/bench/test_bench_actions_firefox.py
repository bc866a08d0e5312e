"""The actions bench's Firefox comparison: ``--browser`` picks it, and its report and JSON set each figure of
Firefox beside Chromium's as a ratio. Figures are given by hand; the browsers are the bench's part."""

from __future__ import annotations

import pytest

from scripts.benchmarks import cli as bench
from scripts.benchmarks.actions import suite as bench_actions
from scripts.benchmarks.actions.firefox import BrowsersResults, browsers_json
from scripts.benchmarks.actions.sides import SideResult


def results() -> BrowsersResults:
    chromium = SideResult("chromium", snapshot_ms=[30.0, 40.0, 50.0], snapshot_chars=1000, click_ms=[20.0, 30.0])
    firefox = SideResult("firefox", snapshot_ms=[60.0, 80.0, 100.0], snapshot_chars=1000, click_ms=[50.0, 70.0])
    return BrowsersResults(
        products=160,
        snapshots=3,
        clicks=2,
        browsers={"chromium": "Chromium 1", "firefox": "Firefox 2"},
        sides={"chromium": chromium, "firefox": firefox},
        type_ms={"chromium": [10.0, 30.0], "firefox": [40.0, 40.0]},
    )


def test_the_actions_suite_runs_in_chromium_unless_firefox_is_asked_for() -> None:
    assert bench.parse_args(["--suite", "actions"]).browser == "chromium"
    assert bench.parse_args(["--suite", "actions", "--browser", "firefox"]).browser == "firefox"
    with pytest.raises(SystemExit):
        bench.parse_args(["--suite", "actions", "--browser", "safari"])


def test_the_report_sets_firefoxs_snapshot_click_and_type_beside_chromiums_as_ratios() -> None:
    args = bench.parse_args(["--suite", "actions", "--browser", "firefox", "--actions-click-warmup", "1"])
    report = bench_actions.actions_report(results(), args)
    assert "Chromium 1" in report and "Firefox 2" in report
    lines = {
        line.split("  ")[1].strip(): line for line in report.splitlines() if line.startswith("  ") and "ms" in line
    }
    assert lines["snapshot ms, median"].split()[-3:] == ["40.0", "80.0", "2.00x"]
    assert lines["click ms, median"].split()[-3:] == ["25.0", "60.0", "2.40x"]
    assert lines["type ms, median"].split()[-3:] == ["20.0", "40.0", "2.00x"]
    assert "1.00x" in next(line for line in report.splitlines() if "snapshot characters" in line)


def test_the_json_holds_each_browsers_figures_and_runs_and_the_ratios() -> None:
    args = bench.parse_args(["--suite", "actions", "--browser", "firefox"])
    found = bench_actions.actions_json(results(), args)
    assert found == browsers_json(results(), args)
    assert found["ratios"]["type.median_ms"] == 2.0
    assert found["figures"]["firefox"]["click.median_ms"] == 60.0
    assert found["runs"]["chromium"]["type_ms"] == [10.0, 30.0]
    assert found["config"]["browsers"] == {"chromium": "Chromium 1", "firefox": "Firefox 2"}
