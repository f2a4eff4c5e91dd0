"""A real person's morning, as data: Alex Moreno's mailbox (an INBOX of 117 messages and a Sent
folder) and her Google Calendar export, for `tests/test_real_morning.py`.

The mail is written the way such a mailbox looks: a few conversations with people, with Alex's
own replies in Sent; mailing-list mail (List-Id), GitHub, Jira and CI notifications, receipts,
newsletters and an out-of-office reply, many of them worded as requests that are not Alex's to
do. The people's threads hold what a brief has to get right:

- Ben asks for the Q4 budget draft by Thursday (a request in the body, and a reply owed);
- Priya asked about the offsite venue, and Alex already answered from Sent (nothing to do);
- Alex asked Dana for the countersigned agreement a week ago, no answer yet (waiting on her);
- Marco's mockup thread goes back and forth through Sent and ends with his request to approve
  the final mockups by Monday (a task and a reply owed);
- the school asks every Year 4 parent (Alex in Bcc) for the signed permission slip by Friday;
- Priya's call notes bury one request for Alex in their middle;
- Sofia asks whether Alex can present on Thursday: an answer is all she needs.

The calendar is shaped like a Google Calendar export (`basic.ics`): `X-WR-TIMEZONE`, a
VTIMEZONE, lines folded at 75 octets wherever they fall (inside an ATTENDEE's parameters too),
a daily standup with an EXDATE and one instance moved, a declined webinar, and a meeting with
each of the people above.
"""

from __future__ import annotations

import datetime as dt
from email.utils import format_datetime
from zoneinfo import ZoneInfo

TZ = ZoneInfo("Europe/Berlin")
DAY = dt.date(2026, 11, 11)  # a Wednesday
ME = "alex@northwind.example"
ALEX = f"Alex Moreno <{ME}>"
BEN = "Ben Carter <ben@northwind.example>"
PRIYA = "Priya Shah <priya@northwind.example>"
SOFIA = "Sofia Lindgren <sofia@northwind.example>"
DANA = "Dana Kim <dana.kim@lumenlegal.example>"
MARCO = "Marco Rossi <marco@rossi-design.example>"
SCHOOL = "Oakridge Primary School <office@oakridge-school.example>"


def at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    """A moment of November 2026 in Berlin."""
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=TZ)


class Mail:
    """One message: its raw bytes, when it arrived, its folder and whether it was read."""

    def __init__(self, raw: bytes, when: dt.datetime, folder: str, seen: bool) -> None:
        self.raw, self.when, self.folder, self.seen = raw, when, folder, seen


def _raw(
    sender: str,
    to: str,
    subject: str,
    when: dt.datetime,
    body: str,
    mid: str,
    *,
    cc: str = "",
    reply_to: str = "",
    refs: str = "",
    headers: tuple[str, ...] = (),
) -> bytes:
    lines = [
        f"From: {sender}",
        f"To: {to}",
        *([f"Cc: {cc}"] if cc else []),
        f"Subject: {subject}",
        f"Date: {format_datetime(when)}",
        f"Message-ID: <{mid}>",
        *([f"In-Reply-To: <{reply_to}>"] if reply_to else []),
        *([f"References: {refs}"] if refs else []),
        *headers,
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Transfer-Encoding: 8bit",
        "",
        body.strip("\n") + "\n",
    ]
    return "\n".join(lines).replace("\n", "\r\n").encode()


