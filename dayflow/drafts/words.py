"""The words of a draft that no model wrote: the offline template, the language a mail is in,
and the user's voice (its form only) read from their own sent mail.

The template is short and honest: it greets the sender by name, quotes what they asked, and
leaves `[your answer]` where only the user knows what to say; nothing is promised or made up.
It is written in the language of the mail, among the four the offline model reads (English,
German, French, Spanish); `[your answer]` stays the same in all four, so it is found.

The voice is the form of the user's recent sent mail: how they greet, how they sign off, how
long they write and in which language. Never a sentence of what they wrote.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

ANSWER = "[your answer]"
LANGUAGES = ("en", "de", "fr", "es")

_WORDS = {
    "en": "the and you your is are to of for with this that please could can would what when",
    "de": "der die das und ist nicht ich du sie wir bitte könntest können wann was mit für",
    "fr": "le la les et est vous tu nous pour avec pas une des merci pourriez quand que",
    "es": "el la los las y es usted tú nosotros para con por favor podrías cuándo qué una",
}
_INDEX = {lang: set(words.split()) for lang, words in _WORDS.items()}

_TEMPLATE = {
    "en": ("Hi {name},", "Thanks for your message. You asked:", "Best,"),
    "de": ("Hallo {name},", "danke für deine Nachricht. Du hast gefragt:", "Viele Grüße"),
    "fr": ("Bonjour {name},", "merci pour ton message. Tu demandais :", "Bien à toi,"),
    "es": ("Hola {name}:", "gracias por tu mensaje. Preguntabas:", "Un saludo,"),
}
_NO_NAME = {"en": "Hi,", "de": "Hallo,", "fr": "Bonjour,", "es": "Hola:"}


_DAYS = {
    "en": "Mon Tue Wed Thu Fri Sat Sun",
    "de": "Mo. Di. Mi. Do. Fr. Sa. So.",
    "fr": "lun. mar. mer. jeu. ven. sam. dim.",
    "es": "lun mar mié jue vie sáb dom",
}
_MONTHS = {
    "en": "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec",
    "de": "Jan. Feb. März Apr. Mai Juni Juli Aug. Sept. Okt. Nov. Dez.",
    "fr": "janv. févr. mars avr. mai juin juil. août sept. oct. nov. déc.",
    "es": "ene feb mar abr may jun jul ago sept oct nov dic",
}
# The line above a quote, as the mail programs of each language write it (Gmail's forms).
_ATTRIBUTION = {
    "en": "On {day} {d} {month} {y} at {hm}, {who} wrote:",
    "de": "Am {day}, {d}. {month} {y} um {hm} schrieb {who}:",
    "fr": "Le {day} {d} {month} {y} à {hm}, {who} a écrit :",
    "es": "El {day}, {d} {month} {y} a las {hm}, {who} escribió:",
}


def attribution(when: dt.datetime, who: str, language: str) -> str:
    """The line above the quoted message, in `language` (English outside LANGUAGES), with
    day and month names of its own: never the machine's locale."""
    lang = language if language in _ATTRIBUTION else "en"
    return _ATTRIBUTION[lang].format(
        day=_DAYS[lang].split()[when.weekday()],
        d=when.day,
        month=_MONTHS[lang].split()[when.month - 1],
        y=when.year,
        hm=when.strftime("%H:%M"),
        who=who,
    )


def language_of(text: str) -> str:
    """The language of `text` among LANGUAGES (English when it cannot tell)."""
    words = re.findall(r"[^\W\d_]+", text.lower())[:400]
    scores = {lang: sum(w in index for w in words) for lang, index in _INDEX.items()}
    best = max(LANGUAGES, key=lambda lang: (scores[lang], lang == "en"))
    return best if scores[best] > 0 else "en"


