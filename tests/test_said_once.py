"""Knowledge said once (issue 33.3): the brief's section names, ... each have one definition that
the others use, and a fence here finds a second copy written by hand."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from dayflow.agent.prompt import SYSTEM_PROMPT
from dayflow.delivery import one_thing
from dayflow.models import BRIEF_SECTIONS, Section

ROOT = Path(__file__).resolve().parent.parent


def _modules(*packages: str) -> Iterator[Path]:
    for package in packages:
        yield from sorted((ROOT / package).rglob("*.py"))


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """The module's string constants other than docstrings (prose may name a section)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
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
