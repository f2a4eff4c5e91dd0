"""The offline model's words per language, as data: English, German, French and Spanish.

Each table maps a language code to a tuple of regex fragments (not literal words: a fragment
may say "could|can you", an optional "please" after it, or a word's endings). The regexes
that read with them are built once, at import, by `cues` (`_clauses._CUE`,
`_sentences.VOCATIVE`, `_sentences._GREETING_WORD`, `_sentences._ASKING`). A new language or
a new way of asking is one more entry here, not one more line in a regex.

Within one language a table's order is the order the alternation tries its fragments, so a
longer form comes before its prefix there ("bitten wir Sie" before "bitte"). No fragment of
one language can match where another language's does, so the languages' order does not
matter.
"""

from __future__ import annotations

from collections.abc import Mapping

Lexicon = Mapping[str, tuple[str, ...]]

# What opens a request in a sentence ("could you", "kannst du", "pourriez-vous", "¿puedes");
# the request's words follow it after white space.
REQUEST_CUES: Lexicon = {
    "en": (
        r"\b(?:could|can|would|will)\s+(?:you|u|ya|someone|anyone|somebody)"
        # "would you and Jamie be OK splitting it?": the reader and another, asked together
        r"(?:\s+and\s+(?-i:[A-Z])[a-z]+)?(?:\s+(?:please|pls|also|maybe|both|all|two|guys))*",
        r"\b(?:i|we)\s+need\s+(?:you|u)\s+to",
        r"\bneeds?\s+(?:someone|somebody|you)\s+to",
        r"\bplease",
        r"\bkindly",
        r"\b(?:pls|plz)\b",
        # "You need to re-approve it", "Everyone needs to make their elections": an obligation
        r"\b(?:you|u|everyone|everybody|each\s+of\s+you|all\s+of\s+you)(?:'ll)?\s+"
        r"(?:will\s+|also\s+|still\s+)?(?:need(?:s)?|ha(?:ve|s))\s+to",
        r"\b(?:it'd|(?:it\s+)?would)\s+be\s+(?:great|good|helpful|ideal|nice|amazing|awesome)\s+"
        r"if\s+you\s+(?:could|can)",
        # "it would be great to get your notes by Friday"; not a wish: "it'd be nice to get out
        # of the city" (nice, and nothing of the reader's)
        r"\b(?:it'd|(?:it\s+)?would)\s+be\s+(?:great|good|helpful|ideal|amazing|awesome)\s+to",
        # "I was hoping you could cover Saturday", "we're hoping you can present on the 12th"
        r"\b(?:i|we)(?:\s+was|\s+were|'m|'re|\s+am|\s+are)\s+hoping\s+(?:that\s+)?(?:you|u)"
        r"\s+(?:could|can|would|might)",
        # "Could I ask you to review it?", "Would love it if you could join the panel"
        r"\b(?:could|can|may)\s+i\s+ask\s+(?:you\s+)?to",
        r"\b(?:(?:i|we)(?:'d|\s+would)\s+|would\s+)love\s+(?:it\s+)?if\s+you\s+(?:could|can|would)",
        # the reader by the role a service or a caller knows them by: "the account owner
        # needs to approve the rate calendar", "they need the owner to call them ASAP"
        r"\bthe\s+account\s+(?:owner|holder|admin(?:istrator)?)\s+(?:needs\s+to|has\s+to|must)",
        r"\b(?:they|we)\s+need\s+the\s+(?:account\s+)?owner\s+to",
        # "Just a reminder to submit your report by the 5th"
        r"\b(?:just\s+)?a\s+(?:quick\s+|friendly\s+|gentle\s+|kind\s+)?reminder\s+to",
        r"\b(?:any\s+chance|is\s+there\s+any\s+way|do\s+you\s+think)\s+you\s+(?:could|can|would)",
        r"^(?:do\s+you\s+)?mind",
        # "Do you have time to look at the proposal this week?" (to meet: an invitation)
        r"^\W*do\s+you\s+have\s+(?:(?:the\s+)?time|a\s+(?:minute|moment|sec|second))\s+to"
        r"(?!\s+(?:meet|talk|chat|catch|connect|sync)\b)",
        r"\b(?:i'd|i\s+would)\s+(?:like|love)\s+(?:for\s+)?you\s+to",
        r"\b(?:i|we)(?:'d|\s+would)\s+(?:really\s+)?appreciate\s+(?:it\s+)?if\s+you"
        r"(?:\s+(?:could|can|would))?",
        # formal and roundabout asks: "We would be grateful if you could", "Would it be possible
        # for you to", "I wanted to ask if you can"
        r"\b(?:i|we)(?:'d|\s+would)\s+be\s+(?:very\s+|most\s+|so\s+)?(?:grateful|thankful|obliged)"
        r"\s+if\s+you(?:\s+(?:could|can|would))?",
        r"\b(?:would|will)\s+it\s+be\s+possible\s+(?:for\s+you\s+to|to)",
        r"\b(?:i|we)\s+(?:wanted|want|would\s+like)\s+to\s+ask\s+(?:if|whether)\s+you"
        r"(?:\s+(?:could|can|would))?",
    ),
    "de": (
        # "bitten wir Sie, das Formular ... zurückzusenden": a formal plea, its verb a zu-infinitive
        r"\b(?:bitten\s+wir\s+(?:sie|dich|euch)|(?:wir|ich)\s+(?:bitten|bitte)\s+(?:sie|dich|euch))"
        r"\s*,?",
        r"\b(?:kannst|könntest|koenntest|würdest|wuerdest)\s+du(?:\s+(?:bitte))*",
        r"\b(?:können|könnten|koennten|würden)\s+sie(?:\s+(?:bitte))*",
        # not the noun: "eine Bitte noch:", "meine letzte Bitte", "eine weitere Bitte"
        r"\b(?<!eine\s)(?<!tzte\s)(?<!tere\s)(?<!sere\s)(?<!roße\s)(?<!weite\s)bitte",
        r"\b(?:magst|möchtest)\s+du(?:\s+bitte)?",
        # "Wir bitten um Ihre Rückmeldung bis zum 6. November": a formal plea for a thing
        r"\b(?:wir|ich)\s+(?:bitten|bitte)\s+(?:sie\s+)?um(?=\s+(?:ihre|deine|eure|eine|einen|die|den|das)\b)",
    ),
    "fr": (
        r"\b(?:pourriez|pouvez)-vous",
        r"\b(?:peux|pourrais)-tu",
        # not thanks for what was given: "merci de votre compréhension", "merci d'avance"
        r"\bmerci\s+de(?:\s+bien\s+vouloir)?(?!\s*(?:votre|vos|ton|ta|tes|la|le|les|cette|ce|l')\b"
        r"|\s+l'|\s+m'avoir)",
        r"\bveuillez",
        # not "vous pouvez consulter votre demande en ligne" (you may look it up)
        r"\b(?:est-ce\s+que\s+)?(?:tu\s+(?:pourrais|veux\s+bien)|vous\s+pourriez)",
        r"\b(?:est-ce\s+que\s+)?(?:tu\s+peux|vous\s+pouvez)(?=[^.!?]*\?)",
        r"\bn'oublie\s+pas\s+de",
        r"\bpense\s+à",
        r"\b(?:j'ai|j'aurais|on\s+a|nous\s+avons)\s+besoin\s+que\s+(?:tu|vous)",
        # formal: "Nous vous prions de bien vouloir régler la facture", "merci de bien vouloir"
        r"\b(?:je|nous)\s+vous\s+prions\s+de(?:\s+bien\s+vouloir)?",
    ),
    "es": (
        r"\bnecesit(?:o|amos|aría|aria)\s+que",
        r"\b(?:(?:le|te|les|os)\s+)?(?:agradecer(?:í|i)a(?:mos)?|pido|pedimos|ruego|rogamos)\s+que",
        # "Le agradeceré enviárnosla antes del 15": the plea in the future, its infinitive after
        r"\b(?:le|les|te|os)\s+agradecer(?:é|emos|ía|íamos)(?=\s+[a-záéíóú]+(?:[aá]r|[eé]r|[ií]r)"
        r"(?:me|nos|le|les|lo|la|los|las|melo|mela|noslo|nosla|noslos|noslas)?\b)",
        # "le agradecería nos confirme la orden": the formal plea without its "que"
        r"\b(?:le|les)\s+agradecer(?:í|i)a(?:mos)?(?=\s+(?:nos|me)\s+[a-záéíóú]+[ae]n?\b)",
        r"\bfavor\s+de",
        # "¿podés revisar...?": the voseo of Argentina and Uruguay, and the plural "podéis"
        # a question, not "Puedes consultar la solicitud en el portal" (you may look it up)
        r"¿\s*(?:me\s+|nos\s+)?(?:puedes|puede|pueden|podés|podes|podéis|podrían|podrian)"
        r"|(?:me\s+|nos\s+)?(?:puedes|puede|pueden|podés|podes|podéis|podrían|podrian)"
        r"(?=[^.!?¡]*\?)",
        r"¿?\s*(?:me\s+)?(?:podrías|podrias|podría|podria|podríais)",
        r"\b(?:por\s+favor|porfa|porfis|porfavor),?",
        # an obligation said to the reader: "tienes que mandarme", "le recordamos que debe
        # enviarnos el pago" (not "el informe debe incluir": a thing's, in the third person)
        r"\b(?:(?:le|les|te|os)\s+(?:recordamos|recuerdo)\s+que,?\s+(?:[^,.;]{1,80},\s+)?"
        r"(?:usted(?:es)?\s+)?(?:debe|deben|tiene\s+que|tienen\s+que)|(?<!\bno\s)usted(?:es)?\s+"
        r"(?:debe|deben|tiene\s+que|tienen\s+que)|(?<!\bno\s)(?:debes|deberás|tienes\s+que"
        r"|tendrás\s+que))(?=\s+[a-záéíóú]+(?:ar|er|ir)(?:me|nos|le|les|lo|la|los|las)?\b)",
    ),
}

