"""The mail tools through the loop: a message the user is only copied on says so (`copied`,
with whom it is `to`) when `me` is known, and the offline model files no task from a request
in it that names someone else, but does from one that names the user; one that reached the
user through a group address says so (`to_group`), and the offline model files from it only
what is the user's own (an errand with a deadline), not what everyone is asked."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from dayflow.agent import SYSTEM_PROMPT, BriefOptions, Loop, start_run
from dayflow.followups import Feed
from dayflow.providers.offline import OfflineModel
from dayflow.sources.inbox import Inbox
from dayflow.sources.json_files import JsonCalendar, JsonInbox
from dayflow.sources.mail import DictMail
from dayflow.sources.me import Me, parse_me
from dayflow.store import Store
from dayflow.tools.mail import READ_INBOX
from tests.scripted import ScriptedModel, text, tool_use, turn

DAY = dt.date(2026, 11, 4)
ME = "Alex Morgan <alex@example.org>"
MAIL: list[dict[str, Any]] = [
    {"id": "c1", "from": "Priya Raman <priya@example.org>", "to": "Mira Santos <mira@example.org>",
     "cc": ME, "subject": "Q4 numbers", "received_at": "2026-11-03T10:05:00-05:00",
     "body": "Mira, could you send Ravi the Q4 numbers by Thursday?\n\nPriya"},
    {"id": "c2", "from": "Priya Raman <priya@example.org>", "to": "Mira Santos <mira@example.org>",
     "cc": [ME, "Ben Carter <ben@example.org>"], "subject": "Re: Q4 numbers",
     "received_at": "2026-11-03T11:00:00-05:00",
     "body": "Mira is on it. Alex, could you check the churn assumptions first?\n\nPriya"},
    {"id": "c3", "from": "Priya Raman <priya@example.org>", "to": ME, "cc": "mira@example.org",
     "subject": "Roadmap", "received_at": "2026-11-03T12:00:00-05:00",
     "body": "Could you send me the roadmap slide by Friday?\n\nPriya"},
]  # fmt: skip


def _sources(root: Path, me: Me, mail: list[dict[str, Any]] = MAIL) -> Any:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "inbox.json"
    path.write_text(json.dumps({"messages": mail}), encoding="utf-8")

    def sources(settings: Any, day: dt.date) -> tuple[Inbox, JsonCalendar]:
        inbox = Inbox([DictMail("inbox", JsonInbox(path, day, tz=dt.UTC))])
        inbox.followups = Feed(inbox.sources, [], me=me, brief_date=day, tz=dt.UTC)
        return inbox, JsonCalendar(None, day)

    return sources


def _listing(
    store: Store, root: Path, me: Me, mail: list[dict[str, Any]] = MAIL
) -> dict[str, dict[str, Any]]:
    model = ScriptedModel([turn(tool_use("read_inbox", {"limit": 10})), turn(text("done"))])
    start_run(Loop(store, model, sources=_sources(root, me, mail)), BriefOptions(brief_date=DAY))
    (result,) = list(model.requests[1].messages[-1]["content"])
    return {m["subject"]: m for m in json.loads(result["content"])["messages"]}


def test_a_message_the_user_is_only_copied_on_says_so_with_whom_it_is_to(
    store: Store, tmp_path: Path
) -> None:
    listed = _listing(store, tmp_path, parse_me(["alex@example.org"]))
    assert listed["Q4 numbers"]["copied"] is True
    assert listed["Q4 numbers"]["to"] == ["Mira Santos"]
    assert listed["Re: Q4 numbers"]["copied"] is True
    assert "copied" not in listed["Roadmap"] and "to" not in listed["Roadmap"]  # to the user


def test_without_me_no_message_says_it_is_copied(store: Store, tmp_path: Path) -> None:
    listed = _listing(store, tmp_path, Me())
    assert not any("copied" in m or "to" in m for m in listed.values())


def test_the_offline_model_files_only_the_copied_users_own_asks(
    store: Store, tmp_path: Path
) -> None:
    sources = _sources(tmp_path, parse_me(["alex@example.org"]))
    done = start_run(Loop(store, OfflineModel(), sources=sources), BriefOptions(brief_date=DAY))
    assert done.run.status == "done"
    titles = sorted(t.title for t in store.tasks.list())
    assert titles == ["Check churn assumptions first", "Send roadmap slide to Priya"]


def test_a_mailing_lists_post_is_no_task_whatever_its_imperatives(
    store: Store, tmp_path: Path
) -> None:
    """A technical post on a list (List-Id) is `bulk`: "Be patient", "restart it from the
    Actions tab", "please test it" are the list's, not a to-do of the user's."""
    post = {
        "id": "l1", "from": "Kenji Watanabe <kenji@lists.example.org>",
        "to": "dev@lists.example.org", "list_id": "<dev.lists.example.org>",
        "subject": "Re: [dev] slow CI on the arm runners",
        "received_at": "2026-11-03T06:40:00-05:00",
        "body": "Be patient, the backlog clears by noon. If you need a run sooner, restart it "
        "from the Actions tab. Please test the RC on your setup and report regressions by "
        "Friday.\n\n-- \nKenji\ndev mailing list\nhttps://lists.example.org/listinfo/dev",
    }  # fmt: skip
    sources = _sources(tmp_path, parse_me(["alex@example.org"]), [post])
    done = start_run(Loop(store, OfflineModel(), sources=sources), BriefOptions(brief_date=DAY))
    assert done.run.status == "done" and store.tasks.list() == []


