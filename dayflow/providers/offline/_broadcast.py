"""An announcement to everyone ("Hi all,", "Team,", "Hallo zusammen,") and what its asks are
(issue 34): a house rule ("please use the side door") or a way to behave ("please be
considerate and take your containers home") is for everyone who reads it, not a to-do of the
reader's. A thing to do asked of everyone ("please submit your timesheets by Friday") stays
a task. Mail to a group address (the listing's `to_group`: the reader in neither To nor Cc,
"all-staff@", "swim-families@") is an announcement whatever its greeting, and asks less of the
reader still: only an errand with a stated deadline, an obligation ("every employee must"), a
form to return, a "can someone...?" or an ask spoken to the reader by name is theirs.
Nothing here knows any message; the rules are about how announcements are written.
"""

from __future__ import annotations

import re

from dayflow.providers.offline._clauses import Found, spoken_rest
from dayflow.providers.offline._lexicon import (
    ASKING_ANYONE,
    BROADCAST_CONDUCT,
    CONDUCT,
    ERRANDS,
    FORBIDDING,
    FORMS,
    GREETINGS,
    OBLIGING,
    REMINDING,
    ROLE_SENDERS,
    STANDING,
    cues,
)
from dayflow.providers.offline._sentences import Sentence, spoken_to, spoken_to_group

# A house rule, by its task's title ("Use side door on Elm St", "Park on Mill Street").
_HOUSE_RULE = re.compile(rf"^{cues(BROADCAST_CONDUCT)}", re.IGNORECASE)
# A plea that opens on a way to behave: what comes after it in the same sentence is how to
# behave too ("please be considerate and take your lunch boxes home", "bitte seid leise und
# schließt die Tür").
_PLEA = r"(?:please|pls|kindly|bitte|merci\s+(?:de|d')|por\s+favor)"
_BEHAVING = re.compile(rf"\b{_PLEA}\s*,?\s*{cues(CONDUCT)}", re.IGNORECASE)
# A standing instruction, by its title: "Wear vest any time you cross yard" holds every day.
_STANDING = re.compile(rf"\b{cues(STANDING)}\b", re.IGNORECASE)
# A sentence that opens on what not to do: "Please don't reply-all -- use #ops instead".
_FORBIDS = re.compile(rf"^\W*(?:{_PLEA}\s*,?\s*)?{cues(FORBIDDING)}", re.IGNORECASE)


# A plea's cue, as a request's rule names it ('a request ("Please")'), or an imperative: what
# an announcement asks of everyone in the same words ("Please keep the back door shut"). Not a
# question ("can someone update the slide?"): that wants one person to take it on.
_PLEADED = re.compile(
    rf'^(?:a request \("(?:reminder:?\s*)?{_PLEA}"?\)|an imperative)|s\'il vous pla[iî]t|veuillez',
    re.IGNORECASE,
)
_PLEA_AT = re.compile(rf"\b{_PLEA}", re.IGNORECASE)
# The errand is the title's verb: its first word (after a reminder's words or a pronoun:
# "Remember to submit claims", "Nous retourner le formulaire") or an infinitive last
# ("Bestellmenge bestätigen"), not a noun in it ("Check new schedule in break room").
_LEAD = r"(?:remember\s+to|don't\s+forget\s+to|nous|me|nos|uns|mir|lui|leur|le|la|les|se|sich)"
_ERRAND = re.compile(rf"^(?:{_LEAD}\s+)*{cues(ERRANDS)}\b|\b{cues(ERRANDS)}\W*$", re.IGNORECASE)
_REMINDS = re.compile(rf"\b{cues(REMINDING)}\b", re.IGNORECASE)
# A date that is named but not given: "please handle yours by the date listed".
_BY_THE_DATE = re.compile(
    r"\b(?:by|before)\s+(?:the|your|their|its)\s+(?:\w+\s+)?(?:date|deadline|due\s+date)s?\b"
    r"|\b(?:hit|meet)\s+(?:your|the|their)\s+(?:\w+\s+)?(?:dates?|deadlines?)\b",
    re.IGNORECASE,
)