# A greeting before the names a message speaks to ("Hi Marcus,", "Liebe Anna,", "Hola Tomás,").
GREETINGS: Lexicon = {
    "en": ("hi", "hello", "hey", "dear", "morning", r"good\s+morning"),
    "de": ("hallo", "hej", "liebe[rs]?", r"guten\s+(?:tag|morgen)"),  # "hej": the Nordic hello
    "fr": ("bonjour", "salut", "coucou"),
    "es": ("hola", r"buenos\s+días", "estimad[oa]"),
}

# Whom a greeting line names when it names a group by what its people are ("Hello 3B
# families,", "To all staff,", "Sehr geehrte Kundinnen und Kunden,", "Chers parents,"): plural
# nouns, matched as whole words after up to a few words that say which ones ("Newark depot").
GROUP_NOUNS: Lexicon = {
    "en": ("families", "parents", "staff", "visitors", "guests", "customers", "clients",
           "members", "colleagues", "managers", "leads", "neighbou?rs", "residents", "tenants",
           "volunteers", "students", "employees", "teams?", "friends", "partners", "players",
           "coaches", "folks", "people", "crew", "engineers", "drivers", "owners", "subscribers",
           "users", "attendees", "participants", "everyone", "everybody", "all"),
    "de": ("kolleg(?:innen|en)", "kund(?:innen|en)", "eltern", "nachbar(?:innen|n)", "mitglieder",
           "mitarbeiter(?:innen)?", "mitarbeitende", "teilnehmer(?:innen)?", "gäste", "damen",
           "herren", "zusammen", "alle", "team"),
    "fr": ("collègues", "client(?:e)?s", "parents", "voisin(?:e)?s", "membres", "résident(?:e)?s",
           "participant(?:e)?s", "familles", "tous", "toutes", "équipes?"),
    "es": ("clientes", "vecin(?:o|a)s", "padres", "familias", "compañer(?:o|a)s", "colegas",
           "miembros", "socios", "todos", "todas", "equipos?"),
}  # fmt: skip
# What opens a greeting line to a group, besides the greetings to a person: "To all staff,",
# "Attention all drivers:", "Sehr geehrte Damen und Herren,", "Chers parents,", "Estimados
# clientes:".
GROUP_GREETINGS: Lexicon = {
    "en": ("to", "attention", "calling"),
    "de": (r"sehr\s+geehrte[rn]?", "an"),
    "fr": ("chers", "chères", "cher", "chère", "à"),
    "es": ("queridos", "queridas", "estimados", "estimadas", "a"),
}

# What a sentence spoken to someone goes on with when it is a request ("Marcus, can you...").
ASKING_OPENERS: Lexicon = {
    "en": ("can", "could", "would", "will", "please", "pls", "kindly", r"do\s+you", r"are\s+you",
           r"any\s+chance"),
    "de": ("kannst", "könntest", "können", "könnten", "würdest", "bitte"),
    "fr": ("pourriez", "pouvez", "peux", r"tu\s", r"vous\s", "est-ce", "merci"),
    "es": ("puedes", "podrías", "podrias", "podría", "¿", r"por\s+favor", r"me\s+puedes"),
}  # fmt: skip


def cues(lexicon: Lexicon) -> str:
    """`(?:a|b|...)`: every language's fragments of `lexicon` as one alternation, each
    language's in its table's order."""
    return "(?:" + "|".join(part for parts in lexicon.values() for part in parts) + ")"


