"""The offline model's deadlines, each on mail written for the test: "now" of the ask is today
but "for now" is no deadline, a sentence opening with a deadline dates the ask before it, and
relative dates resolve from the day received in the brief's zone, across month and year ends
and the DST changes."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from dayflow.providers.offline._reading import body_actions
from dayflow.sources.mail import MailItem
from tests.offline_mail import found


def test_now_of_the_ask_is_today_but_for_now_is_not_a_deadline() -> None:
    [(_, due)] = found("Need you in the ops channel now to approve the rollback.")
    assert due == "2026-11-02"
    assert all(d is None for _, d in found("For now, could you keep the old pricing page up?"))


def test_a_sentence_opening_with_a_deadline_dates_the_ask_before_it() -> None:
    body = "Could you send the venue the final guest list? By Wednesday would be great."
    assert found(body, "Gala") == [("Send venue final guest list", "2026-11-04")]
    # one that does not open with it stays the sentence's own
    later = "Could you send the venue the final guest list? The caterer wants it by Wednesday."
    assert found(later, "Gala")[0][1] == "2026-11-04"


@pytest.mark.parametrize(
    ("after", "due"),
    [
        ("By Nov 9 would be ideal so I can put it in the packet.", "2026-11-09"),
        ("Friday would be great.", "2026-11-06"),
        ("Ideally by Wednesday.", "2026-11-04"),
        ("Thursday at the latest.", "2026-11-05"),
        ("The packet goes out a week before.", "2026-11-12"),  # no deadline of its own
    ],
)
def test_a_sentence_stating_the_asks_deadline_wins_over_the_meeting_it_precedes(
    after: str, due: str
) -> None:
    """ "Ahead of the board on the 12th, could you ...?": the meeting's date dates the ask
    only when no following sentence states the ask's own deadline."""
    body = f"Ahead of the board meeting on the 12th, could you send me the Q3 cost summary? {after}"
    assert found(body, "Q3 costs") == [("Send Q3 cost summary to Ilse", due)]


def test_a_bare_day_said_to_suit_dates_the_undated_ask_before_it() -> None:
    body = "Could you send the venue the final guest list? Friday would be great."
    assert found(body, "Gala") == [("Send venue final guest list", "2026-11-06")]


# --- relative dates from the message's own day, in the brief's zone (issue 34) -----------------


def _due(body: str, received: str, tz: str = "America/New_York") -> list[str | None]:
    """The due dates the offline model gives `body` received at `received` (an aware ISO time),
    read as read_message hands it over in the brief's zone `tz`."""
    item = MailItem(
        source="inbox", stable_id="d1", key="mail:d1", sender="Ilse Varga <ilse@kestrel.example>",
        subject="Hello", received_at=dt.datetime.fromisoformat(received), snippet=body[:80],
        unread=True, thread_id=None, position="0", body=body,
    )  # fmt: skip
    actions = body_actions(item.message_json(ZoneInfo(tz)), "Alex")
    return [a.due.isoformat() if a.due else None for a in actions]


@pytest.mark.parametrize(
    ("body", "received", "due"),
    [
        # weekday names: the next such day, across a month's and a year's end
        ("Could you send me the slides by Friday?", "2026-12-30T10:00:00-05:00", "2027-01-01"),
        ("Could you sign off the budget by Monday?", "2026-10-30T10:00:00-04:00", "2026-11-02"),
        ("Could you send me the slides by Wednesday?", "2027-01-27T10:00:00-05:00", "2027-02-03"),
        # "next <weekday>": that day of the following week, also said without "by"
        ("Can you present the roadmap next Monday?", "2026-12-31T10:00:00-05:00", "2027-01-04"),
        ("Can you present the roadmap next Monday?", "2027-01-04T10:00:00-05:00", "2027-01-11"),
        # "end of next week": the Friday of the following week
        ("Can you get me the forecast by end of next week?", "2026-12-28T10:00:00-05:00",
         "2027-01-08"),
        ("Can you get me the forecast by end of next week?", "2026-10-29T10:00:00-04:00",
         "2026-11-06"),
        # "tomorrow EOD": the next calendar day, across the year's and February's end
        ("Could you review the post tomorrow EOD?", "2026-12-31T10:00:00-05:00", "2027-01-01"),
        ("Could you review the post tomorrow EOD?", "2026-02-28T10:00:00-05:00", "2026-03-01"),
        ("Could you review the post tomorrow EOD?", "2028-02-28T10:00:00-05:00", "2028-02-29"),
        # "the 19th": this month's, the next month's once it has passed
        ("Please send me your feedback by the 19th.", "2026-12-20T10:00:00-05:00", "2027-01-19"),
        ("Please send me your feedback by the 19th.", "2026-12-02T10:00:00-05:00", "2026-12-19"),
        # a day the next month lacks is the first month after that has it
        ("Please send me your feedback by the 30th.", "2026-01-31T10:00:00-05:00", "2026-03-30"),
        ("Please send me your feedback by the 31st.", "2026-04-02T10:00:00-04:00", "2026-05-31"),
        # "end of the month" on its last day, and at the year's end
        ("Please finish the reviews by the end of the month.", "2026-12-31T09:00:00-05:00",
         "2026-12-31"),
    ],
)  # fmt: skip
def test_relative_dates_resolve_from_the_day_received_across_month_and_year_ends(
    body: str, received: str, due: str
) -> None:
    assert _due(body, received) == [due]


