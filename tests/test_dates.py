"""Deadline phrases and the days they mean (dayflow/dates.py), from the day a message was
received: weekday names in four languages, "next <weekday>", "end of (next) week", "tomorrow
EOD", "the 19th", dates with and without their year, across month ends, year ends and the
weekend, and the invariant that a relative date never falls before the day received."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dayflow.dates import WEEKDAY, find_deadline, resolve


def _due(text: str, received: dt.date) -> dt.date | None:
    found = find_deadline(text, received)
    return found.due if found else None


SAT_OCT_31 = dt.date(2026, 10, 31)
MON_DEC_28 = dt.date(2026, 12, 28)


# --- month end, year end ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("Could you send it by Monday?", "2026-11-02"),
        ("Please review it by tomorrow.", "2026-11-01"),
        ("Please send me your notes by the 19th.", "2026-11-19"),  # the 19th has passed
        ("Please send me your notes by the 31st.", "2026-10-31"),  # not passed: today
        ("Can you finish it by end of the month?", "2026-10-31"),
        ("Can you finish it by end of next month?", "2026-11-30"),
        ("Can you get me the plan by the end of November?", "2026-11-30"),
    ],
)
def test_a_relative_date_sent_on_a_months_last_day_crosses_into_the_next_once_passed(
    text: str, due: str
) -> None:
    assert _due(text, SAT_OCT_31) == dt.date.fromisoformat(due)


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("Can you send me the deck next Friday?", "2027-01-08"),  # the following week's
        ("Can you send me the deck by Friday?", "2027-01-01"),
        ("Please sign it by the 5th.", "2027-01-05"),
        ("Can you confirm by end of next week?", "2027-01-08"),
        ("Could you approve it by Jan 4?", "2027-01-04"),  # a date without its year: the next
        ("Could you approve it by 4 January 2027?", "2027-01-04"),
        ("Bitte bis nächsten Freitag.", "2027-01-08"),
        ("Merci de répondre avant vendredi prochain.", "2027-01-08"),
        ("¿Puedes enviarlo antes del próximo viernes?", "2027-01-08"),
    ],
)
def test_a_relative_date_sent_in_the_years_last_week_lands_in_january(text: str, due: str) -> None:
    assert _due(text, MON_DEC_28) == dt.date.fromisoformat(due)


# --- tomorrow, end of week, this week -----------------------------------------------------------


@pytest.mark.parametrize(
    ("received", "due"),
    [("2026-10-30", "2026-10-31"), ("2026-10-31", "2026-11-01"), ("2026-12-31", "2027-01-01")],
)
def test_tomorrow_eod_is_the_next_calendar_day_also_from_a_friday_or_saturday(
    received: str, due: str
) -> None:
    day = dt.date.fromisoformat(received)
    for text in ("Could you review the post tomorrow EOD?", "need it back by tmrw",
                 "EOD tomorrow please", "Kannst du das bis morgen machen?"):  # fmt: skip
        assert _due(text, day) == dt.date.fromisoformat(due), text


def test_end_of_the_week_is_its_friday_and_end_of_next_week_the_following_weeks() -> None:
    wednesday = dt.date(2026, 10, 28)
    assert _due("Send it by end of the week.", wednesday) == dt.date(2026, 10, 30)
    assert _due("Send it by EOW.", wednesday) == dt.date(2026, 10, 30)
    assert _due("Send it by end of next week.", wednesday) == dt.date(2026, 11, 6)
    assert _due("Bitte bis Ende nächster Woche.", wednesday) == dt.date(2026, 11, 6)
    assert _due("Merci d'ici la fin de la semaine prochaine.", wednesday) == dt.date(2026, 11, 6)
    # on a Friday, this week's end is today
    assert _due("Send it by end of the week.", dt.date(2026, 10, 30)) == dt.date(2026, 10, 30)


def test_end_of_the_week_sent_on_a_weekend_is_never_the_friday_past() -> None:
    """Sent on Saturday 31 October, this week's Friday has passed: the week's end is the
    coming Friday, and "next week" is the calendar week that starts on Monday, as it is for
    "next Friday"."""
    assert _due("Send it by end of the week.", SAT_OCT_31) == dt.date(2026, 11, 6)
    assert _due("Send it by end of next week.", SAT_OCT_31) == _due(
        "Send it next Friday.", SAT_OCT_31
    )


def test_this_week_and_next_week_alone_are_no_date() -> None:
    """bench/eval/GUIDE.md: "next week", "soon" are vague, their due is null."""
    wednesday = dt.date(2026, 10, 28)
    assert find_deadline("Could you set up a call this week?", wednesday) is None
    assert find_deadline("Can we talk next week?", wednesday) is None
    assert _due("Could you send it by the end of this week?", wednesday) == dt.date(2026, 10, 30)


# --- weekday names in four languages ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Could you send it by Thursday?",
        "Kannst du es bis Donnerstag schicken?",
        "Peux-tu l'envoyer avant jeudi ?",
        "¿Puedes enviarlo antes del jueves?",
        "Tu peux me l'envoyer pour jeudi ?",
        "¿Me lo mandas para el jueves?",
    ],
)
def test_a_weekday_in_any_of_the_four_languages_is_the_next_such_day(text: str) -> None:
    assert _due(text, dt.date(2026, 10, 27)) == dt.date(2026, 10, 29)  # a Tuesday's Thursday
    # sent on that weekday, it is a week later
    assert _due(text, dt.date(2026, 10, 29)) == dt.date(2026, 11, 5)


# --- a day of the month and a date --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Please send me your feedback by the 19th.",
        "Necesito que revises el borrador para el 19.",
        "Merci de me répondre avant le 19, si possible.",
        "Bitte schick es mir bis zum 19. zurück.",
    ],
)
def test_the_19th_is_this_months_or_the_next_months_once_passed(text: str) -> None:
    assert _due(text, dt.date(2026, 11, 2)) == dt.date(2026, 11, 19)
    assert _due(text, dt.date(2026, 10, 27)) == dt.date(2026, 11, 19)
    assert _due(text, dt.date(2026, 12, 20)) == dt.date(2027, 1, 19)


def test_a_day_number_without_a_lead_or_with_an_hour_is_no_date() -> None:
    tuesday = dt.date(2026, 10, 27)
    assert find_deadline("Wir sind bis 19 Uhr im Büro.", tuesday) is None
    assert find_deadline("Llegamos el 19 de noche.", tuesday) is None


@pytest.mark.parametrize(
    ("text", "due", "phrase"),
    [
        ("Please share the signed SOW latest by 04-Nov-2026 so we can start.", "2026-11-04",
         "by 04-Nov-2026"),
        ("Please submit it no later than Friday, 6 November 2026 at 5:00 p.m.", "2026-11-06",
         "no later than Friday, 6 November 2026"),
        ("Could you send the numbers by Friday, November 6, 2026?", "2026-11-06",
         "by Friday, November 6, 2026"),
        ("Please return the slip by Monday, Nov. 9.", "2026-11-09", "by Monday, Nov. 9."),
        ("Bitte bis Ende Monat bestätigen.", "2026-10-31", "bis Ende Monat"),
        ("Bitte bis 13.11.2026 einreichen.", "2026-11-13", "bis 13.11.2026"),
        ("Please file it by 1/4/2027.", "2027-01-04", "by 1/4/2027"),
    ],
)  # fmt: skip
def test_a_date_with_its_year_or_a_weekday_is_that_date_and_the_phrase_holds_it_all(
    text: str, due: str, phrase: str
) -> None:
    found = find_deadline(text, dt.date(2026, 10, 27))
    assert found is not None
    assert (found.due, found.phrase) == (dt.date.fromisoformat(due), phrase)


def test_a_written_year_wins_over_the_nearest_such_date() -> None:
    """ "by 3 January 2026" sent in October 2026 is that (past) date, not next January's."""
    assert _due("Please file it by 3 January 2026.", dt.date(2026, 10, 27)) == dt.date(2026, 1, 3)
    assert _due("Please file it by 3 January.", dt.date(2026, 10, 27)) == dt.date(2027, 1, 3)


