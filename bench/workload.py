"""The standard workload: N steps of one assistant turn and one user turn of tool results.

Each step is one assistant turn (a short text block and 1-4 `tool_use` blocks with small JSON
inputs) and one user turn of the matching `tool_result` blocks, whose content is a JSON payload
of about 200 B, 2 KB or 20 KB (50/35/15%), with token counts. Everything comes from one seeded
`random.Random`, so every contender and every run stores byte-identical steps.

The calls are `read_message` calls, and each payload has the shape Dayflow's `read_message` tool
returns, so the same assistant turns can drive Dayflow's real loop (see `persist.loop_sources`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from typing import Any

SEED = 20261105
# (size class, target payload bytes, weight)
SIZES = (("s", 200, 0.50), ("m", 2_000, 0.35), ("l", 20_000, 0.15))
USER_MSG = {"role": "user", "content": "Prepare my daily brief for Thursday 2026-11-05."}
_WORDS = (
    "brief budget calendar draft edits form invoice meeting minutes notes offsite partner "
    "plan quarter review roadmap sam schedule slides staff sync team thursday update vendor"
).split()


def dumps(value: Any) -> str:
    """Compact JSON, the form every contender stores."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Step:
    n: int
    assistant: list[dict[str, Any]]  # text + tool_use blocks
    results: list[dict[str, Any]]  # the matching tool_result blocks
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int

    def messages(self) -> list[dict[str, Any]]:
        """The step as two Messages API turns."""
        return [
            {"role": "assistant", "content": self.assistant},
            {"role": "user", "content": self.results},
        ]

    def row(self, run_id: str = "run") -> tuple[Any, ...]:
        """The step as the raw-floor contenders store it: one row of a `steps` table."""
        return (
            run_id,
            self.n,
            dumps(self.assistant),
            dumps(self.results),
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
        )

    def raw_bytes(self) -> int:
        """The step's size as compact JSON: the assistant blocks plus the tool results."""
        return len(dumps(self.assistant).encode()) + len(dumps(self.results).encode())


def payload(rng: random.Random, message_id: str, size: int) -> str:
    """A `read_message` result of about `size` bytes of JSON."""
    message = {
        "id": message_id,
        "from": "Sam Okafor <sam@example.com>",
        "subject": " ".join(rng.choices(_WORDS, k=4)),
        "received_at": "2026-11-04T16:12:00+00:00",
        "thread_id": None,
        "unread": True,
        "body": "",
    }
    room = max(size - len(dumps({"message": message})), 0)
    body = " ".join(rng.choices(_WORDS, k=room // 4 + 8))
    message["body"] = body[:room]
    return dumps({"message": message})


@cache
def steps(count: int, seed: int = SEED) -> tuple[Step, ...]:
    """The first `count` steps of the workload (`steps(40)` is `steps(1000)[:40]`)."""
    rng = random.Random(seed)
    out: list[Step] = []
    context = len(dumps(USER_MSG)) + 6_000  # the system prompt and tools, as the loop sends them
    for n in range(1, count + 1):
        calls = rng.randint(1, 4)
        classes = rng.choices([c for c, _, _ in SIZES], weights=[w for _, _, w in SIZES], k=calls)
        uses = [
            {
                "type": "tool_use",
                "id": f"toolu_{n:05d}_{i}",
                "name": "read_message",
                "input": {"id": f"msg-{c}"},
            }
            for i, c in enumerate(classes)
        ]
        sizes = {c: size for c, size, _ in SIZES}
        results = [
            {
                "type": "tool_result",
                "tool_use_id": use["id"],
                "content": payload(rng, use["input"]["id"], sizes[c]),
            }
            for use, c in zip(uses, classes, strict=True)
        ]
        text = {"type": "text", "text": f"Reading {calls} message(s) for step {n}."}
        assistant = [text, *uses]
        out_chars = len(dumps(assistant))
        new_chars = out_chars + len(dumps(results))
        out.append(
            Step(
                n=n,
                assistant=assistant,
                results=results,
                input_tokens=max(1, new_chars // 4),
                output_tokens=max(1, out_chars // 4),
                cache_read_tokens=context // 4,
            )
        )
        context += new_chars
    return tuple(out)


def mix(workload: tuple[Step, ...]) -> dict[str, float]:
    """The share of each payload size class in `workload`, as a check of the generator."""
    counts: dict[str, int] = {c: 0 for c, _, _ in SIZES}
    for step in workload:
        for use in step.assistant[1:]:
            counts[use["input"]["id"].removeprefix("msg-")] += 1
    total = sum(counts.values())
    return {c: k / total for c, k in counts.items()}
