"""Issue 21: a local model. What local servers do differently, each against a loopback server
that behaves that way (`FakeAPI(local=...)`), through the real SDK and the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dayflow.cli_base import default_model_factory
from dayflow.providers.anthropic import make_client
from dayflow.providers.offline import OfflineModel
from tests import fakeapi
from tests.conftest import Db
from tests.harness import Result, invoke

pytestmark = pytest.mark.slow  # a loopback Messages API server

DATE = "2026-11-05"
MODEL = "qwen3:8b"
BRIEF = ("brief", "--date", DATE, "--model", MODEL)
GROUNDED_BRIEF = "## Today\n- 09:30 Team standup\n\n## One thing\n**Send Sam the edits**"


def sdk_on(fake: fakeapi.FakeAPI) -> Callable[[str, Any], Any]:
    """A model factory: the real SDK client pointed at `fake`, no retries."""
    return lambda model, settings: make_client("test", fake.base_url, max_retries=0)


def cli(db: Path, fake: fakeapi.FakeAPI, *args: str) -> Result:
    return invoke(db, sdk_on(fake), *args)


def offline() -> Any:
    return fakeapi.responder_from_client(OfflineModel())


def steps(db: Path) -> list[Any]:
    with Db(db) as conn:
        return conn.rows("SELECT n, state, stop_reason, stop_details_json FROM steps ORDER BY n")


def runs(db: Path, fake: fakeapi.FakeAPI) -> list[dict[str, Any]]:
    return json.loads(cli(db, fake, "runs", "--json").out)  # type: ignore[no-any-return]


def last_user_blocks(fake: fakeapi.FakeAPI, call: int) -> list[dict[str, Any]]:
    """The content of the last message of the `call`-th Messages request (1-based)."""
    return fake.message_requests[call - 1].json["messages"][-1]["content"]  # type: ignore[no-any-return]


def test_a_local_shaped_server_gives_the_same_brief_and_tasks_as_the_api(tmp_path: Path) -> None:
    """Tool turns reported as end_turn, a blank text block in every answer, call_ ids, no
    cache counts, no request-id: the run reads them as the API's and ends the same."""
    with fakeapi.FakeAPI(responder=offline()) as api:
        clean = cli(tmp_path / "api.db", api, *BRIEF)
        clean_tasks = cli(tmp_path / "api.db", api, "tasks", "--json").out
    with fakeapi.FakeAPI(responder=offline(), local=fakeapi.LOCAL_SHAPED) as local:
        got = cli(tmp_path / "local.db", local, *BRIEF)
        tasks = cli(tmp_path / "local.db", local, "tasks", "--json").out
        run_id = runs(tmp_path / "local.db", local)[0]["id"]
        shown = cli(tmp_path / "local.db", local, "show", run_id).out
        assert local.rejected == []  # no blank text block was ever sent back
        sent = [r.json for r in local.message_requests]
    assert clean.code == 0 and got.code == 0, got.err
    assert got.out == clean.out
    strip = [{k: v for k, v in t.items() if k != "run_id"} for t in json.loads(tasks)]
    assert strip == [{k: v for k, v in t.items() if k != "run_id"} for t in json.loads(clean_tasks)]
    recorded = steps(tmp_path / "local.db")
    assert [(s[0], s[2]) for s in recorded] == [(1, "tool_use"), (2, "tool_use"), (3, "end_turn")]
    said = [json.loads(s[3]) if s[3] else None for s in recorded]
    assert said[0] is not None and said[0]["reported_stop_reason"] == "end_turn"
    assert shown.count("tool_use (said end_turn)") == 2  # show tells what the server said
    turns = [m["content"] for m in sent[-1]["messages"] if m["role"] == "assistant"]
    ids = [b["id"] for content in turns for b in content if b["type"] == "tool_use"]
    assert ids and all(i.startswith("call_") for i in ids)


def test_a_tool_turn_reported_as_end_turn_runs_its_tools(tmp_path: Path) -> None:
    script = [
        fakeapi.reply(
            [fakeapi.text("Let me check."), fakeapi.tool_use("call_1", "read_inbox", {"limit": 5})],
            "end_turn",
        ),
        fakeapi.reply([fakeapi.text(GROUNDED_BRIEF)], "end_turn"),
    ]
    with fakeapi.FakeAPI(script, local=fakeapi.Local()) as fake:
        res = cli(tmp_path / "d.db", fake, *BRIEF)
        second = last_user_blocks(fake, 2)
    assert res.code == 0, res.err
    assert "Let me check." not in res.out and "Send Sam the edits" in res.out
    assert second[0]["type"] == "tool_result" and second[0]["tool_use_id"] == "call_1"
    assert '"messages"' in second[0]["content"] and not second[0].get("is_error")


