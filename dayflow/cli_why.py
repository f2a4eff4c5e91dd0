"""`dayflow why ID`: why a task is on the list, or why a message got none (`dayflow.why`).

Options, wiring and output only; it reads what the run saved and never contacts a server.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13).
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import DbOpt, JsonOpt, get_deps, handle_errors, not_empty, print_json
from dayflow.no_task import NoTask

if TYPE_CHECKING:
    from collections.abc import Callable

    from dayflow.app import Runtime
    from dayflow.config import Settings
    from dayflow.rules import Rule

commands = typer.Typer()

# The reasons are the core's own list (`dayflow.no_task`), so the help names each one it gives.
_HELP = f"""Say why a task is on the list, or why a message got no task.

For a task: the message it came from (sender, date, subject), the evidence (the ask in
the sender's words create_task found in the message), why it counted (the offline
rule's name, or the model's quote), and whether its due date was stated or implied.

For a message with no task, why not, the first of: {"; ".join(r.value for r in NoTask)}.

It reads only what the run saved in the database: resumed and forked runs answer the
same, and no mail server or model is contacted. Exit code 3 when nothing matches ID, 2 when
an id names more than one message of the run."""


@commands.command(help=_HELP)
def why(
    ctx: typer.Context,
    item: Annotated[
        str,
        typer.Argument(
            metavar="ID",
            help="A task id (t_..., or a unique prefix), a message id, or an item's key "
            "(mail:...; with #2 for a message's second request).",
            callback=not_empty,
        ),
    ],
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            metavar="RUN",
            callback=not_empty,
            help="Read this run (id or prefix) instead of the task's own run or the newest "
            "run that read the message.",
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Say why a task is on the list, or why a message got no task (`_HELP`)."""
    from dayflow.why import explain, render_text

    deps = get_deps(ctx)
    with handle_errors(deps):
        settings = deps.settings(db=db)
        snoozes = _snoozes(deps, settings)
        with deps.store(settings) as store:
            found = explain(store, item, run_id=run, snoozed=snoozes)
        if as_json:
            print_json(deps, found.to_json())
            return
        deps.out.file.write(render_text(found))
        deps.out.file.flush()


def _snoozes(deps: "Runtime", settings: "Settings") -> "Callable[[str], Rule | None]":
    """The user's snooze of a task's key today, from the rules a brief would read (a file
    that cannot be read is said by `dayflow rules`, not here: none of it is a snooze)."""
    from dayflow import rules
    from dayflow.cli_base import today
    from dayflow.store import DEFAULT_PROFILE

    profile = deps.profile or DEFAULT_PROFILE
    path = rules.rules_path(deps.config.config_path()[0], profile)
    day = today(deps, settings)
    found = rules.read_rules(path, profile, today=day, guarded=deps.config.profile).rules
    return lambda key: found.snoozed(key, day)
