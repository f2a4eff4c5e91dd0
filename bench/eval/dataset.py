"""The labelled set: messages in Dayflow's inbox shape, each with its label (GUIDE.md).

The set lives in `set/<category>.json`, one file per category, each a list of messages with a
`label` object beside the inbox fields. `load()` checks every label and splits the two apart:
what the model sees (`EvalSet.inbox()`) never carries a label, and its ids are opaque (a short
hash), so nothing in an id says which category a message was written for.

The held-out split is fixed by a hash of each id (about a quarter), so it never depends on the
order of the files: tuning looks only at the `tuning` split's figures.

The blind splits live apart, each in its own folder of `<category>.json` files (same shape,
same guide), written by someone who never saw the offline model's rules: `blind/` (looked at
once the model had been scored on it, so now one more tuning split), `blind2/` (written
while the rules were changed, scored once after, then studied and tuned on in issue 23's
third round: now a tuning split too, its first scoring kept in RESULTS.md) and `blind3/`
(written by a third author, scored once after the rules were frozen, then studied and tuned
on in issue 23's fourth round, its first scoring kept in RESULTS.md), `blind4/` and
`blind5/` (a fourth and a fifth author's, each scored once on the fourth round's frozen rules,
then tuned on in the fifth), `blind6/` (a sixth author's, scored once on the fifth round's
frozen rules), `blind7/` (a seventh author's, with issue 34's precision classes mixed into a
whole morning), `quiet8/` (helper `wq8`'s: mostly messages that ask nothing, for issue 34's
false tasks per 100 of them, with a few real asks), `blind8/` (an eighth author's, another
life with the same classes), `blind9/` (a ninth author's, scored once), `quiet9/` (helper
`wq9`'s: another quiet split, a veterinary practice owner's week, mostly messages that ask
nothing), `blind10/` (a tenth author's, another life with the same classes), `quiet10/`
(helper `wq10`'s: a third quiet split, a theatre production manager's week), `quiet11/`
(helper `wq11`'s: a fourth quiet split, a food bank operations director's week, scored
once), `quiet12/` (helper `wq12`'s: a university research lab manager's week),
`quiet13/` (helper `wq13`'s: a town parks and recreation director's week), `quiet14/`
(helper `wq14`'s: an island ferry line's director of operations' week), `quiet15/`
(helper `wq15`'s: a museum's head of collections' week, scored once),
`blind11/` (an eleventh author's, a craft brewery's week, scored once), `blind12/` (a
twelfth author's, a boutique hotel general manager's week, scored once) and `blind13/`
(helper `wb13`'s, a dairy farm and creamery owner's week, scored once), `blind14/` (a
fourteenth author's, a public radio station general manager's week, scored once),
`quiet16/` (helper `wq16`'s, another public radio station general manager's quiet week, scored
once), `blind15/` (helper `wb15`'s, a Vermont ski area general manager's week before opening
day, scored once), `quiet17/` (helper `wq17`'s, an independent bookshop-and-café owner's
quiet week, scored once), `blind16/` (helper `wb16`'s, a fishing and seafood-processing
co-operative's operations manager's week, scored once), `quiet18/` (helper `wq18`'s, an
independent game studio executive producer's quiet week, scored once), `blind17/` (helper
`wb17`'s, a Finger Lakes family vineyard and winery owner's harvest week, scored once) and
`quiet19/` (helper `wq19`'s, a small-town weekly newspaper managing editor's quiet week, scored
once), `blind18/` (helper `wb18`'s, a minor-league baseball general manager's off-season
week, scored once), `quiet20/` (helper `wq20`'s, a dog-training and boarding kennel
owner's quiet week, scored once), `blind19/` (helper `wb19`'s, a county fairgrounds general
manager's week before a harvest festival and horse show, scored once), `quiet21/` (helper
`wq21`'s, a payments startup CTO's quiet week, scored once), `blind20/` (helper `wb20`'s, a
Minneapolis bicycle-shop owner's week, scored once), `quiet22/` (helper `wq22`'s, a
hospital pharmacy director's quiet week, scored once), `blind21/` (helper `wb21`'s, a Lake
Champlain marina and boatyard harbormaster's haul-out week, scored once) and `quiet23/`
(helper `wq23`'s, an Albuquerque family print-and-sign shop owner's quiet week, scored
once). `load()` never reads
them; only `load_held(name)` does, and the scorer runs each as a morning of its own, so none is
mixed into the set's figures.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dayflow.errors import SourceError
from dayflow.sources.json_files import to_timezone

ROOT = Path(__file__).resolve().parent
SET_DIR = ROOT / "set"
BLIND_DIR = ROOT / "blind"
BLIND2_DIR = ROOT / "blind2"
BLIND3_DIR = ROOT / "blind3"
BLIND4_DIR = ROOT / "blind4"
BLIND5_DIR = ROOT / "blind5"
BLIND6_DIR = ROOT / "blind6"
BLIND7_DIR = ROOT / "blind7"
QUIET8_DIR = ROOT / "quiet8"
BLIND8_DIR = ROOT / "blind8"
BLIND9_DIR = ROOT / "blind9"
QUIET9_DIR = ROOT / "quiet9"
BLIND10_DIR = ROOT / "blind10"
QUIET10_DIR = ROOT / "quiet10"
BLIND11_DIR = ROOT / "blind11"
BLIND12_DIR = ROOT / "blind12"
BLIND14_DIR = ROOT / "blind14"
QUIET11_DIR = ROOT / "quiet11"
QUIET12_DIR = ROOT / "quiet12"
QUIET13_DIR = ROOT / "quiet13"
QUIET14_DIR = ROOT / "quiet14"
BLIND13_DIR = ROOT / "blind13"
QUIET15_DIR = ROOT / "quiet15"
QUIET16_DIR = ROOT / "quiet16"
BLIND15_DIR = ROOT / "blind15"
QUIET17_DIR = ROOT / "quiet17"
BLIND16_DIR = ROOT / "blind16"
QUIET18_DIR = ROOT / "quiet18"
BLIND17_DIR = ROOT / "blind17"
QUIET19_DIR = ROOT / "quiet19"
BLIND18_DIR = ROOT / "blind18"
QUIET20_DIR = ROOT / "quiet20"
BLIND19_DIR = ROOT / "blind19"
QUIET21_DIR = ROOT / "quiet21"
BLIND20_DIR = ROOT / "blind20"
QUIET22_DIR = ROOT / "quiet22"
BLIND21_DIR = ROOT / "blind21"
QUIET23_DIR = ROOT / "quiet23"
PRECISION_DIR = ROOT / "precision"
SECOND_PASS = ROOT / "second_pass.json"
CALENDAR = ROOT / "calendar.json"
BRIEF_DATE = dt.date(2026, 11, 2)
TZ = "America/New_York"
ME = "alex.morgan@lumen.example"  # GUIDE.md's mailbox: the run's `me`
CATEGORIES = (
    "deadline",
    "no_deadline",
    "relative",
    "multiple",
    "urgent",
    "quoted",
    "commitment",
    "invitation",
    "fyi",
    "automated",
    "terse",
    "german",
    "french",
    "spanish",
)
NO_ACTION_CATEGORIES = ("fyi", "automated")  # "false tasks per 100" counts these
# `to`, `cc` and `list_id` are the envelope a real source hands over (the precision split has them).
INBOX_FIELDS = (
    "id", "from", "to", "cc", "list_id", "subject", "received_at", "body", "snippet", "unread",
    "thread_id",
)  # fmt: skip
SPLITS = (
    "tuning", "held-out", "blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7",
    "blind8", "quiet8", "blind9", "quiet9", "blind10", "quiet10", "blind11", "quiet11", "quiet12",
    "quiet13", "blind12", "quiet14", "blind13", "quiet15", "blind14", "quiet16", "blind15",
    "quiet17", "blind16", "quiet18", "blind17", "quiet19", "blind18", "quiet20", "blind19",
    "quiet21", "blind20", "quiet22", "blind21", "quiet23",
    "precision",
)  # fmt: skip


@dataclass(frozen=True)
class HeldOut:
    """A blind split: its folder, the heading of its table and the line that says who wrote it."""

    name: str
    folder: Path
    heading: str
    provenance: str
    # A split written for a few classes (issue 34's precision split): it need not hold every
    # category or a whole morning's size.
    focused: bool = False


HELD_OUT = (
    HeldOut(
        "blind",
        BLIND_DIR,
        "Blind split (`bench/eval/blind/`, tuned on since its first scoring)",
        "Written by someone who never saw the offline model's rules, after it was tuned; its "
        "failures were then looked at and the rules generalised from them (issue 23's second "
        "round), so it is now one more tuning split, kept for comparison. A morning of its own "
        "(same date, timezone and calendar).",
    ),
    HeldOut(
        "blind2",
        BLIND2_DIR,
        "Second blind split (`bench/eval/blind2/`, tuned on since issue 23's third round)",
        "Written by a second author who did not open the offline model's rules, from GUIDE.md, "
        "the scorer's code and four messages of the other splits for their shape "
        "(`blind2/README.md`); scored once on the final rules of the second round, then its "
        "misses were studied and the rules generalised from them (the third round), so it is "
        "now one more tuning split, kept for comparison. A morning of its own (same date, "
        "timezone and calendar).",
    ),
    HeldOut(
        "blind3",
        BLIND3_DIR,
        "Third blind split (`bench/eval/blind3/`, tuned on since issue 23's fourth round)",
        "Written by a third author who did not open the offline model's rules, the other "
        "splits' messages (but four of `set/`, for their shape) or any result, from GUIDE.md "
        "and the scorer's code (`blind3/README.md`); scored once on the frozen rules of the "
        "third round, then its misses were studied and the rules generalised from them as "
        "classes (the fourth round), so it is now one more tuning split, kept for comparison. "
        "A morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "blind4",
        BLIND4_DIR,
        "Fourth blind split (`bench/eval/blind4/`, tuned on since issue 23's fifth round)",
        "Written by a fourth author who did not open the offline model's rules, the other "
        "splits' messages (but one of `set/`, for its shape) or any result, from GUIDE.md and "
        "the scorer's agreement function (`blind4/README.md`); scored once, on the rules "
        "frozen at the end of issue 23's fourth round (`ffdd615`), then its misses were "
        "studied and the rules generalised from them as classes (the fifth round), so it is "
        "now one more tuning split, kept for comparison. A morning of its own (same date, "
        "timezone and calendar).",
    ),
    HeldOut(
        "blind5",
        BLIND5_DIR,
        "Fifth blind split (`bench/eval/blind5/`, tuned on since issue 23's fifth round)",
        "Written by a fifth author who did not open the offline model's rules, the other "
        "splits' messages (but one of `set/`, for its shape) or any result, from GUIDE.md and "
        "the scorer's agreement function (`blind5/README.md`), while the fourth round's rules "
        "were being written; scored once, on those rules frozen (`ffdd615`), then its misses "
        "were studied and the rules generalised from them as classes (the fifth round), so it "
        "is now one more tuning split, kept for comparison. A morning of its own (same date, "
        "timezone and calendar).",
    ),
    HeldOut(
        "blind6",
        BLIND6_DIR,
        "Sixth blind split (`bench/eval/blind6/`, scored once, never tuned on)",
        "Written by a sixth author who did not open the offline model's rules, the other "
        "splits' messages (but one of `set/`, for its shape) or any result, from GUIDE.md and "
        "the scorer's agreement function (`blind6/README.md`), while the fifth round's rules "
        "were being written; scored once, on those rules frozen (`72cab21`). A morning of its "
        "own (same date, timezone and calendar).",
    ),
    HeldOut(
        "blind7",
        BLIND7_DIR,
        "Seventh blind split (`bench/eval/blind7/`, issue 34, scored once, tuned on since)",
        "Written by a seventh author (helper session `hblind`) who did not open the offline "
        "model's rules, the tools, the followups, the tests, RESULTS.md or any other split's "
        "messages, from GUIDE.md, dataset.py and issue 34 alone (`blind7/README.md`); a whole "
        "morning with issue 34's hard classes mixed in (broadcast imperatives, confidentiality, "
        "the sender's own promise, asks to others with the reader in Cc, several asks, relative "
        "and body-only dates across the month end). A morning of its own (same date, timezone "
        "and calendar).",
    ),
    HeldOut(
        "quiet8",
        QUIET8_DIR,
        "Quiet split (`bench/eval/quiet8/`, issue 34's false tasks, scored once, tuned on since)",
        "Written by helper session `wq8`, who did not open the offline model's rules, the tools, "
        "the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other split's "
        "messages, from GUIDE.md, dataset.py and issue 34 alone (`quiet8/README.md`); 145 "
        "messages, 123 asking Alex nothing (FYIs, broadcasts with polite imperatives, "
        "confidentiality, the sender's own promise, asks to others with Alex in Cc, answers "
        "with quoted asks, list posts with `list_id`, automated mail, in four languages) and "
        "22 real asks. A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind8",
        BLIND8_DIR,
        "Eighth blind split (`bench/eval/blind8/`, issue 34, scored once, tuned on since)",
        "Written by an eighth author (helper session `wb8`) who did not open the offline "
        "model's rules, the tools, the followups, the tests, RESULTS.md or any other split's "
        "messages, from GUIDE.md, dataset.py and issue 34 alone (`blind8/README.md`); a whole "
        "morning of another life (a hospital operations director) with issue 34's hard classes "
        "mixed in. A morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "blind9",
        BLIND9_DIR,
        "Ninth blind split (`bench/eval/blind9/`, issue 34, scored once)",
        "Written by a ninth author (helper session `wb9`) who did not open the offline "
        "model's rules, the tools, the followups, the tests, RESULTS.md or any other split's "
        "messages, from GUIDE.md, dataset.py and issues 34 and 35 alone (`blind9/README.md`); "
        "a whole morning of another life (a restaurant group's finance director) with issue "
        "34's hard classes mixed in. A morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "quiet9",
        QUIET9_DIR,
        "Second quiet split (`bench/eval/quiet9/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq9`, who did not open the offline model's rules, the tools, "
        "the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other split's "
        "messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet9/README.md`); another life (a veterinary practice owner), 150 messages, 129 "
        "asking Alex nothing (broadcasts with polite imperatives, confidentiality, the sender's "
        "own promise, asks to others with Alex in Cc, answers with quoted asks, list posts with "
        "`list_id`, automated mail, in four languages) and 21 real asks. A morning of its own "
        "(same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind10",
        BLIND10_DIR,
        "Tenth blind split (`bench/eval/blind10/`, issue 34, scored once)",
        "Written by a tenth author (helper session `wb10`) who did not open the offline "
        "model's rules, the tools, the followups, the tests, RESULTS.md or any other split's "
        "messages, from GUIDE.md, dataset.py and issues 34 and 35 alone (`blind10/README.md`); "
        "a whole morning of another life (the principal of a small architecture practice) with "
        "issue 34's hard classes mixed in. A morning of its own (same date, timezone and "
        "calendar).",
    ),
    HeldOut(
        "quiet10",
        QUIET10_DIR,
        "Third quiet split (`bench/eval/quiet10/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq10`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet10/README.md`); another life (a regional theatre's production manager), 147 "
        "messages, 126 asking Alex nothing (broadcasts with polite imperatives, "
        "confidentiality, the sender's own promise, asks to others with Alex in Cc or beside "
        "Alex in To, answers with quoted asks, list posts with `list_id`, automated mail, in "
        "four languages) and 21 real asks. A morning of its own (same date, timezone and "
        "calendar).",
        focused=True,
    ),
    HeldOut(
        "blind11",
        BLIND11_DIR,
        "Eleventh blind split (`bench/eval/blind11/`, issue 34, scored once)",
        "Written by an eleventh author (helper session `wb11`) who did not open the offline "
        "model's rules, the tools, the followups, dates.py, the tests, RESULTS.md, score.py, "
        "run.py or any other split's messages, from GUIDE.md, dataset.py and issue 34 alone "
        "(`blind11/README.md`); a whole morning of another life (the co-owner and head brewer "
        "of a craft brewery with a taproom) with issue 34's hard classes mixed in. A morning "
        "of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "blind12",
        BLIND12_DIR,
        "Twelfth blind split (`bench/eval/blind12/`, issue 34, scored once)",
        "Written by a twelfth author (helper session `wb12`) who did not open the offline "
        "model's rules, the tools, the followups, dates.py, the tests, RESULTS.md, score.py, "
        "run.py or any other split's messages, from GUIDE.md, dataset.py and issue 34 alone "
        "(`blind12/README.md`); a whole morning of another life (the general manager of a "
        "150-room boutique hotel run by a management company for an owner) with issue 34's "
        "hard classes mixed in. A morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "quiet11",
        QUIET11_DIR,
        "Fourth quiet split (`bench/eval/quiet11/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq11`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet11/README.md`); another life (a regional food bank's operations director), 156 "
        "messages, 135 asking Alex nothing (broadcasts with polite imperatives, "
        "confidentiality, the sender's own promise, asks to others with Alex in Cc, answers "
        "with quoted asks, forwards, list posts with `list_id`, automated mail, in four "
        "languages) and 21 real asks. A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "quiet12",
        QUIET12_DIR,
        "Quiet split quiet12 (`bench/eval/quiet12/`, issue 34's false tasks, tuned on)",
        "Written by helper session `wq12`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet12/README.md`); another life (a university research lab's manager), 151 "
        "messages, 130 asking Alex nothing (lab and department broadcasts, the sender's own "
        "promise, asks to others with Alex in Cc, answers with quoted asks, list posts with "
        "`list_id`, automated mail, in four languages) and 21 real asks. A morning of its own "
        "(same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "quiet13",
        QUIET13_DIR,
        "Quiet split quiet13 (`bench/eval/quiet13/`, issue 34's false tasks, tuned on)",
        "Written by helper session `wq13`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet13/README.md`); another life (a town's parks and recreation director), 149 "
        "messages, 127 asking Alex nothing (broadcasts, confidentiality, the sender's own "
        "promise, asks to others with Alex in Cc, answers with quoted asks, list posts with "
        "`list_id`, alerts and automated mail, in four languages) and 22 real asks. A morning "
        "of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "quiet14",
        QUIET14_DIR,
        "Quiet split quiet14 (`bench/eval/quiet14/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq14`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet14/README.md`); another life (the director of operations of a small island "
        "ferry line), 152 messages, 130 asking Alex nothing (broadcasts with polite "
        "imperatives, confidentiality, the sender's own promise, asks to others with Alex in Cc "
        "or beside Alex in To, answers with quoted asks, forwards, list posts with `list_id`, "
        "alerts and automated mail, in four languages) and 22 real asks. A morning of its own "
        "(same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind13",
        BLIND13_DIR,
        "Thirteenth blind split (`bench/eval/blind13/`, issue 34, scored once)",
        "Written by helper session `wb13`, who did not open the offline model's rules, the "
        "tools, the followups, the rules, dates.py, the tests, RESULTS.md, score.py, run.py or "
        "any other split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 "
        "alone (`blind13/README.md`); a whole morning of another life (the co-owner of a "
        "family dairy farm with an on-farm creamery: the herd, the co-op, the milk hauler, the "
        "vet, the state dairy inspector, the lender, the family) with issue 34's hard classes "
        "mixed in. A morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "quiet15",
        QUIET15_DIR,
        "Quiet split quiet15 (`bench/eval/quiet15/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq15`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet15/README.md`); another life (a museum's head of collections), 157 messages, "
        "135 asking Alex nothing (staff broadcasts, confidentiality, the sender's own promise, "
        "asks to others with Alex in Cc, answers with quoted asks, forwards, list posts with "
        "`list_id`, alerts and automated mail, in four languages) and 22 real asks. A morning "
        "of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind14",
        BLIND14_DIR,
        "Fourteenth blind split (`bench/eval/blind14/`, issue 34, scored once)",
        "Written by a fourteenth author (helper session `wb14`) who did not open the offline "
        "model's rules, the tools, the followups, dates.py, the tests, RESULTS.md, score.py, "
        "run.py or any other split's messages, from GUIDE.md, dataset.py and issue 34 alone "
        "(`blind14/README.md`); a whole morning of another life (the general manager of a "
        "regional public radio station, in an election week, with a transmitter outage) with "
        "issue 34's hard classes mixed in. A morning of its own (same date, timezone and "
        "calendar).",
    ),
    HeldOut(
        "quiet16",
        QUIET16_DIR,
        "Quiet split quiet16 (`bench/eval/quiet16/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq16`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, quiet8's README and issue 34 alone "
        "(`quiet16/README.md`); another life (the general manager of a public radio station), "
        "154 messages, 131 asking Alex nothing (broadcasts with polite imperatives, "
        "confidentiality, the sender's own promise, asks to others with Alex in Cc, answers "
        "with quoted asks, forwards, list posts with `list_id`, alerts and automated mail, in "
        "four languages) and 23 real asks. A morning of its own (same date, timezone and "
        "calendar).",
        focused=True,
    ),
    HeldOut(
        "blind15",
        BLIND15_DIR,
        "Fifteenth blind split (`bench/eval/blind15/`, issue 34, scored once)",
        "Written by a fifteenth author (helper session `wb15`) who did not open the offline "
        "model's rules, the tools, the followups, dates.py, the tests, RESULTS.md, score.py, "
        "run.py or any other split's messages, from GUIDE.md, dataset.py, blind8's README and "
        "issue 34 alone (`blind15/README.md`); a whole morning of another life (the general "
        "manager of a Vermont ski area in the week before opening day: snowmaking, lift "
        "inspections, seasonal hiring, pass sales, the ski school, an Austrian lift maker's "
        "technician, a Québec tour operator, a Chilean crew lead, the family and the house), "
        "154 messages with issue 34's hard classes and four threads Alex answered later "
        "(`answered`) mixed in. A morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "quiet17",
        QUIET17_DIR,
        "Quiet split quiet17 (`bench/eval/quiet17/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq17`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`quiet17/README.md`); another life (the owner of an independent bookshop with a café "
        "in a Maine college town), 161 messages, 134 in fyi and automated asking Alex nothing "
        "(staff broadcasts with polite imperatives, confidentiality, the sender's own promise, "
        "asks to others with Alex in Cc, calendar updates, forwards, list posts with "
        "`list_id`, automated mail, in four languages), three asks Alex answered later, and 22 "
        "messages with real asks. A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind16",
        BLIND16_DIR,
        "Sixteenth blind split (`bench/eval/blind16/`, issue 34, scored once)",
        "Written by helper session `wb16`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`blind16/README.md`); a whole morning of another life (the operations manager of a "
        "commercial fishing and seafood-processing co-operative on the Oregon coast: boat "
        "captains, the plant, cold storage, state inspectors, a Spanish-speaking plant crew, a "
        "French importer, a German buyer, the union steward, the family and the house), 157 "
        "messages with at least ten in every category that holds asks, issue 34's hard classes "
        "and four threads Alex answered later. A morning of its own (same date, timezone and "
        "calendar).",
    ),
    HeldOut(
        "quiet18",
        QUIET18_DIR,
        "Quiet split quiet18 (`bench/eval/quiet18/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq18`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`quiet18/README.md`); another life (the executive producer of a 40-person "
        "independent game studio in Providence in its certification month, with a Québec "
        "co-developer, a Hamburg publisher, a Madrid QA vendor, a voice agency, a platform's "
        "developer relations, a family and a house), 157 messages: 132 FYIs and automated "
        "mail asking Alex nothing (broadcasts with polite imperatives, confidentiality and "
        "embargoes, the sender's own promise, asks to others with Alex in Cc, forwards, CI and "
        "crash-report mail, store and platform notices, list posts and digests with "
        "`list_id`, calendar notices, receipts, in four languages), 3 asks left with nothing "
        "open (two answered by Alex later in the thread, one only quoted) and 22 real asks "
        "(one with a second ask Alex answered). A morning of its own (same date, timezone "
        "and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind17",
        BLIND17_DIR,
        "Seventeenth blind split (`bench/eval/blind17/`, issue 34, scored once)",
        "Written by helper session `wb17`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`blind17/README.md`); a whole morning of another life (the owner of a family "
        "vineyard and winery in New York's Finger Lakes during harvest and crush: the vineyard "
        "manager, the cellar master, the tasting room, distributors and buyers, the state "
        "liquor authority, a French cooperage, a German importer, a Spanish-speaking picking "
        "crew from Mexico and Guatemala, a Spanish cork maker, the family and the house), 157 "
        "messages with at least ten in every category that holds asks, issue 34's hard classes "
        "and four threads Alex answered later. Not yet scored. A morning of its own (same "
        "date, timezone and calendar).",
    ),
    HeldOut(
        "quiet19",
        QUIET19_DIR,
        "Quiet split quiet19 (`bench/eval/quiet19/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq19`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`quiet19/README.md`); another life (the managing editor of a small-town weekly "
        "newspaper in western Massachusetts in election week: reporters, a web press, "
        "advertisers, the town hall, a German sister-city committee, a Québec tourism board, a "
        "Spanish-language community page, a family and a house), 157 messages: 131 FYIs and "
        "automated mail asking Alex nothing (staff broadcasts with polite imperatives, "
        "confidentiality and embargoes, the sender's own promise, press releases, wire and CMS "
        "notices, reader complaints, list posts with `list_id`, one-line forwards, calendar "
        "notices, receipts, in four languages), 3 asks left with nothing open (two answered by "
        "Alex later in the thread, one only quoted) and 23 real asks (one with a second ask "
        "Alex answered). A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind18",
        BLIND18_DIR,
        "Eighteenth blind split (`bench/eval/blind18/`, issue 34, scored once)",
        "Written by helper session `wb18`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`blind18/README.md`); a whole morning of another life (the general manager of a "
        "minor-league baseball club in Ohio in the off-season: ballpark renovation "
        "contractors and the architect, season-ticket sales, sponsors, the city that owns the "
        "stadium, the parent club, a Dominican and Venezuelan players' host-family program in "
        "Spanish, a German turf supplier, a Québec scoreboard vendor, the family and the "
        "house), 160 messages with at least ten in every category that holds asks, issue 34's "
        "hard classes and four threads Alex answered later. A morning of its own (same date, "
        "timezone and calendar).",
    ),
    HeldOut(
        "quiet20",
        QUIET20_DIR,
        "Quiet split quiet20 (`bench/eval/quiet20/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq20`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`quiet20/README.md`); another life (the owner of a dog-training and boarding kennel "
        "outside Asheville, North Carolina, with trainers, kennel staff, a vet clinic, a "
        "pet-food supplier, a Bavarian German shepherd breeder, a Montréal client family, a "
        "Spanish-speaking kennel assistant, a family and a house), 159 messages: 132 FYIs and "
        "automated mail asking Alex nothing (staff broadcasts with polite imperatives, "
        "confidentiality, the sender's own promise, asks to others with Alex in Cc, booking, "
        "payment, marketplace, review and app notices, customer thank-yous, list posts and a "
        "digest with `list_id`, calendar notices, forwards, receipts, in four languages), 4 "
        "messages left with nothing open (three asks Alex answered later in the thread, one "
        "ask only quoted) and 23 messages with real asks. A morning of its own (same date, "
        "timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind19",
        BLIND19_DIR,
        "Nineteenth blind split (`bench/eval/blind19/`, issue 34, scored once)",
        "Written by helper session `wb19`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`blind19/README.md`); a whole morning of another life (the general manager of a "
        "county fairgrounds and events center in Pennsylvania in the week before a harvest "
        "festival and a horse show: staff, vendors, 4-H clubs, the county commissioners, the "
        "insurance broker, a carnival ride operator, the state ride inspector, a Swabian "
        "sausage maker and a Swiss ride inspector in German, a Québec equestrian team and its "
        "customs broker in French, a Spanish-speaking grounds crew and taco vendor, the family "
        "and the house), 165 messages with at least ten in every category that holds asks, "
        "issue 34's hard classes and four threads Alex answered later. A morning of its own "
        "(same date, timezone and calendar).",
    ),
    HeldOut(
        "quiet21",
        QUIET21_DIR,
        "Quiet split quiet21 (`bench/eval/quiet21/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq21`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`quiet21/README.md`); another life (the CTO of a 25-person payments startup in "
        "Austin, Texas, with engineers, an outsourced SOC, a sponsor bank, SOC 2 auditors, a "
        "Berlin contractor team, a Montréal designer, a Buenos Aires QA contractor, a family "
        "and a house), 194 messages: 131 FYIs and automated mail asking Alex nothing (staff "
        "broadcasts with polite imperatives, confidentiality and an embargo, the sender's own "
        "promise, asks to others with Alex in Cc, status-page, CI, on-call, monitoring and SOC "
        "notices, vendor and SaaS notices, list posts and a digest with `list_id`, newsletters, "
        "calendar notices, one-line forwards, thank-yous, receipts, a bounce, Alex's own "
        "replies, in four languages) and 63 in the other twelve categories (at least five "
        "each; 55 with real asks): three threads Alex answered later (two asks left with "
        "nothing open, one leaving a second ask open), three messages whose only asks are "
        "quoted or forwarded, and a German, a French and a Spanish message that ask nothing. "
        "A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind20",
        BLIND20_DIR,
        "Twentieth blind split (`bench/eval/blind20/`, issue 34, scored once)",
        "Written by helper session `wb20`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`blind20/README.md`); a whole morning of another life (the owner of a chain of three "
        "bicycle shops in Minneapolis with a repair workshop and a rental fleet: store "
        "managers, mechanics, the rental coordinator, a CPA, a credit union, an insurance "
        "agent, a customs broker, a landlord, a Taiwanese frame supplier writing in English, "
        "a Stuttgart e-bike motor maker in German, a Québec winter-tire distributor in French, "
        "a Spanish-speaking mechanic and his family, the city's bike-share contract, the "
        "family and the house), 160 messages with at least ten in every category that holds "
        "asks, issue 34's hard classes and four threads Alex answered later (three asks left "
        "with nothing open, one of them declined, and one leaving a second ask open). A "
        "morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "quiet22",
        QUIET22_DIR,
        "Quiet split quiet22 (`bench/eval/quiet22/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq22`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`quiet22/README.md`); another life (the director of pharmacy of a Rhode Island "
        "hospital, with pharmacists, technicians, a drug wholesaler, the nursing and IT teams, "
        "a German IV-robot maker, a Québec pharmacist exchange program, Spanish-speaking "
        "technicians, a family and a house), 196 messages: 132 FYIs and automated mail asking "
        "Alex nothing (staff broadcasts with polite imperatives, confidentiality, the sender's "
        "own promise, asks to others with Alex in Cc, shift-scheduling, cabinet, service-desk "
        "and downtime notices, wholesaler shortage and recall notices, list posts and a digest "
        "with `list_id`, newsletters, calendar notices, one-line forwards, thank-yous, "
        "receipts, a bounce, Alex's own replies, in four languages) and 64 in the other twelve "
        "categories (at least five each; 56 with real asks): three threads Alex answered later "
        "(two asks left with nothing open, one leaving its third ask open), three messages whose "
        "only asks are quoted, and a German, a French and a Spanish message that ask nothing. "
        "A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "blind21",
        BLIND21_DIR,
        "Twenty-first blind split (`bench/eval/blind21/`, issue 34, scored once)",
        "Written by helper session `wb21`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`blind21/README.md`); a whole morning of another life (the harbormaster and general "
        "manager of a marina and boatyard on Lake Champlain in Vermont during haul-out season: "
        "slip holders, the yard foreman, service manager and office manager, a travel-lift "
        "supplier, the state stormwater program, an insurance agent, a CPA, a Greifswald "
        "sailboat maker's dealer rep and German owners, a Québec yacht club and customers in "
        "French, a Spanish-speaking yard worker and his family, the family and the house), 155 "
        "messages with at least ten in every category that holds asks, issue 34's hard classes "
        "and four threads Alex answered later (two asks settled by Alex's sent mail, one of "
        "them declined, one by Alex's reply quoted in the other side's next message, and one "
        "leaving a second ask open). A morning of its own (same date, timezone and calendar).",
    ),
    HeldOut(
        "quiet23",
        QUIET23_DIR,
        "Quiet split quiet23 (`bench/eval/quiet23/`, issue 34's false tasks, scored once)",
        "Written by helper session `wq23`, who did not open the offline model's rules, the "
        "tools, the followups, dates.py, the tests, RESULTS.md, score.py, run.py or any other "
        "split's messages, from GUIDE.md, dataset.py, blind8's README and issue 34 alone "
        "(`quiet23/README.md`); another life (the owner of a family commercial printing and "
        "sign shop in Albuquerque, with press operators, prepress, a sign installer, a paper "
        "supplier, a German press maker's service team, a Montréal agency writing in French, "
        "Spanish-speaking staff and customers, a family and a house), 197 messages: 135 FYIs "
        "and automated mail asking Alex nothing (staff broadcasts with polite imperatives, "
        "confidentiality, the sender's own promise, asks to others with Alex in Cc, list posts "
        "with `list_id`, shipping, payment, calendar and platform notices, newsletters, "
        "one-line forwards, thank-yous, Alex's own replies, in four languages) and 62 in the "
        "other twelve categories (at least five each): three threads Alex answered later. "
        "Not yet scored. A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
    HeldOut(
        "precision",
        PRECISION_DIR,
        "Precision split (`bench/eval/precision/`, issue 34, never tuned on)",
        "Written for issue 34's precision classes (broadcast imperatives, confidentiality, the "
        "sender's own promise, requests to others with the reader in Cc, mailing-list posts, "
        "several asks, relative dates) before any rule was changed for them, by the helper "
        "who then changed the rules; its failures were never read to change a rule "
        "(`precision/README.md`). A morning of its own (same date, timezone and calendar).",
        focused=True,
    ),
)


class LabelError(ValueError):
    """A message or label of the set breaks GUIDE.md's shape."""


