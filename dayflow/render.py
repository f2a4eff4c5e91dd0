"""Pure functions that turn Dayflow's values into Rich renderables or plain strings. No printing.

The listings of `runs`, `tasks` and `gc` are plain text, in `dayflow.listing` (no Rich: those
commands start fast).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dayflow.listing import local_time, plain, run_json, tokens
from dayflow.models import Event, Run, Step, ToolEffect, Usage
from dayflow.pricing import PRICES, Prices, format_cost, run_cost
from dayflow.providers.local import LOCAL, OLLAMA_URL, where

__all__ = ["brief", "doctor_report", "plain", "run_json", "show", "show_json", "tool_call_line"]

if TYPE_CHECKING:
    from rich.markdown import Markdown

    from dayflow.history import DoctorReport
    from dayflow.probe import Report as Probe

STATUS_STYLE = {
    "running": "cyan",
    "interrupted": "yellow",
    "done": "green",
    "failed": "red",
    "stopped": "magenta",
}


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


def brief(text: str) -> Markdown:
    """The brief as Markdown (rich.markdown, with its parser, is imported only here)."""
    from rich.markdown import Markdown

    return Markdown(plain(text))


def _served_by(r: Run) -> list[tuple[str, RenderableType]]:
    """A local run's server, and whether its mail stayed on this machine; Claude's endpoint
    when it was not the API's own address; the proxy the requests went through."""
    from dayflow.network import DIRECT, shown_url

    proxy = r.settings.proxy
    if r.settings.provider == LOCAL:
        return [("served by", where(r.model, r.settings.base_url or OLLAMA_URL, proxy))]
    through = "" if proxy in (None, DIRECT) else f", through proxy {proxy}"
    if r.settings.base_url:
        return [("served by", f"{shown_url(r.settings.base_url)} (ANTHROPIC_BASE_URL){through}")]
    return [("served by", f"the Anthropic API{through}")] if through else []


def run_header(r: Run, prices: Prices | None = None, tz: dt.tzinfo | None = None) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    rows: list[tuple[str, RenderableType]] = [
        ("run", r.id),
        ("status", Text(r.status, style=STATUS_STYLE.get(r.status, ""))),
        ("model", r.model),
        *_served_by(r),
        ("brief date", r.brief_date),
        ("started", local_time(r.created_at, tz, seconds=True)),
        ("finished", local_time(r.finished_at, tz, seconds=True)),
        ("steps", str(r.steps)),
        ("tokens", _usage_line(r.usage, r.estimated)),
        ("cost", format_cost(run_cost(r, prices or PRICES)) + " (estimate)"),
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
    for col in ("step", "state", "stop", "tools", "tokens in/out", "ms", "pid", "host"):
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
            _stop(s),
            "\n".join(calls) or "-",
            tokens(s.usage) + (" batch" if s.batch_id else ""),  # billed at the batch rate
            "-" if s.duration_ms is None else str(s.duration_ms),
            "-" if s.pid is None else str(s.pid),
            s.host or "-",
        )
    return table


def _stop(step: Step) -> str:
    """The step's stop reason, and what the server said when it was read differently (a local
    server's tool turn reported as end_turn: see dayflow.turns)."""
    said = (step.stop_details or {}).get("reported_stop_reason", step.stop_reason)
    return step.stop_reason if said == step.stop_reason else f"{step.stop_reason} (said {said})"


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


def drafts(effects: list[ToolEffect]) -> list[dict[str, Any]]:
    """The run's drafts (dayflow.drafts): thread, folder, Message-ID, to whom, and whether
    written or only pending (a kill between its mark and its write, not resumed yet)."""
    from dayflow.drafts import describe

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
    made = drafts(effects)
    if made:
        parts.append(Text("Drafts", style="bold underline"))
        for d in made:
            mark = {"written": "ok", "refused": "no"}.get(d["state"], "??")
            line = f" {mark}  {d['thread']}: {d['message_id']} in {d['folder']}, to {d['to']}"
            tail = {"ok": "", "no": " (refused by the folder, not written)"}.get(mark, " (pending)")
            parts.append(Text(line + tail, overflow="fold"))
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
        "drafts": drafts(effects),
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
                "host": s.host,
                "created_at": s.created_at,
                "completed_at": s.completed_at,
                "stop_details": s.stop_details,
            }
            | ({"batch_id": s.batch_id} if s.batch_id else {})
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


SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def doctor_report(report: DoctorReport) -> Group:
    """`doctor`'s findings, each with the command that repairs it."""
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    _add(head, "database", report.database)
    _add(head, "schema", report.schema or "-")
    _add(head, "checked", ", ".join(report.checks))
    if report.skipped:
        _add(head, "skipped", "; ".join(f"{k} ({why})" for k, why in report.skipped.items()))
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


def probe_report(model: str, report: Probe) -> str:
    """`doctor --model`'s report as plain lines: one per check, then the calls and seconds."""
    marks = {True: "ok", False: "FAIL", None: "-"}
    width = max((len(c.what) for c in report.checks), default=0)
    lines = [f"{marks[c.ok]:<5} {c.what:<{width}}  {plain(c.detail)}" for c in report.checks]
    per_call = report.seconds / report.calls if report.calls else 0.0
    verdict = "can write a brief" if report.tools_work else "cannot write a brief"
    lines.append(f"{report.calls} call(s), {per_call:.1f} s per call: {model} {verdict}")
    if report.advice:
        lines.append(f"what to try: {report.advice}")
    return "\n".join(lines) + "\n"
