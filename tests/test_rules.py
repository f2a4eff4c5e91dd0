"""`dayflow.rules`: what each rule matches, the patterns refused, and `rules.toml` read entry by
entry (hostile files included) and written back byte for byte."""

from __future__ import annotations

import fcntl
import os
import threading
import time
import tomllib
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dayflow.clock import FixedClock
from dayflow.errors import RejectUnfinished, RulesBusy, UsageError
from dayflow.rules import (
    Facts,
    Rule,
    RuleSet,
    Where,
    dumps,
    parse_match,
    read_rules,
    reject,
    rules_path,
)
from dayflow.rules._file import locked, parse_document, write_rules
from dayflow.store import DatabaseError, open_store
from dayflow.store.tasks import Tasks

DAY = date(2026, 11, 6)


HOSTILE = ["*", "@", "", "  ", "com", ".com", "@com", "*@x.org", "a b@x.org", "thread:", "list:",
           "<>", "x@", "%.org"]  # fmt: skip


@pytest.mark.parametrize("pattern", HOSTILE)
def test_patterns_that_would_match_everything_or_nothing_are_refused(pattern: str) -> None:
    with pytest.raises(UsageError, match="would match too much or nothing"):
        parse_match(pattern)


def test_patterns_are_made_canonical() -> None:
    assert parse_match("Dana@Acme.Example") == "dana@acme.example"
    assert parse_match("@acme.example") == "acme.example"
    assert parse_match("<News.Example.org>") == "list:news.example.org"
    assert parse_match("list:news.example.org") == "list:news.example.org"
    # list: before the List-Id as a user copies it from the header, brackets and all
    assert parse_match("list:<News.Example.org>") == "list:news.example.org"
    assert parse_match("LIST:<news.example.org>") == "list:news.example.org"
    assert parse_match("thread:ab12cd34") == "thread:ab12cd34"
    # The key as a brief's JSON gives it, written after `thread:` as the docs say: once.
    assert parse_match("thread:thread:ab12cd34") == "thread:ab12cd34"
    assert parse_match("THREAD:Thread:ab12cd34") == "thread:ab12cd34"
    with pytest.raises(UsageError):
        parse_match("list:news.example.org", lists=False)


@pytest.mark.parametrize(
    "line", ['"Doe, Jane" <Jane@X.example>', "Doe, Jane <jane@x.example>", "<jane@x.example>"]
)
def test_a_from_line_as_why_shows_it_is_its_address(line: str) -> None:
    """`dayflow why` shows `from: Doe, Jane <jane@x.example>`: pasted into mute or important it
    was refused as "would match too much or nothing", though it names one sender."""
    assert parse_match(line) == parse_match(line, lists=False) == "jane@x.example"
    with pytest.raises(UsageError, match="would match too much or nothing"):
        parse_match("Jane <jane@x.example> <b@y.example>")  # two: neither


def test_a_domain_matches_its_subdomains_and_nothing_that_merely_ends_like_it() -> None:
    rules = RuleSet((Rule("r1", "mute", match="acme.example"),))
    assert rules.bars(Facts(sender="a@acme.example"), DAY) is not None
    assert rules.bars(Facts(sender="a@mail.acme.example"), DAY) is not None
    assert rules.bars(Facts(sender="a@notacme.example"), DAY) is None


def test_a_rejection_needs_its_sender_or_list_and_its_words() -> None:
    rules = RuleSet((Rule("r1", "reject", match="reports@ops.example", asking="review"),))
    ask = "Please review the report"
    assert rules.bars(Facts(sender="reports@ops.example", text=ask), DAY) is not None
    assert rules.bars(Facts(sender="Reports+x@ops.example", text="reviewing it?"), DAY)
    assert rules.bars(Facts(sender="reports@ops.example", text="Please sign it"), DAY) is None
    assert rules.bars(Facts(sender="dana@acme.example", text=ask), DAY) is None
    listed = RuleSet((Rule("r2", "reject", match="list:news.example.org", asking="vote"),))
    assert listed.bars(Facts(sender="x@y.example", list_id="news.example.org", text="Vote"), DAY)


