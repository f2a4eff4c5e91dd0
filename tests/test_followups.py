"""The followups core: threading, You owe and Waiting on, from real message bytes."""

from __future__ import annotations

import datetime as dt

import pytest

from dayflow.errors import ConfigFileError
from dayflow.followups import (
    Me,
    Record,
    Window,
    build_followups,
    default_me,
    normalise_subject,
    parse_me,
    working_days,
)
from dayflow.sources.envelope import Envelope
from dayflow.sources.mail import MailItem
from dayflow.sources.mime import parse_message
from tests.mailkit import thread_mail as raw

ME = parse_me(["alex@example.org", "a.doe@work.example"])
NOW = dt.datetime(2026, 11, 18, 9, 0, tzinfo=dt.UTC)  # a Wednesday
BOB = "Bob Stone <bob@example.com>"
ALEX = "Alex Doe <alex@example.org>"


def record(data: bytes, source: str = "work", *, sent: bool = False) -> Record:
    parsed = parse_message(data, fallback_time=NOW)
    item = MailItem.of(source, parsed, unread=False, position="")
    return Record.of(item, sent=sent)


def days_ago(n: float) -> dt.datetime:
    return NOW - dt.timedelta(days=n)


def follow(*records: Record, me: Me = ME, **kw: object) -> object:
    return build_followups(list(records), Window(me, NOW, dt.UTC, **kw))  # type: ignore[arg-type]


def test_a_question_to_me_with_no_reply_is_owed_with_its_age_in_working_days() -> None:
    ask = record(raw("q1@x", when=days_ago(5)))  # Friday 13th: Mon, Tue, Wed since
    out = follow(ask)
    assert [i.counterpart_address for i in out.owed] == ["bob@example.com"]  # type: ignore[attr-defined]
    item = out.owed[0]  # type: ignore[attr-defined]
    assert item.counterpart_name == "Bob Stone" and item.subject == "Budget"
    assert item.age_days == 3 and item.sources == ("work",)
    assert item.thread.startswith("thread:") and out.waiting == ()  # type: ignore[attr-defined]


def test_my_reply_in_the_sent_folder_settles_what_i_owed() -> None:
    ask = record(raw("q1@x", when=days_ago(3)))
    reply = raw(
        "r1@y", sender=ALEX, to=BOB, subject="Re: Budget", body="Attached.",
        when=days_ago(2), reply_to="q1@x", refs="<q1@x>",
    )  # fmt: skip
    out = follow(ask, record(reply, "work/sent", sent=True))
    assert out.owed == () and out.waiting == ()  # type: ignore[attr-defined]
    assert len(out.threads) == 1 and out.threads[0].sources == ("work", "work/sent")  # type: ignore[attr-defined]


def test_cc_only_list_mail_automated_and_statements_are_not_owed() -> None:
    cc_only = raw("c@x", to="team@example.com", cc=ALEX, when=days_ago(1))
    listed = raw("l@x", subject="News?", when=days_ago(1), extra="List-Id: <news.example.com>")
    bulk = raw("b@x", subject="Sale?", when=days_ago(1), extra="Precedence: bulk")
    noreply = raw("n@x", sender="noreply@shop.example", subject="Rate us?", when=days_ago(1))
    auto = raw("a@x", subject="Ping?", when=days_ago(1), extra="Auto-Submitted: auto-generated")
    statement = raw("s@x", subject="FYI", body="The build is green.", when=days_ago(1))
    out = follow(*(record(m) for m in (cc_only, listed, bulk, noreply, auto, statement)))
    assert out.owed == ()  # type: ignore[attr-defined]


def test_a_plus_tag_and_case_still_reach_me() -> None:
    out = follow(record(raw("q@x", to="ALEX+lists@Example.ORG", when=days_ago(1))))
    assert len(out.owed) == 1  # type: ignore[attr-defined]


