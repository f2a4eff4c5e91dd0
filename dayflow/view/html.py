"""The view's pages as HTML, through Jinja2's autoescape (as the brief's page,
`dayflow.page.html`, whose articles they embed and whose look they share).

Every value is escaped by the template engine; the only text marked safe is an article the
brief's own autoescaped template wrote and the timeline SVG its autoescaped template wrote.
Every text from mail goes through `plain` (bidi overrides and controls made visible). The
pages hold no script: the buttons are forms that POST, each with the CSRF token, the URL
token and where to come back to.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from dayflow.page.html import _CSS as PAGE_CSS
from dayflow.view.guard import CSRF_FIELD

if TYPE_CHECKING:
    from dayflow.view.guard import Visit

_CSS = """
nav{max-width:46rem;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.4rem 1rem;\
border-bottom:1px solid #d0d7de}
main{max-width:46rem;margin:0 auto;padding:0 1rem 2rem}
main>article{padding-left:0;padding-right:0}
.said{background:#dafbe1;color:#116329;padding:.5rem .8rem;border-radius:6px;margin:1rem 0}
.task{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .8rem;margin:.6rem 0}
.task .title{font-weight:600}
form{display:inline-block;margin:.3rem .4rem 0 0}
button,select{font:inherit;font-size:.9rem;padding:.25rem .6rem;border-radius:6px;\
border:1px solid #d0d7de;background:#f6f8fa;color:#1f2328}
pre{white-space:pre-wrap;background:#f6f8fa;padding:.8rem;border-radius:6px;font-size:.9rem}
table{border-collapse:collapse;width:100%;font-size:.9rem;overflow-wrap:normal}
td,th{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
.scroll{overflow-x:auto}
svg{width:100%;height:auto;display:block}
.timeline svg{min-width:640px}
svg text{font:11px system-ui,sans-serif;fill:#59636e}
svg .lane{stroke:#d0d7de}
.readonly{color:#59636e}
@media (prefers-color-scheme: dark){
nav,.task,td,th{border-color:#3d444d}
.said{background:#12261e;color:#3fb950}
button,select{background:#212830;color:#e6edf3;border-color:#3d444d}
pre{background:#151b23}
svg text{fill:#9198a1}
svg .lane{stroke:#3d444d}
svg .ink{fill:#e6edf3;stroke:#e6edf3}
}"""

_TEMPLATE = """\
{%- macro href(path) %}{{ guard.link(path) }}{% endmacro -%}
{%- macro form(action, label, fields={}) -%}
<form method="post" action="{{ href(action) }}">
<input type="hidden" name="{{ csrf_name }}" value="{{ guard.csrf }}">
<input type="hidden" name="next" value="{{ here }}">
{%- for name, value in fields.items() %}
<input type="hidden" name="{{ name }}" value="{{ value }}">{% endfor %}
<button type="submit">{{ label }}</button></form>
{%- endmacro -%}
{%- macro task_rows(rows) -%}
{%- for row in rows %}{% set t = row.task %}
<div class="task" id="task-{{ t.id }}" data-task="{{ t.id }}">
<div class="title">{{ plain(t.title) }}</div>
<div class="meta">{{ t.id }} · {{ t.status }}{% if t.due %} · due {{ t.due }}{% endif %}
{%- if row.sender %} · from {{ plain(row.sender) }}{% endif %}
 · <a href="{{ href('/why/' ~ quote(t.id)) }}">why</a></div>
{%- if t.evidence %}<div class="ev"><q>{{ plain(t.evidence) }}</q></div>{% endif %}
{%- if not site.read_only and t.status == "open" %}
{{ form("/tasks/" ~ quote(t.id) ~ "/done", "Done") }}
{{ form("/tasks/" ~ quote(t.id) ~ "/reject", "Not a task") }}
<form method="post" action="{{ href('/tasks/' ~ quote(t.id) ~ '/snooze') }}">
<input type="hidden" name="{{ csrf_name }}" value="{{ guard.csrf }}">
<input type="hidden" name="next" value="{{ here }}">
<select name="until" aria-label="Snooze for">{% for s in snoozes %}
<option value="{{ s }}">{{ s }}</option>{% endfor %}</select>
<button type="submit">Snooze</button></form>
{%- if row.sender %}
{{ form("/mute", "Mute " ~ plain(row.sender), {"pattern": row.sender}) }}{% endif %}
{%- endif %}
</div>
{%- else %}
<p class="meta">No tasks.</p>
{%- endfor %}
{%- endmacro -%}
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="color-scheme" content="light dark">
<title>{{ plain(title) }}</title>
<style>{{ css }}</style>
</head>
<body>
<nav><a href="{{ href('/') }}">Today</a> <a href="{{ href('/days') }}">Past briefs</a>
<a href="{{ href('/tasks') }}">Tasks</a>
{%- if site.profile %} <span class="meta">profile {{ plain(site.profile) }}</span>{% endif %}
{%- if site.read_only %} <span class="readonly">read-only</span>{% endif %}</nav>
<main>
{%- if said %}<p class="said" role="status">{{ plain(said) }}</p>{% endif %}
{%- if kind == "empty" %}
<h1>No brief yet</h1><p>Run <code>dayflow brief</code> first.</p>
{%- elif kind == "day" %}
{%- for a in articles %}{{ a }}{% endfor %}
<h2>Tasks of this brief</h2>
{{ task_rows(rows) }}
<p class="meta">Runs: {% for r in runs %}<a href="{{ href('/runs/' ~ quote(r.id)) }}">{{ r.id }}</a>
{% endfor %}</p>
{%- elif kind == "days" %}
<h1>Past briefs</h1>
<ul>{% for day, runs in days %}
<li><a href="{{ href('/days/' ~ day) }}">{{ day }}</a> <span class="meta">{{ runs|length }}
run(s): {% for r in runs %}<a href="{{ href('/runs/' ~ quote(r.id)) }}">{{ r.id }}</a>
{% endfor %}</span></li>{% else %}<li>No brief yet.</li>{% endfor %}</ul>
{%- elif kind == "run" %}
<h1>Run {{ run.id }}</h1>
<p class="meta">{{ run.status }} · {{ run.model }} · brief of
<a href="{{ href('/days/' ~ run.brief_date) }}">{{ run.brief_date }}</a> · {{ run.steps }}
step(s){% if run.reason %} · {{ plain(run.reason) }}{% endif %}</p>
<h2>Timeline</h2>
<div class="scroll timeline">{{ svg }}</div>
<h2>Steps</h2>
<div class="scroll"><table><tr><th>#</th><th>state</th><th>stop</th><th>tools</th><th>ms</th>
<th>at</th></tr>
{%- for s in steps %}
<tr><td>{{ s.n }}</td><td>{{ s.state }}</td><td>{{ plain(s.stop_reason) }}</td>
<td>{% for b in s.tool_uses() %}{{ plain(b.get("name")) }} {% endfor %}</td>
<td>{{ s.duration_ms if s.duration_ms is not none else "" }}</td><td>{{ s.created_at }}</td></tr>
{%- endfor %}</table></div>
{%- elif kind == "tasks" %}
<h1>Tasks</h1>
{{ task_rows(rows) }}
{%- elif kind == "why" %}
<h1>Why {{ plain(item) }}</h1>
<pre>{{ plain(text) }}</pre>
{% if why.run_id %}
<p class="meta">Run <a href="{{ href('/runs/' ~ quote(why.run_id)) }}">{{ why.run_id }}</a></p>
{% endif %}
{{ task_rows(rows) if rows else "" }}
{%- endif %}
</main>
</body>
</html>
"""


@cache
def _template() -> Any:
    from jinja2 import Environment, StrictUndefined

    # A name the page forgot to pass is an error in the tests, not an empty cell in a page.
    env = Environment(
        autoescape=True, undefined=StrictUndefined, trim_blocks=False, lstrip_blocks=False
    )
    return env.from_string(_TEMPLATE)


def page(site: Any, visit: Visit, title: str, kind: str, values: dict[str, Any]) -> str:
    """One page of the view (`kind`: empty, day, days, run, tasks or why) of a
    `dayflow.view.site.Site`."""
    from urllib.parse import quote

    from markupsafe import Markup

    from dayflow.printable import plain

    shown = dict(values)
    if "articles" in shown:  # written by the brief's own autoescaped template
        shown["articles"] = [Markup(a) for a in shown["articles"]]
    if "svg" in shown:  # written by the timeline's autoescaped template
        shown["svg"] = Markup(shown["svg"])
    return str(
        _template().render(
            site=site,
            guard=visit.guard,
            title=title,
            kind=kind,
            css=Markup(PAGE_CSS + _CSS),
            plain=lambda v: plain("" if v is None else str(v)),
            quote=lambda v: quote(str(v), safe=""),
            csrf_name=CSRF_FIELD,
            here=visit.here,
            said=visit.said,
            **shown,
        )
    )


_SVG = """\
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{ d.width }} {{ d.height }}" \
role="img" aria-label="timeline of run {{ run_id }}">
<title>Timeline of run {{ run_id }}</title>
{%- set axis = d.lanes[-1][0] + 40 if d.lanes else 40 %}
{%- if d.empty %}<text x="10" y="30">no events</text>{% endif %}
{%- for y, label in d.lanes %}
<line class="lane" x1="{{ d.left }}" y1="{{ y }}" x2="{{ d.width - 10 }}" y2="{{ y }}"/>
<text x="6" y="{{ y + 4 }}">{{ plain(label) }}</text>
{%- endfor %}
{%- for x in d.restarts %}
<line x1="{{ x }}" y1="12" x2="{{ x }}" y2="{{ axis - 16 }}" stroke="#d62728" \
stroke-dasharray="5 4"/>
{%- endfor %}
{%- for x, label in d.ticks %}
<text x="{{ x }}" y="{{ axis }}" text-anchor="middle">{{ label }}</text>
{%- endfor %}
{%- for m in d.legend %}
<circle class="{{ 'ink' if m.colour == '#000000' else 'key' }}" \
cx="{{ m.x }}" cy="{{ m.y - 4 }}" r="5" stroke="{{ m.colour }}" stroke-width="2" \
fill="{{ m.colour if m.filled else 'none' }}"/>
<text x="{{ m.x + 10 }}" y="{{ m.y }}">{{ m.title }}</text>
{%- endfor %}
{%- for m in d.marks %}
<circle class="event{{ ' ink' if m.colour == '#000000' else '' }}" \
cx="{{ m.x }}" cy="{{ m.y }}" r="6" stroke="{{ m.colour }}" \
stroke-width="2" fill="{{ m.colour if m.filled else 'none' }}"><title>{{ plain(m.title) }}</title>\
</circle>
{%- endfor %}
</svg>"""


@cache
def _svg() -> Any:
    from jinja2 import Environment, StrictUndefined

    return Environment(autoescape=True, undefined=StrictUndefined).from_string(_SVG)


def timeline(run_id: str, drawing: Any) -> str:
    """The SVG text of a run's timeline (a `dayflow.view.svg.Drawing`)."""
    from dayflow.printable import plain

    return str(_svg().render(run_id=run_id, d=drawing, plain=lambda v: plain(str(v))))
