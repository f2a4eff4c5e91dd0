"""Plain, frozen value objects shared by every layer. No I/O here.

They are `Frozen` classes rather than frozen dataclasses: every command imports this module, and
nine dataclasses cost more start-up time than the rest of it (see `dayflow.frozen`).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from dayflow.frozen import Frozen, fields_of

JSON = Any
Message = dict[str, Any]  # {"role": "user"|"assistant", "content": str | list[block dict]}
Block = dict[str, Any]  # one content block as plain JSON, exactly as on the wire

# Stored run statuses. "interrupted" is also *derived*: a run stored as "running" whose
# driving process is gone is shown (and treated) as interrupted.
RUNNING = "running"
INTERRUPTED = "interrupted"
DONE = "done"
FAILED = "failed"
STOPPED = "stopped"
RUN_STATUSES = (RUNNING, INTERRUPTED, DONE, FAILED, STOPPED)

# Step states: a step is written "pending" the moment the model's response arrives (before any
# tool runs) and "complete" once its tool results are assembled. "discarded" marks a turn that
# was cut short (max_tokens) and is kept for the record but not sent again.
PENDING = "pending"
COMPLETE = "complete"
DISCARDED = "discarded"

# A new run's limits unless the user gives others (`brief`'s flags, `BriefOptions`).
DEFAULT_MAX_STEPS = 40
DEFAULT_TASK_CAP = 20
DEFAULT_MAX_TOKENS = 4096
# Compact old tool exchanges before a call whose estimated input passes this many tokens: above
# the peak of a typical morning (the standard sample 5.5k, a 24-message inbox 7.1k to 12.6k), so
# only a long run compacts and a morning's prompt cache is never broken (issue 19.20).
DEFAULT_COMPACT_AT = 20_000
# The followups' defaults (the config's `followup_days`, `waiting_after_days`): the window, in
# days, and the working days before an unanswered question is waited on.
FOLLOWUP_DAYS = 14
WAITING_AFTER_DAYS = 2

# The named points of a step where the crash-test hook (DAYFLOW_KILL_AT) can SIGKILL the process.
KILL_POINTS = ("before_pending", "after_pending", "between_tools", "after_tools", "after_complete")
# ...and of a delivery (made during the final step, see dayflow.delivery): after the SMTP intent
# is saved, after the `sending` mark (before the message is committed), after a sink is
# delivered but before that is saved.
DELIVERY_KILL_POINTS = ("before_send", "while_sending", "after_send")
# ...and of a write of `rules.toml` (dayflow.rules): the temporary file written, then synced,
# then renamed over the old one.
RULES_KILL_POINTS = ("rules_temp", "rules_synced", "rules_renamed")
# ...and of a draft (dayflow.drafts.ledger): its pending mark saved, then the APPEND (or the
# Maildir file) made, each before the next save.
DRAFT_KILL_POINTS = ("draft_before_append", "draft_after_append")

# An MCP server's tool as the model sees it: mcp__<server>__<tool> (dayflow.mcp.offer). A value
# here, below both the tools' registry and the MCP client, which each tell its tools apart.
MCP_PREFIX = "mcp__"


def is_mcp_tool(name: object) -> bool:
    """Whether a tool name the model sees is an MCP server's."""
    return isinstance(name, str) and name.startswith(MCP_PREFIX)


def estimate_tokens(value: Any) -> int:
    """About one token per four characters of `value` as compact JSON, rounded up: the one
    estimate (the loop's before a call and at compaction, the offline model's usage)."""
    import json  # here: `--help` imports this module and must not load json

    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return (len(text) + 3) // 4


# Any "postgres:" or "postgresql:" target is a URL (also one whose "//" pathlib folded to "/").
_POSTGRES = re.compile(r"^postgres(?:ql)?:", re.IGNORECASE)


def is_postgres_target(target: str | Path) -> bool:
    """Whether `target` names a PostgreSQL database (a server) rather than a SQLite file."""
    return bool(_POSTGRES.match(str(target)))