def test_a_cut_off_answer_reported_as_end_turn_is_cut_short_and_not_delivered(
    tmp_path: Path,
) -> None:
    db = tmp_path / "d.db"
    script = [
        fakeapi.reply([fakeapi.tool_use("call_1", "read_inbox", {"limit": 5})], "end_turn"),
        fakeapi.reply(
            [fakeapi.text("## Today\n- 09:30 Team stand")],
            "end_turn",
            usage={"input_tokens": 900, "output_tokens": 300},
        ),
    ]
    with fakeapi.FakeAPI(script, local=fakeapi.Local()) as fake:
        cut = cli(db, fake, *BRIEF, "--max-tokens", "300")
        assert cut.code == 7 and cut.out == ""
        assert "cut short (max_tokens)" in cut.err and "--max-tokens 600" in cut.err
        assert runs(db, fake)[0]["status"] == "stopped"
        fake.enqueue(
            fakeapi.reply(
                [fakeapi.text(GROUNDED_BRIEF)], usage={"input_tokens": 900, "output_tokens": 40}
            )
        )
        resumed = cli(db, fake, "resume", "--max-tokens", "600")
        asked_again = fake.message_requests[-1].json
    assert resumed.code == 0, resumed.err
    assert "Send Sam the edits" in resumed.out and "Team stand\n" not in resumed.out
    assert asked_again["max_tokens"] == 600
    assert "Team stand" not in json.dumps(asked_again["messages"])  # the cut turn is not resent
    assert [s[1] for s in steps(db)] == ["complete", "discarded", "complete"]


def test_empty_tool_arguments_say_the_model_sent_no_arguments(tmp_path: Path) -> None:
    """llama.cpp turns arguments that are not valid JSON into {}: the tool error says so,
    both when the schema refuses {} and when the tool itself does."""
    script = [
        fakeapi.reply([fakeapi.tool_use("call_1", "read_inbox", {})], "tool_use"),
        fakeapi.reply([fakeapi.tool_use("call_2", "read_calendar", {})], "tool_use"),
        fakeapi.reply([fakeapi.tool_use("call_3", "read_inbox", {"limit": 5})], "tool_use"),
        fakeapi.reply([fakeapi.text(GROUNDED_BRIEF)]),
    ]
    with fakeapi.FakeAPI(script, local=fakeapi.Local()) as fake:
        res = cli(tmp_path / "d.db", fake, *BRIEF)
        inbox, calendar = last_user_blocks(fake, 2)[0], last_user_blocks(fake, 3)[0]
    assert res.code == 0, res.err
    for result in (inbox, calendar):
        assert result["is_error"] is True
        assert "the model sent no arguments" in result["content"]
        assert "not valid JSON" in result["content"]
    assert inbox["content"].startswith("Error: invalid arguments for read_inbox: the model sent")
    assert "'limit' is required" in inbox["content"]


