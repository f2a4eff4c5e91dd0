"""Who "me" is (the user's own addresses), for the followups and the calendar readers: from
`me = [...]` in config.toml, else every IMAP and SMTP `user` that is an address. A `Me` is
callable with an address, so it is what the calendar readers take (`people.Me`).

Addresses compare case-insensitively and a `+tag` matches its base address
(`alex+lists@example.org` is `alex@example.org`). An entry of `me` that is not an address is
refused with one line naming the key and the entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dayflow.errors import ConfigFileError
from dayflow.sources.envelope import base_address

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_ADDRESS = re.compile(r"[^@\s<>(),;:\"\[\]\\]+@" + _LABEL + r"(?:\." + _LABEL + r")+")
CONFIG_ORIGIN = "me in the config file"


@dataclass(frozen=True)
class Me:
    """The user's addresses (normalised: lower-cased, no `+tag`) and where each came from."""

    origins: tuple[tuple[str, str], ...] = ()  # (address as written, where it came from)

    @property
    def addresses(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(base_address(a) for a, _ in self.origins))

    def matches(self, address: str) -> bool:
        """Whether `address` is one of the user's (case and `+tag` ignored)."""
        return bool(address) and base_address(address) in self.addresses

    def __call__(self, address: str) -> bool:
        return self.matches(address)

    def to_json(self) -> list[dict[str, str]]:
        return [{"address": a, "from": where} for a, where in self.origins]


def is_address(text: str) -> bool:
    """Whether `text` is one plain address (`local@domain.tld`, no name, no brackets)."""
    return bool(_ADDRESS.fullmatch(text)) and len(text) <= 254


def parse_me(value: object, where: str = "config.toml") -> Me:
    """The top-level `me` value: a list of addresses (or one address as a string). Raises
    ConfigFileError naming the key and the first entry that is not an address."""
    items = [value] if isinstance(value, str) else value
    if items == []:
        raise ConfigFileError(
            f"{where}: me is empty: list your email addresses, e.g. "
            '["alex@example.org"], or leave `me` out to use your IMAP and SMTP users'
        )
    if not isinstance(items, list):
        raise ConfigFileError(
            f'{where}: me must be a list of your email addresses, e.g. ["alex@example.org"]'
        )
    origins = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, str) or not is_address(item.strip()):
            shown = repr(item)[:80]
            raise ConfigFileError(
                f"{where}: me entry {n} ({shown}) is not an email address (like alex@example.org)"
            )
        origins.append((item.strip(), CONFIG_ORIGIN))
    return Me(_once(origins))


def default_me(users: Iterable[tuple[str, str]]) -> Me:
    """Without `me`: every (user, where) given (IMAP and SMTP users) that is an address."""
    origins = [
        (u.strip(), where) for u, where in users if isinstance(u, str) and is_address(u.strip())
    ]
    return Me(_once(origins))


def _once(origins: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Each address once (case and `+tag` aside), as first written."""
    seen: set[str] = set()
    kept = []
    for address, where in origins:
        if base_address(address) not in seen:
            seen.add(base_address(address))
            kept.append((address, where))
    return tuple(kept)
