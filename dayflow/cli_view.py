"""`dayflow view`: the brief, its history and its corrections in a browser (`dayflow.view`).

Options, wiring and output only: the pages and the corrections are in `dayflow.view.site`,
the web app in `dayflow.view.server` (the `dayflow[view]` extra, imported only here, when the
view starts).
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13).
from typing import Annotated

import typer

from dayflow.cli_base import ConfigOpt, DbOpt, get_deps, handle_errors, not_empty

commands = typer.Typer()

MISSING = (
    "dayflow view needs Starlette and uvicorn: pip install 'dayflow[view]' "
    "(from a clone of the repository: pip install -e '.[view]')"
)


@commands.command()
def view(
    ctx: typer.Context,
    port: Annotated[
        int,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            show_default=False,
            help="Listen on this port [default: a free one].",
        ),
    ] = 0,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            metavar="ADDRESS",
            callback=not_empty,
            help="Listen on this address instead of 127.0.0.1 (anyone who can reach it and "
            "has the URL can read your briefs: a warning is printed).",
        ),
    ] = "127.0.0.1",
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the view in the default web browser.")
    ] = False,
    read_only: Annotated[
        bool,
        typer.Option("--read-only", help="Show only: no buttons, and no route that writes."),
    ] = False,
    config: ConfigOpt = None,
    db: DbOpt = None,
) -> None:
    """Show the briefs, their evidence, runs and tasks in a browser, with buttons to correct.

    A local web app on 127.0.0.1 (a free port, or --port). Its address carries a random
    token, printed on stderr; a request without it is refused, and so is a write from any
    other page (POST only, with a CSRF token and an Origin check). The buttons (done, not a
    task, snooze, mute) are the commands `tasks done`, `tasks reject`, `snooze` and `mute`.
    It reads what the runs saved: no mail server or model is contacted. Ctrl-C stops it."""
    import socket

    from dayflow.errors import UsageError
    from dayflow.timeline import MissingExtra
    from dayflow.view import Guard, Site, serve
    from dayflow.view.guard import LOOPBACK

    deps = get_deps(ctx)
    with handle_errors(deps):
        from importlib.util import find_spec

        if find_spec("starlette") is None or find_spec("uvicorn") is None:
            raise MissingExtra(MISSING)
        from dayflow.cli_rules import where

        settings = deps.settings(db=db)
        with deps.store(settings):  # an unreadable database is refused now, in one line
            pass
        deps.config.document(config)  # and so is an unreadable config file
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(64)
        except (OSError, OverflowError) as e:
            sock.close()
            why = getattr(e, "strerror", None) or e
            raise UsageError(f"cannot listen on {host}:{port}: {why}") from None
        guard = Guard(host, sock.getsockname()[1])
        site = Site(
            open_store=lambda: deps.store(settings),
            where=lambda command: where(deps, config, command, db),
            read_only=read_only,
            profile=deps.profile,
        )
        if host not in LOOPBACK:
            deps.err.print(
                f"warning: listening on {host}, not only this machine: anyone who can reach "
                "it and has the address below can read your briefs"
                + ("" if read_only else " and correct your tasks"),
                markup=False,
                soft_wrap=True,
            )
        mode = " (read-only)" if read_only else ""
        deps.err.print(
            f"dayflow view{mode}: {guard.url}\nCtrl-C stops it.", markup=False, soft_wrap=True
        )

        def ready() -> None:
            if open_browser:
                import webbrowser

                webbrowser.open(guard.url)

        serve(site, guard, sock, ready)
        deps.err.print("dayflow view: stopped", markup=False)