def test_my_question_unanswered_for_two_working_days_is_waiting() -> None:
    mine = raw("m1@y", sender=ALEX, to=BOB, subject="Contract?", body="Did you sign it?",
               when=days_ago(2))  # fmt: skip
    out = follow(record(mine, "work/sent", sent=True))
    assert [i.counterpart_address for i in out.waiting] == ["bob@example.com"]  # type: ignore[attr-defined]
    assert out.waiting[0].age_days == 2  # type: ignore[attr-defined]
    fresh = follow(record(mine, "work/sent", sent=True), waiting_after_days=3)
    assert fresh.waiting == ()  # type: ignore[attr-defined]


def test_weekends_are_not_working_days() -> None:
    friday, monday = dt.date(2026, 11, 13), dt.date(2026, 11, 16)
    assert working_days(friday, monday) == 1
    assert working_days(friday, friday + dt.timedelta(days=2)) == 0
    assert working_days(monday, monday + dt.timedelta(days=14)) == 10
    assert working_days(monday, friday) == 0


def test_an_out_of_office_reply_is_not_an_answer() -> None:
    mine = raw("m1@y", sender=ALEX, to=BOB, subject="Contract?", body="Did you sign it?",
               when=days_ago(6))  # fmt: skip
    ooo = raw("o1@x", subject="Out of office: Contract?", body="I am away until Monday.",
              when=days_ago(6) + dt.timedelta(minutes=1), reply_to="m1@y")  # fmt: skip
    out = follow(record(mine, sent=True), record(ooo))
    assert [i.subject for i in out.waiting] == ["Contract?"]  # type: ignore[attr-defined]


def test_an_answer_after_my_question_ends_the_wait() -> None:
    mine = raw("m1@y", sender=ALEX, to=BOB, subject="Contract?", body="Did you sign it?",
               when=days_ago(6))  # fmt: skip
    answer = raw("a1@x", subject="Re: Contract?", body="Signed.", when=days_ago(5),
                 reply_to="m1@y")  # fmt: skip
    out = follow(record(mine, sent=True), record(answer))
    assert out.waiting == () and out.owed == ()  # type: ignore[attr-defined]


def test_mail_from_me_found_in_an_inbox_counts_as_sent_and_is_one_message() -> None:
    ask = record(raw("q1@x", when=days_ago(3)))
    reply = raw("r1@y", sender=ALEX, to=BOB, subject="Re: Budget", body="Here.",
                when=days_ago(2), reply_to="q1@x")  # fmt: skip
    out = follow(ask, record(reply, "gmail"), record(reply, "work/sent", sent=True))
    assert out.owed == ()  # type: ignore[attr-defined]
    (thread,) = out.threads  # type: ignore[attr-defined]
    assert len(thread.messages) == 2 and thread.messages[0].sources == ("gmail", "work/sent")


def test_a_sent_folder_that_is_the_inbox_does_not_make_the_inbox_mine() -> None:
    """`sent` naming the inbox's own path: each message is seen in both; Bob's question is
    still owed, and only my own message counts as mine."""
    ask = raw("q1@x", when=days_ago(3))
    mine = raw("m1@y", sender=ALEX, to=BOB, subject="Lunch?", body="Lunch on Friday?",
               when=days_ago(4))  # fmt: skip
    out = follow(*(record(m, s, sent=s.endswith("sent")) for m in (ask, mine)
                   for s in ("work", "work/sent")))  # fmt: skip
    assert [i.counterpart_address for i in out.owed] == ["bob@example.com"]  # type: ignore[attr-defined]
    assert [i.subject for i in out.waiting] == ["Lunch?"]  # type: ignore[attr-defined]
    # Without `me` a sent folder is all there is to go by: its messages are the user's.
    assert follow(record(ask, "work/sent", sent=True), me=Me()).owed == ()  # type: ignore[attr-defined]


