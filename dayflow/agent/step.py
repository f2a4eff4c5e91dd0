"""What a committed response leads to: its tool calls run (or their saved results reused),
the step completed, and on the last turn the brief checked, delivered and the run ended."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from dayflow import delivery as delivery_
from dayflow import drafts as drafts_
from dayflow import tools as toolbox
from dayflow import turns
from dayflow.agent import notes
from dayflow.agent.loop import Loop, Stop, after_step, kill_point
from dayflow.followups import Me
from dayflow.mcp.calls import caller as mcp_caller
from dayflow.models import COMPLETE, FAILED, STOPPED, Message, Run
from dayflow.page import page_of_run, update_label
from dayflow.rules import RuleSet
from dayflow.shown import Shown, shown_in
from dayflow.sources import as_calendar
from dayflow.store import Lease, Store
from dayflow.store.values import command_hint


def settle(
    loop: Loop,
    run: Run,
    lease: Lease,
    n: int,
    assistant: list[dict[str, Any]],
    stop_reason: str,
    messages: list[Message],
    *,
    recovered: bool = False,
    stop_details: dict[str, Any] | None = None,
) -> str | None:
    """Finish step `n` whose response is committed; return the brief if the run is done."""
    store = loop.store
    uses = [b for b in assistant if b.get("type") == "tool_use"]
    loop.report(
        notes.StepRead(
            n, stop_reason, uses, recovered=recovered, read_as=turns.reinterpreted(stop_details)
        )
    )
    if stop_reason == "tool_use" and uses:
        results, events, effects = run_tools(loop, run, lease, n, uses, recovered)
        kill_point(loop, "after_tools", n)
        store.steps.complete(lease, n, results, events=events, effects=effects)
        messages.append({"role": "assistant", "content": assistant})
        messages.append({"role": "user", "content": results})
        after_step(loop, n)
        return None
    if stop_reason == "pause_turn":
        # The API paused a long turn: send it back unchanged, with no new user turn.
        store.steps.complete(lease, n, None)
        messages.append({"role": "assistant", "content": assistant})
        after_step(loop, n)
        return None
    if stop_reason in ("end_turn", "stop_sequence", "tool_use"):
        text = "\n\n".join(b["text"] for b in assistant if b.get("type") == "text").strip()
        if not text:
            # An empty turn is not a brief: keep it for the record, never send it again.
            store.steps.complete(lease, n, None, discard=True)
            raise Stop(
                STOPPED,
                f"the model ended step {n} without writing the brief; "
                f"`{command_hint(store.profile, 'resume', run.id)}` asks again",
            )
        if not _grounded(store, run, n):
            # A brief written without reading anything is made up, however real it looks.
            store.steps.complete(lease, n, None, discard=True)
            raise Stop(
                STOPPED,
                f"the model wrote a brief at step {n} without calling a tool to read the "
                "inbox, calendar or tasks: it is not grounded, so it is kept but not shown; "
                f"`{command_hint(store.profile, 'resume', run.id)}` asks again (`dayflow doctor "
                "--model` checks that "
                "the model can call tools)",
            )
        _finish(loop, run, lease, n, text)
        return text
    if stop_reason in ("max_tokens", "model_context_window_exceeded"):
        store.steps.complete(lease, n, None, discard=True)
        more = command_hint(store.profile, "resume", run.id, "--max-tokens", run.max_tokens * 2)
        raise Stop(
            STOPPED,
            f"the model's turn at step {n} was cut short ({stop_reason}); it is kept but "
            f"not sent again; `{more}` "
            "asks again",
        )
    # A refusal (or anything unknown) is kept for the record but never sent back: resuming
    # asks the model again from the turn before it.
    store.steps.complete(lease, n, None, discard=True)
    if stop_reason == "refusal":
        raise Stop(FAILED, f"the model declined at step {n}: {_refusal(assistant, stop_details)}")
    raise Stop(FAILED, f"unexpected stop_reason {stop_reason!r} at step {n}")


def _finish(loop: Loop, run: Run, lease: Lease, n: int, text: str) -> None:
    """End the run with its brief `text` at step `n`, delivered to the sinks it names."""
    note = _cap_note(loop.store, run)
    sinks = list(run.settings.deliver)
    if sinks:
        note = _join(note, _deliver(loop, run, lease, n, text, sinks))
    loop.store.steps.complete(lease, n, None, final_text=text, note=note)


def _deliver(loop: Loop, run: Run, lease: Lease, n: int, text: str, sinks: list[str]) -> str | None:
    """Deliver the brief of final step `n` to each sink not yet delivered to (see
    dayflow.delivery); a failed sink stops the run resumably. Returns a note on uncertain
    deliveries, if any."""
    conversation = loop.store.steps.conversation(run.id)
    report = delivery_.deliver_all(
        sinks,
        delivery_.Brief(
            run.id,
            run.brief_date,
            text,
            links=shown_in(conversation).urls,
            label=update_label(run),
            page=page_of_run(conversation, run, text, _filed(loop.store)),
        ),
        _StepEffects(loop.store, lease, n),
        loop.delivery(),
        kill=lambda point: kill_point(loop, point, n),
    )
    for line in report.delivered:
        loop.report(notes.Delivered(line))
    for line in report.uncertain:  # said where the user looks, not only in `show`
        loop.report(notes.Uncertain(line))
    if report.failed:
        raise Stop(
            FAILED,
            f"delivery failed: {'; '.join(report.failed)}; the brief is written, and "
            f"`{command_hint(loop.store.profile, 'resume', run.id)}` delivers it",
            text=text,
        )
    return "; ".join(report.uncertain) or None


def _filed(store: Store) -> dict[str, Any]:
    """The profile's tasks by id: the page's evidence quotes (`dayflow.page.page_of`)."""
    return {t.id: t for t in store.tasks.list(include_done=True)}


class _StepEffects:
    """The saved effects of one step of a run, as dayflow.delivery reads and writes them."""

    def __init__(
        self, store: Store, lease: Lease, n: int, name: str = delivery_.EFFECT_NAME
    ) -> None:
        self.store, self.lease, self.n, self.name = store, lease, n, name

    def get(self, key: str) -> tuple[str, bool] | None:
        saved = self.store.steps.get_effect(self.lease.run_id, key)
        return None if saved is None else (saved.content, saved.is_error)

    def save(self, key: str, content: str, is_error: bool = False) -> None:
        self.store.steps.save_effect(
            self.lease, self.n, key, self.name, lambda: (content, is_error)
        )


def _drafter(loop: Loop, run: Run, lease: Lease, n: int, inbox: Any) -> drafts_.Drafter:
    """What step `n`'s draft_reply calls write through (dayflow.drafts): the run's drafts
    folders, the step's saved marks and the profile's other runs' marks."""
    feed = getattr(inbox, "followups", None)
    return drafts_.Drafter(
        getattr(inbox, "drafts", {}),
        _StepEffects(loop.store, lease, n, drafts_.EFFECT_NAME),
        lambda keys: loop.store.steps.marks_elsewhere(run.id, keys),
        run.id,
        me=feed.me if feed is not None else Me(),
        kill=lambda point: kill_point(loop, point, n),
        now=loop.store.clock.now,
        warn=lambda line: loop.report(notes.DraftWarning(line)),
    )


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _refusal(assistant: list[dict[str, Any]], details: dict[str, Any] | None) -> str:
    parts = []
    if details:
        parts += [str(details[k]) for k in ("category", "explanation") if details.get(k)]
    text = " ".join(b.get("text", "") for b in assistant if b.get("type") == "text").strip()
    if text:
        parts.append(text[:200])
    return ": ".join(parts) or "no explanation given"


