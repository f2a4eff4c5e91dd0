"""A promise's words as a to-do a person would write (issue 35 part 3): "I'll send you the
seasonal staffing summary (headcount, hours) by Wednesday, once Marcus signs" is "Send
seasonal staffing summary".

What goes, in English: the first person ("I'll", "I will", "let me", and "will" after a
greeting) and a hedge-free adverb after it ("also", "just"); the date the due date already
carries; an aside in brackets; a clause that says when or why rather than what ("once ...",
"so we can ...", ", with the new rates"); "you" or "over" after a verb of sending ("send you
the", "send over the") and "the"; "I'll have it to you" and "I'll get you the figures" are
"Send", and so is a thing made and sent ("write up a reference and get it to you"). Another
"you" is the person's first name ("get back to you" is "Get back to Hana"). In German, French
and Spanish the first person and the date go, and a verb of the promise's list is made its
infinitive ("te envío el informe" is "Enviar el informe", "je vous enverrai" is "Envoyer").
Pure text."""

from __future__ import annotations

import re

# The first person of a promise, and an adverb that does not hedge it.
_FIRST = re.compile(
    r"^(?:I(?:'ll|\s+will|\s+shall|'m\s+going\s+to|\s+am\s+going\s+to|\s+can)|will|let\s+me)\s+"
    r"(?:(?:also|just|then|first|definitely|certainly|gladly|happily|personally|quickly|now"
    r"|still)\s+)?",
    re.IGNORECASE,
)
# "I'll have the analysis to you tomorrow", "get it to you": a delivery.
_HAVE_TO_YOU = re.compile(
    r"^(?:have|get)\s+(?!back\b)(.+?)\s+(?:over\s+)?to\s+you\b", re.IGNORECASE
)
# A thing made to be sent: "write up a reference and get it to you" is "Send a reference".
_MADE_TO_SEND = re.compile(
    r"^(?:write(?:\s+up)?|draft|put\s+together|pull\s+together|prepare|type\s+up|scan|finish)"
    r"\s+(.+?)\s+and\s+(?:get|send|email|forward)\s+(?:it|them|that|this)\s+(?:over\s+|back\s+)?"
    r"to\s+you\b",
    re.IGNORECASE,
)
# A verb of sending and the "you" or "over" after it: "send you the", "send over the".
_SEND_YOU = re.compile(
    r"^((?:send|get|forward|e-?mail|give|bring|mail|text|pass|hand|show|shoot)(?:\s+back)?)"
    r"(?:\s+(?:you|over))+\b",
    re.IGNORECASE,
)
_BRACKETS = re.compile(r"\s*\([^()]*\)|\s*\[[^\[\]]*\]")
# Where the what ends and a when, why or aside begins.
_TAIL = re.compile(
    r"\s*,\s*(?:with|along\s+with|don't|do\s+not|no\s+need|so|once|when|after|as|but|which"
    r"|since|because|just|hopefully|assuming)\b.*$"
    r"|\s+(?:once|as\s+soon\s+as|so\s+that|so\s+(?:we|you|I|they|he|she|it)|because|since"
    r"|after\s+(?:the|I|we|you|it|that|he|she|they)|when\s+(?:the|I|we|you|it|that|he|she|they)"
    r"|before\s+(?:I|we|you|he|she|they))\b.*$",
    re.IGNORECASE,
)
_FIRST_THING = re.compile(r"\bfirst\s+thing(?:\s+in\s+the\s+morning)?\b", re.IGNORECASE)
_DANGLING = re.compile(r"(?:[\s,;:-]+|\s+(?:and|or|to|for|on|by|at|in)$)+$", re.IGNORECASE)
_ENGLISH = re.compile(r"^(?:I\b|I'|will\b|let\s+me\b)", re.IGNORECASE)

