"""A message's own words as sentences, and whom each sentence speaks to.

Pure functions of the text, used by `_requests`: `sentences` splits paragraphs, list items
(also numbered inline, "1) ... 2) ..." or "(a) ... (b) ...") and sentences, keeping dates
such as 6.11. and abbreviations whole; `addressed_elsewhere` marks the sentences spoken to
someone other than the reader ("Marcus, can you...", or a whole message that opens "Hi Sam,"),
so that a request to a colleague the reader is only copied on is not the reader's;
`without_signoff` drops a closing name or initial that a snippet runs into the last sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dayflow.dates import any_phrase
from dayflow.providers.offline._lexicon import (
    ACTION_HEADINGS,
    ASKING_OPENERS,
    GREETINGS,
    GROUP_GREETINGS,
    GROUP_NOUNS,
    cues,
)
from dayflow.providers.offline._titles import VERBS

# A list item's marker, or markers stacked ("- 1. Take a look...").
_LIST_ITEM = re.compile(r"^\s*(?:(?:\d+[.)]|\(?[a-e1-9]\)|[-*•])\s+)+")
# Titles before a name in four languages ("la Dra. Okafor", "Sr. Ruiz", "Mme. Roux"), a street's
# "St.", and the Latin and clock abbreviations: none ends a sentence.
_ABBREVIATIONS = re.compile(
    r"\b(?:Dr|Dra|Mr|Mrs|Ms|Sr|Sra|Srta|Jr|Mme|Mlle|Hr|St|Prof|e\.g|i\.e|a\.m|p\.m|vs|approx|no)\.",
    re.IGNORECASE,
)
# "1) ... 2) ..." or "(a) ... (b) ..." inside a line: markers after a space or at the start.
_INLINE_MARK = re.compile(r"(?:(?<=\s)|^)(?:\(?([1-9]|[a-e])\)|([1-9])\.(?=\s+[^\W\d]))\s+")
_ITEM_JOINER = re.compile(r"\s*[,;]\s*(?:and|or|y|o|und|oder|et|ou)?$", re.IGNORECASE)
# A German date's day: "13. November" does not end a sentence.
_DAY_DOT = re.compile(
    r"\b(\d{1,2})\.(?=\s+(?:Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober"
    r"|November|Dezember|Jan|Feb|Mär|Apr|Jun|Jul|Aug|Sep|Okt|Nov|Dez)\b)"
)
# A sentence ends at . ! or ? before a capital; in mail typed in lower case ("...today? also
# call your mom"), at ? or ! before any word, and at a full stop after a word of 3+ letters.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=[¿¡A-ZÀ-Ý\"'])|(?<=[?!])\s+(?=[a-zà-ÿ])|(?<=[a-zà-ÿ]{3}\.)\s+(?=[a-zà-ÿ])"
)
# "A couple of asks: first, X; second, Y; finally, Z."
_ORDINALS = any_phrase(
    ("first", "firstly", "second", "secondly", "third", "thirdly", "then", "finally", "lastly",
     "and finally")
)  # fmt: skip
_ORDINAL = re.compile(rf"(?:(?<=[:;.])|(?<=[:;.]\s))\s*\b{_ORDINALS}\s*,\s*", re.IGNORECASE)
# A snippet runs a bulleted list into one line: "Alex, - Please X. - Review Y."
_INLINE_BULLET = re.compile(r"(?<=[.!?:,;)])\s+[-*•]\s+(?=\S)")
# Whom a greeting names when it names a group, or a title without a name ("Hi all,", "Madame,").
_GROUPS = any_phrase(
    ("all", "team", "madame", "monsieur", "madam", "sir", "herr", "frau", "señor", "señora",
     "senor", "senora", "everyone", "everybody", "folks", "guys", "both", "y'all", "you all",
     "tous", "alle", "todos", "equipo", "l'équipe", "zusammen")
)  # fmt: skip
_GROUP = re.compile(rf"^{_GROUPS}$", re.IGNORECASE)
_NAME = r"[A-ZÀ-Ý][a-zà-ÿ]+(?:-[A-ZÀ-Ý][a-zà-ÿ]+)?"
# Words that open a sentence with a comma and are not someone spoken to.
_NOT_NAMES = frozenset(
    "thanks thank thx ty cheers sorry apologies congrats congratulations welcome hello hi hey yo"
    " dear please quick urgent important attention reminder update note question fyi btw ps"
    " also and but so plus besides meanwhile however otherwise anyway anyways actually honestly"
    " seriously basically additionally separately relatedly finally lastly first firstly second"
    " secondly third next then now today tomorrow tonight later again still ideally sadly luckily"
    " unfortunately fortunately alternatively ok okay alright right yes yeah yep no nope sure"
    " absolutely definitely great cool perfect awesome excellent brilliant lovely wonderful nice"
    " good fine sweet amazing fantastic oh ah aha hmm um ugh wow yay lol np nevermind nvm wait"
    " morning afternoon evening agenda summary context background attached below above team all"
    " everyone madame monsieur madam sir herr frau señor señora senor senora"
    # the reader by their role: "Dear Tenant,", "Dear Customer,", "Dear Parents,"
    " tenant tenants customer customers member members parent parents resident residents client"
    " clients guest guests patient patients colleague colleagues friend friends neighbour"
    " neighbours neighbor neighbors applicant candidate subscriber owner owners participant"
    " participants attendee attendees volunteer volunteers"
    " licensee licensees family families household households homeowner homeowners employee"
    " employees manager managers leader leaders student students supplier suppliers vendor"
    " vendors partner partners user users"
    " monday tuesday wednesday thursday friday saturday sunday"
    " danke bitte gut genau klar super prima leider dringend wichtig hallo moin servus übrigens"
    " außerdem dann jetzt heute morgen"
    " merci alors bon bref donc enfin voilà génial parfait désolé coucou salut bonjour oui non"
    " sinon ensuite aussi urgent"
    " gracias vale bueno pues perfecto genial hola oye mira además también entonces luego hoy"
    " mañana perdón disculpa buenas".split()
)
VOCATIVE = re.compile(
    rf"^(?:(?i:{cues(GREETINGS)})\s+)?"
    rf"(?P<names>{_NAME}(?:\s*(?:,|&|\band\b|\bund\b|\bet\b|\by\b)\s*{_NAME})*)"
    r"\s*(?:[,!]|(?<=[a-zà-ÿ])\s[-–—](?=\s))\s*"
)
_GREETING_WORD = re.compile(rf"^(?i:{cues(GREETINGS)})\s")
# What a sentence spoken to someone goes on with: a request ("Marcus, can you...").
_ASKING = re.compile(rf"^{cues(ASKING_OPENERS)}", re.IGNORECASE)
_CLOSING = re.compile(
    r"(?:[.!?,]|\b(?:pls|please|thanks|thank\s+you|thx|cheers|best|merci|danke|gracias|love"
    r"|love\s+u|xx?))$",
    re.IGNORECASE,
)


_BRACKETED = re.compile(r"\([^()\n]{1,120}\)")


@dataclass(frozen=True)
class Sentence:
    text: str
    listed: bool  # a list item's first sentence
    paragraph: int


def sentences(text: str) -> list[Sentence]:
    """The sentences of `text`, in order; a date such as 6.11. or a.m. does not end one, nor
    does a question in brackets."""
    out: list[Sentence] = []
    for number, paragraph in enumerate(re.split(r"\n\s*\n", text)):
        paragraph = _inline_list(paragraph)
        for line in re.split(r"\n(?=\s*(?:\d+[.)]|\(?[a-e1-9]\)|[-*•])\s)", paragraph):
            listed = bool(_LIST_ITEM.match(line))
            line = _LIST_ITEM.sub("", " ".join(line.split()))
            if listed:  # "1) confirm the date, and" / "que me confirmes la fecha, y"
                line = _ITEM_JOINER.sub("", line)
            protected = _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x00"), line)
            protected = re.sub(r"(\d)\.(\d)", "\\1\x00\\2", protected)
            protected = _DAY_DOT.sub("\\1\x00", protected)  # "bis 13. November"
            protected = re.sub(r"(\d\x00\d{1,2})\.", "\\1\x00", protected)
            # "(Miro? the second Figma org?)", "(incl. open reqs)": no sentence ends in brackets
            protected = _BRACKETED.sub(
                lambda m: m.group(0).replace(".", "\x00").replace("?", "\x01").replace("!", "\x02"),
                protected,
            )
            for whole in _SENTENCE_END.split(protected):
                whole = whole.replace("\x00", ".").replace("\x01", "?").replace("\x02", "!")
                for part in _dashed(whole.strip()):
                    out.append(Sentence(part, listed, number))
                    listed = False
    return out


# "Call me ASAP - I need your OK to move staging": a command, a dash, then a clause with a
# subject of its own is two sentences.
_DASH_CLAUSE = re.compile(
    r"\s+[-–—]{1,2}\s+(?=(?:I|I'm|I've|I'll|we|we're|we've|it|it's|this|that|they)\b)"
)


def _dashed(part: str) -> list[str]:
    """`part` split after a short command that a dash joins to a clause of its own."""
    dash = _DASH_CLAUSE.search(part)
    head = part[: dash.start()] if dash else ""
    if dash is None or len(head.split()) > 6 or head.split()[0].lower() not in VERBS:
        return [part] if part else []
    return [head, part[dash.end() :]]


def _inline_list(paragraph: str) -> str:
    """ "couple things: 1) X 2) Y" as list lines, when the markers run in order (1, 2... or
    a, b...), so that "see 2) below" alone is left as it is."""
    if len(_INLINE_BULLET.findall(paragraph)) >= 2:
        return _INLINE_BULLET.sub("\n- ", paragraph)
    if _ORDINAL.search(paragraph) and len(_ORDINAL.findall(paragraph)) >= 2:
        return _ORDINAL.sub("\n- ", paragraph)
    marks = list(_INLINE_MARK.finditer(paragraph))
    labels = [m.group(1) or m.group(2) for m in marks]
    if len(marks) < 2 or labels[0] not in {"1", "a"}:
        return paragraph
    if any(ord(b) != ord(a) + 1 for a, b in zip(labels, labels[1:], strict=False)):
        return paragraph
    pieces, last = [], 0
    for mark in marks:
        pieces.append(paragraph[last : mark.start()].rstrip(" ,;"))
        last = mark.end()
    pieces.append(paragraph[last:])
    return pieces[0] + "".join("\n- " + p.strip().rstrip(",;") for p in pieces[1:])


def spoken_to(sentence: str, *, strict: bool = False) -> tuple[list[str], int]:
    """The names a sentence opens by speaking to ("Marcus, can you"), and where the rest
    starts; ([], 0) when it opens with none. `strict` takes a bare "Word," as a name only
    when a greeting comes before it, it stands alone, or a request follows it, so that
    "Nevermind, Lucia..." speaks to nobody."""
    mention = re.match(rf"^@(?P<name>{_NAME})\b[,:]?\s*", sentence)
    if mention:  # "@Marcus please update the board"
        return [mention.group("name")], mention.end()
    found = VOCATIVE.match(sentence)
    if found is None:
        return [], 0
    rest = sentence[found.end() :]
    if strict and not (
        _GREETING_WORD.match(sentence)
        or (not rest.strip() and not found.group(0).rstrip().endswith("!"))
        or _ASKING.match(rest)
        or rest.split(" ", 1)[0].lower().strip(",") in VERBS
    ):
        return [], 0
    names = re.split(r"\s*(?:,|&|\band\b|\bund\b|\bet\b|\by\b)\s*", found.group("names"))
    names = [n for n in names if n]
    if not names or any(n.lower() in _NOT_NAMES for n in names):
        return [], 0
    return names, found.end()


# A greeting to a group: "Hi all,", "Hello everyone!", "Team,", "Dear colleagues,", "Hi all -".
_TO_GROUP = re.compile(
    rf"^(?:(?i:{cues(GREETINGS)})\s+)?(?i:(?:à\s+|a\s+|an\s+)?(?:{_GROUPS}|colleagues|staff"
    r"|(?:all|every)\s+staff|tout\s+le\s+monde|ensemble|toutes?))\s*(?:[,!:]|\s[-–—]\s)"
)


# A greeting line, the whole sentence, that names a group by its people ("Hello 3B families,",
# "All Newark depot staff and visitors,", "EMs,", "Sehr geehrte Kundinnen und Kunden,"): up to
# four words say which ones, and an abbreviation's plural ("EMs", "PMs") is a group too.
_GROUP_NOUN = rf"(?:(?i:{cues(GROUP_NOUNS)})|[A-Z]{{2,4}}s)"
_WHICH = r"(?:[\w&'’.-]+\s+){0,4}?"
_GROUP_LINE = re.compile(
    rf"^(?i:(?:{cues(GREETINGS)}|{cues(GROUP_GREETINGS)})\s+)*(?i:(?:all|every|alle|tous|todos)\s+)?"
    rf"(?i:(?:our|the|my|unsere|liebe|nos|mes|les|nuestros)\s+)?{_WHICH}{_GROUP_NOUN}"
    rf"(?:\s+(?i:and|&|und|et|y)\s+{_WHICH}{_GROUP_NOUN})?\s*[,!:]?$"
)


def greets_group(text: str) -> bool:
    """Whether a sentence greets a group ("Hi all,", "Team,", "To all staff,", "EMs,")."""
    return bool(_TO_GROUP.match(text) or _GROUP_LINE.match(text.strip()))


def spoken_to_group(found: list[Sentence]) -> bool:
    """Whether a message opens by greeting a group ("Hi all,", "Team,"): an announcement."""
    return bool(found) and greets_group(found[0].text)


def addressed_elsewhere(found: list[Sentence], reader: str | None) -> list[bool]:
    """For each sentence, whether it speaks to someone other than the reader: after a
    vocative naming others ("Marcus, ..."), up to the next vocative or paragraph; a message
    that opens by greeting others only ("Hi Sam,") speaks to them throughout. Unknown reader:
    nothing is elsewhere."""
    if not reader:
        return [False] * len(found)
    me = reader.lower()
    out: list[bool] = []
    default = False
    current: bool | None = None
    paragraph = found[0].paragraph if found else 0
    for n, sentence in enumerate(found):
        names, _ = spoken_to(sentence.text, strict=True)
        if sentence.paragraph != paragraph:
            paragraph, current = sentence.paragraph, None
        if names and not any(_GROUP.match(x) for x in names):
            others = all(x.lower() != me for x in names)
            if n == 0:
                default = others
            current = others
        out.append(default if current is None else current)
    return _owners(found, me, out)


def addressed_when_copied(
    found: list[Sentence], to: tuple[str, ...], reader: str | None
) -> list[bool]:
    """For a message the reader is only copied on (`to`: whom it is to), whether each
    sentence speaks to someone else: all of them, but those after a vocative naming the
    reader (or, the reader unknown, someone it is not to), up to the next vocative or
    paragraph ("Mira is sending the numbers. Alex, could you check them?"), and all of a
    message that opens by greeting a group ("Hi all, can you add your items?")."""
    others = {name.split()[0].lower() for name in to if name.split()}
    me = reader.lower() if reader else None
    out: list[bool] = []
    current: bool | None = None
    group = False  # a message that opens "Hi all," asks everyone, up to a vocative naming one
    paragraph = found[0].paragraph if found else 0
    for n, sentence in enumerate(found):
        names, _ = spoken_to(sentence.text, strict=True)
        if sentence.paragraph != paragraph:
            paragraph, current = sentence.paragraph, None
        if greets_group(sentence.text) or any(_GROUP.match(x) for x in names):
            current = False  # "Hi all," speaks to everyone it went to, the copied reader too
            if n == 0:
                group = True
        elif names:
            low = [x.lower() for x in names]
            current = not any(x == me if me else x not in others for x in low)
        out.append((not group) if current is None else current)
    return out


_OWNER = re.compile(rf"^\s*({_NAME})\s*:\s")
# A heading over meeting notes' list of owners ("Action items:", "Next steps", "Aufgaben").
_ACTIONS_HEADING = re.compile(
    rf"^(?:\w+\s+){{0,3}}?{cues(ACTION_HEADINGS)}\b[^.!?]{{0,40}}:?$", re.IGNORECASE
)
# Who an owner's label names that is not someone else: the sender or the reader themselves.
_SELVES = frozenset(("me", "you", "us", "we", "myself"))


def _owners(found: list[Sentence], me: str, out: list[bool]) -> list[bool]:
    """A list of owners ("- Rafael: please finalise the copy", "- Alex: can you confirm..."),
    when one of them is the reader: each item is its owner's, the reader's only theirs. Under
    an action items heading, with two owners or more and the reader not among them, each
    item is its owner's too ("Action items: - Marcus: fix the door - Colette: hem the robe"):
    meeting notes that give the reader nothing to do; an item for "All" stays everyone's."""
    labels = [_OWNER.match(s.text) if s.listed else None for s in found]
    names = [
        m.group(1) if m and m.group(1).lower() not in _NOT_NAMES | _SELVES else None for m in labels
    ]
    owners = {n.lower() for n in names if n}
    if me not in owners:
        if len(owners) < 2 or not _under_actions_heading(found, names):
            return out
        # the reader by a longer or a shorter name ("Alexander:", "Sam:" for Samantha) may be
        # one of them: that item is not someone else's
        return [
            was or (name is not None and not _may_be(name.lower(), me))
            for was, name in zip(out, names, strict=True)
        ]
    return [
        was if name is None else name.lower() != me for was, name in zip(out, names, strict=True)
    ]


