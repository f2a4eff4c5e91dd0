"""The process environment has one reader: `dayflow/app/` (issue 33.1). Every other module is
handed the runtime's mapping, or a setting made from it (`Settings.proxy_env`, `.host`,
`.local_dir`, the URL's `dayflow_pgbouncer`), which is how a `.env` file's value reaches it as
the environment's does and how tests replace it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import parse_python

PACKAGE = Path(__file__).resolve().parent.parent / "dayflow"
# What reads (or writes) the process environment, by name in `os`.
READERS = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def env_readers(tree: ast.AST) -> list[tuple[int, str]]:
    """Each place `tree` reads the process environment: `os.environ` (and the other names of
    READERS) as an attribute, `from os import environ`, `import os as o` then `o.environ`."""
    os_names = {"os"}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            os_names |= {a.asname or a.name for a in node.names if a.name == "os"}
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [
                (node.lineno, f"from os import {a.name}") for a in node.names if a.name in READERS
            ]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in READERS
            and isinstance(node.value, ast.Name)
            and node.value.id in os_names
        ):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


def test_only_the_app_layer_reads_the_process_environment() -> None:
    readers = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = env_readers(parse_python(path.read_text(encoding="utf-8")))
        if found:
            readers[path.relative_to(PACKAGE).as_posix()] = found
    assert list(readers) == ["app/environ.py"], readers
    assert readers["app/environ.py"] == [(14, "os.environ")]


def test_the_walk_finds_every_spelling_of_a_read() -> None:
    source = (
        "import os\nimport os as o\nfrom os import getenv, path\n"
        "a = os.environ.get('X')\nb = o.getenv('Y')\nos.putenv('Z', '1')\nc = os.path.sep\n"
        "d = dict(os.environ)\n"
    )
    assert env_readers(parse_python(source)) == [
        (3, "from os import getenv"),
        (4, "os.environ"),
        (5, "o.getenv"),
        (6, "os.putenv"),
        (8, "os.environ"),
    ]
