"""Deadline phrases and dates in English, German, French and Spanish, and the days they mean.

Pure functions of a piece of text and the day a message was received (in the reader's zone).
`find_deadline` looks for a phrase that sets a deadline: a lead word ("by", "before", "due",
"no later than", "bis", "avant", "d'ici", "antes de", "para"...) followed by a time, or a time
that is a deadline on its own ("today", "tomorrow", "EOD", "ASAP", "first thing Monday",
"this Thursday", "within 48 hours", "morgen", "demain", "mañana"...). A bare date or weekday
without a lead ("the meeting is on Friday") sets no deadline, except in a commitment
("I'll send it on Friday"), where `lead_on` accepts "on".

`resolve` turns the time into a date, following bench/eval/GUIDE.md: a weekday is the next
such day after the day received (a week later when sent on that weekday), "next <weekday>"
is that day of the following week (weeks start on Monday), "end of the week" its Friday (on a
weekend, the coming one) and "end of next week" the following week's, "end of the month" its
last day, "end of November" that month's, "the 19th" this month's or the next month's once it
has passed, a date without a year the next such date give or take half a year (with one, that
year's). A relative date (a weekday, "tomorrow", "the 19th", "end of ...", "in 3 days") is never
before the day received; a day and month named outright may be (it is the date written).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

_WEEKDAYS = {
    0: "monday mon montag lundi lunes",
    1: "tuesday tues tue dienstag mardi martes",
    2: "wednesday weds wed mittwoch mercredi miércoles miercoles",
    3: "thursday thurs thur thu donnerstag jeudi jueves",
    4: "friday fri freitag vendredi viernes",
    5: "saturday sat samstag sonnabend samedi sábado sabado",
    6: "sunday sun sonntag dimanche domingo",
}
WEEKDAY = {name: n for n, names in _WEEKDAYS.items() for name in names.split()}
_MONTHS = {
    1: "january jan januar janvier enero",
    2: "february feb februar février fevrier febrero",
    3: "march mar märz maerz mars marzo",
    4: "april apr avril abril",
    5: "may mai mayo",
    6: "june jun juni juin junio",
    7: "july jul juli juillet julio",
    8: "august aug août aout agosto",
    9: "september sept sep septembre septiembre",
    10: "october oct oktober octobre octubre",
    11: "november nov novembre noviembre",
    12: "december dec dezember décembre decembre diciembre",
}
MONTH = {name: n for n, names in _MONTHS.items() for name in names.split()}
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "a": 1, "zwei": 2, "deux": 2,
            "dos": 2, "drei": 3, "trois": 3, "tres": 3}  # fmt: skip


def alternation(names: Iterable[str]) -> str:
    """A regex alternation of `names` taken literally, longest first (so "tues" beats "tue")."""
    return "|".join(sorted(map(re.escape, names), key=len, reverse=True))


def any_word(words: str) -> str:
    """`(?:a|b|c)` for the space-separated `words` ("two three few"), each taken literally."""
    return f"(?:{alternation(words.split())})"


def any_phrase(phrases: Iterable[str]) -> str:
    """`(?:...)` for `phrases` ("any news", "y/n") taken literally but for the spaces between
    their words, each of which stands for any run of white space."""
    words = (r"\s+".join(map(re.escape, phrase.split())) for phrase in phrases)
    return f"(?:{'|'.join(sorted(words, key=len, reverse=True))})"


_WD = rf"(?:{alternation(WEEKDAY)})"
_MO = rf"(?:{alternation(MONTH)})"
_DAYNUM = r"\d{1,2}(?:st|nd|rd|th|er|\.)?"
# A day and month's year, when it is written: "6 November 2026", "Nov 6, 2026", "04-Nov-2026",
# "6 de noviembre de 2026" (never a time: "Nov 6, 5pm" is no year).
_YEAR = r"(?:(?:,\s*|\s+de\s+|\s+|-)(?:19|20)\d{2}(?![\d:]))?"
_TIME = r"(?:\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?|uhr|h)?|noon|midday|mittag|midi)"
# One time expression; named groups say which kind it is.
_WHEN = (
    r"(?P<when>"
    r"(?P<iso>\d{4}-\d{2}-\d{2})"
    rf"|(?P<eodday>(?:eod|cob|end\s+of\s+(?:the\s+)?(?:business\s+)?day|close\s+of\s+business)\s+(?:on\s+)?"
    rf"(?:{_WD}\b|tomorrow|tmrw?|tmw|today|morgen|demain|mañana))"
    rf"|(?P<end>(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?(?P<end_next>next\s+)?(?P<end_unit>day|week|month))"
    r"|(?P<fin>(?:la\s+)?fin\s+(?:de\s+la\s+|du\s+|de\s+)?(?P<fin_next>prochain\w*\s+)?(?P<fin_unit>semaine|mois|mes|journée|día|dia)(?:\s+prochaine?|\s+que\s+viene)?)"
    r"|(?P<ende>ende\s+(?:des|der|dieses|diesen|nächsten|naechsten|nächster|naechster|nächste)?\s*"
    r"(?P<ende_unit>monats?|woche|tages))"
    rf"|(?P<month_end>(?:the\s+)?(?:end\s+of\s+|fin\s+(?:de\s+|d')?|finales\s+de\s+|ende\s+){_MO}\b)"
    r"|(?P<eod>eod|cob|eow|eom|close\s+of\s+business)"
    r"|(?P<weekend>(?:the\s+|this\s+)?weekend)"
    # "Wednesday, November 4", "Mittwoch, den 4. November", "mercredi le 4", "Mi., 4.11.": the
    # date written beside its weekday is one expression, and the date wins
    rf"|(?P<wdate>(?:(?:next|this|coming)\s+)?{_WD}\b'?s?,?\s+(?:the\s+|den\s+|le\s+|el\s+)?(?:{_DAYNUM}\s*(?:of\s+|de\s+)?{_MO}\b\.?|{_MO}\b\.?\s+{_DAYNUM}|the\s+{_DAYNUM}|\(?\d{{4}}-\d{{2}}-\d{{2}}\)?|\d{{1,2}}/\d{{1,2}}(?:/\d{{4}}|/\d{{2}}(?!\d))?|\d{{1,2}}\.\d{{1,2}}\.){_YEAR})"
    rf"|(?P<mdate>(?:{_MO}\b\.?\s+{_DAYNUM}(?!\d)|(?:le\s+|el\s+)?{_DAYNUM}\s*(?:de\s+)?{_MO}\b|\d{{1,2}}-{_MO}\b){_YEAR})"
    r"|(?P<slash>\d{1,2}/\d{1,2}(?:/\d{2,4})?)"
    r"|(?P<dotted>\d{1,2}\.\d{1,2}\.(?:\d{2,4})?)"
    r"|(?P<nth>the\s+\d{1,2}(?:st|nd|rd|th))"
    r"|(?P<clock>\d{1,2}:\d{2}\s*(?:am|pm|a\.m\.|p\.m\.)?|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.))"
    r"|(?P<rel>today|tonight|this\s+(?:morning|afternoon|evening)|(?:tomorrow|tmrw?|tmw|2moro|2morrow)(?:\s+(?:morning|afternoon|evening|night|eod|cob))?"
    r"|the\s+day\s+after\s+tomorrow|heute(?:\s+(?:abend|noch))?|morgen(?:\s+früh)?|übermorgen"
    r"|aujourd'hui(?:\s+même)?|ce\s+soir|demain(?:\s+matin)?|après-demain|hoy(?:\s+mismo)?|esta\s+tarde"
    r"|mañana|pasado\s+mañana|(?<!day\s)(?<!day\sat\s)(?:noon|midday))"
    rf"|(?P<wday>(?:(?P<wd_next>next|coming|nächsten|naechsten|próximo|proximo)\s+|this\s+(?:coming\s+)?|first\s+thing\s+)?{_WD}\b(?:'s)?(?:\s+(?:prochain|próximo|morning|afternoon|evening|night|eod|cob|(?:of\s+)?next\s+week))?)"
    r")"
)
_LEADS = (
    r"by|before|due(?:\s+back)?(?:\s+(?:on|by))?|no\s+later\s+than|until|till|latest|ahead\s+of|prior\s+to"
    r"|in\s+advance\s+of"
    r"|(?:deadline|due\s+date)(?:\s+is)?\s*:?"
    r"|bis(?:\s+(?:zum|zur|spätestens|am))?|spätestens(?:\s+(?:am|bis))?|vor(?:\s+dem)?"
    r"|avant(?:\s+(?:le|la))?|d'ici(?:\s+(?:le|la))?|au\s+plus\s+tard(?:\s+le)?|pour(?:\s+le)?"
    r"|antes\s+del?|antes\s+de\s+la|para(?:\s+el)?|a\s+más\s+tardar(?:\s+el)?|hasta(?:\s+el)?"
    r"|como\s+(?:muy\s+)?tarde(?:\s+el)?|no\s+más\s+tarde\s+del?|on\s+or\s+before"
)
_SOON = (
    r"asap|as\s+soon\s+as\s+(?:possible|you(?:'re|\s+are)\s+\w+|you\s+can|you\s+(?:see|get|read)\s+th(?:is|at))"
    r"|right\s+away|immediately"
    r"|within\s+the\s+hour|urgently|so\s+schnell\s+wie\s+möglich|sofort|umgehend|dès\s+que\s+possible"
    r"|au\s+plus\s+vite|lo\s+antes\s+posible|cuanto\s+antes|urgente"
    # "Can you join the bridge now?", "Need you on the bridge now to decide": now, of the ask
    # (not "for now", "by now", "until now", nor a statement's "The kiln is fixed now.")
    r"|(?<!\bfor\s)(?<!\bby\s)(?<!\buntil\s)(?<!\bfrom\s)(?:right\s+)?now(?=\s*(?:[?!]|$)|\s+to\s|,?\s+(?:please|pls)\b)"
    r"|(?:jetzt|maintenant|ahora)(?=\s*(?:\?|$))"
)
_TIMED = rf"(?:{_TIME}\s+(?:on\s+|am\s+|le\s+|el\s+)?)?"
_LEAD_RE = re.compile(rf"\b(?:{_LEADS})\s+(?:the\s+)?{_TIMED}{_WHEN}(?!\w)", re.IGNORECASE)
_ON_RE = re.compile(rf"\b(?:on|am|le|el)\s+(?:the\s+)?{_WHEN}(?!\w)", re.IGNORECASE)
# In a commitment, "run Thursday's demo": the day of the thing promised; not the day of
# what a thing comes from ("the notes from Monday's meeting", "the photos of Saturday's hike").
_POSSESSIVE_DAY = re.compile(
    rf"(?<![\w-])(?<!\bfrom\s)(?<!\bof\s)(?<!\bsince\s)(?P<when>{_WD})'s\b", re.IGNORECASE
)
_ORIGIN = re.compile(r"\b(?:from|of|since)\s+$", re.IGNORECASE)
# "move our 1:1 to Thursday afternoon": where a thing goes, not when it is due.
_TARGET = re.compile(r"\b(?:to|into|until)\s+$", re.IGNORECASE)
_BARE_RE = re.compile(
    rf"(?<![\w-])(?:{_WHEN}|(?P<soon>{_SOON})|(?P<within>(?:within|in)\s+(?:the\s+next\s+)?(?P<n>\d+|\w+)\s+(?P<business>(?:business|working)\s+)?(?P<unit>hours?|days?|weeks?)))(?!\w)",
    re.IGNORECASE,
)
# "before our call on Tuesday", "before we start demolition on Monday": the day of the event
_BEFORE_EVENT_RE = re.compile(
    rf"\b(?:before|ahead\s+of|prior\s+to)\s+(?:[\w'][\w':/-]*\s+){{1,5}}?(?:on\s+)?(?:the\s+)?{_WHEN}(?!\w)"
    # "have the draft ready for Monday's meeting": in time for the thing of that day
    rf"|(?<=\bready\s)(?<!\w)for\s+(?:the\s+)?(?P<event_day>{_WD})'s\s+(?:\w+\s+)?"
    r"(?:meeting|call|review|session|presentation|offsite|board|visit|interview|demo|class|game"
    r"|practice|trip|event|dinner|party)\b",
    re.IGNORECASE,
)
# "para el 19", "avant le 19", "bis zum 19.": a day of the month after a lead, in the three
# other languages, whose article says it is a day ("by the 19th" is English's `nth`).
_DAY_LEAD_RE = re.compile(
    r"\b(?:para|antes|hasta|a\s+más\s+tardar|avant|d'ici|pour|au\s+plus\s+tard|bis|spätestens)"
    rf"\s+(?P<when>(?:el|del|le|zum|am|den)\s+\d{{1,2}})(?:er|\.|º)?(?!\s*(?:de\s+)?{_MO}\b)"
    r"(?![\w.:/-]|\s*(?:uhr|h\b|heures?|horas?))",
    re.IGNORECASE,
)
_THEN = re.compile(r"\b(?:by|before|until)\s+then\b", re.IGNORECASE)
# The bare forms that set a deadline without a lead word (a weekday only with "this"/"first
# thing", or with a time of day: "Monday EOD", "Thursday morning").
_BARE_OK = re.compile(
    r"^(?:today|tonight|this\s+(?:morning|afternoon|evening)|tomorrow|tmrw?\b|tmw\b|2moro|the\s+day\s+after|heute"
    r"|morgen|übermorgen|aujourd'hui|ce\s+soir|demain|après-demain|hoy|esta\s+tarde|mañana"
    r"|pasado|noon|midday|eod|cob|eow|eom|this\s+(?!weekend)|first\s+thing|(?:the\s+)?end\s+of|(?:la\s+)?fin\s"
    # "send it next Monday": a weekday of the following week is a day of its own (GUIDE.md)
    r"|ende\s|next\s+(?=\w+day\b))",
    re.IGNORECASE,
)
_DAYPART = re.compile(r"\b(?:morning|afternoon|evening|night|eod|cob)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Deadline:
    phrase: str  # the words as written
    due: dt.date | None
    start: int
    end: int


# A lead and a clock time alone ("before the 8am", "by 5pm"): the day is the one named
# elsewhere in the sentence, if any.
_CLOCK_ONLY = re.compile(
    r"^(?:by|before|until|till|no\s+later\s+than)\s+(?:the\s+)?(?:\d{1,2}(?:[:.]\d\d)?\s*"
    r"(?:am|pm|a\.m\.|p\.m\.)?|noon|midday|midnight|lunch(?:time)?)\.?$",
    re.IGNORECASE,
)


# "the lights can stay on until 8 pm", "open till 6": a time of day after until is how long a
# thing lasts, not when it is due ("until Friday" still is a deadline).
_UNTIL_CLOCK = re.compile(
    r"^(?:until|till)\s+(?:the\s+)?\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.|uhr|h)?\.?$",
    re.IGNORECASE,
)


def _lead(text: str) -> re.Match[str] | None:
    """The first lead word and time in `text` that is a deadline."""
    return next((m for m in _LEAD_RE.finditer(text) if not _UNTIL_CLOCK.match(m.group(0))), None)


def find_deadline(
    text: str, received: dt.date | None, *, lead_on: bool = False, lead_only: bool = False
) -> Deadline | None:
    """The first deadline phrase in `text` (a lead word and a time first, then a time that is
    a deadline on its own unless `lead_only`), with the date it means from `received`."""
    found = _lead(text) or _BEFORE_EVENT_RE.search(text) or _DAY_LEAD_RE.search(text)
    if found is None and lead_on:
        found = _ON_RE.search(text) or _POSSESSIVE_DAY.search(text)
    if found is None and lead_only:
        return None
    if found is None:
        for bare in _BARE_RE.finditer(text):
            if bare.group("soon") or bare.group("within"):
                found = bare
                break
            when = bare.group("when")
            if _TARGET.search(text[: bare.start()]):
                continue
            if when.lower().endswith("'s"):
                # "the notes from Monday's meeting": that day is past, not due; "tell the coach
                # Theo will miss next Tuesday's practice": the day of the thing, not the ask's
                continue
            if _BARE_OK.match(when) or _DAYPART.search(when) or (lead_on and bare.group("wday")):
                found = bare
                break
    if found is None:
        return None
    due = _resolve_match(found, received) if received else None
    if _CLOCK_ONLY.match(found.group(0)):
        # "tomorrow morning before the 8am huddle": the day named elsewhere is the date
        blank = text[: found.start()] + " " * (found.end() - found.start()) + text[found.end() :]
        day = find_deadline(blank, received, lead_on=True)
        if day is not None and day.due is not None and not _CLOCK_ONLY.match(day.phrase):
            return day
        # "Wednesday Nov 4 by noon": the date right before the hour is its day
        before = any_date(text[: found.start()], received)
        if (
            before is not None
            and before.due is not None
            and not text[before.end : found.start()].strip(" ,")
        ):
            return Deadline(text[before.start : found.end()], before.due, before.start, found.end())
    return Deadline(found.group(0), due, found.start(), found.end())


def any_date(text: str, received: dt.date | None) -> Deadline | None:
    """The last date or weekday named anywhere in `text` (what "by then" refers back to)."""
    last = None
    for found in _BARE_RE.finditer(text):
        if found.group("when"):
            last = found
    if last is None:
        return None
    due = _resolve_match(last, received) if received else None
    return Deadline(last.group(0), due, last.start(), last.end())


# A sentence, whose full stop is none after a day's number ("am 27. November", "20.11.").
SENTENCE = re.compile(rf"(?:[^.!?\n]|(?<=\d)\.(?=\s*{_MO}\b|\d))+[.!?]?", re.IGNORECASE)
_NAMED = ("iso", "wdate", "mdate", "dotted", "wday")


def named_date(text: str, received: dt.date) -> dt.date | None:
    """The first date `text` names outright, with or without a lead word: an ISO date, a day
    and month ("25 November", "25. November", "le 25 novembre", "25 de noviembre", "November
    25", with or without its weekday) or a weekday ("Friday", "Freitag", "vendredi",
    "viernes", "next Tuesday"), as the day it means from `received`. "Tomorrow", "end of the
    week", a time of day are none (a caller reads those as implied)."""
    for found in _BARE_RE.finditer(text):
        kind = next((k for k in _NAMED if found.group(k)), None)
        if kind is not None:
            return resolve(found.group("when"), received)
    return None


