"""The listings `runs`, `tasks` and `gc` print, as plain text: no Rich, so that the commands
people run most start fast (issue 13: within 1.5x of `python -c "import typer, rich"`).

Tables fit a terminal's width: columns go from the least needed up until the rest fits, every
fact kept is shown whole (the flexible column, a reason or a title, wraps), and a caption names
what was left out. With no width (a pipe, a file) nothing is left out. Text from mail is shown
with `plain()`: bidi overrides and control characters become visible escapes.
"""

from __future__ import annotations

import datetime as dt
import textwrap
from typing import TYPE_CHECKING, Any

from dayflow.models import Run, Task, Usage
from dayflow.network import shown_url
from dayflow.pricing import PRICES, Prices, format_cost, run_cost
from dayflow.printable import plain

if TYPE_CHECKING:
    from dayflow.fleet.status import Board
    from dayflow.store.values import Profile

# ANSI colours of a run's status, on a colour terminal only.
STATUS_COLOURS = {"running": 36, "interrupted": 33, "done": 32, "failed": 31, "stopped": 35}


def tokens(usage: Usage) -> str:
    return f"{usage.total_input}/{usage.output_tokens}"


def local_time(stamp: str | None, tz: dt.tzinfo | None = None, *, seconds: bool = False) -> str:
    """A stored UTC timestamp in the user's zone (DAYFLOW_TZ), to the minute by default:
    `2026-11-05 07:30Z` in UTC, `2026-11-05 08:30+01:00` elsewhere."""
    if not stamp:
        return "-"
    try:
        when = dt.datetime.fromisoformat(stamp)
        if tz is not None and when.tzinfo is not None:
            when = when.astimezone(tz)
    except (ValueError, OverflowError):
        return stamp
    text = when.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
    offset = when.utcoffset()
    if offset is None:
        return text
    if not offset:
        return text + "Z"
    return text + when.isoformat()[-6:]


def run_json(r: Run, prices: Prices | None = None) -> dict[str, Any]:
    return {
        "id": r.id,
        "status": r.status,
        "brief_date": r.brief_date,
        "model": r.model,
        "provider": r.settings.provider,
        "base_url": None if r.settings.base_url is None else shown_url(r.settings.base_url),
        "created_at": r.created_at,
        "finished_at": r.finished_at,
        "steps": r.steps,
        "usage": r.usage.to_json() | {"total_input": r.usage.total_input},
        "tokens_estimated": r.estimated,
        "estimated_cost_usd": run_cost(r, prices or PRICES),
        "reason": r.reason,
        "request_id": r.request_id,
        "owner_pid": r.owner_pid if r.status == "running" else None,
        "host": r.host,
        "parent_run_id": r.parent_run_id,
        "forked_at_step": r.forked_at_step,
        "pruned_at": r.pruned_at,
        "redacted_at": r.redacted_at,
    }


# --- tables ---------------------------------------------------------------------------------


class _Col:
    """A column: `keep` orders what goes first on a narrow terminal (lowest first); a
    `flexible` one takes the width left over and wraps, never cut. (A plain class: a
    dataclass costs start-up time.)"""

    def __init__(self, name: str, keep: int, *, flexible: bool = False, right: bool = False):
        self.name, self.keep, self.flexible, self.right = name, keep, flexible, right


_FLEX_MIN = 20  # the narrowest a flexible column (a reason, a title) gets before others go
_GAP = "  "


def _cells(text: str) -> int:
    """Terminal cells `text` takes: wide East Asian characters two, combining marks none."""
    if text.isascii():  # one cell each (the usual case: no unicodedata to import or ask)
        return len(text)
    import unicodedata

    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _pad(text: str, width: int, right: bool) -> str:
    room = " " * max(width - _cells(text), 0)
    return room + text if right else text + room


def _wrap(text: str, width: int) -> list[str]:
    out: list[str] = []
    for line in textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]:
        while _cells(line) > width:  # wide characters: cut by cells, not characters
            cut = len(line)
            while cut > 1 and _cells(line[:cut]) > width:
                cut -= 1
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return out


def _cut(text: str, width: int | None) -> str:
    """`text` cut to `width` terminal cells with "…" (None: whole)."""
    if width is None or _cells(text) <= width:
        return text
    while text and _cells(text) > width - 1:
        text = text[:-1]
    return text.rstrip() + "…"


