"""The Maildir reader and the folder names it keeps between listings (maildir_index): the kept
names are used only while the folders are unchanged, never across a change in the same tick;
unread state and cursors stay right while a mail client moves and flags messages; hostile
folders (empty, half a Maildir, unreadable files, odd names) never fail a listing."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dayflow.clock import FixedClock
from dayflow.sources.inbox import Inbox
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.maildir_index import SETTLE_NS, Folder, cache_dir, split_names
from tests.mailkit import BASE, message, write_maildir


def subjects(source: MaildirSource, **kw: Any) -> list[str]:
    kw.setdefault("limit", 50)
    return [m.subject for m in Inbox([source]).listing(**kw).items]


def frozen_stat(at: dt.datetime) -> Any:
    ns = int(at.timestamp()) * 1_000_000_000

    def stat(path: Path) -> os.stat_result:
        st = os.stat(path)
        return os.stat_result(
            (*tuple(st)[:7], ns // 10**9, ns // 10**9, ns // 10**9),
            {"st_atime_ns": ns, "st_mtime_ns": ns, "st_ctime_ns": ns},
        )

    return stat


CHANGED = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)  # when the frozen folders last changed


def deliver(root: Path, n: int, *, sub: str = "new", flags: str = "") -> Path:
    when = BASE + dt.timedelta(minutes=n)
    path = root / sub / (f"{int(when.timestamp())}.M{n:06d}P9Q{n}.host" + flags)
    path.write_bytes(message(n, when=when))
    return path


def _frozen(root: Path, cache: Path, after: dt.timedelta) -> Callable[[], MaildirSource]:
    """Fresh sources on `root` whose folder times never move from CHANGED, on a clock `after`
    it."""
    clock, frozen = FixedClock(CHANGED + after), frozen_stat(CHANGED)
    return lambda: MaildirSource("home", root, cache=cache, clock=clock, stat_dir=frozen)


def test_an_unchanged_maildir_is_listed_from_the_kept_names_without_reading_it(
    tmp_path: Path,
) -> None:
    """With folder times that never move, a message delivered after the names were kept is not
    seen by a fresh source: the proof that the kept names, not the directory, were read."""
    root = write_maildir(tmp_path / "md", 3)
    cache = tmp_path / "cache"
    later = _frozen(root, cache, dt.timedelta(seconds=10))
    assert len(subjects(later())) == 3
    assert len(list(cache.iterdir())) == 1
    deliver(root, 50)
    fresh = later()
    assert len(subjects(fresh)) == 3  # the kept names: the directory was not read
    real = MaildirSource("home", root, cache=cache)
    assert subjects(real)[0] == "Message number 50"  # a real change moves the stamp


def test_a_message_delivered_in_the_same_tick_as_the_last_change_is_never_missed(
    tmp_path: Path,
) -> None:
    """The folders changed less than SETTLE before the listing: their names are not kept, so a
    delivery in the same tick (the stamp unchanged) is still seen, by the same source and by a
    fresh one."""
    root = write_maildir(tmp_path / "md", 3)
    cache = tmp_path / "cache"
    just_after = _frozen(root, cache, dt.timedelta(seconds=0.5))
    source = just_after()
    assert len(subjects(source)) == 3
    assert not cache.exists() or not list(cache.iterdir())
    deliver(root, 50)
    assert subjects(source)[0] == "Message number 50"
    assert subjects(just_after())[0] == "Message number 50"
    # Just short of SETTLE still counts as too recent; at SETTLE the names are kept.
    edge = _frozen(root, cache, dt.timedelta(microseconds=SETTLE_NS // 1000 - 1))
    edge().page(since=None, after=None, limit=1, unread_only=False)
    assert not cache.exists() or not list(cache.iterdir())
    settled = _frozen(root, cache, dt.timedelta(microseconds=SETTLE_NS // 1000))
    settled().page(since=None, after=None, limit=1, unread_only=False)
    assert len(list(cache.iterdir())) == 1


def test_on_a_real_file_system_every_change_is_seen_at_once(tmp_path: Path) -> None:
    """Real clocks and stamps: names kept once the folders settled, then a delivery, a message
    read by a mail client (new/ -> cur/ with S), a flag removed and a deletion, each seen by
    the next listing of a fresh source right away (within the same second)."""
    root = write_maildir(tmp_path / "md", 4, seen={0})
    cache = tmp_path / "cache"
    settled = FixedClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10))

    def listing() -> list[tuple[str, bool]]:
        source = MaildirSource("home", root, cache=cache, clock=settled)
        return [(m.subject[-1], m.unread) for m in Inbox([source]).listing(limit=50).items]

    assert listing() == [("3", True), ("2", True), ("1", True), ("0", False)]
    assert len(list(cache.iterdir())) == 1
    deliver(root, 4)
    assert listing()[0] == ("4", True)
    [two] = (root / "new").glob(f"{int((BASE + dt.timedelta(minutes=2)).timestamp())}.*")
    two.rename(root / "cur" / (two.name + ":2,S"))
    assert ("2", False) in listing()
    zero = sorted((root / "cur").glob("*:2,S"))[0]
    zero.rename(zero.with_name(zero.name.replace(":2,S", ":2,")))
    assert listing()[-1] == ("0", True)
    next((root / "new").glob(f"{int((BASE + dt.timedelta(minutes=3)).timestamp())}.*")).unlink()
    assert [s for s, _ in listing()] == ["4", "2", "1", "0"]


def test_a_folder_mtime_set_back_by_a_sync_tool_does_not_hide_a_change(tmp_path: Path) -> None:
    """`rsync -t` or `cp -p` can set a folder's mtime back to what it was; its ctime still
    moves, and the stamp holds both."""
    root = write_maildir(tmp_path / "md", 3)
    cache = tmp_path / "cache"
    settled = FixedClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10))
    assert len(subjects(MaildirSource("home", root, cache=cache, clock=settled))) == 3
    before = os.stat(root / "new")
    deliver(root, 50)
    os.utime(root / "new", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(root / "new").st_mtime_ns == before.st_mtime_ns
    got = subjects(MaildirSource("home", root, cache=cache, clock=settled))
    assert got[0] == "Message number 50"


def test_a_maildir_replaced_at_the_same_path_is_read_anew(tmp_path: Path) -> None:
    root = write_maildir(tmp_path / "md", 3)
    cache = tmp_path / "cache"
    settled = FixedClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10))
    assert len(subjects(MaildirSource("home", root, cache=cache, clock=settled))) == 3
    shutil.rmtree(root)
    write_maildir(root, 5)
    assert len(subjects(MaildirSource("home", root, cache=cache, clock=settled))) == 5


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "empty", "another_maildir", "bit_flip"],
)
def test_a_damaged_or_foreign_names_file_is_ignored(tmp_path: Path, damage: str) -> None:
    root = write_maildir(tmp_path / "md", 4, seen={1})
    other = write_maildir(tmp_path / "other", 9)
    cache = tmp_path / "cache"
    settled = FixedClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10))
    expected = subjects(MaildirSource("home", root, cache=cache, clock=settled))
    [kept] = cache.iterdir()
    raw = kept.read_bytes()
    if damage == "garbage":
        kept.write_bytes(b"\x00\xff not json\n" + raw)
    elif damage == "truncated":
        kept.write_bytes(raw[: len(raw) - 20])
    elif damage == "empty":
        kept.write_bytes(b"")
    elif damage == "bit_flip":
        kept.write_bytes(raw[:-5] + bytes([raw[-5] ^ 1]) + raw[-4:])
    else:  # the other Maildir's names file copied over this one's
        subjects(MaildirSource("other", other, cache=cache, clock=settled))
        theirs = next(p for p in cache.iterdir() if p != kept)
        shutil.copyfile(theirs, kept)
    deliver(root, 60)  # and a change: the listing must come from the directory
    got = subjects(MaildirSource("home", root, cache=cache, clock=settled))
    assert got == ["Message number 60", *expected]


def test_an_unwritable_cache_still_lists(tmp_path: Path) -> None:
    root = write_maildir(tmp_path / "md", 2)
    cache = tmp_path / "cache"
    cache.write_text("a file where the folder should be")
    settled = FixedClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10))
    assert len(subjects(MaildirSource("home", root, cache=cache, clock=settled))) == 2


def test_the_names_file_is_owner_only_under_the_xdg_cache(tmp_path: Path) -> None:
    root = write_maildir(tmp_path / "md", 2)
    cache = cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert cache == tmp_path / "xdg" / "dayflow" / "maildir"
    settled = FixedClock(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10))
    subjects(MaildirSource("home", root, cache=cache, clock=settled))
    [kept] = cache.iterdir()
    assert kept.stat().st_mode & 0o777 == 0o600 and cache.stat().st_mode & 0o777 == 0o700
    assert b"Message number" not in kept.read_bytes()  # names only, never content
    assert cache_dir({"HOME": str(tmp_path / "h")}) == tmp_path / "h/.cache/dayflow/maildir"


def test_split_names_finds_the_names_without_a_delivery_time() -> None:
    names = [
        "1700000000.M1P1Q1.host:2,S",
        "1700000001.M2P1Q2.host",
        "1700000002",
        "0.msg",
        "msg1",
        "999999999.M1P1.old",  # 9 digits: 1973-2001
        "17000000001.too.long",
        ".nfs0001",
        "1700000003:2,",
    ]
    timed, odd = split_names(names)
    assert timed == [
        "1700000000.M1P1Q1.host\x002,S",
        "1700000001.M2P1Q2.host",
        "1700000002",
        "1700000003\x002,",
    ]
    assert odd == ["0.msg", "msg1", "999999999.M1P1.old", "17000000001.too.long"]
    assert split_names([]) == ([], [])
    assert split_names([".hidden"]) == ([], [])


_NAME = st.text(alphabet="0123456789.:MPQ\x00ab", min_size=1, max_size=14)


@given(
    names=st.lists(_NAME, max_size=40, unique=True),
    lowest=st.none() | _NAME,
    below=st.none() | _NAME,
    limit=st.integers(0, 45),
    parity=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_a_folders_newest_names_are_those_a_full_sort_gives(
    names: list[str], lowest: str | None, below: str | None, limit: int, parity: bool
) -> None:
    """The binary search and the walk from the end over the kept string agree with filtering
    and sorting the whole list, for any bounds, limit and filter."""
    folder = Folder.of((0, 0, 0, 0), list(names), [])

    def keep(name: str) -> bool:
        return len(name) % 2 == parity

    expected = sorted(
        (
            n
            for n in names
            if (lowest is None or n >= lowest) and (below is None or n < below) and keep(n)
        ),
        reverse=True,
    )[:limit]
    assert folder.newest(limit, lowest=lowest, below=below, keep=keep) == expected
    for name in names:  # a bound equal to a name: `lowest` keeps it, `below` leaves it out
        assert name in folder.newest(len(names), lowest=name)
        assert name not in folder.newest(len(names), below=name)
    assert folder.timed_names() == sorted(names)
    assert len(folder) == len(names)


def test_a_base_that_is_a_prefix_of_another_orders_and_pages_by_position(tmp_path: Path) -> None:
    """'1.M1:2,S' as a string sorts after '1.M10' (':' > '0'), but its position '1.M1' sorts
    first: one message per page, the walk sees each once, in position order."""
    root = write_maildir(tmp_path / "md", 0)
    t = int(BASE.timestamp())
    for n, name in enumerate([f"{t}.M1:2,S", f"{t}.M10:2,S", f"{t}.M1a", f"{t}.M2:2,"]):
        sub = "new" if ":" not in name else "cur"
        (root / sub / name).write_bytes(message(n, subject=name.split(":")[0], when=BASE))
    source = MaildirSource("home", root)
    seen, cursor = [], None
    while True:
        page = Inbox([source]).listing(limit=1, cursor=cursor)
        seen += [(m.position, m.subject) for m in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert [s for _, s in seen] == [f"{t}.M2", f"{t}.M1a", f"{t}.M10", f"{t}.M1"]


def test_a_message_read_by_a_mail_client_between_pages_keeps_its_place(tmp_path: Path) -> None:
    root = write_maildir(tmp_path / "md", 6)
    inbox = Inbox([MaildirSource("home", root)])
    first = inbox.listing(limit=3)
    assert [m.subject[-1] for m in first.items] == ["5", "4", "3"]
    one = next((root / "new").glob(f"{int((BASE + dt.timedelta(minutes=1)).timestamp())}.*"))
    one.rename(root / "cur" / (one.name + ":2,S"))
    rest = inbox.listing(limit=3, cursor=first.next_cursor)
    assert [(m.subject[-1], m.unread) for m in rest.items] == [
        ("2", True),
        ("1", False),
        ("0", True),
    ]


def test_a_message_moved_between_listing_and_reading_is_read_where_it_is_now(
    tmp_path: Path,
) -> None:
    root = write_maildir(tmp_path / "md", 3)
    inbox = Inbox([MaildirSource("home", root)])
    newest = inbox.listing(limit=1).items[0]
    assert newest.unread
    [path] = (root / "new").glob(f"{int((BASE + dt.timedelta(minutes=2)).timestamp())}.*")
    path.rename(root / "cur" / (path.name + ":2,RS"))
    got = inbox.read(newest.id)
    assert got.subject == "Message number 2" and not got.unread
    assert "report 2" in (got.body or "")


def test_hostile_maildirs_are_listed_or_named_in_one_line_through_the_cli(tmp_path: Path) -> None:
    """An empty Maildir, one without cur/, one holding a FIFO, a directory and an unreadable
    file where messages should be, one with odd names (spaces, a newline, bytes that are not
    UTF-8, 255 bytes long), and a path that is a file: `sources check` and `brief` answer,
    the bad path in one line, never a traceback or a hang."""
    from dayflow.providers.offline import OfflineModel
    from tests.harness import invoke

    new = dt.datetime(2026, 11, 5, 6, 0, tzinfo=dt.UTC)
    empty = write_maildir(tmp_path / "empty", 0)
    nocur = write_maildir(tmp_path / "nocur", 2, start=new)
    shutil.rmtree(nocur / "cur")
    strange = write_maildir(tmp_path / "strange", 1, start=new)
    t = int(new.timestamp())
    os.mkfifo(strange / "cur" / f"{t + 60}.M1P1Q1.fifo:2,S")
    (strange / "cur" / f"{t + 120}.M1P1Q2.dir:2,S").mkdir()
    locked = strange / "new" / f"{t + 180}.M1P1Q3.locked"
    locked.write_bytes(message(7, when=new))
    locked.chmod(0)
    odd = write_maildir(tmp_path / "odd", 0)
    names = [
        f"{t}.M1P1Q1.with space",
        f"{t + 1}.M1P1Q2.new\nline",
        os.fsdecode(f"{t + 2}.M1P1Q3.".encode() + b"\xff\xfe"),
        f"{t + 3}.M1P1Q4.ünïcödé",
        f"{t + 4}." + "x" * 240,
        "odd name\nwith a newline",  # no delivery time: dated by mtime
        os.fsdecode(b"\xff\xfe.msg"),
    ]
    for n, name in enumerate(names):
        (odd / "new" / name).write_bytes(message(n, subject=f"odd {n}", when=new))
    notdir = tmp_path / "file-not-maildir"
    notdir.write_text("x")
    body = "".join(
        f'[[inbox]]\nname = "{name}"\nkind = "maildir"\npath = "{path}"\n'
        for name, path in [
            ("empty", empty),
            ("nocur", nocur),
            ("strange", strange),
            ("odd", odd),
            ("notdir", notdir),
        ]
    )
    (tmp_path / "config.toml").write_text(body)
    env = {"DAYFLOW_CONFIG": str(tmp_path / "config.toml")}
    model = lambda m, s: OfflineModel()  # noqa: E731
    check = invoke(tmp_path / "d.db", model, "sources", "check", env=env)
    assert check.code == 4  # one source cannot be read
    lines = check.out.splitlines()
    assert lines[0].startswith("empty") and "0 message(s)" in lines[0]
    assert "2 message(s)" in lines[1]
    assert "4 message(s)" in lines[2]
    assert "7 message(s)" in lines[3]
    assert lines[4].startswith("notdir") and "is not a directory" in lines[4]
    assert len(lines) == 5 and "Traceback" not in check.out + check.err
    brief = invoke(tmp_path / "d.db", model, "brief", "--date", "2026-11-05", env=env)
    assert brief.code == 0, brief.err
    assert "Traceback" not in brief.out + brief.err
    assert "Could not read notdir" in brief.out
    strange_items = Inbox([MaildirSource("strange", strange)]).listing(limit=10).items
    unreadable = [m.subject for m in strange_items if m.subject.startswith("(a message that")]
    assert any("not a regular file" in s for s in unreadable)
    assert len(unreadable) == (2 if os.geteuid() == 0 else 3)  # root reads a chmod 0 file
    read = [m for m in Inbox([MaildirSource("odd", odd)]).listing(limit=10).items]
    assert sorted(m.subject for m in read) == [f"odd {n}" for n in range(7)]
    assert all(m.received_at.year == 2026 for m in read)


def test_names_without_a_delivery_time_are_ordered_and_dated_by_their_mtime(tmp_path: Path) -> None:
    """A Maildir mixing real names with `0.msg`, `msg1`, a 9-digit (pre-2001) name and an
    11-digit one: each odd name sorts among the others by its file's mtime (the 9-digit one by
    its name) and is dated by its Date: header, else that time, never 1970; paging, `since`
    and `sources check` agree; dot files are left out."""
    from dayflow.providers.offline import OfflineModel
    from tests.harness import invoke

    root = write_maildir(tmp_path / "md", 5)  # BASE + 0..4 minutes, in new/
    minute = dt.timedelta(minutes=1)

    def odd(sub: str, name: str, mtime: dt.datetime, subject: str, when: Any = None) -> None:
        raw = message(0, subject=subject, when=when, message_id=f"<{subject}@x>")
        if when is None:  # no Date: header at all
            raw = b"".join(ln for ln in raw.splitlines(True) if not ln.startswith(b"Date:"))
        path = root / sub / name
        path.write_bytes(raw)
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))

    odd("new", "0.msg", BASE + 2.5 * minute, "zero dot msg")
    odd("cur", "msg1:2,S", BASE + 10 * minute, "msg one", when=BASE + 10 * minute)
    odd("cur", "999999999.M1P1.old:2,S", BASE, "nine digits")
    odd("new", "17000000001.x", BASE - 24 * 60 * minute, "eleven digits")
    (root / "new" / ".nfs0001").write_bytes(b"not mail")
    source = MaildirSource("home", root)
    order = [
        "msg one",
        "Message number 4",
        "Message number 3",
        "zero dot msg",
        "Message number 2",
        "Message number 1",
        "Message number 0",
        "eleven digits",
        "nine digits",
    ]
    items = Inbox([source]).listing(limit=50).items
    assert [m.subject for m in items] == order
    dated = {m.subject: m.received_at for m in items}
    assert dated["zero dot msg"] == BASE + 2 * minute + dt.timedelta(seconds=30)
    assert dated["msg one"] == BASE + 10 * minute
    assert min(dated.values()).year >= 2001  # nothing in 1970
    walked, cursor = [], None
    while True:
        page = Inbox([MaildirSource("home", root)]).listing(limit=2, cursor=cursor)
        walked += [m.subject for m in page.items]
        if (cursor := page.next_cursor) is None:
            break
    assert walked == order
    since = Inbox([source]).listing(limit=50, since=BASE + 2 * minute).items
    assert [m.subject for m in since] == order[:5]
    (tmp_path / "config.toml").write_text(
        f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{root}"\n'
    )
    env = {"DAYFLOW_CONFIG": str(tmp_path / "config.toml")}
    check = invoke(None, lambda m, s: OfflineModel(), "sources", "check", "--json", env=env)
    [report] = json.loads(check.out)["sources"]
    assert report["messages"] == 9
    assert report["newest"]["subject"] == "msg one"
    assert report["newest"]["received_at"].startswith("2026-11-04T08:10")
