"""What a new run reads: an inbox or calendar from standard input (kept for a resume), the
config's sources or the bundled sample, and where the mail window starts (--since, the last
brief, or the last 24 hours), with the notices that say so."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dayflow.briefing import day as briefday
from dayflow.briefing.request import BriefRequest
from dayflow.errors import SourceError, UsageError
from dayflow.frozen import replace
from dayflow.store.values import command_hint

if TYPE_CHECKING:
    from dayflow.config import Config, Settings


def kept_inputs(
    settings: Settings, stdin: Callable[[int], bytes], say: Callable[[str], None], day: date
) -> Settings:
    """An inbox or calendar read from standard input or a pipe (`-`, /dev/stdin, `<(...)`)
    is kept in a private file beside the database, so a resume (in another process) reads the
    very same input again.

    `stdin(n)` reads at most n bytes of standard input. What came is checked first, as the
    run's reader would check it for `day`: a bad one is refused naming what the user gave
    (standard input, the pipe), nothing is kept, and no stream is read past
    `files.MAX_STREAM_BYTES` (/dev/zero, a runaway producer)."""
    import hashlib

    from dayflow import files
    from dayflow.sources.json_files import check_input

    kept: dict[str, str] = {}
    for name in ("inbox", "calendar"):
        value = getattr(settings, name)
        if value is None:
            continue
        try:
            regular = value != "-" and stat.S_ISREG(os.stat(value).st_mode)
        except OSError:
            continue  # missing: the source reports it, naming the file
        if regular:
            continue
        if value == "-" and settings.inbox == settings.calendar == "-":
            raise UsageError("--inbox and --calendar cannot both read standard input")
        where = "standard input" if value == "-" else value
        try:
            if value == "-":
                data = stdin(files.MAX_STREAM_BYTES + 1)
                if len(data) > files.MAX_STREAM_BYTES:
                    raise files.TooLarge(files.MAX_STREAM_BYTES)
            else:
                data = files.read_stream(value)
        except (files.TooLarge, files.NotRegular) as exc:
            raise SourceError(f"--{name}: cannot read {where}: {exc}") from None
        except OSError as exc:
            raise UsageError(f"--{name}: cannot read {value}: {exc.strerror or exc}") from None
        # An iCalendar calendar keeps its kind in its name (`--calendar` reads a .ics as one).
        ical = name == "calendar" and b"BEGIN:VCALENDAR" in data[:4096].upper()
        if ical:
            _check_ical(data, f"--{name} {where}", day)
        else:
            check_input(name, data, f"--{name} {where}", day)
        folder = settings.local_dir / "inputs"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        suffix = ".ics" if ical else ".json"
        path = folder / f"{name}-{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        say(f"read the {name} from {where}; kept as {path} for `dayflow resume`")
        kept[name] = str(path)
    inbox, calendar = kept.get("inbox", settings.inbox), kept.get("calendar", settings.calendar)
    return replace(settings, inbox=inbox, calendar=calendar)


def _check_ical(data: bytes, where: str, day: date) -> None:
    """An iCalendar input read as the run will read it for `day` (SourceUnreadable naming
    `where` when it cannot be)."""
    from datetime import UTC

    from dayflow.sources.ical import CalendarData

    CalendarData(data, source=where, tz=UTC).read(day, day)


def discard_kept(given: Settings, kept: Settings) -> None:
    """Remove the copies `kept_inputs` made of `given`'s inputs, when no run will read them
    (the brief failed before its run was written)."""
    for name in ("inbox", "calendar"):
        copy = getattr(kept, name)
        if copy is not None and copy != getattr(given, name):
            Path(copy).unlink(missing_ok=True)


@dataclass(frozen=True)
class Picked:
    options: dict[str, Any]  # BriefOptions fields
    notices: tuple[str, ...] = ()  # what to say once the run exists


def new_run_sources(
    config: Config,
    request: BriefRequest,
    settings: Settings,
    *,
    db_path: str,
    moment: datetime,
    profile: str | None = None,
    mail_since: Callable[[], datetime],
    update: bool = False,
) -> Picked:
    """What a new run reads, as BriefOptions fields, and the notices saying so.

    With a config that declares sources: its entries (the `--inbox`/`--calendar` files replace
    its [[inbox]] / [[calendar]] entries), and mail since --since, else `mail_since()`
    (day.mail_since: the last finished brief, else 24 hours before `moment`, the brief's);
    the sample is never used. Without one (or one holding only delivery settings): the bundled
    sample (or the JSON files given), read whole. The hints name `profile`'s commands. An
    `update` of the day's brief reads only what arrived since that brief (its own window,
    briefing.day.since_sources), so the first brief's "last 24 hours" note is not said."""
    from datetime import UTC

    from dayflow.sources.factory import run_settings_for, unready_drafts

    loaded = config.sources(request.config_file)
    out: dict[str, Any] = {"strict_sources": request.strict_sources}
    notices: list[str] = []
    whole = "note: --since applies to the config's inboxes; this brief's inbox is read whole"
    if loaded is not None:
        out["config"] = str(loaded.path)
    if loaded is None or not loaded.all():
        if settings.inbox is None:
            path, data = config.document(request.config_file)
            if data is None:
                why, then = "does not exist", f"`{command_hint(profile, 'init')}` writes a config"
            else:
                why = "declares no [[inbox]] or [[calendar]]" if data else "has no settings"
                why += "" if data else " (empty, or every entry commented out)"
                then = f"add an [[inbox]] there, then `{command_hint(profile, 'sources', 'check')}`"
            notices.append(
                f"No sources configured ({path} {why}): this brief read the bundled sample "
                f"inbox; its tasks are filed under 'sample:' keys in {db_path} "
                f"(`{command_hint(profile, 'tasks', '--clear-sample')}` removes them; {then})."
            )
        return Picked(out, (*notices, *((whole,) if request.since is not None else ())))
    chosen = run_settings_for(loaded, inbox=settings.inbox, calendar=settings.calendar)
    out["sources"] = chosen["sources"]
    if request.drafts and chosen.get("drafts"):
        out["drafts"] = True
        if settings.inbox is None:
            notices.extend(unready_drafts(list(loaded.inboxes)))
    notices.append(f"sources from {loaded.path}: {', '.join(s.name for s in loaded.all())}")
    if loaded.inboxes and settings.inbox is None:
        tz = zone(settings.tz)
        if request.since is not None:
            at = since_moment(request.since, moment, tz)
        else:
            at = mail_since()
            if at == moment - briefday.MAIL_WINDOW and not update:
                notices.append(
                    "note: no brief of an earlier day read these inboxes, so this one read the "
                    f"last 24 hours of mail (since {at.astimezone(tz):%Y-%m-%d %H:%M}); "
                    f"`{command_hint(profile, 'brief', '--since', '3d')}` (or --since "
                    "YYYY-MM-DD) reaches further back"
                )
        out["mail_since"] = at.astimezone(UTC).isoformat()
    elif request.since is not None:
        notices.append(whole)
    return Picked(out, tuple(notices))