# What makes an ask of a group the reader's (`OBLIGING`, `FORMS`, `ASKING_ANYONE`); an
# obligation not denied ("no RSVP required", "you don't have to", "nicht verpflichtend").
_OBLIGES = re.compile(
    rf"(?<!\bno\s)(?<!\bnot\s)(?<!n't\s)(?<!\bnicht\s)(?<!\bpas\s)\b{cues(OBLIGING)}\b",
    re.IGNORECASE,
)
_FORM = re.compile(rf"\b{cues(FORMS)}", re.IGNORECASE)
_ANYONE = re.compile(rf"\b{cues(ASKING_ANYONE)}\b", re.IGNORECASE)


# An office's name as a sender: "Facilities Services", "IT Help Desk".
_ROLE = re.compile(rf"\b{cues(ROLE_SENDERS)}\b", re.IGNORECASE)


def is_office(display: str) -> bool:
    """Whether a sender's display name is an office's, not a person's ("Facilities Services",
    "Kessler Kundendienst", "Service client")."""
    return bool(_ROLE.search(display))


def for_everyone(
    found: list[Found],
    said: list[Sentence],
    *,
    office: bool = False,
    group: bool = False,
    reader: str | None = None,
) -> list[Found]:
    """`found` without the house rules, standing instructions and ways to behave of an
    announcement: a message (`said`, its sentences) that opens by greeting a group, or one
    from an office (`office`, "Facilities Services") that greets no one by name; any other
    message's `found` as it is. Mail to a group address (`group`) keeps only what is the
    reader's own (`_the_readers`), unless it opens by greeting the reader by name. Either
    way an ask spoken to the reader by name (`reader`, their first name, when known) stays
    ("Alex -- you're on keys this week. Please lock up after the last sail.")."""
    named = _spoken_to_reader(said, reader)
    if group and not (reader and said and reader in spoken_to(said[0].text)[0]):
        return [f for f in found if f.sentence in named or _the_readers(f)]
    from_office = office and not (said and spoken_to(said[0].text)[0])
    if not spoken_to_group(said) and not from_office:
        return found
    return [f for f in found if f.sentence in named or not _for_everyone(f)]


def _the_readers(found: Found) -> bool:
    """Whether an ask of mail to a group is the reader's own to-do: not one for everyone
    (`_for_everyone`), and an errand with a stated deadline ("please return the slip by
    Friday"), an obligation ("every manager must complete the course"), a form to sign or
    complete, or a question that wants one of them to take it on ("can someone update the
    slide?"). Not a way to behave or a routine asked of all ("please bring a water bottle",
    "please submit timesheets as usual")."""
    if _for_everyone(found):
        return False
    errand = bool(_ERRAND.search(found.title))
    dated = found.deadline is not None and found.deadline.due is not None
    return bool(
        (errand and (dated or _BY_THE_DATE.search(found.sentence)))
        or _FORM.search(found.sentence)
        or _OBLIGES.search(found.sentence)
        or _ANYONE.search(found.sentence)
    )


# The reader named where a sentence starts, as a greeting or a call ("Alex --", "Alex:",
# "@Alex", "Hi Alex,") that `spoken_to` may not take for one.
_CALLED = r"^[\s\"'(]*(?:(?i:{greetings})\s+)?@?{name}(?:\s*[,:!]|\s*[-–—]+\s)"