def first_name(name: str, address: str = "") -> str:
    """The name a greeting uses: the first word of a display name (`Müller, Anna` -> Anna),
    else nothing (an address is not a name)."""
    name = " ".join(name.replace('"', " ").split())
    if "," in name:
        name = name.split(",", 1)[1].strip() or name
    word = name.split(" ", 1)[0] if name else ""
    return word if word and "@" not in word else ""


def template(name: str, ask: str, language: str) -> str:
    """The offline model's draft: a greeting by name, the ask quoted, `[your answer]`."""
    lang = language if language in _TEMPLATE else "en"
    hello, asked, bye = _TEMPLATE[lang]
    greeting = hello.format(name=name) if name else _NO_NAME[lang]
    said = " ".join(ask.split())[:400]
    quoted = f"\n\n{asked}\n> {said}" if said else ""
    return f"{greeting}{quoted}\n\n{ANSWER}\n\n{bye}"


@dataclass(frozen=True)
class Voice:
    """The form of the user's sent mail: its usual greeting word, sign-off line, length in
    words (the median) and language, and from how many messages."""

    greeting: str | None
    sign_off: str | None
    words: int
    language: str
    messages: int

    def to_json(self) -> dict[str, object]:
        return {
            "greeting": self.greeting,
            "sign_off": self.sign_off,
            "typical_words": self.words,
            "language": self.language,
            "from_sent_messages": self.messages,
            "note": "the form of the user's own recent mail (never its content): greet, sign "
            "off, keep the length and write in the language the way they do",
        }


_GREETING = re.compile(r"^([^\W\d_]{2,12})(?:\s+[^\W\d_][\w'-]{0,30})?\s*[,:!]?$")
_SIGN_OFF = re.compile(r"^[^\W\d_][\w' -]{1,30}[,!.]?$")


def voice_of(texts: Iterable[str]) -> Voice | None:
    """The voice of the user's sent `texts` (their own words: quotes already left out); None
    when there are none."""
    greetings: Counter[str] = Counter()
    sign_offs: Counter[str] = Counter()
    lengths: list[int] = []
    languages: Counter[str] = Counter()
    count = 0
    for text in texts:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if not lines:
            continue
        count += 1
        lengths.append(len(" ".join(lines).split()))
        languages[language_of(text)] += 1
        first = _GREETING.match(lines[0]) if len(lines[0]) <= 40 else None
        if first is not None and len(lines) > 1:
            greetings[first.group(1)] += 1
        if len(lines) > 1:
            last = lines[-2] if len(lines[-1].split()) == 1 and len(lines) > 2 else lines[-1]
            if _SIGN_OFF.match(last) and len(last.split()) <= 4:
                sign_offs[last] += 1
    if not count:
        return None
    lengths.sort()
    return Voice(
        greetings.most_common(1)[0][0] if greetings else None,
        sign_offs.most_common(1)[0][0] if sign_offs else None,
        lengths[len(lengths) // 2],
        languages.most_common(1)[0][0],
        count,
    )


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_ASKING = re.compile(
    r"\b(?:please|could you|can you|would you|let me know|bitte|könntest|kannst du|können sie|"
    r"pourriez|pourrais|peux-tu|merci de|por favor|podrías|puedes|podría)\b",
    re.IGNORECASE,
)
_HELLO = re.compile(r"^(?:hi|hello|hey|dear|hallo|liebe[rs]?|bonjour|salut|hola|buenos)\b", re.I)


def ask_of(text: str) -> str:
    """The sentence of `text` (the sender's own words) that asks: the first question, else
    the first request ("please", "könntest du"...), else the first sentence."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not _HELLO.match(ln.strip())]
    sentences = [s.strip() for s in _SENTENCE.findall(" ".join(lines)) if len(s.strip()) > 2]
    for wanted in (lambda s: s.endswith("?"), lambda s: bool(_ASKING.search(s))):
        found = next((s for s in sentences if wanted(s)), None)
        if found is not None:
            return found
    return sentences[0] if sentences else ""
