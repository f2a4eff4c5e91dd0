"""`dayflow replay`: the saved mornings read again with today's rules, to try a rule before
living with it. It makes no model call and writes nothing: each finished brief's committed
steps already hold what its reads returned and the tasks it filed, so the rules are asked of
those, and what they would decide differently from the rules the run obeyed is the change.

What it can say: a task the run filed that a rule would now refuse; a reply owed or awaited
the brief showed that a rule would now leave out, or one it left out that no rule leaves out
any more; an item from a sender now important (first in its section). What it cannot: how
a model would word a brief it never wrote, or a task it never tried to file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from dayflow.models import DONE, Run
from dayflow.rules._values import Facts, Rule, RuleSet
from dayflow.shown import calls_in, messages_read
from dayflow.store import Store

MOST_DAYS = 366


@dataclass(frozen=True)
class Change:
    """One thing a morning would show differently: what, and the rule that decides it (None:
    the rule that decided it then is gone)."""

    kind: str  # "no task", "left out", "shown again", "first"
    what: str
    rule: Rule | None = None

    def line(self) -> str:
        why = f" ({self.rule.named()})" if self.rule is not None else " (no rule leaves it out now)"
        return f"{self.kind}: {self.what}{why}"

    def to_json(self) -> dict[str, Any]:
        rule = None if self.rule is None else {"id": self.rule.id, "says": self.rule.says()}
        return {"change": self.kind, "what": self.what, "rule": rule}


@dataclass(frozen=True)
class Morning:
    day: str
    run_id: str
    changes: list[Change] = field(default_factory=list)


def mornings(store: Store, since: date) -> list[Run]:
    """The newest finished brief of each day from `since` on, oldest day first."""
    found: dict[str, Run] = {}
    for run in store.runs.list(status=DONE, limit=None):
        if run.brief_date >= since.isoformat() and run.brief_date not in found:
            found[run.brief_date] = run  # newest first: the first of a day is its latest
    return [found[d] for d in sorted(found)]


def replay(store: Store, rules: RuleSet, since: date) -> list[Morning]:
    """What each saved morning from `since` on would show differently under `rules`."""
    return [
        Morning(run.brief_date, run.id, changes(store, run, rules))
        for run in mornings(store, since)
    ]


def changes(store: Store, run: Run, rules: RuleSet) -> list[Change]:
    """What `rules` would decide differently from the rules `run` obeyed."""
    day = date.fromisoformat(run.brief_date)
    then = RuleSet.from_json(list(run.settings.rules))
    messages = store.steps.conversation(run.id)
    by_key: dict[str, dict[str, Any]] = {}
    for message in messages_read(messages):
        by_key[str(message.get("key") or "")] = message  # the last read: the fullest
    out: list[Change] = []
    filed: set[str] = set()
    followups: Any = None
    for name, _args, payload in calls_in(messages):
        if name == "read_followups":
            followups = payload
        if name != "create_task" or not isinstance(payload, dict):
            continue
        given = payload.get("task")
        task: dict[str, Any] = given if isinstance(given, dict) else {}
        key = str(task.get("idempotency_key") or "")
        base = key.split("#", 1)[0]
        if not base or key in filed:
            continue
        filed.add(key)
        found = by_key.get(base)
        facts = Facts.of_json(found) if found is not None else Facts(key=base)
        title = f'"{task.get("title")}"' + (f" from {facts.sender}" if facts.sender else "")
        rule = rules.forbids_key(base, day) or (
            rules.bars(facts, day) if found is not None else None
        )
        if rule is not None:
            out.append(Change("no task", title, rule))
        elif found is not None and rules.important(facts) and not then.important(facts):
            out.append(Change("first", title, rules.important(facts)))
    if isinstance(followups, dict):
        out += _followups(followups, rules, then, day)
    return out


def _followups(result: dict[str, Any], rules: RuleSet, then: RuleSet, day: date) -> list[Change]:
    out: list[Change] = []
    for name, said in (("you_owe", "reply owed to"), ("waiting_on", "waiting on")):
        for item in _dicts(result.get(name)):
            facts, what = _item(item, said)
            rule = rules.leaves_out(facts, day)
            if rule is not None:
                out.append(Change("left out", what, rule))
            elif rules.important(facts) and not then.important(facts):
                out.append(Change("first", what, rules.important(facts)))
    for item in _dicts(result.get("left_out")):
        said = "reply owed to" if item.get("list") == "you_owe" else "waiting on"
        facts, what = _item(item, said)
        if rules.leaves_out(facts, day) is None:
            out.append(Change("shown again", what))
    return out


def _item(item: dict[str, Any], said: str) -> tuple[Facts, str]:
    given = item.get("with")
    party: dict[str, Any] = given if isinstance(given, dict) else {}
    address = str(party.get("address") or "")
    keys = item.get("keys")
    facts = Facts(
        sender=address.lower(),
        thread=str(item.get("key") or ""),
        keys=tuple(str(k) for k in keys) if isinstance(keys, list) else (),
    )
    return facts, f'{said} {party.get("name") or address or "someone"}: "{item.get("subject", "")}"'


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
