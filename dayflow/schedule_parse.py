"""Reading a written schedule back the way its scheduler will, so `schedule install` reports
success only for a job that runs what was asked.

Why our own readers: `systemd-analyze verify` says whether a unit loads, not which words
ExecStart= ends up with, and is missing on most machines that use cron; cron has no checker at
all. These follow the schedulers' documented rules for what Dayflow writes:

- systemd (systemd.service(5), systemd.exec(5), systemd.unit(5)): specifiers (`%%` is a `%`,
  any other `%x` is a specifier), then words split on whitespace with '…' and "…" quoting and C
  escapes (`\\\\`, `\\"`, `\\t`, `\\xNN`…); on ExecStart= `$$` is a `$` and `$NAME`/`${NAME}`
  expand a variable, except in the executable's path, which is taken as it is and refused when
  it holds a quote, a backslash or a control character (checked with systemd 252's
  `systemd-analyze verify`); Environment= expands nothing.
- cron (crontab(5), cronie's and Vixie cron's `do_command`): the command ends at the first `%`
  not preceded by a backslash (the rest is its stdin), `\\%` is a `%`, every other backslash is
  kept; /bin/sh then reads the line (`shlex` in POSIX mode, which quotes as sh does).

A reader raises `ValueError` on anything Dayflow never writes (a specifier, a variable, a bare
`%`), so a mismatch is caught rather than guessed at.
"""

from __future__ import annotations

import shlex

_C_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "s": " ",
    "\\": "\\",
    '"': '"',
    "'": "'",
}


def systemd_specifiers(text: str) -> str:
    """`text` with its specifiers resolved; Dayflow writes only `%%`."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "%":
            if text[i + 1 : i + 2] != "%":
                raise ValueError(f"specifier {text[i : i + 2]!r} would be expanded")
            i += 2
            out.append("%")
            continue
        out.append(c)
        i += 1
    return "".join(out)


def systemd_words(text: str) -> list[str]:
    """The words of a setting as systemd splits them (quotes removed, C escapes applied)."""
    words: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\n\r":
            i += 1
        if i >= n:
            return words
        word: list[str] = []
        quote = ""
        while i < n:
            c = text[i]
            if c == "\\":
                escaped, i = _c_escape(text, i + 1)
                word.append(escaped)
                continue
            if quote:
                if c == quote:
                    quote = ""
                else:
                    word.append(c)
            elif c in "'\"":
                quote = c
            elif c in " \t\n\r":
                break
            else:
                word.append(c)
            i += 1
        if quote:
            raise ValueError("unbalanced quotes")
        words.append("".join(word))


def _c_escape(text: str, i: int) -> tuple[str, int]:
    if i >= len(text):
        raise ValueError("a backslash at the end of the line continues it")
    c = text[i]
    if c in _C_ESCAPES:
        return _C_ESCAPES[c], i + 1
    if c == "x" and _hex(text[i + 1 : i + 3]):
        return chr(int(text[i + 1 : i + 3], 16)), i + 3
    raise ValueError(f"unknown escape \\{c}")


def _hex(digits: str) -> bool:
    return len(digits) == 2 and all(d in "0123456789abcdefABCDEF" for d in digits)


def systemd_exec(value: str) -> list[str]:
    """The argv an ExecStart= value runs, its first word being the executable's path as
    systemd uses it: no `$` expansion there (`$$` stays two dollars), and a path holding a
    quote, a backslash or a control character is refused ("Executable name contains special
    characters": the unit never starts)."""
    words = systemd_words(systemd_specifiers(value))
    if not words:
        raise ValueError("an empty ExecStart=")
    if any(c in "\\\"'" or ord(c) < 32 or ord(c) == 127 for c in words[0]):
        raise ValueError(f"systemd refuses the executable name {words[0]!r}")
    return [words[0], *(_dollars(w) for w in words[1:])]


def _dollars(word: str) -> str:
    out, i = [], 0
    while i < len(word):
        c = word[i]
        if c == "$":
            nxt = word[i + 1 : i + 2]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "{" or nxt.isalpha() or nxt == "_":
                raise ValueError(f"{word!r} would expand a variable")
        out.append(c)
        i += 1
    return "".join(out)


def systemd_environment(value: str) -> list[tuple[str, str]]:
    """The assignments of an Environment= value."""
    pairs = []
    for word in systemd_words(value):
        name, sep, rest = word.partition("=")
        if not sep or not name:
            raise ValueError(f"{word!r} is not NAME=value")
        pairs.append((name, systemd_specifiers(rest)))
    return pairs


def read_service(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The ExecStart= argv and the Environment= pairs of a service unit, as systemd reads
    them."""
    argv: list[str] | None = None
    env: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        if line.rstrip().endswith("\\"):
            raise ValueError("a line ends with a backslash, which joins it to the next")
        key, _, value = line.partition("=")
        if key.strip() == "ExecStart":
            if argv is not None:
                raise ValueError("two ExecStart= lines")
            argv = systemd_exec(value.strip())
        elif key.strip() == "Environment":
            env.extend(systemd_environment(value.strip()))
    if argv is None:
        raise ValueError("no ExecStart= line")
    return argv, env


def cron_command(line: str) -> str:
    """The command cron hands to /bin/sh for a crontab line (after its five time fields)."""
    fields = line.split(None, 5)
    if len(fields) < 6:
        raise ValueError("fewer than six fields")
    out: list[str] = []
    escaped = False
    for c in fields[5]:
        if escaped:
            if c == "%":
                out[-1] = "%"
            else:
                out.append(c)
            escaped = False
            continue
        if c == "\\":
            escaped = True
            out.append(c)
            continue
        if c == "%":
            raise ValueError("a bare % ends the command (cron sends the rest as its input)")
        out.append(c)
    return "".join(out)


def cron_words(line: str) -> list[str]:
    """The words /bin/sh sees in a crontab line's command."""
    return shlex.split(cron_command(line), posix=True)