# What makes an ask a habit: it holds whenever its occasion comes ("whenever you step away").
_HABITUAL = (
    r"(?=[^.!?]*\b(?:whenever|every\s+time|each\s+time|at\s+all\s+times|jedes\s+mal|immer"
    r"\s+wenn|(?:à\s+)?chaque\s+fois|cada\s+vez|siempre\s+que)\b)"
)
# A way to behave, not a thing to do: what a "please" asks in an announcement ("please be
# careful with the wet floor", "bitte seid vorsichtig", "soyez prudents", "tengan cuidado").
# Matched at the start of what follows the request cue.
CONDUCT: Lexicon = {
    "en": (
        r"be\s+(?:extra\s+|very\s+|more\s+|especially\s+)?(?:careful|mindful|patient|considerate"
        r"|respectful|cautious|vigilant|alert|quiet|courteous|polite|discreet|safe|kind|tidy"
        r"|punctual|understanding|flexible)\b",
        r"bear\s+(?:with|in\s+mind)\b",
        r"(?:remember|note|be\s+reminded|keep\s+in\s+mind)\s+that\b",
        r"(?:stay|keep)\s+(?:safe|warm|tuned|alert|away|clear)\b",
        r"take\s+care\b",
        r"watch\s+(?:your|out)\b",
        r"refrain\s+from\b",
        # a courtesy asked of everyone: "please join me in welcoming Nadia", "say hello"
        r"join\s+(?:me|us)\s+in\s+(?:welcoming|congratulating|thanking|wishing|celebrating)\b",
        r"(?:help\s+(?:me|us)\s+)?(?:give|extend)\s+\S+(?:\s+\S+)?\s+a\s+(?:\w+\s+)?welcome\b",
        r"(?:warmly\s+)?welcome\s+(?!back\b)",
        r"say\s+(?:hello|hi)\b",
        # a visit to greet a newcomer: "please stop by the office and say hello"
        r"(?:stop|drop|swing|pop|come)\s+(?:by|in|over|round)\b[^.!?;]{0,40}?\b(?:and|to)\s+"
        r"(?:say\s+(?:hello|hi)|welcome|greet)\b",
        r"make\s+\S+\s+feel\s+(?:at\s+home|welcome)\b",
        # a habit, not a to-do: "always lock the door", "remember to lock your screen whenever"
        r"(?:always|never)\s",
        rf"(?:remember|make\s+sure|be\s+sure)\s+to\b{_HABITUAL}",
        # planning, driving and thinking of someone are how to be, not a to-do: "please plan
        # accordingly", "drive carefully around the crews", "keep them in your thoughts"
        r"plan\s+(?:accordingly|ahead|around\s+(?:it|this|that))\b",
        r"(?:drive|ride|cycle|walk|go)\s+(?:(?:extra|very|more)\s+)?(?:carefully|safely|slowly)\b",
        r"slow\s+down\b",
        r"keep\s+(?:\S+\s+){1,3}?in\s+(?:your|our)\s+(?:thoughts|prayers|hearts)\b",
        r"keep\s+(?:the|this|that|our|your|all)\s+(?:\S+\s+){0,3}?(?:tidy|clean|neat|shut|closed"
        r"|locked|quiet|dry|low)\b",
        r"keep\s+(?:this|the)\s+(?:e-?mail|message|receipt|confirmation|letter)\b",
        # housekeeping before downtime: "please submit or shelve your work before you leave"
        r"(?:save|submit|shelve|commit|push|check\s+in|back\s+up|close|log\s+out\s+of"
        r"|sign\s+out\s+of)(?:\s+or\s+\w+)?\s+(?:all\s+)?(?:your|any)\s+(?:open\s+|unsaved\s+"
        r"|local\s+|pending\s+)?(?:work|changes|files|documents|sessions?)\b",
        # a notice to bear in mind, and how to use what is sent: "please take note that the
        # office closes at noon", "please credit the photographer"
        r"take\s+(?:careful\s+|good\s+)?note\s+(?:that|of)\b",
        r"take\s+(?:this|these|it|that|them)\s+into\s+account\b",
        r"credit\s+(?:the\s+)?(?:photographers?|artists?|illustrators?|authors?|source)\b",
    ),
    "de": (
        r"(?:heißt|heiß|heißen\s+sie)\s[^.!?]{0,60}?\bwillkommen\b",
        rf"(?:denkt|denk|denken\s+sie)\s+(?:bitte\s+)?daran\b{_HABITUAL}",
        r"(?:seid|sei|seien\s+sie)\s+(?:bitte\s+)?(?:vorsichtig|geduldig|rücksichtsvoll|leise)\b",
        # "bitte haben Sie Verständnis für die Wartezeiten": patience and understanding asked
        r"(?:habt|hab|haben\s+sie)\s+(?:bitte\s+)?(?:etwas\s+|noch\s+)?(?:geduld|verständnis|nachsicht)\b",
        r"(?:passt|pass|passen\s+sie)\s+(?:bitte\s+)?(?:gut\s+)?auf\b",
        r"(?:entschuldig\w*|gedulde\w*|planen\s+sie\s+entsprechend)\b",
        r"(?:fahrt|fahren\s+sie)\s+(?:bitte\s+)?(?:vorsichtig|langsam)\b",
        r"(?:bewahr\w*|heb\w*)\s+(?:sie\s+)?(?:diese|die)\s+(?:e-?mail|nachricht|bestätigung)\b",
        # "bitte den Fotonachweis angeben", "bitte die Quelle nennen": how to use what is sent
        r"(?:den\s+|die\s+)?(?:(?:foto|bild)(?:nachweis|credit)\w*|quelle|urheber\w*)\s+"
        r"(?:angeben|nennen|beachten|vermerken)\b",
    ),
    "fr": (
        r"(?:soyez|sois|d'être)\s+(?:très\s+)?(?:prudents?|patients?|vigilants?|attentifs?|discrets?"
        r"|compréhensifs?|indulgents?)\b",
        r"(?:faites|fais|faire|de\s+faire)\s+preuve\s+de\s+(?:patience|compréhension|prudence"
        r"|vigilance|discrétion|indulgence)\b",
        r"(?:faites|fais|faire|de\s+faire)\s+(?:bien\s+)?attention\b",
        r"(?:souhaite[rz]|souhaitons)\s+(?:la\s+)?bienvenue\b",
        r"(?:joignez-vous|joins-toi)\s+à\s+(?:moi|nous)\s+pour\s+(?:accueillir|féliciter)\b",
        rf"(?:pensez|pense|penser)\s+à\b{_HABITUAL}",
        r"(?:excusez|excuser|pardonnez|pardonner|patientez|patienter)\b",
        r"prévoyez\s+en\s+conséquence\b",
        r"(?:roulez|rouler)\s+(?:prudemment|lentement|doucement)\b",
        r"(?:conservez|conserver|gardez|garder)\s+(?:ce|cet|cette)\s+(?:e-?mail|mail|courriel"
        r"|message|confirmation|reçu)\b",
        # a notice: "veuillez noter que nos bureaux seront fermés", "merci de tenir compte de
        # ces dates", "prenez bonne note"; and "merci de citer le photographe"
        r"not(?:er|ez|e)\s+(?:bien\s+)?que\b",
        r"(?:tenir|tenez|tiens)\s+compte\b",
        r"(?:prendre|prenez|prends)\s+(?:bonne\s+)?note\b",
        r"(?:mentionner|mentionnez|citer|citez|indiquer|indiquez)\s+(?:le\s+|la\s+)?(?:crédit"
        r"|photographe|source)\b",
    ),
    "es": (
        r"(?:tengan|tenga|ten|tened)\s+(?:mucho\s+|un\s+poco\s+de\s+)?(?:cuidado|paciencia"
        r"|comprensión)\b",
        r"(?:sean|sea|sed|sé)\s+(?:muy\s+)?(?:prudentes?|pacientes?|discretos?|comprensivos?)\b",
        r"(?:den|dé|da|demos|dar)\s+(?:la\s+)?bienvenida\b",
        r"(?:únanse|únete)\s+a\s+(?:mí|nosotros)\s+para\s+(?:dar|felicitar)\b",
        rf"(?:recuerden|recuerda|recuerde)\s+(?:que\s+)?\w+{_HABITUAL}",
        r"(?:disculpe\w*|perdone\w*|tenga\w*\s+paciencia|conduzcan?\s+con\s+(?:cuidado|precaución)"
        r"|planifique\w*\s+en\s+consecuencia)\b",
        r"(?:conserve\w*|guarde\w*)\s+(?:este|esta)\s+(?:correo|mensaje|confirmación|recibo)\b",
        # a notice: "les rogamos que tengan en cuenta este cambio", "tomen nota de que ..."
        r"(?:tengan|tenga|ten|tener|tened)\s+(?:muy\s+)?(?:en\s+cuenta|presente)\b",
        r"(?:tomen|tome|toma|tomar|tomad)\s+(?:buena\s+)?nota\b",
        r"(?:citar|citen|cite|mencionar|mencionen|indicar|indiquen)\s+(?:el\s+)?(?:crédito"
        r"|la\s+fuente|al\s+fotógrafo)\b",
    ),
}

