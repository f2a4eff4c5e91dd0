"""Running the CLI in-process for tests: a fixed clock, captured consoles, a chosen model."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from typer.testing import CliRunner

from dayflow.cli import app
from dayflow.cli_base import Runtime
from dayflow.clock import FixedClock

runner = CliRunner()
CLOCK_START = "2026-11-05T07:30:00+00:00"


@dataclass
class Result:
    code: int
    out: str
    err: str


def invoke(
    db: Path | str | None,
    model_factory: Callable[[str, Any], Any],
    *args: str,
    env: dict[str, str] | None = None,
    terminal_width: int | None = None,
    stdin: str | bytes | None = None,
    clock: str = CLOCK_START,
) -> Result:
    """Run `dayflow ARGS` against `db` (None: no DAYFLOW_DB, the environment decides); an
    exception other than an exit is re-raised. `terminal_width` makes stdout a terminal of
    that width (else it is a file, as in a pipe); `stdin` is what standard input holds."""
    out, err = io.StringIO(), io.StringIO()
    deps = Runtime(
        env=({} if db is None else {"DAYFLOW_DB": str(db)}) | (env or {}),
        clock=FixedClock(clock),
        model_factory=model_factory,
        out=Console(file=out, width=200, color_system=None, emoji=False)
        if terminal_width is None
        else Console(
            file=out, width=terminal_width, force_terminal=True, color_system=None, emoji=False
        ),
        err=Console(file=err, width=200, color_system=None, emoji=False),
    )
    result = runner.invoke(app, list(args), obj=deps, input=stdin)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    try:
        usage = result.stderr  # Click's own usage errors (exit 2)
    except ValueError:
        usage = ""
    return Result(result.exit_code, out.getvalue() + result.stdout, err.getvalue() + usage)


def offline_model(model: str, settings: Any) -> Any:
    """A model factory: the offline model, whatever model and settings a run asks for."""
    from dayflow.providers.offline import OfflineModel

    return OfflineModel()


def home_calendar(tmp_path: Path, ics: str | None = None) -> dict[str, str]:
    """The environment of a config whose one calendar, `home`, is the ICS file
    `tmp_path/cal.ics` (written from `ics`, its lines ending CRLF, when given), in Berlin."""
    if ics is not None:
        (tmp_path / "cal.ics").write_text(ics.replace("\n", "\r\n"))
    config = tmp_path / "config.toml"
    config.write_text(f'[[calendar]]\nname = "home"\nkind = "ics"\npath = "{tmp_path}/cal.ics"\n')
    return {"DAYFLOW_CONFIG": str(config), "DAYFLOW_TZ": "Europe/Berlin"}
