"""What `dayflow brief` does on a day, given a typed request: which run is the day's brief, a
new one or an update or that one again, the inputs read from standard input, the sources and
sinks, and the outcome to show. The CLI parses the options into a `BriefRequest`, calls
`brief()` and renders the `Outcome`; nothing here prints or knows of Typer or Rich.

The order matters for what a failure leaves behind: what can be checked without the
database (the settings, the config file, the sinks) is checked before the store is opened.
"""

from __future__ import annotations

import contextlib
import enum
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dayflow.briefing import day as briefday
from dayflow.errors import ConfigError, DayTaken, RunBusy, StoreError, UsageError
from dayflow.frozen import replace
from dayflow.models import (
    DEFAULT_COMPACT_AT,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TASK_CAP,
    DONE,
    RUNNING,
    Run,
)

if TYPE_CHECKING:
    from dayflow.agent import BriefOptions, Loop, SourceFactory
    from dayflow.clock import Clock
    from dayflow.config import Config, Settings
    from dayflow.providers import ModelClient
    from dayflow.store import Store


class Mode(enum.Enum):
    """What a brief does when the day already has one (the CLI's mutually exclusive flags)."""

    AUTO = "auto"  # a done brief: write an update since it; else a full one
    SINCE_LAST = "--since-last"  # the same, said out loud (a note when there is none)
    NEW = "--new"  # a full brief even if the day has one
    ENSURE_TODAY = "--ensure-today"  # start, resume or show the day's brief
    RESUME_LATEST = "--resume-latest"  # continue the day's unfinished run, else start one


@dataclass(frozen=True)
class BriefRequest:
    """One `dayflow brief`, parsed. `given` names the options given on the command line (a
    resumed run says which of them do not apply to it)."""

    day: date | None = None  # None: today in the settings' timezone
    mode: Mode = Mode.AUTO
    sample: str = "standard"
    max_steps: int | None = None
    budget: int | None = None
    task_cap: int = DEFAULT_TASK_CAP
    max_tokens: int = DEFAULT_MAX_TOKENS
    compact_at: int = DEFAULT_COMPACT_AT
    deliver: tuple[str, ...] = ()  # --deliver sinks, as written
    config_file: Path | None = None
    strict_sources: bool = False
    crash_after: int | None = None
    given: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Outcome:
    """The run a brief ended with and its text. `quiet`: the brief went to sinks of which
    stdout is not one, so only a JSON document carries it to stdout."""

    run: Run
    text: str | None
    quiet: bool = False


LoopMaker = Callable[["Store", "ModelClient", "int | None", "Path | None"], "Loop"]


@dataclass
class Room:
    """What a brief is made with, injected by the CLI (tests replace any part)."""

    settings: Settings
    config: Config
    clock: Clock
    open_store: Callable[[Settings], Store]  # creates the database when there is none
    model_factory: Callable[[str, Settings], ModelClient]
    make_loop: LoopMaker  # the agent loop wired to the store, the model and the trace
    say: Callable[[str], None]  # one line of notice for the user (stderr)
    sources: SourceFactory | None = None  # None: the run's own settings decide (build_sources)
    stdin: Callable[[], bytes] = lambda: b""
    opened: list[ModelClient] = field(default_factory=list)


