"""The view's web app: Starlette routes over `Site`, served by uvicorn on one socket.

Why Starlette + uvicorn (the `dayflow[view]` extra) and not the standard library's
http.server: uvicorn parses HTTP with a maintained parser (h11/httptools) and handles
keep-alive, slow clients and a clean shutdown on Ctrl-C; Starlette gives form parsing and
routing with path parameters, both well kept and small. Only this module imports them (a ruff
fence), and only when `dayflow view` starts: runs, tasks and --help never pay for them.

Every request is checked before a route sees it (`_check`): its Host must be the view's own
(a DNS-rebinding page names another), and the `token` in its URL must be the process's random
one; a write (POST only; no GET changes anything) must also carry the CSRF token in its form
and an Origin that is the view's own (and, when the browser says it, Sec-Fetch-Site:
same-origin). Everything refused answers 403 and says nothing more.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from dayflow.errors import DayflowError, RunNotFound
from dayflow.view.guard import CSRF_FIELD, TOKEN_PARAM, Guard, Visit
from dayflow.view.site import Site

MAX_FORM_BYTES = 16 * 1024  # a button's form is a few hundred bytes
HEADERS = {
    # no script, no remote resource; forms post only here; never in a frame
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "same-origin",  # no-referrer would make a form's Origin null
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def _refused(why: str) -> Response:
    return PlainTextResponse(f"refused: {why}\n", status_code=403, headers=HEADERS)


def _failed(error: DayflowError) -> Response:
    from dayflow.printable import plain

    code = 404 if isinstance(error, RunNotFound) else 400
    return PlainTextResponse(plain(str(error)) + "\n", status_code=code, headers=HEADERS)


def _broken(request: Request, error: Exception) -> Response:
    """A fault that is not Dayflow's kind of error (a bug, a full disk): one line on the
    view's stderr and a plain 500 that names it, not uvicorn's traceback."""
    import sys

    from dayflow.printable import plain

    what = plain(f"{type(error).__name__}: {error}")[:300]
    print(f"dayflow view: {request.method} {request.url.path} failed: {what}", file=sys.stderr)
    # A page changes nothing; a correction may have been kept before the fault: say where to look.
    changed = (
        "nothing was changed"
        if request.method in ("GET", "HEAD")
        else "`dayflow rules` and `dayflow tasks` show whether the correction was kept"
    )
    return PlainTextResponse(
        f"Dayflow could not answer this ({what}); {changed}. "
        "The view's terminal has the same line.\n",
        status_code=500,
        headers=HEADERS,
    )


def _next(value: object) -> str:
    """Where a button comes back to: one of the view's own paths, never another site."""
    text = str(value or "/")
    if not text.startswith("/") or text.startswith("//") or "\\" in text:
        return "/"
    return text


def app(site: Site, guard: Guard) -> Callable[[Any, Any, Any], Any]:
    """The ASGI app of `site`, every request checked by `guard` before a route sees it."""

    def visit(request: Request) -> Visit:
        said = request.query_params.get("said")
        return Visit(guard, request.url.path, said[:500] if said else None)

    def page(show: Callable[[Request, Visit], str]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            try:
                text = await run_in_threadpool(show, request, visit(request))
            except DayflowError as e:
                return _failed(e)
            except Exception as e:  # the web edge: a bug is one line, not a traceback
                return _broken(request, e)
            return HTMLResponse(text, headers=HEADERS)

        return endpoint

    def write(do: Callable[[Request, dict[str, str]], str]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            length = request.headers.get("content-length", "")
            if not length.isdigit() or int(length) > MAX_FORM_BYTES:
                return PlainTextResponse(
                    "a form of at most 16 KB\n", status_code=413, headers=HEADERS
                )
            form = await request.form(max_files=0, max_fields=20, max_part_size=64 * 1024)
            fields = {k: str(v) for k, v in form.items()}
            if not guard.csrf_ok(fields.get(CSRF_FIELD)):
                return _refused("no CSRF token")
            try:
                said = await run_in_threadpool(do, request, fields)
            except DayflowError as e:
                return _failed(e)
            except Exception as e:  # the web edge: a bug is one line, not a traceback
                return _broken(request, e)
            back = guard.link(_next(fields.get("next")))
            return RedirectResponse(
                f"{back}&said={quote(said[:500], safe='')}", status_code=303, headers=HEADERS
            )

        return endpoint

    task = "/tasks/{task_id:str}"
    routes = [
        Route("/", page(lambda r, v: site.home(v)), methods=["GET"]),
        Route("/days", page(lambda r, v: site.days(v)), methods=["GET"]),
        Route("/days/{day:str}", page(lambda r, v: site.day(v, r.path_params["day"]))),
        Route("/runs/{run_id:str}", page(lambda r, v: site.run(v, r.path_params["run_id"]))),
        Route("/tasks", page(lambda r, v: site.tasks(v)), methods=["GET"]),
        Route("/why/{item:path}", page(lambda r, v: site.why(v, r.path_params["item"]))),
    ]
    if not site.read_only:  # a read-only view has no write route at all
        routes += [
            Route(
                f"{task}/done",
                write(lambda r, f: site.done(r.path_params["task_id"])),
                methods=["POST"],
            ),
            Route(
                f"{task}/reject",
                write(lambda r, f: site.reject(r.path_params["task_id"], f.get("why", ""))),
                methods=["POST"],
            ),
            Route(
                f"{task}/snooze",
                write(lambda r, f: site.snooze(r.path_params["task_id"], f.get("until", ""))),
                methods=["POST"],
            ),
            Route("/mute", write(lambda r, f: site.mute(f.get("pattern", ""))), methods=["POST"]),
        ]
    built = Starlette(routes=routes)

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        # A path no route knows is refused like any other without the token (no 404 that
        # tells a stranger which paths exist).
        if scope["type"] == "http":
            request = Request(scope)
            refused = _check(guard, request, write=request.method not in ("GET", "HEAD"))
            if refused is not None:
                await refused(scope, receive, send)
                return
        await built(scope, receive, send)

    return guarded


def _check(guard: Guard, request: Request, *, write: bool) -> Response | None:
    """403 unless the request may be answered (see the module's docstring)."""
    if not guard.host_ok(request.headers.get("host")):
        return _refused("not this view's address")
    if request.method not in ("GET", "HEAD", "POST"):
        return _refused("method")
    if not guard.token_ok(request.query_params.get(TOKEN_PARAM)):
        return _refused("no token")
    if not write:
        return None
    if request.method != "POST":
        return _refused("writes are POST only")
    headers = request.headers
    if not guard.origin_ok(
        headers.get("origin"), headers.get("sec-fetch-site"), headers.get("host")
    ):
        return _refused("another origin")
    return None


def serve(site: Site, guard: Guard, sock: socket.socket, ready: Any = None) -> None:
    """Serve until Ctrl-C (or SIGTERM): uvicorn stops accepting, finishes what is in flight
    and returns; the interrupt it passes on is caught here, so no traceback is printed."""
    import uvicorn

    config = uvicorn.Config(
        app(site, guard),
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    if ready is not None:
        ready()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
