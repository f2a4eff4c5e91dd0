"""`## Since yesterday` (issue 35 part 1): a two-day sequence through the CLI, on both engines.

Day 1 (Wed 18 Nov) owes Bob a reply, waits on Dan, files a task from Erin's mail, and shows
Thursday's standup at 11:00 and the review at 14:00. Overnight the user answers Bob, Dan
answers, the task is marked done, the standup moves to 15:00, the 1:1 is cancelled and a
client call lands on the review. Day 2's brief says exactly that, and a third brief of day 2's
mail compared with day 2 says nothing changed.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests.conftest import log_kinds
from tests.fakeapi import FakeAPI, responder_from_client
from tests.mailkit import deliver, thread_mail
from tests.test_crash import dayflow
from tests.test_sent_mail import ALEX, BOB, DAN, at, week

pytestmark = pytest.mark.slow  # real `dayflow` processes

DAY1, DAY2, DAY3 = "2026-11-18", "2026-11-19", "2026-11-20"
ERIN = "Erin Wu <erin@example.net>"
FRANK = "Frank Li <frank@example.net>"
HANA = "Hana Sato <hana@example.net>"
IVAN = "Ivan Petrov <ivan@example.net>"
SINCE = ("--since", "2026-11-11")
HEADING = "## Since yesterday"


def _event(uid: str, title: str, start: str, end: str, extra: str = "") -> str:
    return (
        f"BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:{start}\r\n"
        f"DTEND:{end}\r\nSUMMARY:{title}\r\n{extra}END:VEVENT\r\n"
    )


def _calendar(path: Path, *events: str) -> None:
    path.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + "".join(events) + "END:VCALENDAR\r\n")


STANDUP_1 = _event("standup@x", "Standup", "20261119T110000Z", "20261119T113000Z")
STANDUP_2 = _event("standup@x", "Standup", "20261119T150000Z", "20261119T153000Z")
REVIEW = _event("review@x", "Design review", "20261119T140000Z", "20261119T150000Z")
ONE_ON_ONE = _event("one@x", "1:1 with Dan", "20261119T090000Z", "20261119T093000Z")
CLIENT = _event("client@x", "Client call", "20261119T143000Z", "20261119T150000Z")


def _day1(root: Path) -> dict[str, str]:
    inbox, sent = week(root / "mail")
    deliver(inbox, thread_mail("erin1@x", sender=ERIN, subject="Slides",
                               body="Please send me the slides by Friday.", when=at(18, 8)),
            at(18, 8))  # fmt: skip
    deliver(inbox, thread_mail("frank1@x", sender=FRANK, subject="Contract draft",
                               body="Please review the contract draft by Monday 23 November.",
                               when=at(18, 9)), at(18, 9))  # fmt: skip
    promise = thread_mail("alex5@y", sender=ALEX, to=HANA, subject="Quarterly report",
                          body="Thanks Hana. I'll send you the quarterly report by Friday.",
                          when=at(17, 15))  # fmt: skip
    deliver(sent, promise, at(17, 15))
    check = thread_mail("alex6@y", sender=ALEX, to=IVAN, subject="Lease terms",
                        body="Good point. Let me check with legal and revert tomorrow.",
                        when=at(18, 7))  # fmt: skip
    deliver(sent, check, at(18, 7))
    _calendar(root / "cal.ics", STANDUP_1, REVIEW, ONE_ON_ONE)
    path = root / "config.toml"
    path.write_text(
        f'me = ["alex@example.org"]\n[[inbox]]\nname = "work"\nkind = "maildir"\n'
        f'path = "{inbox}"\nsent = "{sent}"\n[[calendar]]\nname = "cal"\nkind = "ics"\n'
        f'path = "{root / "cal.ics"}"\n'
    )
    return {"DAYFLOW_CONFIG": str(path), "DAYFLOW_TZ": "UTC"}


def _day2(root: Path) -> None:
    """The night's changes: Alex answers Bob, Dan answers Alex, the calendar moves."""
    mail = root / "mail"
    sent = thread_mail("alex9@y", sender=ALEX, to=BOB, subject="Re: Budget",
                       body="Here are the figures.", when=at(18, 18), reply_to="bob1@x",
                       refs="<bob1@x>")  # fmt: skip
    deliver(mail / "Sent", sent, at(18, 18))
    answer = thread_mail("dan9@x", sender=DAN, to=ALEX, subject="Re: Contract signed?",
                         body="Yes, signed this morning.", when=at(19, 7), reply_to="alex1@y",
                         refs="<alex1@y>")  # fmt: skip
    deliver(mail / "INBOX", answer, at(19, 7))
    later = thread_mail("frank2@x", sender=FRANK, subject="Re: Contract draft",
                        body="Good news: the deadline moved to Wednesday 25 November.",
                        when=at(19, 6), reply_to="frank1@x", refs="<frank1@x>")  # fmt: skip
    deliver(mail / "INBOX", later, at(19, 6))
    kept = thread_mail("alex10@y", sender=ALEX, to=HANA, subject="Re: Quarterly report",
                       body="Here is the quarterly report, as promised.", when=at(18, 19),
                       reply_to="alex5@y", refs="<alex5@y>")  # fmt: skip
    deliver(mail / "Sent", kept, at(18, 19))
    _calendar(root / "cal.ics", STANDUP_2, REVIEW, CLIENT)


