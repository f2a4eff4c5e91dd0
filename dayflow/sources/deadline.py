"""A deadline for a whole exchange with a server, not for each wait on it.

A socket timeout bounds one wait for data: a server that trickles a byte every two seconds
never trips a three-second timeout, and keeps a brief waiting for as long as it likes. A
`Deadline` is a time by which the whole fetch (connecting, TLS, every request and answer,
redirects) must be over. The sockets of the exchange are `watch`ed; when the time is up a timer
shuts them down, which ends any read blocked on them at once, and `expired` tells the caller
that this, not the server, is why the read failed.

The timer shuts down a duplicate of each socket's descriptor taken when it is watched (the same
connection, so the shutdown reaches whatever object wraps it later: TLS, http.client,
imaplib), and the duplicates are closed when the deadline is left, so no descriptor it holds can
be reused by something else while it might still fire.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class Deadline:
    """`seconds` from now; use it as a context manager around the exchange."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self._end = time.monotonic() + self.seconds
        self._lock = threading.Lock()
        self._watched: list[socket.socket] = []
        self._timer: threading.Timer | None = None
        self.expired = False

    def remaining(self) -> float:
        """Seconds left (never below a millisecond, so it can be a socket timeout)."""
        return max(0.001, self._end - time.monotonic())

    def passed(self) -> bool:
        return self.expired or time.monotonic() >= self._end

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` down when the time is up (at once if it already is)."""
        try:
            # fromfd, not dup(): an SSLSocket cannot be dup()ed, and its descriptor is the
            # connection's all the same.
            dup = socket.fromfd(sock.fileno(), sock.family, sock.type)
        except (OSError, ValueError):
            return
        with self._lock:
            self._watched.append(dup)
            late = self.expired
        if late:
            self._shut(dup)

    def __enter__(self) -> Deadline:
        self._timer = threading.Timer(max(0.0, self._end - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()
        with self._lock:
            watched, self._watched = self._watched, []
        for dup in watched:
            dup.close()

    def _fire(self) -> None:
        with self._lock:
            self.expired = True
            watched = list(self._watched)
        for dup in watched:
            self._shut(dup)

    @staticmethod
    def _shut(dup: socket.socket) -> None:
        with contextlib.suppress(OSError):
            dup.shutdown(socket.SHUT_RDWR)
