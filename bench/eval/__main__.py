"""`python -m bench.eval [--model offline|claude-...|local:NAME]`: score a brief over the set.

    python -m bench.eval                      # the offline model, in well under a second
    python -m bench.eval --split tuning       # only the tuning split (never tune on held-out)
    python -m bench.eval --split blind        # only the blind split (never tune on it either)
    python -m bench.eval --split blind2       # only the second blind split
    python -m bench.eval --split blind3       # only the third blind split
    python -m bench.eval --split blind4       # only the fourth blind split
    python -m bench.eval --split blind5       # only the fifth blind split
    python -m bench.eval --split blind6       # only the sixth blind split (and so on: the
                                              # blind7 ... blind21 and quiet8 ... quiet23
                                              # splits, and precision)
    python -m bench.eval --split enron-asks   # public data from elsewhere (public/README.md)
    python -m bench.eval --model claude-haiku-5-5        # needs ANTHROPIC_API_KEY; costs tokens
    ANTHROPIC_BASE_URL=http://127.0.0.1:8080 python -m bench.eval --model local:qwen3

Each held-out split (`blind/` to `blind21/`, `quiet8/` to `quiet23/`, `precision/`) is a morning
of its own: by default each one present is run after the set and reported in its own table,
never in the set's rows. The tables
go to stdout only: a run leaves the clone as it was. With `--write` (on a run of all the
splits) they also go into bench/RESULTS.md between the model's markers, with the date and the
commit of `dayflow/`. `--no-write` is still accepted (it is the default now: scripts that pass
it keep working); given with `--write` it is refused. `--failures` lists the ids of the
messages missed, falsely flagged or given a wrong due date, and those whose promise (*You
promised*) no label expects (of the chosen split, then of each blind one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.eval import dataset, public, report, run, score

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "RESULTS.md"
EXIT_CODES = (
    "exit status: 0 scored; 1 the run stopped before its brief was done (the tables are "
    "printed, RESULTS.md is not written even with --write); 2 bad usage, a label file that "
    "breaks GUIDE.md, a model that cannot be reached or fails, or a RESULTS.md that cannot be "
    "written (one line on stderr); 130 interrupted (nothing written)."
)
MODEL_HELP = (
    "offline (the default: the rule-based model, no network, about a second); claude-NAME "
    "(the Anthropic API: needs ANTHROPIC_API_KEY and costs tokens; ANTHROPIC_BASE_URL, if set, "
    "is used as its address); local:NAME (model NAME on a Messages-API server at "
    "ANTHROPIC_BASE_URL, e.g. Ollama's http://127.0.0.1:11434; sent a placeholder key, never "
    "yours). Each model has its own section of RESULTS.md."
)
SPLIT_HELP = (
    "all (the default: the set, then each blind split present in a table of its own; the "
    "only choice written to RESULTS.md); tuning or held-out (the set's two parts, fixed by a "
    "hash of each id); blind ... blind21, quiet8 ... quiet23, precision (a folder of "
    "bench/eval/ each); public data "
    "from elsewhere, scored by its own loader (bench/eval/public/README.md): "
    + ", ".join(public.SPLITS)
    + ". Give it once."
)
WRITE_HELP = (
    "also write the tables into bench/RESULTS.md: a run of all the splits replaces this "
    "model's section (between its '<!-- eval MODEL: begin/end -->' markers, appended if "
    "absent) and leaves the rest of the file as it is; damaged markers are refused. Without "
    "it nothing is written: the tables go to stdout only."
)
NO_WRITE_HELP = "print only: the default (kept so that scripts passing it keep working)"
FAILURES_HELP = (
    "after the tables, list the ids of the messages missed, falsely flagged, or given a wrong "
    "due date (the chosen split's, then each blind split's)"
)


TIMEOUT_HELP = (
    "how long one model request may take before it is retried (3 attempts in all), for "
    "claude-... and local:NAME; default 120 for Claude, 600 for a local model (a CPU model "
    "is slow). Each retry is said on stderr."
)


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds above 0")
    return seconds


class _Once(argparse.Action):
    """Store the value, refusing a second one (a repeated --split would silently win)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        if getattr(namespace, f"_{self.dest}_seen", False):
            parser.error(f"{option} given twice: pick one split (or 'all')")
        setattr(namespace, f"_{self.dest}_seen", True)
        setattr(namespace, self.dest, values)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.eval",
        description=(
            "Write one brief over the labelled set (bench/eval/, GUIDE.md) with the real loop "
            "and score the tasks it made, per category and split, with counts. Run it from "
            "the repository's root (bench/ is not installed)."
        ),
        epilog=EXIT_CODES,
    )
    p.add_argument("--model", default="offline", metavar="MODEL", help=MODEL_HELP)
    p.add_argument(
        "--split",
        choices=("all", *dataset.SPLITS, *public.SPLITS),
        default="all",
        action=_Once,
        help=SPLIT_HELP,
    )
    p.add_argument("--write", action="store_true", help=WRITE_HELP)
    p.add_argument("--no-write", action="store_true", help=NO_WRITE_HELP)
    p.add_argument("--failures", action="store_true", help=FAILURES_HELP)
    p.add_argument("--timeout", type=_seconds, metavar="SECONDS", help=TIMEOUT_HELP)
    return p


