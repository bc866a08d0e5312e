"""Statistics of the measurements: nearest-rank percentiles, and median, p90 and max of timings."""

from __future__ import annotations

import math
import statistics


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Timings:
    """Median, p90 and max of ``runs_ms``, for result classes that hold one run per measurement."""

    runs_ms: list[float]

    def __init__(self, runs_ms: list[float]) -> None:  # dataclass subclasses write their own
        self.runs_ms = runs_ms

    @property
    def median_ms(self) -> float:
        return statistics.median(self.runs_ms)

    @property
    def p90_ms(self) -> float:
        return percentile(self.runs_ms, 0.90)

    @property
    def max_ms(self) -> float:
        return max(self.runs_ms)
