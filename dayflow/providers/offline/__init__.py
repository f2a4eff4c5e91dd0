"""The built-in offline model: a deterministic stand-in for Claude when no API key is set.

Two public names: `OfflineModel` (a `ModelClient`), and `looks_like_scam` (`_scam.py`: spam
and scams by their signs), which `dayflow why` names as a message's reason for no task. How
the model decides each turn is described in `_model.py` (`_plan.py` is its reading flow,
`_calls.py` the calls it makes); `_conversation.py` reads the conversation (tool calls, results
and its own `Noted:` entries), `_brief.py` writes the brief (`_followups.py` its owed and
awaited replies, `_quoted.py` what it shows of a message's words: a request's quote, a message
that spoke to an assistant), `_reading.py` decides what to open and reads a message's own
words, `_sentences.py` splits them and says whom each sentence speaks to, `_requests.py` finds
the message's requests, `_clauses.py` those of one sentence, `_titles.py` words them as tasks
and `dayflow/dates.py` finds their deadlines.
"""

from __future__ import annotations

from dayflow.providers.offline._model import OfflineModel
from dayflow.providers.offline._scam import looks_like_scam

__all__ = ["OfflineModel", "looks_like_scam"]
