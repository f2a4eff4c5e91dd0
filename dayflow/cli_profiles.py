"""`dayflow profiles add|list|remove`: the people a fleet briefs, each with a config file,
a timezone, a schedule time and the weekdays it runs on (`dayflow worker` takes their briefs).
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13).

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import DbOpt, JsonOpt, get_deps, handle_errors, not_empty, print_json

if TYPE_CHECKING:
    from dayflow.app import Runtime
    from dayflow.store.values import Profile

commands = typer.Typer(
    name="profiles",
    help="The people a fleet briefs: one profile each, with its own runs and tasks "
    "(`--profile NAME` on any command).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="The profile's name.")]
# Hidden: a command of every profile has no --profile to offer (`refuse_profile`).
NoProfileOpt = Annotated[str | None, typer.Option("--profile", hidden=True)]
EVERYONE = "it works on every profile (name the one it is about as NAME)"


@commands.command()
def add(
    ctx: typer.Context,
    name: NameArg,
    config: Annotated[
        Path,
        typer.Option(
            "--config", metavar="FILE", help="Its config file (sources, me, delivery, model)."
        ),
    ],
    tz: Annotated[
        str | None,
        typer.Option(
            "--tz", metavar="ZONE", callback=not_empty, help="IANA timezone [env DAYFLOW_TZ; UTC]."
        ),
    ] = None,
    at: Annotated[
        str, typer.Option("--at", metavar="HH:MM", help="Local time its brief is due.")
    ] = "07:30",
    weekdays: Annotated[
        bool, typer.Option("--weekdays", help="Only Monday to Friday [default: every day].")
    ] = False,
    db: DbOpt = None,
    profile: NoProfileOpt = None,
) -> None:
    """Add a profile; `dayflow worker` writes its brief at its local time."""
    from dayflow.errors import UsageError
    from dayflow.fleet.profiles import (
        EVERY_DAY,
        WEEKDAYS,
        check_at,
        check_name,
        check_tz,
        refuse_profile,
    )
    from dayflow.store.values import Profile

    deps = get_deps(ctx)
    with handle_errors(deps):
        refuse_profile(profile or deps.profile, "profiles add", EVERYONE)
        check_name(name)
        check_at(at)
        settings = deps.settings(db=db)
        zone = check_tz(tz or settings.tz)
        path = Path(os.path.abspath(config.expanduser()))
        if not path.is_file():
            from dayflow.files import kind_of

            try:
                what = f"is {kind_of(path.stat().st_mode)}, not a config file"
            except OSError:
                what = "no such file"
            raise UsageError(f"--config {config}: {what} (`dayflow init` writes a config file)")
        added = Profile(name, str(path), zone, at, WEEKDAYS if weekdays else EVERY_DAY)
        checked = check_profile_config(deps, added)
        with deps.store(settings, create=True) as store:
            others = store.profiles.list()
            refuse_rules_clash(deps, added, others)
            store.profiles.add(added)
        days = "Monday to Friday" if weekdays else "every day"
        deps.notice(f"profile {name}: its brief at {at} {zone}, {days} ({path})")
        deps.notice(checked)
        shared = rules_shared(deps, added, others)
        if shared is not None:
            deps.notice(shared)


def refuse_rules_clash(deps: "Runtime", profile: "Profile", others: "list[Profile]") -> None:
    """UsageError when `profile`'s config file is another profile's rules file, or its rules
    file is another profile's config file: a correction would write rules over that config."""
    from dayflow import rules
    from dayflow.errors import UsageError
    from dayflow.store import DEFAULT_PROFILE

    config = Path(profile.config)
    mine = rules.rules_path(config, profile.name)
    whose = [(DEFAULT_PROFILE, deps.config.config_path()[0])]
    whose += [(p.name, Path(p.config)) for p in others if p.name != profile.name]
    for other, theirs in whose:
        if _same(config, rules.rules_path(theirs, other)):
            clash = f"--config {config} is profile {other}'s rules file"
        elif _same(mine, theirs):
            clash = f"profile {profile.name}'s rules file would be {mine}, profile {other}'s config"
        else:
            continue
        raise UsageError(
            f"{clash}: a correction would write rules over a config file; give "
            f"{profile.name} a config file of another name (nothing changed)"
        )