def _people() -> list[Mail]:
    """The conversations with people, Alex's side in Sent."""
    out: list[Mail] = []

    def inbox(raw: bytes, when: dt.datetime, seen: bool = False) -> None:
        out.append(Mail(raw, when, "INBOX", seen))

    def sent(raw: bytes, when: dt.datetime) -> None:
        out.append(Mail(raw, when, "Sent", True))

    # Priya asks, Alex answers the same morning: nothing left to do.
    when = at(3, 10, 5)
    inbox(_raw(PRIYA, ALEX, "Offsite venue", when, """\
Hi Alex,

Can you confirm we're booked at the Harbour Room for the offsite on the 19th?
Facilities keep asking me.

Priya
""", "CAF1-venue@northwind.example"), when, seen=True)  # fmt: skip
    when = at(3, 11, 40)
    sent(_raw(ALEX, PRIYA, "Re: Offsite venue", when, """\
Yes, confirmed: the Harbour Room on 19 November, 9:00 to 17:00. The deposit is paid.

Alex

On Tue, 3 Nov 2026 at 10:05, Priya Shah <priya@northwind.example> wrote:
> Can you confirm we're booked at the Harbour Room for the offsite on the 19th?
""", "alex-venue@northwind.example", reply_to="CAF1-venue@northwind.example",
        refs="<CAF1-venue@northwind.example>"), when)  # fmt: skip

    # Alex asks Ben for a link; he sends it: answered.
    when = at(4, 9, 15)
    sent(_raw(ALEX, BEN, "Travel policy", when, """\
Hi Ben,

Can you share the link to the new travel policy? I can't find it on the wiki.

Thanks,
Alex
""", "alex-travel@northwind.example"), when)  # fmt: skip
    when = at(4, 9, 52)
    inbox(_raw(BEN, ALEX, "Re: Travel policy", when, """\
Here it is: https://wiki.northwind.example/finance/travel-2027

It replaces the old one from January.

Ben

On Wed, 4 Nov 2026 at 09:15, Alex Moreno <alex@northwind.example> wrote:
> Can you share the link to the new travel policy?
""", "CAB2-travel@northwind.example", reply_to="alex-travel@northwind.example",
        refs="<alex-travel@northwind.example>"), when, seen=True)  # fmt: skip

    # Alex asks Dana for the countersigned agreement: no answer since.
    when = at(4, 15, 0)
    sent(_raw(ALEX, DANA, "Services agreement", when, """\
Hi Dana,

Thanks for the redlines, we accept all of them. Could you send me the countersigned
services agreement once your partner has signed it?

Best,
Alex
""", "alex-agreement@northwind.example"), when)  # fmt: skip

    # Marco's mockups: back and forth, ending with his request.
    when = at(5, 9, 12)
    inbox(_raw(MARCO, ALEX, "Homepage mockups", when, """\
Hi Alex,

The first round of the homepage mockups is up:
https://files.rossi-design.example/northwind/round-1

Which of the two hero layouts do you prefer, A or B?

Marco
""", "marco-mockups-1@rossi-design.example"), when, seen=True)  # fmt: skip
    when = at(5, 13, 30)
    sent(_raw(ALEX, MARCO, "Re: Homepage mockups", when, """\
Layout B, with the smaller headline. Can you do the mobile version too?

Alex
""", "alex-mockups@northwind.example", reply_to="marco-mockups-1@rossi-design.example",
        refs="<marco-mockups-1@rossi-design.example>"), when)  # fmt: skip
    when = at(10, 17, 45)
    inbox(_raw(MARCO, ALEX, "Re: Homepage mockups", when, """\
Hi Alex,

The mobile version is up at the same link, with layout B throughout.

Please approve the final mockups by Monday 16 November so I can hand them over to the
developers.

Thanks,
Marco
""", "marco-mockups-2@rossi-design.example", reply_to="alex-mockups@northwind.example",
        refs="<marco-mockups-1@rossi-design.example> <alex-mockups@northwind.example>"),
          when)  # fmt: skip

    # The school writes to every Year 4 parent; Alex is in Bcc.
    when = at(9, 7, 55)
    inbox(_raw(SCHOOL, "Year 4 Parents <year4-parents@oakridge-school.example>",
               "Year 4 museum trip: permission slip", when, """\
Dear parents and carers,

On Thursday 19 November Year 4 will visit the Natural History Museum. Please return the
signed permission slip by Friday 13 November; without it your child cannot come along.

Kind regards,
Mrs Patel, Year 4
""", "trip-y4-2026@oakridge-school.example"), when, seen=True)  # fmt: skip

    # Ben asks for the budget draft, Priya in Cc.
    when = at(9, 16, 20)
    inbox(_raw(BEN, ALEX, "Q4 budget draft", when, """\
Hi Alex,

Ahead of Wednesday's budget review, could you send me the Q4 budget draft by Thursday
12 November? I want to go through the travel line before it goes to Sofia.

Thanks,
Ben
""", "CAB3-budget@northwind.example", cc=PRIYA), when, seen=True)  # fmt: skip

    # Sofia only needs an answer.
    when = at(10, 11, 2)
    inbox(_raw(SOFIA, ALEX, "Thursday all-hands", when, """\
Hi Alex,

Are you able to present the hiring update at Thursday's all-hands? Five minutes is plenty.

Sofia
""", "sofia-allhands@northwind.example"), when)  # fmt: skip

    # Alex sends her receipts (no question); Ben thanks her, Hugo's auto-reply comes back.
    when = at(10, 17, 0)
    sent(_raw(ALEX, BEN, "Receipts for October", when, """\
Hi Ben,

My receipts for October are in the finance folder, all 14 of them.

Alex
""", "alex-receipts@northwind.example", cc="Hugo Brandt <hugo@northwind.example>"),
         when)  # fmt: skip

    # Ben says thanks: nothing asked.
    when = at(10, 18, 30)
    inbox(_raw(BEN, ALEX, "Re: Receipts for October", when, """\
Got them, thanks. All booked.

Ben
""", "CAB4-receipts@northwind.example", reply_to="alex-receipts@northwind.example"),
          when, seen=True)  # fmt: skip

    # Priya's call notes: an FYI with one request for Alex in the middle.
    when = at(11, 7, 40)
    inbox(_raw(PRIYA, ALEX, "Notes from the vendor call", when, """\
Hi Alex,

Notes from this morning's call with Bluepeak, for the record:

- They can move the migration to the first week of December.
- Support hours stay 8:00 to 20:00 CET; weekend cover costs extra.
- Their security questionnaire answers are in the shared folder.

One thing for you: please add your cost-centre codes to the vendor sheet by Friday,
finance needs them before the purchase order goes out.

The rest is on me. I'll send the summary to Sofia tomorrow.

Priya
""", "priya-vendor@northwind.example"), when)  # fmt: skip
    return out


