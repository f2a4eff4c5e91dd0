"""`python -m bench.eval` as a user meets it (bench/eval/__main__.py, run.py, report.py): its
help, hostile label files, RESULTS.md's markers, a model server that fails, hangs or is
interrupted, and the same table for every kind of model. Models other than the offline one are
only ever a loopback fake (tests/fakeapi.py); a tiny set of four messages keeps runs short."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from bench.eval import report, run
from bench.eval.__main__ import main, parser
from tests.fakeapi import (
    Body,
    FakeAPI,
    Local,
    Reply,
    error,
    overloaded,
    responder_from_client,
    text,
)
from tests.httpkit import Loopback

REPO = Path(__file__).resolve().parents[1]


def _message(mid: str, category: str, body: str, *actions: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": mid,
        "from": "Priya Raman <priya@lumen.example>",
        "subject": f"About {mid}",
        "received_at": "2026-10-30T09:00:00-04:00",
        "unread": True,
        "body": body,
        "label": {"has_action": bool(actions), "category": category, "actions": list(actions)},
    }


def _action(title: str, due: str | None) -> dict[str, Any]:
    return {"title": title, "due": due, "requester": "Priya Raman"}


TINY = {
    "deadline": [
        _message(
            "t1",
            "deadline",
            "Hi Alex,\n\nCould you send me the Q3 headcount numbers by November 4?\n\nPriya",
            _action("Send Q3 headcount numbers to Priya", "2026-11-04"),
        )
    ],
    "fyi": [_message("t2", "fyi", "Hi all,\n\nThe office is closed on Friday. No action.\n")],
    "automated": [
        _message("t3", "automated", "Your receipt for order 1234. Thank you for shopping.\n")
    ],
}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    folder = tmp_path / "set"
    folder.mkdir()
    for name, items in TINY.items():
        (folder / f"{name}.json").write_text(json.dumps(items), encoding="utf-8")
    return folder


def _main(tiny: Path, *args: str, results: Path | None = None) -> int:
    out = results or tiny.parent / "RESULTS.md"
    return main(list(args), (), out, tiny, None)


# --- the help -----------------------------------------------------------------------------------


def test_the_help_explains_every_flag_and_the_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for action in parser()._actions:
        assert action.help and len(action.help) > 20, action.option_strings
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for word in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "RESULTS.md", "exit status", "130"):
        assert word in out


def test_a_split_given_twice_is_refused_not_silently_the_last(
    capsys: pytest.CaptureFixture[str], tiny: Path
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _main(tiny, "--split", "tuning", "--split", "blind", "--no-write")
    assert exit_.value.code == 2
    assert "--split given twice" in capsys.readouterr().err


# --- hostile label files ------------------------------------------------------------------------


def _break(folder: Path, how: str) -> None:
    path = folder / "deadline.json"
    if how == "bad json":
        path.write_text('[{"id": ', encoding="utf-8")
        return
    items = json.loads(path.read_text(encoding="utf-8"))
    action = items[0]["label"]["actions"][0]
    if how == "due not ISO":
        action["due"] = "next Friday"
    elif how == "no title":
        del action["title"]
    elif how == "duplicate id":
        items.append(dict(items[0]))
    elif how == "unknown category":
        items[0]["label"]["category"] = "urgentish"
    path.write_text(json.dumps(items), encoding="utf-8")


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("bad json", "deadline.json: not valid JSON"),
        ("due not ISO", "due 'next Friday' is not an ISO date"),
        ("no title", "an action needs a title"),
        ("duplicate id", "duplicate id t1"),
        ("unknown category", "unknown category 'urgentish'"),
    ],
)
def test_a_malformed_label_file_is_one_line_and_exit_2_before_any_run(
    capsys: pytest.CaptureFixture[str], tiny: Path, how: str, said: str
) -> None:
    _break(tiny, how)
    assert _main(tiny) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not (tiny.parent / "RESULTS.md").exists()
    assert len(captured.err.splitlines()) == 1 and captured.err.startswith("error: ")
    assert said in captured.err and "Traceback" not in captured.err


# --- RESULTS.md ---------------------------------------------------------------------------------

OTHERS = "# Results\n\n## Mail\nmail figures\n\n## Reading\nhand-written reading\n"


def test_results_md_missing_is_made_with_the_section_alone(tiny: Path) -> None:
    results = tiny.parent / "RESULTS.md"
    assert _main(tiny, "--write") == 0
    text_ = results.read_text(encoding="utf-8")
    assert text_.startswith(report.begin("offline")) and text_.endswith(
        report.end("offline") + "\n"
    )


@pytest.mark.parametrize("damage", ["end lost", "begin lost", "doubled", "swapped"])
def test_damaged_markers_are_refused_and_results_md_left_as_it_was(
    capsys: pytest.CaptureFixture[str], tiny: Path, damage: str
) -> None:
    """A lost end marker once made the next run append a second section, and the run after
    that replace everything from the old begin to the new end: the other sections went."""
    head, tail = report.begin("offline"), report.end("offline")
    section = f"{head}\nold figures\n{tail}\n"
    damaged = {
        "end lost": OTHERS + head + "\nold figures\n" + OTHERS,
        "begin lost": OTHERS + "old figures\n" + tail + "\n" + OTHERS,
        "doubled": OTHERS + section + OTHERS + section,
        "swapped": OTHERS + f"{tail}\nold figures\n{head}\n" + OTHERS,
    }[damage]
    results = tiny.parent / "RESULTS.md"
    results.write_text(damaged, encoding="utf-8")
    assert _main(tiny, "--write") == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "markers for 'offline' are damaged" in err
    assert results.read_text(encoding="utf-8") == damaged


def test_a_rerun_replaces_only_its_own_section(tiny: Path) -> None:
    results = tiny.parent / "RESULTS.md"
    results.write_text(OTHERS, encoding="utf-8")
    assert _main(tiny, "--write") == 0 and _main(tiny, "--write") == 0
    text_ = results.read_text(encoding="utf-8")
    assert text_.startswith(OTHERS) and text_.count(report.begin("offline")) == 1


def test_results_md_that_cannot_be_written_is_one_line_after_the_tables(
    capsys: pytest.CaptureFixture[str], tiny: Path
) -> None:
    unwritable = tiny.parent / "RESULTS.md"
    unwritable.mkdir()  # as root a read-only file is still writable; a directory never is
    assert _main(tiny, "--write", results=unwritable) == 2
    captured = capsys.readouterr()
    assert report.HEADER[0] in captured.out
    assert len(captured.err.splitlines()) == 1 and "RESULTS.md not written" in captured.err


def test_a_plain_run_writes_nothing_so_a_clone_stays_clean(
    capsys: pytest.CaptureFixture[str], tiny: Path
) -> None:
    """Issue 32.30: `python -m bench.eval` rewrote bench/RESULTS.md by default, leaving a
    clone dirty. Writing is `--write`; `--no-write` (the default now) is still accepted."""
    results = tiny.parent / "RESULTS.md"
    results.write_text(OTHERS, encoding="utf-8")
    assert _main(tiny) == 0 and _main(tiny, "--no-write") == 0
    assert results.read_text(encoding="utf-8") == OTHERS
    assert report.HEADER[0] in capsys.readouterr().out
    assert _main(tiny, "--write") == 0
    assert report.begin("offline") in results.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--write", "--no-write"), "--write and --no-write contradict each other"),
        (("--write", "--split", "tuning"), "--write needs a run of all the splits"),
    ],
)
def test_write_with_no_write_or_with_one_split_is_refused(
    capsys: pytest.CaptureFixture[str], tiny: Path, args: tuple[str, ...], said: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _main(tiny, *args)
    assert exit_.value.code == 2 and said in capsys.readouterr().err
    assert not (tiny.parent / "RESULTS.md").exists()


# --- models behind a loopback fake --------------------------------------------------------------


def _offline_api(**kw: Any) -> FakeAPI:
    from dayflow.providers.offline import OfflineModel

    return FakeAPI(responder=responder_from_client(OfflineModel()), **kw)


def _key(request: Any) -> str:
    """The key a request carried, however the SDK sent it."""
    headers = request.headers
    return str(headers.get("x-api-key") or headers.get("authorization", "")).removeprefix("Bearer ")


def _shape(out: str) -> list[str]:
    """The tables' header and row names, without the figures."""
    return [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("|")]


