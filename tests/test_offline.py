from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from dayflow.models import ModelRequest, ModelResponse, estimate_tokens
from dayflow.providers.offline import OfflineModel
from dayflow.providers.offline._reading import body_action, thread_key, triage
from dayflow.sources import JsonCalendar, JsonInbox

BRIEF = dt.date(2026, 11, 5)
# When the test mail arrived unless it says: the Wednesday before the brief.
RECEIVED = "2026-11-04T10:00:00+00:00"
TOOL_NAMES = ("read_inbox", "read_calendar", "read_tasks", "create_task")
TOOLS = [
    {"name": n, "description": f"The {n} tool.", "input_schema": {"type": "object"}}
    for n in TOOL_NAMES
]
GATHER = [
    ("read_inbox", {"limit": 50}),
    ("read_calendar", {"range": "today"}),
    ("read_calendar", {"range": "week"}),
    ("read_tasks", {"include_done": False}),
]
FIXTURE_TASKS = [
    ("Send edits on partnership one-pager to Sam", "email:m12", "2026-11-05"),
    ("Sign and return field trip permission form", "email:m02", "2026-11-06"),
    ("Approve Dana's expense report for Denver offsite", "email:m07", "2026-11-06"),
    ("Confirm vendor comparison for Priya", "email:m08", "2026-11-09"),
    ("RSVP for team dinner", "email:m13", "2026-11-10"),
]


def _prompt(day: dt.date = BRIEF) -> dict[str, Any]:
    return {
        "role": "user",
        "content": f"Prepare my daily brief for {day:%A} {day.isoformat()}. My timezone is UTC.",
    }


def _request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] = TOOLS) -> ModelRequest:
    return ModelRequest("offline", "You write daily briefs.", tools, messages, 4096)


class FakeTools:
    """Answers tool calls from the bundled fixtures, with tasks kept in memory."""

    def __init__(
        self,
        day: dt.date = BRIEF,
        *,
        inbox: list[dict[str, Any]] | None = None,
        tasks: list[dict[str, Any]] | None = None,
        errors: dict[str, str] | None = None,
    ) -> None:
        self.day = day
        self.inbox = JsonInbox(None, day).messages() if inbox is None else inbox
        self.events = JsonCalendar(None, day).events()
        self.tasks = list(tasks or [])
        self.errors = errors or {}

    def run(self, block: dict[str, Any]) -> dict[str, Any]:
        """One tool_result block for one tool_use block."""
        name, args = block["name"], block["input"]
        key = f"{name}:{args.get('range')}" if name == "read_calendar" else name
        if key in self.errors or name in self.errors:
            text = self.errors.get(key) or self.errors[name]
            return {
                "type": "tool_result",
                "tool_use_id": block["id"],
                "content": text,
                "is_error": True,
            }
        result = getattr(self, name)(args)
        return {"type": "tool_result", "tool_use_id": block["id"], "content": json.dumps(result)}

    def read_inbox(self, args: dict[str, Any]) -> dict[str, Any]:
        fields = ("id", "from", "subject", "received_at", "snippet", "unread")
        return {"messages": [{f: m[f] for f in fields} for m in self.inbox[: args["limit"]]]}

    def read_calendar(self, args: dict[str, Any]) -> dict[str, Any]:
        days = 1 if args["range"] == "today" else 7
        last = self.day + dt.timedelta(days=days - 1)
        return {"events": [e for e in self.events if self.day <= _day(e["start"]) <= last]}

    def read_tasks(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"tasks": [t for t in self.tasks if args["include_done"] or t["status"] == "open"]}

    def create_task(self, args: dict[str, Any]) -> dict[str, Any]:
        for task in self.tasks:
            if task["idempotency_key"] == args["idempotency_key"]:
                return {"task": task, "created": False}
        task = {"id": f"t{len(self.tasks) + 1}", "status": "open", "due": None, **args}
        self.tasks.append(task)
        return {"task": task, "created": True}


def _day(iso: str) -> dt.date:
    return dt.datetime.fromisoformat(iso).date()


