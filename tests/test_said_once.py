"""Knowledge said once (issue 33.3): the brief's section names, the token estimate, the
compaction summary's wording, "is this target a server?" and the environment variables Dayflow
reads each have one definition that the others use, and a fence here finds a second copy
written by hand."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from dayflow import compaction, trust
from dayflow.agent import driver
from dayflow.agent.prompt import SYSTEM_PROMPT
from dayflow.config_files import ENV_VARS, PLATFORM_ENV_VARS
from dayflow.delivery import one_thing
from dayflow.models import BRIEF_SECTIONS, Section, estimate_tokens, is_postgres_target
from dayflow.providers.offline import _model as offline_model
from dayflow.schedule import PINNED
from tests import conftest
from tests.conftest import parse_python

ROOT = Path(__file__).resolve().parent.parent


def _modules(*packages: str) -> Iterator[Path]:
    for package in packages:
        yield from sorted((ROOT / package).rglob("*.py"))


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """The module's string constants other than docstrings (prose may name a section)."""
    tree = parse_python(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def test_no_module_spells_a_section_name_but_the_one_list() -> None:
    """A heading (`## Today`) or a bare name matched in a brief ("one thing") written outside
    `dayflow.models` is a second copy that a renamed section would leave behind. (The bench's
    sample briefs outside `bench/eval` stand for what a model wrote: data, not a definition.)"""
    names = {name.lower() for name in BRIEF_SECTIONS}
    phrases = {n for n in names if " " in n}  # "today" alone is an ordinary word
    found = []
    for path in _modules("dayflow", "bench/eval"):
        if path == ROOT / "dayflow" / "models.py":
            continue
        for line, text in _strings(path):
            if any(f"## {n}" in text.lower() for n in names) or text.strip().lower() in phrases:
                found.append(f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}")
    assert found == []


def test_the_prompt_asks_for_every_section_in_the_brief_order() -> None:
    at = [SYSTEM_PROMPT.index(f'"{Section.heading(name)}"') for name in BRIEF_SECTIONS]
    assert at == sorted(at)


def test_notify_finds_the_one_thing_section_by_its_name() -> None:
    brief = f"{Section.heading(Section.TODAY)}\n- x\n\n{Section.heading(Section.ONE_THING)}\n"
    assert one_thing(brief + "\n**Call Bo.**\n") == "Call Bo."


def _envish(node: ast.AST) -> bool:
    """Whether `node` reads as an environment: `os.environ`, `env`, `environ`, `self.env`..."""
    if isinstance(node, ast.Name):
        return "env" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return "env" in node.attr.lower()
    if isinstance(node, ast.BoolOp):  # `settings.env or os.environ`
        return any(_envish(v) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        if called == "process":  # dayflow.app.environ.process(): the process's environment
            return True
    return isinstance(node, ast.Call) and any(_envish(a) for a in node.args)  # dict(os.environ)


_NAME = re.compile(r"_?[A-Z][A-Z0-9_]+")


def _names_read(path: Path) -> Iterator[tuple[int, str]]:
    """The variable names `path` reads of an environment: `env.get("X")`, `env["X"]`,
    `"X" in env`, `os.getenv("X")`, and a helper given an environment and a name."""
    for node in ast.walk(parse_python(path.read_text(encoding="utf-8"))):
        names: list[ast.expr] = []
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and (
                func.attr == "getenv" or (func.attr in ("get", "pop") and _envish(func.value))
            ):
                names = node.args[:1]
            elif any(_envish(a) for a in node.args):
                names = node.args
        elif isinstance(node, ast.Subscript) and _envish(node.value):
            names = [node.slice]
        elif isinstance(node, ast.Compare) and any(_envish(c) for c in node.comparators):
            names = [node.left]
        for name in names:
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                if _NAME.fullmatch(name.value):
                    yield name.lineno, name.value


def test_every_variable_dayflow_reads_is_on_the_one_list() -> None:
    """A setting read under a name the list does not have is one the tests do not scrub and
    the programs a config runs may see (five were missing from the tests' list)."""
    known = set(ENV_VARS) | set(PLATFORM_ENV_VARS)
    read, unknown = set(), []
    for path in _modules("dayflow"):
        for line, name in _names_read(path):
            read.add(name)
            if name not in known:
                unknown.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert unknown == []
    assert set(ENV_VARS) - read <= {"ANTHROPIC_AUTH_TOKEN"}  # the SDK's: read by it, not us


def test_the_tests_scrub_every_variable_dayflow_reads() -> None:
    """The base URL is not scrubbed but pointed at a closed loopback port (`_no_real_api`)."""
    assert set(conftest._SCRUB) == set(ENV_VARS) - {"ANTHROPIC_BASE_URL"}


def test_no_program_a_config_runs_sees_a_variable_dayflow_reads() -> None:
    env = {name: "a-value-of-" + name for name in (*ENV_VARS, "PATH", "HOME")}
    assert trust.command_env(env) == {"PATH": env["PATH"], "HOME": env["HOME"]}


def test_a_scheduled_run_pins_only_variables_on_the_list() -> None:
    assert set(PINNED) <= set(ENV_VARS) | set(PLATFORM_ENV_VARS)


def test_the_loop_and_the_offline_model_estimate_tokens_alike() -> None:
    """One rule, a quarter of the compact JSON rounded up: the loop rounded down before."""
    for value in ("x" * 5, {"a": 1}, [{"role": "user", "content": "hi"}], "é" * 9):
        assert driver.estimate_tokens(value) == offline_model.estimate_tokens(value)
    assert estimate_tokens("x" * 5) == 2  # '"xxxxx"' is 7 characters


def test_only_the_values_module_defines_a_token_estimate() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}"
        for path in _modules("dayflow")
        if path != ROOT / "dayflow" / "models.py"
        for node in ast.walk(parse_python(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and "estimate" in node.name and "token" in node.name
    ]
    assert found == []


def test_only_compaction_spells_the_summary_it_writes() -> None:
    """The offline model reads a summary through compaction's functions, not its wording."""
    words = (compaction.LABEL, "- step ")
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}"
        for path in _modules("dayflow", "bench")
        if path != ROOT / "dayflow" / "compaction.py"
        for line, text in _strings(path)
        if any(w in text for w in words)
    ]
    assert found == []


