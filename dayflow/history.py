"""Keeping months of runs complete, honest and manageable: fork, gc, doctor, trace export.

fork
    A new run whose history is the first N committed steps of another: the parent's system
    prompt, tools, job, settings and limits, its first N steps with their saved tool effects
    and the compactions made before them, copied in one transaction. The copies count 0
    tokens, so "a run's totals equal the sum of its steps" stays true and `--budget` counts
    only what the fork spends. Tasks are not touched: they exist, and a `create_task` with the
    same idempotency key answers `created: false`. Then the fork is driven like a resume. Step
    N must end in something the conversation continues from (tool results, or a paused turn):
    a pending, discarded or final step is refused with the step to fork from instead.

gc
    Old finished runs become tombstones: the runs row (id, dates, status, token totals, the
    brief) and one row per step (state, stop reason, usage, timing, each tool_use's id and name)
    stay, so `runs` still counts the steps and the totals still add up; the payloads (the
    model's text and tool inputs, the tool results, the saved effects' contents, the events'
    details, compaction summaries) are blanked. Tasks and idempotency keys are never deleted, so
    a later run can never re-create a task a pruned run created. Only done, failed and stopped
    runs are chosen, unless `unfinished` is asked for; a run a live process drives never is.
    `--redact` keeps everything but the results of the read tools (inbox, messages, calendar).
    Either way the run can no longer be resumed or forked (the next request would not be the
    bytes the model saw), which the store's `leases.claim` and `archive.fork` refuse with a clear
    error. The file is VACUUMed afterwards, which also drops the freed pages that still held the
    text.

doctor
    Findings, each with the command that repairs it. `--fix` only does what cannot lose
    information: releasing leases of processes that are gone (the run becomes `interrupted`,
    exactly what it already shows as) and `chmod 600` on the database files. Totals that
    disagree with the steps are *evidence* (of a bug or of hand edits), so they are reported,
    never silently recomputed; `recompute_totals` does it for one named run and keeps the old
    numbers in the run's event log. A step whose tool_use ids lack results can not be sent to
    the API again; the repair is a fork from the step before it. A corrupt file needs a backup
    or the engine's own recovery (SQLite's `.recover`), which is not ours to run.

Everything engine-specific here (size on disk, VACUUM, integrity checks, file permissions)
is asked of the store's `Upkeep`, so gc and doctor work the same on every backend.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

from dayflow import turns
from dayflow.agent import Loop, RunResult, drive
from dayflow.agent.notes import Forked
from dayflow.errors import RunPruned, StoreError, UsageError
from dayflow.models import (
    COMPLETE,
    DISCARDED,
    DONE,
    FAILED,
    NO_LIMITS,
    PENDING,
    RUNNING,
    STOPPED,
    Event,
    Limits,
    Run,
)
from dayflow.models import Step as StepRow
from dayflow.store import Store, not_continuable
from dayflow.store.values import DEFAULT_PROFILE, command_hint

READ_TOOLS = frozenset({"read_inbox", "read_message", "read_calendar"})
FINISHED = (DONE, FAILED, STOPPED)
TRACE_FORMATS = ("jsonl", "csv")
TRACE_COLUMNS = ("run_id", "seq", "at", "pid", "host", "kind", "detail")

ERROR, WARNING, INFO = "error", "warning", "info"


# ------------------------------------------------------------------------------------ fork


def check_fork_point(
    run: Run, steps: list[StepRow], n: int, *, profile: str = DEFAULT_PROFILE
) -> None:
    """Raise a clear error unless the first `n` steps of `run` (a run of `profile`) can be a
    fork's history."""
    if n < 0:
        raise UsageError("--from-step must be 0 or more")
    if n == 0:
        return
    if run.pruned_at or run.redacted_at:
        raise RunPruned(not_continuable(run.id, run.pruned_at, run.redacted_at))
    if n > len(steps):
        raise UsageError(
            f"run {run.id} has {len(steps)} step(s): there is no step {n} to fork from"
        )
    turns.refuse_unreadable(run, steps[:n], profile)
    step = steps[n - 1]
    earlier = f"fork from step {n - 1} instead"
    if step.state == PENDING:
        raise UsageError(
            f"step {n} of run {run.id} is pending (its tool calls never finished); {earlier}, "
            f"or `{command_hint(profile, 'resume', run.id)}`"
        )
    if step.state == DISCARDED:
        raise UsageError(
            f"step {n} of run {run.id} was discarded ({step.stop_reason}) and is not part of "
            f"the conversation; {earlier}"
        )
    if step.state != COMPLETE or (step.tool_results is None and step.stop_reason != "pause_turn"):
        raise UsageError(
            f"step {n} of run {run.id} ended the run ({step.stop_reason}); {earlier} to have "
            "that turn made again"
        )