def refers_back(text: str) -> re.Match[str] | None:
    """ "by then" / "before then": the deadline is one named earlier."""
    return _THEN.search(text)


def _resolve_match(found: re.Match[str], received: dt.date) -> dt.date | None:
    groups = found.groupdict()
    if groups.get("soon"):
        return received
    if groups.get("event_day"):
        return resolve(groups["event_day"], received)
    if groups.get("within"):
        raw = groups["n"].lower()
        n = int(raw) if raw.isdigit() else _NUMBERS.get(raw)
        if n is None:
            return None
        if groups.get("business") and groups["unit"].lower().startswith("day"):
            day = received
            while n:  # "within 5 business days": weekdays only
                day += dt.timedelta(days=1)
                n -= day.weekday() < 5
            return day
        unit = groups["unit"].lower()
        days = -(-n // 24) if unit.startswith("hour") else n * 7 if unit.startswith("week") else n
        return received + dt.timedelta(days=days)
    return resolve(groups["when"], received)


def resolve(when: str, received: dt.date) -> dt.date | None:
    """The date a time expression ("Friday", "next Tue", "Nov 7", "EOD", "le 6 novembre",
    "Ende des Monats") means, from the day `received`."""
    text = " ".join(when.lower().replace(",", " ").split())
    text = re.sub(r"'s\b", "", text)
    # "EOD Monday", "COB tomorrow": that day
    text = re.sub(
        r"^(?:eod|cob|end of (?:the )?(?:business )?day|close of business)\s+(?:on\s+)?(?=\S)",
        "",
        text,
    )
    if re.fullmatch(r"(?:the |this )?weekend", text):  # "before the weekend": its Friday
        return received + dt.timedelta(days=(4 - received.weekday()) % 7)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return _date(*map(int, text.split("-")))
    iso = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", text)
    if iso:  # "Friday 2026-12-11", "Fri (2026-12-11)": the date written wins
        return _date(*map(int, iso.groups()))
    text = re.sub(r"(?<=\d)-(?=[^\W\d_])|(?<=[^\W\d_])-(?=\d)", " ", text)  # "04-nov-2026"
    year_at = re.search(r"\s((?:19|20)\d{2})$", text)
    written = int(year_at.group(1)) if year_at else None
    if year_at:  # "6 November 2026": that year's; the year is no day of the month
        text = text[: year_at.start()].strip()
    named = next((MONTH[w.strip(".")] for w in text.split() if w.strip(".") in MONTH), None)
    end = re.search(r"\b(?:end\s+of|fin|finales|ende)\b", text)
    if end and named and not re.search(r"\d", text):  # "end of November", "fin novembre"
        first = _nearest(received, named, 1)
        return _last_day(first.year, named) if first else None
    if end or text in {"eow", "eom"}:
        if re.search(r"\b(?:day|journée|día|dia|tages)\b", text):
            return received
        following = bool(
            re.search(r"\b(?:next|prochain\w*|nächste[nr]?|naechste[nr]?|que\s+viene)\b", text)
        )
        if text == "eom" or re.search(r"\b(?:month|mois|mes|monats?)\b", text):
            year, month = received.year, received.month + following
            if month > 12:
                year, month = year + 1, 1
            return _last_day(year, month)
        if following:  # the Friday of the following calendar week, as "next Friday" is
            return received - dt.timedelta(days=received.weekday()) + dt.timedelta(days=11)
        # this week's Friday; on a weekend, when it has passed, the coming one
        return received + dt.timedelta(days=(4 - received.weekday()) % 7)
    if re.fullmatch(r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?", text):
        return received  # a time of day: today
    rel = _relative(text, received)
    if rel is not None:
        return rel
    number = re.search(r"\b(\d{1,2})(?:st|nd|rd|th|er|\.)?\b", text)
    if named and number:
        return _nearest(received, named, int(number.group(1)), written)
    slash = re.fullmatch(r"(?:.*\s)?(\d{1,2})/(\d{1,2})(?:/(\d{4}))?(?:/\d{2})?", text)
    if slash:  # US order, month first
        written = int(slash.group(3)) if slash.group(3) else None
        month, day_of = int(slash.group(1)), int(slash.group(2))
        us = _nearest(received, month, day_of, written)
        said = next((WEEKDAY[w.strip(".")] for w in text.split() if w.strip(".") in WEEKDAY), None)
        if said is not None and (us is None or us.weekday() != said):
            # "Fri 11/12/2026" from a day-first writer: the weekday says which order it is
            day_first = _nearest(received, day_of, month, written)
            if day_first is not None and day_first.weekday() == said:
                return day_first
        return us
    dotted = re.fullmatch(r"(?:.*\s)?(\d{1,2})\.(\d{1,2})\.(\d{4})?(?:\d{2})?", text)
    if dotted:  # day first
        written = int(dotted.group(3)) if dotted.group(3) else None
        return _nearest(received, int(dotted.group(2)), int(dotted.group(1)), written)
    day = next((WEEKDAY[w.strip(".")] for w in text.split() if w.strip(".") in WEEKDAY), None)
    if number:  # "the 15th", "Monday the 9th" (the date wins)
        return _day_of_month(received, int(number.group(1)))
    if day is None:
        return None
    if re.search(r"\b(?:next|nächsten|naechsten|prochain|próximo|proximo)\b", text):
        monday = received - dt.timedelta(days=received.weekday())
        return monday + dt.timedelta(days=7 + day)
    ahead = (day - received.weekday()) % 7 or 7
    return received + dt.timedelta(days=ahead)


def _relative(text: str, received: dt.date) -> dt.date | None:
    if re.match(r"(?:the day after tomorrow|übermorgen|après-demain|pasado mañana)", text):
        return received + dt.timedelta(days=2)
    if re.match(r"(?:tomorrow|tmrw?|tmw|2moro|2morrow|morgen|demain|mañana)\b", text):
        return received + dt.timedelta(days=1)
    if re.match(
        r"(?:today|tonight|this (?:morning|afternoon|evening)|heute|aujourd'hui|ce soir|hoy"
        r"|esta tarde|noon|midday|eod|cob|close of business)\b",
        text,
    ):
        return received
    return None


def _day_of_month(received: dt.date, n: int) -> dt.date | None:
    """ "the 15th": this month's, or the next month's once it has passed; a day this month
    does not have ("the 30th" in February) is the next month that has it."""
    if not 1 <= n <= 31:
        return None
    year, month = received.year, received.month
    if n < received.day:
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    for _ in range(3):  # at most two months in a row lack a day (Feb, then never two 31sts)
        found = _date(year, month, n)
        if found is not None:
            return found
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _nearest(received: dt.date, month: int, day: int, written: int | None = None) -> dt.date | None:
    """The date of `day` and `month` in the `written` year; without one, the next such date,
    give or take: "by Jan 3" sent on Dec 30 means next year's."""
    if written:
        return _date(written, month, day)
    year = received.year
    first = _date(year, month, 1)
    if first is not None and first < received - dt.timedelta(days=183):
        year += 1
    return _date(year, month, day)


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _last_day(year: int, month: int) -> dt.date:
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return nxt - dt.timedelta(days=1)