def test_one_predicate_says_whether_a_target_is_a_server() -> None:
    """No module but `models` tests a target's prefix for PostgreSQL itself (three did, one
    of them case-sensitively)."""
    found = []
    for path in _modules("dayflow"):
        if path == ROOT / "dayflow" / "models.py":
            continue
        for node in ast.walk(parse_python(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in ("startswith", "match", "compile", "fullmatch"):
                continue
            texts = [
                c.value
                for a in node.args[:1]
                for c in ast.walk(a)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
            if any(t.lower().lstrip("^").startswith("postgres") for t in texts):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
    for url in ("postgresql://h/db", "POSTGRES://h/db", "postgresql:/h/db", "postgres:///db"):
        assert is_postgres_target(url) and is_postgres_target(Path(url))
    for other in ("db.sqlite", "/tmp/postgresql.db", ":memory:", "postgresqlx://h"):
        assert not is_postgres_target(other)


def test_no_count_matches_the_words_of_a_saved_result() -> None:
    """The task cap's refusals were counted with `content LIKE 'Error: …'`; which rule refused
    a call is now a column saved with it (`refused_by`), and only a migration reads words."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in _modules("dayflow")
        if not path.name.endswith("_schema.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"content\s+(NOT\s+)?I?LIKE", line, re.IGNORECASE)
    ]
    assert found == []


def test_the_manual_names_every_variable_dayflow_reads() -> None:
    """A variable on the list that no page mentions is a setting nobody can find (the SDK's
    own ANTHROPIC_AUTH_TOKEN is the SDK's to document)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    assert [n for n in ENV_VARS if n not in text] == ["ANTHROPIC_AUTH_TOKEN"]


def test_the_tests_parse_our_source_only_through_the_collector_safe_parse() -> None:
    """`ast.parse` called with the collector on failed CI once (`conftest.parse_python`)."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        if path.name != "conftest.py"
        for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "ast" + ".parse(" in text
    ]
    assert found == []
