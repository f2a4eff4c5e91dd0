"""What a message asks of the reader, as to-do titles with their deadlines: plain rules over
sentences, in English, German, French and Spanish.

`requests_in` reads the sender's own words (the caller strips quoted history) one sentence at a
time (`_sentences`) and finds every request in it (`_clauses`): a question or a plea addressed
to the reader ("could you", "please", "kannst du", "tu peux", "¿puedes"), an imperative in a
list, an invitation, a commitment the reader made, and a terse request ("Approve?", "RSVP by
Wednesday", "call me when free"). A sentence spoken to someone else ("Marcus, can you...")
is not the reader's. Nothing here knows any message; every rule is about the language of
requests.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace

from dayflow.dates import (
    Deadline,
    alternation,
    any_date,
    any_phrase,
    find_deadline,
    refers_back,
)
from dayflow.providers.offline._broadcast import for_everyone
from dayflow.providers.offline._clauses import (
    Found,
    asks_nothing,
    cue_of,
    has_cue,
    in_sentence,
    is_imperative,
    own_part,
    spoken_rest,
)
from dayflow.providers.offline._sentences import (
    Sentence,
    addressed_elsewhere,
    addressed_when_copied,
    sentences,
    spoken_to,
    without_signoff,
)
from dayflow.providers.offline._service import for_the_visit
from dayflow.providers.offline._titles import (
    INVITE,
    VERBS,
    clean_subject,
    event,
    finish,
    gerund,
    strip_articles,
)

# What a note for information and a sentence that all is clear both say, in four languages.
_JUST_INFO = alternation(("zur info", "pour info", "para tu información", "solo para informarte"))
_NOTHING_TO_DO = (
    alternation(("you don't need to do anything", "ihr müsst nichts", "rien à faire"))
    # "nothing you need to do", "nothing you have to change on your end"
    + r"|nothing\s+(?:(?:else|more)\s+)?(?:that\s+)?(?:you|u)\s+(?:need|have)\s+to\s+\w+"
)
_FYI = re.compile(
    rf"\bfyi\b|\bno action\b|nothing (?:is )?needed|{_NOTHING_TO_DO}|{_JUST_INFO}"
    r"|for your information|no (?:need to|reply needed)|no hace falta"
    r"|for (?:visibility|your awareness|your records)|looping you in"
    r"|keeping you in the loop|cc'?(?:ing|ed)? (?:you|\w+) (?:for|so)\b"
    r"|\bcc(?:'d|'ed|ed) (?:here )?(?:for|so)\b",  # "Alex cc'd for visibility"
    re.IGNORECASE,
)
# "No action is needed from you" said in full in each language: "Aucune action n'est requise de
# votre côté", "Es ist keine Aktion erforderlich", "No es necesario que hagas nada".
_NO_ACTION_SAID = (
    r"\bno action is (?:needed|required)|aucune action n'est (?:requise|nécessaire|demandée)"
    r"|(?:vous n'avez|tu n'as) rien à faire|rien n'est (?:requis|demandé) de (?:votre|ta) part"
    r"|keine (?:aktion|handlung|reaktion) (?:ist )?(?:erforderlich|nötig|notwendig)"
    r"|(?:sie müssen|du musst|ihr müsst) nichts (?:tun|unternehmen|machen)"
    r"|no (?:es necesario|hace falta) que (?:hagas|haga|hagan) nada|no (?:tienes|tiene|tienen)"
    r" que hacer nada"
)
# "Heads up: ..." warns; what follows may still ask ("Can you send it over?"), so it marks only
# its own sentence, and a snippet that opens with it is still opened.
_HEADS_UP = re.compile(r"\bheads[- ]up\b", re.IGNORECASE)
_ALL_CLEAR = re.compile(
    rf"^(?:fyi|just (?:a note|so you know|to let you know)|{_JUST_INFO})\b"
    rf"|\bno action (?:needed|required)|nothing (?:is )?needed|{_NOTHING_TO_DO}"
    r"|no need to do anything|no hace falta que hagas nada"
    rf"|{_NO_ACTION_SAID}",
    re.IGNORECASE,
)
_NEWSLETTER = re.compile(
    r"(?m)unsubscribe|you are receiving this|you're getting|manage (?:your )?(?:email )?preferences"
    # "Este mensaje se ha generado automáticamente", "message généré automatiquement"
    r"|(?:automatically|auto-)generated|generated automatically|generado automáticamente"
    r"|mensaje automático|(?:généré|envoyé) automatiquement|message automatique"
    r"|automatisch (?:generiert|erstellt|versendet|versandt)"
    r"|notification preferences|this is an automated message|replies are not monitored"
    r"|abmelden|se désinscrire|darse de baja|view (?:it )?(?:online|in your browser)"
    r"|all rights reserved|privacy policy|terms of (?:service|use)|©|do not reply to this"
    r"|track (?:your|the) (?:package|order|shipment)"
    r"|this (?:e-?mail|message) was sent(?! to (?:all|every|each)\b)"  # not "to all leaders"
    r"|thanks? (?:you )?for (?:your )?(?:order|purchase|shopping|signing up)"
    r"|mentioned you in|assigned (?:\S+ )?to you\b"
    # a chat or a neighbourhood app's digest of others' posts: "Open Slack | Notification
    # settings", "See all posts near you"
    r"|(?:^|\|)\s*(?:notification|email) settings\s*$|see all (?:posts|messages|replies|activity)"
    r" (?:near you|in|on)\b"
    # a shop's reminder of a cart left behind: "You left something in your cart"
    r"|(?:left|still have) (?:something|\w+ items?|items?) in your (?:cart|basket|bag)"
    r"|complete your (?:purchase|order|checkout)"
    # the same notices in German, French and Spanish: a parcel to track, a no-reply sender
    r"|sendung (?:verfolgen|nachverfolgen)|antworten sie (?:bitte )?nicht auf diese"
    r"|suivre (?:votre|ton) (?:colis|commande)|ne (?:pas )?répon(?:dez|ds) pas à (?:ce|cet)"
    r"|seguir (?:tu|su) (?:paquete|pedido|envío)|no (?:respondas|responda|conteste|contestes)"
    r" a este (?:mensaje|correo)",
    re.IGNORECASE,
)
# A sentence that is a service's boilerplate, whoever sends it: "click the link below".
_BOILERPLATE = re.compile(
    r"(?:log|sign) in to (?:view|see|read|respond)|click(?:ing)? (?:the link|here|below|the button)"
    r"|(?:confirm|verify) your (?:e-?mail|account)|satisfaction survey|we value your feedback"
    r"|how did we do|rate your (?:recent )?(?:stay|order|visit|experience)|register (?:now|today"
    r"|here)|sign up (?:now|today)|upgrade now|learn more|read more|shop now|buy now"
    # a service's button "Get started", not a person's "so we can get started on the plan"
    r"|^get started\b|\bget started (?:now|today|for free|with (?:your|our|a free))\b"
    r"|claim your|redeem|shared (?:a|the) (?:document|file|folder) with you"
    # a service's call to its own survey: "take our 2-minute survey", "tell us about your stay"
    # (not "please fill in the staff survey by Friday", a colleague's ask)
    r"|\b(?:take|complete|fill (?:out|in)|start|answer) (?:our|this|a)(?: [\w-]+){0,3} survey"
    r"|tell us (?:about|how) (?:your|was your) (?:experience|stay|visit|flight|trip|order|purchase)"
    r"|(?:an|bei) (?:unserer|der) (?:kurzen )?umfrage teil|répondre à (?:notre|ce|un) (?:court )?"
    r"(?:questionnaire|sondage)"
    r"|(?:responder|completar|contestar) (?:nuestra|la) (?:breve )?encuesta",
    re.IGNORECASE,
)
# Someone else's words reported in quotation marks: 'Linda from Elm Road: "Please slow down!"',
# 'Priya wrote: "can someone restock the gauze?"', 'Jonas schreibt: „Bitte ...“': a post
# relayed to the reader, not an ask of theirs.
_REPORTED = re.compile(
    r"^[^\"“”«»„:]{1,80}?(?::|\b(?:says?|said|wrote|writes|posted|posts|asks?|asked|commented"
    r"|schreibt|schrieb|fragt|écrit|dit|demande|escribe|escribió|dice|pregunta)\s*:?)\s*[\"“«„]",
    re.IGNORECASE,
)
_NO_DEADLINE: Deadline | None = None
_NO_ACTION = re.compile(
    r"\bno (?:action|reply|response) (?:is )?(?:needed|required)\b|\bnothing (?:for you )?to do\b"
    r"|\bkein(?:e)? (?:handlungsbedarf|aktion nötig)\b|\baucune action (?:requise|nécessaire)\b"
    r"|\bno (?:se )?requiere (?:ninguna )?acción\b"
    rf"|{_NO_ACTION_SAID}",
    re.IGNORECASE,
)
# A heading over a list of what is done or decided, not asked ("Decisions", "Shipped:").
# A heading over a list of tips ("Tips to save:", "Ein paar Tipps:", "Nos conseils :"): its
# items advise, they do not ask.
_TIPS_HEADING = re.compile(
    r"^\s*(?:[\w'-]+\s+){0,3}?(?:tips|hints|tipps|conseils|astuces|consejos|trucos)\b[^:]{0,40}:\s*$",
    re.IGNORECASE,
)
_DONE_HEADING = re.compile(
    r"^\s*(?:decisions?(?: made)?|decided|shipped(?: this week)?|done|completed|released|resolved"
    r"|beschlüsse|entscheidungen|erledigt|décisions|décidé|livré|decisiones|acuerdos|hecho)\s*:?\s*$",
    re.IGNORECASE,
)
_REPLY = re.compile(r"^\s*(?:re|aw|sv|rv|tr)\s*:", re.IGNORECASE)
# A meeting system's or a person's invitation in the body: "X is inviting you to a meeting".
_INVITED = any_phrase(
    ("is inviting you to", "has invited you to", "invited you to", "you're invited to",
     "you are invited to", "vous invite à", "te invita a")
)  # fmt: skip
# A calendar tool's answer buttons: Outlook's "Accept | Tentative | Decline" (in plain text
# "Accept    Tentative    Decline", spaced apart), Google's "Going? Yes - Maybe - No", Teams'
# "Accept · Decline"; the same three in German, French and Spanish.
_APART = r"(?:\s*[|·•]\s*|[ \t]{2,})"  # a bar or a dot between two buttons, or a wide gap


def _buttons(accept: str, maybe: str, decline: str) -> str:
    return rf"{accept}(?:{_APART}(?:{maybe}{_APART})?|[ \t]+{maybe}[ \t]+){decline}"


_BUTTONS = "|".join(
    (
        _buttons("accept", "tentative", "decline"),
        r"going\s*\??\s*yes\s*[-|·•]\s*maybe\s*[-|·•]\s*no",
        _buttons("zusagen", r"mit\s+vorbehalt", "absagen"),
        _buttons("accepter", "provisoire", "refuser"),
        _buttons("aceptar", "quizás", "rechazar"),
    )
)
_BODY_INVITE = re.compile(
    rf"\b(?:{_INVITED}|(?:lädt|lade|laden)\s+(?:dich|sie|euch)\s+(?:\w+\s+)?(?:zu|ein)|{_BUTTONS})\b",
    re.IGNORECASE,
)
# A calendar tool's notice about an invitation, which asks nothing of the reader.
_NOTICE = re.compile(
    r"^\s*(?:updated\s+invitation|cancel+ed|accepted|declined|tentative(?:ly\s+accepted)?"
    r"|abgesagt|angenommen|abgelehnt|annulé|accepté|refusé|cancelad[oa]|aceptad[oa]|rechazad[oa])"
    r"(?:\s+event)?\s*:",
    re.IGNORECASE,
)
_ANSWER = re.compile(
    r"\b(?:reply|respond|rsvp|answer|confirm|accept|let\s+me\s+know|bescheid|zusagen|absagen"
    r"|zu\s+oder\s+ab|antworte\w*"
    r"|confirmer|répondre|confirmar|responder)\b",
    re.IGNORECASE,
)
_ANSWERS = re.compile(r"^(?:reply\s+to|rsvp\s+to)\b", re.IGNORECASE)  # an invitation's answer
# A request for an answer ("Confirm whether ...", "Confirmar a Rosa si ...", "... bestätigen"),
# whose reply-by may come two sentences later: "Si puedes, dime antes del martes."
_CONFIRMS = re.compile(
    r"^(?:confirm|tell|confirmar|decir|confirmer|dire)\b|\b(?:bestätigen|sagen)$", re.IGNORECASE
)
# An ask that is only for the answer: "Let Anjali know", "Tell Priya", "Reply to Sam".
_ONLY_ANSWER = re.compile(r"^(?:let\s+\S+\s+know|tell\s+\S+|reply\s+to\s+\S+)$", re.IGNORECASE)
_TELL_ME = re.compile(
    r"\b(?:let\s+(?:me|us)\s+know|tell\s+(?:me|us)|dime|d[ií]game|av[ií]s[ae]me|dis-moi|dites-moi"
    r"|sag\s+mir|sagen\s+sie\s+mir|gib\s+mir\s+bescheid)\b",
    re.IGNORECASE,
)
# "I need three things from you:", "necesito dos cosas:", "ich brauche zwei Dinge von dir:".
_NEEDERS = (
    r"(?:i|we)(?:'ll|\s+will|'d)?\s+(?:need|want)"
    r"|^\W*(?:need|want)(?=\s+(?:a|two|three|four|some)\b)"  # "Need a few things from you:"
    r"|(?:i'm|i\s+am|we're)\s+asking(?:\s+you)?\s+for"
    r"|necesit[oa]\w*|(?:te|le|les|os)\s+(?:pido|pedimos)|brauche\w*|benötige\w*|bräuchte\w*"
    r"|(?:je|nous)\s+(?:te|vous)\s+demand\w*"
)
_NEEDED = ("thing", "things", "item", "items", "cosa", "cosas", "dinge", "sachen", "choses",
           "from you", "de ti", "von dir", "de toi")  # fmt: skip
_NEEDS_INTRO = re.compile(
    rf"(?P<need>\b(?:{_NEEDERS}|j'ai\s+besoin))\b[^:]{{0,80}}\b(?:{alternation(_NEEDED)})\b[^:.?!]{{0,40}}:"
    r"(?P<items>.*)$"
    # "Two requests ahead of the committee:", "A couple of asks for you:": what follows is asked
    r"|^\W*(?P<asks>(?:two|three|four|five|a\s+few|a\s+couple\s+of|several|\d)\s+"
    r"(?:(?:quick|small|more)\s+)?(?:requests|asks|favou?rs))\b[^:.?!]{0,80}:(?P<listed>.*)$",
    re.IGNORECASE,
)
# Where the items of "I need two things from you: X, and Y" part.
_ITEMS = re.compile(r",?\s+and\s+(?=(?:a|an|the|your|some)\s)|;\s*|,\s+(?=(?:a|an|the|your)\s)")
# "a yes or no on the discount they asked for": a decision, not a thing to send.
_DECISIONS = ("yes or no", "yes/no", "decision", "go/no-go", "go/no go", "call")
_DECIDE_ON = re.compile(
    rf"^(?:a\s+|your\s+)?(?:{alternation(_DECISIONS)})\s+(?:on|about)\s+(?:the\s+)?(?P<on>.+?)"
    r"(?:\s+(?:they|he|she|you|we|i)\s+\w+(?:\s+(?:for|about))?)?$",
    re.IGNORECASE,
)
_WITHIN = re.compile(r"^(?:within|in)\s", re.IGNORECASE)
# An ask whose thing is a pronoun ("Can you approve it by Wednesday?"), and a sentence before
# it that names the thing it means.
_IT = re.compile(r"\b[a-z]+\s+(?:it|them)\b(?!\s+(?:is|was|will|would|'s))", re.IGNORECASE)
_SET_BEFORE = re.compile(
    r"^(?:the|our|your|my|this|a)\s+(?P<thing>[\w' -]{3,60}?)\s+(?:is|are)\s+"
    r"(?:attached|enclosed|below|ready|in\s+(?:the|your)\s+\w+(?:\s+\w+)?)[.!]?$",
    re.IGNORECASE,
)
_ATTACHED_IS = re.compile(
    r"^(?:attached|enclosed|below)\s+(?:is|are)\s+(?:the|our|my|a)\s+(?P<thing>[\w' -]{3,60}?)"
    r"[.!]?$",
    re.IGNORECASE,
)
# A verb in the simple past ("passed", "failed", "broke"), not a passive's participle after
# its auxiliary ("must be scheduled") nor a word that only ends so ("need", "Wed").
_PAST = re.compile(
    r"\b(?<!\bbe\s)(?<!\bbeen\s)(?<!\bis\s)(?<!\bare\s)(?<!\bget\s)(?<!\bgot\s)"
    r"(?:(?!\w*eed\b)[a-z]{3,}ed|went|came|broke|left|ran|took|found|saw|told|said|fell"
    r"|blew|froze|hit|forgot|did|had|made|caught|began|lost|sent|brought|bought|threw|woke"
    r"|rang|drove|flew|gave|wrote|spoke|stood|shook|sank|burst|tore|wore|stole|struck|slid)\b",
    re.IGNORECASE,
)
_OBLIGED = re.compile(
    r"\b(?:must|need(?:s|ed)?|has\s+to|have\s+to|had\s+to|should|required|due|deadline)\b", re.I
)
_SOON_WORD = re.compile(r"^(?:asap|as\s+soon|right\s+away|immediately|within|urgent)", re.I)
_SUITS = re.compile(
    r"^\s*(?:would\s+be|is|works?|should\s+be)\s+(?:\w+\s+)?"
    r"(?:ideal|perfect|great|best|fine|good|enough|plenty)\b",
    re.IGNORECASE,
)
# A sentence after an ask that only states its deadline: "By Nov 9 would be ideal", "Ideally
# by Monday", "Friday would be great", "Monday at the latest".
_IDEALLY = re.compile(
    r"^(?:ideally|preferably|if\s+(?:at\s+all\s+)?possible|at\s+the\s+latest)\s*,?\s+", re.I
)
_LATEST = re.compile(
    r"^\s*,?\s*(?:(?:at\s+the\s+(?:very\s+)?latest|latest|if\s+(?:at\s+all\s+)?possible|ideally"
    r"|please|pls|thanks?|thank\s+you)\s*[,.!]*\s*)*[.!]*\s*$",
    re.IGNORECASE,
)
# A deadline the ask takes from a meeting it comes before ("Ahead of the finance committee on
# the 12th, could you ..."): a sentence stating the ask's own deadline wins over it.
_AHEAD_OF = re.compile(r"^(?:before|ahead\s+of|prior\s+to)\s", re.IGNORECASE)
# What points at a list below instead of naming a thing: "the following", "these", "below".
_AHEAD = re.compile(
    r"\b(?:the\s+following(?:\s+(?:things?|items?|tasks?|steps?|points?|to-?dos?))?"
    r"|(?:these|this\s+list\s+of|the)\s+(?:things?|items?|tasks?|steps?|to-?dos?)(?:\s+below)?"
    r"|(?:what|everything)\s+(?:is\s+)?(?:listed\s+)?below|folgendes|folgende\s+(?:punkte|dinge)"
    r"|ce\s+qui\s+suit|les\s+points\s+suivants|lo\s+siguiente|las\s+siguientes\s+cosas)\b",
    re.IGNORECASE,
)
_MAX_FOUND = 20
_LOOK_AHEAD = 12  # how many sentences after a needed item may give it its deadline
_PLAIN_WORDS = frozenset(
    "the and for you your our one two three four five any all some from with this that these"
    " those can will".split()
)
_TOPIC = re.compile(r"^\s*(?:topic|subject|sujet|thema|asunto|tema)\s*:\s*(.+)$", re.I | re.M)
_POINTER = re.compile(
    r"^(?:(?:i\s+|we\s+)?(?:want|need)\s+)?(?:both|all|each|these|everything|i'd\s+like|ideally)"
    r"|\b(?:it|them|these|those)\b",
    re.I,
)
# Someone else needing the thing asked for, by its pronoun: "La embajada las pide antes del
# jueves", "le consulat les demande avant jeudi", "the bank needs them by the 5th": the
# deadline is the ask's, however long the sentence.
_THEY_NEED_IT = re.compile(
    r"\b(?:lo|la|los|las)\s+(?:pide|piden|necesita|necesitan|quiere|quieren|exige|exigen)\b"
    r"|\b(?:le|la|les)\s+(?:demande|demandent|veut|veulent|exige|exigent)\b"
    r"|\b(?:needs?|wants?|asks?\s+for|requires?)\s+(?:it|them)\b",
    re.I,
)
# A terse ask for news ("any updates?", "¿novedades?"), and one for a decision ("y/n?").
_NEWS = any_phrase(
    ("eta", "status", "update", "any update", "any updates", "any news", "progress", "news",
     "stand", "statut", "novedades", "¿novedades", "cómo va", "¿cómo va")
)  # fmt: skip
# "ETA?", "Any update on the deck?": on a thing of up to three words
_STATUS = re.compile(
    rf"^(?:{_NEWS}|where\s+are\s+we)(?:\s+(?:on|for|sur|zu|de)(?P<on>(?:\s+[\w'-]+){{1,3}}))?\s*\??$",
    re.IGNORECASE,
)
_URL = re.compile(r"<?https?://\S+>?")
_YES_OR_NO = any_phrase(("yes or no", "y/n", "yay or nay", "in or out"))
_DECIDE = re.compile(rf"\b(?:{_YES_OR_NO}|go\s*/\s*no[- ]go)\b", re.I)
_NEED_IT = re.compile(r"^(?:i\s+|we\s+)?need\s+(?:this|it|these|them|that)\b", re.IGNORECASE)
_THOUGHTS = ("thoughts", "feedback", "comments", "opinion", "opinions", "wdyt", "what do you think",
             "any thoughts", "views", "any feedback", "any comments", "your thoughts", "ideas",
             "any ideas", "des idées", "tu en penses quoi", "qu'en penses-tu", "was denkst du",
             "deine meinung", "ideen", "¿ideas", "¿qué te parece", "qué te parece", "des avis",
             "ton avis", "votre avis", "meinung",
             "was meinst du", "qué opinas", "¿qué opinas", "opiniones")  # fmt: skip
_SIGN_OFF = re.compile(
    r"^(?:(?:your|any)\s+)?(?:final\s+)?(?:sign[- ]?off|approval|ok|okay|go[- ]ahead"
    r"|green\s+light|freigabe|validation|visto\s+bueno)\s*\?$",
    re.IGNORECASE,
)
# "Sign-off?", "Final sign-off?" on its own (not a bare "Ok?", which may only answer)
_SIGN_OFF_ASKED = re.compile(r"^(?:(?:your|any|final)\s+)*sign[- ]?off\s*\?$", re.IGNORECASE)
_SHORT_THOUGHTS = re.compile(rf"^(?:{alternation(_THOUGHTS)})\b[^.!]{{0,25}}\??$", re.IGNORECASE)


# An invitation a service relays for a person ("Tessa Morgan via Paperless Post"): the
# service's footer and no-reply address, but a person asks for the answer.
_RELAYED = re.compile(
    r"\b(?:has\s+sent\s+you\s+an\s+invitation|(?:has\s+)?invited\s+you\b|is\s+inviting\s+you\b"
    r"|you(?:'re|\s+are)\s+invited)",
    re.IGNORECASE,
)
# "Lena Brooks has invited you to a Zoom meeting: Thesis panel prep": the event's name is last.
_YOU_INVITED = re.compile(
    r"^(?:you(?:'re|\s+are)\s+invited\s+(?:to\s+)?|invitation\s*:\s*"
    r"|[^:]{1,60}?\b(?:has\s+invited|is\s+inviting)\s+you\s+to\s+(?:a|an)\s+(?:scheduled\s+)?"
    r"(?:\w+\s+)?(?:meeting|call|event)\s*:\s*)",
    re.I,
)


def relayed_invitation(text: str, subject: str, received: dt.date | None) -> list[Found]:
    """The RSVP of an invitation relayed by a service for a person, when it asks for one."""
    if not _RELAYED.search(text) or not _ANSWER.search(text) or _NOTICE.match(subject):
        return []
    name = _YOU_INVITED.sub("", clean_subject(subject)).strip(" !.") or event(subject)
    found = Found(f"RSVP to {name}"[:80], _reply_by(text, received))
    return _evidenced([found], text, subject, "an invitation relayed for a person")


def says_fyi(text: str, *, warning: bool = True) -> bool:
    """Whether `text` says it asks nothing ("FYI", "no action needed", "zur Info"); with
    `warning`, a "heads up" counts too. A release that goes on to ask ("no need to reply, but
    please send the invoice") is none."""
    fyi = _FYI.search(text)
    if fyi and (but := _BUT.search(text, fyi.end())) and has_cue(text[but.end() :]):
        fyi = None
    return bool(fyi or (warning and _HEADS_UP.search(text)))


# What turns a release into an ask: "no need to reply, but please send ...", "..., aber bitte".
_BUT = re.compile(r"[,;]?\s+(?:but|though|aber|mais|pero)\b", re.IGNORECASE)


def requests_in(
    text: str,
    subject: str,
    sender: str,
    received: dt.date | None,
    *,
    from_user: bool,
    automated: bool = False,
    reader: str | None = None,
    copied_to: tuple[str, ...] | None = None,
    office: bool = False,
    to_group: bool = False,
) -> list[Found]:
    """Every request (or commitment) in `text`, the sender's own words; `sender` is the name
    titles use for "me", `from_user` whether the reader wrote it, `reader` the reader's first
    name (a sentence spoken to another name is not the reader's), `copied_to` the names the
    message is to when the reader is only in Cc (then only what names the reader is theirs),
    `office` whether the sender is an office ("Facilities Services"), not a person, `to_group`
    whether it reached the reader through a group address (then only the reader's own asks
    are tasks, `for_everyone`)."""
    invite = INVITE.match(subject.strip())
    if invite and not re.match(r"^(?:updated|cancel|accepted|declined)", subject, re.I):
        event_name = invite.group("event").strip()
        lead = _reply_by(text, received) or find_deadline(text, received)
        rsvp = Found(f"RSVP to {event_name}"[:80], lead if lead and lead.due else None)
        return [replace(rsvp, sentence=subject.strip(), rule="an invitation (its subject)")]
    if automated and not _NOTICE.match(subject) and _ANSWER.search(text):
        # A meeting system's invitation from its no-reply address ("Olivia Grant is inviting
        # you to a scheduled Zoom meeting", "You are invited to ...") that asks for the answer.
        invited = _body_invitation(text, subject, received)
        if invited:
            return _evidenced(invited, text, subject, "an invitation from a meeting system")
    if automated or _NEWSLETTER.search(text) or says_fyi(subject):
        return []
    text = without_signoff(text, sender)
    if (invited := _body_invitation(text, subject, received)) is not None:
        return _evidenced(invited, text, subject, "an invitation in the body")
    greeted = spoken_to(text.strip())[0]
    said = sentences(text)  # the sender's own sentences: what a request's evidence quotes
    if from_user and greeted:  # the reader's own mail: "you" is the person it greets
        text = re.sub(r"\byou\b", greeted[0], text)
    found_sentences = sentences(text)
    if len(said) != len(found_sentences):
        said = found_sentences
    elsewhere = addressed_elsewhere(found_sentences, None if from_user else reader)
    if copied_to is not None and not from_user:  # the reader only in Cc: theirs when named
        copied = addressed_when_copied(found_sentences, copied_to, reader)
        elsewhere = [a or b for a, b in zip(elsewhere, copied, strict=True)]
    if reader and any(_copied_for_info(x.text, reader) for x in found_sentences):
        return []  # "Alex cc'd for visibility": the reader is told it is for their information
    if (clear := _all_clear(found_sentences, elsewhere, reader)) is None:
        return []
    done_list, list_due = False, _NO_DEADLINE  # under a "Decisions" heading; a list's date
    found: list[Found] = []
    needs: str | None = None  # "I need three things from you:" over the list that follows
    asked: set[int] = set()  # the sentences that asked something themselves
    needed: set[str] = set()  # the words of the needed things listed so far
    pointed: int | None = None  # the paragraph of a "do the following:" over its to-do list
    answering: set[int] = set()  # the sentences that may only ask to answer a question before
    list_start = 0  # where the tasks of the latest list begin in `found`
    for n, sentence in enumerate(found_sentences):
        if len(found) >= _MAX_FOUND:  # a message asks a few things; the rest is not read
            break
        if sentence.listed and (n == 0 or not found_sentences[n - 1].listed):
            list_start = len(found)
        ahead = _dates_before(found_sentences, n, len(found), list_start, received)
        if ahead is not None:  # a deadline of the asks before it, not a task of its own
            start, due = ahead
            found[start:] = [f if f.deadline else replace(f, deadline=due) for f in found[start:]]
            continue
        if (
            says_fyi(sentence.text)
            or _BOILERPLATE.search(sentence.text)
            or elsewhere[n]
            or _REPORTED.match(sentence.text)
        ):
            continue
        plain = spoken_rest(sentence.text)
        if not sentence.listed:  # "Two things before our QBR on the 5th, please:" dates its list
            done_list = bool(_DONE_HEADING.match(plain) or _TIPS_HEADING.match(plain))
            heads = plain.endswith(":") or _opens_inline_list(
                plain, sentence, found_sentences[n + 1 :]
            )
            list_due = find_deadline(plain, received, lead_only=True) if heads else None
        if (clear or (done_list and sentence.listed)) and not has_cue(plain):
            continue
        intro = _NEEDS_INTRO.search(plain)
        before = len(found)
        if sentence.listed and needs is not None:
            later = found_sentences[n + 1 : n + 1 + _LOOK_AHEAD]
            items = _needed_item(plain, needs, later, sender, received)
            if list_due is not None:  # "Before the inspection on 11/4 I need from you: - ..."
                items = [i if i.deadline else replace(i, deadline=list_due) for i in items]
            found += _quoting(items, said[n], "an item of a list of needs")
            needed |= _content(plain)
            continue
        if not sentence.listed and needed & _content(plain) and not has_cue(plain):
            continue  # "Summary and plan by Friday, please": the needed things' deadline
        if intro:
            needs = intro.group("need") or intro.group("asks")
        elif not sentence.listed:
            needs = None
        if intro and (intro.group("items") or "").strip():  # "I need two things from you: X, Y."
            needs = None
            for item in _ITEMS.split(intro.group("items").strip(" .")):
                items = _needed_item(item, intro.group("need"), [], sender, received)
                found += _quoting(items, said[n], "a list of needs")
        if _points_ahead(plain, sentence, found_sentences[n + 1 : n + 2]):
            pointed = sentence.paragraph  # "Please do the following by Friday:": its items ask
            continue
        if not sentence.listed and sentence.paragraph != pointed:
            pointed = None
        if n - 1 in asked and pleaded_deadline(plain, received) is not None:
            continue  # "Thursday at the latest, please.": the ask before it, dated
        if found and _PRONOUN_NEED.match(plain):
            # "¿me puede firmar una carta? ... la necesito para el jueves": the ask before it
            dated = find_deadline(plain, received)
            if dated is not None and found[-1].deadline is None:
                last = found[-1]
                found[-1] = Found(last.title, dated, last.weak, last.sentence, last.rule)
            continue
        named = _named_before(found_sentences[n - 1].text) if n and _IT.search(plain) else None
        pieces = in_sentence(plain, sentence.listed, named or subject, sender, received, from_user)
        if not pieces and n and n - 1 not in asked and _BARE_DECISION.match(plain):
            # "SCEA is asking us to comp the AV ($1,850). Yes or no?": the sentence before it
            previous = found_sentences[n - 1]
            if previous.paragraph == sentence.paragraph or sentence.listed is False:
                decided = _decision_on(previous.text, plain, sender)
                if decided is None and _APPROVE_ASKED.match(plain):
                    # "$640 with the case discount. Approve?": what the subject names
                    decided = finish(f"Approve {clean_subject(subject)}", sender)
                pieces = [(decided, None, False)] if decided else []
        if n in answering:  # "Let us know by Wednesday" after the question it dates
            pieces = [p for p in pieces if not _ONLY_ANSWER.match(p[0])]
        if sentence.listed and pointed is not None:
            pieces = pieces[:1]  # one to-do an item: "Take a look at X, suggest Y and add them"
        for title, deadline, weak in pieces:
            if deadline is None and _ANSWERS.match(title):  # "Does the 10th work? Let me
                next_two = " ".join(s.text for s in found_sentences[n + 1 : n + 3])
                deadline = _reply_by(next_two, received)  # know by Thursday.": its reply-by
            elif deadline is None and _CONFIRMS.search(title):
                deadline = _tell_me_by(found_sentences[n + 1 : n + 3], received)
            elif deadline is None and plain.rstrip().endswith("?"):
                # "Can you and Sam come? Let us know by Wednesday.": the question's reply-by,
                # and the "let us know" is the same ask
                answer = _answer_by(found_sentences[n + 1 : n + 3], received)
                if answer is not None:  # only the sentence that dates it, not its neighbour
                    deadline, after = answer
                    answering.add(n + 1 + after)
            if deadline is not None and _AHEAD_OF.match(deadline.phrase) and not sentence.listed:
                # "Ahead of the committee on the 12th, could you ...? By Nov 9 would be ideal."
                following = found_sentences[n + 1].text if n + 1 < len(found_sentences) else ""
                deadline = _only_deadline(following, received) or deadline
            if deadline is None and sentence.listed and _WHENEVER.search(plain):
                pass  # "- approve the design whenever you get a sec": not the lead-in's date
            elif deadline is None and _ANSWERS.match(title):
                # an answer to an invitation is due when it says so, not when the event is
                deadline = sentence.listed and list_due or None
            elif deadline is None:
                deadline = (sentence.listed and list_due) or _carried(
                    found_sentences, n, received, subject, asked
                )
            found.append(
                Found(title, deadline, weak, spoken_rest(said[n].text), _rule(plain, sentence))
            )
        if len(found) > before:
            asked.add(n)
    if any(not f.weak for f in found):  # "let me know what you think" after the question
        found = [f for f in found if not f.weak]
    asked_everyone = bool(found)
    # "Hi all, use the side door"; to all-staff@, "please bring a water bottle"
    group = to_group and not from_user
    found = for_everyone(found, found_sentences, office=office, group=group, reader=reader)
    found = for_the_visit(found, text, subject)  # "Please bring your order number and photo ID"
    if not asked_everyone and not any(elsewhere) and not _BOILERPLATE.search(text):
        found = _terse(text, subject, sender, received, reply=bool(_REPLY.match(subject)))
        found = _evidenced(found, text, subject, "a terse request")
    # Any request a rule above gave no sentence still carries one: the first of the sender's.
    return _unique(_evidenced(found, text, subject, "a request"))


def _opens_inline_list(plain: str, sentence: Sentence, after: list[Sentence]) -> bool:
    """Whether `sentence` is the unfinished opening of a list numbered inline in its paragraph
    ("Before Thursday's meeting, could you (1) prepare ... and (2) send ..."): its lead
    deadline dates the items."""
    return (
        bool(after)
        and after[0].listed
        and after[0].paragraph == sentence.paragraph
        and not plain.rstrip().endswith((".", "?", "!"))
    )


def _points_ahead(plain: str, sentence: Sentence, after: list[Sentence]) -> bool:
    """Whether `sentence` only points at the list that follows it ("please do the following:",
    "bitte Folgendes erledigen:", "merci de faire ce qui suit :"): each item is a request of
    its own, and the pointer is none."""
    return (
        not sentence.listed
        and plain.rstrip().endswith(":")
        and bool(after and after[0].listed)
        and bool(_AHEAD.search(plain))
    )


def _quoting(found: list[Found], sentence: Sentence, rule: str) -> list[Found]:
    """`found` with `sentence` (the sender's, without the name it opens with) as evidence."""
    return [replace(f, sentence=spoken_rest(sentence.text), rule=rule) for f in found]


def _rule(plain: str, sentence: Sentence) -> str:
    """The rule's name a request in `sentence` is found by, as `dayflow why` shows it."""
    cue = cue_of(plain)
    if cue:
        return f'a request ("{cue[:40]}")'
    return "an imperative in a list" if sentence.listed else "an imperative"


def _evidenced(found: list[Found], text: str, subject: str, rule: str) -> list[Found]:
    """`found` with its evidence where a rule over the whole text found it: the first of the
    sender's sentences (or the subject, when the text has none), and `rule`."""
    said = sentences(text)
    first = said[0].text if said else subject.strip()
    return [f if f.sentence else replace(f, sentence=first, rule=rule) for f in found]


def _body_invitation(text: str, subject: str, received: dt.date | None) -> list[Found] | None:
    """An invitation said in the body ("has invited you to", answer buttons), its RSVP; None
    when the body is no invitation or a notice about one ("Declined: ...")."""
    if (
        not _BODY_INVITE.search(text)
        or re.search(r"\b(?:accepted|declined)\b", text, re.I)
        or _NOTICE.match(subject)
    ):
        return None
    topic = _TOPIC.search(text)
    name = topic.group(1).strip() if topic else event(subject)
    return [Found(f"RSVP to {name}"[:80], _reply_by(text, received))]


def _all_clear(found: list[Sentence], elsewhere: list[bool], reader: str | None) -> bool | None:
    """An all-clear said to the reader (not "Nadia - fyi, nothing needed"): None when one near
    the top settles the message; True when one further down leaves only outright asks."""
    cleared = [
        bool(_ALL_CLEAR.search(s.text) or _NO_ACTION.search(s.text))
        and not elsewhere[n]
        and not any(name.lower() != str(reader).lower() for name in spoken_to(s.text)[0])
        for n, s in enumerate(found)
    ]
    if any(cleared[n] and _ALL_CLEAR.search(s.text) for n, s in enumerate(found[:3])):
        return None
    return any(cleared)


def _dates_before(
    said: list[Sentence], n: int, found: int, list_start: int, received: dt.date | None
) -> tuple[int, Deadline] | None:
    """(where in the tasks found so far they start, the deadline) when sentence `n` dates the
    asks before it and asks nothing itself: "Please return both by Nov 13" right after a list
    (its items, from `list_start`), "Want both before I talk to the mayor Thursday" after two
    asks or more (all of them); else None."""
    if not n or said[n].listed:
        return None
    plain = spoken_rest(said[n].text)
    both = _BOTH_BY.match(plain)
    if both is not None:
        if not said[n - 1].listed:
            return None
        start = list_start
    elif found >= 2 and (both := _WANT_BOTH.match(plain)) is not None:
        start = 0
    else:
        return None
    if found <= start:
        return None
    parts = both.groupdict()
    due = find_deadline(parts.get("rest") or parts.get("rest2") or "", received, lead_only=True)
    return (start, due) if due is not None else None


# A sentence after a list that dates its items: "Please return both by Nov 13", "send them
# all back to me before Friday", "I need everything by the 5th".
_BOTH_BY = re.compile(
    r"^(?:please\s+|pls\s+|and\s+)?(?:(?:return|send|submit|get)\s+(?:me\s+)?(?:both|all\s+"
    r"(?:three|four|of\s+them|of\s+these)|them(?:\s+all)?|these|everything)(?:\s+back)?"
    r"(?:\s+to\s+me)?|(?:i|we)\s+need\s+(?:both|them|all\s+of\s+them|everything))\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_WANT_BOTH = re.compile(
    r"^(?:i\s+|we\s+)?(?:want|need|would\s+like)\s+(?:both|them\s+both|all\s+of\s+(?:them|it))"
    r"\s+(?P<rest>.+)$|^both\s+(?P<rest2>(?:by|before|ahead\s+of)\b.+)$",
    re.IGNORECASE,
)
_FOR_INFO = (
    r"(?:for\s+(?:visibility|(?:your\s+)?info(?:rmation)?|awareness|reference|the\s+record)"
    r"|fyi|so\s+(?:you|he|she|they)(?:'re|\s+are|\s+is)?\s+(?:know|knows|aware|in\s+the\s+loop))"
)


def _copied_for_info(sentence: str, reader: str) -> bool:
    """Whether a sentence tells that the reader is copied only to know: "Alex cc'd for
    visibility", "cc'ing Alex so she's aware", "Alex in cc for info"."""
    name = re.escape(reader)
    return bool(
        re.search(
            rf"\b{name}\b\s+(?:is\s+)?(?:cc(?:'d|'ed|ed)|in\s+cc|copied)\s+(?:here\s+)?{_FOR_INFO}"
            rf"|\bcc(?:'?ing|'d|ed)?\s+{name}\b\s+(?:here\s+)?{_FOR_INFO}",
            sentence,
            re.IGNORECASE,
        )
    )


# A question that only asks for the reader's yes on what the sentence before it says: "Yes or
# no?", "Y/N?", "OK to approve?", "Approve?", "Your call?", "Go ahead?"
_BARE_DECISION = re.compile(
    r"^\W*(?:(?:so,?\s+)?(?:yes\s+or\s+no|y/n|yay\s+or\s+nay|your\s+call|go\s+ahead|ok(?:ay)?"
    r"(?:\s+(?:to\s+(?:approve|proceed|go(?:\s+ahead)?|sign|pay)|with\s+(?:you|that)))?"
    r"|approve(?:\s+(?:it|this))?|(?:can|shall|should)\s+(?:we|i)\s+(?:approve|proceed|go\s+ahead))"
    r"|ja\s+oder\s+nein|oui\s+ou\s+non|¿?s[ií]\s+o\s+no)\s*\?\s*$",
    re.IGNORECASE,
)
_APPROVE_ASKED = re.compile(r"^\W*(?:ok(?:ay)?\s+to\s+)?approve(?:\s+(?:it|this))?\s*\?\s*$", re.I)
_ASKED_TO = re.compile(
    r"\b(?:is|are|was)\s+asking\s+(?:us|you|me)\s+to\s+(?P<do>[^.;!?()]{3,80})", re.I
)
_STATED = re.compile(
    r"^(?P<np>(?:the\s+|our\s+|their\s+|this\s+)?[^.;!?]{3,80}?)\s+(?:is|are|was|were|came|comes"
    r"|come|costs?|ran|runs|needs?|went|goes|attached|enclosed)\b",
    re.IGNORECASE,
)


def _decision_on(statement: str, question: str, sender: str) -> str | None:
    """The to-do of a bare yes-or-no on a statement: "Decide whether to comp the AV for the
    reception" (asked to do), "Approve linen rental overage for the gala" (a thing stated)."""
    approve = re.search(r"\b(?:approve|ok|okay|proceed|go\s+ahead|sign|pay)\b", question, re.I)
    asked = _ASKED_TO.search(statement)
    if asked:
        return finish(f"Decide whether to {asked.group('do').strip()}", sender)
    stated = _STATED.match(statement.strip(" -*•"))
    if stated is None:
        return None
    thing = strip_articles(stated.group("np"))
    return finish(f"Approve {thing}" if approve else f"Decide on {thing}", sender)


# A need of "it", the thing asked for before: "I need it by Friday", "la necesito para el
# jueves", "ich brauche es bis Montag", "j'en ai besoin pour lundi".
_PRONOUN_NEED = re.compile(
    r"^\W*(?:(?:and\s+|but\s+|y\s+|pero\s+|und\s+|et\s+)?(?:(?:i|we)(?:'ll|\s+will|'d)?\s+"
    r"(?:really\s+|still\s+)?need\s+(?:it|them|this|that)|(?:lo|la|los|las)\s+necesit\w+"
    r"|(?:ich|wir)\s+(?:brauche|brauchen|benötige|benötigen)\s+(?:es|sie|ihn|das)"
    r"|(?:j'en\s+ai|nous\s+en\s+avons|on\s+en\s+a)\s+besoin))\b",
    re.IGNORECASE,
)
# What says no deadline: "whenever you get a sec", "when you have a minute", "no rush".
_WHENEVER = re.compile(
    r"\b(?:whenever\s+you\s+(?:get|have|can)|when\s+you\s+(?:get|have)\s+a\s+(?:sec|second|minute"
    r"|moment|chance)|no\s+rush|no\s+hurry|in\s+your\s+own\s+time)\b",
    re.IGNORECASE,
)
# A sentence stating a thing's deadline, not asking: "they need it by November 4", "it's due
# Friday", "the deadline is the 9th".
_DUE_STATED = re.compile(
    r"\b(?:needs?\s+(?:it|them|this|that)|(?:it's|it\s+is|they're|they\s+are)\s+due|deadline\s+is"
    r"|(?:has|have)\s+to\s+be\s+(?:in|back|done|signed|returned))\b",
    re.IGNORECASE,
)
_ALL_OF_THEM = re.compile(r"\b(?:both|all\s+(?:three|four|of\s+(?:them|these|it))|each)\b", re.I)


_SIGNATURE_ON = re.compile(
    r"^(?:your\s+|a\s+|the\s+)?(?P<kind>signature|sign-?off|approval)\s+(?:on|of|for)\s+(?P<what>.{3,80})$",
    re.IGNORECASE,
)


def _needed_item(
    item: str, need: str, after: list[Sentence], sender: str, received: dt.date | None
) -> list[Found]:
    """One item of a list of needs: a request of its own ("que me mandes la lista" after
    "necesito dos cosas:"), or a thing to send, due when a later sentence names it with a
    deadline ("Bio and headshot by Friday")."""
    if re.match(r"^(?:que|dass)\s", item, re.I):
        item = f"{need} {item}"
    pieces = in_sentence(item, True, "", sender, received, False)
    if pieces:
        return [Found(title, deadline, weak) for title, deadline, weak in pieces]
    thing = re.split(r"\s*[(:;]|,\s", item.rstrip(" .!?"))[0]
    decide = _DECIDE_ON.match(thing)
    # "signature on the annual certification", "OK to bring in two mechanics", "approval
    # of the budget": a thing to sign or approve, not to send
    signed, allowed = _SIGNATURE_ON.match(thing), _OK_TO_DO.match(thing + "?")
    if signed or allowed:
        if signed:
            what = strip_articles(signed.group("what"))
            verb = {"signature": "Sign", "approval": "Approve"}.get(signed.group("kind").lower())
            title = finish(f"{verb or 'Sign off on'} {what}", sender)
        else:
            assert allowed is not None
            doing = f"{gerund(allowed.group('verb'))} {allowed.group('obj')}"
            title = finish(f"Approve {doing}", sender)
        return [Found(title, find_deadline(item, received, lead_only=True))]
    title = finish(
        f"Decide on {decide.group('on')}" if decide else f"Send {thing} to {sender}", sender
    )
    deadline = find_deadline(item, received, lead_only=True)
    if deadline is not None and deadline.phrase in thing:  # "the budget by Friday"
        thing = thing.replace(deadline.phrase, " ").strip()
        title = finish(f"Send {thing} to {sender}", sender) if not decide else title
    words = _content(thing)
    for sentence in after:
        if deadline is None and not sentence.listed:
            # "Bio and headshot by Friday", "I'd like both by Friday": the thing, or all of them
            named = words & _content(sentence.text) or _ALL_OF_THEM.search(sentence.text)
            deadline = find_deadline(sentence.text, received, lead_only=True) if named else None
    return [Found(title, deadline)] if thing else []


def _content(text: str) -> set[str]:
    """The words of 3+ letters that name something ("bio", "headshot"), lowercased."""
    return {w.lower() for w in re.findall(r"[^\W\d_]{3,}", text)} - _PLAIN_WORDS


def _reply_by(text: str, received: dt.date | None) -> Deadline | None:
    """An invitation's own deadline ("please reply by Thursday"), not the meeting's time: a
    lead in the sentence that asks for the answer."""
    for sentence in sentences(text):
        if _ANSWER.search(sentence.text):
            lead = find_deadline(sentence.text, received, lead_only=True)
            if lead and lead.due:
                return lead
    return None


def _tell_me_by(after: list[Sentence], received: dt.date | None) -> Deadline | None:
    """The reply-by of a request for an answer, in one of the next sentences that asks to be
    told ("Let me know by Friday", "dime antes del martes"), its lead deadline."""
    for sentence in after:
        if _TELL_ME.search(sentence.text):
            lead = find_deadline(sentence.text, received, lead_only=True)
            if lead and lead.due:
                return lead
    return None


def _answer_by(after: list[Sentence], received: dt.date | None) -> tuple[Deadline, int] | None:
    """The reply-by a question leaves to one of the next sentences that only asks for the
    answer by a day ("Let us know by Wednesday so I can sort the food"), not one that asks a
    question of its own ("dime antes del jueves si os quedáis"), with that sentence's place
    in `after`."""
    for at, sentence in enumerate(after):
        told = _TELL_ME.search(sentence.text)
        lead = find_deadline(sentence.text, received, lead_only=True) if told else None
        if told is None or lead is None or lead.due is None:
            continue
        between, rest = sentence.text[told.end() : lead.start], sentence.text[lead.end :]
        if not between.strip() and not _WHAT_TO_TELL.match(rest):
            return lead, at
    return None


# What to be told, after "let me know by Friday": "if", "whether", "si", "ob", "which" ...
_WHAT_TO_TELL = re.compile(
    r"\s*,?\s*(?:if|whether|which|what|when|who|how|si|ob|welche\w*|was|wann|quel\w*|qué|cuál)\b",
    re.IGNORECASE,
)


# The sender's own doing ("I'll send the recipe tomorrow", "Je t'envoie la recette demain",
# "Te mando el PDF mañana", "Ich schicke dir morgen die Liste"): its day is theirs, not the
# deadline of the reader's ask after it.
_SENDER_DOES = re.compile(
    r"^\W*(?:and\s+|also\s+|et\s+|y\s+|und\s+)?(?:i(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to)"
    r"|je\s+(?:t'|vous\s+|te\s+)?(?:envoie|enverrai|passe|passerai|appelle|rappelle|fais|ferai)"
    r"|(?:te|le|os|les)\s+(?:mando|envío|envio|enviaré|enviare|llamo|llamaré|paso)"
    r"|ich\s+(?:schicke|sende|schick|melde|rufe|bringe))\b",
    re.IGNORECASE,
)


# A deadline and a plea, nothing else asked: "Today please, arrivals start at 3.", "Thursday at
# the latest, please.", "Bis Freitag bitte.", "Por favor, antes del lunes."
_PLEA_WORD = r"(?:please|pls|plz|kindly|bitte|svp|s'il\s+(?:te|vous)\s+pla[iî]t|por\s+favor)"
_PLEADED_WHEN = re.compile(
    rf"^\W*(?:(?P<when>[^,.!?;]{{2,40}}?)[,\s]+{_PLEA_WORD}|{_PLEA_WORD}[,\s]+(?P<after>[^,.!?;]{{2,40}}?))"
    r"\s*(?:[.!]\s*$|,\s+(?!(?:and|can|could|would|will)\b).*$|$)",
    re.IGNORECASE,
)


def pleaded_deadline(text: str, received: dt.date | None) -> Deadline | None:
    """The deadline of a sentence that is only a deadline and a plea ("Today please", "by
    Friday, please"), else None."""
    found = _PLEADED_WHEN.match(text.strip())
    if found is None:
        return None
    when = (found.group("when") or found.group("after") or "").strip()
    when = re.sub(r"\s+at\s+the\s+latest$", "", when, flags=re.IGNORECASE)
    for led in ("", "by "):
        said = find_deadline(led + when, received, lead_only=True)
        if said is not None and said.due and said.start == 0 and said.end == len(led + when):
            return Deadline(when, said.due, 0, len(when))
    return None


def _only_deadline(text: str, received: dt.date | None) -> Deadline | None:
    """The deadline of a sentence that states only that ("By Nov 9 would be ideal", "Ideally
    by Monday", "Friday would be great", "Monday at the latest"), else None."""
    if has_cue(text):
        return None
    body = _IDEALLY.sub("", text.strip())
    said, led = find_deadline(body, received, lead_only=True), 0
    if said is None or said.start != 0:  # "Friday would be great": a bare day, led
        said, led = find_deadline(f"by {body}", received, lead_only=True), 3
        if said is not None and (said.start != 0 or said.end <= led):
            said = None
    if said is None or said.due is None:
        return None
    rest = body[said.end - led :]
    if not (_SUITS.match(rest) or _LATEST.match(rest)):
        return None
    return replace(said, phrase=said.phrase[led:], end=said.end - led) if led else said


def _carried(
    found: list[Sentence], n: int, received: dt.date | None, subject: str, asked: set[int]
) -> Deadline | None:
    """A deadline a request's sentence leaves to its neighbours: "by then" (an earlier
    date), the next sentence ("Both by Friday"), the one before, the next paragraph's lead
    ("...if you call by Thursday"), else the subject's."""
    sentence = found[n]
    if refers_back(sentence.text):
        earlier = any_date(" ".join(s.text for s in found[:n]), received)
        if earlier is not None:
            return earlier
    after = found[n + 1].text if n + 1 < len(found) else ""
    if after and (pleaded := pleaded_deadline(after, received)) is not None:
        return pleaded  # "Today please, arrivals start at 3."
    if after and not has_cue(after):
        carried = find_deadline(after, received, lead_only=True)
        if carried is None:  # "They want it back within 3 days.": a span of days is a lead
            bare = find_deadline(after, received)
            carried = bare if bare and _WITHIN.match(bare.phrase) else None
        # "Both by Friday": a pointer opens it, or it is short; a long sentence with "it" in
        # it ("the form is on the counter, we have to mail it by the 15th") has its own task
        pointer = _POINTER.search(after)
        if carried and pointer and (pointer.start() == 0 or len(after.split()) <= 12):
            return carried
        if carried and _THEY_NEED_IT.search(after[: carried.start]):
            return carried
        # "By tomorrow would be ideal.": a sentence that opens with the deadline is the ask's,
        # and so is one that calls it what suits ("anytime before the 10th would be perfect")
        if carried and after.lower().startswith(carried.phrase.lower()):
            return carried
        if carried and _SUITS.match(after[carried.end :]):
            return carried
        if (said := _only_deadline(after, received)) is not None:  # "Friday would be great"
            return said
    previous = found[n - 1].text if n else ""
    if (
        previous
        and not sentence.listed
        and not has_cue(previous)
        and n - 1 not in asked
        and not _SENDER_DOES.match(previous)
    ):
        deadline = find_deadline(previous, received)
        if deadline is not None and not _happened(previous, deadline):
            return deadline
    # "... the signed rep letter, and they need it by November 4. [...] Can you sign it and send
    # it back?": a deadline an earlier sentence gave the thing the ask names again ("it")
    if _IT.search(sentence.text):
        for told in reversed(found[max(0, n - 4) : max(0, n - 1)]):
            if _DUE_STATED.search(told.text) and not has_cue(told.text):
                stated = find_deadline(told.text, received, lead_only=True)
                if stated is not None and stated.due is not None:
                    return stated
    following = next((s.text for s in found if s.paragraph > sentence.paragraph), "")
    if following and not has_cue(following):
        deadline = find_deadline(following, received, lead_only=True)
        if deadline is not None:
            return deadline
    return _subjects(found, n, received, subject)


def _named_before(sentence: str) -> str | None:
    """The thing a sentence sets before the reader ("The lifeguard schedule for November is
    attached.", "Attached is the draft flyer."), which an "it" in the ask after it means."""
    shown = _SET_BEFORE.match(sentence.strip()) or _ATTACHED_IS.match(sentence.strip())
    thing = shown.group("thing") if shown else ""
    return thing if thing and len(thing.split()) <= 6 else None


def _happened(sentence: str, deadline: Deadline) -> bool:
    """Whether `sentence` dates what happened, not what is due: "Jun passed the training
    today", "both pipettes failed calibration this morning". A bare day word in such a
    statement is no deadline of the ask after it; one with a lead ("by Friday"), an urgency
    ("within the hour") or an obligation ("must be scheduled today") still is."""
    if find_deadline(sentence, None, lead_only=True) is not None or _SOON_WORD.match(
        deadline.phrase
    ):
        return False
    return bool(_PAST.search(sentence)) and not _OBLIGED.search(sentence)


def _subjects(
    found: list[Sentence], n: int, received: dt.date | None, subject: str
) -> Deadline | None:
    """The subject's deadline for the ask of sentence `n`, unless the sentence names its own
    day ("pick up Noor on Wednesday" under "today + wed") or the subject only repeats the date
    another ask states ("a few things before Thursday" over "sign off by Thursday")."""
    said = find_deadline(clean_subject(subject), received)
    if said is None:
        return None
    own = find_deadline(own_part(found[n].text), received, lead_on=True)
    if own is not None:
        return own
    for k, other in enumerate(found):
        stated = find_deadline(other.text, received) if k != n else None
        if stated is not None and stated.due == said.due:
            return None
    return said


# "I need the certificate signed by you" then "Please return the signed certificate by the
# 10th": one ask said twice, to sign a thing and to send the signed thing back.
_TO_SIGN = re.compile(r"^(?:sign|countersign)\s+(?P<thing>.+)$", re.IGNORECASE)
_SIGNED_BACK = re.compile(
    r"^(?P<verb>(?:return|send|bring|mail|e-?mail|upload)(?:\s+back)?)\s+signed\s+(?P<thing>.+?)"
    r"(?P<to>\s+to\s+\S+)?$",
    re.IGNORECASE,
)


def _signed_once(found: list[Found]) -> list[Found]:
    """`found` with an ask to sign a thing and one to return the signed thing (the same head
    noun: "Compliance Certificate", "certificate") as one task: returning it signed, named
    by the fuller of the two, due by the deadline either gives."""
    out = list(found)
    for i, first in enumerate(found):
        for j in range(i + 1, len(found)):
            second = found[j]
            pair = (first, second) if _TO_SIGN.match(first.title) else (second, first)
            sign, back = _TO_SIGN.match(pair[0].title), _SIGNED_BACK.match(pair[1].title)
            if sign is None or back is None or first not in out or second not in out:
                continue
            thing, other = sign.group("thing"), back.group("thing")
            if thing.split()[-1].lower() != other.split()[-1].lower():
                continue  # "sign the lease", "return the signed form": two things
            named = thing if len(thing.split()) > len(other.split()) else other
            title = f"{back.group('verb')} signed {named}{back.group('to') or ''}"
            kept = pair[1] if pair[1].deadline or not pair[0].deadline else pair[0]
            out[out.index(first)] = replace(kept, title=title)
            out.remove(second)
    return out


# A title that is verbs only, no object: "Review and approve", "Approve", "Sign it".
_BARE_VERBS = re.compile(
    r"^(?P<verbs>[a-z]+(?:\s+(?:and|&)\s+[a-z]+)?)(?:\s+(?:it|this|them))?$", re.IGNORECASE
)


def _bare_once(found: list[Found]) -> list[Found]:
    """ "I need your approval on the reforecast. Can you review and approve by Oct 29?": the
    second ask, verbs only, is the first one's, whose object it names; one task, with the
    deadline either gives."""
    out = list(found)
    for bare in found:
        verbs = _BARE_VERBS.match(bare.title)
        if verbs is None:
            continue
        said = {w.lower() for w in verbs.group("verbs").split() if w.lower() not in {"and", "&"}}
        twin = next(
            (i for i, f in enumerate(out) if f is not bare and f.title.split()[0].lower() in said),
            None,
        )
        if twin is None or not all(w.lower() in VERBS for w in said):
            continue
        kept = out[twin]
        deadline = kept.deadline or bare.deadline
        out[twin] = Found(kept.title, deadline, kept.weak, kept.sentence, kept.rule)
        out = [f for f in out if f is not bare]
    return out


def _unique(found: list[Found]) -> list[Found]:
    seen: set[str] = set()
    out = []
    for f in _bare_once(_signed_once(found)):
        key = f.title.lower()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# A thing to bring home asked in passing: "Milk + eggs on your way home tonight?", "Brot auf
# dem Heimweg?", "Du pain en rentrant ?", "¿Pan de camino a casa?".
_ON_THE_WAY = re.compile(
    r"^¿?(?P<thing>[^?.!,]{2,40}?)\s+(?P<way>on\s+(?:your|the)\s+way\s+(?:home|back)|auf\s+dem"
    r"\s+(?:heimweg|rückweg|nachhauseweg)|en\s+rentrant|de\s+camino\s+a\s+casa|al\s+volver)"
    r"(?:\s+(?:tonight|today|heute(?:\s+abend)?|ce\s+soir|esta\s+noche|hoy))?\s*\?$",
    re.IGNORECASE,
)
# ... but not a question about the reader or the trip: "Are you on your way home?"
_NOT_A_THING = re.compile(
    r"^(?:are|is|were|was|you|u|i|we|he|she|they|still|stuck|traffic|where|when|what|how|bist"
    r"|sind|es-tu|êtes|tu|estás|está|sigues|ya|already|all\s+ok|everything)\b",
    re.IGNORECASE,
)
# "Ok to pay?", "OK to send?", "Ok pour payer ?", "¿Ok para pagar?", "Ok zu zahlen?": leave asked.
_OK_TO = re.compile(
    r"^(?:ok|okay|good|fine)\s+(?:to|pour|para|zu)\s+[^\W\d_]+(?:\s+(?:it|this|them))?\s*\?$",
    re.IGNORECASE,
)
# A thing to put out or in by a time: "bins out before 7", "recycling out tonight pls".
_OUT_BY = re.compile(
    r"^(?P<thing>[a-z][\w' ]{1,30}?)\s+(?P<way>out|in|away|back)\s+(?:before|by|tonight|today"
    r"|tomorrow|this\s+(?:morning|evening))\b",
    re.IGNORECASE,
)
# A thing wanted, said in a few words: "milk + eggs tonight pls", "bread today please".
_WANTED = re.compile(
    r"^(?P<thing>[a-z][\w'&+ -]{1,40}?)\s+"
    r"(?:tonight|today|tomorrow|on\s+(?:your|the)\s+way(?:\s+home)?)\s*,?\s*(?:pls|please|plz)\b",
    re.IGNORECASE,
)
# A yes-or-no on the subject's thing, by a verb and a pronoun: "Close them out?", "Send it?",
# "Move it to Friday?" (not "Is it done?", "Did you see it?").
_YES_NO_THING = re.compile(
    r"^(?!(?:is|are|was|were|do|does|did|have|has|had|can|could|will|would|should|shall|may"
    r"|what|who|why|when|where|how|any|ok|okay)\b)(?P<verb>[a-z]{3,12})\s+(?:it|them|this|that|these)"
    r"(?:\s+(?P<particle>out|up|down|off|over|back|in|through|forward))?(?:\s+(?:now|today|tonight|too))?\s*\?$",
    re.IGNORECASE,
)
# A signature under a few words ("Approve?" / "Laurel Finch | Director of Finance"): from the
# line that opens with the sender's name, or that joins a title with "|", on.
_TITLE_LINE = re.compile(r"\S\s+\|\s+\S")


def _unsigned(text: str, sender: str) -> str:
    """A terse message's words without the signature block under them."""
    lines = text.strip().splitlines()
    first = sender.split()[0].lower() if sender.split() else ""
    if len(lines) == 1 and first:  # a snippet runs the lines together: "Approve? Laurel Finch |"
        signed = re.search(rf"(?<=[.?!])\s+{re.escape(first)}\s+[A-Z]\w*(?:\s*\||\s*$)", text, re.I)
        return text[: signed.start()] if signed else text
    for n, line in enumerate(lines[1:], start=1):
        words = line.split()
        if (
            (words and words[0].lower().strip(",") == first)
            or _TITLE_LINE.search(line)
            or re.fullmatch(r"\s*[-_=*]{3,}\s*", line)  # "Approve?" / "-----" / the details
        ):
            return "\n".join(lines[:n])
    return text


# "OK to apply the credit to the Nov invoice?", "Okay if we bump the order to 40?": leave to
# do one thing, which the reader gives.
_OK_TO_DO = re.compile(
    r"^(?:ok|okay|good|fine|alright|all\s+right)\s+(?:to|if\s+(?:i|we))\s+(?P<verb>[a-z]{2,})\s+"
    r"(?P<obj>[^?.!]{2,80}?)\s*\?",
    re.IGNORECASE,
)
# Verbs of a terse question that are no to-do list's verbs elsewhere: "Taste before racking?"
_TERSE_VERBS = frozenset("taste try test sample measure weigh inspect".split())
# What may follow a terse verb to say when: "Sign before you leave?", "Check after lunch?"
_WHEN_WORDS = frozenset("before after by when once first today tonight tomorrow".split())


# A bare verb asked, then an aside naming the thing: "Sign? (the lease, page 3)".
# (an initial or a first name may sign it: "... list attached) K")
_VERB_ASIDE = re.compile(r"^(?P<verb>[^\W\d_]+)\s*\?\s*\([^()]{2,80}\)(?:\s+[A-Z][a-z]{0,12}\.?)?$")


def _terse(
    text: str, subject: str, sender: str, received: dt.date | None, *, reply: bool = False
) -> list[Found]:
    """A request in a word or a few: "Approve?", "Thoughts?", "Deck?", "call me when free",
    "RSVP by Wednesday", or a subject naming the thing and a body saying what to do with it
    ("Timesheet": "submit by Friday"). In a reply, whose subject is the old thread's, only
    the body's own command counts ("call me", "Approve?")."""
    body = " ".join(_unsigned(text, sender).split())
    first_line = _unsigned(text, sender).strip().split("\n", 1)[0].strip()
    if len(body.split()) > 12 and len(first_line.split()) <= 4 and first_line.endswith("?"):
        # "Thoughts?" over the draft it is about: the ask is the first line
        body = first_line
    if len(body.split()) > 12 or not subject.strip():
        return []
    if reply:
        words = re.sub(r"\bsent from my \w+\b", "", body, flags=re.I).strip(" .!")
        verb = words.split(" ", 1)[0].lower().strip(",:?!") if words else ""
        if verb in VERBS and (len(words.split()) <= 3 or is_imperative(words)):
            return _terse_verb(verb, words, clean_subject(subject), sender, None)
        # "Thoughts?", "Any thoughts?", "Sign-off?" over the thread: an ask about its subject
        if _SHORT_THOUGHTS.match(words) and words.endswith("?"):
            return [Found(f"Give {sender} thoughts on {clean_subject(subject)}", None)]
        if _SIGN_OFF.match(words):
            return [Found(finish(f"Sign off on {clean_subject(subject)}", sender), None)]
        if _STATUS.match(words) and words.endswith("?"):  # "ETA?" on the thread
            return [_status(words, clean_subject(subject), sender, None)]
        return []
    subj = clean_subject(subject)
    deadline = find_deadline(body, received) or find_deadline(subj, received)
    head = subj.split()[0].lower().strip("?!.,:") if subj.split() else ""
    words = re.sub(r"^(?:attached|here(?:'s| is)|see)\s*:?\s*", "", body, flags=re.I)
    words = re.sub(
        r"\b(?:sent from my \w+|thanks!?|thx!?|cheers|merci|danke|gracias)\b", "", words, flags=re.I
    ).strip(" .!")
    if deadline is not None:
        words = words.replace(deadline.phrase, "").strip(" .!?")
    url = re.search(r"https?://\S+/([\w-]+)", words)
    obj = url.group(1).replace("-", " ") if url else words.split("?")[0].split(".")[0]
    verb = words.split(" ", 1)[0].lower().strip(",:?!") if words else ""
    if _STATUS.match(words):
        return [_status(words, subj, sender, deadline)]
    errand = _ON_THE_WAY.match(body)  # "Milk + eggs on your way home tonight?"
    if errand and not _NOT_A_THING.match(errand.group("thing")):
        return [Found(_errand_title(errand), find_deadline(body, received))]
    wanted = _WANTED.match(body)  # "milk + eggs tonight pls, we're out"
    if wanted and not _NOT_A_THING.match(wanted.group("thing")):
        thing = wanted.group("thing")
        if thing.split()[0].lower() not in VERBS:
            return [Found(f"Pick up {thing}", find_deadline(body, received))]
    opening = re.split(r"(?<=[?.!])\s", words, maxsplit=1)[0]
    if _OK_TO.match(words) or _OK_TO.match(opening):  # "Ok to pay?", "OK to order? Quote attached."
        return [Found(finish(f"Approve {subj}", sender), deadline)]
    asked = re.fullmatch(r"(\w+)\?", opening)  # "Approve? $8,420 from Climatech, attached."
    if asked and asked.group(1).lower() in VERBS:
        return _terse_verb(asked.group(1).lower(), opening, subj, sender, deadline)
    out_by = _OUT_BY.match(words)  # "bins out before 7!! truck comes early on Mondays now"
    if out_by:
        title = f"Put {out_by.group('thing')} {out_by.group('way').lower()}"
        return [Found(finish(title, sender), find_deadline(opening, received) or deadline)]
    # "OK to apply the $1,140 credit to the Nov invoice?", "ok to fire up Lower Bvd tonight?"
    # (its deadline taken out of `words` took the question mark with it)
    leave = _OK_TO_DO.match(words) or _OK_TO_DO.match(body)
    if leave:
        obj = leave.group("obj")
        if deadline is not None:
            obj = obj.replace(deadline.phrase, "").strip(" ,")
        doing = f"{gerund(leave.group('verb'))} {obj}"
        return [Found(finish(f"Approve {doing}", sender), deadline)]
    aside = _VERB_ASIDE.match(words)  # "Approve? (cleaning supplies, $412, list attached)"
    if aside and aside.group("verb").lower() in VERBS:
        verb = aside.group("verb").lower()
        return _terse_verb(verb, aside.group("verb"), subj, sender, deadline)
    if _SIGN_OFF_ASKED.match(_URL.sub("", opening).strip(" .!")):  # "Final sign-off? <link>"
        return [Found(finish(f"Sign off on {subj}", sender), deadline)]
    if _SHORT_THOUGHTS.match(_URL.sub("", words).strip(" .!")):  # a link, then "thoughts?"
        return [Found(f"Give {sender} thoughts on {subj}", deadline)]
    if _NEED_IT.match(words):
        return [Found(f"Send {subj} to {sender}", deadline)]
    timed = find_deadline(words, received) or re.search(r"\b\w+day\b", words, re.I)
    if _DECIDE.search(body) or (body.endswith("?") and len(body.split()) <= 4 and timed):
        return [
            Found(f"Reply to {sender} about {subj}", find_deadline(body, received, lead_only=True))
        ]
    if head in {"thoughts", "feedback", "comments", "opinion"} or _SHORT_THOUGHTS.match(words):
        topic = subj if _SHORT_THOUGHTS.match(words) or not obj else obj
        return [Found(f"Give {sender} thoughts on {topic}", deadline)]
    if head in VERBS and subject.rstrip().endswith(("?", "pls", "please")):
        if head in {"call", "ping", "text"}:
            return [Found(f"{head.capitalize()} {sender}", deadline)]
        return [Found(finish(f"{head.capitalize()} {obj}", sender), deadline)]
    if head == "rsvp":
        return [Found(f"RSVP to {obj.split(',')[0] or subj}", deadline)]
    reminder = re.search(r"(?:reminder|please|pls)\s*:?\s*(\w+)", body, re.I)
    if (
        reminder
        and reminder.group(1).lower() in VERBS
        and not asks_nothing(body[reminder.start(1) :])
    ):
        return [Found(f"{reminder.group(1).capitalize()} {subj}", deadline)]
    if verb in VERBS and (len(words.split()) <= 3 or is_imperative(words)):
        return _terse_verb(verb, words, subj, sender, deadline)
    first = re.split(r"(?<=[?.!])\s", words, maxsplit=1)[0]
    if verb in _TERSE_VERBS and first.endswith("?") and len(first.split()) <= 5:
        return _terse_verb(verb, first, subj, sender, deadline)  # "Taste before racking?"
    yes_no = _YES_NO_THING.match(first)  # "Close them out?" under "Nov 14 - close out discounts?"
    if yes_no:
        doing = " ".join(w for w in (gerund(yes_no.group("verb")), yes_no.group("particle")) if w)
        said = " ".join(w for w in (yes_no.group("verb"), yes_no.group("particle")) if w)
        thing = re.sub(rf"\s*\b{re.escape(said)}\b\s*", " ", subj, flags=re.I).strip(" -—–")
        return [Found(finish(f"Approve {doing} {thing}", sender), deadline)]
    if subject.strip().endswith("?") and len(subj.split()) <= 2:
        return [Found(f"Send {subj.rstrip('?')} to {sender}", deadline)]
    lead = find_deadline(subj, received)
    if lead is not None and lead.phrase.lower().startswith(("by", "before", "due")):
        thing = subj.replace(lead.phrase, "").strip(" :-")
        if thing:
            return [Found(f"Send {thing} to {sender}", lead)]
    return []


def _errand_title(errand: re.Match[str]) -> str:
    """ "Pick up milk + eggs on way home" in the language it was asked in."""
    thing, way = errand.group("thing"), errand.group("way").lower()
    if way.startswith("auf"):
        return f"{thing} {errand.group('way')} mitbringen"
    if way.startswith("en"):
        return f"Rapporter {thing} en rentrant"
    if way.startswith(("de", "al")):
        return f"Traer {thing} de camino a casa"
    return f"Pick up {thing} on way home"


def _status(words: str, subj: str, sender: str, deadline: Deadline | None) -> Found:
    """ "ETA?" (on the subject), "Any update on the deck?" (on the thing it names)."""
    asked = _STATUS.match(words)
    on = asked.group("on").strip() if asked and asked.group("on") else subj
    what = "ETA" if words.lower().startswith("eta") else "update"
    return Found(f"Send {sender} {what} on {on}", deadline)


def _terse_verb(
    verb: str, words: str, subj: str, sender: str, deadline: Deadline | None
) -> list[Found]:
    """ "Approve?" (the subject is its object), "call me when free" (the sender is)."""
    rest = words.split()[1:]
    if words.split() and words.split()[0].endswith("?") and rest:
        rest = []  # "Approve? $8,420 from Climatech, attached.": the verb asked, then its details
    if rest and rest[0].lower() in _WHEN_WORDS:  # "Taste before racking?": the subject's, then
        when = re.split(r"[?.!]", " ".join(rest), maxsplit=1)[0]
        return [Found(finish(f"{verb.capitalize()} {subj} {when}", sender), deadline)]
    if verb in {"call", "ping", "text", "phone"} and (not rest or rest[0].lower() in {"me", "us"}):
        return [Found(f"{verb.capitalize()} {sender}", deadline)]
    if not rest or rest[0].lower().strip("?") in {"it", "this", "pls", "please", "asap"}:
        return [Found(finish(f"{verb.capitalize()} {subj}", sender), deadline)]
    if words.rstrip().endswith("?") and len(rest) <= 4:  # "pick up milk?"
        title = " ".join([verb.capitalize(), *rest]).rstrip("?!. ")
        return [Found(finish(title, sender), deadline)]
    return []
