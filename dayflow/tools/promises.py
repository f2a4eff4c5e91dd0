"""`dayflow tasks add --from promise:KEY`: one of the user's promises (read_followups'
you_promised, issue 35 part 3) made a task at their word, never by the model.

The promise is found in the saved reads of the profile's briefs, newest first and however far
back (the list the user saw), not in the mail now; the task is filed under the promise's key,
so a second `add` finds it and files nothing (the store's UNIQUE key decides, as for
create_task)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dayflow.errors import RunNotFound, UsageError
from dayflow.followups.promises import PROMISE_PREFIX
from dayflow.shown import calls_in
from dayflow.tools.evidence import MAX_CHARS

if TYPE_CHECKING:
    from dayflow.models import Task
    from dayflow.store import Store

MAX_TITLE = 200


def promise_of(store: Store, key: str) -> dict[str, Any]:
    """The promise `key` as the newest brief that listed it showed it, from any earlier run
    (read newest first, in pages, stopping at the first that lists it); RunNotFound if none."""
    key = key.strip()
    if key[: len(PROMISE_PREFIX)].lower() == PROMISE_PREFIX:  # `Promise:…` as typed
        key = PROMISE_PREFIX + key[len(PROMISE_PREFIX) :].lower()
    if not key.startswith(PROMISE_PREFIX) or key == PROMISE_PREFIX or len(key) > 80:
        shown = repr(key[:80]) + ("…" if len(key) > 80 else "")
        raise UsageError(
            f"--from takes promise:KEY (the key the brief shows beside each promise), not {shown}"
        )
    for run_id in store.runs.ids_newest_first():
        found = None
        for name, _, payload in calls_in(store.steps.conversation(run_id)):
            if name == "read_followups" and isinstance(payload, dict):
                listed = payload.get("you_promised")
                for item in listed if isinstance(listed, list) else []:
                    if isinstance(item, dict) and item.get("key") == key:
                        found = item
        if found is not None:
            return found
    raise RunNotFound(f"no promise {key!r} in any brief of this profile (see `dayflow brief`)")


def promise_title(item: dict[str, Any]) -> str:
    """The title a promise (one item of read_followups' you_promised) takes as a task: its
    words and whom to, as the brief's *You promised* line names them."""
    party = item.get("with") if isinstance(item.get("with"), dict) else {}
    who = str((party or {}).get("name") or (party or {}).get("address") or "someone")
    return f"{str(item.get('what') or 'Keep a promise')} (to {who})"[:MAX_TITLE]


def task_from_promise(store: Store, key: str) -> tuple[Task, bool]:
    """File the promise `key` as a task (its due date and words kept); and whether it is new."""
    item = promise_of(store, key)
    title = promise_title(item)
    due = item.get("due") if isinstance(item.get("due"), str) else None
    evidence = str(item.get("evidence") or "")[:MAX_CHARS] or None
    return store.tasks.create(
        title=title,
        idempotency_key=key,
        run_id=None,
        due=due,
        source_id=str(item.get("id") or "") or None,
        evidence=evidence,
        due_kind=str(item.get("due_kind") or ("stated" if due else "none")),
    )
