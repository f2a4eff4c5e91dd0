"""A draft made exactly once, whatever is killed: the saved marks around the one write.

For an owed thread `T` the run saves, each in a transaction of its own, never open across the
write:

1. `draft:T#pending`: the draft's Message-ID (made by Dayflow), its folder, and its very bytes,
   committed *before* the APPEND (or the Maildir file);
2. the write (`DraftBox.append`);
3. `draft:T`: the outcome (Message-ID, folder, to whom), committed after it.

A kill before 1 wrote nothing. A kill between 1 and 3 leaves the pending mark: the resumed call
(the same tool_use, re-run because its result was never saved) asks the folder for that
Message-ID (`UID SEARCH HEADER Message-ID`, or the file in the Maildir) and writes the same
bytes again only when it is not there; either way it then saves 3. After 3 the call returns the
outcome. A write that fails after 1 fails the run resumably (`SourceUnavailable`): the resume
does the same search first. A write the folder refuses (`AppendRefused`: the server answered
NO/BAD, nothing was written) saves 3 as `refused` and is said on stderr: that run never tries
again, and a later brief, finding only refused marks, drafts the thread afresh.

A thread is drafted once, ever: a second call for it in the run is refused, and so is a call
in a later run when any run of the profile holds a mark for it (a draft the user has since
edited or deleted is theirs: it is never written again), or when the drafts folder already
holds a draft answering the latest message (one the user began). A thread the user answered
is not owed, so it is never drafted.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dayflow.clock import SystemClock
from dayflow.drafts.compose import Reply, compose, new_message_id, reply_subject
from dayflow.errors import SourceError, SourceUnavailable
from dayflow.followups.rules import FollowupItem
from dayflow.sources.drafts import AppendRefused, DraftBox, MaildirDrafts
from dayflow.sources.identity import normalise_message_id
from dayflow.sources.mail import MailItem
from dayflow.sources.me import Me

KEY_PREFIX = "draft:"
EFFECT_NAME = "draft_reply"  # the tool_name its marks are saved under
PENDING = "#pending"


class EffectLog(Protocol):
    """The saved effects of the step being run (the store keeps them), as delivery's."""

    def get(self, key: str) -> tuple[str, bool] | None: ...

    def save(self, key: str, content: str, is_error: bool = False) -> None: ...


class Refused(Exception):
    """No draft: the words say why (the model reads them as the tool's error)."""


Owed = Callable[[str], tuple[FollowupItem, MailItem]]


