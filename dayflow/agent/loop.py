"""What one drive of the loop is given (`Loop`: the store, the model client, the sources, the
hooks) and gives back (`RunResult`, the `Note`s it reports), and the stop and kill points its
parts share."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from dayflow import delivery as delivery_
from dayflow.agent.notes import Note
from dayflow.errors import SimulatedCrash
from dayflow.frozen import Frozen
from dayflow.models import (
    NO_LIMITS,
    Limits,
    Run,
    RunSettings,
)
from dayflow.providers import ModelClient
from dayflow.sources import CalendarSource
from dayflow.sources.config import SourcesConfig
from dayflow.sources.factory import build_sources
from dayflow.sources.inbox import Inbox
from dayflow.store import Store

if TYPE_CHECKING:
    from dayflow.mcp.servers import Servers


Reporter = Callable[[Note], None]
# The factory's inbox is the merged `Inbox`, the one face mail is read through (a reader of
# message dicts is made one by whoever builds it: `dayflow.sources.inbox.legacy_inbox`); its
# calendar, any CalendarSource.
Sources = tuple[Inbox, CalendarSource]
SourceFactory = Callable[[RunSettings, date], Sources]


def json_sources(settings: RunSettings, brief_date: date) -> Sources:
    """The run's sources from its settings (the config's entries, the JSON files, or the
    bundled sample), with passwords from the process environment."""
    return build_sources(settings, brief_date)


def source_factory(
    env: Mapping[str, str], configs: Callable[[Path], SourcesConfig] | None = None
) -> SourceFactory:
    """A SourceFactory whose password_env lookups use `env` (the CLI's, `.env` included),
    whose config files come from `configs` (the process's `config.Config`: read once), and
    whose accounts fetch their token or password once for every source it builds."""
    from dayflow.sources.oauth import Accounts

    accounts = Accounts()

    def factory(settings: RunSettings, brief_date: date) -> Sources:
        return build_sources(settings, brief_date, env=env, configs=configs, accounts=accounts)

    return factory


class BriefOptions(Frozen):
    """What a new run starts with: its day, model and limits (the defaults a plain `brief`
    takes), and how it reads its world and who serves its model (`RunSettings`, stored with
    the run)."""

    brief_date: date
    model: str = "offline"
    limits: Limits = NO_LIMITS  # None fields: a plain brief's defaults (`Limits.for_new_run`)
    settings: RunSettings = RunSettings()
    # Start it only if the day has no run yet (brief --ensure-today), else DayTaken names it.
    sole_for_day: bool = False


@dataclass(frozen=True)
class Hooks:
    """Test hooks: `crash_after` raises SimulatedCrash after step N commits; `kill_at`
    (point, step) sends SIGKILL to this very process at a named point of a step."""

    crash_after: int | None = None
    kill_at: tuple[str, int] | None = None


@dataclass(frozen=True)
class RunResult:
    run: Run
    text: str | None
    calls: int  # model calls made by this process
    resumed_from: int | None = None  # committed steps found when resuming
    finished_elsewhere: bool = False  # another process finished it before we could claim it


@dataclass
class Loop:
    """Everything one drive needs, injected."""

    store: Store
    client: ModelClient
    report: Reporter = lambda note: None
    sources: SourceFactory = json_sources
    hooks: Hooks = field(default_factory=Hooks)
    # How the brief is delivered to the sinks a run names (read only when it names some).
    delivery: Callable[[], delivery_.Settings] = delivery_.Settings
    # The sources opened by this process, per run: a Maildir or an IMAP connection is opened
    # once, and a message listed in step 1 is found again in step 5 without a search.
    opened: dict[str, tuple[Inbox, CalendarSource]] = field(default_factory=dict)
    # This process's MCP servers (dayflow.mcp.servers), started once each and stopped by the
    # CLI at exit; None: MCP tools are neither offered nor called.
    mcp: Servers | None = None


class Stop(Exception):
    """A run ends here, resumably: its status, the reason, and a brief not yet delivered."""

    def __init__(
        self, status: str, reason: str, request_id: str | None = None, text: str | None = None
    ) -> None:
        super().__init__(reason)
        self.status, self.reason, self.request_id = status, reason, request_id
        self.text = text  # a brief that was written but not delivered everywhere


def after_step(loop: Loop, n: int) -> None:
    kill_point(loop, "after_complete", n)
    if loop.hooks.crash_after is not None and n >= loop.hooks.crash_after:
        raise SimulatedCrash(f"simulated crash after step {n}")


def kill_point(loop: Loop, point: str, n: int) -> None:
    if loop.hooks.kill_at == (point, n):
        os.kill(os.getpid(), signal.SIGKILL)