def brief(request: BriefRequest, room: Room) -> Outcome:
    """Write, update, resume or show the brief of the request's day (see `Mode`)."""
    settings, say = room.settings, room.say
    if request.sample not in _samples():
        raise UsageError(f"--sample must be one of {', '.join(_samples())}, not {request.sample!r}")
    day = request.day or room.clock.now().astimezone(_zone(settings.tz)).date()
    sinks = _sinks(room, request)
    if not isinstance(settings.db_path, Path):  # a server: the day's lock lives here
        _local_dir(settings.local_dir)
    with _closing_all(room), room.open_store(settings) as store:
        with briefday.day_lock(settings.local_db, day, lambda: _say_waiting(room, store, day)):
            current = briefday.latest_for(store.runs, day, room.clock.now())
            if current is not None and current.status == RUNNING:
                driven = current.id
                current = briefday.wait_while_driven(lambda: store.runs.get(driven))
            if request.mode is Mode.ENSURE_TODAY and current is not None:
                return _todays(room, store, current, day, sinks, request.crash_after)
            update_of = None
            if current is not None and current.status == DONE:
                if request.mode is not Mode.RESUME_LATEST:
                    update_of = _second_brief_notice(
                        say, current, day, settings.tz, request.mode is Mode.NEW
                    )
            elif request.mode is Mode.SINCE_LAST:
                say(f"no finished brief for {day} yet: writing a full one")
            unfinished = store.runs.latest_unfinished(day.isoformat())
            if request.mode is Mode.RESUME_LATEST and unfinished is not None:
                ignored = [
                    "--" + name.replace("_", "-")
                    for name in ("model", "inbox", "calendar", "sample", "task_cap", "compact_at")
                    if name in request.given
                ]
                if ignored:
                    say(
                        f"note: {', '.join(ignored)} do not apply to a resumed run: run "
                        f"{unfinished.id} keeps the settings it started with"
                    )
                max_tokens = request.max_tokens if "max_tokens" in request.given else None
                return resume(
                    room,
                    store,
                    unfinished,
                    crash_after=request.crash_after,
                    max_steps=request.max_steps,
                    budget=request.budget,
                    max_tokens=max_tokens,
                )
            if unfinished is not None:
                say(
                    f"note: run {unfinished.id} for {day} is {unfinished.status}; "
                    f"`dayflow resume {unfinished.id}` continues it (or brief --resume-latest)"
                )
            settings = kept_inputs(room, settings)
            room.opened.append(_client_for_new_run(room))
            picked = _sources(
                room.config,
                request,
                settings,
                db_path=store.upkeep.location,
                mail_since=lambda: briefday.mail_since(
                    store.runs, day, _zone(settings.tz), room.clock.now()
                ),
            )
            loop = room.make_loop(store, room.opened[-1], request.crash_after, request.config_file)
            from dayflow.agent import start_run

            options = _options(request, settings, day, sinks, update_of, picked)
            try:
                result = start_run(loop, options)
            except DayTaken as taken:
                # Another process, on this host or another sharing the database, created the
                # day's run after we looked: that one is today's brief.
                say(
                    f"another dayflow started the brief for {day} meanwhile (run "
                    f"{taken.run_id}); waiting for it"
                )
                taken_id = taken.run_id
                current = briefday.wait_while_driven(lambda: store.runs.get(taken_id))
                return _todays(room, store, current, day, sinks, request.crash_after)
            if picked.notice:  # said once the run exists: a refused input gets one line only
                say(picked.notice)
            # With sinks, stdout is one of them; a brief not delivered is printed anyway.
            quiet = bool(sinks) and "stdout" not in sinks and result.run.status == DONE
            return Outcome(result.run, result.text, quiet=quiet)


def resume(
    room: Room,
    store: Store,
    run: Run,
    *,
    crash_after: int | None = None,
    max_steps: int | None = None,
    budget: int | None = None,
    max_tokens: int | None = None,
) -> Outcome:
    """Continue `run` from its last committed step, or show it when it is done (no model
    call); a run driven by a live process is RunBusy."""
    from dayflow.agent import resume_run

    if run.status == DONE:
        room.say(f"run {run.id} is already done; showing its brief (no model call)")
        return Outcome(run, run.final_text)
    if run.status == RUNNING:
        # Say who drives it before anything else (a missing key is not the problem here).
        raise RunBusy(
            f"run {run.id} is being driven by pid {run.owner_pid} on host {run.owner_host}; "
            "wait for it to finish"
        )
    key_notice(room.say, room.settings, run.model)
    try:
        client = room.model_factory(run.model, room.settings)
    except ConfigError as exc:
        raise ConfigError(
            f"run {run.id} uses the model {run.model!r}: {exc}".replace(
                ", or use --model offline", "; a resumed run keeps its model"
            )
        ) from None
    room.opened.append(client)
    kept = run.settings.config_file
    loop = room.make_loop(store, client, crash_after, Path(kept) if kept else None)
    with _closing_all(room):
        result = resume_run(loop, run, max_steps=max_steps, budget=budget, max_tokens=max_tokens)
    if result.finished_elsewhere:
        room.say(f"run {run.id} was finished by another process meanwhile; it is already done")
    return Outcome(result.run, result.text)