def _same(a: Path, b: Path) -> bool:
    return os.path.abspath(os.path.realpath(a)) == os.path.abspath(os.path.realpath(b))


def rules_shared(deps: "Runtime", profile: "Profile", others: "list[Profile]") -> str | None:
    """The line saying `profile`'s rules file is another profile's too (they share one config
    file: a rules file is one profile's, so the second one's corrections would be refused);
    None when it is its own."""
    from dayflow import rules
    from dayflow.store import DEFAULT_PROFILE

    mine = rules.rules_path(Path(profile.config), profile.name)
    whose = [(DEFAULT_PROFILE, deps.config.config_path()[0])]
    whose += [(p.name, Path(p.config)) for p in others if p.name != profile.name]
    for other, config in whose:
        if rules.rules_path(config, other) == mine:
            return (
                f"note: profile {other}'s rules are {mine} too (the same config file): a rules "
                f"file is one profile's, so {profile.name}'s corrections would be refused; give "
                f"{profile.name} a config file of its own for rules of its own"
            )
    return None


def check_profile_config(deps: "Runtime", profile: "Profile") -> str:
    """Validate `profile`'s config file as its worker will read it, contacting no server:
    who owns it and who can write it, its TOML, sources, paths (under its directory),
    delivery, `[model]` and `[mcp_servers.*]` tables. Raises the error a brief would (a
    ConfigFileError, exit 4); returns the line saying what was checked."""
    from dayflow import config
    from dayflow.fleet.profiles import profile_env
    from dayflow.mcp.servers import for_config

    configured = config.Config(profile_env(deps.config.env, profile), profile=True)
    path = Path(profile.config)
    configured.validate(path)  # every section's problems at once, as a brief gives them
    configured.model_settings()
    sources = configured.sources_file(path)
    configured.delivery(path)
    for_config(configured).specs(str(path))
    n = len(sources.all())
    return (
        f"config checked: its owner and mode, {n} source(s), paths, delivery, [model] and "
        "MCP entries; no server contacted (`dayflow sources check --profile "
        f"{profile.name}` tries them)"
    )


@commands.command("list")
def list_(
    ctx: typer.Context, db: DbOpt = None, as_json: JsonOpt = False, profile: NoProfileOpt = None
) -> None:
    """List the profiles."""
    from dayflow.fleet.profiles import refuse_profile

    deps = get_deps(ctx)
    with handle_errors(deps):
        refuse_profile(profile or deps.profile, "profiles list", "it lists every profile")
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            found = store.profiles.list()
        if as_json:
            keys = ("name", "config", "tz", "at", "weekdays")
            print_json(deps, [{k: getattr(p, k) for k in keys} for p in found])
            return
        if not found:
            deps.notice("no profiles yet: `dayflow profiles add NAME --config FILE`")
            return
        from dayflow.listing import profiles_table

        deps.out.file.write(profiles_table(found))
        deps.out.file.flush()


@commands.command()
def remove(
    ctx: typer.Context,
    name: NameArg,
    purge: Annotated[
        bool, typer.Option("--purge", help="Also delete its runs and tasks [default: keep].")
    ] = False,
    db: DbOpt = None,
    profile: NoProfileOpt = None,
) -> None:
    """Remove a profile; its history stays unless --purge."""
    from dayflow.fleet.profiles import refuse_profile

    deps = get_deps(ctx)
    with handle_errors(deps):
        refuse_profile(profile or deps.profile, "profiles remove", EVERYONE)
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            gone = store.profiles.remove(name, purge=purge)
        kept = f"{gone} run(s) deleted" if purge else "its runs and tasks kept"
        deps.notice(f"profile {name} removed ({kept})")
