from __future__ import annotations

import copy
import json
from datetime import date
from typing import Any

import pytest

from dayflow.agent import (
    SYSTEM_PROMPT,
    BriefOptions,
    Hooks,
    Loop,
    rebuild_messages,
    resume_run,
    start_run,
    totals_from_steps,
)
from dayflow.agent.driver import MIN_OUTPUT_TOKENS
from dayflow.agent.prompt import user_message
from dayflow.errors import ModelError, SimulatedCrash
from dayflow.models import (
    DEFAULT_TASK_CAP,
    DONE,
    FAILED,
    INTERRUPTED,
    STOPPED,
    Limits,
    ModelRequest,
    Run,
    RunSettings,
    Usage,
    estimate_tokens,
)
from dayflow.store import Store, open_store
from dayflow.tools import MAX_TOOL_CALLS_PER_TURN, definitions
from tests.scripted import ScriptedModel, seed_turns, text, tool_use, turn

OPTIONS = BriefOptions(
    brief_date=date(2026, 11, 5), model="scripted", settings=RunSettings(tz="UTC")
)
# A read before the brief: a brief written without one is refused as not grounded.
READ = tool_use("read_tasks", {"include_done": False})


def _crash_after_two(store: Store) -> tuple[ScriptedModel, str]:
    model = ScriptedModel(seed_turns())
    with pytest.raises(SimulatedCrash, match="simulated crash after step 2"):
        start_run(Loop(store, model, hooks=Hooks(crash_after=2)), OPTIONS)
    run = store.runs.list()[0]
    return model, run.id


def test_crash_after_step_2_never_makes_the_third_call(store: Store) -> None:
    model, run_id = _crash_after_two(store)
    assert model.calls == 2
    run = store.runs.get(run_id)
    assert run.status == INTERRUPTED and run.steps == 2
    assert run.usage == Usage(1200 + 2758, 180 + 535)


def test_resume_makes_exactly_one_call_after_crash_at_step_2(store: Store) -> None:
    first, run_id = _crash_after_two(store)
    fresh = ScriptedModel(seed_turns()[2:])
    result = resume_run(Loop(store, fresh), store.runs.get(run_id))
    assert fresh.calls == 1
    assert result.calls == 1 and result.resumed_from == 2
    assert result.run.status == DONE and result.run.steps == 3
    assert result.text is not None and result.text.startswith("## Today")
    assert result.run.usage == totals_from_steps(store, result.run)
    assert result.run.usage == Usage(1200 + 2758 + 3406, 180 + 535 + 582)


def test_resume_sends_exactly_the_messages_the_live_run_built(store: Store, tmp_path: Any) -> None:
    live = ScriptedModel(seed_turns())
    start_run(Loop(store, live), OPTIONS)

    other = open_store(tmp_path / "other.db")
    crashed = ScriptedModel(seed_turns())
    with pytest.raises(SimulatedCrash):
        start_run(Loop(other, crashed, hooks=Hooks(crash_after=2)), OPTIONS)
    crashed_id = other.runs.list()[0].id
    # Each script has its own tool_use ids and task ids, so compare all but those.
    fresh = ScriptedModel(seed_turns()[2:])
    resume_run(Loop(other, fresh), other.runs.get(crashed_id))
    resumed_request = fresh.requests[0]
    live_third = live.requests[2]
    assert resumed_request.system == live_third.system == SYSTEM_PROMPT
    assert resumed_request.tools == live_third.tools == definitions()
    assert resumed_request.model == live_third.model
    assert _shape(resumed_request.messages) == _shape(live_third.messages)
    other.close()


def test_rebuilt_messages_equal_the_list_sent_value_for_value(store: Store) -> None:
    model = ScriptedModel(seed_turns())
    result = start_run(Loop(store, model), OPTIONS)
    sent_last = model.requests[-1].messages
    rebuilt = rebuild_messages(store, result.run)
    # The rebuilt list is the last request plus the final assistant turn.
    assert rebuilt[:-1] == sent_last
    assert rebuilt[-1]["role"] == "assistant"
    assert json.dumps(rebuilt[:-1]) == json.dumps(sent_last)


