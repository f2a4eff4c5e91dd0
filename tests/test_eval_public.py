"""The loaders of public data from elsewhere (bench/eval/public/): each parses a few rows of the
real data, vendored or read from its wheel, and its scoring arithmetic is checked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.eval.__main__ import main
from bench.eval.public import enron

REPO = Path(__file__).resolve().parents[1]


def test_enron_parses_the_vendored_files() -> None:
    train = enron.load("train")
    test = enron.load("test")
    assert (len(train), sum(g for g, _ in train)) == (3657, 1719)
    assert (len(test), sum(g for g, _ in test)) == (992, 309)
    assert train[0] == (False, ">>> [1]Contact Me Now to Make $100 Today!$LINK")
    with pytest.raises(enron.DataError, match="x:2"):
        enron.parse(["Yes\tCan you call me?", "Maybe\tsomething"], "x")


def test_enron_scores_real_rows_by_hand() -> None:
    rows = enron.parse(
        [
            "Yes\tCould you please send me the final numbers by Friday?",  # an ask, found
            "No\tI look forward to meeting you and learning about your successful business.",
            "No\tWe look forward to seeing you next week!",
            "Yes\tA quick question before our meeting.",  # labelled an ask; no request in it
        ]
    )
    predicted = [enron.finder(s) for _, s in rows]
    assert predicted == [True, False, False, False]
    counts = enron.score(rows, enron.finder)
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (1, 0, 1, 2)
    assert (counts.precision, counts.recall) == (1.0, 0.5)
    assert counts.f1 == pytest.approx(2 / 3)


def test_enron_split_runs_from_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--split", "enron-asks"]) == 0
    out = capsys.readouterr().out
    assert "| train (`Ask0729-fixed.txt`) | `requests_in` | 3657 | 1719 |" in out
    assert "not like for like" in out.lower()
    assert main(["--split", "enron-asks", "--model", "claude-x"]) == 2
