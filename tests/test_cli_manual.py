"""Issue 37 part 3: `dayflow --version`, shell completion (`dayflow completion SHELL`, Typer's
`--install-completion`), manual pages (`dayflow man`) and the generated docs/cli.md (issue 33
item 5), all read off the command tree that `--help` prints."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

from dayflow.cli import COMMAND_MODULES, app
from dayflow.cli_manual import REGENERATE, markdown, walk
from dayflow.providers.offline import OfflineModel
from tests.conftest import python_process, subprocess_env
from tests.harness import invoke

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "cli.md"
BIN = Path(sys.executable).parent

# A TAB in a fresh process, as the scripts run it: prints the completions, then (on stderr)
# the modules it loaded.
PROBE = """import sys
from dayflow.cli import main
sys.argv = ["dayflow"]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(sorted(sys.modules), file=sys.stderr)
sys.exit(code)
"""


def _run(*args: str) -> Any:
    return invoke(None, lambda *a: OfflineModel(), *args)


def _top() -> Any:
    import typer

    return typer.Context(get_command(app), info_name="dayflow")


def _tab(db: Path, **env: str) -> tuple[list[str], set[str]]:
    proc = python_process(subprocess_env(db, **env), "-c", PROBE, timeout=60)
    assert proc.returncode == 0, proc.stderr
    *_, loaded = proc.stderr.strip().splitlines()
    return proc.stdout.split(), set(json.loads(loaded.replace("'", '"')))


# --- --version ------------------------------------------------------------------------------


def test_version_is_the_installed_packages_said_once() -> None:
    """pyproject.toml takes it from dayflow/__init__.py, so `--version` needs no metadata."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    res = _run("--version")
    assert (res.code, res.out) == (0, f"dayflow {importlib.metadata.version('dayflow')}\n")