# --- deadlines said around an event -------------------------------------------------------------


def test_a_deadline_before_or_ahead_of_an_event_is_the_events_day() -> None:
    tuesday = dt.date(2026, 10, 27)
    assert _due("Ahead of Thursday's call, could you pull the churn numbers?", tuesday) == (
        dt.date(2026, 10, 29)
    )
    assert _due("Please review the budget tab before our 1:1 on Friday.", tuesday) == (
        dt.date(2026, 10, 30)
    )
    assert _due("Please send the agenda prior to the 15th.", tuesday) == dt.date(2026, 11, 15)


def test_as_soon_as_you_see_this_is_today() -> None:
    tuesday = dt.date(2026, 10, 27)
    assert _due("Can you call me as soon as you see this?", tuesday) == tuesday


# --- the invariant ------------------------------------------------------------------------------

_RELATIVE = (
    [*WEEKDAY, "tomorrow", "tmrw", "morgen", "demain", "mañana", "übermorgen", "today", "eod",
     "end of the week", "end of next week", "end of the month", "end of next month", "eow",
     "ende des monats", "ende nächster woche", "fin de mois", "la fin de la semaine prochaine"]
    + [f"next {d}" for d in ("monday", "friday", "sunday")]
    + [f"{d} prochain" for d in ("lundi", "vendredi")]
    + [f"nächsten {d}" for d in ("montag", "freitag")]
    + [f"próximo {d}" for d in ("lunes", "viernes")]
    + [f"this {d}" for d in ("tuesday", "saturday")]
)  # fmt: skip
_DAYS = st.dates(min_value=dt.date(2020, 1, 1), max_value=dt.date(2035, 12, 31))


