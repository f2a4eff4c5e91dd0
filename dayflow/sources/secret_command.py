"""The secret commands: the one runner of every `password_command` and `token_command` (no
shell, its own session, killed whole at its deadline; its output is never in a message). It
knows no source nor account: `passwords` asks it for a source's password, `oauth` for a token."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Mapping

from dayflow.errors import SourceError
from dayflow.trust import command_env

NO_SHELL = "it runs without a shell: ~, $VAR and pipes do not work; write sh -c '...' for them"
_PASSWORD_OUTPUT = 64 * 1024  # more than any password or token; what comes after is read, not kept
_STDERR_KEPT = 8 * 1024  # the first line of stderr is all that is shown
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "env"})
_OPERATORS = frozenset({"|", "||", "&&", "&", ";", ">", ">>", "<", "2>", "2>&1", "|&"})


class SecretCommandFailed(SourceError):
    """`password_command` or `token_command` did not give its secret; the message never holds
    the command's output (its stderr's first line, secrets hidden, at most)."""


def needs_shell(argv: list[str]) -> bool:
    """Whether a command, split as it is run (no shell), was written for a shell: a pipe or a
    redirection, `$VAR`, a backquote, a `~` at the start of a word, or the whole command quoted
    as one word. A command that starts a shell itself (`sh -c '...'`) needs none."""
    if not argv or argv[0].rsplit("/", 1)[-1] in _SHELLS:
        return False
    if any(c.isspace() for c in argv[0]):
        return True  # "pass show x" quoted whole: one program of that name
    for arg in argv:
        if arg in _OPERATORS or arg.startswith("~") or "$" in arg or "`" in arg:
            return True
        if "|" in arg or arg.startswith((">", "<", "2>")):
            return True
    return False


def secret_from_command(
    command: str,
    timeout: float,
    *,
    env: Mapping[str, str],
    key: str = "password_command",
    what: str = "password",
) -> str:
    """The first line a `password_command` (or, with `key`, a `token_command`) prints, in a
    session of its own: the one runner of every secret command.

    It runs without a shell. The answer is read until the command *exits* (not until its
    output closes: a child it leaves behind, a gpg-agent say, may hold the pipe open for ever),
    within `timeout` seconds; then its whole process group is killed, so nothing it started
    stays running. Both pipes are read as they fill, so a program printing more than a pipe
    holds never blocks on it (only the first 64 KB of its output is kept). Raises
    SecretCommandFailed: one line naming `key`, what happened (the exit status, a timeout),
    the first line of its stderr with secrets hidden (pizauth's "open this URL"), and the
    no-shell hint only when the command reads as written for a shell; never its output."""
    import selectors
    import signal
    import time

    from dayflow.sources.secrets import program_name

    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise SecretCommandFailed(f"{key} cannot be parsed ({err})") from None
    if not argv:
        raise SecretCommandFailed(f"{key} is empty")
    hint = f" ({NO_SHELL})" if needs_shell(argv) else ""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, killed whole below
            env=command_env(env),  # no API key, no database URL (dayflow.trust)
        )
    except FileNotFoundError:
        shown = program_name(argv[0], single=len(argv) == 1)
        if shown is None:
            raise SecretCommandFailed(
                f"{key}'s program was not found (its first word is not shown: it does not "
                f"read as a program's name; {key} names a program that prints the {what}, "
                f"not the {what} itself){hint}"
            ) from None
        raise SecretCommandFailed(f"{key} {shown!r} was not found{hint}") from None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise SecretCommandFailed(f"{key} could not run ({reason}){hint}") from None
    assert proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout
    out, err_out = (
        _Pipe(proc.stdout.fileno(), _PASSWORD_OUTPUT),
        _Pipe(proc.stderr.fileno(), _STDERR_KEPT),
    )
    try:
        with selectors.DefaultSelector() as sel:
            for pipe in (out, err_out):
                os.set_blocking(pipe.fd, False)
                sel.register(pipe.fd, selectors.EVENT_READ, pipe)
            while True:
                if proc.poll() is not None:
                    for pipe in (out, err_out):
                        pipe.drain()  # what it wrote before exiting
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                if not sel.get_map():  # both pipes closed: only its exit is awaited
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(left)
                    continue
                # A short wait: a command that exits while a child it started holds the
                # pipes open is noticed at once (every ready pipe is read, so never a spin).
                for ready, _ in sel.select(min(left, 0.05)):
                    pipe = ready.data
                    if not pipe.drain():
                        sel.unregister(pipe.fd)
        if proc.poll() is None:
            more = f", after printing {_size(out.total)}" if out.total > _PASSWORD_OUTPUT else ""
            raise SecretCommandFailed(
                f"{key} did not finish in {timeout:g} s (stopped{more}){_said(err_out, out)}"
            )
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it left behind
        proc.stdout.close()
        proc.stderr.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(1)
    if proc.returncode != 0:
        status = (
            f"was killed by signal {-proc.returncode}"
            if proc.returncode < 0
            else f"exited with status {proc.returncode}"
        )
        raise SecretCommandFailed(f"{key} {status}{_said(err_out, out)}{hint}")
    text = bytes(out.kept).decode("utf-8", "replace")
    line, newline, _ = text.partition("\n")
    line = line.removesuffix("\r")
    if not newline and out.total > _PASSWORD_OUTPUT:
        raise SecretCommandFailed(
            f"{key} printed {_size(out.total)} without a line break: not a {what} (its first "
            "line is taken, and it has none)"
        )
    if not line:
        raise SecretCommandFailed(
            f"{key} printed no {what} (exit status 0){_said(err_out, out)}{hint}"
        )
    return line


class _Pipe:
    """One of a command's pipes, read as it fills: the first `cap` bytes kept, the rest
    counted and dropped."""

    def __init__(self, fd: int, cap: int) -> None:
        self.fd, self.cap = fd, cap
        self.kept = bytearray()
        self.total = 0
        self.closed = False

    def drain(self) -> bool:
        """Read what the pipe holds now; False once it is closed."""
        while not self.closed:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                break
            self.total += len(chunk)
            if len(self.kept) < self.cap:
                self.kept += chunk[: self.cap - len(self.kept)]
        return False


def _said(stderr: _Pipe, stdout: _Pipe) -> str:
    """ "; it said: ..." with the first line of its stderr (what stdout's first line held, and
    anything else that reads as a token, hidden), or nothing."""
    from dayflow.sources.secrets import stderr_line

    first = bytes(stdout.kept).decode("utf-8", "replace").split("\n", 1)[0].strip()
    line = stderr_line(bytes(stderr.kept), [first] if first else [])
    return f"; it said: {line}" if line else ""


def _size(n: int) -> str:
    return f"more than {_PASSWORD_OUTPUT // 1024} KB" if n > _PASSWORD_OUTPUT else f"{n} bytes"
