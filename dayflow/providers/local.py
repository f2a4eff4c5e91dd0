"""A local model: a server on this machine that speaks the Messages API (Ollama 0.14+,
llama.cpp's `llama-server`, vLLM, LM Studio), reached through the same SDK path as Claude.

What makes it *private* is the address, so this module is the one place that decides whether
an address is on this machine: a host in 127.0.0.0/8, `::1` or `localhost`. Anything else is
refused unless the user says `--allow-remote`, and so is a model Ollama runs on its own
servers (a name whose tag is `cloud` or ends in `-cloud`): either way mail would leave the
machine, which is what the mode exists to prevent. No SDK import here: `runs`, `show` and
`--help` describe a local run without paying for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from dayflow.errors import UsageError
from dayflow.network import DIRECT, is_loopback_host, shown_url

if TYPE_CHECKING:
    from dayflow.providers.anthropic import AnthropicClient

LOCAL = "local"
ANTHROPIC = "anthropic"
PROVIDERS = (ANTHROPIC, LOCAL)
OLLAMA_URL = "http://127.0.0.1:11434"  # Ollama's own default address
LOCAL_TIMEOUT = 600.0  # seconds a request may take: a CPU model is slow
PLACEHOLDER_KEY = "local"  # the SDK insists on a key; a local server ignores it


def base_of(url: str) -> str:
    """A local server's base URL as the SDK wants it: without a trailing `/` or `/v1` (the
    address OpenAI-style clients are given: the SDK adds `/v1/messages` itself)."""
    base = url.strip().rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def host_of(url: str) -> str | None:
    """The host a base URL names (lower case, IPv6 without brackets), or None when it is not
    an http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not host:
        return None
    return host.lower()


def is_loopback(url: str) -> bool:
    """Whether `url` is an address on this machine: 127.0.0.0/8, ::1 or localhost."""
    host = host_of(url)
    return host is not None and is_loopback_host(host)


def is_cloud_model(name: str) -> bool:
    """Whether Ollama runs model `name` on its servers (`gpt-oss:120b-cloud`, `x:cloud`)."""
    tag = name.strip().lower().rpartition(":")[2]
    return ":" in name and (tag == "cloud" or tag.endswith("-cloud"))


def check(model: str | None, base_url: str, *, allow_remote: bool) -> None:
    """Refuse (UsageError, exit 2) what would send mail off this machine: a base URL that is
    not loopback, a cloud model; and a local run without a model name."""
    if not model:
        raise UsageError(
            "--provider local needs a model name: --model NAME, DAYFLOW_MODEL or `name` in "
            "the config's [model] table (e.g. qwen3:8b; `ollama list` shows yours)"
        )
    if host_of(base_url) is None:
        raise UsageError(
            f"the local model's base URL {shown_url(base_url)!r} is not an http(s) URL"
        )
    if allow_remote:
        return
    if not is_loopback(base_url):
        raise UsageError(
            f"the local model's base URL {shown_url(base_url)} is not on this machine (host "
            f"{host_of(base_url)}): mail would leave it; --allow-remote sends it there anyway"
        )
    if is_cloud_model(model):
        raise UsageError(
            f"model {model} runs on Ollama's servers, not this machine: mail would leave it; "
            "pick a local model (`ollama list`), or --allow-remote to send it anyway"
        )


def where(model: str, base_url: str, proxy: str | None = None) -> str:
    """What the brief's header and `show` say of a local run: where its mail went, and for a
    remote server whether through a proxy (`proxy`: `network.route`'s answer, None when not
    known; a server on this machine is never reached through one)."""
    shown = shown_url(base_url)
    if is_loopback(base_url) and not is_cloud_model(model):
        return f"local model {model} at {shown}: mail stays on this machine"
    route = ""
    if proxy is not None:
        route = ", not through a proxy" if proxy == DIRECT else f", through proxy {proxy}"
    return f"model {model} at {shown} (--allow-remote): mail is sent to that machine{route}"


def make_client(base_url: str, *, timeout: float = LOCAL_TIMEOUT, **kw: Any) -> AnthropicClient:
    """The SDK client for a local server: a placeholder key (never the user's Anthropic key,
    which must not reach another server), errors that name the server, not the API."""
    from dayflow.providers.anthropic import AnthropicClient

    return AnthropicClient(
        api_key=PLACEHOLDER_KEY,
        base_url=base_url,
        timeout=timeout,
        label=f"local model server at {shown_url(base_url)}",
        **kw,
    )
