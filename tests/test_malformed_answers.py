"""Issue 32, items 10, 11 and 16: an answer no Messages API server sends is refused before it is
written (one line, exit 6, the run failed and resumable), and a step that was written before
this check (or by hand) is named by `doctor` and read by `show` and `resume` as one line.

What is refused (`dayflow.turns.answer_problem`): a block that is not an object with a string
type; a tool_use without a non-empty string id (unique in the turn and the run), a string name
or an object input; a text that is not a string; a thinking block without its thinking and
signature, a redacted_thinking without its data; a block nested over 64 levels; an answer of
more than 32 characters per max_tokens token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import ModelError
from dayflow.models import ModelResponse, Usage
from dayflow.turns import MAX_CHARS_PER_TOKEN, MAX_NESTING, answer_problem, settle
from tests import fakeapi
from tests.conftest import Db, db_rows
from tests.harness import invoke
from tests.scripted import ScriptedModel, text, tool_use, turn

DATE = "2026-11-05"
GOOD = {"type": "tool_use", "id": "toolu_1", "name": "read_inbox", "input": {"limit": 5}}


def nested(depth: int) -> Any:
    """A JSON list `depth` levels deep, built without recursion."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


# --- what is refused, at the boundary every answer crosses ----------------------------------


@pytest.mark.parametrize(
    ("blocks", "said"),
    [
        ([{k: v for k, v in GOOD.items() if k != "id"}], "block 1 (tool_use) has no id"),
        ([{**GOOD, "id": 7}], "block 1 (tool_use) has id 7, not a non-empty string"),
        ([{**GOOD, "id": ""}], "has id '', not a non-empty string"),
        ([{**GOOD, "id": None}], "has id null, not a non-empty string"),
        ([{**GOOD, "id": "x" * 100_000}], "(tool_use) has an id of 100,000 characters (at most"),
        ([GOOD, {**GOOD, "name": "read_tasks"}], "block 2 (tool_use) repeats the id 'toolu_1'"),
        ([{**GOOD, "name": 3}], "has name 3, not a non-empty string"),
        ([{k: v for k, v in GOOD.items() if k != "name"}], "(tool_use) has no name"),
        ([{**GOOD, "input": [1, 2]}], "has input [1, 2], not an object"),
        ([{**GOOD, "input": "{}"}], "has input '{}', not an object"),
        ([{k: v for k, v in GOOD.items() if k != "input"}], "(tool_use) has no input"),
        ([{"type": "text", "text": 5}], "block 1 (text) has text 5, not a string"),
        ([{"type": "text"}], "block 1 (text) has no text"),
        ([{"type": "thinking", "thinking": "hm"}], "(thinking) has no signature"),
        ([{"type": "redacted_thinking"}], "(redacted_thinking) has no data"),
        (["hello"], "block 1 is a str, not an object"),
        ([{"text": "hi"}], "block 1 has no type"),
        ([{"type": 4, "text": "hi"}], "block 1 has no type (type is a int)"),
        ([{**GOOD, "input": {"x": nested(MAX_NESTING)}}], "nested more than 64 levels deep"),
        ([{**GOOD, "input": {"x": nested(200_000)}}], "nested more than 64 levels deep"),
    ],
)
def test_an_answer_no_server_sends_is_refused_naming_the_block(
    blocks: list[Any], said: str
) -> None:
    response = ModelResponse(blocks, "tool_use", Usage(10, 10), "m", request_id="req_9")
    with pytest.raises(ModelError) as caught:
        settle(response, 4096, step=3)
    message = str(caught.value)
    assert message.startswith("the model's answer at step 3 was refused, not written: ")
    assert said in message and "\n" not in message
    assert caught.value.exit_code == 6 and caught.value.request_id == "req_9"
    assert not caught.value.retryable


def test_a_tool_use_id_of_an_earlier_step_is_refused() -> None:
    """The saved effects are keyed by (run, tool_use id): a repeat would collide with them."""
    assert answer_problem([GOOD], 4096, used_ids={"toolu_1"}) == (
        "block 1 (tool_use) repeats the id 'toolu_1' of an earlier tool_use"
    )
    assert answer_problem([GOOD], 4096, used_ids={"toolu_0"}) is None