# Passing an announcement on, or an advert's call to action: a request's words, but no to-do
# ("please cascade this to your leads", "align your team on the new cadence", "visit us at").
# Matched at the start of what follows the request cue.
PASSING_ON: Lexicon = {
    "en": (
        r"cascade\b", r"(?:pass|spread)\s+(?:this|it|the\s+(?:word|news|update))\s+(?:on|along)\b",
        r"align\s+(?:your|the)\s+(?:team|teams|org|group|leads|reports)\s+(?:on|with|around)\b",
        r"let\s+your\s+(?:team|teams|reports|people)\s+know\b",
        # thanks passed on to one's people: "please thank your on-call folks for covering"
        r"thank\s+your\s+(?:\S+\s+)?(?:team|teams|reports|people|folks|staff|crew|engineers)\b",
        r"visit\s+us\b", r"(?:shop|order|buy|subscribe)\s+(?:now|today)\b",
    ),
}  # fmt: skip
# Greetings passed on through the reader: "say hi to Sam", "give my love to the kids", "give
# Sam my best", "grüß Sam (von mir)", "embrasse Sam", "salue-le", "saluda a Sam", "dale un beso
# a Sam". A kindness to relay, not a to-do. Matched at the start of what follows the cue.
REGARDS: Lexicon = {
    "en": (r"(?:say|send)\s+(?:a\s+)?(?:hello|hi|hey)\b",
           r"(?:give|send|pass\s+on)\s+(?:my|our)\s+(?:\w+\s+)?(?:love|best|regards|greetings"
           r"|wishes|hugs?|kisses)\b",
           r"give\s+\S+(?:\s+\S+)?\s+(?:my|our|a)\s+(?:\w+\s+)?(?:love|best|regards|hugs?|kisses"
           r"|kiss|squeeze)\b",
           # "tell Sam we miss him", not "tell the client we love the proposal" (feedback)
           r"tell\s+\S+(?:\s+\S+)?\s+(?:i|we)\s+(?:said\s+hi|say\s+hi"
           r"|(?:miss|love)(?:\s+(?:him|her|them|you|y'all|you\s+all))?\s*(?:[.!,;]|$))",
           r"hug\s+\S+\s+(?:for|from)\s+(?:me|us)\b"),
    "de": (r"(?:grüß|grüss)(?:e|t|en\s+sie)?\b", r"(?:viele\s+|liebe\s+|herzliche\s+)?grüße\s+an\b",
           r"(?:drück|knuddel)(?:e|t)?\s+\S+(?:\s+\S+)?\s+von\s+(?:mir|uns)\b"),
    "fr": (r"(?:embrasse|embrassez|salue|saluez)\b", r"(?:dis|dites)\s+bonjour\b",
           r"(?:fais|faites)\s+(?:la\s+)?(?:bise|un\s+bisou|des\s+bisous)\b",
           r"(?:transmets|transmettez)\s+(?:mes|nos)\s+(?:amitiés|salutations|bises|pensées)\b"),
    "es": (r"salud(?:a|e|en|ad)\b", r"(?:dale|denle|dales|mándale|manda|envíale)\s+(?:un\s+)?"
           r"(?:beso|besos|abrazo|abrazos|saludos|recuerdos|cariños)\b"),
}  # fmt: skip
# What a negated ask says: nothing to do ("no need to reply", "don't feel you have to", "bitte
# keine Rückmeldung nötig", "pas besoin de répondre", "no hace falta"), or to wait before
# opening or looking ("bitte erst zu Weihnachten öffnen": not before Christmas; "bitte erst am
# Montag den Vertrag unterschreiben" is a timed ask, not a wait). Matched at the start of what
# follows the cue; a house rule's "don't ..." is `FORBIDDING`.
RELEASES: Lexicon = {
    "en": (r"no\s+need\s+(?:to|for)\b", r"(?:you\s+)?(?:don't|do\s+not|needn't|need\s+not)\s+"
           r"(?:feel\s+(?:like\s+)?(?:you\s+)?)?(?:need|have|must)\b",
           r"(?:don't|do\s+not)\s+(?:bother|worry)\b"),
    "de": (r"erst\s+(?:zu|an|am|ab|nach|im|in|wenn|nachdem|nächste\w*)\b[^.!?;]{0,60}?"
           r"\b(?:öffnen|aufmachen|auspacken|anschauen|ansehen|lesen)\b",
           r"(?:das\s+)?(?:ist\s+)?nicht\s+(?:nötig|notwendig|erforderlich)\b"),
    "fr": (r"(?:pas|nul|aucun)\s+besoin\b", r"inutile\s+de\b",
           r"(?:ne\s+)?(?:te|vous)\s+(?:sens|sentez)\s+pas\s+obligée?s?\b"),
    "es": (r"no\s+(?:hace\s+falta|es\s+necesario|hay\s+(?:que|necesidad))\b",
           r"(?:no\s+)?(?:te|se)\s+(?:sientas|sienta)\s+obligad[oa]s?\b"),
}  # fmt: skip
# A service's notice that an order, a booking or an appointment is ready or confirmed ("your
# order W4827 is ready for pickup", "Ihre Buchung ist bestätigt", "votre réservation n° 88213
# est confirmée", "su reserva está confirmada"), or its buttons ("Manage my booking"). Matched
# anywhere in the subject or text (`_service`).
SERVICE_NOTICES: Lexicon = {
    "en": (r"your\s+(?:order|booking|reservation|appointment|table|room|pick-?up|delivery|rental"
           r"|tickets?|prescription|repair|stay)\b[^.!?]{0,80}?\b(?:is|are|has\s+been|have\s+been)"
           r"\s+(?:now\s+)?(?:ready|confirmed|booked|scheduled|reserved|available)\b",
           r"ready\s+for\s+(?:pick-?up|collection)\b",
           r"(?:booking|reservation|order|appointment)\s+(?:confirmation|confirmed)\b",
           r"manage\s+(?:my|your)\s+(?:booking|reservation|order|appointment)\b",
           r"your\s+(?:cart|basket)\s+(?:has|is\s+waiting|contains)\b"),
    "de": (r"(?:ihre?|deine?)\s+(?:bestellung|buchung|reservierung|termin)\b[^.!?]{0,80}?"
           r"\b(?:ist|wurde)\s+(?:\w+\s+)?(?:bestätigt|abholbereit|bereit|gebucht|reserviert)\b",
           r"abholbereit\b", r"(?:buchungs|reservierungs|bestell|termin)bestätigung\b",
           r"(?:buchung|reservierung|bestellung)\s+verwalten\b"),
    "fr": (r"(?:votre|ta)\s+(?:commande|réservation|rendez-vous)\b[^.!?]{0,80}?\b(?:est|a\s+été)"
           r"\s+(?:\w+\s+)?(?:confirmée?|prête?|disponible|réservée?)",
           r"confirmation\s+de\s+(?:réservation|commande|rendez-vous)\b",
           r"gérer\s+(?:ma|votre)\s+(?:réservation|commande)\b"),
    "es": (r"(?:tu|su)\s+(?:pedido|reserva|cita)\b[^.!?]{0,80}?\b(?:está|ha\s+sido)"
           r"\s+(?:\w+\s+)?(?:confirmad[oa]|list[oa]|disponible|reservad[oa])",
           r"confirmación\s+de\s+(?:(?:la|su|tu)\s+)?(?:reserva|pedido|cita)\b",
           r"gestionar\s+(?:mi|su|tu)\s+(?:reserva|pedido)\b"),
}  # fmt: skip
# What a service asks the reader to have with them when they turn up, or the turning up
# itself: "photo ID", "your order number", "at check-in", "bei der Abholung", "une pièce
# d'identité à l'arrivée", "su DNI a la llegada" (`_service`). Matched anywhere in a task's
# sentence, only in a service's notice.
TURNING_UP: Lexicon = {
    "en": (r"(?:photo\s+|valid\s+|government[- ]issued\s+)?id\b", r"identification\b",
           r"passport\b", r"driver'?s\s+licen[cs]e\b", r"insurance\s+card\b",
           r"(?:order|confirmation|booking|reservation|reference|pickup|ticket)\s+(?:number|code"
           r"|reference|email|e-mail)\b", r"booking\s+confirmation\b", r"boarding\s+pass\b",
           r"proof\s+of\s+(?:purchase|identity|id|address|booking)\b",
           r"(?:at|on|upon)\s+(?:arrival|check-?in|pick-?up|collection)\b",
           r"when\s+you\s+(?:arrive|pick\s+up|collect|check\s+in|come\s+in|get\s+here)\b"),
    "de": (r"(?:personal)?ausweis\w*", r"reisepass\b", r"lichtbildausweis\b", r"bestellnummer\b",
           r"(?:buchungs|reservierungs|auftrags)(?:nummer|bestätigung)\b", r"abholschein\b",
           r"bei\s+(?:der\s+|ihrer\s+|deiner\s+)?(?:ankunft|anreise|abholung)\b"),
    "fr": (r"pièce\s+d'identité\b", r"passeport\b", r"numéro\s+de\s+(?:commande|réservation)\b",
           r"(?:à|lors\s+de)\s+(?:l'|votre\s+|ton\s+)arrivée\b", r"lors\s+du\s+retrait\b",
           r"au\s+(?:retrait|comptoir)\b"),
    "es": (r"identificación\b", r"dni\b", r"pasaporte\b", r"número\s+de\s+(?:pedido|reserva)\b",
           r"a\s+(?:la|su|tu)\s+llegada\b", r"al\s+recoger\b"),
}  # fmt: skip
# An offer of more, before the cue: "for more information, please visit ...", "pour plus
# d'informations, merci de contacter ...": what follows offers, it does not ask.
# So is whom to turn to if something comes up: "for anything urgent, please contact ...", "in
# my absence", "pour toute urgence, merci de contacter", "in dringenden Fällen", "para
# cualquier urgencia" (an out-of-office reply's offer).
MORE_INFO: Lexicon = {
    "en": (r"for\s+(?:more|further|additional)\s+(?:information|info|details)",
           r"to\s+(?:learn|find\s+out|read)\s+more",
           r"for\s+(?:anything|something|any(?:thing)?\s+(?:\w+\s+)?(?:matters?|issues?|questions?"
           r"|queries|requests?)?)\s*(?:urgent|pressing|time-sensitive)",
           r"for\s+(?:urgent|pressing|time-sensitive)\s+(?:matters?|issues?|questions?|queries"
           r"|requests?|enquiries|inquiries|things?)",
           r"(?:in\s+(?:the\s+)?(?:case|event)\s+of\s+(?:an?\s+)?|for\s+)emergenc(?:y|ies)",
           r"if\s+(?:it(?:'s|\s+is)\s+|this\s+is\s+|your\s+\w+\s+is\s+)?(?:urgent|an\s+emergency)",
           r"(?:in|during)\s+my\s+absence", r"while\s+i(?:'m|\s+am)\s+(?:away|out|off)"),
    "de": (r"für\s+weitere\s+(?:informationen|infos|details)",
           r"(?:in|bei)\s+(?:dringenden|eiligen)\s+(?:fällen|anliegen|fragen|angelegenheiten)",
           r"in\s+notfällen", r"im\s+notfall", r"(?:in|während)\s+meiner\s+abwesenheit"),
    "fr": (r"pour\s+(?:plus|davantage)\s+d'(?:informations|infos|détails)",
           r"pour\s+toute\s+(?:urgence|demande\s+urgente|question\s+urgente)",
           r"en\s+cas\s+d'urgence", r"(?:en|pendant)\s+mon\s+absence"),
    "es": (r"para\s+más\s+(?:información|informes|detalles)",
           r"para\s+(?:cualquier|toda)\s+urgencia", r"en\s+caso\s+de\s+urgencia",
           r"para\s+(?:asuntos|temas|consultas)\s+urgentes", r"(?:en|durante)\s+mi\s+ausencia"),
}  # fmt: skip

