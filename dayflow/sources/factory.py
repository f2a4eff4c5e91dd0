"""Building the run's inbox and calendar from its settings: the config file's sources, or the
JSON files / bundled sample when there is no config. The sample brings its own user
(`SAMPLE_USER`, as a config's `me`) and sent mail, so its brief shows the followups working.

A run stores *which* sources it reads (the config path and the entry names), never how to log in
to them: a resume re-reads the config and fetches passwords again, so no secret or secret URL
ever reaches the database. Readers are looked up by kind in `MAIL_READERS` / `CALENDAR_READERS`;
a new kind is one entry there (a function `(spec, ctx) -> source`).

Calendar readers return events whose `id` is already `<source>:<hash>` with a `source` field
(`identity.item_id(source, uid + RECURRENCE-ID)`, as `ical` does); a reader that gives its own
ids (the JSON files: `e01`) gets them prefixed with the source's name by the merged `Calendar`,
so ids never collide across calendars.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from dayflow.errors import SourceError
from dayflow.models import RunSettings
from dayflow.sources.config import SourcesConfig, SourceSpec, load_config
from dayflow.sources.identity import SAMPLE_SOURCE, prefixed
from dayflow.sources.inbox import Inbox
from dayflow.sources.json_files import SAMPLE_ME, JsonCalendar, JsonInbox, sample_sent
from dayflow.sources.mail import DictMail, MailSource, PathMissing
from dayflow.sources.me import Me
from dayflow.sources.oauth import Accounts
from dayflow.sources.protocols import CalendarSource, as_calendar

if TYPE_CHECKING:
    from dayflow.followups import Feed


@dataclass(frozen=True)
class SourceContext:
    """What a reader may need besides its entry: the day and zone of the brief, the
    environment (for password_env), the clock's now, and who the user is (a calendar's
    `response` is the answer of the attendee who is `me`), and the accounts whose token or
    password is fetched once for all their sources (`oauth.Accounts`)."""

    brief_date: dt.date
    tz: dt.tzinfo = dt.UTC
    env: Mapping[str, str] = field(default_factory=dict)  # the runtime's (`Config.file_env`)
    now: dt.datetime | None = None
    me: Me = field(default_factory=Me)
    accounts: Accounts = field(default_factory=Accounts)


# The sample's user, as a config's `me` would name them (the sample calendar's Alex Morgan).
SAMPLE_USER = Me(((SAMPLE_ME, "the bundled sample"),))

MailReader = Callable[[SourceSpec, SourceContext], MailSource]
CalendarReader = Callable[[SourceSpec, SourceContext], Any]


def _maildir(spec: SourceSpec, ctx: SourceContext) -> MailSource:
    from dayflow.sources.maildir import MaildirSource
    from dayflow.sources.maildir_index import cache_dir

    return MaildirSource(spec.name, str(spec.path), cache=cache_dir(ctx.env))


def _mbox(spec: SourceSpec, ctx: SourceContext) -> MailSource:
    from dayflow.sources.mbox import MboxSource

    return MboxSource(spec.name, str(spec.path))


def _eml(spec: SourceSpec, ctx: SourceContext) -> MailSource:
    from dayflow.sources.mailfiles import EmlFolderSource

    return EmlFolderSource(spec.name, str(spec.path))


def _json_mail(spec: SourceSpec, ctx: SourceContext) -> MailSource:
    inner = JsonInbox(Path(str(spec.path)), ctx.brief_date, tz=ctx.tz)
    return DictMail(spec.name, _Checked(spec, inner), where=str(spec.path))


def _imap(spec: SourceSpec, ctx: SourceContext) -> MailSource:
    from dayflow.sources.imap import ImapSource

    return ImapSource(spec, env=ctx.env, accounts=ctx.accounts)


def _json_calendar(spec: SourceSpec, ctx: SourceContext) -> Any:
    reader = JsonCalendar(Path(str(spec.path)), ctx.brief_date, tz=ctx.tz, me=ctx.me)
    return _Checked(spec, reader)


def _ics(spec: SourceSpec, ctx: SourceContext) -> Any:
    from dayflow.sources.ics import IcsCalendar

    reader = IcsCalendar(
        spec.name, path=spec.path, url=spec.url, env=ctx.env, **_calendar_args(spec, ctx)
    )
    return _Checked(spec, reader) if spec.path else reader


MAIL_READERS: dict[str, MailReader] = {
    "maildir": _maildir,
    "mbox": _mbox,
    "eml": _eml,
    "json": _json_mail,
    "imap": _imap,
}


def _caldav(spec: SourceSpec, ctx: SourceContext) -> Any:
    from dayflow.sources.caldav import CalDavCalendar
    from dayflow.sources.passwords import resolve_password

    return CalDavCalendar(
        spec.name,
        url=str(spec.url),
        user=str(spec.user),
        password=lambda: resolve_password(spec, ctx.env, ctx.accounts),  # when first asked
        calendars=spec.calendars,
        today=ctx.brief_date,
        env=ctx.env,
        **_calendar_args(spec, ctx),
    )


def _calendar_args(spec: SourceSpec, ctx: SourceContext) -> dict[str, Any]:
    """What an ICS or CalDAV calendar takes from its entry and the brief alike: the zone, the
    timeout, the OAuth token source (fetched at the first request), who "me" is, and whether
    a token may go over plain http:// (`security = "plain"`, IMAP's rule)."""
    return {
        "tz": ctx.tz,
        "timeout": spec.timeout,
        "credential": _token(spec, ctx),
        "me": ctx.me,
        "plain_ok": spec.security == "plain",
    }


