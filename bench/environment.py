"""Where and on what the figures were taken: the machine, the disk, the software and the code.

`bench/report.py` puts these in the first lines of RESULTS.md.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path

PACKAGES = (
    "dayflow",
    "anthropic",
    "typer",
    "rich",
    "pydantic",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "ormsgpack",
    "openai-agents",
)


def environment(tmp: Path) -> dict[str, str]:
    """Where and on what the figures were taken."""
    cpu = "unknown"
    mem = "unknown"
    try:
        info = Path("/proc/cpuinfo").read_text()
        cpu = next(ln.split(":", 1)[1].strip() for ln in info.splitlines() if "model name" in ln)
        kb = next(ln for ln in Path("/proc/meminfo").read_text().splitlines() if "MemTotal" in ln)
        mem = f"{int(kb.split()[1]) / 2**20:.0f} GiB"
    except (OSError, StopIteration):
        pass
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{cpu}, {os.cpu_count()} cores, {mem} RAM, "
        f"{platform.system()} {platform.release()}",
        "disk": f"{tmp.parent} on {_filesystem(tmp)}",
        "python": f"CPython {platform.python_version()}, SQLite {sqlite3.sqlite_version}",
        "versions": ", ".join(versions),
        "git": _git(),
        "load_before": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def _filesystem(path: Path) -> str:
    best, kind = "", "unknown"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            _dev, mount, fstype, *_ = line.split()
            if str(path).startswith(mount) and len(mount) > len(best):
                best, kind = mount, fstype
    except OSError:
        pass
    return kind


def _git() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "dayflow"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    changed = [line[3:] for line in dirty if line.strip()]
    if not changed:
        return f"{head} (dayflow/ as committed)"
    return f"{head} plus uncommitted changes to {', '.join(changed)}"
