"""The followups of a window: every thread of the last `followup_days`, and the two lists.

`build_followups` is pure (records in, a `Followups` out) so the rules are tested without any
mailbox; `reader.read_followups` feeds it from the mail sources and their sent folders.
Messages dated after `now` (a clock set wrong, a forged date) are left out: they would pin a
thread's latest message in the future; messages before the window's start (1970 and earlier
included) are out of the window.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dayflow.followups.promises import Promise, Reader, promises_and_kept
from dayflow.followups.rules import FollowupItem, answered_with, bulk, decide
from dayflow.followups.threads import Record, Thread, build_threads
from dayflow.models import FOLLOWUP_DAYS, WAITING_AFTER_DAYS
from dayflow.sources.envelope import base_address
from dayflow.sources.me import Me

MAX_ITEMS = 50  # per list in what the model is given; the rest are counted
MAX_KEYS = 100  # per list of mail keys (`NO_REQUESTS`), the newest; the rest are counted
NO_REQUESTS = ("answered", "bulk", "yours")


@dataclass(frozen=True)
class Followups:
    threads: tuple[Thread, ...]  # newest first
    owed: tuple[FollowupItem, ...]  # the longest owed first
    waiting: tuple[FollowupItem, ...]  # the longest waited on first
    since: dt.datetime
    me: Me
    failures: tuple[tuple[str, str], ...] = ()  # (source, reason)
    # The mail keys of what is no new request (newest first): others' messages the user wrote
    # after (`answered`), mailing-list, bulk and automated mail (`bulk`), and the user's own
    # mail to others found in an inbox (`yours`).
    answered: tuple[str, ...] = ()
    bulk: tuple[str, ...] = ()
    yours: tuple[str, ...] = ()
    # The mail keys of messages that say they are from the user but came from outside
    # (`ThreadMessage.outside`): not the user's note, never ranked above real requests.
    not_yours: tuple[str, ...] = ()
    # What the user promised in their sent mail and has not delivered (issue 35 part 3), and
    # the keys of the promises delivered or called off (`tasks add --from` files none).
    promised: tuple[Promise, ...] = ()
    promises_kept: tuple[str, ...] = ()
    # For an answered message, the words of the user's replies after it (`rules.answered_with`):
    # so that an ask of several the reply left open can be told from those it settled.
    answered_replies: tuple[tuple[str, str], ...] = ()

    def threads_with(self, addresses: Iterable[str]) -> list[Thread]:
        """The threads any of `addresses` took part in, newest first."""
        wanted = {base_address(a) for a in addresses if a}
        return [t for t in self.threads if t.participants & wanted]

    def open_tasks_from(self, tasks: Iterable[Any], addresses: Iterable[str]) -> list[Any]:
        """The open tasks (status other than done) filed from the mail of threads with
        `addresses`: under a message's key or a thread's key (a `#n` suffix ignored)."""
        keys: set[str] = set()
        for thread in self.threads_with(addresses):
            keys.add(thread.key)
            keys.update(m.key for m in thread.messages)
        out = []
        for task in tasks:
            key = str(getattr(task, "idempotency_key", "") or "").split("#", 1)[0]
            if key in keys and getattr(task, "status", "open") != "done":
                out.append(task)
        return out

    def to_json(self, tz: dt.tzinfo) -> dict[str, Any]:
        """What read_followups gives the model and `--format json` carries."""
        out: dict[str, Any] = {
            "since": self.since.astimezone(tz).isoformat(),
            "me": list(self.me.addresses),
            "you_owe": [i.to_json(tz) for i in self.owed[:MAX_ITEMS]],
            "waiting_on": [i.to_json(tz) for i in self.waiting[:MAX_ITEMS]],
        }
        for name, items in (("you_owe_more", self.owed), ("waiting_on_more", self.waiting)):
            if len(items) > MAX_ITEMS:
                out[name] = len(items) - MAX_ITEMS
        for name in (*NO_REQUESTS, "not_yours"):
            keys = getattr(self, name)
            if keys:
                out[name] = list(keys[:MAX_KEYS])
            if len(keys) > MAX_KEYS:
                out[name + "_more"] = len(keys) - MAX_KEYS
        if self.answered_replies:
            out["answered_replies"] = dict(self.answered_replies)
        if self.promised:
            out["you_promised"] = [p.to_json(tz) for p in self.promised]
        if self.promises_kept:
            out["promises_kept"] = list(self.promises_kept)
        if self.failures:
            out["unavailable"] = [{"source": n, "reason": why} for n, why in self.failures]
        return out


@dataclass(frozen=True)
class Window:
    """Whose followups (`me`), up to when (`now`, days counted in `tz`), over how many days
    before it, and after how many working days an unanswered question of the user's counts."""

    me: Me
    now: dt.datetime
    tz: dt.tzinfo
    days: int = FOLLOWUP_DAYS
    waiting_after_days: int = WAITING_AFTER_DAYS

    @property
    def since(self) -> dt.datetime:
        return self.now - dt.timedelta(days=self.days)


