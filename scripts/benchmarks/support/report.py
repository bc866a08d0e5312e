"""What the benchmarks' reports share: verdicts against the goals and their lines, size labels, the machine."""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .stats import Interval

OUTCOMES = {True: "met", False: "missed", None: "not resolved"}


@dataclass
class Verdict:
    """One goal, met or missed, or not resolved by the run when its confidence intervals straddle the goal
    (a benchmark, never a test: the exit status ignores it)."""

    goal: str
    passed: bool | None  # None: not resolved by this run
    detail: str
    values: dict[str, float]
    intervals: dict[str, Interval] = field(default_factory=dict)  # of values' labels, when judged by them

    def line(self) -> str:
        status = {True: "PASS", False: "MISS", None: "NOT RESOLVED"}[self.passed]
        gap = "" if self.detail.startswith("\n") else " "  # a detail of many lines starts on the next
        return f"  {status}  {self.goal}:{gap}{self.detail}"

    def brief_json(self) -> dict[str, Any]:
        """The goal, whether it was met and the values it was judged by, without the detail."""
        return {"goal": self.goal, "passed": self.passed, "values": self.values}

    @classmethod
    def at_most(cls, goal: str, values: dict[str, float], limit: float, unit: str = "x", digits: int = 2) -> Verdict:
        """Met when every one of ``values`` is at most ``limit``; the detail lists them all."""
        detail = ", ".join(f"{label} {value:.{digits}f}{unit}" for label, value in values.items())
        return cls(goal, all(value <= limit for value in values.values()), detail, values)

    @classmethod
    def interval_at_most(
        cls,
        goal: str,
        intervals: dict[str, Interval],
        limit: float,
        unit: str,
        digits: int = 2,
        notes: dict[str, str] | None = None,
    ) -> Verdict:
        """Judged by confidence intervals, each apart: one is met when its upper bound is at most ``limit``,
        missed when its lower bound is above it, not resolved otherwise. The goal is missed when one is,
        met when all are, else not resolved. The detail gives each on a line of its own, with its ``notes``.
        """
        outcomes = {label: interval.meets(limit) for label, interval in intervals.items()}
        passed = False if False in outcomes.values() else (True if all(outcomes.values()) else None)
        lines = []
        for label, interval in intervals.items():
            line = (
                f"{label}: {interval.estimate:+.{digits}f}{unit}, {interval.confidence:.0%} interval"
                f" [{interval.low:+.{digits}f}, {interval.high:+.{digits}f}], {OUTCOMES[outcomes[label]]}"
            )
            if notes and notes.get(label):
                line += f"; {notes[label]}"
            lines.append(f"\n      {line}")
        values = {label: interval.estimate for label, interval in intervals.items()}
        return cls(goal, passed, "".join(lines), values, intervals)


def goal_lines(heading: str, verdicts: Iterable[Verdict]) -> list[str]:
    """A report's goals: their heading, then each verdict's line."""
    return [heading, *(verdict.line() for verdict in verdicts)]


def size_label(size: int) -> str:
    return f"{size // 1024} KB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


def machine() -> dict[str, Any]:
    """Where the numbers come from, for the JSON results."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_end": os.getloadavg(),
    }
