"""What every part of the store shares: the connection, the clock and this process."""

from __future__ import annotations

from dataclasses import dataclass

from dayflow.clock import Clock, iso
from dayflow.store.sql import Database
from dayflow.store.values import LEASE_TTL, Owner


@dataclass(frozen=True)
class StoreContext:
    db: Database
    clock: Clock
    owner: Owner

    def now(self) -> str:
        return iso(self.clock.now())

    def lease_expiry(self) -> str:
        return iso(self.clock.now() + LEASE_TTL)