def _drive(tools: FakeTools, day: dt.date = BRIEF) -> tuple[list[ModelResponse], list[dict]]:
    """Run the conversation to its end; return every response and the final history."""
    model, messages, responses = OfflineModel(), [_prompt(day)], []
    for _ in range(6):
        response = model.create(_request(messages))
        responses.append(response)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return responses, messages
        uses = [b for b in response.content if b["type"] == "tool_use"]
        messages.append({"role": "user", "content": [tools.run(b) for b in uses]})
    raise AssertionError("the offline model never finished")


def _uses(response: ModelResponse) -> list[dict[str, Any]]:
    return [b for b in response.content if b["type"] == "tool_use"]


def _brief(response: ModelResponse) -> str:
    assert response.stop_reason == "end_turn"
    [block] = response.content
    assert block["type"] == "text"
    return block["text"]


def _inbox_message(mid: str, snippet: str, **fields: Any) -> dict[str, Any]:
    message = {
        "id": mid,
        "from": "Rui Tanaka <rui@example.com>",
        "subject": "Quick one",
        "received_at": RECEIVED,
        "snippet": snippet,
        "unread": True,
    }
    return message | fields


# --- the three turns on the bundled fixture ------------------------------------------------------


def test_first_turn_reads_inbox_calendar_and_tasks_in_order() -> None:
    response = OfflineModel().create(_request([_prompt()]))
    assert response.stop_reason == "tool_use"
    assert response.content[0]["type"] == "text" and response.content[0]["text"]
    assert [(b["name"], b["input"]) for b in _uses(response)] == GATHER


def test_second_turn_files_tasks_for_the_fixture_requests() -> None:
    responses, _ = _drive(FakeTools())
    assert [r.stop_reason for r in responses] == ["tool_use", "tool_use", "end_turn"]
    creates = _uses(responses[1])
    assert all(b["name"] == "create_task" for b in creates)
    got = [(b["input"]["title"], b["input"]["idempotency_key"], b["input"]["due"]) for b in creates]
    assert got == FIXTURE_TASKS
    for block in creates:
        assert block["input"]["source_id"] == block["input"]["idempotency_key"].removeprefix(
            "email:"
        )
        assert 10 < len(block["input"]["notes"]) < 200


def test_newsletters_notifications_and_fyis_get_no_task() -> None:
    responses, _ = _drive(FakeTools())
    sources = {b["input"]["source_id"] for b in _uses(responses[1])}
    quiet = {"m01", "m03", "m04", "m05", "m06", "m09", "m10", "m11", "m14", "m15", "m16", "m17"}
    assert not sources & quiet


def test_due_dates_follow_the_brief_date_when_the_fixture_is_shifted() -> None:
    day = dt.date(2027, 2, 11)  # also a Thursday, so weekday deadlines keep their meaning
    responses, _ = _drive(FakeTools(day), day)
    dues = [b["input"].get("due") for b in _uses(responses[1])]
    shift = day - BRIEF
    assert dues == [(dt.date.fromisoformat(d) + shift).isoformat() for _, _, d in FIXTURE_TASKS]


def test_final_brief_has_every_section_built_from_the_results() -> None:
    responses, messages = _drive(FakeTools())
    brief = _brief(responses[-1])
    headings = [line for line in brief.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Today",
        "## Needs action",
        "## Tasks created",
        "## This week",
        "## One thing",
    ]
    assert "Thursday 5 November 2026" in brief
    assert "- 09:30–09:45 Team standup (Room 2)" in brief
    assert "- 13:00–13:30 Weekly staff sync (Room 4)" in brief
    assert "- 22:30–23:15 Late call with Lumen (Sydney) (Video call)" in brief
    today = brief.split("## Today")[1].split("##")[0]
    assert "Vendor demo" not in today  # tomorrow's event stays out of today
    assert "(from Sam Okafor, due today)" in brief
    assert "(from Maple Grove Elementary, due tomorrow)" in brief
    for n, (title, _, _) in enumerate(FIXTURE_TASKS, start=1):
        assert f"- {title} (`t{n}`)" in brief
    assert "Fri 6 Nov: 09:30 Team standup" in brief
    one_thing = brief.split("## One thing")[1].strip()
    assert one_thing == "**Send edits on partnership one-pager to Sam, due today.**"


