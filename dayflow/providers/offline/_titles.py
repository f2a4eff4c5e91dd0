"""Turning a request's words into a to-do title: a verb first (in German the infinitive last),
articles out, "me" as the sender, a pronoun object replaced by the subject, dates and phone
numbers left out, at most 80 characters. Pure functions of the words, used by `_requests`.
"""

from __future__ import annotations

import re

from dayflow.dates import Deadline, alternation, any_word

VERBS = frozenset(
    "accept add answer approve arrange ask attach block book bring buy call cancel change chase "
    "check choose clean clear collect come complete confirm countersign decide dig double-check "
    "draft drop edit email feed fill finalise finalize finish fix follow forward get give grab "
    "hand help introduce invite join lend let look mail move nudge order organise organize pay "
    "pick ping pop post prepare print proofread pull push put read register reimburse remind "
    "renew reply reschedule reserve respond restart return review rsvp run schedule send set "
    "share sign sort step submit suggest take tell text transfer update upload venmo verify walk "
    "write".split()
)
_INVITATIONS = ("invitation", "einladung", "invitación", "invitacion", "you're invited",
                "you are invited")  # fmt: skip
INVITE = re.compile(
    rf"^(?:{alternation(_INVITATIONS)})\s*:\s*(?P<event>.+?)"
    r"(?:\s+(?:@|[-–—]\s+(?:mon|tue|wed|thu|fri|sat|sun)\w*\b).*)?$",
    re.IGNORECASE,
)
_OBJECT_PRONOUNS = any_word("it them this that these those one yours mine es sie le la les lo")
_PRONOUN_OBJECT = re.compile(rf"^{_OBJECT_PRONOUNS}$", re.IGNORECASE)
_BACK_SIGNED = re.compile(
    r"^(?:get|send)\s+(it|this|them)\s+back(\s+to\s+\S+)?\s+signed\b", re.IGNORECASE
)
# A French object pronoun before its infinitive: "la relire", "les envoyer", "l'imprimer".
_CLITIC = re.compile(r"^(?:(?:le|la|les)\s+|l')(?P<verb>[a-zà-ÿ]{2,}(?:er|ir|re))$", re.IGNORECASE)
_DROP_WORDS = {"just", "also", "quickly", "kindly", "please", "pls", "maybe", "possibly", "still",
               "bitte", "auch", "mal", "doch", "también", "tambien", "aussi", "noch", "kurz",
               "eben", "schnell", "gleich"}  # fmt: skip