def _section(text: str) -> list[str]:
    """The lines under the Since yesterday heading (None-like [] when it is absent)."""
    if HEADING not in text:
        return []
    after = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [line for line in after.strip().splitlines() if line]


def _promised(text: str) -> list[str]:
    """The lines under You promised, each without its key."""
    if "## You promised" not in text:
        return []
    after = text.split("## You promised", 1)[1].split("\n## ", 1)[0]
    return [re.sub(r" \(`promise:[0-9a-f]+`\)$", "", x) for x in after.strip().splitlines()]


def _brief(db: Path | str, day: str, env: dict[str, str], *more: str) -> Any:
    res = dayflow(db, "brief", "--date", day, *SINCE, "--model", "offline", *more, api=None, **env)
    assert res.code == 0, res.err
    return res


def _sequence(root: Path, db: Path | str) -> tuple[Any, Any, Any]:
    env = _day1(root)
    one = _brief(db, DAY1, env)
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    slides = next(t for t in tasks if "slides" in t["title"].lower())
    assert dayflow(db, "tasks", "done", slides["id"], api=None, **env).code == 0
    _day2(root)
    two = _brief(db, DAY2, env, "--format", "json")
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    contract = next(t for t in tasks if "contract" in t["title"].lower())
    assert (contract["due"], contract["due_kind"]) == ("2026-11-25", "stated")
    three = _brief(db, DAY3, env)
    return one, json.loads(two.out), three


DAY2_LINES = [
    "Compared with the brief of Wed 18 Nov.",
    '- You replied to Bob Stone about "Budget".',
    '- Dan Reyes answered "Contract signed?".',
    "- Done: Send slides to Erin.",
    "- Moved: Standup, Thursday 19 November 11:00–11:30 → 15:00–15:30.",
    "- Cancelled: 1:1 with Dan (was Thursday 19 November 09:00–09:30).",
    "- New today: Client call, 14:30–15:00.",
    "- New conflict: Design review and Client call.",
    '- Due date moved: Review contract draft, Monday 23 November → Wednesday 25 November ("Good '
    'news: the deadline moved to Wednesday 25 November.").',
]


DAY1_PROMISED = [
    "- To Hana Sato: Send quarterly report, due Friday 20 November",
    "- To Ivan Petrov: Check with legal and revert, due Thursday 19 November (implied)",
]


