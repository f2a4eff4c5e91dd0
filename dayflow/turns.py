"""What a model's turn means, whoever served it: the loop reads every answer through `settle`.

Claude says what it did in `stop_reason`; servers that only imitate the Messages API (Ollama,
llama.cpp's `llama-server`, vLLM, LM Studio, the LiteLLM proxy in front of them) do not always.
LiteLLM's Ollama path reports a tool turn as `end_turn`, and an answer cut off at `max_tokens`
as `end_turn` too; some servers add empty text blocks beside tool calls, or leave
`stop_reason` out. Read literally, the first would print "Let me check." as the brief, the
second would deliver half a brief as if it were whole.

So before a response is written as a step, `settle` turns it into what it means:

- a text block that is empty or only whitespace is dropped (it says nothing, and the Messages
  API refuses one sent back, so the stored turn and the next request stay the same value);
- `end_turn` (or no stop reason) with `output_tokens` at the request's `max_tokens` is a turn
  cut short: `max_tokens` (resumable, never delivered);
- `end_turn`, `stop_sequence` or no stop reason on a turn holding tool_use blocks is a tool
  turn: `tool_use`, so its tools run;
- no stop reason otherwise is `end_turn`.

What the server said is kept in the step's `stop_details` (`reported_stop_reason`, `why`), so
`show` can tell an answer read differently from one taken as sent.
"""

from __future__ import annotations

from typing import Any

from dayflow.frozen import replace
from dayflow.models import Block, ModelResponse

# The tools that read the user's world: a brief that called none of them is not grounded.
READ_TOOLS = frozenset(
    {"read_inbox", "read_message", "read_calendar", "read_tasks", "read_followups"}
)
_ENDS = ("end_turn", "stop_sequence", "")


def settle(response: ModelResponse, max_tokens: int) -> ModelResponse:
    """`response` as the loop must read it (see the module docstring); the same object when
    nothing needs reading differently."""
    content = [b for b in response.content if not is_blank_text(b)]
    reported = response.stop_reason or ""
    stop, why = reported, None
    if reported in _ENDS and max_tokens > 0 and response.usage.output_tokens >= max_tokens:
        stop = "max_tokens"
        why = f"output_tokens {response.usage.output_tokens} reached max_tokens {max_tokens}"
    elif reported in _ENDS and any(b.get("type") == "tool_use" for b in content):
        stop, why = "tool_use", "the turn holds tool_use blocks"
    elif not reported:
        stop, why = "end_turn", "the server gave no stop_reason"
    if stop == reported and len(content) == len(response.content):
        return response
    details = response.stop_details
    if stop != reported:
        details = {**(details or {}), "reported_stop_reason": reported or None, "why": why}
    return replace(response, content=content, stop_reason=stop, stop_details=details)


def is_blank_text(block: Block) -> bool:
    """A text block with nothing but whitespace in it."""
    return block.get("type") == "text" and not str(block.get("text") or "").strip()


def calls_a_read(assistant: list[dict[str, Any]]) -> bool:
    """Whether an assistant turn calls one of the tools that read the user's world."""
    return any(b.get("type") == "tool_use" and b.get("name") in READ_TOOLS for b in assistant)


def reinterpreted(details: dict[str, Any] | None) -> str | None:
    """What the server said when its stop_reason was read differently, for a step line."""
    if not details or "reported_stop_reason" not in details:
        return None
    said = details.get("reported_stop_reason") or "no stop_reason"
    return f"server said {said}: {details.get('why')}"
