"""The user's corrections through the CLI, on both engines: a rejection on day 1 keeps day 2's
like mail from its sender from becoming a task (and no one else's), mute, important and
snooze as the briefs obey them, `dayflow rules`, and a resume that keeps its run's rules."""

from __future__ import annotations

import json
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
        "Review budget sheet 2026-11-06",
        "Review capacity report 2026-11-06",
    ]
    return user.run("tasks", "reject", tasks["Review capacity report 2026-11-06"], "--why",
                    "a bot's report, not mine")  # fmt: skip


def test_a_rejected_task_leaves_a_rule_and_the_next_like_mail_from_its_sender_is_no_task(
    user: Profile,
) -> None:
    rejected = _reject_the_bots_task(user)
    assert rejected.code == 0, rejected.err
    assert "rule r1: no task from reports@ops.example asking to 'review'" in rejected.err
    assert sorted(user.tasks()) == ["Review budget sheet 2026-11-06"]
    listed = user.run("rules")
    assert "r1    reject    no task from reports@ops.example asking to 'review'" in listed.out
    assert "dayflow tasks reject t_" in listed.out and "why: a bot's report" in listed.out
    day2 = user.brief("2026-11-06", INBOX2)
    assert day2.code == 0, day2.err
    assert sorted(user.tasks()) == [
        "Review Lee's slides 2026-11-09",
        "Review budget sheet 2026-11-06",
    ]
    assert "capacity" not in day2.out.split("## Needs action")[1].split("##")[0]


def test_a_resumed_run_obeys_the_rules_it_started_with(user: Profile) -> None:
    _reject_the_bots_task(user)
    crashed = user.brief("2026-11-06", INBOX2, "--crash-after", "1")
    assert crashed.code == 70, crashed.err
    user.rules_file.unlink()  # the file changed meanwhile: the run keeps its own rules
    resumed = user.run("resume", clock=DAY2)
    assert resumed.code == 0, resumed.err
    assert "Review capacity report 2026-11-09" not in user.tasks()
    assert "Review Lee's slides 2026-11-09" in user.tasks()


def test_mute_is_never_a_task_and_important_comes_first_and_is_the_one_thing(
    user: Profile,
) -> None:
    assert user.run("mute", "ops.example").code == 0
    assert user.run("important", "lee@other.example").code == 0
    day2 = user.brief("2026-11-06", [*INBOX2, INBOX1[1]])
    assert day2.code == 0, day2.err
    needs = day2.out.split("## Needs action")[1].split("##")[0].strip().splitlines()
    # Lee's is due later than Dana's, yet first: the user marked Lee important.
    assert needs == [
        "- Review Lee's slides 2026-11-09 (from Lee Park, due Mon 9 Nov)",
        "- Review budget sheet 2026-11-06 (from Dana Ruiz, due today)",
    ]
    assert "**Review Lee's slides 2026-11-09, due Mon 9 Nov.**" in day2.out
    assert "Review capacity report 2026-11-09" not in user.tasks()


def test_a_snoozed_task_is_left_out_until_its_day_and_back_on_it(user: Profile) -> None:
    assert user.brief("2026-11-05", INBOX1).code == 0
    budget = user.tasks()["Review budget sheet 2026-11-06"]
    snoozed = user.run("snooze", budget, "--until", "2d")
    assert snoozed.code == 0 and "snoozed until 2026-11-07" in snoozed.err
    day2 = user.brief("2026-11-06", [INBOX1[1]])
    assert "budget" not in day2.out.split("## Needs action")[1].split("## One thing")[0]
    back = user.run("brief", "--date", "2026-11-07", "--inbox", user.inbox("d3", []),
                    "--format", "markdown", clock="2026-11-07T07:30:00+00:00")  # fmt: skip
    assert "Review budget sheet 2026-11-06 (on your task list, overdue" in back.out


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


def test_a_hand_edited_file_with_a_bad_entry_still_applies_the_rest_and_is_not_overwritten(
    user: Profile,
) -> None:
    bad = 'profile = "default"\n[[rule]]\nkind = "mute"\nmatch = "*"\n'
    good = '[[rule]]\nid = "mine"\nkind = "mute"\nmatch = "ops.example"\n'
    user.rules_file.write_text(bad + good)
    day2 = user.brief("2026-11-06", INBOX2)
    assert day2.code == 0
    assert f"warning: {user.rules_file}: rule 1:" in day2.err
    assert "Review capacity report 2026-11-09" not in user.tasks()
    refused = user.run("mute", "acme.example")
    assert refused.code == 4 and "nothing changed" in refused.err
    assert user.rules_file.read_text() == bad + good


def test_another_profiles_rules_are_not_applied_nor_written_over(user: Profile) -> None:
    theirs = 'profile = "alice"\n[[rule]]\nkind = "mute"\nmatch = "other.example"\n'
    user.rules_file.write_text(theirs)
    day2 = user.brief("2026-11-06", INBOX2)
    assert "is the rules of profile 'alice', not of 'default'" in day2.err
    assert "Review Lee's slides 2026-11-09" in user.tasks()
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
    task = user.tasks()["Review budget sheet 2026-11-06"]
    assert "done: " in user.run("tasks", "done", task).err
    assert "already done: " in user.run("tasks", "done", task).err
    assert "Review budget sheet 2026-11-06" not in user.tasks()
    assert user.run("tasks", "done", "t_nosuch").code == 3