# What a title never ends with: "Keep adding notes to the board until (then)" is half a clause.
_DANGLING = {"too", "then", "again", "until", "till", "by", "before", "and", "or", "with"}
# Words no to-do title needs wherever they stand.
_FILLERS = {"pls", "please", "plz", "bitte", "noch", "kurz", "eben", "mal", "stp", "svp"}
# "tell me whether X", "sag mir, ob X", "dis-moi si X": the question is kept as written.
_QUESTION = re.compile(
    r",?\s+(?:whether|ob|si)\s+\S.*$|(?<=\bme)\s+if\s+\S.*$|(?<=\bknow)\s+if\s+\S.*$", re.I
)
# "dig out X and send it over": fetching X is how it is sent, so the task is to send X.
_FETCH = re.compile(
    r"^(?:dig\s+out|find|grab|pull\s+(?:up|together)|look\s+up|get|fetch|locate|track\s+down"
    r"|put\s+together)\s+(?P<obj>.+?)\s+and\s+(?:send|forward|pass|share)\s+(?:it|them)"
    r"(?:\s+(?:over|along|on))?(?P<to>\s+to\s+\S+)?\s*$",
    re.IGNORECASE,
)
# "fill in section 4 and send it back": returning the thing is part of doing it.
AND_RETURN = re.compile(
    r"\s+and\s+(?:send|bring|get|give|mail|email)\s+(?:it|them|this)\s+back(?:\s+to\s+\S+)?\s*$"
    r"|\s+and\s+return\s+(?:it|them|this|(?:a|the)\s+(?:scanned\s+|signed\s+|pdf\s+)?cop(?:y|ies))"
    r"(?:\s+to\s+\S+)?(?:\s+(?:by|before|on|no\s+later\s+than)\s[^,;]{1,40})?\s*$",
    re.IGNORECASE,
)
# Subjects that say nothing about what a call is for.
_EMPTY_TOPIC = re.compile(
    r"^(?:quick\s+(?:q|question|one)|question|hi|hello|hey|call(?:\s+me)?|ping|urgent|dringend"
    r"|urgente|asap|help|this|today|now|\W*)$",
    re.IGNORECASE,
)
_ARTICLES = set(
    "the your our a an any some der die das den dem dein deine deinen deinem deiner deines ihre"
    " ihren einen eine le la les l un une el los las tu tus su sus ton ta tes votre vos".split()
)
_SOON_WORDS = (
    r"as soon as (?:possible|you(?:'re| are) \w+|you can)|right away|immediately|within the hour"
    r"|so schnell wie möglich|dès que possible|au plus vite|lo antes posible|cuanto antes"
)
# What a title never keeps, in the order it is taken out: a dated weekday, "by then", a time
# word, "as soon as possible", a phone number, a clock time, an aside, "at the latest".
_TIMES_OUT = tuple(
    (re.compile(pattern, flags), replacement)
    for pattern, flags, replacement in (
        (r"\b(?:on|for|am)\s+\w+day\s+\d{1,2}\s+\w+\b|\b(?:by|before)\s+then\b", re.I, " "),
        (r"\s+(?:today|tonight|tomorrow|now|right away|asap|in my place|noon|midday|midnight|eod"
         r"|cob)\b", re.I, " "),
        (rf"\s+(?:{_SOON_WORDS})", re.I, " "),
        (r"\s+(?:on|at)\s+[\d+][\d\s().+-]{5,}", 0, " "),
        (r"\s+(?:at|by|before)\s+(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|noon)(?=\s|$)",
         re.I, " "),
        (r"\s*\([^)]*\)|\s+at\s+the\s+(?:very\s+)?latest\b", re.I, ""),
    )
)  # fmt: skip
# What an invitation's subject says besides the event: "Invitation to", a weekday, a date.
_EVENT_OUT = tuple(
    (re.compile(pattern, re.I), "")
    for pattern in (
        r"^(?:einladung|invitation|invitación|invite)\s+(?:zu[mr]?\s+|to\s+|à\s+|a\s+)?",
        r"\s+(?:next|this|on)\s+\w+day\b.*$",
        r"\s+(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th)\b.*$",
    )
)
_DE_PARTICLES = {"ein", "an", "zurück", "ab", "auf", "aus", "mit", "vor", "zu", "weiter", "durch"}
_DE_IMPERATIVE = {"gib": "geben", "sag": "sagen", "schick": "schicken", "ruf": "rufen",
                  "schau": "schauen", "mach": "machen", "nimm": "nehmen", "bring": "bringen",
                  "lies": "lesen", "melde": "melden", "schreib": "schreiben"}  # fmt: skip
_ZU_INFINITIVE = re.compile(
    r"^(zurück|ab|an|auf|aus|ein|mit|vor|weiter|durch|zu|her|hin|nach|fest|frei)zu(\w{3,}en)$",
    re.IGNORECASE,
)
_DE_PRONOUNS = {"du", "sie", "ihr", "mir", "mich", "uns", "dir", "bitte"}


# Where "get me ..." puts the reader's sender, not a thing to send ("get me on the list").
_PLACES = frozenset("on in into onto off out up through over back there here started".split())
# A thing's state after its verb ("signed", "filled out"), and the verb that brings it about.
PARTICIPLES = {"approved": "Approve", "signed": "Sign", "reviewed": "Review", "submitted": "Submit",
               "paid": "Pay", "returned": "Return", "completed": "Complete", "renewed": "Renew",
               "confirmed": "Confirm", "filed": "File", "countersigned": "Countersign",
               "uploaded": "Upload", "sent": "Send", "filled in": "Fill in",
               "filled out": "Fill out", "updated": "Update", "finished": "Finish",
               "booked": "Book", "shared": "Share", "posted": "Post", "added": "Add",
               "done": "Finish"}  # fmt: skip