# ----------------------------------------------------------------------- automated and bulk


def _github(n: int, when: dt.datetime) -> bytes:
    repo = ("api", "web", "infra")[n % 3]
    number = 400 + n
    kind = n % 4
    if kind == 0:
        subject = f"Re: [northwind/{repo}] Fix pagination of the export endpoint (PR #{number})"
        body = f"""\
@alex-moreno could you review this when you get a chance? The cursor is now opaque.

--
Reply to this email directly, view it on GitHub:
https://github.com/northwind/{repo}/pull/{number}#issuecomment-{9000 + n}
You are receiving this because you were mentioned.
"""
        reason = "mention"
    elif kind == 1:
        subject = f"[northwind/{repo}] Run failed: CI - main ({n:07x})"
        body = f"""\
Run failed for main ({n:07x}).

Please fix the failing job before merging anything else.
  test (3.11)  failed in 4m 12s

View results: https://github.com/northwind/{repo}/actions/runs/{70000 + n}
"""
        reason = "ci_activity"
    elif kind == 2:
        subject = f"[northwind/{repo}] Dependabot: bump urllib3 from 2.2.{n} to 2.2.{n + 1}"
        body = f"""\
Bumps urllib3 from 2.2.{n} to 2.2.{n + 1}.

You can trigger a rebase of this PR by commenting @dependabot rebase.
"""
        reason = "subscribed"
    else:
        subject = f"Re: [northwind/{repo}] Flaky test in test_sync.py (Issue #{number})"
        body = """\
Still flaky on my machine. Can someone with access to the runners take a look?

--
You are receiving this because you are subscribed to this thread.
"""
        reason = "subscribed"
    sender = ("Jamie Fox", "Lena Ortiz", "dependabot[bot]", "github-actions[bot]")[kind]
    return _raw(
        f"{sender} <notifications@github.com>",
        f"northwind/{repo} <{repo}@noreply.github.com>",
        subject,
        when,
        body,
        f"northwind/{repo}/{number}/{n}@github.com",
        cc=f"Alex Moreno <{ME}>" if kind == 0 else "",
        headers=(
            f"List-ID: northwind/{repo} <{repo}.northwind.github.com>",
            f"List-Unsubscribe: <mailto:unsub+{n}@reply.github.com>",
            f"X-GitHub-Reason: {reason}",
            "Precedence: list" if kind != 1 else "Auto-Submitted: auto-generated",
        ),
    )


