"""What `dayflow brief` does on a day, given a typed request: which run is the day's brief, a
new one or an update or that one again, the inputs read from standard input, the sources and
sinks, and the outcome to show. The CLI parses the options into a `BriefRequest`, calls
`brief()` and renders the `Outcome`; nothing here prints or knows of Typer or Rich.

The order matters for what a failure leaves behind: everything that can be checked without
the database (the settings, the config file, the sinks) is checked before the store is
opened, and when the database does not exist yet, the inputs, the model, the config's sources
and the local sources' files too, so a brief that cannot start creates no empty database
(issue 19.7).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dayflow.briefing import day as briefday
from dayflow.briefing.inputs import Picked, discard_kept, kept_inputs, new_run_sources, zone
from dayflow.briefing.request import BriefRequest, Mode
from dayflow.errors import ConfigError, DayTaken, RunBusy, StoreError, UsageError
from dayflow.models import (
    DONE,
    NO_LIMITS,
    RUNNING,
    Limits,
    Run,
)
from dayflow.store.values import command_hint

if TYPE_CHECKING:
    from dayflow.agent import BriefOptions, Loop, SourceFactory
    from dayflow.clock import Clock
    from dayflow.config import Config, Settings
    from dayflow.page import Page
    from dayflow.providers import ModelClient
    from dayflow.store import Store


@dataclass(frozen=True)
class Outcome:
    """The run a brief ended with and its text. `quiet`: the brief went to sinks of which
    stdout is not one, so only a JSON document carries it to stdout."""

    run: Run
    text: str | None
    quiet: bool = False
    # What --format json carries besides the brief (`shown.run_lists`).
    data: dict[str, Any] = field(default_factory=dict)
    # The addresses the run read in mail and calendar: the only links Markdown keeps.
    links: frozenset[str] = frozenset()
    # The brief as a page (`--format html`), from the run's committed reads.
    page: Page | None = None


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
    # The settings a resume of a run uses (its own provider and server, --timeout); None: these
    settings_for: Callable[[Run, float | None], Settings] | None = None
    stdin: Callable[[int], bytes] = lambda limit: b""  # at most `limit` bytes of stdin
    opened: list[ModelClient] = field(default_factory=list)


def brief(request: BriefRequest, room: Room) -> Outcome:
    """Write, update, resume or show the brief of the request's day (see `Mode`)."""
    settings = room.settings
    if request.sample not in _samples():
        raise UsageError(f"--sample must be one of {', '.join(_samples())}, not {request.sample!r}")
    if request.mode not in (Mode.RESUME_LATEST, Mode.ENSURE_TODAY):  # (may resume a run of
        local_check(settings, settings.model)  # its own) before the database is even made
    day = request.day or room.clock.now().astimezone(zone(settings.tz)).date()
    sinks = _sinks(room, request)
    if not isinstance(settings.db_path, Path):  # a server: the day's lock lives here
        _local_dir(settings.local_dir)
    real = _reads_own_mail(room, request, settings)
    if not real and settings.calendar is None:
        _no_sample_mail(room, request)
    first = isinstance(settings.db_path, Path) and not settings.db_path.exists()
    if first:  # no database yet: check what can fail before one is made
        settings = _check_first(room, request, day, sinks)
    with _closing_all(room), room.open_store(settings) as store:
        the = _Day(request, room, settings, store, day, sinks, real, first)
        with briefday.day_lock(
            settings.local_db, day, lambda: _say_waiting(the), profile=store.profile
        ):
            return _decide(the)


@dataclass
class _Day:
    """One brief once its store is open and the day's lock held."""

    request: BriefRequest
    room: Room
    settings: Settings
    store: Store
    day: date
    sinks: list[str]
    real: bool  # it reads the user's mail, to which a sample run is not the day's brief
    first: bool  # the database was new: its inputs and model are already checked


