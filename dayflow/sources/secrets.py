"""What may be shown of a secret's surroundings: a server's words with the secret taken out, and
whether a word the user wrote is a program's name or something pasted by mistake.

Two ways a password or a token reached the database, the brief, the sinks and the model:

- a server that echoes the credential in its refusal (an IMAP `NO`, an SMTP 535, an HTTP reason
  or `WWW-Authenticate`). Whatever a server says is shown through `server_words`, the one
  function that takes the secrets in hand out of it (each as itself and as the base64 a SASL
  exchange or Basic auth sends) and makes it one printable line;
- a password pasted into `password_command` (then "'hunter2' was not found"). A command's
  first word is shown only when it reads as a program (`program_name`).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable

HIDDEN = "…"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,39}")
_PATH_PART = re.compile(r"[A-Za-z0-9._+-]{1,64}")
_URL = re.compile(r"(?i)^[a-z][a-z0-9+.-]*://")


def looks_secret(word: str) -> bool:
    """Whether a word reads as a key, token or password rather than a name: long and mixing
    letters and digits (or cases), as a 40-character random string does."""
    if len(word) < 16:
        return False
    classes = _classes(word)
    digits = sum(c.isdigit() for c in word)
    return classes >= 3 or (classes == 2 and digits >= 4) or len(word) > 40


def _classes(word: str) -> int:
    """How many of lower case, upper case and digits `word` holds."""
    return sum(
        (
            any(c.islower() for c in word),
            any(c.isupper() for c in word),
            any(c.isdigit() for c in word),
        )
    )


def program_name(argv0: str, *, single: bool) -> str | None:
    """`argv0` when it reads as a program, a path (`/usr/bin/pass`, `~/bin/tok`, `./x`) or a
    plain command name (`pass`, `oama`, `mutt_oauth2.py`); None for anything else, a pasted
    password or token most likely. A lone word with no arguments that is not a path is shown
    only when it reads as a name (`single`: the command has no other word)."""
    if argv0.startswith(("/", "~/", "./", "../")):
        parts = [p for p in argv0.removeprefix("~").split("/") if p not in ("", ".", "..")]
        if parts and all(_PATH_PART.fullmatch(p) and not looks_secret(p) for p in parts):
            return argv0
        return None
    if not _PLAIN_NAME.fullmatch(argv0) or looks_secret(argv0):
        return None
    if _classes(argv0) == 3:
        # Upper and lower case and digits (`Zq9Kw3x7 --flag`): a password's mix, not a
        # program's name, however short and whatever follows it.
        return None
    if single and (any(c.isdigit() for c in argv0) and any(c.isalpha() for c in argv0)):
        # `hunter2` alone: as likely a password as a program; a program almost always takes
        # arguments (`pass show mail`), so only a name with no digits is shown.
        return None
    return argv0


def _forms(secret: str) -> list[str]:
    """A secret as a server may echo it: itself, and inside base64 (a SASL response, Basic)."""
    forms = [secret]
    raw = secret.encode("utf-8", "replace")
    # Sent alone (AUTH LOGIN's password line), it is exactly its own base64, at any length.
    alone = base64.b64encode(raw).decode("ascii")
    forms += [alone, alone.rstrip("=")]
    if len(raw) >= 6:
        # Any base64 text that holds the secret holds one of these three runs, whatever its
        # offset in the encoded bytes (the first and last bytes may share a character).
        for shift in range(3):
            chunk = base64.b64encode(b"\0" * shift + raw).decode("ascii")
            start = -(-4 * shift // 3)  # the first character made of the secret's bits only
            inner = chunk[start : len(chunk) - 3]
            if len(inner) >= 6:
                forms.append(inner)
    return forms


def hide(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every secret in `secrets` (and its base64 forms) replaced by `…`."""
    forms = sorted(
        {f for s in secrets if s for f in _forms(s)}, key=lambda f: (-len(f), f)
    )  # the longest first: a secret inside another is hidden with it
    for form in forms:
        text = text.replace(form, HIDDEN)
    return text


def server_words(words: str, secrets: Iterable[str | None] = (), limit: int = 300) -> str:
    """What a server (or a secret command's stderr) said, as one short line that holds none of
    `secrets` and cannot steer a terminal (control and other unprintable characters become
    spaces). The one function through which a server's words are kept or shown."""
    text = hide(words, secrets)
    if "\x1b" in text or "\x9b" in text:
        from dayflow.sources.mime import without_escapes

        text = without_escapes(text)  # whole: dropping the ESC alone leaves `[31m` behind
    text = "".join(c if c.isprintable() else " " for c in text)
    return " ".join(text.split())[:limit]


def stderr_line(data: bytes, secrets: Iterable[str | None] = (), limit: int = 300) -> str:
    """The first non-empty line a secret command wrote on stderr, as `server_words` shows a
    server's words, with any word that reads as a token hidden too (an address to open, as
    pizauth prints, is kept)."""
    text = data.decode("utf-8", "replace")
    first = next((line for line in text.splitlines() if line.strip()), "")
    words = [
        w if _URL.match(w) or not looks_secret(w.strip("\"'.,;:()[]")) else HIDDEN
        for w in first.split()
    ]
    return server_words(" ".join(words), secrets, limit)
