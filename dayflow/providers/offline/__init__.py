"""The built-in offline model: a deterministic stand-in for Claude when no API key is set.

One public name, `OfflineModel` (a `ModelClient`). How it decides each turn is described in
`_model.py`; `_conversation.py` reads the conversation (tool calls, results and its own
`Noted:` entries), `write_brief.py` writes the brief and `_reading.py` holds the mail heuristics.
"""

from __future__ import annotations

from dayflow.providers.offline._model import OfflineModel

__all__ = ["OfflineModel"]
