"""Calendar exports written to the shapes the big providers document and emit: Google
(X-WR-TIMEZONE, UTC times, ATTENDEE folded inside its parameters), Outlook/Exchange (Windows
zone names, X-MICROSOFT-CDO-*, quoted "Last, First" names, tab folds, X-ALT-DESC HTML), Apple
(X-APPLE-STRUCTURED-LOCATION with quoted parameters holding ':' ';' ',', VALARM, EMAIL=),
Fastmail (Cyrus: X-JMAP-* parameters), Proton (X-PM-* parameters, LF line ends) and Nextcloud
(Sabre VObject: SCHEDULE-STATUS, X-NC-*).

Each is folded the way its producer folds: at 75 octets, anywhere, even inside a multi-octet
UTF-8 character (RFC 5545 3.1 allows it and says to restore it), with CRLF or LF and a space or
a tab. The day is DAY, in Europe/Berlin; every export has a meeting with Ben Carter
(ben.carter@example.com) today (in Google's he is an attendee only, in the ATTENDEE lines
that Google folds inside their parameters), a recurring series with a moved and a cancelled
occurrence, and an all-day event.
"""

from __future__ import annotations

from collections.abc import Callable

DAY = "2026-11-18"
BEN = "ben.carter@example.com"


def fold(
    lines: list[str],
    *,
    eol: bytes = b"\r\n",
    wsp: bytes = b" ",
    chars: bool = False,
    width: int = 75,
) -> bytes:
    """The lines as an iCalendar file, each folded at `width` octets (RFC 5545 allows a fold
    between any two octets); at any octet unless `chars` (then never inside a UTF-8 sequence,
    as Sabre and icalendar fold)."""
    out = []
    for line in lines:
        data = line.encode("utf-8")
        pieces, limit = [], width
        while len(data) > limit:
            cut = limit
            while chars and cut > 1 and (data[cut] & 0xC0) == 0x80:
                cut -= 1
            pieces.append(data[:cut])
            data, limit = data[cut:], width - 1
        pieces.append(data)
        out.append((eol + wsp).join(pieces))
    return eol.join(out) + eol


