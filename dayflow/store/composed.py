"""`Store`: the store's parts over one `Database` of any backend, each part its own face.

Callers use the parts directly (`store.runs.get(run_id)`, `store.steps.begin(...)`,
`store.tasks.create(...)`): each part owns one concept, is handed what it needs, and writes each
signature once. The parts:

- `events`: the event log of each run;
- `leases`: claims, releases and the one lease check every driver's write makes;
- `runs`: creating, reading and listing runs, and their limits;
- `steps`: the steps with their tool effects and compactions;
- `tasks`: the tasks, each once per idempotency key;
- `profiles`: the people a fleet briefs (every profile, whoever asks), imported on first use;
- `archive`: what acts on a run's history rather than driving it (fork, gc, doctor), imported
  on first use, off the start-up path of `runs`;
- `upkeep`: what only the engine behind the store knows how to do (`sql.Upkeep`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dayflow.clock import Clock
from dayflow.store.context import StoreContext
from dayflow.store.events import EventLog
from dayflow.store.leases import Leases
from dayflow.store.runs import Runs
from dayflow.store.sql import Database, Upkeep
from dayflow.store.steps import Steps
from dayflow.store.tasks import Tasks
from dayflow.store.values import DEFAULT_PROFILE, Owner

if TYPE_CHECKING:
    from dayflow.store.archive import Archive
    from dayflow.store.profiles import Profiles


class Store:
    """One store, as `open_store` returns it. A context manager that closes the connection."""

    def __init__(
        self,
        db: Database,
        upkeep: Upkeep,
        *,
        clock: Clock,
        owner: Owner,
        profile: str = DEFAULT_PROFILE,
        registered: bool = False,
    ) -> None:
        self._ctx = ctx = StoreContext(db, clock, owner, profile, registered)
        self.upkeep = upkeep
        self.events = EventLog(ctx)
        self.leases = Leases(ctx, self.events)
        self.runs = Runs(ctx, self.leases, self.events)
        self.steps = Steps(ctx, self.leases, self.events)
        self.tasks = Tasks(ctx)
        self._archive: Archive | None = None
        self._profiles: Profiles | None = None

    @property
    def archive(self) -> Archive:
        if self._archive is None:
            from dayflow.store.archive import Archive

            self._archive = Archive(self._ctx, self.runs, self.leases, self.events)
        return self._archive

    @property
    def db(self) -> Database:
        return self._ctx.db

    @property
    def clock(self) -> Clock:
        """The store's clock: what a run's other stamps (a draft's Date) are read from."""
        return self._ctx.clock

    @property
    def profile(self) -> str:
        """The person whose runs and tasks this store shows and writes."""
        return self._ctx.profile

    @property
    def profiles(self) -> Profiles:
        """Everyone's profiles (the fleet's: not scoped to this store's own)."""
        if self._profiles is None:
            from dayflow.store.profiles import Profiles

            self._profiles = Profiles(self._ctx, self.leases)
        return self._profiles

    @property
    def owner(self) -> Owner:
        return self._ctx.owner

    def close(self) -> None:
        self._ctx.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
