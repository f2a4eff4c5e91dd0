"""One real person's morning with every feature on, through the real CLI in child processes
(issue 31's method): Alex's IMAP INBOX of 117 messages with a Sent folder, read over XOAUTH2
with a token from her token program (pymap, tests/oauthservers.py); her Google Calendar export
over HTTP, folded as Google folds it; `me`, meeting prep and conflicts; the brief mailed to her
over SMTP and written to her notes folder. The data is in `tests/realmorning.py`. The brief
is written by the built-in offline model, and again on Claude's wire: the real SDK against the
loopback Messages API (tests/fakeapi.py) with the same model answering behind it.

The brief is checked section by section against what a careful person reading that mail and
that calendar would write down (worked out by hand from the data, not copied from a run), the
`--format json` document against the same facts, and the run at Dayflow's default settings,
where a morning this size pages through the inbox and compacts its history (the default
`--compact-at` is 20,000 estimated tokens; this inbox passes it). Then the same morning killed
with a real SIGKILL in the middle of filing its tasks, and resumed: the same brief, every task
once, one delivery per sink, one run of the token program per process, and the mailbox exactly
as it was (EXAMINE and BODY.PEEK only, no flag changed). On SQLite, and on PostgreSQL when
DAYFLOW_TEST_PG is set.

Every setting is the default but one: `--since 2026-11-02`, a first brief reaching back over
the mailbox's nine days, as the note of a first brief suggests. Without it a first brief of a
past day (`--date`) reads the 24 hours before the same wall-clock time on that day, so what it
read would depend on the hour the suite runs.
"""

from __future__ import annotations

import contextlib
import imaplib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests import fakeapi
from tests.calserver import FeedServer
from tests.conftest import db_rows, pg_schema, subprocess_env
from tests.imapserver import PASSWORD, USER
from tests.oauthservers import OAuthImap, oauth_imap
from tests.realmorning import DAY, ME, google_calendar, mailbox
from tests.test_delivery import SmtpServer, free_port

pytestmark = pytest.mark.slow

TOKEN = "morning-token-1"
FEED = "/calendar/ical/alex%40northwind.example/private-5f2c/basic.ics"
READ_ONLY = {"CAPABILITY", "AUTHENTICATE", "LIST", "EXAMINE", "UID SEARCH", "UID FETCH", "LOGOUT"}
READ_ONLY |= {"NOOP"}


@dataclass
class Morning:
    """The servers of one morning and the files its runs share."""

    tmp: Path
    imap: OAuthImap
    feed: FeedServer
    smtp: SmtpServer
    token_log: Path
    token_command: str

    def config(self, name: str) -> Path:
        """A config file with every feature on, its notes folder `name`."""
        path = self.tmp / f"{name}.toml"
        path.write_text(
            f'me = ["{ME}"]\n'
            f'deliver = ["smtp", "file:{self.tmp / name}/{{date}}.md"]\n\n'
            '[[inbox]]\nname = "work"\nkind = "imap"\nhost = "127.0.0.1"\n'
            f'port = {self.imap.proxy.port}\nuser = "{USER}"\nsecurity = "plain"\n'
            f'auth = "xoauth2"\ntoken_command = {json.dumps(self.token_command)}\n'
            "timeout = 20\n\n"
            '[[calendar]]\nname = "google"\nkind = "ics"\n'
            f'url = "{self.feed.base_url}{FEED}"\n\n'
            f'[smtp]\nhost = "127.0.0.1"\nport = {self.smtp.port}\nsecurity = "plain"\n'
            f'to = "{ME}"\nfrom = "dayflow@northwind.example"\n'
        )
        return path

    def token_runs(self) -> list[int]:
        """The process id of the Dayflow process behind each run of the token program."""
        if not self.token_log.exists():
            return []
        return [int(line) for line in self.token_log.read_text().split()]

    def mailbox_state(self) -> dict[str, list[tuple[int, str]]]:
        """Every message of INBOX and Sent, by UID with its flags, over a direct connection."""
        conn = imaplib.IMAP4("127.0.0.1", self.imap.port, timeout=10)
        conn.login(USER, PASSWORD)
        try:
            state = {}
            for folder in ("INBOX", "Sent"):
                conn.select(folder, readonly=True)
                _, data = conn.uid("FETCH", "1:*", "(UID FLAGS)")
                rows = []
                for line in data:
                    text = line.decode() if isinstance(line, bytes) else ""
                    uid = re.search(r"UID (\d+)", text)
                    flags = re.search(r"FLAGS \(([^)]*)\)", text)
                    if uid and flags:
                        rows.append((int(uid.group(1)), flags.group(1)))
                state[folder] = sorted(rows)
            return state
        finally:
            conn.logout()


