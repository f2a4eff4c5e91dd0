"""The order of a run's calls: start or resume it, rebuild its messages from the rows, then
call the model, commit the response, and settle the step (`dayflow.agent.step`) until the run
ends; compaction and the token budget act before a call, the failures map to a run's status."""

from __future__ import annotations

import contextlib
import os
import time
from zoneinfo import ZoneInfo

from dayflow import tools as toolbox
from dayflow import turns
from dayflow.agent import notes
from dayflow.agent.loop import BriefOptions, Loop, RunResult, Stop, kill_point
from dayflow.agent.prompt import SYSTEM_PROMPT, drafting, user_message
from dayflow.agent.step import settle
from dayflow.compaction import summary_message
from dayflow.errors import (
    DayflowError,
    LeaseLost,
    ModelError,
    RunAlreadyDone,
    SimulatedCrash,
    SourceUnavailable,
    StoreError,
    UsageError,
)
from dayflow.frozen import replace
from dayflow.models import (
    COMPLETE,
    DONE,
    FAILED,
    INTERRUPTED,
    NO_LIMITS,
    PENDING,
    STOPPED,
    Limits,
    Message,
    ModelRequest,
    Run,
    Step,
    Usage,
    estimate_tokens,
)
from dayflow.providers import LeavesMcpAlone
from dayflow.rules import RuleSet
from dayflow.sources.factory import precheck
from dayflow.store import DatabaseError, Lease, NewRun, Store
from dayflow.store.values import command_hint

KEEP_LAST = 1  # assistant/user pairs compaction never touches


def start_run(loop: Loop, options: BriefOptions) -> RunResult:
    """Create a run and drive it to its end (or to a guard, a failure or a crash)."""
    try:
        ZoneInfo(options.settings.tz)
    except Exception:
        raise UsageError(
            f"unknown timezone {options.settings.tz!r} (use an IANA name such as UTC)"
        ) from None
    # Fail on unreadable local sources before anything is written (no network here).
    precheck(*loop.sources(options.settings, options.brief_date), options.brief_date)
    settings = options.settings
    system = drafting(SYSTEM_PROMPT, settings.drafts)
    tools = toolbox.definitions(drafts=settings.drafts)
    # The user's rules, as the run keeps them (a resume sends this very system prompt).
    system += RuleSet.from_json(list(settings.rules)).prompt_section()
    if loop.mcp is not None:  # the config's MCP servers, started now (no transaction open)
        if isinstance(loop.client, LeavesMcpAlone):  # the offline model: none to start
            prepared = loop.mcp.unused(settings.config_file)
        else:
            prepared = loop.mcp.prepare(settings.config_file)
        for line in prepared.notices():
            loop.report(notes.McpNotice(line))
        system, tools, catalog = prepared.applied(system, tools)
        settings = replace(settings, mcp_tools=catalog)
    limits = options.limits.for_new_run()
    assert limits.max_steps is not None and limits.max_tokens is not None
    assert limits.task_cap is not None  # (for_new_run sets all three)
    run, lease = loop.store.runs.create(
        NewRun(
            model=options.model,
            brief_date=options.brief_date.isoformat(),
            system=system,
            tools=tools,
            user_msg=user_message(options.brief_date, options.settings.tz, options.settings.since),
            max_tokens=limits.max_tokens,
            max_steps=limits.max_steps,
            budget=limits.budget,
            task_cap=limits.task_cap,
            settings=settings,
        ),
        sole_for_day=options.sole_for_day,
    )
    return drive(loop, run, lease, resumed_from=None)


def resume_run(
    loop: Loop,
    run: Run,
    limits: Limits = NO_LIMITS,
) -> RunResult:
    """Continue `run` from its committed steps, held to `limits` from now on where given (a
    task cap is the run's own); a finished run costs nothing."""
    if run.status == DONE:
        return RunResult(run, run.final_text, calls=0, resumed_from=run.steps)
    # A step no server sends (written before answers were checked) would crash the drive.
    turns.refuse_unreadable(run, loop.store.steps.of(run.id), loop.store.profile)
    try:
        lease = loop.store.leases.claim(run.id)
    except RunAlreadyDone:  # finished by another process since we looked
        done = loop.store.runs.get(run.id)
        return RunResult(done, done.final_text, 0, done.steps, finished_elsewhere=True)
    if limits.given:
        loop.store.runs.update_limits(lease, limits)
    run = loop.store.runs.get(run.id)
    loop.store.events.add(
        run.id, "run_resumed", {"pid": os.getpid(), "steps": run.steps, "tokens": run.usage.total}
    )
    loop.report(notes.Resumed(run))
    return drive(loop, run, lease, resumed_from=run.steps)


