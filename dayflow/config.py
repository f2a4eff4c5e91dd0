"""One frozen settings object, from flags, the environment and a `.env` file (in that order)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dayflow.errors import UsageError
from dayflow.models import DELIVERY_KILL_POINTS, KILL_POINTS
from dayflow.pricing import Prices, load_prices
from dayflow.providers import DEFAULT_CLAUDE_MODEL, OFFLINE_MODEL


@dataclass(frozen=True)
class Settings:
    db_path: Path
    api_key: str | None
    base_url: str | None
    model: str
    model_was_defaulted_offline: bool
    tz: str
    inbox: str | None
    calendar: str | None
    durability: str  # NORMAL | FULL
    kill_at: tuple[str, int] | None
    prices: Prices


def default_db_path(env: Mapping[str, str]) -> Path:
    """The database in the user's data directory (XDG on Linux, the usual places elsewhere)."""
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
    else:
        base = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "dayflow" / "dayflow.db"


def environment(cwd: Path | None = None) -> dict[str, str]:
    """The process environment over the values of `./.env` (the environment wins)."""
    from dotenv import dotenv_values

    merged: dict[str, str] = {}
    env_file = (cwd or Path.cwd()) / ".env"
    if env_file.is_file():
        merged.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
    merged.update(os.environ)
    return merged


def load(
    env: Mapping[str, str],
    *,
    db: Path | None = None,
    model: str | None = None,
    tz: str | None = None,
    inbox: Path | None = None,
    calendar: Path | None = None,
) -> Settings:
    """Resolve every setting; flags beat the environment, which beats the defaults."""
    api_key = env.get("ANTHROPIC_API_KEY") or None
    chosen = model or env.get("DAYFLOW_MODEL") or None
    defaulted = chosen is None and api_key is None
    if chosen is None:
        chosen = DEFAULT_CLAUDE_MODEL if api_key else OFFLINE_MODEL
    durability = (env.get("DAYFLOW_DURABILITY") or "normal").upper()
    if durability not in ("NORMAL", "FULL"):
        raise UsageError("DAYFLOW_DURABILITY must be 'normal' or 'full'")
    zone = tz or env.get("DAYFLOW_TZ") or _tz_from_env(env) or "UTC"
    try:
        ZoneInfo(zone)
    except (ValueError, ZoneInfoNotFoundError):
        raise UsageError(f"unknown timezone {zone!r} (use an IANA name such as UTC)") from None
    return Settings(
        db_path=Path(db or env.get("DAYFLOW_DB") or default_db_path(env)).expanduser(),
        api_key=api_key,
        base_url=env.get("ANTHROPIC_BASE_URL") or None,
        model=chosen,
        model_was_defaulted_offline=defaulted,
        tz=zone,
        inbox=_path_or_none(inbox or env.get("DAYFLOW_INBOX")),
        calendar=_path_or_none(calendar or env.get("DAYFLOW_CALENDAR")),
        durability=durability,
        kill_at=_kill_at(env.get("DAYFLOW_KILL_AT")),
        prices=load_prices(env.get("DAYFLOW_PRICES")),
    )


def _path_or_none(value: Path | str | None) -> str | None:
    return None if not value else str(Path(value).expanduser().resolve())


def _tz_from_env(env: Mapping[str, str]) -> str | None:
    tz = env.get("TZ", "").lstrip(":")
    return tz if "/" in tz or tz == "UTC" else None


def _kill_at(value: str | None) -> tuple[str, int] | None:
    """Parse the crash-test hook DAYFLOW_KILL_AT=POINT:STEP (SIGKILL at that point)."""
    if not value:
        return None
    point, _, step = value.partition(":")
    points = KILL_POINTS + DELIVERY_KILL_POINTS
    if point not in points or not step.isdigit():
        raise UsageError(
            f"DAYFLOW_KILL_AT must be POINT:STEP with POINT one of {', '.join(points)}"
        )
    return point, int(step)
