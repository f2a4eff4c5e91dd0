"""A run's timeline as a PNG: its events on a time axis, one lane per process.

matplotlib is an optional extra (`pip install 'dayflow[trace]'`), imported only when a picture
is asked for, and drawn with the Agg canvas directly (no pyplot, no global backend state).

Events are stored to the millisecond (to the second by databases written before that); events
that share a timestamp are spread evenly across its resolution in their log order, so the order
on the axis is always the order of the log. A restart boundary (another process takes
the run over, or `run_resumed`) is a dashed vertical line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dayflow.errors import UsageError
from dayflow.models import Event

MISSING = (
    "matplotlib is not installed: pip install 'dayflow[trace]' "
    "(from a clone of the repository: pip install -e '.[trace]')"
)


class MissingExtra(UsageError):
    """An optional dependency a command needs is not installed."""


@dataclass(frozen=True)
class Style:
    label: str
    marker: str
    color: str
    filled: bool = True
    size: float = 60


# Executions are filled triangles, reuses hollow squares: the two must never look alike.
STYLES: dict[str, Style] = {
    "run_started": Style("run started", ">", "#2ca02c", size=90),
    "run_resumed": Style("run resumed", "D", "#2ca02c", size=70),
    "lease_taken_over": Style("claim taken from a dead process", "h", "#d62728", filled=False),
    "lease_released": Style("claim released by doctor", "h", "#d62728", filled=False),
    "run_forked": Style("run forked", "<", "#17becf", size=80),
    "response_committed": Style("model response saved", "|", "#7f7f7f", size=90),
    "tool_executed": Style("tool executed", "^", "#ff7f0e"),
    "tool_reused": Style("saved result reused", "s", "#9467bd", filled=False, size=70),
    "step_committed": Style("step committed", "o", "#1f77b4"),
    "compacted": Style("compacted", "v", "#8c564b"),
    "run_finished": Style("run finished", "*", "#000000", size=160),
    "run_released": Style("run let go (interrupted)", "x", "#d62728", size=70),
    "run_failed": Style("run failed or stopped", "X", "#d62728", size=90),
    "run_stopped": Style("run failed or stopped", "X", "#d62728", size=90),
}
OTHER = Style("other event", "+", "#7f7f7f")


def spread_times(events: list[Event]) -> list[float]:
    """Seconds since the first event; events sharing a timestamp are spread across its
    resolution (a millisecond, or a second for older rows) in log order."""
    if not events:
        return []
    per_stamp = Counter(e.at for e in events)
    start = datetime.fromisoformat(events[0].at)
    seen: Counter[str] = Counter()
    xs = []
    for e in events:
        base = (datetime.fromisoformat(e.at) - start).total_seconds()
        resolution = 0.001 if "." in e.at else 1.0
        xs.append(base + resolution * (seen[e.at] + 0.5) / per_stamp[e.at])
        seen[e.at] += 1
    return xs


def restart_indexes(events: list[Event]) -> list[int]:
    """Indexes of the events that begin a new part of the run: another process writes, or
    the run is resumed (in the same process, as tests do, or right after a take-over)."""
    found = []
    for i in range(1, len(events)):
        new_process = events[i].pid != events[i - 1].pid
        resumed = events[i].kind == "run_resumed" and events[i - 1].kind != "lease_taken_over"
        if new_process or resumed:
            found.append(i)
    return found


LABEL_GAP = 0.035  # labels closer than this share of the time axis would overprint


def label_levels(points: list[tuple[float, int]], gap: float) -> list[int]:
    """A text level (0, 1, 2, then 0 again) per (x, lane) point, so that labels closer than
    `gap` on one lane stack instead of overprinting (a resumed run's replayed steps and its
    restart line land close together)."""
    levels: list[int] = []
    last: dict[int, tuple[float, int]] = {}
    for x, lane in points:
        previous = last.get(lane)
        level = (previous[1] + 1) % 3 if previous and x - previous[0] < gap else 0
        levels.append(level)
        last[lane] = (x, level)
    return levels


def _is_restart(events: list[Event], i: int) -> bool:
    return any(e.kind == "run_resumed" for e in events[i : i + 2])


def draw_timeline(run_id: str, events: list[Event], path: Path) -> None:
    """Write the PNG timeline of `events` (one run's log, in order) to `path` (FileProblem, one
    line, if it cannot be written)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtra(MISSING) from None

    lanes: dict[tuple[Any, Any], int] = {}
    for e in events:
        lanes.setdefault((e.pid, e.host), len(lanes))
    hosts = {host for _, host in lanes}
    xs = spread_times(events)

    fig = Figure(figsize=(11, 2.4 + 0.7 * len(lanes)), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for (pid, host), lane in lanes.items():
        own = [x for x, e in zip(xs, events, strict=True) if (e.pid, e.host) == (pid, host)]
        ax.hlines(lane, min(own), max(own), color="#cccccc", linewidth=6, zorder=1)
    used: dict[str, Style] = {}
    gap = LABEL_GAP * (max(xs) - min(xs) or 1.0)
    steps = [
        (x, e) for x, e in zip(xs, events, strict=True)
        if e.kind == "step_committed" and "step" in e.detail
    ]  # fmt: skip
    step_levels = {id(e): level for (_, e), level in zip(steps, label_levels(
        [(x, lanes[(e.pid, e.host)]) for x, e in steps], gap), strict=True)}  # fmt: skip
    for x, e in zip(xs, events, strict=True):
        style = STYLES.get(e.kind, OTHER)
        used.setdefault(style.label, style)
        y = lanes[(e.pid, e.host)]
        ax.scatter([x], [y], zorder=3, **_marker(style))
        if id(e) in step_levels:
            ax.annotate(
                f"step {e.detail['step']}",
                (x, y),
                xytext=(0, 11 + 10 * step_levels[id(e)]),
                textcoords="offset points",
                ha="center",
                fontsize=8,
            )
    boundaries = [(i, (xs[i - 1] + xs[i]) / 2) for i in restart_indexes(events)]
    levels = label_levels([(b, 0) for _, b in boundaries], gap * 3)
    for (i, boundary), level in zip(boundaries, levels, strict=True):
        ax.axvline(boundary, color="#444444", linestyle="--", linewidth=1.2, zorder=2)
        ax.annotate(
            "restart" if _is_restart(events, i) else "new process",
            (boundary, -0.6),
            xytext=(3, -3 - 10 * level),
            textcoords="offset points",
            fontsize=8,
            va="top",
        )
    for style in used.values():
        ax.scatter([], [], label=style.label, **_marker(style))
    ax.set_yticks(
        list(lanes.values()),
        [f"pid {pid}" + (f"\n{host}" if len(hosts) > 1 else "") for pid, host in lanes],
    )
    ax.set_ylim(len(lanes) - 0.5, -0.6)
    ax.set_xlabel("seconds since the run started")
    processes = "process" if len(lanes) == 1 else "processes"
    ax.set_title(f"run {run_id}: {len(events)} events, {len(lanes)} {processes}")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=5, frameon=False, fontsize=8)
    # Drawn into memory, then written by the one guarded writer: a file is replaced whole, a
    # FIFO no one reads is refused, and a name without ".png" is not given one.
    import io

    from dayflow import files

    drawn = io.BytesIO()
    fig.savefig(drawn, format="png")
    files.write_atomic(path, drawn.getvalue())


def _marker(style: Style) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"marker": style.marker, "s": style.size, "linewidths": 1.6}
    if style.marker in _LINE_MARKERS:  # drawn with lines only: a face colour is all they take
        return kwargs | {"c": style.color}
    face = style.color if style.filled else "none"
    return kwargs | {"c": face, "edgecolors": style.color}


_LINE_MARKERS = {"|", "_", "x", "+", "1", "2", "3", "4"}
