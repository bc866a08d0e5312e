"""Statistics of the measurements: nearest-rank percentiles, median, p90 and max of timings, the
client's figures of a run of calls (and making them), medians over a scenario's runs, and a
bootstrap confidence interval of the difference of two medians."""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

ScenarioT = TypeVar("ScenarioT")


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


class TimingsOf:
    """A result's read-only attribute: the :class:`Timings` of one of the result's lists of milliseconds,
    for a result that measures several things."""

    def __init__(self, runs_field: str) -> None:
        self.runs_field = runs_field

    def __get__(self, result: object, owner: type | None = None) -> Timings:
        return Timings(getattr(result, self.runs_field))


def taking_turns(
    scenarios: list[ScenarioT], servers: Sequence[str], rounds: int
) -> Iterator[tuple[int, ScenarioT, str]]:
    """Each scenario's run of each server, round after round, as ``(round, scenario, server)``.

    The servers take turns going first, so that noise on the machine hits both alike.
    """
    turn = 0
    for round_number in range(1, rounds + 1):
        for scenario in scenarios:
            order = servers if turn % 2 == 0 else servers[::-1]
            turn += 1
            for server in order:
                yield round_number, scenario, server


async def timed_calls(call: Callable[[], Awaitable[None]], concurrency: int, calls: int) -> list[float]:
    """``calls`` calls from ``concurrency`` workers, each one call after another; latencies in s."""
    latencies: list[float] = []
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            started = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies


def call_figures(latencies: list[float], wall: float, client_cpu_s: float) -> dict[str, float]:
    """What the client measured over a run of calls: latency p50 and p99, calls a second, its own CPU."""
    calls = len(latencies)
    return {
        "calls": calls,
        "p50_ms": percentile(latencies, 0.50) * 1e3,
        "p99_ms": percentile(latencies, 0.99) * 1e3,
        "calls_per_s": calls / wall,
        "client_cpu_us_per_call": client_cpu_s / calls * 1e6,
    }


class Medians:
    """A scenario's runs by server, their medians, and the broker's over ``baseline``'s."""

    runs: dict[str, list[Any]]
    baseline: ClassVar[str]

    def median(self, kind: str, metric: str) -> float:
        return statistics.median(getattr(run, metric) for run in self.runs[kind])

    def ratio(self, metric: str = "cpu_us_per_call") -> float:
        baseline = self.median(self.baseline, metric)
        return self.median("broker", metric) / baseline if baseline else math.nan


BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 21  # the same resamples every run: two reports of the same loads say the same


@dataclass(frozen=True)
class Interval:
    """An estimate and its confidence interval (NaN throughout when there was nothing to estimate from)."""

    estimate: float
    low: float
    high: float
    confidence: float = 0.90

    def meets(self, limit: float) -> bool | None:
        """Whether the figure is at most ``limit``: True when the whole interval is, False when the whole
        interval is above it, None when the interval straddles it (this run does not tell)."""
        if self.high <= limit:
            return True
        if self.low > limit:
            return False
        return None


def median_difference(
    runs: Sequence[tuple[Sequence[float], Sequence[float]]],
    confidence: float = 0.90,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Interval:
    """``median(values) - median(baseline)`` over ``runs`` that each measured both side by side (each run's
    values and baseline; a run with either empty is left out), with a percentile bootstrap interval of two
    levels: the runs resampled with replacement, then each chosen run's values and its baseline, each apart,
    ``resamples`` times from a fixed seed. With one run it is a bootstrap of the measurements alone; with
    several, the interval also covers how the runs differ from one another, which the measurements of one
    run cannot show.
    """
    runs = [(list(values), list(baseline)) for values, baseline in runs if values and baseline]
    if not runs:
        return Interval(math.nan, math.nan, math.nan, confidence)
    draw = random.Random(BOOTSTRAP_SEED)
    differences = []
    for _ in range(resamples):
        chosen = draw.choices(runs, k=len(runs))
        values = [value for run, _ in chosen for value in draw.choices(run, k=len(run))]
        baseline = [value for _, run in chosen for value in draw.choices(run, k=len(run))]
        differences.append(statistics.median(values) - statistics.median(baseline))
    tail = (1 - confidence) / 2
    return Interval(
        statistics.median(value for values, _ in runs for value in values)
        - statistics.median(value for _, baseline in runs for value in baseline),
        percentile(differences, tail),
        percentile(differences, 1 - tail),
        confidence,
    )
