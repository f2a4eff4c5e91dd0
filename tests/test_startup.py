"""Issue 13: `dayflow --help`, `runs` and `tasks` start within 1.5x of `python -c "import
typer, rich"` (measured in bench/, never here). What keeps them there is what they do not
import: checked in a fresh process, as a user runs them."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from dayflow.providers.offline import OfflineModel
from tests.conftest import python_process, subprocess_env
from tests.harness import invoke

# Modules none of the three commands may load: the SDK, the source and PostgreSQL libraries,
# Rich's renderers (the listings are plain text), and the parts of Dayflow that only running,
# scheduling, exporting or repairing need.
FORBIDDEN = (
    "anthropic",
    "httpx",
    "icalendar",
    "recurring_ical_events",
    "caldav",
    "psycopg",
    "pgqueuer",
    "mcp",
    "mcp_types",
    "dayflow.mcp",
    "imaplib",
    "email.parser",
    "email.message",
    "html.parser",
    "matplotlib",
    "jinja2",
    "markupsafe",
    "starlette",
    "uvicorn",
    "dayflow.view",
    "dayflow.page",
    "dotenv",
    "rich.console",
    "rich.table",
    "rich.markdown",
    "rich.syntax",
    "socket",
    "ssl",
    "hashlib",
    "zoneinfo",
    "dayflow.agent",
    "dayflow.batching",
    "dayflow.tools",
    "dayflow.sources",
    "dayflow.render",
    "dayflow.history",
    "dayflow.briefing",
    "dayflow.schedule",
    "dayflow.taskfiles",
    "dayflow.delivery",
    "dayflow.store.archive",
    "dayflow.providers.offline",
    "dayflow.probe",
    "dayflow.fleet.queue",
    "dayflow.fleet.worker",
)
# --help builds no store and reads no settings, makes no dataclass and prints no JSON.
FORBIDDEN_FOR_HELP = (
    "sqlite3",
    "dayflow.store",
    "dayflow.config",
    "dayflow.config_files",
    "dayflow.listing",
    "dataclasses",
    "json",
)
# A command imports only its own command module (`--help` imports none).
FORBIDDEN_FOR_COMMANDS = (
    "dayflow.cli_brief",
    "dayflow.app.cases",
    "dayflow.app.fleet",
    "dayflow.app.trace",
    "dayflow.cli_history",
    "dayflow.cli_migrate",
    "dayflow.cli_schedule",
    "dayflow.cli_sources",
    "dayflow.cli_profiles",
    "dayflow.cli_fleet",
    "dayflow.cli_mcp",
    "dayflow.cli_manual",
)

PROBE = """import sys
from dayflow.cli import main
sys.argv = ["dayflow", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(sorted(sys.modules), file=sys.stderr)
sys.exit(code)
"""


def _loaded(args: list[str], db: Path) -> set[str]:
    proc = python_process(subprocess_env(db), "-c", PROBE, *args, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1].replace("'", '"')))


def _hits(loaded: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden))


@pytest.mark.slow  # spawns processes
@pytest.mark.parametrize("args", [["--help"], ["runs"], ["tasks"], ["runs", "--help"]])
def test_the_start_up_paths_import_only_what_they_print(sqlite_path: Path, args: list[str]) -> None:
    """On the default SQLite history (a postgresql:// one needs psycopg, by design)."""
    db_path = sqlite_path
    assert invoke(db_path, lambda *a: OfflineModel(), "brief").code == 0  # a real history
    loaded = _loaded(args, db_path)
    assert _hits(loaded, FORBIDDEN) == []
    if args[0] == "--help":
        assert _hits(loaded, FORBIDDEN_FOR_HELP) == []
        # and no command module: the commands are listed from `cli.SUMMARIES`, none built
        assert sorted(m for m in loaded if m.startswith("dayflow.cli_")) == [
            "dayflow.cli_base",
            "dayflow.cli_console",
        ]
    else:
        assert _hits(loaded, FORBIDDEN_FOR_COMMANDS) == []
        # their values are `Frozen` classes, not dataclasses (compiled at each import)
        assert "dataclasses" not in loaded
        assert ("dayflow.cli_tasks" in loaded) == (args[0] == "tasks")
        assert "dayflow.store" in loaded or args[-1] == "--help"  # the probe saw a real run


@pytest.mark.parametrize(
    "args",
    [
        ["runs"],
        ["runs", "--json"],
        ["tasks"],
        ["tasks", "--all", "--json"],
        ["tasks", "export", "--format", "json"],
        ["tasks", "--help"],
        ["show", "zz"],
        ["gc", "--keep", "1", "--dry-run"],
        ["runs", "--help"],
        ["--help"],
        [],
        ["--version"],
        ["nonsense"],
        ["trace", "--help"],
        ["fork", "--help"],
        ["doctor"],
        ["migrate", "--help"],
        ["schedule", "--help"],
        ["init", "--help"],
        ["sources", "--help"],
        ["tasks", "sync", "--help"],
        ["completion", "zsh"],
        ["man", "--help"],
    ],
)
def test_the_lazy_app_answers_as_the_whole_app_built(db_path: Path, args: list[str]) -> None:
    """The app builds only the command asked for (`cli._Group`, through Click's
    `get_command` / `list_commands` hooks): the same output and exit code as the app with
    every command built first, for commands, groups, their subcommands, help and mistakes."""
    import copy

    from typer.testing import CliRunner

    from dayflow import cli
    from dayflow.cli_base import Runtime
    from dayflow.clock import FixedClock

    assert invoke(db_path, lambda *a: OfflineModel(), "brief").code == 0

    class Eager(cli._Group):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            self.whole()

    eager = copy.copy(cli.app)
    eager.info = copy.copy(cli.app.info)
    eager.info.cls = Eager

    def run(which: Any) -> tuple[int, str]:
        deps = Runtime(
            env={"DAYFLOW_DB": str(db_path)}, clock=FixedClock("2026-11-05T07:30:00+00:00")
        )
        out = io.StringIO()
        deps.out = Console(file=out, width=200, color_system=None)
        deps.err = Console(file=out, width=200, color_system=None)
        res = CliRunner().invoke(which, args, obj=deps)
        return res.exit_code, out.getvalue() + res.output

    assert run(cli.app) == run(eager)


def test_a_command_is_built_only_when_asked_for_and_a_group_without_its_subcommands() -> None:
    from typer.main import get_command

    from dayflow import cli

    group: Any = get_command(cli.app)
    assert group.commands == {}  # nothing built, no command module imported by this
    tasks = group.get_command(None, "tasks")
    assert list(group.commands) == ["tasks"] and tasks.commands == {}
    assert tasks.list_commands(None) == ["done", "add", "reject", "export", "sync"]
    assert tasks.get_command(None, "export").name == "export"
    assert list(tasks.commands) == ["export"]
    assert any(p.name == "profile" for p in tasks.commands["export"].params)
    assert group.get_command(None, "no-such-command") is None


def test_command_modules_names_what_each_module_adds() -> None:
    """A command module is imported only for the names `COMMAND_MODULES` gives it: each list
    is exactly what its module adds, and the app lists them all, in that order."""
    import importlib

    from typer.main import get_command

    from dayflow import cli

    for module, added in cli.COMMAND_MODULES.items():
        made = get_command(importlib.import_module(f"dayflow.{module}").commands)
        names = set(made.commands) if not made.name else {made.name}  # type: ignore[attr-defined]
        assert names == set(added), module
    every = [n for names in cli.COMMAND_MODULES.values() for n in names]
    assert get_command(cli.app).list_commands(None) == every  # type: ignore[attr-defined]


def test_help_sums_up_each_command_as_its_own_help_does_without_building_it() -> None:
    """`--help` lists the commands from `cli.SUMMARIES`, not by importing their modules: each
    entry is the first sentence of the command's help (all Click's short help reads of it),
    and every command has one."""
    from typer.main import get_command

    from dayflow import cli

    whole: Any = get_command(cli.app)
    whole.whole()
    expected = {}
    for name in whole.list_commands(None):
        words = whole.commands[name].help.split("\n\n")[0].split()
        end = next((i for i, w in enumerate(words) if w.endswith(".")), len(words) - 1)
        expected[name] = " ".join(words[: end + 1])
        assert not whole.commands[name].hidden and not whole.commands[name].short_help, name
    wrong = {n: s for n, s in expected.items() if cli.SUMMARIES.get(n) != s}
    assert wrong == {}, "cli.SUMMARIES: set these entries to these values"
    assert set(cli.SUMMARIES) == set(expected), "cli.SUMMARIES: a command that is no more"