def test_a_date_is_the_day_received_in_the_briefs_zone_across_the_dst_change() -> None:
    """03:30 UTC on 2 November 2026 is Sunday night in New York (EST since 02:00 that
    morning): "tomorrow" is the 2nd there, the 3rd for a brief kept in UTC."""
    late = "Could you approve the PO tomorrow morning?"
    assert _due(late, "2026-11-02T03:30:00+00:00") == ["2026-11-02"]
    assert _due(late, "2026-11-02T03:30:00+00:00", tz="UTC") == ["2026-11-03"]
    # the spring change: 03:30 UTC on 9 March 2026 is 23:30 EDT on Sunday the 8th
    assert _due(late, "2026-03-09T03:30:00+00:00") == ["2026-03-09"]
    # "by Friday" sent on the Sunday night of the autumn change is that week's Friday
    assert _due("Can you draft your section by Friday?", "2026-11-02T02:15:00+00:00") == [
        "2026-11-06"
    ]
    # Europe's change a week earlier (25 October): 23:30 UTC on the 24th is Sunday in Berlin
    assert _due(late, "2026-10-24T23:30:00+00:00", tz="Europe/Berlin") == ["2026-10-26"]


def test_a_span_of_days_or_a_date_that_suits_in_the_next_sentence_dates_the_ask() -> None:
    body = "Could you fill in sections 4-6 of the questionnaire? They want it back within 3 days."
    assert found(body, "Vendor") == [("Fill in sections 4-6 of questionnaire", "2026-11-05")]
    body = (
        "Thanks for saying you'd write the reference letter. The panel meets on the 12th, "
        "so anytime before the 10th would be perfect."
    )
    assert found(body, "Reference") == [("Write reference letter", "2026-11-10")]
    # the panel's own date is no deadline of the ask
    assert found("Could you write the reference letter? The panel meets on the 12th.", "R") == [
        ("Write reference letter", None)
    ]


def test_a_deadline_of_one_verb_is_not_another_things_unless_it_names_it_again() -> None:
    body = "Please add a section on risks to the memo, and send Nadia the redlines by the 15th."
    assert found(body, "Memo") == [("Add section on risks to memo", None),
                                    ("Send Nadia redlines", "2026-11-15")]  # fmt: skip
    # "sign the contract and send it back by Friday": the same thing, the same deadline
    assert [d for _, d in found("Please sign the contract and send it back by Friday.", "C")] == [
        "2026-11-06",
        "2026-11-06",
    ]


def test_the_19th_and_next_weeks_end_are_read_from_the_briefs_zone_across_both_dst_changes() -> (
    None
):
    """A message's own day, in the brief's zone, is what a relative date counts from: 03:15
    UTC on Monday 2 November 2026 is still Sunday in New York (EST since 02:00 on the 1st),
    so "end of next week" is Friday 6 November there but the 13th in UTC; 22:30 UTC on
    Saturday 24 October is already Sunday the 25th in Berlin (CET since 03:00 that night)."""
    late = "Can you get me the forecast by end of next week?"
    assert _due(late, "2026-11-02T03:15:00+00:00") == ["2026-11-06"]
    assert _due(late, "2026-11-02T03:15:00+00:00", tz="UTC") == ["2026-11-13"]
    german = "Kannst du mir die Zahlen bis morgen schicken?"
    assert _due(german, "2026-10-24T22:30:00+00:00", tz="Europe/Berlin") == ["2026-10-26"]
    assert _due(german, "2026-10-24T22:30:00+00:00", tz="UTC") == ["2026-10-25"]
    # "para el 19": 22:30 UTC on the 19th is the 20th in Madrid (the 19th has passed, so
    # November's), still the 19th in New York (today)
    spanish = "¿Puedes revisar el borrador para el 19?"
    assert _due(spanish, "2026-10-19T22:30:00+00:00", tz="Europe/Madrid") == ["2026-11-19"]
    assert _due(spanish, "2026-10-19T22:30:00+00:00", tz="America/New_York") == ["2026-10-19"]


