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
