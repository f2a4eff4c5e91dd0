"""What a message asks of the reader, as to-do titles with their deadlines: plain rules over
sentences, in English, German, French and Spanish.

`requests_in` reads the sender's own words (the caller strips quoted history) one sentence at a
time and finds every request in it: a question or a plea addressed to the reader ("could you",
"please", "kannst du", "pourriez-vous", "¿puedes"), an imperative in a list or after "for
you:", "let me know", "I need your approval on", an invitation ("can we meet", a calendar
"Invitation:"), a commitment the reader made ("thanks for offering to", "you said you'd", or
"I'll" in the reader's own mail), and a terse request ("Approve?", "RSVP by Wednesday"). One
sentence may hold several ("can you X, and can you Y?", "update X and ping Y"). Nothing here
knows any message; every rule is about the language of requests.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from dayflow.providers.offline._dates import Deadline, any_date, find_deadline, refers_back
from dayflow.providers.offline._titles import (
    INVITE,
    VERBS,
    clean_subject,
    finish,
    make_title,
    strip_articles,
)

_CUE = re.compile(
    r"(?:\b(?:could|can|would|will)\s+(?:you|someone|anyone|somebody)(?:\s+(?:please|also|maybe))*"
    r"|\b(?:i|we)\s+need\s+you\s+to|\bneeds?\s+(?:someone|somebody|you)\s+to|\bplease|\bkindly"
    r"|\b(?:kannst|könntest|koenntest)\s+du(?:\s+(?:mir|mich|uns|bitte))*"
    r"|\b(?:können|könnten|koennten)\s+sie(?:\s+(?:mir|mich|uns|bitte))*|\bbitte"
    r"|\b(?:pourriez|pouvez)-vous|\b(?:peux|pourrais)-tu|\bmerci\s+de|\bveuillez"
    r"|¿?\s*(?:me\s+)?(?:puedes|podrías|podrias|podría|podria|puede|pueden)|\bpor\s+favor,?)"
    r"\s+",
    re.IGNORECASE,
)
_NOT_A_REQUEST = re.compile(
    r"(?:find|see|note|allow|ignore|disregard|do not|don't|feel free|excuse|forgive|keep in mind"
    r"|be (?:aware|advised)|believe|imagine|let (?:me|us) know if (?:you (?:have|need)|anything)"
    r"|contact us|reach out|rate|enjoy|welcome|join us|register now|save|book your spot)\b",
    re.IGNORECASE,
)
_LET_KNOW = re.compile(
    r"^(?:also,?\s+)?(?:let\s+me\s+know|tell\s+me|sag\s+mir|dis-moi|dites-moi|dime)\b\s*",
    re.IGNORECASE,
)
_YOU_COMMIT = re.compile(
    r"\b(?:(?:thanks|thank\s+you)\s+(?:so\s+much\s+)?for\s+(?:offering|agreeing|volunteering)\s+to"
    r"|(?:noted\s+that|so)\s+you(?:'ll|\s+will)|you\s+said\s+you(?:'d|\s+would)"
    r"|you\s+promised(?:\s+to)?)\s+",
    re.IGNORECASE,
)
_OBJECT_PROMISED = re.compile(
    r"\bthe\s+(?P<obj>[\w' -]{3,60}?)\s+you\s+"
    r"(?:said\s+you(?:'d|\s+would)\s+(?P<verb>\w+)(?:\s+over)?|promised)\b",
    re.IGNORECASE,
)
_I_COMMIT = re.compile(r"\bI(?:'ll|\s+will|'m\s+going\s+to)\s+", re.IGNORECASE)
_NEED_FROM_YOU = re.compile(
    r"\b(?:i|we)\s+need\s+(?:a|an|the|your)\s+(?P<obj>[\w' -]{3,60}?)\s+from\s+you\b",
    re.IGNORECASE,
)
_APPROVAL = re.compile(
    r"\b(?:i|we)\s+need\s+your\s+(?P<what>approval|sign-?off|signature|ok)"
    r"(?:\s+(?:on|of|for)\s+(?P<obj>[\w' -]{3,60}?))?(?=\s+(?:by|before|so|to|until)\b|[.,;!?]|$)",
    re.IGNORECASE,
)
_MEET = re.compile(
    r"^(?:(?:can|could|shall)\s+we\s+(?:do|meet|move|have|talk|grab|catch)|does\s+.{1,40}\s+work"
    r"|would\s+you\s+have\s+(?:\d+\s+minutes|time|a\s+moment)|are\s+you\s+free|passt\s+(?:dir|ihnen))\b",
    re.IGNORECASE,
)
_OPEN_TO = re.compile(
    r"^be\s+(?:open|interested|up\s+for|available)\s+(?:to|for|in)\s+", re.IGNORECASE
)
_WILLING = re.compile(r"^(?:be\s+(?:willing|able|happy)\s+to|mind|possibly|also)\s+", re.IGNORECASE)
_FYI = re.compile(
    r"\bfyi\b|\bno action\b|nothing (?:is )?needed|nothing you need to do|for your information"
    r"|no (?:need to|reply needed)|you don't need to do anything|heads up\b|zur info"
    r"|ihr müsst nichts|rien à faire|pour info|no hace falta|para tu información"
    r"|solo para informarte",
    re.IGNORECASE,
)
_ALL_CLEAR = re.compile(
    r"^(?:fyi|heads up|just (?:a note|so you know|to let you know)|zur info|pour info|para tu"
    r" información|solo para informarte)\b|\bno action (?:needed|required)|nothing (?:is )?needed"
    r"|nothing you need to do|you don't need to do anything|no need to do anything|ihr müsst nichts"
    r"|rien à faire|no hace falta que hagas nada",
    re.IGNORECASE,
)
_NEWSLETTER = re.compile(
    r"unsubscribe|you are receiving this|you're getting|manage (?:your )?(?:email )?preferences"
    r"|notification preferences|this is an automated message|replies are not monitored"
    r"|abmelden|se désinscrire|darse de baja|view (?:it )?(?:online|in your browser)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(
    r"[?!;]|(?<!\d)\.(?:\s|$)|,\s+(?:but|so|then|which|because|since|as|or|pero|mais)\b"
    r"|,\s+(?:he|she|it|they|we|i|that|this)(?:'s|'re|'m|\s+(?:is|are|was|has|have|will)\b)"
    r"|\s(?:using|so\s+(?:the|you|they))\b"
    r"|,\s+(?=(?:can|could|would|will)\s+you)|\s(?:so\s+(?:that|i|we)|because|since|if|when|once"
    r"|damit|afin|pour\s+que|para\s+que|je\s+dois|otherwise|or\s+you)\b|\s\(|\)|,\s*(?=[a-z]+\s+(?:is|are|was)\b)",
    re.IGNORECASE,
)
_GREETED = re.compile(r"^(?:(?i:hi|hello|hey|dear)\s+)?([A-Z][a-z]+)\s*,")
_REPLY = re.compile(r"^\s*(?:re|aw|sv|rv|tr|fwd?|fw)\s*:", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")
_ABBREVIATIONS = re.compile(
    r"\b(?:Dr|Mr|Mrs|Ms|St|Prof|e\.g|i\.e|a\.m|p\.m|vs|approx|no)\.", re.IGNORECASE
)


@dataclass(frozen=True)
class Found:
    title: str
    deadline: Deadline | None
    weak: bool = False  # a bare "let me know...", which usually follows the real question


def requests_in(
    text: str,
    subject: str,
    sender: str,
    received: dt.date | None,
    *,
    from_user: bool,
    automated: bool = False,
) -> list[Found]:
    """Every request (or commitment) in `text`, the sender's own words; `sender` is the name
    titles use for "me", `from_user` whether the reader wrote it."""
    invite = INVITE.match(subject.strip())
    if invite and not re.match(r"^(?:updated|cancel|accepted|declined)", subject, re.I):
        event = invite.group("event").strip()
        lead = find_deadline(text, received)
        return [Found(f"RSVP to {event}"[:80], lead if lead and lead.due else None)]
    if automated or _NEWSLETTER.search(text) or _FYI.search(subject):
        return []
    greeted = _GREETED.match(text.strip())
    if from_user and greeted:  # the reader's own mail: "you" is the person it greets
        text = re.sub(r"\byou\b", greeted.group(1), text)
    numbered = _numbered_sentences(text)
    sentences = [(sentence, listed) for sentence, listed, _ in numbered]
    if any(_ALL_CLEAR.search(s) for s, _ in sentences[:3]):
        return []
    found: list[Found] = []
    for n, (sentence, listed) in enumerate(sentences):
        if _FYI.search(sentence):
            continue
        before = " ".join(s for s, _ in sentences[:n])
        after = sentences[n + 1][0] if n + 1 < len(sentences) else ""
        previous = sentences[n - 1][0] if n else ""
        for title, deadline, weak in _in_sentence(
            sentence, listed, subject, sender, received, from_user
        ):
            if deadline is None and refers_back(sentence):
                deadline = any_date(before, received)
            if deadline is None and after and not _has_cue(after):
                carried = find_deadline(after, received, lead_only=True)
                pointer = re.search(r"^(?:both|all|each|these|everything|i'd\s+like|ideally)"
                                    r"|\b(?:it|them|these|those)\b", after, re.I)  # fmt: skip
                if carried and pointer:
                    deadline = carried
            if deadline is None and previous and not listed and not _has_cue(previous):
                deadline = find_deadline(previous, received)
            if deadline is None:  # "...if you call by Thursday" opening the next paragraph
                following = next((s for s, _, p in numbered if p > numbered[n][2]), "")
                if following and not _has_cue(following):
                    deadline = find_deadline(following, received, lead_only=True)
            if deadline is None:
                deadline = find_deadline(clean_subject(subject), received)
            found.append(Found(title, deadline, weak))
    if any(not f.weak for f in found):  # "let me know what you think" after the question
        found = [f for f in found if not f.weak]
    if not found and not _REPLY.match(subject):
        found = _terse(text, subject, sender, received)
    return _unique(found)


def _unique(found: list[Found]) -> list[Found]:
    seen: set[str] = set()
    out = []
    for f in found:
        key = f.title.lower()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _has_cue(sentence: str) -> bool:
    return bool(_CUE.search(sentence) or _LET_KNOW.match(sentence))


def _sentences(text: str) -> list[tuple[str, bool]]:
    """(sentence, is a list item), in order; a date such as 6.11. or a.m. does not end one."""
    return [(sentence, listed) for sentence, listed, _ in _numbered_sentences(text)]


def _numbered_sentences(text: str) -> list[tuple[str, bool, int]]:
    """(sentence, is a list item, paragraph number), in order."""
    out: list[tuple[str, bool, int]] = []
    for number, paragraph in enumerate(re.split(r"\n\s*\n", text)):
        for line in re.split(r"\n(?=\s*(?:\d+[.)]|[-*•])\s)", paragraph):
            listed = bool(_LIST_ITEM.match(line))
            line = _LIST_ITEM.sub("", " ".join(line.split()))
            protected = _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x00"), line)
            protected = re.sub(r"(\d)\.(\d)", "\\1\x00\\2", protected)
            protected = re.sub(r"(\d\x00\d{1,2})\.", "\\1\x00", protected)
            for part in re.split(r"(?<=[.!?])\s+(?=[¿¡A-ZÀ-Ý\"'])", protected):
                part = part.replace("\x00", ".").strip()
                if part:
                    out.append((part, listed, number))
                    listed = False
    return out


def _in_sentence(
    sentence: str,
    listed: bool,
    subject: str,
    sender: str,
    received: dt.date | None,
    from_user: bool,
) -> list[tuple[str, Deadline | None, bool]]:
    out: list[tuple[str, Deadline | None, bool]] = []
    commitment = False
    clauses: list[str] = []
    meet = _MEET.search(sentence)
    if meet:
        topic = clean_subject(subject)
        return [
            (
                f"Reply to {sender} about {topic}",
                find_deadline(sentence[meet.end() :], received),
                False,
            )
        ]
    approval = _APPROVAL.search(sentence)
    if approval:
        verb = "Sign" if approval.group("what").lower() == "signature" else "Approve"
        obj = approval.group("obj") or clean_subject(subject)
        title = finish(f"{verb} {strip_articles(obj)}", sender)
        return [(title, find_deadline(sentence[approval.end() :], received), False)]
    need = _NEED_FROM_YOU.search(sentence)
    if need:
        title = finish(f"Send {need.group('obj')} to {sender}", sender)
        return [(title, find_deadline(sentence[need.end() :], received), False)]
    promised = _OBJECT_PROMISED.search(sentence)
    if promised:
        verb = (promised.group("verb") or "send").capitalize()
        title = finish(f"{verb} {strip_articles(promised.group('obj'))} to {sender}", sender)
        return [(title, find_deadline(sentence[promised.end() :], received, lead_on=True), False)]
    cues = list(_CUE.finditer(sentence))
    for cue in _YOU_COMMIT.finditer(sentence):
        cues.append(cue)
        commitment = True
    if from_user:
        for cue in _I_COMMIT.finditer(sentence):
            cues.append(cue)
            commitment = True
    cues.sort(key=lambda m: m.start())
    let_know = _LET_KNOW.match(sentence)
    for i, cue in enumerate(cues):
        stop = cues[i + 1].start() if i + 1 < len(cues) else len(sentence)
        rest = sentence[cue.end() : stop]
        # "buch bitte den Raum": the verb before "bitte" belongs to the request
        if cue.group(0).strip().lower() == "bitte" and cue.start() > 0:
            head = sentence[: cue.start()].split()
            if head and head[-1].lower() not in {"du", "sie", "ihr"} and len(head) <= 2:
                rest = head[-1] + " " + rest
        clauses.append(rest)
    weak = False
    topic = subject
    if not cues and let_know and not _NOT_A_REQUEST.search(sentence):
        clauses.append("tell me " + sentence[let_know.end() :])
        weak = True
    french = re.search(r"\b(\w+)ez-moi\s+", sentence, re.I)
    if not cues and french:
        clauses.append(french.group(1) + "er moi " + sentence[french.end() :])
    elif not cues and not let_know:
        first = sentence.split(" ", 1)[0].lower().strip(",:")
        labelled = re.match(r"^([\w' -]{2,40}):\s+(\w+)", sentence)
        colon = re.search(
            r"\b(?:for you|to do|asks?|things?)\b[^:]{0,60}:\s+(?=(\w+))", sentence, re.I
        )
        if colon and colon.group(1).lower() in VERBS:
            clauses.append(sentence[colon.end() :])
        elif first in VERBS and (listed or find_deadline(sentence, received)):
            clauses.append(sentence)
        elif labelled and labelled.group(2).lower() in VERBS and find_deadline(sentence, received):
            # "Timesheets: submit yours by Friday": the label names what the verb is about
            clauses.append(sentence[labelled.start(2) :])
            topic = labelled.group(1)
        elif (
            re.search(r"\b(?:pls|please)\s*[.!]?$", sentence, re.I) and len(sentence.split()) <= 12
        ):
            clauses.append(re.sub(r"\s*\b(?:pls|please)\s*[.!]?$", "", sentence, flags=re.I))
    for rest in clauses:
        if _NOT_A_REQUEST.match(rest):
            continue
        if _OPEN_TO.match(rest):
            topic = _clause(_OPEN_TO.sub("", rest))
            out.append((finish(f"Reply to {sender} about {topic}", sender), None, weak))
            continue
        if _WILLING.match(rest):
            rest = _WILLING.sub("", rest)
            rest = re.sub(r"^(\w+?)ing\b", lambda m: _base(m.group(1)), rest)
        clause = _clause(rest)
        deadline = (
            find_deadline(clause, received, lead_on=commitment)
            or find_deadline(rest, received, lead_only=True)
            or find_deadline(sentence, received, lead_only=True)
        )
        conditional = re.match(r"\s*if\b", rest[len(clause) :], re.I)
        asking = re.search(r"\b(?:me|us|know|ask|whether|see|check)$", clause.strip(), re.I)
        if (
            conditional
            and not asking
            and not re.match(r"^(?:tell|let|confirm|check)\b", clause, re.I)
        ):
            continue
        for part in _split_and(clause):
            part_deadline = find_deadline(part, received, lead_on=commitment) or deadline
            made = make_title(part, part_deadline, topic, sender)
            if made:
                out.append((made, part_deadline, weak))
    return out


def _base(stem: str) -> str:
    """The base form of a gerund's stem: look(ing), mak(ing) -> make, runn(ing) -> run."""
    if len(stem) > 2 and stem[-1] == stem[-2]:
        return stem[:-1]
    if stem.endswith(("k", "v", "z")) and not stem.endswith(("ck", "lk", "nk", "ok", "rk")):
        return stem + "e"
    return stem


