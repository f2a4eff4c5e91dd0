"""The brief as a page people would rather look at: its data (`data.py`: sections of lines,
each with its evidence, from the run's committed reads) and its HTML (`html.py`: one inert,
self-contained document through Jinja2's autoescape, imported only when a page is written).

The face: `page_of` builds a `Page`; `document` writes it whole (`--format html`, the HTML part
of the brief's mail); `with_article` puts it in a page file (`file:*.html`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dayflow.page.data import Evidence, Line, Page, Part, page_of

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from dayflow.models import Message, Run, Task

__all__ = [
    "Evidence",
    "Line",
    "Page",
    "Part",
    "document",
    "page_of",
    "page_of_run",
    "update_label",
    "with_article",
]


def update_label(run: Run) -> str | None:
    """ "Update HH:MM" (when the run started, in the user's zone) for an update of the day's
    brief; None for the day's brief. From the run's row, so a resume labels it the same."""
    if run.settings.update_of is None:
        return None
    from datetime import datetime
    from zoneinfo import ZoneInfo

    started = datetime.fromisoformat(run.created_at).astimezone(ZoneInfo(run.settings.tz))
    return f"Update {started:%H:%M}"


def page_of_run(
    conversation: list[Message], run: Run, text: str, proof: Mapping[str, Task] | None = None
) -> Page:
    """The page of `run`'s brief `text`, from its committed `conversation` (`proof`: the
    tasks it filed, by id, for their evidence; see `page_of`)."""
    return page_of(
        conversation,
        text,
        run_id=run.id,
        brief_date=run.brief_date,
        zone=run.settings.tz,
        label=update_label(run),
        model=run.model,
        proof=proof,
    )


def document(page: Page, why: Callable[[str], str] | None = None) -> str:
    """The page of one brief as a whole HTML document (`why`: a line's `/why/ID` address)."""
    from dayflow.page.html import document as write

    return write(page, why)


def with_article(existing: str, page: Page) -> Any:
    """The page file `existing` with this run's article in it, and the verb said of it; None
    when `existing` is not a page Dayflow wrote."""
    from dayflow.page.html import with_article as merge

    return merge(existing, page)