class Section:
    """The brief's `##` sections by name: the prompt asks for them, the offline model writes
    them, and `notify` and the evaluation's checklist find them in a brief by these names."""

    TODAY = "Today"
    SINCE = "Since yesterday"
    NEEDS_ACTION = "Needs action"
    YOU_OWE = "You owe replies"
    WAITING_ON = "Waiting on others"
    PROMISED = "You promised"
    TASKS_CREATED = "Tasks created"
    THIS_WEEK = "This week"
    ONE_THING = "One thing"

    # "Since yesterday"'s one line when nothing of the brief it compares with changed (the
    # prompt asks for it, the offline model and the page write it).
    SINCE_NOTHING = "Nothing of it changed (replies, waits, tasks, meetings)."

    @staticmethod
    def heading(name: str) -> str:
        """The Markdown heading line of section `name`."""
        return f"## {name}"

    @staticmethod
    def compared_with(brief_date: object) -> str:
        """ "Since yesterday"'s first line: the brief it compares with, by its day (an ISO
        date), as "Compared with the brief of Wed 4 Nov."."""
        try:
            day = dt.date.fromisoformat(brief_date) if isinstance(brief_date, str) else None
        except ValueError:
            day = None
        if day is None:
            return "Compared with your last brief."
        weekday = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[day.weekday()]
        month = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()[day.month - 1]
        return f"Compared with the brief of {weekday} {day.day} {month}."  # never the locale's


# The sections in the order a brief has them.
BRIEF_SECTIONS = (
    Section.TODAY,
    Section.SINCE,
    Section.NEEDS_ACTION,
    Section.YOU_OWE,
    Section.WAITING_ON,
    Section.PROMISED,
    Section.TASKS_CREATED,
    Section.THIS_WEEK,
    Section.ONE_THING,
)

# "Since yesterday"'s lines, written once for the offline model's Markdown and the page:
# read_since's kinds in the section's order, each with its line's words (the change's values in
# braces) and the sentence the Markdown makes of them and the line's detail (the page shows the
# detail beside the words). The due dates moved come after, from move_due's answers.
SINCE_LINES: tuple[tuple[str, str, str], ...] = (
    ("replies_sent", "You replied to {who}", "{line} about {detail}."),
    ("answered", "{who} answered", "{line} {detail}."),
    ("tasks_done", "Done: {title}", "{line}."),
    ("tasks_gone", "No longer on your list: {title}", "{line}."),
    ("meetings_moved", "Moved: {title}", "{line}, {detail}."),
    ("meetings_cancelled", "Cancelled: {title}", "{line} ({detail})."),
    ("meetings_new", "New today: {title}", "{line}, {detail}."),
    ("conflicts_new", "New conflict: {titles}", "{line}."),
)
SINCE_DUE_MOVED = ("Due date moved: {title}", "{line}, {detail}{said}.")


class Usage(Frozen):
    """Token usage of one model call, with the cache parts kept apart."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total_input(self) -> int:
        """Every input token of the call: uncached + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total(self) -> int:
        return self.total_input + self.output_tokens

    def to_json(self) -> dict[str, int]:
        """The four parts under the Messages API's names (the fields' own)."""
        return fields_of(self)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


class ModelRequest(Frozen):
    """Everything one Messages API call carries. `messages` are plain JSON dicts."""

    model: str
    system: str
    tools: list[dict[str, Any]]
    messages: list[Message]
    max_tokens: int
    # Which call this is (never sent): step `step` of run `run_id`, when a run's loop made it.
    # The Message Batches path (dayflow.batching) records a submitted request under them.
    run_id: str | None = None
    step: int | None = None


class ModelResponse(Frozen):
    """One assistant turn as plain JSON, exactly the fields the API sent back."""

    content: list[Block]
    stop_reason: str
    usage: Usage
    model: str
    request_id: str | None = None
    stop_details: dict[str, Any] | None = None
    estimated: bool = False  # True when the token counts are estimates (offline model)
    batch_id: str | None = None  # the Message Batch that answered it (dayflow.batching)


