from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from dayflow import listing, render
from dayflow.models import Event, Task


def _text(renderable: object) -> str:
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(renderable)
    return out.getvalue()


def test_bracketed_text_from_emails_is_shown_literally() -> None:
    task = Task("t_1", "[urgent] Pay [bold]rent[/bold]", None, "open", None, None, "k", None, "t")
    assert "[urgent] Pay [bold]rent[/bold]" in listing.tasks_table([task])


def test_long_tool_arguments_are_cut_to_the_first_key() -> None:
    args = {"title": "Send edits on partnership one-pager to Sam", "idempotency_key": "email:m12"}
    line = render.tool_call_line("create_task", args)
    assert (
        line == "    -> create_task({'title': 'Send edits on partnership one-pager to Sam', ...})"
    )
    assert render.tool_call_line("read_inbox", {"limit": 20}) == "    -> read_inbox({'limit': 20})"


def _event(seq: int, kind: str, pid: int) -> Event:
    return Event("r", seq, kind, {}, pid, "host", "2026-11-05T07:30:00+00:00")


def test_a_take_over_and_its_resume_are_one_restart_boundary() -> None:
    events = [
        _event(1, "run_started", 10),
        _event(2, "step_committed", 10),
        _event(3, "lease_taken_over", 20),
        _event(4, "run_resumed", 20),
        _event(5, "run_resumed", 20),  # resumed again in the same process (tests do this)
    ]
    assert _text(render.events_table(events)).count("new process") == 2


def test_runs_from_several_hosts_get_a_host_column_and_one_hosts_runs_none(
    tmp_path: object,
) -> None:
    from pathlib import Path

    from dayflow.frozen import replace
    from dayflow.store import open_store
    from tests.test_agent import _new_run

    with open_store(Path(str(tmp_path)) / "d.db") as s:
        run = s.runs.create(_new_run())[0]
    one = [replace(run, host="laptop"), replace(run, id="b" * 12, host="laptop")]
    two = [replace(run, host="laptop"), replace(run, id="b" * 12, host="desktop")]
    from dayflow import listing

    assert "host" not in listing.runs_table(one).splitlines()[0]
    table = listing.runs_table(two)
    assert "host" in table.splitlines()[0] and "laptop" in table and "desktop" in table


@given(st.text())
def test_listing_cells_count_wide_characters_twice_and_combining_marks_not_at_all(
    text: str,
) -> None:
    """The ASCII shortcut (no unicodedata on the usual path) gives what the full rule gives."""
    import unicodedata

    full = sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )
    assert listing._cells(text) == full
    assert listing._cells(text.encode("ascii", "replace").decode()) == len(
        text.encode("ascii", "replace")
    )


def test_fleet_status_of_no_profiles_says_how_to_add_one_not_an_empty_table() -> None:
    from dayflow.fleet.status import Board
    from dayflow.listing import fleet_table

    shown = fleet_table(Board("2026-12-01", (), None))
    assert shown == "2026-12-01: no profiles yet: `dayflow profiles add NAME --config FILE`\n"