def test_today_lists_events_in_time_order() -> None:
    responses, _ = _drive(FakeTools())
    today = _brief(responses[-1]).split("## Today")[1].split("##")[0]
    lines = [line for line in today.splitlines() if line.startswith("- ")]
    times = [line[2:7] for line in lines if not line.startswith("- Conflict:")]
    assert times == sorted(times) and len(times) == 6
    assert lines[-1].startswith("- Conflict: 1:1 with Dana and Interview")  # after the events


# --- determinism --------------------------------------------------------------------------------


def test_same_request_gives_identical_response_ids_included() -> None:
    _, messages = _drive(FakeTools())
    for end in range(1, len(messages) + 1, 2):
        request = _request(messages[:end])
        assert OfflineModel().create(request) == OfflineModel().create(request)


def test_tool_use_ids_are_prefixed_and_unique_within_a_run() -> None:
    responses, _ = _drive(FakeTools())
    ids = [b["id"] for r in responses for b in _uses(r)]
    assert len(ids) == len(set(ids)) == 4 + len(FIXTURE_TASKS)
    assert all(i.startswith("toolu_off_") and len(i) == len("toolu_off_") + 20 for i in ids)


@pytest.mark.slow  # spawns a process
def test_a_new_process_gives_the_same_answer() -> None:
    """A resumed run in a new process (another hash seed) must see the same ids."""
    _, messages = _drive(FakeTools())
    request = _request(messages[:3])
    script = (
        "import json, sys\n"
        "from dayflow.models import ModelRequest\n"
        "from dayflow.providers.offline import OfflineModel\n"
        "r = OfflineModel().create(ModelRequest(**json.load(sys.stdin)))\n"
        "print(json.dumps(r.content))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps({name: getattr(request, name) for name in request._fields}),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert json.loads(out.stdout) == OfflineModel().create(request).content


def test_mutating_a_response_does_not_change_the_next_one() -> None:
    first = OfflineModel().create(_request([_prompt()]))
    _uses(first)[0]["input"]["limit"] = 1
    assert _uses(OfflineModel().create(_request([_prompt()])))[0]["input"] == {"limit": 50}


# --- dedupe -------------------------------------------------------------------------------------


def test_existing_tasks_are_not_created_again() -> None:
    existing = [
        {
            "id": "t9",
            "title": "Edits for Sam",
            "due": None,
            "status": "open",
            "source_id": "m12",
            "idempotency_key": "email:m12",
        },
        {
            "id": "t8",
            "title": "Form",
            "due": None,
            "status": "open",
            "source_id": "m02",
            "idempotency_key": "manual:form",
        },
    ]
    responses, _ = _drive(FakeTools(tasks=existing))
    keys = [b["input"]["idempotency_key"] for b in _uses(responses[1])]
    assert keys == [key for _, key, _ in FIXTURE_TASKS[2:]]


def test_everything_covered_goes_straight_to_the_brief() -> None:
    existing = [
        {
            "id": f"t{n}",
            "title": title,
            "due": due,
            "status": "open",
            "source_id": key[6:],
            "idempotency_key": key,
        }
        for n, (title, key, due) in enumerate(FIXTURE_TASKS, start=1)
    ]
    responses, _ = _drive(FakeTools(tasks=existing))
    assert [r.stop_reason for r in responses] == ["tool_use", "end_turn"]
    brief = _brief(responses[-1])
    assert "None new: everything that needs action is already on your task list." in brief
    assert "Send edits on partnership one-pager to Sam (from Sam Okafor, due today)" in brief


def test_create_task_reporting_existing_and_failed_tasks() -> None:
    tools = FakeTools()
    responses, messages = _drive(tools)
    results = messages[-2]["content"]
    results[0]["content"] = json.dumps({"task": {"id": "t42"}, "created": False})
    results[1] = {**results[1], "content": "database is locked", "is_error": True}
    brief = _brief(OfflineModel().create(_request(messages[:-1])))
    assert "- Send edits on partnership one-pager to Sam: already on your list (`t42`)" in brief
    refused = "Sign and return field trip permission form"
    assert f'- Could not create "{refused}": database is locked' in brief


# --- errors and odd histories -------------------------------------------------------------------


def test_inbox_error_is_mentioned_and_no_tasks_are_filed() -> None:
    responses, _ = _drive(FakeTools(errors={"read_inbox": "inbox file is unreadable"}))
    assert [r.stop_reason for r in responses] == ["tool_use", "end_turn"]
    brief = _brief(responses[-1])
    assert "Could not read the inbox: inbox file is unreadable" in brief
    assert "- 13:00–13:30 Weekly staff sync (Room 4)" in brief


def test_todays_calendar_error_falls_back_to_the_week() -> None:
    responses, _ = _drive(FakeTools(errors={"read_calendar:today": "timeout"}))
    brief = _brief(responses[-1])
    assert "Could not read today's calendar: timeout" in brief
    assert "- 13:00–13:30 Weekly staff sync (Room 4)" in brief


def test_a_tool_errors_own_prefix_is_not_repeated_in_the_brief() -> None:
    responses, _ = _drive(FakeTools(errors={"read_calendar:today": "Error: timeout"}))
    brief = _brief(responses[-1])
    assert "Could not read today's calendar: timeout_" in brief
    assert "Error:" not in brief


def test_a_week_that_could_not_be_read_is_not_called_empty() -> None:
    responses, _ = _drive(FakeTools(errors={"read_calendar:week": "Error: timeout"}))
    brief = _brief(responses[-1])
    assert "Could not read this week's calendar: timeout_" in brief
    assert "Nothing else on the calendar" not in brief


def test_tasks_error_is_mentioned_and_tasks_still_filed() -> None:
    responses, _ = _drive(FakeTools(errors={"read_tasks": "no such table"}))
    assert len(_uses(responses[1])) == len(FIXTURE_TASKS)
    assert "Could not read your existing tasks: no such table" in _brief(responses[-1])


def test_empty_calendar_and_quiet_inbox_say_so() -> None:
    tools = FakeTools(inbox=[_inbox_message("q1", "Lovely weather today.")])
    tools.events = []
    responses, _ = _drive(tools)
    brief = _brief(responses[-1])
    assert "- Nothing on the calendar today." in brief
    assert "- Nothing in the inbox needs you right now." in brief
    assert "- None: nothing in the inbox called for a task." in brief
    assert "**Nothing urgent" in brief


class QuietTools(FakeTools):
    """A quiet day (one FYI, no events) where some reads say what they could not read."""

    def __init__(self, unavailable: dict[str, list[dict[str, str]]], **kw: Any) -> None:
        super().__init__(inbox=[_inbox_message("q1", "Lovely weather today.")], **kw)
        self.events = []
        self.unavailable = unavailable

    def read_inbox(self, args: dict[str, Any]) -> dict[str, Any]:
        out = super().read_inbox(args)
        return out | (
            {"unavailable": self.unavailable["mail"]} if "mail" in self.unavailable else {}
        )

    def read_calendar(self, args: dict[str, Any]) -> dict[str, Any]:
        out = super().read_calendar(args)
        extra = self.unavailable.get("calendar")
        return out | ({"unavailable": extra} if extra else {})


@pytest.mark.parametrize(
    ("tools", "named"),
    [
        (QuietTools({"mail": [{"source": "work", "reason": "login refused"}]}), "work"),
        (
            QuietTools({"mail": [{"source": "mail", "reason": "no mail source is configured"}]}),
            "mail",
        ),
        (QuietTools({"calendar": [{"source": "family", "reason": "timed out"}]}), "family"),
        (
            QuietTools({"calendar": [{"source": "calendar", "reason": "none configured"}]}),
            "calendar",
        ),
        (QuietTools({}, errors={"read_inbox": "Error: could not read mail: gone"}), "the inbox"),
        (QuietTools({}, errors={"read_calendar": "Error: timeout"}), "the calendar"),
    ],
)
def test_a_source_that_could_not_be_read_is_never_an_all_clear(
    tools: QuietTools, named: str
) -> None:
    """Issue 19.11: a failed or unconfigured source makes "One thing" name it, never "Nothing
    urgent: a clear day"."""
    responses, _ = _drive(tools)
    brief = _brief(responses[-1])
    one_thing = brief.split("## One thing", 1)[1]
    assert "Nothing urgent" not in brief and "clear day" not in brief
    assert f"**Check {named} yourself" in one_thing and "could not be read" in one_thing
    assert "- Nothing on the calendar today." not in brief or "calendar" not in named
    assert "- Nothing in the inbox needs you right now." not in brief or named in (
        "family",
        "calendar",
        "the calendar",
    )


def test_a_source_named_unavailable_in_a_summary_is_still_not_an_all_clear() -> None:
    """The listing that said a source failed was compacted away: the summary's line still says
    so, and the brief names it."""
    summary = {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": 'Earlier in this run (compacted):\n- step 1: read_inbox({"limit": 20}) '
                "-> ok, 0 messages; unavailable: work\n- step 1: read_calendar("
                '{"range": "week"}) -> ok, 0 events',
            }
        ],
    }
    brief = _brief(OfflineModel().create(_request([_prompt(), summary], tools=[])))
    assert "Could not read work" in brief and "Nothing urgent" not in brief


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [_prompt(), {"role": "assistant", "content": [{"type": "text", "text": "Hi"}]}],
        [_prompt(), {"role": "assistant", "content": "plain"}, {"role": "user", "content": "ok?"}],
        [_prompt(), {"role": "user", "content": None}, "garbage", {"role": 3, "content": 7}],
        [
            _prompt(),
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "x", "name": "read_inbox", "input": "not a dict"}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "x", "content": "{not json"}],
            },
        ],
    ],
)
def test_unexpected_history_still_ends_with_a_brief(messages: list[Any]) -> None:
    response = OfflineModel().create(_request(messages))
    assert "## One thing" in _brief(response)


