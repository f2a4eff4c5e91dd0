"""Scoring a prediction against the labels: pure functions, no model, no I/O.

A prediction is, per message (authored id), the tasks a run created from it (title and due).
The figures, each per category and overall, with their counts:

- message-level action detection: a message is predicted to need action when at least one
  task came from it; precision, recall and F1 over messages (n/a where the category has no
  positive message and nothing was predicted);
- per-action matching: within a message, predicted and gold actions are paired one-to-one,
  best title token F1 first, a pair counting when its F1 is at least 0.5; action precision,
  recall, and the mean title F1 of the pairs;
- due-date exact-match accuracy on the matched pairs, where "no deadline" (null) is a class
  like any date;
- false tasks: tasks made from messages that ask nothing, and per 100 FYI/automated messages.

A `commitment` is Alex's own promise (GUIDE.md). With `me` known the product lists Alex's own
promises under *You promised* (issue 35 part 3), not as tasks, so a run may also give, per
message, the promises it listed (`promised`): on a message labelled `commitment`, its tasks and
its promises together are what is matched against the labelled actions (the same title F1 and
due rules), and either finds the message. A promise on any other message is counted on its own
(`stray_promises`), never as a false task, and never toward another category's actions.

`check_brief` scores the brief text itself (see its docstring).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bench.eval.dataset import NO_ACTION_CATEGORIES, GoldAction, Label
from dayflow.models import Section

MATCH_F1 = 0.5
# Words that carry no meaning in a to-do title (English, German, French, Spanish), so that
# "Send the report to Priya" and "Send report Priya" are the same title.
STOPWORDS = frozenset(
    "a an the to for of on in at by and or with from my your our his her their its me us you "
    "is be it this that please re fw fwd "
    "der die das den dem des ein eine einen und zu für an auf im am mit von bitte "
    "le la les l un une des du de d et à au aux pour sur avec "
    "el los las lo una unos unas y a al del para con por en".split()
)


@dataclass(frozen=True)
class PredictedAction:
    title: str
    due: str | None


Prediction = Mapping[str, Sequence[PredictedAction]]  # authored id -> tasks made from it
COMMITMENT = "commitment"  # the one category a promise under *You promised* can find


def tokens(text: str) -> list[str]:
    """The content words of `text`: lowercased, accents kept, stopwords dropped."""
    text = unicodedata.normalize("NFC", text).casefold()
    words = re.findall(r"[^\W_]+", text)
    return [w for w in words if w not in STOPWORDS]


def token_f1(predicted: str, gold: str) -> float:
    """F1 of the content-word multisets of two titles (0 when either has none)."""
    p, g = tokens(predicted), tokens(gold)
    if not p or not g:
        return 0.0
    common = 0
    pool = list(g)
    for word in p:
        if word in pool:
            pool.remove(word)
            common += 1
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def title_f1(predicted: str, gold: GoldAction) -> float:
    """The best F1 of `predicted` against the gold title and its renderings."""
    return max(token_f1(predicted, t) for t in gold.titles)


def match(
    predicted: Sequence[PredictedAction], gold: Sequence[GoldAction]
) -> list[tuple[int, int, float]]:
    """One-to-one pairs (predicted index, gold index, F1) with F1 >= 0.5, as many as there
    can be: best pairs first; among pairs of equal F1 (the same title asked twice), those
    whose due dates agree first, then by position, so the result is deterministic and never
    depends on the order the store listed the tasks in. Where taking a best pair would leave
    another action with no task it could match, the pairs are moved along (an augmenting
    path) so that both are matched."""
    ranked = sorted(
        (-title_f1(p.title, g), p.due != g.due, i, j)
        for i, p in enumerate(predicted)
        for j, g in enumerate(gold)
    )
    ranked = [r for r in ranked if -r[0] >= MATCH_F1]
    f1 = {(i, j): -neg for neg, _, i, j in ranked}
    owner: dict[int, int] = {}  # predicted index -> gold index
    taken: set[int] = set()
    for _, _, i, j in ranked:
        if i not in owner and j not in taken:
            owner[i] = j
            taken.add(j)
    options: dict[int, list[int]] = {}
    for _, _, i, j in ranked:
        options.setdefault(j, []).append(i)
    for j in range(len(gold)):
        if j not in taken:
            _augment(j, options, owner, set())
    return sorted(((i, j, f1[i, j]) for i, j in owner.items()), key=lambda t: t[1])


def _augment(j: int, options: dict[int, list[int]], owner: dict[int, int], seen: set[int]) -> bool:
    """Give gold action `j` a task, moving the tasks of others along a path (Kuhn's
    algorithm); False, changing nothing, when no such path exists."""
    for i in options.get(j, ()):
        if i in seen:
            continue
        seen.add(i)
        if i not in owner or _augment(owner[i], options, owner, seen):
            owner[i] = j
            return True
    return False


@dataclass
class Tally:
    """The counts behind every figure of one row (a category, a split, or all)."""

    messages: int = 0
    tp: int = 0  # messages with an action, predicted so
    fp: int = 0  # messages without one, predicted to have one
    fn: int = 0
    gold_actions: int = 0
    predicted_actions: int = 0
    matched: int = 0
    title_f1_sum: float = 0.0
    due_right: int = 0
    false_tasks: int = 0  # tasks on messages that ask nothing
    no_action_messages: int = 0  # FYI/automated messages, for the per-100 rate
    no_action_tasks: int = 0  # tasks on those
    quoted_messages: int = 0
    quoted_taken: int = 0  # tasks matching none of the message's own requests but a quoted one
    quoted_bad: int = 0  # messages with at least one such task
    answered_messages: int = 0  # messages with asks Alex answered later (`answered`)
    answered_taken: int = 0  # tasks matching none of the open requests but an answered one
    answered_bad: int = 0
    promises: int = 0  # promises listed on `commitment` messages (counted in predicted_actions)
    promise_matched: int = 0  # labelled actions matched by a promise rather than a task
    stray_promises: int = 0  # promises on messages not labelled `commitment`: no task, no action
    misses: list[str] = field(default_factory=list)  # ids, for reading the failures
    false_alarms: list[str] = field(default_factory=list)
    wrong_dues: list[str] = field(default_factory=list)
    stray_promise_ids: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        if self.tp + self.fp:
            return self.tp / (self.tp + self.fp)
        return 0.0 if self.fn else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        if self.tp + self.fn == 0:
            return None  # no message of this row asks anything: see false tasks instead
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)

    @property
    def action_precision(self) -> float | None:
        if self.predicted_actions:
            return self.matched / self.predicted_actions
        return 0.0 if self.gold_actions else None

    @property
    def action_recall(self) -> float | None:
        return self.matched / self.gold_actions if self.gold_actions else None

    @property
    def mean_title_f1(self) -> float | None:
        return self.title_f1_sum / self.matched if self.matched else None

    @property
    def due_accuracy(self) -> float | None:
        return self.due_right / self.matched if self.matched else None

    @property
    def false_per_100(self) -> float | None:
        if not self.no_action_messages:
            return None
        return 100 * self.no_action_tasks / self.no_action_messages


@dataclass
class Scores:
    by_category: dict[str, Tally]
    by_split: dict[str, Tally]
    overall: Tally


def score(
    labels: Mapping[str, Label], predicted: Prediction, promised: Prediction | None = None
) -> Scores:
    """Every figure, per category, per split and overall; `promised` (authored id -> the
    promises the run listed from it, as title and due) is scored as the module says."""
    by_category: dict[str, Tally] = {}
    by_split: dict[str, Tally] = {}
    overall = Tally()
    for mid in sorted(labels):
        label = labels[mid]
        rows = [
            by_category.setdefault(label.category, Tally()),
            by_split.setdefault(label.split, Tally()),
            overall,
        ]
        _add(rows, label, list(predicted.get(mid, ())), list((promised or {}).get(mid, ())))
    return Scores(by_category, by_split, overall)


def _add(
    rows: Iterable[Tally],
    label: Label,
    tasks: list[PredictedAction],
    promises: list[PredictedAction],
) -> None:
    expected = label.category == COMMITMENT
    stray = [] if expected else promises
    if expected:  # a promise stands beside the tasks: either may find the commitment
        found, n_tasks = [*tasks, *promises], len(tasks)
    else:
        found, n_tasks = tasks, len(tasks)
    pairs = match(found, label.actions)
    own_matched = {i for i, _, _ in pairs}
    wrong_due = any(found[i].due != label.actions[j].due for i, j, _ in pairs)
    for row in rows:
        row.messages += 1
        if stray:
            row.stray_promises += len(stray)
            row.stray_promise_ids.append(label.id)
        if expected:
            row.promises += len(promises)
            row.promise_matched += sum(i >= n_tasks for i, _, _ in pairs)
        if label.has_action and found:
            row.tp += 1
        elif found:
            row.fp += 1
            row.false_alarms.append(label.id)
        elif label.has_action:
            row.fn += 1
            row.misses.append(label.id)
        row.gold_actions += len(label.actions)
        row.predicted_actions += len(found)
        row.matched += len(pairs)
        row.title_f1_sum += sum(f for _, _, f in pairs)
        row.due_right += sum(found[i].due == label.actions[j].due for i, j, _ in pairs)
        if wrong_due:
            row.wrong_dues.append(label.id)
        if not label.has_action:
            row.false_tasks += len(found)
        if label.category in NO_ACTION_CATEGORIES:
            row.no_action_messages += 1
            row.no_action_tasks += len(found)
        if label.quoted:
            row.quoted_messages += 1
            taken = _taken(found, own_matched, label.quoted)
            row.quoted_taken += taken
            row.quoted_bad += taken > 0
        if label.answered:
            row.answered_messages += 1
            taken = _taken(found, own_matched, label.answered)
            row.answered_taken += taken
            row.answered_bad += taken > 0


def _taken(found: Sequence[PredictedAction], own: set[int], titles: Sequence[str]) -> int:
    """How many of `found` match none of the message's open requests (`own`, their indexes)
    but one of `titles` (its quoted or already answered asks)."""
    return sum(
        i not in own and max(token_f1(t.title, q) for q in titles) >= MATCH_F1
        for i, t in enumerate(found)
    )


# --- the brief ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    name: str
    passed: int
    total: int
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.passed == self.total


def sections(brief: str) -> dict[str, str]:
    """The brief's `## Heading` sections by lowercased heading."""
    out: dict[str, str] = {}
    current = None
    for line in brief.splitlines():
        heading = re.match(r"#{2,3}\s+(\S.*)", line)  # no lazy group before \s*$: linear
        if heading:
            current = heading.group(1).strip().lower()
            out[current] = ""
        elif current is not None:
            out[current] += line + "\n"
    return out


