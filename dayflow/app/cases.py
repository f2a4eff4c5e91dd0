"""The use cases that drive a run, with typed requests: `brief` (a `BriefRequest`), `resume`
(a `ResumeRequest`), `fork` (a `ForkRequest`); each returns the `briefing.Outcome` the CLI
renders. What a run is made with (the `briefing.Room`: the store, the model, the loop wired
to the sources, the sinks, the MCP servers and the stderr trace) is put together here, once,
from the runtime: `room`, `make_loop`, `for_run`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dayflow.app.runtime import Runtime
from dayflow.models import NO_LIMITS, Limits

if TYPE_CHECKING:
    from dayflow.agent import Loop, Note
    from dayflow.briefing import BriefRequest, Outcome, Room
    from dayflow.config import Settings
    from dayflow.models import Run
    from dayflow.providers import ModelClient
    from dayflow.store import Store


@dataclass(frozen=True)
class ResumeRequest:
    """One `dayflow resume`: the run (None: the newest unfinished) and what changes from now
    on (None: as the run was started)."""

    run_id: str | None = None
    limits: Limits = NO_LIMITS  # None fields: the run's own
    timeout: float | None = None
    crash_after: int | None = None
    verbose: bool = False


@dataclass(frozen=True)
class ForkRequest:
    """One `dayflow fork`: a new run from the first `from_step` steps of `run_id`, continued
    with `model` (None: the parent's)."""

    run_id: str
    from_step: int
    model: str | None = None
    limits: Limits = NO_LIMITS  # steps and budget; None: the parent's
    timeout: float | None = None
    crash_after: int | None = None
    verbose: bool = False


def brief(rt: Runtime, settings: Settings, request: BriefRequest, verbose: bool) -> Outcome:
    """Write, update, resume or show the brief of the request's day (`briefing.brief`)."""
    from dayflow.briefing import brief as write_brief

    return write_brief(request, room(rt, settings, verbose))


def resume(rt: Runtime, settings: Settings, request: ResumeRequest) -> Outcome:
    """Continue a run from its last committed step (or show it when done)."""
    from dayflow.briefing import resume as continue_run

    with rt.store(settings) as store:
        run = store.runs.find(request.run_id) if request.run_id else latest_unfinished(store)
        return continue_run(
            room(rt, settings, request.verbose),
            store,
            run,
            crash_after=request.crash_after,
            limits=request.limits,
            timeout=request.timeout,
        )


def fork(rt: Runtime, settings: Settings, request: ForkRequest) -> Outcome:
    """A new run from the parent's first steps (no model call spent on them), driven to its
    end with the parent's provider and the request's model."""
    from dayflow import history
    from dayflow.briefing import outcome_of
    from dayflow.briefing.flow import open_loop

    with rt.store(settings) as store:
        parent = store.runs.find(request.run_id)
        # Refuse a bad fork point before a model (and maybe an API key) is needed.
        history.check_fork_point(
            parent, store.steps.of(parent.id), request.from_step, profile=store.profile
        )
        chosen = request.model or parent.model
        the = room(rt, settings, request.verbose)
        with open_loop(the, store, parent, chosen, request.crash_after, request.timeout) as loop:
            result = history.fork_run(
                loop,
                parent,
                request.from_step,
                model=chosen,
                limits=request.limits,
            )
        # Its lists and page from its committed reads, as a brief's: `--format json` has its
        # `since` (the comparison it copied or made), `--format html` its evidence.
        return outcome_of(store, result.run, result.text)


def latest_unfinished(store: Store) -> Run:
    """The run a bare `resume` continues, or NothingToResume naming the way on."""
    from dayflow.errors import NothingToResume
    from dayflow.store.values import command_hint

    found = store.runs.latest_unfinished()
    if found is not None:
        return found
    if not store.runs.list(limit=1):
        hint = command_hint(store.profile, "brief")
        raise NothingToResume(f"nothing to resume: no runs yet (`{hint}`)")
    from dayflow.models import RUNNING

    driven = store.runs.list(status=RUNNING, limit=1)
    if driven:  # a second `resume` while the first drives the run: say who, as --run does
        from dayflow.errors import RunBusy

        run = driven[0]
        raise RunBusy(
            f"run {run.id} is being driven by pid {run.owner_pid} on host "
            f"{run.owner_host}; wait for it to finish"
        )
    raise NothingToResume(
        "nothing to resume: every run is done or driven by a live process "
        f"(see `{command_hint(store.profile, 'runs')}`)"
    )


def room(rt: Runtime, settings: Settings, verbose: bool) -> Room:
    """What `dayflow.briefing` makes a run with: this runtime's parts."""
    from dayflow.briefing import Room

    def loop(store: Store, client: Any, crash_after: int | None, config_file: Path | None) -> Any:
        return make_loop(rt, store, client, verbose, crash_after, settings, config_file)

    return Room(
        settings=settings,
        config=rt.config,
        clock=rt.clock,
        open_store=lambda s: rt.store(s, create=True),
        model_factory=rt.model_factory,
        make_loop=loop,
        say=rt.say,
        sources=rt.sources,
        settings_for=lambda run, timeout: for_run(rt, run, settings, timeout),
        stdin=sys.stdin.buffer.read,
    )


def make_loop(
    rt: Runtime,
    store: Store,
    client: ModelClient,
    verbose: bool,
    crash_after: int | None,
    settings: Settings,
    config_file: Path | None = None,
) -> Loop:
    """The agent loop wired to this runtime's store, model, sources, sinks, MCP servers and
    stderr trace."""
    from dayflow.agent import Hooks, Loop, source_factory
    from dayflow.app.trace import Trace
    from dayflow.briefing.day import since_sources
    from dayflow.providers import ReportsRetries

    if isinstance(client, ReportsRetries):
        client.on_retry = lambda text: rt.notice(f"note: {text}")
    configured = rt.config
    report: Callable[[Note], None] = Trace(rt.err, verbose)
    return Loop(
        store=store,
        client=client,
        report=report,
        sources=since_sources(
            rt.sources or source_factory(configured.file_env, configured.sources_file)
        ),
        delivery=lambda: configured.delivery(config_file, rt.clock)[1],
        hooks=Hooks(crash_after=crash_after, kill_at=settings.kill_at),
        mcp=rt.mcp(verbose),
    )


def for_run(rt: Runtime, run: Run, settings: Settings, timeout: float | None) -> Settings:
    """The settings a resume (or fork) of `run` uses: its own provider, and a local run's own
    server (the environment may name another provider, or another address, today)."""
    from dayflow.providers.local import ANTHROPIC, LOCAL, OLLAMA_URL

    provider = run.settings.provider if run.settings.provider == LOCAL else ANTHROPIC
    if provider == settings.provider and provider != LOCAL:
        return settings
    again = rt.model_settings(
        db=settings.db_path, timeout=timeout, provider=provider, allow_remote=settings.allow_remote
    )
    if provider != LOCAL:
        return again
    from dayflow.frozen import replace
    from dayflow.network import shown_url

    kept = run.settings.base_url or OLLAMA_URL
    # The run keeps its server without a user:password: today's setting gives them back
    # when it names the same server.
    if again.base_url and shown_url(again.base_url) == kept:
        kept = again.base_url
    return replace(again, base_url=kept)


@contextlib.contextmanager
def closing(client: ModelClient) -> Iterator[None]:
    """Close the model client's connections afterwards, where it has any."""
    from dayflow.providers import HoldsConnections

    try:
        yield
    finally:
        if isinstance(client, HoldsConnections):
            client.close()