def _token(spec: SourceSpec, ctx: SourceContext) -> Any:
    """The entry's OAuth token source (None for a password or no credential); the token
    itself is fetched only when the first request is made."""
    from urllib.parse import urlsplit

    from dayflow.sources.oauth import token_credential

    try:
        host = spec.host or urlsplit(spec.url or "").hostname or ""
    except ValueError:
        host = ""
    return token_credential(
        spec.name,
        spec.auth,
        command=spec.token_command,
        env_name=spec.token_env,
        timeout=spec.timeout,
        env=ctx.env,
        accounts=ctx.accounts,
        host=host,
        user=spec.user or "",
    )


CALENDAR_READERS: dict[str, CalendarReader] = {
    "json": _json_calendar,
    "ics": _ics,
    "caldav": _caldav,
}


class _Checked(CalendarSource):
    """A JSON reader whose missing file is PathMissing (so a resume fails, naming it)."""

    def __init__(self, spec: SourceSpec, inner: Any) -> None:
        self.spec, self.inner = spec, inner

    def _guard(self) -> None:
        if self.spec.path and not Path(self.spec.path).exists():
            raise PathMissing(self.spec.name, self.spec.path)

    def messages(self) -> list[dict[str, Any]]:
        self._guard()
        return list(self.inner.messages())

    def events(self, *, first: dt.date, last: dt.date) -> list[dict[str, Any]]:
        self._guard()
        return list(self.inner.events(first=first, last=last))

    @property
    def cut_short(self) -> list[Any]:  # type: ignore[override]  # read-only here: the inner's
        return list(as_calendar(self.inner).cut_short)

    @property
    def follows_brief_date(self) -> bool:  # type: ignore[override]  # the inner's
        return as_calendar(self.inner).follows_brief_date


class Calendar(CalendarSource):
    """Several calendars as one, by start time. A calendar that fails is listed in `failures`
    while the others answer; all failing is a SourceError; with `strict`, any failure is
    SourceUnavailable (the run fails, resumably). The recurring series a calendar did not
    expand in full (`recurrence.CutShort`) are in `cut_short`, those whose dates follow the
    brief's day (an anchored JSON file: the sample) in `anchored`."""

    def __init__(
        self, sources: list[tuple[str, Any]], *, strict: bool = False, remote: bool = False
    ) -> None:
        self.sources = [(name, as_calendar(source)) for name, source in sources]
        self.strict = strict
        self.remote = remote  # a calendar is a server (CalDAV, a URL): reads saved at once
        self.failures: list[tuple[str, str]] = []
        self.cut_short: list[Any] = []
        self.anchored: list[str] = []
        # A calendar that failed is down for the rest of this process's run: the week, today
        # and each meeting's prep do not wait for its timeout again (issue 32.14). A resumed
        # run, in a new process, tries it once more.
        self._down: dict[str, str] = {}

    def configured(self) -> bool:
        return bool(self.sources)

    def events(self, *, first: dt.date, last: dt.date) -> list[dict[str, Any]]:
        from dayflow.errors import SourceUnavailable

        out: list[dict[str, Any]] = []
        self.failures = []
        self.cut_short = []
        self.anchored = []
        ok = 0
        for name, source in self.sources:
            if name in self._down:
                self.failures.append((name, self._down[name]))
                continue
            try:
                got = source.events(first=first, last=last)
            except PathMissing:
                raise
            except SourceError as exc:
                if self.strict:
                    raise SourceUnavailable(f"{exc} (--strict-sources)") from None
                self._down[name] = str(exc)
                self.failures.append((name, str(exc)))
                continue
            ok += 1
            self.cut_short += source.cut_short
            if source.follows_brief_date:
                self.anchored.append(name)
            for event in got:
                event = dict(event)
                if not event.get("source"):
                    event["id"] = prefixed(name, str(event["id"]))
                    event["source"] = name
                out.append(event)
        if self.failures and not ok:
            raise SourceError("; ".join(why for _, why in self.failures))
        out.sort(key=lambda e: (str(e.get("start")), e["id"]))
        return out