def test_two_days_say_exactly_what_changed(tmp_path: Path, store_target: Path | str) -> None:
    one, two, three = _sequence(tmp_path, store_target)
    assert HEADING not in one.out  # a first brief has nothing to compare with
    assert _promised(one.out) == DAY1_PROMISED
    assert _promised(two["brief"]) == DAY1_PROMISED[1:]  # Hana's report was sent
    one_thing = two["brief"].split("## One thing", 1)[1].strip()
    assert one_thing == (
        "**Keep your promise to Ivan Petrov: Check with legal and revert, due today.**"
    )
    promised = two["followups"]["you_promised"]
    assert [(p["with"]["address"], p["due"], p["due_kind"]) for p in promised] == [
        ("ivan@example.net", "2026-11-19", "implied")
    ]
    assert promised[0]["evidence"] == "Let me check with legal and revert tomorrow."
    text = two["brief"]
    assert _section(text) == DAY2_LINES
    assert text.index("## Today") < text.index(HEADING) < text.index("## Needs action")
    since = two["since"]
    assert [i["subject"] for i in since["replies_sent"]] == ["Budget"]
    assert [i["by"]["address"] for i in since["answered"]] == ["dan@example.net"]
    assert [i["title"] for i in since["meetings_moved"]] == ["Standup"]
    assert since["meetings_moved"][0]["was"]["start"] == "2026-11-19T11:00:00+00:00"
    assert since["meetings_moved"][0]["now"]["start"] == "2026-11-19T15:00:00+00:00"
    assert since["meetings_moved"][0]["start"] == "2026-11-19T15:00:00+00:00"  # its time now
    assert [(t["title"], t["status"]) for t in since["tasks_done"]] == [
        ("Send slides to Erin", "done")
    ]
    moved = since["due_moved"]
    assert [(m["title"], m["was"], m["now"], m["by"]["name"]) for m in moved] == [
        ("Review contract draft", "2026-11-23", "2026-11-25", "Frank Li")
    ]
    assert moved[0]["evidence"] == "Good news: the deadline moved to Wednesday 25 November."
    # What it compares is said: tasks new since that brief are not "a change of it".
    assert _section(three.out) == [
        "Compared with the brief of Thu 19 Nov.",
        "- Nothing of it changed (replies, waits, tasks, meetings).",
    ]


# Step 1 runs the reads (read_since the last of them): around its tool results' write, and
# the step's completion, the brief's compared state is either unsaved (read again) or saved.
# Step 2 moves the contract's due date (move_due, a saved effect): before its pending write,
# after it, after the effect is saved with the step's results, after the step completes.
POINTS = [("between_tools", 1), ("after_tools", 1), ("after_pending", 1), ("after_complete", 1),
          ("before_pending", 2), ("after_pending", 2), ("after_tools", 2),
          ("after_complete", 2)]  # fmt: skip


@pytest.mark.parametrize(("point", "step"), POINTS, ids=[f"{p}-{s}" for p, s in POINTS])
def test_a_kill_at_each_write_of_the_compared_state_resumes_to_the_same_lines(
    tmp_path: Path, store_target: Path | str, point: str, step: int
) -> None:
    db = store_target
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    slides = next(t for t in tasks if "slides" in t["title"].lower())
    assert dayflow(db, "tasks", "done", slides["id"], api=None, **env).code == 0
    _day2(tmp_path)
    killed = dayflow(db, "brief", "--date", DAY2, *SINCE, "--model", "offline",
                     DAYFLOW_KILL_AT=f"{point}:{step}", api=None, **env)  # fmt: skip
    assert killed.code == -signal.SIGKILL, killed.err
    resumed = dayflow(db, "resume", api=None, **env)
    assert resumed.code == 0, resumed.err
    assert _section(resumed.out) == DAY2_LINES
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    assert [t["due"] for t in tasks if "contract" in t["title"].lower()] == ["2026-11-25"]