def _clause(text: str) -> str:
    colon = re.match(
        r"^(?:do\s+)?(?:these|this|the following|two things|three things)[^:]{0,40}:\s+", text, re.I
    )
    if colon:
        return text[colon.end() :].rstrip(" ?.!")
    end = _CLAUSE_END.search(text)
    return text[: end.start()] if end else text


def _split_and(clause: str) -> list[str]:
    """`update X, and ping Y` or `order X, add Y and set up Z`: one part per verb; not when
    the verb after "and" only takes a pronoun (`sign it and send it back`)."""
    parts = re.split(r",?\s+and\s+(?=(\w+)\b)|,\s+(?=(\w+)\b)", clause)
    pieces = [p for p in parts if p is not None]
    out = [pieces[0]]
    i = 1
    while i + 1 < len(pieces) + 1 and i < len(pieces):
        word, text = pieces[i], pieces[i + 1] if i + 1 < len(pieces) else ""
        i += 2
        if (
            len(out[-1].split()) > 1
            and word.lower() in VERBS
            and not re.match(r"^\w+\s+(?:it|them|this)(?:\s+(?:back|over|up|off))?$", text, re.I)
        ):
            out.append(text)
        else:
            joiner = " and " if f" and {text}" in clause else ", "
            out[-1] = out[-1] + joiner + text
    return out


