"""One id per real thing: `<source name>:<short hash of what makes the item itself>`."""

from __future__ import annotations

import hashlib


def item_id(source: str, stable: str) -> str:
    """The id of an item of `source` whose identity is `stable` (12 hex digits of SHA-256)."""
    return f"{source}:{hashlib.sha256(stable.encode('utf-8')).hexdigest()[:12]}"
