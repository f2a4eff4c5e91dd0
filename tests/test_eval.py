"""The evaluation set and its scorer (bench/eval, issue 23): the scorer's figures on hand-made
predictions, the set's shape and labels, and one offline run end to end."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from bench.eval import dataset, report, run, score
from bench.eval.__main__ import main
from bench.eval.dataset import GoldAction, Label, LabelError
from bench.eval.score import PredictedAction as P


def _label(mid: str, category: str, *actions: GoldAction, quoted: tuple[str, ...] = ()) -> Label:
    return Label(mid, category, bool(actions), tuple(actions), quoted)


def _gold(title: str, due: str | None = None) -> GoldAction:
    return GoldAction(title, due, "Someone")


# A tiny labelled set: three messages that ask something (one of them twice), two that do not.
LABELS = {
    "a": _label("a", "deadline", _gold("Send Q3 headcount numbers to Priya", "2026-11-04")),
    "b": _label(
        "b",
        "multiple",
        _gold("Book train to Hudson", "2026-10-30"),
        _gold("Pick offsite dinner spot", None),
    ),
    "c": _label("c", "relative", _gold("Renew VPN certificate", "2026-10-29")),
    "d": _label("d", "fyi"),
    "e": _label("e", "automated"),
}


def _perfect(labels: dict[str, Label]) -> dict[str, list[P]]:
    return {k: [P(a.title, a.due) for a in v.actions] for k, v in labels.items() if v.actions}


def test_a_perfect_prediction_scores_one_everywhere() -> None:
    t = score.score(LABELS, _perfect(LABELS)).overall
    assert (t.precision, t.recall, t.f1) == (1.0, 1.0, 1.0)
    assert (t.action_precision, t.action_recall, t.mean_title_f1, t.due_accuracy) == (1, 1, 1, 1)
    assert t.false_per_100 == 0.0 and t.false_tasks == 0


def test_a_perfect_prediction_of_the_whole_set_scores_one() -> None:
    evalset = dataset.load()
    t = score.score(evalset.labels, _perfect(evalset.labels)).overall
    assert (t.f1, t.action_recall, t.due_accuracy, t.false_per_100) == (1.0, 1.0, 1.0, 0.0)


def test_an_empty_prediction_scores_zero() -> None:
    t = score.score(LABELS, {}).overall
    assert (t.precision, t.recall, t.f1) == (0.0, 0.0, 0.0)
    assert (t.action_precision, t.action_recall) == (0.0, 0.0)
    assert t.mean_title_f1 is None and t.due_accuracy is None  # nothing matched to judge
    assert t.false_per_100 == 0.0


def test_a_known_mix_gives_the_hand_computed_figures() -> None:
    predicted = {
        # right message, title close enough: 3 of its 4 content words in the gold's 5
        # (send, q3, headcount, numbers, priya), F1 = 2*(3/4*3/5)/(3/4+3/5) = 2/3; due wrong
        "a": [P("Send headcount numbers to Dana", "2026-11-05")],
        # one of the two actions, plus a made-up one: 1 match of 2 predicted
        "b": [P("Book the train to Hudson", "2026-10-30"), P("Water the plants", None)],
        # "c" missed; "d" (an FYI) gets a false task
        "d": [P("Read the standup note", None)],
    }
    s = score.score(LABELS, predicted)
    t = s.overall
    # messages: TP a, b; FP d; FN c
    assert (t.tp, t.fp, t.fn) == (2, 1, 1)
    assert t.precision == pytest.approx(2 / 3) and t.recall == pytest.approx(2 / 3)
    assert t.f1 == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    # actions: gold 4, predicted 4, matched 2 (a with F1 2/3, b's train with F1 1.0)
    assert (t.gold_actions, t.predicted_actions, t.matched) == (4, 4, 2)
    assert t.mean_title_f1 == pytest.approx((2 / 3 + 1.0) / 2)
    assert t.due_accuracy == pytest.approx(1 / 2)
    # one false task over the two FYI/automated messages
    assert t.false_tasks == 1 and t.false_per_100 == pytest.approx(50.0)
    assert t.misses == ["c"] and t.false_alarms == ["d"] and t.wrong_dues == ["a"]
    assert s.by_category["fyi"].f1 is None  # no positive message: F1 is not defined there
    assert s.by_category["multiple"].action_recall == pytest.approx(1 / 2)


def test_titles_match_on_content_words_one_to_one() -> None:
    assert score.token_f1("Send the report to Priya", "send report Priya") == 1.0
    assert score.token_f1("Call Dana", "Email the vendor") == 0.0
    gold = [_gold("Approve pricing page copy"), _gold("Send final feature list")]
    # Two predictions of the same action match it once; the better one wins.
    pairs = score.match([P("Approve page copy", None), P("Approve pricing page copy", None)], gold)
    assert pairs == [(1, 0, 1.0)]


def test_a_non_english_action_matches_its_english_rendering_too() -> None:
    action = GoldAction(
        "Marketingbudget für Q1 freigeben", None, "Jonas", ("Approve Q1 marketing budget",)
    )
    assert score.title_f1("Approve the Q1 marketing budget", action) == 1.0
    assert score.title_f1("Marketingbudget Q1 freigeben", action) == 1.0


def test_no_deadline_is_wrong_for_a_dated_action_and_right_for_an_undated_one() -> None:
    labels = {"b": LABELS["b"]}
    predicted = {"b": [P("Book train to Hudson", None), P("Pick offsite dinner spot", None)]}
    assert score.score(labels, predicted).overall.due_accuracy == pytest.approx(1 / 2)


def test_a_task_from_quoted_history_is_counted_against_the_brief() -> None:
    labels = {
        "q": _label("q", "quoted", quoted=("Send intro deck to Sam",)),
        "r": _label(
            "r", "quoted", _gold("Confirm grout colour with Luis"), quoted=("Choose tile",)
        ),
    }
    predicted = {"q": [P("Send intro deck to Sam", None)], "r": [P("Confirm grout colour", None)]}
    t = score.score(labels, predicted).overall
    checks = score.check_brief("", [], [], labels, dt.date(2026, 11, 2), t)
    quoted = next(c for c in checks if c.name == "nothing taken from quoted text")
    assert (quoted.passed, quoted.total) == (1, 2)


def test_a_task_from_an_ask_answered_later_is_a_false_task_and_fails_its_check() -> None:
    answered = ("Send the signed slip to Ms. Benton",)
    labels = {
        "s": Label("s", "deadline", False, (), answered=answered),
        "t": Label("t", "multiple", True, (_gold("Approve Maria's overtime"),), answered=answered),
    }
    predicted = {
        "s": [P("Send signed slip to Ms. Benton", None)],
        "t": [P("Approve overtime", None)],
    }
    t = score.score(labels, predicted).overall
    assert t.false_tasks == 1 and t.answered_taken == 1 and t.matched == 1
    checks = score.check_brief("", [], [], labels, dt.date(2026, 11, 2), t)
    check = next(c for c in checks if c.name == "nothing taken from asks answered later")
    assert (check.passed, check.total) == (1, 2)
    # A set with no such label has no such check.
    plain = score.check_brief("", [], [], LABELS, dt.date(2026, 11, 2), score.Tally())
    assert all("answered" not in c.name for c in plain)


BRIEF = """# Daily brief: Monday 2 November 2026