def test_local_and_claude_models_give_the_offline_table_each_in_its_own_section(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    """The user's key goes to Claude's address only, never to a local server (which gets a
    placeholder); `local:NAME` has its own section, so `local:claude-…` cannot overwrite
    Claude's."""
    results = tiny.parent / "RESULTS.md"
    assert _main(tiny, "--write") == 0
    offline = capsys.readouterr().out
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-users-own-key")
    with _offline_api(local=Local()) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        assert _main(tiny, "--model", "local:claude-haiku-5-5", "--write") == 0
        local = capsys.readouterr().out
    assert api.message_requests and not any("sk-ant" in _key(r) for r in api.requests)
    with _offline_api() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        assert _main(tiny, "--model", "claude-haiku-5-5", "--write") == 0
        claude = capsys.readouterr().out
    assert all(_key(r) == "sk-ant-users-own-key" for r in api.requests)
    assert _shape(offline) == _shape(local) == _shape(claude) and report.HEADER[0] in claude
    written = results.read_text(encoding="utf-8")
    for model in ("offline", "local:claude-haiku-5-5", "claude-haiku-5-5"):
        assert written.count(report.begin(model)) == 1 == written.count(report.end(model))
    assert "model `local:claude-haiku-5-5`" in written


def test_a_failing_server_is_retried_aloud_then_one_line_with_nothing_to_resume(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    with FakeAPI([overloaded(), overloaded(), overloaded()], local=Local()) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        assert _main(tiny, "--model", "local:q") == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and not (tiny.parent / "RESULTS.md").exists()
    assert sum("retrying in" in line for line in lines) == 2
    assert lines[-1].startswith("error: the model failed: local model server at ")
    assert "after 3 attempts" in lines[-1] and "dayflow resume" not in captured.err


def test_a_refusal_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    with FakeAPI([error(400, "invalid_request_error", "no such model")]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        assert _main(tiny, "--model", "claude-nope") == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("error: the model failed: Anthropic API 400")
    assert "Traceback" not in err and "dayflow resume" not in err


def test_a_run_that_stops_without_its_brief_prints_its_tables_but_writes_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    """A server answering prose and no tool call: the run stops at step 1. Its zeros must
    not replace the model's last real figures in RESULTS.md."""
    results = tiny.parent / "RESULTS.md"
    results.write_text(OTHERS, encoding="utf-8")
    with FakeAPI([Reply([text("Hello! How can I help?")])], local=Local()) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        assert _main(tiny, "--model", "local:q", "--write") == 1
    captured = capsys.readouterr()
    assert report.HEADER[0] in captured.out and "Run: stopped" in captured.out
    assert "dayflow resume" not in captured.out + captured.err
    assert captured.err.splitlines()[-1].startswith("error: the run did not finish (stopped")
    assert results.read_text(encoding="utf-8") == OTHERS


def test_ctrl_c_while_the_server_hangs_is_one_line_exit_130_from_any_directory(
    tmp_path: Path,
) -> None:
    """Run from another directory (the repository on PYTHONPATH), against a server that never
    answers: SIGINT ends it with one line, and no temporary store is left behind."""
    with FakeAPI([Reply([text("late")], delay=60)], local=Local()) as api:
        env = {
            "HOME": str(tmp_path),
            "PATH": os.environ["PATH"],
            "PYTHONPATH": str(REPO),
            "TMPDIR": str(tmp_path),
            "ANTHROPIC_BASE_URL": api.base_url,
        }
        child = subprocess.Popen(
            [sys.executable, "-m", "bench.eval", "--model", "local:q", "--no-write"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not api.message_requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert api.message_requests, "the run never asked the model"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    assert child.returncode == 130 and out == ""
    assert err.splitlines()[-1] == "interrupted: nothing written" and "Traceback" not in err
    assert not list(tmp_path.glob("dayflow-eval-*"))


def test_a_resume_hint_is_cut_from_any_reason_in_linear_time() -> None:
    reason = "run ab12 failed: API 500 after 3 attempts; `dayflow resume ab12` continues it"
    assert run.without_resume(reason) == "API 500 after 3 attempts"
    hostile = "`dayflow resume " * 20_000 + "; (" * 20_000
    started = time.perf_counter()
    run.without_resume(hostile)
    assert time.perf_counter() - started < 1.0


class _NotTheAPI(BaseHTTPRequestHandler):
    """A web server that answers every request with a page (200, text/html)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        page = b"<html><body>It works!</body></html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_server_answering_a_web_page_is_one_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    with Loopback(_NotTheAPI) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        assert _main(tiny, "--model", "local:q") == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        f"error: the model failed: local model server at {server.base_url} answered with no "
        "message: '<html><body>It works!</body></html>'"
    )


def test_an_answer_nested_200000_deep_is_one_line_not_a_recursion_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    """Issue 32.11: it was a RecursionError and a 74-line traceback. bench.eval's exit for a
    model that fails is 2 (its --help); `dayflow brief` gives the same line with exit 6."""
    deep = b"[" * 200_000 + b"]" * 200_000
    body = b'{"type": "message", "content": [], "pad": ' + deep + b"}"
    with FakeAPI([Body(body)], local=Local()) as api:
        url = api.base_url
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        assert _main(tiny, "--model", "local:q") == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        f"error: the model failed: local model server at {url} answered with JSON "
        "nested too deeply to read"
    )


@pytest.mark.parametrize("url", ["not a url", "ftp://127.0.0.1:21", "http://"])
def test_a_base_url_that_is_not_http_is_refused_before_any_request(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path, url: str
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    assert _main(tiny, "--model", "local:q") == 2
    err = capsys.readouterr().err
    assert err == f"error: ANTHROPIC_BASE_URL {url!r} is not an http(s) URL with a host\n"


@pytest.mark.parametrize("name", ["local:a -->", "claude-x<!--", "local:q\nb", "local:a--b"])
def test_a_model_name_that_would_break_its_results_markers_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path, name: str
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    results = tiny.parent / "RESULTS.md"
    assert _main(tiny, "--model", name) == 2
    assert "use letters, digits and . : / @ + - only" in capsys.readouterr().err
    assert not results.exists()


def test_model_names_people_use_are_accepted() -> None:
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "sk-test"}
    for name in ("local:qwen3:8b", "local:hf.co/org/model:Q4_K_M", "claude-haiku-5-5"):
        assert run.client_for(name, env)[1] == name.removeprefix("local:")


def test_without_git_on_path_the_code_is_a_question_mark_not_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    monkeypatch.setenv("PATH", str(tiny))  # a folder with no git in it
    assert _main(tiny, "--no-write") == 0
    assert "code at `?`" in capsys.readouterr().out


def test_timeout_bounds_a_hung_server_and_says_each_retry(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny: Path
) -> None:
    """Without --timeout a hung local server is 3 x 600 s of waiting; with it, seconds."""
    hung = [Reply([text("late")], delay=30) for _ in range(3)]
    with FakeAPI(hung, local=Local()) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        started = time.monotonic()
        assert _main(tiny, "--model", "local:q", "--timeout", "0.3") == 2
        assert time.monotonic() - started < 15
    lines = capsys.readouterr().err.splitlines()
    assert sum("timed out (no answer in 0.3s); retrying" in line for line in lines) == 2
    assert lines[-1].endswith("timed out (no answer in 0.3s) after 3 attempts")


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_a_timeout_that_is_not_a_positive_number_is_refused(
    capsys: pytest.CaptureFixture[str], tiny: Path, value: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _main(tiny, "--timeout", value)
    assert exit_.value.code == 2 and "is not a number of seconds above 0" in capsys.readouterr().err
