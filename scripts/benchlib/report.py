"""What the benchmarks' reports share: verdicts against the goals, size labels, the machine."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from typing import Any


@dataclass
class Verdict:
    """One goal, met or missed (a benchmark, never a test: the exit status ignores it)."""

    goal: str
    passed: bool
    detail: str
    values: dict[str, float]

    def line(self) -> str:
        return f"  {'PASS' if self.passed else 'MISS'}  {self.goal}: {self.detail}"

    @classmethod
    def at_most(cls, goal: str, values: dict[str, float], limit: float, unit: str = "x", digits: int = 2) -> Verdict:
        """Met when every one of ``values`` is at most ``limit``; the detail lists them all."""
        detail = ", ".join(f"{label} {value:.{digits}f}{unit}" for label, value in values.items())
        return cls(goal, all(value <= limit for value in values.values()), detail, values)


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