def rebuild_messages(store: Store, run: Run) -> list[Message]:
    """The exact messages list the next call sends: the job, the newest compaction's summary
    (if any) in place of the steps it replaced, then the committed (non-pending) steps."""
    messages: list[Message] = [run.user_msg]
    after = 0
    latest = store.steps.latest_compaction(run.id)
    if latest is not None:
        after, summary = latest
        messages.append(summary)
    return messages + store.steps.conversation(run.id, after=after)


def drive(loop: Loop, run: Run, lease: Lease, resumed_from: int | None) -> RunResult:
    """Drive a run this process has claimed (`lease`) from its committed steps to its end."""
    try:
        # Where leases are short (PostgreSQL's), a heartbeat keeps this one alive for as long
        # as this process drives: through model calls and through slow reads (an IMAP server,
        # a calendar URL) alike. It dies with the process, so a dead driver's run is free.
        with loop.store.leases.keep_alive(lease):
            return _drive(loop, run, lease, resumed_from)
    finally:
        _close_sources(loop, run.id)


def _drive(loop: Loop, run: Run, lease: Lease, resumed_from: int | None) -> RunResult:
    store = loop.store
    calls = 0
    try:
        messages = rebuild_messages(store, run)
        last = store.steps.last(run.id)
        used_ids = _used_ids(store, run, messages, last)
        n = last.n if last else 0
        text: str | None = None
        if last is not None and last.state == PENDING:
            text = settle(
                loop,
                run,
                lease,
                last.n,
                last.assistant,
                last.stop_reason,
                messages,
                recovered=True,
                stop_details=last.stop_details,
            )
        while text is None:
            run = store.runs.get(run.id)
            if n >= run.max_steps:
                more = command_hint(store.profile, "resume", run.id, "--max-steps", n + 5)
                raise Stop(
                    STOPPED,
                    f"stopped by --max-steps {run.max_steps} after step {n}; "
                    f"continue with `{more}`",
                )
            messages = _maybe_compact(loop, run, lease, n, messages)
            request = ModelRequest(
                run.model, run.system, run.tools, messages, run.max_tokens, run.id, n + 1
            )
            if run.budget is not None:
                request = _within_budget(loop, run, request)
            loop.report(notes.Calling(n + 1))
            started = time.monotonic()
            try:
                # Read as what it means (a tool turn, a cut-off answer), whoever served it.
                response = turns.settle(
                    loop.client.create(request),
                    request.max_tokens,
                    used_ids=used_ids,
                    step=n + 1,
                )
            finally:
                loop.report(notes.Called(n + 1))
            calls += 1
            n += 1
            kill_point(loop, "before_pending", n)
            store.steps.begin(lease, n, response, int((time.monotonic() - started) * 1000))
            used_ids |= turns.tool_use_ids([response.content])
            kill_point(loop, "after_pending", n)
            text = settle(
                loop,
                run,
                lease,
                n,
                response.content,
                response.stop_reason,
                messages,
                stop_details=response.stop_details,
            )
    except Stop as stop:
        store.leases.release(lease, stop.status, stop.reason, stop.request_id)
        return RunResult(store.runs.get(run.id), stop.text, calls, resumed_from)
    except (ModelError, SourceUnavailable, StoreError) as exc:
        raise _failed(store, lease, run, exc) from None
    except SimulatedCrash as crash:
        store.leases.release(lease, INTERRUPTED, str(crash))
        raise
    except LeaseLost:
        raise
    except BaseException as exc:
        # Ctrl-C or a bug: leave the run resumable and say why, then let the error through.
        status = INTERRUPTED if isinstance(exc, KeyboardInterrupt) else FAILED
        try:
            store.leases.release(lease, status, _describe(exc))
        except Exception:  # pragma: no cover - the original error matters more
            pass
        raise
    final = store.runs.get(run.id)
    loop.report(notes.Finished(final, resumed=resumed_from is not None))
    return RunResult(final, text, calls, resumed_from)


def _failed(
    store: Store, lease: Lease, run: Run, exc: ModelError | SourceUnavailable | StoreError
) -> DayflowError:
    """Release the run as failed (resumable) after `exc`, and return the one-line error that
    names the run and the way on."""
    again = command_hint(store.profile, "resume", run.id)
    if isinstance(exc, ModelError):
        store.leases.release(lease, FAILED, str(exc), exc.request_id)
        return type(exc)(
            f"run {run.id} failed: {exc}; `{again}` continues it",
            status=exc.status,
            request_id=exc.request_id,
            retryable=exc.retryable,
        )
    if isinstance(exc, SourceUnavailable):
        # A read the run needs failed (a file gone before a resume, or --strict-sources): the
        # run fails, resumable, and nothing is saved for that call, so resume reads again.
        reason = f"{exc}; `{again}` reads it again"
        store.leases.release(lease, FAILED, reason)
        return SourceUnavailable(reason)
    # The store refused or could not be reached (a server restarting, a full disk): what
    # is committed stays; say so if the store still takes it, and name the way on.
    cause = exc.detail if isinstance(exc, DatabaseError) else str(exc)
    with contextlib.suppress(Exception):
        store.leases.release(lease, FAILED, f"database error: {cause}")
    return StoreError(
        f"{exc}; run {run.id} stopped: `{again}` continues it once the "
        "database can be written again"
    )


