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
                    "evidence": "Could you send me your edits on the partnership one-pager",
                },
            ),
            tool_use(
                "create_task",
                {
                    "title": "Return permission form",
                    "idempotency_key": "sample:m02",
                    "source_id": "sample:m02",
                    "evidence": "please sign and return the field trip permission form",
                },
            ),
            usage=(2758, 535),
        ),
        turn(
            text("## Today\n- 13:00 Staff sync\n\n## One thing\n**Send edits to Sam.**"),
            usage=(3406, 582),
        ),
    ]


def forgetful_filer(ids_wanted: int = 2) -> Callable[[ModelRequest], ModelResponse]:
    """A model (a pure function of the request, so a resumed process gets the same answers)
    that keeps only the message ids across a compaction, never their keys: it lists the
    inbox, opens `ids_wanted` + 1 messages one a turn, and once the listing is compacted away
    files from the ids alone: the first message's two requests by `source_id` (the second as
    `#2`), the second's with a key it made up, then, told the right key, by `source_id` again;
    then it writes the brief."""
    import re

    from dayflow.compaction import LABEL, is_summary

    def ids_in(messages: list[dict[str, Any]]) -> list[str]:
        for message in messages:
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    body = block.get("content")
                    if isinstance(body, str) and body.startswith('{"messages"'):
                        import json

                        return [m["id"] for m in json.loads(body)["messages"]]
            if is_summary(message):
                line = next(ln for ln in message["content"][0]["text"].splitlines()
                            if ": read_inbox(" in ln)  # fmt: skip
                listed = line.split(" messages: ", 1)[1]
                return [item.split(" ", 1)[0] for item in listed.split("; ")]  # ids only
        raise AssertionError("no listing and no summary of one")

    def said(message_id: str) -> str:
        # The ask it kept with the id (tests/test_compaction's long inbox: "Could you do
        # thing 1 by Friday?" in inbox:m1).
        return f"Could you do thing {message_id.rsplit('m', 1)[-1]} by Friday?"

    def step_of(messages: list[dict[str, Any]]) -> int:
        done = 0
        if len(messages) > 1 and is_summary(messages[1]):
            text_ = messages[1]["content"][0]["text"]
            done = max(int(n) for n in re.findall(r"^- step (\d+)", text_, re.MULTILINE))
        return done + sum(1 for m in messages if m["role"] == "assistant") + 1

    def respond(request: ModelRequest) -> ModelResponse:
        messages = request.messages
        step = step_of(messages)
        if step == 1:
            return turn(tool_use("read_inbox", {"limit": 50}, "toolu_fg1"))
        ids = ids_in(messages)
        if step <= ids_wanted + 2:
            return turn(tool_use("read_message", {"id": ids[step - 2]}, f"toolu_fg{step}"))
        compacted = is_summary(messages[1]) and LABEL in messages[1]["content"][0]["text"]
        assert compacted and not any(
            isinstance(b, dict) and str(b.get("content", "")).startswith('{"messages"')
            for m in messages[2:]
            for b in (m["content"] if isinstance(m["content"], list) else [])
        ), "the listing is still in view: nothing was forgotten"
        if step == ids_wanted + 3:
            first, second = ids[0], ids[1]
            return turn(
                tool_use("create_task", {"title": "Do the first thing", "source_id": first,
                                         "evidence": said(first)}, f"toolu_fg{step}a"),
                tool_use("create_task", {"title": "Do the second thing", "source_id": first,
                                         "idempotency_key": "#2", "evidence": said(first)},
                         f"toolu_fg{step}b"),
                tool_use("create_task", {"title": "Answer the other", "source_id": second,
                                         "idempotency_key": "mail:000000000000",
                                         "evidence": said(second)}, f"toolu_fg{step}c"),
            )  # fmt: skip
        if step == ids_wanted + 4:
            return turn(
                tool_use("create_task", {"title": "Answer the other", "source_id": ids[1],
                                         "evidence": said(ids[1])}, f"toolu_fg{step}"),
            )  # fmt: skip
        return turn(text("## Today\nNothing on the calendar.\n\n## One thing\n**Do it.**"))

    return respond


class NoTasks:
    """A task book with no task in it, for the read tools' tests: `filed_at` finds nothing."""

    def filed_at(self, keys: list[str]) -> dict[str, Any]:
        return {}