_BERLIN = [
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


def google() -> bytes:
    """Google Calendar's "Export" / secret iCal address: UTC times under X-WR-TIMEZONE, long
    ATTENDEE lines folded inside their parameters, rooms as CUTYPE=RESOURCE."""
    attendee = (
        "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT={ps};RSVP=TRUE;CN={cn};"
        "X-NUM-GUESTS=0:mailto:{addr}"
    )
    return fold([
        "BEGIN:VCALENDAR",
        "PRODID:-//Google Inc//Google Calendar 70.9054//EN",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        "X-WR-CALNAME:me@example.org",
        "X-WR-TIMEZONE:Europe/Berlin",
        "BEGIN:VEVENT",
        "DTSTART:20261118T090000Z",
        "DTEND:20261118T100000Z",
        "DTSTAMP:20261117T120000Z",
        "ORGANIZER;CN=Dana Whitfield-Okonkwo:mailto:dana@example.com",
        "UID:4kq2m3v1u7f0s9c8e6b5a4d3c2@google.com",
        attendee.format(ps="ACCEPTED", cn="Ben Carter", addr=BEN),
        attendee.format(ps="NEEDS-ACTION", cn="Dana Whitfield-Okonkwo", addr="dana@example.com"),
        attendee.format(ps="ACCEPTED", cn="me@example.org", addr="me@example.org"),
        "ATTENDEE;CUTYPE=RESOURCE;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Berlin-4-Room Spree"
        " (8);X-NUM-GUESTS=0:mailto:c_188abc@resource.calendar.google.com",
        "X-MICROSOFT-CDO-OWNERAPPTID:-1234567",
        "CREATED:20261110T080000Z",
        "DESCRIPTION:Agenda: Q4 numbers\\, the Rivera contract\\; next steps.\\n\\n-::~:~::~:~:~"
        ":~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~::~:~::-\\nJoin with Google Meet: https://meet."
        "google.com/abc-defg-hij\\n-::~:~::~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~:~::~:~::-",
        "LAST-MODIFIED:20261117T120000Z",
        "LOCATION:Partner office\\, Friedrichstraße 10\\, 10117 Berlin\\, Deutschland",
        "SEQUENCE:1",
        "STATUS:CONFIRMED",
        "SUMMARY:Quarterly review with Ben — Zahlen & Verträge",
        "TRANSP:OPAQUE",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "DTSTART:20261102T080000Z",
        "DTEND:20261102T081500Z",
        "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR",
        "EXDATE:20261116T080000Z",
        "DTSTAMP:20261117T120000Z",
        "UID:standup-series@google.com",
        "SUMMARY:Standup",
        "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Ben Carter;X-NUM-G"
        "UESTS=0:mailto:" + BEN,
        "END:VEVENT",
        "BEGIN:VEVENT",
        "DTSTART:20261118T103000Z",
        "DTEND:20261118T104500Z",
        "DTSTAMP:20261117T120000Z",
        "UID:standup-series@google.com",
        "RECURRENCE-ID:20261118T080000Z",
        "SUMMARY:Standup (moved)",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "DTSTART:20261120T080000Z",
        "DTEND:20261120T081500Z",
        "DTSTAMP:20261117T120000Z",
        "UID:standup-series@google.com",
        "RECURRENCE-ID:20261120T080000Z",
        "STATUS:CANCELLED",
        "SUMMARY:Standup",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "DTSTART;VALUE=DATE:20261118",
        "DTEND;VALUE=DATE:20261120",
        "DTSTAMP:20261117T120000Z",
        "UID:trip@google.com",
        "SUMMARY:Trip to Hamburg",
        "TRANSP:TRANSPARENT",
        "END:VEVENT",
        "END:VCALENDAR",
    ])  # fmt: skip


def outlook() -> bytes:
    """Outlook / Exchange ("Save as iCalendar", a published calendar): Windows zone names,
    quoted "Last, First" CNs, X-MICROSOFT-CDO-*, an HTML X-ALT-DESC, folded with a tab."""
    tz = "W. Europe Standard Time"
    return fold([
        "BEGIN:VCALENDAR",
        "PRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN",
        "VERSION:2.0",
        "METHOD:PUBLISH",
        "X-MS-OLK-FORCEINSPECTOROPEN:TRUE",
        "BEGIN:VTIMEZONE",
        f"TZID:{tz}",
        "BEGIN:STANDARD",
        "DTSTART:16011028T030000",
        "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10",
        "TZOFFSETFROM:+0200",
        "TZOFFSETTO:+0100",
        "END:STANDARD",
        "BEGIN:DAYLIGHT",
        "DTSTART:16010325T020000",
        "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3",
        "TZOFFSETFROM:+0100",
        "TZOFFSETTO:+0200",
        "END:DAYLIGHT",
        "END:VTIMEZONE",
        "BEGIN:VEVENT",
        'ATTENDEE;CN="Carter, Ben";RSVP=TRUE;PARTSTAT=TENTATIVE:mailto:' + BEN,
        'ATTENDEE;CN="Whitfield-Okonkwo, Dana (Finance; EMEA)";ROLE=OPT-PARTICIPANT;RSVP=TRUE:'
        "mailto:dana@example.com",
        "CLASS:PUBLIC",
        "CREATED:20261110T080000Z",
        "DESCRIPTION:Quarterly review\\n\\nMicrosoft Teams meeting\\nJoin: https://teams.micro"
        "soft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0?context=%7b%22Tid%22%3a%22x%22%7d",
        f"DTEND;TZID={tz}:20261118T110000",
        "DTSTAMP:20261117T120000Z",
        f"DTSTART;TZID={tz}:20261118T100000",
        "LAST-MODIFIED:20261117T120000Z",
        "LOCATION:Microsoft Teams Meeting",
        'ORGANIZER;CN="Carter, Ben":mailto:' + BEN,
        "PRIORITY:5",
        "SEQUENCE:0",
        "SUMMARY;LANGUAGE=en-us:Quarterly review",
        "TRANSP:OPAQUE",
        "UID:040000008200E00074C5B7101A82E00800000000A1B2C3D4E5F6D901000000000000000010000000"
        "0E7F4D3C2B1A09876543210FEDCBA98",
        'X-ALT-DESC;FMTTYPE=text/html:<html><head><meta name="Generator" content="Microsoft Ex'
        'change Server"></head><body><p>Join: <a href="https://teams.microsoft.com/l/x">here</a>'
        "</p></body></html>",
        "X-MICROSOFT-CDO-BUSYSTATUS:TENTATIVE",
        "X-MICROSOFT-CDO-IMPORTANCE:1",
        "X-MICROSOFT-CDO-INTENDEDSTATUS:BUSY",
        "X-MICROSOFT-DISALLOW-COUNTER:FALSE",
        "X-MS-OLK-AUTOFILLLOCATION:FALSE",
        "X-MS-OLK-CONFTYPE:0",
        "BEGIN:VALARM",
        "TRIGGER:-PT15M",
        "ACTION:DISPLAY",
        "DESCRIPTION:Reminder",
        "END:VALARM",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "CLASS:PUBLIC",
        "DTSTAMP:20261117T120000Z",
        f"DTSTART;TZID={tz}:20261102T093000",
        f"DTEND;TZID={tz}:20261102T100000",
        "RRULE:FREQ=WEEKLY;BYDAY=MO,WE",
        f"EXDATE;TZID={tz}:20261111T093000",
        "SUMMARY:Steering committee",
        "UID:040000008200E00074C5B7101A82E00800000000SERIES0000000000000000010000000",
        "X-MICROSOFT-CDO-BUSYSTATUS:BUSY",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "CLASS:PUBLIC",
        "DTSTAMP:20261117T120000Z",
        f"RECURRENCE-ID;TZID={tz}:20261118T093000",
        f"DTSTART;TZID={tz}:20261118T150000",
        f"DTEND;TZID={tz}:20261118T153000",
        "SUMMARY:Steering committee (moved)",
        "UID:040000008200E00074C5B7101A82E00800000000SERIES0000000000000000010000000",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "CLASS:PUBLIC",
        "DTSTAMP:20261117T120000Z",
        "DTSTART;VALUE=DATE:20261118",
        "DTEND;VALUE=DATE:20261119",
        "SUMMARY:Company holiday",
        "UID:040000008200E00074C5B7101A82E00800000000ALLDAY",
        "X-MICROSOFT-CDO-ALLDAYEVENT:TRUE",
        "X-MICROSOFT-CDO-BUSYSTATUS:FREE",
        "TRANSP:TRANSPARENT",
        "END:VEVENT",
        "END:VCALENDAR",
    ], wsp=b"\t")  # fmt: skip


def apple() -> bytes:
    """Apple Calendar (macOS, iCloud): X-APPLE-STRUCTURED-LOCATION whose quoted parameters hold
    ':' ';' and ',', attendees with EMAIL= and mailto, VALARMs, X-APPLE-* everywhere."""
    return fold([
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Apple Inc.//macOS 15.1//EN",
        "CALSCALE:GREGORIAN",
        "X-WR-CALNAME:Work",
        "X-APPLE-CALENDAR-COLOR:#1BADF8",
        *_BERLIN,
        "BEGIN:VEVENT",
        "CREATED:20261110T080000Z",
        "UID:7C3A1F2E-9B8D-4C6A-A1E2-3F4B5C6D7E8F",
        "DTEND;TZID=Europe/Berlin:20261118T120000",
        'ATTENDEE;CN="Ben Carter";CUTYPE=INDIVIDUAL;EMAIL="' + BEN + '";PARTSTAT=ACCEPTED;ROLE'
        "=REQ-PARTICIPANT:mailto:" + BEN,
        'ATTENDEE;CN="Me";CUTYPE=INDIVIDUAL;EMAIL="me@example.org";PARTSTAT=ACCEPTED;ROLE=CHAI'
        "R;SCHEDULE-STATUS=1.2:mailto:me@example.org",
        'ATTENDEE;CN="Dana Whitfield-Okonkwo";CUTYPE=INDIVIDUAL;EMAIL="dana@example.com";PARTST'
        "AT=TENTATIVE;ROLE=OPT-PARTICIPANT:urn:uuid:6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b",
        "TRANSP:OPAQUE",
        "X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC",
        "SUMMARY:Lunch with Ben",
        "LAST-MODIFIED:20261117T120000Z",
        "DTSTAMP:20261117T120000Z",
        "DTSTART;TZID=Europe/Berlin:20261118T110000",
        "LOCATION:Café Nero\\nRosenthaler Str. 1\\, 10119 Berlin\\, Germany",
        'X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-ADDRESS="Rosenthaler Str. 1\\\\n10119 Berlin,'
        ' Germany";X-APPLE-MAPKIT-HANDLE=CAESBgoEZGF0YQ==;X-APPLE-RADIUS=70.5;X-APPLE-REFERENCE'
        '-FRAME=1;X-TITLE="Café Nero: Mitte; upstairs":geo:52.529,13.401',
        'ORGANIZER;CN="Me";EMAIL="me@example.org":mailto:me@example.org',
        "SEQUENCE:2",
        "BEGIN:VALARM",
        "X-WR-ALARMUID:0A1B2C3D-1111-2222-3333-444455556666",
        "UID:0A1B2C3D-1111-2222-3333-444455556666",
        "TRIGGER:-PT30M",
        "ATTACH;VALUE=URI:Chord",
        "ACTION:AUDIO",
        "X-APPLE-DEFAULT-ALARM:TRUE",
        "END:VALARM",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:1D2E3F40-5161-7283-94A5-B6C7D8E9F001",
        "DTSTART;TZID=Europe/Berlin:20261104T170000",
        "DTEND;TZID=Europe/Berlin:20261104T180000",
        "RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=WE",
        "EXDATE;TZID=Europe/Berlin:20261111T170000",
        "SUMMARY:Climbing",
        "DTSTAMP:20261117T120000Z",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:1D2E3F40-5161-7283-94A5-B6C7D8E9F001",
        "RECURRENCE-ID;TZID=Europe/Berlin:20261118T170000",
        "DTSTART;TZID=Europe/Berlin:20261118T180000",
        "DTEND;TZID=Europe/Berlin:20261118T190000",
        "SUMMARY:Climbing (later)",
        "DTSTAMP:20261117T120000Z",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:5E6F7A8B-ALLDAY",
        "DTSTART;VALUE=DATE:20261118",
        "DTEND;VALUE=DATE:20261119",
        "SUMMARY:Anna’s birthday 🎂",
        "DTSTAMP:20261117T120000Z",
        "TRANSP:TRANSPARENT",
        "END:VEVENT",
        "END:VCALENDAR",
    ])  # fmt: skip


def fastmail() -> bytes:
    """Fastmail (Cyrus IMAP's CalDAV and .ics export): X-JMAP-* parameters on attendees,
    Europe/Berlin with its VTIMEZONE."""
    return fold([
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//CyrusIMAP.org/Cyrus 3.11.0-alpha0-1108-g5c6f1f0f4-fm-20261110.001-g5c6f1f0f//EN",
        *_BERLIN,
        "BEGIN:VEVENT",
        "UID:2b1d9a54-7c3e-4f1a-9d8b-0e6f5a4b3c2d",
        "SEQUENCE:0",
        "DTSTAMP:20261117T120000Z",
        "CREATED:20261110T080000Z",
        "DTSTART;TZID=Europe/Berlin:20261118T130000",
        "DURATION:PT45M",
        "PRIORITY:0",
        "SUMMARY:Contract call with Ben",
        "STATUS:TENTATIVE",
        "TRANSP:OPAQUE",
        "ORGANIZER;X-JMAP-ID=bWVAZXhhbXBsZS5vcmc;CN=Me:mailto:me@example.org",
        "ATTENDEE;CN=Ben Carter;PARTSTAT=NEEDS-ACTION;RSVP=TRUE;X-JMAP-ID=YmVuLmNhcnRlckBleGFtcG"
        "xlLmNvbQ;X-JMAP-ROLE=attendee;X-SEQUENCE=0;X-DTSTAMP=20261117T120000Z:mailto:" + BEN,
        "ATTENDEE;CN=Me;PARTSTAT=ACCEPTED;X-JMAP-ID=bWVAZXhhbXBsZS5vcmc;X-JMAP-ROLE=owner;X-JMA"
        "P-ROLE=attendee;X-JMAP-ROLE=chair:mailto:me@example.org",
        "LOCATION:https://zoom.us/j/5551234567?pwd=abc",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:9f8e7d6c-series",
        "DTSTAMP:20261117T120000Z",
        "DTSTART;TZID=Europe/Berlin:20261116T080000",
        "DURATION:PT30M",
        "RRULE:FREQ=DAILY;COUNT=10",
        "SUMMARY:Morning run",
        "TRANSP:TRANSPARENT",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:9f8e7d6c-series",
        "DTSTAMP:20261117T120000Z",
        "RECURRENCE-ID;TZID=Europe/Berlin:20261118T080000",
        "DTSTART;TZID=Europe/Berlin:20261118T070000",
        "DURATION:PT30M",
        "SUMMARY:Morning run (early)",
        "STATUS:CANCELLED",
        "END:VEVENT",
        "END:VCALENDAR",
    ])  # fmt: skip


def proton() -> bytes:
    """Proton Calendar's .ics export: X-PM-* parameters and properties, LF line ends."""
    return fold([
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Proton AG//web-calendar 5.0.54.3//EN",
        "METHOD:PUBLISH",
        "CALSCALE:GREGORIAN",
        "X-WR-TIMEZONE:Europe/Zurich",
        "BEGIN:VEVENT",
        "UID:pKq7l2Hn0XyQ9wB1cE4rT6sU8vZ3aM5dF7gH9jK1lN3@proton.me",
        "DTSTAMP:20261117T120000Z",
        "DTSTART;TZID=Europe/Zurich:20261118T140000",
        "DTEND;TZID=Europe/Zurich:20261118T150000",
        "SEQUENCE:0",
        "SUMMARY:Rivera contract: sign-off",
        "ORGANIZER;CN=Ben Carter;X-PM-TOKEN=9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b:mailto:" + BEN,
        "ATTENDEE;CN=Ben Carter;ROLE=REQ-PARTICIPANT;RSVP=TRUE;X-PM-TOKEN=1f2e3d4c5b6a79881f2e3"
        "d4c5b6a79881f2e3d4c;PARTSTAT=ACCEPTED:mailto:" + BEN,
        "ATTENDEE;CN=me@example.org;ROLE=REQ-PARTICIPANT;RSVP=TRUE;X-PM-TOKEN=0a0b0c0d0e0f1a1b1"
        "c1d1e1f2a2b2c2d2e2f3a3b;PARTSTAT=DECLINED:mailto:me@example.org",
        "DESCRIPTION:Bring the signed copy.\\nProton Meet: https://meet.proton.me/join/id-ABC#"
        "pwd-xyz",
        "X-PM-CONFERENCE-ID:ABC",
        "X-PM-CONFERENCE-URL:https://meet.proton.me/join/id-ABC#pwd-xyz",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:all-day-proton@proton.me",
        "DTSTAMP:20261117T120000Z",
        "DTSTART;VALUE=DATE:20261118",
        "SUMMARY:Ferien 🏖 (Zürich)",
        "END:VEVENT",
        "END:VCALENDAR",
    ], eol=b"\n")  # fmt: skip


def nextcloud() -> bytes:
    """Nextcloud's export (Sabre VObject): folded at 75 octets on character boundaries,
    SCHEDULE-STATUS and LANGUAGE parameters, X-NC-* properties."""
    return fold([
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        "PRODID:-//SabreDAV//SabreDAV//EN",
        "X-WR-CALNAME:Personal",
        "X-APPLE-CALENDAR-COLOR:#0082C9",
        "REFRESH-INTERVAL;VALUE=DURATION:PT4H",
        "X-PUBLISHED-TTL:PT4H",
        *_BERLIN,
        "BEGIN:VEVENT",
        "CREATED:20261110T080000Z",
        "DTSTAMP:20261117T120000Z",
        "LAST-MODIFIED:20261117T120000Z",
        "SEQUENCE:2",
        "UID:3b0c8e4e-4d1a-4a5f-9e2b-7c6d5e4f3a2b",
        "DTSTART;TZID=Europe/Berlin:20261118T160000",
        "DTEND;TZID=Europe/Berlin:20261118T170000",
        "STATUS:CONFIRMED",
        "SUMMARY:Übergabe Projektunterlagen – Ben & Dana",
        "LOCATION:Büro 3.14\\, Karl-Marx-Allee 1",
        "ORGANIZER;CN=Me;SCHEDULE-AGENT=SERVER:mailto:me@example.org",
        "ATTENDEE;CN=Ben Carter;CUTYPE=INDIVIDUAL;PARTSTAT=NEEDS-ACTION;ROLE=REQ-PARTICIPANT;RS"
        "VP=TRUE;LANGUAGE=de;SCHEDULE-STATUS=1.1:mailto:" + BEN,
        "ATTENDEE;CN=Dana Whitfield-Okonkwo;CUTYPE=INDIVIDUAL;PARTSTAT=ACCEPTED;ROLE=OPT-PARTIC"
        "IPANT;RSVP=TRUE;LANGUAGE=en;SCHEDULE-STATUS=2.0:mailto:dana@example.com",
        "ATTENDEE;CN=Raum Spree;CUTYPE=ROOM;PARTSTAT=ACCEPTED;ROLE=NON-PARTICIPANT:mailto:room"
        "-spree@example.com",
        "DESCRIPTION:Bitte die Verträge mitbringen. Übergabe der Unterlagen für das Pr"
        "ojekt „Rivera“ – Änderungen bis Freitag.",
        "X-NC-GROUP-ID:1",
        "BEGIN:VALARM",
        "ACTION:DISPLAY",
        "DESCRIPTION:This is an event reminder",
        "TRIGGER;RELATED=START:-PT10M",
        "END:VALARM",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:nextcloud-weekly",
        "DTSTAMP:20261117T120000Z",
        "DTSTART;TZID=Europe/Berlin:20261104T190000",
        "DTEND;TZID=Europe/Berlin:20261104T200000",
        "RRULE:FREQ=WEEKLY;UNTIL=20261231T230000Z",
        "EXDATE;TZID=Europe/Berlin:20261111T190000,20261125T190000",
        "SUMMARY:Chorprobe",
        "END:VEVENT",
        "END:VCALENDAR",
    ], chars=True)  # fmt: skip


EXPORTS: dict[str, Callable[[], bytes]] = {
    "google": google,
    "outlook": outlook,
    "apple": apple,
    "fastmail": fastmail,
    "proton": proton,
    "nextcloud": nextcloud,
}