# The forms the other languages' promises are said in (`promises._CUES_OTHER`), and each
# one's infinitive: what a to-do list says.
_INFINITIVES = {
    # es
    "envío": "enviar", "enviaré": "enviar", "mando": "mandar", "mandaré": "mandar",
    "confirmo": "confirmar", "aviso": "avisar", "escribo": "escribir", "llamo": "llamar",
    "llamaré": "llamar", "paso": "pasar", "pasaré": "pasar", "traigo": "traer",
    "traeré": "traer", "llevo": "llevar", "llevaré": "llevar", "devuelvo": "devolver",
    "devolveré": "devolver", "comento": "comentar", "comentaré": "comentar", "digo": "decir",
    "diré": "decir", "reviso": "revisar", "compruebo": "comprobar", "hablo": "hablar",
    "pregunto": "preguntar", "miro": "mirar", "preparo": "preparar", "hago": "hacer",
    # fr
    "enverrai": "envoyer", "envoie": "envoyer", "reviens": "revenir", "reviendrai": "revenir",
    "vérifie": "vérifier", "regarde": "regarder", "confirme": "confirmer",
    "apporterai": "apporter", "apporte": "apporter", "rappellerai": "rappeler",
    "rappelle": "rappeler", "appellerai": "appeler", "appelle": "appeler",
    "transmettrai": "transmettre", "transmets": "transmettre", "ferai": "faire",
    "prépare": "préparer", "préparerai": "préparer", "rendrai": "rendre",
    "encargo": "encargarme", "ocupo": "ocuparme", "occupe": "m'occuper",
}  # fmt: skip
# The first person and the reader as its object, before the verb: "te", "je vous", "ich".
_PRONOUNS = re.compile(
    r"^(?:(?:yo|je|j'|ich)\s*)?(?:(?:te|le|les|os|lo|la|me|m'|vous|t'|l'|lui|leur)\s*)*",
    re.IGNORECASE,
)
# What goes before an infinitive that follows: "puedo traer", "voy a enviar", "je vais".
_BEFORE_INFINITIVE = re.compile(
    r"^(?:(?:yo\s+)?(?:puedo|voy\s+a|vamos\s+a)|je\s+(?:vais|peux)\s+(?:vous\s+|te\s+|t'|l'|les\s+|lui\s+)?)\s*",
    re.IGNORECASE,
)


def imperative(words: str, deadline: str | None, whom: str) -> str:
    """`words` (a promise, from its first person on) as a to-do: see the module; `deadline`
    is the phrase its due date was read from (dropped), `whom` the person it was made to."""
    text = _BRACKETS.sub("", words)
    if deadline:
        text = text.replace(deadline.strip(" ,.;"), " ", 1)
    text = " ".join(_FIRST_THING.sub(" ", text).split())
    english = bool(_ENGLISH.match(text))
    text = _TAIL.sub("", text) if english else text
    text = _DANGLING.sub("", _english(text, whom) if english else _other(text))
    text = _DANGLING.sub("", text)
    return (text[:1].upper() + text[1:]) if text else words


def _english(text: str, whom: str) -> str:
    text = _FIRST.sub("", text)
    text = _MADE_TO_SEND.sub(r"send \1", text)
    text = _HAVE_TO_YOU.sub(r"send \1", text)
    text = re.sub(r"^get\s+you\b", "send", text, flags=re.IGNORECASE)  # "get you the figures"
    text = _SEND_YOU.sub(r"\1", text)
    first = whom.split()[0] if whom.split() else "them"
    text = re.sub(r"\byour\b", f"{first}'s", text)
    text = re.sub(r"\byou\b", first, text)
    return re.sub(r"\bthe\s+", "", text)


# German: "ich schicke Ihnen den Bericht" is "den Bericht schicken", the verb last; "ich
# werde ... schicken" has it there already; a separable particle goes back on ("bringe ...
# mit" is "mitbringen"); the reader and "mich" as objects go.
_GERMAN = re.compile(
    r"^(?:ich\s+(?P<verb>\w+e)|(?P<verb2>\w+e)\s+ich|ich\s+werde)\b\s*(?P<rest>.*)$", re.IGNORECASE
)
_GERMAN_OBJECT = re.compile(r"\b(?:Ihnen|dir|euch|dich|mich)\s*", re.IGNORECASE)
_PARTICLE = re.compile(r"\s+(mit|an|vor|ein|zurück|vorbei)$", re.IGNORECASE)


def _german(found: re.Match[str]) -> str:
    rest = _GERMAN_OBJECT.sub("", found.group("rest")).strip()
    verb = found.group("verb") or found.group("verb2")
    if verb is None:  # "ich werde ... schicken"
        return rest
    particle = _PARTICLE.search(rest)
    if particle:
        rest = rest[: particle.start()]
    infinitive = (particle.group(1).lower() if particle else "") + verb.lower() + "n"
    return f"{rest} {infinitive}".strip()


def _other(text: str) -> str:
    """A promise in German, French or Spanish: its infinitive, where it is one of the forms
    the promises are said in (German's verb last); else the words as they are."""
    if german := _GERMAN.match(text):
        return _german(german)
    if before := _BEFORE_INFINITIVE.match(text):
        return text[before.end() :]
    rest = _PRONOUNS.sub("", text)
    verb, _, after = rest.partition(" ")
    infinitive = _INFINITIVES.get(verb.lower())
    if infinitive is None:
        return text
    return f"{infinitive} {after}".strip()
