"""The user's corrections as rules: what `tasks reject`, `mute`, `important` and `snooze` do to
`rules.toml` and to the task list. The CLI parses and prints; this is all it calls.

`reject` writes its rule first, then deletes the task: a kill -9 between the two leaves the
rule in force and the task on the list, and the same command again finds its rule (never a
second) and deletes the task. Every other correction is one write of the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from dayflow.errors import RejectUnfinished, RunNotFound, UsageError
from dayflow.models import Task
from dayflow.rules._file import Kill, change, next_id
from dayflow.rules._values import (
    IMPORTANT,
    LIST_PREFIX,
    MOST_SNOOZE_DAYS,
    MUTE,
    REJECT,
    SNOOZE,
    THREAD_PREFIX,
    Facts,
    Rule,
    RuleSet,
    asking_of,
    check_asking,
    check_until,
    not_a_public_suffix,
    parse_match,
)
from dayflow.shown import calls_in, messages_read
from dayflow.store import DatabaseError, Store

SHOWN_LOOK_BACK = 60  # finished briefs looked at for a snoozed thread: two months of mornings


@dataclass(frozen=True)
class Where:
    """Whose rules, in which file, made on which day by which command; `guarded`: a
    profile's file, trusted only as its config file is (`read_rules`)."""

    path: Path
    profile: str
    today: date
    command: str
    kill: Kill | None = None
    guarded: bool = False
    say: Callable[[str], None] | None = None  # a line on stderr (waiting for the lock)
    written: list[str] = field(default_factory=list, compare=False)
    """The ids of the rules this command wrote (added, or a snooze moved): the others it
    found already there."""

    def add(self, rule: Rule, same: object = None) -> Rule:
        """Add `rule` (a fresh id), unless one with the same `same(rule)` exists: that one."""
        kept: list[Rule] = []

        def edit(rules: RuleSet) -> RuleSet:
            key = same if callable(same) else (lambda r: (r.kind, r.match, r.key))
            found = [r for r in rules.rules if key(r) == key(rule)]
            if found:
                kept.append(found[0])
                return rules
            made = Rule.from_json(
                rule.to_json()
                | {"id": next_id(rules), "made": self.today.isoformat(), "by": self.command}
            )
            kept.append(made)
            self.written.append(made.id)
            return RuleSet((*rules.rules, made))

        self.change(edit)
        return kept[0]

    def change(self, edit: Callable[[RuleSet], RuleSet]) -> RuleSet:
        """`edit` applied to this profile's file, under its lock (`_file.change`)."""
        return change(
            self.path,
            self.profile,
            edit,
            today=self.today,
            guarded=self.guarded,
            kill=self.kill,
            say=self.say,
        )


def reject(
    store: Store,
    where: Where,
    task_ref: str,
    why: str = "",
    asking: str | None = None,
    names: frozenset[str] = frozenset(),
) -> tuple[Rule, Task]:
    """Reject a task: a rule that no such task comes again from its sender or list, then the
    task gone from the list. The same reject again finds the rule it made. `names`: the
    user's own (`own_names`), which an `asking` of nothing else would match in every greeting."""
    task = store.tasks.find(task_ref)
    facts = task_facts(store, task)
    match = ""
    if facts.list_id:
        match = LIST_PREFIX + facts.list_id
    elif facts.sender:
        match = facts.sender
    if match:
        try:  # what the file's reader would refuse (a hostile 600-character address)
            match = parse_match(match, threads=False)
        except UsageError:
            match = ""  # the rule stands on the task's key alone
    if asking is None:
        words = asking_of(task.title)
    else:
        words = check_asking(asking, sender=match, names=names)[:200]
    rule = Rule(
        id="",
        kind=REJECT,
        match=match,
        asking=words,
        key=task.idempotency_key.split("#", 1)[0],
        why=" ".join(why.split())[:200],
        item=task.id,
        title=task.title[:200],
    )
    made = where.add(rule, same=lambda r: (r.kind, r.key))
    try:
        store.tasks.delete(task.id)
    except DatabaseError as exc:  # the rule is written: say so, and how to finish
        again = (
            f"rule {made.id} is in force, the task still listed: `{where.command}` again "
            "finishes its removal"
        )
        # SQLite's "database is locked" (or busy), PostgreSQL's lock timeout: another process.
        if "lock" in exc.detail.casefold() or "busy" in exc.detail.casefold():
            raise RejectUnfinished(f"{exc}; {again}") from None
        raise DatabaseError(f"{exc.detail}; {again}") from None
    return made, task