class RunSettings(Frozen):
    """How a run reads its world, stored with it so a resume (on any host, any day) reads the
    same sources the same way. The one place for their defaults."""

    tz: str = "UTC"
    inbox: str | None = None  # None: the bundled sample
    calendar: str | None = None
    sample: str = "standard"  # which bundled inbox when `inbox` is None
    compact_at: int = DEFAULT_COMPACT_AT  # 0: never compact
    # An update of the day's brief: only messages received after `since` (aware ISO), the run
    # `update_of` having covered the rest.
    since: str | None = None
    update_of: str | None = None
    deliver: tuple[str, ...] = ()  # sinks the brief is delivered to (dayflow.delivery)
    # Which sources of the config file the run reads: {"config": path, "inbox": [names],
    # "calendar": [names]} (never a secret: a resume reads the config again). None: the JSON
    # files or the bundled sample.
    sources: dict[str, Any] | None = None
    mail_since: str | None = None  # read_inbox's default window (aware ISO); None: all mail
    strict_sources: bool = False  # any source failure fails the run (resumably)
    # The config file the run was started with (a path, never its contents): a resume reads
    # its delivery settings ([smtp]) from the same file, even when no source came from it.
    config: str | None = None
    # Who serves the model: "anthropic" (the default, and every run made before this was
    # stored) or "local", a server on this machine at `base_url` (dayflow.providers.local).
    provider: str = "anthropic"
    # The model's server when it is not the Anthropic API's own address (a local run's, kept
    # so a resume talks to the same one), never with its user:password (network.shown_url).
    base_url: str | None = None
    # How the model's requests travelled (network.route): "direct" or the proxy's URL
    # without credentials; None for the offline model and for runs made before it was kept.
    proxy: str | None = None
    # Dollars per million tokens (input, output) fixed when the run was made: a local run's
    # $0, so `runs` and `show` never look its model up in a price table. None: the table.
    price: tuple[float, float] | None = None
    # The MCP tools the run offers, by the name the model sees: [server, tool, "read" or
    # "write"] (dayflow.mcp.offer; names only, never a secret): a resume calls the same ones.
    mcp_tools: dict[str, Any] | None = None
    # The user's rules the run obeys (dayflow.rules, `RuleSet.to_json`), read from rules.toml
    # when it was made: a resume obeys the same ones, whatever the file says by then.
    rules: tuple[dict[str, str], ...] = ()
    # Replies owed are drafted in the drafts folders the config's [[inbox]] entries name
    # (`drafts = ...`, issue 36); False (the default, and `brief --no-drafts`): nothing is
    # written to any mailbox, and the draft_reply tool is not offered.
    drafts: bool = False

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "tz": self.tz,
            "inbox": self.inbox,
            "calendar": self.calendar,
            "sample": self.sample,
            "compact_at": self.compact_at,
        }
        if self.since is not None:
            doc |= {"since": self.since, "update_of": self.update_of}
        if self.deliver:
            doc["deliver"] = list(self.deliver)
        if self.sources is not None:
            doc["sources"] = self.sources
        if self.mail_since is not None:
            doc["mail_since"] = self.mail_since
        if self.strict_sources:
            doc["strict_sources"] = True
        if self.config is not None:
            doc["config"] = self.config
        if self.provider != "anthropic":
            doc["provider"] = self.provider
        if self.base_url is not None:
            doc["base_url"] = self.base_url
        if self.proxy is not None:
            doc["proxy"] = self.proxy
        if self.price is not None:
            doc["price"] = list(self.price)
        if self.mcp_tools:
            doc["mcp_tools"] = self.mcp_tools
        if self.rules:
            doc["rules"] = list(self.rules)
        if self.drafts:
            doc["drafts"] = True
        return doc

    @property
    def reads_sample(self) -> bool:
        """Whether the run read the bundled sample inbox (no config source, no --inbox): such
        a run is never the day's brief of one that reads the user's own mail (issue 19.8)."""
        return self.sources is None and self.inbox is None

    @property
    def config_file(self) -> str | None:
        """The config file the run was started with (runs made before `config` was stored
        name it only among their sources)."""
        declared = (self.sources or {}).get("config")
        return self.config or (declared if isinstance(declared, str) else None)

    @classmethod
    def from_json(cls, doc: Any) -> RunSettings:
        """The settings stored with a run; keys an older Dayflow did not write take their
        defaults, keys a newer one wrote are ignored."""
        if not isinstance(doc, dict):
            return cls()
        compact_at = doc.get("compact_at", DEFAULT_COMPACT_AT)
        return cls(
            tz=doc.get("tz") or "UTC",
            inbox=doc.get("inbox"),
            calendar=doc.get("calendar"),
            sample=doc.get("sample") or "standard",
            compact_at=int(compact_at or 0),
            since=doc.get("since"),
            update_of=doc.get("update_of"),
            deliver=tuple(doc.get("deliver") or ()),
            sources=doc.get("sources") if isinstance(doc.get("sources"), dict) else None,
            mail_since=doc.get("mail_since"),
            strict_sources=bool(doc.get("strict_sources")),
            config=doc.get("config") if isinstance(doc.get("config"), str) else None,
            provider=str(doc.get("provider") or "anthropic"),
            base_url=doc.get("base_url") if isinstance(doc.get("base_url"), str) else None,
            proxy=doc.get("proxy") if isinstance(doc.get("proxy"), str) else None,
            price=_price(doc.get("price")),
            mcp_tools=doc.get("mcp_tools") if isinstance(doc.get("mcp_tools"), dict) else None,
            rules=tuple(r for r in doc.get("rules") or () if isinstance(r, dict)),
            drafts=doc.get("drafts") is True,
        )


def _price(value: Any) -> tuple[float, float] | None:
    """A stored (input, output) price, or None when there is none (or it is not one)."""
    if not isinstance(value, list) or len(value) != 2:
        return None
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        return None
    return float(value[0]), float(value[1])


