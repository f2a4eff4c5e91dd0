"""Issue 23: how good is the brief? A labelled evaluation set and its scorer.

- `GUIDE.md`: the labelling guide, written before the labels;
- `set/*.json`: the messages, one file per category, each with its label; `second_pass.json`:
  a second labelling of every fifth message; `calendar.json`: the morning's calendar;
- `dataset`: loading and checking the set, the opaque ids, the held-out split;
- `score`: the figures (pure functions, tested in tests/test_eval.py);
- `run`: one brief over the set with the real loop and a temporary store;
- `report`: the Markdown for bench/RESULTS.md; `python -m bench.eval` ties them together.
"""
