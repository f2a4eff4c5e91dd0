"""Plain, frozen value objects shared by every layer. No I/O here.

They are `Frozen` classes rather than frozen dataclasses: every command imports this module, and
nine dataclasses cost more start-up time than the rest of it (see `dayflow.frozen`).
"""

from __future__ import annotations

from typing import Any

from dayflow.frozen import Frozen, set_field

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
# Compact old tool exchanges before a call whose estimated input passes this many tokens.
DEFAULT_COMPACT_AT = 6_000

# The named points of a step where the crash-test hook (DAYFLOW_KILL_AT) can SIGKILL the process.
KILL_POINTS = ("before_pending", "after_pending", "between_tools", "after_tools", "after_complete")
# ...and of a delivery (made during the final step, see dayflow.delivery): after the SMTP intent
# is saved, after the `sending` mark (before the message is committed), after a sink is
# delivered but before that is saved.
DELIVERY_KILL_POINTS = ("before_send", "while_sending", "after_send")


class Usage(Frozen):
    """Token usage of one model call, with the cache parts kept apart."""

    __slots__ = tuple(
        "input_tokens output_tokens cache_creation_input_tokens cache_read_input_tokens".split()
    )

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int

    def __init__(
        self,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_creation_input_tokens: int = 0,
        cache_read_input_tokens: int = 0,
    ) -> None:
        set_field(self, "input_tokens", input_tokens)
        set_field(self, "output_tokens", output_tokens)
        set_field(self, "cache_creation_input_tokens", cache_creation_input_tokens)
        set_field(self, "cache_read_input_tokens", cache_read_input_tokens)

    @property
    def total_input(self) -> int:
        """Every input token of the call: uncached + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total(self) -> int:
        return self.total_input + self.output_tokens

    def to_json(self) -> dict[str, int]:
        """The four parts under the Messages API's names."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


class ModelRequest(Frozen):
    """Everything one Messages API call carries. `messages` are plain JSON dicts."""

    __slots__ = ("model", "system", "tools", "messages", "max_tokens")

    model: str
    system: str
    tools: list[dict[str, Any]]
    messages: list[Message]
    max_tokens: int

    def __init__(
        self,
        model: str,
        system: str,
        tools: list[dict[str, Any]],
        messages: list[Message],
        max_tokens: int,
    ) -> None:
        set_field(self, "model", model)
        set_field(self, "system", system)
        set_field(self, "tools", tools)
        set_field(self, "messages", messages)
        set_field(self, "max_tokens", max_tokens)


class ModelResponse(Frozen):
    """One assistant turn as plain JSON, exactly the fields the API sent back."""

    __slots__ = tuple("content stop_reason usage model request_id stop_details estimated".split())

    content: list[Block]
    stop_reason: str
    usage: Usage
    model: str
    request_id: str | None
    stop_details: dict[str, Any] | None
    estimated: bool  # True when the token counts are estimates (offline model)

    def __init__(
        self,
        content: list[Block],
        stop_reason: str,
        usage: Usage,
        model: str,
        request_id: str | None = None,
        stop_details: dict[str, Any] | None = None,
        estimated: bool = False,
    ) -> None:
        set_field(self, "content", content)
        set_field(self, "stop_reason", stop_reason)
        set_field(self, "usage", usage)
        set_field(self, "model", model)
        set_field(self, "request_id", request_id)
        set_field(self, "stop_details", stop_details)
        set_field(self, "estimated", estimated)


