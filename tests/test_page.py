"""The brief as a page (`dayflow.page`): its lines from the run's reads, each linked to its
evidence, and the HTML inert whatever the mail said (script, event handlers, `javascript:`,
bidi overrides, a 1 MB line); the `file:*.html` sink."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from dayflow import delivery
from dayflow.page import document, page_of
from tests.harness import Result, invoke, offline_model
from tests.scripted import ScriptedModel, text, tool_use, turn

DATE = "2026-11-05"
# The only elements a page has: no script, style attribute, image, form, frame or object.
TAGS = {
    "html", "head", "meta", "title", "style", "body", "article", "header", "h1", "h2", "p",
    "section", "ul", "li", "span", "a", "dl", "dt", "dd", "q", "br", "footer",
}  # fmt: skip


class Tree(HTMLParser):
    """Every start tag with its attributes, and the text, of an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        else:
            self.text.append(data)

    def hrefs(self) -> list[str]:
        return [str(a.get("href")) for t, a in self.tags if t == "a"]


def parse(page: str) -> Tree:
    tree = Tree()
    tree.feed(page)
    tree.close()
    return tree


def assert_inert(page: str, links: frozenset[str] = frozenset()) -> Tree:
    """No element outside TAGS, no event handler or src attribute, no style that fetches, a
    CSP that forbids everything but the page's own style, every link to the page itself or to
    an address the run read."""
    tree = parse(page)
    assert {t for t, _ in tree.tags} <= TAGS
    for _, attrs in tree.tags:
        assert not [k for k in attrs if k.startswith("on") or k in ("src", "style", "srcset")]
    assert "url(" not in tree.style and "@import" not in tree.style
    (csp,) = [a for t, a in tree.tags if a.get("http-equiv") == "Content-Security-Policy"]
    assert str(csp["content"]).startswith("default-src 'none'; style-src 'unsafe-inline'")
    anchors = {str(a["id"]) for _, a in tree.tags if "id" in a}
    for href in tree.hrefs():
        assert href[1:] in anchors if href.startswith("#") else href in links
    return tree


def brief_html(db: Path, model: Any, *args: str) -> Result:
    result = invoke(db, model, "brief", *args, "--format", "html")
    assert result.code == 0, result.err
    return result


def test_each_line_links_to_its_messages_subject_and_date(db_path: Path) -> None:
    page = brief_html(db_path, offline_model).out
    tree = assert_inert(page)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    words = " ".join(tree.text)
    for name in ("Today", "Needs action", "You owe replies", "One thing", "Evidence"):
        assert f"<h2>{name}</h2>" in page
    tasks = json.loads(invoke(db_path, offline_model, "tasks", "--json").out)
    assert tasks
    for task in tasks:
        assert task["title"] in words
    # A Needs action line: the task's title, then a link to its message's subject and date,
    # whose target is that message in the evidence list.
    needs = page.split("<h2>Needs action</h2>", 1)[1].split("</section>", 1)[0]
    first = needs.split("<li>", 2)[1]
    found = re.search(
        r'<a class="ev" href="#([^"]+)">Mail “(.+?)” · (\w{3} \d+ \w{3} \d\d:\d\d)</a>', first
    )
    assert found is not None, first
    anchor, subject, at = found.groups()
    target = page.split(f'<dt id="{anchor}">', 1)[1].split("</dd>", 1)[0]
    assert f"“{subject}”</dt>" in target and at in target
    assert "<q>" in target  # the ask in the sender's words, as the task was filed with it
    # Each message once in the evidence list, however many lines stand on it.
    listed = re.findall(r"<dt id=[^>]+>(.*?)</dt>\n<dd>(.*?)(?:<br>|</dd>)", page)
    assert len(listed) >= 8 and len(set(listed)) == len(listed)


def test_every_why_the_page_names_is_answered_by_dayflow_why(db_path: Path) -> None:
    page = brief_html(db_path, offline_model).out
    named = re.findall(r"<br>dayflow why ([^<]+)</dd>", page)
    assert len(named) >= 5
    for ref in named:
        said = invoke(db_path, offline_model, "why", html.unescape(ref))
        assert said.code == 0, (ref, said.err)
        assert "subject:" in said.out


