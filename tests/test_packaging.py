"""What `pip install .` (not editable) ships: the package list in pyproject.toml is explicit,
so a new package that is not named there is missing from every wheel (`dayflow brief` then
fails with 'No module named dayflow.briefing' on a fresh machine, as it once did)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_dayflow_is_listed_for_the_wheel() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "dayflow").rglob("__init__.py")
    }
    assert found - listed == set()
    assert listed - found == set(setuptools["package-dir"])  # the fixtures, mapped from fixtures/