@settings(max_examples=400, deadline=None)
@given(received=_DAYS, phrase=st.sampled_from(_RELATIVE))
def test_a_relative_date_is_never_before_the_day_received_nor_two_months_after(
    received: dt.date, phrase: str
) -> None:
    due = resolve(phrase, received)
    assert due is not None
    assert received <= due <= received + dt.timedelta(days=62)


@settings(max_examples=300, deadline=None)
@given(received=_DAYS, name=st.sampled_from(sorted(WEEKDAY)), lead=st.sampled_from(["", "next "]))
def test_a_weekday_resolves_to_that_weekday_within_two_weeks(
    received: dt.date, name: str, lead: str
) -> None:
    due = resolve(lead + name, received)
    assert due is not None
    assert due.weekday() == WEEKDAY[name]
    assert 1 <= (due - received).days <= 13


@settings(max_examples=300, deadline=None)
@given(received=_DAYS, day=st.integers(min_value=1, max_value=31))
def test_the_nth_is_a_day_numbered_n_on_or_after_the_day_received(
    received: dt.date, day: int
) -> None:
    due = resolve(f"the {day}th", received)
    assert due is not None
    assert due.day == day
    assert received <= due <= received + dt.timedelta(days=92)


# --- a weekday with its date ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Könnten Sie uns diese bitte bis Mittwoch, den 4. November, zusenden?",
        "bis Mittwoch, den 4.11.",
        "avant mercredi le 4 novembre",
        "antes del miércoles, el 4 de noviembre",
        "by Wednesday, November 4",
    ],
)
def test_a_weekday_written_with_its_date_is_that_date(text: str) -> None:
    """Sent on a Tuesday, 'Wednesday, the 4th of November' is the 4th, not the next day."""
    assert _due(text, dt.date(2026, 10, 27)) == dt.date(2026, 11, 4)


def test_a_weekday_followed_by_other_words_is_still_the_weekday() -> None:
    assert _due("bis Mittwoch, den Bericht bitte", dt.date(2026, 10, 27)) == dt.date(2026, 10, 28)


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("final copy Wednesday Nov 4 by noon", "2026-11-04"),  # the date before the hour
        ("send it Friday by noon", "2026-10-30"),  # the weekday named beside it
        ("Nov 6, by 5pm", "2026-11-06"),
        ("please call by noon", "2026-10-28"),  # an hour alone is today
    ],
)
def test_an_hour_as_the_deadline_takes_the_day_named_beside_it(text: str, due: str) -> None:
    found = find_deadline(text, dt.date(2026, 10, 28))  # a Wednesday
    assert found is not None and found.due == dt.date.fromisoformat(due)


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("by Weds", "2026-11-04"),
        ("this coming Monday", "2026-11-02"),
        ("by Monday next week", "2026-11-02"),
        ("by Friday next week", "2026-11-06"),  # the following week's, as "next Friday"
        ("within a week", "2026-11-04"),
        ("in two weeks", "2026-11-11"),
        ("by close of business Friday", "2026-10-30"),
        ("by close of business", "2026-10-28"),
        ("before the weekend", "2026-10-30"),  # its Friday
    ],
)
def test_more_ways_of_naming_a_day_resolve_as_guide_says(text: str, due: str) -> None:
    found = find_deadline(text, dt.date(2026, 10, 28))  # a Wednesday
    assert found is not None and found.due == dt.date.fromisoformat(due)


def test_a_weekend_named_without_a_lead_is_no_deadline() -> None:
    assert find_deadline("can you feed the cat this weekend?", dt.date(2026, 10, 28)) is None
    assert find_deadline("we were away over the weekend", dt.date(2026, 10, 28)) is None


def test_business_days_count_weekdays_only() -> None:
    found = find_deadline("within 5 business days", dt.date(2026, 10, 28))  # a Wednesday
    assert found is not None and found.due == dt.date(2026, 11, 4)
    friday = find_deadline("in 2 working days", dt.date(2026, 10, 30))
    assert friday is not None and friday.due == dt.date(2026, 11, 3)


def test_ready_for_a_days_meeting_is_due_that_day() -> None:
    found = find_deadline("have the draft ready for Monday's meeting", dt.date(2026, 10, 28))
    assert found is not None and found.due == dt.date(2026, 11, 2)
    assert find_deadline("the notes from Monday's meeting", dt.date(2026, 10, 28)) is None


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("by Friday 2026-12-11", "2026-12-11"),  # an ISO date beside its weekday
        ("by Friday (2026-12-11)", "2026-12-11"),
        ("by Fri 11/12/2026", "2026-12-11"),  # the weekday says the writer puts the day first
        ("by Friday 12/11/2026", "2026-12-11"),
        ("by Thursday 11/12", "2026-11-12"),  # month first, as the weekday agrees
    ],
)
def test_a_weekday_beside_its_date_takes_the_date_and_tells_its_order(text: str, due: str) -> None:
    found = find_deadline(text, dt.date(2026, 12, 3))
    assert found is not None and found.due == dt.date.fromisoformat(due)
    assert found.phrase == text  # the whole date is the deadline's, none of it left in a title
