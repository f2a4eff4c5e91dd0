"""iCalendar feeds over HTTP from a loopback server: conditional GETs, the cache, every failure."""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceUnreadable
from dayflow.sources import IcsCalendar
from dayflow.sources.feeds import cache_dir
from dayflow.sources.http import http_url, redact
from tests.calserver import FeedServer

FIXTURES = Path(__file__).parent / "ical"
DAY = dt.date(2026, 11, 5)
UTC = ZoneInfo("UTC")
SECRET = "/calendar/ical/me%40example.org/private-5ecret7oken/basic.ics"


@pytest.fixture
def server() -> Iterator[FeedServer]:
    with FeedServer() as s:
        s.feeds[SECRET] = (FIXTURES / "noend.ics").read_bytes()
        s.feeds["/html.ics"] = b"<!DOCTYPE html><html><body>Please sign in</body></html>"
        yield s


def _calendar(url: str, cache: Path, **kwargs: Any) -> IcsCalendar:
    kwargs.setdefault("plain_ok", True)  # the test server is http:// on loopback
    return IcsCalendar("home", url=url, tz=UTC, cache_dir=cache, **kwargs)


def _titles(calendar: IcsCalendar) -> list[str]:
    return [e["title"] for e in calendar.events(DAY, DAY)]


def test_an_unchanged_feed_is_not_downloaded_again(server: FeedServer, tmp_path: Path) -> None:
    url = server.base_url + SECRET
    first = _titles(_calendar(url, tmp_path))
    # A new object, as a new process would make: it asks with the ETag and gets a 304.
    second = _titles(_calendar(url, tmp_path))
    assert first == second == ["Interview", "Parcel arrives"]
    gets = server.gets(SECRET)
    assert [g.status for g in gets] == [200, 304]
    assert "if-none-match" not in gets[0].headers
    assert gets[1].headers["if-none-match"].startswith('"')
    assert gets[1].headers["if-modified-since"] == "Wed, 04 Nov 2026 10:00:00 GMT"


def test_last_modified_alone_is_enough_for_a_304(server: FeedServer, tmp_path: Path) -> None:
    server.etags = False
    url = server.base_url + SECRET
    _titles(_calendar(url, tmp_path))
    assert _titles(_calendar(url, tmp_path)) == ["Interview", "Parcel arrives"]
    gets = server.gets(SECRET)
    assert [g.status for g in gets] == [200, 304]
    assert "if-none-match" not in gets[1].headers


def test_a_changed_feed_is_downloaded_and_replaces_the_copy(
    server: FeedServer, tmp_path: Path
) -> None:
    url = server.base_url + SECRET
    _titles(_calendar(url, tmp_path))
    server.feeds[SECRET] = server.feeds[SECRET].replace(b"Interview", b"Second interview")
    assert _titles(_calendar(url, tmp_path)) == ["Second interview", "Parcel arrives"]
    assert _titles(_calendar(url, tmp_path)) == ["Second interview", "Parcel arrives"]
    assert [g.status for g in server.gets(SECRET)] == [200, 200, 304]


def test_a_feed_without_validators_is_downloaded_each_time(
    server: FeedServer, tmp_path: Path
) -> None:
    server.etags = server.last_modified = False
    url = server.base_url + SECRET
    for _ in range(2):
        _titles(_calendar(url, tmp_path))
    assert [g.status for g in server.gets(SECRET)] == [200, 200]
    assert not any("if-" in h for g in server.gets(SECRET) for h in g.headers)


def test_one_source_object_fetches_once_however_often_it_is_asked(
    server: FeedServer, tmp_path: Path
) -> None:
    calendar = _calendar(server.base_url + SECRET, tmp_path)
    calendar.events(DAY, DAY)
    calendar.events(DAY, DAY + dt.timedelta(days=6))
    assert len(server.gets(SECRET)) == 1


def test_a_broken_cache_file_means_a_full_download(server: FeedServer, tmp_path: Path) -> None:
    url = server.base_url + SECRET
    _titles(_calendar(url, tmp_path))
    (cached,) = list(tmp_path.iterdir())
    cached.write_bytes(cached.read_bytes()[:-20])  # a torn write, say
    assert _titles(_calendar(url, tmp_path)) == ["Interview", "Parcel arrives"]
    assert [g.status for g in server.gets(SECRET)] == [200, 200]


def test_the_cache_is_owner_only_and_never_names_the_secret_url(
    server: FeedServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache" / "feeds"
    _titles(_calendar(server.base_url + SECRET, cache))
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    (cached,) = list(cache.iterdir())
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert "5ecret7oken" not in cached.name and b"5ecret7oken" not in cached.read_bytes()


def test_the_default_cache_is_under_xdg_cache_home(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "c"), "HOME": "/nowhere"}
    assert cache_dir(env) == tmp_path / "c" / "dayflow" / "feeds"
    assert cache_dir({"HOME": str(tmp_path)}) == tmp_path / ".cache" / "dayflow" / "feeds"