# Keeping news to oneself: a confidentiality request asks nothing to be done ("please keep this
# confidential", "behandle das bitte vertraulich", "garde ça pour toi", "mantenlo en reserva").
# Matched at the start of what follows the request cue, or anywhere in a sentence without one.
DISCRETION: Lexicon = {
    "en": (
        # "keep this quiet", "treat the Q3 numbers and the org chart as confidential": what to
        # keep may be any noun phrase of a few words
        r"(?:keep(?:ing)?|treat|hold)\s+(?:this|it|that|these|them|the|our|my|his|her|their|any|all)\s+"
        r"(?:[^\s.!?;]+\s+){0,7}?(?:as\s+)?(?:strictly\s+)?(?:confidential|private|quiet|secret"
        r"|internal|under\s+wraps|between\s+(?:us|ourselves|the\s+two\s+of\s+us)|to\s+yoursel(?:f|ves)"
        r"|in\s+(?:strict\s+)?confidence|on\s+the\s+down-?low)\b",
        r"keep\s+(?:this|it)\s+(?:strictly\s+)?(?:confidential|private|quiet|secret)\b",
        r"(?:don't|do\s+not|not\s+to)\s+(?:share|mention|forward|tell|discuss|spread)\b",
        # "please keep it under your hat", "keep it to yourself for now", "mum's the word"
        r"keep\s+(?:this|it|that|them|the\s+news)\s+(?:[^\s.!?;]+\s+){0,3}?(?:under\s+your\s+hat"
        r"|to\s+yoursel(?:f|ves)|under\s+wraps|hush-?hush|on\s+the\s+q\.?t\.?)\b",
        r"(?:this\s+is\s+)?mum'?s\s+the\s+word\b",
        # an embargo: "please hold it until 7 p.m. Thursday", "don't publish before Monday"
        r"hold\s+(?:it|this|that|the\s+(?:story|news|item|release|announcement))\s+"
        r"(?:until|till|for)\b",
        r"(?:don't|do\s+not|not\s+to)\s+(?:publish|print|run|post)\s+(?:it|this|that|anything)\b",
    ),
    "de": (
        # "behandeln Sie den Termin bitte vertraulich": the thing may be any noun phrase
        r"(?:behandle|behandelt|behandeln\s+sie)\s+(?:[^\s.!?;]+\s+){0,7}?(?:bitte\s+)?(?:noch\s+)?"
        r"(?:streng\s+)?vertraulich\b",
        r"(?:das\s+)?(?:bleibt|bleibe)\s+(?:bitte\s+)?(?:erst\s+mal\s+|vorerst\s+)?unter\s+uns\b",
        r"(?:behalte|behaltet|behalten\s+sie)\s+(?:[^\s.!?;]+\s+){0,6}?(?:bitte\s+)?(?:noch\s+)?"
        r"für\s+(?:dich|euch|sich)\b",
        # the verb last, as a plea puts it: "bitte die Zahlen noch vertraulich behandeln"
        r"(?:[^\s.!?;,]+\s+){0,7}?(?:bitte\s+)?(?:noch\s+)?(?:streng\s+)?(?:vertraulich\s+"
        r"(?:behandeln|halten)|für\s+(?:dich|euch|sich)\s+behalten)\b",
        # "bitte noch nicht veröffentlichen", "nicht weitergeben"
        r"(?:noch\s+)?nicht\s+(?:veröffentlichen|weitergeben|weitersagen|weitererzählen"
        r"|verbreiten|drucken)\b",
    ),
    "fr": (
        r"(?:garde[rz]?|gardes)\s+(?:cela|ça|ceci|cette\s+information|l'information|le\s+secret)"
        r"(?:\s+pour\s+(?:toi|vous)|\s+confidentiel\w*)",
        # "garder les tarifs 2027 confidentiels", "traiter ce dossier de façon confidentielle"
        r"(?:garde[rz]?|gardes|traite[rz]?|traites|considére[rz]?)\s+(?:[^\s.!?;]+\s+){1,8}?"
        r"(?:de\s+(?:façon|manière)\s+|comme\s+|en\s+toute\s+)?(?:confidentiel(?:le)?s?"
        r"|confidentialité|secrète?s?)\b",
        r"(?:de\s+)?ne\s+(?:l'|le\s+|la\s+|les\s+)?(?:pas\s+)?(?:en\s+)?(?:ébruiter|divulguer)\b",
        r"(?:de\s+)?ne\s+pas\s+(?:en\s+)?(?:parler|diffuser|partager)\b",
        r"(?:que\s+)?(?:cela|ça|ceci)\s+reste\s+entre\s+nous\b",
        r"(?:de\s+)?ne\s+(?:rien\s+|pas\s+(?:encore\s+)?)(?:le\s+|la\s+|les\s+)?publier\b",
        r"(?:garde[rz]?|gardes)\s+(?:cela|ça|ceci|l'info(?:rmation)?|la\s+nouvelle)\s+entre\s+nous\b",
    ),
    "es": (
        # "mantén esto en reserva", "mantengan las cifras del piloto en secreto"
        r"(?:mant(?:én|en|enga|engan|ener)|guard(?:a|e|en|ar))(?:lo|la|los|las)?\s+"
        r"(?:[^\s.!?;]+\s+){0,7}?(?:en\s+|como\s+)?(?:confidencial(?:es)?|secreto|reserva)\b",
        r"(?:trat(?:a|e|en|ar))(?:lo|la|los|las)?\s+(?:[^\s.!?;]+\s+){0,7}?(?:con\s+"
        r"(?:total\s+)?(?:confidencialidad|discreción)|como\s+confidencial(?:es)?)\b",
        r"(?:no\s+(?:lo\s+)?(?:compartas|comparta|compartan|comentes|comente|digas))\b",
        # "que quede entre nosotros": let it stay between us
        r"(?:que\s+)?(?:quede|quedé|quedará|queda)\s+entre\s+(?:nosotros|nosotras|tú\s+y\s+yo)\b",
        r"no\s+(?:lo\s+|la\s+)?(?:publiques|publique|publiquen|publicar)\b",
    ),
}