def parse_since(text: str) -> date | timedelta:
    """--since: a day (YYYY-MM-DD) or a span before the brief (36h, 3d, 2w); UsageError else."""
    import re

    value = text.strip().lower()
    span = re.fullmatch(r"([0-9]{1,5})\s*([hdw])", value)
    if span:
        n, unit = int(span[1]), span[2]
        if n == 0 or n > {"h": 24 * 3650, "d": 3650, "w": 520}[unit]:
            raise UsageError(f"--since {text!r}: give 1h to 10 years (e.g. 36h, 3d, 2w)")
        return timedelta(hours=n) if unit == "h" else timedelta(days=n * (7 if unit == "w" else 1))
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"--since {text!r}: give a day (YYYY-MM-DD) or a span before the brief (36h, 3d, 2w)"
        ) from None


def since_moment(since: date | timedelta, moment: datetime, tz: Any) -> datetime:
    """Where --since starts the mail: the start of that day in `tz`, or the span before the
    brief's `moment`; UsageError when that is not before the brief."""
    from datetime import time

    if isinstance(since, timedelta):
        return moment - since
    at = datetime.combine(since, time(), tzinfo=tz)
    if at >= moment:
        when = moment.astimezone(tz)
        raise UsageError(f"--since {since}: that is not before the brief ({when:%Y-%m-%d %H:%M})")
    return at


def zone(tz: str) -> Any:
    """The tzinfo of an IANA name (UTC without importing zoneinfo)."""
    from datetime import UTC
    from zoneinfo import ZoneInfo

    return UTC if tz == "UTC" else ZoneInfo(tz)