def _shape(messages: list[dict[str, Any]]) -> list[Any]:
    out: list[tuple[str, Any]] = []
    for m in messages:
        if isinstance(m["content"], str):
            out.append((m["role"], m["content"]))
            continue
        blocks = []
        for b in m["content"]:
            b = {k: v for k, v in b.items() if k not in ("id", "tool_use_id")}
            if b.get("type") == "tool_result":
                payload = json.loads(b["content"])
                if "task" in payload:  # task ids differ between runs
                    payload["task"] = {k: payload["task"][k] for k in ("title", "idempotency_key")}
                b["content"] = payload
            blocks.append(b)
        out.append((m["role"], blocks))
    return out


def test_resuming_a_finished_run_makes_no_model_call(store: Store) -> None:
    result = start_run(Loop(store, ScriptedModel(seed_turns())), OPTIONS)
    again = ScriptedModel([])
    second = resume_run(Loop(store, again), store.runs.get(result.run.id))
    assert again.calls == 0 and second.text == result.text


def test_reads_are_not_rerun_and_tasks_exist_once_after_resume(store: Store) -> None:
    _, run_id = _crash_after_two(store)
    resume_run(Loop(store, ScriptedModel(seed_turns()[2:])), store.runs.get(run_id))
    kinds = [e.kind for e in store.events.of(run_id)]
    assert kinds.count("tool_executed") == 6  # 4 reads + 2 creates, each exactly once
    assert kinds.count("run_resumed") == 1
    assert [t.idempotency_key for t in store.tasks.list()] == ["sample:m12", "sample:m02"]


def test_pending_step_is_finished_on_resume_without_calling_the_model(store: Store) -> None:
    """A response committed before its tools ran is not paid for again."""
    model = ScriptedModel(seed_turns())
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, model.turns[0], 5)
    store.db.execute("UPDATE runs SET lease_token = NULL WHERE id = ?", (run.id,))
    fresh = ScriptedModel(seed_turns()[1:])
    result = resume_run(Loop(store, fresh), store.runs.get(run.id))
    assert fresh.calls == 2  # steps 2 and 3 only
    assert result.run.status == DONE and result.run.steps == 3
    first_request = fresh.requests[0]
    assert first_request.messages[1]["content"] == model.turns[0].content
    assert [b["type"] for b in first_request.messages[2]["content"]] == ["tool_result"] * 4


def _new_run() -> Any:
    from dayflow.agent import user_message
    from dayflow.store import NewRun

    return NewRun(
        model="scripted",
        brief_date="2026-11-05",
        system=SYSTEM_PROMPT,
        tools=definitions(),
        user_msg=user_message(date(2026, 11, 5), "UTC"),
        max_tokens=1024,
        max_steps=12,
        budget=None,
        task_cap=20,
        settings=RunSettings(tz="UTC"),
    )