class RunSettings(Frozen):
    """How a run reads its world, stored with it so a resume (on any host, any day) reads the
    same sources the same way. The one place for their defaults."""

    __slots__ = tuple(
        "tz inbox calendar sample compact_at since update_of deliver sources mail_since"
        " strict_sources config provider base_url price".split()
    )

    tz: str
    inbox: str | None  # None: the bundled sample
    calendar: str | None
    sample: str  # which bundled inbox when `inbox` is None
    compact_at: int  # 0: never compact
    # An update of the day's brief: only messages received after `since` (aware ISO), the run
    # `update_of` having covered the rest.
    since: str | None
    update_of: str | None
    deliver: tuple[str, ...]  # sinks the brief is delivered to (dayflow.delivery)
    # Which sources of the config file the run reads: {"config": path, "inbox": [names],
    # "calendar": [names]} (never a secret: a resume reads the config again). None: the JSON
    # files or the bundled sample.
    sources: dict[str, Any] | None
    mail_since: str | None  # read_inbox's default window (aware ISO); None: all mail
    strict_sources: bool  # any source failure fails the run (resumably)
    # The config file the run was started with (a path, never its contents): a resume reads
    # its delivery settings ([smtp]) from the same file, even when no source came from it.
    config: str | None
    # Who serves the model: "anthropic" (the default, and every run made before this was
    # stored) or "local", a server on this machine at `base_url` (dayflow.providers.local).
    provider: str
    base_url: str | None  # a local run's server, kept so a resume talks to the same one
    # Dollars per million tokens (input, output) fixed when the run was made: a local run's
    # $0, so `runs` and `show` never look its model up in a price table. None: the table.
    price: tuple[float, float] | None

    def __init__(
        self,
        tz: str = "UTC",
        inbox: str | None = None,
        calendar: str | None = None,
        sample: str = "standard",
        compact_at: int = DEFAULT_COMPACT_AT,
        since: str | None = None,
        update_of: str | None = None,
        deliver: tuple[str, ...] = (),
        sources: dict[str, Any] | None = None,
        mail_since: str | None = None,
        strict_sources: bool = False,
        config: str | None = None,
        provider: str = "anthropic",
        base_url: str | None = None,
        price: tuple[float, float] | None = None,
    ) -> None:
        set_field(self, "tz", tz)
        set_field(self, "inbox", inbox)
        set_field(self, "calendar", calendar)
        set_field(self, "sample", sample)
        set_field(self, "compact_at", compact_at)
        set_field(self, "since", since)
        set_field(self, "update_of", update_of)
        set_field(self, "deliver", deliver)
        set_field(self, "sources", sources)
        set_field(self, "mail_since", mail_since)
        set_field(self, "strict_sources", strict_sources)
        set_field(self, "config", config)
        set_field(self, "provider", provider)
        set_field(self, "base_url", base_url)
        set_field(self, "price", price)

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
        if self.price is not None:
            doc["price"] = list(self.price)
        return doc

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
            price=_price(doc.get("price")),
        )


def _price(value: Any) -> tuple[float, float] | None:
    """A stored (input, output) price, or None when there is none (or it is not one)."""
    if not isinstance(value, list) or len(value) != 2:
        return None
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        return None
    return float(value[0]), float(value[1])


class Run(Frozen):
    """A run as stored, with its effective status, totals and settings."""

    __slots__ = tuple(
        "id status stored_status model brief_date created_at updated_at finished_at system tools"
        " user_msg max_tokens max_steps budget task_cap steps usage model_calls final_text reason"
        " request_id estimated owner_pid owner_host lease_expires_at version settings parent_run_id"
        " forked_at_step pruned_at redacted_at host".split()
    )

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
    settings: RunSettings
    parent_run_id: str | None
    forked_at_step: int | None
    pruned_at: str | None  # set by `gc`: payloads gone, only the tombstone is left
    redacted_at: str | None  # set by `gc --redact`: read tools' results blanked
    host: str | None  # the host of its newest step (or of its first driver)

    def __init__(
        self,
        id: str,
        status: str,
        stored_status: str,
        model: str,
        brief_date: str,
        created_at: str,
        updated_at: str,
        finished_at: str | None,
        system: str,
        tools: list[dict[str, Any]],
        user_msg: Message,
        max_tokens: int,
        max_steps: int,
        budget: int | None,
        task_cap: int,
        steps: int,
        usage: Usage,
        model_calls: int,
        final_text: str | None,
        reason: str | None,
        request_id: str | None,
        estimated: bool,
        owner_pid: int | None,
        owner_host: str | None,
        lease_expires_at: str | None,
        version: int,
        settings: RunSettings | None = None,  # None: the defaults
        parent_run_id: str | None = None,
        forked_at_step: int | None = None,
        pruned_at: str | None = None,
        redacted_at: str | None = None,
        host: str | None = None,
    ) -> None:
        set_field(self, "id", id)
        set_field(self, "status", status)
        set_field(self, "stored_status", stored_status)
        set_field(self, "model", model)
        set_field(self, "brief_date", brief_date)
        set_field(self, "created_at", created_at)
        set_field(self, "updated_at", updated_at)
        set_field(self, "finished_at", finished_at)
        set_field(self, "system", system)
        set_field(self, "tools", tools)
        set_field(self, "user_msg", user_msg)
        set_field(self, "max_tokens", max_tokens)
        set_field(self, "max_steps", max_steps)
        set_field(self, "budget", budget)
        set_field(self, "task_cap", task_cap)
        set_field(self, "steps", steps)
        set_field(self, "usage", usage)
        set_field(self, "model_calls", model_calls)
        set_field(self, "final_text", final_text)
        set_field(self, "reason", reason)
        set_field(self, "request_id", request_id)
        set_field(self, "estimated", estimated)
        set_field(self, "owner_pid", owner_pid)
        set_field(self, "owner_host", owner_host)
        set_field(self, "lease_expires_at", lease_expires_at)
        set_field(self, "version", version)
        set_field(self, "settings", RunSettings() if settings is None else settings)
        set_field(self, "parent_run_id", parent_run_id)
        set_field(self, "forked_at_step", forked_at_step)
        set_field(self, "pruned_at", pruned_at)
        set_field(self, "redacted_at", redacted_at)
        set_field(self, "host", host)

    @property
    def finished(self) -> bool:
        return self.status == DONE

    @property
    def resumable(self) -> bool:
        return self.status in (INTERRUPTED, FAILED, STOPPED)