def _jira(n: int, when: dt.datetime) -> bytes:
    issue = f"OPS-{230 + n}"
    return _raw(
        "Jira <jira@northwind.atlassian.example>",
        ALEX,
        f"[JIRA] ({issue}) Please update the on-call runbook for the {n}th rotation",
        when,
        f"""\
Priya Shah assigned {issue} to you.

Please update the on-call runbook before the rotation starts.

View issue: https://northwind.atlassian.example/browse/{issue}
This message was sent by Atlassian Jira.
""",
        f"JIRA.{issue}.{n}@northwind.atlassian.example",
        headers=("Auto-Submitted: auto-generated", "Precedence: bulk"),
    )


def _list_mail(n: int, when: dt.datetime) -> bytes:
    topics = (
        "PEP draft: lazy imports by default",
        "Should zoneinfo ship tzdata?",
        "Typing for decorators that change signatures",
        "A faster json.dumps for dataclasses",
    )
    topic = topics[n % len(topics)]
    names = ("Guido", "Petra", "Ken Ito", "Rosa M.", "Hugo")
    who = names[n % len(names)]
    return _raw(
        f"{who} <{who.split()[0].lower()}{n}@lists.example.org>",
        "python-ideas@python.org",
        f"[Python-ideas] Re: {topic}",
        when,
        f"""\
Could you share a benchmark before we go further? I'd like to see numbers on a cold start.

Thanks, {who}
_______________________________________________
Python-ideas mailing list -- python-ideas@python.org
To unsubscribe send an email to python-ideas-leave@python.org
""",
        f"list-{n}@lists.example.org",
        headers=(
            "List-Id: Python ideas <python-ideas.python.org>",
            "List-Unsubscribe: <mailto:python-ideas-leave@python.org>",
            "Precedence: list",
        ),
    )


def _newsletter(n: int, when: dt.datetime) -> bytes:
    names = (
        ("Python Weekly", "news@pythonweekly.example", "Python Weekly - Issue"),
        ("Berlin Startup Jobs", "jobs@bsj.example", "New roles this week, no."),
        ("The Product Brief", "hello@productbrief.example", "The Product Brief #"),
    )
    name, address, title = names[n % len(names)]
    return _raw(
        f"{name} <{address}>",
        ME,
        f"{title} {600 + n}",
        when,
        """\
This week: why your roadmap needs fewer dates, a guide to calm on-call, and ten tools we
tried so you don't have to. Don't miss out: reply to this email and tell us what to cover
next, or take our two-minute survey!

Unsubscribe: https://mail.example/unsub
""",
        f"nl-{n}@mail.example",
        headers=(
            "List-Unsubscribe: <https://mail.example/unsub>",
            "List-Unsubscribe-Post: List-Unsubscribe=One-Click",
            "Precedence: bulk",
        ),
    )


def _receipt(n: int, when: dt.datetime) -> bytes:
    kinds = (
        ("Deutsche Bahn <no-reply@bahn.example>", f"Your booking confirmation {n:05d}",
         f"Please have your ticket ready for inspection. Your seat: coach 7, seat 4{n}."),
        ("Pinecone Bank <no-reply@pinecone-bank.example>", "Your monthly statement is ready",
         "Please log in to online banking to view your statement. Never share your PIN."),
        ("Slack <no-reply@slack.example>", f"You have {n % 9 + 2} unread messages in Northwind",
         "Please open Slack to catch up on #general and #ops."),
        ("Bookshop <orders@noreply.bookshop.example>", f"Your order {n:06d} has shipped",
         "Please allow 2-3 working days for delivery. Track it in your account."),
    )  # fmt: skip
    sender, subject, line = kinds[n % len(kinds)]
    return _raw(
        sender,
        ME,
        subject,
        when,
        f"Hello Alex,\n\n{line}\n\nThis is an automated message, please do not reply.\n",
        f"auto-{n}@mail.example",
        headers=("Auto-Submitted: auto-generated",),
    )


