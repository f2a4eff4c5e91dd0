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

Before any of that, `settle` refuses (ModelError, exit 6; the run fails resumably and nothing
of the answer is written) a turn no Messages API server sends, because once committed it
would be read back by every `resume`, `show` and `doctor` (`answer_problem` says what is
wrong, and `doctor` asks the same of the steps already stored):

- a block that is not an object with a string `type`; a `text` block whose `text` is not a
  string; a `tool_use` block without a non-empty string `id` (unique in the turn and in the
  run: the API pairs each tool_result with it and the saved effects are keyed by it), a
  non-empty string `name`, or an object `input` (an id of more than `MAX_TOOL_USE_ID`
  characters is no server's either); a `thinking` block without string `thinking`
  and `signature`; a `redacted_thinking` block without string `data`;
- a block nested more than `MAX_NESTING` levels deep (no tool's input needs it, and Python's
  JSON reader gives up near 1,000 levels, so it could be written but never read back);
- an answer of more than `MAX_CHARS_PER_TOKEN` characters (text, keys and values, summed) per
  token of the request's `max_tokens`: 131,072 for the default 4,096. A token is about 4
  characters of prose, fewer of code; 32 is far past anything a server that obeyed
  `max_tokens` can send, so what passes it is not a model's answer (100 MB of text would
  otherwise be the brief, and three copies of it the database).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from dayflow.errors import ModelError, StoreError
from dayflow.frozen import replace
from dayflow.models import DISCARDED, Block, ModelResponse, Run, Step
from dayflow.store.values import DEFAULT_PROFILE, command_hint

# The tools that read the user's world: a brief that called none of them is not grounded.
READ_TOOLS = frozenset(
    {"read_inbox", "read_message", "read_calendar", "read_tasks", "read_followups"}
)
_ENDS = ("end_turn", "stop_sequence", "")
MAX_NESTING = 64  # levels of objects and lists in one block, the block itself being 1
MAX_CHARS_PER_TOKEN = 32  # an answer longer than this per max_tokens token is refused
# A tool_use id longer than this is no server's (the API's are ~30 characters, a local
# server's `call_<hex>` fewer): it would be stored, sent back and keyed on in every step after.
MAX_TOOL_USE_ID = 256
# The fields each block type must have, and their JSON type (the Messages API's shapes).
_REQUIRED: dict[str, tuple[tuple[str, type], ...]] = {
    "text": (("text", str),),
    "tool_use": (("id", str), ("name", str), ("input", dict)),
    "thinking": (("thinking", str), ("signature", str)),
    "redacted_thinking": (("data", str),),
}


def settle(
    response: ModelResponse,
    max_tokens: int,
    *,
    used_ids: Collection[str] = (),
    step: int | None = None,
) -> ModelResponse:
    """`response` as the loop must read it (see the module docstring); the same object when
    nothing needs reading differently. An answer no server sends (`answer_problem`, with
    `used_ids` the tool_use ids of the run's earlier steps) is a ModelError naming `step`."""
    problem = answer_problem(response.content, max_tokens, used_ids)
    if problem is not None:
        at = f" at step {step}" if step is not None else ""
        raise ModelError(
            f"the model's answer{at} was refused, not written: {problem}",
            request_id=response.request_id,
        )
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
    """A text block with nothing but whitespace in it (or a null text, as some servers send
    beside a tool call)."""
    if block.get("type") != "text":
        return False
    text = block.get("text")
    return text is None or (isinstance(text, str) and not text.strip())


def answer_problem(
    content: Any, max_tokens: int | None = None, used_ids: Collection[str] = ()
) -> str | None:
    """What makes `content` (an assistant turn's blocks) a turn no Messages API server sends,
    in a few words naming the block; None when it is a good one. `max_tokens` (when given)
    bounds its size, and a tool_use id in `used_ids` (the run's earlier ids) is a repeat."""
    if not isinstance(content, list):
        return f"its content is {_kind(content)}, not a list of blocks"
    chars, seen = 0, set(used_ids)
    for i, block in enumerate(content, 1):
        depth, size = _measure(block)
        chars += size
        if depth > MAX_NESTING:
            return f"block {i} is nested more than {MAX_NESTING} levels deep"
        problem = _block_problem(block, seen)
        if problem is not None:
            return f"block {i} {problem}"
    bound = max_tokens * MAX_CHARS_PER_TOKEN if max_tokens is not None and max_tokens > 0 else 0
    if bound and chars > bound:
        return (
            f"it is {chars:,} characters long, far past what max_tokens {max_tokens:,} allows "
            f"(at most {MAX_CHARS_PER_TOKEN} characters a token: {bound:,})"
        )
    return None