def _load(imap: OAuthImap) -> None:
    conn = imaplib.IMAP4("127.0.0.1", imap.port, timeout=10)
    conn.login(USER, PASSWORD)
    try:
        conn.create("Sent")
        for mail in mailbox():
            flags = "(\\Seen)" if mail.seen else None
            stamp = imaplib.Time2Internaldate(mail.when.timestamp())
            assert conn.append(mail.folder, flags, stamp, mail.raw)[0] == "OK"
    finally:
        conn.logout()


@pytest.fixture(scope="module")
def mail_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthImap]:
    """pymap holding Alex's mailbox, loaded once for the module: no test may change it (each
    checks every flag and UID before and after)."""
    with oauth_imap(tmp_path_factory.mktemp("imap"), token=TOKEN) as imap:
        _load(imap)
        yield imap


@pytest.fixture
def morning(tmp_path: Path, mail_server: OAuthImap) -> Iterator[Morning]:
    log = tmp_path / "token-runs"
    script = tmp_path / "oauth_token.py"
    script.write_text(
        "import os\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(f'{os.getppid()}\\n')\n"
        f"print({TOKEN!r})\n"
    )
    with mail_server.proxy.lock:
        mail_server.proxy.commands.clear()
    with contextlib.ExitStack() as stack:
        feed = stack.enter_context(FeedServer())
        feed.feeds[FEED] = google_calendar()
        smtp = stack.enter_context(SmtpServer(free_port()))
        yield Morning(tmp_path, mail_server, feed, smtp, log, f"{sys.executable} {script}")


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two fresh stores of one engine: the uncrashed morning's and the killed one's."""
    if request.param == "sqlite":
        yield str(tmp_path / "whole.db"), str(tmp_path / "killed.db")
        return
    admin = request.getfixturevalue("pg_server")
    with pg_schema(admin) as whole, pg_schema(admin) as killed:
        yield whole, killed


def dayflow(db: str, cfg: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m dayflow ARGS` in a child process, run to its end (its pid kept in `.pid`)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dayflow", *args],
        env=subprocess_env(db, DAYFLOW_CONFIG=str(cfg), **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=300)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    done.pid = proc.pid  # type: ignore[attr-defined]
    return done


BRIEF_ARGS = ("brief", "--date", DAY.isoformat(), "--tz", "Europe/Berlin", "--since", "2026-11-02")


# The brief a careful reader of that mail and that calendar writes, worked out by hand.
# Today: the standup moved to 10:00 clashes with the budget review (it ends first, so it is
# listed first); the webinar is declined, so
# it clashes with nothing; five minutes from the café to Room 4.01 is a clash of places. Each
# meeting's prep is the threads with the people on it (Priya is on two of them through folded
# ATTENDEE lines; Marco only through one), newest first, five at most.
TODAY = """\
## Today
- 10:00–10:15 Team standup (Room 2)
  - Mail: "Notes from the vendor call" (latest from Priya Shah, Wed 11 Nov)
  - Mail: "Re: Receipts for October" (latest from Ben Carter, Tue 10 Nov)
  - Mail: "Thursday all-hands" (latest from Sofia Lindgren, Tue 10 Nov)
  - Mail: "Q4 budget draft" (latest from Ben Carter, Mon 9 Nov)
  - Mail: "Re: Travel policy" (latest from Ben Carter, Wed 4 Nov)
  - and 1 older thread with them
