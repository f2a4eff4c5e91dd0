"""The commands Dayflow's hints name are the ones that work as printed: another profile's name
`--profile NAME` (without it they look at the default profile's runs and find nothing), the
default profile's stay as they always were."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from dayflow.providers.offline import OfflineModel
from tests.harness import Result, invoke

HINT = re.compile(r"`(dayflow [^`]*)`")


def _offline(*a: Any) -> OfflineModel:
    return OfflineModel()


def _hints(*results: Result) -> list[str]:
    return [h for r in results for h in HINT.findall(r.out + r.err)]


def _run_as_printed(db: Path, hint: str) -> Result:
    words = shlex.split(hint)
    assert words[0] == "dayflow"
    return invoke(db, _offline, *words[1:])


def _interrupted_then_done(db: Path, flag: tuple[str, ...]) -> tuple[str, list[Result]]:
    """An interrupted brief, the listings and notes that name it, its hinted resume run as
    printed: (the run's id, every result whose hints are checked)."""
    crashed = invoke(db, _offline, "brief", "--crash-after", "1", *flag)
    assert crashed.code == 70, crashed.err
    listed = invoke(db, _offline, "runs", *flag)
    assert listed.code == 0, listed.err
    run_id = re.search(r"run ([0-9a-f]{12}) is interrupted", listed.err)
    assert run_id is not None, listed.err
    shown = invoke(db, _offline, "show", run_id[1], *flag)
    again = invoke(db, _offline, "brief", "--crash-after", "1", *flag)  # notes the first one
    assert again.code == 70 and run_id[1] in again.err, again.err
    (resume,) = [h for h in _hints(listed) if h.startswith("dayflow resume")]
    resumed = _run_as_printed(db, resume)
    assert resumed.code == 0, resumed.err
    latest = invoke(db, _offline, "resume", *flag)  # the second crashed run
    assert latest.code == 0, latest.err
    nothing = invoke(db, _offline, "resume", *flag)
    assert nothing.code == 3, nothing.err
    update = invoke(db, _offline, "brief", *flag)  # the day has its brief: an update
    assert update.code == 0, update.err
    return run_id[1], [crashed, listed, shown, again, resumed, latest, nothing, update]


def test_every_hint_of_another_profile_names_it_and_works_as_printed(tmp_path: Path) -> None:
    db = tmp_path / "dayflow.db"
    config = tmp_path / "ann.toml"
    config.write_text("# ann's config: the sample inbox\n")
    assert invoke(db, _offline, "brief").code == 0  # the database, and a default run
    added = invoke(db, _offline, "profiles", "add", "ann", "--config", str(config))
    assert added.code == 0, added.err
    run_id, results = _interrupted_then_done(db, ("--profile", "ann"))
    hints = _hints(*results)
    assert f"dayflow resume {run_id} --profile ann" in hints  # from `runs` and `brief`
    assert any(h.startswith("dayflow show ") for h in hints)  # the update's note
    assert "dayflow runs --profile ann" in hints  # a bare resume with nothing to resume
    assert hints and all(h.endswith(" --profile ann") for h in hints), hints
    for hint in set(hints):
        if hint.startswith(("dayflow show", "dayflow runs")):  # read-only: runnable again
            ran = _run_as_printed(db, hint)
            assert ran.code == 0 and "no runs yet" not in ran.err, (hint, ran.err)


def test_the_default_profiles_hints_are_as_they_always_were(tmp_path: Path) -> None:
    db = tmp_path / "dayflow.db"
    run_id, results = _interrupted_then_done(db, ())
    listed = results[1]
    assert f"run {run_id} is interrupted: `dayflow resume {run_id}` continues it" in listed.err
    assert (
        "nothing to resume: every run is done or driven by a live process (see `dayflow "
        "runs`)" in results[6].err
    )
    hints = _hints(*results)
    assert f"dayflow resume {run_id}" in hints
    assert not [h for h in hints if "--profile" in h], hints


def test_a_bare_resume_while_another_process_drives_the_run_names_that_process(
    tmp_path: Path,
) -> None:
    """A second `dayflow resume` (no id) while the first holds the run's lease: exit 5 and
    the driver's pid, as `resume RUN` says, not "nothing to resume"."""
    import os

    from dayflow.store import open_store

    db = tmp_path / "dayflow.db"
    assert invoke(db, _offline, "brief", "--crash-after", "1").code == 70
    store = open_store(db)
    try:
        (run,) = store.runs.list()
        store.leases.claim(run.id)  # this test's process, alive, drives it now
        busy = invoke(db, _offline, "resume")
    finally:
        store.close()
    assert busy.code == 5, busy.err
    assert f"run {run.id} is being driven by pid {os.getpid()} on host " in busy.err


def test_a_thread_no_brief_showed_is_noted_with_the_profiles_brief_command(
    tmp_path: Path,
) -> None:
    """mute's and snooze's note for an unseen thread key names the brief of the profile the
    rule was made for."""
    db = tmp_path / "dayflow.db"
    config = tmp_path / "ann.toml"
    config.write_text("# ann's config: the sample inbox\n")
    assert invoke(db, _offline, "brief").code == 0
    assert invoke(db, _offline, "profiles", "add", "ann", "--config", str(config)).code == 0
    for command in (("mute",), ("snooze", "--until", "3d")):
        said = invoke(db, _offline, command[0], "thread:222222222222", *command[1:],
                      "--profile", "ann")  # fmt: skip
        assert said.code == 0, said.err
        assert said.err.strip().endswith(
            "check the key in `dayflow brief --format json --profile ann`"
        ), said.err