def test_good_answers_pass_and_a_null_text_beside_a_tool_call_is_dropped() -> None:
    thinking = {"type": "thinking", "thinking": "hm", "signature": "sig"}
    server = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}
    good = [thinking, {"type": "redacted_thinking", "data": "x"}, text("hi"), GOOD, server]
    assert answer_problem(good, 4096) is None
    assert answer_problem([{**GOOD, "input": {"x": nested(MAX_NESTING - 2)}}], 4096) is None
    read = settle(ModelResponse([{"type": "text", "text": None}, GOOD], "", Usage(), "m"), 99)
    assert read.content == [GOOD] and read.stop_reason == "tool_use"


def test_an_answer_far_past_max_tokens_is_refused_and_one_within_it_is_not() -> None:
    """Every string of the answer counts, its keys and its type names too ("type", "text",
    "text": 12 characters here)."""
    bound = 4096 * MAX_CHARS_PER_TOKEN
    assert answer_problem([text("x" * (bound - 12))], 4096) is None
    problem = answer_problem([text("x" * (bound - 11))], 4096)
    assert problem == (
        f"it is {bound + 1:,} characters long, far past what max_tokens 4,096 allows "
        f"(at most {MAX_CHARS_PER_TOKEN} characters a token: {bound:,})"
    )
    # A tool's input counts too (keys and values), and so do several blocks together.
    assert answer_problem([{**GOOD, "input": {"q": "y" * bound}}], 4096) is not None
    assert answer_problem([text("x" * (bound // 2 + 1))] * 2, 4096) is not None


# --- through the CLI: refused before it is written ------------------------------------------


def cli(db: Path | str, model: Any, *args: str) -> Any:
    return invoke(db, lambda name, settings: model, *args)


def test_a_tool_use_without_an_id_fails_the_run_resumably_and_writes_no_step(
    store_target: Path,
) -> None:
    """Today's main committed it, then every resume and show crashed with KeyError: 'id'."""
    bad = turn({"type": "tool_use", "name": "read_inbox", "input": {}}, stop="tool_use")
    res = cli(store_target, ScriptedModel([bad]), "brief", "--date", DATE, "--model", "scripted")
    assert res.code == 6, res.err
    (line,) = res.err.strip().splitlines()
    assert "failed: the model's answer at step 1 was refused, not written: " in line
    assert "block 1 (tool_use) has no id" in line and "resume" in line
    assert db_rows(store_target, "SELECT n FROM steps") == []
    (run,) = db_rows(store_target, "SELECT id, status FROM runs")
    assert run[1] == "failed"

    # Nothing of it is kept, so a resume simply asks again, and `show` reads the run.
    brief = "## Today\n- Nothing\n\n## One thing\n**Rest.**"
    good = ScriptedModel([turn(tool_use("read_inbox", {})), turn(text(brief))])
    again = cli(store_target, good, "resume", run[0])
    assert again.code == 0, again.err
    shown = cli(store_target, None, "show", run[0])
    assert shown.code == 0, shown.err


def test_a_repeated_tool_use_id_in_a_later_step_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "dayflow.db"
    first = turn(tool_use("read_inbox", {}, use_id="toolu_same"))
    second = turn(tool_use("create_task", {"title": "x", "source_id": "m1"}, use_id="toolu_same"))
    res = cli(db, ScriptedModel([first, second]), "brief", "--date", DATE, "--model", "scripted")
    assert res.code == 6, res.err
    assert "at step 2 was refused, not written: block 1 (tool_use) repeats the id" in res.err
    assert [r[0] for r in db_rows(db, "SELECT n FROM steps")] == [1]
    assert db_rows(db, "SELECT * FROM tool_effects") == []


def test_a_hundred_megabyte_answer_is_not_the_brief(tmp_path: Path) -> None:
    """Issue 32.16: an answer of any size was the brief (100 MB of text, a 315 MB database).
    Scaled down: 4 MB against the default max_tokens of 4,096 (131,072 characters allowed)."""
    db = tmp_path / "dayflow.db"
    model = ScriptedModel([turn(tool_use("read_inbox", {})), turn(text("spam " * 800_000))])
    res = cli(db, model, "brief", "--date", DATE, "--model", "scripted")
    assert res.code == 6, res.err
    assert "at step 2 was refused, not written: it is 4,000,012 characters long" in res.err
    assert db.stat().st_size < 1_000_000
    assert [r[0] for r in db_rows(db, "SELECT n FROM steps")] == [1]


# --- a poisoned step already in a database --------------------------------------------------


def poisoned(db: Path | str) -> str:
    """A finished two-step run whose first step's tool_use then loses its id (as today's main
    would have committed it, written here directly)."""
    brief = "## Today\n- Nothing\n\n## One thing\n**Rest.**"
    model = ScriptedModel([turn(tool_use("read_inbox", {})), turn(text(brief))])
    res = cli(db, model, "brief", "--date", DATE, "--model", "scripted")
    assert res.code == 0, res.err
    ((run_id,),) = db_rows(db, "SELECT id FROM runs")
    ((assistant,),) = db_rows(db, "SELECT assistant_json FROM steps WHERE n = 1")
    blocks = json.loads(assistant)
    del blocks[0]["id"]
    with Db(db) as raw:
        raw.run("UPDATE steps SET assistant_json = ? WHERE n = 1", json.dumps(blocks))
        raw.run("UPDATE runs SET status = 'failed', final_text = NULL")
    return str(run_id)


def test_doctor_names_a_poisoned_step_and_the_fork_that_repairs_it(store_target: Path) -> None:
    run_id = poisoned(store_target)
    res = cli(store_target, None, "doctor", "--json")
    report = json.loads(res.out)
    assert not report["healthy"] and res.code != 0
    (found,) = [f for f in report["findings"] if f["code"] == "malformed_step"]
    assert found["severity"] == "error"
    assert found["message"] == (
        f"run {run_id} step 1: block 1 (tool_use) has no id; `show` and `resume` cannot read it"
    )
    assert found["fix_command"] == f"dayflow fork {run_id} --from-step 0"
    plain = cli(store_target, None, "doctor")
    assert f"run {run_id} step 1: block 1 (tool_use) has no id" in plain.out + plain.err


@pytest.mark.parametrize("command", ["show", "resume"])
def test_show_and_resume_on_a_poisoned_step_are_one_line(store_target: Path, command: str) -> None:
    run_id = poisoned(store_target)
    res = cli(store_target, ScriptedModel([]), command, run_id)
    assert res.code == 4, res.err
    (line,) = res.err.strip().splitlines()
    assert line == (
        f"error: run {run_id} step 1 holds an answer that cannot be read: block 1 (tool_use) "
        f"has no id; `dayflow doctor` lists such steps, `dayflow fork {run_id} --from-step 0` "
        "continues without it"
    )


# --- through the real SDK: what a server sends that cannot be read --------------------------


def claude(api: fakeapi.FakeAPI, **kw: Any) -> Any:
    from dayflow.providers.anthropic import AnthropicClient

    return AnthropicClient(api_key="test", base_url=api.base_url, max_retries=0, **kw)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        # Past Python's JSON reader: it was a RecursionError traceback.
        (b"[" * 200_000 + b"]" * 200_000, "answered with JSON nested too deeply to read"),
        # Read and kept by the SDK, refused before the store.
        (
            b'[{"type": "tool_use", "id": "a", "name": "read_inbox", "input": {"x": '
            + b"[" * 100
            + b"]" * 100
            + b"}}]",
            "the model's answer at step 1 was refused, not written: block 1 is nested more "
            "than 64 levels deep",
        ),
        (
            b'[{"type": "tool_use", "name": "read_inbox", "input": {}}]',
            "refused, not written: block 1 (tool_use) has no id",
        ),
        (
            b'[{"type": "tool_use", "id": "' + b"c" * 100_000 + b'", "name": "read_inbox", '
            b'"input": {}}]',
            "refused, not written: block 1 (tool_use) has an id of 100,000 characters",
        ),
    ],
)
def test_a_deep_or_broken_answer_from_a_server_is_one_line_exit_6(
    tmp_path: Path, content: bytes, said: str
) -> None:
    body = (
        b'{"type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use", '
        b'"usage": {"input_tokens": 1, "output_tokens": 1}, "content": ' + content + b"}"
    )
    db = tmp_path / "dayflow.db"
    with fakeapi.FakeAPI([fakeapi.Body(body)]) as api:
        model = claude(api)
        res = cli(db, model, "brief", "--date", DATE, "--model", "claude-haiku-5-5")
    assert res.code == 6, res.err
    (line,) = res.err.strip().splitlines()
    assert said in line and "resume" in line
    assert db_rows(db, "SELECT n FROM steps") == []


def test_an_answer_that_is_not_utf8_is_not_called_a_request_not_sent() -> None:
    """Issue 32.28: the request was sent; what came back could not be read."""
    from dayflow.models import ModelRequest

    request = ModelRequest("claude-haiku-5-5", "", [], [{"role": "user", "content": "hi"}], 99)
    with fakeapi.FakeAPI([fakeapi.Body(b'{"type": "message", "x": "\xff"}')]) as api:
        with pytest.raises(ModelError) as caught:
            claude(api).create(request)
    assert "request not sent" not in str(caught.value)
    assert str(caught.value).startswith("Anthropic API answered with ")


def test_a_proxys_502_is_not_blamed_on_the_model_server() -> None:
    """Issue 32.28: a 502 with no API error body is a gateway's or a proxy's word."""
    from dayflow.models import ModelRequest

    request = ModelRequest("q", "", [], [{"role": "user", "content": "hi"}], 99)
    page = fakeapi.Body(b"<html>502 Bad Gateway</html>", "text/html", status=502)
    with fakeapi.FakeAPI([page]) as api:
        with pytest.raises(ModelError) as caught:
            claude(api, label="local model server at X").create(request)
    assert str(caught.value).startswith(
        "local model server at X not reached: 502 Bad Gateway from a gateway or proxy on the "
        "way (not the server's own answer)"
    )
    # The server's own 502, with the API's error body, is still the server's.
    own = fakeapi.error(502, "api_error", "upstream model crashed")
    with fakeapi.FakeAPI([own]) as api:
        with pytest.raises(ModelError) as caught:
            claude(api, label="local model server at X").create(request)
    assert str(caught.value).startswith("local model server at X 502 api_error: upstream")


# --- JSON from outside, nested past what Python's reader follows ----------------------------


def test_a_stored_row_nested_too_deeply_is_one_line_in_show_and_a_doctor_finding(
    tmp_path: Path,
) -> None:
    """Written by hand (or by a version that did not check answers): `show` was a
    RecursionError traceback; now one line (exit 4), and doctor names the run."""
    db = tmp_path / "dayflow.db"
    run_id = poisoned(db)
    deep = "[" * 100_000 + "]" * 100_000
    with Db(db) as raw:
        raw.run("UPDATE steps SET assistant_json = ? WHERE n = 1", deep)
    res = cli(db, None, "show", run_id)
    assert res.code == 4, res.err
    (line,) = res.err.strip().splitlines()
    assert line == (
        f"error: run {run_id} step 1: a stored value is nested too deeply to read (`dayflow "
        "doctor` checks the database)"
    )
    report = json.loads(cli(db, None, "doctor", "--json").out)
    (found,) = [f for f in report["findings"] if f["code"] == "malformed_step"]
    assert found["message"].startswith(f"run {run_id} step 1: a stored value is nested")


def test_tool_results_nested_too_deeply_are_read_as_not_json_wherever_they_are_parsed() -> None:
    """An MCP server's result text can be anything: the offline model, the links check and
    the compaction summary each read a 200,000-deep one as text that is not JSON."""
    from dayflow.compaction import summary_message
    from dayflow.providers.offline._conversation import tool_calls
    from dayflow.shown import shown_in

    deep = "[" * 200_000 + "]" * 200_000
    use = {"type": "tool_use", "id": "toolu_1", "name": "mcp__notes__search", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": deep}
    messages: list[Any] = [
        {"role": "user", "content": "brief"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]
    (call,) = tool_calls(messages)
    assert call.error == "the result was not valid JSON" and call.result is None
    assert not shown_in(messages).urls  # read as no JSON, without a RecursionError
    summary = summary_message([(1, [use], [result])])
    assert "mcp__notes__search" in json.dumps(summary)


def test_a_cursor_nested_too_deeply_is_refused_as_a_cursor() -> None:
    import base64

    from dayflow.sources.inbox import CursorError, _decode_cursor

    cursor = base64.urlsafe_b64encode(b"[" * 200_000 + b"]" * 200_000).decode()
    with pytest.raises(CursorError, match="'cursor' is not one that read_inbox returned"):
        _decode_cursor(cursor)
