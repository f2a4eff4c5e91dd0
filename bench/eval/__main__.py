"""`python -m bench.eval [--model offline|claude-...|local:NAME]`: score a brief over the set.

    python -m bench.eval                      # the offline model, in well under a second
    python -m bench.eval --split tuning       # only the tuning split (never tune on held-out)
    python -m bench.eval --split blind        # only the blind split (never tune on it either)
    python -m bench.eval --split blind2       # only the second blind split
    python -m bench.eval --split blind3       # only the third blind split
    python -m bench.eval --model claude-haiku-5-5        # needs ANTHROPIC_API_KEY; costs tokens
    ANTHROPIC_BASE_URL=http://127.0.0.1:8080 python -m bench.eval --model local:qwen3

Each blind split (`blind/`, `blind2/`, `blind3/`) is a morning of its own: by default each one
present is run after the set and reported in its own table, never in the set's rows. The tables
go to stdout and, unless `--no-write` (or a split is chosen), into bench/RESULTS.md between the
model's markers, with the date and the commit of `dayflow/`. `--failures` lists the ids of the
messages missed, falsely flagged or given a wrong due date (of the chosen split, then of each
blind one).
Exit status 0, or 2 with one line on stderr when the run cannot be made.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.eval import dataset, report, run, score

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "RESULTS.md"


def main(
    argv: list[str] | None = None,
    splits: tuple[dataset.HeldOut, ...] = dataset.HELD_OUT,
    results: Path = RESULTS,
    set_dir: Path = dataset.SET_DIR,
    second_pass: Path | None = dataset.SECOND_PASS,
) -> int:
    """The command; `splits`, `results`, `set_dir` and `second_pass` are where it reads and
    writes (tests give their own)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.eval", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--model", default="offline", help="offline, claude-..., or local:NAME")
    parser.add_argument("--split", choices=("all", *dataset.SPLITS), default="all")
    parser.add_argument("--no-write", action="store_true", help="do not touch bench/RESULTS.md")
    parser.add_argument("--failures", action="store_true", help="list failing message ids")
    args = parser.parse_args(argv)
    held = {h.name for h in splits}
    present = dataset.present_held_out(splits)
    if args.split in held and args.split not in {h.name for h in present}:
        print(f"error: bench/eval/{args.split}/ holds no messages", file=sys.stderr)
        return 2
    evalset = (
        dataset.load_held(args.split) if args.split in held else dataset.load(set_dir, second_pass)
    )
    say = _say(args.model)
    try:
        output, scores, checks = _evaluate(evalset, args.model, args.split, say)
        blinds = []
        if args.split == "all":
            for split in present:
                held_set = dataset.load_held(split.name)
                blinds.append((split, _evaluate(held_set, args.model, "all", say)))
    except run.EvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    model = output.model
    agreement = score.agreement(evalset.labels, evalset.second) if evalset.second else None
    blind_text: list[str] = []
    for split, (b_output, b_scores, b_checks) in blinds:
        blind_text += report.blind_lines(b_scores, b_checks, _run_line(b_output), split)
    code = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--", "dayflow", "bench/eval"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    command = "python -m bench.eval" + (f" --model {args.model}" if args.model != "offline" else "")
    command += f" --split {args.split}" if args.split != "all" else ""
    text = report.render(
        model=model,
        when=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        code=code or "?",
        command=command,
        run_line=_run_line(output),
        scores=scores,
        checks=checks,
        agreement=agreement,
        unattributed=len(output.unattributed),
        blind=blind_text,
    )
    print(text)
    if args.failures:
        for prefix, t in [("", scores.overall)] + [(f"{s.name} ", b[1].overall) for s, b in blinds]:
            print(f"{prefix}missed:", " ".join(t.misses) or "-")
            print(f"{prefix}false alarms:", " ".join(t.false_alarms) or "-")
            print(f"{prefix}wrong due:", " ".join(t.wrong_dues) or "-")
    if args.split == "all" and not args.no_write:
        try:
            report.write_section(results, model, text)
        except (report.ResultsError, OSError) as exc:
            print(f"error: {results} not written: {exc}", file=sys.stderr)
            return 2
    return 0


def _say(model: str) -> Any:
    """What a model run tells stderr before it starts and before each retry (never the
    offline model: it takes a second and never waits)."""
    if model == "offline":
        return None

    def say(message: str) -> None:
        print(f"bench.eval: {message}", file=sys.stderr, flush=True)

    return say


def _evaluate(
    evalset: dataset.EvalSet, model_arg: str, split: str, say: Any = None
) -> tuple[run.RunOutput, score.Scores, list[score.Check]]:
    """One brief over `evalset` as one morning, scored on `split` (or all of it)."""
    client, model = run.client_for(model_arg, os.environ, say)
    if say is not None:
        say(f"{model_arg}: one brief over {len(evalset.messages)} messages (Ctrl-C stops it)")
    output = run.run(evalset, client, model)
    labels = evalset.labels
    if split != "all":
        labels = {k: v for k, v in labels.items() if v.split == split}
    predicted = {k: v for k, v in output.predicted.items() if k in labels}
    scores = score.score(labels, predicted)
    checks = score.check_brief(
        output.brief,
        output.created_titles,
        output.today_events,
        labels,
        dataset.BRIEF_DATE,
        scores.overall,
    )
    return output, scores, list(checks)


def _run_line(output: run.RunOutput) -> str:
    return (
        f"Run: {output.status}{f' ({output.note})' if output.note else ''}, {output.steps} "
        f"steps, {output.seconds:.2f} s, {output.tokens_in:,} tokens in / {output.tokens_out:,} "
        f"out{' (estimated)' if output.model == 'offline' else ''}, "
        f"{len(output.created_titles)} tasks."
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