@dataclass(frozen=True)
class GoldAction:
    title: str
    due: str | None
    requester: str
    alt: tuple[str, ...] = ()

    @property
    def titles(self) -> tuple[str, ...]:
        """Every title that may match: the title and its renderings (`alt`)."""
        return (self.title, *self.alt)


@dataclass(frozen=True)
class Label:
    id: str
    category: str
    has_action: bool
    actions: tuple[GoldAction, ...]
    quoted: tuple[str, ...] = ()  # requests in the quoted history, which must not be taken
    answered: tuple[str, ...] = ()  # its asks Alex answered in a later message: no task either
    fixed_split: str | None = None  # a blind split's name (`load_held`); else the hash decides

    @property
    def split(self) -> str:
        return self.fixed_split or split_of(self.id)


@dataclass
class EvalSet:
    messages: list[dict[str, Any]]  # inbox fields only, authored ids
    labels: dict[str, Label]  # by authored id
    second: dict[str, Label] = field(default_factory=dict)

    def inbox(self) -> dict[str, Any]:
        """The inbox file's content: opaque ids, no labels, oldest first."""
        out = []
        for message in sorted(self.messages, key=lambda m: (_instant(m["received_at"]), m["id"])):
            out.append({**message, "id": public_id(message["id"])})
        return {"messages": out}

    def by_public_id(self) -> dict[str, str]:
        return {public_id(i): i for i in self.labels}


