"""The same Message-ID from another sender is another message (issue 32.23): ids were the
Message-ID alone, so anyone who had seen one (a list archive, a forwarded header) could send a
message the inbox merged into the known one and never listed. The same message in INBOX and
Sent, or in two copies of a mailbox, has one sender and is still one."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from dayflow.sources.identity import mail_key, message_stable_id
from dayflow.sources.inbox import Inbox
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.mbox import MboxSource
from tests.mailkit import deliver, thread_mail, write_maildir, write_mbox
from tests.test_mail_sources import read_inbox

WHEN = dt.datetime(2026, 11, 4, 9, 0, tzinfo=dt.UTC)


def test_a_known_message_id_from_another_sender_is_listed_as_its_own_message(
    tmp_path: Path,
) -> None:
    real = thread_mail(
        "q3@work.example",
        sender="Dana <dana@work.example>",
        subject="Q3 report",
        body="Could you send the Q3 report?",
        when=WHEN,
    )
    forged = thread_mail("q3@work.example", sender="Mallory <m@evil.example>",
                         subject="Invoice", body="Please pay the attached invoice today.",
                         when=WHEN + dt.timedelta(hours=1))  # fmt: skip
    md = write_maildir(tmp_path / "md", 0)
    (md / "new" / "1762246800.M1P1Q1.host").write_bytes(real)
    (md / "new" / "1762250400.M2P1Q1.host").write_bytes(forged)
    inbox = Inbox([MaildirSource("home", md)])
    listed = read_inbox(inbox)["messages"]
    assert sorted(m["subject"] for m in listed) == ["Invoice", "Q3 report"]
    assert len({m["key"] for m in listed}) == 2 and len({m["id"] for m in listed}) == 2
    for message in listed:
        assert inbox.read(message["id"]).subject == message["subject"]


def test_one_message_in_two_copies_is_still_one(tmp_path: Path) -> None:
    """A display name may differ between copies; the address is what makes the sender."""
    raw = thread_mail("lease@x", sender="Rosa Lind <Rosa@Homes.example>", subject="Lease",
                      body="Please sign the lease.", when=WHEN)  # fmt: skip
    renamed = raw.replace(b"From: Rosa Lind <Rosa@Homes.example>", b"From: rosa@homes.example")
    md = write_maildir(tmp_path / "md", 0)
    (md / "new" / "1762246800.M1P1Q1.host").write_bytes(raw)
    box = write_mbox(tmp_path / "box.mbox", [renamed])
    listed = read_inbox(Inbox([MaildirSource("imap", md), MboxSource("export", box)]))
    assert [m["subject"] for m in listed["messages"]] == ["Lease"]
    assert message_stable_id("<lease@x>", sender="Rosa <ROSA@homes.example>") == (
        message_stable_id("<lease@x>", sender="rosa@homes.example")
    )


# --- the keys of before: a task filed under the Message-ID alone is found again -------------

DAY = "2026-11-05"
ASK = "Could you send me the signed lease by Friday?"


def legacy_key(mid: str) -> str:
    """A message's task key before bdf68d9 (the Message-ID alone)."""
    from dayflow.sources.identity import mail_key, normalise_message_id, short_hash

    return mail_key(short_hash("mid:" + str(normalise_message_id(mid))))


