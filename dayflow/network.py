"""Where a request goes: whether an address is on this machine, which proxy the environment
names for it, and how a URL may be shown.

Every HTTP client Dayflow makes (the Claude API and a local model through the SDK, the ICS
feeds and CalDAV through urllib, MCP servers over HTTP) is given its proxy by `proxy_for`,
never left to read the environment itself. The rule is one for all of them:

- an address on this machine (127.0.0.0/8, `::1`, `localhost`) is never sent through a proxy:
  a local model's prompt and inbox, a loopback feed or MCP server stay on the machine, whatever
  `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` say and whether `NO_PROXY` lists them or not;
- any other address uses the proxy the environment names for its scheme (`https_proxy` /
  `HTTPS_PROXY`, then `all_proxy` / `ALL_PROXY`; the lower-case name first, as curl and
  urllib read them), unless `NO_PROXY` covers its host (urllib's own reading of it);
- `shown_url` is how a URL appears anywhere a person or the database sees it: without the
  `user:password@` it may carry.

The environment is handed in (`environ`: the runtime's, or the `Settings.proxy_env` taken from
it), never read here: it is the one the HTTP libraries would have read, and the one the user
set the proxy in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit


def host_of(url: str) -> str | None:
    """The host a URL names (lower case, IPv6 without brackets), or None when it has none."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.lower() if host else None


def is_loopback_host(host: str) -> bool:
    """Whether `host` is this machine: 127.0.0.0/8, ::1, localhost (and *.localhost)."""
    host = host.lower().strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress  # here: `runs` and `tasks` import this module, and never need it

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost: it could resolve anywhere


def is_loopback(url: str) -> bool:
    """Whether `url` is an address on this machine."""
    host = host_of(url)
    return host is not None and is_loopback_host(host)


def proxy_env(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables of `environ` that choose a proxy (`<scheme>_proxy`, NO_PROXY and CGI's
    REQUEST_METHOD), as a setting a run's model client carries (`Settings.proxy_env`)."""
    return tuple(
        (k, v)
        for k, v in sorted(environ.items())
        if (len(k) > 6 and k[-6:].lower() == "_proxy") or k == "REQUEST_METHOD"
    )


def env_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """The `<scheme>_proxy` variables of `environ` by scheme (`no` for NO_PROXY), the
    lower-case spelling winning over the upper-case one (urllib's `getproxies_environment`)."""
    found: dict[str, str] = {}
    for lower_first in (False, True):
        for name, value in environ.items():
            if len(name) > 6 and name[-6:].lower() == "_proxy" and value:
                if lower_first and name != name.lower():
                    continue
                found[name[:-6].lower()] = value
    if "REQUEST_METHOD" in environ:  # a CGI request's Proxy: header becomes HTTP_PROXY
        found.pop("http", None)
    return found


def proxy_for(url: str, environ: Mapping[str, str]) -> str | None:
    """The proxy a request to `url` goes through, or None for a direct connection: never one
    for an address on this machine; else the environment's for the URL's scheme, unless
    NO_PROXY covers the host."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if not host or is_loopback_host(host):
        return None
    proxies = env_proxies(environ)
    chosen = proxies.get(parts.scheme.lower()) or proxies.get("all")
    if not chosen:
        return None
    if "no" in proxies:
        import urllib.request  # here: only a process with a proxy set pays for it

        netloc = host if parts.port is None else f"{host}:{parts.port}"
        bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
        if bypass(netloc, {"no": proxies["no"]}):
            return None
    return chosen if "://" in chosen else f"http://{chosen}"


def shown_url(url: str) -> str:
    """`url` as it may be shown or stored: without a `user:password@` (scheme, host, port,
    path and query kept). Text that is not a URL comes back unchanged, unless it holds an
    `@` before its first `/`, which is cut at that point."""
    try:
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return url
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    except ValueError:
        head, sep, tail = url.partition("@")
        return "…@" + tail if sep and "/" not in head.split("//", 1)[-1] else url


DIRECT = "direct"  # `route`'s word for a connection made without a proxy


def route(url: str, environ: Mapping[str, str]) -> str:
    """How a request to `url` travels, as a run stores and shows it: `DIRECT`, or the proxy's
    URL without its credentials."""
    proxy = proxy_for(url, environ)
    return DIRECT if proxy is None else shown_url(proxy)


def direct_client_options() -> dict[str, Any]:
    """Keyword arguments that make an httpx client go straight to its server: the
    environment's proxy variables are never read (httpx builds a transport for each one it
    reads, and a SOCKS one needs a package Dayflow does not install, so a loopback server
    was unreachable with ALL_PROXY=socks5://...), while SSL_CERT_FILE and SSL_CERT_DIR still
    are, as httpx reads them."""
    import httpx2

    return {"trust_env": False, "verify": httpx2.create_ssl_context(trust_env=True)}
