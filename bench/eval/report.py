"""The evaluation's Markdown: one table per model, per category and per split, with counts; the
checklist on the brief; the labelling agreement; and the reading against issue 23's targets.
RESULTS.md keeps one section per model between its own markers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.eval.dataset import CATEGORIES, HELD_OUT, SPLITS, HeldOut
from bench.eval.score import Agreement, Check, Scores, Tally
from dayflow.models import Section

TARGETS = {"f1": 0.85, "category_f1": 0.7, "due": 0.9, "false_per_100": 2.0}


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _row(name: str, t: Tally) -> str:
    return (
        f"| {name} | {t.messages} | {t.tp + t.fn} | {t.tp}/{t.fp}/{t.fn} | {_f(t.precision)} | "
        f"{_f(t.recall)} | **{_f(t.f1)}** | {t.gold_actions}/{t.predicted_actions}/{t.matched} | "
        f"{_f(t.action_precision)} | {_f(t.action_recall)} | {_f(t.mean_title_f1)} | "
        f"{_f(t.due_accuracy)} ({t.due_right}/{t.matched}) | {t.false_tasks} |"
    )


HEADER = [
    "| rows | messages | with action | TP/FP/FN | P | R | F1 | actions gold/pred/matched | "
    "action P | action R | mean title F1 | due accuracy | false tasks |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]


def table(
    scores: Scores, categories: Sequence[str] = CATEGORIES, *, overall: bool = True
) -> list[str]:
    """The table: a row per category, one per split, and the overall row (unless not
    `overall`: the blind table's one split row is already its whole)."""
    lines = list(HEADER)
    for name in categories:
        if name in scores.by_category:
            lines.append(_row(name, scores.by_category[name]))
    for split in SPLITS:
        if split in scores.by_split:
            lines.append(_row(f"_split: {split}_", scores.by_split[split]))
    if overall:
        lines.append(_row("**all**", scores.overall))
    return lines


def reading(scores: Scores, checks: Sequence[Check], *, overall: bool = True) -> list[str]:
    """Each target of issue 23, met or missed, overall (unless not `overall`) and per split."""
    out = []
    for name, tally in ([("all", scores.overall)] if overall else []) + [
        (s, scores.by_split[s]) for s in SPLITS if s in scores.by_split
    ]:
        f1, due, rate = tally.f1, tally.due_accuracy, tally.false_per_100
        out.append(
            f"- {name}: detection F1 {_f(f1)} ({_v(f1, TARGETS['f1'])} >= 0.85), due accuracy "
            f"{_f(due)} ({_v(due, TARGETS['due'])} >= 0.9), false tasks per 100 FYI/automated "
            f"{_f(rate)} ({_v(rate, TARGETS['false_per_100'], below=True)} <= 2)"
        )
    weak = [
        f"{c} {_f(t.f1)}"
        for c, t in sorted(scores.by_category.items())
        if t.f1 is not None and t.f1 < TARGETS["category_f1"]
    ]
    out.append(
        "- every category with a positive message at F1 >= 0.7: "
        + ("met" if not weak else "**missed** (" + ", ".join(weak) + ")")
    )
    one = next((c for c in checks if c.name.startswith(Section.ONE_THING)), None)
    if one is not None:
        out.append(
            f"- {Section.ONE_THING} picks the most urgent item: "
            + ("met" if one.ok else "**missed**")
            + f" ({one.detail})"
        )
    return out


def promise_line(t: Tally, *, me_known: bool) -> str:
    """How this table's commitments were scored: with the run's *You promised* list, or (a
    split read without `me`) on tasks alone, said rather than left silent."""
    if not me_known:
        return (
            "Commitments scored on tasks only: this split's mail carries no recipients, so the "
            "run has no `me` and lists no promise under *You promised*."
        )
    return (
        f"Commitments scored on tasks and *You promised*: {t.promises} promise(s) on commitment "
        f"messages, {t.promise_matched} labelled action(s) found by a promise; promises not in "
        f"the labels (on other messages, neither tasks nor actions): {t.stray_promises}."
    )


def _v(value: float | None, target: float, *, below: bool = False) -> str:
    if value is None:
        return "n/a"
    return "met" if (value <= target if below else value >= target) else "**missed**"


def render(
    *,
    model: str,
    when: str,
    code: str,
    command: str,
    run_line: str,
    scores: Scores,
    checks: Sequence[Check],
    agreement: Agreement | None,
    unattributed: int,
    blind: Sequence[str] = (),
    me_known: bool = False,
) -> str:
    """The section for one model, markers included; `blind` (from `blind_lines`) after it."""
    t = scores.overall
    lines = [
        begin(model),
        f"## Evaluation: the brief against the labelled set, model `{model}` (issue 23)",
        "",
        f"{when}, code at `{code}`, `{command}`. {run_line}",
        "",
        "The set is `bench/eval/` (GUIDE.md, one file per category); one brief is written over "
        "all of it as one inbox by the real loop, tools and a temporary store, and the tasks "
        "in the store are scored. TP/FP/FN count messages; actions are paired one-to-one by "
        "title token F1 >= 0.5; due accuracy is on the pairs (null is its own class); false "
        "tasks are tasks on messages that ask nothing. F1 is n/a where no message asks "
        "anything (there, see false tasks). On a commitment message the promises the run "
        "listed under *You promised* count beside its tasks (GUIDE.md); a promise elsewhere is "
        "counted on its own line, never as a task.",
        "",
        *table(scores),
        "",
        f"False tasks per 100 FYI/automated messages: **{_f(t.false_per_100)}** "
        f"({t.no_action_tasks} tasks on {t.no_action_messages} messages). Tasks naming no "
        f"message of the set: {unattributed}.",
        "",
        promise_line(t, me_known=me_known),
        "",
        "Checklist on the brief:",
        "",
        *[
            f"- [{'x' if c.ok else ' '}] {c.name}: {c.passed}/{c.total}"
            + (f" ({c.detail})" if c.detail else "")
            for c in checks
        ],
        "",
    ]
    if agreement is not None:
        lines += [
            f"Labelling agreement (second pass on {agreement.messages} messages, "
            "`second_pass.json`): Cohen's kappa on has_action "
            f"**{_f(agreement.kappa)}** (observed agreement {agreement.observed:.2f}); same "
            f"number of actions {agreement.same_count:.2f}; due dates agree on "
            f"{_f(agreement.due_agree)} of the {agreement.due_pairs} actions both passes found. "
            "Both passes are by one labeller, so this is an upper bound on what two people "
            "would reach.",
            "",
        ]
    lines += ["Against issue 23's targets:", "", *reading(scores, checks), "", *blind, end(model)]
    return "\n".join(lines) + "\n"


def blind_lines(
    scores: Scores,
    checks: Sequence[Check],
    run_line: str,
    split: HeldOut | None = None,
    *,
    me_known: bool = False,
) -> list[str]:
    """A blind split's own table, checklist and reading: a separate morning, never mixed
    into the rows above (`split` says which; the first blind split by default; `me_known`,
    whether its run could list promises)."""
    t = scores.overall
    split = split or HELD_OUT[0]
    return [
        f"### {split.heading}",
        "",
        f"{split.provenance} {run_line}",
        "",
        *table(scores, overall=False),
        "",
        f"False tasks per 100 FYI/automated messages: **{_f(t.false_per_100)}** "
        f"({t.no_action_tasks} tasks on {t.no_action_messages} messages).",
        "",
        promise_line(t, me_known=me_known),
        "",
        *[
            f"- [{'x' if c.ok else ' '}] {c.name}: {c.passed}/{c.total}"
            + (f" ({c.detail})" if c.detail else "")
            for c in checks
        ],
        "",
        *reading(scores, checks, overall=False),
        "",
    ]


def begin(model: str) -> str:
    return f"<!-- eval {model}: begin -->"


def end(model: str) -> str:
    return f"<!-- eval {model}: end -->"


class ResultsError(Exception):
    """RESULTS.md's markers for a model are damaged: nothing is written."""


def write_section(path: Path, model: str, section: str) -> None:
    """Put `section` between the model's markers in `path` (appended the first time, the
    file made if missing). Markers that are not exactly one begin before one end (one lost,
    doubled, or swapped by a hand edit) raise ResultsError and leave the file as it is:
    guessing their span could swallow the other sections."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    head, tail = begin(model), end(model)
    heads, tails = text.count(head), text.count(tail)
    if (heads, tails) == (1, 1) and text.index(head) < text.index(tail):
        before, rest = text.split(head, 1)
        text = before + section.rstrip("\n") + rest.split(tail, 1)[1]
    elif (heads, tails) == (0, 0):
        text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + section
    else:
        raise ResultsError(
            f"its markers for {model!r} are damaged ({heads} {head!r}, {tails} {tail!r}, "
            "expected one of each in that order): mend them by hand"
        )
    path.write_text(text, encoding="utf-8")