def make_title(clause: str, deadline: Deadline | None, subject: str, sender: str) -> str | None:
    """A to-do title for a request's clause: a verb and its object, the sender for "me"."""
    words = _scrub(clause, deadline).split()
    while words and words[0].lower().strip(",") in _DROP_WORDS:
        words.pop(0)
    while words and words[-1].lower().strip(",.?!") in _DROP_WORDS | _DANGLING:
        words.pop()
    if not words:
        return None
    question = _QUESTION.search(" ".join(words))
    asked = " ".join(words)[: question.start()].split() if question else []
    if question and (len(asked) > 1 or re.search(r"(?:me|melo|mela)$|^m'", asked[0], re.I)):
        # "tell me whether X": X stays as written, after the ask
        head = make_title(" ".join(words)[: question.start()], None, subject, sender)
        if head:
            return head + question.group(0).rstrip(" ?.!")
    first = words[0].lower()
    if first == "tell" and len(words) > 1 and words[1].lower() == "me":
        return finish("Tell " + sender + " " + " ".join(words[2:]), sender)
    if first == "rsvp":  # "RSVP for the dinner" names it; "RSVP by Friday" leaves it to the subject
        return finish(" ".join(words), sender) if len(words) > 1 else "RSVP to " + event(subject)
    if [w.lower() for w in words[:3]] == ["let", "me", "know"]:
        return finish("Tell " + sender + " " + " ".join(words[3:]), sender)
    clitic = _CLITIC.match(" ".join(words[:2]))
    if clitic:  # "la relire", "l'envoyer": the pronoun is the subject's thing
        rest = " ".join([clean_subject(subject), *words[2 if " " in clitic.group(0) else 1 :]])
        return finish(f"{clitic.group('verb').capitalize()} {rest}", sender)
    if _looks_german(words):
        return _about_call(_german(words, sender, subject), sender, subject)
    if _ENCLITIC_OBJECT.fullmatch(first) and len(words) <= 4:
        words = [words[0], clean_subject(subject), *words[1:]]  # "enviárnosla": the subject's
    words = _romance(_idiom(words), sender)
    pronoun = len(words) > 1 and _PRONOUN_OBJECT.match(words[1].strip(",."))
    thing = clean_subject(subject)
    # a subject that names a thing: short, no label, no verb ("VPN certificate expiring")
    named = len(thing.split()) <= 5 and not (
        ":" in thing or {w.lower() for w in thing.split()} & VERBS
    )
    if pronoun and len(words) > 3 and words[1].lower() in {"it", "them", "this"} and named:
        words = [words[0], thing, *words[2:]]  # "send it to procurement": the subject's thing
        pronoun = None
    # "relire le devis": a French or Spanish article, not "le" the pronoun ("send it")
    article = len(words) > 2 and words[1].lower() in {"le", "la", "les", "lo"}
    if pronoun and len(words) <= 3 and not article:
        return finish(words[0].capitalize() + " " + clean_subject(subject), sender)
    if len(words) == 1:
        if first in {"anrufen", "zurückrufen", "kontaktieren"}:  # German: the verb last
            return _about_call(f"{sender} {first}", sender, subject)
        if first in {"call", "ping", "text", "phone", "email", "appeler", "llamar"}:
            return _about_call(words[0].capitalize() + " " + sender, sender, subject)
        return finish(words[0].capitalize() + " " + clean_subject(subject), sender)
    return _about_call(finish(" ".join(words), sender), sender, subject)


def _scrub(clause: str, deadline: Deadline | None) -> str:
    """The clause without its deadline, times, phone numbers, asides in brackets and filler
    words ("pls", "noch kurz"), and without a send-back that doing it implies."""
    text = clause
    if deadline is not None and deadline.phrase in text:  # "before Tuesday's meeting": all of it
        lead = re.match(r"(?:before|by|until)\b", deadline.phrase, re.I)
        tail = r"\s+\w+" if lead and deadline.phrase.endswith("'s") else r"(?:'s\s+\w+)?"
        tail = "" if not lead else tail
        text = re.sub(re.escape(deadline.phrase) + tail, " ", text)
    # One space between words: the patterns below start with \s+, and a long run of spaces
    # (a phrase repeated and taken out) would make each of them quadratic.
    text = rewritten(" ".join(text.split()), _TIMES_OUT)
    text = " ".join(w for w in text.split() if w.lower().strip(",.!?") not in _FILLERS)
    text = AND_RETURN.sub("", text)
    text = re.sub(r"\s+(?:for|on|by|at|until|before)\s*$", "", text.rstrip(" ,.?!"), flags=re.I)
    fetch = _FETCH.match(text.strip(" ,:-"))
    if fetch:
        text = f"send {fetch.group('obj')}{fetch.group('to') or ' to me'}"
    head = text.split()
    if head and head[0].lower() == "with":  # "someone with admin access restart it"
        verbs = [i for i, w in enumerate(head) if w.lower() in VERBS]
        text = " ".join(head[verbs[0] :]) if verbs else text
    return text.strip(" ,:-")


