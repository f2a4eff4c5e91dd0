"""What the view's pages show and the corrections they make, with no web framework in it.

Each page opens the store for the request and closes it (a request never holds the database
between two clicks, so a `dayflow brief` at the same time goes on). The corrections are the
CLI's own core functions: `store.tasks.mark_done` (as `tasks done`), `rules.reject`,
`rules.mute` and `rules.snooze`, written to the rules file of the `Where` the CLI would use.
A kill -9 during a correction lands where the CLI's would (`dayflow.rules`: the rules file is
replaced atomically, then the task deleted; the same correction again finds its rule).

Nothing here contacts a mail server or a model: it reads what the runs saved.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from dayflow.errors import RunNotFound, UsageError

if TYPE_CHECKING:
    from dayflow.models import Run, Task
    from dayflow.rules import Where
    from dayflow.store import Store
    from dayflow.view.guard import Visit

SNOOZES = ("1d", "3d", "1w", "2w")


@dataclass(frozen=True)
class TaskRow:
    """A task as the pages list it, with the sender a mute button would silence."""

    task: Task
    sender: str


@dataclass
class Site:
    """The view of one profile's store: `open_store` opens it for one request, `where` says
    whose rules file a correction (its command as `dayflow rules` names it) writes."""

    open_store: Callable[[], AbstractContextManager[Store]]
    where: Callable[[str], Where]
    read_only: bool = False
    profile: str | None = None

    # -- pages -----------------------------------------------------------------------------

    def home(self, visit: Visit) -> str:
        """The newest day's brief (and its updates), its tasks with their buttons."""
        from dayflow.view import html

        with self.open_store() as store:
            days = _days(store)
            if not days:
                return html.page(self, visit, "Dayflow", "empty", {})
            day, runs = days[0]
            return self._day(store, visit, day, runs, newest=True)

    def day(self, visit: Visit, day: str) -> str:
        with self.open_store() as store:
            for found, runs in _days(store):
                if found == day:
                    return self._day(store, visit, day, runs, newest=False)
        raise RunNotFound(f"no brief for {day[:10]!r}")

    def days(self, visit: Visit) -> str:
        from dayflow.view import html

        with self.open_store() as store:
            found = _days(store)
        return html.page(self, visit, "Past briefs", "days", {"days": found})

    def run(self, visit: Visit, run_ref: str) -> str:
        from dayflow.view import html
        from dayflow.view.svg import drawing

        with self.open_store() as store:
            run = store.runs.find(run_ref)
            steps = store.steps.of(run.id)
            events = store.events.of(run.id)
        return html.page(
            self,
            visit,
            f"Run {run.id}",
            "run",
            {"run": run, "steps": steps, "svg": html.timeline(run.id, drawing(events))},
        )

    def tasks(self, visit: Visit) -> str:
        from dayflow.view import html

        with self.open_store() as store:
            rows = _rows(store, store.tasks.list(include_done=True))
        return html.page(self, visit, "Tasks", "tasks", {"rows": rows, "snoozes": SNOOZES})

    def why(self, visit: Visit, item: str) -> str:
        from dayflow.view import html
        from dayflow.why import explain, render_text

        with self.open_store() as store:
            found = explain(store, item)
            task = _task_or_none(store, item)
            rows = _rows(store, [task]) if task is not None else []
        return html.page(
            self,
            visit,
            f"Why {item}",
            "why",
            {
                "item": item,
                "text": render_text(found),
                "why": found,
                "rows": rows,
                "snoozes": SNOOZES,
            },
        )

    def _day(self, store: Store, visit: Visit, day: str, runs: list[Run], newest: bool) -> str:
        from dayflow.page import page_of_run
        from dayflow.page.html import article
        from dayflow.view import html

        proof = {t.id: t for t in store.tasks.list(include_done=True)}
        articles = [
            article(
                page_of_run(store.steps.conversation(r.id), r, r.final_text or "", proof),
                lambda item: visit.link(f"/why/{_path(item)}"),
            )
            for r in reversed(runs)  # the day's brief first, then its updates
        ]
        ids = {r.id for r in runs}
        filed = [t for t in proof.values() if t.run_id in ids and t.status == "open"]
        title = f"Brief of {day}"
        return html.page(
            self,
            visit,
            title,
            "day",
            {
                "day": day,
                "runs": runs,
                "articles": articles,
                "rows": _rows(store, filed),
                "snoozes": SNOOZES,
                "newest": newest,
            },
        )

    # -- corrections: the CLI's core functions ---------------------------------------------

    def done(self, task_ref: str) -> str:
        """As `dayflow tasks done ID`."""
        from dayflow.printable import plain

        self._writable()
        with self.open_store() as store:
            task = store.tasks.find(task_ref)
            if task.status == "done":
                return f"already done: {plain(task.title)}"
            task = store.tasks.mark_done(task.id)
        return f"done: {plain(task.title)}"

    def reject(self, task_ref: str, why: str = "") -> str:
        """As `dayflow tasks reject ID`: the task goes, a rule keeps its like from coming."""
        from dayflow import rules
        from dayflow.printable import plain

        self._writable()
        at = self.where(f"tasks reject {task_ref}")
        with self.open_store() as store:
            rule, task = rules.reject(store, at, task_ref, why)
        return f"not a task: {plain(task.title)}; rule {rule.id}: {plain(rule.says())}"

    def mute(self, pattern: str) -> str:
        """As `dayflow mute PATTERN`."""
        from dayflow import rules
        from dayflow.printable import plain

        self._writable()
        if not pattern.strip():
            raise UsageError("nothing to mute")
        rule = rules.mute(self.where(f"mute {pattern}"), pattern)
        return f"rule {rule.id}: {plain(rule.says())}"

    def snooze(self, task_ref: str, until: str) -> str:
        """As `dayflow snooze ID --until UNTIL`."""
        from dayflow import rules
        from dayflow.printable import plain

        self._writable()
        at = self.where(f"snooze {task_ref} --until {until}")
        day = rules.parse_until(until, at.today)
        with self.open_store() as store:
            rule = rules.snooze(store, at, task_ref, day)
        return f"rule {rule.id}: {plain(rule.says())}"

    def _writable(self) -> None:
        if self.read_only:
            raise UsageError("this view is read-only")


def _days(store: Store) -> list[tuple[str, list[Run]]]:
    """Each day with a written brief, newest first, with its runs (newest first)."""
    found: dict[str, list[Run]] = {}
    for run in store.runs.list(limit=None):
        if run.final_text is not None:
            found.setdefault(run.brief_date, []).append(run)
    return sorted(found.items(), key=lambda kv: date.fromisoformat(kv[0]), reverse=True)


def _rows(store: Store, tasks: list[Task]) -> list[TaskRow]:
    from dayflow.rules import task_facts

    return [TaskRow(t, task_facts(store, t).sender) for t in tasks]


def _task_or_none(store: Store, item: str) -> Task | None:
    if not item.startswith("t_"):
        return None
    try:
        return store.tasks.find(item)
    except RunNotFound:
        return None


def _path(item: str) -> str:
    from urllib.parse import quote

    return quote(item, safe="")