GROUP_MAIL: list[dict[str, Any]] = [
    {"id": "g1", "from": "Coach Reyes <coach@rowing.example>",
     "to": "Squad Families <squad-families@rowing.example>", "subject": "Regatta Saturday",
     "received_at": "2026-11-03T09:00:00-05:00",
     "body": "The bus leaves at 6:30 sharp. Please pack a spare kit and a water bottle."},
    {"id": "g2", "from": "Coach Reyes <coach@rowing.example>",
     "to": "Squad Families <squad-families@rowing.example>", "subject": "Regatta forms",
     "received_at": "2026-11-03T09:30:00-05:00",
     "body": "Please return the signed travel consent by Friday.\n\nCoach Reyes"},
    {"id": "g3", "from": "Coach Reyes <coach@rowing.example>", "to": ME,
     "subject": "Oars", "received_at": "2026-11-03T10:00:00-05:00",
     "body": "Please pack the spare oars by Friday."},
    {"id": "g4", "from": "Coach Reyes <coach@rowing.example>", "to": "Sam Lee <sam@example.org>",
     "cc": ME, "subject": "Cox", "received_at": "2026-11-03T10:10:00-05:00",
     "body": "Sam, could you cox on Saturday?"},
    {"id": "g5", "from": "Rowing News <news@rowing.example>", "to": "members@rowing.example",
     "list_id": "<members.rowing.example>", "subject": "Newsletter",
     "received_at": "2026-11-03T10:20:00-05:00", "body": "Please renew by December."},
    {"id": "g6", "from": ME, "to": "squad-families@rowing.example", "subject": "Lifts",
     "received_at": "2026-11-03T10:30:00-05:00", "body": "I can drive two rowers on Saturday."},
]  # fmt: skip


def test_a_message_to_a_group_address_says_so_with_whom_it_is_to(
    store: Store, tmp_path: Path
) -> None:
    """`to_group` when the user is in neither To nor Cc; not on mail to the user, mail the
    user is copied on (`copied`), list mail (`bulk` says more) or the user's own mail."""
    listed = _listing(store, tmp_path, parse_me(["alex@example.org"]), GROUP_MAIL)
    assert listed["Regatta Saturday"]["to_group"] is True
    assert listed["Regatta Saturday"]["to"] == ["Squad Families"]
    assert listed["Regatta forms"]["to_group"] is True
    assert "to_group" not in listed["Oars"] and "to" not in listed["Oars"]
    assert listed["Cox"]["copied"] is True and "to_group" not in listed["Cox"]
    assert listed["Newsletter"]["bulk"] is True and "to_group" not in listed["Newsletter"]
    assert "to_group" not in listed["Lifts"]


