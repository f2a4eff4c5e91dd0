"""Pure functions that turn Dayflow's values into Rich renderables or plain strings. No printing."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dayflow.models import Event, Run, Step, Task, ToolEffect, Usage
from dayflow.pricing import PRICES, Prices, estimate_cost, format_cost

if TYPE_CHECKING:
    from rich.markdown import Markdown

    from dayflow.history import DoctorReport

STATUS_STYLE = {
    "running": "cyan",
    "interrupted": "yellow",
    "done": "green",
    "failed": "red",
    "stopped": "magenta",
}


# Characters that reorder or hide text on a terminal (bidi overrides and isolates, zero-width
# marks) and control characters: text from mail shows them as visible escapes instead.
_UNSAFE = {
    cp: f"\\u{cp:04x}"
    for cp in (
        *range(0x09),
        *range(0x0B, 0x20),
        *range(0x7F, 0xA0),
        0x061C,
        0x200B,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0xFEFF,
    )
}


def plain(text: str) -> str:
    """`text` safe to print on a terminal: bidi controls and control characters escaped."""
    return text.translate(_UNSAFE)


def _add(table: Table, *cells: RenderableType) -> None:
    """Add a row whose plain-string cells are shown literally: text from emails and tools may
    hold `[...]`, which Rich would otherwise read as markup and drop, and bidi controls, which
    a terminal would obey."""
    table.add_row(*(Text(plain(c)) if isinstance(c, str) else c for c in cells))


def short_args(args: Any, width: int = 60) -> str:
    """A tool call's arguments as the step trace shows them: the repr, cut to one short line
    (a cut string keeps its quotes: `'Send edits on…'`)."""
    text = repr(args)
    if len(text) <= width:
        return plain(text)
    if not isinstance(args, dict):
        return plain(text[: width - 1] + "…")
    first_key = next(iter(args))
    head, tail = f"{{{first_key!r}: ", ", ...}" if len(args) > 1 else "}"
    room = max(width - len(head) - len(tail), 8)
    value = args[first_key]
    shown = repr(value)
    if len(shown) > room and isinstance(value, str):
        cut = value[: room - 3]
        while cut and len(repr(cut + "…")) > room:
            cut = cut[:-1]
        shown = repr(cut + "…")
    elif len(shown) > room:
        shown = shown[: room - 1] + "…"
    return plain(head + shown + tail)


def tool_call_line(name: str, args: Any, *, reused: bool = False, error: bool = False) -> str:
    suffix = "  (saved result reused)" if reused else "  (error)" if error else ""
    return f"    -> {name}({short_args(args)}){suffix}"


def tokens(usage: Usage) -> str:
    return f"{usage.total_input}/{usage.output_tokens}"


@dataclass(frozen=True)
class _Col:
    name: str
    keep: int  # the higher, the later it is dropped on a narrow terminal
    flexible: bool = False  # takes the width left over, wrapping (never cut)
    right: bool = False


_FLEX_MIN = 20  # the narrowest a flexible column (a reason, a title) gets before others go


def _fitted(cols: list[_Col], rows: list[list[RenderableType]], width: int | None) -> Table:
    """A table that fits `width` (None: no limit, e.g. a pipe). Columns go from the lowest
    `keep` up until the rest fits; every fact kept is shown whole (flexible columns wrap), and a
    caption names what was left out."""

    def natural(i: int) -> int:
        cells = [r[i] for r in rows]
        return max([len(cols[i].name)] + [len(c.plain if isinstance(c, Text) else str(c))
                                          for c in cells])  # fmt: skip

    shown = list(range(len(cols)))

    def need(indexes: list[int]) -> int:
        sizes = [min(natural(i), _FLEX_MIN) if cols[i].flexible else natural(i) for i in indexes]
        return sum(sizes) + 2 * (len(indexes) - 1)

    if width is not None:
        for i in sorted(shown, key=lambda i: cols[i].keep):
            if need(shown) <= width or len(shown) == 1:
                break
            if not cols[i].flexible:
                shown.remove(i)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for i in shown:
        col = cols[i]
        table.add_column(
            col.name,
            no_wrap=not col.flexible,
            overflow="fold",
            min_width=min(natural(i), _FLEX_MIN) if col.flexible else natural(i),
            justify="right" if col.right else "left",
            ratio=1 if col.flexible else None,
        )
    for row in rows:
        _add(table, *(row[i] for i in shown))
    hidden = [cols[i].name for i in range(len(cols)) if i not in shown]
    if hidden:
        table.caption = (
            f"not shown at {width} columns: {', '.join(hidden)} "
            "(a wider terminal, a pipe or --json shows them)"
        )
        table.caption_justify = "left"
        table.caption_style = "dim"
    return table


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


def runs_table(
    runs: list[Run],
    prices: Prices | None = None,
    tz: dt.tzinfo | None = None,
    *,
    width: int | None = None,
) -> Table:
    """The runs listing. The facts a user came for (id, status, the reason) are the last to
    go on a narrow terminal; what goes is named in the caption."""
    rows: list[list[RenderableType]] = []
    for r in runs:
        note = r.reason or ""
        if r.parent_run_id:
            note = f"fork of {r.parent_run_id}@{r.forked_at_step}" + (f"; {note}" if note else "")
        if r.pruned_at or r.redacted_at:
            note = ("pruned" if r.pruned_at else "redacted") + (f"; {note}" if note else "")
        rows.append(
            [
                *_run_cells(r, tz),
                format_cost(estimate_cost(r.model, r.usage, prices or PRICES)),
                r.model,
                note,
            ]
        )
    return _fitted(_RUN_COLS, rows, width)


_RUN_COLUMNS = ("run", "status", "date", "started", "steps", "tokens in/out")


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


def _run_cells(r: Run, tz: dt.tzinfo | None = None) -> list[RenderableType]:
    """The cells of `_RUN_COLUMNS` for one run, shared by `runs` and `gc`."""
    return [
        r.id,
        Text(r.status, style=STATUS_STYLE.get(r.status, "")),
        r.brief_date,
        local_time(r.created_at, tz),
        str(r.steps),
        tokens(r.usage) + ("*" if r.estimated else ""),
    ]


def run_json(r: Run, prices: Prices | None = None) -> dict[str, Any]:
    return {
        "id": r.id,
        "status": r.status,
        "brief_date": r.brief_date,
        "model": r.model,
        "created_at": r.created_at,
        "finished_at": r.finished_at,
        "steps": r.steps,
        "usage": r.usage.to_json() | {"total_input": r.usage.total_input},
        "tokens_estimated": r.estimated,
        "estimated_cost_usd": estimate_cost(r.model, r.usage, prices or PRICES),
        "reason": r.reason,
        "request_id": r.request_id,
        "owner_pid": r.owner_pid if r.status == "running" else None,
        "parent_run_id": r.parent_run_id,
        "forked_at_step": r.forked_at_step,
        "pruned_at": r.pruned_at,
        "redacted_at": r.redacted_at,
    }


_TASK_COLS = [
    _Col("id", 100),
    _Col("status", 90),
    _Col("due", 80),
    _Col("title", 95, flexible=True),
    _Col("key", 50),
    _Col("run", 40),
]


def tasks_table(tasks: list[Task], *, width: int | None = None) -> Table:
    """The task list; on a narrow terminal the title wraps and the key and run go first."""
    rows: list[list[RenderableType]] = [
        [t.id, t.status, t.due or "-", t.title, t.idempotency_key, t.run_id or "-"] for t in tasks
    ]
    return _fitted(_TASK_COLS, rows, width)


def brief(text: str) -> Markdown:
    """The brief as Markdown (rich.markdown, with its parser, is imported only here)."""
    from rich.markdown import Markdown

    return Markdown(plain(text))


def run_header(r: Run, prices: Prices | None = None, tz: dt.tzinfo | None = None) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    rows: list[tuple[str, RenderableType]] = [
        ("run", r.id),
        ("status", Text(r.status, style=STATUS_STYLE.get(r.status, ""))),
        ("model", r.model),
        ("brief date", r.brief_date),
        ("started", local_time(r.created_at, tz, seconds=True)),
        ("finished", local_time(r.finished_at, tz, seconds=True)),
        ("steps", str(r.steps)),
        ("tokens", _usage_line(r.usage, r.estimated)),
        ("cost", format_cost(estimate_cost(r.model, r.usage, prices or PRICES)) + " (estimate)"),
    ]
    if r.reason:
        rows.append(("reason", r.reason))
    if r.request_id:
        rows.append(("request id", r.request_id))
    if r.parent_run_id:
        rows.append(("forked from", f"{r.parent_run_id} at step {r.forked_at_step}"))
    if r.pruned_at:
        rows.append(
            ("pruned", f"{local_time(r.pruned_at, tz)} by gc: payloads removed, tombstone kept")
        )
    if r.redacted_at:
        rows.append(
            ("redacted", f"{local_time(r.redacted_at, tz)} by gc --redact: read results blanked")
        )
    for key, value in rows:
        _add(table, key, value)
    return table


def _usage_line(u: Usage, estimated: bool) -> str:
    line = f"{u.total_input} in / {u.output_tokens} out"
    parts = []
    if u.cache_read_input_tokens:
        parts.append(f"{u.cache_read_input_tokens} cache read")
    if u.cache_creation_input_tokens:
        parts.append(f"{u.cache_creation_input_tokens} cache write")
    if parts:
        line += f" ({', '.join(parts)})"
    return line + (" (estimated)" if estimated else "")


def steps_table(steps: list[Step], effects: list[ToolEffect]) -> Table:
    # ok/error of each call: from the step's results once committed, else its saved effect.
    saved = {e.tool_use_id: e.is_error for e in effects}
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col in ("step", "state", "stop", "tools", "tokens in/out", "ms", "pid"):
        table.add_column(col, no_wrap=col != "tools")
    for s in steps:
        errors = saved | {
            r.get("tool_use_id"): bool(r.get("is_error")) for r in s.tool_results or []
        }
        calls = []
        for use in s.tool_uses():
            mark = "?" if use["id"] not in errors else ("error" if errors[use["id"]] else "ok")
            calls.append(f"{use.get('name')}({short_args(use.get('input'), 40)}) {mark}")
        _add(
            table,
            str(s.n),
            s.state,
            s.stop_reason,
            "\n".join(calls) or "-",
            tokens(s.usage),
            "-" if s.duration_ms is None else str(s.duration_ms),
            "-" if s.pid is None else str(s.pid),
        )
    return table


def events_table(events: list[Event], tz: dt.tzinfo | None = None) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col in ("#", "at", "pid", "event", "detail"):
        table.add_column(col, no_wrap=col != "detail")
    last_pid, last_kind = None, None
    for e in events:
        # A restart boundary: another process took over, or the run was resumed; a take-over
        # followed by its resume is one boundary.
        switched = last_pid is not None and e.pid != last_pid
        resumed = e.kind == "run_resumed" and last_kind != "lease_taken_over"
        if last_pid is not None and (switched or resumed):
            _add(table, "", "", "", Text("── new process ──", style="dim"), "")
        last_pid, last_kind = e.pid, e.kind
        detail = ", ".join(f"{k}={v}" for k, v in e.detail.items() if v is not None)
        _add(table, str(e.seq), local_time(e.at, tz, seconds=True), str(e.pid), e.kind, detail)
    return table


def deliveries(effects: list[ToolEffect]) -> list[dict[str, Any]]:
    """The run's saved deliveries (dayflow.delivery): sink, ok (False: uncertain), detail."""
    from dayflow.delivery import describe

    return describe(effects)


