"""`dayflow.providers.local`: which addresses and models keep mail on this machine."""

from __future__ import annotations

import pytest

from dayflow.errors import UsageError
from dayflow.providers.local import OLLAMA_URL, base_of, check, is_cloud_model, is_loopback, where

LOOPBACK = [
    OLLAMA_URL,
    "http://localhost:8080",
    "http://LOCALHOST:8080/",
    "http://127.8.9.10:1234/v1",
    "http://[::1]:11434",
    "https://127.0.0.1",
]
REMOTE = [
    "http://192.168.1.20:11434",
    "http://10.0.0.1",
    "http://[::ffff:8.8.8.8]:80",
    "http://example.org:11434",
    "http://localhost.example.org",
    "http://127.0.0.1.nip.io",
    "http://0.0.0.0:11434",
    "http://user@8.8.8.8",
    "ftp://127.0.0.1",
    "127.0.0.1:11434",
    "",
]


@pytest.mark.parametrize("url", LOOPBACK)
def test_loopback_addresses_are_on_this_machine(url: str) -> None:
    assert is_loopback(url)
    check("qwen3:8b", url, allow_remote=False)


@pytest.mark.parametrize("url", REMOTE)
def test_any_other_address_is_refused_in_one_line_unless_allow_remote(url: str) -> None:
    assert not is_loopback(url)
    with pytest.raises(UsageError) as refused:
        check("qwen3:8b", url, allow_remote=False)
    assert refused.value.exit_code == 2 and "\n" not in str(refused.value)


def test_allow_remote_lets_a_remote_address_through_and_says_so() -> None:
    check("qwen3:8b", "http://192.168.1.20:11434", allow_remote=True)
    said = where("qwen3:8b", "http://192.168.1.20:11434")
    assert "mail is sent to that machine" in said and "--allow-remote" in said
    assert where("qwen3:8b", OLLAMA_URL).endswith("mail stays on this machine")


@pytest.mark.parametrize("name", ["gpt-oss:120b-cloud", "qwen3-coder:480b-cloud", "x:cloud"])
def test_ollama_cloud_models_are_refused_on_a_loopback_address(name: str) -> None:
    assert is_cloud_model(name)
    with pytest.raises(UsageError, match="runs on Ollama's servers"):
        check(name, OLLAMA_URL, allow_remote=False)


@pytest.mark.parametrize("name", ["qwen3:8b", "cloudy", "llama3.1:8b-instruct", "gpt-oss:20b"])
def test_ordinary_model_names_are_not_cloud_models(name: str) -> None:
    assert not is_cloud_model(name)


def test_a_local_run_needs_a_model_name() -> None:
    with pytest.raises(UsageError, match="needs a model name"):
        check(None, OLLAMA_URL, allow_remote=False)


@pytest.mark.parametrize(
    "given", ["http://127.0.0.1:11434", "http://127.0.0.1:11434/", " http://127.0.0.1:11434/v1/ "]
)
def test_an_openai_style_v1_base_url_is_the_same_server(given: str) -> None:
    """The SDK adds /v1/messages itself: a base URL copied from an OpenAI-style set-up would
    otherwise ask for /v1/v1/messages."""
    assert base_of(given) == OLLAMA_URL
