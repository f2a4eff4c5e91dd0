"""What the loop tells whoever watches it (the CLI's trace), one type per thing it did: the
loop returns results and never prints, so these are how a run is shown as it goes."""

from __future__ import annotations

from typing import Any

from dayflow.frozen import Frozen
from dayflow.models import Run


class Calling(Frozen):
    """The model is being called for step `step`."""

    step: int


class Called(Frozen):
    """The call for step `step` returned (or failed)."""

    step: int


class Resumed(Frozen):
    """A run is continued from its committed steps."""

    run: Run


class Forked(Frozen):
    """`run` was started from the first `step` steps of run `parent`."""

    run: Run
    parent: str
    step: int


class Compacted(Frozen):
    """Steps up to `through` were replaced by a summary: `before` -> `after` tokens."""

    through: int
    before: int
    after: int


class StepRead(Frozen):
    """Step `step`'s committed response is being settled; `read_as` says when it was read as
    something other than its stop reason says (a local server's tool call in text)."""

    step: int
    stop_reason: str
    tool_uses: list[dict[str, Any]]
    recovered: bool
    read_as: str | None


class ToolCalled(Frozen):
    """A tool call ran (`reused`: its saved result was used instead)."""

    name: str
    input: Any
    reused: bool
    error: bool = False


class Delivered(Frozen):
    """The brief reached a sink: `line` says where."""

    line: str


class Uncertain(Frozen):
    """A delivery may or may not have happened (a kill mid-send): never sent again."""

    line: str


class McpNotice(Frozen):
    """Something about the run's MCP servers, one line: a server that is down, a tool not
    offered and why, a write whose outcome is uncertain (dayflow.mcp)."""

    line: str


class DraftWarning(Frozen):
    """A drafts folder that could not be read, or refused a draft: one `warning:` line."""

    line: str


class Finished(Frozen):
    """The run ended with its brief."""

    run: Run
    resumed: bool


Note = (
    Calling
    | Called
    | Resumed
    | Forked
    | Compacted
    | StepRead
    | ToolCalled
    | Delivered
    | Uncertain
    | McpNotice
    | DraftWarning
    | Finished
)