def test_missing_tool_results_are_reported() -> None:
    first = OfflineModel().create(_request([_prompt()]))
    messages = [_prompt(), {"role": "assistant", "content": first.content}]
    messages.append({"role": "user", "content": "Never mind the tools, just write it."})
    brief = _brief(OfflineModel().create(_request(messages)))
    assert "Could not read the inbox: no result came back" in brief


def test_without_tools_offered_it_writes_the_brief_at_once() -> None:
    brief = _brief(OfflineModel().create(_request([_prompt()], tools=[])))
    assert "The calendar was not read" in brief and "The inbox was not read" in brief


# --- reading requests and deadlines -------------------------------------------------------------


def _one_task(message: dict[str, Any]) -> dict[str, Any] | None:
    responses, _ = _drive(FakeTools(inbox=[message]))
    creates = _uses(responses[1]) if len(responses) == 3 else []
    return creates[0]["input"] if creates else None


# Sent on RECEIVED, a Wednesday (the messages' default).
@pytest.mark.parametrize(
    ("snippet", "due"),
    [
        ("Can you send the slides by EOD?", "2026-11-04"),
        ("Please review the draft by tomorrow.", "2026-11-05"),
        ("Please review the draft by Nov 7.", "2026-11-07"),
        ("Please review the draft by 7 November.", "2026-11-07"),
        ("Please review the draft by next Friday.", "2026-11-13"),
        # sent on a Wednesday, "by Wednesday" is next week's (bench/eval/GUIDE.md)
        ("Please review the draft by Wednesday.", "2026-11-11"),
        ("Please review the draft by 2026-12-01.", "2026-12-01"),
        ("Please review the draft by end of week.", "2026-11-06"),
        ("Please review the draft when you can.", None),
    ],
)
def test_deadlines_resolve_from_the_received_date(snippet: str, due: str | None) -> None:
    task = _one_task(_inbox_message("d1", snippet))
    assert task is not None and task.get("due") == due


