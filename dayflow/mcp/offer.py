"""Which MCP tools a run offers the model, under which names and schemas; pure.

- Only tools named in the server's `allow_tools` are offered, and never one the server listed
  malformed (`ListedTool.malformed`: the SDK's types refuse it), refused with why. A tool whose
  annotations do not say `readOnlyHint: true`, or say `destructiveHint: true`, is a write,
  refused unless the entry says `allow_writes = true`. Hints are never a permission: the list is.
- Names are `mcp__<server>__<tool>` reduced to `^[a-zA-Z0-9_-]{1,64}$`: other characters
  become `_`, and a name that is too long, or taken, keeps a prefix and ends in a short hash of
  the server and tool, so it is the same in every process.
- Schemas are made acceptable to the Messages API: `type: object` at the top; a top-level
  `allOf` / `anyOf` / `oneOf` merged into one object schema (the properties of every branch;
  required only what every branch requires), or the tool refused with a reason: one odd tool
  never fails a whole request.
- At most MAX_TOOLS a run, in the config file's order; descriptions capped at MAX_DESCRIPTION.
- A schema over MAX_SCHEMA characters (as compact JSON) refuses its tool: it would be sent,
  and paid for, with every request of the run, and kept in the run's row.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from dayflow.frozen import Frozen
from dayflow.mcp import PREFIX
from dayflow.mcp.config import ServerSpec

MAX_NAME = 64
MAX_TOOLS = 20
MAX_DESCRIPTION = 1000
MAX_SCHEMA = 20_000  # characters of an input schema's compact JSON (a few thousand tokens)
READ, WRITE = "read", "write"
_BAD = re.compile(r"[^A-Za-z0-9_-]")
_COMBINERS = ("allOf", "anyOf", "oneOf")


class ListedTool(Frozen):
    """A tool as its server listed it (the SDK's model, reduced to plain JSON)."""

    name: str
    description: str
    input_schema: Any
    read_only: bool | None = None  # annotations.readOnlyHint
    destructive: bool | None = None  # annotations.destructiveHint
    malformed: str | None = None  # why the SDK's types refuse it (then it is never offered)


class Offered(Frozen):
    """A tool the run offers: the name the model sees, its server's name for it, and whether
    a call is a read (saved when it returns) or a write (a saved effect with a pending mark)."""

    name: str
    server: str
    tool: str
    kind: str  # READ | WRITE
    definition: Any  # dict: name, description, input_schema

    def record(self) -> list[str]:
        """What the run keeps of it (its settings): enough for a resume to call it again."""
        return [self.server, self.tool, self.kind]


class Refused(Frozen):
    server: str
    tool: str
    reason: str
    wanted: bool = True  # in allow_tools: a run's notices name it


class Offer(Frozen):
    """The outcome of `offer`: what is offered, refused (and why) and left out over the cap."""

    offered: tuple[Offered, ...] = ()
    refused: tuple[Refused, ...] = ()
    left_out: tuple[Refused, ...] = ()

    def definitions(self) -> list[dict[str, Any]]:
        return [dict(o.definition) for o in self.offered]

    def catalog(self) -> dict[str, list[str]]:
        return {o.name: o.record() for o in self.offered}


def kind_of(spec: ServerSpec, tool: ListedTool) -> tuple[str, str | None]:
    """(READ or WRITE, why it is refused or None) for an allowlisted tool."""
    if tool.read_only is True and tool.destructive is not True:
        return READ, None
    if spec.allow_writes:
        return WRITE, None
    why = (
        "says destructiveHint: true"
        if tool.destructive is True
        else "does not say readOnlyHint: true"
    )
    return WRITE, f"{why}, so it may change something; allow_writes = true would allow it"


def offer(listed: Sequence[tuple[ServerSpec, Sequence[ListedTool]]]) -> Offer:
    """The run's MCP tools from each started server's listing, in the config's order."""
    offered: list[Offered] = []
    refused: list[Refused] = []
    left_out: list[Refused] = []
    taken: set[str] = set()
    for spec, tools in listed:
        by_name = {t.name: t for t in tools}
        for t in tools:
            if t.name not in spec.allow_tools:
                unwanted = "not in allow_tools" if t.malformed is None else malformed(t.malformed)
                refused.append(Refused(spec.name, t.name, unwanted, wanted=False))
        for wanted in spec.allow_tools:
            tool = by_name.get(wanted)
            if tool is None:
                refused.append(Refused(spec.name, wanted, "in allow_tools, but not listed"))
                continue
            if tool.malformed is not None:
                refused.append(Refused(spec.name, wanted, malformed(tool.malformed)))
                continue
            kind, why = kind_of(spec, tool)
            schema, problem = fit_schema(tool.input_schema)
            why = why or problem
            if why is not None:
                refused.append(Refused(spec.name, wanted, why))
                continue
            if len(offered) >= MAX_TOOLS:
                left_out.append(Refused(spec.name, wanted, f"over {MAX_TOOLS} MCP tools a run"))
                continue
            name = tool_name(spec.name, wanted, taken)
            taken.add(name)
            definition = {
                "name": name,
                "description": cap(tool.description or f"{wanted} ({spec.name})"),
                "input_schema": schema,
            }
            offered.append(Offered(name, spec.name, wanted, kind, definition))
    return Offer(tuple(offered), tuple(refused), tuple(left_out))


def malformed(why: str) -> str:
    """The reason a tool the server listed malformed is refused."""
    return f"the server listed it malformed ({why})"


def tool_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """`mcp__<server>__<tool>` reduced to the API's characters and MAX_NAME, unique in
    `taken`; the same inputs give the same name in every process."""
    base = _BAD.sub("_", f"{PREFIX}{server}__{tool}")
    taken = set(taken)
    if len(base) <= MAX_NAME and base not in taken:
        return base
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()
    for n in range(len(digest) - 8):
        suffix = "_" + digest[n : n + 8]
        name = base[: MAX_NAME - len(suffix)] + suffix
        if name not in taken:
            return name
    raise ValueError(f"no free name for {server}/{tool}")  # pragma: no cover - 2^32 collisions


def cap(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fit_schema(schema: Any) -> tuple[dict[str, Any], str | None]:
    """An input schema the Messages API accepts, and None; or ({}, why it cannot be)."""
    if not isinstance(schema, dict):
        return {}, "its input schema is not a JSON object"
    out = dict(schema)
    if out.get("type", "object") != "object":
        return {}, f"its input schema's type is {json.dumps(out.get('type'))[:40]}, not object"
    out["type"] = "object"
    found = [k for k in _COMBINERS if k in out]
    if found:
        merged, why = _merge(out, found)
        if why is not None:
            return {}, f"its input schema has a top-level {found[0]} that cannot be merged ({why})"
        out = merged
    if not isinstance(out.get("properties", {}), dict):
        return {}, "its input schema's properties are not an object"
    try:
        size = len(json.dumps(out, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        return {}, "its input schema cannot be written as JSON"
    if size > MAX_SCHEMA:
        return {}, f"its input schema is {size:,} characters (over {MAX_SCHEMA:,})"
    return out, None


def _merge(schema: dict[str, Any], combiners: list[str]) -> tuple[dict[str, Any], str | None]:
    """The top-level combiners folded into `schema`: allOf's branches all apply (their
    required add up); anyOf/oneOf's branches are alternatives (only what each requires)."""
    out = {k: v for k, v in schema.items() if k not in combiners}
    props: dict[str, Any] = dict(out.get("properties") or {})
    required: list[str] = list(out.get("required") or [])
    for key in combiners:
        branches = schema[key]
        if not isinstance(branches, list) or not branches:
            return {}, f"{key} is not a list of schemas"
        common: set[str] | None = None
        for branch in branches:
            if not isinstance(branch, dict) or branch.get("type", "object") != "object":
                return {}, "a branch is not an object schema"
            if any(k in branch for k in _COMBINERS):
                return {}, "a branch nests another combiner"
            for name, sub in (branch.get("properties") or {}).items():
                if name in props and props[name] != sub:
                    return {}, f"property {name[:40]!r} differs between branches"
                props[name] = sub
            wanted = set(branch.get("required") or [])
            if key == "allOf":
                required += [r for r in sorted(wanted) if r not in required]
            else:
                common = wanted if common is None else common & wanted
        if common:
            required += [r for r in sorted(common) if r not in required]
    out["properties"] = props
    if required:
        out["required"] = required
    else:
        out.pop("required", None)
    return out, None