def build_followups(
    records: Iterable[Record],
    window: Window,
    failures: Iterable[tuple[str, str]] = (),
    read: Reader | None = None,
) -> Followups:
    """The threads of the window's days before its `now` and who owes whom a reply in them;
    `read` gives the whole text of a message of the user's that its listing cut short (for
    its promises), or None."""
    me, now, tz, since = window.me, window.now, window.tz, window.since
    kept = [r for r in records if since <= r.received_at <= now]
    threads = build_threads(kept, me)
    today = now.astimezone(tz).date()
    owed: list[FollowupItem] = []
    waiting: list[FollowupItem] = []
    for thread in threads:
        found = decide(thread, me, today, tz, window.waiting_after_days)
        if found is not None:
            (owed if found[0] == "owed" else waiting).append(found[1])
    order = lambda i: (i.latest_at, i.thread)  # noqa: E731 - the oldest first
    owed.sort(key=order)
    waiting.sort(key=order)
    promised, promises_kept = promises_and_kept(threads, me, tz, read)
    return Followups(
        tuple(threads), tuple(owed), tuple(waiting), since, me, tuple(failures),
        **_no_requests(threads, me, read), promised=tuple(promised),
        promises_kept=tuple(promises_kept),
    )  # fmt: skip


def _no_requests(threads: list[Thread], me: Me, read: Reader | None = None) -> dict[str, Any]:
    """The mail keys of what asks nothing new of the user, newest first: others' messages the
    user wrote after, the window's bulk mail (list, bulk or automated) and the user's own mail
    to others found in an inbox (a note to self may well be a task)."""
    when: dict[str, dt.datetime] = {}
    found: dict[str, list[str]] = {name: [] for name in (*NO_REQUESTS, "not_yours")}
    reads = [0]  # others' cut-short replies read whole for what they quote (`answered`)
    replies: dict[str, str] = {}
    for thread in threads:
        when.update((m.key, m.received_at) for m in thread.messages)
        settled = answered_with(thread, me, read, reads)
        found["answered"] += [key for key, _ in settled]
        replies.update((key, said) for key, said in settled if said.strip())
        found["bulk"] += [m.key for m in thread.messages if bulk(m) and not m.from_me]
        found["not_yours"] += [m.key for m in thread.messages if m.outside]
        found["yours"] += [m.key for m in thread.messages if m.from_me and m.in_inbox
                           and any(not me.matches(a) for _, a in (*m.to, *m.cc))]  # fmt: skip
    newest = lambda k: (when[k], k)  # noqa: E731
    out: dict[str, Any] = {
        name: tuple(sorted(set(keys), key=newest, reverse=True)) for name, keys in found.items()
    }
    shown = set(out["answered"][:MAX_KEYS])
    out["answered_replies"] = tuple((k, said) for k, said in replies.items() if k in shown)
    return out