def _block_problem(block: Any, seen: set[str]) -> str | None:
    """What is wrong with one block (its required fields, a repeated tool_use id), or None."""
    if not isinstance(block, dict):
        return f"is {_kind(block)}, not an object"
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        return f"has no type (type is {_kind(kind)})"
    if kind == "text" and block.get("text") is None and "text" in block:
        return None  # a null text is read as blank (`is_blank_text`) and dropped
    for name, want in _REQUIRED.get(kind, ()):
        value = block.get(name)
        if name not in block:
            return f"({kind}) has no {name}"
        named = name in ("id", "name")
        if not isinstance(value, want) or (named and not value):
            word = "a non-empty string" if named else _WORDS[want]
            return f"({kind}) has {name} {_shown(value)}, not {word}"
    if kind == "tool_use":
        use_id = block["id"]
        if len(use_id) > MAX_TOOL_USE_ID:
            return (
                f"(tool_use) has an id of {len(use_id):,} characters "
                f"(at most {MAX_TOOL_USE_ID}): {_shown(use_id)}"
            )
        if use_id in seen:
            return f"(tool_use) repeats the id {_shown(use_id)} of an earlier tool_use"
        seen.add(use_id)
    return None


_WORDS: dict[type, str] = {str: "a string", dict: "an object"}


def _measure(value: Any) -> tuple[int, int]:
    """(the nesting depth, the characters of the strings, keys included) of a JSON value,
    without recursion: a value 200,000 levels deep is measured, not a RecursionError."""
    depth, chars = 0, 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            depth = max(depth, level)
            if level > MAX_NESTING:
                continue  # deep enough to be refused: its size no longer matters
            chars += sum(len(k) if isinstance(k, str) else 1 for k in item)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            depth = max(depth, level)
            if level > MAX_NESTING:
                continue
            stack.extend((v, level + 1) for v in item)
        elif isinstance(item, str):
            chars += len(item)
        else:
            chars += 1
    return depth, chars


def _kind(value: Any) -> str:
    return "missing" if value is None else f"a {type(value).__name__}"


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def unreadable_steps(steps: Iterable[Step]) -> list[tuple[int, str]]:
    """(n, problem) of each stored step whose answer `answer_problem` refuses (written before
    answers were checked, or by hand): `show` and `resume` cannot read such a step and `doctor`
    names it. A tool_use id repeated from an earlier kept step is one such problem too."""
    found, used = [], set[str]()
    for step in steps:
        problem = answer_problem(step.assistant, None, used)
        if problem is not None:
            found.append((step.n, problem))
        elif step.state != DISCARDED:  # a discarded turn was never sent, its tools never ran
            used |= tool_use_ids([step.assistant])
    return found


def refuse_unreadable(run: Run, steps: Iterable[Step], profile: str = DEFAULT_PROFILE) -> None:
    """Raise StoreError (exit 4, one line) naming the first step of `run` that cannot be read,
    with the commands that find and get round it; nothing when every step is good, or when gc
    pruned the run (its steps are skeletons, read as such)."""
    if run.pruned_at:
        return
    run_id = run.id
    bad = unreadable_steps(steps)
    if not bad:
        return
    n, problem = bad[0]
    doctor = command_hint(profile, "doctor")
    fork = command_hint(profile, "fork", run_id, "--from-step", n - 1)
    raise StoreError(
        f"run {run_id} step {n} holds an answer that cannot be read: {problem}; `{doctor}` "
        f"lists such steps, `{fork}` continues without it"
    )


def tool_use_ids(turns: Iterable[list[Block]]) -> set[str]:
    """The string tool_use ids of these assistant turns (a run's earlier steps)."""
    return {
        b["id"]
        for turn in turns
        for b in turn
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    }


def calls_a_read(assistant: list[dict[str, Any]]) -> bool:
    """Whether an assistant turn calls one of the tools that read the user's world."""
    return any(b.get("type") == "tool_use" and b.get("name") in READ_TOOLS for b in assistant)


def reinterpreted(details: dict[str, Any] | None) -> str | None:
    """What the server said when its stop_reason was read differently, for a step line."""
    if not details or "reported_stop_reason" not in details:
        return None
    said = details.get("reported_stop_reason") or "no stop_reason"
    return f"server said {said}: {details.get('why')}"