# What makes an ask in an announcement a standing instruction, not a to-do: it holds every day
# or whenever its occasion comes ("wear a vest any time you cross the yard", "send a warm
# jacket every day", "jeden Tag", "à chaque passage", "todos los días"). Matched anywhere in a
# task's title.
STANDING: Lexicon = {
    "en": (r"every\s+(?:\w+\s+)?(?:day|morning|evening|night|time|visit|shift|contact|trip|entry)",
           r"each\s+(?:\w+\s+)?(?:day|morning|time|visit|shift)", r"any\s*time", r"whenever",
           r"at\s+all\s+times", r"daily", r"always"),
    "de": (r"jeden\s+(?:tag|morgen|abend)", r"jedes\s+mal", r"immer(?:\s+wenn)?", r"täglich",
           r"stets", r"jederzeit"),
    "fr": (r"chaque\s+(?:jour|matin|soir|fois|passage|visite)", r"tous\s+les\s+(?:jours|matins)",
           r"à\s+tout\s+moment", r"toujours"),
    "es": (r"cada\s+(?:día|mañana|vez|visita)", r"todos\s+los\s+días", r"siempre(?:\s+que)?",
           r"en\s+todo\s+momento"),
}  # fmt: skip
# A house rule said as what not to do: "please don't reply-all", "bitte nicht im Hof parken",
# "merci de ne pas utiliser", "por favor, no usen"; what follows it in the sentence is the
# way to do instead ("use #ops instead"). Not a reminder ("don't forget to ..."). Matched at
# the start of what follows the plea.
FORBIDDING: Lexicon = {
    "en": (r"(?:don't|do\s+not|never)\s+(?!forget\b|miss\b|hesitate\b)",),
    "de": (r"(?:nicht|keine?[nr]?)\s+(?!vergessen\b)",),
    "fr": (r"(?:de\s+)?ne\s+(?:pas|plus|jamais)\s+(?!oublier\b)", r"n'(?!oubli)\w+\s+pas\b"),
    "es": (r"no\s+(?!olvid\w*\b)\w+",),
}

