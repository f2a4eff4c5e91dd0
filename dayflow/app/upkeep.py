"""The history's upkeep, as use cases with typed requests: a run's event log (`trace`),
pruning (`gc`), the database's check-up (`doctor`) and the model's (`probe_model`, `doctor
--model`). Each resolves its settings from the runtime, opens the store or the model, and
returns what the CLI renders; none prints, except the runtime's notices."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from dayflow.app.runtime import Runtime

if TYPE_CHECKING:
    from dayflow.config import Settings
    from dayflow.history import DoctorReport, GcReport
    from dayflow.models import Event, Run
    from dayflow.probe import Report as ProbeReport


@dataclass(frozen=True)
class TraceRequest:
    run_id: str
    db: str | None = None


@dataclass(frozen=True)
class Trace:
    run: Run
    events: list[Event]


def trace(rt: Runtime, request: TraceRequest) -> Trace:
    """The run `request.run_id` names (a prefix will do) and its event log, oldest first."""
    settings = rt.settings(db=request.db)
    with rt.store(settings) as store:
        run = store.runs.find(request.run_id)
        return Trace(run, store.events.of(run.id))


@dataclass(frozen=True)
class GcRequest:
    before: date | None = None
    keep: int | None = None
    redact: bool = False
    dry_run: bool = False
    include_interrupted: bool = False
    db: str | None = None


@dataclass(frozen=True)
class Gc:
    report: GcReport
    settings: Settings  # its prices and timezone are the listing's


def gc(rt: Runtime, request: GcRequest) -> Gc:
    """Prune (or redact) the old finished runs the request picks, or say which would go."""
    from dayflow import history  # imported here: it pulls in the agent

    settings = rt.settings(db=request.db)
    with rt.store(settings) as store:
        report = history.collect_garbage(
            store,
            before=request.before,
            keep=request.keep,
            redact=request.redact,
            dry_run=request.dry_run,
            unfinished=request.include_interrupted,
        )
    return Gc(report, settings)


@dataclass(frozen=True)
class DoctorRequest:
    fix: bool = False
    recompute_totals: str | None = None  # a run whose totals are set to its steps' sum first
    db: str | None = None


def doctor(rt: Runtime, request: DoctorRequest) -> DoctorReport:
    """The database's findings (repaired where safe with `fix`), the recomputed totals first."""
    from dayflow import history  # imported here: it pulls in the agent

    settings = rt.settings(db=request.db)
    with rt.store(settings) as store:
        first = (
            [history.recompute_totals(store, request.recompute_totals)]
            if request.recompute_totals
            else []
        )
        report = history.diagnose(store, fix=request.fix)
    return dataclasses.replace(report, findings=first + report.findings)


@dataclass(frozen=True)
class ProbeRequest:
    model: str | None = None  # None: the configured one
    provider: str | None = None
    allow_remote: bool = False
    timeout: float | None = None
    db: str | None = None


@dataclass(frozen=True)
class Probe:
    model: str
    provider: str
    report: ProbeReport


def probe_model(rt: Runtime, request: ProbeRequest) -> Probe | None:
    """One short round trip with a tiny tool to the model the request resolves to; None (and
    a notice) for the built-in offline model, which always calls its tools."""
    from dayflow.probe import probe
    from dayflow.providers import OFFLINE_MODEL
    from dayflow.providers.anthropic import AnthropicClient

    settings = rt.model_settings(
        db=request.db,
        provider=request.provider,
        allow_remote=request.allow_remote,
        timeout=request.timeout,
        model=request.model or None,
    )
    name = settings.model
    if name == OFFLINE_MODEL and not settings.local:
        rt.notice(
            "the configured model is the built-in offline model: it always calls its tools, "
            "nothing to probe (--provider local --model NAME, or DAYFLOW_MODEL, names another)"
        )
        return None
    from dayflow.app.cases import closing
    from dayflow.briefing.flow import local_check, local_notice

    local_check(settings, name)
    local_notice(rt.notice, settings, name)
    client = rt.model_factory(name, settings)
    with closing(client):
        listing = client.list_models if isinstance(client, AnthropicClient) else None
        report = probe(client, name, list_models=listing, local=settings.local)
    return Probe(name, settings.provider, report)