def _decide(the: _Day) -> Outcome:
    """New, update, ensure-today or resume-latest, from the runs the day has."""
    request, store, say, day = the.request, the.store, the.room.say, the.day
    current = briefday.latest_for(store.runs, day, the.room.clock.now(), the.real)
    if current is not None and current.status == RUNNING:
        driven = current.id
        current = briefday.wait_while_driven(lambda: store.runs.get(driven))
    if request.mode is Mode.ENSURE_TODAY and current is not None:
        return _todays(the, current)
    update_of = None
    if current is not None and current.status == DONE:
        if request.mode is not Mode.RESUME_LATEST:
            full = "--new" if request.mode is Mode.NEW else None
            full = full or ("--since" if request.since is not None else None)
            update_of = briefday.second_brief_notice(
                say, current, day, zone(the.settings.tz), full, store.profile
            )
    elif request.mode is Mode.SINCE_LAST:
        say(f"no finished brief for {day} yet: writing a full one")
    unfinished = store.runs.latest_unfinished(day.isoformat())
    if unfinished is not None and the.real and unfinished.settings.reads_sample:
        unfinished = None  # a sample run is not the day's brief of the user's mail
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
        given = request.limits
        max_tokens = given.max_tokens if "max_tokens" in request.given else None
        return resume(
            the.room,
            store,
            unfinished,
            crash_after=request.crash_after,
            limits=Limits(given.max_steps, given.budget, max_tokens),
            timeout=request.timeout,
        )
    if unfinished is not None:
        say(
            f"note: run {unfinished.id} for {day} is {unfinished.status}; "
            f"`{command_hint(store.profile, 'resume', unfinished.id)}` continues it (or brief "
            "--resume-latest)"
        )
    # Alone on the day (no run of it seen), it is created only if it still is: two hosts
    # sharing a database write one full brief, not two (issue 19.13).
    sole = request.mode is Mode.ENSURE_TODAY
    return _start(the, update_of, sole or (current is None and request.mode is not Mode.NEW))


def _start(the: _Day, update_of: Run | None, sole: bool) -> Outcome:
    """Start the new run and drive it; the day's run made meanwhile elsewhere is shown."""
    from dayflow.agent import start_run

    room, request, store, day, settings = the.room, the.request, the.store, the.day, the.settings
    if not the.first:
        settings = _new_run_inputs(room, settings, day)
    now = room.clock.now()
    picked = new_run_sources(
        room.config,
        request,
        settings,
        db_path=store.upkeep.location,
        profile=store.profile,
        moment=briefday.brief_moment(day, zone(settings.tz), now),
        mail_since=lambda: briefday.mail_since(store.runs, day, zone(settings.tz), now),
        update=update_of is not None,
    )
    loop = room.make_loop(store, room.opened[-1], request.crash_after, request.config_file)
    options = _options(request, settings, day, the.sinks, update_of, picked, sole)
    options = with_rules(options, room, request.config_file, store.profile)
    try:
        result = start_run(loop, options)
    except DayTaken as taken:
        # Another process, on this host or another sharing the database, created the day's
        # run after we looked: that one is today's brief.
        room.say(
            f"another dayflow started the brief for {day} meanwhile (run {taken.run_id}); "
            "waiting for it"
        )
        taken_id = taken.run_id
        return _todays(the, briefday.wait_while_driven(lambda: store.runs.get(taken_id)))
    for line in picked.notices:  # said once the run exists: a refused input gets one line only
        room.say(line)
    # With sinks, stdout is one of them; a brief not delivered is printed anyway.
    quiet = bool(the.sinks) and "stdout" not in the.sinks and result.run.status == DONE
    return outcome_of(store, result.run, result.text, quiet=quiet)


