"""The README is the entry point and `docs/` is the manual (issue 33.5): the README stays at
most 400 lines, every page of `docs/` is listed in its index, and every relative link in the
README and in `docs/*.md` names a file that exists and, after `#`, a heading that file has
(by the anchor GitHub gives it): a page moved or a heading renamed without its links
following fails here, naming the file, the line and the link."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_readme_toc import anchor

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 400

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6}) (.+?)\s*#*\s*$")


def pages() -> list[Path]:
    return [README, ROOT / "ARCHITECTURE.md", *sorted(DOCS.glob("*.md"))]


def prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each line outside fenced code, with inline code blanked."""
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, _CODE_SPAN.sub("", line)))
    return out


def links(path: Path) -> list[tuple[int, str]]:
    return [
        (number, target)
        for number, line in prose(path.read_text(encoding="utf-8"))
        for target in _LINK.findall(line)
    ]


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if match:
            found.add(anchor(match.group(2), seen))
    return found


def broken(path: Path, root: Path = ROOT) -> list[str]:
    wrong = []
    for number, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        name, _, fragment = target.partition("#")
        dest = (path.parent / name).resolve() if name else path
        where = f"{path.relative_to(root)}:{number}: ({target})"
        if not dest.exists():
            wrong.append(f"{where} no such file")
            continue
        if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            wrong.append(f"{where} no such heading in {dest.relative_to(root)}")
    return wrong


def test_the_readme_is_an_entry_point_not_the_manual() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines (at most {MAX_README_LINES}): move the manual's text to docs/"
    )


def test_every_relative_link_resolves_to_a_file_and_a_heading() -> None:
    wrong = [line for path in pages() for line in broken(path)]
    assert not wrong, "broken links:\n" + "\n".join(wrong)


def test_the_docs_index_lists_every_page() -> None:
    index = DOCS / "README.md"
    listed = {(DOCS / name.partition("#")[0]).resolve() for _, name in links(index)}
    unlisted = [p.name for p in sorted(DOCS.glob("*.md")) if p != index and p not in listed]
    assert not unlisted, f"docs/README.md does not list: {unlisted}"
    assert (DOCS / "cli.md") in listed, "the index links the generated CLI reference"


def test_the_readme_links_the_manual() -> None:
    targets = {(README.parent / t.partition("#")[0]).resolve() for _, t in links(README)}
    assert (DOCS / "README.md") in targets and (DOCS / "cli.md") in targets


def test_the_checker_sees_what_it_must(tmp_path: Path) -> None:
    """The checker itself: a missing file, a missing heading and a good link, with code left
    alone (a fenced block and an inline span are not links)."""
    (tmp_path / "a.md").write_text(
        "# A page\n\n## Trust model: a profile's config file\n", encoding="utf-8"
    )
    page = tmp_path / "b.md"
    page.write_text(
        "See [a](a.md#trust-model-a-profiles-config-file), [gone](gone.md),\n"
        "[bad](a.md#nowhere), [self](#b), [web](https://example.org/x#y).\n"
        "`[not](a link)`\n```\n[nor](this.md)\n```\n# B\n",
        encoding="utf-8",
    )
    assert broken(page, root=tmp_path) == [
        "b.md:1: (gone.md) no such file",
        "b.md:2: (a.md#nowhere) no such heading in a.md",
    ]


QUICK_START = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install . && dayflow brief",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]'"
    " && python -m pytest -q -n 2 --dist loadgroup",
)


def test_the_quick_start_keeps_its_two_commands_and_ci_runs_the_second() -> None:
    """What users type and what `.ci/run` runs: the split kept them, word for word. CI installs
    the test extras once (with its linters) and runs the same pytest command."""
    lines = README.read_text(encoding="utf-8").splitlines()
    for command in QUICK_START:
        assert command in lines, f"the README's quick start lost: {command}"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    install, test = QUICK_START[1].split(" && ")[2:]
    assert test in ci, ".ci/run runs the README's test command"
    installs = [line for line in ci if line.startswith(("pip install", "python -m pip install"))]
    project = [line for line in installs if "'.[test]'" in line]
    assert len(project) == 1, f".ci/run installs the project once: {installs}"
    assert project[0].replace(" --quiet", "").startswith(install), project