def table(
    cols: list[_Col],
    rows: list[list[str]],
    width: int | None,
    *,
    colour: bool = False,
    status_col: str | None = None,
    under: list[str] | None = None,
) -> str:
    """The rows as a text table that fits `width` (None: no limit); see the module docstring.
    `under`: a line shown below each row ("" for none), indented, cut to the width."""
    rows = [[plain(c) for c in row] for row in rows]
    natural = [max([_cells(c.name)] + [_cells(r[i]) for r in rows]) for i, c in enumerate(cols)]

    def least(i: int) -> int:
        return min(natural[i], _FLEX_MIN) if cols[i].flexible else natural[i]

    shown = list(range(len(cols)))
    if width is not None:
        for i in sorted(range(len(cols)), key=lambda i: cols[i].keep):
            if sum(least(j) for j in shown) + len(_GAP) * (len(shown) - 1) <= width:
                break
            if not cols[i].flexible and len(shown) > 1:
                shown.remove(i)
    widths = {i: natural[i] for i in shown}
    if width is not None:
        fixed = sum(natural[i] for i in shown if not cols[i].flexible)
        left = width - fixed - len(_GAP) * (len(shown) - 1)
        for i in shown:
            if cols[i].flexible:
                widths[i] = max(min(natural[i], left), least(i), 1)
    last = shown[-1]

    def line(cells: list[str], bold: bool = False, status: str | None = None) -> str:
        parts = []
        for i, text in zip(shown, cells, strict=True):
            tail = i == last and not cols[i].right
            padded = text if tail else _pad(text, widths[i], cols[i].right)
            if colour and cols[i].name == status_col and status in STATUS_COLOURS:
                padded = f"\x1b[{STATUS_COLOURS[status]}m{padded}\x1b[0m"
            parts.append(padded)
        text = _GAP.join(parts).rstrip()
        return f"\x1b[1m{text}\x1b[0m" if bold and colour else text

    out = [line([cols[i].name for i in shown], bold=True)]
    status_at = next((k for k, c in enumerate(cols) if c.name == status_col), None)
    for n, row in enumerate(rows):
        wrapped = {i: _wrap(row[i], widths[i]) if cols[i].flexible else [row[i]] for i in shown}
        height = max(len(v) for v in wrapped.values())
        status = row[status_at] if status_at is not None else None
        for k in range(height):
            cells = [wrapped[i][k] if k < len(wrapped[i]) else "" for i in shown]
            out.append(line(cells, status=status if k == 0 else None))
        below = " ".join(plain(under[n]).split()) if under else ""
        if below:
            out.append(_cut(f"  {below}", width))
    hidden = [c.name for i, c in enumerate(cols) if i not in shown]
    if hidden:
        caption = (
            f"not shown at {width} columns: {', '.join(hidden)} "
            "(a wider terminal, a pipe or --json shows them)"
        )
        out += textwrap.wrap(caption, width or len(caption))
    return "\n".join(out) + "\n"


_RUN_COLS = [
    _Col("run", 100),
    _Col("status", 90),
    _Col("date", 70),
    _Col("started", 10),
    _Col("steps", 30, right=True),
    _Col("tokens in/out", 40),
    _Col("cost", 60),
    _Col("model", 50),
    _Col("note", 80, flexible=True),
]
_HOST_COL = _Col("host", 65)  # only for runs from more than one machine (a shared database)


def _run_cells(r: Run, tz: dt.tzinfo | None) -> list[str]:
    return [
        r.id,
        r.status,
        r.brief_date,
        local_time(r.created_at, tz),
        str(r.steps),
        tokens(r.usage) + ("*" if r.estimated else ""),
    ]


def runs_table(
    runs: list[Run],
    prices: Prices | None = None,
    tz: dt.tzinfo | None = None,
    *,
    width: int | None = None,
    colour: bool = False,
) -> str:
    """The runs listing. The facts a user came for (id, status, the reason) are the last to
    go on a narrow terminal; what goes is named in the caption. Runs from more than one
    machine (a shared PostgreSQL history) get a host column."""
    hosts = len({r.host for r in runs if r.host}) > 1
    cols = [*_RUN_COLS[:-1], _HOST_COL, _RUN_COLS[-1]] if hosts else _RUN_COLS
    rows: list[list[str]] = []
    for r in runs:
        note = r.reason or ""
        if r.parent_run_id:
            note = f"fork of {r.parent_run_id}@{r.forked_at_step}" + (f"; {note}" if note else "")
        if r.pruned_at or r.redacted_at:
            note = ("pruned" if r.pruned_at else "redacted") + (f"; {note}" if note else "")
        cost = format_cost(run_cost(r, prices or PRICES))
        rows.append([*_run_cells(r, tz), cost, r.model, *([r.host or "-"] if hosts else []), note])
    return table(cols, rows, width, colour=colour, status_col="status")