def resume(
    room: Room,
    store: Store,
    run: Run,
    *,
    crash_after: int | None = None,
    limits: Limits = NO_LIMITS,
    timeout: float | None = None,
) -> Outcome:
    """Continue `run` from its last committed step, or show it when it is done (no model
    call); a run driven by a live process is RunBusy."""
    from dayflow.agent import resume_run

    if run.status == DONE:
        room.say(f"run {run.id} is already done; showing its brief (no model call)")
        return outcome_of(store, run, run.final_text)
    if run.status == RUNNING:
        # Say who drives it before anything else (a missing key is not the problem here).
        raise RunBusy(
            f"run {run.id} is being driven by pid {run.owner_pid} on host {run.owner_host}; "
            "wait for it to finish"
        )
    with open_loop(room, store, run, run.model, crash_after, timeout, resuming=True) as loop:
        result = resume_run(loop, run, limits)
    if result.finished_elsewhere:
        room.say(f"run {run.id} was finished by another process meanwhile; it is already done")
    return outcome_of(store, result.run, result.text)


@contextlib.contextmanager
def open_loop(
    room: Room,
    store: Store,
    run: Run,
    model: str,
    crash_after: int | None,
    timeout: float | None,
    *,
    resuming: bool = False,
) -> Iterator[Loop]:
    """The loop that drives `run` on (a resume) or from it (a fork, with `model`): the run's
    own provider and server whatever the environment says today, a local one refused (exit 2)
    where its server is not on this machine unless --allow-remote, the notices said, the model
    client made and closed at the end."""
    settings = room.settings if room.settings_for is None else room.settings_for(run, timeout)
    try:
        local_check(settings, model)
    except UsageError as exc:
        raise UsageError(f"run {run.id} uses a local model: {exc}") from None
    local_notice(room.say, settings, model)
    key_notice(room.say, settings, model)
    try:
        client = room.model_factory(model, settings)
    except ConfigError as exc:
        if not resuming:
            raise
        raise ConfigError(
            f"run {run.id} uses the model {run.model!r}: {exc}".replace(
                ", or use --model offline", "; a resumed run keeps its model"
            )
        ) from None
    room.opened.append(client)
    kept = run.settings.config_file
    loop = room.make_loop(store, client, crash_after, Path(kept) if kept else None)
    with _closing_all(room):
        yield loop


def key_notice(say: Callable[[str], None], settings: Settings, model: str) -> None:
    """Say which `.env` file supplied the API key, when one did and the model will use it."""
    from dayflow.providers import OFFLINE_MODEL

    if model != OFFLINE_MODEL and settings.api_key and settings.api_key_file:
        say(f"using ANTHROPIC_API_KEY from {settings.api_key_file}")


def _options(
    request: BriefRequest,
    settings: Settings,
    day: date,
    sinks: list[str],
    update_of: Run | None,
    picked: Picked,
    sole: bool = False,
) -> BriefOptions:
    """The new run's options: the request's knobs, the settings' inputs, what it reads."""
    from dayflow.agent import BriefOptions
    from dayflow.models import RunSettings
    from dayflow.network import shown_url

    return BriefOptions(
        brief_date=day,
        model=settings.model,
        limits=request.limits.for_new_run(),
        settings=RunSettings(
            tz=settings.tz,
            compact_at=request.compact_at,
            sample=request.sample,
            inbox=settings.inbox,
            calendar=settings.calendar,
            since=None if update_of is None else update_of.created_at,
            update_of=None if update_of is None else update_of.id,
            deliver=tuple(sinks),
            provider=settings.provider,
            base_url=shown_url(settings.base_url) if settings.base_url else None,
            proxy=_route(settings),
            price=(0.0, 0.0) if settings.local else None,  # recorded: never looked up
            **picked.options,
        ),
        sole_for_day=sole,
    )