def _used_ids(store: Store, run: Run, messages: list[Message], last: Step | None) -> set[str]:
    """Every tool_use id of the run so far, which a new answer must not repeat (the API pairs
    each tool_result with one, and the saved effects are keyed by it): those of the messages
    to be sent, of a pending last step, and of the steps a compaction replaced (read only when
    there is one: a plain resume reads nothing more)."""
    sent = [m["content"] for m in messages if m["role"] == "assistant"]
    found = turns.tool_use_ids(c for c in sent if isinstance(c, list))
    if last is not None and last.state == PENDING:
        found |= turns.tool_use_ids([last.assistant])
    if store.steps.latest_compaction(run.id) is not None:
        found |= turns.tool_use_ids(s.assistant for s in store.steps.of(run.id))
    return found


def _close_sources(loop: Loop, run_id: str) -> None:
    """Log out of the sources this process opened for the run (IMAP connections)."""
    for source in loop.opened.pop(run_id, ()):
        try:
            source.close()
        except Exception:  # a connection that is gone already: nothing to close
            pass


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    return f"internal error: {type(exc).__name__}: {exc}"


def _maybe_compact(
    loop: Loop, run: Run, lease: Lease, n: int, messages: list[Message]
) -> list[Message]:
    """Compact before call `n + 1` when its estimated input passes the run's threshold."""
    threshold = run.settings.compact_at
    if threshold <= 0:
        return messages
    before = estimate_tokens([run.system, run.tools, messages])
    if before < threshold:
        return messages
    store = loop.store
    latest = store.steps.latest_compaction(run.id)
    done_through, previous = latest if latest else (0, None)
    # Only the steps since the last compaction are read and summarised: the cost of a
    # compaction does not grow with the length of the run.
    fresh = [s for s in store.steps.of(run.id, after=done_through) if s.state == COMPLETE]
    if len(fresh) <= KEEP_LAST:
        return messages  # nothing old enough to replace: the last pair is never touched
    through = fresh[-KEEP_LAST - 1].n
    summary = summary_message(
        [(s.n, s.assistant, s.tool_results or []) for s in fresh if s.n <= through], previous
    )
    preview: list[Message] = [run.user_msg, summary]
    for step in (s for s in fresh if s.n > through):
        preview.append({"role": "assistant", "content": step.assistant})
        if step.tool_results is not None:
            preview.append({"role": "user", "content": step.tool_results})
    after = estimate_tokens([run.system, run.tools, preview])
    store.steps.add_compaction(
        lease,
        before_step=n + 1,
        through_step=through,
        summary=summary,
        tokens_before=before,
        tokens_after=after,
    )
    loop.report(notes.Compacted(through, before, after))
    # Rebuild from the rows, exactly as a resume would: what is sent is what a resume sends.
    return rebuild_messages(store, run)


MIN_OUTPUT_TOKENS = 256  # below this a call could not write anything useful


def _within_budget(loop: Loop, run: Run, request: ModelRequest) -> ModelRequest:
    """The request, its max_tokens cut so that input + output cannot pass the budget; or a
    stop when too little is left. The estimate uses count_tokens where the provider has it."""
    assert run.budget is not None
    estimate = loop.client.count_tokens(request)
    if estimate is None:
        estimate = estimate_tokens([request.system, request.tools, request.messages])
    used = run.usage.total
    left = run.budget - used - estimate
    if left < MIN_OUTPUT_TOKENS:
        more = max(run.budget * 2, used + (estimate + run.max_tokens) * 2)
        hint = command_hint(loop.store.profile, "resume", run.id, "--budget", more)
        raise Stop(
            STOPPED,
            f"stopped by --budget {run.budget}: {used} tokens used, the next call needs about "
            f"{estimate} in plus its answer; continue with `{hint}`",
        )
    if left >= request.max_tokens:
        return request
    return replace(request, max_tokens=left)


def totals_from_steps(store: Store, run: Run) -> Usage:
    """The sum of the usage of every step row (the run's totals must equal it)."""
    total = Usage()
    for step in store.steps.of(run.id):
        total = total + step.usage
    return total