def test_saved_effect_is_reused_not_executed_again(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    create = tool_use("create_task", {"title": "A", "idempotency_key": "k1"}, "toolu_a")
    read = tool_use("read_tasks", {"include_done": True}, "toolu_b")
    store.steps.begin(lease, 1, turn(create, read), 1)
    # As if killed between the two tool calls: the first effect is saved, the second is not.
    store.steps.save_effect(
        lease,
        1,
        "toolu_a",
        "create_task",
        lambda: (json.dumps({"task": {"id": "t_x"}, "created": True}), False),
        "k1",
    )
    store.db.execute("UPDATE runs SET lease_token = NULL WHERE id = ?", (run.id,))
    resume_run(Loop(store, ScriptedModel([turn(text("done"))])), store.runs.get(run.id))
    kinds = [(e.kind, e.detail.get("tool")) for e in store.events.of(run.id)]
    assert ("tool_reused", "create_task") in kinds
    assert ("tool_executed", "read_tasks") in kinds
    assert store.tasks.list() == []  # the saved result was reused; the tool did not run again


def test_same_idempotency_key_twice_gives_one_task(store: Store) -> None:
    args = {"title": "Pay invoice", "idempotency_key": "model:m05"}
    model = ScriptedModel(
        [
            turn(tool_use("create_task", args), tool_use("create_task", dict(args, title="X"))),
            turn(text("## Today\nnothing")),
        ]
    )
    start_run(Loop(store, model), OPTIONS)
    results = model.requests[1].messages[-1]["content"]
    payloads = [json.loads(r["content"]) for r in results]
    assert [p["created"] for p in payloads] == [True, False]
    assert payloads[0]["task"]["id"] == payloads[1]["task"]["id"]
    assert len(store.tasks.list()) == 1


def test_bad_tool_calls_get_error_results_and_the_run_goes_on(store: Store) -> None:
    model = ScriptedModel(
        [
            turn(
                tool_use("read_inbox", {"limit": "twenty"}),
                tool_use("read_inbox", {}),
                tool_use("delete_everything", {}),
                tool_use("read_calendar", {"range": "month"}),
                tool_use("create_task", {"title": "x" * 5000, "idempotency_key": "k"}),
                tool_use("create_task", {"title": "ok", "idempotency_key": "k2", "due": "soon"}),
                tool_use("read_inbox", {"limit": 2, "extra": 1}),
            ),
            turn(text("brief")),
        ]
    )
    result = start_run(Loop(store, model), OPTIONS)
    assert result.run.status == DONE
    results = model.requests[1].messages[-1]["content"]
    assert all(r.get("is_error") for r in results)
    messages = [r["content"] for r in results]
    assert "'limit' must be an integer" in messages[0]
    assert "'limit' is required" in messages[1]
    assert "unknown tool 'delete_everything'" in messages[2]
    assert "must be one of" in messages[3]
    assert "too long" in messages[4]
    assert "YYYY-MM-DD" in messages[5]
    assert "unknown argument(s): extra" in messages[6]
    assert store.tasks.list() == []


def test_two_hundred_tool_calls_in_one_turn_are_capped(store: Store) -> None:
    calls = [
        tool_use("create_task", {"title": f"T{i}", "idempotency_key": f"model:spam:{i}"})
        for i in range(200)
    ]
    model = ScriptedModel([turn(READ), turn(*calls), turn(text("brief"))])
    result = start_run(Loop(store, model), OPTIONS)
    assert result.run.status == DONE
    results = model.requests[2].messages[-1]["content"]
    assert len(results) == 200  # one result per tool_use id, as the API requires
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    cap = DEFAULT_TASK_CAP  # OPTIONS gives none
    assert sum(1 for r in results if not r.get("is_error")) == cap
    assert len(store.tasks.list()) == cap <= MAX_TOOL_CALLS_PER_TURN


def test_task_cap_holds_across_turns(store: Store) -> None:
    def spam(start: int) -> Any:
        return turn(
            *[
                tool_use("create_task", {"title": "t", "idempotency_key": f"model:k{start + i}"})
                for i in range(10)
            ]
        )

    model = ScriptedModel([spam(0), spam(10), spam(20), turn(text("brief"))])
    start_run(
        Loop(store, model), BriefOptions(brief_date=date(2026, 11, 5), limits=Limits(task_cap=15))
    )
    assert len(store.tasks.list()) == 15


def test_max_steps_stops_the_run_and_resume_with_more_finishes_it(store: Store) -> None:
    model = ScriptedModel(seed_turns())
    opts = BriefOptions(brief_date=date(2026, 11, 5), limits=Limits(max_steps=2))
    result = start_run(Loop(store, model), opts)
    assert result.run.status == STOPPED and "--max-steps 2" in (result.run.reason or "")
    assert model.calls == 2
    fresh = ScriptedModel(seed_turns()[2:])
    done = resume_run(Loop(store, fresh), result.run, Limits(max_steps=5))
    assert done.run.status == DONE and fresh.calls == 1


def test_budget_stops_before_a_call_that_would_pass_it(store: Store) -> None:
    model = ScriptedModel(seed_turns())
    # Room for the first request (the system prompt, the tools, the first turn) and a short
    # answer, not for a second call: counted from the prompt, so a longer prompt keeps it so.
    day = date(2026, 11, 5)
    first = estimate_tokens([SYSTEM_PROMPT, definitions(), [user_message(day, "UTC")]])
    budget = first + MIN_OUTPUT_TOKENS + 100
    opts = BriefOptions(brief_date=day, limits=Limits(budget=budget))
    result = start_run(Loop(store, model), opts)
    assert result.run.status == STOPPED
    assert f"--budget {budget}" in (result.run.reason or "")
    assert result.run.usage.total <= budget
    assert model.calls == 1


def _failing_at_the_second_call(error: BaseException) -> ScriptedModel:
    """The seed turns, except that the second model call raises `error`."""
    turns = seed_turns()

    def respond(request: ModelRequest) -> Any:
        if len(model.requests) == 2:
            raise error
        return turns[len(model.requests) - 1]

    model = ScriptedModel(fn=respond)
    return model


def _fails_then_resumes(store: Store, error: BaseException) -> Run:
    """A run whose second model call raises `error`: the error reaches the caller, and a resume
    finishes the run in three steps. Returns the run as the error left it."""
    with pytest.raises(type(error)):
        start_run(Loop(store, _failing_at_the_second_call(error)), OPTIONS)
    run = store.runs.list()[0]
    done = resume_run(Loop(store, ScriptedModel(seed_turns()[1:])), run)
    assert done.run.status == DONE and done.run.steps == 3
    return run


def test_model_error_marks_run_failed_and_resume_continues(store: Store) -> None:
    error = ModelError("API 529 overloaded", status=529, request_id="req_9", retryable=True)
    run = _fails_then_resumes(store, error)
    assert run.status == FAILED and run.request_id == "req_9" and run.steps == 1


def test_max_tokens_is_not_taken_as_a_finished_brief(store: Store) -> None:
    model = ScriptedModel([turn(text("## Today\n- 09:"), stop="max_tokens")])
    result = start_run(Loop(store, model), OPTIONS)
    assert result.run.status == STOPPED and result.run.final_text is None
    assert "cut short" in (result.run.reason or "")
    again = ScriptedModel([turn(READ), turn(text("## Today\nall good"))])
    done = resume_run(Loop(store, again), result.run)
    assert done.run.status == DONE and done.text == "## Today\nall good"
    # The cut turn is kept for the record but never sent again.
    assert [m["role"] for m in again.requests[0].messages] == ["user"]
    assert [s.state for s in store.steps.of(done.run.id)] == ["discarded", "complete", "complete"]


def test_refusal_fails_the_run_with_the_reason(store: Store) -> None:
    model = ScriptedModel([turn(text("I can't help with that."), stop="refusal")])
    result = start_run(Loop(store, model), OPTIONS)
    assert result.run.status == FAILED
    assert "declined" in (result.run.reason or "") and result.run.final_text is None


def test_pause_turn_is_sent_back_unchanged_without_a_user_turn(store: Store) -> None:
    paused = turn(text("Working on it"), stop="pause_turn")
    model = ScriptedModel([turn(READ), paused, turn(text("## Today\nok"))])
    result = start_run(Loop(store, model), OPTIONS)
    assert result.run.status == DONE
    second = model.requests[2].messages
    assert second[-1] == {"role": "assistant", "content": paused.content}


def test_stored_request_prefix_is_used_on_resume_even_after_an_upgrade(store: Store) -> None:
    _, run_id = _crash_after_two(store)
    store.db.execute(
        "UPDATE runs SET system = 'old prompt', tools_json = '[]' WHERE id = ?", (run_id,)
    )
    fresh = ScriptedModel(seed_turns()[2:])
    resume_run(Loop(store, fresh), store.runs.get(run_id))
    assert fresh.requests[0].system == "old prompt" and fresh.requests[0].tools == []


def test_live_requests_are_not_mutated_by_later_steps(store: Store) -> None:
    model = ScriptedModel(seed_turns())
    start_run(Loop(store, model), OPTIONS)
    first = copy.deepcopy(model.requests[0].messages)
    assert len(first) == 1 and first[0]["role"] == "user"


def test_ctrl_c_leaves_the_run_interrupted_and_resumable(store: Store) -> None:
    run = _fails_then_resumes(store, KeyboardInterrupt())
    assert run.status == INTERRUPTED and run.reason == "interrupted (Ctrl-C)" and run.steps == 1


def test_a_step_is_two_transactions_plus_one_per_local_effect(store: Store) -> None:
    """Step 1 makes four reads, step 2 creates two tasks, step 3 writes the brief: the reads
    are committed with their step, each task with its own saved result."""
    model = ScriptedModel(seed_turns())
    seen: list[int] = []

    class Counting:
        def create(self, request: ModelRequest) -> Any:
            seen.append(store.db.transactions)
            return model.create(request)

        def count_tokens(self, request: ModelRequest) -> int | None:
            return None

    result = start_run(Loop(store, Counting()), OPTIONS)  # type: ignore[arg-type]
    seen.append(store.db.transactions)
    steps = store.steps.of(result.run.id)
    assert result.run.status == DONE and [len(s.tool_uses()) for s in steps] == [4, 2, 0]
    assert [b - a for a, b in zip(seen, seen[1:], strict=False)] == [2, 2 + 2, 2]


def test_a_brief_after_only_creating_tasks_is_refused_as_not_grounded(store: Store) -> None:
    """Calling create_task is not reading: the brief must follow a read of the inbox, the
    calendar or the tasks, else it is made up (kept, not shown, the run resumable)."""
    create = tool_use("create_task", {"title": "Pay rent", "idempotency_key": "model:rent"})
    model = ScriptedModel([turn(create), turn(text("## Today\nPay rent"))])
    result = start_run(Loop(store, model), OPTIONS)
    assert result.run.status == STOPPED and result.text is None
    assert "not grounded" in (result.run.reason or "")
    assert [s.state for s in store.steps.of(result.run.id)] == ["complete", "discarded"]
    again = ScriptedModel([turn(READ), turn(text("## Today\nPay rent"))])
    done = resume_run(Loop(store, again), store.runs.get(result.run.id))
    assert done.run.status == DONE and done.text == "## Today\nPay rent"


def test_a_key_the_run_was_shown_before_a_crash_is_accepted_after_resume(store: Store) -> None:
    """What a run was shown is read from its committed steps, not from memory: a new process
    that resumes after step 1 accepts the key step 1 listed (and still refuses others)."""
    first = ScriptedModel([turn(tool_use("read_inbox", {"limit": 20}))])
    with pytest.raises(SimulatedCrash):
        start_run(Loop(store, first, hooks=Hooks(crash_after=1)), OPTIONS)
    (run,) = store.runs.list()
    second = ScriptedModel(
        [
            turn(
                tool_use(
                    "create_task",
                    {
                        "title": "Edits",
                        "idempotency_key": "sample:m12",
                        "evidence": "send me your edits",
                    },
                ),
                tool_use("create_task", {"title": "No", "idempotency_key": "sample:m99"}),
            ),  # fmt: skip
            turn(text("## Today\nok")),
        ]
    )
    resumed = resume_run(Loop(store, second), store.runs.get(run.id))
    assert resumed.run.status == DONE
    results = second.requests[1].messages[-1]["content"]
    assert [bool(r.get("is_error")) for r in results] == [False, True]
    assert [t.idempotency_key for t in store.tasks.list()] == ["sample:m12"]


def test_one_limits_value_fills_a_new_runs_defaults_and_a_resume_keeps_the_rest(
    store: Store,
) -> None:
    """Issue 33.1: a new run takes the defaults where a limit is not given; a resume writes
    only the limits it is given (the run's task cap and output tokens stay its own)."""
    from dayflow.models import DEFAULT_MAX_STEPS, DEFAULT_MAX_TOKENS

    assert Limits(budget=5).for_new_run() == Limits(
        DEFAULT_MAX_STEPS, 5, DEFAULT_MAX_TOKENS, DEFAULT_TASK_CAP
    )
    assert not Limits(task_cap=3).given and Limits(max_tokens=9).given
    opts = BriefOptions(brief_date=date(2026, 11, 5), limits=Limits(max_steps=1, task_cap=7))
    stopped = start_run(Loop(store, ScriptedModel(seed_turns())), opts).run
    assert stopped.limits == Limits(1, None, DEFAULT_MAX_TOKENS, 7)
    done = resume_run(Loop(store, ScriptedModel(seed_turns()[1:])), stopped, Limits(max_steps=9))
    assert done.run.limits == Limits(9, None, DEFAULT_MAX_TOKENS, 7)
