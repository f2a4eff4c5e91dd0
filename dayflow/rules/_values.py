"""A rule and the rules in force: what each kind forbids or prefers, said in words a person
reads, and the one matcher every reader of mail asks (the tools, `replay`).

Four kinds, each made by a command and kept in `rules.toml` (`_file.py`):

- `reject` (`dayflow tasks reject`): no task from `match` (a sender, or `list:ID`) asking
  `asking` (words of the request; empty: any request), nor ever again under `key`;
- `mute`: nothing from `match` (a sender, a domain, `list:ID`, `thread:KEY`) is a task or a
  reply owed or awaited;
- `important`: mail from `match` (a sender or a domain) first in its section, and One thing
  prefers it;
- `snooze`: the task under `key`, or the owed reply or wait of thread `match`, left out on
  every day before `until` (it is back on that day).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from dayflow.errors import UsageError
from dayflow.frozen import Frozen, fields_of
from dayflow.senders import sender_address

REJECT, MUTE, IMPORTANT, SNOOZE = "reject", "mute", "important", "snooze"
KINDS = (REJECT, MUTE, IMPORTANT, SNOOZE)
LIST_PREFIX, THREAD_PREFIX = "list:", "thread:"
MAX_PATTERN = 300  # characters of a mute/important match: an address is 254 at most
MAX_FIELD_CHARS = 500  # no field a command writes is longer; a hand-written one is refused
PROMPT_RULES = 40  # rules named in the system prompt; the rest are applied all the same
MOST_SNOOZE_DAYS = 366
_DOMAIN = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}")
_LIST_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,200}\.[a-z0-9-]{2,63}")
_THREAD = re.compile(r"thread:[A-Za-z0-9._:@+-]{4,200}")
# A From line as `dayflow why` and mail show it: `Jane Doe <jane@x>`, `"Doe, Jane" <jane@x>`.
_FROM_LINE = re.compile(r"[^<>]*<\s*([^<>\s]+@[^<>\s]+)\s*>", re.DOTALL)
_WORDS = re.compile(r"\w+")
# A task's item key as `dayflow tasks --json` gives it (mail:…, event:…, promise:…, model:…):
# a scheme, then something with a word in it. `*` is none (keys are never patterns).
_ITEM_KEY = re.compile(r"[a-z][a-z0-9_-]{0,30}:[^\s#].*", re.DOTALL)


class Rule(Frozen):
    """One rule: its kind and what it matches, and where it came from (`made`, the date;
    `by`, the command; `item`, the task or item it was made on)."""

    id: str
    kind: str
    match: str = ""  # reject, mute, important: whose mail; snooze: a thread's key
    asking: str = ""  # reject: the words of the request ("" any)
    key: str = ""  # reject, snooze: the task's item key (never a task again, or left out)
    until: str = ""  # snooze: YYYY-MM-DD, the day it is back
    why: str = ""
    made: str = ""
    by: str = ""
    item: str = ""
    title: str = ""  # the task's title, for the person reading the file

    def says(self) -> str:
        """The rule in one line, as `dayflow rules` lists it and errors name it."""
        whose = shown_match(self.match)
        if self.kind == REJECT:
            asking = f" asking to {self.asking!r}" if self.asking else ""
            return f"no task from {whose}{asking}" if whose else f"no task under {self.key}"
        if self.kind == MUTE:
            return f"mute {whose}: never a task, never a reply owed or awaited"
        if self.kind == IMPORTANT:
            return f"{whose} is important: first in its section, and One thing prefers it"
        what = f"task {self.title!r}" if self.key and self.title else self.key or whose
        return f"{what} snoozed until {self.until}"

    def named(self) -> str:
        """`r3 (no task from ...)`: how a refusal names the rule."""
        return f"rule {self.id} ({self.says()})"

    def to_json(self) -> dict[str, str]:
        """The rule as `rules.toml` and a run's settings keep it: the fields that are set."""
        return {k: v for k, v in fields_of(self).items() if v}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Rule:
        return cls(**{k: str(doc[k]) for k in cls._fields if k in doc})


def shown_match(match: str) -> str:
    """A match as a person reads it: `the list news.example.org`, `thread:…`, an address."""
    if match.startswith(LIST_PREFIX):
        return f"the list {match[len(LIST_PREFIX) :]}"
    return match


