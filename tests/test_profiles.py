"""Profiles in the store: one person's runs, tasks and task keys are theirs alone, on both
engines, and a database written before profiles keeps its rows (they are the default's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dayflow.errors import DayTaken, ProfileNotFound, RunBusy, RunNotFound, UsageError
from dayflow.store import DEFAULT_PROFILE, open_store, task_id
from dayflow.store.sqlite_schema import MIGRATIONS
from dayflow.store.values import Profile
from tests.conftest import FixedClock, db_rows, expire_leases, undo_profiles
from tests.scripted import text, turn
from tests.test_agent import _new_run


def _two(target: Path | str, clock: FixedClock) -> tuple[str, str]:
    """A run with a task under key "mail:m1" for the default profile and for ann."""
    ids = []
    for profile in (DEFAULT_PROFILE, "ann"):
        with open_store(target, clock=clock, profile=profile) as s:
            run, lease = s.runs.create(_new_run())
            s.tasks.create(title=f"{profile}'s", idempotency_key="mail:m1", run_id=run.id)
            s.steps.begin(lease, 1, turn(text("done")), 1)
            ids.append(run.id)
    return ids[0], ids[1]


def test_the_same_key_in_two_profiles_is_two_tasks_each_seen_only_by_its_own(
    store_target: Path | str, clock: FixedClock
) -> None:
    mine, anns = _two(store_target, clock)
    with (
        open_store(store_target, clock=clock) as s,
        open_store(store_target, clock=clock, profile="ann") as a,
    ):
        assert [t.title for t in s.tasks.list()] == ["default's"]
        assert [t.title for t in a.tasks.list()] == ["ann's"]
        assert s.tasks.list()[0].id == task_id("mail:m1")  # the default's ids are unchanged
        assert a.tasks.list()[0].id == task_id("mail:m1", "ann") != task_id("mail:m1")
        assert a.tasks.exists("mail:m1") and s.tasks.exists("mail:m1")
        assert [r.id for r in s.runs.list()] == [mine]
        assert [r.id for r in a.runs.list()] == [anns]
        for store, other in ((s, anns), (a, mine)):
            with pytest.raises(RunNotFound):
                store.runs.get(other)
            with pytest.raises(RunNotFound):
                store.runs.find(other[:6])
            with pytest.raises(RunNotFound):
                store.leases.claim(other)
            with pytest.raises(RunNotFound):
                store.tasks.find(task_id("mail:m1", "ann" if store is s else DEFAULT_PROFILE))
            assert other not in [r.id for r in store.archive.stale_leases()]
        assert s.tasks.delete_with_key_prefix("mail:") == 1
        assert [t.title for t in a.tasks.list()] == ["ann's"]


def test_a_profile_has_its_own_brief_of_the_day(
    store_target: Path | str, clock: FixedClock
) -> None:
    """The day's lock and its one brief are per (profile, day): ann's brief does not take
    the default's day, and a second one of ann's is refused naming hers."""
    with open_store(store_target, clock=clock, profile="ann") as a:
        anns, _ = a.runs.create(_new_run(), sole_for_day=True)
        with pytest.raises(DayTaken) as taken:
            a.runs.create(_new_run(), sole_for_day=True)
        assert taken.value.run_id == anns.id
    with open_store(store_target, clock=clock) as s:
        mine, _ = s.runs.create(_new_run(), sole_for_day=True)
        assert mine.id != anns.id


def test_a_database_from_before_profiles_keeps_its_rows_as_the_defaults(
    store_target: Path | str, clock: FixedClock
) -> None:
    with open_store(store_target, clock=clock) as s:
        run, _ = s.runs.create(_new_run())
        task, _ = s.tasks.create(title="Old", idempotency_key="mail:old", run_id=run.id)
    undo_profiles(store_target)
    with open_store(store_target, clock=clock) as s:
        assert s.upkeep.schema_version() == s.upkeep.latest_schema() == MIGRATIONS[-1][0]
        assert [r.id for r in s.runs.list()] == [run.id]
        assert s.tasks.list() == [task]
        # The key is now unique per profile: ann may file the same one.
        with open_store(store_target, clock=clock, profile="ann") as a:
            assert a.tasks.create(title="Ann", idempotency_key="mail:old", run_id=None)[1]
    rows = db_rows(store_target, "SELECT profile FROM tasks ORDER BY profile")
    assert [r[0] for r in rows] == ["ann", "default"]


def test_profiles_are_added_listed_and_removed_with_or_without_their_history(
    store_target: Path | str, clock: FixedClock
) -> None:
    _two(store_target, clock)
    with open_store(store_target, clock=clock) as s:
        ann = s.profiles.add(Profile("ann", "/etc/ann.toml", "Europe/Paris", "07:30", "12345"))
        s.profiles.add(Profile("bob", "/etc/bob.toml"))
        with pytest.raises(UsageError, match="exists"):
            s.profiles.add(Profile("ann", "/x"))
        assert [p.name for p in s.profiles.list()] == ["ann", "bob"]
        assert s.profiles.get("ann") == ann
        assert s.profiles.remove("ann") == 0  # history kept
        with pytest.raises(ProfileNotFound):
            s.profiles.get("ann")
        with pytest.raises(ProfileNotFound):
            s.profiles.remove("ann")
    with open_store(store_target, clock=clock, profile="ann") as a:
        assert len(a.runs.list()) == 1 and len(a.tasks.list()) == 1
        a.profiles.add(Profile("ann", "/etc/ann.toml"))
        with pytest.raises(RunBusy):  # its run is being driven by this very process
            a.profiles.remove("ann", purge=True)
    expire_leases(store_target, clock)  # its driver is gone
    with open_store(store_target, clock=clock, profile="ann") as a:
        assert a.profiles.remove("ann", purge=True) == 1
        assert a.runs.list() == [] and a.tasks.list() == []
    with open_store(store_target, clock=clock) as s:
        assert len(s.runs.list()) == 1 and len(s.tasks.list()) == 1  # the default's untouched


def test_the_default_profile_cannot_be_added_so_no_purge_deletes_its_history(
    store_target: Path | str, clock: FixedClock
) -> None:
    """`profiles add default` would give the history of everyone without --profile another
    config file, and `profiles remove default --purge` would then delete all of it."""
    _two(store_target, clock)
    with open_store(store_target, clock=clock) as s:
        with pytest.raises(UsageError, match="is the default profile"):
            s.profiles.add(Profile(DEFAULT_PROFILE, "/etc/other.toml"))
        assert s.profiles.list() == []
        with pytest.raises(ProfileNotFound):
            s.profiles.remove(DEFAULT_PROFILE, purge=True)
        assert len(s.runs.list()) == 1 and len(s.tasks.list()) == 1


def test_worker_seconds_that_are_not_a_number_are_bad_usage(tmp_path: Path) -> None:
    """NaN passes a range check (no comparison with it is true): refused in one line."""
    from tests.harness import invoke

    for option in ("--heartbeat", "--poll", "--batch-poll"):
        result = invoke(tmp_path / "h.db", lambda *a: None, "worker", option, "nan")
        assert result.code == 2 and "is not a number of seconds" in result.err, result.err
        assert "internal error" not in result.err


def test_profile_is_refused_in_one_line_where_it_means_nothing(tmp_path: Path) -> None:
    """The profiles' and the fleet's commands are every profile's: --profile is not offered
    there (not in --help) and, given anyway, is refused in one line (exit 2) before anything
    is read, whether after the command or after its group."""
    from tests.harness import invoke

    db = tmp_path / "h.db"
    config = tmp_path / "c.toml"
    config.write_text("")
    cases = [
        ("profiles", "add", "ann", "--config", str(config), "--profile", "bob"),
        ("profiles", "list", "--profile", "ann"),
        ("profiles", "--profile", "ann", "list"),
        ("profiles", "remove", "ann", "--profile", "ann"),
        ("worker", "--until-idle", "--profile", "ann"),
        ("fleet", "enqueue", "--profile", "ann"),
        ("fleet", "--profile", "ann", "status"),
    ]
    for args in cases:
        result = invoke(db, lambda *a: None, *args)
        lines = result.err.strip().splitlines()
        assert result.code == 2 and len(lines) == 1, (args, result.err)
        assert "--profile does not apply to `dayflow " in lines[0], (args, lines)
    assert not db.exists()  # nothing was made
    for args in (("worker",), ("fleet", "status"), ("profiles", "list"), ("profiles",), ("fleet",)):
        shown = invoke(db, lambda *a: None, *args, "--help")
        assert shown.code == 0 and "Whose runs and tasks" not in shown.out, args
    # Where it means something, it stays.
    assert "--profile" in invoke(db, lambda *a: None, "runs", "--help").out


def test_a_registered_profiles_run_is_refused_once_its_row_is_gone(
    store_target: Path | str, clock: FixedClock
) -> None:
    """A worker took ann's job (her row was there), then `profiles remove ann --purge` went
    first: the run the worker makes after is refused (ProfileNotFound, the job dropped), so
    no run or task is left behind that no command shows. An unregistered store (a database
    without a fleet) makes runs under any name, as before."""
    with open_store(store_target, clock=clock) as s:
        s.profiles.add(Profile("ann", "/etc/ann.toml"))
    with open_store(store_target, clock=clock, profile="ann", registered=True) as a:
        a.runs.create(_new_run())  # her row is there
        expire_leases(store_target, clock)
        with open_store(store_target, clock=clock) as s:
            assert s.profiles.remove("ann", purge=True) == 1
        with pytest.raises(ProfileNotFound, match="no profile 'ann'"):
            a.runs.create(_new_run())
    assert db_rows(store_target, "SELECT id FROM runs WHERE profile = 'ann'") == []
    with open_store(store_target, clock=clock, profile="bob") as b:
        assert b.runs.create(_new_run())[0].id  # no fleet row needed without `registered`