def public_id(authored: str) -> str:
    """The id the model sees for an authored id: a hash, so the id says nothing."""
    return "m" + hashlib.sha256(authored.encode()).hexdigest()[:8]


def split_of(authored: str) -> str:
    """`held-out` for about a quarter of the ids, fixed by their hash; else `tuning`."""
    return (
        "held-out"
        if int(hashlib.sha256(b"split:" + authored.encode()).hexdigest(), 16) % 4 == 0
        else "tuning"
    )


def load_blind(blind_dir: Path = BLIND_DIR) -> EvalSet:
    """The blind split: its own messages, every label checked, each in split `blind`."""
    return load(blind_dir, None, split="blind")


def held_out(name: str) -> HeldOut:
    """The blind split called `name`."""
    return next(h for h in HELD_OUT if h.name == name)


def present_held_out(splits: tuple[HeldOut, ...] = HELD_OUT) -> list[HeldOut]:
    """The blind splits whose folder holds messages, in order."""
    return [h for h in splits if h.folder.is_dir() and any(h.folder.glob("*.json"))]


def load_held(name: str) -> EvalSet:
    """A blind split's messages, every label checked, each in split `name`."""
    return load(held_out(name).folder, None, split=name)


def load(
    set_dir: Path = SET_DIR, second_pass: Path | None = SECOND_PASS, *, split: str | None = None
) -> EvalSet:
    """The set from `set_dir`, every label checked; the second pass when the file exists.
    `split` puts every message in that split instead of the hash's."""
    messages: list[dict[str, Any]] = []
    labels: dict[str, Label] = {}
    for path in sorted(set_dir.glob("*.json")):
        items = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(items, list):
            raise LabelError(f"{path.name}: expected a list of messages")
        for item in items:
            label = _label(item, path.name)
            if split is not None:
                label = replace(label, fixed_split=split)
            if label.id in labels:
                raise LabelError(f"{path.name}: duplicate id {label.id}")
            labels[label.id] = label
            messages.append({k: item[k] for k in INBOX_FIELDS if k in item})
    second: dict[str, Label] = {}
    if second_pass is not None and second_pass.exists():
        data = json.loads(second_pass.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("labels"), dict):
            raise LabelError(f"{second_pass.name}: expected an object with a 'labels' object")
        for mid, raw in data["labels"].items():
            if mid not in labels:
                raise LabelError(f"second pass: unknown id {mid}")
            raw = {**raw, "category": labels[mid].category}
            second[mid] = _parse_label(mid, raw, "second_pass.json", requester_needed=False)
    return EvalSet(messages, labels, second)