def _spoken_to_reader(said: list[Sentence], reader: str | None) -> set[str]:
    """The sentences of `said` spoken to the reader by name ("Alex -- you're down for the
    carpool. Please confirm by Thursday."): from the one that names them to the end of its
    paragraph or the next sentence that speaks to someone else, as requests quote them."""
    if not reader:
        return set()
    called = re.compile(_CALLED.format(greetings=cues(GREETINGS), name=re.escape(reader)))
    out: set[str] = set()
    current, paragraph = False, None
    for sentence in said:
        if sentence.paragraph != paragraph:
            current, paragraph = False, sentence.paragraph
        names = spoken_to(sentence.text)[0]
        if called.match(sentence.text) or reader in names or _named_within(sentence.text, reader):
            current = True
        elif names:
            current = False
        if current:
            out.add(spoken_rest(sentence.text))
    return out


def _named_within(sentence: str, reader: str) -> bool:
    """Whether a sentence turns to the reader by name part way ("Sara is doing the sign-in
    table, and Alex, thanks so much for offering to bring the cider"): ", and Alex,", "; Alex,"."""
    return bool(
        re.search(rf"(?:,\s+(?:and|but|also|oh)\s+|;\s*|[-–—]\s+){re.escape(reader)}\s*,", sentence)
    )


# An announcement's sentence that opens by naming some of its readers ("Volunteers please wear
# your vests", "Drivers, please...", "Coaches should..."): it asks those people, not the reader
# who got it; not the groups a reader of the mail is one of (parents, members, employees).
_SOME_OF_US = re.compile(
    r"^\W*(?:all\s+|our\s+|the\s+)?(?:volunteers|drivers|coaches|players|visitors|guests"
    r"|attendees|participants|students|lifeguards|counsell?ors|chaperones|marshals|vendors"
    r"|contractors|crews?)\s*[,:]?\s+(?:please|pls|kindly|should|must|need\s+to"
    r"|are\s+(?:asked|reminded)\s+to)\b",
    re.IGNORECASE,
)


# A plea to those of the readers who want it: "If you want to change your plan, please log in
# and make your elections before the 20th." To everyone, it is theirs if they wish.
_IF_YOU_WANT = re.compile(
    r"^\W*if\s+(?:you|u|anyone|anybody)(?:'d|\s+would)?\s+(?:still\s+)?(?:want|wish|like|plan"
    r"|need|are\s+interested|'re\s+interested)\b",
    re.IGNORECASE,
)


def _for_everyone(found: Found) -> bool:
    """Whether an ask of an announcement is for everyone who reads it: a house rule, a
    standing instruction, a way to behave, the sentence forbids first and says what to do
    instead, or it is spoken to some of the readers by what they are."""
    return bool(
        _SOME_OF_US.match(found.sentence)
        or _IF_YOU_WANT.match(found.sentence)
        or _HOUSE_RULE.match(found.title)
        or _STANDING.search(found.title)
        or _BEHAVING.search(found.sentence)
        or _FORBIDS.match(found.sentence)
        or _idle_plea(found)
    )


def _idle_plea(found: Found) -> bool:
    """Whether an announcement's plea asks everyone to behave a certain way, not the reader to
    do a thing of their own: it names no errand (something to hand in, answer, sign, book or
    pay, `ERRANDS`), and it has no deadline or only reminds ("please remember to set your
    clocks back before bed on Saturday"). "Please rake leaves to the curb" is for the whole
    street; "please return the signed slip" and "please book a slot by Friday" are the
    reader's."""
    if not _PLEADED.search(found.rule) or _ERRAND.search(found.title):
        return False
    # The title's verb is the plea's ("I'll circulate the doc Friday; please keep adding
    # notes" promises first) or, without a plea, the sentence's first word.
    plea = _PLEA_AT.search(found.sentence)
    verb = found.title.split()[0] if found.title.split() else ""
    after = found.sentence[plea.end() :] if plea else found.sentence.lstrip(" -*•")[: len(verb)]
    if not verb or not re.search(rf"\b{re.escape(verb)}\b", after, re.IGNORECASE):
        return False
    if _BY_THE_DATE.search(found.sentence):
        return False
    return found.deadline is None or bool(_REMINDS.search(found.sentence))