def test_a_views_why_pages_are_the_lines_links_when_asked_for(db_path: Path) -> None:
    brief_html(db_path, offline_model)
    from dayflow.store import open_store

    with open_store(db_path) as store:
        (run,) = store.runs.list()
        from dayflow.page import page_of_run

        page = page_of_run(store.steps.conversation(run.id), run, str(run.final_text))
    tasks = json.loads(invoke(db_path, offline_model, "tasks", "--json").out)
    shown = document(page, why=lambda ref: f"/why/{ref}")
    hrefs = parse(shown).hrefs()
    assert {f"/why/{t['id']}" for t in tasks} <= set(hrefs)
    needs = shown.split("<h2>Needs action</h2>", 1)[1].split("</section>", 1)[0]
    assert parse(needs).hrefs() == [f"/why/{t['id']}" for t in tasks]
    # A meeting's prep thread has no id `why` answers: it links to the page's own list.
    assert not [h for h in hrefs if not h.startswith(("/why/", "#e-"))]


RLO = "\u202e"
HOSTILE = {
    "id": "h1",
    "from": 'Mallory "<img src=x onerror=alert(1)>" <m@evil.example>',
    "subject": f"<script>alert('subject')</script> Invoice {RLO}fdp.exe " + "S" * 1_000_000,
    "received_at": "2026-11-05T06:00:00+00:00",
    "body": "Please pay at javascript:alert(1) or https://pay.example/ok today. " + "A" * 1_000_000,
}


def _hostile_run(db: Path, tmp_path: Path, *args: str) -> Result:
    inbox = tmp_path / "inbox.json"
    inbox.write_text(json.dumps({"messages": [HOSTILE]}))
    title = "<b onmouseover=alert(2)>Pay</b> [x](javascript:alert(3))"  # (at most 200)
    written = (
        "# Daily brief\n\n## One thing\n\n**Pay <script>alert(4)</script> at "
        "[here](javascript:alert(5)), https://pay.example/ok, http://evil.example/x "
        f"{RLO}gnp.exe ![i](http://evil.example/p.png)** " + "C" * 50_000 + "\n"
    )
    model = ScriptedModel(
        [
            turn(tool_use("read_inbox", {"limit": 20})),
            turn(
                tool_use(
                    "create_task",
                    {
                        "title": title,
                        "source_id": "inbox:h1",
                        "due": DATE,
                        "evidence": "Please pay at javascript:alert(1) or https://pay.example/ok",
                    },
                )
            ),
            turn(text(written)),
        ]
    )
    return invoke(db, lambda *a: model, "brief", "--inbox", str(inbox), *args)


def test_hostile_mail_and_a_hostile_model_leave_the_page_inert(
    db_path: Path, tmp_path: Path
) -> None:
    result = _hostile_run(db_path, tmp_path, "--format", "html")
    assert result.code == 0, result.err
    page = result.out
    tree = assert_inert(page, frozenset({"https://pay.example/ok"}))
    assert "<script" not in page and "&lt;script&gt;" in page
    assert "onerror" not in " ".join(str(a) for _, a in tree.tags)
    assert "javascript:" not in page and "(link removed)" in page
    assert "evil.example" not in page.replace("m@evil.example", "")  # only the sender's name
    assert RLO not in page and "\\u202e" in page  # the override shown, never obeyed
    assert len(page) < 50_000  # a 1 MB line is mail's, not the page's
    assert '<a href="https://pay.example/ok" rel="noreferrer noopener">' in page
    # The hostile task's line and its evidence are there, shown as text, the quote too.
    assert '<q>Please pay at (link removed)) or <a href="https://pay.example/ok"' in page
    assert "&lt;b onmouseover=alert(2)&gt;Pay&lt;/b&gt; [x]((link removed))" in page
    # (the mail reader drops the subject's override itself; the model's is shown escaped)
    assert "Mail “&lt;script&gt;alert(&#39;subject&#39;)&lt;/script&gt; Invoice fdp.exe S" in page