def fork_run(
    loop: Loop,
    parent: Run,
    from_step: int,
    *,
    model: str | None = None,
    limits: Limits = NO_LIMITS,
) -> RunResult:
    """Start a run whose history is the parent's first `from_step` steps (no model call spent
    on them) and drive it to its end with `model` (the parent's by default)."""
    store = loop.store
    check_fork_point(parent, store.steps.of(parent.id), from_step, profile=store.profile)
    run, lease = store.archive.fork(
        parent.id, from_step, model=model or parent.model, limits=limits
    )
    loop.report(Forked(run, parent.id, from_step))
    return drive(loop, run, lease, resumed_from=None)


# -------------------------------------------------------------------------------------- gc


@dataclass(frozen=True)
class GcReport:
    action: str  # "prune" | "redact"
    runs: list[Run]  # what went (on a dry run: what would go)
    dry_run: bool
    bytes_before: int
    bytes_after: int


def gc_candidates(
    store: Store,
    *,
    before: date | None,
    keep: int | None,
    redact: bool = False,
    unfinished: bool = False,
) -> list[Run]:
    """The runs `gc` would prune (or redact): older than `before` and past the `keep` newest,
    finished (or, with `unfinished`, interrupted too), never one a live process drives."""
    if before is None and keep is None:
        raise UsageError("say which runs go: --before DATE, --keep N, or both")
    newest_first = store.runs.list(limit=None)
    chosen = []
    for run in newest_first[keep or 0 :]:
        if before is not None and run.created_at >= before.isoformat():
            continue
        if run.pruned_at or (redact and run.redacted_at) or run.status == RUNNING:
            continue
        if run.status in FINISHED or unfinished:
            chosen.append(run)
    return chosen


def collect_garbage(
    store: Store,
    *,
    before: date | None = None,
    keep: int | None = None,
    redact: bool = False,
    dry_run: bool = False,
    unfinished: bool = False,
) -> GcReport:
    """Prune (or redact) the chosen runs, one transaction each, then VACUUM the file."""
    chosen = gc_candidates(store, before=before, keep=keep, redact=redact, unfinished=unfinished)
    action = "redact" if redact else "prune"
    size = store.upkeep.size_bytes()
    if dry_run or not chosen:
        return GcReport(action, chosen, dry_run, size, size)
    note = {"before": before.isoformat() if before else None, "keep": keep}
    done = []
    for run in chosen:
        if redact:
            changed = store.archive.redact(run.id, READ_TOOLS, unfinished=unfinished, note=note)
        else:
            changed = store.archive.prune(run.id, unfinished=unfinished, note=note)
        if changed:
            done.append(store.runs.get(run.id))
    if done:
        store.upkeep.reclaim()
    return GcReport(action, done, dry_run, size, store.upkeep.size_bytes())


# ---------------------------------------------------------------------------------- doctor


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str  # error | warning | info
    message: str
    fix_command: str | None
    fixable: bool = False  # `doctor --fix` repairs it
    fixed: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DoctorReport:
    database: str
    schema: str | None
    checks: list[str]  # what was checked
    findings: list[Finding] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # check -> why this engine skips it

    @property
    def problems(self) -> list[Finding]:
        """Errors and warnings still there (a fixed one is not)."""
        return [f for f in self.findings if not f.fixed and f.severity in (ERROR, WARNING)]

    @property
    def healthy(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "schema": self.schema,
            "healthy": self.healthy,
            "checks": self.checks,
            "skipped": self.skipped,
            "findings": [f.to_json() for f in self.findings],
        }


CHECKS = (
    "integrity",
    "schema",
    "run totals",
    "answers",
    "tool results",
    "leases",
    "permissions",
)


