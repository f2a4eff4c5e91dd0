"""The brief's page as HTML: one self-contained document, inert, through Jinja2's autoescape.

Why Jinja2 and not `html.escape` by hand: with autoescape on, every `{{ value }}` is escaped
(text and attribute alike) unless marked safe, and this template marks nothing safe, so an
interpolation cannot be forgotten; a hand-made renderer is safe only as long as every future
line remembers to escape. Jinja2 (with MarkupSafe) is small, well kept and pure Python; it is
imported here only, when a page is written (a ruff fence keeps it so, and
`tests/test_startup.py` keeps it off `runs`, `tasks` and `--help`).

What makes the page inert, whatever the mail said:
- no script, no image, no remote resource: the template has none, and a Content-Security-Policy
  (`default-src 'none'`) forbids any that a future edit might add;
- the one `<style>` element holds the page's own CSS (no `url()`, no `@import`): a `<style>` and
  not style attributes, because dark mode is a media query;
- every text is `plain` (bidi overrides and control characters as visible escapes) and escaped;
- a link goes only to an address the run read in the user's mail or calendar
  (`safe_text.link_pieces`), or to the page's own evidence list (`#e-...`); the view's
  `/why/ID` pages come in through `why`, a function of the line's id.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from dayflow.page.data import Line, Page, when
from dayflow.safe_text import link_pieces

# Marks around one run's article, as in a Markdown note (`delivery.note`): a page file holds
# the day's brief and its updates, each replaced by its own run only.
_START = "<!-- dayflow brief {} -->"
_END = "<!-- end of dayflow brief {} -->"
_MARKED = re.compile(
    r"<!-- dayflow brief ([A-Za-z0-9_-]+) -->\n.*?\n<!-- end of dayflow brief \1 -->", re.S
)
GENERATOR = '<meta name="generator" content="dayflow">'

_CSS = """\
body{margin:0;background:#ffffff;color:#1f2328;font:16px/1.5 system-ui,-apple-system,\
"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;overflow-wrap:anywhere}
article{max-width:46rem;margin:0 auto;padding:1rem 1rem 2rem}
article+article{border-top:3px double #d0d7de}
h1{font-size:1.45rem;line-height:1.25;margin:.5rem 0 .25rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem;padding-bottom:.2rem;border-bottom:1px solid #d0d7de}
ul{margin:0;padding-left:1.25rem}
li{margin:.45rem 0}
li li{margin:.2rem 0}
.meta,.detail,.ev,footer{color:#59636e;font-size:.9rem}
.detail::before{content:" · "}
.ev{display:block}
a{color:#0550ae}
.warn{color:#9a3412}
.strong{font-weight:650}
.one{font-weight:650;font-size:1.1rem;background:#f6f8fa;border-left:4px solid #0550ae;\
padding:.6rem .8rem;list-style:none;margin-left:-1.25rem}
dl{margin:0}
dt{font-weight:600;margin-top:.6rem}
dd{margin:0 0 0 1rem;color:#59636e;font-size:.9rem}
q{font-style:italic}
footer{margin-top:2rem}
@media (prefers-color-scheme: dark){
body{background:#0d1117;color:#e6edf3}
article+article,h2{border-color:#3d444d}
.meta,.detail,.ev,footer,dd{color:#9198a1}
a{color:#4493f8}
.warn{color:#f0883e}
.one{background:#151b23;border-left-color:#4493f8}
}"""

_TEMPLATE = """\
{%- macro pieces(text) -%}
{%- for piece, href in link(text) -%}
{%- if href %}<a href="{{ href }}" rel="noreferrer noopener">{{ piece }}</a>
{%- else %}{{ piece }}{% endif -%}
{%- endfor -%}
{%- endmacro -%}
{%- macro line_items(lines, one) -%}
{%- for line in lines %}
<li{% if one %} class="one"{% elif line.warn %} class="warn"
{%- elif line.strong %} class="strong"{% endif %}>
{{- pieces(line.text) }}
{%- if line.detail %} <span class="detail">{{ pieces(line.detail) }}</span>{% endif %}
{%- if line.evidence is not none %}
<a class="ev" href="{{ href(line) }}">Mail “{{ unlinked(line.evidence.subject) }}”
{%- if line.evidence.at %} · {{ when(line.evidence.at) }}{% endif %}</a>
{%- endif %}
{%- if line.sub %}
<ul>{{ line_items(line.sub, false) }}
</ul>
{%- endif %}</li>
{%- endfor %}
{%- endmacro -%}
<article id="run-{{ page.run_id }}">
<header>
<h1>{{ page.title }}{% if page.label %} — {{ page.label }}{% endif %}</h1>
<p class="meta">Times in {{ page.zone }}
{%- if page.sample %} · the bundled sample's made-up mail{% endif %}</p>
</header>
{%- for part in page.parts %}
<section>
<h2>{{ part.name }}</h2>
<ul>
{%- if part.lines %}{{ line_items(part.lines, part.name == one_thing) }}
{%- else %}
<li>{{ part.empty }}</li>
{%- endif %}
</ul>
</section>
{%- endfor %}
{%- if evidence %}
<section>
<h2>Evidence</h2>
<dl>
{%- for ev in evidence %}
<dt id="{{ ev.anchor }}">Mail “{{ pieces(ev.subject) }}”</dt>
<dd>{% if ev.sender %}{{ pieces(ev.sender) }}{% endif %}\
{% if ev.at %}{% if ev.sender %} · {% endif %}{{ when(ev.at) }}{% endif %}\
{% for quote in ev.quotes %}<br><q>{{ pieces(quote) }}</q>{% endfor %}\
{% if ev.ref %}<br>dayflow why {{ ev.ref }}{% endif %}</dd>
{%- endfor %}
</dl>
</section>
{%- endif %}
<footer>Dayflow run {{ page.run_id }}{% if page.model %} · {{ page.model }}{% endif %}.
Links go only to addresses found in the mail and calendar this brief read.</footer>
</article>"""

_DOCUMENT = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; \
base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
{generator}
<title>{title}</title>
<style>
{css}
</style>
</head>
<body>
{articles}
</body>
</html>
"""


@cache
def _template() -> Any:
    from jinja2 import Environment, StrictUndefined

    env = Environment(autoescape=True, undefined=StrictUndefined, keep_trailing_newline=False)
    return env.from_string(_TEMPLATE)


def article(page: Page, why: Callable[[str], str] | None = None) -> str:
    """One run's `<article>` between its marks. `why` gives the address of a line's
    explanation page from its id (the view's `/why/ID`); without it a line links to the
    page's own evidence list."""
    evidence = page.evidence()
    anchors = {(entry.subject, entry.at): entry.anchor for entry in evidence}

    def href(line: Line) -> str:
        if why is not None and line.why:
            return why(line.why)
        return "#" + anchors[line.evidence.key] if line.evidence is not None else "#"

    from dayflow.models import Section

    body = _template().render(
        page=page,
        evidence=evidence,
        href=href,
        link=lambda text: link_pieces(text, page.links),
        # Inside a link no other link can be: every address as text, a foreign one removed.
        unlinked=lambda text: "".join(p for p, _ in link_pieces(text, page.links)),
        when=when,
        one_thing=Section.ONE_THING,
    )
    return f"{_START.format(page.run_id)}\n{body}\n{_END.format(page.run_id)}"


def document(page: Page, why: Callable[[str], str] | None = None) -> str:
    """The page of one brief: a whole HTML document."""
    return _document(page.title, [article(page, why)])


def _document(title: str, articles: list[str]) -> str:
    from markupsafe import escape

    return _DOCUMENT.format(
        generator=GENERATOR, title=escape(title), css=_CSS, articles="\n".join(articles)
    )


def with_article(existing: str, page: Page) -> tuple[str, str] | None:
    """The page file with this run's article in it: its own replaced where it is (a redone
    delivery writes the same bytes), else added below the others (the day's brief, then its
    updates). None when `existing` is not a page Dayflow wrote: it is not overwritten."""
    mine = article(page)
    if not existing.strip():
        return _document(page.title, [mine]), "wrote"
    if GENERATOR not in existing.split("</head>", 1)[0]:
        return None
    found: dict[str, str] = {}
    for m in _MARKED.finditer(existing):
        found.setdefault(m.group(1), m.group(0))  # an article found twice is kept once
    verb = "updated its article in" if page.run_id in found else "added to"
    found[page.run_id] = mine
    kept = list(found.values())
    title = _title(existing) or page.title
    return _document(title, kept), verb


def _title(existing: str) -> str | None:
    from html import unescape

    found = re.search(r"<title>(.*?)</title>", existing, re.S)
    return unescape(found.group(1)) if found else None