def key_notice(say: Callable[[str], None], settings: Settings, model: str) -> None:
    """Say which `.env` file supplied the API key, when one did and the model will use it."""
    from dayflow.providers import OFFLINE_MODEL

    if model != OFFLINE_MODEL and settings.api_key and settings.api_key_file:
        say(f"using ANTHROPIC_API_KEY from {settings.api_key_file}")


def kept_inputs(room: Room, settings: Settings) -> Settings:
    """An inbox or calendar read from standard input or a pipe (`-`, /dev/stdin, `<(...)`)
    is kept in a private file beside the database, so a resume (in another process) reads the
    very same input again."""
    import hashlib

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
        try:
            data = room.stdin() if value == "-" else Path(value).read_bytes()
        except OSError as exc:
            raise UsageError(f"--{name}: cannot read {value}: {exc.strerror or exc}") from None
        folder = settings.local_dir / "inputs"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{name}-{hashlib.sha256(data).hexdigest()[:16]}.json"
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        where = "standard input" if value == "-" else value
        room.say(f"read the {name} from {where}; kept as {path} for `dayflow resume`")
        kept[name] = str(path)
    inbox, calendar = kept.get("inbox", settings.inbox), kept.get("calendar", settings.calendar)
    return replace(settings, inbox=inbox, calendar=calendar)


@dataclass(frozen=True)
class _Picked:
    options: dict[str, Any]  # BriefOptions fields
    notice: str | None  # what to say once the run exists


def _sources(
    config: Config,
    request: BriefRequest,
    settings: Settings,
    *,
    db_path: str,
    mail_since: Callable[[], datetime],
) -> _Picked:
    """What a new run reads, as BriefOptions fields, and the notice saying so.

    With a config that declares sources: its entries (the `--inbox`/`--calendar` files replace
    its [[inbox]] / [[calendar]] entries), and mail since `mail_since()` (day.mail_since: the
    last finished brief, else 24 hours, relative to the brief's day); the sample is never used.
    Without one (or one holding only delivery settings): the bundled sample (or the JSON files
    given), read whole."""
    from datetime import UTC

    from dayflow.sources.factory import run_settings_for

    loaded = config.sources(request.config_file)
    out: dict[str, Any] = {"strict_sources": request.strict_sources}
    if loaded is not None:
        out["config"] = str(loaded.path)
    if loaded is None or not loaded.all():
        notice = None
        if settings.inbox is None:
            path = loaded.path if loaded is not None else config.config_path(request.config_file)[0]
            why = "declares no sources" if loaded is not None else "does not exist"
            notice = (
                f"No sources configured ({path} {why}): this brief read the bundled sample "
                f"inbox; its tasks are filed under 'sample:' keys in {db_path} "
                "(`dayflow tasks --clear-sample` removes them; `dayflow init` writes a config)."
            )
        return _Picked(out, notice)
    chosen = run_settings_for(loaded, inbox=settings.inbox, calendar=settings.calendar)
    out["sources"] = chosen["sources"]
    if loaded.inboxes and settings.inbox is None:
        out["mail_since"] = mail_since().astimezone(UTC).isoformat()
    names = ", ".join(s.name for s in loaded.all())
    return _Picked(out, f"sources from {loaded.path}: {names}")