def test_a_resume_compares_what_it_saved_not_the_calendar_of_now(tmp_path: Path) -> None:
    """Killed once step 1 (with read_since's result) is committed, the resume shows the saved
    comparison, though the standup moved again before it."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    _day2(tmp_path)
    killed = dayflow(db, "brief", "--date", DAY2, *SINCE, "--model", "offline",
                     DAYFLOW_KILL_AT="after_complete:1", api=None, **env)  # fmt: skip
    assert killed.code == -signal.SIGKILL, killed.err
    later = _event("standup@x", "Standup", "20261119T160000Z", "20261119T163000Z")
    _calendar(tmp_path / "cal.ics", later, REVIEW, CLIENT)
    resumed = dayflow(db, "resume", api=None, **env)
    assert resumed.code == 0, resumed.err
    moved = [line for line in _section(resumed.out) if line.startswith("- Moved")]
    assert moved == [DAY2_LINES[4]]


def test_a_promise_is_a_task_only_when_the_user_adds_it(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    res = _brief(db, DAY1, env, "--format", "json")
    before = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    assert not [t for t in before if t["idempotency_key"].startswith("promise:")]
    ivan = next(p for p in json.loads(res.out)["followups"]["you_promised"] if "ivan" in p["id"]
                or p["with"]["address"] == "ivan@example.net")  # fmt: skip
    added = dayflow(db, "tasks", "add", "--from", ivan["key"], api=None, **env)
    assert added.code == 0, added.err
    again = dayflow(db, "tasks", "add", "--from", ivan["key"], api=None, **env)
    assert "already on your list" in again.err
    after = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    made = [t for t in after if t["idempotency_key"] == ivan["key"]]
    assert [(t["title"], t["due"], t["due_kind"], t["evidence"]) for t in made] == [
        (
            "Check with legal and revert (to Ivan Petrov)",
            "2026-11-19",
            "implied",
            "Let me check with legal and revert tomorrow.",
        )
    ]
    wrong = dayflow(db, "tasks", "add", "--from", "promise:0000", api=None, **env)
    assert wrong.code != 0 and "no promise" in wrong.err


def test_a_promise_key_typed_another_way_or_kept_since_files_no_second_task(
    tmp_path: Path,
) -> None:
    """`tasks add --from` found the promise whatever the case, a trailing space or tab or a
    `PROMISE:`, but filed the task under the key as typed: each was a second task. And Hana's
    promise, kept by day 2 ("Here is the quarterly report, as promised."), was still filed."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    res = _brief(db, DAY1, env, "--format", "json")
    promised = {p["with"]["address"]: p["key"] for p in
                json.loads(res.out)["followups"]["you_promised"]}  # fmt: skip
    key = promised["ivan@example.net"]
    assert dayflow(db, "tasks", "add", "--from", key, api=None, **env).code == 0
    for typed in (key.upper(), key + " ", key + "\t", "PROMISE:" + key.split(":", 1)[1]):
        again = dayflow(db, "tasks", "add", "--from", typed, api=None, **env)
        assert (again.code, again.err.startswith("already on your list: ")) == (0, True), typed
    _day2(tmp_path)
    _brief(db, DAY2, env)
    kept = dayflow(db, "tasks", "add", "--from", promised["hana@example.net"], api=None, **env)
    assert kept.code == 0, kept.err
    assert kept.err.strip() == (
        "not added, a later brief found it kept or called off: Send quarterly report (to Hana Sato)"
    )
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    assert [t["idempotency_key"] for t in tasks if t["idempotency_key"].startswith("promise:")] == [
        key
    ]


def test_on_claudes_wire_the_tools_and_the_section_are_the_same(tmp_path: Path) -> None:
    """The real SDK against the loopback API (which checks each request's tools and blocks):
    read_since and move_due as Claude is offered them, the same lines on day 2."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    with FakeAPI(responder=responder_from_client(OfflineModel())) as api:
        one = dayflow(db, "brief", "--date", DAY1, *SINCE, api=api, **env)
        assert one.code == 0, one.err
        tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
        slides = next(t for t in tasks if "slides" in t["title"].lower())
        assert dayflow(db, "tasks", "done", slides["id"], api=None, **env).code == 0
        _day2(tmp_path)
        two = dayflow(db, "brief", "--date", DAY2, *SINCE, api=api, **env)
        assert two.code == 0, two.err
        offered = {t["name"] for t in json.loads(api.message_requests[-1].body)["tools"]}
        page = dayflow(db, "brief", "--date", DAY3, *SINCE, "--format", "html", api=api, **env)
        assert page.code == 0, page.err
    assert {"read_since", "move_due"} <= offered
    assert _section(two.out) == DAY2_LINES
    # The page has both sections, after Today and after Waiting on others.
    html = page.out
    assert "Since yesterday" in html and "Compared with the brief of Thu 19 Nov." in html
    assert "Nothing of it changed" in html
    assert html.index("Today") < html.index("Since yesterday") < html.index("Needs action")
    assert html.index("Waiting on others") < html.index("You promised")
    assert "Check with legal and revert" in html


def test_a_compacted_morning_keeps_the_section(tmp_path: Path) -> None:
    """With the history compacted early (--compact-at 3000), the summary keeps read_since and
    move_due whole: day 2 says the same."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    slides = next(t for t in tasks if "slides" in t["title"].lower())
    assert dayflow(db, "tasks", "done", slides["id"], api=None, **env).code == 0
    _day2(tmp_path)
    two = _brief(db, DAY2, env, "--compact-at", "3000")
    assert "compacted" in log_kinds(db)  # the history was compacted in that run
    assert _section(two.out) == DAY2_LINES


