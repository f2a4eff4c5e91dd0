"""The model boundary: a `ModelClient` takes a `ModelRequest` and returns a `ModelResponse`.

Both sides are plain JSON (dicts and lists), exactly the Messages API wire shapes, so what the
store keeps is what the next request sends. Providers raise `dayflow.errors.ModelError` (with
`status`, `request_id` and `retryable`) for every API failure; nothing SDK-specific leaks out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from dayflow.frozen import Frozen
from dayflow.models import ModelRequest, ModelResponse

OFFLINE_MODEL = "offline"
DEFAULT_CLAUDE_MODEL = "claude-haiku-5-5"
ANTHROPIC_API_URL = "https://api.anthropic.com"  # the SDK's own address, when none is given


class ModelClient(Protocol):
    """What the loop needs from a model."""

    def create(self, request: ModelRequest) -> ModelResponse:
        """Make one Messages API call. Raises ModelError on failure."""
        ...

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The input tokens `request` would cost, or None where the provider cannot say."""
        ...


# Optional capabilities: a client that has one says so by its shape (checked with isinstance),
# so a caller asks for the capability by name instead of probing attributes with getattr.


@runtime_checkable
class HoldsConnections(Protocol):
    """A client with connections to let go of when the command is done (the Anthropic API's
    HTTP pool); the offline model and scripted test models have none."""

    def close(self) -> None: ...


@runtime_checkable
class ReportsRetries(Protocol):
    """A client that retries transient failures itself and tells `on_retry` before each
    retry (one line, for stderr), so a hung API is never a silent wait."""

    on_retry: Callable[[str], None] | None


@runtime_checkable
class LeavesMcpAlone(Protocol):
    """A client that never calls an MCP server's tools (the offline model), so a new run
    starts none of the config's servers for it and offers it none of their tools."""

    leaves_mcp_alone: bool


# What became of one request of an ended Message Batch (the API's result types).
SUCCEEDED = "succeeded"
ERRORED = "errored"
EXPIRED = "expired"
CANCELED = "canceled"


class BatchOutcome(Frozen):
    """One request's result in an ended batch: its answer when it `SUCCEEDED` (the same
    `ModelResponse` a normal call gives, `batch_id` set), else why not (`detail`)."""

    custom_id: str
    kind: str  # SUCCEEDED | ERRORED | EXPIRED | CANCELED
    response: ModelResponse | None = None
    detail: str | None = None


@runtime_checkable
class BatchAPI(Protocol):
    """What the round driver (dayflow.batching) needs from the Message Batches API (the
    Anthropic API's client has it: `isinstance(client, BatchAPI)`)."""

    def submit_batch(self, requests: Sequence[tuple[str, ModelRequest]]) -> str:
        """Submit (custom_id, request) pairs as one batch, each sent exactly as `create` would
        send it; return the batch id. Raises ModelError."""
        ...

    def batch_status(self, batch_id: str) -> str:
        """The batch's processing_status: "in_progress", "canceling" or "ended"."""
        ...

    def batch_results(self, batch_id: str) -> dict[str, BatchOutcome]:
        """The outcome of each request of an ended batch, by custom_id."""
        ...

    def cancel_batch(self, batch_id: str) -> None:
        """Ask the API to stop the batch's unprocessed requests (they become canceled)."""
        ...