- 10:00–11:00 Q4 budget review (Room 4.01)
  - Mail: "Notes from the vendor call" (latest from Priya Shah, Wed 11 Nov)
  - Mail: "Re: Receipts for October" (latest from Ben Carter, Tue 10 Nov)
  - Mail: "Q4 budget draft" (latest from Ben Carter, Mon 9 Nov)
  - Mail: "Re: Travel policy" (latest from Ben Carter, Wed 4 Nov)
  - Mail: "Re: Offsite venue" (latest from you, Tue 3 Nov)
- 10:30–11:30 Vendor webinar: cloud costs (https://webinar.example/cloud-costs) (declined)
- 12:30–13:30 Lunch with Marco (Café Lindner, Torstraße 12, Berlin)
  - Mail: "Re: Homepage mockups" (latest from Marco Rossi, Tue 10 Nov)
- 13:35–14:00 1:1 with Sofia (Room 4.01)
  - Mail: "Thursday all-hands" (latest from Sofia Lindgren, Tue 10 Nov)
- 15:00–15:30 Contract check-in with Dana
  - Mail: "Services agreement" (latest from you, Wed 4 Nov)
- Conflict: Team standup and Q4 budget review overlap, 10:00–10:15.
- Conflict: Lunch with Marco ends at 13:30 in Café Lindner, Torstraße 12, Berlin and 1:1 with \
Sofia starts at 13:35 in Room 4.01: 5 minutes to get there."""

# Four requests of Alex's own: Ben's draft (due tomorrow), Priya's codes (in the middle of her
# notes), the school's slip (Alex in Bcc), Marco's approval. Not the list mail, GitHub, Jira or
# CI asking "could you", not Priya's venue question Alex answered, not Sofia's question (only
# an answer is asked: an owed reply).
TASKS = [
    ("Send Q4 budget draft to Ben", "2026-11-12", "Ben Carter", "due tomorrow"),
    ("Add cost-centre codes to vendor sheet", "2026-11-13", "Priya Shah", "due Fri 13 Nov"),
    ("Return signed permission slip", "2026-11-13", "Oakridge Primary School", "due Fri 13 Nov"),
    ("Approve final mockups", "2026-11-16", "Marco Rossi", "due Mon 16 Nov"),
]
# Under each, the sender's words it was found in (cut for the terminal), and the date's kind.
EVIDENCE = [
    '"Ahead of Wednesday\'s budget review, could you send me the Q4 budget draft by Thursday 12…"'
    ' (due stated: "by Thursday 12 November")',
    '"One thing for you: please add your cost-centre codes to the vendor sheet by Friday,…"'
    " (due stated)",
    '"Please return the signed permission slip by Friday 13 November; without it your child…"'
    " (due stated)",
    '"Please approve the final mockups by Monday 16 November so I can hand them over to the…"'
    " (due stated)",
]
NEEDS_ACTION = "## Needs action\n" + "\n".join(
    f"- {title} (from {who}, {when})\n  - {said}"
    for (title, _, who, when), said in zip(TASKS, EVIDENCE, strict=True)
)
# The people whose latest mail to Alex asks something she has not answered, longest first.
OWED = [
    ("Ben Carter", "ben@northwind.example", "Q4 budget draft", 2, "Mon 9 Nov"),
    ("Sofia Lindgren", "sofia@northwind.example", "Thursday all-hands", 1, "Tue 10 Nov"),
    ("Marco Rossi", "marco@rossi-design.example", "Re: Homepage mockups", 1, "Tue 10 Nov"),
    ("Priya Shah", "priya@northwind.example", "Notes from the vendor call", 0, "Wed 11 Nov"),
]
# Under each, its evidence: the question its latest message asked (cut for the terminal).
ASKED = [
    "Ahead of Wednesday's budget review, could you send me the Q4 budget draft by Thursday 12…",
    "Are you able to present the hiring update at Thursday's all-hands?",
    "Please approve the final mockups by Monday 16 November so I can hand them over to the…",
    "One thing for you: please add your cost-centre codes to the vendor sheet by Friday,…",
]
YOU_OWE = "## You owe replies\n" + "\n".join(
    f'- Reply to {name} ({address}): "{subject}", waiting {age} working '
    f"day{'' if age == 1 else 's'} (since {since})\n"
    f'  - asked: "{asked}"'
    for (name, address, subject, age, since), asked in zip(OWED, ASKED, strict=True)
)
# Alex asked Dana a week ago (five working days); Ben answered her, Marco answered her.
WAITING = """\
## Waiting on others
- Dana Kim (dana.kim@lumenlegal.example): "Services agreement", no answer for 5 working days \
(since Wed 4 Nov)
  - asked: "Could you send me the countersigned services agreement once your partner has \
signed it?\""""
# Friday has no standup (the EXDATE); Thursday's is at its usual time (only today's moved).
THIS_WEEK = """\
## This week
- Thu 12 Nov: 09:30 Team standup, 11:00 All-hands
- Fri 13 Nov: 16:00 Dentist
- Mon 16 Nov: 09:30 Team standup, 14:00 Offsite planning
- Tue 17 Nov: 09:30 Team standup"""
ONE_THING = "## One thing\n**Send Q4 budget draft to Ben, due tomorrow.**"
HEAD = "# Daily brief: Wednesday 11 November 2026\n_Times in Europe/Berlin._"


def sections(brief: str) -> dict[str, str]:
    """The brief's sections by heading, each with its heading line, trailing blank lines cut."""
    out: dict[str, str] = {}
    for part in re.split(r"\n(?=## )", brief.strip()):
        out[part.split("\n", 1)[0]] = part.rstrip()
    return out


def tasks_created(section: str) -> list[str]:
    """The lines of "Tasks created", in a stable order (the section lists them as filed)."""
    _, *lines = section.splitlines()
    return sorted(lines)


def check_brief(brief: str, tasks: list[dict[str, Any]]) -> None:
    """Every section of `brief` as a careful reader would write it; `tasks` the store's. All
    sections are compared at once, so that a failure shows each one that is wrong."""
    found = sections(brief)
    if "## Tasks created" in found:
        found["## Tasks created"] = "\n".join(tasks_created(found["## Tasks created"]))
    created = sorted(f"- {t['title']} (`{t['id']}`)" for t in tasks)
    assert found == {
        "# Daily brief: Wednesday 11 November 2026": HEAD,
        "## Today": TODAY,
        "## Needs action": NEEDS_ACTION,
        "## You owe replies": YOU_OWE,
        "## Waiting on others": WAITING,
        "## Tasks created": "\n".join(created),
        "## This week": THIS_WEEK,
        "## One thing": ONE_THING,
    }


def check_tasks(tasks: list[dict[str, Any]]) -> None:
    """The store holds each of the four tasks once, filed under its own message's key."""
    assert sorted((t["title"], t["due"]) for t in tasks) == sorted((t, d) for t, d, _, _ in TASKS)
    keys = [t["idempotency_key"] for t in tasks]
    assert len(set(keys)) == len(keys) == len({t["source_id"] for t in tasks})
    assert all(k.startswith("mail:") for k in keys), keys


def check_json(doc: dict[str, Any], brief: str) -> None:
    """`--format json` says what the brief says: the same Markdown, the same people owed and
    awaited, the same prep, the same conflicts."""
    assert doc["brief"].rstrip("\n") == brief.rstrip("\n")
    followups = doc["followups"]
    assert followups["me"] == [ME]
    assert [
        (i["with"]["name"], i["with"]["address"], i["subject"], i["age_days"])
        for i in followups["you_owe"]
    ] == [(n, a, s, age) for n, a, s, age, _ in OWED]
    assert [(i["with"]["name"], i["subject"], i["age_days"]) for i in followups["waiting_on"]] == [
        ("Dana Kim", "Services agreement", 5)
    ]
    prep = {p["title"]: p for p in doc["prep"]}
    assert sorted(prep) == [
        "1:1 with Sofia",
        "Contract check-in with Dana",
        "Lunch with Marco",
        "Q4 budget review",
        "Team standup",
    ]  # not the declined webinar
    people = {t: sorted(w.get("address", "") for w in p["with"]) for t, p in prep.items()}
    assert people["Q4 budget review"] == ["ben@northwind.example", "priya@northwind.example"]
    assert people["Team standup"] == [
        "ben@northwind.example",
        "priya@northwind.example",
        "sofia@northwind.example",
    ]
    assert people["Lunch with Marco"] == ["marco@rossi-design.example"]
    assert [t["subject"] for t in prep["Lunch with Marco"]["threads"]] == ["Re: Homepage mockups"]
    assert [t["subject"] for t in prep["Q4 budget review"]["threads"]] == [
        "Notes from the vendor call",
        "Re: Receipts for October",
        "Q4 budget draft",
        "Re: Travel policy",
        "Re: Offsite venue",
    ]
    clashes = [
        (c["kind"], c["titles"], c["start"][11:16], c["end"][11:16]) for c in doc["conflicts"]
    ]
    assert clashes == [
        ("overlap", ["Team standup", "Q4 budget review"], "10:00", "10:15"),
        ("travel", ["Lunch with Marco", "1:1 with Sofia"], "13:30", "13:35"),
    ], doc["conflicts"]


def imap_verbs(imap: OAuthImap) -> set[str]:
    return {
        " ".join(c.split()[:2]) if c.startswith("UID") else c.split()[0]
        for c in imap.proxy.commands
    }


def check_mailbox_untouched(morning: Morning, before: dict[str, Any]) -> None:
    """Only EXAMINE, SEARCH and BODY.PEEK fetches reached pymap, and every flag is as it was."""
    assert morning.mailbox_state() == before
    assert imap_verbs(morning.imap) <= READ_ONLY, imap_verbs(morning.imap)
    fetches = morning.imap.proxy.lines("FETCH")
    assert fetches and all("BODY[" not in f.replace("BODY.PEEK[", "") for f in fetches)
    examined = {c.split(" ", 1)[1].strip('"') for c in morning.imap.proxy.lines("EXAMINE")}
    assert examined == {"INBOX", "Sent"}


def delivered(morning: Morning, db: str, run_id: str, notes: Path) -> tuple[str, str]:
    """The brief as the SMTP server got it (once) and as the notes file holds it (once)."""
    mine = [
        m
        for m in morning.smtp.inbox.messages
        if f"<dayflow.{run_id}.{DAY}@northwind.example>" in m.decode("utf-8", "replace")
    ]
    assert len(mine) == 1, f"{len(mine)} mails for run {run_id}"
    mail = message_from_bytes(mine[0], policy=policy.default)
    assert mail["To"] == ME
    body = mail.get_body(preferencelist=("plain",))
    assert body is not None
    note = (notes / f"{DAY}.md").read_text()
    assert note.count("# Daily brief: Wednesday 11 November 2026") == 1
    inner = note.split("\n", 1)[1].rsplit("\n", 2)[0]  # between the section marks
    return body.get_content().replace("\r\n", "\n"), inner


def show(db: str, cfg: Path, run_id: str) -> dict[str, Any]:
    out = dayflow(db, cfg, "show", run_id, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def store_tasks(db: str, cfg: Path) -> list[dict[str, Any]]:
    out = dayflow(db, cfg, "tasks", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _steps(db: str, run_id: str) -> list[tuple[int, list[tuple[str, dict[str, Any]]]]]:
    """Each step of the run with the tools its answer called (name, input)."""
    rows = db_rows(db, "SELECT n, assistant_json FROM steps WHERE run_id = ? ORDER BY n", run_id)
    return [
        (int(n), [(b["name"], b["input"]) for b in json.loads(body) if b["type"] == "tool_use"])
        for n, body in rows
    ]


@pytest.fixture(params=["offline", "claude"])
def model_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """Who writes the brief: the built-in offline model (no key), or Claude's wire, the real
    SDK against the loopback Messages API that the same model answers behind."""
    if request.param == "offline":
        yield {}
        return
    responder = fakeapi.responder_from_client(OfflineModel())
    with fakeapi.FakeAPI(responder=responder) as api:
        yield {
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": api.base_url,
            "DAYFLOW_MODEL": "claude-haiku-5-5",
        }
        assert api.message_requests and not api.rejected


def test_a_busy_morning_with_everything_on_is_the_brief_a_careful_reader_writes(
    morning: Morning, stores: tuple[str, str], model_env: dict[str, str]
) -> None:
    db, _ = stores
    cfg = morning.config("notes")
    before = morning.mailbox_state()
    assert len(before["INBOX"]) == 117 and len(before["Sent"]) == 5

    check = dayflow(db, cfg, "sources", "check")
    assert check.returncode == 0, check.stdout + check.stderr
    lines = {line.split()[0]: line for line in check.stdout.splitlines() if line.strip()}
    assert "xoauth2 accepted, 117 message(s)" in lines["work"]
    assert "5 message(s)" in lines["work/sent"]
    assert lines["google"].split()[1] == "ics"

    run = dayflow(db, cfg, *BRIEF_ARGS, "--format", "json", **model_env)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    run_id = doc["run"]["id"]
    assert doc["run"]["status"] == "done"
    assert doc["run"]["model"] == model_env.get("DAYFLOW_MODEL", "offline")

    # A morning this size at the default settings: the inbox is read page by page (117
    # messages, 50 to a page at most) and the history is compacted at least once.
    [(compactions,)] = db_rows(db, "SELECT count(*) FROM compactions WHERE run_id = ?", run_id)
    assert compactions >= 1
    pages = [args for _, uses in _steps(db, run_id) for name, args in uses if name == "read_inbox"]
    assert len(pages) >= 3 and all("cursor" in args for args in pages[1:]), pages

    tasks = store_tasks(db, cfg)
    check_brief(doc["brief"], tasks)
    check_tasks(tasks)
    check_json(doc, doc["brief"])
    mailed, noted = delivered(morning, db, run_id, morning.tmp / "notes")
    assert mailed.rstrip("\n") == doc["brief"].rstrip("\n")
    assert noted.rstrip("\n") == doc["brief"].rstrip("\n")
    assert [d["sink"] for d in show(db, cfg, run_id)["deliveries"]] == [
        "smtp",
        f"file:{morning.tmp / 'notes'}/{{date}}.md",
    ]

    # One token per process: `sources check` once, the brief once (the inbox and its sent
    # folder are one account).
    assert morning.token_runs() == [check.pid, run.pid]  # type: ignore[attr-defined]
    check_mailbox_untouched(morning, before)


def test_a_morning_killed_while_filing_its_tasks_resumes_to_the_same_brief_once(
    morning: Morning, stores: tuple[str, str]
) -> None:
    """A real SIGKILL between the first and the second task of a step, after the history was
    compacted; `dayflow resume` in a new process finishes the same brief: each task once, one
    mail and one note, at most one run of the token program per process, no mailbox change."""
    whole, killed_db = stores
    before = morning.mailbox_state()
    first = dayflow(whole, morning.config("whole"), *BRIEF_ARGS, "--format", "json")
    assert first.returncode == 0, first.stderr
    first_id = json.loads(first.stdout)["run"]["id"]
    filing = [
        n for n, uses in _steps(whole, first_id) if [u[0] for u in uses].count("create_task") > 1
    ]
    assert filing, _steps(whole, first_id)
    [(compacted_before,)] = db_rows(
        whole, "SELECT min(before_step) FROM compactions WHERE run_id = ?", first_id
    )
    # The step killed files tasks with the history already compacted: the resume rebuilds its
    # request from the compaction's summary.
    after = [n for n in filing if compacted_before is not None and n >= compacted_before]
    assert after, (compacted_before, _steps(whole, first_id))
    step = after[0]

    cfg = morning.config("killed")
    token_runs = len(morning.token_runs())
    kill = dayflow(killed_db, cfg, *BRIEF_ARGS, DAYFLOW_KILL_AT=f"between_tools:{step}")
    assert kill.returncode == -9, kill.stderr
    assert not (morning.tmp / "killed").exists()  # nothing delivered yet
    partial = store_tasks(killed_db, cfg)
    assert len(partial) >= 1

    resumed = dayflow(killed_db, cfg, "resume", "--format", "json")
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    run_id = doc["run"]["id"]
    assert doc["run"]["status"] == "done"
    tasks = store_tasks(killed_db, cfg)
    check_brief(doc["brief"], tasks)
    check_tasks(tasks)
    assert {t["idempotency_key"] for t in partial} <= {t["idempotency_key"] for t in tasks}
    check_json(doc, doc["brief"])

    # One delivery per sink, and a second resume delivers nothing again.
    mailed, noted = delivered(morning, killed_db, run_id, morning.tmp / "killed")
    assert mailed.rstrip("\n") == noted.rstrip("\n") == doc["brief"].rstrip("\n")
    again = dayflow(killed_db, cfg, "resume", run_id)
    assert again.returncode == 0, again.stderr
    delivered(morning, killed_db, run_id, morning.tmp / "killed")
    assert len(show(killed_db, cfg, run_id)["deliveries"]) == 2

    # At most one token per process, and the killed process did fetch one.
    runs = morning.token_runs()[token_runs:]
    assert len(runs) == len(set(runs)) and kill.pid in runs, runs  # type: ignore[attr-defined]
    assert set(runs) <= {kill.pid, resumed.pid}  # type: ignore[attr-defined]
    check_mailbox_untouched(morning, before)


def test_the_same_morning_compacted_hard_or_never_is_the_same_brief(
    morning: Morning, stores: tuple[str, str]
) -> None:
    """Issue 31.2 on this mailbox: `--compact-at 0` (never) and `--compact-at 3000` (after
    nearly every step) file the same four tasks and write the same brief as the default."""
    for db, threshold in zip(stores, ("0", "3000"), strict=True):
        cfg = morning.config(f"at-{threshold}")
        run = dayflow(db, cfg, *BRIEF_ARGS, "--format", "json", "--compact-at", threshold)
        assert run.returncode == 0, run.stderr
        doc = json.loads(run.stdout)
        [(compactions,)] = db_rows(
            db, "SELECT count(*) FROM compactions WHERE run_id = ?", doc["run"]["id"]
        )
        assert (compactions == 0) is (threshold == "0"), compactions
        tasks = store_tasks(db, cfg)
        check_brief(doc["brief"], tasks)
        check_tasks(tasks)
        check_json(doc, doc["brief"])


def test_a_morning_killed_once_the_smtp_server_took_the_brief_never_mails_it_twice(
    morning: Morning, stores: tuple[str, str]
) -> None:
    """A real SIGKILL after the server accepted the mail and before that was recorded: the
    resume cannot know it was sent, says so, and does not send it again; the note is written
    once; nothing is read again (no token, no IMAP command)."""
    whole, killed_db = stores
    before = morning.mailbox_state()
    first = dayflow(whole, morning.config("whole"), *BRIEF_ARGS, "--format", "json")
    assert first.returncode == 0, first.stderr
    final = json.loads(first.stdout)["run"]["steps"]

    cfg = morning.config("killed")
    kill = dayflow(killed_db, cfg, *BRIEF_ARGS, DAYFLOW_KILL_AT=f"after_send:{final}")
    assert kill.returncode == -9, kill.stderr
    assert not (morning.tmp / "killed").exists()
    token_runs = len(morning.token_runs())
    morning.imap.proxy.commands.clear()

    resumed = dayflow(killed_db, cfg, "resume", "--format", "json")
    assert resumed.returncode == 0, resumed.stderr
    assert "uncertain" in resumed.stderr
    doc = json.loads(resumed.stdout)
    run_id = doc["run"]["id"]
    assert doc["run"]["status"] == "done" and "uncertain" in doc["run"]["reason"]
    tasks = store_tasks(killed_db, cfg)
    check_brief(doc["brief"], tasks)
    check_tasks(tasks)
    mailed, noted = delivered(morning, killed_db, run_id, morning.tmp / "killed")
    assert mailed.rstrip("\n") == noted.rstrip("\n") == doc["brief"].rstrip("\n")
    smtp, note = show(killed_db, cfg, run_id)["deliveries"]
    assert smtp["sink"] == "smtp" and not smtp["ok"] and "not sent again" in smtp["detail"]
    assert note["ok"]
    assert morning.token_runs()[token_runs:] == [] and morning.imap.proxy.commands == []
    assert morning.mailbox_state() == before
