"""`dayflow init`, `dayflow sources` and `dayflow sources check` (how `brief` picks its sources
is `dayflow.briefing`'s).

Nothing here calls a model. `sources check` opens each source (a network source is contacted,
read-only) and prints what it found, or the error, one line per source.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dayflow.cli_base import ConfigOpt, JsonOpt, Runtime, get_deps, handle_errors
from dayflow.errors import ConfigFileError, UsageError

if TYPE_CHECKING:  # the sources package is imported by the commands that use it, not by --help
    from dayflow.sources.config import SourcesConfig
    from dayflow.sources.spec import SourceSpec

commands = typer.Typer()
sources_app = typer.Typer(
    help="The configured mail and calendar sources: list them, or `check` them.",
    invoke_without_command=True,
)


def _env(deps: Runtime) -> dict[str, str]:
    return dict(deps.config.file_env)


@commands.command()
def init(ctx: typer.Context, config_file: ConfigOpt = None) -> None:
    """Write a commented starter config file (never overwrites one)."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        from dayflow.sources.starter import STARTER

        path, _ = deps.config.config_path(config_file)
        if path.exists() or path.is_symlink():
            raise UsageError(f"{path} already exists; Dayflow never overwrites a config file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # O_EXCL: a file created meanwhile by anyone else is never overwritten either.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise UsageError(
                f"{path} already exists; Dayflow never overwrites a config file"
            ) from None
        except OSError as err:
            raise ConfigFileError(f"cannot create {path} ({err.strerror or err})") from None
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(STARTER)
        deps.err.print(
            f"wrote {path}: uncomment a source, then `dayflow sources check`", markup=False
        )
        deps.out.print(str(path), markup=False)