def with_rules(
    options: BriefOptions, room: Room, config_file: Path | None, profile: str
) -> BriefOptions:
    """The new run's options with the user's rules (`rules_path`: beside the config file), kept
    in its settings; each problem with the file is one line. The file is checked on the
    clock's today (a snooze of more than a year from it is refused), whatever day is briefed."""
    from dayflow import rules
    from dayflow.frozen import replace

    path, _ = room.config.config_path(config_file)
    today = room.clock.now().astimezone(zone(room.settings.tz)).date()
    guarded = room.config.profile  # a profile's file is trusted only as its config is
    at = rules.rules_path(path, profile)
    reading = rules.read_rules(at, profile, today=today, guarded=guarded)
    for line in reading.problems:
        room.say(line)
    if not reading.rules:
        return options
    kept = tuple(reading.rules.to_json())
    return replace(options, settings=replace(options.settings, rules=kept))


def _route(settings: Settings) -> str | None:
    """How the run's model requests travel (`network.route`), kept with the run for `show`;
    None for the offline model, which makes none."""
    from dayflow.network import route
    from dayflow.providers import ANTHROPIC_API_URL, OFFLINE_MODEL, local

    if settings.local:
        return route(settings.base_url or local.OLLAMA_URL, dict(settings.proxy_env))
    if settings.model == OFFLINE_MODEL:
        return None
    return route(settings.base_url or ANTHROPIC_API_URL, dict(settings.proxy_env))


def _check_first(room: Room, request: BriefRequest, day: date, sinks: list[str]) -> Settings:
    """Before a new database is made: everything a first brief needs that can fail (the
    inputs, the model and its key, the config's sources, the local sources' files), so a
    brief that cannot start leaves no empty database behind (issue 19.7). Its notices (the
    offline model, the key's file) are said once every check passed: a brief that cannot
    start says only why."""
    said: list[str] = []
    settings = _checks_of_first(replace(room, say=said.append), request, day, sinks)
    for line in said:
        room.say(line)
    return settings


def _checks_of_first(room: Room, request: BriefRequest, day: date, sinks: list[str]) -> Settings:
    from dayflow.sources.factory import precheck

    settings = _new_run_inputs(room, room.settings, day)
    try:
        moment = briefday.brief_moment(day, zone(settings.tz), room.clock.now())
        picked = new_run_sources(  # a bad --since is refused here too
            room.config,
            request,
            settings,
            db_path=str(settings.db_path),
            moment=moment,
            mail_since=lambda: moment - briefday.MAIL_WINDOW,
        )
        options = _options(request, settings, day, sinks, None, picked)
        if room.sources is not None:
            factory = room.sources
        else:
            from dayflow.agent import source_factory

            factory = source_factory(room.config.file_env, room.config.sources_file)
        precheck(*factory(options.settings, day), day)
    except BaseException:
        discard_kept(room.settings, settings)  # no run will ever read them
        raise
    return settings


def _new_run_inputs(room: Room, settings: Settings, day: date) -> Settings:
    """A new run's stdin inputs kept and its model client made (`room.opened[-1]`), with the
    notices that go with them; a local model whose server is not on this machine refused."""
    local_check(settings, settings.model)
    settings = kept_inputs(settings, room.stdin, room.say, day)
    local_notice(room.say, settings, settings.model)
    room.opened.append(_client_for_new_run(room))
    return settings


def local_check(settings: Settings, model: str) -> None:
    """For a local model: refuse (exit 2) what would send mail off this machine, a base URL
    that is not loopback or a cloud model, unless --allow-remote; and a missing model name."""
    if settings.local:
        from dayflow.providers import local

        assert settings.base_url is not None  # config.load gives a local model its address
        local.check(model, settings.base_url, allow_remote=settings.allow_remote)