def _terse(text: str, subject: str, sender: str, received: dt.date | None) -> list[Found]:
    """A request in a word or two: "Approve?", "Thoughts?", "Deck?", "RSVP by Wednesday", or a
    subject naming the thing and a body saying what to do with it ("Timesheet": "submit by
    Friday")."""
    body = " ".join(text.split())
    if len(body.split()) > 12 or not subject.strip():
        return []
    subj = clean_subject(subject)
    deadline = find_deadline(body, received) or find_deadline(subj, received)
    head = subj.split()[0].lower().strip("?!.,:") if subj.split() else ""
    body_words = re.sub(r"^(?:attached|here(?:'s| is)|see)\s*:?\s*", "", body, flags=re.I)
    body_words = re.sub(
        r"\b(?:sent from my \w+|thanks!?|thx!?|cheers)\b", "", body_words, flags=re.I
    ).strip(" .!")
    if deadline is not None:
        body_words = body_words.replace(deadline.phrase, "").strip(" .!?")
    url = re.search(r"https?://\S+/([\w-]+)", body_words)
    obj = url.group(1).replace("-", " ") if url else _clause(body_words)
    verb_in_body = body_words.split(" ", 1)[0].lower().strip(",:") if body_words else ""
    if head in {"thoughts", "feedback", "comments", "opinion"}:
        return [Found(f"Give {sender} thoughts on {obj or subj}", deadline)]
    if head in VERBS and subject.rstrip().endswith(("?", "pls", "please")):
        if head in {"call", "ping", "text"}:
            return [Found(f"{head.capitalize()} {sender}", deadline)]
        return [Found(finish(f"{head.capitalize()} {obj}", sender), deadline)]
    if head == "rsvp":
        return [Found(f"RSVP to {obj.split(',')[0] or subj}", deadline)]
    reminder = re.search(r"(?:reminder|please|pls)\s*:?\s*(\w+)", body, re.I)
    if reminder and reminder.group(1).lower() in VERBS:
        return [Found(f"{reminder.group(1).capitalize()} {subj}", deadline)]
    if verb_in_body in VERBS and len(body_words.split()) <= 3:
        return [Found(f"{verb_in_body.capitalize()} {subj}", deadline)]
    if subject.strip().endswith("?") and len(subj.split()) <= 2:
        return [Found(f"Send {subj.rstrip('?')} to {sender}", deadline)]
    lead = find_deadline(subj, received)
    if lead is not None and lead.phrase.lower().startswith(("by", "before", "due")):
        thing = subj.replace(lead.phrase, "").strip(" :-")
        if thing:
            return [Found(f"Send {thing} to {sender}", lead)]
    return []
