"""What every part of the store shares: the connection, the clock and this process."""

from __future__ import annotations

from dayflow.clock import Clock, iso
from dayflow.frozen import Frozen
from dayflow.store.sql import Database
from dayflow.store.values import DEFAULT_PROFILE, Owner


class StoreContext(Frozen):  # not a dataclass: `dayflow runs` imports it (dayflow.frozen)
    db: Database
    clock: Clock
    owner: Owner
    # The person whose runs and tasks this store shows and writes (`open_store(profile=)`).
    profile: str = DEFAULT_PROFILE
    # Whether `profile` is one of the `profiles` table (a fleet's, or --profile's): then a run
    # is only started while its row is there (a purge and a worker's new run never cross).
    registered: bool = False

    def now(self) -> str:
        return iso(self.clock.now())

    def lease_now(self) -> str:
        """Now on the clock leases run on: the server's for a server, else the store's."""
        return iso((self.db.server_clock or self.clock).now())

    def lease_expiry(self) -> str:
        return iso((self.db.server_clock or self.clock).now() + self.db.dialect.lease_ttl)
