"""The requests in one sentence, as to-do titles with their deadlines.

`in_sentence` tries, in order: a whole-sentence form (an invitation to meet, "does Tuesday
work", "I need your approval on X", "the X you said you'd send", "the PO has to be approved by
COB", "let me know if you can make it"), then the request cues ("could you", "please",
"kannst du", "tu peux", "¿puedes", a commitment the reader made), then a sentence with no cue
that is a request by its shape (an imperative in a list or with a deadline, a French or
Spanish infinitive in a list, "Label: verb ..."). Each clause is cut at its end, split at
"and" between verbs, and given a title by `_titles`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from dayflow.dates import MONTH, Deadline, alternation, any_phrase, any_word, find_deadline
from dayflow.providers.offline._forms import Piece, whole_forms
from dayflow.providers.offline._lexicon import (
    CONDUCT,
    DISCRETION,
    FORBIDDING,
    MORE_INFO,
    PASSING_ON,
    REGARDS,
    RELEASES,
    REQUEST_CUES,
    cues,
)
from dayflow.providers.offline._sentences import spoken_to
from dayflow.providers.offline._titles import AND_RETURN, VERBS, finish, make_title

# The request cues of every language (`_lexicon.REQUEST_CUES`), then the request's words.
_CUE = re.compile(rf"{cues(REQUEST_CUES)}\s+", re.IGNORECASE)
_NOT_A_REQUEST = re.compile(
    r"(?:find(?!\s+out\b)|see|note|allow|ignore|disregard|do not|don't|feel free|excuse|forgive"
    r"|keep in mind"
    r"|be (?:aware|advised)|believe|imagine|let (?:me|us) know if (?:you (?:have|need)|anything)"
    r"|contact us|reach out|rate|enjoy|welcome|join us|register now|save|book your spot"
    r"|take care|have (?:a|fun)|get well|arrive|be (?:on time|early)|beachten"
    # "veuillez trouver ci-joint", "encuentre adjunto": what is attached, not asked
    r"|trouver (?:ci-joint|ci-dessous|en pi[eè]ce jointe)|encontrar(?:á)? adjunt\w*)\b",
    re.IGNORECASE,
)
# A way to behave ("be careful with ..."), news to keep to oneself ("keep this confidential") or
# to pass on, an advert's call, greetings to pass on ("grüß Sam von mir"): a request's words,
# but nothing for a to-do list (`_lexicon`).
_NO_TODO = (CONDUCT, DISCRETION, PASSING_ON, REGARDS)
_BEHAVE = re.compile(rf"^(?:{'|'.join(cues(x) for x in _NO_TODO)})", re.IGNORECASE)
# A negated ask: what not to do ("please don't reply", "bitte nicht antworten", "merci de ne
# pas répondre", "por favor, no respondas"), what need not be done ("no need to bring anything",
# "bitte keine Rückmeldung nötig", "pas besoin de répondre", "no hace falta") or not yet ("bitte
# erst zu Weihnachten öffnen"). Only an ask after it ("... and bring it to IT") is one.
_NEGATED = re.compile(
    rf"^(?:{cues(FORBIDDING)}|{cues(RELEASES)}|(?:do\s+not|don't)\b(?!\s+forget\b))", re.I
)
# Being glad the reader can come is an answer already given: "so glad you can make it!"
_GLAD = re.compile(r"^\W*(?:great|glad|good|nice|happy|relieved)\b", re.IGNORECASE)
_ATTENDING = re.compile(
    r"^(?:come|make\s+it|be\s+there|join(?:\s+us)?|attend)\b(?![^.!?;]*\band\s)", re.IGNORECASE
)
_OFFER = re.compile(rf"\b{cues(MORE_INFO)}\W+(?:\w+\W+){{0,2}}$", re.IGNORECASE)
# Asking to be told ("let me know", "tell me", "sag mir", "dis-moi"): at a sentence's start,
# a request; anywhere, what opens a question back.
_TELL_ME = ("let me know", "tell me")
_TELL_ME_ANY = any_phrase((*_TELL_ME, "sag mir", "dis-moi", "dites-moi", "dime"))
# "I need to know by Friday if you're taking it": asking to be told, its question after it
_NEED_TO_KNOW = r"(?:i|we)\s+(?:really\s+)?(?:need|have)\s+to\s+know(?=[^.!?]*\b(?:if|whether)\b)"
_LET_KNOW = re.compile(rf"^(?:also,?\s+)?(?:{_TELL_ME_ANY}\b|{_NEED_TO_KNOW})\s*", re.IGNORECASE)
_ASK_BACK = re.compile(rf"(?:^|\s){any_phrase(_TELL_ME)}\b(?:\s+(?:if|whether)\b)?", re.I)
# "Thanks (a lot | again | so much) for offering to...", "(Really) appreciate you saying you'd..."
# "Thanks Alex for volunteering to ...": the reader named between the thanks and its "for".
_THANK = (
    r"(?:(?:thanks|thank\s+(?:you|u)|thx|ty)(?:,?\s+[\w'-]+,?)??"
    r"(?:\s+(?:so\s+much|a\s+lot|again|very\s+much|a\s+ton))?"
    r"\s+for|(?:i\s+|we\s+)?(?:really\s+|truly\s+)?appreciate\s+(?:you|u))"
)
_YOU_COMMIT = re.compile(
    rf"\b(?:{_THANK}\s+(?:offering|agreeing|volunteering)\s+to"
    rf"|{_THANK}\s+(?:saying|telling\s+me"
    r"|letting\s+me\s+know)\s+(?:you|u)(?:'d|\s+would|'ll|\s+will|\s+could|\s+can)"
    r"|(?:noted\s+that|so)\s+you(?:'ll|\s+will)|you\s+said\s+you(?:'d|\s+would)"
    r"|(?:great|glad|good|nice|happy|relieved)\s+(?:that\s+)?you(?:'ll|\s+will|'re\s+going\s+to"
    r"|\s+can)"
    r"|you\s+promised(?:\s+to)?"
    # "As agreed, you'll send us ...", "per our call, you will ..."
    r"|(?:as\s+(?:agreed|discussed|promised)|per\s+our\s+(?:call|conversation|chat)),?\s+"
    r"you(?:'ll|\s+will)"
    # "Merci d'avoir proposé d'apporter ...", "gracias por ofrecerte a traer ..."
    r"|merci(?:\s+beaucoup)?\s+(?:d'avoir\s+proposé|de\s+(?:t'|vous\s+)être\s+proposée?s?)"
    r"\s+(?:de|d'|pour)"
    r"|gracias(?:\s+\w+)?\s+por\s+(?:ofrecerte|ofrecerse|haberte\s+ofrecido|comprometerte)"
    r"\s+(?:a|para))(?:\s+|(?<=')(?=\w))",
    re.IGNORECASE,
)
_I_COMMIT = re.compile(
    r"\b(?:I(?:'ll|\s+will|'m\s+going\s+to)|let\s+me(?!\s+know\b)"
    # the reader saying yes: "Sure, I can cover your Thursday shift"
    r"|(?:sure|yes|yep|yeah|of\s+course|happy\s+to\s+help)\s*[,!.]?\s+I\s+can)\s+",
    re.IGNORECASE,
)
_OPEN = any_phrase(("open", "interested", "up for", "available"))
_OPEN_TO = re.compile(rf"^be\s+{_OPEN}\s+(?:to|for|in)\s+", re.IGNORECASE)
_ABLE = any_word("willing able happy")
_WILLING = re.compile(rf"^(?:be\s+{_ABLE}\s+to|mind|possibly|also)\s+", re.IGNORECASE)
_ASK_WILLING = re.compile(
    r"^be\s+(?:willing\s+to|ok(?:ay)?\s+(?:with\s+)?(?=\w+ing\b)|fine\s+with\s+(?=\w+ing\b))\s*",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(
    r"[?!;]|(?<!\d)\.(?:\s|$)|,\s+(?:but|so|then|which|because|since|as|or|pero|mais)\b"
    r"|,\s+(?:he|she|it|they|we|i|that|this)(?:'s|'re|'m|'ll|'d|'ve|\s+(?:is|are|was|has|have|will)\b)"
    r"|,\s+(?:i|he|she|they|we)\s+(?!and\b)\w+"
    r"|\s(?:using|so\s+(?:the|you|they))\b"
    # a purpose: "send the redlines by the 15th so legal has them"
    r"|\sso\s+(?=[\w']+\s+(?:has|have|can|could|will|gets?|knows?|is|are)\b)"
    r"|,\s+(?=(?:can|could|would|will)\s+you)|\swhile\s+(?=(?:you|i|we|they|he|she)\b)"
    r"|\s(?:so\s+(?:that|i|we)|because|since|if|when|whenever|once"
    r"|quand|lorsque|cuando|wenn|sobald|damit|afin|pour\s+que|para\s+que|je\s+dois|otherwise"
    r"|dès\s+que\s+(?:tu|vous|t')|en\s+cuanto\s+(?:puedas|pueda|tengas|tenga|estés|esté)"
    r"|or\s+you|or\s+(?:else\s+)?(?:he|she|they|we|it|i)(?=\s+\w))\b|\s\(|\)"
    r"|,\s*(?=[a-z]+\s+(?:is|are|was)\b)|\s[-–—]\s",
    re.IGNORECASE,
)
# "tell me if it's a bug": for a question back, "if" opens what to answer, not a condition.
_ASK_END = re.compile(
    r"[?!;]|(?<!\d)\.(?:\s|$)|,\s+(?:but|so|then|because|since)\b|,\s+(?:it|that|this)(?:'s|\s+is)\b|\s(?:so\s+(?:that|i|we)|because"
    r"|since|quand|cuando|wenn)\b|\s\(|\)",
    re.IGNORECASE,
)
# A condition that is only politeness: the request stands ("if that works for you").
_POLITE_IF = re.compile(
    r"\s*if\s+(?:that|this|it)(?:'s|\s+is)?\s+(?:works?|ok|okay|fine|possible|easier)"
    r"|\s*if\s+(?:you\s+)?(?:can|could|possible|you\s+don't\s+mind|you\s+get\s+a\s+(?:chance|minute))"
    r"|\s*if\s+you\s+have\s+(?:a\s+)?(?:minute|moment|sec|second|chance|time)",
    re.IGNORECASE,
)
# The reader's own wish as the condition: the ask stands ("if you want it in 3.2, please
# rebase by Friday"), unlike "If this wasn't you, please reset your password".
_WISH_IF = re.compile(
    r"^if\s+(?:you|u)(?:\s+still)?(?:\s+want|\s+wish|(?:'d|\s+would)\s+like)\b"
    r"(?:[^,.;?!]|\.(?=\d)){0,80},\s*"
    r"(?:please|pls|kindly|could\s+you|can\s+you)\b",
    re.IGNORECASE,
)
# What may stand between two cues of one ask: "Könnten Sie uns diese bitte ... mitteilen?"
_PRONOUNS = {"mir", "mich", "uns", "me", "moi", "nous", "nos", "diese", "dieses", "diesen", "das",
             "es", "ihn", "ihm", "ihnen", "dir", "dich", "euch"}  # fmt: skip
# French and Spanish infinitives that open a list item: "valider le budget", "m'envoyer".
_INFINITIVE = re.compile(
    r"^(?:m'|me\s+|nous\s+)?[a-zà-ÿ]{2,}(?:er|ir|re)\s+(?:le|la|les|l'|un|une|des|du|au|à|mon|ma|mes"
    r"|ton|ta|tes|notre|votre)\b"
    r"|^[a-zá-ú]{2,}(?:ar|er|ir)(?:me|nos|lo|la|le)?\s+(?:el|la|los|las|un|una|del|al|mi|mis|tu|tus"
    r"|su|sus)\b",
    re.IGNORECASE,
)
# A German list item: its verb last ("die Folien bis Freitag schicken").
_GERMAN_ARTICLES = any_word("der die das den dem ein eine einen mir uns")
_GERMAN_ITEM = re.compile(rf"\b{_GERMAN_ARTICLES}\b.*\w(?:en|ern|eln)$")
# Looking before answering is one thing: "take a look and tell me if..." is the answer.
_LOOK = re.compile(
    r"^(?:take|have)\s+a\s+(?:quick\s+)?look(?:\s+at\s+(?:it|this|them))?$"
    r"|^(?:check|look\s+into)\s+(?:it|this|that)$",
    re.IGNORECASE,
)


_MONTHS = f"(?:{alternation(MONTH)})"
_DATE_APPOSITION = re.compile(
    rf",\s*((?:den\s+|am\s+|le\s+|el\s+)?(?:\d{{1,2}}\.?\s*(?:de\s+)?{_MONTHS}\.?"
    rf"|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?)(?:,?\s+(?:19|20)\d\d)?)\s*,",
    re.IGNORECASE,
)
_DASHED_WHEN = re.compile(
    r"^\s*[-–—]\s+(?:ideally|preferably|hopefully|if\s+possible|at\s+the\s+latest)?\s*,?\s*"
    r"(?P<when>(?:by\s+|before\s+)?[^,.;!?]{2,30})",
    re.IGNORECASE,
)
_MAX_CUES = 8
_ASIDE = re.compile(r"\s*\([^()\n]{0,200}\)")


@dataclass(frozen=True)
class Found:
    title: str
    deadline: Deadline | None
    weak: bool = False  # a bare "let me know...", which usually follows the real question
    # The evidence: the sender's sentence it was found in, and the rule that found it.
    sentence: str = ""
    rule: str = ""


def has_cue(sentence: str) -> bool:
    """Whether a sentence asks something itself (so it keeps its own deadline)."""
    return bool(_CUE.search(sentence) or _LET_KNOW.match(sentence))


def cue_of(sentence: str) -> str | None:
    """The words that make a sentence ask ("could you", "please", "let me know"), if any."""
    found = _CUE.search(sentence) or _LET_KNOW.match(sentence)
    return " ".join(found.group(0).split()).strip(" ,¿?") or None if found else None


def own_part(sentence: str) -> str:
    """The part of `sentence` its ask is in: after a clause of its own joined by "and" or
    "but" before the cue ("we need to book the vet by the 15th, and pls call your sister
    back" -> "pls call your sister back"); else the whole sentence."""
    cue = _CUE.search(sentence)
    if cue is None or not _CLAUSE_BEFORE.search(sentence[: cue.end()]):
        return sentence
    joined = list(re.finditer(r"[,;]\s+(?:and|but|also|then)\b", sentence[: cue.end()], re.I))
    return sentence[joined[-1].end() :].strip() if joined else sentence


def asks_nothing(rest: str) -> bool:
    """Whether what follows a request's cue is no to-do: a way to behave, news to keep or pass
    on, greetings to pass on, or a negated ask ("give Sam my best", "keine Rückmeldung nötig")."""
    return bool(_BEHAVE.match(rest.strip()) or _NEGATED.match(rest.strip()))


def spoken_rest(sentence: str) -> str:
    """The sentence after the name it speaks to: "Alex, can you..." -> "can you..."."""
    names, end = spoken_to(sentence)
    return sentence[end:] if names and end < len(sentence) else sentence


def is_imperative(text: str) -> bool:
    """Whether a short text is one command: a verb first, then what to do ("call me when
    free", "book the room")."""
    words = text.split()
    return bool(words) and words[0].lower().strip(",") in VERBS and not _NOT_A_REQUEST.match(text)


def in_sentence(
    sentence: str,
    listed: bool,
    subject: str,
    sender: str,
    received: dt.date | None,
    from_user: bool,
) -> list[Piece]:
    """The requests in one sentence: (title, deadline, weak), in order."""
    # "¿me mandas el contrato?": a present-tense ask, read as "¿puedes mandarme el contrato?"
    sentence = re.sub(  # not "¿me puedes / podrías mandar ...?", already a cue with its verb
        r"¿\s*me\s+(?!(?:puedes|podrías|podrias|podéis|podés|quieres)\b)([a-záéíóú]{2,}?)([ae])s\b",
        lambda m: f"¿puedes {m.group(1)}{'a' if m.group(2) == 'a' else 'e'}rme",
        sentence,
        flags=re.IGNORECASE,
    )
    sentence = _ASIDE.sub(lambda m: _aside(m.group(0), received), sentence)
    # "bis Freitag, den 6. November, den Vertrag zurücksenden": a date set off by commas beside
    # its weekday is part of the deadline, not a clause of its own
    sentence = _DATE_APPOSITION.sub(lambda m: f" {m.group(1)} ", sentence)
    if listed and re.match(
        r"^(?:you|u)(?:'ll|\s+will)\s+(?!be\b|get\b|receive\b|see\b)", sentence, re.I
    ):
        sentence = "so " + sentence  # an item of a recap: "- you'll send the quote by Nov 4"
    sentence = _courteous(sentence)
    if listed:  # "- OK the 3% volume discount for Pike Place": approve it
        sentence = _OK_THING.sub("approve ", sentence)
    if (
        re.match(r"^(?:if|si|wenn|falls)\s", sentence, re.I)
        and not _POLITE_IF.match(sentence)
        and not _WISH_IF.match(sentence)
    ):
        return []  # "If this wasn't you, please reset your password": only on that condition
    whole = whole_forms(sentence, subject, sender, received)
    if whole is not None:
        return whole
    clauses, commitment = _cue_clauses(sentence, from_user)
    weak, topic = False, subject
    if not clauses:
        clauses, weak, topic = _bare_clauses(sentence, listed, subject, received)
    out: list[Piece] = []
    for n, rest in enumerate(clauses):
        others = tuple(c for i, c in enumerate(clauses) if i != n)
        out += _clause_pieces(rest, sentence, topic, sender, received, commitment, weak, others)
    return out


# "If you could book me a hotel for the 9th, that would be great", "Et si tu pouvais me
# réserver un hôtel, ce serait top", "Si pudieras mandarme el PDF, sería genial": a request
# put as a wish, which `_courteous` reads as the question it means.
_GOOD = (
    r"(?:great|good|helpful|ideal|perfect|amazing|awesome|wonderful|lovely|brilliant|fantastic"
    r"|a\s+(?:big\s+|huge\s+)?help|top|super|génial|genial|parfait|idéal|formidable|perfecto"
    r"|estupendo|ideal|fenomenal|una\s+(?:gran\s+)?ayuda)"
)
_COURTEOUS = re.compile(
    r"^(?:and\s+|also\s+|et\s+|y\s+)?(?P<lead>if\s+(?:you|u)\s+(?:could|can|would)"
    r"|si\s+(?:tu\s+pouvais|vous\s+pouviez|tu\s+peux|vous\s+pouvez)"
    r"|si\s+(?:pudieras|pudiera|pudierais|pudieran|puedes|puede))\s+"
    r"(?P<ask>[^.?!;]{3,200}?)\s*,\s*(?:then\s+)?"
    r"(?:(?:that|it|this)(?:'d|\s+would)\s+be|(?:ce|ça|cela)\s+(?:serait|me\s+rendrait)"
    r"|(?:me\s+)?(?:sería|seria|vendría|vendria))\s+(?:really\s+|so\s+|very\s+|vraiment\s+"
    r"|très\s+|muy\s+|de\s+)?"
    rf"{_GOOD}\b",
    re.IGNORECASE,
)
_ASKED_AS = {"if": "could you", "si tu": "pourrais-tu", "si vous": "pourriez-vous"}


def _courteous(sentence: str) -> str:
    """A wish that is a request ("if you could send it Friday, that would be great") as the
    question it means ("could you send it Friday?"); any other sentence as it is."""
    found = _COURTEOUS.match(sentence)
    if found is None:
        return sentence
    lead = " ".join(found.group("lead").lower().split()[:2])
    cue = _ASKED_AS.get(lead) or _ASKED_AS.get(lead.split()[0]) or "¿podrías"
    if lead.startswith("si") and not lead.startswith(("si tu", "si vous")):
        cue = "¿podrías"
    return f"{cue} {found.group('ask')}?"


def _aside(aside: str, received: dt.date | None) -> str:
    """An aside in brackets, out of the way ("the pricing (the 3-seat version) by Friday"),
    unless it holds the deadline ("(ideally by Friday)"), whose words stay."""
    inner = aside.strip()[1:-1]
    return f" {inner}" if find_deadline(inner, received, lead_only=True) else ""


def _cue_clauses(sentence: str, from_user: bool) -> tuple[list[str], bool]:
    """What follows each request cue, up to the next one; whether a cue is a commitment."""
    cues = list(_CUE.finditer(sentence))
    commitment = False
    for cue in _YOU_COMMIT.finditer(sentence):
        if _GLAD.match(cue.group(0)) and _ATTENDING.match(sentence[cue.end() :]):
            continue  # "so glad you can come!": the reader's yes, nothing to do
        cues.append(cue)
        commitment = True
    if from_user:
        for cue in _I_COMMIT.finditer(sentence):
            cues.append(cue)
            commitment = True
    # at the same place, the longer cue first: "merci de t'être proposé pour" over "merci de"
    cues.sort(key=lambda m: (m.start(), -m.end()))
    # "kannst du mir bitte ...": a cue right after another, past only a pronoun, is the same ask
    kept = cues[:1]
    for cue in cues[1:]:
        gap = sentence[kept[-1].end() : cue.start()].split()
        if _NEGATED.match(" ".join(gap)) and not re.search(r"[,;]", " ".join(gap)):
            continue  # "please don't feel you need to reply": one negated ask
        if not gap and cue.group(0).lower().lstrip().startswith(("can", "could", "would")):
            kept[-1] = cue  # "Please can you send them?": the question is the ask
        elif not all(w.lower() in _PRONOUNS for w in gap):
            kept.append(cue)
    cues = kept[:_MAX_CUES]  # a sentence of a thousand "please"s asks no more than a few things
    clauses = []
    for i, cue in enumerate(cues):
        stop = cues[i + 1].start() if i + 1 < len(cues) else len(sentence)
        rest = sentence[cue.end() : stop]
        if re.search(r"(?:pued|podr)\w*\s+me\s+$|^¿?\s*me\s", cue.group(0), re.I):  # "¿me puedes"
            rest = "me " + rest
        rest = _infinitive_of(cue.group(0), rest)
        # "buch bitte den Raum": the verb before "bitte" belongs to the request
        if cue.group(0).strip().lower() == "bitte" and cue.start() > 0:
            head = sentence[: cue.start()].split()
            if head and head[-1].lower() not in {"du", "sie", "ihr"} and len(head) <= 2:
                rest = " ".join(head) + " " + rest  # "Gib mir bitte ...": Gib mir ...
        if rest.strip() or i + 1 == len(cues):
            clauses.append(rest)
    return [c for c in clauses if c.strip()], commitment


def _infinitive_of(cue: str, rest: str) -> str:
    """What follows a cue, its verb in the form titles use: "would be great to have X" wants X
    sent; "besoin que tu signes" -> "signer"; "necesito que me envíes" -> "enviar"; "mind
    sending" -> "send"."""
    low = cue.lower().strip()
    if low.endswith(" to") and re.match(r"^have\s", rest, re.I):
        return "send me " + rest[5:]
    if "besoin que" in low:
        irregular = _FRENCH_IRREGULAR.match(rest)
        if irregular:
            return _FRENCH_IRREGULAR_TO[irregular.group(1).lower()] + rest[irregular.end() :]
        return re.sub(r"^(\w+?)(?:es|e|iez|ez)\b", r"\1er", rest, count=1)
    if re.search(r"\bbitten?\s+(?:sie\s+)?um$", low):  # "bitten um Ihre Rückmeldung": give it
        owned = r"^(?:ihre|ihren|deine|deinen|eure|euren|eine|einen|die|den|das)\s+"
        return re.sub(owned, "", rest, flags=re.IGNORECASE) + " geben"
    if re.search(r"\b(?:necesit|agradec|pido|pedimos|ruego|rogamos)\w*\s+que$", low):
        return _spanish_infinitive(rest)
    gerund = re.match(r"^(\w+?)ing\b", rest)
    if gerund and _base(gerund.group(1)) in VERBS:
        return _base(gerund.group(1)) + rest[gerund.end() :]
    return rest


# Subjunctives whose infinitive no ending gives: "que tu relises" (relire), "que me digas"
# (decir), "que hagas" (hacer).
_FRENCH_IRREGULAR_TO = {"relises": "relire", "lises": "lire", "fasses": "faire", "fassiez": "faire",
                        "ailles": "aller", "ailliez": "aller", "écrives": "écrire",
                        "envoies": "envoyer", "envoyiez": "envoyer", "prennes": "prendre",
                        "preniez": "prendre", "viennes": "venir", "veniez": "venir",
                        "mettes": "mettre", "mettiez": "mettre", "dises": "dire", "disiez": "dire",
                        "relisiez": "relire", "lisiez": "lire", "écriviez": "écrire"}  # fmt: skip
_FRENCH_IRREGULAR = re.compile(rf"^({'|'.join(_FRENCH_IRREGULAR_TO)})\b", re.IGNORECASE)
_SPANISH_IRREGULAR_TO = {"dig": "decir", "hag": "hacer", "veng": "venir", "pong": "poner",
                         "traig": "traer", "teng": "tener", "sep": "saber", "vay": "ir",
                         "salg": "salir", "oig": "oír", "conduzc": "conducir",
                         "traduzc": "traducir", "conozc": "conocer"}  # fmt: skip
_SPANISH_IRREGULAR = re.compile(
    rf"^((?:me|nos|lo|la|los|las|le|les)\s+)?({'|'.join(_SPANISH_IRREGULAR_TO)})(?:as|a|an|amos|áis)\b",
    re.IGNORECASE,
)


def _spanish_infinitive(rest: str) -> str:
    """A subjunctive after "necesito que", "le agradecería que", "te pido que" as the
    infinitive titles use: "me envíes" / "nos enviara" -> "enviar", "lo revises" -> "revisar",
    "me digas" -> "decir"."""
    irregular = _SPANISH_IRREGULAR.match(rest)
    if irregular:
        to_sender = (irregular.group(1) or "").strip().lower() in {"me", "nos"}
        verb = _SPANISH_IRREGULAR_TO[irregular.group(2).lower()]
        return ("me " if to_sender else "") + verb + rest[irregular.end() :]
    found = re.match(
        r"^((?:me|nos|lo|la|los|las|le|les)\s+)?(\w+?)(ara|iera|ase|iese|[ae])(s|n|mos)?\b",
        rest,
        re.I,
    )
    if found is None:
        return rest
    stem = found.group(2).translate(str.maketrans("áéíóú", "aeiou"))
    ending = found.group(3).lower()
    infinitive = stem + ("ar" if ending in {"ara", "ase", "e"} else "er")
    # "me" / "nos" is the sender, whom the title names ("Mandar X a Priya"); "lo", "la": the thing
    to_sender = (found.group(1) or "").strip().lower() in {"me", "nos"}
    return ("me " if to_sender else "") + infinitive + rest[found.end() :]


_TO_SIGN = re.compile(
    r"^(?P<thing>(?:the\s+|a\s+|some\s+|\d+\s+|two\s+|three\s+)?[\w'’-]+(?:\s+[\w'’-]+){0,3}?)\s+"
    r"(?:for\s+you\s+)?to\s+(?P<verb>sign|approve|review|initial|countersign)\s*[.!]*$",
    re.IGNORECASE,
)


def _before_dash(found: re.Match[str]) -> str:
    return re.split(r"\s[-–—]{1,2}\s", found.group("when"), maxsplit=1)[0]


_SIGNED_DUE = re.compile(
    r"^(?:the\s+|your\s+)?signed\s+(?P<thing>[\w'’ -]{3,50}?)\s+(?:is\s+|are\s+)?due"
    r"(?:\s+back)?\s+(?P<when>.+)$",
    re.IGNORECASE,
)
# The Spanish imperative with its pronoun on the end: "mándame", "envíanos", "llámeme".
_ENCLITIC = re.compile(r"^[a-zñ]*[áéíó][a-zñ]*(?:me|nos)$")
# French familiar imperatives whose infinitive is not the stem and -er.
_FAMILIAR = {"envoie": "envoyer", "appelle": "appeler", "rappelle": "rappeler",
             "transmets": "transmettre", "fais": "faire", "dis": "dire"}  # fmt: skip


def _bare_clauses(
    sentence: str, listed: bool, subject: str, received: dt.date | None
) -> tuple[list[str], bool, str]:
    """A sentence with no cue that asks by its shape: (clauses, weak, topic)."""
    first = sentence.split(" ", 1)[0].lower().strip(",:")
    # "Checks to sign.", "Two invoices for you to approve": the thing, then what to do with it
    waiting = _TO_SIGN.match(sentence)
    if waiting:
        return [f"{waiting.group('verb')} {waiting.group('thing')}"], False, subject
    # "Signed application due back Nov 5": a form to sign and return by its date
    due_back = _SIGNED_DUE.match(sentence)
    if due_back and find_deadline(sentence, received):
        return (
            [f"sign and return {due_back.group('thing')} due back {_before_dash(due_back)}"],
            False,
            subject,
        )
    let_know = _LET_KNOW.match(sentence)
    if let_know and not _NOT_A_REQUEST.search(sentence):
        return ["tell me " + sentence[let_know.end() :]], True, subject
    french = re.search(r"\b(\w+)ez-(?:moi|nous)\s+", sentence, re.I)
    if french:
        return [french.group(1) + "er moi " + sentence[french.end() :]], False, subject
    # "envoie-moi le devis", "rappelle-moi": the familiar imperative with its pronoun
    familiar = re.match(r"^(?P<verb>\w+?)(?:e|s)-(?:moi|nous)\b\s*", sentence, re.I)
    if familiar and not _NOT_A_REQUEST.match(sentence):
        verb = _FAMILIAR.get(familiar.group(0).split("-")[0].lower(), familiar.group("verb") + "er")
        return [f"{verb} moi {sentence[familiar.end() :]}".strip()], False, subject
    # "Mándame el informe antes del viernes", "Confírmame antes del jueves": the imperative
    # with its pronoun on the end, accented
    if _ENCLITIC.match(first) and (listed or find_deadline(sentence, received) or len(
            sentence.split()) <= 12):  # fmt: skip
        return [sentence], False, subject
    if let_know:
        return [], False, subject
    also = re.match(r"^(?:and\s+)?(?:also|plus)\s*,?\s+|^and\s+", sentence, re.I)
    rest = sentence[also.end() :] if also else ""
    if also and (rest.split(" ", 1)[0].lower() in VERBS or rest.lower().startswith("find out")):
        return [sentence[also.end() :]], False, subject  # "And also reserve the hotel?"
    reminder = _DONT_FORGET.match(sentence)
    if reminder and sentence[reminder.end() :].split(" ", 1)[0].lower() in VERBS:
        if listed or find_deadline(sentence, received):  # "Don't forget to call Bo by 5."
            return [sentence[reminder.end() :]], False, subject
    # "Timesheets: submit by Friday", "Payroll correction sheet - sign by Friday pls"
    labelled = re.match(r"^([\w' -]{2,40}?)(?::|\s+[-–—]+)\s+(\w+)", sentence)
    colon = re.search(r"\b(?:for you|to do|asks?|things?)\b[^:]{0,60}:\s+(?=(\w+))", sentence, re.I)
    if colon and colon.group(1).lower() in VERBS:
        return [sentence[colon.end() :]], False, subject
    if first in VERBS and (listed or find_deadline(sentence, received)):
        return [sentence], False, subject
    if listed and (_INFINITIVE.match(sentence) or _GERMAN_ITEM.search(sentence.rstrip(" .!?"))):
        return [sentence], False, subject
    if labelled and labelled.group(2).lower() in VERBS and find_deadline(sentence, received):
        # "Timesheets: submit yours by Friday": the label names what the verb is about
        return [sentence[labelled.start(2) :]], False, labelled.group(1)
    if re.search(r"\b(?:pls|please)\s*[.!]?$", sentence, re.I) and len(sentence.split()) <= 12:
        return [re.sub(r"\s*\b(?:pls|please)\s*[.!]?$", "", sentence, flags=re.I)], False, subject
    return [], False, subject


# An errand done at a time, whose day is when it is due: "pick up Theo from swim on Friday",
# "bring the financials to Thursday's meeting", "drop the kids off Friday at 8". Other asks
# take their day from a lead ("by Friday"): "book a room for the workshop on Nov 10" names the
# workshop's day.
_AT_A_TIME = re.compile(
    r"^\s*(?:pick\s+(?:\S+\s+){0,3}?up|drop\s+(?:\S+\s+){0,3}?off|collect|fetch|bring|take"
    r"|walk|feed|cover)\b",
    re.IGNORECASE,
)


def _at_a_time(part: str) -> bool:
    """Whether an ask is an errand done at a time, so "on Friday" or "Friday at 5" dates it."""
    return bool(_AT_A_TIME.match(part))


# A reminder said as a negation, which still asks: "don't forget to", "do not forget to".
_DONT_FORGET = re.compile(r"^(?:don't|do\s+not|never)\s+forget\s+to\s+", re.I)


def _after_negation(rest: str) -> str:
    """What a "please don't X" asks after it: "... and bring it to IT" (the first "and" + a
    verb), else the negation itself, which asks nothing."""
    for then in re.finditer(r"\s(?:and|but)\s+(?:then\s+)?(?:please\s+)?(\w+)", rest):
        if then.group(1).lower() in VERBS:
            return rest[then.start(1) :]
    return rest


# A head that is a clause of its own, joined to the ask by "and" or "but" (", and pls call").
# The cue that follows ("pls", "could you") is short and has no comma.
_CLAUSE_BEFORE = re.compile(r"\w\W*[,;]\s+(?:and|but|also|then)\b[^,;]{0,25}$", re.IGNORECASE)


def _clause_pieces(
    rest: str,
    sentence: str,
    topic: str,
    sender: str,
    received: dt.date | None,
    commitment: bool,
    weak: bool,
    others: tuple[str, ...] = (),
) -> list[Piece]:
    """The titles of one clause (one per verb joined by "and"), each with its deadline;
    `others` are the sentence's other asks, whose deadlines are theirs ("please renew the
    domain by Thursday, and could you add Noor?": Noor has none)."""
    rest = re.sub(r"^go\s+ahead\s+and\s+", "", rest, flags=re.I)  # "go ahead and book it"
    rest = _DONT_FORGET.sub("", rest)  # "please don't forget to call the plumber": the call
    if _NEGATED.match(rest):  # "please don't use it and bring it in": only what follows asks
        rest = _after_negation(rest)
        if _NEGATED.match(rest):
            return []
    if _NOT_A_REQUEST.match(rest) or re.match(r"^(?:go\s+ahead|proceed)\W*$", rest, re.I):
        return []  # "yes, please go ahead": a permission, nothing to do
    open_to = _OPEN_TO.match(rest)
    doing = re.match(r"(\w+?)ing\b", rest[open_to.end() :]) if open_to else None
    if open_to and doing and _base(doing.group(1)) in VERBS:  # "open to introducing me"
        rest = _base(doing.group(1)) + rest[open_to.end() + doing.end() :]
    elif open_to:
        about = _clause(rest[open_to.end() :])
        return [(finish(f"Reply to {sender} about {about}", sender), None, weak)]
    if _ASK_WILLING.match(rest):  # "would you be willing to mentor one?" wants an answer
        clause = _clause(_ASK_WILLING.sub("", rest))
        clause = re.sub(r"^(\w+?)ing\b", lambda m: _base(m.group(1)), clause)
        title = finish(f"Tell {sender} whether you'll {clause}", sender)
        return [(title, find_deadline(sentence, received, lead_only=True), weak)]
    if _WILLING.match(rest):
        rest = _WILLING.sub("", rest)
        rest = re.sub(r"^(\w+?)ing\b", lambda m: _base(m.group(1)), rest)
    clause = _clause(rest)
    # "First thing Monday, could you send...": a deadline may open the sentence, before the cue
    head = sentence[: sentence.find(rest)] if rest and rest in sentence else ""
    if _OFFER.search(head):
        return []  # "For more information, please visit ...": an offer, not an ask
    around = [find_deadline(sentence, received, lead_only=True)]
    around.append(find_deadline(head, received) if head else None)
    # another ask's own deadline is not this one's
    around = [d if d and not any(d.phrase in o for o in others) else None for d in around]
    if _CLAUSE_BEFORE.search(head):
        # "we need to book the vet by the 15th, and pls call your sister back": the date is
        # the clause's before the "and", not the ask's after it
        around = [d if d and d.phrase not in head else None for d in around]
    # "approve the statement in Ramp - ideally today, the books close Monday": a dash, then when
    ideally = (
        _DASHED_WHEN.match(rest[len(clause) :]) if clause and rest.startswith(clause) else None
    )
    deadline = (
        find_deadline(clause, received, lead_on=commitment or _at_a_time(clause))
        or (find_deadline(ideally.group("when"), received) if ideally else None)
        or find_deadline(rest, received, lead_only=True)
        or around[0]
        or around[1]
    )
    after = rest[len(clause) :]
    conditional = re.match(r"\s*if\b", after, re.I) and not _POLITE_IF.match(after)
    asking = re.search(r"\b(?:me|us|know|ask|whether|see|check)$", clause.strip(), re.I)
    if conditional and not asking and not re.match(r"^(?:tell|let|confirm|check)\b", clause, re.I):
        return []
    parts = _split_and(clause)
    if len(parts) > 1 and _LOOK.match(parts[0].strip()) and _LET_KNOW.match(parts[1]):
        parts = parts[1:]
    # "approve X by tomorrow, and decide Y": a deadline stays with its own part and those
    # before it ("sign it and send it by Friday"), never the parts after it
    owner = next((i for i, p in enumerate(parts) if deadline and deadline.phrase in p), None)
    # ... but only when its own part names the same thing again ("it", "both"): "add a
    # section to the memo, and send Nadia the redlines by the 15th" dates the redlines only
    # (before its deadline: "send the redlines by the 15th so legal has them" names no other)
    shared = owner is not None and bool(
        _SAME_THING.search(parts[owner].split(deadline.phrase)[0] if deadline else parts[owner])
    )
    out: list[Piece] = []
    for i, part in enumerate(parts):
        if _BEHAVE.match(part.strip()):  # "please be careful ... and use the side door"
            continue
        if i:  # "update the pricing sheet and send it to finance": "it" is the sheet
            part = _named_back(part, parts[i - 1])
        carried = deadline if owner is None or i == owner or (i < owner and shared) else None
        lead_on = commitment or _at_a_time(part)
        part_deadline = find_deadline(part, received, lead_on=lead_on) or carried
        made = make_title(_from_verb(part), part_deadline, topic, sender)
        if made and (made.split()[0].lower() in _NOT_A_VERB or _is_statement(made)):
            made = None  # "Packed lunch, please - no nuts", "Row 14 is yours": no action
        if made:
            out.append((made, part_deadline, weak))
    return out


# What no imperative opens with in English: a preposition, an article, a negation ("with admin
# access restart it", "on your side look at it", "no nuts").
# A statement, not an imperative: "Row 14 is yours", "Slides are in the drive".
_STATEMENT = re.compile(r"^\S+(?:\s+\S+){0,2}\s+(?:is|are|was|were)\b", re.IGNORECASE)


def _is_statement(title: str) -> bool:
    """Whether an English title says how things are ("Row 14 is yours"), its first word no
    verb, rather than what to do."""
    return title.split()[0].lower() not in VERBS and bool(_STATEMENT.match(title))


_NOT_A_VERB = frozenset("on with no not the a an in at for and or but so ever if when".split())


def _from_verb(part: str) -> str:
    """A part that opens with a word no imperative opens with, from its first verb on
    ("someone with admin access restart it" -> "restart it"); else as it is."""
    words = part.split()
    if not words or words[0].lower() not in _NOT_A_VERB:
        return part
    verb = next((i for i, w in enumerate(words) if w.lower().strip(",") in VERBS), None)
    return part if verb is None else " ".join(words[verb:])


_SAME_THING = re.compile(r"\b(?:it|them|this|these|both|everything|all\s+of\s+it)\b", re.I)
_IT = re.compile(r"^(\w+)\s+(?:it|them)\b", re.IGNORECASE)
_OBJECT = re.compile(r"^\s*(\w+)\s+((?:the|a|an|your|our|my|this|these)\s+[^,;]+?)\s*$", re.I)


def _named_back(part: str, before: str) -> str:
    """A part whose object is "it" or "them", with the thing the part before names, when
    that part is a verb and its object ("update the pricing sheet")."""
    pronoun, obj = _IT.match(part), _OBJECT.match(before)
    if not pronoun or pronoun.group(1).lower() not in VERBS or not obj:
        return part
    if obj.group(1).lower() not in VERBS or find_deadline(obj.group(2), None) is not None:
        return part
    return f"{pronoun.group(1)} {obj.group(2)}{part[pronoun.end() :]}"


def _base(stem: str) -> str:
    """The base form of a gerund's stem: look(ing), mak(ing) -> make, runn(ing) -> run,
    introduc(ing) -> introduce."""
    if stem + "e" in VERBS:
        return stem + "e"
    if len(stem) > 2 and stem[-1] == stem[-2]:
        return stem[:-1]
    if stem.endswith(("k", "v", "z")) and not stem.endswith(("ck", "lk", "nk", "ok", "rk")):
        return stem + "e"
    return stem


_FIND_OUT_FIRST = re.compile(
    r"^(?:find\s+out|check(?:\s+with\s+\S+)?|ask\s+\S+|tell\s+(?!me\b)\S+|confirm)\b", re.I
)
# what asks a question of its own, the wh-clause after it its object ("... and find out if")
_FIND_OUT = re.compile(r"\b(?:find\s+out|check(?:\s+with\s+\S+)?|ask\s+\S+|confirm)\s*$", re.I)
_WH = re.compile(r"when|if|whether", re.IGNORECASE)


def _clause(text: str) -> str:
    colon = re.match(
        r"^(?:do\s+)?(?:these|this|the following|two things|three things)[^:]{0,40}:\s+", text, re.I
    )
    if colon:
        return text[colon.end() :].rstrip(" ?.!")
    ask = _ASK_BACK.search(text)
    if ask and (ask.start() == 0 or re.search(r"\s(?:if|whether)$", ask.group(0), re.I)):
        end = _ASK_END.search(text, ask.end())
    else:
        end = _CLAUSE_END.search(text)
        # "find out from Camille when they plan to pay": the question is what to find out
        asking, asking_or = bool(_FIND_OUT_FIRST.match(text)), False
        while end and _WH.fullmatch(end.group(0).strip()):
            before = text[: end.start()]
            if not (asking or _FIND_OUT.search(before) or (asking_or and before.endswith(" or"))):
                break
            asking_or, end = True, _CLAUSE_END.search(text, end.end())
    clause = text[: end.start()] if end else text
    # "renew the seats by Friday, the current invoice lapses...": the deadline closes it
    due = find_deadline(clause, None, lead_only=True)
    after = re.match(r"\s*,\s+(?:and\s+|then\s+)?(\w+)", clause[due.end :]) if due else None
    if due is not None and after and after.group(1).lower() not in VERBS:
        clause = clause[: due.end]  # "..., the current invoice lapses"; not "..., review the SOW"
    return clause


_OK_THING = re.compile(
    r"^(?:ok|okay)\s+(?=(?:the|this|that|these|our|a|an|his|her|their|my)\s)", re.IGNORECASE
)
_CALL_FIRST = re.compile(r"^\W*(?:call|phone|ring|contact|email|e-mail|text|ask)\b", re.IGNORECASE)


def _split_and(clause: str) -> list[str]:
    """`update X, and ping Y` or `order X, add Y and set up Z`: one part per verb; not when
    the verb after "and" only takes a pronoun (`sign it and send it back`)."""
    parts = re.split(r",?\s+and\s+(?=(\w+)\b)|,\s+(?=(\w+)\b)", clause)
    pieces = [p for p in parts if p is not None]
    out = [pieces[0]]
    i = 1
    while i < len(pieces):
        word, text = pieces[i], pieces[i + 1] if i + 1 < len(pieces) else ""
        i += 2
        if (
            len(out[-1].split()) > 1
            and word.lower() in VERBS
            and not re.match(
                r"^\w+\s+(?:it|them|this)(?:\s+(?:back|over|up|off))?(?:\s+to\s+\S+)?$", text, re.I
            )
            and not AND_RETURN.match(" and " + text)
            and not re.match(r"^(?:get|report|circle|come)\s+back|^follow\s+up", text, re.I)
            # "call Ridgeway Heating and get them out for the service": what the call is for
            and not (
                _CALL_FIRST.match(out[-1]) and re.match(r"^\w+\s+(?:them|him|her)\b", text, re.I)
            )
        ):
            out.append(text)
        else:
            joiner = " and " if f" and {text}" in clause else ", "
            out[-1] = out[-1] + joiner + text
    return out