@pytest.mark.slow  # spawns a process
def test_version_loads_no_command_module(tmp_path: Path) -> None:
    env = subprocess_env(tmp_path / "h.db")
    probe = PROBE.replace('["dayflow"]', '["dayflow", "--version"]')
    proc = python_process(env, "-c", probe, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("dayflow ")
    loaded = json.loads(proc.stderr.strip().splitlines()[-1].replace("'", '"'))
    assert [m for m in loaded if m.removeprefix("dayflow.") in COMMAND_MODULES] == []


# --- completion -----------------------------------------------------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script_that_calls_dayflow_back(shell: str) -> None:
    res = _run("completion", shell)
    assert res.code == 0, res.err
    assert f"_DAYFLOW_COMPLETE=complete_{shell}" in res.out and "dayflow" in res.out


def test_completion_refuses_a_shell_it_does_not_know() -> None:
    res = _run("completion", "tcsh")
    assert res.code == 2 and "tcsh" in res.err


def test_completion_install_writes_where_the_shell_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    res = _run("completion", "fish", "--install")
    assert res.code == 0, res.err
    script = tmp_path / ".config/fish/completions/dayflow.fish"
    assert str(script) in res.out and "_DAYFLOW_COMPLETE=complete_fish" in script.read_text()
    assert _run("completion", "bash", "--install").code == 0
    assert "source '" in (tmp_path / ".bashrc").read_text()
    assert "complete_bash" in (tmp_path / ".bash_completions/dayflow.sh").read_text()


BASH, ZSH = ("COMP_WORDS", "COMP_CWORD"), ("_TYPER_COMPLETE_ARGS",)


@pytest.mark.slow  # spawns processes
@pytest.mark.parametrize(
    ("shell", "words", "offered", "module"),
    [
        ("bash", ["dayflow ru", "1"], ["runs"], None),
        ("bash", ["dayflow tasks ", "2"], ["export", "sync"], "cli_tasks"),
        ("bash", ["dayflow brief --pro", "2"], ["--provider", "--profile"], "cli_brief"),
        ("bash", ["dayflow man --format ", "3"], ["roff", "markdown"], "cli_manual"),
        ("zsh", ["dayflow tasks export --a"], ["--all"], "cli_tasks"),
        ("fish", ["dayflow tasks "], ["export", "sync"], "cli_tasks"),
    ],
)
def test_a_tab_offers_the_commands_options_and_loads_only_its_module(
    tmp_path: Path, shell: str, words: list[str], offered: list[str], module: str | None
) -> None:
    env = dict(zip(BASH if shell == "bash" else ZSH, words, strict=True))
    if shell == "fish":
        env["_TYPER_COMPLETE_FISH_ACTION"] = "get-args"
    out, loaded = _tab(tmp_path / "h.db", _DAYFLOW_COMPLETE=f"complete_{shell}", **env)
    for word in offered:
        assert any(word in line for line in out), (word, out)
    commands = {m for m in loaded if m.removeprefix("dayflow.") in COMMAND_MODULES}
    if module is not None:  # the command completed: its module and what it imports, no other
        own = f"import sys, dayflow.cli, dayflow.{module}; print(sorted(sys.modules))"
        proc = python_process(subprocess_env(tmp_path / "h.db"), "-c", own, timeout=60)
        imports = set(json.loads(proc.stdout.replace("'", '"')))
        assert commands == {m for m in imports if m.removeprefix("dayflow.") in COMMAND_MODULES}
        assert len(commands) <= 2
    assert "anthropic" not in loaded and "dayflow.store" not in loaded


@pytest.mark.slow  # spawns bash
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_through_the_printed_script(tmp_path: Path) -> None:
    """The script as a user sources it, in a real bash, calling the installed `dayflow`."""
    assert (BIN / "dayflow").exists()
    script = (
        "source <(dayflow completion bash)\n"
        "COMP_WORDS=(dayflow tasks export --fo); COMP_CWORD=3; _dayflow_completion dayflow\n"
        'echo "${COMPREPLY[@]}"\n'
        "COMP_WORDS=(dayflow sch); COMP_CWORD=1; _dayflow_completion dayflow\n"
        'echo "${COMPREPLY[@]}"\n'
    )
    env = subprocess_env(tmp_path / "h.db", PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(
        ["bash", "--norc", "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["--format", "schedule"]


# --- man ------------------------------------------------------------------------------------


def _pages(tmp_path: Path) -> list[Path]:
    res = _run("man", "-o", str(tmp_path / "man"))
    assert res.code == 0, res.err
    return [Path(line) for line in res.out.splitlines()]


def test_man_writes_one_page_per_command_of_the_tree(tmp_path: Path) -> None:
    pages = _pages(tmp_path)
    names = {ctx.command_path.replace(" ", "-") for ctx in walk(_top())}
    assert {p.name for p in pages} == {f"{n}.1" for n in names}
    assert {"dayflow.1", "dayflow-tasks-export.1", "dayflow-man.1"} <= {p.name for p in pages}
    for page in pages:
        text = page.read_text()
        assert text.startswith(f'.TH "{page.stem.upper()}" "1"')
        for section in (".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS"):
            assert section in text, (page, section)
        assert not any(line.startswith(".") and line[1:2] in " \t" for line in text.splitlines())


@pytest.mark.slow  # spawns groff
@pytest.mark.skipif(shutil.which("groff") is None, reason="needs groff")
def test_every_man_page_renders_without_a_warning(tmp_path: Path) -> None:
    for page in _pages(tmp_path):
        proc = subprocess.run(
            ["groff", "-man", "-Tutf8", "-ww", str(page)],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": os.environ["PATH"], "LC_ALL": "C.UTF-8"},
        )
        assert proc.returncode == 0 and proc.stderr == "", (page, proc.stderr)
        assert "OPTIONS" in proc.stdout


def test_man_page_holds_every_option_as_help_shows_it() -> None:
    res = _run("man", "tasks", "export")
    assert res.code == 0, res.err
    assert res.out.startswith('.TH "DAYFLOW-TASKS-EXPORT" "1"')
    assert "dayflow\\-tasks\\-export \\- Write the task list" in res.out
    options = ("\\fB\\-\\-format\\fR", "\\fB\\-o\\fR", "\\fB\\-\\-profile\\fR")
    for option in (*options, "[default: markdown]"):
        assert option in res.out
    assert "\\fBdayflow\\-tasks\\fR(1)" in res.out  # SEE ALSO its group


def test_man_of_no_such_command_is_a_usage_error() -> None:
    res = _run("man", "tasks", "nope")
    assert res.code == 2 and res.err.strip() == (
        "error: no such command: dayflow tasks nope (see `dayflow --help`)"
    )


# --- docs/cli.md ----------------------------------------------------------------------------


def test_docs_cli_md_is_the_generated_reference() -> None:
    """docs/cli.md is exactly what `dayflow man --format markdown` prints today."""
    fresh = markdown(_top())
    assert DOCS.exists() and DOCS.read_text() == fresh, (
        f"docs/cli.md is stale: regenerate it with `{REGENERATE}`"
    )


def test_docs_cli_md_documents_every_command_and_option() -> None:
    """Said separately from staleness, so the failure names what is missing."""
    text = DOCS.read_text()
    missing = []
    for ctx in walk(_top()):
        heading = f"\n## {ctx.command_path}\n"
        if heading not in text:
            missing.append(ctx.command_path)
            continue
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        for param in ctx.command.get_params(ctx):
            if getattr(param, "hidden", False) or param.param_type_name != "option":
                continue
            for opt in param.opts:
                if f"`{opt}" not in section and f" {opt}" not in section:
                    missing.append(f"{ctx.command_path} {opt}")
    assert missing == [], f"not in docs/cli.md: {missing}; regenerate it with `{REGENERATE}`"


@pytest.mark.slow  # spawns a process
def test_the_generated_reference_is_the_same_in_a_fresh_process(tmp_path: Path) -> None:
    """What a user's `dayflow man --format markdown` prints: no path, width or terminal in it."""
    env = subprocess_env(tmp_path / "h.db", HOME=str(tmp_path), COLUMNS="61")
    proc = python_process(env, "-m", "dayflow", "man", "--format", "markdown", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == markdown(_top())


def test_no_option_of_any_command_states_its_default_twice() -> None:
    """An option whose help names its own default ("[default: a free one]") hides Click's, so
    --help never reads "[default: a free one]. [default: 0]"."""
    twice = []
    for ctx in walk(_top()):
        for param in ctx.command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record and record[1].count("[default:") > 1:
                twice.append(f"{ctx.command_path} {record[0]}: {record[1]}")
    assert twice == []
