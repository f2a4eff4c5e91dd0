"""The `notify` sink: a desktop notification with the brief's "One thing"."""

from __future__ import annotations

import subprocess

from dayflow.delivery.effects import Attempt, Unanswered, one_line
from dayflow.delivery.settings import DeliveryFailed
from dayflow.models import Section
from dayflow.printable import plain


def to_notify(job: Attempt) -> str:
    brief, settings = job.brief, job.settings
    title = f"Dayflow: brief for {brief.brief_date}"
    body = plain(one_thing(brief.text) or "Your daily brief is ready.")
    if settings.platform == "darwin":
        script = f"display notification {_applescript(body)} with title {_applescript(title)}"
        argv = ["osascript", "-e", script]
    else:
        argv = ["notify-send", "--app-name=Dayflow", title, body]
    import shutil

    path = settings.env.get("PATH")
    exe = shutil.which(argv[0], path=path)
    if exe is None:
        raise DeliveryFailed(f"notify: `{argv[0]}` is not installed")
    job.mark("sending", argv=argv[:1])
    job.kill("while_sending")
    try:
        proc = subprocess.run(
            [exe, *argv[1:]], capture_output=True, text=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise Unanswered(
            f"uncertain: {argv[0]} did not finish within 30 s ({exc}); the notification may "
            "have been shown, and is not shown again"
        ) from None
    except OSError as exc:  # it never started: nothing was shown
        job.mark("refused", error=str(exc))
        raise DeliveryFailed(f"notify: {argv[0]} failed: {exc}") from None
    if proc.returncode != 0:  # it said it failed: nothing was shown, resume tries again
        job.mark("refused", exit=proc.returncode)
        raise DeliveryFailed(
            f"notify: {argv[0]} exited {proc.returncode}: {one_line(Exception(proc.stderr))}"
        )
    return f"shown with {argv[0]}"


def one_thing(text: str) -> str | None:
    """The brief's "One thing" line, for a notification."""
    name = Section.ONE_THING.lower()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip("#").strip().lower() == name:
            for rest in lines[i + 1 :]:
                if rest.strip():
                    return rest.strip().strip("*").strip()[:200]
    return None


def _applescript(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
