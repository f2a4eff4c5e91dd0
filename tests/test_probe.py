"""`dayflow.probe` (doctor --model) against loopback servers: one that calls tools, one that
cannot, one that sends empty arguments, and none at all."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from dayflow.cli_base import default_model_factory
from dayflow.probe import ADVICE, probe
from dayflow.providers.local import make_client
from tests.fakeapi import LOCAL_SHAPED, FakeAPI, Local, reply, text, tool_use
from tests.harness import Result, invoke

pytestmark = pytest.mark.slow  # a loopback Messages API server

MODEL = "qwen3:8b"


def tool_capable(body: dict[str, Any]) -> Any:
    """Calls get_time when asked, then answers from its result."""
    if len(body["messages"]) == 1:
        return reply(
            [text("Checking."), tool_use("toolu_p1", "get_time", {"zone": "UTC"})], "tool_use"
        )
    return reply([text("It is 12:00 in UTC.")])


def tool_less(body: dict[str, Any]) -> Any:
    return reply([text("It is probably around noon.")])


def empty_arguments(body: dict[str, Any]) -> Any:
    return reply([tool_use("call_1", "get_time", {})], "tool_use")


@pytest.fixture
def clock() -> Iterator[Any]:
    ticks = iter(range(0, 1000, 2))  # every call takes 2 "seconds"
    yield lambda: float(next(ticks))


def run(fake: FakeAPI, clock: Any, model: str = MODEL) -> Any:
    client = make_client(fake.base_url, max_retries=0)
    with client:
        return probe(client, model, list_models=client.list_models, clock=clock)


def test_a_tool_capable_model_passes_every_check(clock: Any) -> None:
    with FakeAPI(responder=tool_capable, local=LOCAL_SHAPED) as fake:
        report = run(fake, clock)
        paths = [r.path for r in fake.requests]
    assert report.tools_work and report.advice is None
    assert report.calls == 2 and report.seconds == 2.0 * 2
    got = {c.what: (c.ok, c.detail) for c in report.checks}
    assert got["reachable"][0] and got["model listed"][0]
    assert "1 model(s) served: qwen3:8b" in got["model listed"][1]
    assert got["tool call"][0] and 'get_time({"zone": "UTC"})' in got["tool call"][1]
    assert "server said end_turn" in got["tool call"][1]  # LOCAL_SHAPED reports end_turn
    assert got["usage"][0] and got["tool result read back"][0]
    assert paths == ["/v1/models", "/v1/messages", "/v1/messages"]


def test_a_model_that_cannot_call_tools_fails_with_what_to_try(clock: Any) -> None:
    with FakeAPI(responder=tool_less, local=Local()) as fake:
        report = run(fake, clock)
    assert not report.tools_work and report.advice == ADVICE
    tool = next(c for c in report.checks if c.what == "tool call")
    assert tool.ok is False and "answered in text" in tool.detail and "noon" in tool.detail
    assert report.calls == 1


def test_empty_arguments_are_named_as_invalid_json(clock: Any) -> None:
    with FakeAPI(responder=empty_arguments, local=Local()) as fake:
        report = run(fake, clock)
    tool = next(c for c in report.checks if c.what == "tool call")
    assert not report.tools_work and tool.ok is False and "not valid JSON" in tool.detail


def test_a_model_the_server_does_not_have_is_named(clock: Any) -> None:
    with FakeAPI(responder=tool_capable, local=Local(models=("llama3.1:8b",))) as fake:
        report = run(fake, clock, model="qwen3:14b")
    listed = next(c for c in report.checks if c.what == "model listed")
    assert listed.ok is False and "qwen3:14b is not among them" in listed.detail
    assert "ollama pull qwen3:14b" in listed.detail


def test_a_server_without_a_models_endpoint_is_not_held_against_it(clock: Any) -> None:
    with FakeAPI(responder=tool_capable, local=Local(models=())) as fake:
        report = run(fake, clock)
    listed = next(c for c in report.checks if c.what == "model listed")
    assert listed.ok is None and report.tools_work


def test_no_server_is_reported_unreachable_in_one_line(clock: Any) -> None:
    client = make_client("http://127.0.0.1:9", max_retries=0)
    with client:
        report = probe(client, MODEL, list_models=client.list_models, clock=clock)
    (reachable,) = report.checks
    assert reachable.what == "reachable" and reachable.ok is False
    assert "local model server at http://127.0.0.1:9" in reachable.detail
    assert "\n" not in reachable.detail and not report.tools_work


# --- `dayflow doctor --model` -----------------------------------------------------------------


def doctor(fake: FakeAPI, *args: str) -> Result:
    env = {"ANTHROPIC_BASE_URL": fake.base_url, "DAYFLOW_MODEL": MODEL}
    return invoke(None, default_model_factory, "doctor", "--model", *args, env=env)


def test_doctor_model_reports_a_tool_capable_local_model_and_exits_0() -> None:
    with FakeAPI(responder=tool_capable, local=LOCAL_SHAPED) as fake:
        res = doctor(fake, "--provider", "local")
        url = fake.base_url
    assert res.code == 0, res.err
    assert f"local model {MODEL} at {url}: mail stays on this machine" in res.err
    lines = res.out.splitlines()
    assert [line.split()[0] for line in lines[:5]] == ["ok"] * 5
    assert lines[-1].startswith("2 call(s), ") and lines[-1].endswith(f"{MODEL} can write a brief")
    assert " s per call" in lines[-1]


def test_doctor_model_exits_6_with_what_to_try_when_the_model_cannot_call_tools() -> None:
    with FakeAPI(responder=tool_less, local=Local()) as fake:
        res = doctor(fake, "--provider", "local")
        as_json = doctor(fake, "--provider", "local", "--json")
    assert res.code == 6 and "FAIL  tool call" in res.out
    assert f"error: {MODEL} cannot write a brief: Dayflow needs a model that calls tools" in res.err
    assert "what to try:" in res.out
    doc = json.loads(as_json.out)
    assert as_json.code == 6 and doc["tools_work"] is False and doc["calls"] == 1
    assert doc["seconds_per_call"] is not None and doc["provider"] == "local"


def test_doctor_model_refuses_a_remote_address_like_brief_does() -> None:
    env = {"ANTHROPIC_BASE_URL": "http://192.168.7.7:11434", "DAYFLOW_MODEL": MODEL}
    res = invoke(None, default_model_factory, "doctor", "--model", "--provider", "local", env=env)
    assert res.code == 2 and "not on this machine" in res.err and res.out == ""


def test_doctor_model_takes_the_models_name_as_brief_takes_it() -> None:
    """32.29: `doctor --model NAME` probes NAME (it was refused as an extra argument)."""
    with FakeAPI(responder=tool_capable, local=Local(models=("llama3.1:8b",))) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "DAYFLOW_MODEL": MODEL}
        res = invoke(
            None,
            default_model_factory,
            "doctor",
            "--model",
            "llama3.1:8b",
            "--provider",
            "local",
            env=env,
        )
        url = fake.base_url
    assert res.code == 0, res.err
    assert f"local model llama3.1:8b at {url}: mail stays on this machine" in res.err
    alone = invoke(None, default_model_factory, "doctor", "qwen3:8b")
    assert alone.code == 2 and "a model name goes with --model" in alone.err


def test_doctor_model_on_claude_never_gives_ollamas_advice() -> None:
    """A Claude endpoint that answered in prose, or with an error, was told to run `ollama
    list` or `ollama pull`: advice for a local server."""
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-key-123"}
    with FakeAPI(responder=tool_less) as fake:
        env["ANTHROPIC_BASE_URL"] = fake.base_url
        prose = invoke(None, default_model_factory, "doctor", "--model", "claude-x", env=env)
    with FakeAPI([]) as fake:  # every call answered 500, not retried
        env["ANTHROPIC_BASE_URL"] = fake.base_url
        failing = invoke(None, default_model_factory, "doctor", "--model", "claude-x", env=env)
    for res in (prose, failing):
        assert res.code == 6 and "cannot write a brief" in res.err, res.err
        assert "ollama" not in res.out + res.err, res.out + res.err
    assert "ANTHROPIC_BASE_URL" in failing.err