def _out_of_office(when: dt.datetime) -> bytes:
    return _raw(
        "Hugo Brandt <hugo@northwind.example>",
        ALEX,
        "Automatic reply: Receipts for October",
        when,
        "I am out of the office until 16 November with limited access to mail. "
        "For anything urgent please contact Ben Carter.\n",
        "ooo-hugo@northwind.example",
        headers=("Auto-Submitted: auto-replied", "X-Autoreply: yes"),
    )


def _bulk() -> list[Mail]:
    """The mail nobody wrote to Alex in person: 108 messages over nine days."""
    out: list[Mail] = []
    start = at(2, 6, 0)
    makers = (_github, _github, _list_mail, _github, _newsletter, _jira, _receipt, _list_mail)
    for n in range(107):
        when = start + dt.timedelta(minutes=113 * n + 7 * (n % 5))
        raw = makers[n % len(makers)](n, when)
        out.append(Mail(raw, when, "INBOX", seen=when < at(9, 0)))
    out.append(Mail(_out_of_office(at(10, 18, 31)), at(10, 18, 31), "INBOX", False))
    return out


def mailbox() -> list[Mail]:
    """Every message of Alex's mailbox (INBOX and Sent), oldest first."""
    return sorted([*_people(), *_bulk()], key=lambda m: m.when)


# ------------------------------------------------------------------------------ the calendar


def fold(line: str) -> str:
    """One content line folded as Google Calendar folds it: at 75 octets, wherever that falls
    (inside a parameter value too), never inside a UTF-8 sequence (RFC 5545 §3.1)."""
    data = line.encode()
    parts, limit = [], 75
    while len(data) > limit:
        cut = limit
        while (data[cut] & 0xC0) == 0x80:  # a continuation byte: cut before its sequence
            cut -= 1
        parts.append(data[:cut])
        data, limit = data[cut:], 74
    parts.append(data)
    return "\r\n ".join(p.decode() for p in parts)


def _attendee(name: str, address: str, status: str = "ACCEPTED", *, cn: bool = True) -> str:
    label = name if cn else address
    return (
        "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT="
        f"{status};CN={label};X-NUM-GUESTS=0:mailto:{address}"
    )


def _event(
    uid: str,
    start: str,
    end: str,
    summary: str,
    *,
    location: str = "",
    organizer: tuple[str, str] = ("Alex Moreno", ME),
    attendees: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    description: str = "",
) -> list[str]:
    return [
        "BEGIN:VEVENT",
        f"DTSTART;TZID=Europe/Berlin:{start}",
        f"DTEND;TZID=Europe/Berlin:{end}",
        *extra,
        "DTSTAMP:20261111T050000Z",
        f"ORGANIZER;CN={organizer[0]}:mailto:{organizer[1]}",
        f"UID:{uid}@google.com",
        *attendees,
        "CREATED:20261020T101500Z",
        f"DESCRIPTION:{description}",
        "LAST-MODIFIED:20261109T120000Z",
        f"LOCATION:{location}",
        "SEQUENCE:0",
        "STATUS:CONFIRMED",
        f"SUMMARY:{summary}",
        "TRANSP:OPAQUE",
        "END:VEVENT",
    ]


_VTIMEZONE = [
    "BEGIN:VTIMEZONE",
    "TZID:Europe/Berlin",
    "X-LIC-LOCATION:Europe/Berlin",
    "BEGIN:DAYLIGHT",
    "TZOFFSETFROM:+0100",
    "TZOFFSETTO:+0200",
    "TZNAME:CEST",
    "DTSTART:19700329T020000",
    "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
    "END:DAYLIGHT",
    "BEGIN:STANDARD",
    "TZOFFSETFROM:+0200",
    "TZOFFSETTO:+0100",
    "TZNAME:CET",
    "DTSTART:19701025T030000",
    "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
    "END:STANDARD",
    "END:VTIMEZONE",
]

ME_ATTENDS = _attendee(ME, ME, cn=False)
STANDUP_PEOPLE = (
    ME_ATTENDS,
    _attendee("Ben Carter", "ben@northwind.example"),
    _attendee("Priya Shah", "priya@northwind.example"),
)


