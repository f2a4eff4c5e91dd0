"""dayflow.mcp.offer and dayflow.mcp.results: names, schemas, the allowlist and results."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dayflow.mcp import MAX_SHOWN, offline_note, shown, unstarted_in, unstarted_note
from dayflow.mcp.config import ServerSpec
from dayflow.mcp.offer import (
    MAX_DESCRIPTION,
    MAX_SCHEMA,
    MAX_TOOLS,
    READ,
    WRITE,
    ListedTool,
    fit_schema,
    offer,
    tool_name,
)
from dayflow.mcp.results import result_content
from dayflow.tools import MAX_RESULT_CHARS

API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
OBJ: dict[str, Any] = {"type": "object", "properties": {}}


def _tool(name: str, read_only: bool | None = True, destructive: bool | None = None) -> ListedTool:
    return ListedTool(name, f"{name} tool", OBJ, read_only=read_only, destructive=destructive)


def _spec(*allow: str, writes: bool = False, name: str = "gh") -> ServerSpec:
    return ServerSpec(name=name, command="x", allow_tools=allow, allow_writes=writes)


def test_only_tools_in_allow_tools_are_offered_and_the_rest_are_listed_as_refused() -> None:
    got = offer([(_spec("a"), [_tool("a"), _tool("b")])])
    assert [o.tool for o in got.offered] == ["a"]
    assert [(r.tool, r.reason) for r in got.refused] == [("b", "not in allow_tools")]


def test_a_tool_not_read_only_or_destructive_is_refused_without_allow_writes() -> None:
    tools = [_tool("plain", None), _tool("rw", False), _tool("rm", True, True), _tool("ok")]
    got = offer([(_spec("plain", "rw", "rm", "ok"), tools)])
    assert [o.tool for o in got.offered] == ["ok"]
    reasons = {r.tool: r.reason for r in got.refused}
    assert "does not say readOnlyHint: true" in reasons["plain"]
    assert "does not say readOnlyHint: true" in reasons["rw"]
    assert "destructiveHint: true" in reasons["rm"]
    assert all("allow_writes = true" in r for r in reasons.values())


def test_allow_writes_offers_write_tools_as_writes_and_hints_never_grant_a_tool() -> None:
    got = offer([(_spec("rw", writes=True), [_tool("rw", False), _tool("ro")])])
    assert [(o.tool, o.kind) for o in got.offered] == [("rw", WRITE)]
    assert [r.tool for r in got.refused] == ["ro"]  # read-only, but not in the list
    assert offer([(_spec("ro"), [_tool("ro")])]).offered[0].kind == READ


def test_a_tool_in_allow_tools_the_server_does_not_list_is_named() -> None:
    got = offer([(_spec("gone"), [])])
    assert [(r.tool, r.reason) for r in got.refused] == [("gone", "in allow_tools, but not listed")]


def test_names_are_reduced_to_the_api_pattern_and_a_dotted_80_character_name_fits() -> None:
    dotted = "acme.tracker/" + "x" * 45 + ".list.open.items.today"
    name = tool_name("gh", dotted)
    assert API_NAME.fullmatch(name) and name.startswith("mcp__gh__acme_tracker_")
    assert name == tool_name("gh", dotted)  # the same in every process
    assert tool_name("gh", "list_notifications") == "mcp__gh__list_notifications"


def test_names_that_reduce_to_the_same_are_made_unique() -> None:
    got = offer([(_spec("a.b", "a/b", "a_b"), [_tool("a.b"), _tool("a/b"), _tool("a_b")])])
    names = [o.name for o in got.offered]
    assert len(set(names)) == 3 and all(API_NAME.fullmatch(n) for n in names)


@given(st.text(min_size=1, max_size=200), st.text(min_size=1, max_size=200))
def test_every_name_matches_the_api_pattern(server: str, tool: str) -> None:
    assert API_NAME.fullmatch(tool_name(server, tool, {tool_name(server, tool)}))


def test_at_most_twenty_tools_a_run_and_the_rest_left_out_in_config_order() -> None:
    many = [f"t{i}" for i in range(15)]
    got = offer(
        [
            (_spec(*many), [_tool(t) for t in many]),
            (_spec(*many, name="two"), [_tool(t) for t in many]),
        ]
    )
    assert len(got.offered) == MAX_TOOLS
    assert [(r.server, r.tool) for r in got.left_out][:2] == [("two", "t5"), ("two", "t6")]
    assert len(got.left_out) == 10


def test_descriptions_are_capped() -> None:
    long = ListedTool("a", "d" * 5000, OBJ, read_only=True)
    desc = offer([(_spec("a"), [long])]).offered[0].definition["description"]
    assert len(desc) == MAX_DESCRIPTION and desc.endswith("…")


def test_a_top_level_any_of_is_merged_into_one_object_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer"}},
        "anyOf": [
            {"properties": {"query": {"type": "string"}}, "required": ["query", "limit"]},
            {"properties": {"label": {"type": "string"}}, "required": ["label", "limit"]},
        ],
    }
    fitted, why = fit_schema(schema)
    assert why is None
    assert set(fitted) == {"type", "properties", "required"}
    assert set(fitted["properties"]) == {"limit", "query", "label"}
    assert fitted["required"] == ["limit"]  # only what every alternative needs


def test_all_of_adds_up_required_and_a_schema_without_type_gets_object() -> None:
    fitted, why = fit_schema(
        {"allOf": [{"properties": {"a": {}}, "required": ["a"]}, {"required": ["b"]}]}
    )
    assert why is None and fitted["type"] == "object" and fitted["required"] == ["a", "b"]


def test_a_schema_that_cannot_be_merged_refuses_that_tool_only_with_a_notice() -> None:
    clash = {
        "type": "object",
        "oneOf": [
            {"properties": {"a": {"type": "string"}}},
            {"properties": {"a": {"type": "integer"}}},
        ],
    }
    tools = [ListedTool("bad", "", clash, read_only=True), _tool("good")]
    got = offer([(_spec("bad", "good"), tools)])
    assert [o.tool for o in got.offered] == ["good"]
    assert "top-level oneOf that cannot be merged" in got.refused[0].reason
    for schema in ([1], {"type": "array"}, {"type": "object", "anyOf": [{"type": "string"}]}):
        assert fit_schema(schema)[1] is not None


def test_a_huge_or_endlessly_nested_schema_refuses_that_tool_only() -> None:
    """A schema goes with every request of the run: a server's 5 MB one would be paid for at
    each call (or fail each one), so its tool is refused and the others still offered."""
    big = {"type": "object", "properties": {"q": {"type": "string", "description": "Z" * 10**6}}}
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"a": deep}}
    tools = [
        ListedTool("big", "", big, read_only=True),
        ListedTool("deep", "", deep, read_only=True),
        _tool("good"),
    ]
    got = offer([(_spec("big", "deep", "good"), tools)])
    assert [o.tool for o in got.offered] == ["good"]
    reasons = {r.tool: r.reason for r in got.refused}
    size = len(json.dumps(big, separators=(",", ":")))
    assert size > 10**6
    assert reasons["big"] == f"its input schema is {size:,} characters (over {MAX_SCHEMA:,})"
    assert reasons["deep"] == "its input schema cannot be written as JSON"
    fits = {"type": "object", "properties": {"q": {"type": "string", "description": "Z" * 19_000}}}
    assert fit_schema(fits) == (fits, None)


def test_structured_content_goes_as_json_and_text_otherwise() -> None:
    text, err = result_content(
        {"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": [1]}}
    )
    assert (text, err) == ('{"a":[1]}', False)
    text, err = result_content(
        {"content": [{"type": "text", "text": "one"}, {"type": "image", "data": "AAAA"}]}
    )
    assert text.startswith("one\n[image") and not err


def test_is_error_makes_an_error_result() -> None:
    text, err = result_content({"content": [{"type": "text", "text": "nope"}], "isError": True})
    assert err and text == "Error: nope"


def test_a_huge_result_is_cut_to_the_tool_result_cap_saying_so() -> None:
    text, err = result_content({"content": [{"type": "text", "text": "y" * 200_000}]})
    assert not err and len(text) <= MAX_RESULT_CHARS and "[cut: the result was 200,000" in text


def test_the_offline_note_names_the_servers_once_and_is_none_without_mcp_tools() -> None:
    tools = [{"name": "read_inbox"}, {"name": "mcp__gh__a"}, {"name": "mcp__gh__b"}]
    note = offline_note(tools)
    assert note is not None and "need a model (Claude or local)" in note and "gh" in note
    assert offline_note([{"name": "read_inbox"}]) is None
    json.dumps(note)


def test_the_servers_not_started_for_the_offline_model_are_read_back_from_its_prompt() -> None:
    system = f"You write briefs.\n\n{unstarted_note(['gh', 'jira-2'])}\n\nMore."
    assert unstarted_in(system) == ["gh", "jira-2"]
    assert unstarted_in("You write briefs.") == []
    note = offline_note([{"name": "read_inbox"}], system)
    assert note is not None and "did not start gh, jira-2, so nothing of them" in note


def test_a_long_name_is_shown_cut_with_an_ellipsis_and_escaped() -> None:
    assert shown("list_issues") == "list_issues"
    long = shown("x" * 5000)
    assert len(long) == MAX_SHOWN and long.endswith("…")
    hostile = shown("\x1b" * 5000)  # each ESC is a 6-character escape: none is cut in half
    assert "\x1b" not in hostile and len(hostile) <= MAX_SHOWN
    assert hostile.removesuffix("…") == "\\u001b" * ((MAX_SHOWN - 1) // 6)


@given(st.text(max_size=300))
def test_shown_is_always_one_safe_line_within_the_limit(name: str) -> None:
    out = shown(name)
    assert len(out) <= MAX_SHOWN and "\x1b" not in out and "\n" not in out and "\u202e" not in out