def _idiom(words: list[str]) -> list[str]:
    """ "have X ready" -> "prepare X"; "get X updated" -> "update X"; "get me X" -> "send X to
    me"; "take a look at X" -> "review X"."""
    low = [w.lower().strip(",.!?") for w in words]
    if low[0] in {"have", "get"} and len(low) > 2 and low[-1] in {"ready", "done", "finished"}:
        return ["prepare" if low[-1] == "ready" else "finish", *words[1:-1]]
    if low[0] == "get" and len(low) > 2 and low[1] in {"me", "us"} and low[2] not in _PLACES:
        return ["send", *words[2:], "to", words[1]]
    if low[0] == "get" and len(low) > 3 and low[-2:] in (["to", "me"], ["to", "us"]):
        return ["send", *words[1:]]  # "get the forms to me"
    if low[0] in {"jump", "hop", "get"} and len(low) > 1 and low[1] == "on":
        return ["join", *words[2:]]
    if low[0] == "send" and len(low) > 1 and low[1] == "over":
        return ["send", *words[2:], "to", "me"]
    if low[0] == "double" and len(low) > 1 and low[1] == "check":
        return ["double-check", *words[2:]]
    if low[0] == "execute" and len(low) > 1:  # a contract is executed: signed
        return ["sign", *words[1:]]
    back = _BACK_SIGNED.match(" ".join(words))
    if back:  # "get it back to me signed": return it signed
        return ["return", back.group(1), "signed", *back.group(2).split()]
    if low[0] in {"have", "get"} and len(low) > 2 and low[-1] in PARTICIPLES:
        return [PARTICIPLES[low[-1]].lower(), *words[1:-1]]  # "get our spreadsheet updated"
    if low[:3] in (["take", "a", "look"], ["have", "a", "look"]):
        rest = words[4:] if len(low) > 3 and low[3] == "at" else words[3:]
        return ["review", *rest] if rest else ["review"]
    return words


def _about_call(title: str, sender: str, subject: str) -> str:
    """A call with nothing said about it is about the subject: "Call Tobias about the Q3
    budget", "Jürgen wegen Export Falkenwerk anrufen"; not when the subject says nothing."""
    topic = re.sub(
        r"^(?:urgent|dringend|urgente|asap|wichtig|important)\b\s*[:!-]?\s*",
        "",
        clean_subject(subject),
        flags=re.I,
    ).strip()
    if _EMPTY_TOPIC.match(topic) or len(topic) > 50:
        return title
    low = title.lower()
    if low in {f"call {sender.lower()}", f"call {sender.lower()} back"}:
        return f"{title} about {topic}"
    if low == f"appeler {sender.lower()}":
        return f"{title} au sujet de {topic}"
    if low in {f"llamar a {sender.lower()}", f"llamar {sender.lower()}"}:
        return f"{title} sobre {topic}"
    if low in {f"{sender.lower()} anrufen", f"{sender.lower()} zurückrufen"}:
        name, verb = title.rsplit(" ", 1)
        return f"{name} wegen {topic} {verb}"
    return title


def finish(title: str, sender: str) -> str:
    """Articles out, me/my as the sender, sign-and-return as one thing, at most 80 chars."""
    words = title.split()
    joined = " ".join(words)
    signed = re.match(
        r"^sign\s+(?:the\s+)?(.+?)\s+and\s+(?:send|bring|return)\s+it\s+back\b.*$", joined, re.I
    )
    if signed:
        words = ["Sign", "and", "return", *signed.group(1).split()]
    out: list[str] = []
    suffix = ""
    if (
        len(words) > 1
        and words[0].lower() in {"send", "forward", "share", "give", "email", "mail", "pass", "get"}
        and words[1].lower() in {"me", "us"}
    ):
        del words[1]
        suffix = f" to {sender}"
    for n, word in enumerate(words):
        low = word.lower().strip(",")
        # Spanish "a Tomás" at the end names the person, it is no article
        personal = low == "a" and n == len(words) - 2 and words[-1][:1].isupper()
        if low in _ARTICLES and out and not personal:
            continue
        if word.strip(",") == "US":  # the United States ("Steriq's US hotline"), not "us"
            out.append(word)
            continue
        out.append({"me": sender, "us": sender, "my": f"{sender}'s"}.get(low, word))
    title = " ".join(w for w in out if w) + suffix
    title = re.sub(r"\s+([,.?!])", r"\1", title).strip(" ,.;:?!")
    title = re.sub(r"(?:[,\s]+(?:and|y|und|et|or))+$", "", title, flags=re.I).strip(" ,")
    if not title:
        return ""
    title = title[0].upper() + title[1:]
    return title if len(title) <= 80 else title[:77].rsplit(" ", 1)[0] + "..."


