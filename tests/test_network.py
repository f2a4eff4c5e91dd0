"""Issue 32.1 and 32.6: where a request goes. Nothing for this machine goes through a proxy
(a local model's prompt and inbox, a loopback feed or MCP server), whatever HTTP_PROXY,
HTTPS_PROXY and ALL_PROXY say; a remote address takes the environment's proxy, and the run's
header says so, naming it without its credentials. Tested against a real loopback proxy that
records what it is asked to carry (`tests/proxykit.py`)."""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from dayflow.cli_base import default_model_factory
from dayflow.models import ModelRequest
from dayflow.network import DIRECT, proxy_for, route, shown_url
from dayflow.providers.anthropic import AnthropicClient
from dayflow.providers.local import where
from dayflow.providers.offline import OfflineModel
from dayflow.sources import http
from tests import fakeapi
from tests.harness import invoke
from tests.httpkit import Loopback
from tests.proxykit import RecordingProxy, point_at

P = "http://proxy.example:3128"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:11434",
        "http://127.9.8.7:8080/v1",
        "http://localhost:1",
        "http://LOCALHOST:1",
        "http://[::1]:11434",
        "https://models.localhost/",
    ],
)
def test_an_address_on_this_machine_is_never_proxied(url: str) -> None:
    env = {"HTTP_PROXY": P, "HTTPS_PROXY": P, "ALL_PROXY": P, "NO_PROXY": "localhost"}
    assert proxy_for(url, env) is None
    assert route(url, env) == DIRECT


def test_a_remote_address_takes_the_environments_proxy_unless_no_proxy_covers_it() -> None:
    assert proxy_for("https://api.anthropic.com", {"HTTPS_PROXY": P}) == P
    assert proxy_for("http://gpu.lan:8080", {"HTTPS_PROXY": P}) is None  # no http one
    assert proxy_for("http://gpu.lan:8080", {"ALL_PROXY": P}) == P
    assert proxy_for("http://gpu.lan", {"http_proxy": "proxy:1", "HTTP_PROXY": P}) == (
        "http://proxy:1"  # the lower-case name wins, a bare host:port is http://
    )
    assert proxy_for("http://gpu.lan", {"ALL_PROXY": P, "NO_PROXY": ".lan"}) is None
    assert proxy_for("http://gpu.lan", {"ALL_PROXY": P, "no_proxy": "*"}) is None
    assert proxy_for("http://gpu.lan", {"ALL_PROXY": P, "NO_PROXY": "other.lan"}) == P
    # A CGI request's `Proxy:` header arrives as HTTP_PROXY: not a proxy anyone set.
    assert proxy_for("http://gpu.lan", {"HTTP_PROXY": P, "REQUEST_METHOD": "GET"}) is None
    assert route("http://gpu.lan", {"ALL_PROXY": "http://u:secret@proxy:1"}) == "http://proxy:1"


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("http://ann:hunter2@gpu.lan:8080/v1", "http://gpu.lan:8080/v1"),
        ("https://token@api.example/x?q=1", "https://api.example/x?q=1"),
        ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("http://a:b@[::1]:1", "http://[::1]:1"),
    ],
)
def test_a_url_is_shown_without_its_user_and_password(given: str, shown: str) -> None:
    assert shown_url(given) == shown


def _request(model: str = "claude-haiku-5-5") -> ModelRequest:
    return ModelRequest(
        model=model,
        max_tokens=50,
        messages=[{"role": "user", "content": "hi"}],
        system="s",
        tools=[],
    )


def test_the_sdk_goes_straight_to_a_loopback_server_with_every_proxy_variable_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with RecordingProxy() as proxy, fakeapi.FakeAPI([fakeapi.reply([fakeapi.text("ok")])]) as api:
        point_at(monkeypatch, proxy.url)
        with AnthropicClient(
            api_key="test", base_url=api.base_url, max_retries=0, environ=os.environ
        ) as client:
            assert client.proxy is None
            client.create(_request())
        assert proxy.seen == [] and len(api.message_requests) == 1


def test_the_sdk_uses_the_environments_proxy_for_a_remote_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with fakeapi.FakeAPI([fakeapi.reply([fakeapi.text("ok")])]) as api:
        with RecordingProxy(upstream=api.base_url) as proxy:
            point_at(monkeypatch, proxy.url)
            remote = "http://models.example.test:8080"
            with AnthropicClient(
                api_key="test", base_url=remote, max_retries=0, environ=os.environ
            ) as client:
                assert client.proxy == proxy.url
                client.create(_request())
            assert proxy.targets() == [f"{remote}/v1/messages"]