def _bullets(text: str) -> list[str]:
    return [
        re.sub(r"^\s*[-*•]\s+", "", b) for b in text.splitlines() if re.match(r"^\s*[-*•]\s", b)
    ]


def _covers(text: str, title: str) -> float:
    """The share of `title`'s content words found in `text`."""
    want, have = tokens(title), tokens(text)
    if not want:
        return 0.0
    pool = list(have)
    found = 0
    for word in want:
        if word in pool:
            pool.remove(word)
            found += 1
    return found / len(want)


def most_urgent(labels: Mapping[str, Label], today: dt.date) -> list[GoldAction]:
    """The actions "One thing" should be among: those due today; if none, the overdue ones
    (a thing already late is what a person needs first, as the brief orders Needs action:
    today, then overdue, then by date); if none, the earliest due after today."""
    dated = [
        (dt.date.fromisoformat(a.due), a) for lab in labels.values() for a in lab.actions if a.due
    ]
    same_day = [a for d, a in dated if d == today]
    if same_day:
        return same_day
    overdue = [a for d, a in dated if d < today]
    if overdue:
        return overdue
    later = min((d for d, _ in dated if d > today), default=None)
    return [a for d, a in dated if d == later]


def check_brief(
    brief: str,
    created_titles: Sequence[str],
    today_events: Sequence[str],
    labels: Mapping[str, Label],
    today: dt.date,
    quoted: Tally,
) -> list[Check]:
    """The checklist on the brief: every created task under "Needs action" (a bullet with
    title F1 >= 0.5, or the title inside it), every event of today under "Today" (its title
    inside a bullet), "One thing" among the most urgent (`most_urgent`: at least half of such
    an action's content words in it), nothing taken from quoted text (from `quoted`), and
    where a label lists asks Alex answered later (`answered`), nothing taken from those."""
    parts = sections(brief)
    needs = _bullets(parts.get(Section.NEEDS_ACTION.lower(), ""))
    listed = sum(
        any(token_f1(t, b) >= MATCH_F1 or t.lower() in b.lower() for b in needs)
        for t in created_titles
    )
    today_text = parts.get(Section.TODAY.lower(), "").lower()
    shown = sum(e.lower() in today_text for e in today_events)
    one = parts.get(Section.ONE_THING.lower(), "").strip()
    urgent = most_urgent(labels, today)
    hit = max((max(_covers(one, t) for t in a.titles) for a in urgent), default=0.0)
    picked = one.strip("*").strip()[:90]
    detail = f"picked: {picked!r}" if one else f"no {Section.ONE_THING} section"
    checks = [
        Check(f"every created task under {Section.NEEDS_ACTION}", listed, len(created_titles)),
        Check(f"every event of today under {Section.TODAY}", shown, len(today_events)),
        Check(f"{Section.ONE_THING} is among the most urgent", int(hit >= MATCH_F1), 1, detail),
        Check(
            "nothing taken from quoted text",
            quoted.quoted_messages - quoted.quoted_bad,
            quoted.quoted_messages,
            f"{quoted.quoted_taken} task(s) matching a quoted request",
        ),
    ]
    if quoted.answered_messages:
        checks.append(
            Check(
                "nothing taken from asks answered later",
                quoted.answered_messages - quoted.answered_bad,
                quoted.answered_messages,
                f"{quoted.answered_taken} task(s) matching an answered ask",
            )
        )
    return checks


# --- agreement between the two labelling passes ---------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    messages: int
    kappa: float | None
    observed: float
    same_count: float
    due_pairs: int
    due_agree: float | None


def agreement(first: Mapping[str, Label], second: Mapping[str, Label]) -> Agreement:
    """Cohen's kappa on has_action, the share with the same number of actions, and due-date
    agreement on the actions both passes found (paired by title F1 >= 0.5)."""
    ids = sorted(second)
    a = [first[i].has_action for i in ids]
    b = [second[i].has_action for i in ids]
    n = len(ids)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n if n else 0.0
    pa, pb = (sum(a) / n, sum(b) / n) if n else (0.0, 0.0)
    expected = pa * pb + (1 - pa) * (1 - pb)
    kappa = (observed - expected) / (1 - expected) if expected < 1 else None
    same = sum(len(first[i].actions) == len(second[i].actions) for i in ids) / n if n else 0.0
    pairs = agree = 0
    for i in ids:
        other = [PredictedAction(x.title, x.due) for x in second[i].actions]
        for pi, gj, _ in match(other, first[i].actions):
            pairs += 1
            agree += other[pi].due == first[i].actions[gj].due
    return Agreement(n, kappa, observed, same, pairs, agree / pairs if pairs else None)