def run_settings_for(
    config: SourcesConfig | None,
    *,
    inbox: str | None,
    calendar: str | None,
) -> dict[str, Any]:
    """What a new run stores about its sources: the config's path and entry names (never a
    secret or a URL); nothing when it reads the JSON files or the sample."""
    if config is None:
        return {}
    out: dict[str, Any] = {
        "sources": {
            "config": str(config.path),
            "inbox": [] if inbox else [s.name for s in config.inboxes],
            "calendar": [] if calendar else [s.name for s in config.calendars],
        }
    }
    if not inbox and any(s.drafts for s in config.inboxes):
        out["drafts"] = True  # an [[inbox]] says `drafts = ...` (brief --no-drafts: not)
    return out


def build_sources(
    settings: RunSettings | Mapping[str, Any],
    brief_date: dt.date,
    *,
    env: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
    configs: Callable[[Path], SourcesConfig] | None = None,
    accounts: Accounts | None = None,
) -> tuple[Inbox, Calendar]:
    """The inbox and calendar a run reads, from its stored settings (its config file read by
    `configs`, the process's one reading of it; else read here). `accounts` holds the
    tokens and passwords already fetched (the factory's: one fetch per account)."""
    if not isinstance(settings, RunSettings):
        settings = RunSettings.from_json(dict(settings))
    tz = ZoneInfo(settings.tz or "UTC")
    ctx = SourceContext(
        brief_date,
        tz,
        {} if env is None else env,
        now,
        accounts=accounts or Accounts(),
    )
    strict = settings.strict_sources
    since = settings.mail_since
    default_since = dt.datetime.fromisoformat(since) if since else None
    # A brief reads no mail from after its day: one for a past day (`--date`) is that day's.
    until = None
    if default_since is not None and brief_date < dt.date.max:
        until = dt.datetime.combine(brief_date + dt.timedelta(days=1), dt.time(), tzinfo=tz)
    declared = settings.sources
    inbox_path, calendar_path = settings.inbox, settings.calendar
    sampled = inbox_path is None and not declared  # the bundled sample's mail
    mail: list[MailSource] = []
    cals: list[tuple[str, Any]] = []
    remote = False
    config: SourcesConfig | None = None
    if declared:
        config = _reload(declared["config"], env, configs)
        ctx = replace(ctx, me=config.me)
    elif settings.config and inbox_path:
        # A config file that names no source but says who `me` is (and the followups'
        # window), with the mail from --inbox: its `me` is the user's all the same (it was
        # dropped, so owed replies "could not be told").
        config = _reload(settings.config, env, configs)
        ctx = replace(ctx, me=config.me)
    if declared and config is not None:
        for spec in config.named("inbox", list(declared.get("inbox") or [])):
            mail.append(MAIL_READERS[spec.kind](spec, ctx))
        for spec in config.named("calendar", list(declared.get("calendar") or [])):
            cals.append((spec.name, open_calendar(spec, ctx)))
            remote = remote or spec.kind == "caldav" or bool(spec.url)
    if inbox_path or not declared:
        sample = settings.sample or "standard"
        inner = JsonInbox(
            None if inbox_path is None else Path(inbox_path), brief_date, sample=sample, tz=tz
        )
        if inbox_path is None:
            mail.append(DictMail(SAMPLE_SOURCE, inner, sample=True, where="the bundled sample"))
        else:
            spec = SourceSpec("inbox", "inbox", "json", path=inbox_path)
            mail.append(DictMail("inbox", _Checked(spec, inner), where=inbox_path))
    if calendar_path and is_ical_path(calendar_path):
        from dayflow.sources.ics import IcsCalendar

        spec = SourceSpec("calendar", "calendar", "ics", path=calendar_path)
        ics = IcsCalendar("calendar", path=calendar_path, tz=tz, today=brief_date, me=ctx.me)
        cals.append(("calendar", _Checked(spec, ics)))
    elif calendar_path or not declared:
        inner_cal = JsonCalendar(
            None if calendar_path is None else Path(calendar_path),
            brief_date,
            tz=tz,
            me=SAMPLE_USER if calendar_path is None else ctx.me,
        )
        if calendar_path is None:
            cals.append((SAMPLE_SOURCE, inner_cal))
        else:
            spec = SourceSpec("calendar", "calendar", "json", path=calendar_path)
            cals.append(("calendar", _Checked(spec, inner_cal)))
    calendar = Calendar(cals, strict=strict, remote=remote)
    inbox = Inbox(mail, default_since=default_since, until=until, strict=strict)
    if declared and config is not None and settings.drafts:
        names = list(declared.get("inbox") or [])
        inbox.drafts = drafts_boxes(list(config.named("inbox", names)), mail, ctx)
    if sampled:
        inbox.followups = _sample_followups(mail, brief_date, ctx)
    else:
        inbox.followups = _followups(config, mail, brief_date, ctx)
    return inbox, calendar