class Limits(Frozen):
    """What a run may spend, one value wherever the guards travel (a request, a new run's
    options, a resume, a fork): most model calls (`max_steps`), most tokens in + out over the
    whole run, resumes included (`budget`), output tokens per call (`max_tokens`), most tasks
    it may create (`task_cap`). A field left None is not given: a new run takes the default
    (`for_new_run`), a resume or a fork keeps the run's own."""

    max_steps: int | None = None
    budget: int | None = None
    max_tokens: int | None = None
    task_cap: int | None = None

    @property
    def given(self) -> bool:
        """Whether any limit is set (a resume writes only then)."""
        return any(v is not None for v in (self.max_steps, self.budget, self.max_tokens))

    def for_new_run(self) -> Limits:
        """These limits with the defaults of a plain `brief` where none is given (a budget
        stays unset: no budget)."""
        return Limits(
            max_steps=DEFAULT_MAX_STEPS if self.max_steps is None else self.max_steps,
            budget=self.budget,
            max_tokens=DEFAULT_MAX_TOKENS if self.max_tokens is None else self.max_tokens,
            task_cap=DEFAULT_TASK_CAP if self.task_cap is None else self.task_cap,
        )


NO_LIMITS = Limits()  # none given: the defaults of a new run, a resumed run's own


class Run(Frozen):
    """A run as stored, with its effective status, totals and settings."""

    id: str
    status: str  # effective status (interrupted when the owner is gone)
    stored_status: str
    model: str
    brief_date: str
    created_at: str
    updated_at: str
    finished_at: str | None
    system: str
    tools: list[dict[str, Any]]
    user_msg: Message
    max_tokens: int
    max_steps: int
    budget: int | None
    task_cap: int
    steps: int
    usage: Usage
    model_calls: int
    final_text: str | None
    reason: str | None
    request_id: str | None
    estimated: bool
    owner_pid: int | None
    owner_host: str | None
    lease_expires_at: str | None
    version: int
    settings: RunSettings = RunSettings()  # a frozen value: one shared default is safe
    parent_run_id: str | None = None
    forked_at_step: int | None = None
    pruned_at: str | None = None  # set by `gc`: payloads gone, only the tombstone is left
    redacted_at: str | None = None  # set by `gc --redact`: read tools' results blanked
    host: str | None = None  # the host of its newest step (or of its first driver)
    batch_usage: Usage = Usage()  # the part of `usage` answered by Message Batches

    @property
    def finished(self) -> bool:
        return self.status == DONE

    @property
    def limits(self) -> Limits:
        """The guards the run is held to now (as started, or as its last resume set them)."""
        return Limits(self.max_steps, self.budget, self.max_tokens, self.task_cap)

    @property
    def resumable(self) -> bool:
        return self.status in (INTERRUPTED, FAILED, STOPPED)


class Step(Frozen):
    """One model call of a run: the assistant turn as sent back, then its tool results."""

    run_id: str
    n: int
    state: str
    stop_reason: str
    assistant: list[Block]
    tool_results: list[Block] | None
    usage: Usage
    request_id: str | None
    duration_ms: int | None
    pid: int | None
    created_at: str
    completed_at: str | None
    stop_details: dict[str, Any] | None = None  # e.g. a refusal's category and explanation
    host: str | None = None  # the machine whose process wrote the step
    batch_id: str | None = None  # the Message Batch that answered it; None: a normal call

    def tool_uses(self) -> list[Block]:
        return [b for b in self.assistant if b.get("type") == "tool_use"]


class Task(Frozen):
    """A task the agent created; its id derives from its idempotency key."""

    id: str
    title: str
    due: str | None
    status: str  # "open" | "done"
    source_id: str | None
    notes: str | None
    idempotency_key: str
    run_id: str | None
    created_at: str
    done_at: str | None = None
    # The ask in the sender's words create_task found in the message (dayflow.tools.evidence),
    # and whether the due date was "stated", "implied" or "none"; None: filed before either
    # was recorded.
    evidence: str | None = None
    due_kind: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The task as the tools and `--json` show it: every field but `done_at`."""
        shown = fields_of(self)
        del shown["done_at"]
        return shown


class ToolEffect(Frozen):
    """The saved outcome of one executed tool call: what went back to the model."""

    run_id: str
    tool_use_id: str
    step_n: int
    tool_name: str
    content: str
    is_error: bool
    created_at: str


class Event(Frozen):
    """One entry of a run's event log, from whichever process wrote it."""

    run_id: str
    seq: int
    kind: str
    detail: dict[str, Any]
    pid: int | None
    host: str | None
    at: str