def test_subject_fallback_joins_a_reply_without_headers_within_30_days_only() -> None:
    ask = record(raw("q1@x", subject="[team] Budget", when=days_ago(10)))
    reply = raw("r1@y", sender=ALEX, to=BOB, subject="AW: Re: budget", body="Done.",
                when=days_ago(9))  # fmt: skip
    out = follow(ask, record(reply, sent=True))
    assert len(out.threads) == 1 and out.owed == ()  # type: ignore[attr-defined]
    old = record(raw("q0@x", subject="Budget", when=days_ago(45)))
    late = record(raw("r9@y", sender=ALEX, to=BOB, subject="Re: Budget", body="Done.",
                      when=days_ago(5)), sent=True)  # fmt: skip
    far = build_followups([old, late], Window(ME, NOW, dt.UTC, days=60))
    assert len(far.threads) == 2


def test_one_sources_thread_id_joins_a_reply_to_fewer_people_than_the_ask() -> None:
    """A teacher's mail to the class list, answered to the teacher alone, from a source with
    no Message-ID (a JSON export's `thread_id`): the subject fallback (same participants)
    cannot join them, the source's thread id does, and only within that source."""
    from dataclasses import replace

    def headerless(data: bytes, source: str, thread: str | None) -> Record:
        item = MailItem.of(source, parse_message(data, fallback_time=NOW), unread=False,
                           position="")  # fmt: skip
        bare = replace(item.envelope, message_id=None, in_reply_to=None, references=())
        return Record.of(replace(item, envelope=bare, thread_id=thread))

    ask = raw("q1@x", to="Room 12 <room12@school.example>", subject="Trip slip",
              body="Please return the slip by Friday.", when=days_ago(3))  # fmt: skip
    reply = raw("r1@y", sender=ALEX, to=BOB, subject="Re: Trip slip",
                body="The slip is in her folder.", when=days_ago(2))  # fmt: skip
    apart = follow(headerless(ask, "inbox", None), headerless(reply, "inbox", None))
    assert len(apart.threads) == 2 and apart.answered == ()  # type: ignore[attr-defined]
    asked = headerless(ask, "inbox", "t-1")
    one = follow(asked, headerless(reply, "inbox", "t-1"))
    assert len(one.threads) == 1  # type: ignore[attr-defined]
    assert one.answered == (asked.key,)  # type: ignore[attr-defined]
    other = follow(asked, headerless(reply, "b", "t-1"))
    assert len(other.threads) == 2  # type: ignore[attr-defined]
    # Mail with a Message-ID is threaded by its headers: its `thread_id` is not read.
    assert Record.of(MailItem.of("inbox", parse_message(ask, fallback_time=NOW), unread=False,
                                 position="")).thread_id is None  # fmt: skip


def test_a_later_message_quoting_my_reply_settles_what_came_before_it() -> None:
    """My reply is not in the window (sent from a phone), but Bob's next message quotes it:
    his first ask was answered; what he asks anew is not, and a quote of someone else's, or
    of mine only deeper in the chain, settles nothing."""
    ask = record(raw("q1@x", body="Can you confirm Thursday at 7?", when=days_ago(4)))

    def later(quoted_from: str, *, deeper: bool = False) -> Record:
        chain = f"On Tue, Nov 17, 2026, {quoted_from} wrote:\n> Yes, Thursday at 7 works.\n"
        if deeper:
            chain = "On Tue, Nov 17, 2026, Carol <carol@example.net> wrote:\n> Fine.\n>\n> " + chain
        body = "Thanks! One more: could you send the hotel booking by Friday?\n\n" + chain
        return record(raw("q2@x", subject="Re: Budget", body=body, when=days_ago(2),
                          reply_to="q1@x", refs="<q1@x>"))  # fmt: skip

    mine = later("Alex Doe <alex@example.org>")
    out = follow(ask, mine)
    assert out.answered == (ask.key,)  # type: ignore[attr-defined]
    assert [i.subject for i in out.owed] == ["Re: Budget"]  # type: ignore[attr-defined]
    for other in (
        later("Carol <carol@example.net>"),
        later("Alex <alex@example.org>", deeper=True),
    ):
        assert follow(ask, other).answered == ()  # type: ignore[attr-defined]