class Step(Frozen):
    """One model call of a run: the assistant turn as sent back, then its tool results."""

    __slots__ = tuple(
        "run_id n state stop_reason assistant tool_results usage request_id duration_ms pid"
        " created_at completed_at stop_details host".split()
    )

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
    stop_details: dict[str, Any] | None  # e.g. a refusal's category and explanation
    host: str | None  # the machine whose process wrote the step

    def __init__(
        self,
        run_id: str,
        n: int,
        state: str,
        stop_reason: str,
        assistant: list[Block],
        tool_results: list[Block] | None,
        usage: Usage,
        request_id: str | None,
        duration_ms: int | None,
        pid: int | None,
        created_at: str,
        completed_at: str | None,
        stop_details: dict[str, Any] | None = None,
        host: str | None = None,
    ) -> None:
        set_field(self, "run_id", run_id)
        set_field(self, "n", n)
        set_field(self, "state", state)
        set_field(self, "stop_reason", stop_reason)
        set_field(self, "assistant", assistant)
        set_field(self, "tool_results", tool_results)
        set_field(self, "usage", usage)
        set_field(self, "request_id", request_id)
        set_field(self, "duration_ms", duration_ms)
        set_field(self, "pid", pid)
        set_field(self, "created_at", created_at)
        set_field(self, "completed_at", completed_at)
        set_field(self, "stop_details", stop_details)
        set_field(self, "host", host)

    def tool_uses(self) -> list[Block]:
        return [b for b in self.assistant if b.get("type") == "tool_use"]


class Task(Frozen):
    """A task the agent created; its id derives from its idempotency key."""

    __slots__ = tuple(
        "id title due status source_id notes idempotency_key run_id created_at done_at".split()
    )

    id: str
    title: str
    due: str | None
    status: str  # "open" | "done"
    source_id: str | None
    notes: str | None
    idempotency_key: str
    run_id: str | None
    created_at: str
    done_at: str | None

    def __init__(
        self,
        id: str,
        title: str,
        due: str | None,
        status: str,
        source_id: str | None,
        notes: str | None,
        idempotency_key: str,
        run_id: str | None,
        created_at: str,
        done_at: str | None = None,
    ) -> None:
        set_field(self, "id", id)
        set_field(self, "title", title)
        set_field(self, "due", due)
        set_field(self, "status", status)
        set_field(self, "source_id", source_id)
        set_field(self, "notes", notes)
        set_field(self, "idempotency_key", idempotency_key)
        set_field(self, "run_id", run_id)
        set_field(self, "created_at", created_at)
        set_field(self, "done_at", done_at)

    def to_json(self) -> dict[str, Any]:
        """The task as the tools and `--json` show it."""
        return {
            "id": self.id,
            "title": self.title,
            "due": self.due,
            "status": self.status,
            "source_id": self.source_id,
            "notes": self.notes,
            "idempotency_key": self.idempotency_key,
            "run_id": self.run_id,
            "created_at": self.created_at,
        }


class ToolEffect(Frozen):
    """The saved outcome of one executed tool call: what went back to the model."""

    __slots__ = tuple("run_id tool_use_id step_n tool_name content is_error created_at".split())

    run_id: str
    tool_use_id: str
    step_n: int
    tool_name: str
    content: str
    is_error: bool
    created_at: str

    def __init__(
        self,
        run_id: str,
        tool_use_id: str,
        step_n: int,
        tool_name: str,
        content: str,
        is_error: bool,
        created_at: str,
    ) -> None:
        set_field(self, "run_id", run_id)
        set_field(self, "tool_use_id", tool_use_id)
        set_field(self, "step_n", step_n)
        set_field(self, "tool_name", tool_name)
        set_field(self, "content", content)
        set_field(self, "is_error", is_error)
        set_field(self, "created_at", created_at)


class Event(Frozen):
    """One entry of a run's event log, from whichever process wrote it."""

    __slots__ = ("run_id", "seq", "kind", "detail", "pid", "host", "at")

    run_id: str
    seq: int
    kind: str
    detail: dict[str, Any]
    pid: int | None
    host: str | None
    at: str

    def __init__(
        self,
        run_id: str,
        seq: int,
        kind: str,
        detail: dict[str, Any],
        pid: int | None,
        host: str | None,
        at: str,
    ) -> None:
        set_field(self, "run_id", run_id)
        set_field(self, "seq", seq)
        set_field(self, "kind", kind)
        set_field(self, "detail", detail)
        set_field(self, "pid", pid)
        set_field(self, "host", host)
        set_field(self, "at", at)
