"""`dayflow view`: the brief, its history and its corrections in a browser, on 127.0.0.1.

The face: `Site` (what the pages show and the corrections they make, through the same core
functions as the CLI: `dayflow.why`, `dayflow.rules`, the store's tasks; no web framework in
it), `Guard` (the token, the CSRF token and the addresses a request may come from) and `serve`
(the ASGI app on uvicorn, imported only when the view is started: `dayflow[view]`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dayflow.view.guard import Guard
from dayflow.view.site import Site

if TYPE_CHECKING:
    import socket

__all__ = ["Guard", "Site", "serve"]


def serve(site: Site, guard: Guard, sock: socket.socket, ready: Any = None) -> None:
    """Serve `site` on the listening `sock` until Ctrl-C (see `dayflow.view.server`)."""
    from dayflow.view.server import serve as run

    run(site, guard, sock, ready)
