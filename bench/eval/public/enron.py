"""Parakweet's Enron "ask" sentences (`enron_asks/`, Apache-2.0): sentence-level request
detection by the offline model's own detector.

Each line of the two files is `Yes|No<TAB>sentence`: whether the sentence, taken from an Enron
mail, asks something of its reader. Each sentence is handed to `requests_in` (the offline
model's request finder, `dayflow/providers/offline/_requests.py`) as the whole body of a
message with no subject, from someone else: a sentence is predicted an ask when it finds at
least one request in it. The second row scores the request cue alone (`has_cue`: "could you",
"please", "let me know" ...), the first test the finder makes of a sentence.

The figure in the literature, Lampert et al. 2010 (F 0.84), is for whole messages, not
sentences, on another labelling of Enron mail: the rows are shown beside it, not against it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "enron_asks"
FILES = (("train", "Ask0729-fixed.txt"), ("test", "testSet-qualifiedBatch-fixed.txt"))
PUBLISHED = "Lampert et al. 2010, message level (not sentences), F 0.84"


class DataError(ValueError):
    """A line that is not `Yes|No<TAB>sentence`."""


@dataclass(frozen=True)
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, gold: bool, predicted: bool) -> Counts:
        return Counts(
            self.tp + (gold and predicted),
            self.fp + (predicted and not gold),
            self.fn + (gold and not predicted),
            self.tn + (not gold and not predicted),
        )


def parse(lines: Iterable[str], where: str = "") -> list[tuple[bool, str]]:
    """(is an ask, sentence) for each non-empty line."""
    out = []
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        label, tab, sentence = line.partition("\t")
        if not tab or label not in ("Yes", "No"):
            raise DataError(f"{where}:{n}: not 'Yes|No<TAB>sentence': {line[:60]!r}")
        out.append((label == "Yes", sentence))
    return out


def load(name: str, data: Path = DATA) -> list[tuple[bool, str]]:
    path = data / dict(FILES)[name]
    return parse(path.read_text(encoding="utf-8").splitlines(), str(path))


def finder(sentence: str) -> bool:
    """The offline model's request finder on one sentence as a whole message."""
    from dayflow.providers.offline._requests import requests_in

    return bool(requests_in(sentence, "", "Sender", None, from_user=False))


def cue(sentence: str) -> bool:
    """The request cue alone."""
    from dayflow.providers.offline._clauses import has_cue

    return has_cue(sentence)


def score(rows: list[tuple[bool, str]], predict: Callable[[str], bool]) -> Counts:
    counts = Counts()
    for gold, sentence in rows:
        counts = counts.add(gold, predict(sentence))
    return counts


def report(data: Path = DATA) -> str:
    """The table: each file by each detector."""
    lines = [
        "## Enron request sentences (Parakweet's ask set), model `offline`",
        "",
        "| file | detector | sentences | asks | TP/FP/FN/TN | P | R | F1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, filename in FILES:
        rows = load(name, data)
        for label, predict in (("requests_in", finder), ("has_cue", cue)):
            c = score(rows, predict)
            lines.append(
                f"| {name} (`{filename}`) | `{label}` | {len(rows)} | {c.tp + c.fn} | "
                f"{c.tp}/{c.fp}/{c.fn}/{c.tn} | {c.precision:.3f} | {c.recall:.3f} | "
                f"**{c.f1:.3f}** |"
            )
    lines += [
        "",
        f"Published: {PUBLISHED}. Not like for like: that is whole messages, labelled by "
        "other people, with a trained classifier; these are single sentences out of their "
        "message, by fixed rules that never saw this data.",
    ]
    return "\n".join(lines)
