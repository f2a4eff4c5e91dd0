"""A source's password (`password_command` or `password_env`), fetched when the source is
opened, once per account a brief or check reads. Above the entries (`spec`), the accounts
(`oauth`) and the runner (`secret_command`), which import none of each other back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from dayflow.errors import SourceError
from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

if TYPE_CHECKING:
    from dayflow.sources.oauth import Accounts
    from dayflow.sources.spec import SourceSpec


def _host_of(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def resolve_password(
    spec: SourceSpec, env: Mapping[str, str], accounts: Accounts | None = None
) -> str:
    """The source's password, fetched now from its command or environment variable (once per
    account of `accounts`: its host, user and password source). Errors name the source and
    the mechanism, never any output of the command."""
    if accounts is not None:
        host = spec.host or _host_of(spec.url or "")
        source = (spec.password_command or "", spec.password_env or "")
        key = ("password", host.lower(), spec.user or "", *source)
        return accounts.password(key, lambda: resolve_password(spec, env))
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
        return secret_from_command(spec.password_command, spec.timeout, env=env)
    except SecretCommandFailed as err:
        raise SourceError(f"{spec.name}: {err}") from None
