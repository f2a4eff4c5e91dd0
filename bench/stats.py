"""Medians, spreads and same-round ratios, and how they are printed."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Summary:
    median: float
    q1: float
    q3: float
    lo: float
    hi: float
    count: int

    def ratio(self, unit: str = "×") -> str:
        """`1.83× (IQR 1.71–1.95, n=15)`."""
        return f"{self.median:.2f}{unit} (IQR {self.q1:.2f}–{self.q3:.2f}, n={self.count})"

    def time(self) -> str:
        """A duration given in nanoseconds, with its IQR, in a readable unit."""
        return f"{human(self.median)} (IQR {human(self.q1)}–{human(self.q3)})"

    def amount(self, fmt: str = "{:,.0f}") -> str:
        return (
            f"{fmt.format(self.median)} (IQR {fmt.format(self.q1)}–{fmt.format(self.q3)}, "
            f"n={self.count})"
        )


def summarize(values: Sequence[float]) -> Summary:
    """Median, quartiles (inclusive method) and range of `values`."""
    xs = sorted(values)
    if not xs:
        raise ValueError("nothing to summarize")
    if len(xs) == 1:
        return Summary(xs[0], xs[0], xs[0], xs[0], xs[0], 1)
    q1, med, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return Summary(med, q1, q3, xs[0], xs[-1], len(xs))


def round_ratios(rounds: Sequence[dict[str, float]], num: str, den: str) -> Summary:
    """The ratio num/den computed inside each interleaved round, then summarized."""
    return summarize([r[num] / r[den] for r in rounds if num in r and den in r])


def human(ns: float) -> str:
    """Nanoseconds as µs, ms or s with three significant digits."""
    if ns < 1e6:
        return f"{ns / 1e3:.3g} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.3g} ms"
    return f"{ns / 1e9:.3g} s"


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def write_between(
    path: Path, begin: str, end: str, section: str, *, before: str | None = None
) -> None:
    """Put `section` (which starts with `begin` and ends with `end`) in place of what is between
    those markers in `path`; when the file has none, before the marker `before` if it has that
    one, else at the end."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section.rstrip("\n") + rest.split(end, 1)[1]
    elif before is not None and before in text:
        head, rest = text.split(before, 1)
        text = head + section.rstrip("\n") + "\n\n" + before + rest
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")