# A sender that is an office, not a person ("Facilities Services", "Infection Prevention",
# "Kessler Kundendienst", "Service client", "Equipo de Recepción"): mail from it with no
# greeting to a person is an announcement to whoever it went to. Whole words of the display name.
ROLE_SENDERS: Lexicon = {
    "en": ("services?", "team", "office", "department", "dept", "facilities", "operations", "ops",
           "support", "safety", "security", "desk", "help\\s?desk", "cent(?:er|re)", "prevention",
           "administration", "admin", "hr", "it", "communications", "comms", "committee",
           "council", "reception", "payroll", "management", "human\\s+resources",
           # an institution writing to its families, members or guests
           "school", "academy", "library", "church", "parish", "association", "club", "league",
           "society", "hotel", "township", "board", "pta", "hoa"),
    "de": ("kundendienst", "verwaltung", "hausverwaltung", "personalabteilung", "abteilung",
           "sekretariat", "kundenservice", "schule", "grundschule", "gymnasium", "verein",
           "gemeinde", "bibliothek", "hotel", "kita"),
    "fr": ("service", "équipe", "direction", "secrétariat", "accueil", "école", "collège",
           "lycée", "mairie", "association", "club", "hôtel", "bibliothèque", "paroisse"),
    "es": ("equipo", "servicio", "departamento", "administración", "dirección", "recepción",
           "secretaría", "colegio", "escuela", "asociación", "club", "ayuntamiento", "hotel",
           "biblioteca", "parroquia"),
}  # fmt: skip

# What a request spoken to a group ("Hi all,", "Team,") asks when it is a house rule for everyone
# ("please use the side door", "please avoid the lobby"), not the reader's to-do: the start of
# the task's title (an imperative, or the infinitive titles use in German, French and Spanish).
BROADCAST_CONDUCT: Lexicon = {
    "en": (r"use\b", r"avoid\b", r"note\b", r"mind\b", r"stay\b", r"park\b", r"expect\b",
           r"respect\b", r"wear\b", r"allow\b", r"enjoy\b",
           r"follow\s+the\s+(?:signs?|rules?|instructions?|guidelines?|signage)\b"),
    "de": (r"(?:be)?nutz(?:en|t)\b", r"vermeide[nt]?\b", r"beachte[nt]?\b", r"park(?:en|t)\b"),
    "fr": (r"utilise[rz]\b", r"évite[rz]\b", r"respecte[rz]\b", r"(?:se\s+|vous\s+)?gare[rz]\b"),
    "es": (r"us(?:ar|en|e|a)\b", r"utili(?:zar|za|cen|ce)\b", r"evit(?:ar|en|e|a)\b",
           r"respet(?:ar|en|e|a)\b", r"estacion(?:ar|en|e|a)\b"),
}  # fmt: skip

# What an announcement asks each reader to do that is a to-do of their own: something to hand
# in, answer, sign, book or pay ("please return the signed slip", "bitte bestätigen Sie",
# "merci de nous retourner le formulaire", "favor de firmar"). An announcement's other pleas
# without a date ("please rake leaves to the curb", "please keep the back door shut") say how
# everyone is to behave (`_broadcast`). Matched anywhere in a task's title, as whole words.
ERRANDS: Lexicon = {
    "en": (r"return", r"send", r"submit", r"sign(?:\s+up)?", r"complete", r"fill", r"register",
           r"enrol+", r"book", r"reserve", r"pay", r"confirm", r"reply", r"respond", r"rsvp",
           r"answer", r"let\s+(?:me|us|\w+)\s+know", r"tell\s+(?:me|us)", r"approve", r"review",
           r"renew", r"update", r"choose", r"select", r"vote", r"schedule", r"call", r"order",
           r"upload", r"hand\s+in", r"turn\s+in", r"pick\s+(?:\w+\s+)?up", r"apply", r"cancel",
           r"make\s+(?:\w+\s+)?(?:\d+\s+)?(?:elections?|payments?|appointments?|bookings?"
           r"|choices?|selections?)",
           r"claim", r"download", r"print", r"collect", r"check\s+in", r"volunteer"),
    "de": (r"\w*send\w*", r"\w*schick\w*", r"einreich\w*", r"reich\w*\s+\w*\s*ein",
           r"unterschreib\w*", r"unterzeichn\w*", r"ausfüll\w*", r"anmeld\w*", r"registrier\w*",
           r"buch(?:en|t|e)", r"\w*zahl(?:en|t|e)", r"überweis\w*", r"bestätig\w*", r"antwort\w*",
           r"zusag\w*", r"absag\w*", r"prüf\w*", r"freigeb\w*", r"\w*geben\s+sie\s+\w*",
           r"genehmig\w*", r"erneuer\w*", r"aktualisier\w*", r"wähl\w*", r"abgeb\w*",
           r"hochlad\w*", r"abhol\w*"),
    "fr": (r"retourn\w*", r"renvoy\w*", r"envoy\w*", r"soumett\w*", r"sign\w*", r"rempli\w*",
           r"complét\w*", r"inscri\w*", r"réserv\w*", r"pay\w*", r"régl\w*", r"confirm\w*",
           r"répond\w*", r"valid\w*", r"approuv\w*", r"renouvel\w*", r"mettre\s+à\s+jour",
           r"chois\w*", r"remett\w*", r"dépos\w*", r"téléchar\w*", r"récupér\w*"),
    "es": (r"devolv\w*", r"devuelv\w*", r"envi\w*", r"mand\w*", r"entreg\w*", r"firm\w*",
           r"rellen\w*", r"complet\w*", r"llen\w*", r"inscrib\w*", r"registr\w*", r"reserv\w*",
           r"pag\w*", r"confirm\w*", r"respond\w*", r"contest\w*", r"aprob\w*", r"aprueb\w*",
           r"revis\w*", r"renov\w*", r"actualiz\w*", r"elig\w*", r"eleg\w*", r"recog\w*"),
}  # fmt: skip
# A reminder of something to remember rather than a to-do ("please remember to set your
# clocks back", "n'oubliez pas de", "denkt daran", "recuerden"): with an errand in it
# ("remember to submit your timesheet") it is still a task (`ERRANDS`).
REMINDING: Lexicon = {
    "en": (r"remember\s+to", r"don't\s+forget\s+to", r"do\s+not\s+forget\s+to",
           r"make\s+sure\s+(?:to|you)", r"be\s+sure\s+to",
           r"a\s+(?:gentle\s+|friendly\s+|quick\s+)?reminder"),
    "de": (r"denk(?:t|en\s+sie)?\s+(?:bitte\s+)?daran", r"vergess(?:t|en\s+sie)\s+nicht",
           r"nicht\s+vergessen", r"erinnerung"),
    "fr": (r"n'oubli(?:ez|e)\s+pas", r"pens(?:ez|e)\s+à", r"rappel"),
    "es": (r"recuerd(?:en|e|a)", r"no\s+olvid(?:en|e|es)", r"record(?:ad|atorio)"),
}  # fmt: skip

