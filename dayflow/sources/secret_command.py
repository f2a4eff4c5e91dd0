"""The secret commands: a source's password (`password_command` or `password_env`), fetched
when the source is opened, and the one runner of every `password_command` and `token_command`
(no shell, its own session, killed whole at its deadline; its output is never in a message)."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Mapping
from typing import TYPE_CHECKING

from dayflow.errors import SourceError

if TYPE_CHECKING:
    from dayflow.sources.spec import SourceSpec


def resolve_password(spec: SourceSpec, env: Mapping[str, str] | None = None) -> str:
    """The source's password, fetched now from its command or environment variable. Errors
    name the source and the mechanism, never any output of the command."""
    env = os.environ if env is None else env
    if spec.password_env:
        value = env.get(spec.password_env)
        if not value:
            raise SourceError(
                f"{spec.name}: the environment variable {spec.password_env} "
                "(password_env) is not set"
            )
        return value
    if not spec.password_command:
        raise SourceError(f"{spec.name}: no password_command or password_env configured")
    try:
        return secret_from_command(spec.password_command, spec.timeout)
    except SecretCommandFailed as err:
        raise SourceError(f"{spec.name}: {err}") from None


NO_SHELL = "it runs without a shell: ~, $VAR and pipes do not work; write sh -c '...' for them"
_PASSWORD_OUTPUT = 64 * 1024  # more than any password; a command printing more is cut off


class SecretCommandFailed(SourceError):
    """`password_command` or `token_command` did not give its secret; the message never holds
    the command's output."""


def secret_from_command(
    command: str, timeout: float, *, key: str = "password_command", what: str = "password"
) -> str:
    """The first line a `password_command` (or, with `key`, a `token_command`) prints, in a
    session of its own: the one runner of every secret command.

    It runs without a shell. The answer is read until the command *exits* (not until its
    output closes: a child it leaves behind, a gpg-agent say, may hold the pipe open for ever),
    within `timeout` seconds; then its whole process group is killed, so nothing it started
    stays running. Raises SecretCommandFailed (one line naming `key` and the exit status, no
    output of the command)."""
    import selectors
    import signal
    import time

    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise SecretCommandFailed(f"{key} cannot be parsed ({err})") from None
    if not argv:
        raise SecretCommandFailed(f"{key} is empty")
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, killed whole below
        )
    except FileNotFoundError:
        raise SecretCommandFailed(f"{key} {argv[0]!r} was not found ({NO_SHELL})") from None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise SecretCommandFailed(f"{key} could not run ({reason})") from None
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    out = bytearray()
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            open_pipe = True
            while True:
                exited = proc.poll() is not None
                if exited or not open_pipe:
                    if not exited:
                        try:
                            proc.wait(max(0.0, deadline - time.monotonic()))
                        except subprocess.TimeoutExpired:
                            break
                    if open_pipe:
                        _drain(fd, out)  # what it wrote before exiting
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                if sel.select(min(left, 0.05)):
                    open_pipe = _drain(fd, out)
        if proc.poll() is None:
            raise SecretCommandFailed(f"{key} did not finish in {timeout:g} s (stopped)")
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it left behind
        proc.stdout.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(1)
    if proc.returncode != 0:
        raise SecretCommandFailed(f"{key} exited with status {proc.returncode} ({NO_SHELL})")
    text = bytes(out[:_PASSWORD_OUTPUT]).decode("utf-8", "replace")
    line = text.split("\n", 1)[0].removesuffix("\r")
    if not line:
        raise SecretCommandFailed(f"{key} printed no {what} ({NO_SHELL}; exit status 0)")
    return line


def _drain(fd: int, out: bytearray) -> bool:
    """Read what the pipe holds now; False once it is closed."""
    while len(out) <= _PASSWORD_OUTPUT:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        out += chunk
    return True
