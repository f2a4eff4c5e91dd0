"""`dayflow doctor --model`: one short round trip with a tiny tool, before a real brief.

A brief is a tool loop: a model that cannot call tools reads nothing and makes the brief up
(the loop refuses that brief, but only after the wait). Local models differ most here: small
ones (under about 7B) answer in prose instead of calling the tool, or call it with arguments
that are not JSON, and servers report tool turns oddly. The probe asks the question a brief
depends on, with the loop's own reading of the answer (`dayflow.turns`), and says what it saw:
the server reachable, the model listed, a tool call made (with arguments), the tool's result
read back, stop reasons and usage as the loop needs them, and seconds per call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dayflow import turns
from dayflow.errors import ModelError
from dayflow.models import Message, ModelRequest, ModelResponse
from dayflow.providers import ModelClient

PROBE_TOOL = {
    "name": "get_time",
    "description": "The current time in a timezone. Always call this to answer a question "
    "about the time.",
    "input_schema": {
        "type": "object",
        "properties": {"zone": {"type": "string", "description": "An IANA timezone, e.g. UTC."}},
        "required": ["zone"],
        "additionalProperties": False,
    },
}
PROBE_SYSTEM = "You answer with the tools you are given. Call a tool whenever one fits."
PROBE_QUESTION = "What time is it in UTC? Use the get_time tool."
PROBE_RESULT = '{"zone": "UTC", "time": "12:00"}'
PROBE_MAX_TOKENS = 1024  # room for a thinking model's reasoning before its call
ADVICE = (
    "Dayflow needs a model that calls tools: a tool-capable instruction model of 7-8B or more "
    "such as qwen3:8b, llama3.1:8b or gpt-oss:20b (`ollama pull NAME`); smaller ones often "
    "skip tools or loop"
)
# The same findings at a Claude endpoint (the Anthropic provider): no local server to fix.
CLAUDE_ADVICE = (
    "every Claude model calls tools: check that ANTHROPIC_BASE_URL (when set) is the Messages "
    "API or a gateway that passes tools through"
)
CLAUDE_CHECK = "check the model name (`claude-haiku-5-5`, say), the key and ANTHROPIC_BASE_URL"


@dataclass(frozen=True)
class Check:
    """One line of the probe's report."""

    ok: bool | None  # None: not checked (the server has no such endpoint)
    what: str
    detail: str


@dataclass(frozen=True)
class Report:
    """What the probe found; `tools_work` is what a brief needs. (Dataclasses: only `doctor
    --model` imports this module.)"""

    checks: tuple[Check, ...]
    tools_work: bool
    calls: int
    seconds: float  # total over the calls
    advice: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "tools_work": self.tools_work,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "seconds_per_call": round(self.seconds / self.calls, 3) if self.calls else None,
            "checks": [{"ok": c.ok, "check": c.what, "detail": c.detail} for c in self.checks],
            "advice": self.advice,
        }


