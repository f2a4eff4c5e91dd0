"""`dayflow migrate --to TARGET`: copy the whole history to another store (added by `cli.py`).

Options, wiring and output only; the copy is `dayflow.store.transfer.copy_history`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from dayflow.cli_base import DbOpt, JsonOpt, get_deps, handle_errors
from dayflow.errors import UsageError

commands = typer.Typer()


@commands.command()
def migrate(
    ctx: typer.Context,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="TARGET",
            help="Where to copy the history: a postgresql:// URL (or another SQLite file).",
        ),
    ],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy every run, step, saved effect, task, event and compaction to TARGET, verbatim.

    One transaction on TARGET: all or nothing. Running it again copies nothing new (rows already
    there are kept as they are). A run being driven right now is refused (exit 5). Afterwards
    point DAYFLOW_DB (or --db) at TARGET; `dayflow resume` continues any unfinished run there
    with the same request bytes."""
    from dayflow.store import open_store  # here: start-up time of every other command
    from dayflow.store.transfer import TABLES, copy_history

    deps = get_deps(ctx)
    with handle_errors(deps):
        if not to.strip():
            raise UsageError("--to needs a target: a postgresql:// URL or a file path")
        settings = deps.settings(db=db)
        with deps.store(settings) as source, open_store(to, clock=deps.clock) as dest:
            report = copy_history(source, dest)
            where = dest.upkeep.location
        if as_json:
            import json  # here: `--help` needs none

            doc = {"to": where, "copied": report.copied, "already_there": report.present}
            deps.out.print_json(json.dumps(doc))
            return
        for table in TABLES:
            deps.out.print(
                f"{table:<13} {report.copied[table]:>7} copied  "
                f"{report.present[table]:>7} already there",
                markup=False,
            )
        deps.err.print(
            f"copied {report.total_copied} row(s) to {where}"
            + ("" if report.total_copied else " (nothing new)"),
            markup=False,
            soft_wrap=True,
        )
