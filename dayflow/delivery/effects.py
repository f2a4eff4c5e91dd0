"""A delivery as saved effects of the run's final step: the brief being delivered, the log its
marks are kept in (`deliver:<sink>`, `#intent`, `#sending`, `#refused`), and what a mark found
on resume means."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from dayflow.delivery.settings import Settings
    from dayflow.page import Page

KEY_PREFIX = "deliver:"
EFFECT_NAME = "deliver"


class EffectLog(Protocol):
    """The saved effects of the run's final step, as the store keeps them."""

    def get(self, key: str) -> tuple[str, bool] | None: ...

    def save(self, key: str, content: str, is_error: bool = False) -> None: ...


@dataclass(frozen=True)
class Brief:
    run_id: str
    brief_date: str
    text: str
    # The addresses the run read in the user's own mail and calendar (dayflow.shown): the only
    # links a file or a mail keeps (dayflow.safe_text).
    links: frozenset[str] = frozenset()
    # "Update 14:05" for a later brief of the day (an update), so that a note holding the
    # morning's brief and its updates tells them apart; None for the day's brief.
    label: str | None = None
    # The brief as a page (`dayflow.page`), from the run's committed reads: what the HTML part
    # of the mail and a `file:*.html` sink carry. None: a page of the text's own lines.
    page: Page | None = None

    @property
    def html(self) -> Page:
        """The page a mail's HTML part and a page file are written from."""
        if self.page is not None:
            return self.page
        from dayflow.page import page_of

        return page_of(
            [], self.text, run_id=self.run_id, brief_date=self.brief_date, zone="", label=self.label
        )

    @property
    def inert(self) -> str:
        """The text as a file or a mail carries it: escapes, images and foreign links inert,
        and an update's label on its first heading (or above it, when it starts with none)."""
        from dayflow.safe_text import inert_markdown

        text = inert_markdown(self.text, self.links)
        if self.label is None:
            return text
        head, sep, rest = text.lstrip("\n").partition("\n")
        if re.match(r"#{1,6} ", head):
            return f"{head.rstrip()} — {self.label}{sep}{rest}"
        return f"## {self.label}\n\n{text}"


@dataclass(frozen=True)
class Attempt:
    """One sink's try at delivering `brief`: its marks go in `log` under the sink's `key` and
    this try's `number`; `kill` is the crash tests' hook at each delivery kill point."""

    brief: Brief
    log: EffectLog
    key: str
    settings: Settings
    kill: Callable[[str], None]
    number: int = 1

    def mark(self, what: str, **data: Any) -> None:
        """Save this try's `what` mark ("sending", "refused") holding `data`."""
        self.log.save(mark_key(self.key, what, self.number), json.dumps(data))


class Unanswered(Exception):
    """The connection was lost after the message was handed over, before the server answered:
    it may have been accepted, so it is recorded as uncertain and never sent again."""


def mark_key(key: str, what: str, attempt: int) -> str:
    """The saved mark `what` (sending, refused) of attempt `attempt` at delivering `key`; the
    first attempt's marks carry no number (as before attempts were counted)."""
    return f"{key}#{what}" if attempt == 1 else f"{key}#{what}.{attempt}"


def attempt_of(log: EffectLog, key: str) -> tuple[int, bool]:
    """(the attempt to make next, whether the last one is in doubt). An attempt with a
    `sending` mark and no `refused` mark was cut off while the server could have accepted it;
    one the server answered with a refusal is over, and the next attempt sends again."""
    attempt = 1
    while log.get(mark_key(key, "sending", attempt)) is not None:
        if log.get(mark_key(key, "refused", attempt)) is None:
            return attempt, True
        attempt += 1
    return attempt, False


def uncertain_note(sink: str, log: EffectLog) -> str:
    intent = log.get(KEY_PREFIX + sink + "#intent")
    msgid = json.loads(intent[0]).get("message_id") if intent else None
    what = f" (look for Message-ID {msgid})" if msgid else ""
    return (
        f"uncertain: a process was killed while {sink} was being delivered; it may have "
        f"arrived{what}, and is not sent again"
    )


def one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())[:300]


def describe(effects: list[Any]) -> list[dict[str, Any]]:
    """The deliveries among a run's saved effects, for `show`: sink, ok, what happened."""
    out = []
    for e in effects:
        key = e.tool_use_id
        if not key.startswith(KEY_PREFIX) or "#" in key:
            continue
        out.append({"sink": key[len(KEY_PREFIX) :], "ok": not e.is_error, "detail": e.content})
    return out