def test_a_reply_that_only_asks_a_question_back_answers_nothing() -> None:
    """ "Which two - Devin and Marisol, or Pete too?": the user's reply, in the window or
    quoted in the next message, asks back; the ask it replies to is still open."""
    ask = record(raw("q1@x", body="Please send me your notes on the two candidates.",
                     when=days_ago(4)))  # fmt: skip
    back = raw("r1@y", sender=ALEX, to=BOB, subject="Re: Budget", when=days_ago(3),
               body="Hi Bob,\n\nWhich two - Devin and Marisol, or Pete too?\n\nAlex",
               reply_to="q1@x", refs="<q1@x>")  # fmt: skip
    assert follow(ask, record(back, sent=True)).answered == ()  # type: ignore[attr-defined]
    quoting = raw("q2@x", subject="Re: Budget", when=days_ago(2), reply_to="r1@y",
                  refs="<q1@x> <r1@y>",
                  body="Devin and Marisol.\n\nOn Mon, Alex Doe <alex@example.org> wrote:\n"
                       "> Which two - Devin and Marisol, or Pete too?\n")  # fmt: skip
    assert follow(ask, record(quoting)).answered == ()  # type: ignore[attr-defined]
    done = raw("r2@y", sender=ALEX, to=BOB, subject="Re: Budget", when=days_ago(3),
               body="Hi Bob,\n\nNotes attached. Any questions?\n\nAlex", reply_to="q1@x",
               refs="<q1@x>")  # fmt: skip
    assert follow(ask, record(done, sent=True)).answered == (ask.key,)  # type: ignore[attr-defined]


def test_an_answered_message_carries_the_words_of_the_reply_that_answered_it() -> None:
    """read_followups gives, beside the answered keys, what the user replied, so a reader can
    tell an ask the reply left open; a quote of the asking message is not the reply's."""
    ask = record(raw("q1@x", body="1) Order chart paper. 2) Call Gary about the date.",
                     when=days_ago(4)))  # fmt: skip
    reply = raw("r1@y", sender=ALEX, to=BOB, subject="Re: Budget", when=days_ago(3),
                body="Chart paper ordered, two boxes for Monday delivery, all good here.",
                reply_to="q1@x", refs="<q1@x>")  # fmt: skip
    out = follow(ask, record(reply, sent=True))
    assert out.answered == (ask.key,)  # type: ignore[attr-defined]
    replies = out.to_json(dt.UTC)["answered_replies"]  # type: ignore[attr-defined]
    assert replies == {
        ask.key: "Chart paper ordered, two boxes for Monday delivery, all good here."
    }
    short = raw("r2@y", sender=ALEX, to=BOB, subject="Re: Budget", when=days_ago(3),
                body="Done, thanks!", reply_to="q1@x", refs="<q1@x>")  # fmt: skip
    done = follow(ask, record(short, sent=True))
    assert done.to_json(dt.UTC)["answered_replies"] == {ask.key: "Done, thanks!"}  # type: ignore[attr-defined]
    inline = raw("r3@y", sender=ALEX, to=BOB, subject="Re: Budget", when=days_ago(3),
                 body="Take the car. Sent from my iPhone > On Oct 28 Bob wrote: > order paper",
                 reply_to="q1@x", refs="<q1@x>")  # fmt: skip
    quoted = follow(ask, record(inline, sent=True)).to_json(dt.UTC)["answered_replies"]  # type: ignore[attr-defined]
    assert quoted == {ask.key: "Take the car."}