def _options(
    request: BriefRequest,
    settings: Settings,
    day: date,
    sinks: list[str],
    update_of: Run | None,
    picked: _Picked,
) -> BriefOptions:
    """The new run's options: the request's knobs, the settings' inputs, what it reads."""
    from dayflow.agent import BriefOptions

    return BriefOptions(
        brief_date=day,
        tz=settings.tz,
        model=settings.model,
        max_steps=request.max_steps or DEFAULT_MAX_STEPS,
        budget=request.budget,
        task_cap=request.task_cap,
        max_tokens=request.max_tokens,
        compact_at=request.compact_at,
        sample=request.sample,
        inbox=settings.inbox,
        calendar=settings.calendar,
        since=None if update_of is None else update_of.created_at,
        update_of=None if update_of is None else update_of.id,
        deliver=tuple(sinks),
        sole_for_day=request.mode is Mode.ENSURE_TODAY,
        **picked.options,
    )


def _client_for_new_run(room: Room) -> ModelClient:
    """The model a new run uses, with the notices that go with it."""
    settings = room.settings
    client = room.model_factory(settings.model, settings)
    room.opened.append(client)
    if settings.model_was_defaulted_offline:
        hint = ""
        if Path(".env").is_file() and "DAYFLOW_DOTENV" not in room.config.env:
            hint = " ./.env is not read: DAYFLOW_DOTENV=./.env reads it."
        room.say(
            "No ANTHROPIC_API_KEY set: using the built-in offline model "
            f"(token counts are estimates).{hint}"
        )
    key_notice(room.say, settings, settings.model)
    return client


def _todays(
    room: Room, store: Store, current: Run, day: date, sinks: list[str], crash_after: int | None
) -> Outcome:
    """`brief --ensure-today` when the day has its run: resume it, or show it when done."""
    if current.status != DONE:
        room.say(f"the brief for {day} is run {current.id}, {current.status}: resuming it")
    missed = [k for k in sinks if k not in current.settings.deliver]
    if missed:
        # A run delivers to the sinks it was started with, and no others.
        room.say(
            f"note: run {current.id} was started without delivering to "
            f"{', '.join(missed)}, so it is not delivered there; "
            f"`dayflow brief --new --deliver ...` writes one that is"
        )
    return resume(room, store, current, crash_after=crash_after)


def _sinks(room: Room, request: BriefRequest) -> list[str]:
    """The config file's sinks, then the --deliver ones, each once; checked before a run."""
    from dayflow import delivery

    configured, how = room.config.delivery(request.config_file, room.clock)
    sinks: list[str] = []
    for sink in [*configured, *(delivery.parse_sink(f) for f in request.deliver)]:
        if sink not in sinks:
            sinks.append(sink)
    delivery.check(sinks, how)
    return sinks


def _say_waiting(room: Room, store: Store, day: date) -> None:
    current = briefday.latest_for(store.runs, day, room.clock.now())
    who = "" if current is None else f" (run {current.id}, pid {current.owner_pid})"
    room.say(f"another dayflow is writing the brief for {day}{who}; waiting for it")


def _second_brief_notice(
    say: Callable[[str], None], done: Run, day: date, tz: str, new: bool
) -> Run | None:
    """Say that the day has its brief; return it when the new run is an update of it."""
    at = datetime.fromisoformat(done.finished_at or done.created_at).astimezone(_zone(tz))
    head = f"the brief for {day} exists: run {done.id}, done at {at:%H:%M}"
    if new:
        say(f"{head}; writing a full new one (--new)")
        return None
    say(
        f"{head}; writing an update with only what arrived since (--since-last; --new writes "
        f"a full brief, --ensure-today or `dayflow show {done.id}` shows that one)"
    )
    return done


def _zone(tz: str) -> Any:
    from datetime import UTC
    from zoneinfo import ZoneInfo

    return UTC if tz == "UTC" else ZoneInfo(tz)


def _samples() -> tuple[str, ...]:
    from dayflow.sources import SAMPLES

    return tuple(SAMPLES)


def _local_dir(path: Path) -> None:
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _closing_all(room: Room) -> Iterator[None]:
    """Close the model clients' connections afterwards, where they have any."""
    try:
        yield
    finally:
        while room.opened:
            close = getattr(room.opened.pop(), "close", None)
            if callable(close):
                close()
