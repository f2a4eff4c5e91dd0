"""The model boundary: a `ModelClient` takes a `ModelRequest` and returns a `ModelResponse`.

Both sides are plain JSON (dicts and lists), exactly the Messages API wire shapes, so what the
store keeps is what the next request sends. Providers raise `dayflow.errors.ModelError` (with
`status`, `request_id` and `retryable`) for every API failure; nothing SDK-specific leaks out.
"""

from __future__ import annotations

from typing import Protocol

from dayflow.models import ModelRequest, ModelResponse

OFFLINE_MODEL = "offline"
DEFAULT_CLAUDE_MODEL = "claude-haiku-5-5"


class ModelClient(Protocol):
    """What the loop needs from a model."""

    def create(self, request: ModelRequest) -> ModelResponse:
        """Make one Messages API call. Raises ModelError on failure."""
        ...

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The input tokens `request` would cost, or None where the provider cannot say."""
        ...