def test_a_rejected_tasks_message_is_no_reply_owed_either() -> None:
    """`tasks reject`: not a task, and not mine, so the owed reply or wait that stands for
    that message is left out too; another message of the same sender is not."""
    rules = RuleSet((Rule("r1", "reject", match="kim@v.example", asking="review", key="mail:a1"),))
    day = date(2026, 11, 19)
    owed = Facts(sender="kim@v.example", thread="thread:t1", keys=("mail:a1",))
    assert rules.leaves_out(owed, day) is rules.rules[0]
    assert rules.leaves_out(Facts(sender="kim@v.example", keys=("mail:a1#2",)), day)
    assert rules.leaves_out(Facts(sender="kim@v.example", keys=("mail:b2",)), day) is None


def test_a_snoozed_tasks_message_is_no_reply_owed_until_the_snooze_ends() -> None:
    """`dayflow snooze TASK` left the task out but its ask still in the brief, as a reply
    owed from the same message; as a rejection does, its snooze leaves that out too, until
    its day; another message of the same sender is not."""
    rules = RuleSet((Rule("r1", "snooze", key="mail:a1", until="2026-11-21", item="t_1"),))
    owed = Facts(sender="kim@v.example", thread="thread:t1", keys=("mail:a1#2",))
    assert rules.leaves_out(owed, date(2026, 11, 20)) is rules.rules[0]
    assert rules.leaves_out(owed, date(2026, 11, 21)) is None
    other = Facts(sender="kim@v.example", thread="thread:t2", keys=("mail:b2",))
    assert rules.leaves_out(other, date(2026, 11, 20)) is None


def test_a_snooze_leaves_out_until_its_day_and_not_on_it() -> None:
    rules = RuleSet((Rule("r1", "snooze", key="mail:abc", until="2026-11-09"),))
    assert rules.forbids_key("mail:abc#2", date(2026, 11, 8)) is not None
    assert rules.forbids_key("mail:abc", date(2026, 11, 9)) is None


def test_the_prompt_section_names_every_rule_and_is_empty_without_rules() -> None:
    assert RuleSet().prompt_section() == ""
    section = RuleSet((Rule("r1", "mute", match="acme.example"),)).prompt_section()
    assert "- r1: mute acme.example" in section and "no_task" in section


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "rules.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_a_malformed_entry_is_one_line_naming_it_and_the_rest_still_apply(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """profile = "default"
[[rule]]
kind = "mute"
match = "*"
[[rule]]
kind = "mute"
match = "acme.example"
[[rule]]
kind = "snooze"
key = "mail:x"
until = "someday"
[[rule]]
kind = "important"
mach = "dana@acme.example"
""",
    )
    reading = read_rules(path, "default", today=DAY)
    assert [r.match for r in reading.rules.rules] == ["acme.example"]
    assert [p.split(": rule ")[1].split(":")[0] for p in reading.problems] == ["1", "3", "4"]
    assert all(str(path) in p for p in reading.problems) and not reading.whole


@pytest.mark.parametrize(
    "content,why",
    [
        (b"\x00\xff\xfe binary" * 10, "not UTF-8"),
        (b'profile = "default"\x00', "binary"),
        (b"[[rule]\nkind=", "not TOML"),
        (b"#" * (1024 * 1024 + 1), "larger than 1 MB"),
        (b'profile = "alice"\n[[rule]]\nkind = "mute"\nmatch = "acme.example"\n', "'alice'"),
    ],
)
def test_a_hostile_file_applies_no_rule_and_says_why_in_one_line(
    tmp_path: Path, content: bytes, why: str
) -> None:
    reading = read_rules(_write(tmp_path, content), "default", today=DAY)
    assert not reading.rules and len(reading.problems) == 1 and why in reading.problems[0]


@pytest.mark.parametrize("asking", ["*", ".*", " ?? ", "", "the", "By the"])
def test_a_hand_written_reject_asking_no_word_is_refused_as_the_command_refuses_it(
    tmp_path: Path, asking: str
) -> None:
    """`asks` reads only words, so `asking = "*"` (or `.*`) matched every request from the
    sender: a mute by the back door; so did `the` or `by`, in nearly every request. It is one
    line naming the entry, and the others apply."""
    text = (f'[[rule]]\nkind = "reject"\nmatch = "ops.example"\nasking = "{asking}"\n'
            '[[rule]]\nkind = "reject"\nmatch = "ops.example"\nasking = "review"\n')  # fmt: skip
    reading = read_rules(_write(tmp_path, text), "default", today=DAY)
    assert [r.asking for r in reading.rules.rules] == ["review"]
    assert len(reading.problems) == 1 and ": rule 1: asking " in reading.problems[0]
    assert "dayflow mute" in reading.problems[0] and not reading.whole


@pytest.mark.parametrize(
    "entry",
    [
        'kind = "mute"\nmatch = "co.uk"',
        'kind = "mute"\nmatch = "@github.io"',
        'kind = "important"\nmatch = "co.uk"',
        'kind = "reject"\nmatch = "github.io"\nasking = "review"',
        'kind = "snooze"\nkey = "mail:x1"\nuntil = "9999-12-31"',
        f'kind = "snooze"\nkey = "mail:x1"\nuntil = "{DAY + timedelta(days=367)}"',
        'kind = "snooze"\nkey = "*"\nuntil = "2026-11-09"',
        'kind = "snooze"\nkey = "mail:*"\nuntil = "2026-11-09"',
        'kind = "reject"\nkey = "*"',
    ],
)
def test_a_hand_written_entry_a_command_would_refuse_is_one_line_and_not_in_force(
    tmp_path: Path, entry: str
) -> None:
    """`mute co.uk` and `snooze --until 9999-12-31` are refused (exit 2); the same entry written
    in rules.toml was in force, silently: a mute of a whole public suffix, a snooze for ever.
    The file's reader checks what the commands check; the other rules still apply."""
    text = f'[[rule]]\n{entry}\n[[rule]]\nkind = "mute"\nmatch = "acme.example"\n'
    reading = read_rules(_write(tmp_path, text), "default", today=DAY)
    assert [r.match for r in reading.rules.rules] == ["acme.example"]
    assert len(reading.problems) == 1, reading.problems
    assert f"{tmp_path / 'rules.toml'}: rule 1: " in reading.problems[0] and not reading.whole