@dataclass
class Drafter:
    """What a run's draft_reply calls write through: the drafts folders by [[inbox]] entry,
    the step's saved marks, the marks other runs of the profile hold (`elsewhere`: key ->
    [(run id, content)]), who the user is, and the crash tests' kill hook."""

    boxes: Mapping[str, DraftBox]
    log: EffectLog
    elsewhere: Callable[[list[str]], list[tuple[str, str, str]]]
    run_id: str
    me: Me = field(default_factory=Me)
    kill: Callable[[str], None] = lambda point: None
    now: Callable[[], dt.datetime] = SystemClock().now
    # Where a drafts folder that cannot be read or refuses the write is said (the brief's
    # stderr, once per line): not only the model's tool error.
    warn: Callable[[str], None] = lambda line: None
    _warned: set[str] = field(default_factory=set)

    def _warn(self, line: str) -> None:
        if line not in self._warned:
            self._warned.add(line)
            self.warn(line)

    def _mark(self, key: str) -> dict[str, Any] | None:
        found = self.log.get(key)
        if found is None:
            return None
        try:
            value = json.loads(found[0])
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def draft(self, use_id: str, thread: str, body: str, owed: Owed) -> dict[str, Any]:
        """Draft the reply to owed `thread` for call `use_id` (see the module docstring);
        `owed(thread)` gives its item and latest message, or raises Refused."""
        key = KEY_PREFIX + thread
        done = self._mark(key)
        if done is not None:
            if done.get("refused"):
                raise Refused(f"{done['refused']}; no draft was written")
            if done.get("use_id") == use_id:
                return _shown(done)
            raise Refused(
                f"a reply in {thread} was already drafted in this run (Message-ID "
                f"{done.get('message_id')}); one draft per thread, no second one was written"
            )
        pending = self._mark(key + PENDING)
        if pending is not None:
            if pending.get("use_id") != use_id:
                raise Refused(
                    f"a reply in {thread} is already being drafted in this run; one draft per "
                    "thread, no second one was written"
                )
            return self._write(key, pending, fresh=False)
        earlier = self.elsewhere([key, key + PENDING])
        shown = self._earlier(thread, earlier) if earlier else None
        if shown is not None:
            return shown
        item, latest = owed(thread)
        box = self.boxes.get(latest.source)
        if box is None:
            raise Refused(
                f"drafts are off for {latest.source!r}, where the latest message of {thread} "
                f"is (no `drafts = ...` in its [[inbox]] entry); no draft was written"
            )
        answered = latest.envelope.message_id
        try:
            if answered and box.answers([f"<{answered}>"]):
                raise Refused(
                    f"{box.folder} already holds a draft answering the latest message of "
                    f"{thread} (the user's own, or one made before); no draft was written"
                )
            folder = box.folder
        except SourceError as exc:
            if not isinstance(box, MaildirDrafts):  # a Maildir's is said as each run begins
                self._warn(f"warning: {exc} (`dayflow sources check` checks it)")
            why = f"could not read the drafts folder ({exc}); no draft was written"
            raise Refused(why) from None
        reply = self._reply(thread, item, latest, body)
        raw = compose(reply)
        mark = {
            "use_id": use_id,
            "thread": thread,
            "source": latest.source,
            "folder": folder,
            "message_id": reply.message_id,
            "to": reply.to_address,
            "subject": reply_subject(reply.subject),
            "raw": raw.decode("ascii"),
        }
        self.log.save(key + PENDING, json.dumps(mark, ensure_ascii=False))
        self.kill("draft_before_append")
        return self._write(key, mark, fresh=True)

    def _earlier(self, thread: str, marks: list[tuple[str, str, str]]) -> dict[str, Any] | None:
        """An earlier run's draft of `thread`: still in its folder (found by its Message-ID),
        it is shown as this run's answer and nothing is written; gone, edited away or only
        begun (a pending mark another run holds), the call is refused: a thread is drafted
        once. None: every earlier try was refused by the folder (nothing written)."""
        written = [(run, json.loads(c)) for run, k, c in marks if not k.endswith(PENDING)]
        refused = {run for run, mark in written if mark.get("refused")}
        written = [(run, mark) for run, mark in written if run not in refused]
        marks = [m for m in marks if m[0] not in refused]
        if not marks:
            return None  # only refused by the folder, so never written: drafted afresh
        run_id, mark = written[-1] if written else (marks[-1][0], {})
        mid = mark.get("message_id")
        box = self.boxes.get(str(mark.get("source")))
        try:
            there = bool(mid) and box is not None and box.holds(str(mid))
        except SourceError:
            there = False
        if there:
            return _shown(mark) | {"earlier": run_id}
        raise Refused(
            f"run {run_id} already drafted a reply in {thread}"
            + (f" (Message-ID {mid}), no longer in the drafts folder" if mid else "")
            + ": a thread is drafted once (a draft the user edited or deleted is theirs); "
            "no draft was written"
        )

    def _write(self, key: str, mark: dict[str, Any], *, fresh: bool) -> dict[str, Any]:
        """Write the pending draft `mark` unless it is there already (`fresh`: it cannot be,
        the mark was saved a moment ago), then save its outcome."""
        box = self.boxes.get(str(mark.get("source")))
        mid = str(mark.get("message_id"))
        if box is None:
            raise SourceUnavailable(
                f"the draft {mid} was begun in the drafts folder of {mark.get('source')!r}, "
                "whose `drafts = ...` is gone from the config; put it back to resume"
            )
        try:
            if fresh or not box.holds(mid):
                box.append(str(mark["raw"]).encode("ascii"), mid)
                self.kill("draft_after_append")
        except AppendRefused as exc:
            # The server said NO/BAD: nothing was written. The pending mark stays and the
            # outcome says refused: this run never tries again, a later brief drafts afresh.
            said = f"{exc}; the draft {mid} was not written"
            refused = {k: v for k, v in mark.items() if k != "raw"} | {"refused": said}
            self.log.save(key, json.dumps(refused, ensure_ascii=False))
            self._warn(f"warning: {said} (a later brief tries again)")
            raise Refused(f"{said}; no draft was written") from None
        except SourceError as exc:
            raise SourceUnavailable(
                f"the draft {mid} could not be written in {mark.get('folder')} ({exc}); "
                "resuming the run looks for it there first and writes it only if it is not"
            ) from None
        outcome = {k: v for k, v in mark.items() if k != "raw"}
        self.log.save(key, json.dumps(outcome, ensure_ascii=False))
        return _shown(outcome)

    def _reply(self, thread: str, item: FollowupItem, latest: MailItem, body: str) -> Reply:
        env = latest.envelope
        name, address = env.sender
        if not address:
            name, address = item.counterpart_name, item.counterpart_address
        mine = [a for _, a in (*env.to, *env.cc) if self.me.matches(a)]
        own = mine[0] if mine else (self.me.addresses[0] if self.me.addresses else None)
        domain = (own or "").rpartition("@")[2] or "dayflow.invalid"
        return Reply(
            message_id=new_message_id(self.run_id, thread, domain),
            to_name=name,
            to_address=address,
            subject=latest.subject,
            in_reply_to=_as_written(env.message_id, [env.raw_message_id]),
            references=tuple(
                r for r in (_as_written(r, env.raw_references) for r in env.references) if r
            ),
            body=body,
            quoted_from=name or address,
            quoted_at=latest.received_at,
            quoted_text=latest.body if latest.body is not None else latest.snippet,
            from_address=own,
            date=self.now(),
        )


def _as_written(normal: str | None, raw: Iterable[str | None]) -> str | None:
    """The id `normal` (normalised) as the mail wrote it (`<Foo@Example.ORG>`: a client that
    compares ids case-sensitively threads the draft), else `<normal>`; None for no id."""
    if not normal:
        return None
    same = (r for r in raw if r and normalise_message_id(r) == normal)
    return next(same, f"<{normal}>")


def _shown(mark: dict[str, Any]) -> dict[str, Any]:
    """What the tool gives back, and the brief's JSON carries, of a draft."""
    keys = ("thread", "folder", "message_id", "to", "subject", "source")
    return {k: mark.get(k) for k in keys}


def describe(effects: list[Any]) -> list[dict[str, Any]]:
    """The drafts among a run's saved effects, for `show` and `--format json`: each draft's
    thread, folder, Message-ID and recipient, and whether it is only pending."""
    out: dict[str, dict[str, Any]] = {}
    for e in effects:
        key = str(e.tool_use_id)
        if not key.startswith(KEY_PREFIX):
            continue
        thread, sep, _ = key[len(KEY_PREFIX) :].partition(PENDING)
        try:
            value = json.loads(e.content) if e.content else {}
        except ValueError:
            value = {}
        shown = _shown(value) | {"thread": thread}
        if not sep:
            out[thread] = shown | {"state": "refused" if value.get("refused") else "written"}
        elif thread not in out:
            out[thread] = shown | {"state": "pending"}
    return list(out.values())
