"""A scripted model for tests: a queue of turns (or a function of the request) that records
every request it is sent, as pydantic-ai's TestModel/FunctionModel do."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from typing import Any

from dayflow.models import ModelRequest, ModelResponse, Usage

_ids = itertools.count(1)


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(name: str, args: Any, use_id: str | None = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": use_id or f"toolu_s{next(_ids):04d}",
        "name": name,
        "input": args,
    }


def turn(
    *blocks: dict[str, Any],
    stop: str | None = None,
    usage: tuple[int, int] = (100, 20),
    cache: tuple[int, int] = (0, 0),
) -> ModelResponse:
    """A response; stop_reason defaults to tool_use when a tool_use block is present."""
    if stop is None:
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return ModelResponse(
        content=list(blocks),
        stop_reason=stop,
        usage=Usage(usage[0], usage[1], cache[0], cache[1]),
        model="scripted",
        request_id=f"req_{next(_ids):04d}",
    )


class ScriptedModel:
    """Returns the queued turns in order and records each request (deep-copied)."""

    def __init__(
        self,
        turns: list[ModelResponse] | None = None,
        fn: Callable[[ModelRequest], ModelResponse] | None = None,
    ) -> None:
        self.turns = list(turns or [])
        self.fn = fn
        self.requests: list[ModelRequest] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    def create(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(copy.deepcopy(request))
        if self.fn is not None:
            return self.fn(request)
        if not self.turns:
            raise AssertionError("the scripted model was called more times than scripted")
        return self.turns.pop(0)

    def count_tokens(self, request: ModelRequest) -> int | None:
        return None


def seed_turns() -> list[ModelResponse]:
    """The three turns of the seed scenario: read everything, create two tasks, write the brief."""
    return [
        turn(
            text("Let me check."),
            tool_use("read_inbox", {"limit": 20}),
            tool_use("read_calendar", {"range": "today"}),
            tool_use("read_calendar", {"range": "week"}),
            tool_use("read_tasks", {"include_done": False}),
            usage=(1200, 180),
        ),
        turn(
            tool_use(
                "create_task",
                {
                    "title": "Send edits to Sam",
                    "idempotency_key": "sample:m12",
                    "due": "2026-11-05",
                    "source_id": "sample:m12",
                },
            ),
            tool_use(
                "create_task",
                {
                    "title": "Return permission form",
                    "idempotency_key": "sample:m02",
                    "source_id": "sample:m02",
                },
            ),
            usage=(2758, 535),
        ),
        turn(
            text("## Today\n- 13:00 Staff sync\n\n## One thing\n**Send edits to Sam.**"),
            usage=(3406, 582),
        ),
    ]