def test_a_question_or_abbreviation_in_brackets_does_not_cut_the_ask_from_its_date() -> None:
    """'(Slack? the old Jira board?)' and '(approx. 40 rows)' sit inside the sentence, so the
    deadline after the brackets is still the ask's."""
    body = "Please send me the apps you no longer use (Slack? the old Jira board?) by Wednesday."
    assert [d for _, d in found(body, "Licences")] == ["2026-11-04"]
    table = "Could you fill in the vendor sheet (approx. 40 rows, excl. tax) by Thursday?"
    assert [d for _, d in found(table, "Vendor sheet")] == ["2026-11-05"]
    two = "Can you check the rota? I think it's wrong. Send it back by Thursday."
    assert len(found(two, "Rota")) == 2  # outside brackets a question still ends a sentence


def test_the_subjects_date_is_not_spread_over_asks_that_have_their_own_or_another_has_it() -> None:
    """Under 'tonight + fri', the ask 'on Friday' is Friday's; under 'two things before
    Thursday', only the ask that says 'by Thursday' is Thursday's; a lone ask keeps the
    subject's date."""
    body = ("hey, two things\n\ncan you collect the dry cleaning on Friday? I'm at the office."
            "\nand please ring the vet about Biscuit's jab tonight\n\nS")  # fmt: skip
    assert sorted(d or "" for _, d in found(body, "tonight + fri")) == ["2026-11-02", "2026-11-06"]
    two = ("Hi Alex,\n\n1. Could you approve Omar's expense claim in Concur?\n"
           "2. Please review the rota change by Thursday.\n\nThanks")  # fmt: skip
    dues = dict(found(two, "two things before Thursday"))
    assert list(dues.values()).count("2026-11-05") == 1 and None in dues.values()
    alone = "Could you approve Omar's expense claim in Concur?"
    assert [d for _, d in found(alone, "before Thursday")] == ["2026-11-05"]


def test_a_clock_time_alone_takes_the_day_the_sentence_names_elsewhere() -> None:
    """'tomorrow before the 9am stand-up' is due tomorrow, not today; 'by 4pm' alone is
    today."""
    ask = "Could you check the rota tomorrow before the 9am stand-up?"
    assert [d for _, d in found(ask, "Rota")] == ["2026-11-03"]
    assert [d for _, d in found("Could you check the rota by 4pm?", "Rota")] == ["2026-11-02"]
    later = "Please send the floor plan on Thursday by 11am."
    assert [d for _, d in found(later, "Floor plan")] == ["2026-11-05"]


# --- an errand's day, and a question's reply-by (quiet10's wrong dues) -------------------------


@pytest.mark.parametrize(
    ("body", "task"),
    [
        ("Can you pick up Theo from swim on Friday? I'm in Hartford till late.",
         ("Pick up Theo from swim", "2026-11-06")),
        ("Could you drop the kids off Friday at 8?", ("Drop kids off", "2026-11-06")),
        ("Could you bring the interim financials to Thursday's meeting?",
         ("Bring interim financials to meeting", "2026-11-05")),
    ],
)  # fmt: skip
def test_an_errand_done_at_a_time_is_due_on_its_day(body: str, task: tuple[str, str]) -> None:
    assert found(body, "Friday") == [task]


@pytest.mark.parametrize(
    "body",
    [
        "Could you book a room for the workshop on Nov 10?",
        "Can you share the photos from Saturday's hike?",
        # an errand's own day is its due, not the day of what its thing comes from
        "Please take a look at the notes from Monday's meeting.",
        "Could you bring the slides from Thursday's workshop to the review?",
    ],
)
def test_the_day_of_the_thing_an_ask_is_about_is_no_deadline(body: str) -> None:
    [(_, due)] = found(body, "Hello")
    assert due is None