def drafts_boxes(
    specs: list[SourceSpec], mail: list[MailSource], ctx: SourceContext
) -> dict[str, Any]:
    """The drafts folder of each entry of `specs` that names one (`drafts = ...`): a Maildir
    folder, or an IMAP account's folder over the connection of its inbox in `mail`."""
    from dayflow.sources.drafts import MaildirDrafts
    from dayflow.sources.imap import ImapSource
    from dayflow.sources.imap_drafts import ImapDrafts

    boxes: dict[str, Any] = {}
    by_name = {m.name: m for m in mail}
    for spec in specs:
        if not spec.drafts:
            continue
        if spec.kind == "imap":
            inbox = by_name.get(spec.name)
            shared = inbox if isinstance(inbox, ImapSource) else None
            boxes[spec.name] = ImapDrafts(spec, shared, env=ctx.env, accounts=ctx.accounts)
        else:
            boxes[spec.name] = MaildirDrafts(spec.name, str(spec.drafts))
    return boxes


def unready_drafts(specs: list[SourceSpec]) -> list[str]:
    """A warning for each Maildir drafts folder of `specs` that is not one (missing, a file,
    no cur/): the brief says it, as `sources check` does, rather than draft nothing in
    silence. Only a look at the folder: nothing is made or written (an IMAP folder is the
    server's, found when a draft is written)."""
    from dayflow.sources.drafts import MaildirDrafts

    out = []
    for spec in specs:
        if spec.drafts and spec.kind == "maildir":
            problem = MaildirDrafts(spec.name, str(spec.drafts)).problem()
            if problem is not None:
                out.append(f"warning: {problem} (`dayflow sources check` checks it)")
    return out


def _sample_followups(mail: list[MailSource], brief_date: dt.date, ctx: SourceContext) -> Feed:
    """The bundled sample's followups: its inbox, its user's sent mail and who that user is,
    so a newcomer's first brief shows owed replies and waits as a configured one does."""
    from dayflow.followups import Feed
    from dayflow.sources.imap_sent import sent_name

    sent = DictMail(
        sent_name(SAMPLE_SOURCE),
        sample_sent(brief_date, tz=ctx.tz),
        sample=True,
        where="the bundled sample's sent mail",
    )
    return Feed(mail, [sent], me=SAMPLE_USER, brief_date=brief_date, tz=ctx.tz)


ICAL_SUFFIXES = (".ics", ".ical", ".icalendar", ".ifb")


def is_ical_path(path: str) -> bool:
    """Whether a `--calendar` file is an iCalendar file (by its name: nothing is read before
    the run needs it), else it is Dayflow's calendar JSON."""
    return path.lower().endswith(ICAL_SUFFIXES)


def _followups(
    config: SourcesConfig | None, mail: list[MailSource], brief_date: dt.date, ctx: SourceContext
) -> Feed:
    """The run's followups: its mail sources, the sent folders of its [[inbox]] entries (those
    it reads), who "me" is and the window, from the config (none: the mail alone)."""
    from dayflow.followups import Feed
    from dayflow.sources.sent import open_sent

    if config is None:
        return Feed(mail, me=Me(), brief_date=brief_date, tz=ctx.tz)
    read = {s.name for s in mail}
    sent = open_sent([s for s in config.inboxes if s.name in read], ctx.env, mail, ctx.accounts)
    return Feed(
        mail, sent.sources, me=config.me, brief_date=brief_date, tz=ctx.tz,
        window_days=config.followup_days, waiting_after_days=config.waiting_after_days,
        failures=sent.failures,
    )  # fmt: skip


