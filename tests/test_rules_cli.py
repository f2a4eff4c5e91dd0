"""The user's corrections through the CLI, on both engines: a rejection on day 1 keeps day 2's
like mail from its sender from becoming a task (and no one else's), mute, important and
snooze as the briefs obey them, `dayflow rules`, and a resume that keeps its run's rules."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from dayflow.models import ModelRequest, ModelResponse
from dayflow.providers.offline import OfflineModel
from tests.harness import Result, invoke
from tests.scripted import ScriptedModel, text, tool_use, turn

DAY1, DAY2 = "2026-11-05T07:30:00+00:00", "2026-11-06T07:30:00+00:00"


def _mail(mid: str, sender: str, subject: str, body: str, day: str) -> dict[str, Any]:
    return {"id": mid, "from": sender, "to": "me@me.example", "subject": subject,
            "received_at": f"{day}T06:00:00+00:00", "body": body, "unread": True}  # fmt: skip


OPS = "Ops Bot <reports@ops.example>"
DANA = "Dana Ruiz <dana@acme.example>"
LEE = "Lee Park <lee@other.example>"
INBOX1 = [
    _mail("a1", OPS, "Weekly capacity report", "Please review the capacity report by "
          "Friday 2026-11-06.", "2026-11-05"),
    _mail("b1", DANA, "Budget sheet", "Please review the budget sheet by Friday 2026-11-06.",
          "2026-11-05"),
]  # fmt: skip
INBOX2 = [
    _mail("a2", OPS, "Weekly capacity report", "Please review the capacity report by "
          "Monday 2026-11-09.", "2026-11-06"),
    _mail("c2", LEE, "Slides", "Please review my slides by Monday 2026-11-09.", "2026-11-06"),
]  # fmt: skip


class Profile:
    """A user with a config file (rules.toml beside it) and a database."""

    def __init__(self, tmp_path: Path, db: Path | str) -> None:
        self.dir, self.db = tmp_path, db
        (tmp_path / "config.toml").write_text("")
        self.env = {"DAYFLOW_CONFIG": str(tmp_path / "config.toml"), "HOME": str(tmp_path)}

    def inbox(self, name: str, messages: list[dict[str, Any]]) -> str:
        path = self.dir / f"{name}.json"
        path.write_text(json.dumps({"messages": messages}))
        return str(path)

    def run(self, *args: str, clock: str = DAY1, model: Any = None) -> Result:
        factory = (lambda m, s: model) if model is not None else (lambda m, s: OfflineModel())
        return invoke(self.db, factory, *args, env=self.env, clock=clock)

    def brief(
        self, day: str, messages: list[dict[str, Any]], *more: str, model: Any = None
    ) -> Result:
        clock = DAY1 if day == "2026-11-05" else DAY2
        inbox = self.inbox(day, messages)
        return self.run("brief", "--date", day, "--inbox", inbox, "--format", "markdown",
                        *more, clock=clock, model=model)  # fmt: skip

    def tasks(self) -> dict[str, str]:
        """title -> id of every open task."""
        found = json.loads(self.run("tasks", "--json").out)
        return {t["title"]: t["id"] for t in found}

    @property
    def rules_file(self) -> Path:
        return self.dir / "rules.toml"


@pytest.fixture
def user(tmp_path: Path, db_path: Path | str) -> Profile:
    return Profile(tmp_path, db_path)


def _reject_the_bots_task(user: Profile) -> Result:
    assert user.brief("2026-11-05", INBOX1).code == 0
    tasks = user.tasks()
    assert sorted(tasks) == [
        "Review budget sheet",
        "Review capacity report",
    ]
    return user.run("tasks", "reject", tasks["Review capacity report"], "--why",
                    "a bot's report, not mine")  # fmt: skip


def test_a_rejected_task_leaves_a_rule_and_the_next_like_mail_from_its_sender_is_no_task(
    user: Profile,
) -> None:
    rejected = _reject_the_bots_task(user)
    assert rejected.code == 0, rejected.err
    assert "rule r1: no task from reports@ops.example asking to 'review'" in rejected.err
    assert sorted(user.tasks()) == ["Review budget sheet"]
    listed = user.run("rules")
    assert "r1    reject    no task from reports@ops.example asking to 'review'" in listed.out
    assert "dayflow tasks reject t_" in listed.out and "why: a bot's report" in listed.out
    day2 = user.brief("2026-11-06", INBOX2)
    assert day2.code == 0, day2.err
    assert sorted(user.tasks()) == [
        "Review Lee's slides",
        "Review budget sheet",
    ]
    assert "capacity" not in day2.out.split("## Needs action")[1].split("##")[0]


@pytest.mark.parametrize("asking", ["*", ".*", "?"])
def test_a_reject_asking_no_word_is_refused_pointing_to_mute(user: Profile, asking: str) -> None:
    """`--asking '*'` named no word, and `asks` takes no word for any request: every task from
    that sender refused, a full mute made by `tasks reject`. Refused, exit 2, nothing written."""
    assert user.brief("2026-11-05", INBOX1).code == 0
    task = user.tasks()["Review capacity report"]
    refused = user.run("tasks", "reject", task, "--asking", asking)
    assert refused.code == 2, refused.err
    assert refused.err.startswith(f"error: --asking {asking!r} names no word of a request")
    assert "`dayflow mute reports@ops.example`" in refused.err
    assert not user.rules_file.exists() and task in user.tasks().values()


@pytest.mark.parametrize("asking", ["the", "by", "by the", "sam"])
def test_a_reject_asking_only_common_words_or_the_users_name_is_refused(
    user: Profile, asking: str
) -> None:
    """`--asking the` (or `by`, or the user's own first name, which every greeting says)
    matched nearly every request from the sender: a mute by another name. Refused, exit 2,
    pointing to `dayflow mute`, nothing written."""
    (user.dir / "config.toml").write_text('me = ["sam.lee@me.example"]\n')
    assert user.brief("2026-11-05", INBOX1).code == 0
    task = user.tasks()["Review capacity report"]
    refused = user.run("tasks", "reject", task, "--asking", asking)
    assert refused.code == 2, refused.err
    assert refused.err.startswith(f"error: --asking {asking!r} has only words nearly every")
    assert "`dayflow mute reports@ops.example`" in refused.err
    assert not user.rules_file.exists() and task in user.tasks().values()
    taken = user.run("tasks", "reject", task, "--asking", "review the")
    assert taken.code == 0, taken.err


def test_a_resumed_run_obeys_the_rules_it_started_with(user: Profile) -> None:
    _reject_the_bots_task(user)
    crashed = user.brief("2026-11-06", INBOX2, "--crash-after", "1")
    assert crashed.code == 70, crashed.err
    user.rules_file.unlink()  # the file changed meanwhile: the run keeps its own rules
    resumed = user.run("resume", clock=DAY2)
    assert resumed.code == 0, resumed.err
    assert "Review capacity report" not in user.tasks()
    assert "Review Lee's slides" in user.tasks()


def test_mute_is_never_a_task_and_important_comes_first_and_is_the_one_thing(
    user: Profile,
) -> None:
    assert user.run("mute", "ops.example").code == 0
    assert user.run("important", "lee@other.example").code == 0
    day2 = user.brief("2026-11-06", [*INBOX2, INBOX1[1]])
    assert day2.code == 0, day2.err
    needs = day2.out.split("## Needs action")[1].split("##")[0].strip().splitlines()
    # Lee's is due later than Dana's, yet first: the user marked Lee important (under each
    # request, the sender's words it was found in: tests/test_why.py).
    assert [line for line in needs if not line.startswith("  - ")] == [
        "- Review Lee's slides (from Lee Park, due Mon 9 Nov)",
        "- Review budget sheet (from Dana Ruiz, due today)",
    ]
    assert "**Review Lee's slides, due Mon 9 Nov.**" in day2.out
    assert "Review capacity report" not in user.tasks()


def test_a_snoozed_task_is_left_out_until_its_day_and_back_on_it(user: Profile) -> None:
    assert user.brief("2026-11-05", INBOX1).code == 0
    budget = user.tasks()["Review budget sheet"]
    snoozed = user.run("snooze", budget, "--until", "2d")
    assert snoozed.code == 0 and "snoozed until 2026-11-07" in snoozed.err
    day2 = user.brief("2026-11-06", [INBOX1[1]])
    assert "budget" not in day2.out.split("## Needs action")[1].split("## One thing")[0]
    back = user.run("brief", "--date", "2026-11-07", "--inbox", user.inbox("d3", []),
                    "--format", "markdown", clock="2026-11-07T07:30:00+00:00")  # fmt: skip
    assert "Review budget sheet (on your task list, overdue" in back.out


def _reads_the_task_list(request: ModelRequest) -> ModelResponse:
    """A model that reads the task list and writes it out as its brief."""
    if request.step == 1:
        return turn(tool_use("read_tasks", {"include_done": False}))
    last = request.messages[-1]["content"]
    said = [str(b["content"]) for b in last if isinstance(b, dict) and "content" in b]
    return turn(text("# Daily brief\n\n" + " | ".join(said)))


def test_a_snoozed_task_is_marked_back_on_its_day_though_due_later(user: Profile) -> None:
    """`snooze ID --until DATE`: 'back on it' that day. A task due later than its snooze was in
    no brief on that day (its mail older than the window, and not yet due): read_tasks marks
    it `snooze_ended` on that day alone, so the model lists it."""
    ask = _mail("d1", DANA, "Budget sheet", "Please review the budget sheet by "
                "2026-11-13.", "2026-11-05")  # fmt: skip
    assert user.brief("2026-11-05", [ask]).code == 0
    (task,) = user.tasks().values()
    assert user.run("snooze", task, "--until", "2026-11-06").code == 0
    model = ScriptedModel(fn=_reads_the_task_list)
    day2 = user.brief("2026-11-06", [INBOX2[1]], "--model", "claude-test", model=model)
    assert day2.code == 0, day2.err
    last = model.requests[1].messages[-1]["content"]
    (listed,) = json.loads(next(b for b in last if "content" in b)["content"])["tasks"]  # type: ignore[operator,index]
    assert listed["id"] == task and listed["snooze_ended"] is True, listed


def test_a_snoozed_task_is_back_in_needs_action_on_its_day_though_due_later(
    user: Profile,
) -> None:
    """On the snooze's day a brief of the mail since the last one lists the task, though it is
    due a week later: it was in no brief at all on its day, back only once overdue."""
    ask = _mail("d1", DANA, "Budget sheet", "Please review the budget sheet by "
                "2026-11-13.", "2026-11-05")  # fmt: skip
    assert user.brief("2026-11-05", [ask]).code == 0
    ((title, task),) = user.tasks().items()
    assert user.run("snooze", task, "--until", "2026-11-06").code == 0
    day2 = user.brief("2026-11-06", [INBOX2[1]])
    assert day2.code == 0, day2.err
    needs = day2.out.split("## Needs action", 1)[1].split("\n## ", 1)[0]
    assert f"- {title} (on your task list, due Fri 13 Nov)" in needs, needs


@pytest.mark.parametrize("until", ["2020-01-01", "2026-11-05", "0d", "400d", "9999-12-31",
                                   "99999999999d", "yesterday"])  # fmt: skip
def test_a_snooze_far_in_the_past_or_future_is_refused_in_one_line(
    user: Profile, until: str
) -> None:
    assert user.brief("2026-11-05", INBOX1).code == 0
    task = next(iter(user.tasks().values()))
    refused = user.run("snooze", task, "--until", until)
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1
    assert not user.rules_file.exists()


@pytest.mark.parametrize("pattern", ["*", "@", "com", ".org", "thread:", "list:"])
def test_mute_patterns_that_would_match_everything_are_refused(user: Profile, pattern: str) -> None:
    refused = user.run("mute", pattern)
    assert refused.code == 2 and "would match too much or nothing" in refused.err
    assert not user.rules_file.exists()


def test_mute_and_important_take_a_from_line_as_why_shows_it(user: Profile) -> None:
    muted = user.run("mute", '"Doe, Jane" <Jane@X.example>')
    assert muted.code == 0 and "mute jane@x.example" in muted.err, muted.err
    kept = user.run("important", "Doe, Jane <jane@y.example>")
    assert kept.code == 0 and "jane@y.example is important" in kept.err, kept.err


def test_a_pattern_too_long_for_any_address_is_refused_before_the_file_is_written(
    user: Profile,
) -> None:
    """`mute` took a 100,000-character address and wrote it; the reader refuses a match over
    500 characters, so the rule applied nothing and every later mute was refused ("fix
    rules.toml first"): the command broke its own file."""
    refused = user.run("mute", "a" * 100_000 + "@x.example")
    assert refused.code == 2 and len(refused.err) < 300, refused.err[:300]
    assert not user.rules_file.exists()
    assert user.run("mute", "ok.example").code == 0


def test_a_rejection_of_mail_from_a_monstrous_address_keys_on_the_task_not_the_sender(
    user: Profile,
) -> None:
    """`tasks reject` wrote a 600-character sender as the rule's match, which the file's reader
    refuses: the rule did nothing and every later mute was refused ("fix rules.toml first")."""
    huge = "Bob <" + "b" * 600 + "@x.example>"
    day1 = [_mail("a1", huge, "Capacity", INBOX1[0]["body"], "2026-11-05"), INBOX1[1]]
    assert user.brief("2026-11-05", day1).code == 0
    rejected = user.run("tasks", "reject", user.tasks()["Review capacity report"])
    assert rejected.code == 0, rejected.err
    listed = user.run("rules")
    assert listed.code == 0 and "warning" not in listed.err, listed.err[:300]
    assert user.run("mute", "ok.example").code == 0


def test_a_hand_edited_file_with_a_bad_entry_still_applies_the_rest_and_is_not_overwritten(
    user: Profile,
) -> None:
    bad = 'profile = "default"\n[[rule]]\nkind = "mute"\nmatch = "*"\n'
    good = '[[rule]]\nid = "mine"\nkind = "mute"\nmatch = "ops.example"\n'
    user.rules_file.write_text(bad + good)
    day2 = user.brief("2026-11-06", INBOX2)
    assert day2.code == 0
    assert f"warning: {user.rules_file}: rule 1:" in day2.err
    assert "Review capacity report" not in user.tasks()
    refused = user.run("mute", "acme.example")
    assert refused.code == 4 and "nothing changed" in refused.err
    assert user.rules_file.read_text() == bad + good


def test_a_file_with_keys_no_rules_file_has_is_never_written_over(user: Profile) -> None:
    """A rules.toml that is a config file (another profile's, named rules.toml or
    NAME.rules.toml) got a warning per key from `dayflow rules`, and then `mute` wrote over
    it: that config was gone. A file a command could not read whole is refused, exit 4."""
    other = '\nme = ["me@me.example"]\n\n[[inbox]]\nname = "home"\nkind = "json"\npath = "x.json"\n'
    user.rules_file.write_text(other)
    listed = user.run("rules")
    assert "unknown key 'inbox' ignored" in listed.err
    refused = user.run("mute", "acme.example")
    assert refused.code == 4 and "nothing changed" in refused.err, (refused.code, refused.err)
    assert len(refused.err.splitlines()) == 1, refused.err
    assert user.rules_file.read_text() == other


def test_another_profiles_rules_are_not_applied_nor_written_over(user: Profile) -> None:
    theirs = 'profile = "alice"\n[[rule]]\nkind = "mute"\nmatch = "other.example"\n'
    user.rules_file.write_text(theirs)
    day2 = user.brief("2026-11-06", INBOX2)
    assert "is the rules of profile 'alice', not of 'default'" in day2.err
    assert "Review Lee's slides" in user.tasks()
    assert user.run("mute", "ops.example").code == 4
    assert user.rules_file.read_text() == theirs


def _files_every_message(request: ModelRequest) -> ModelResponse:
    """A model that lists the inbox, files a task for every message, then writes a brief."""
    last = request.messages[-1]["content"]
    results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
    if request.step == 1:
        return turn(tool_use("read_inbox", {"limit": 10}))
    if request.step == 2:
        listed = json.loads(results[0]["content"])["messages"]
        return turn(*(tool_use("create_task", {"title": m["subject"], "source_id": m["id"],
                                               "evidence": m["snippet"].split(" by ")[0]})
                      for m in listed))  # fmt: skip
    said = " | ".join(str(r["content"]) for r in results)
    return turn(text(f"# Daily brief\n\n{said}"))


def test_a_model_that_ignores_the_rules_is_refused_by_create_task_naming_the_rule(
    user: Profile,
) -> None:
    _reject_the_bots_task(user)
    model = ScriptedModel(fn=_files_every_message)
    day2 = user.brief("2026-11-06", INBOX2, "--model", "claude-test", model=model)
    assert day2.code == 0, day2.err
    assert "The user's own rules" in model.requests[0].system
    assert "- r1: no task from reports@ops.example asking to 'review'" in model.requests[0].system
    listed = json.loads(
        next(b for b in model.requests[1].messages[-1]["content"])["content"]  # type: ignore[index]
    )["messages"]
    marks = {m["subject"]: m.get("no_task") for m in listed}
    assert marks == {
        "Weekly capacity report": "rule r1 (no task from reports@ops.example asking to 'review')",
        "Slides": None,
    }
    assert (
        "Error: the user's rule r1 (no task from reports@ops.example asking to 'review') "
        "forbids this task; no task was created" in day2.out
    )
    assert "Slides" in user.tasks() and "Weekly capacity report" not in user.tasks()


def test_tasks_done_marks_it_done_once(user: Profile) -> None:
    assert user.brief("2026-11-05", INBOX1).code == 0
    task = user.tasks()["Review budget sheet"]
    assert "done: " in user.run("tasks", "done", task).err
    assert "already done: " in user.run("tasks", "done", task).err
    assert "Review budget sheet" not in user.tasks()
    assert user.run("tasks", "done", "t_nosuch").code == 3


QUESTION = _mail("q1", DANA, "Offsite venue", "Do you prefer the lake venue or the city one?",
                 "2026-11-03")  # fmt: skip


def _owing(user: Profile, messages: list[dict[str, Any]]) -> None:
    """The user's config reads `messages` as its one inbox, with the user's address known."""
    inbox = user.inbox("home", messages)
    (user.dir / "config.toml").write_text(
        f'me = ["me@me.example"]\n[[inbox]]\nname = "home"\nkind = "json"\npath = "{inbox}"\n'
    )


def _owed(brief: str) -> list[str]:
    return brief.split("## You owe replies\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()


def test_an_owed_reply_snoozed_by_its_thread_key_is_left_out_until_its_day(
    user: Profile,
) -> None:
    _owing(user, [QUESTION])
    first = user.run("brief", "--date", "2026-11-05", "--format", "json")
    assert first.code == 0, first.err
    owed = json.loads(first.out)["followups"]["you_owe"]
    assert [o["subject"] for o in owed] == ["Offsite venue"]
    snoozed = user.run("snooze", owed[0]["key"], "--until", "2026-11-07")
    assert snoozed.code == 0 and "no saved brief showed" not in snoozed.err, snoozed.err
    later = user.run("brief", "--date", "2026-11-06", "--format", "markdown", clock=DAY2)
    assert _owed(later.out) == [
        "- Nobody is waiting on a reply from you.",
        "- _1 left out by your rules (`dayflow rules` lists them)._",
    ]
    back = user.run("brief", "--date", "2026-11-07", "--format", "markdown",
                    clock="2026-11-07T07:30:00+00:00")  # fmt: skip
    assert _owed(back.out)[0].startswith('- Reply to Dana Ruiz (dana@acme.example): "Offsite')


def test_a_snoozed_tasks_ask_is_no_reply_owed_until_the_snooze_ends(user: Profile) -> None:
    """`dayflow snooze TASK` left the task out, but its message stayed in the brief as a reply
    owed; as for a rejection, the reply owed for that message is left out until the day."""
    ask = _mail("q2", DANA, "Budget sheet", "Could you review the budget sheet by Monday "
                "2026-11-09?", "2026-11-05")  # fmt: skip
    _owing(user, [ask])
    first = user.run("brief", "--date", "2026-11-05", "--format", "markdown")
    assert first.code == 0, first.err
    assert _owed(first.out)[0].startswith('- Reply to Dana Ruiz (dana@acme.example): "Budget')
    (task,) = user.tasks().values()
    assert user.run("snooze", task, "--until", "2026-11-07").code == 0
    later = user.run("brief", "--date", "2026-11-06", "--format", "markdown", clock=DAY2)
    assert later.code == 0, later.err
    assert _owed(later.out) == [
        "- Nobody is waiting on a reply from you.",
        "- _1 left out by your rules (`dayflow rules` lists them)._",
    ]
    assert "budget" not in later.out.split("## Needs action")[1].split("## One thing")[0]
    back = user.run("brief", "--date", "2026-11-07", "--format", "markdown",
                    clock="2026-11-07T07:30:00+00:00")  # fmt: skip
    assert _owed(back.out)[0].startswith('- Reply to Dana Ruiz (dana@acme.example): "Budget')


def test_an_important_senders_task_from_older_mail_is_first_though_overdue(user: Profile) -> None:
    """`dayflow important` is "first in its section": Lee's task, filed on day 1 and overdue
    on Monday, whose mail that brief's window no longer holds, came after Dana's due today."""
    lee = _mail("l1", LEE, "Slides", "Please review my slides by Friday 2026-11-06.", "2026-11-05")
    dana = _mail("d9", DANA, "Budget sheet", "Please review the budget sheet by Monday "
                 "2026-11-09.", "2026-11-08")  # fmt: skip
    _owing(user, [lee, dana])
    assert user.run("brief", "--date", "2026-11-05").code == 0
    assert user.run("important", "lee@other.example").code == 0
    monday = user.run("brief", "--date", "2026-11-09", "--format", "markdown",
                      clock="2026-11-09T07:30:00+00:00")  # fmt: skip
    assert monday.code == 0, monday.err
    needs = monday.out.split("## Needs action\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line for line in needs if line.startswith("- ")] == [
        "- Review Lee's slides (on your task list, overdue since Fri 6 Nov)",
        "- Review budget sheet (from Dana Ruiz, due today)",
    ]
    assert "**Review Lee's slides, overdue since Fri 6 Nov.**" in monday.out


def test_a_thread_no_saved_brief_showed_is_snoozed_with_a_warning(user: Profile) -> None:
    """A thread key no saved brief showed (a typo, or one from another database) is still
    snoozed, so a correct key is never refused, but one line on stderr says no brief showed it
    after the rule's line."""
    _owing(user, [QUESTION])
    assert user.run("brief", "--date", "2026-11-05", "--format", "json").code == 0
    typo = user.run("snooze", "thread:000000000000", "--until", "3d")
    assert typo.code == 0, typo.err
    lines = typo.err.strip().splitlines()
    assert lines[0].startswith("rule r1: thread:000000000000 snoozed") and len(lines) == 2
    assert lines[1].startswith("note: no saved brief showed thread:000000000000"), typo.err
    assert lines[1].endswith("check the key in `dayflow brief --format json`")
    assert "thread:000000000000" in user.rules_file.read_text()
    # mute says the same of a thread no brief showed, and nothing of one a brief showed.
    muted = user.run("mute", "thread:111111111111")
    assert muted.code == 0, muted.err
    assert muted.err.strip().splitlines()[1] == (
        "note: no saved brief showed thread:111111111111 (a thread); the rule is kept: check "
        "the key in `dayflow brief --format json`"
    )
    owed = json.loads(user.run("brief", "--date", "2026-11-05", "--format", "json").out)
    shown = user.run("mute", owed["followups"]["you_owe"][0]["key"])
    assert shown.code == 0 and "no saved brief showed" not in shown.err, shown.err


def _no_model(model: str, settings: Any) -> Any:
    raise AssertionError("replay must make no model call")


def test_replay_reads_the_saved_mornings_with_todays_rules_and_changes_nothing(
    user: Profile,
) -> None:
    _owing(user, [QUESTION, *INBOX1])
    assert user.run("brief", "--date", "2026-11-05").code == 0
    _owing(user, [QUESTION, *INBOX1, *INBOX2])
    assert user.run("brief", "--date", "2026-11-06", clock=DAY2).code == 0
    assert user.run("mute", "acme.example").code == 0
    assert user.run("important", "other.example").code == 0
    tasks, rules = user.tasks(), user.rules_file.read_bytes()
    runs = user.run("runs", "--json").out
    replayed = invoke(user.db, _no_model, "replay", "--since", "2026-11-01", env=user.env,
                      clock=DAY2)  # fmt: skip
    assert replayed.code == 0, replayed.err
    r1 = "rule r1 (mute acme.example: never a task, never a reply owed or awaited)"
    r2 = "rule r2 (other.example is important: first in its section, and One thing prefers it)"
    lines = replayed.out.splitlines()
    assert lines[0].startswith("2026-11-05 (run ") and lines[4].startswith("2026-11-06 (run ")
    assert lines[1:4] + lines[5:] == [
        f'  - no task: "Review budget sheet" from dana@acme.example ({r1})',
        f'  - left out: reply owed to Dana Ruiz: "Offsite venue" ({r1})',
        f'  - left out: reply owed to Dana Ruiz: "Budget sheet" ({r1})',
        f'  - first: "Review Lee\'s slides" from lee@other.example ({r2})',
        f'  - left out: reply owed to Dana Ruiz: "Offsite venue" ({r1})',
        f'  - left out: reply owed to Dana Ruiz: "Budget sheet" ({r1})',
        f'  - first: reply owed to Lee Park: "Slides" ({r2})',
    ]
    assert "replay: 2 morning(s) since 2026-11-01, 7 change(s), with 2 rule(s)" in replayed.err
    assert user.tasks() == tasks and user.rules_file.read_bytes() == rules
    assert user.run("runs", "--json").out == runs


@pytest.mark.parametrize("since", ["400d", "2027-01-01", "last week"])
def test_replay_refuses_a_since_it_cannot_read_in_one_line(user: Profile, since: str) -> None:
    assert user.brief("2026-11-05", INBOX1).code == 0
    refused = user.run("replay", "--since", since)
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1


FILLER = " ".join(["We had a lovely time at the lake last weekend, thanks again."] * 6)


def test_an_important_sender_comes_first_when_the_model_opens_the_message_too(
    user: Profile,
) -> None:
    """The reading flow (a snippet cut short, the message opened) keeps the mark in its note."""
    long = _mail("l2", LEE, "Slides", f"{FILLER}\n\nPlease review my slides by Monday "
                 "2026-11-09.", "2026-11-06")  # fmt: skip
    assert user.run("important", "lee@other.example").code == 0
    day2 = user.brief("2026-11-06", [long, INBOX1[1]])
    assert day2.code == 0, day2.err
    needs = day2.out.split("## Needs action")[1].split("##")[0].strip().splitlines()
    needs = [n for n in needs if not n.startswith("  - ")]  # each request's quote under it
    assert [n.split(" (from ")[1].split(",")[0] for n in needs] == ["Lee Park", "Dana Ruiz"]


def test_a_muted_sender_is_never_owed_a_reply(user: Profile) -> None:
    _owing(user, [QUESTION])
    assert user.run("mute", "dana@acme.example").code == 0
    brief = user.run("brief", "--date", "2026-11-05", "--format", "json")
    assert brief.code == 0, brief.err
    doc = json.loads(brief.out)
    assert doc["followups"]["you_owe"] == []
    assert [i["subject"] for i in doc["followups"]["left_out"]] == ["Offsite venue"]
    assert _owed(doc["brief"]) == [
        "- Nobody is waiting on a reply from you.",
        "- _1 left out by your rules (`dayflow rules` lists them)._",
    ]


def test_a_profiles_rules_live_beside_its_own_config_and_apply_to_it_alone(
    user: Profile,
) -> None:
    theirs = user.dir / "alice"
    theirs.mkdir(mode=0o755)
    (theirs / "config.toml").write_text("")
    assert user.brief("2026-11-05", INBOX1).code == 0  # the database exists
    added = user.run("profiles", "add", "alice", "--config", str(theirs / "config.toml"))
    assert added.code == 0, added.err
    assert user.run("mute", "ops.example", "--profile", "alice").code == 0
    assert 'profile = "alice"' in (theirs / "rules.toml").read_text()
    assert not user.rules_file.exists()
    listed = user.run("rules", "--profile", "alice", "--json")
    assert [r["match"] for r in json.loads(listed.out)["rules"]] == ["ops.example"]
    assert "no rules" in user.run("rules").err


def _alice(user: Profile) -> Path:
    """A profile `alice` with its own directory and config file (the database made first)."""
    theirs = user.dir / "alice"
    theirs.mkdir(mode=0o755)
    (theirs / "config.toml").write_text("")
    assert user.brief("2026-11-05", INBOX1).code == 0
    added = user.run("profiles", "add", "alice", "--config", str(theirs / "config.toml"))
    assert added.code == 0, added.err
    return theirs


def test_profiles_whose_config_files_share_a_directory_each_have_their_own_rules(
    user: Profile,
) -> None:
    """`profiles add home --config home.toml` beside the default's config.toml was accepted,
    then every `mute ... --profile home` exited 4: the one rules.toml there was 'default's.
    home's rules are home.rules.toml; the default's rules.toml is as it was."""
    assert user.run("mute", "acme.example").code == 0
    mine = user.rules_file.read_bytes()
    (user.dir / "home.toml").write_text("")
    assert user.brief("2026-11-05", INBOX1).code == 0
    added = user.run("profiles", "add", "home", "--config", str(user.dir / "home.toml"))
    assert added.code == 0 and "note:" not in added.err, added.err
    muted = user.run("mute", "ops.example", "--profile", "home")
    assert muted.code == 0, muted.err
    home = user.dir / "home.rules.toml"
    assert muted.err.endswith(f"({home})\n") and 'profile = "home"' in home.read_text()
    assert user.rules_file.read_bytes() == mine
    listed = user.run("rules", "--profile", "home")
    assert listed.out.startswith(f"rules of profile home ({home}):") and "ops.example" in listed.out
    assert "acme.example" not in listed.out
    assert json.loads(user.run("rules", "--json").out)["path"] == str(user.rules_file)
    day2 = user.run("brief", "--date", "2026-11-06", "--inbox", user.inbox("h2", INBOX2),
                    "--profile", "home", clock=DAY2)  # fmt: skip
    assert day2.code == 0 and "rules.toml" not in day2.err, day2.err
    tasks = json.loads(user.run("tasks", "--json", "--profile", "home").out)
    assert [t["title"] for t in tasks] == ["Review Lee's slides"]  # ops muted


def test_profiles_add_notes_a_config_file_whose_rules_another_profile_has(user: Profile) -> None:
    """Two profiles of one config file share its rules file, which is one profile's: said when
    the second is added, with what to do."""
    theirs = _alice(user)
    added = user.run("profiles", "add", "bob", "--config", str(theirs / "config.toml"))
    assert added.code == 0, added.err
    assert added.err.splitlines()[-1] == (
        f"note: profile alice's rules are {theirs / 'rules.toml'} too (the same config file): "
        "a rules file is one profile's, so bob's corrections would be refused; give bob a "
        "config file of its own for rules of its own"
    )
    own = user.run("profiles", "add", "carol", "--config", user.env["DAYFLOW_CONFIG"])
    assert "note: profile default's rules are" in own.err


@pytest.mark.parametrize("order", ["config first", "rules first"])
def test_profiles_add_refuses_a_config_file_that_is_another_profiles_rules_file(
    user: Profile, order: str
) -> None:
    """`profiles add dee --config dee.toml` and `profiles add deer --config dee.rules.toml`
    were both accepted, and then `mute --profile dee` wrote dee's rules over deer's config.
    Whichever comes second is refused (exit 2) and is not added."""
    theirs = _alice(user)
    (theirs / "dee.toml").write_text("")
    (theirs / "dee.rules.toml").write_text("")
    first, second = ("dee", "dee.toml"), ("deer", "dee.rules.toml")
    if order == "rules first":
        first, second = second, first
    assert user.run("profiles", "add", first[0], "--config", str(theirs / first[1])).code == 0
    refused = user.run("profiles", "add", second[0], "--config", str(theirs / second[1]))
    assert refused.code == 2 and "a correction would write rules over a config file" in (
        refused.err
    ), (refused.code, refused.err)
    listed = json.loads(user.run("profiles", "list", "--json").out)
    assert [p["name"] for p in listed] == ["alice", first[0]]
    (theirs / "rules.toml").write_text("")  # a config file beside alice's config.toml
    clash = user.run("profiles", "add", "bob", "--config", str(theirs / "rules.toml"))
    assert clash.code == 2 and "is profile alice's rules file" in clash.err, clash.err


def test_a_profiles_rules_that_others_can_write_apply_no_rule_as_its_config_would_be_refused(
    user: Profile,
) -> None:
    """Under the fleet's trust model a profile's world-writable config.toml is refused; its
    rules.toml (mode 666: anyone may mute the person's mail) was read and applied."""
    theirs = _alice(user)
    assert user.run("mute", "ops.example", "--profile", "alice").code == 0
    rules = theirs / "rules.toml"
    rules.chmod(0o666)
    day2 = user.run("brief", "--date", "2026-11-06", "--inbox", user.inbox("a2", INBOX2),
                    "--profile", "alice", clock=DAY2)  # fmt: skip
    assert day2.code == 0, day2.err
    said = [line for line in day2.err.splitlines() if "rules.toml" in line]
    assert said == [
        f"warning: profile rules {rules}: {rules} can be written by others (mode 666); refused "
        "(a profile's rules decide what its brief leaves out: the operator owns them: chmod "
        f"go-w {rules}); no rule of it applies"
    ]
    tasks = json.loads(user.run("tasks", "--json", "--profile", "alice").out)
    assert "Review capacity report" in [t["title"] for t in tasks]  # not muted
    before = rules.read_bytes()
    assert user.run("mute", "acme.example", "--profile", "alice").code == 4
    assert rules.read_bytes() == before
    assert user.run("rules", "--profile", "alice").code == 4
    rules.chmod(0o600)
    assert user.run("rules", "--profile", "alice").code == 0


def test_a_correction_waits_a_few_seconds_for_a_held_lock_then_fails_changing_nothing(
    user: Profile,
) -> None:
    """`mute` waited for ever, silently, on `rules.toml.lock` that another process held."""
    assert user.run("mute", "ops.example").code == 0
    before = user.rules_file.read_bytes()
    lock = user.dir / "rules.toml.lock"
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as another process would (flock: per open file)
    try:
        start = time.monotonic()
        busy = user.run("mute", "acme.example")
        assert 5 <= time.monotonic() - start < 15
    finally:
        os.close(fd)
    assert busy.code == 5, busy.err
    assert busy.err.splitlines() == [
        f"waiting for {lock}: another dayflow is changing rules.toml",
        f"error: {lock} is still held by another process after 5 s (another dayflow changing "
        "rules.toml, stuck or paused); nothing changed: try again when it is done",
    ]
    assert user.rules_file.read_bytes() == before
    assert user.run("mute", "acme.example").code == 0


def test_why_names_the_rule_that_kept_a_message_from_being_a_task(user: Profile) -> None:
    _reject_the_bots_task(user)
    assert user.brief("2026-11-06", INBOX2).code == 0
    said = user.run("why", "inbox:a2", clock=DAY2)
    assert said.code == 0, said.err
    assert (
        "no task: your rule r1 (no task from reports@ops.example asking to 'review') "
        "(`dayflow rules` lists it)" in said.out
    )


def test_why_says_a_task_is_snoozed_and_by_which_rule(user: Profile) -> None:
    """`dayflow why t_...` on a snoozed task said nothing of the snooze: the task is on the
    list, in no brief, and why did not say why. It names the day and the rule, until then."""
    assert user.brief("2026-11-05", INBOX1).code == 0
    task = user.tasks()["Review budget sheet"]
    assert user.run("snooze", task, "--until", "2026-11-09").code == 0
    said = user.run("why", task, clock=DAY2)
    assert said.code == 0, said.err
    assert "  snoozed until 2026-11-09 (rule r1): left out of the brief until that day" in said.out
    as_json = json.loads(user.run("why", task, "--json", clock=DAY2).out)
    assert as_json["tasks"][0]["snoozed"] == {"until": "2026-11-09", "rule": "r1"}
    over = user.run("why", task, clock="2026-11-09T07:30:00+00:00")
    assert over.code == 0 and "snoozed" not in over.out, over.out


def test_the_html_page_puts_an_important_senders_task_first_too(user: Profile) -> None:
    assert user.run("important", "other.example").code == 0
    page = user.brief("2026-11-06", [*INBOX2, INBOX1[1]], "--format", "html")
    assert page.code == 0, page.err
    needs = page.out.split("Needs action", 1)[1]
    assert needs.index("Review Lee&#39;s slides") < needs.index("Review budget sheet")


@pytest.mark.parametrize("content", [b"\x00\x01\x02" * 1000, b"# " + b"x" * (2 * 1024 * 1024)])
def test_a_huge_or_binary_rules_file_is_one_line_and_the_brief_goes_on(
    user: Profile, content: bytes
) -> None:
    user.rules_file.write_bytes(content)
    day2 = user.brief("2026-11-06", INBOX2)
    assert day2.code == 0
    assert [line for line in day2.err.splitlines() if "rules.toml" in line] == [
        next(line for line in day2.err.splitlines() if "no rule of it applies" in line)
    ]
    assert "Review capacity report" in user.tasks()
    listed = user.run("rules")
    assert listed.code == 4 and "no rule of it applies" in listed.err


@pytest.mark.parametrize(
    "content",
    ['[[rule]\nkind = "mute"\n', 'profile = "alice"\n[[rule]]\nkind = "mute"\nmatch = "x.org"\n'],
)
def test_rules_exits_4_with_one_error_line_when_the_whole_file_applies_no_rule(
    user: Profile, content: str
) -> None:
    """`dayflow rules` is how a person checks a hand edit: a file none of which applies (not
    TOML, another profile's) is an error (exit 4, as its --help says), not a listing of none."""
    user.rules_file.write_text(content)
    for args in ((), ("--json",)):
        listed = user.run("rules", *args)
        assert listed.code == 4, (args, listed.err)
        assert listed.err.splitlines() == [
            next(line for line in listed.err.splitlines() if "no rule of it applies" in line)
        ]
        assert listed.err.startswith(f"error: {user.rules_file}")
    assert "Exit 4" in user.run("rules", "--help").out


def test_rules_exits_0_when_only_an_entry_is_wrong_and_lists_the_rest(user: Profile) -> None:
    user.rules_file.write_text('[[rule]]\nkind = "mute"\nmatch = "*"\n'
                               '[[rule]]\nkind = "important"\nmatch = "x.example"\n')  # fmt: skip
    listed = user.run("rules")
    assert listed.code == 0 and listed.err.startswith(f"warning: {user.rules_file}: rule 1:")
    assert "x.example is important: first in its section, and One thing prefers it" in listed.out


def test_rules_json_lists_the_problems_stderr_says(user: Profile) -> None:
    """`dayflow rules --json` had the rules in force and no word of the entries ignored (those
    were on stderr alone): a script could not tell a file with a broken entry from a clean one."""
    user.rules_file.write_text('[[rule]]\nkind = "mute"\nmatch = "*"\n'
                               '[[rule]]\nkind = "important"\nmatch = "x.example"\n')  # fmt: skip
    listed = user.run("rules", "--json")
    assert listed.code == 0, listed.err
    doc = json.loads(listed.out)
    assert [r["match"] for r in doc["rules"]] == ["x.example"]
    assert [f"warning: {p}" for p in doc["problems"]] == listed.err.splitlines()
    assert doc["problems"][0].startswith(f"{user.rules_file}: rule 1: ")
    user.rules_file.write_text("")
    assert json.loads(user.run("rules", "--json").out)["problems"] == []


def test_the_same_correction_twice_says_it_is_a_rule_already(user: Profile) -> None:
    """The second `mute` of the same pattern (the very same command, the same day) adds no rule
    and says so, as a differently spelled one did; a moved snooze is news, not "already"."""
    first = user.run("mute", "ops.example")
    assert first.code == 0 and first.err.startswith("rule r1: mute ops.example"), first.err
    again = user.run("mute", "ops.example")
    assert again.code == 0 and again.err.startswith("already a rule r1: mute"), again.err
    assert user.rules_file.read_text().count("[[rule]]") == 1
    assert user.run("important", "acme.example").err.startswith("rule r2: ")
    assert user.run("important", "acme.example").err.startswith("already a rule r2: ")
    thread = "thread:0123456789ab"
    assert user.run("snooze", thread, "--until", "3d").err.startswith("rule r3: ")
    moved = user.run("snooze", thread, "--until", "5d")
    assert moved.err.startswith("rule r3: ") and "2026-11-10" in moved.err, moved.err


@pytest.mark.parametrize("pattern", ["thread:0123456789ab", "list:news.example.org", "<a.b.org>"])
def test_important_names_what_it_takes_for_a_thread_or_a_list(user: Profile, pattern: str) -> None:
    """`important` takes an address or a domain: a well-formed thread or list is refused as
    such, not as a pattern "that would match too much or nothing"."""
    refused = user.run("important", pattern)
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1, refused.err
    assert "would match too much" not in refused.err
    assert "important takes an address or a domain" in refused.err
    assert not user.rules_file.exists()


def test_replay_since_a_day_after_today_says_it_is_in_the_future(user: Profile) -> None:
    """A --since after today is refused as a day to come, not as "back a year at most"."""
    refused = user.run("replay", "--since", "2027-01-01")
    assert refused.code == 2, refused.err
    assert refused.err.strip() == "error: --since 2027-01-01 is after today (2026-11-05)"
    assert "a year at most" in user.run("replay", "--since", "400d").err


def test_a_public_suffix_is_refused_as_matching_too_much(user: Profile) -> None:
    """`mute co.uk` would silence every British company, `github.io` every project's pages:
    the Public Suffix List says which names are such, and a domain under one is a rule."""
    for command, pattern in (("mute", "co.uk"), ("mute", "@github.io"), ("important", "com.au")):
        refused = user.run(command, pattern)
        assert refused.code == 2, refused.err
        suffix = pattern.lstrip("@")
        assert refused.err == (
            f"error: {suffix!r} is a public suffix: it names every site under it, not one "
            f"sender's; give one domain under it (example.{suffix})\n"
        )
    assert not user.rules_file.exists()
    kept = user.run("mute", "bbc.co.uk")
    assert kept.code == 0 and "bbc.co.uk" in user.rules_file.read_text(), kept.err


@pytest.mark.parametrize(
    "command",
    [
        ("tasks", "reject", "t_x", "--why", "not mine"),
        ("tasks", "done", "t_x"),
        ("mute", "ops.example"),
        ("important", "dana@acme.example"),
        ("snooze", "t_x", "--until", "3d"),
        ("rules",),
    ],
)
def test_a_correction_for_a_missing_profile_names_it_in_one_line(
    user: Profile, command: tuple[str, ...]
) -> None:
    """Not the default database, no traceback: the profile, and where profiles are listed."""
    result = user.run(*command, "--profile", "nosuch")
    assert result.code == 3
    assert result.err.strip() == "error: no profile 'nosuch' (see `dayflow profiles list`)"
    assert not (user.dir / "rules.toml").exists()


@pytest.mark.parametrize("pattern", ["", "*", "a b"])
def test_a_refused_important_pattern_offers_only_what_important_takes(
    user: Profile, pattern: str
) -> None:
    """`important ''` suggested "list:ID or thread:KEY", which `important` refuses: its hint
    names an address or a domain only, where `mute`'s names all four."""
    refused = user.run("important", pattern)
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1, refused.err
    assert refused.err.rstrip().endswith("give an address or a domain (example.org)")
    muted = user.run("mute", pattern)
    assert muted.err.rstrip().endswith(
        "give an address, a domain (example.org), list:ID or thread:KEY"
    ), muted.err
    assert not user.rules_file.exists()


def test_a_rejection_of_mail_from_a_last_first_name_keys_on_its_address(user: Profile) -> None:
    """Outlook's "Last, First" names come unquoted in a From value (and a MIME From's quoted
    one is rebuilt so): parseaddr read `Bot, Ops <reports@ops.example>` as the address
    "bot", so the rule said "no task from bot" and silenced nothing of that sender's."""
    listed = "Bot, Ops <reports@ops.example>"
    day1 = [_mail("a1", listed, INBOX1[0]["subject"], INBOX1[0]["body"], "2026-11-05"), INBOX1[1]]
    assert user.brief("2026-11-05", day1).code == 0
    rejected = user.run("tasks", "reject", user.tasks()["Review capacity report"])
    assert rejected.code == 0, rejected.err
    assert "no task from reports@ops.example asking to 'review'" in rejected.err
    day2 = [_mail("a2", listed, INBOX2[0]["subject"], INBOX2[0]["body"], "2026-11-06")]
    assert user.brief("2026-11-06", day2).code == 0
    assert sorted(user.tasks()) == ["Review budget sheet"]
