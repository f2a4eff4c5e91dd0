"""The floors are a test: every import in `dayflow/` runs down or across a floor of
`tests/floors.py`, no modules and no rows import each other in a circle, every module has a
row, and ARCHITECTURE.md's floor paragraph says what the table says."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import parse_python
from tests.floors import ALLOWED, FLOORS

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dayflow"
TABLE = "tests/floors.py"


def _name(path: Path) -> str:
    """`dayflow/store/steps.py` -> `store.steps`; `dayflow/__init__.py` -> `__init__`."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _dayflow(dotted: str) -> str | None:
    """`dayflow.store.steps` -> `store.steps`, `dayflow` -> `__init__`; None if not ours."""
    if dotted == "dayflow":
        return "__init__"
    if dotted.startswith("dayflow."):
        return dotted.removeprefix("dayflow.")
    return None


def _absolute(module: str, level: int, name: str | None) -> str:
    """The dotted name a relative `from ... import` in `module` refers to."""
    if not level:
        return name or ""
    here = ["dayflow", *([] if module == "__init__" else module.split("."))]
    if not (module == "__init__" or _is_package(module)):
        here.pop()
    here = here[: len(here) - (level - 1)]
    return ".".join([*here, *([name] if name else [])])


def _command_modules() -> list[str]:
    """`cli.COMMAND_MODULES`' keys, read from the source: `cli` imports them by name."""
    for node in ast.walk(parse_python(MODULES["cli"].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMMAND_MODULES" for t in node.targets
        ):
            assert isinstance(node.value, ast.Dict)
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant)]  # type: ignore[misc]
    raise AssertionError("cli.COMMAND_MODULES is gone: say here what cli imports by name")


def _imports(module: str) -> Iterator[tuple[str, int]]:
    """Every module of ours that `module` imports, with the line: at the top, in a function,
    under TYPE_CHECKING, or by `importlib.import_module` of a literal name."""
    tree = parse_python(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom | ast.Call):
            continue
        dotted: list[str] = []
        if isinstance(node, ast.Import):
            dotted = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                dotted.append(sub if _dayflow(sub) in MODULES else base)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
            in ("import_module", "__import__")
        ):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                dotted = [arg.value]
            elif module == "cli" and isinstance(arg, ast.JoinedStr):
                dotted = [f"dayflow.{m}" for m in _command_modules()]
            else:
                raise AssertionError(
                    f"dayflow/{MODULES[module].relative_to(PACKAGE)}:{node.lineno} imports a "
                    "module by a name this test cannot read: name it literally, or teach "
                    "tests/test_floors.py where the names come from"
                )
        for name in dotted:
            ours = _dayflow(name)
            if ours is not None and ours != module:
                assert ours in MODULES, f"{module}:{node.lineno} imports {name}: no such module"
                yield ours, node.lineno


IMPORTS = {m: sorted(set(_imports(m))) for m in MODULES}
GRAPH = {m: sorted({t for t, _ in found}) for m, found in IMPORTS.items()}
ROWS = {row: floor for floor, (_, rows) in enumerate(FLOORS) for row in rows}
ORDER = {row: n for n, row in enumerate(r for _, rows in FLOORS for r in rows)}