def profiles_table(profiles: list[Profile], *, width: int | None = None) -> str:
    """The profiles listing: each one's schedule in its own zone, and its config file."""
    cols = [
        _Col("name", 0),
        _Col("at", 1),
        _Col("tz", 2),
        _Col("days", 3),
        _Col("config", 4, flexible=True),
    ]
    rows = [
        [p.name, p.at, p.tz, "Mon-Fri" if p.weekdays == "12345" else _days(p.weekdays), p.config]
        for p in profiles
    ]
    return table(cols, rows, width)


def fleet_table(board: Board, tz: dt.tzinfo | None = None, *, width: int | None = None) -> str:
    """`fleet status`: the day (or, when the profiles' todays differ, that it is each one's),
    the counts by state, the oldest waiting job (queued when, in the user's zone `tz`), what a
    state needs said (`lost`, `missed`), then each profile (due when, in its own zone)."""
    counts = ", ".join(f"{n} {state}" for state, n in board.counts().items() if n)
    days = sorted({x.day for x in board.lines})
    label = board.day or (f"each profile's today ({days[0]} to {days[-1]})" if days else "today")
    lines = [f"{label}: {counts or 'no profiles'}"]
    if not board.lines:  # no table of nobody: say how to add someone
        return lines[0] + " yet: `dayflow profiles add NAME --config FILE`\n"
    oldest = board.oldest_waiting
    if oldest is not None:
        lines.append(f"oldest waiting: {oldest.profile}, queued {local_time(oldest.queued_at, tz)}")
    lines += [f"{x.profile}: {x.state}: {x.detail}" for x in board.lines if x.detail]
    cols = [_Col("profile", 0), _Col("state", 1), _Col("due (its zone)", 2), _Col("run", 3)]
    rows = [[x.profile, x.state, local_time(x.due_at), x.run_id or "-"] for x in board.lines]
    return "\n".join(lines) + "\n" + table(cols, rows, width)


def _days(weekdays: str) -> str:
    names = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    return "every day" if weekdays == "1234567" else ",".join(names[int(d) - 1] for d in weekdays)


def gc_table(
    runs: list[Run],
    tz: dt.tzinfo | None = None,
    *,
    width: int | None = None,
    colour: bool = False,
) -> str:
    """The runs `gc` pruned or redacted (or would, on a dry run)."""
    rows = [_run_cells(r, tz) for r in runs]
    return table(_RUN_COLS[:6], rows, width, colour=colour, status_col="status")


_TASK_COLS = [
    _Col("id", 100),
    _Col("status", 90),
    _Col("due", 80),
    _Col("title", 95, flexible=True),
    _Col("key", 50),
    _Col("run", 40),
]


QUOTE_SHOWN = 90  # a task's evidence under its row (`dayflow why ID` shows it whole)


def tasks_table(tasks: list[Task], *, width: int | None = None, colour: bool = False) -> str:
    """The task list; on a narrow terminal the title wraps and the key and run go first.
    Under each task, its evidence (the ask in the sender's words, cut) and whether its due
    date was stated or implied, as the brief's Needs action shows them."""
    rows = [
        [t.id, t.status, t.due or "-", t.title, t.idempotency_key, t.run_id or "-"] for t in tasks
    ]
    return table(_TASK_COLS, rows, width, colour=colour, under=[_evidence(t) for t in tasks])


def _evidence(task: Task) -> str:
    """'"Could you send me the deck by Friday?" (due stated)', or "" for a task with none."""
    said = " ".join((task.evidence or "").split())
    if len(said) > QUOTE_SHOWN:
        said = said[: QUOTE_SHOWN - 1].rsplit(" ", 1)[0] + "…"
    kind = task.due_kind if task.due and task.due_kind in ("stated", "implied") else None
    due = f"(due {kind})" if kind else ""
    return " ".join(p for p in (f'"{said}"' if said else "", due) if p)