def show(
    r: Run,
    steps: list[Step],
    effects: list[ToolEffect],
    events: list[Event],
    prices: Prices | None = None,
    tz: dt.tzinfo | None = None,
) -> Group:
    parts: list[RenderableType] = [
        run_header(r, prices, tz),
        Text(""),
        Text("Steps", style="bold underline"),
    ]
    parts += [steps_table(steps, effects), Text("")]
    delivered = deliveries(effects)
    if delivered:
        parts.append(Text("Delivered", style="bold underline"))
        for d in delivered:
            mark = "ok" if d["ok"] else "??"
            parts.append(Text(f" {mark}  {d['sink']}: {d['detail']}", overflow="fold"))
        parts.append(Text(""))
    parts += [Text("Events", style="bold underline"), events_table(events, tz)]
    if r.final_text:
        parts += [Text(""), Text("Brief", style="bold underline"), brief(r.final_text)]
    return Group(*parts)


def show_json(
    r: Run,
    steps: list[Step],
    effects: list[ToolEffect],
    events: list[Event],
    prices: Prices | None = None,
    compactions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "run": run_json(r, prices),
        "brief": r.final_text,
        "compactions": compactions or [],
        "deliveries": deliveries(effects),
        "steps": [
            {
                "n": s.n,
                "state": s.state,
                "stop_reason": s.stop_reason,
                "assistant": s.assistant,
                "tool_results": s.tool_results,
                "usage": s.usage.to_json(),
                "request_id": s.request_id,
                "duration_ms": s.duration_ms,
                "pid": s.pid,
                "created_at": s.created_at,
                "completed_at": s.completed_at,
            }
            for s in steps
        ],
        "events": [
            {
                "seq": e.seq,
                "kind": e.kind,
                "detail": e.detail,
                "pid": e.pid,
                "host": e.host,
                "at": e.at,
            }
            for e in events
        ],
    }


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