def task_facts(store: Store, task: Task) -> Facts:
    """What the rules can know of the mail a task was filed from: the message its run read
    under the task's key or source id (none for a task of no message)."""
    if task.run_id is None:
        return Facts(key=task.idempotency_key.split("#", 1)[0])
    base = task.idempotency_key.split("#", 1)[0]
    found: Facts | None = None
    for message in messages_read(store.steps.conversation(task.run_id)):
        if message.get("key") == base or (task.source_id and message.get("id") == task.source_id):
            found = Facts.of_json(message)  # the last read wins: read_message has the body
    return found or Facts(key=base)


def mute(where: Where, pattern: str) -> Rule:
    """Mute a sender, a domain, a list or a thread."""
    match = not_a_public_suffix(parse_match(pattern))
    return where.add(Rule(id="", kind=MUTE, match=match))


def important(where: Where, pattern: str) -> Rule:
    """Mark a sender or a domain important."""
    low = pattern.strip().lower()
    if low.startswith((THREAD_PREFIX, LIST_PREFIX)) or (low.startswith("<") and low.endswith(">")):
        what = "a thread" if low.startswith(THREAD_PREFIX) else "a list"
        raise UsageError(
            f"{pattern.strip()[:60]!r} is {what}: important takes an address or a domain "
            "(example.org)"
        )
    match = not_a_public_suffix(parse_match(pattern, lists=False, threads=False))
    return where.add(Rule(id="", kind=IMPORTANT, match=match))


def parse_until(text: str, today: date) -> date:
    """`--until`: a date YYYY-MM-DD, `tomorrow`, or a number of days (`3d`) or weeks (`2w`)
    from today."""
    value = text.strip().lower()
    if value == "tomorrow":
        return today + timedelta(days=1)
    if value == "today":  # it would come back at once: say why it is refused
        raise UsageError(f"--until {text}: the day must be after today (tomorrow, 3d, a date)")
    if value[:-1].isdigit() and value[-1:] in ("d", "w") and len(value) <= 6:
        days = int(value[:-1]) * (7 if value.endswith("w") else 1)
        if days > MOST_SNOOZE_DAYS:
            raise UsageError(f"--until {text}: snooze for a year at most (or mute it)")
        return today + timedelta(days=days)
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"--until {text[:40]!r} is not a date (YYYY-MM-DD), tomorrow, 3d or 2w"
        ) from None


def snooze(store: Store | None, where: Where, ref: str, until: date) -> Rule:
    """Leave a task (by id) or an owed reply or wait (`thread:KEY`) out until `until`; a
    second snooze of the same item moves its day."""
    check_until(until, where.today, most_days=MOST_SNOOZE_DAYS)
    if ref.strip().lower().startswith(THREAD_PREFIX):
        match = parse_match(ref)
        rule = Rule(id="", kind=SNOOZE, match=match, until=until.isoformat(), item=match)
    else:
        if store is None:
            raise RunNotFound(f"no task {ref!r}")
        task = store.tasks.find(ref)
        if task.status != "open":
            raise UsageError(f"task {task.id} is done already: nothing to snooze")
        key = task.idempotency_key.split("#", 1)[0]
        rule = Rule(
            id="", kind=SNOOZE, key=key, until=until.isoformat(), item=task.id, title=task.title
        )
    moved: list[Rule] = []

    def edit(rules: RuleSet) -> RuleSet:
        same = [
            r
            for r in rules.rules
            if r.kind == SNOOZE and (r.key, r.match) == (rule.key, rule.match)
        ]
        if not same:
            return rules
        new = Rule.from_json(same[0].to_json() | {"until": rule.until, "by": where.command})
        moved.append(new)
        where.written.append(new.id)
        return RuleSet(tuple(new if r is same[0] else r for r in rules.rules))

    where.change(edit)
    return moved[0] if moved else where.add(rule)


def thread_shown(store: Store, match: str, look_back: int = SHOWN_LOOK_BACK) -> bool:
    """Whether one of the last `look_back` finished briefs of the store's profile showed the
    thread `match` (`thread:KEY`) as a reply owed or awaited: its saved read_followups steps
    hold the keys a brief's JSON gives. Newest first, so a key of this morning's is found in
    the first run."""
    for run in store.runs.list(status="done", limit=look_back):
        for name, _args, payload in calls_in(store.steps.conversation(run.id)):
            if name != "read_followups" or not isinstance(payload, dict):
                continue
            for kind in ("you_owe", "waiting_on"):
                listed = payload.get(kind)
                if isinstance(listed, list) and any(
                    isinstance(item, dict) and item.get("key") == match for item in listed
                ):
                    return True
    return False


KINDS_SHOWN = {REJECT: "rejected", MUTE: "muted", IMPORTANT: "important", SNOOZE: "snoozed"}