def probe(
    client: ModelClient,
    model: str,
    *,
    list_models: Callable[[], list[str] | None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    local: bool = True,
) -> Report:
    """Ask `model` one question that needs the probe tool, send the tool's result back, and
    report what happened. Never raises ModelError: an unreachable server is a finding. The
    advice is for a local server (Ollama's commands) unless `local` is False (Claude)."""
    advice = ADVICE if local else CLAUDE_ADVICE
    checks: list[Check] = []
    calls, seconds = 0, 0.0

    def ask(messages: list[Message]) -> ModelResponse:
        nonlocal calls, seconds
        request = ModelRequest(model, PROBE_SYSTEM, [PROBE_TOOL], messages, PROBE_MAX_TOKENS)
        started = clock()
        try:
            return turns.settle(client.create(request), PROBE_MAX_TOKENS)
        finally:
            calls += 1
            seconds += clock() - started

    def done(ok: bool, advice: str | None = None) -> Report:
        return Report(tuple(checks), ok, calls, seconds, advice)

    listed: Check | None = None
    if list_models is not None:
        try:
            served = list_models()
        except ModelError as exc:
            checks.append(Check(False, "reachable", str(exc)))
            start = "start the server (`ollama serve`, `llama-server -m ...`)"
            return done(False, start if local else CLAUDE_CHECK)
        listed = _listed(model, served)
    question: list[Message] = [{"role": "user", "content": PROBE_QUESTION}]
    try:
        first = ask(question)
    except ModelError as exc:
        reachable = exc.status is not None  # the server answered, with an error
        checks.append(
            Check(reachable, "reachable", "the server answered" if reachable else str(exc))
        )
        checks += [listed] if listed is not None else []
        if reachable:
            checks.append(Check(False, "model answered", str(exc)))
        check = "check the model name (`ollama list`) and the base URL"
        return done(False, check if local else CLAUDE_CHECK)
    checks.append(Check(True, "reachable", f"answered in {seconds:.1f} s"))
    checks += [listed] if listed is not None else []
    uses = [b for b in first.content if b.get("type") == "tool_use"]
    said = turns.reinterpreted(first.stop_details)
    stop = first.stop_reason + (f" ({said})" if said else "")
    refused = _bad_tool_call(first, uses, stop)
    if refused:
        checks += refused
        return done(False, advice)
    args: dict[str, Any] = uses[0]["input"]  # checked above: a dict with a zone
    checks.append(Check(True, "tool call", f"get_time({_args(args)}), stop_reason {stop}"))
    checks.append(_usage(first))
    back: list[Message] = [
        *question,
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": u["id"], "content": PROBE_RESULT}
                for u in uses
            ],
        },
    ]
    try:
        second = ask(back)
    except ModelError as exc:
        checks.append(Check(False, "tool result read back", str(exc)))
        return done(False, advice)
    read_back = _read_back(second)
    checks.append(read_back)
    return done(bool(read_back.ok), None if read_back.ok else advice)


def _bad_tool_call(first: ModelResponse, uses: list[dict[str, Any]], stop: str) -> list[Check]:
    """What is wrong with the first answer's tool call (the failing checks), or nothing."""
    checks: list[Check] = []
    if first.stop_reason == "max_tokens":
        checks.append(Check(False, "tool call", f"the answer was cut short: {stop}"))
        return checks
    if not uses:
        text = " ".join(b.get("text", "") for b in first.content if b.get("type") == "text")
        detail = f"none: it answered in text (stop_reason {stop})"
        if text.strip():
            detail += f": {text.strip()[:80]!r}"
        checks.append(Check(False, "tool call", detail))
        checks.append(_usage(first))
        return checks
    use = uses[0]
    args = use.get("input")
    if use.get("name") != PROBE_TOOL["name"]:
        checks.append(Check(False, "tool call", f"called an unknown tool {use.get('name')!r}"))
        return checks
    if not isinstance(args, dict) or not args.get("zone"):
        checks.append(
            Check(
                False,
                "tool call",
                f"get_time with no usable arguments ({args!r}; arguments that were not valid "
                f"JSON arrive as {{}}), stop_reason {stop}",
            )
        )
        return checks
    return checks


def _read_back(second: ModelResponse) -> Check:
    """Whether the model answered in text once it had the tool's result."""
    text = " ".join(b.get("text", "") for b in second.content if b.get("type") == "text").strip()
    said = turns.reinterpreted(second.stop_details)
    stop = second.stop_reason + (f" ({said})" if said else "")
    read_back = second.stop_reason == "end_turn" and bool(text)
    if read_back:
        detail = f"answered {text[:60]!r}, stop_reason {stop}"
    elif second.stop_reason == "tool_use":
        detail = f"called a tool again instead of answering (stop_reason {stop}): it may loop"
    else:
        detail = f"no answer text (stop_reason {stop})"
    return Check(read_back, "tool result read back", detail)


def _listed(model: str, served: list[str] | None) -> Check:
    if served is None:
        return Check(None, "model listed", "the server has no /v1/models: not checked")
    names = ", ".join(served[:8]) + (f" and {len(served) - 8} more" if len(served) > 8 else "")
    found = model in served or f"{model}:latest" in served
    detail = f"{len(served)} model(s) served: {names or 'none'}"
    if not found:
        detail = f"{model} is not among them: {detail} (`ollama pull {model}`)"
    return Check(found, "model listed", detail)


def _usage(response: ModelResponse) -> Check:
    u = response.usage
    if u.input_tokens > 0 and u.output_tokens > 0:
        return Check(True, "usage", f"{u.total_input} in / {u.output_tokens} out")
    return Check(
        None, "usage", "the server reported no token counts: runs will count 0 tokens for it"
    )


def _args(args: dict[str, Any]) -> str:
    import json

    return json.dumps(args, ensure_ascii=False)[:80]