def _local_run(
    tmp_path: Path,
    api: fakeapi.FakeAPI,
    *extra: str,
    base: str | None = None,
    proxies: dict[str, str] | None = None,
) -> Any:
    env = {"ANTHROPIC_BASE_URL": base or api.base_url, "ANTHROPIC_API_KEY": "sk-ant-secret"}
    env |= proxies or {}
    return invoke(
        tmp_path / "d.db",
        default_model_factory,
        "brief",
        "--date",
        "2026-11-05",
        "--provider",
        "local",
        "--model",
        "qwen3:8b",
        *extra,
        env=env,
    )


@pytest.mark.slow
def test_a_local_model_run_never_goes_through_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt and the inbox stay on the machine, as the header says, with HTTP_PROXY,
    HTTPS_PROXY and ALL_PROXY set and NO_PROXY=localhost (which does not name 127.0.0.1)."""
    responder = fakeapi.responder_from_client(OfflineModel())
    with RecordingProxy() as proxy, fakeapi.FakeAPI(responder=responder) as api:
        got = _local_run(tmp_path, api, proxies=point_at(monkeypatch, proxy.url))
        assert got.code == 0, got.err
        assert proxy.seen == [] and len(api.message_requests) >= 2
    assert "mail stays on this machine" in got.err


@pytest.mark.slow
def test_a_remote_model_says_it_goes_through_the_proxy_naming_it_without_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    responder = fakeapi.responder_from_client(OfflineModel())
    with fakeapi.FakeAPI(responder=responder) as api, RecordingProxy(api.base_url) as proxy:
        proxies = point_at(monkeypatch, proxy.url.replace("http://", "http://pu:psecret@"))
        remote = "http://gpu.example.test:8080"
        got = _local_run(tmp_path, api, "--allow-remote", base=remote, proxies=proxies)
        assert got.code == 0, got.err
        assert proxy.targets() and all(t.startswith(remote) for t in proxy.targets())
        assert all("sk-ant-secret" not in json.dumps(c.headers) for c in proxy.seen)
        run_id = json.loads(invoke(tmp_path / "d.db", default_model_factory, "runs", "--json").out)
        shown = invoke(tmp_path / "d.db", default_model_factory, "show", run_id[0]["id"]).out
    said = f"mail is sent to that machine, through proxy {proxy.url}"
    assert said in got.err and "psecret" not in got.err
    assert said in " ".join(shown.split()) and "psecret" not in shown
    # Without one, it says that too; a server on this machine never names one.
    assert where("m", remote, DIRECT).endswith("mail is sent to that machine, not through a proxy")
    assert where("m", "http://127.0.0.1:1", proxy.url).endswith("mail stays on this machine")


class _Feed(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_loopback_feed_is_fetched_directly_and_a_remote_one_through_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Loopback(_Feed) as feed, RecordingProxy(upstream=feed.base_url) as proxy:
        point_at(monkeypatch, proxy.url)
        env = os.environ
        got = http.request("GET", feed.base_url + "/cal.ics", source="work", timeout=5, environ=env)
        assert got.body.startswith(b"BEGIN:VCALENDAR") and proxy.seen == []
        remote = http.request(
            "GET", "http://cal.example.test/x.ics", source="w", timeout=5, environ=env
        )
        assert remote.body.startswith(b"BEGIN:VCALENDAR")
        assert proxy.targets() == ["http://cal.example.test/x.ics"]


@pytest.mark.slow
def test_a_loopback_mcp_server_over_http_is_reached_without_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dayflow.mcp.config import ServerSpec
    from dayflow.mcp.servers import Servers
    from tests.mcpserver import serve_http

    log = tmp_path / "calls.log"
    with serve_http(MCP_TEST_LOG=str(log)) as url, RecordingProxy() as proxy:
        point_at(monkeypatch, proxy.url)
        spec = ServerSpec(name="web", url=url, allow_tools=("get_issue",))
        servers = Servers(dict(os.environ), specs_of=lambda _: (spec,))
        try:
            content, is_error = servers.call(None, "web", "get_issue", {"number": 3})
        finally:
            servers.close()
        assert (content, is_error) == ("Issue 3: flaky CI", False)
        assert proxy.seen == []


@pytest.mark.slow
def test_a_base_urls_password_is_never_printed_stored_or_shown(tmp_path: Path) -> None:
    """32.6: a local run at http://ann:hunter2@127.0.0.1:PORT works, and the password is in
    no line on stderr, no byte of the database, not in `runs --json` or `show`."""
    responder = fakeapi.responder_from_client(OfflineModel())
    with fakeapi.FakeAPI(responder=responder) as api:
        base = api.base_url.replace("http://", "http://ann:hunter2@")
        got = _local_run(tmp_path, api, base=base)
        assert got.code == 0, got.err
        db = tmp_path / "d.db"
        listed = invoke(db, default_model_factory, "runs", "--json").out
        shown = invoke(db, default_model_factory, "show", json.loads(listed)[0]["id"]).out
        url = api.base_url
    assert f"local model qwen3:8b at {url}: mail stays on this machine" in got.err
    assert json.loads(listed)[0]["base_url"] == url
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("d.db"))
    assert b"hunter2" not in stored
    assert "hunter2" not in got.err + got.out + listed + shown
    refused = invoke(
        db,
        default_model_factory,
        "brief",
        "--provider",
        "local",
        "--model",
        "m",
        env={"ANTHROPIC_BASE_URL": "http://ann:hunter2@10.1.2.3:1"},
    )
    assert refused.code == 2 and "10.1.2.3" in refused.err and "hunter2" not in refused.err


@pytest.mark.slow
def test_claude_through_the_environments_proxy_is_said_in_the_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Claude API keeps the environment's proxy (a company's), and the run says so."""
    responder = fakeapi.responder_from_client(OfflineModel())
    with fakeapi.FakeAPI(responder=responder) as api, RecordingProxy(api.base_url) as proxy:
        proxies = point_at(monkeypatch, proxy.url.replace("http://", "http://pu:psecret@"))
        remote = "http://claude-gateway.example.test"
        env = {"ANTHROPIC_BASE_URL": remote, "ANTHROPIC_API_KEY": "sk-ant-x"} | proxies
        got = invoke(
            tmp_path / "d.db", default_model_factory, "brief", "--date", "2026-11-05", env=env
        )
        assert got.code == 0, got.err
        assert proxy.targets() and all(t.startswith(remote) for t in proxy.targets())
        url = proxy.url
    said = f"Claude at {remote} (ANTHROPIC_BASE_URL), not the Anthropic API's own address: "
    assert said + f"the API key is sent there, through proxy {url}" in got.err
    assert "psecret" not in got.err