def _label(item: Any, where: str) -> Label:
    if not isinstance(item, dict):
        raise LabelError(f"{where}: a message must be an object")
    for key in ("id", "from", "subject", "received_at", "label"):
        if key not in item:
            raise LabelError(f"{where}: message {item.get('id', '?')} has no {key!r}")
    mid = str(item["id"])
    _instant(item["received_at"], f"{where}: {mid}")
    return _parse_label(mid, item["label"], where)


def _parse_label(mid: str, raw: Any, where: str, *, requester_needed: bool = True) -> Label:
    if not isinstance(raw, dict):
        raise LabelError(f"{where}: {mid}: label must be an object")
    category = raw.get("category")
    if category not in CATEGORIES:
        raise LabelError(f"{where}: {mid}: unknown category {category!r}")
    has_action = raw.get("has_action")
    if not isinstance(has_action, bool):
        raise LabelError(f"{where}: {mid}: has_action must be true or false")
    actions = []
    raw_actions = raw.get("actions", [])
    if not isinstance(raw_actions, list):
        raise LabelError(f"{where}: {mid}: actions must be a list")
    for a in raw_actions:
        if not isinstance(a, dict):
            raise LabelError(f"{where}: {mid}: each action must be an object")
        title, due = a.get("title"), a.get("due")
        if not isinstance(title, str) or not title.strip():
            raise LabelError(f"{where}: {mid}: an action needs a title")
        if due is not None:
            try:
                dt.date.fromisoformat(due)
            except (TypeError, ValueError):
                raise LabelError(f"{where}: {mid}: due {due!r} is not an ISO date") from None
        requester = a.get("requester", "")
        if requester_needed and not (isinstance(requester, str) and requester):
            raise LabelError(f"{where}: {mid}: an action needs a requester")
        alt = _strings(a.get("alt", []), f"{where}: {mid}: alt")
        actions.append(GoldAction(title, due, str(requester), alt))
    if has_action != bool(actions):
        raise LabelError(f"{where}: {mid}: has_action is {has_action} with {len(actions)} actions")
    quoted = _strings(raw.get("quoted", []), f"{where}: {mid}: quoted")
    answered = _strings(raw.get("answered", []), f"{where}: {mid}: answered")
    return Label(mid, category, has_action, tuple(actions), quoted, answered)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    """A list of strings as a tuple; a bare string (which would split into letters) or
    anything else is a LabelError."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LabelError(f"{where} must be a list of strings")
    return tuple(value)


def _instant(value: Any, where: str = "received_at") -> str:
    """The moment `value` names, as an ISO timestamp in UTC (so that they sort in time order),
    read as the inbox source reads it: an aware ISO-8601 timestamp, or a LabelError."""
    try:
        return to_timezone(value, dt.UTC)
    except SourceError as exc:
        raise LabelError(f"{where}: {exc}") from None