# What makes an ask of a group the reader's own (`_broadcast`, mail `to_group`: the reader in
# neither To nor Cc): an obligation on each of them ("every employee must", "is required",
# "müssen", "obligatoire", "deben"), a form to hand back ("sign and return", "complete the
# attached form", "Formular", "formulaire") or a question that wants one of them to take it
# on ("can someone update the slide?", "kann jemand", "quelqu'un peut", "¿alguien puede?").
OBLIGING: Lexicon = {
    "en": (r"must", r"required", r"mandatory", r"compulsory", r"obligatory"),
    "de": (r"müss(?:en|t)", r"muss", r"verpflichtend", r"pflicht\w*"),
    "fr": (r"doi(?:t|vent|vez)", r"obligatoires?", r"(?:est|sont)\s+tenu(?:e|s|es)?"),
    "es": (r"deb(?:e|en|éis)", r"obligatori[oa]s?", r"tien(?:e|en)\s+que"),
}
FORMS: Lexicon = {
    "en": (r"sign\s+and\s+return", r"(?:complete|fill\s+(?:in|out))\s+(?:the|this|your|our)\s+",
           r"(?:attached|enclosed|linked)\s+(?:\w+\s+)?(?:form|slip|waiver|survey|questionnaire)",
           r"(?:permission|consent|registration)\s+(?:slip|form)"),
    "de": (r"\w*formular\w*", r"unterschrieben\w*\s+zurück", r"ausfüllen"),
    "fr": (r"formulaire", r"sign\w*\s+et\s+(?:nous\s+)?retourn\w*", r"autorisation"),
    "es": (r"formulario", r"firm\w*\s+y\s+devol\w*", r"autorización"),
}  # fmt: skip
ASKING_ANYONE: Lexicon = {
    "en": (r"(?:can|could|would|will)\s+(?:someone|somebody|anyone|anybody|one\s+of\s+you)",
           r"(?:does|do|is)\s+(?:anyone|anybody)", r"who\s+(?:can|could|would|wants\s+to)",
           r"any\s+(?:volunteers|takers)"),
    "de": (r"(?:kann|könnte)\s+(?:jemand|einer|eine)", r"wer\s+(?:kann|könnte|hat\s+zeit)"),
    "fr": (r"quelqu'un\s+(?:peut|pourrait)", r"qui\s+(?:peut|pourrait)"),
    "es": (r"(?:alguien|alguno)\s+(?:puede|podría)", r"(?:puede|podría)\s+alguien",
           r"quién\s+(?:puede|podría)"),
}  # fmt: skip
# A list of owners' items ("- Marcus: fix the door") is meeting notes' action items under a
# heading that names them so ("Action items:", "Next steps", "Aufgaben", "Prochaines étapes").
ACTION_HEADINGS: Lexicon = {
    "en": (r"action\s+items?", r"actions?", r"next\s+steps", r"to-?dos?", r"follow-?ups?",
           r"owners?", r"ais", r"tasks?", r"assignments?", r"who\s+does\s+what"),
    "de": (r"aufgaben", r"to-?dos?", r"nächste\s+schritte", r"maßnahmen"),
    "fr": (r"actions?", r"prochaines\s+étapes", r"à\s+faire", r"tâches"),
    "es": (r"tareas", r"acciones", r"próximos\s+pasos", r"pendientes"),
}  # fmt: skip

# What a scam or spam mail dangles: money to claim, a prize, a deal too good, and what it fishes
# for (an account to "verify", banking details, a fee to release funds). Matched anywhere in
# the subject and text; `_scam` counts a message a scam only with a second sign beside it
# (pressure, a spammer's style or a sender domain that names itself a promotion).
SCAM_BAIT: Lexicon = {
    "en": (
        r"you(?:'ve|\s+have)\s+(?:been\s+selected|won)\b", r"winner", r"prize", r"lottery",
        r"jackpot",
        r"inheritance", r"beneficiary", r"unclaimed", r"trust\s+fund", r"funds?\s+transfer",
        r"processing\s+fee", r"release\s+(?:the|your)\s+funds", r"\$\s?\d[\d,.]*\s*(?:m|million)\b",
        r"(?:bank(?:ing)?|account|card|login|personal)\s+(?:details|information|credentials)",
        r"passport\s+copy", r"social\s+security\s+number", r"wire\s+(?:transfer|\$|the)",
        r"(?:verify|confirm|validate|unlock|reactivate)\s+your\s+(?:account|identity|password"
        r"|mailbox|wallet)", r"account\s+(?:will\s+be\s+)?(?:suspended|locked|closed|deactivated)",
        r"bitcoin", r"crypto(?:currency)?", r"guaranteed\s+returns?", r"double\s+your",
        r"refinanc\w*", r"mortgage\s+rates?", r"pharmacy", r"pills?\b", r"pain\s?killers",
        r"viagra", r"casino", r"lowest\s+prices?",
        r"(?:special|exclusive|limited)\s+(?:offer|deal)",
        r"offer\s+inside", r"free\s+(?:gift|trial|money)", r"claim\s+(?:it|your|now)",
        r"stock\s+(?:pick|select)\w*", r"(?:overdue|unpaid)\s+invoice\s+attached",
        r"watch\s+this\s+stock", r"penny\s+stocks?", r"(?:future|forward)[-\s]looking\s+statements",
        r"intercourse", r"erecti(?:le|on)", r"libido", r"enlarge(?:ment|r)\b",
        # a sales pitch's scarce seat: "lock in your Platinum tier", "your reserved seat"
        r"(?:sponsor(?:ship)?|premier|premium|platinum|vip)\s+(?:sponsor(?:ship)?\s+)?"
        r"(?:tiers?|packages?|slots?)\b",
        r"reserved\s+(?:seat|spot|place)\b",
    ),
    "de": (r"gewinn(?:spiel|er)?\b", r"erbschaft", r"konto\s+(?:bestätigen|verifizieren)"),
    "fr": (r"gagnant", r"héritage", r"vérifie[zr]\s+votre\s+compte"),
    "es": (r"ganador", r"herencia", r"verifi(?:ca|que)\s+su\s+cuenta"),
}  # fmt: skip

# The pressure a scam puts on its reader to act before thinking.
SCAM_PRESSURE: Lexicon = {
    "en": (
        r"act\s+(?:fast|now|quickly|immediately)", r"expires?\s+(?:in|within|today|soon)",
        r"within\s+(?:24|48|72)\s+hours", r"before\s+(?:it'?s\s+too\s+late|spots?\s+fill)",
        r"spots?\s+(?:are\s+)?filling", r"don'?t\s+(?:miss|delay)", r"last\s+chance",
        r"limited\s+time", r"click\s+(?:here|fast|now|below|the\s+link)", r"do\s+not\s+delay",
        r"(?:reply|respond)\s+(?:immediately|at\s+once)", r"or\s+(?:lose|forfeit)",
        r"money\s+goes\s+back", r"urgent\s+(?:offer|reply|response)",
        r"lock\s+in\s+your\b", r"(?:only|last)\s+\d+\s+hours?\s+(?:left|to)\b",
        r"(?:window|offer|spot|slot|seat)\s+(?:is\s+)?(?:closing|closes|nearly\s+(?:shut|gone))",
        r"stop\s+(?:throwing|wasting)\s+(?:your\s+)?money",
    ),
    "de": (r"nur\s+noch\s+heute", r"jetzt\s+klicken", r"sofort\s+handeln"),
    "fr": (r"dernière\s+chance", r"cliquez\s+ici", r"agissez\s+vite"),
    "es": (r"última\s+oportunidad", r"haga\s+clic\s+aquí", r"actúe\s+ya"),
}  # fmt: skip
