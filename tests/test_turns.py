"""`dayflow.turns.settle`: an answer read as what it means, whoever served it."""

from __future__ import annotations

from dayflow.models import ModelResponse, Usage
from dayflow.turns import calls_a_read, reinterpreted, settle

USE = {"type": "tool_use", "id": "call_1", "name": "read_inbox", "input": {"limit": 5}}


def answer(*content: dict, stop: str = "end_turn", out: int = 20) -> ModelResponse:
    return ModelResponse(list(content), stop, Usage(100, out), "qwen3:8b")


def test_an_answer_as_the_api_sends_it_is_left_as_it_is() -> None:
    for response in (answer({"type": "text", "text": "hi"}), answer(USE, stop="tool_use")):
        assert settle(response, 4096) is response


def test_a_tool_turn_said_to_be_end_turn_or_stop_sequence_or_nothing_is_a_tool_turn() -> None:
    for said in ("end_turn", "stop_sequence", ""):
        read = settle(answer(USE, stop=said), 4096)
        assert read.stop_reason == "tool_use"
        assert read.stop_details == {
            "reported_stop_reason": said or None,
            "why": "the turn holds tool_use blocks",
        }
        assert reinterpreted(read.stop_details) is not None


def test_end_turn_at_max_tokens_is_cut_short_even_with_tool_use_blocks() -> None:
    """A cut tool call may have lost its arguments: never run it."""
    read = settle(answer(USE, out=300), 300)
    assert read.stop_reason == "max_tokens"
    assert "reached max_tokens 300" in read.stop_details["why"]  # type: ignore[index]
    assert settle(answer(USE, stop="tool_use", out=300), 300).stop_reason == "tool_use"


def test_no_stop_reason_on_a_text_answer_is_end_turn() -> None:
    assert (
        settle(answer({"type": "text", "text": "brief"}, stop=""), 4096).stop_reason == "end_turn"
    )


def test_blank_text_blocks_are_dropped_and_a_refusals_details_are_kept() -> None:
    read = settle(answer({"type": "text", "text": " \n\t"}, USE, {"type": "text", "text": ""}), 99)
    assert read.content == [USE] and read.stop_reason == "tool_use"
    refusal = ModelResponse([], "refusal", Usage(), "m", stop_details={"category": "cyber"})
    assert settle(refusal, 99).stop_details == {"category": "cyber"}


def test_only_the_read_tools_ground_a_brief() -> None:
    assert calls_a_read([USE])
    assert not calls_a_read([{**USE, "name": "create_task"}, {"type": "text", "text": "x"}])
