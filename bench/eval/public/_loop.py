"""One brief by the real loop over a public data set's messages (and events), with the offline
model, in a temporary directory; what it left behind: the tasks (with their evidence), the
Markdown brief, its HTML page and every tool call the model made."""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.eval.dataset import TZ
from dayflow.agent import BriefOptions, Loop, start_run
from dayflow.models import Limits, RunSettings, Task
from dayflow.page import document, page_of_run
from dayflow.providers.offline import OfflineModel
from dayflow.sources.identity import json_message_stable_id, mail_key
from dayflow.store import open_store

LIMITS = Limits(max_steps=200, max_tokens=16_000, task_cap=1000)


@dataclass
class Outcome:
    status: str
    brief: str  # the Markdown brief
    html: str  # its page, as `--format html` writes it
    tasks: list[Task]
    by_message: dict[str, list[Task]]  # message id -> the tasks filed from it
    tool_calls: list[tuple[str, dict[str, Any]]]  # (tool name, input), in order


def run_brief(
    messages: list[dict[str, Any]],
    brief_date: dt.date,
    events: list[dict[str, Any]] | None = None,
    me: str | None = None,
) -> Outcome:
    """A brief for `brief_date` over `messages` (inbox-file dicts with their own `id`s)."""
    with tempfile.TemporaryDirectory(prefix="dayflow-public-") as tmp:
        inbox = Path(tmp) / "inbox.json"
        inbox.write_text(json.dumps({"messages": messages}, ensure_ascii=False), "utf-8")
        calendar = Path(tmp) / "calendar.json"
        calendar.write_text(json.dumps({"events": events or []}, ensure_ascii=False), "utf-8")
        settings = RunSettings(tz=TZ, inbox=str(inbox), calendar=str(calendar))
        if me:  # `me` is given the way a user's config gives it
            config = Path(tmp) / "config.toml"
            config.write_text(
                f'me = [{json.dumps(me)}]\n\n[[inbox]]\nname = "inbox"\nkind = "json"\n'
                f'path = {json.dumps(str(inbox))}\n\n[[calendar]]\nname = "calendar"\n'
                f'kind = "json"\npath = {json.dumps(str(calendar))}\n',
                encoding="utf-8",
            )
            settings = RunSettings(
                tz=TZ,
                sources={"config": str(config), "inbox": ["inbox"], "calendar": ["calendar"]},
                config=str(config),
            )
        with open_store(Path(tmp) / "public.db") as store:
            options = BriefOptions(
                brief_date=brief_date, model="offline", limits=LIMITS, settings=settings
            )
            result = start_run(Loop(store, OfflineModel()), options)
            run = store.runs.get(result.run.id)
            tasks = store.tasks.list(include_done=True)
            steps = store.steps.of(run.id)
            conversation = store.steps.conversation(run.id)
    text = result.text or ""
    page = page_of_run(conversation, run, text, {t.id: t for t in tasks})
    by_key = {mail_key(json_message_stable_id(m)): m["id"] for m in messages}
    ids = {m["id"] for m in messages}
    by_message: dict[str, list[Task]] = {}
    for task in tasks:
        source = (task.source_id or "").rsplit(":", 1)[-1]
        mid = source if source in ids else by_key.get(task.idempotency_key.split("#", 1)[0])
        if mid is not None:
            by_message.setdefault(mid, []).append(task)
    calls = [(b["name"], dict(b.get("input") or {})) for s in steps for b in s.tool_uses()]
    return Outcome(run.status, text, document(page), tasks, by_message, calls)