def test_a_page_file_holds_the_day_and_its_update_and_a_redo_writes_the_same_bytes(
    db_path: Path, tmp_path: Path
) -> None:
    sink = f"file:{tmp_path}/{{date}}.html"
    target = tmp_path / f"{DATE}.html"
    assert invoke(db_path, offline_model, "brief", "--deliver", sink).code == 0
    first = target.read_text()
    assert_inert(first)
    assert invoke(db_path, offline_model, "brief", "--deliver", sink).code == 0  # the update
    both = target.read_text()
    assert_inert(both)
    assert both.count("<article") == 2 and both.count("<!DOCTYPE html>") == 1
    assert "— Update 07:30</h1>" in both.split("<article", 2)[2]
    runs = json.loads(invoke(db_path, offline_model, "runs", "--json").out)
    from dayflow.store import open_store

    with open_store(db_path) as store:
        run = store.runs.find(runs[0]["id"])
        from dayflow.page import page_of_run

        page = page_of_run(store.steps.conversation(run.id), run, str(run.final_text))
    again = delivery.Brief(run.id, run.brief_date, str(run.final_text), page=page)
    report = delivery.deliver_all([f"file:{target}"], again, _Log(), delivery.Settings())
    assert report.delivered == [f"file:{target}: updated its article in {target}"]
    assert target.read_text() == both


def test_a_page_file_dayflow_did_not_write_is_left_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "mine.html"
    target.write_text("<!DOCTYPE html><html><body>my own page</body></html>")
    brief = delivery.Brief("abc", DATE, "# Brief\n\n## One thing\n\nDo it.\n")
    report = delivery.deliver_all([f"file:{target}"], brief, _Log(), delivery.Settings())
    assert report.failed == [f"file {target}: not a page Dayflow wrote; it is left as it is"]
    assert target.read_text() == "<!DOCTYPE html><html><body>my own page</body></html>"


def test_a_section_no_read_stands_for_shows_the_models_lines_as_text() -> None:
    written = "# Brief\n\n## Needs action\n- **Pay** <i>the</i> [bill](https://x.example)\n"
    page = page_of([], written, run_id="r1", brief_date=DATE, zone="UTC")
    shown = document(page)
    assert_inert(shown)
    needs = shown.split("<h2>Needs action</h2>", 1)[1].split("</ul>", 1)[0]
    assert "Pay &lt;i&gt;the&lt;/i&gt; [bill]((link removed))" in needs


@pytest.mark.parametrize("name", ["Today", "You owe replies", "This week"])
def test_an_empty_section_says_so(db_path: Path, tmp_path: Path, name: str) -> None:
    inbox = tmp_path / "inbox.json"
    inbox.write_text(json.dumps({"messages": []}))
    calendar = tmp_path / "cal.json"
    calendar.write_text(json.dumps({"events": []}))
    page = brief_html(
        db_path, offline_model, "--inbox", str(inbox), "--calendar", str(calendar)
    ).out
    section = page.split(f"<h2>{name}</h2>", 1)[1].split("</section>", 1)[0]
    assert section.count("<li>") == 1 and ("Nothing" in section or "No " in section)


class _Log:
    def __init__(self) -> None:
        self.saved: dict[str, tuple[str, bool]] = {}

    def get(self, key: str) -> tuple[str, bool] | None:
        return self.saved.get(key)

    def save(self, key: str, content: str, is_error: bool = False) -> None:
        self.saved[key] = (content, is_error)


@pytest.mark.slow
def test_a_page_file_killed_after_it_was_written_is_written_again_with_the_same_bytes(
    tmp_path: Path,
) -> None:
    """SIGKILL after the page file's rename and before its delivery is saved: the resumed
    run writes the page again, byte for byte the one already there, and records it."""
    from tests.conftest import dayflow_process
    from tests.test_delivery import _final_step, config

    db, target = tmp_path / "dayflow.db", tmp_path / "brief.html"
    cfg = config(tmp_path, 1)
    n = _final_step(tmp_path)
    sink = ("--deliver", f"file:{target}")
    killed = dayflow_process(
        db, cfg, "brief", "--date", DATE, *sink, DAYFLOW_KILL_AT=f"after_send:{n}"
    )
    assert killed.returncode == -9, killed.stderr
    written = target.read_bytes()
    assert_inert(written.decode())
    resumed = dayflow_process(db, cfg, "resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"updated its article in {target}" in resumed.stderr
    assert target.read_bytes() == written
