"""This process's environment, read in one place: `process()` is the only reader of
`os.environ` in `dayflow/` (tests/test_environ.py walks every module for another). The
runtime (`dayflow.app.Runtime`) takes it once and hands it, or the settings made from it, to
every part below; a child process's environment is built from that mapping, never read anew."""

from __future__ import annotations

import os
from collections.abc import Mapping


def process() -> Mapping[str, str]:
    """The environment this process was started with (the live mapping: what the user set)."""
    return os.environ