@sources_app.callback()
def sources(ctx: typer.Context, config_file: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """List the configured sources (no source is opened)."""
    if ctx.invoked_subcommand is not None:
        ctx.meta["config_file"] = config_file
        return
    deps = get_deps(ctx)
    with handle_errors(deps):
        loaded = _load(deps, config_file)
        specs = loaded.all() if loaded else ()
        if as_json:
            import json  # here: `--help` needs none

            deps.out.print_json(
                json.dumps(
                    {
                        "config": str(loaded.path) if loaded else None,
                        "sources": [s.to_json() for s in specs],
                        "me": loaded.me.to_json() if loaded else [],
                    }
                )
            )
            return
        if not specs:
            if loaded is not None:
                deps.err.print(
                    f"{loaded.path} declares no [[inbox]] or [[calendar]] yet", markup=False
                )
            return
        for spec in specs:
            sent = _sent_where(spec)
            line = f"{spec.table:<8} {spec.name:<16} {spec.kind:<8} {spec.where}{sent}"
            deps.out.print(line, markup=False, soft_wrap=True)
        assert loaded is not None
        for address, origin in loaded.me.origins:
            deps.out.print(f"{'me':<8} {address} ({origin})", markup=False)
        if not loaded.me.origins and loaded.inboxes:
            deps.err.print(
                "me: none of your addresses is known (set me = [...] in the config file), so "
                "no reply can be told owed or awaited",
                markup=False,
                soft_wrap=True,
            )


@sources_app.command()
def check(
    ctx: typer.Context,
    config_file: ConfigOpt = None,
    as_json: JsonOpt = False,
    brief_date: Annotated[
        str | None,
        typer.Option(
            "--date",
            metavar="YYYY-MM-DD",
            help="Check as a brief for this day would read (the calendar from that day, the "
            "mail window before it) [today].",
        ),
    ] = None,
) -> None:
    """Open each source and say what it holds, or why it cannot be read (no model call), and
    check the delivery settings (`deliver`, [smtp]). Exits 4 when any source cannot be read,
    the delivery settings are invalid, or the config file declares no source at all."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        from dayflow.briefing import day as briefday
        from dayflow.cli_base import parse_date, zone
        from dayflow.sources.factory import (
            SourceContext,
            check_drafts,
            check_sent,
            check_source,
        )

        env = _env(deps)
        tz = zone(deps.settings())  # the brief's own rule: --profile's, DAYFLOW_TZ, $TZ, UTC
        now = deps.clock.now()
        day = parse_date(brief_date) if brief_date is not None else now.astimezone(tz).date()
        flag = config_file or ctx.meta.get("config_file")
        loaded = _load(deps, flag)
        specs = loaded.all() if loaded else ()
        delivery = _check_delivery(deps, flag)
        at = briefday.brief_moment(day, tz, now)
        context = SourceContext(day, tz, env, at)
        results = []
        for spec in specs:  # each inbox followed by its sent folder (one token per account)
            results.append(check_source(spec, context))
            inbox = results[-1]
            results += [r for r in [check_sent(spec, context, inbox)] if r is not None]
            results += [r for r in [check_drafts(spec, context, inbox)] if r is not None]
        # The database is not opened here: after a finished brief, a brief's window starts at
        # that brief instead (briefday.mail_since).
        since = (at - briefday.MAIL_WINDOW).astimezone(tz)
        if as_json:
            import json  # here: `--help` needs none

            doc = {
                "config": str(loaded.path) if loaded else None,
                "date": day.isoformat(),
                "mail_since": since.isoformat(),
                "sources": results,
                "delivery": delivery,
            }
            deps.out.print_json(json.dumps(doc))
        else:
            for r in results:
                if r.get("skipped"):  # its account's failure is the line above: one per account
                    continue
                deps.out.print(_check_line(r), markup=False, soft_wrap=True)
            if delivery["sinks"] or not delivery["ok"]:
                head = f"{'delivery':<16} {'':<8}"
                lines = [", ".join(delivery["sinks"])] if delivery["ok"] else []
                lines += [f"error: {p}" for p in str(delivery.get("error", "")).splitlines()]
                for line in lines:  # several problems: a line each
                    deps.out.print(f"{head} {line}", markup=False, soft_wrap=True)
            if any(s.table == "inbox" for s in specs):
                deps.err.print(
                    f"a brief for {day} reads mail since {since.isoformat(timespec='minutes')} "
                    "(24 hours), or since the last finished brief of an earlier day",
                    markup=False,
                    soft_wrap=True,
                )
        if loaded is not None and not specs:
            deps.err.print(f"error: {no_sources(deps, flag)}", markup=False, soft_wrap=True)
        if any(not r["ok"] for r in results) or not delivery["ok"]:
            raise typer.Exit(4)
        if loaded is not None and not specs:
            raise typer.Exit(4)


def no_sources(deps: Runtime, flag: str | None) -> str:
    """Why an existing config file reads no source (then a brief reads the bundled sample)."""
    path, data = deps.config.document(flag)
    if not data:
        return f"{path} has no settings (empty, or every entry commented out): nothing to check"
    return f"{path} declares no [[inbox]] or [[calendar]]: nothing to check"


def _check_delivery(deps: Runtime, flag: str | None) -> dict[str, Any]:
    """The config's delivery settings as a brief will use them: its sinks, or the error that
    would fail every brief (a bad `deliver`, an invalid [smtp], smtp with no [smtp], an [smtp]
    server that does not take its login: it is logged in to, and left, sending nothing)."""
    from dayflow import delivery
    from dayflow.delivery.smtp import check_login
    from dayflow.errors import DayflowError

    try:
        sinks, how = deps.config.delivery(flag, deps.clock)
        delivery.check(sinks, how)
        login = check_login(how.smtp, _env(deps)) if how.smtp and "smtp" in sinks else ""
    except DayflowError as exc:
        return {"ok": False, "sinks": [], "error": str(exc).removeprefix("--deliver ")}
    named = [f"smtp ({how.smtp.where}, {login})" if s == "smtp" and how.smtp else s for s in sinks]
    return {"ok": True, "sinks": named}


def _check_line(r: dict[str, Any]) -> str:
    head = f"{r['name']:<16} {r['kind']:<8}"
    if "auth" in r:  # the login mechanism and what the server made of it
        accepted = r.get("accepted")
        state = "not tried" if accepted is None else "accepted" if accepted else "refused"
        if accepted is None and r.get("token_sent"):
            state = "sent, no answer" + (f" in {r['timeout']:g} s" if "timeout" in r else "")
        if accepted is None and r.get("moved"):  # a redirect to another origin answered
            state = f"not sent: {r['moved']}, another origin, answered without it"
        head += f" {r['auth']} {state}" + ("," if r["ok"] else ";")
    if not r["ok"]:
        return f"{head} error: {r['error']}"
    if "warning" in r:
        return f"{head} warning: {r['warning']}"
    if r["table"] == "drafts":
        return f"{head} {r['folder']}: APPEND allowed (owed replies are drafted here, never sent)"
    if r["table"] in ("inbox", "sent"):
        line = f"{head} {r['messages']} message(s)"
        if "newest" in r:
            n = r["newest"]
            line += f", newest {n['received_at'][:16]} from {n['from']}: {n['subject']}"
        return line
    line = f"{head} {r['events']} event(s)"
    if "next" in r:
        start = str(r["next"]["start"])
        all_day = r["next"].get("all_day")
        when = f"{start[:10]} (all day)" if all_day else start[:16].replace("T", " ")
        line += f", next {when} {r['next']['title']}"
    for cut in r.get("cut_short", ()):
        line += f"; cut short: {cut['series']!r} ({cut['reason']})"
    return line


def _sent_where(spec: SourceSpec) -> str:
    """How the listing names an inbox's sent folder (IMAP: found on the server if not set)."""
    if spec.table != "inbox" or spec.kind == "json":
        return ""
    if spec.sent:
        return f" (sent: {spec.sent})"
    return " (sent: the folder flagged \\Sent)" if spec.kind == "imap" else ""


commands.add_typer(sources_app, name="sources")


def _load(deps: Runtime, flag: str | None) -> SourcesConfig | None:
    from dayflow.errors import ConfigFileError

    try:
        loaded = deps.config.sources(flag)
    except ConfigFileError:
        deps.config.validate(flag)  # every section's problems, as a brief says them
        raise
    if loaded is None:
        path, _ = deps.config.config_path(flag)
        deps.err.print(
            f"no config file at {path}: `dayflow init` writes a starter one "
            "(until then `brief` reads the bundled sample)",
            markup=False,
            soft_wrap=True,
        )
    return loaded