def open_calendar(spec: SourceSpec, ctx: SourceContext) -> CalendarSource:
    """The reader for one [[calendar]] entry."""
    reader = CALENDAR_READERS.get(spec.kind)
    if reader is None:
        raise SourceError(
            f"{spec.name}: calendar kind {spec.kind!r} is not available in this version "
            f"(available: {', '.join(sorted(CALENDAR_READERS))})"
        )
    return reader(spec, ctx)


def _reload(
    path: str, env: Mapping[str, str] | None, configs: Callable[[Path], SourcesConfig] | None
) -> SourcesConfig:
    if not Path(path).exists():
        missing = PathMissing("config", path, "config file")
        missing.args = (
            f"the run's config file {path} does not exist any more (moved or deleted? put it "
            "back to resume the run; a new brief reads the config there is now)",
        )
        raise missing
    if configs is not None:
        return configs(Path(path))
    config = load_config(dict(env or {}), Path(path))
    assert config is not None
    return config


def check_source(spec: SourceSpec, ctx: SourceContext) -> dict[str, Any]:
    """Open one source and say what it holds (no model call): how many messages or events,
    the newest message or next event, or the error. With a credential, `accepted` says what
    the server made of it (None: never tried) and `token_sent` that it went and no answer came;
    `account_failed` that an IMAP account never logged in (its sent folder is not tried)."""
    from dayflow.sources.imap import ImapSource
    from dayflow.sources.oauth import AuthRefused

    out: dict[str, Any] = {"name": spec.name, "table": spec.table, "kind": spec.kind}
    out["where"] = spec.where
    if spec.auth:
        out["auth"] = spec.auth  # the mechanism; `accepted` says what the server made of it
    source: MailSource | None = None
    try:
        if spec.table == "inbox":
            source = MAIL_READERS[spec.kind](spec, ctx)
            out |= _mail_status(source, ctx)
        else:
            reader = open_calendar(spec, ctx)
            events = reader.events(
                first=ctx.brief_date, last=ctx.brief_date + dt.timedelta(days=30)
            )
            out["events"] = len(events)
            upcoming = next_event(events, ctx.now, ctx.brief_date, ctx.tz)
            if upcoming is not None:
                out["next"] = {
                    "title": upcoming.get("title"),
                    "start": upcoming.get("start"),
                    "all_day": bool(upcoming.get("all_day")),
                }
            cut = reader.cut_short
            if cut:
                out["cut_short"] = [c.to_json() for c in cut]
        out["ok"] = True
        if spec.auth:
            credential = _token(spec, ctx)
            moved = credential.moved if credential is not None else None
            if moved is not None and not credential.accepted:
                out["accepted"], out["moved"] = None, moved  # the token never went there
            else:
                out["accepted"] = True
    except SourceError as exc:
        out["ok"] = False
        out["error"] = str(exc)
        credential = _token(spec, ctx)
        if spec.auth:  # refused, or never reached (no token, no connection): unknown
            refused = isinstance(exc, AuthRefused)
            accepted = credential is not None and credential.accepted
            out["accepted"] = False if refused else True if accepted else None
            if out["accepted"] is None and credential is not None and credential.sent:
                out["token_sent"] = True  # the token went, and no answer came
                out["timeout"] = spec.timeout
        if isinstance(source, ImapSource) and not source.logged_in:
            out["account_failed"] = True
    return out