def local_notice(say: Callable[[str], None], settings: Settings, model: str) -> None:
    """Say where the model's requests go, as the run starts or resumes: a local model's
    server (and for a remote one, whether through a proxy); Claude at an endpoint other than
    the API's own, or through a proxy (the key goes with every request)."""
    from dayflow.network import DIRECT, route, shown_url
    from dayflow.providers import ANTHROPIC_API_URL, OFFLINE_MODEL, local

    if settings.local:
        base = settings.base_url or local.OLLAMA_URL
        say(local.where(model, base, route(base, dict(settings.proxy_env))))
        return
    if model == OFFLINE_MODEL or not settings.api_key:
        return
    how = route(settings.base_url or ANTHROPIC_API_URL, dict(settings.proxy_env))
    through = "" if how == DIRECT else f", through proxy {how}"
    if settings.base_url:
        say(
            f"Claude at {shown_url(settings.base_url)} (ANTHROPIC_BASE_URL), not the "
            f"Anthropic API's own address: the API key is sent there{through}"
        )
    elif how != DIRECT:
        say(f"the Anthropic API{through}")


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
    if settings.tz_ignored is not None:
        room.say(settings.tz_ignored)
    return client


def _todays(the: _Day, current: Run) -> Outcome:
    """`brief --ensure-today` when the day has its run: resume it, or show it when done."""
    say = the.room.say
    if current.status != DONE:
        say(f"the brief for {the.day} is run {current.id}, {current.status}: resuming it")
    missed = [k for k in the.sinks if k not in current.settings.deliver]
    if missed:
        # A run delivers to the sinks it was started with, and no others.
        say(
            f"note: run {current.id} was started without delivering to "
            f"{', '.join(missed)}, so it is not delivered there; "
            f"`{command_hint(the.store.profile, 'brief', '--new', '--deliver', '...')}` writes "
            "one that is"
        )
    return resume(the.room, the.store, current, crash_after=the.request.crash_after)


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


def _no_sample_mail(room: Room, request: BriefRequest) -> None:
    """Refuse to mail the bundled sample's brief because the config file says `smtp` (a config
    with [smtp] and no source: the user's real mailbox would get a brief of made-up mail).
    `--deliver smtp` on the command line asks for it knowingly, and is obeyed."""
    from dayflow import delivery
    from dayflow.errors import ConfigFileError

    configured, how = room.config.delivery(request.config_file, room.clock)
    if "smtp" not in configured or "smtp" in [delivery.parse_sink(f) for f in request.deliver]:
        return
    path, _ = room.config.config_path(request.config_file)
    to = ", ".join(how.smtp.to) if how.smtp else "you"
    raise ConfigFileError(
        f"{path} declares no [[inbox]] or [[calendar]], so this brief would be of the bundled "
        f"sample's made-up mail; it is not mailed to {to} (add a source, `dayflow init` shows "
        "how; or pass --deliver smtp to mail the sample knowingly)"
    )


def _reads_own_mail(room: Room, request: BriefRequest, settings: Settings) -> bool:
    """Whether the brief reads the user's mail (an --inbox file, or a config file declaring
    sources) rather than the bundled sample. Looked up in the raw document: a config that
    does not validate fails later, where it did, if a run is started at all."""
    if settings.inbox is not None:
        return True
    return briefday.declares_sources(room.config.document(request.config_file)[1])


def _say_waiting(the: _Day) -> None:
    current = briefday.latest_for(the.store.runs, the.day, the.room.clock.now(), the.real)
    who = "" if current is None else f" (run {current.id}, pid {current.owner_pid})"
    the.room.say(f"another dayflow is writing the brief for {the.day}{who}; waiting for it")


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
    from dayflow.providers import HoldsConnections

    try:
        yield
    finally:
        while room.opened:
            client = room.opened.pop()
            if isinstance(client, HoldsConnections):
                client.close()


def outcome_of(store: Store, run: Run, text: str | None, *, quiet: bool = False) -> Outcome:
    """The outcome with what the run's committed reads showed: its lists and its links."""
    from dayflow.page import page_of_run
    from dayflow.shown import run_lists, shown_in

    conversation = store.steps.conversation(run.id)
    filed = {t.id: t for t in store.tasks.list(include_done=True)} if text is not None else {}
    return Outcome(
        run,
        text,
        quiet=quiet,
        data=run_lists(conversation),
        links=shown_in(conversation).urls,
        page=None if text is None else page_of_run(conversation, run, text, filed),
    )