@pytest.mark.parametrize("scheme", ["socks5", "socks5h", "socks4"])
def test_a_socks_proxy_in_the_environment_never_stops_a_loopback_server(
    monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    """httpx builds a transport for each proxy variable it reads, and a SOCKS one needs a
    package Dayflow does not install: a local model run died with an internal ImportError."""
    with fakeapi.FakeAPI([fakeapi.reply([fakeapi.text("ok")])]) as api:
        point_at(monkeypatch, f"{scheme}://127.0.0.1:1")
        with AnthropicClient(
            api_key="test", base_url=api.base_url, max_retries=0, environ=os.environ
        ) as client:
            assert client.proxy is None
            client.create(_request())
        assert len(api.message_requests) == 1


def test_a_loopback_mcp_client_is_made_with_a_socks_proxy_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from dayflow.mcp.runtime import _http_client

    point_at(monkeypatch, "socks5://127.0.0.1:1")
    client = _http_client("http://127.0.0.1:9/mcp", {}, os.environ)
    asyncio.run(client.aclose())


def test_a_remote_socks_proxy_the_sdk_cannot_speak_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dayflow.errors import ConfigError

    point_at(monkeypatch, "socks5://pu:psecret@127.0.0.1:1", no_proxy=None)
    with pytest.raises(ConfigError) as caught:
        AnthropicClient(
            api_key="test",
            base_url="http://gpu.example.test:8080",
            max_retries=0,
            environ=os.environ,
        )
    message = str(caught.value)
    assert "socks5://127.0.0.1:1" in message and "psecret" not in message
    assert "\n" not in message
