"""Running the real Dayflow loop on the set: the agent, its tools and a temporary store, with the
chosen model, the set as the inbox and `calendar.json` as the calendar. What is scored is what
the run left behind: the tasks in the store (mapped back to the message each came from by its
`source_id`, or else its idempotency key), the brief it wrote, and the user's own promises its
read_followups listed under *You promised* (issue 35 part 3; by the message each is in). Only a
split whose mail carries its recipients is read with `me`, so only there can a promise be listed
(`RunOutput.me_known`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from bench.eval.dataset import BRIEF_DATE, CALENDAR, ME, TZ, EvalSet, public_id
from bench.eval.score import PredictedAction
from dayflow.agent import BriefOptions, Loop, start_run
from dayflow.errors import DayflowError
from dayflow.models import Limits, RunSettings
from dayflow.providers import ModelClient
from dayflow.shown import latest_result
from dayflow.sources.identity import json_message_stable_id, mail_key
from dayflow.store import open_store
from dayflow.tools.promises import promise_title

TASK_CAP = 1000  # the set is one morning of 227 messages: the cap must never be what stops it
MAX_STEPS = 400
# A brief over 227 messages lists well over a hundred tasks, twice (Needs action, Tasks created):
# longer than the default answer, the same allowance for every model.
MAX_TOKENS = 16_000


class EvalError(Exception):
    """A run that cannot be made (a model name without its key or server)."""


@dataclass
class RunOutput:
    model: str
    status: str
    note: str | None
    steps: int
    seconds: float
    tokens_in: int
    tokens_out: int
    brief: str
    predicted: dict[str, list[PredictedAction]]  # authored id -> tasks
    created_titles: list[str]
    unattributed: list[str] = field(default_factory=list)  # tasks naming no message of the set
    today_events: list[str] = field(default_factory=list)
    # authored id -> the promises read_followups listed from it (what, due): *You promised*
    promised: dict[str, list[PredictedAction]] = field(default_factory=dict)
    me_known: bool = False  # the run was given `me`; without it no promise can be listed


def client_for(
    model: str,
    env: Mapping[str, str],
    say: Callable[[str], None] | None = None,
    timeout: float | None = None,
) -> tuple[ModelClient, str]:
    """The client and the model name the run records: `offline`, `claude-...` (needs
    ANTHROPIC_API_KEY) or `local:NAME` (a Messages-API server at ANTHROPIC_BASE_URL, sent a
    placeholder key: the user's Anthropic key never goes to it). `say` is told of each
    retry, so a hung or failing server is never a silent wait; `timeout` is each request's
    limit in seconds (None: the CLI's, 120 for Claude and 600 for a local model)."""
    if model == "offline":
        from dayflow.providers.offline import OfflineModel

        return OfflineModel(), "offline"
    if not re.fullmatch(r"[\w.:/@+-]+", model) or "--" in model:
        # it names the section of RESULTS.md: an HTML comment that `-->` or a space would break
        raise EvalError(f"model name {model!r}: use letters, digits and . : / @ + - only")
    base_url = env.get("ANTHROPIC_BASE_URL") or None
    if model.startswith("local:"):
        from dayflow.providers import local

        name = model.removeprefix("local:")
        if not name or not base_url:
            raise EvalError("--model local:NAME needs a model name and ANTHROPIC_BASE_URL")
        if local.host_of(base_url) is None:
            raise EvalError(f"ANTHROPIC_BASE_URL {base_url!r} is not an http(s) URL with a host")
        wait = timeout or local.LOCAL_TIMEOUT
        return local.make_client(local.base_of(base_url), timeout=wait, on_retry=say), name
    if model.startswith("claude-"):
        from dayflow.providers.anthropic import make_client

        key = env.get("ANTHROPIC_API_KEY")
        if not key:
            raise EvalError(f"--model {model} needs ANTHROPIC_API_KEY")
        limit = {"timeout": timeout} if timeout else {}
        return make_client(key, base_url, on_retry=say, **limit), model
    raise EvalError(f"unknown model {model!r}: use offline, claude-... or local:NAME")


def without_resume(text: str) -> str:
    """A run's failure or stop reason without its `dayflow resume RUN` hint: the eval's store
    is temporary, so there is no run to resume (the eval is simply run again)."""
    text = re.sub(r"^run \w+ failed: ", "", text)
    return re.sub(r"[;,]? *\(?`dayflow resume \w+`[^;)]*\)?", "", text).strip()


def run(evalset: EvalSet, client: ModelClient, model: str) -> RunOutput:
    """One brief over the whole set, in a temporary directory that is removed after."""
    with tempfile.TemporaryDirectory(prefix="dayflow-eval-") as tmp:
        inbox = Path(tmp) / "inbox.json"
        inbox.write_text(json.dumps(evalset.inbox(), ensure_ascii=False), encoding="utf-8")
        settings = RunSettings(tz=TZ, inbox=str(inbox), calendar=str(CALENDAR))
        me_known = any("to" in m or "cc" in m for m in evalset.messages)
        if me_known:
            # A split whose mail carries its recipients (the precision split) is read as a
            # config file's source with `me` (GUIDE.md's mailbox), as a user's config gives it:
            # that is what tells a message the reader is only copied on. The other splits
            # carry none, so `me` would tell them nothing, and would move a reply the reader
            # owes from Needs action to You owe replies, which their labels count as tasks.
            # Without `me` no message is the user's own, so such a run lists no promise and
            # its commitments are scored on tasks alone (GUIDE.md, "How commitments are scored").
            config = Path(tmp) / "config.toml"
            config.write_text(
                f'me = [{json.dumps(ME)}]\n\n[[inbox]]\nname = "inbox"\nkind = "json"\n'
                f"path = {json.dumps(str(inbox))}\n",
                encoding="utf-8",
            )
            settings = RunSettings(
                tz=TZ,
                calendar=str(CALENDAR),
                sources={"config": str(config), "inbox": ["inbox"], "calendar": []},
                config=str(config),
            )
        with open_store(Path(tmp) / "eval.db") as store:
            options = BriefOptions(
                brief_date=BRIEF_DATE,
                model=model,
                limits=Limits(max_steps=MAX_STEPS, max_tokens=MAX_TOKENS, task_cap=TASK_CAP),
                settings=settings,
            )
            started = time.perf_counter()
            try:
                result = start_run(Loop(store, client), options)
            except DayflowError as exc:  # the model failed (connection, HTTP error, refusal)
                raise EvalError(f"the model failed: {without_resume(str(exc))}") from None
            seconds = time.perf_counter() - started
            tasks = store.tasks.list(include_done=True)
            followups = latest_result(store.steps.conversation(result.run.id), "read_followups")
    by_public = evalset.by_public_id()
    by_key = {
        mail_key(json_message_stable_id(m)): by_public[m["id"]] for m in evalset.inbox()["messages"]
    }
    predicted: dict[str, list[PredictedAction]] = {}
    unattributed = []
    for task in tasks:
        source = (task.source_id or "").rsplit(":", 1)[-1]
        mid = by_public.get(source) or by_key.get(task.idempotency_key.split("#", 1)[0])
        if mid is None:
            unattributed.append(task.title)
            continue
        predicted.setdefault(mid, []).append(PredictedAction(task.title, task.due))
    for found in predicted.values():  # the store's order of one message's tasks is not fixed
        found.sort(key=lambda p: (p.title, p.due or ""))
    promised = _promised(followups, by_public)
    run_ = result.run
    return RunOutput(
        model=model,
        status=run_.status,
        note=without_resume(run_.reason) if run_.reason else None,
        steps=run_.steps,
        seconds=seconds,
        tokens_in=run_.usage.total_input,
        tokens_out=run_.usage.output_tokens,
        brief=result.text or "",
        predicted=predicted,
        created_titles=[t.title for t in tasks],
        unattributed=unattributed,
        today_events=today_events(),
        promised=promised,
        me_known=me_known,
    )


def _promised(followups: object, by_public: Mapping[str, str]) -> dict[str, list[PredictedAction]]:
    """The promises of read_followups' `you_promised` (what the brief's *You promised* lists),
    by the authored id of the message each is in; one naming no message of the set is left
    out (it cannot be scored)."""
    listed = followups.get("you_promised") if isinstance(followups, dict) else None
    out: dict[str, list[PredictedAction]] = {}
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, dict):
            continue
        mid = by_public.get(str(item.get("id") or "").rsplit(":", 1)[-1])
        due = item.get("due")
        if mid is not None:
            what = promise_title(item)  # as `tasks add --from promise:KEY` would file it
            out.setdefault(mid, []).append(
                PredictedAction(what, due if isinstance(due, str) else None)
            )
    for found in out.values():
        found.sort(key=lambda p: (p.title, p.due or ""))
    return out


def today_events(path: Path = CALENDAR) -> list[str]:
    """The titles of the calendar's events that fall on the brief's day, in its timezone."""
    zone = ZoneInfo(TZ)
    events = json.loads(path.read_text(encoding="utf-8"))["events"]
    out = []
    for event in events:
        start = dt.datetime.fromisoformat(event["start"]).astimezone(zone)
        end = dt.datetime.fromisoformat(event["end"]).astimezone(zone)
        if start.date() <= BRIEF_DATE <= end.date():
            out.append(event["title"])
    return out


__all__ = ["EvalError", "RunOutput", "client_for", "public_id", "run", "without_resume"]
