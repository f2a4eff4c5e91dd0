"""`dayflow mute`, `important`, `snooze`, `rules` and `replay`: the user's corrections as rules
(`dayflow tasks reject` and `tasks done` are in `cli_tasks.py`).

Options, wiring and output only; the rules, their file, the corrections and the replay are in
`dayflow.rules`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import ConfigOpt, DbOpt, JsonOpt, Runtime, get_deps, handle_errors, not_empty

if TYPE_CHECKING:
    from datetime import date

    from dayflow import rules as rules_
    from dayflow.config import Settings

commands = typer.Typer()


def where(deps: Runtime, config: str | None, command: str, db: str | None = None) -> rules_.Where:
    """Whose rules file a command writes (beside --profile's config file), today, and the
    command as `dayflow rules` will name it."""
    from dayflow import rules
    from dayflow.cli_base import today
    from dayflow.store import DEFAULT_PROFILE

    settings = deps.settings(db=db)
    # A named config or database that cannot be read is refused in one line, as every other
    # command refuses it, rather than a rules file written beside a FIFO.
    path, _ = deps.config.document(config)
    if db is not None:
        with deps.store(settings):
            pass
    profile = deps.profile or DEFAULT_PROFILE
    said = f"dayflow {command}" + (f" --profile {profile}" if deps.profile else "")
    return rules.Where(
        rules.rules_path(path, profile),
        profile,
        today(deps, settings),
        said,
        rules.kill_hook(settings.kill_at),
        guarded=deps.config.profile,
        say=deps.notice,
    )


def _made(deps: Runtime, rule: rules_.Rule, where: rules_.Where) -> None:
    from dayflow.listing import plain

    verb = "rule" if rule.id in where.written else "already a rule"
    deps.notice(f"{verb} {rule.id}: {plain(rule.says())} ({where.path})")


Pattern = Annotated[
    str, typer.Argument(metavar="PATTERN", callback=not_empty, help="What it applies to.")
]


@commands.command()
def mute(
    ctx: typer.Context,
    pattern: Annotated[
        str,
        typer.Argument(
            metavar="SENDER|DOMAIN|LIST-ID|thread:KEY",
            help="An address (or a From line: 'Doe, Jane <jane@x.example>'), a domain "
            "(example.org), a list (list:ID or <ID>, its List-Id) "
            "or a thread's key (thread:KEY, from a brief's --format json).",
        ),
    ],
    config: ConfigOpt = None,
    db: DbOpt = None,
) -> None:
    """Never a task, never a reply owed or awaited, from this sender, domain, list or thread.

    Patterns that would match everything (`*`, `@`, an empty one, a bare top-level domain,
    a public suffix such as co.uk) are refused."""
    from dayflow import rules

    deps = get_deps(ctx)
    with handle_errors(deps):
        at = where(deps, config, f"mute {pattern}", db)
        rule = rules.mute(at, pattern)
        _made(deps, rule, at)
        if pattern.strip().lower().startswith("thread:"):
            _unseen_thread(deps, deps.settings(db=db), rule.match, "a thread")


@commands.command()
def important(
    ctx: typer.Context,
    pattern: Annotated[
        str,
        typer.Argument(
            metavar="SENDER|DOMAIN",
            help="An address (or a From line: 'Doe, Jane <jane@x.example>') or a domain "
            "(example.org).",
        ),
    ],
    config: ConfigOpt = None,
    db: DbOpt = None,
) -> None:
    """Mail from this sender or domain comes first in its section, and One thing prefers it."""
    from dayflow import rules

    deps = get_deps(ctx)
    with handle_errors(deps):
        at = where(deps, config, f"important {pattern}", db)
        _made(deps, rules.important(at, pattern), at)


@commands.command()
def snooze(
    ctx: typer.Context,
    item: Annotated[
        str,
        typer.Argument(
            metavar="ID",
            callback=not_empty,
            help="A task id (or a unique prefix), or the thread:KEY of a reply owed or awaited.",
        ),
    ],
    until: Annotated[
        str,
        typer.Option(
            "--until",
            metavar="DATE|3d",
            callback=not_empty,
            help="The day it comes back: YYYY-MM-DD, tomorrow, or days (3d) or weeks (2w) "
            "from today.",
        ),
    ],
    config: ConfigOpt = None,
    db: DbOpt = None,
) -> None:
    """Leave a task, an owed reply or a wait out of the brief until a day; it is back that day."""
    from dayflow import rules

    deps = get_deps(ctx)
    with handle_errors(deps):
        at = where(deps, config, f"snooze {item} --until {until}", db)
        day = rules.parse_until(until, at.today)
        settings = deps.settings(db=db)
        if item.strip().lower().startswith("thread:"):
            rule = rules.snooze(None, at, item, day)
            _made(deps, rule, at)
            _unseen_thread(deps, settings, rule.match, "a reply owed or awaited")
            return
        with deps.store(settings) as store:
            rule = rules.snooze(store, at, item, day)
        _made(deps, rule, at)


def _unseen_thread(deps: Runtime, settings: Settings, match: str, what: str) -> None:
    """One line when no saved brief showed thread `match`. The rule is kept, since a right
    key from another database or an older brief is not refused; but a key no brief showed is
    most likely a typo, and the rule would match nothing."""
    from dayflow import rules

    missing = isinstance(settings.db_path, Path) and not settings.db_path.exists()
    if not missing:
        with deps.store(settings) as store:
            if rules.thread_shown(store, match):
                return
    brief = "dayflow brief --format json" + (f" --profile {deps.profile}" if deps.profile else "")
    deps.notice(
        f"note: no saved brief showed {match} ({what}); the rule is kept: check the key in "
        f"`{brief}`"
    )


@commands.command("rules")
def list_rules(
    ctx: typer.Context,
    config: ConfigOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the rules in force and where each came from (the command, the date, the item it
    was made on), and the file they were read from; each entry of rules.toml that is wrong is
    one line on stderr, and the others still apply. Exit 4 when the file as a whole applies no
    rule (not a rules file, or another profile's): one line says why."""
    from dayflow import rules
    from dayflow.cli_base import print_json, today
    from dayflow.listing import plain

    deps = get_deps(ctx)
    with handle_errors(deps):
        at = where(deps, config, "rules", db)
        reading = rules.read_rules(at.path, at.profile, today=at.today, guarded=at.guarded)
        for line in reading.problems:
            if reading.refused:  # the whole file: an error here (a brief only warns and goes on)
                line = "error: " + line.removeprefix("warning: ")
            deps.notice(plain(line))
        day = today(deps, deps.settings(db=db))
        if as_json:
            doc = [
                r.to_json() | {"says": r.says(), "in_force": _in_force(r, day)}
                for r in reading.rules.rules
            ]
            # Each line stderr has, as data too: a script reads what is wrong from one place.
            problems = [p.removeprefix("warning: ") for p in reading.problems]
            print_json(
                deps,
                {"path": str(reading.path), "profile": at.profile, "rules": doc}
                | {"problems": problems},
            )
        elif reading.refused:
            pass  # its line said it all
        elif not reading.rules:
            none = "no rules" if reading.exists else "no rules yet"
            deps.notice(f"{none} for profile {at.profile} ({at.path})")
        else:
            deps.out.file.write(plain(_listed(reading, at.profile, day)) + "\n")
            deps.out.file.flush()
        if reading.refused:
            raise typer.Exit(4)


def _listed(reading: rules_.Reading, profile: str, day: date) -> str:
    """The rules as `dayflow rules` lists them: a rule a line, then whence it came."""
    lines = [f"rules of profile {profile} ({reading.path}):"]
    for rule in reading.rules.rules:
        state = "" if _in_force(rule, day) else " [over]"
        lines.append(f"{rule.id:<5} {rule.kind:<9} {rule.says()}{state}")
        whence = [rule.made or "?", rule.by or "written by hand"]
        if rule.item:
            whence.append(f"on {rule.item}")
        if rule.why:
            whence.append(f"why: {rule.why}")
        lines.append("      " + "; ".join(whence))
    return "\n".join(lines)


def _in_force(rule: rules_.Rule, day: object) -> bool:
    """A snooze whose day has come is over; every other rule is in force."""
    from dayflow.rules import SNOOZE

    return rule.kind != SNOOZE or str(day) < rule.until


@commands.command()
def replay(
    ctx: typer.Context,
    since: Annotated[
        str,
        typer.Option(
            "--since",
            metavar="DATE|14d",
            callback=not_empty,
            help="From which morning: YYYY-MM-DD, or days (14d) or weeks (2w) before today.",
        ),
    ] = "14d",
    config: ConfigOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Read the saved mornings again with today's rules and print what would change: try a
    rule before living with it. No model call, nothing written."""
    from dayflow import rules
    from dayflow.cli_base import print_json
    from dayflow.listing import plain

    deps = get_deps(ctx)
    with handle_errors(deps):
        at = where(deps, config, "replay", db)
        first = _since(since, at.today)
        reading = rules.read_rules(at.path, at.profile, today=at.today, guarded=at.guarded)
        for line in reading.problems:
            deps.notice(plain(line))
        with deps.store(deps.settings(db=db)) as store:
            found = rules.replay(store, reading.rules, first)
        if as_json:
            print_json(
                deps,
                {
                    "rules": str(at.path),
                    "since": first.isoformat(),
                    "mornings": [
                        {"day": m.day, "run": m.run_id, "changes": [c.to_json() for c in m.changes]}
                        for m in found
                    ],
                },
            )
            return
        lines = []
        for morning in found:
            lines.append(f"{morning.day} (run {morning.run_id}):")
            lines += [f"  - {c.line()}" for c in morning.changes] or ["  nothing would change"]
        if lines:
            deps.out.file.write(plain("\n".join(lines)) + "\n")
            deps.out.file.flush()
        count = sum(len(m.changes) for m in found)
        deps.notice(
            f"replay: {len(found)} morning(s) since {first}, {count} change(s), with "
            f"{len(reading.rules.rules)} rule(s) of {at.path}; no model call, nothing written"
        )


def _since(text: str, today: date) -> date:
    """--since: a date, or days or weeks before today, within a year."""
    from datetime import date, timedelta

    from dayflow.errors import UsageError
    from dayflow.rules import MOST_SNOOZE_DAYS

    value = text.strip().lower()
    if value[:-1].isdigit() and value[-1:] in ("d", "w") and len(value) <= 6:
        days = int(value[:-1]) * (7 if value.endswith("w") else 1)
    else:
        try:
            days = (today - date.fromisoformat(value)).days
        except ValueError:
            raise UsageError(
                f"--since {text[:40]!r} is not a date (YYYY-MM-DD) nor 14d / 2w"
            ) from None
    if days < 0:
        raise UsageError(f"--since {text[:40]} is after today ({today})")
    if days > MOST_SNOOZE_DAYS:
        raise UsageError(f"--since {text[:40]}: from today back a year at most")
    return today - timedelta(days=days)