def gerund(verb: str) -> str:
    """ "apply" -> "applying", "move" -> "moving", "ship" -> "shipping" (English, roughly)."""
    verb = verb.lower()
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def strip_articles(text: str) -> str:
    return " ".join(w for w in text.split() if w.lower() not in _ARTICLES)


def clean_subject(subject: str) -> str:
    text = re.sub(r"^(?:(?:re|fwd?|fw|aw|sv|tr)\s*:\s*)+", "", subject.strip(), flags=re.I)
    text = INVITE.sub(lambda m: m.group("event"), text)
    return text.rstrip("?!. ") or "this"


def event(subject: str) -> str:
    """What an RSVP is for: the subject without its reply prefix, "RSVP by ..." or the date."""
    text = clean_subject(subject)
    text = re.split(r"\s*[:(-]\s*(?=(?:please\s+)?(?:rsvp|reply|respond)\b)", text, flags=re.I)[0]
    return rewritten(text, _EVENT_OUT).strip(" :-!?") or "the invitation"


def rewritten(text: str, rules: tuple[tuple[re.Pattern[str], str], ...]) -> str:
    """`text` with each rule's pattern replaced by its text, in order."""
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def _looks_german(words: list[str]) -> bool:
    return bool(
        {w.lower() for w in words} & {"mir", "mich", "dich", "uns", "bitte", "zurück", "ein"}
    ) or bool(
        re.search(r"(?:en|ern|eln)$", words[-1])
        and any(w.lower() in {"das", "die", "den", "der", "deine", "für"} for w in words)
    )


# An infinitive, then the question it asks to settle: "bestätigen, welcher Termin passt",
# "mitteilen, ob Sie kommen", "sagen, wann es geht".
_DE_ASKED = re.compile(
    r"(?P<verb>[a-zäöü]+en),\s+(?:welche[rsnm]?|ob|wann|wie|was|wer|wo|wohin|wie\s+viele)\b"
)
_DE_YOU = frozenset("sie ihnen ihr ihre ihrer ihren euch".split())


def _german(words: list[str], sender: str, subject: str) -> str:
    """German word order: the infinitive goes last ("das Budget bis Freitag freigeben")."""
    low = [w.lower().strip(",.") for w in words]
    to_sender = "mir" in low or "uns" in low
    me = "mich" in low
    kept = [
        w
        for w, lw in zip(words, low, strict=True)
        if lw not in _DE_PRONOUNS and lw not in _ARTICLES
    ]
    if not kept:
        return ""
    asked = _DE_ASKED.match(" ".join(kept[:2]))
    if asked:  # "bestätigen, welcher Termin bei Ihnen passt": the clause's nouns, the verb last
        nouns = [w.strip(",.?") for w in kept[2:] if w[:1].isupper() and w.lower() not in _DE_YOU]
        kept = [*(nouns or [clean_subject(subject)]), asked.group("verb")]
    particle = ""
    if len(kept) > 1 and kept[-1].lower() in _DE_PARTICLES:
        particle = kept.pop().lower()
    # "zurückzusenden", "zu senden": a zu-infinitive is the verb ("zurücksenden", "senden")
    kept[-1] = _ZU_INFINITIVE.sub(r"\1\2", kept[-1])
    if len(kept) > 2 and kept[-2].lower() == "zu":
        del kept[-2]
    verb_last = kept[-1].lower().endswith("en") or kept[-1].lower().endswith("ern")
    if verb_last and (not particle or len(kept) == 1):
        verb, body = kept[-1], kept[:-1]
    elif kept[0].lower() in _DE_IMPERATIVE:  # "Gib mir Bescheid": geben
        verb, body = _DE_IMPERATIVE[kept[0].lower()], kept[1:]
    elif kept[0][0].islower():  # an imperative first: "schick die Liste"
        stem = kept[0]
        verb, body = (stem if stem.endswith("en") else stem.rstrip("e") + "en"), kept[1:]
    else:
        verb, body = kept[-1], kept[:-1]
    verb = particle + verb.lower()
    if me:
        body = [sender, *body]
    if not body:
        body = [clean_subject(subject) + ":"]
    if to_sender and [w.lower() for w in body] == ["bescheid"]:
        body = [sender, *body]  # "mir Bescheid geben": Dana Bescheid geben
    elif to_sender:
        body = [*body, "an", sender]
    title = " ".join([*body, verb])
    return title[0].upper() + title[1:]