def main(
    argv: list[str] | None = None,
    splits: tuple[dataset.HeldOut, ...] = dataset.HELD_OUT,
    results: Path = RESULTS,
    set_dir: Path = dataset.SET_DIR,
    second_pass: Path | None = dataset.SECOND_PASS,
) -> int:
    """The command; `splits`, `results`, `set_dir` and `second_pass` are where it reads and
    writes (tests give their own)."""
    p = parser()
    args = p.parse_args(argv)
    if args.write and args.no_write:
        p.error("--write and --no-write contradict each other: give one")
    if args.write and args.split != "all":
        p.error("--write needs a run of all the splits (RESULTS.md holds the whole table)")
    try:
        return _main(args, splits, results, (set_dir, second_pass))
    except KeyboardInterrupt:
        print("interrupted: nothing written", file=sys.stderr)
        return 130


def _main(
    args: argparse.Namespace,
    splits: tuple[dataset.HeldOut, ...],
    results: Path,
    the_set: tuple[Path, Path | None],
) -> int:
    if args.split in public.SPLITS:
        if args.model != "offline":
            return _fail(f"--split {args.split} scores the offline model's rules only")
        try:
            print(public.report(args.split))
        except public.Unavailable as exc:
            return _fail(str(exc))
        return 0
    held = {h.name for h in splits}
    present = dataset.present_held_out(splits)
    if args.split in held and args.split not in {h.name for h in present}:
        return _fail(f"bench/eval/{args.split}/ holds no messages")
    try:  # every label file is read and checked before any model is asked anything
        evalset = dataset.load_held(args.split) if args.split in held else dataset.load(*the_set)
        mornings = [(s, dataset.load_held(s.name)) for s in present if args.split == "all"]
    except json.JSONDecodeError as exc:
        folders = [the_set[0], *(h.folder for h in present)]
        broken = _broken_file(folders, the_set[1])
        return _fail(f"{broken}: not valid JSON ({exc})")
    except (dataset.LabelError, UnicodeDecodeError, OSError) as exc:
        return _fail(f"a label file breaks GUIDE.md: {exc}")
    say = _say(args.model)
    try:
        output, scores, checks = _evaluate(evalset, args, args.split, say)
        blinds = [(s, _evaluate(m, args, "all", say)) for s, m in mornings]
    except run.EvalError as exc:
        return _fail(str(exc))
    text = _render(args, evalset, output, scores, checks, blinds)
    print(text)
    if args.failures:
        for prefix, t in [("", scores.overall)] + [(f"{s.name} ", b[1].overall) for s, b in blinds]:
            print(f"{prefix}missed:", " ".join(t.misses) or "-")
            print(f"{prefix}false alarms:", " ".join(t.false_alarms) or "-")
            print(f"{prefix}wrong due:", " ".join(t.wrong_dues) or "-")
            print(f"{prefix}promises not in the labels:", " ".join(t.stray_promise_ids) or "-")
    stopped = [o for o in [output] + [b[0] for _, b in blinds] if o.status != "done"]
    if stopped:
        why = f"{stopped[0].status}" + (f": {stopped[0].note}" if stopped[0].note else "")
        unwritten = "; RESULTS.md not written" if args.write else ""
        print(f"error: the run did not finish ({why}){unwritten}", file=sys.stderr)
        return 1
    if args.write:
        try:
            report.write_section(results, args.model, text)
        except (report.ResultsError, OSError) as exc:
            return _fail(f"{results} not written: {exc}")
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _broken_file(folders: list[Path], second_pass: Path | None) -> str:
    """The first label file that is not valid JSON (for the error line), else the set."""
    paths = [p for folder in folders for p in sorted(folder.glob("*.json"))]
    for path in paths + ([second_pass] if second_pass else []):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return str(path)
        except OSError:
            continue
    return str(folders[0])