def test_an_unwritable_cache_costs_only_the_next_download(
    server: FeedServer, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    url = server.base_url + SECRET
    assert _titles(_calendar(url, blocker / "feeds")) == ["Interview", "Parcel arrives"]
    assert _titles(_calendar(url, blocker / "feeds")) == ["Interview", "Parcel arrives"]
    assert [g.status for g in server.gets(SECRET)] == [200, 200]


def _failure(calendar: IcsCalendar) -> SourceUnreadable:
    with pytest.raises(SourceUnreadable) as caught:
        calendar.events(DAY, DAY)
    err = caught.value
    assert err.source == "home" and "\n" not in str(err)
    assert "5ecret7oken" not in str(err) and "/missing" not in str(err)
    return err


def test_404_names_the_source_and_the_host_only(server: FeedServer, tmp_path: Path) -> None:
    err = _failure(_calendar(server.base_url + "/missing.ics", tmp_path))
    assert err.reason == f"{server.base_url}/… answered HTTP 404 Not Found"


def test_a_hanging_server_times_out(server: FeedServer, tmp_path: Path) -> None:
    err = _failure(_calendar(server.base_url + "/hang.ics", tmp_path, timeout=0.3))
    assert err.reason == (
        f"no complete answer from {server.base_url}/… within 0.3 s "
        "(timeout, a deadline for the whole fetch)"
    )
    assert [g.path for g in server.requests] == ["/hang.ics"]


def test_an_unreachable_server(tmp_path: Path) -> None:
    # Port 9 (discard) on loopback: nothing listens there, the connection is refused.
    err = _failure(_calendar("http://127.0.0.1:9" + SECRET, tmp_path))
    assert err.reason.startswith("cannot reach http://127.0.0.1:9/… (")


def test_a_wrong_password_says_so(server: FeedServer, tmp_path: Path) -> None:
    err = _failure(
        _calendar(server.base_url.replace("//", "//u:wrong@") + "/private.ics", tmp_path)
    )
    assert err.reason == f"{server.base_url}/… refused the user name or password (HTTP 401)"
    assert "wrong" not in str(err)


def test_a_user_and_password_in_the_url_are_sent_as_basic_auth(
    server: FeedServer, tmp_path: Path
) -> None:
    server.feeds["/private.ics"] = server.feeds[SECRET]
    url = server.base_url.replace("//", "//u:p@") + "/private.ics"
    assert _titles(_calendar(url, tmp_path)) == ["Interview", "Parcel arrives"]
    assert server.gets("/private.ics")[0].headers["authorization"] == "Basic dTpw"


def test_a_login_page_instead_of_a_calendar(server: FeedServer, tmp_path: Path) -> None:
    err = _failure(_calendar(server.base_url + "/html.ics", tmp_path))
    assert err.reason.startswith("not an iCalendar file (it starts with '<!DOCTYPE html>")


def test_webcal_is_https_and_urls_are_shown_without_path_or_password() -> None:
    assert http_url("webcal://example.org/a.ics") == "https://example.org/a.ics"
    assert http_url("WEBCALS://example.org/a.ics?x=1#f") == "https://example.org/a.ics?x=1"
    assert http_url("http://127.0.0.1:8080/a") == "http://127.0.0.1:8080/a"
    assert http_url("mailto:me@example.org") is None
    assert http_url("http://127.0.0.1:9/ümlaut and space.ics") == (
        "http://127.0.0.1:9/%C3%BCmlaut%20and%20space.ics"
    )
    assert (
        http_url("http://127.0.0.1:9/x\r\nHost: evil")
        == "http://127.0.0.1:9/xHost:%20evil"  # CR, LF dropped
    )
    assert http_url("https://example.org/a%40b.ics") == "https://example.org/a%40b.ics"
    for bad in ("http://127.0.0.1:99999/x.ics", "http://[::1:9/x", "https://bücher.example/x"):
        assert http_url(bad) is None
    assert redact("https://me:pw@example.org:8443" + SECRET) == "https://example.org:8443/…"
    assert redact("https://example.org") == "https://example.org/"


def test_feeds_are_fetched_as_the_user_asked_and_nothing_else_is_sent(
    server: FeedServer, tmp_path: Path
) -> None:
    _titles(_calendar(server.base_url + SECRET, tmp_path))
    (get,) = server.requests
    assert get.method == "GET" and get.path == SECRET
    assert get.headers["user-agent"].startswith("dayflow/")
    assert "authorization" not in get.headers and "cookie" not in get.headers
    assert os.listdir(tmp_path)  # and the copy was kept
