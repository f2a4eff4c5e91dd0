"""What PostgreSQL's rows, values and statements look like to the store, without the driver:
text that cannot hold NUL (`encode_text`), rows that answer by name and position (`PgRow`), the
server's clock as read at connect (`ServerClock`), Dayflow's own URL options, and how a batch's
writes and their checks become one statement (`combine`). `postgres.py`, the one module that
imports psycopg, runs them; its docstring says why each is so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from dayflow.errors import DayflowError, LeaseLost, StoreError, UsageError
from dayflow.store.sql import Unless

NUL_MARK = "\ufdd0"


_OPTIONS = ("dayflow_pgbouncer", "dayflow_lease_ttl")


# The SQLSTATEs `dayflow_require` raises (migration 0007): a fenced write found its lease taken
# over (LeaseLost); another write that must change one row changed none (StoreError).
LEASE_LOST, NOT_ONE = "DF001", "DF002"


def encode_text(value: str) -> str:
    """A string PostgreSQL `text` can hold, from which `decode_text` gives `value` back."""
    if "\x00" in value or value.startswith(NUL_MARK):
        return NUL_MARK + json.dumps(value)
    return value


def decode_text(value: str) -> str:
    """The inverse of `encode_text`."""
    return json.loads(value[1:]) if value.startswith(NUL_MARK) else value


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))


class PgRow:
    """One result row: by column name or position, and iterable like a tuple."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: list[Any]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self._values[self._names[key]]
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PgRow | tuple | list):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._values))

    def __repr__(self) -> str:
        return f"PgRow{tuple(self._values)!r}"

    def keys(self) -> list[str]:
        return list(self._names)


def _value(v: Any) -> Any:
    if isinstance(v, str):
        return decode_text(v) if v.startswith(NUL_MARK) else v
    if isinstance(v, Decimal):  # SUM of a BIGINT is NUMERIC; SQLite's is an integer
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def row_factory(cursor: Any) -> Callable[[Sequence[Any]], Any]:
    desc = cursor.description
    if desc is None:
        return tuple
    names = {c.name: i for i, c in enumerate(desc)}
    return lambda values: PgRow(names, [_value(v) for v in values])


_INT8 = range(-(2**63), 2**63)


def param(value: Any) -> Any:
    if isinstance(value, str):
        return encode_text(value)
    if type(value) is int and value not in _INT8:
        # Beyond int8 (which every int is sent as): as numeric, so the server refuses it with
        # its own error ("bigint out of range") rather than psycopg with an OverflowError.
        return Decimal(value)
    return value


class ServerClock:
    """The server's clock as read at connect, advanced by the local monotonic clock."""

    def __init__(self, server_now: datetime) -> None:
        self._base = server_now
        self._mono = time.monotonic()

    def now(self) -> datetime:
        return self._base + timedelta(seconds=time.monotonic() - self._mono)


def split_options(url: str) -> tuple[str, bool, float | None]:
    base, _, raw_query = url.partition("?")
    query = parse_qsl(raw_query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in _OPTIONS}
    rest = [(k, v) for k, v in query if k not in _OPTIONS]
    # DAYFLOW_PG_PGBOUNCER reaches here in the URL (`config._with_pgbouncer`): the store
    # reads no environment of its own.
    flag = ours.get("dayflow_pgbouncer", "")
    pgbouncer = flag.strip().lower() in ("1", "true", "yes", "on")
    ttl: float | None = None
    if "dayflow_lease_ttl" in ours:
        try:
            ttl = float(ours["dayflow_lease_ttl"])
        except ValueError:
            ttl = -1.0
        if not 1 <= ttl <= 3600:
            raise UsageError("dayflow_lease_ttl must be a number of seconds from 1 to 3600")
    # Rebuilt by hand: urlunsplit would drop the "//" of "postgresql:///db" (a local socket).
    return base + ("?" + urlencode(rest) if rest else ""), pgbouncer, ttl


# A statement a batch keeps: its SQL (qmark), its arguments, and for `execute_one` what it must
# change (the error when it does not, and its `unless`).
Part = tuple[str, tuple[Any, ...], tuple[DayflowError, Unless | None] | None]


class _Queued:
    """What `execute` returns inside a batch: nothing to read (the batch has not been sent)."""

    def _refuse(self, *args: Any) -> Any:
        raise StoreError("a statement in a batch has no result to read")

    rowcount = property(_refuse)
    fetchone = fetchall = __iter__ = _refuse


QUEUED: Any = _Queued()


def combine(parts: list[Part], *, lazy: bool = False) -> tuple[str, tuple[Any, ...]]:
    """One statement for `parts` (writes that do not read each other's): a plain statement
    stays as it is; otherwise each becomes a data-modifying CTE (run to completion whether read
    or not) and each check a `dayflow_require` call in the final SELECT. CASE evaluates in
    order, so an `unless` error is raised only when its write changed no row. `lazy`: the
    SELECT also sets `synchronous_commit` off for the statement's own transaction (read at its
    COMMIT, which ends the statement)."""
    if len(parts) == 1 and parts[0][2] is None and not lazy:
        return parts[0][0], parts[0][1]
    ctes: list[str] = []
    checks: list[str] = []
    args: list[Any] = []
    check_args: list[Any] = []
    for i, (sql, part_args, check) in enumerate(parts):
        args += part_args
        if check is None:
            ctes.append(f"w{i} AS ({sql})")
            continue
        ctes.append(f"w{i} AS ({sql} RETURNING 1)")
        miss, unless = check
        count = f"(SELECT count(*) FROM w{i}) = 1"
        if unless is None:
            checks.append(f"dayflow_require({count}, ?, ?)")
            check_args += (_code(miss), str(miss))
            continue
        condition, condition_args, error = unless
        checks.append(
            f"CASE WHEN {count} THEN NULL WHEN NOT {condition} THEN dayflow_require(false, ?, ?) "
            "ELSE dayflow_require(false, ?, ?) END"
        )
        check_args += (*condition_args, _code(error), str(error), _code(miss), str(miss))
    if lazy:
        checks.append("set_config('synchronous_commit', 'off', true)")
    select = ", ".join(checks) or "1"
    return f"WITH {', '.join(ctes)} SELECT {select}", (*args, *check_args)


def _code(error: DayflowError) -> str:
    return LEASE_LOST if isinstance(error, LeaseLost) else NOT_ONE


def known_error(exc: DayflowError, parts: list[Part]) -> DayflowError:
    """The very error a part asked for (its class kept: `dayflow_require` sends only the SQLSTATE
    and the message), when `exc` is the server raising it; else `exc`."""
    for _, _, check in parts:
        if check is None:
            continue
        miss, unless = check
        for error in (miss, None if unless is None else unless[2]):
            if error is not None and type(exc) is _base(error) and str(exc) == str(error):
                return error
    return exc


def _base(error: DayflowError) -> type[DayflowError]:
    """The class `_wrap` makes of an error a part asked for."""
    return LeaseLost if isinstance(error, LeaseLost) else StoreError