def test_a_day_past_new_year_is_next_years() -> None:
    snippet = "Please review the draft by Jan 3."
    task = _one_task(_inbox_message("d1", snippet, received_at="2026-12-30T10:00:00+00:00"))
    assert task is not None and task.get("due") == "2027-01-03"


@pytest.mark.parametrize(
    ("snippet", "title"),
    [
        (
            "Hi! Could you forward me the signed contract by Friday?",
            "Forward signed contract to Rui",
        ),
        ("I need you to book the room for our offsite.", "Book room for offsite"),
        ("Can you approve my timesheet, please?", "Approve Rui's timesheet"),
        ("Please let me know by Monday whether you can come.", "Tell Rui whether you can come"),
    ],
)
def test_titles_are_imperative_and_name_the_sender(snippet: str, title: str) -> None:
    task = _one_task(_inbox_message("t1", snippet))
    assert task is not None and task["title"] == title


@pytest.mark.parametrize(
    ("sender", "snippet"),
    [
        ("Shop <no-reply@shop.example>", "Please allow 3-5 days for delivery by Friday."),
        ("Digest <digest@news.example>", "Can you guess this week's top story?"),
        ("Rui <rui@example.com>", "FYI, could you note the room change? No action needed."),
        ("Rui <rui@example.com>", "Please find attached the minutes from Tuesday."),
        ("Rui <rui@example.com>", "The badge readers go live by Friday."),
        ("Rui <rui@example.com>", "The review is due by Friday, so sign-off is close."),
    ],
)
def test_automated_mail_fyis_and_non_requests_get_no_task(sender: str, snippet: str) -> None:
    assert _one_task(_inbox_message("n1", snippet, **{"from": sender})) is None