def check_sent(
    spec: SourceSpec, ctx: SourceContext, inbox: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The sent folder of an [[inbox]] entry, as `check_source` says what a source holds (its
    count and newest message, or why it could not be read); None when it has none.

    `inbox` is what `check_source` said of the entry: an IMAP account that never logged in is
    one failure, its own (the sent folder is `skipped`, and its token never fetched again). A
    sent folder the server was asked to find and has not is a `warning`, not a failure; one
    named by `sent = "..."` that is missing is."""
    from dayflow.sources.imap_sent import NoSentFolder, sent_name
    from dayflow.sources.sent import local_kind, open_sent

    if spec.table != "inbox" or not spec.read_sent or (spec.kind != "imap" and not spec.sent):
        return None
    kind = spec.kind  # an IMAP account's sent folder is on its server; a local one is its own kind
    if spec.kind != "imap" and spec.sent:
        with contextlib.suppress(OSError):
            kind = local_kind(Path(spec.sent)) or spec.kind
    out: dict[str, Any] = {"table": "sent", "kind": kind, "of": spec.name}
    if spec.kind == "imap" and inbox is not None and inbox.get("account_failed"):
        return {
            "name": sent_name(spec.name),
            **out,
            "where": spec.where,
            "ok": False,
            "skipped": True,
            "error": f"not read: the account of {spec.name} could not log in (see above)",
        }
    opened = open_sent([spec], ctx.env, accounts=ctx.accounts)
    if opened.failures:
        name, why = opened.failures[0]
        return {"name": name, **out, "where": spec.sent, "ok": False, "error": why}
    source = opened.sources[0]
    out = {"name": source.name, **out}
    try:
        out |= _mail_status(source, ctx)
        out |= {"where": source.where, "ok": True}
    except NoSentFolder as exc:
        out |= {"where": source.where, "ok": True, "messages": 0, "warning": str(exc)}
    except SourceError as exc:
        out |= {"where": source.where, "ok": False, "error": str(exc)}
    return out


def check_drafts(
    spec: SourceSpec, ctx: SourceContext, inbox: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The drafts folder of an [[inbox]] entry with `drafts = ...` (None without): which folder
    (the one the server flags \\Drafts, when the entry does not name it) and whether the
    server allows APPEND there; nothing is written. Skipped when the account could not log in."""
    if spec.table != "inbox" or not spec.drafts:
        return None
    out: dict[str, Any] = {"name": f"{spec.name}/drafts", "table": "drafts", "kind": spec.kind}
    out["of"] = spec.name
    if inbox is not None and inbox.get("account_failed"):
        why = f"not checked: the account of {spec.name} could not log in (see above)"
        return out | {"where": spec.where, "ok": False, "skipped": True, "error": why}
    [box] = drafts_boxes([spec], [], ctx).values()
    try:
        found = box.check()
    except SourceError as exc:
        return out | {"where": box.folder, "ok": False, "error": str(exc)}
    finally:
        box.close()
    out |= {"where": found["folder"], "folder": found["folder"], "append": found["append"]}
    if not found["append"]:
        why = found.get("why") or "the server does not allow APPEND there"
        return out | {"ok": False, "error": f"drafts folder {found['folder']}: {why}"}
    return out | {"ok": True} | ({"how": found["how"]} if "how" in found else {})


def _mail_status(source: MailSource, ctx: SourceContext) -> dict[str, Any]:
    """How many messages a mail source holds and its newest; the source is closed after."""
    try:
        count, newest = source.status()
    finally:
        Inbox([source]).close()  # logs out of a server at once
    out: dict[str, Any] = {"messages": count}
    if newest is not None:
        out["newest"] = {
            "from": newest.sender,
            "subject": newest.subject,
            "received_at": newest.received_at.astimezone(ctx.tz).isoformat(),
        }
    return out


def next_event(
    events: list[dict[str, Any]], now: dt.datetime | None, day: dt.date, tz: dt.tzinfo
) -> dict[str, Any] | None:
    """The first event not yet over at `now` (the start of `day` without one) that is not
    cancelled: an all-day event until its day ends, an instant until it starts."""
    at = now if now is not None else dt.datetime.combine(day, dt.time(), tz)
    today = at.astimezone(tz).date()
    for event in events:
        if event.get("status") == "cancelled":
            continue
        try:
            if event.get("all_day"):
                if dt.date.fromisoformat(str(event["end"])) > today:
                    return event
                continue
            start = dt.datetime.fromisoformat(str(event["start"]))
            end = dt.datetime.fromisoformat(str(event.get("end") or event["start"]))
        except (KeyError, ValueError):
            continue
        if end > at or start >= at:
            return event
    return None


def precheck(inbox: Any, calendar: Any, day: dt.date) -> None:
    """Fail now (SourceError) on a local source that cannot be read, before a run is written;
    network sources are not contacted here."""
    from dayflow.sources.inbox import legacy_inbox

    for source in legacy_inbox(inbox).sources:
        source.precheck()
    if isinstance(calendar, Calendar):
        for _, reader in calendar.sources:
            if isinstance(reader, _Checked | JsonCalendar):
                reader.events(first=day, last=day)  # a local file: JSON or iCalendar
    else:
        calendar.events(first=day, last=day)