def _may_be(name: str, me: str) -> bool:
    """Whether an owner's label may name the reader by a longer or shorter form of theirs."""
    return min(len(name), len(me)) >= 3 and (name.startswith(me) or me.startswith(name))


def _under_actions_heading(found: list[Sentence], names: list[str | None]) -> bool:
    """Whether the first owner's item follows a heading that names action items, the last
    sentence before it that is no list item."""
    first = next(n for n, name in enumerate(names) if name)
    heading = next((s.text for s in reversed(found[:first]) if not s.listed), "")
    return bool(_ACTIONS_HEADING.match(heading.strip()))


def without_signoff(text: str, sender: str) -> str:
    """`text` without the sender's name or initial run into its last line ("sign today pls
    D.", "...thanks Tobias", "-H"): a snippet joins the signature to the words. Plain string
    work, no regex over the whole text, so a long run of spaces costs nothing."""
    parts = text.rstrip().rsplit(None, 1)
    first = sender.split()[0] if sender.split() else ""
    if len(parts) < 2 or not first:
        return text
    # "sign by Friday pls Monica Human Resources": the name, then the signature's title line
    last = text.rstrip().rsplit(None, 5)
    for i in range(1, len(last) - 1):
        titled = all(word[:1].isupper() for word in last[i + 1 :])
        if last[i] == first and titled and _CLOSING.search(" ".join(last[:i])):
            return " ".join(last[:i])
    before, tail = parts[0].rstrip(), parts[1]
    dashed = tail[:1] in "-–—" or before.endswith(("-", "–", "—"))
    if before.endswith(("-", "–", "—")):
        before = before[:-1].rstrip()
    tail = tail.lstrip("-–—").rstrip(".")
    named = tail.lower() == first.lower() and tail[:1].isupper()
    initial = len(tail) == 1 and tail == first[0].upper()
    if (named or initial) and (dashed or _CLOSING.search(before)):
        return before
    return text