def test_signature_words_with_a_deadline_count_as_a_request() -> None:
    task = _one_task(
        _inbox_message("s1", "Timesheets: submit yours by Friday, Nov 6.", subject="Reminder")
    )
    assert task is not None and task["due"] == "2026-11-06"
    assert task["title"].startswith("Submit")


def test_every_request_is_filed_with_no_silent_limit() -> None:
    """The run's --task-cap bounds the tasks, not a hidden per-brief limit."""
    inbox = [_inbox_message(f"r{n}", f"Could you check item {n} for me?") for n in range(8)]
    responses, _ = _drive(FakeTools(inbox=inbox))
    assert len(_uses(responses[1])) == 8
    needs = _brief(responses[-1]).split("## Needs action")[1].split("##")[0]
    assert needs.count("\n- ") == 8


# --- reading full messages (offline._reading) ---------------------------------------------------

_LONG = "There is a lot going on this week, and here is the whole story in some detail. " * 3


def _full(body: str, **fields: Any) -> dict[str, Any]:
    """A message as read_message returns it."""
    message = {
        "id": "b1",
        "from": "Rui Tanaka <rui@example.com>",
        "subject": "Update",
        "received_at": RECEIVED,
        "thread_id": None,
        "unread": True,
        "body": body,
    }
    return message | fields


@pytest.mark.parametrize(
    ("fields", "verdict"),
    [
        ({"snippet": "Could you sign the form by Friday? Thanks!"}, "settled"),
        ({"snippet": _LONG[:150] + "..."}, "open"),  # unread, cut short
        ({"snippet": _LONG[:150] + "...", "unread": False}, "open"),  # read: still opened
        ({"snippet": _LONG[:150] + "...", "unread": False, "subject": "Re: Update"}, "open"),
        ({"snippet": "Could you review the plan? " + _LONG[:150] + "...", "unread": False}, "open"),
        ({"snippet": "Could you sign the form by Friday? " + _LONG[:120] + "..."}, "settled"),
        ({"snippet": "FYI: " + _LONG[:150] + "..."}, "skip"),
        ({"snippet": _LONG[:150] + "...", "from": "Shop <no-reply@shop.example>"}, "skip"),
        ({"snippet": "Lovely weather today."}, "skip"),  # the snippet is the whole message
    ],
)
def test_triage_opens_only_messages_whose_snippet_does_not_settle_it(
    fields: dict[str, Any], verdict: str
) -> None:
    action, wanted = triage(_inbox_message("x1", fields.pop("snippet"), **fields))
    assert {(True, False): "settled", (False, True): "open", (False, False): "skip"}[
        (action is not None, wanted)
    ] == verdict