# Words of one of the two languages only, to tell "Decir a Sam si vienes el sábado" (Spanish,
# though "decir" could pass for French by its ending) from "Envoyer le devis à Sam".
_SPANISH_WORDS = frozenset("el los las del al una mi mis tus su sus y para con".split())
_FRENCH_WORDS = frozenset("le les du des au aux mon ma mes ton ta tes son sa ses et pour".split())


# A Spanish verb with its pronouns on the end, an object among them: "enviárnosla",
# "mándamelo"; and the present subjunctive of an -ar verb after "nos": "confirme", "indique".
_ENCLITIC_OBJECT = re.compile(r"[a-záéíóúñ]+?(?:me|nos|se|te)(?:lo|la|los|las)")
_SUBJUNCTIVE_AR = re.compile(r"([a-záéíóúñ]{3,})e")


def _romance(words: list[str], sender: str) -> list[str]:
    """French and Spanish: "me donner X" / "m'envoyer X" / "mándame X" send X to the sender."""
    first = words[0]
    low = first.lower()
    to_sender = False
    if low in {"me", "moi", "nous", "nos"} and len(words) > 1:
        spanish_after = low == "nos" or {w.lower() for w in words[2:]} & _SPANISH_WORDS
        words, first, low, to_sender = words[1:], words[1], words[1].lower(), True
        subjunctive = _SUBJUNCTIVE_AR.fullmatch(low) if spanish_after else None
        if subjunctive:  # "(le agradecería) nos confirme la orden": confirmar
            stem = subjunctive.group(1).translate(str.maketrans("áéíóú", "aeiou"))
            stem = re.sub(r"qu$", "c", re.sub(r"gu$", "g", stem))
            words, first, low = [stem + "ar", *words[1:]], stem + "ar", stem + "ar"
    elif len(words) > 1 and words[1].lower() in {"moi", "nous"}:  # "envoyer moi le devis"
        words, to_sender = [words[0], *words[2:]], True
    if low.startswith("m'"):
        first, low, to_sender = first[2:], low[2:], True
        words = [first, *words[1:]]
    spanish = re.fullmatch(r"(\w+?)(?:me|melo|mela|nos|noslo|nosla)$", low)
    ending = ("arme", "erme", "irme", "arnos", "ernos", "irnos")
    if spanish and (low.endswith(ending) or re.search(r"[áéí]", low)):
        base = spanish.group(1)
        base = base.translate(str.maketrans("áéíóú", "aeiou"))
        if not base.endswith(("ar", "er", "ir")):
            base = base + "r"
        words, low, to_sender = [base, *words[1:]], base, True
    french = re.fullmatch(r"(\w+)ez-moi", low)
    if french:
        words, to_sender = [french.group(1) + "er", *words[1:]], True
    if to_sender:
        if len(words) == 1:  # "m'appeler": Appeler Dana; "llamarme": Llamar a Dana
            if re.search(r"(?:ar|ir)$|[áéíóú]", words[0].lower()) or spanish:
                return [words[0], "a", sender]
            direct = words[0].lower() in {"appeler", "rappeler", "contacter", "joindre", "aider"}
            return [words[0], sender] if direct else [words[0], "à", sender]
        rest = {w.lower() for w in words[1:]}
        if rest & _SPANISH_WORDS:
            joiner = "a"
        elif rest & _FRENCH_WORDS:
            joiner = "à"
        else:
            joiner = (
                "a"
                if re.search(r"(?:ar|er|ir)$", words[0].lower())
                and not re.search(r"(?:er)$", words[0].lower())
                else "à"
            )
        return [*words, joiner, sender]
    return words