def test_without_me_no_message_says_it_went_to_a_group(store: Store, tmp_path: Path) -> None:
    """The user's address unknown, a group's cannot be told from theirs: no mark at all."""
    listed = _listing(store, tmp_path, Me(), GROUP_MAIL)
    assert not any("to_group" in m or "to" in m for m in listed.values())


def test_the_claude_path_is_told_what_to_group_means() -> None:
    """The model sees the field in read_inbox's description and the system prompt."""
    assert "`to_group` true" in READ_INBOX.description
    assert "`to_group`" in SYSTEM_PROMPT and "group address" in SYSTEM_PROMPT


def test_the_offline_model_files_from_group_mail_only_the_users_own_errand(
    store: Store, tmp_path: Path
) -> None:
    sources = _sources(tmp_path, parse_me(["alex@example.org"]), GROUP_MAIL[:3])
    done = start_run(Loop(store, OfflineModel(), sources=sources), BriefOptions(brief_date=DAY))
    assert done.run.status == "done"
    titles = sorted(t.title for t in store.tasks.list())
    assert titles == ["Pack spare oars", "Return signed travel consent"]


LIST = {"to": "pack9-parents@groups.example", "list_id": "<pack9-parents.groups.example>"}
LIST_MAIL: list[dict[str, Any]] = [
    {"id": "p1", "from": "Tom Brennan <tbrennan.pack9@gmail.example>", **LIST,
     "subject": "Popcorn money due Nov 13!", "received_at": "2026-11-03T09:00:00-05:00",
     "body": "Hi Pack 9 families,\n\nPlease turn in your scout's order forms and money to me "
     "by November 13th. Thanks for a great weekend!\n\nTom"},
    {"id": "p2", "from": "Pack 9 News <news@pack9.example>", **LIST,
     "subject": "Pack newsletter", "received_at": "2026-11-03T09:10:00-05:00",
     "body": "Please renew your membership by December."},
    {"id": "p3", "from": "Tom Brennan via Pack 9 <pack9-parents@groups.example>", **LIST,
     "subject": "Camping trip", "received_at": "2026-11-03T09:20:00-05:00",
     "body": "Please send the camping form by Friday."},
    {"id": "p4", "from": "Ana Ruiz <ana@example.net>", **LIST,
     "subject": "Re: [pack9] Camping trip", "received_at": "2026-11-03T09:30:00-05:00",
     "body": "Please bring a spare tent by Friday."},
    {"id": "p5", "from": "Ana Ruiz <ana@example.net>", **LIST, "subject": "Pack 9 Digest",
     "received_at": "2026-11-03T09:40:00-05:00", "body": "Please send photos by Friday."},
]  # fmt: skip


def test_a_persons_post_to_a_groups_list_address_is_group_mail_not_bulk(
    store: Store, tmp_path: Path
) -> None:
    """A cubmaster's mail to pack9-parents@ (its List-Id) asks each family what group mail
    asks: `to_group`, not `bulk`; the list's newsletter, its relay of a post, a thread and a
    digest stay `bulk`, and without `me` so does the post."""
    me = parse_me(["alex@example.org"])
    listed = _listing(store, tmp_path, me, LIST_MAIL)
    post = listed["Popcorn money due Nov 13!"]
    assert post["to_group"] is True and "bulk" not in post
    for subject in ("Pack newsletter", "Camping trip", "Re: [pack9] Camping trip", "Pack 9 Digest"):
        assert listed[subject]["bulk"] is True and "to_group" not in listed[subject]
    unknown = _listing(store, tmp_path / "no-me", Me(), LIST_MAIL)
    assert unknown["Popcorn money due Nov 13!"]["bulk"] is True
    done = start_run(
        Loop(store, OfflineModel(), sources=_sources(tmp_path / "run", me, LIST_MAIL)),
        BriefOptions(brief_date=DAY),
    )
    assert [t.title for t in store.tasks.list()] == ["Turn in scout's order forms and money to Tom"]
    assert done.run.status == "done"