def test_body_request_with_its_deadline_in_the_next_paragraph() -> None:
    ask = "Could you book the room for our offsite?"
    body = f"Hi Alex,\n\n{_LONG}\n\n{ask}\n\nIt has to be done by Monday."
    action = body_action(_full(body))
    assert action is not None and action.title == "Book room for offsite"
    assert action.due == dt.date(2026, 11, 9) and action.deadline == "by Monday"


@pytest.mark.parametrize(
    "tail",
    [
        "On Monday, Alex Morgan wrote:\nCould you send me the numbers by Friday?",
        "> Could you send me the numbers by Friday?\n> Thanks",
        "---------- Forwarded message ---------\nFrom: Lena\n\nCould you sign it by Friday?",
        "-----Original Message-----\nCould you sign it by Friday?",
        "--\nRui Tanaka\nPlease consider the environment before printing.",
    ],
)
def test_quoted_forwarded_and_signature_text_is_not_a_request(tail: str) -> None:
    assert body_action(_full(f"Hi Alex,\n\n{_LONG}\n\nThanks for everything.\n\n{tail}")) is None


def test_a_read_message_from_an_automated_sender_is_not_a_request() -> None:
    message = _full("Please confirm your appointment by Friday.", **{"from": "no-reply@x.example"})
    assert body_action(message) is None


def test_thread_key_ignores_reply_and_forward_prefixes() -> None:
    assert thread_key("Re: Fwd: RE:  Lease renewal") == thread_key("lease renewal")
    assert thread_key("Lease renewal") != thread_key("Lease renewal: parking")


# --- usage, tokens, imports ---------------------------------------------------------------------


def test_usage_is_an_estimate_and_marked_as_such() -> None:
    request = _request([_prompt()])
    response = OfflineModel().create(request)
    assert response.estimated is True
    assert response.model == "offline" and response.request_id is None
    assert response.usage.cache_creation_input_tokens == response.usage.cache_read_input_tokens == 0
    expected_input = estimate_tokens(
        {"system": request.system, "tools": request.tools, "messages": request.messages}
    )
    assert response.usage.input_tokens == expected_input == OfflineModel().count_tokens(request)
    assert response.usage.output_tokens == estimate_tokens(response.content)


def test_estimate_tokens_is_a_quarter_of_the_compact_json() -> None:
    assert estimate_tokens({"a": 1}) == 2  # '{"a":1}' is 7 characters
    assert estimate_tokens("x" * 398) == 100
    assert estimate_tokens({"when": dt.date(2026, 11, 5)}) > 0  # never raises on odd values


@pytest.mark.slow  # spawns a process
def test_importing_the_offline_model_does_not_import_anthropic() -> None:
    code = "import sys, dayflow.providers.offline; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("missing", ["inbox", "calendar"])
def test_a_config_without_a_mail_source_or_calendar_says_so_in_the_brief(
    tmp_path: Any, missing: str
) -> None:
    """Issue 19.11 end to end: a config that names no mail source (or no calendar) gives a
    brief that says none is configured, and "One thing" names it instead of an all-clear."""
    from pathlib import Path

    from dayflow.tools import NO_CALENDAR_SOURCE, NO_MAIL_SOURCE
    from tests.harness import invoke

    fixtures = Path(__file__).parent.parent / "fixtures"
    cfg = tmp_path / "config.toml"
    other = "calendar" if missing == "inbox" else "inbox"
    path = fixtures / ("calendar.json" if other == "calendar" else "inbox.json")
    cfg.write_text(f'[[{other}]]\nname = "mine"\nkind = "json"\npath = "{path}"\n')
    result = invoke(
        tmp_path / "d.db",
        lambda n, s: OfflineModel(),
        "brief",
        "--date",
        "2026-11-05",
        env={"DAYFLOW_CONFIG": str(cfg)},
    )
    assert result.code == 0, result.err
    reason = NO_MAIL_SOURCE if missing == "inbox" else NO_CALENDAR_SOURCE
    assert reason in result.out
    if missing == "inbox":  # with mail, the first request is still the one thing
        assert "**Check mail yourself" in result.out
    assert "Nothing urgent" not in result.out