def google_calendar() -> bytes:
    """Alex's calendar as Google's "Secret address in iCal format" serves it."""
    events = [
        # The team standup, every working day since October; none on Friday the 13th, and
        # today's moved to 10:00 (which clashes with the budget review).
        *_event(
            "standup-3k2j1",
            "20261005T093000",
            "20261005T094500",
            "Team standup",
            location="Room 2",
            organizer=("Sofia Lindgren", "sofia@northwind.example"),
            attendees=STANDUP_PEOPLE,
            extra=(
                "RRULE:FREQ=WEEKLY;WKST=MO;BYDAY=MO,TU,WE,TH,FR",
                "EXDATE;TZID=Europe/Berlin:20261113T093000",
            ),
        ),
        *_event(
            "standup-3k2j1",
            "20261111T100000",
            "20261111T101500",
            "Team standup",
            location="Room 2",
            organizer=("Sofia Lindgren", "sofia@northwind.example"),
            attendees=STANDUP_PEOPLE,
            extra=("RECURRENCE-ID;TZID=Europe/Berlin:20261111T093000",),
        ),
        *_event(
            "budget-review-8h3",
            "20261111T100000",
            "20261111T110000",
            "Q4 budget review",
            location="Room 4.01",
            organizer=("Ben Carter", "ben@northwind.example"),
            attendees=(
                _attendee("Ben Carter", "ben@northwind.example"),
                ME_ATTENDS,
                _attendee("Priya Shah", "priya@northwind.example", "TENTATIVE"),
            ),
            description="Agenda: travel line\\, hiring plan\\, vendor costs.",
        ),
        # A webinar Alex declined: it takes none of her time and clashes with nothing.
        *_event(
            "webinar-77x",
            "20261111T103000",
            "20261111T113000",
            "Vendor webinar: cloud costs",
            location="https://webinar.example/cloud-costs",
            organizer=("Bluepeak Events", "events@bluepeak.example"),
            attendees=(_attendee(ME, ME, "DECLINED", cn=False),),
        ),
        *_event(
            "lunch-marco-5f",
            "20261111T123000",
            "20261111T133000",
            "Lunch with Marco",
            location="Café Lindner\\, Torstraße 12\\, Berlin",
            attendees=(ME_ATTENDS, _attendee("Marco Rossi", "marco@rossi-design.example")),
        ),
        *_event(
            "one-on-one-sofia",
            "20261111T133500",
            "20261111T140000",
            "1:1 with Sofia",
            location="Room 4.01",
            organizer=("Sofia Lindgren", "sofia@northwind.example"),
            attendees=(_attendee("Sofia Lindgren", "sofia@northwind.example"), ME_ATTENDS),
        ),
        *_event(
            "dana-checkin-2q",
            "20261111T150000",
            "20261111T153000",
            "Contract check-in with Dana",
            organizer=("Dana Kim", "dana.kim@lumenlegal.example"),
            attendees=(_attendee("Dana Kim", "dana.kim@lumenlegal.example"), ME_ATTENDS),
            extra=("X-GOOGLE-CONFERENCE:https://meet.google.com/abc-defg-hij",),
            description="Join with Google Meet: https://meet.google.com/abc-defg-hij",
        ),
        # The rest of the week.
        *_event(
            "all-hands-nov",
            "20261112T110000",
            "20261112T120000",
            "All-hands",
            location="Atrium",
            organizer=("Sofia Lindgren", "sofia@northwind.example"),
            attendees=(ME_ATTENDS,),
        ),
        *_event(
            "dentist-1",
            "20261113T160000",
            "20261113T163000",
            "Dentist",
            location="Dr. Weber\\, Kastanienallee 3",
        ),  # fmt: skip
        *_event(
            "offsite-planning",
            "20261116T140000",
            "20261116T150000",
            "Offsite planning",
            location="Room 2",
            attendees=(ME_ATTENDS, _attendee("Priya Shah", "priya@northwind.example")),
        ),
        # Next month: outside the week.
        *_event("review-dec", "20261201T100000", "20261201T110000", "Half-year review"),
    ]
    lines = [
        "BEGIN:VCALENDAR",
        "PRODID:-//Google Inc//Google Calendar 70.9054//EN",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        "X-WR-CALNAME:alex@northwind.example",
        "X-WR-TIMEZONE:Europe/Berlin",
        *_VTIMEZONE,
        *events,
        "END:VCALENDAR",
    ]
    return ("\r\n".join(fold(line) for line in lines) + "\r\n").encode()