def test_a_question_takes_the_reply_by_of_the_let_us_know_after_it() -> None:
    body = (
        "We're having a party on Sunday Nov 8. Can you and Sam come? "
        "Let us know by Wednesday so I can sort the food."
    )
    assert [due for _, due in found(body, "Party!")] == ["2026-11-04"]


def test_a_later_question_of_its_own_does_not_date_the_one_before() -> None:
    body = (
        "Can you send me the flight number? "
        "Let me know by Thursday if you're staying for Christmas."
    )
    assert found(body, "Christmas")[0] == ("Send flight number to Ilse", None)


# --- what a neighbouring sentence's day says (quiet12 and quiet13's wrong dues) ---------------


@pytest.mark.parametrize(
    "body",
    [
        "Jun passed the microscope training today. Can you add him to the booking account?",
        "Both pipettes failed calibration this morning. Could you order a replacement set?",
    ],
)
def test_a_day_the_sentence_before_says_something_happened_is_no_deadline(body: str) -> None:
    [(_, due)] = found(body, "Hello")
    assert due is None


@pytest.mark.parametrize(
    ("body", "due"),
    [
        # an obligation, an urgency or a lead in the sentence before still dates the ask
        ("The payment we discussed must be scheduled today. Please schedule it in bill pay.",
         "2026-11-02"),
        ("The server crashed overnight and I need an answer within the hour. Please call me.",
         "2026-11-02"),
        ("The vendor called and wants the form by Friday. Can you sign it?", "2026-11-06"),
        # a day of its own in the sentence before, with no past verb, carries as it did
        ("The board packet goes out tomorrow. Can you send me your two slides?", "2026-11-03"),
    ],
)  # fmt: skip
def test_a_day_before_the_ask_still_dates_it_when_it_is_not_a_past_event(
    body: str, due: str
) -> None:
    assert [d for _, d in found(body, "Hello")] == [due]


def test_a_time_of_day_after_until_is_how_long_not_when_due() -> None:
    """'can stay on until 8 pm' is no deadline; 'until Friday' and 'by 8 pm' still are."""
    lights = "Could you confirm the field lights can stay on until 8 pm for the makeup games?"
    assert [d for _, d in found(lights, "Lights")] == [None]
    assert [d for _, d in found("Could you keep the form until Friday?", "Form")] == ["2026-11-06"]
    assert [d for _, d in found("Could you confirm the lights by 8 pm?", "Lights")] == [
        "2026-11-02"
    ]


def test_a_title_before_a_name_does_not_end_the_sentence() -> None:
    """'la Dra. Okafor', 'Mme. Roux': the deadline after the name is still the ask's."""
    spanish = "¿Podrías mandarme la carta firmada por la Dra. Okafor antes del jueves?"
    assert [d for _, d in found(spanish, "Carta")] == ["2026-11-05"]
    french = "Pourriez-vous envoyer le dossier à Mme. Roux avant vendredi ?"
    assert [d for _, d in found(french, "Dossier")] == ["2026-11-06"]


def test_an_ask_after_the_let_us_know_that_dates_a_question_stays_its_own() -> None:
    """Only the sentence that gave the question its reply-by is the same ask, not the next."""
    body = (
        "Can you and Sam come to dinner on Saturday? Let us know by Wednesday. "
        "Also, please tell Priya."
    )
    tasks = found(body, "Dinner")
    assert tasks[0] == ("Come to dinner on Saturday", "2026-11-04")
    assert [title for title, _ in tasks] == ["Come to dinner on Saturday", "Tell Priya"]


def test_a_date_in_a_clause_of_its_own_before_and_is_not_the_next_asks() -> None:
    """'we need to book the vet by the 15th, and pls call your sister back': the 15th is the
    vet's; an ask whose cue comes first keeps the sentence's date."""
    body = "also we need to book the vet by the 15th (booster shots), and pls call your sister back"
    assert found(body, "Stuff") == [("Call sister back", None)]
    first = "Please renew the domain by Thursday, and could you add Noor?"
    assert found(first, "Domain") == [("Renew domain", "2026-11-05"), ("Add Noor", None)]
    opening = "First thing Monday, could you send the deck?"
    assert found(opening, "Deck") == [("Send deck", "2026-11-09")]