@pytest.mark.parametrize(
    "entry",
    [
        'kind = "mute"\nmatch = "example.co.uk"',
        'kind = "important"\nmatch = "someone.github.io"',
        f'kind = "snooze"\nkey = "mail:x1"\nuntil = "{DAY + timedelta(days=366)}"',
        'kind = "snooze"\nkey = "mail:x1"\nuntil = "2020-01-01"',  # over: listed, harmless
        'kind = "snooze"\nkey = "promise:ab12#2"\nuntil = "2026-11-09"',
        'kind = "reject"\nkey = "model:review the deck"',
    ],
)
def test_what_the_commands_take_the_file_takes(tmp_path: Path, entry: str) -> None:
    reading = read_rules(_write(tmp_path, f"[[rule]]\n{entry}\n"), "default", today=DAY)
    assert len(reading.rules.rules) == 1 and reading.whole, reading.problems


def test_a_rules_file_saved_with_a_byte_order_mark_still_applies(tmp_path: Path) -> None:
    """An editor that writes a UTF-8 BOM (Notepad): config.toml is read with one, and so is
    rules.toml, rather than refused whole as "not TOML"."""
    bom = b'\xef\xbb\xbfprofile = "default"\n[[rule]]\nkind = "mute"\nmatch = "acme.example"\n'
    reading = read_rules(_write(tmp_path, bom), "default", today=DAY)
    assert [r.match for r in reading.rules.rules] == ["acme.example"], reading.problems
    assert reading.whole and not reading.problems


def test_an_entry_naming_another_profile_is_refused_alone(tmp_path: Path) -> None:
    doc = {"rule": [{"kind": "mute", "match": "a.example", "profile": "bob"},
                    {"kind": "mute", "match": "b.example"}]}  # fmt: skip
    reading = parse_document(doc, tmp_path / "rules.toml", "default", DAY)
    assert [r.match for r in reading.rules.rules] == ["b.example"]
    assert "names profile 'bob'" in reading.problems[0]


def test_a_directory_or_fifo_in_its_place_is_refused(tmp_path: Path) -> None:
    import os

    (tmp_path / "rules.toml").mkdir()
    assert "regular" in read_rules(tmp_path / "rules.toml", "p", today=DAY).problems[0]
    os.mkfifo(tmp_path / "fifo")
    assert "regular" in read_rules(tmp_path / "fifo", "p", today=DAY).problems[0]