def test_a_blank_text_block_is_dropped_and_a_blank_answer_is_not_a_brief(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    script = [
        fakeapi.reply(
            [
                fakeapi.text(" \n"),
                fakeapi.tool_use("call_1", "read_tasks", {"include_done": False}),
            ],
            "end_turn",
        ),
        fakeapi.reply([fakeapi.text("   ")], "end_turn"),
    ]
    with fakeapi.FakeAPI(script, local=fakeapi.Local()) as fake:
        res = cli(db, fake, *BRIEF)
        sent_back = fake.message_requests[1].json["messages"][1]["content"]
        assert fake.rejected == []
    assert res.code == 7 and res.out == ""
    assert "ended step 2 without writing the brief" in res.err
    assert [b["type"] for b in sent_back] == ["tool_use"]


def test_a_brief_written_without_reading_anything_is_refused_as_not_grounded(
    tmp_path: Path,
) -> None:
    db = tmp_path / "d.db"
    with fakeapi.FakeAPI(
        [fakeapi.reply([fakeapi.text(GROUNDED_BRIEF)])], local=fakeapi.Local()
    ) as fake:
        made_up = cli(db, fake, *BRIEF)
        assert made_up.code == 7 and made_up.out == ""
        assert "without calling a tool" in made_up.err and "not grounded" in made_up.err
        (run,) = runs(db, fake)
        assert run["status"] == "stopped" and "not grounded" in run["reason"]
        fake.enqueue(
            fakeapi.reply([fakeapi.tool_use("call_1", "read_inbox", {"limit": 5})], "end_turn"),
            fakeapi.reply([fakeapi.text(GROUNDED_BRIEF)]),
        )
        resumed = cli(db, fake, "resume")
        second = fake.message_requests[1].json
    assert resumed.code == 0, resumed.err
    assert "Send Sam the edits" in resumed.out
    assert len(second["messages"]) == 1  # the made-up brief was not sent back
    assert [s[1] for s in steps(db)] == ["discarded", "complete", "complete"]


@pytest.mark.parametrize(
    "shape", [fakeapi.Local(), fakeapi.Local(no_usage=True)], ids=["no-cache", "no-usage"]
)
def test_usage_without_cache_fields_and_no_count_tokens_endpoint(
    tmp_path: Path, shape: fakeapi.Local
) -> None:
    """`--budget` asks count_tokens, which a local server does not have (404): the estimate
    is used instead, and usage without its cache parts (or none at all) counts as 0."""
    db = tmp_path / "d.db"
    with fakeapi.FakeAPI(responder=offline(), local=shape) as fake:
        res = cli(db, fake, *BRIEF, "--budget", "200000")
        counted = [r.status for r in fake.requests if r.path.endswith("/count_tokens")]
        (run,) = runs(db, fake)
    assert res.code == 0, res.err
    assert counted and set(counted) == {404}
    assert run["status"] == "done"
    with Db(db) as conn:
        row = conn.one("SELECT input_tokens, cache_creation_tokens, cache_read_tokens FROM runs")
    assert row[1] == row[2] == 0
    assert (row[0] > 0) is (not shape.no_usage)


# --- the provider: `--provider local` through the real CLI and its default model factory ----


def local_cli(db: Path, fake: fakeapi.FakeAPI | None, *args: str, **env: str) -> Result:
    """`dayflow ARGS` in-process with Dayflow's own model factory; `fake` is the server
    ANTHROPIC_BASE_URL names (None: no base URL in the environment at all)."""
    if fake is not None:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, **env}
    return invoke(db, default_model_factory, *args, env=env)


LOCAL = ("brief", "--date", DATE, "--provider", "local", "--model", MODEL)


def test_provider_local_needs_no_key_and_never_sends_the_users_key(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    with fakeapi.FakeAPI(responder=offline(), local=fakeapi.Local()) as fake:
        res = local_cli(db, fake, *LOCAL, ANTHROPIC_API_KEY="sk-ant-real-key")
        keys = {r.headers.get("authorization") for r in fake.message_requests}
        listed = local_cli(db, None, "runs")
        (run,) = json.loads(local_cli(db, None, "runs", "--json").out)
        shown = local_cli(db, None, "show", run["id"]).out
        url = fake.base_url
    assert res.code == 0, res.err
    assert keys == {"Bearer local"}  # a placeholder: the Anthropic key stays home
    said = f"local model {MODEL} at {url}: mail stays on this machine"
    assert said in res.err and said in shown
    assert run["provider"] == "local" and run["base_url"] == url
    assert run["estimated_cost_usd"] == 0 and "$0" in listed.out and "?" not in listed.out
    assert "$0 (estimate)" in shown


def test_the_environment_chooses_a_local_model_too(tmp_path: Path) -> None:
    with fakeapi.FakeAPI(responder=offline(), local=fakeapi.Local()) as fake:
        res = local_cli(
            tmp_path / "d.db",
            fake,
            *BRIEF[:3],
            DAYFLOW_PROVIDER="local",
            DAYFLOW_MODEL="gpt-oss:20b",
        )
        models = {r.json["model"] for r in fake.message_requests}
    assert res.code == 0, res.err
    assert models == {"gpt-oss:20b"}


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (
            ("--model", MODEL),
            {"ANTHROPIC_BASE_URL": "http://192.168.1.20:11434"},
            "not on this machine",
        ),
        (
            ("--model", MODEL),
            {"ANTHROPIC_BASE_URL": "http://ollama.example.org"},
            "not on this machine",
        ),
        (("--model", "gpt-oss:120b-cloud"), {}, "runs on Ollama's servers"),
        ((), {}, "needs a model name"),
    ],
    ids=["lan", "name", "cloud", "no-model"],
)
def test_what_would_leave_the_machine_is_refused_in_one_line_before_anything_is_written(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], said: str
) -> None:
    db = tmp_path / "d.db"
    res = local_cli(db, None, "brief", "--date", DATE, "--provider", "local", *args, **env)
    assert res.code == 2 and said in res.err
    assert res.err.count("\n") == 1 and res.out == ""
    assert not db.exists()


