"""`rules.toml`: one file per profile, beside its config file, that a person can read and edit
(`NAME.rules.toml` beside a config file `NAME.toml` that is not `config.toml`: `rules_path`).

Read with `tomllib`; each entry checked on its own, so a malformed one is one line naming it
(`rule 3: ...`) and the rest still apply. A file that is not a rules file at all (too large,
not UTF-8, not TOML, or made for another profile) applies no rule and says so in one line;
a command refuses to write over it (or over one with a malformed entry or a key no rules
file has, such as a config file's: the rewrite would lose it), so a person's hand edit is
never thrown away.

Written by our own serialiser (`dumps`: our schema is one string per field, nothing a
library is needed for), crash-safely: the new text goes to a temporary file in the same
directory, is flushed and fsync'ed, renamed over the old one, and the directory fsync'ed.
A kill -9 before the rename leaves the old file (and a stray `.rules.toml.*.tmp`, which no
reader reads); after it, the new one. Never a torn file. A lock (`rules.toml.lock`) keeps two
commands from losing each other's rule; a command waits for it a few seconds at most (a write
takes milliseconds), says so after one, and then gives up having changed nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from dayflow.errors import ConfigFileError, RulesBusy, UsageError
from dayflow.models import RULES_KILL_POINTS
from dayflow.rules._values import (
    IMPORTANT,
    KINDS,
    MAX_FIELD_CHARS,
    MOST_SNOOZE_DAYS,
    MUTE,
    REJECT,
    SNOOZE,
    THREAD_PREFIX,
    Rule,
    RuleSet,
    check_asking,
    check_key,
    not_a_public_suffix,
    parse_match,
)

FILE_NAME = "rules.toml"
CONFIG_NAME = "config.toml"  # the config file (`dayflow init`'s) whose rules are `rules.toml`
MAX_RULES_BYTES = 1024 * 1024  # a file of a thousand rules is a tenth of this
MAX_RULES = 2000
# Where a kill -9 can land in a write (the crash tests' DAYFLOW_KILL_AT=POINT:1).
KILL_POINTS = RULES_KILL_POINTS
Kill = Callable[[str], None]
LOCK_WAIT_S = 5.0  # how long a command waits for another's write (which takes milliseconds)
LOCK_SAY_S = 1.0  # when it says it is waiting
_POLL_S = 0.05


def rules_path(config_path: Path, profile: str) -> Path:
    """Where `profile`'s rules live, beside its config file: `rules.toml` beside a
    `config.toml`, `NAME.rules.toml` beside any other (`home.toml`: `home.rules.toml`), so
    profiles whose config files share a directory each have their own. A `rules.toml` there
    that names this profile (written before its rules had a name of their own) is still its
    file, until a `NAME.rules.toml` exists."""
    if config_path.name == CONFIG_NAME:
        return config_path.parent / FILE_NAME
    own = config_path.parent / f"{config_path.name.removesuffix('.toml')}.{FILE_NAME}"
    shared = config_path.parent / FILE_NAME
    if not os.path.lexists(own) and shared != config_path:
        found = _load(shared)
        if isinstance(found, dict) and found.get("profile") == profile:
            return shared
    return own


@dataclass(frozen=True)
class Reading:
    """What one read of `rules.toml` found: the rules in force and a line per problem.
    `whole`: no entry was refused (a command may rewrite the file); `refused`: the file as a
    whole was (not a rules file, another profile's), so none of it applies."""

    path: Path
    rules: RuleSet
    problems: tuple[str, ...] = ()
    whole: bool = True
    exists: bool = True
    refused: bool = False


def read_rules(path: Path, profile: str, *, today: date, guarded: bool = False) -> Reading:
    """The rules of `profile` in the file at `path` (none, when it does not exist), each entry
    checked as the command that makes its kind checks it on `today`. `guarded`: a profile's
    file, trusted only as its config file is (`dayflow.trust`), else none of it applies."""
    if guarded:
        from dayflow.trust import check_rules

        try:
            check_rules(path)
        except ConfigFileError as exc:
            line = f"warning: {exc}; no rule of it applies"
            return Reading(path, RuleSet(), (line,), whole=False, refused=True)
    loaded = _load(path)
    if loaded is None:
        return Reading(path, RuleSet(), exists=False)
    if isinstance(loaded, str):
        return _refused(path, loaded)
    return parse_document(loaded, path, profile, today)


def _load(path: Path) -> dict[str, Any] | str | None:
    """The file's TOML document; None when there is no file; or why it is no rules file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "is not a regular file"
        raw = os.read(fd, MAX_RULES_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_RULES_BYTES:
        return "is larger than 1 MB, not a rules file"
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (Notepad's) is fine, as in config.toml
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    if "\x00" in text:
        return "holds binary data, not TOML"
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"is not TOML ({exc})"


def _refused(path: Path, why: str) -> Reading:
    line = f"warning: {path} {why}; no rule of it applies"
    return Reading(path, RuleSet(), (line,), whole=False, refused=True)


def parse_document(doc: dict[str, Any], path: Path, profile: str, today: date) -> Reading:
    """The rules of a parsed document, each entry checked on its own."""
    owner = doc.get("profile")
    if owner is not None and owner != profile:
        shown = str(owner)[:40]
        return _refused(path, f"is the rules of profile {shown!r}, not of {profile!r}")
    extra = sorted(k for k in doc if k not in ("profile", "rule"))
    problems = [f"warning: {path}: unknown key {k[:40]!r} ignored" for k in extra[:5]]
    entries = doc.get("rule", [])
    if not isinstance(entries, list):
        return _refused(path, "has `rule` that is not a list of [[rule]] tables")
    rules: list[Rule] = []
    seen: set[str] = set()
    # A key no rules file has (another profile's config file, named like a rules file): a
    # rewrite would lose it, so the file is not whole and no command writes over it.
    whole = not extra
    if len(entries) > MAX_RULES:
        problems.append(f"warning: {path}: only the first {MAX_RULES} rules apply")
        entries, whole = entries[:MAX_RULES], False
    for n, entry in enumerate(entries, 1):
        try:
            rule = check_entry(entry, n, profile, today)
        except ValueError as exc:
            problems.append(f"warning: {path}: rule {n}: {exc}; that rule is ignored")
            whole = False
            continue
        if rule.id in seen:
            problems.append(f"warning: {path}: rule {n}: id {rule.id!r} again; ignored")
            whole = False
            continue
        seen.add(rule.id)
        rules.append(rule)
    return Reading(path, RuleSet(tuple(rules)), tuple(problems), whole)


def check_entry(entry: object, n: int, profile: str, today: date) -> Rule:
    """One `[[rule]]` table as a Rule; ValueError saying what is wrong with it. What the
    commands refuse is refused here too: a pattern that matches everything (`*`, a public
    suffix), a reject asking no word, a key no task has, a snooze of more than a year."""
    if not isinstance(entry, dict):
        raise ValueError("is not a table")
    fields = set(Rule._fields) | {"profile"}
    unknown = sorted(k for k in entry if k not in fields)
    if unknown:
        raise ValueError(f"unknown field {unknown[0][:40]!r}")
    for name, value in entry.items():
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string")
        if len(value) > MAX_FIELD_CHARS:
            raise ValueError(f"{name} is longer than {MAX_FIELD_CHARS} characters")
    if entry.get("profile", profile) != profile:
        raise ValueError(f"names profile {entry['profile'][:40]!r}, not {profile!r}")
    kind = entry.get("kind", "")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind[:20]!r}")
    doc = {k: v for k, v in entry.items() if k != "profile"}
    doc.setdefault("id", f"e{n}")
    try:
        if kind in (MUTE, IMPORTANT) or (kind == REJECT and doc.get("match")):
            doc["match"] = not_a_public_suffix(
                parse_match(doc.get("match", ""), lists=kind != IMPORTANT, threads=kind == MUTE)
            )
        if kind == SNOOZE:
            _check_until(doc.get("until", ""), today)
            if doc.get("match") and not doc["match"].startswith(THREAD_PREFIX):
                raise ValueError("a snooze's match is a thread:KEY")
        if kind == REJECT and "asking" in doc:
            check_asking(doc["asking"], "asking")
        if kind in (REJECT, SNOOZE) and "key" in doc:
            check_key(doc["key"])
    except ValueError as exc:
        raise ValueError(str(exc) or "until must be a date YYYY-MM-DD") from None
    except UsageError as exc:  # the words a command refuses it with, one line
        raise ValueError(str(exc)) from None
    if kind in (REJECT, SNOOZE) and not (doc.get("match") or doc.get("key")):
        raise ValueError(f"a {kind} needs match or key")
    return Rule.from_json(doc)


def _check_until(until: str, today: date) -> None:
    """A snooze's day: a date, and no more than a year after `today`, as `snooze --until`
    takes it (one already past is a snooze that is over, listed so)."""
    try:
        day = date.fromisoformat(until)
    except ValueError:
        raise ValueError(f"until {until[:40]!r} is not a date (YYYY-MM-DD)") from None
    if (day - today).days > MOST_SNOOZE_DAYS:
        raise ValueError(
            f"until {until} is more than {MOST_SNOOZE_DAYS} days after today ({today}); a "
            "snooze is for a year at most (or mute it)"
        )


def dumps(rules: RuleSet, profile: str) -> str:
    """The file's text: a header saying what it is, then one `[[rule]]` table per rule."""
    lines = [
        f"# Dayflow's rules for profile {_quote(profile)}: what your corrections taught it.",
        "# Edit by hand if you like; `dayflow rules` lists them and says what is wrong.",
        "# (A command that adds a rule writes this file anew: comments are not kept.)",
        f"profile = {_quote(profile)}",
    ]
    for rule in rules.rules:
        lines += ["", "[[rule]]"]
        lines += [f"{k} = {_quote(v)}" for k, v in rule.to_json().items()]
    return "\n".join(lines) + "\n"


def _quote(value: str) -> str:
    """A TOML basic string: backslash, quote and every control character escaped."""
    out = ['"']
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def write_rules(path: Path, rules: RuleSet, profile: str, kill: Kill | None = None) -> None:
    """Replace the file with these rules, crash-safely (see the module docstring)."""
    data = dumps(rules, profile).encode("utf-8")
    say = kill or (lambda point: None)
    # A rules.toml linked into place (a dotfiles repository) is written through the link: the
    # rename replaces its target, beside it, and the link stays.
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                say("rules_temp")
                os.fsync(fh.fileno())
            say("rules_synced")
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        say("rules_renamed")
        _sync_dir(directory)
    except OSError as exc:
        raise ConfigFileError(f"cannot write {path}: {exc.strerror or exc}") from None


def _sync_dir(directory: Path) -> None:
    """The rename itself made durable (a power cut after it keeps the new name)."""
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


@contextlib.contextmanager
def locked(
    path: Path, say: Callable[[str], None] | None = None, limit_s: float = LOCK_WAIT_S
) -> Iterator[None]:
    """Hold `rules.toml.lock` beside the file for one read-change-write. Held by another
    process: `say` one line after LOCK_SAY_S, and RulesBusy (exit 5) after `limit_s`."""
    import fcntl

    lock = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        raise ConfigFileError(f"cannot open the lock {lock}: {exc.strerror or exc}") from None
    try:
        start, said = time.monotonic(), False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - start
                if waited >= limit_s:
                    raise RulesBusy(
                        f"{lock} is still held by another process after {limit_s:.0f} s "
                        f"(another dayflow changing {path.name}, stuck or paused); nothing "
                        "changed: try again when it is done"
                    ) from None
                if say is not None and not said and waited >= LOCK_SAY_S:
                    say(f"waiting for {lock}: another dayflow is changing {path.name}")
                    said = True
                time.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)


def change(
    path: Path,
    profile: str,
    edit: Callable[[RuleSet], RuleSet],
    *,
    today: date,
    guarded: bool = False,
    kill: Kill | None = None,
    say: Callable[[str], None] | None = None,
) -> RuleSet:
    """Read the file, apply `edit`, write the result, under the lock; the new rules. A file
    that did not read whole is refused (ConfigFileError, exit 4) and left as it is; a lock
    another process holds is waited for, a few seconds at most (`locked`)."""
    with locked(path, say):
        reading = read_rules(path, profile, today=today, guarded=guarded)
        if not reading.whole:
            first = reading.problems[0].removeprefix("warning: ") if reading.problems else ""
            raise ConfigFileError(
                f"{first}; fix {path} first (`dayflow rules` says what is wrong): a rewrite "
                "would lose it; nothing changed"
            )
        changed = edit(reading.rules)
        if changed != reading.rules:
            write_rules(path, changed, profile, kill)
        return changed


def next_id(rules: RuleSet) -> str:
    """A new rule's id: `r` and one more than the highest `rN` in use."""
    used = [int(r.id[1:]) for r in rules.rules if r.id[:1] == "r" and r.id[1:].isdigit()]
    return f"r{max(used, default=0) + 1}"
