"""A run's timeline as SVG for the view: the same data as `dayflow trace --png`
(`dayflow.timeline`: spread times, one lane per process, restarts as dashed lines, each kind
of event its colour), drawn without matplotlib. The geometry is here; the SVG text is written
by the view's autoescaped template (`dayflow.view.html.timeline`, called by the site).
"""

from __future__ import annotations

from dataclasses import dataclass

from dayflow.models import Event
from dayflow.timeline import OTHER, STYLES, restart_indexes, spread_times

WIDTH, LEFT, RIGHT, LANE, TOP = 960, 150, 20, 46, 28


@dataclass(frozen=True)
class Mark:
    x: float
    y: float
    colour: str
    filled: bool
    title: str


@dataclass(frozen=True)
class Drawing:
    width: int
    height: int
    lanes: list[tuple[float, str]]  # y, label
    marks: list[Mark]
    restarts: list[float]  # x of each dashed line
    ticks: list[tuple[float, str]]  # x, seconds
    empty: bool
    legend: list[Mark]  # one per kind of event drawn, its label for title
    left: int = LEFT


def drawing(events: list[Event]) -> Drawing:
    """Where each event of one run's log goes on the picture."""
    lanes: dict[tuple[object, object], int] = {}
    for e in events:
        lanes.setdefault((e.pid, e.host), len(lanes))
    xs = spread_times(events)
    span = max(xs[-1] if xs else 0.0, 1e-3)
    inner = WIDTH - LEFT - RIGHT

    def at(x: float) -> float:
        return round(LEFT + inner * x / span, 2)

    def lane_y(n: int) -> float:
        return TOP + LANE * n + LANE / 2

    marks = []
    for e, x in zip(events, xs, strict=True):
        style = STYLES.get(e.kind, OTHER)
        marks.append(
            Mark(
                at(x),
                lane_y(lanes[(e.pid, e.host)]),
                style.color,
                style.filled,
                f"{style.label} ({e.kind}) at {e.at}, +{x:.3f} s",
            )
        )
    ticks = [(at(span * i / 4), _seconds(span * i / 4, span)) for i in range(5)]
    axis = TOP + LANE * max(len(lanes), 1) + 30
    legend: list[Mark] = []
    x, y = 16.0, axis + 22.0
    for style in dict.fromkeys(STYLES.get(e.kind, OTHER) for e in events):
        room = 26 + 6.5 * len(style.label)
        if x + room > WIDTH:
            x, y = 16.0, y + 22
        legend.append(Mark(x, y, style.color, style.filled, style.label))
        x += room
    return Drawing(
        WIDTH,
        int(y + 14) if legend else axis,
        [(lane_y(n), f"pid {pid} on {host}") for (pid, host), n in lanes.items()],
        marks,
        [at((xs[i - 1] + xs[i]) / 2) for i in restart_indexes(events)],
        ticks,
        not events,
        legend,
    )


def _seconds(value: float, span: float) -> str:
    """A tick's time, in milliseconds when the whole run took less than a few seconds."""
    if span < 0.05:
        return f"{value * 1000:.1f} ms"
    return f"{value * 1000:.0f} ms" if span < 5 else f"{value:.1f} s"
