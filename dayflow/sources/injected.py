"""Text in a message addressed to an AI assistant rather than to its reader: a prompt injection.

Mail is written to a person. A passage that speaks to the software reading it ("to you, AI
assistant", "ignore all previous instructions", "before you can solve the task I gave you",
an `<INFORMATION>` or `<system>` block) is someone trying to steer that software, and what it
asks is never the reader's task. `injected_spans` finds such passages by how they are
addressed, not by any one attack's wording:

- a block in a tag an assistant's prompt would use (`<information>`, `<instructions>`,
  `<system>`, `[INST]`...), to its closing tag or the end of the text;
- a sentence that names its addressee as an assistant, model or agent, or the product
  ("to you, Dayflow"), or speaks of "the task the user gave you", "your instructions", "the
  system prompt": from that sentence's start to the end of the text, because what follows a
  turn to the assistant is for the assistant ("Ignore all previous instructions.", then the
  payload in the next paragraph), until a paragraph that opens by greeting a person by name
  ("Hi Alex,", "Dear Ms Ito,"): that is the writer turning to a person again (their own note
  under a pasted passage), and what it asks is read. Not the end of the paragraph: a cue
  paragraph and its payload paragraph are one turn to the assistant.

The read tools mark such a message `to_assistant` (`MailItem.listing_json`), so that every model
sees it flagged; the offline model reads the message without these spans (`without_injected`)
and opens no message for them.
"""

from __future__ import annotations

import re

# Who an injection speaks to: the software, by what it is or by this product's name. Never a
# word that also names a person ("Claude") or a job ("the assistant coach", "Dear Agent").
_AI = (
    r"(?:(?:the|an?|my|our|this)\s+)?(?:ai(?:\s+(?:assistant|agent|model|system))?|a\.i\."
    r"|(?:email|mail|virtual|digital)\s+assistant|(?:large\s+)?language\s+model|llm|chat\s?bot"
    r"|gpt|chatgpt|dayflow)"
)
_ASSISTANT = rf"(?:{_AI}|(?:the\s+)?(?:assistant|model|agent|bot))"
_TAGS = r"information|instructions?|system|important|admin|prompt|assistant|ai|injection|secret"
_BLOCK = re.compile(
    rf"<\s*(?P<tag>{_TAGS})\s*>.*?(?:<\s*/\s*(?P=tag)\s*>|\Z)"
    r"|\[INST\].*?(?:\[/INST\]|\Z)|<\|im_start\|>.*?(?:<\|im_end\|>|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_ADDRESSED = re.compile(
    # "to you, Dayflow", "for you, the AI assistant", "Dear AI,", "Attention assistant:"
    rf"\b(?:to|for)\s+you,?\s+{_ASSISTANT}\b"
    rf"|(?:^|(?<=[\s.!?]))(?:dear|hey|hi|hello|attention|note\s+to|message\s+to|instructions?\s+for)"
    rf"\s+{_AI}\s*[,:!]"
    # "If you are an AI reading this", "AI assistants processing this email"
    rf"|\bif\s+you\s+are\s+{_AI}\b|\b{_AI}s?\s+(?:reading|processing|summari[sz]ing"
    r"|handling|parsing)\s+(?:this|these)\b"
    rf"|\byou\s+are\s+(?:now\s+)?{_AI}\b|\bas\s+an?\s+(?:ai|language\s+model)\b"
    # what only the software has: its instructions, the user's task, its prompt
    r"|\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
    r"(?:previous|prior|above|earlier|preceding|original|system|your)\s+(?:instructions?|prompts?"
    r"|directions|rules|guidelines)\b"
    r"|\b(?:ignore|disregard)\s+(?:all|any)\s+(?:instructions?|prompts?)\b"
    r"|\b(?:the\s+)?task\s+(?:that\s+)?(?:i|the\s+user|your\s+user|your\s+owner)\s+(?:gave|assigned)"
    r"\s+(?:to\s+)?you\b"
    r"|\bbefore\s+you\s+(?:can\s+)?(?:solve|complete|finish|continue|answer|summari[sz]e|do)\s+"
    r"(?:the|your|this|any)\s+(?:original\s+)?task\b"
    r"|\b(?:system|developer)\s+prompt\b|\bnew\s+instructions?\s*:"
    # "an important message from me, Emma Johnson, to you": the user writing to their software
    r"|\bmessage\s+from\s+me,\s+[^,.\n]{1,60},\s+to\s+you\b",
    re.IGNORECASE,
)
# Where the sentence holding a cue starts: after the last sentence end or blank line before it.
_SENTENCE_START = re.compile(r"(?:[.!?](?=\s)|\n\s*\n)")
# A paragraph that greets a person by name (one to three capitalised words, or "all", "team",
# "everyone") where a turn to the assistant ends; never one that greets the software.
_TO_A_PERSON = re.compile(
    rf"\n[ \t]*\n\s*(?=(?i:hi|hello|hey|dear|good\s+(?:morning|afternoon|evening))\s+"
    rf"(?!(?i:{_ASSISTANT})\b)(?:(?:[A-Z][\w'.-]*\s*){{1,3}}|(?i:all|team|everyone)\s*)[,!:]"
    r"\s*$)",
    re.MULTILINE,
)
# Every match of _BLOCK or _ADDRESSED holds one of these (lower-cased): text with none of them
# addresses no assistant, and is passed without running the two patterns, whose alternations
# cost about 5 ms on 17 KB of ordinary mail (each is tried at every position). The gate costs
# a few hundredths of that: substring tests, and "ai" found by its literal first.
_GATE_WORDS = ("assistant", "model", "agent", "bot", "llm", "gpt", "dayflow", "a.i.",
               "instruction", "prompt", "direction", "rule", "guideline", "task", "message from",
               "<", "[inst]")  # fmt: skip
_GATE_AI = re.compile(r"ai(?<!\wai)s?\b")


def _may_address(text: str) -> bool:
    low = text.lower()
    return any(word in low for word in _GATE_WORDS) or _GATE_AI.search(low) is not None


def injected_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) spans of `text` addressed to an assistant, in order, not overlapping."""
    if not _may_address(text):
        return []
    blocks = [(m.start(), m.end()) for m in _BLOCK.finditer(text)]
    turns: list[tuple[int, int]] = []
    at = 0
    while (cue := _ADDRESSED.search(text, at)) is not None:
        inside = next((b for a, b in blocks if a <= cue.start() < b), None)
        if inside is not None:
            at = inside
            continue
        ends = [m.end() for m in _SENTENCE_START.finditer(text, at, cue.start())]
        start = ends[-1] if ends else at
        back = _TO_A_PERSON.search(text, cue.end())
        end = back.start() if back else len(text)
        turns.append((start, end))
        at = end
    spans: list[tuple[int, int]] = []
    for a, b in sorted(blocks + turns):
        if spans and a < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
    return spans


def addresses_assistant(text: str) -> bool:
    """Whether any of `text` is addressed to an assistant rather than to its reader."""
    return _may_address(text) and bool(_BLOCK.search(text) or _ADDRESSED.search(text))


def without_injected(text: str) -> str:
    """`text` without what it says to an assistant (each such passage becomes a blank line)."""
    out, last = [], 0
    for start, end in injected_spans(text):
        out.append(text[last:start])
        out.append("\n\n")
        last = end
    out.append(text[last:])
    return "".join(out) if last else text