def test_a_cut_short_reply_is_read_whole_for_the_quote_it_holds() -> None:
    from dataclasses import replace

    ask = record(raw("q1@x", body="Can you confirm Thursday at 7?", when=days_ago(4)))
    body = ("Great, see you then.\n\nOn Tue, Nov 17, 2026, Alex Doe <alex@example.org> wrote:\n"
            "> Yes, Thursday at 7 works.\n")  # fmt: skip
    whole = record(raw("q2@x", subject="Re: Budget", body=body, when=days_ago(2),
                       reply_to="q1@x", refs="<q1@x>"))  # fmt: skip
    cut = replace(whole, text="Great, see you then.", whole=False)
    asked: list[str] = []

    def read(message: object) -> str:
        asked.append(message.key)  # type: ignore[attr-defined]
        return body

    window = Window(ME, NOW, dt.UTC)
    assert build_followups([ask, cut], window).answered == ()
    assert build_followups([ask, cut], window, read=read).answered == (ask.key,)
    assert asked == [whole.key]
    # Nothing older of others' to settle: the lone reply is not read.
    asked.clear()
    build_followups([cut], window, read=read)
    assert asked == []
    # Nor one older than a reply of the user's in the window: that reply settled them already.
    done = raw("r9@y", sender=ALEX, to=BOB, subject="Re: Budget", body="Done, thanks.",
               when=days_ago(1), reply_to="q2@x", refs="<q1@x> <q2@x>")  # fmt: skip
    mine = record(done, sent=True)
    settled = build_followups([ask, cut, mine], window, read=read)
    assert asked == [] and ask.key in settled.answered


def test_normalised_subject_strips_prefixes_and_list_tags() -> None:
    assert normalise_subject("Re: AW: SV: Fwd: [team]  Budget Draft") == "budget draft"
    assert normalise_subject("RE[2]: Fw: x") == "x"
    assert normalise_subject("Re: " * 1000 + "x").startswith("re:")  # bounded, never a hang


def test_a_references_loop_is_one_thread_and_terminates() -> None:
    a = raw("a@x", when=days_ago(3), refs="<b@x>", subject="Loop?")
    b = raw("b@x", sender=ALEX, to=BOB, when=days_ago(2), refs="<a@x> <b@x>", subject="Loop")
    out = follow(record(a), record(b, sent=True))
    assert len(out.threads) == 1 and len(out.threads[0].messages) == 2  # type: ignore[attr-defined]


def test_ten_thousand_messages_in_one_thread() -> None:
    """Built as records (parsing 10,000 messages is mime's cost, tested there): each names the
    root and the last 99 before it, as long threads do."""
    records = []
    refs: list[str] = []
    bob, alex = ("Bob Stone", "bob@example.com"), ("Alex Doe", "alex@example.org")
    for n in range(10_000):
        mine = n % 2 == 1
        env = Envelope(
            sender=alex if mine else bob, to=(bob if mine else alex,), message_id=f"t{n}@x",
            in_reply_to=refs[-1] if refs else None, references=tuple(refs[:1] + refs[-99:]),
        )  # fmt: skip
        when = days_ago(10) + dt.timedelta(seconds=n)
        subject = "Re: Long" if n else "Long"
        records.append(Record(f"mail:{n}", f"work:{n}", "work", subject, when, "ok?", env, mine))
        refs.append(f"t{n}@x")
    out = follow(*records)
    (thread,) = out.threads  # type: ignore[attr-defined]
    assert len(thread.messages) == 10_000 and thread.messages[0].key == "mail:9999"
    assert [i.subject for i in out.waiting] == ["Re: Long"]  # type: ignore[attr-defined]


def test_a_message_id_shared_by_two_different_messages_keeps_both() -> None:
    one = raw("dup@x", subject="Lunch?", when=days_ago(3))
    other = raw("dup@x", sender="Carol <carol@example.net>", subject="Invoice?", when=days_ago(1))
    out = follow(record(one), record(other))
    owed = sorted(i.counterpart_address for i in out.owed)  # type: ignore[attr-defined]
    assert owed == ["bob@example.com", "carol@example.net"]


def test_mail_from_me_to_me_is_on_neither_list() -> None:
    note = raw("n@y", sender=ALEX, to="alex+notes@example.org", subject="Remember?",
               when=days_ago(4))  # fmt: skip
    out = follow(record(note, sent=True))
    assert out.owed == () and out.waiting == () and len(out.threads) == 1  # type: ignore[attr-defined]
    assert out.threads[0].participants == frozenset()  # type: ignore[attr-defined]