def test_resume_needs_no_flag_and_talks_to_the_runs_own_server(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    with fakeapi.FakeAPI(responder=offline(), local=fakeapi.LOCAL_SHAPED) as fake:
        crashed = local_cli(db, fake, *LOCAL, "--crash-after", "1")
        assert crashed.code == 70
        # Today's environment names another provider and another address: the run keeps its own.
        resumed = local_cli(
            db,
            None,
            "resume",
            ANTHROPIC_BASE_URL="http://127.0.0.1:9",
            DAYFLOW_PROVIDER="anthropic",
        )
        served, url = len(fake.message_requests), fake.base_url
    assert resumed.code == 0, resumed.err
    assert served == 3 and f"at {url}: mail stays on this machine" in resumed.err


def test_resume_refuses_a_local_run_whose_server_is_not_on_this_machine(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    with fakeapi.FakeAPI(responder=offline(), local=fakeapi.Local()) as fake:
        assert local_cli(db, fake, *LOCAL, "--crash-after", "1").code == 70
    with Db(db) as conn:
        doc = json.loads(conn.one("SELECT settings_json FROM runs")[0])
        doc["base_url"] = "http://10.1.2.3:11434"
        conn.run("UPDATE runs SET settings_json = ?", json.dumps(doc))
    res = local_cli(db, None, "resume")
    assert res.code == 2 and res.err.count("\n") == 1
    assert (
        "uses a local model" in res.err
        and "http://10.1.2.3:11434 is not on this machine" in res.err
    )
    assert "--allow-remote" in res.err


def test_the_config_files_model_table_chooses_a_local_model(tmp_path: Path) -> None:
    db, conf = tmp_path / "d.db", tmp_path / "config.toml"
    fixtures = Path(__file__).parent.parent / "fixtures"
    with fakeapi.FakeAPI(responder=offline(), local=fakeapi.Local()) as fake:
        conf.write_text(
            f'[model]\nprovider = "local"\nname = "{MODEL}"\nbase_url = "{fake.base_url}"\n'
            "timeout = 900\n\n"
            f'[[inbox]]\nname = "mail"\nkind = "json"\npath = "{fixtures / "inbox.json"}"\n\n'
            f'[[calendar]]\nname = "cal"\nkind = "json"\npath = "{fixtures / "calendar.json"}"\n'
        )
        res = local_cli(db, None, "brief", "--date", DATE, "--config", str(conf))
        models = {r.json["model"] for r in fake.message_requests}
        url = fake.base_url
    assert res.code == 0, res.err
    assert models == {MODEL} and f"local model {MODEL} at {url}" in res.err
    (run,) = json.loads(local_cli(db, None, "runs", "--json").out)
    assert run["provider"] == "local" and run["estimated_cost_usd"] == 0


def test_a_fork_of_a_local_run_is_served_by_the_same_local_server(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    with fakeapi.FakeAPI(responder=offline(), local=fakeapi.Local()) as fake:
        assert local_cli(db, fake, *LOCAL).code == 0
        parent = json.loads(local_cli(db, None, "runs", "--json").out)[0]["id"]
        before = len(fake.message_requests)
        forked = local_cli(db, None, "fork", parent, "--from-step", "2")
        after = len(fake.message_requests)
    assert forked.code == 0, forked.err
    assert after == before + 1 and "mail stays on this machine" in forked.err
    newest = json.loads(local_cli(db, None, "runs", "--json").out)[0]
    assert newest["provider"] == "local" and newest["estimated_cost_usd"] == 0
