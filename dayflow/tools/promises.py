"""`dayflow tasks add --from promise:KEY`: one of the user's promises (read_followups'
you_promised, issue 35 part 3) made a task at their word, never by the model.

The promise is found in the saved reads of the profile's briefs, newest first and however far
back (the list the user saw), not in the mail now; the task is filed under the promise's key,
so a second `add` finds it and files nothing (the store's UNIQUE key decides, as for
create_task). The key is read once, whatever its case, spaces or `Promise:` as typed
(`promise_key`), and the task is filed under the key the brief showed: a key typed another
way is the same promise, never a second task. A promise a later brief found kept (its
read_followups' `promises_kept`) is no task to file: `Kept` says so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dayflow.errors import RunNotFound, UsageError
from dayflow.followups.promises import PROMISE_PREFIX
from dayflow.frozen import Frozen
from dayflow.shown import calls_in
from dayflow.tools.evidence import MAX_CHARS

if TYPE_CHECKING:
    from dayflow.models import Task
    from dayflow.store import Store

MAX_TITLE = 200


class Found(Frozen):
    """A promise as the newest brief that listed it showed it, and whether a brief after that
    one found it kept (delivered, or called off by the other person)."""

    item: dict[str, Any]
    kept: bool = False


def promise_key(typed: str) -> str:
    """The key `typed` names, as the brief shows it: spaces around it, its case and a
    `PROMISE:` as typed do not count (the keys are lower-case hex); UsageError if it is none."""
    key = typed.strip()
    if key[: len(PROMISE_PREFIX)].lower() == PROMISE_PREFIX:
        key = PROMISE_PREFIX + key[len(PROMISE_PREFIX) :].strip().lower()
    if not key.startswith(PROMISE_PREFIX) or key == PROMISE_PREFIX or len(key) > 80:
        shown = repr(key[:80]) + ("…" if len(key) > 80 else "")
        raise UsageError(
            f"--from takes promise:KEY (the key the brief shows beside each promise), not {shown}"
        )
    return key


def find_promise(store: Store, typed: str) -> Found:
    """The promise `typed` names as the newest brief that listed it showed it, from any earlier
    run (read newest first, in pages, stopping at the first that lists it), and whether a newer
    brief found it kept; RunNotFound if no brief listed it."""
    key = promise_key(typed)
    kept = False
    for run_id in store.runs.ids_newest_first():
        found = None
        for name, _, payload in calls_in(store.steps.conversation(run_id)):
            if name == "read_followups" and isinstance(payload, dict):
                listed = payload.get("you_promised")
                for item in listed if isinstance(listed, list) else []:
                    if isinstance(item, dict) and item.get("key") == key:
                        found = item
                done = payload.get("promises_kept")
                kept = kept or (isinstance(done, list) and key in done)
        if found is not None:
            return Found(found, kept=kept)
    raise RunNotFound(f"no promise {key!r} in any brief of this profile (see `dayflow brief`)")


def promise_of(store: Store, typed: str) -> dict[str, Any]:
    """The promise `typed` names as the newest brief that listed it showed it (`find_promise`)."""
    return find_promise(store, typed).item


def promise_title(item: dict[str, Any]) -> str:
    """The title a promise (one item of read_followups' you_promised) takes as a task: its
    words and whom to, as the brief's *You promised* line names them."""
    party = item.get("with") if isinstance(item.get("with"), dict) else {}
    who = str((party or {}).get("name") or (party or {}).get("address") or "someone")
    return f"{str(item.get('what') or 'Keep a promise')} (to {who})"[:MAX_TITLE]


class Filed(Frozen):
    """What `tasks add --from` did: the task (new, or `created` False: on the list already),
    or none, as the promise is `kept` (a later brief found it delivered or called off)."""

    title: str
    task: Task | None
    created: bool = False

    @property
    def kept(self) -> bool:
        return self.task is None


def task_from_promise(store: Store, typed: str) -> Filed:
    """File the promise `typed` names as a task (its due date and words kept), under the key
    the brief showed; none for a promise kept since, unless it is on the list already."""
    found = find_promise(store, typed)
    item, key = found.item, promise_key(typed)
    title = promise_title(item)
    if found.kept and not store.tasks.exists(key):
        return Filed(title, None)
    due = item.get("due") if isinstance(item.get("due"), str) else None
    evidence = str(item.get("evidence") or "")[:MAX_CHARS] or None
    task, created = store.tasks.create(
        title=title,
        idempotency_key=key,
        run_id=None,
        due=due,
        source_id=str(item.get("id") or "") or None,
        evidence=evidence,
        due_kind=str(item.get("due_kind") or ("stated" if due else "none")),
    )
    return Filed(title, task, created)