def row_of(module: str) -> str | None:
    """The longest row naming `module` or a package around it."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in ROWS:
            return ".".join(parts[:n])
    return None


def _circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected parts of `graph` with more than one node (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _edges(graph: dict[str, list[str]], part: list[str]) -> str:
    return "; ".join(f"{a} -> {b}" for a in part for b in graph.get(a, ()) if b in part)


def test_every_module_has_a_row() -> None:
    missing = [m for m in MODULES if row_of(m) is None]
    assert not missing, (
        f"no floor for {missing}: add each to the row of its concept in {TABLE}, or give it a "
        "row on the lowest floor whose rows hold everything it imports"
    )


def test_every_row_names_a_module() -> None:
    assert not [r for r in ROWS if r not in MODULES], f"rows of {TABLE} naming no module"
    assert len(ROWS) == sum(len(rows) for _, rows in FLOORS), f"a row twice in {TABLE}"


def test_no_module_imports_in_a_circle() -> None:
    circles = _circles(GRAPH)
    assert not circles, "modules importing each other: " + " | ".join(
        _edges(GRAPH, c) for c in circles
    )


def row_graph(allowed: dict[tuple[str, str], str]) -> dict[str, dict[str, list[str]]]:
    """Row -> the rows it imports -> the imports that make it so (`module -> module`)."""
    rows: dict[str, dict[str, list[str]]] = {}
    for module, targets in GRAPH.items():
        here = row_of(module)
        for target in targets:
            there = row_of(target)
            if here and there and here != there and (module, target) not in allowed:
                rows.setdefault(here, {}).setdefault(there, []).append(f"{module} -> {target}")
    return rows


def test_no_rows_import_in_a_circle() -> None:
    rows = row_graph(ALLOWED)
    circles = _circles({r: sorted(t) for r, t in rows.items()})
    assert not circles, "rows importing each other: " + " | ".join(
        ", ".join(i for a in c for b, why in rows.get(a, {}).items() if b in c for i in why)
        for c in circles
    )


def up_a_floor() -> list[str]:
    found = []
    for module in MODULES:
        here = row_of(module)
        for target, line in IMPORTS[module]:
            there = row_of(target)
            if here is None or there is None or ROWS[there] <= ROWS[here]:
                continue
            if (module, target) not in ALLOWED:
                found.append(
                    f"{module}:{line} (floor {FLOORS[ROWS[here]][0]!r}) imports {target} "
                    f"(floor {FLOORS[ROWS[there]][0]!r})"
                )
    return found


def test_no_import_runs_up_a_floor() -> None:
    found = up_a_floor()
    assert not found, (
        "imports up a floor (move the shared thing down a floor, not into a function):\n"
        + "\n".join(found)
    )


def test_on_a_floor_a_row_imports_only_the_rows_listed_before_it() -> None:
    found = []
    for module in MODULES:
        here = row_of(module)
        for target, line in IMPORTS[module]:
            there = row_of(target)
            if here is None or there is None or ROWS[there] != ROWS[here]:
                continue
            if ORDER[there] > ORDER[here] and (module, target) not in ALLOWED:
                found.append(f"{module}:{line} imports {target}")
    assert not found, (
        f"imports of a row listed later on the same floor of {TABLE} (list the imported row "
        "first, if it imports nothing back):\n" + "\n".join(found)
    )


def test_every_allowance_is_still_needed() -> None:
    """An allowance goes when its import does, or when the table allows the import anyway."""
    stale = [
        (module, target)
        for module, target in ALLOWED
        if target not in GRAPH.get(module, ())
        or ORDER[row_of(target) or ""] <= ORDER[row_of(module) or ""]
    ]
    assert not stale, f"allowances in {TABLE} that no import needs now: {stale}"


ARCHITECTURE = ROOT / "ARCHITECTURE.md"
BEGIN = "<!-- floors: written from tests/floors.py; tests/test_floors.py prints it anew -->"
END = "<!-- /floors -->"


def _shown(row: str) -> str:
    """How ARCHITECTURE.md names a row: `models.py`, `store/`, `sources/factory.py`."""
    if row == "__init__":
        return "`__init__.py`"
    path = row.replace(".", "/")
    return f"`{path}/`" if _is_package(row) else f"`{path}.py`"


def floor_paragraph() -> str:
    """ARCHITECTURE.md's list of the floors, from the ground up, as the table has them."""
    lines = [BEGIN]
    for n, (name, rows) in enumerate(FLOORS, 1):
        line = f"{n}. {name}: {', '.join(_shown(r) for r in rows)}"
        lines.extend(textwrap.wrap(line, 96, subsequent_indent="   ", break_on_hyphens=False))
    lines.append(END)
    return "\n".join(lines)


def test_architecture_draws_the_floors_of_the_table() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    wanted = floor_paragraph()
    assert wanted in text, (
        f"ARCHITECTURE.md's floors differ from {TABLE}: put this under '## The floors' in "
        f"place of what stands between its markers:\n\n{wanted}\n"
    )


def _rooms_table() -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index("## The rooms")
    return text[start : text.index("\n## ", start + 1)]


def test_every_module_is_on_the_map() -> None:
    """Every top-level module and package, and every row of the table inside a package, is
    named in ARCHITECTURE.md's rooms table (a pattern such as `cli_<topic>.py` or
    `schedule*.py` names those it matches; a package's row names its own files)."""
    import fnmatch
    import re

    table = _rooms_table()
    names = set(re.findall(r"`([^`\s]+)`", table))
    patterns = [re.sub(r"<[^>]+>", "*", n) for n in names if "*" in n or "<" in n]
    missing = []
    for module in MODULES:
        if "." in module or module in ("__init__", "__main__"):
            continue
        shown = f"{module}/" if _is_package(module) else f"{module}.py"
        if shown not in names and not any(fnmatch.fnmatch(shown, p) for p in patterns):
            missing.append(shown)
    for row in ROWS:
        if "." not in row:
            continue
        package, rest = row.split(".", 1)
        shown = rest.replace(".", "/") + ("/" if _is_package(row) else ".py")
        lines = [line for line in table.splitlines() if f"`{package}/`" in line]
        if not any(f"`{shown}`" in line for line in lines):
            missing.append(f"{package}/{shown}")
    assert not missing, f"ARCHITECTURE.md's rooms table does not name: {missing}"