KIM = "Kim Park <kim@vendor.example>"
LEO = "Leo Grant <leo@other.example>"
MIA = "Mia Ross <mia@promo.example>"


def _needs(text: str) -> list[str]:
    """The task titles under Needs action (each line without its sender and due)."""
    after = text.split("## Needs action", 1)[1].split("\n## ", 1)[0]
    return [x[2:].split(" (from ", 1)[0] for x in after.strip().splitlines() if x[:2] == "- "]


def _owed(text: str) -> list[str]:
    after = text.split("## You owe replies", 1)[1].split("\n## ", 1)[0]
    return [x for x in after.strip().splitlines() if x.startswith("- ")]


def test_a_corrected_day_one_shapes_day_two(tmp_path: Path, store_target: Path | str) -> None:
    """The held-out sequence: day 1 adds Kim's invoice (rejected), Mia's banner (her domain
    muted) and Erin's slides (the owed reply snoozed); day 2 has Kim's next invoice (no task),
    Leo's like invoice (a task), Mia's next ask (nothing) and the night's changes of `_day2`."""
    db = store_target
    env = _day1(tmp_path)
    inbox = tmp_path / "mail" / "INBOX"
    for mid, who, subject, body in (
        ("kim1@x", KIM, "Invoice 113", "Please review the attached invoice."),
        ("mia1@x", MIA, "Banner", "Could you approve the banner?"),
    ):
        deliver(inbox, thread_mail(mid, sender=who, subject=subject, body=body, when=at(18, 10)),
                at(18, 10))  # fmt: skip
    one = json.loads(_brief(db, DAY1, env, "--format", "json").out)
    assert _needs(one["brief"]) == ["Send slides to Erin", "Review contract draft",
                                    "Send figures", "Review attached invoice",
                                    "Approve banner"]  # fmt: skip
    assert _promised(one["brief"]) == DAY1_PROMISED
    tasks = {t["title"]: t for t in json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)}
    assert sorted(tasks) == ["Approve banner", "Review attached invoice", "Review contract draft",
                             "Send figures", "Send slides to Erin"]  # fmt: skip
    # The corrections: Kim's invoice is no task, promo.example is muted, Erin's reply waits.
    reject = dayflow(db, "tasks", "reject", tasks["Review attached invoice"]["id"], api=None, **env)
    assert "no task from kim@vendor.example asking to 'review'" in reject.err, reject.err
    assert dayflow(db, "mute", "promo.example", api=None, **env).code == 0
    erin = next(
        i for i in one["followups"]["you_owe"] if i["with"]["address"] == "erin@example.net"
    )
    snooze = dayflow(db, "snooze", erin["key"], "--until", "3d", api=None, **env)
    assert snooze.code == 0, snooze.err
    assert (
        dayflow(db, "tasks", "done", tasks["Send slides to Erin"]["id"], api=None, **env).code == 0
    )
    _day2(tmp_path)
    for mid, who, subject, body in (
        ("kim2@x", KIM, "Invoice 114", "Please review the attached invoice."),
        ("leo1@x", LEO, "Invoice 7", "Please review the attached invoice."),
        ("mia2@x", MIA, "Banner v2", "Could you approve the new banner?"),
    ):
        deliver(inbox, thread_mail(mid, sender=who, subject=subject, body=body, when=at(19, 6)),
                at(19, 6))  # fmt: skip
    two = _brief(db, DAY2, env).out
    assert _section(two) == [*DAY2_LINES[:4], "- No longer on your list: Review attached invoice.",
                             *DAY2_LINES[4:]]  # fmt: skip
    assert _promised(two) == DAY1_PROMISED[1:]  # Hana's report was sent: kept
    assert _needs(two) == ["Review contract draft", "Review attached invoice"]
    needs = two.split("## Needs action", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert needs[:2] == [  # due on the day Frank's later message moved it to; his ask quoted,
        # the move's words as the due date's source
        "- Review contract draft (from Frank Li, due Wed 25 Nov)",
        '  - "Please review the contract draft by Monday 23 November." (due stated, moved: '
        '"Good news: the deadline moved to Wednesday 25 November.")',
    ]
    assert needs[2] == "- Review attached invoice (from Leo Grant, no deadline given)"
    assert _owed(two) == [  # Invoice 113's task was rejected, "not mine": no reply owed
        '- Reply to Kim Park (kim@vendor.example): "Invoice 114", waiting 0 working days '
        "(since Thu 19 Nov)",
        '- Reply to Leo Grant (leo@other.example): "Invoice 7", waiting 0 working days '
        "(since Thu 19 Nov)",
        "- _4 left out by your rules (`dayflow rules` lists them)._",
    ]
    after = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    assert sorted(
        (
            t["title"],
            t["due"],
            t["status"],
            t["source_id"] == tasks.get(t["title"], {}).get("source_id"),
        )
        for t in after
    ) == [  # fmt: skip
        ("Approve banner", None, "open", True),  # muted: no new task, the old one stays
        ("Review attached invoice", None, "open", False),  # Leo's, not Kim's
        ("Review contract draft", "2026-11-25", "open", True),
        ("Send figures", None, "open", True),
    ]  # the slides are done (not listed); Kim's rejected task is gone


def test_a_fork_of_day_two_shows_the_same_since_yesterday(
    tmp_path: Path, store_target: Path | str
) -> None:
    """`dayflow fork RUN --from-step N` of day 2's brief, after the standup moved again: from
    step 1 (read_since's result copied, move_due made again on a task already moved) and from
    step 2 (both copied), the section is the one the forked run showed."""
    db = store_target
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    slides = next(t for t in tasks if "slides" in t["title"].lower())
    assert dayflow(db, "tasks", "done", slides["id"], api=None, **env).code == 0
    _day2(tmp_path)
    two = json.loads(_brief(db, DAY2, env, "--format", "json").out)
    assert _section(two["brief"]) == DAY2_LINES
    later = _event("standup@x", "Standup", "20261119T160000Z", "20261119T163000Z")
    _calendar(tmp_path / "cal.ics", later, REVIEW, CLIENT)
    for step in ("1", "2"):
        fork = dayflow(db, "fork", two["run"]["id"], "--from-step", step, api=None, **env)
        assert fork.code == 0, fork.err
        assert f"at step {step}: {step} step(s) copied" in fork.err
        assert _section(fork.out) == DAY2_LINES
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    assert [t["due"] for t in tasks if "contract" in t["title"].lower()] == ["2026-11-25"]


def _needs_lines(text: str) -> list[str]:
    """Every line under Needs action (each task's and its evidence's)."""
    return text.split("## Needs action", 1)[1].split("\n## ", 1)[0].strip().splitlines()


MOVED_NEED = "- Review contract draft (from Frank Li, due Wed 25 Nov)"
MOVED_QUOTE = (
    '  - "Please review the contract draft by Monday 23 November." (due stated, moved: '
    '"Good news: the deadline moved to Wednesday 25 November.")'
)


def test_day_two_in_its_own_mail_window_lists_the_moved_task_on_its_new_day(
    tmp_path: Path,
) -> None:
    """Without --since, day 2 reads only the mail since day 1: Frank's ask is not in it, his
    move is. The moved task was missing from Needs action, though Since yesterday said so."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    _day2(tmp_path)
    two = dayflow(db, "brief", "--date", DAY2, "--model", "offline", api=None, **env)
    assert two.code == 0, two.err
    assert DAY2_LINES[-1] in _section(two.out)
    needs = _needs_lines(two.out)
    at = needs.index(MOVED_NEED)
    assert needs[at + 1] == MOVED_QUOTE


def test_an_update_of_the_day_says_again_the_deadline_its_first_brief_moved(
    tmp_path: Path,
) -> None:
    """A plain second brief of day 2 (an update: only the mail since the first) compares with
    day 1 too, but could not make the move again (move_due checks the words against the mail
    the run read) and dropped the line; it is said again, and the task is listed on its day,
    its ask quoted (it was a source line with no words of the ask: read_since's proposal now
    carries the task's `asked`, as move_due's answer does)."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    _day2(tmp_path)
    first = _brief(db, DAY2, env)
    assert DAY2_LINES[-1] in _section(first.out)
    update = dayflow(db, "brief", "--date", DAY2, "--model", "offline", api=None, **env)
    assert update.code == 0, update.err
    assert [x for x in _section(update.out) if x.startswith("- Due date moved")] == [DAY2_LINES[-1]]
    needs = _needs_lines(update.out)
    assert needs[needs.index(MOVED_NEED) + 1] == MOVED_QUOTE
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    assert [t["due"] for t in tasks if t["title"] == "Review contract draft"] == ["2026-11-25"]


def test_a_later_brief_reading_the_ask_again_shows_the_moved_due_date(tmp_path: Path) -> None:
    """Day 3, reading Frank's ask again (--since), listed the task due on the ask's day, Mon
    23 Nov, though `dayflow tasks` says 2026-11-25: the task's date, and where its move is."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    _day2(tmp_path)
    _brief(db, DAY2, env)
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    [contract] = [t for t in tasks if t["title"] == "Review contract draft"]
    assert contract["due"] == "2026-11-25"
    needs = _needs_lines(_brief(db, DAY3, env).out)
    at = needs.index(MOVED_NEED)
    assert needs[at + 1] == (
        '  - "Please review the contract draft by Monday 23 November." (due as on your '
        f"list: `dayflow why {contract['id']}`)"
    )
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    assert [t["due"] for t in tasks if t["title"] == "Review contract draft"] == ["2026-11-25"]


def test_why_shows_the_due_date_a_later_message_moved(tmp_path: Path) -> None:
    """`dayflow why` on the contract task after day 2: the move from move_due's saved effect,
    with the message that made it and its words (once, though a fork made it again)."""
    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    _brief(db, DAY1, env)
    _day2(tmp_path)
    two = json.loads(_brief(db, DAY2, env, "--format", "json").out)
    fork = dayflow(db, "fork", two["run"]["id"], "--from-step", "1", api=None, **env)
    assert fork.code == 0, fork.err
    tasks = json.loads(dayflow(db, "tasks", "--json", api=None, **env).out)
    contract = next(t for t in tasks if "contract" in t["title"].lower())
    why = dayflow(db, "why", contract["id"], api=None, **env)
    assert why.code == 0, why.err
    lines = why.out.splitlines()
    at_move = next(i for i, line in enumerate(lines) if line.startswith("  moved:"))
    # Not "stated in the message": a later message moved it, and says so.
    assert lines[at_move - 1] == "  due:      2026-11-25, moved by Frank Li's message (below)"
    assert lines[at_move].startswith(
        f"  moved:    2026-11-23 → 2026-11-25 (run {two['run']['id']}, step "
    )
    assert lines[at_move + 1].startswith("    by:     message work:")
    assert " from Frank Li <frank@example.net>, 2026-11-19T06:00:00+00:00" in lines[at_move + 1]
    assert lines[at_move + 2:at_move + 4] == [
        "    subject: Re: Contract draft",
        '    words:  "Good news: the deadline moved to Wednesday 25 November."',
    ]  # fmt: skip
    assert sum(line.startswith("  moved:") for line in lines) == 1
    doc = json.loads(dayflow(db, "why", contract["id"], "--json", api=None, **env).out)
    [move] = doc["tasks"][0]["due_moves"]
    assert (move["was"], move["now"], move["run_id"]) == ("2026-11-23", "2026-11-25",
                                                          two["run"]["id"])  # fmt: skip
    assert move["evidence"] == "Good news: the deadline moved to Wednesday 25 November."


def test_claudes_prompt_says_the_same_one_line_when_nothing_changed() -> None:
    """The section names what it compared, for Claude as for the offline model: its first line
    the brief, and a new task since that brief is not a change of it, so "Nothing changed"
    would lie."""
    from dayflow.agent import SYSTEM_PROMPT
    from dayflow.models import Section

    flat = " ".join(SYSTEM_PROMPT.split())
    assert Section.compared_with("2026-11-04") == "Compared with the brief of Wed 4 Nov."
    assert '"Compared with the brief of <previous\'s day>.", the day as "Wed 4 Nov"' in flat
    assert f'"- {Section.SINCE_NOTHING}"' in flat
    assert "Nothing changed" not in flat