def _say(model: str) -> Any:
    """What a model run tells stderr before it starts and before each retry (never the
    offline model: it takes a second and never waits)."""
    if model == "offline":
        return None

    def say(message: str) -> None:
        print(f"bench.eval: {message}", file=sys.stderr, flush=True)

    return say


def _evaluate(
    evalset: dataset.EvalSet, args: argparse.Namespace, split: str, say: Any = None
) -> tuple[run.RunOutput, score.Scores, list[score.Check]]:
    """One brief over `evalset` as one morning, scored on `split` (or all of it)."""
    client, model = run.client_for(args.model, os.environ, say, args.timeout)
    if say is not None:
        say(f"{args.model}: one brief over {len(evalset.messages)} messages (Ctrl-C stops it)")
    output = run.run(evalset, client, model)
    labels = evalset.labels
    if split != "all":
        labels = {k: v for k, v in labels.items() if v.split == split}
    predicted = {k: v for k, v in output.predicted.items() if k in labels}
    # Alex's own promises, listed under *You promised* rather than as tasks, find a commitment
    # too (GUIDE.md, "How commitments are scored"); a split read without `me` has none.
    promised = {k: v for k, v in output.promised.items() if k in labels}
    scores = score.score(labels, predicted, promised)
    checks = score.check_brief(
        output.brief,
        output.created_titles,
        output.today_events,
        labels,
        dataset.BRIEF_DATE,
        scores.overall,
    )
    return output, scores, list(checks)


def _render(
    args: argparse.Namespace,
    evalset: dataset.EvalSet,
    output: run.RunOutput,
    scores: score.Scores,
    checks: list[score.Check],
    blinds: list[tuple[dataset.HeldOut, tuple[run.RunOutput, score.Scores, list[score.Check]]]],
) -> str:
    """The model's section: the set's table, then each blind split's. It is named by
    `--model` as given (`local:NAME` apart from `claude-...`, so neither overwrites the
    other's section)."""
    agreement = score.agreement(evalset.labels, evalset.second) if evalset.second else None
    blind_text: list[str] = []
    for split, (b_output, b_scores, b_checks) in blinds:
        blind_text += report.blind_lines(
            b_scores, b_checks, _run_line(b_output), split, me_known=b_output.me_known
        )
    code = _commit()
    command = "python -m bench.eval" + (f" --model {args.model}" if args.model != "offline" else "")
    command += f" --split {args.split}" if args.split != "all" else ""
    return report.render(
        model=args.model,
        when=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        code=code,
        command=command,
        run_line=_run_line(output),
        scores=scores,
        checks=checks,
        agreement=agreement,
        unattributed=len(output.unattributed),
        me_known=output.me_known,
        blind=blind_text,
    )


def _commit() -> str:
    """The short commit of the last change to `dayflow/` or `bench/eval/`, or "?" where that
    cannot be told (no git on PATH, not a checkout): the figures are still worth printing."""
    try:
        found = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--", "dayflow", "bench/eval"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "?"
    return found.stdout.strip() or "?"


def _run_line(output: run.RunOutput) -> str:
    return (
        f"Run: {output.status}{f' ({output.note})' if output.note else ''}, {output.steps} "
        f"steps, {output.seconds:.2f} s, {output.tokens_in:,} tokens in / {output.tokens_out:,} "
        f"out{' (estimated)' if output.model == 'offline' else ''}, "
        f"{len(output.created_titles)} tasks."
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