def brief_tasks(root: Path, *extra: str) -> list[tuple[str, str]]:
    """Brief the Maildir under `root` (offline model), then the tasks: (key, title)."""
    import json

    from dayflow.providers.offline import OfflineModel
    from tests.harness import invoke

    config = root / "config.toml"
    config.write_text(f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{root / "md"}"\n')
    env = {"DAYFLOW_CONFIG": str(config)}
    model = lambda *_: OfflineModel()  # noqa: E731
    got = invoke(root / "d.db", model, "brief", "--date", DAY, *extra, env=env)
    assert got.code == 0, got.err
    listed = invoke(root / "d.db", model, "tasks", "--all", "--json", env=env)
    return [(t["idempotency_key"], t["title"]) for t in json.loads(listed.out)]


def file_before_upgrade(root: Path, key: str, at: str) -> None:
    """A task filed at `at` by a Dayflow from before keys carried the sender."""
    from dayflow.clock import FixedClock
    from dayflow.store import open_store

    with open_store(root / "d.db", clock=FixedClock(at)) as store:
        store.tasks.create(title="Send the signed lease", idempotency_key=key, run_id=None)


def lease(sender: str, when: dt.datetime, body: str = ASK) -> bytes:
    return thread_mail("lease@homes.example", sender=sender, subject="Lease", body=body, when=when)


def test_a_message_filed_under_its_old_key_is_not_filed_again(tmp_path: Path) -> None:
    """bdf68d9 changed every mail key once: re-read after the upgrade (the followups window,
    --since, --new), a message filed before it was filed a second time."""
    md = tmp_path / "md"
    deliver(md, lease("Rosa <rosa@homes.example>", WHEN), WHEN, seen=False)
    file_before_upgrade(tmp_path, legacy_key("<lease@homes.example>"), "2026-11-04T10:00:00+00:00")
    tasks = brief_tasks(tmp_path, "--since", "2026-11-01")
    assert tasks == [(legacy_key("<lease@homes.example>"), "Send the signed lease")]
    assert brief_tasks(tmp_path, "--new", "--since", "2026-11-01") == tasks  # and again


def test_the_same_message_id_from_another_sender_after_the_filing_is_its_own_task(
    tmp_path: Path,
) -> None:
    """A message that arrived after the old task was filed is not the one it was filed for:
    the known id hides nothing (issue 32.23)."""
    md = tmp_path / "md"
    deliver(md, lease("Rosa <rosa@homes.example>", WHEN), WHEN, seen=False)
    forged = lease("Mallory <m@evil.example>", WHEN + dt.timedelta(hours=3),
                   body="Could you pay the attached invoice by Friday?")  # fmt: skip
    deliver(md, forged, WHEN + dt.timedelta(hours=3), seen=False)
    file_before_upgrade(tmp_path, legacy_key("<lease@homes.example>"), "2026-11-04T10:00:00+00:00")
    tasks = brief_tasks(tmp_path, "--since", "2026-11-01")
    keys = [key for key, _ in tasks]
    new = mail_key(message_stable_id("<lease@homes.example>", sender="m@evil.example"))
    assert sorted(keys) == sorted([legacy_key("<lease@homes.example>"), new])
    assert any("invoice" in title.lower() for _, title in tasks)


def test_two_senders_of_one_message_id_are_two_tasks_with_no_task_of_before(
    tmp_path: Path,
) -> None:
    md = tmp_path / "md"
    deliver(md, lease("Rosa <rosa@homes.example>", WHEN), WHEN, seen=False)
    forged = lease("Mallory <m@evil.example>", WHEN + dt.timedelta(hours=3),
                   body="Could you pay the attached invoice by Friday?")  # fmt: skip
    deliver(md, forged, WHEN + dt.timedelta(hours=3), seen=False)
    keys = [key for key, _ in brief_tasks(tmp_path, "--since", "2026-11-01")]
    senders = ("rosa@homes.example", "m@evil.example")
    expected = [mail_key(message_stable_id("<lease@homes.example>", sender=s)) for s in senders]
    assert sorted(keys) == sorted(expected)


def test_the_old_key_is_given_only_where_a_task_was_filed_before_the_message_came() -> None:
    from dayflow.sources.mail import with_legacy_keys

    raw = lease("Rosa <rosa@homes.example>", WHEN)
    from dayflow.sources.mail import MailItem
    from dayflow.sources.mime import parse_message

    item = MailItem.of("home", parse_message(raw, fallback_time=WHEN), unread=True, position="1")
    old = legacy_key("<lease@homes.example>")
    assert item.legacy_key == old and item.key != old
    at = {old: WHEN + dt.timedelta(hours=1)}
    assert with_legacy_keys([item], lambda keys: at)[0].key == old
    late = {old: WHEN - dt.timedelta(hours=1)}  # filed before this message arrived
    assert with_legacy_keys([item], lambda keys: late)[0].key == item.key
    assert with_legacy_keys([item], lambda keys: {})[0].key == item.key
    assert with_legacy_keys([item], None)[0].key == item.key