def test_future_and_pre_1970_dates_are_left_out_of_the_window() -> None:
    future = record(raw("f@x", when=NOW + dt.timedelta(days=1), subject="Tomorrow?"))
    ancient = Record(
        "mail:old", "work:old", "work", "Ancient?", dt.datetime(1969, 7, 20, tzinfo=dt.UTC),
        "Could you?", record(raw("o@x", when=days_ago(1))).envelope,
    )  # fmt: skip
    out = follow(future, ancient)
    assert out.threads == () and out.owed == ()  # type: ignore[attr-defined]
    # Whatever the header says, parsing never yields an absurd date either.
    parsed = parse_message(raw("p@x", when=dt.datetime(1960, 1, 1, tzinfo=dt.UTC)),
                           fallback_time=NOW)  # fmt: skip
    assert parsed.received_at == NOW


def test_quoted_questions_are_not_asked_again() -> None:
    reply = raw(
        "r@x", subject="Re: Figures", when=days_ago(1), reply_to="m@y",
        body="Thanks, noted.\n\nOn Mon, Alex wrote:\n> Could you send them?",
    )  # fmt: skip
    assert follow(record(reply)).owed == ()  # type: ignore[attr-defined]


def test_threads_with_and_open_tasks_from_for_meeting_prep() -> None:
    ask = record(raw("q1@x", when=days_ago(3)))
    other = record(raw("z@x", sender="Zed <zed@example.net>", subject="Other", when=days_ago(1)))
    out = follow(ask, other)
    assert [t.subject for t in out.threads_with(["BOB@example.com"])] == ["Budget"]  # type: ignore[attr-defined]

    class T:
        def __init__(self, key: str, status: str = "open") -> None:
            self.idempotency_key, self.status = key, status

    tasks = [T(ask.key + "#2"), T(out.owed[0].thread), T(ask.key, "done"), T(other.key)]  # type: ignore[attr-defined]
    found = out.open_tasks_from(tasks, ["bob@example.com"])  # type: ignore[attr-defined]
    assert found == tasks[:2]


def test_me_refuses_an_invalid_address_naming_the_key() -> None:
    with pytest.raises(ConfigFileError, match=r"me entry 2 \('not an address'\)"):
        parse_me(["alex@example.org", "not an address"], "config.toml")
    twice = parse_me(["Alex@Example.org", "alex@example.org", "alex+news@example.org"])
    assert twice.to_json() == [{"address": "Alex@Example.org", "from": "me in the config file"}]
    with pytest.raises(ConfigFileError, match="me is empty: list your email addresses"):
        parse_me([], "config.toml")
    with pytest.raises(ConfigFileError, match="me must be a list"):
        parse_me({"address": "alex@example.org"}, "config.toml")
    assert parse_me("alex@example.org").addresses == ("alex@example.org",)


def test_default_me_is_every_user_that_is_an_address() -> None:
    me = default_me([("alex@example.org", "imap user of work"), ("alex", "smtp user"),
                     ("Alex+x@example.org", "smtp user")])  # fmt: skip
    assert me.addresses == ("alex@example.org",)
    assert me.to_json() == [{"address": "alex@example.org", "from": "imap user of work"}]


def test_a_reply_dated_the_same_second_as_the_question_settles_it() -> None:
    when = days_ago(3)
    ask = record(raw("q1@x", when=when))
    reply = raw("r1@y", sender=ALEX, to=BOB, subject="Re: Budget", body="Here.", when=when,
                reply_to="q1@x")  # fmt: skip
    out = follow(ask, record(reply, sent=True))
    assert out.owed == () and out.threads[0].messages[0].from_me  # type: ignore[attr-defined]


def test_a_spanish_quote_header_ends_the_own_words_and_names_my_reply() -> None:
    from dayflow.followups.rules import own_words, quotes_my_reply

    text = ("¡Perfecto, gracias!\n\nEl mié, 28 oct 2026 a las 18:22, Alex Doe "
            "(<alex@example.org>) escribió:\n> Sí, pueden retransmitir.\n")  # fmt: skip
    assert own_words(text) == "¡Perfecto, gracias!\n"
    assert quotes_my_reply(text, ME)