def _grounded(store: Store, run: Run, n: int) -> bool:
    """Whether a step of `run` before `n` called a tool that reads the user's world (its
    results were sent to the model: the step is complete)."""
    return any(
        s.n < n and s.state == COMPLETE and turns.calls_a_read(s.assistant)
        for s in store.steps.of(run.id)
    )


def _cap_note(store: Store, run: Run) -> str | None:
    """Say so when the run hit its task cap, so `runs` shows it."""
    refused = store.steps.count_refused(run.id, "create_task", toolbox.TaskCapReached.refusal)
    if not refused:
        return None
    return f"task cap {run.task_cap} reached: {refused} create_task call(s) refused"


def _say(loop: Loop) -> Callable[[str], None]:
    return lambda line: loop.report(notes.McpNotice(line))


def run_tools(
    loop: Loop, run: Run, lease: Lease, n: int, uses: list[dict[str, Any]], recovered: bool
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]], bool]:
    """The tool_result blocks of step `n`, the events its calls leave for `steps.complete`, and
    whether any call saved an effect. Only a step being recovered can have saved effects."""
    store = loop.store
    if run.id not in loop.opened:
        given, cal = loop.sources(run.settings, date.fromisoformat(run.brief_date))
        loop.opened[run.id] = (given, as_calendar(cal))
    inbox, calendar = loop.opened[run.id]
    seen: list[Shown] = []

    def shown() -> Shown:  # the committed steps' record, read once per step when asked
        if not seen:
            seen.append(shown_in(store.steps.conversation(run.id)))
        return seen[0]

    env = toolbox.ToolEnv(
        tasks=store.tasks,
        run_id=run.id,
        inbox=inbox,
        calendar=calendar,
        brief_date=date.fromisoformat(run.brief_date),
        tz=ZoneInfo(run.settings.tz),
        task_cap=run.task_cap,
        shown=shown,
        mcp=mcp_caller(store, lease, run.settings, loop.mcp, _say(loop)),
        rules=RuleSet.from_json(list(run.settings.rules)),
        drafts=_drafter(loop, run, lease, n, inbox) if run.settings.drafts else None,
        earlier=lambda: toolbox.earlier_brief(store, run),
    )
    saved = store.steps.effects_of_step(run.id, n) if recovered else {}
    effects = bool(saved)
    results: list[dict[str, Any]] = []
    events: list[tuple[str, dict[str, Any]]] = []
    for i, use in enumerate(uses):
        name, args, use_id = use.get("name", ""), use.get("input"), use["id"]
        found = saved.get(use_id)
        if found is not None:
            events.append(("tool_reused", {"step": n, "tool": name, "key": use_id}))
            content, is_error = found.content, found.is_error
            loop.report(notes.ToolCalled(name, args, reused=True))
        else:
            out = toolbox.execute(store, lease, n, env, i, name, args, use_id)
            content, is_error = out.content, out.is_error
            if out.saved:
                effects = True
            else:
                events.append(("tool_executed", {"step": n, "tool": name, "ok": not is_error}))
            loop.report(notes.ToolCalled(name, args, reused=False, error=is_error))
            if i == 0 and len(uses) > 1:
                kill_point(loop, "between_tools", n)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use_id, "content": content}
        if is_error:
            block["is_error"] = True
        results.append(block)
    return results, events, effects