_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@given(why=_text, title=_text, profile=_text)
def test_what_is_written_reads_back_as_the_same_rules(why: str, title: str, profile: str) -> None:
    rule = Rule("r1", "reject", match="a@b.example", key="mail:1", why=why, title=title)
    rules = RuleSet((rule,))
    doc = tomllib.loads(dumps(rules, profile))
    assert doc["profile"] == profile
    assert RuleSet.from_json(doc["rule"]) == rules


def test_a_write_replaces_the_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "rules.toml"
    write_rules(path, RuleSet((Rule("r1", "mute", match="a.example"),)), "default")
    write_rules(path, RuleSet((Rule("r2", "mute", match="b.example"),)), "default")
    assert [r.match for r in read_rules(path, "default", today=DAY).rules.rules] == ["b.example"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["rules.toml"]


def test_the_prompt_names_forty_rules_and_counts_the_rest() -> None:
    many = RuleSet(tuple(Rule(f"r{n}", "mute", match=f"s{n}.example") for n in range(1, 1001)))
    section = many.prompt_section()
    assert section.count("\n- r") == 40 and "- and 960 more" in section
    assert many.bars(Facts(sender="x@s1000.example"), DAY) is not None


@pytest.mark.parametrize("until", ["2026-02-30", "someday", "", "2026-13-01"])
def test_a_snooze_with_a_bad_day_names_until_and_its_value(tmp_path: Path, until: str) -> None:
    """A hand-written until that is no date names the field and what it holds (it said "day is
    out of range for month" for 2026-02-30, naming neither)."""
    text = f'profile = "default"\n[[rule]]\nkind = "snooze"\nkey = "mail:x"\nuntil = "{until}"\n'
    reading = read_rules(_write(tmp_path, text.encode()), "default", today=DAY)
    (problem,) = reading.problems
    assert f"rule 1: until {until!r} is not a date (YYYY-MM-DD)" in problem, problem


def test_a_thread_pattern_takes_its_prefix_in_any_case_as_list_does() -> None:
    """`THREAD:KEY` is `thread:KEY` (the prefix is routed case-blind, as `LIST:` is); it was
    refused as "would match too much or nothing"."""
    assert parse_match("THREAD:0123456789ab") == "thread:0123456789ab"
    assert parse_match("Thread:0123456789ab") == "thread:0123456789ab"
    assert parse_match("LIST:News.Example.org") == "list:news.example.org"


def test_a_rules_file_that_is_a_symlink_is_written_through_it(tmp_path: Path) -> None:
    """A rules.toml kept in a dotfiles repository and linked into place stays a link: the
    rewrite replaces its target (crash-safely, beside the target), not the link with a file of
    its own (which left the repository's copy stale and the link gone)."""
    repo = tmp_path / "dotfiles"
    repo.mkdir()
    target = repo / "rules.toml"
    target.write_text('profile = "default"\n')
    link = tmp_path / "config" / "rules.toml"
    link.parent.mkdir()
    link.symlink_to(target)
    write_rules(link, RuleSet((Rule("r1", "mute", match="acme.example"),)), "default")
    assert link.is_symlink() and link.resolve() == target
    assert 'match = "acme.example"' in target.read_text()
    assert [r.match for r in read_rules(link, "default", today=DAY).rules.rules] == ["acme.example"]
    assert not [p for p in link.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_domain_in_another_script_is_refused_naming_its_ascii_form() -> None:
    """`exämple.org` is a real domain, not one that "would match too much or nothing": the
    refusal names the xn-- form the mail carries, which is accepted."""
    with pytest.raises(UsageError) as refused:
        parse_match("exämple.org")
    assert "would match too much" not in str(refused.value)
    assert "xn--exmple-cua.org" in str(refused.value)
    assert parse_match("xn--exmple-cua.org") == "xn--exmple-cua.org"


def test_until_takes_tomorrow_and_says_why_today_is_refused() -> None:
    from dayflow.rules._corrections import parse_until

    monday = date(2026, 11, 30)
    assert parse_until("tomorrow", monday) == date(2026, 12, 1)
    assert parse_until(" Tomorrow ", monday) == date(2026, 12, 1)
    with pytest.raises(UsageError, match=r"--until today: the day must be after today"):
        parse_until("today", monday)
    with pytest.raises(UsageError, match=r"is not a date \(YYYY-MM-DD\), tomorrow, 3d or 2w"):
        parse_until("next week", monday)


def _hold(path: Path) -> int:
    """Take `rules.toml.lock` as another process would (flock: per open file, so this open
    conflicts with the command's own in this process too); close the descriptor to let go."""
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_held_lock_is_waited_for_a_bounded_time_saying_so_after_a_second(
    tmp_path: Path,
) -> None:
    """A command waited for ever, silently, on a lock another process held."""
    path, said = tmp_path / "rules.toml", list[str]()
    fd = _hold(path)
    try:
        start = time.monotonic()
        with pytest.raises(RulesBusy, match=f"{path}.lock is still held by another process"):
            with locked(path, said.append, limit_s=1.5):
                raise AssertionError("the lock was taken while another held it")
        assert 1.5 <= time.monotonic() - start < 5
        assert said == [f"waiting for {path}.lock: another dayflow is changing rules.toml"]
    finally:
        os.close(fd)


def test_a_lock_let_go_while_waiting_is_taken_and_the_change_goes_on(tmp_path: Path) -> None:
    path, said, done = tmp_path / "rules.toml", list[str](), list[bool]()
    fd = _hold(path)
    threading.Timer(0.3, os.close, (fd,)).start()
    with locked(path, said.append, limit_s=5):
        done.append(True)
    assert done == [True] and said == []  # taken before a second: nothing to say


def test_a_config_files_rules_are_named_after_it_unless_it_is_config_toml(tmp_path: Path) -> None:
    """Profiles whose config files share a directory (config.toml, home.toml) shared one
    rules.toml, which is one profile's. A config file called rules.toml was its own rules."""
    assert rules_path(tmp_path / "config.toml", "default") == tmp_path / "rules.toml"
    assert rules_path(tmp_path / "home.toml", "home") == tmp_path / "home.rules.toml"
    assert rules_path(tmp_path / "rules.toml", "x") == tmp_path / "rules.rules.toml"
    assert rules_path(tmp_path / "dayflow.conf", "x") == tmp_path / "dayflow.conf.rules.toml"


def test_a_rules_toml_written_for_this_profile_before_its_own_name_is_still_its_own(
    tmp_path: Path,
) -> None:
    """A default profile whose config is work.toml (DAYFLOW_CONFIG) kept its rules in
    rules.toml: that file is still read and written, until a work.rules.toml exists; another
    profile's rules.toml there is not taken for it."""
    shared, own = tmp_path / "rules.toml", tmp_path / "work.rules.toml"
    write_rules(shared, RuleSet((Rule("r1", "mute", match="a.example"),)), "default")
    assert rules_path(tmp_path / "work.toml", "default") == shared
    assert rules_path(tmp_path / "work.toml", "work") == own
    own.write_text("")
    assert rules_path(tmp_path / "work.toml", "default") == own


class _LockedTasks(Tasks):
    """The task list of a database another process holds locked past the busy timeout."""

    def delete(self, task_id: str) -> bool:
        raise DatabaseError("database is locked")


def test_a_reject_whose_task_cannot_be_deleted_says_its_rule_is_in_force(tmp_path: Path) -> None:
    """`tasks reject` on a locked database waited out the busy timeout and exited 4 'database
    problem: database is locked', its rule already written and nothing said of it. The line
    says the rule is in force and that the same command again finishes; exit 5 (busy)."""
    path = tmp_path / "rules.toml"
    where = Where(path, "default", DAY, "dayflow tasks reject t_1")
    with open_store(tmp_path / "d.db", clock=FixedClock()) as store:
        task, _ = store.tasks.create(
            title="Review the deck", idempotency_key="mail:a1", run_id=None
        )
        store.tasks = _LockedTasks(store._ctx)
        with pytest.raises(RejectUnfinished) as raised:
            reject(store, where, task.id, asking="review")
    assert raised.value.exit_code == 5
    assert str(raised.value) == (
        "database problem: database is locked; rule r1 is in force, the task still listed: "
        "`dayflow tasks reject t_1` again finishes its removal"
    )
    assert [r.asking for r in read_rules(path, "default", today=DAY).rules.rules] == ["review"]