def diagnose(store: Store, *, fix: bool = False) -> DoctorReport:
    """Check the database; with `fix`, repair what is safe to repair (see the module doc)."""
    upkeep = store.upkeep
    findings: list[Finding] = []
    for problem in upkeep.integrity_problems()[:20]:
        findings.append(
            Finding("integrity", ERROR, f"integrity check: {problem}", upkeep.recovery_hint())
        )
    schema, latest = upkeep.schema_version(), upkeep.latest_schema()
    if schema != latest:
        findings.append(
            Finding("schema", ERROR, f"schema is {schema}, expected {latest}", "upgrade dayflow")
        )
    for run_id, totals, sums in store.archive.totals_mismatches():
        findings.append(
            Finding(
                "totals_mismatch",
                ERROR,
                f"run {run_id}: its totals ({_usage(totals)}) disagree with the sum of its steps "
                f"({_usage(sums)})",
                command_hint(store.profile, "doctor", "--recompute-totals", run_id),
            )
        )
    findings += _unreadable_steps(store)
    findings += _unanswered_tool_uses(store)
    for run in store.archive.stale_leases():
        fixed = fix and store.archive.release_stale(run.id)
        message = (
            f"run {run.id} is marked running by pid {run.owner_pid} on {run.owner_host}, "
            "which is gone"
        )
        if fixed:
            again = command_hint(store.profile, "resume", run.id)
            message += f"; marked interrupted, `{again}` continues it"
        findings.append(
            Finding(
                "stale_lease",
                WARNING,
                message,
                "dayflow doctor --fix",
                fixable=True,
                fixed=fixed,
            )
        )
    for exposed in upkeep.exposure(fix=fix):
        findings.append(
            Finding(
                "permissions",
                WARNING,
                exposed.message,
                exposed.fix_command,
                fixable=True,
                fixed=exposed.fixed,
            )
        )
    skipped = dict(upkeep.skipped)
    checks = [c for c in CHECKS if c not in skipped]
    return DoctorReport(upkeep.location, schema, checks, findings, skipped)


def _unreadable_steps(store: Store) -> list[Finding]:
    """Each step whose stored answer no server sends (`turns.unreadable_steps`): `show` and
    `resume` refuse the run, and a fork from the step before it is the way on."""
    found = []
    for run in store.runs.list(limit=None):
        if run.pruned_at:
            continue  # its steps are gc's skeletons
        try:
            steps = store.steps.of(run.id)
        except StoreError as exc:  # a row nested past what can be read back
            found.append(
                Finding(
                    "malformed_step",
                    ERROR,
                    f"{exc}; `show` and `resume` cannot read it",
                    command_hint(store.profile, "fork", run.id, "--from-step", 0),
                )
            )
            continue
        for n, problem in turns.unreadable_steps(steps):
            found.append(
                Finding(
                    "malformed_step",
                    ERROR,
                    f"run {run.id} step {n}: {problem}; `show` and `resume` cannot read it",
                    command_hint(store.profile, "fork", run.id, "--from-step", n - 1),
                )
            )
    return found


def _unanswered_tool_uses(store: Store) -> list[Finding]:
    found = []
    for run in store.runs.list(limit=None):
        if run.pruned_at:
            continue
        try:
            steps = store.steps.of(run.id)
        except StoreError:
            continue  # named by _unreadable_steps
        for step in steps:
            if step.state != COMPLETE or step.stop_reason != "tool_use" or not step.tool_uses():
                continue
            if turns.answer_problem(step.assistant) is not None:
                continue  # named by _unreadable_steps
            answered = {r.get("tool_use_id") for r in step.tool_results or []}
            missing = [u["id"] for u in step.tool_uses() if u.get("id") not in answered]
            if missing:
                found.append(
                    Finding(
                        "missing_tool_results",
                        ERROR,
                        f"run {run.id} step {step.n}: tool_use id(s) {', '.join(missing)} have "
                        "no tool_result, so the conversation cannot be sent again",
                        command_hint(store.profile, "fork", run.id, "--from-step", step.n - 1),
                    )
                )
    return found


def recompute_totals(store: Store, run_id: str) -> Finding:
    """Set one run's totals to the sum of its steps, keeping the old ones in its event log."""
    run = store.runs.find(run_id)
    old, new = store.archive.recompute_totals(run.id)
    if old == new:
        message = f"run {run.id}: totals already equal the sum of its steps; nothing changed"
    else:
        message = (
            f"run {run.id}: totals set to the sum of its steps ({_usage(new)}); the old ones "
            f"({_usage(old)}) are in its event log"
        )
    return Finding("totals_recomputed", INFO, message, None, fixable=True, fixed=old != new)


def _usage(u: Any) -> str:
    return (
        f"{u.input_tokens} in, {u.output_tokens} out, {u.cache_creation_input_tokens} cache "
        f"write, {u.cache_read_input_tokens} cache read"
    )


# ----------------------------------------------------------------------------------- trace


def event_row(e: Event) -> dict[str, Any]:
    """An event as one row of the trace export: its fields in `TRACE_COLUMNS`' order."""
    return {column: getattr(e, column) for column in TRACE_COLUMNS}


def export_events(events: Iterable[Event], fmt: str) -> str:
    """The event log as JSON lines (one object per event) or CSV (detail as a JSON cell)."""
    if fmt not in TRACE_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(TRACE_FORMATS)}")
    rows = [event_row(e) for e in events]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=TRACE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow(r | {"detail": json.dumps(r["detail"], ensure_ascii=False)})
    return buf.getvalue()
