"""The stderr trace of a run's notes: a spinner while the model works, the resume, fork and
finish lines, and with -v each step and tool call. It writes on the runtime's error console
(the CLI's Rich console; any object with its `print`, `status` and `is_terminal`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # A type only: the console is the CLI's (Rich is imported in cli*.py and render.py).
    from rich.console import Console  # noqa: TID251

    from dayflow.agent import Note


class Trace:
    """Shows the loop's notes on stderr: a spinner while the model works, and with -v the
    step trace."""

    def __init__(self, console: Console, verbose: bool) -> None:
        self.console, self.verbose = console, verbose
        self.status: Any = None

    def __call__(self, note: Note) -> None:
        from dayflow.agent import notes  # a note comes only from a run: the agent is loaded

        if isinstance(note, notes.Calling) and self.console.is_terminal:
            self.status = self.console.status(_Waiting(note.step))
            self.status.start()
        elif isinstance(note, notes.Called) and self.status is not None:
            self.status.stop()
            self.status = None
        elif isinstance(note, notes.Forked):
            run = note.run
            self.console.print(
                f"[fork {run.id}] of run {note.parent} at step {note.step}: {note.step} "
                f"step(s) copied (no model call), continuing with {run.model}",
                markup=False,
            )
        elif isinstance(note, notes.Resumed):
            run = note.run
            self.console.print(
                f"[resume {run.id}] replaying {run.steps} committed step(s), "
                f"{run.usage.total_input} in / {run.usage.output_tokens} out already spent",
                markup=False,
            )
        elif isinstance(note, notes.StepRead) and self.verbose:
            extra = "  (committed before the crash; finishing it)" if note.recovered else ""
            if note.read_as:
                extra = f" ({note.read_as}){extra}"
            self.console.print(f"[step {note.step}] stop={note.stop_reason}{extra}", markup=False)
        elif isinstance(note, notes.ToolCalled) and self.verbose:
            from dayflow import render

            line = render.tool_call_line(
                note.name, note.input, reused=note.reused, error=note.error
            )
            self.console.print(line, markup=False, soft_wrap=True)
        elif isinstance(note, notes.Delivered):
            self.console.print(f"delivered: {note.line}", markup=False, soft_wrap=True)
        elif isinstance(note, notes.Uncertain):
            self.console.print(f"delivery {note.line}", markup=False, soft_wrap=True)
        elif isinstance(note, notes.McpNotice):
            self.console.print(f"mcp: {note.line}", markup=False, soft_wrap=True)
        elif isinstance(note, notes.DraftWarning):
            self.console.print(note.line, markup=False, soft_wrap=True)
        elif isinstance(note, notes.Finished):
            run = note.run
            word = "resumed" if note.resumed else "run"
            est = " (estimated)" if run.estimated else ""
            self.console.print(
                f"[{word} {run.id} · finished at step {run.steps} · {run.usage.total_input} in"
                f" / {run.usage.output_tokens} out total{est}]",
                markup=False,
            )


class _Waiting:
    """The spinner's text, with the seconds waited so far (a local model on a CPU may take
    minutes a step): Rich renders it anew at each refresh."""

    def __init__(self, step: int, clock: Callable[[], float] | None = None) -> None:
        import time

        self.step, self._clock = step, clock or time.monotonic
        self.started = self._clock()

    def __rich__(self) -> str:
        waited = int(self._clock() - self.started)
        return f"step {self.step}: waiting for the model… {waited} s"