## Today
- 09:30–09:45 Team standup (Room 2)

## Needs action
- Call Dana about board prep (from Dana Whitfield, due today)
- Book train to Hudson (from Dana Whitfield, overdue since Fri 30 Oct)

## One thing
**Call Dana about board prep, due today.**
"""


def test_the_brief_checklist_reads_the_sections() -> None:
    labels = {
        "u": _label("u", "urgent", _gold("Call Dana about board prep", "2026-11-02")),
        "b": _label("b", "multiple", _gold("Book train to Hudson", "2026-10-30")),
    }
    checks = score.check_brief(
        BRIEF,
        ["Call Dana about board prep", "Book train to Hudson", "Renew VPN certificate"],
        ["Team standup", "Design critique"],
        labels,
        dt.date(2026, 11, 2),
        score.Tally(),
    )
    got = {c.name: (c.passed, c.total) for c in checks}
    assert got["every created task under Needs action"] == (2, 3)
    assert got["every event of today under Today"] == (1, 2)
    assert got["One thing is among the most urgent"] == (1, 1)


def test_one_thing_with_a_later_deadline_over_a_same_day_item_fails() -> None:
    labels = {
        "u": _label("u", "urgent", _gold("Join checkout incident bridge", "2026-11-02")),
        "l": _label("l", "deadline", _gold("Book train to Hudson", "2026-11-06")),
    }
    brief = BRIEF.replace("Call Dana about board prep, due today", "Book train to Hudson")
    checks = score.check_brief(brief, [], [], labels, dt.date(2026, 11, 2), score.Tally())
    assert not next(c for c in checks if c.name.startswith("One thing")).ok


def test_cohens_kappa_of_the_two_passes_is_hand_computed() -> None:
    first = {k: _label(k, "fyi", *([_gold("Do it")] if k in "ab" else [])) for k in "abcd"}
    second = {k: _label(k, "fyi", *([_gold("Do it")] if k in "ac" else [])) for k in "abcd"}
    agreed = score.agreement(first, second)
    # observed 2/4; both passes say yes half the time, so chance is 1/2: kappa 0
    assert agreed.observed == 0.5 and agreed.kappa == pytest.approx(0.0)
    assert score.agreement(first, first).kappa == pytest.approx(1.0)


def test_the_set_loads_with_every_category_and_valid_labels() -> None:
    evalset = dataset.load()
    assert len(evalset.messages) >= 200
    assert {lab.category for lab in evalset.labels.values()} == set(dataset.CATEGORIES)
    for lab in evalset.labels.values():
        assert lab.has_action == bool(lab.actions)
        for action in lab.actions:
            assert action.due is None or dt.date.fromisoformat(action.due)
            assert action.title.strip() and action.requester
        if lab.category in dataset.NO_ACTION_CATEGORIES:
            assert not lab.has_action
    held_out = sum(lab.split == "held-out" for lab in evalset.labels.values())
    assert 0.15 < held_out / len(evalset.labels) < 0.35
    assert len(evalset.second) >= 0.18 * len(evalset.labels)


@pytest.mark.parametrize("split", [h.name for h in dataset.present_held_out()])
def test_a_blind_split_loads_apart_with_every_category_and_valid_labels(split: str) -> None:
    """Each blind split is its own files: every label valid, every message in its split,
    none of its ids in the set or another blind split, and the set (what tuning reads) holds
    no blind message."""
    blind = dataset.load_held(split)
    assert not blind.second
    if dataset.held_out(split).focused:  # a few classes' split: some categories, a few dozen
        assert len(blind.messages) >= 30
        assert {lab.category for lab in blind.labels.values()} <= set(dataset.CATEGORIES)
    else:
        assert len(blind.messages) >= 60
        assert {lab.category for lab in blind.labels.values()} == set(dataset.CATEGORIES)
    for other in dataset.present_held_out():
        if other.name != split:
            assert not set(blind.labels) & set(dataset.load_held(other.name).labels)
    for lab in blind.labels.values():
        assert lab.split == split and lab.has_action == bool(lab.actions)
        for action in lab.actions:
            assert action.due is None or dt.date.fromisoformat(action.due)
            assert action.title.strip() and action.requester
        if lab.category in dataset.NO_ACTION_CATEGORIES:
            assert not lab.has_action
    the_set = dataset.load()
    assert not set(blind.labels) & set(the_set.labels)
    assert all(lab.split != split for lab in the_set.labels.values())


def test_a_blind_split_with_no_messages_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = dataset.HeldOut("blind2", tmp_path / "none", "Second", "nobody wrote it")
    assert dataset.present_held_out((dataset.HELD_OUT[0], empty)) == [dataset.HELD_OUT[0]]
    assert main(["--no-write", "--split", "blind2"], (dataset.HELD_OUT[0], empty)) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: bench/eval/blind2/ holds no messages"


def test_the_blind_split_is_reported_in_its_own_table(capsys: pytest.CaptureFixture[str]) -> None:
    """By default the set's rows are the set's alone and the blind split follows in a table of
    its own; `--split blind` runs only the blind morning."""
    blind = len(dataset.load_blind().messages)
    assert main(["--no-write"]) == 0
    out = capsys.readouterr().out
    assert all(out.count(f"### {h.heading}") == 1 for h in dataset.present_held_out())
    the_set, blind_part = out.split("### Blind split", 1)
    assert (
        "_split: blind_" not in the_set
        and f"| **all** | {len(dataset.load().messages)} |" in the_set
    )
    assert f"| _split: blind_ | {blind} |" in blind_part and "| **all** |" not in blind_part
    assert "_split: held-out_" not in blind_part and "- blind: detection F1" in blind_part
    assert main(["--no-write", "--split", "blind"]) == 0
    only = capsys.readouterr().out
    assert f"| _split: blind_ | {blind} |" in only and f"| **all** | {blind} |" in only
    assert "_split: tuning_" not in only and "### Blind split" not in only


def test_the_inbox_the_model_sees_has_no_labels_and_ids_that_say_nothing() -> None:
    inbox = dataset.load().inbox()["messages"]
    assert all("label" not in m for m in inbox)
    assert all(m["id"].startswith("m") and len(m["id"]) == 9 for m in inbox)
    text = json.dumps(inbox)
    assert '"category"' not in text and "has_action" not in text


def test_a_label_with_a_bad_due_date_is_refused(tmp_path: Path) -> None:
    bad = {
        "id": "x1",
        "from": "A <a@x.example>",
        "subject": "s",
        "received_at": "2026-11-02T08:00:00-05:00",
        "body": "Please do it by Friday.",
        "label": {
            "has_action": True,
            "category": "deadline",
            "actions": [{"title": "Do it", "due": "Friday", "requester": "A"}],
        },
    }
    (tmp_path / "deadline.json").write_text(json.dumps([bad]), encoding="utf-8")
    with pytest.raises(LabelError, match="not an ISO date"):
        dataset.load(tmp_path, None)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"actions": "Do it"}, "actions must be a list"),
        ({"actions": ["Do it"]}, "each action must be an object"),
        ({"actions": [{"title": "Do it", "due": None, "requester": "A", "alt": "Do"}]}, "alt"),
        ({"quoted": "Send the deck"}, "quoted must be a list of strings"),
    ],
)
def test_a_label_of_the_wrong_shape_is_a_label_error_not_a_crash(
    tmp_path: Path, change: dict[str, object], says: str
) -> None:
    """A string where a list belongs would split into letters, or crash on `.get`."""
    label = {"has_action": True, "category": "deadline"}
    label["actions"] = [{"title": "Do it", "due": None, "requester": "A"}]
    message = {
        "id": "x1",
        "from": "A <a@x.example>",
        "subject": "s",
        "received_at": "2026-11-02T08:00:00-05:00",
        "body": "Please do it.",
        "label": {**label, **change},
    }
    (tmp_path / "deadline.json").write_text(json.dumps([message]), encoding="utf-8")
    with pytest.raises(LabelError, match=says):
        dataset.load(tmp_path, None)


def test_a_second_pass_without_labels_is_a_label_error(tmp_path: Path) -> None:
    (tmp_path / "second_pass.json").write_text(json.dumps({"by": "me"}), encoding="utf-8")
    with pytest.raises(LabelError, match="'labels' object"):
        dataset.load(dataset.SET_DIR, tmp_path / "second_pass.json")


def test_a_quick_offline_run_produces_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--no-write"]) == 0
    out = capsys.readouterr().out
    assert report.HEADER[0] in out
    for category in dataset.CATEGORIES:
        assert f"| {category} | " in out
    assert "| **all** | 227 |" in out and "_split: held-out_" in out
    assert "Cohen's kappa" in out and "- [" in out


def test_the_offline_run_maps_every_task_to_a_message_of_the_set() -> None:
    evalset = dataset.load()
    client, model = run.client_for("offline", {})
    output = run.run(evalset, client, model)
    assert output.status == "done" and output.created_titles
    assert not output.unattributed
    assert sum(map(len, output.predicted.values())) == len(output.created_titles)


def test_a_claude_model_without_a_key_is_refused_before_any_call() -> None:
    with pytest.raises(run.EvalError, match="ANTHROPIC_API_KEY"):
        run.client_for("claude-haiku-5-5", {})
    with pytest.raises(run.EvalError, match="ANTHROPIC_BASE_URL"):
        run.client_for("local:qwen", {})


def test_results_are_written_between_the_models_markers(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    path.write_text(
        "# Results\n\n<!-- mail: begin -->\nmail\n<!-- mail: end -->\n", encoding="utf-8"
    )
    first = f"{report.begin('offline')}\nold\n{report.end('offline')}\n"
    report.write_section(path, "offline", first)
    report.write_section(path, "offline", first.replace("old", "new"))
    text = path.read_text(encoding="utf-8")
    assert text.count(report.begin("offline")) == 1 and "new" in text and "old" not in text
    assert "<!-- mail: begin -->\nmail" in text


@pytest.mark.slow
def test_a_local_model_is_scored_through_the_real_sdk_like_the_offline_one() -> None:
    """`--model local:NAME` drives the SDK against ANTHROPIC_BASE_URL (here a loopback
    Messages API answering with the offline model): the same tasks, so the same figures."""
    from dayflow.providers.offline import OfflineModel
    from tests.fakeapi import FakeAPI, Local, responder_from_client

    evalset = dataset.load()
    offline = run.run(evalset, *run.client_for("offline", {}))
    with FakeAPI(responder=responder_from_client(OfflineModel()), local=Local()) as api:
        client, model = run.client_for(
            "local:offline-behind-a-server", {"ANTHROPIC_BASE_URL": api.base_url}
        )
        assert model == "offline-behind-a-server"
        local = run.run(evalset, client, model)
    assert local.status == "done" and local.predicted == offline.predicted
    assert score.score(evalset.labels, local.predicted).overall.f1 == pytest.approx(
        score.score(evalset.labels, offline.predicted).overall.f1
    )


def _promise_set(with_recipients: bool) -> dataset.EvalSet:
    mail = {
        "id": "p1",
        "from": f"Alex Morgan <{dataset.ME}>",
        "subject": "Re: board deck",
        "received_at": "2026-10-30T09:00:00-04:00",
        "unread": False,
        "thread_id": "t1",
        "body": "Sam - I'll send the board deck by Wednesday.\n\nAlex",
    }
    if with_recipients:
        mail["to"] = "Sam Reyes <sam.reyes@lumen.example>"
    label = _label("p1", "commitment", _gold("Send board deck to Sam", "2026-11-04"))
    return dataset.EvalSet([mail], {"p1": label})


def test_the_run_gives_alexs_own_promises_by_message_only_where_me_is_known() -> None:
    """Mail with its recipients is read with `me`: the promise read_followups lists under
    *You promised* comes back by the message's authored id and finds the commitment. Mail
    without them has no `me`, so no promise, and the run says so."""
    client, model = run.client_for("offline", {})
    output = run.run(_promise_set(True), client, model)
    assert output.me_known and output.status == "done"
    assert [p.due for p in output.promised["p1"]] == ["2026-11-04"]
    assert "board deck" in output.promised["p1"][0].title
    t = score.score(_promise_set(True).labels, output.predicted, output.promised).overall
    assert (t.tp, t.matched, t.due_right, t.promise_matched) == (1, 1, 1, 1)
    bare = run.run(_promise_set(False), client, model)
    assert not bare.me_known and bare.promised == {}


def _late_and_later_set() -> dataset.EvalSet:
    """Two asks on the eval's morning (Monday 2 November): one due last Tuesday, one Thursday."""
    base = {"to": dataset.ME, "unread": True}
    mails = [
        {
            **base,
            "id": "late",
            "from": "Gail Hartwell <gail@hartwell.example>",
            "subject": "Cyber policy renewal",
            "received_at": "2026-10-23T10:00:00-04:00",
            "thread_id": "t-late",
            "body": "Alex,\n\nCould you call me about the cyber policy renewal by Tuesday 27 "
            "October?\n\nGail",
        },
        {
            **base,
            "id": "later",
            "from": "Dana Whitfield <dana@northwind.example>",
            "subject": "Lease renewal",
            "received_at": "2026-11-01T10:00:00-05:00",
            "thread_id": "t-later",
            "body": "Hi Alex,\n\nCould you sign the lease renewal page by Thursday?\n\nDana",
        },
    ]
    labels = {
        "late": _label("late", "deadline", _gold("Call Gail about cyber policy", "2026-10-27")),
        "later": _label("later", "deadline", _gold("Sign lease renewal page", "2026-11-05")),
    }
    return dataset.EvalSet(mails, labels)


def test_the_scorer_and_the_offline_brief_both_put_an_overdue_ask_first() -> None:
    """With nothing due today, the brief's One thing is the overdue ask (Needs action's order:
    today, overdue, then by date), and the scorer counts that as the most urgent; the
    nearest later ask is not (the scorer once wanted it, against the brief)."""
    evalset = _late_and_later_set()
    output = run.run(evalset, *run.client_for("offline", {}))
    assert output.status == "done"
    one = score.sections(output.brief)["one thing"]
    assert "cyber policy" in one and "overdue" in one, output.brief
    checks = score.check_brief(
        output.brief, output.created_titles, [], evalset.labels, dataset.BRIEF_DATE, score.Tally()
    )
    assert next(c for c in checks if c.name.startswith("One thing")).ok
    later = output.brief.replace(one.strip(), "**Sign lease renewal page, due Thu 5 Nov.**")
    checks = score.check_brief(later, [], [], evalset.labels, dataset.BRIEF_DATE, score.Tally())
    assert not next(c for c in checks if c.name.startswith("One thing")).ok
