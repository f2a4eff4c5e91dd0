"""Public labelled data from elsewhere, scored beside the house splits (issue 34 part 3).

Each split here is a loader and its own scoring, run with `python -m bench.eval --split NAME`;
their tables go to stdout (RESULTS.md holds dated copies, written by hand with their sources).
Each data set's folder (or, for AgentDojo, the wheel it is read from) says its source, commit
and licence: see `README.md` beside this file.
"""

from __future__ import annotations

from collections.abc import Callable

SPLITS = ("enron-asks", "gaia-email", "gaia-triage", "agentdojo")


class Unavailable(Exception):
    """The data is not on this machine: the message says how to get it (one line)."""


def report(name: str) -> str:
    """The tables of public split `name`; raises `Unavailable` when its data is absent."""
    return _REPORTS[name]()


def _enron() -> str:
    from bench.eval.public import enron

    return enron.report()


def _gaia() -> str:
    from bench.eval.public import gaia

    return gaia.report()


def _gaia_triage() -> str:
    from bench.eval.public import gaia_triage

    return gaia_triage.report()


def _agentdojo() -> str:
    from bench.eval.public import agentdojo

    return agentdojo.report()


_REPORTS: dict[str, Callable[[], str]] = {
    "enron-asks": _enron,
    "gaia-email": _gaia,
    "gaia-triage": _gaia_triage,
    "agentdojo": _agentdojo,
}