def parse_match(text: str, *, lists: bool = True, threads: bool = True) -> str:
    """A mute or important pattern made canonical: an address (`dana@example.org`), a domain
    (`example.org`, `@example.org`), `list:ID` (or `<ID>` or `list:<ID>`, as a List-Id header
    writes it), `thread:KEY`. UsageError for what would match everything or nothing (`*`, `@`,
    empty, a bare TLD, a wildcard). A From line (`"Doe, Jane" <jane@x.example>`) is its
    address."""
    raw = text.strip()
    from_line = _FROM_LINE.fullmatch(raw)
    if from_line is not None:
        raw = from_line.group(1)
    if len(raw) > MAX_PATTERN:  # an address is 254 at most; rules.toml refuses a longer match
        raise UsageError(
            f"{raw[:60]!r}… is {len(raw)} characters: no address, domain, list or thread key "
            f"is longer than {MAX_PATTERN}"
        )
    low = raw.lower()
    refused = f"{raw[:60]!r} would match too much or nothing"
    kinds = ["an address", "a domain (example.org)"]
    kinds += ["list:ID"] * lists + ["thread:KEY"] * threads
    give = f"give {', '.join(kinds[:-1])} or {kinds[-1]}"  # only what this command takes
    if not raw or any(c in raw for c in "*?[]%") or any(c.isspace() for c in raw):
        raise UsageError(f"{refused}: {give}")
    if low.startswith(THREAD_PREFIX):
        # The prefix in any case, as list:, and once: a brief's JSON gives a thread's key as
        # `thread:…` already, so `thread:KEY` written from it says the prefix twice.
        while raw[: len(THREAD_PREFIX)].lower() == THREAD_PREFIX:
            raw = raw[len(THREAD_PREFIX) :]
        raw = THREAD_PREFIX + raw
        if not threads or not _THREAD.fullmatch(raw):
            raise UsageError(f"{refused}: thread:KEY takes the key a brief's JSON gives a thread")
        return raw
    if low.startswith(LIST_PREFIX) or (low.startswith("<") and low.endswith(">")):
        ident = low[len(LIST_PREFIX) :] if low.startswith(LIST_PREFIX) else low
        if ident.startswith("<") and ident.endswith(">"):
            ident = ident[1:-1]  # `list:<ID>`: the List-Id as copied from its header
        if not lists or not _LIST_ID.fullmatch(ident):
            raise UsageError(f"{refused}: a list is list:ID, its List-Id (news.example.org)")
        return LIST_PREFIX + ident
    local, at, domain = low.rpartition("@")
    _ascii_domain(raw, local if at else "", domain.strip("."))
    if at and local:
        if not _DOMAIN.fullmatch(domain) or not re.fullmatch(r"[a-z0-9.!#$&'+/=^_`{|}~-]+", local):
            raise UsageError(f"{refused}: not an address")
        return f"{local}@{domain}"
    domain = domain.strip(".")
    if not _DOMAIN.fullmatch(domain):
        raise UsageError(
            f"{refused}: a domain has a name and a top level (example.org), not only {domain!r}"
            if domain
            else f"{refused}: {give}"
        )
    return domain


def not_a_public_suffix(match: str) -> str:
    """`match`, unless it is a whole public suffix (co.uk, github.io: every site under it),
    which the Public Suffix List says; UsageError naming it then."""
    if match.startswith((THREAD_PREFIX, LIST_PREFIX)) or "@" in match:
        return match
    if _public_suffixes().is_public(match):
        raise UsageError(
            f"{match!r} is a public suffix: it names every site under it, not one sender's; "
            f"give one domain under it (example.{match})"
        )
    return match