# ---- history: gc, doctor


def gc_table(runs: list[Run], tz: dt.tzinfo | None = None) -> Table:
    """The runs `gc` pruned or redacted (or would, on a dry run)."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col in _RUN_COLUMNS:
        table.add_column(col, no_wrap=True, justify="right" if col == "steps" else "left")
    for r in runs:
        _add(table, *_run_cells(r, tz))
    return table


SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def doctor_report(report: DoctorReport) -> Group:
    """`doctor`'s findings, each with the command that repairs it."""
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    _add(head, "database", report.database)
    _add(head, "schema", report.schema or "-")
    _add(head, "checked", ", ".join(report.checks))
    parts: list[RenderableType] = [head, Text("")]
    if not report.findings:
        parts.append(Text("no problems found", style="green"))
        return Group(*parts)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col in ("severity", "finding", "what", "repair"):
        table.add_column(col, no_wrap=col in ("severity", "finding"))
    for f in report.findings:
        severity = "fixed" if f.fixed else f.severity
        _add(
            table,
            Text(severity, style="green" if f.fixed else SEVERITY_STYLE.get(f.severity, "")),
            f.code,
            f.message,
            "-" if f.fixed or not f.fix_command else f.fix_command,
        )
    parts.append(table)
    return Group(*parts)
