"""What the commands that drive a run share (brief, resume, fork): the stderr trace of the
loop's notes, the local model's checks and notices, the settings a resume uses, the loop wired
to this process, and closing the model client. Imported only by those commands' modules."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dayflow.cli_base import Deps

if TYPE_CHECKING:
    from rich.console import Console

    from dayflow import config
    from dayflow.agent import Loop, Note
    from dayflow.models import Run
    from dayflow.providers import ModelClient
    from dayflow.store import Store


class Trace:
    """Shows the loop's notes on stderr: a spinner while the model works, and with -v the
    step trace."""

    def __init__(self, console: Console, verbose: bool) -> None:
        self.console, self.verbose = console, verbose
        self.status: Any = None

    def __call__(self, note: Note) -> None:
        from dayflow.agent import notes  # a note comes only from a run: the agent is loaded

        if isinstance(note, notes.Calling) and self.console.is_terminal:
            self.status = self.console.status(_Waiting(note.step))
            self.status.start()
        elif isinstance(note, notes.Called) and self.status is not None:
            self.status.stop()
            self.status = None
        elif isinstance(note, notes.Resumed):
            run = note.run
            self.console.print(
                f"[resume {run.id}] replaying {run.steps} committed step(s), "
                f"{run.usage.total_input} in / {run.usage.output_tokens} out already spent",
                markup=False,
            )
        elif isinstance(note, notes.StepRead) and self.verbose:
            extra = "  (committed before the crash; finishing it)" if note.recovered else ""
            if note.read_as:
                extra = f" ({note.read_as}){extra}"
            self.console.print(f"[step {note.step}] stop={note.stop_reason}{extra}", markup=False)
        elif isinstance(note, notes.ToolCalled) and self.verbose:
            from dayflow import render

            line = render.tool_call_line(
                note.name, note.input, reused=note.reused, error=note.error
            )
            self.console.print(line, markup=False, soft_wrap=True)
        elif isinstance(note, notes.Delivered):
            self.console.print(f"delivered: {note.line}", markup=False, soft_wrap=True)
        elif isinstance(note, notes.Uncertain):
            self.console.print(f"delivery {note.line}", markup=False, soft_wrap=True)
        elif isinstance(note, notes.McpNotice):
            self.console.print(f"mcp: {note.line}", markup=False, soft_wrap=True)
        elif isinstance(note, notes.Finished):
            run = note.run
            word = "resumed" if note.resumed else "run"
            est = " (estimated)" if run.estimated else ""
            self.console.print(
                f"[{word} {run.id} · finished at step {run.steps} · {run.usage.total_input} in"
                f" / {run.usage.output_tokens} out total{est}]",
                markup=False,
            )


class _Waiting:
    """The spinner's text, with the seconds waited so far (a local model on a CPU may take
    minutes a step): Rich renders it anew at each refresh."""

    def __init__(self, step: int, clock: Callable[[], float] | None = None) -> None:
        import time

        self.step, self._clock = step, clock or time.monotonic
        self.started = self._clock()

    def __rich__(self) -> str:
        waited = int(self._clock() - self.started)
        return f"step {self.step}: waiting for the model… {waited} s"


def local_check(settings: config.Settings, model: str) -> None:
    """For a local model: refuse (exit 2) what would send mail off this machine (see
    `dayflow.briefing.flow.local_check`)."""
    from dayflow.briefing.flow import local_check

    local_check(settings, model)


def local_notice(deps: Deps, settings: config.Settings, model: str) -> None:
    """Say where a local model's mail goes, on stderr, as the run starts or resumes."""
    from dayflow.briefing.flow import local_notice

    local_notice(deps.notice, settings, model)


def for_run(
    deps: Deps, run: Run, settings: config.Settings, timeout: float | None
) -> config.Settings:
    """The settings a resume of `run` uses: its own provider, and a local run's own server
    (the environment may name another provider, or another address, today)."""
    from dayflow.providers.local import ANTHROPIC, LOCAL, OLLAMA_URL

    provider = run.settings.provider if run.settings.provider == LOCAL else ANTHROPIC
    if provider == settings.provider and provider != LOCAL:
        return settings
    again = deps.model_settings(
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


def key_notice(deps: Deps, settings: config.Settings, model: str) -> None:
    """Say which `.env` file supplied the API key, when one did and the model will use it."""
    from dayflow.providers import OFFLINE_MODEL

    if model != OFFLINE_MODEL and settings.api_key and settings.api_key_file:
        deps.notice(f"using ANTHROPIC_API_KEY from {settings.api_key_file}")


def make_loop(
    deps: Deps,
    store: Store,
    client: ModelClient,
    verbose: bool,
    crash_after: int | None,
    settings: config.Settings,
    *,
    config_file: Path | None = None,
) -> Loop:
    """The agent loop wired to this process's store, model, sources and stderr trace."""
    from dayflow.agent import Hooks, Loop, source_factory
    from dayflow.briefing.day import since_sources
    from dayflow.providers import ReportsRetries

    if isinstance(client, ReportsRetries):
        client.on_retry = lambda text: deps.notice(f"note: {text}")
    configured = deps.config
    return Loop(
        store=store,
        client=client,
        report=Trace(deps.err, verbose),
        sources=since_sources(
            deps.sources or source_factory(configured.file_env, configured.sources_file)
        ),
        delivery=lambda: configured.delivery(config_file, deps.clock)[1],
        hooks=Hooks(crash_after=crash_after, kill_at=settings.kill_at),
        mcp=deps.mcp(verbose),
    )


@contextlib.contextmanager
def closing(client: ModelClient) -> Iterator[None]:
    """Close the model client's connections afterwards, where it has any."""
    from dayflow.providers import HoldsConnections

    try:
        yield
    finally:
        if isinstance(client, HoldsConnections):
            client.close()