@functools.cache
def _public_suffixes() -> Any:
    """The Public Suffix List, parsed once per process (a file of a thousand domain rules is
    read without parsing it a thousand times)."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


def check_key(key: str) -> str:
    """A rule's `key`: a task's item key (`mail:0d34b8eba894`), its `#n` aside; UsageError
    for one no task has (`*`: a key is matched as it is, never as a pattern)."""
    base = key.strip().split("#", 1)[0]
    if not _ITEM_KEY.fullmatch(base) or not _WORDS.search(base.partition(":")[2]):
        raise UsageError(
            f"key {key[:40]!r} is no task's key: give the key `dayflow tasks --json` shows "
            "(mail:…), one task's, not a pattern"
        )
    return base


def _ascii_domain(raw: str, local: str, domain: str) -> None:
    """A domain in another script (`exämple.org`) is refused naming its IDNA form
    (`xn--exmple-cua.org`), the form mail headers carry it in."""
    if domain.isascii():
        return
    try:
        ascii_form = domain.encode("idna").decode("ascii")
    except UnicodeError:
        return  # not a domain at all: the checks below refuse it
    shown = f"{local}@{ascii_form}" if local else ascii_form
    raise UsageError(f"{raw[:60]!r}: write the domain as mail carries it: {shown}")


@dataclass(frozen=True)
class Facts:
    """What the rules read of one message or thread: its sender's address, its List-Id, its
    followups thread key, its mail key and its words (subject and text)."""

    sender: str = ""
    list_id: str = ""
    thread: str = ""
    key: str = ""
    text: str = ""
    keys: tuple[str, ...] = ()  # an owed reply's or a wait's: the mail keys it stands for

    @classmethod
    def of_json(cls, message: dict[str, Any], thread: str = "") -> Facts:
        """The facts of a message as read_inbox or read_message gives it."""
        text = " ".join(str(message.get(k) or "") for k in ("subject", "snippet", "body"))
        return cls(
            sender=sender_address(str(message.get("from") or "")),
            list_id=str(message.get("list_id") or "").lower(),
            thread=thread,
            key=str(message.get("key") or "").split("#", 1)[0],
            text=text,
        )


def matches(match: str, facts: Facts) -> bool:
    """Whether a pattern (`parse_match`'s form) names this mail."""
    if not match:
        return False
    if match.startswith(THREAD_PREFIX):
        return facts.thread == match
    if match.startswith(LIST_PREFIX):
        return bool(facts.list_id) and facts.list_id == match[len(LIST_PREFIX) :]
    sender = _base(facts.sender)
    if "@" in match:
        return bool(sender) and sender == _base(match)
    domain = sender.rpartition("@")[2]
    return bool(domain) and (domain == match or domain.endswith("." + match))


def _base(address: str) -> str:
    local, at, domain = address.strip().lower().rpartition("@")
    return f"{local.split('+', 1)[0] or local}@{domain}" if at else ""


def asks(asking: str, text: str) -> bool:
    """Whether `text` asks with these words: each word in order, each a word's start
    (`review` finds "reviewing"), case and spacing aside."""
    words = _WORDS.findall(asking.casefold())
    if not words:
        return True
    pattern = r"\W+".join(rf"\b{re.escape(w)}\w*" for w in words)
    return re.search(pattern, text.casefold()) is not None


# Words nearly every request from a sender uses: a reject asking only these (or the user's own
# name, which the greeting says) refuses every task from that sender, a mute in all but name.
# Short and English on purpose: a word of the request itself is what `--asking` is for.
STOP_WORDS = frozenset(
    "a an and are as at be by can could do for from have hi hello i if in is it me my of on "
    "or our please re so that the this to us we will with would you your".split()
)


def own_names(addresses: Iterable[str]) -> frozenset[str]:
    """The user's name as their own addresses spell it (`sam.lee@...`: sam, lee), the words a
    greeting to them uses ("Hi Sam")."""
    found: set[str] = set()
    for address in addresses:
        local = address.partition("@")[0].casefold()
        found.update(w for w in re.findall(r"[^\W\d_]+", local) if len(w) >= 2)
    return frozenset(found)


def check_asking(
    asking: str, what: str = "--asking", sender: str = "", names: frozenset[str] = frozenset()
) -> str:
    """A reject's words, one space apart; UsageError for words that would match every request
    (`*`, `.*`, none at all: `asks` reads only words, and no word is any request; or only
    STOP_WORDS and the user's own `names`), which is a mute of the sender in all but name."""
    words = " ".join(asking.split())
    mute = f"`dayflow mute {sender or 'SENDER'}` to silence the sender altogether"
    if not _WORDS.search(words):
        raise UsageError(
            f"{what} {words[:40]!r} names no word of a request, so it would refuse every task "
            f"from that sender: give a word the request uses (review), or {mute}"
        )
    common = STOP_WORDS | {n.casefold() for n in names}
    if all(w in common or w.isdigit() for w in _WORDS.findall(words.casefold())):
        raise UsageError(
            f"{what} {words[:40]!r} has only words nearly every request uses (or your own "
            f"name), so it would refuse every task from that sender: give a word of the "
            f"request itself (review), or {mute}"
        )
    return words


def asking_of(title: str) -> str:
    """The words a rejected task's request is known by: its title's verb ("Review the Q3
    deck" -> "review"); "" when it has none worth matching (then any request)."""
    words = _WORDS.findall(title.casefold())
    return words[0] if words and len(words[0]) >= 3 and not words[0].isdigit() else ""


def check_until(until: date, today: date, *, most_days: int) -> None:
    """A snooze's day: after today, within `most_days`."""
    if until <= today:
        raise UsageError(f"--until {until} is not after today ({today}): nothing to snooze")
    if (until - today).days > most_days:
        raise UsageError(
            f"--until {until} is more than {most_days} days away; snooze for a year at most "
            "(or mute it)"
        )


class RuleSet:
    """The rules in force for one run or one command: asked of each message and thread."""

    def __init__(self, rules: tuple[Rule, ...] = ()) -> None:
        self.rules = rules

    def __bool__(self) -> bool:
        return bool(self.rules)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleSet) and other.rules == self.rules

    __hash__ = None  # type: ignore[assignment]

    def of(self, kind: str) -> list[Rule]:
        return [r for r in self.rules if r.kind == kind]

    def bars(self, facts: Facts, day: date) -> Rule | None:
        """The rule that says this mail is no task (a mute, a reject, a snooze), if one does."""
        for rule in self.of(MUTE):
            if matches(rule.match, facts):
                return rule
        for rule in self.of(REJECT):
            if facts.key and rule.key and rule.key.split("#", 1)[0] == facts.key:
                return rule
            if matches(rule.match, facts) and asks(rule.asking, facts.text):
                return rule
        return self.snoozed(facts.key, day) or self.snoozed(facts.thread, day)

    def snoozed(self, key: str, day: date) -> Rule | None:
        """The snooze that leaves out, on `day`, the task under `key` or thread `key`."""
        if not key:
            return None
        for rule in self.of(SNOOZE):
            if key in (rule.key.split("#", 1)[0], rule.match) and day.isoformat() < rule.until:
                return rule
        return None

    def snooze_ends(self, key: str, day: date) -> Rule | None:
        """The snooze of the task under `key` that ends on `day`: the task is back that day."""
        if not key:
            return None
        for rule in self.of(SNOOZE):
            if key in (rule.key.split("#", 1)[0], rule.match) and day.isoformat() == rule.until:
                return rule
        return None

    def forbids_key(self, key: str, day: date) -> Rule | None:
        """The rule that refuses a task under `key` whatever the mail says: a rejected
        task's own key, a snoozed one, a muted thread."""
        base = key.split("#", 1)[0]
        for rule in self.rules:
            if rule.kind == REJECT and rule.key and rule.key.split("#", 1)[0] == base:
                return rule
            if rule.kind == MUTE and rule.match == base:
                return rule
        return self.snoozed(base, day)

    def leaves_out(self, facts: Facts, day: date) -> Rule | None:
        """The rule that leaves a reply owed or awaited out: a mute of its person or thread,
        a snooze of its thread, or the rejection of a task filed from one of its messages
        (`tasks reject`: not a task, and not mine, so no reply owed for it either) or its
        snooze until then (the ask is the task's, and comes back with it)."""
        for rule in self.of(MUTE):
            if matches(rule.match, facts):
                return rule
        bases = {k.split("#", 1)[0] for k in facts.keys}
        for rule in self.of(REJECT):
            if rule.key and rule.key.split("#", 1)[0] in bases:
                return rule
        for base in sorted(bases):
            found = self.snoozed(base, day)
            if found is not None:
                return found
        return self.snoozed(facts.thread, day)

    def important(self, facts: Facts) -> Rule | None:
        return next((r for r in self.of(IMPORTANT) if matches(r.match, facts)), None)

    def prompt_section(self) -> str:
        """The short section of the system prompt that tells a model the user's rules (the
        tools enforce them too: create_task refuses what a rule forbids)."""
        if not self.rules:
            return ""
        lines = [
            "",
            "",
            "The user's own rules, from their corrections. Obey them: no task for a message "
            "read_inbox or read_message marks `no_task` (it names the rule; create_task "
            "refuses it), nothing in your brief of what read_followups lists under "
            "`left_out`, what is marked `important` first in its section and preferred "
            "for the One thing, and a task read_tasks marks `snooze_ended` in Needs action "
            "today (its snooze is over), though due later:",
        ]
        # The tools enforce every rule; the prompt names the first PROMPT_RULES, so that a
        # file of a thousand rules does not cost a thousand lines on every call.
        lines += [f"- {r.id}: {r.says()[:200]}" for r in self.rules[:PROMPT_RULES]]
        if len(self.rules) > PROMPT_RULES:
            more = len(self.rules) - PROMPT_RULES
            lines.append(f"- and {more} more, which the marks and create_task apply")
        return "\n".join(lines)

    def to_json(self) -> list[dict[str, str]]:
        return [r.to_json() for r in self.rules]

    @classmethod
    def from_json(cls, docs: list[dict[str, Any]] | None) -> RuleSet:
        return cls(tuple(Rule.from_json(d) for d in docs or () if isinstance(d, dict)))
