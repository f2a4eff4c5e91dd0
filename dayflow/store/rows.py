"""How rows become the plain dataclasses the store returns, and how values are stored."""

from __future__ import annotations

import json
from typing import Any

from dayflow.models import Run, RunSettings, Step, Task, ToolEffect, Usage
from dayflow.store.sql import Row

# Steps are numbered 1..n without gaps, so MAX(n) (one seek on the primary key) is the count.
RUN_SELECT = (
    "SELECT r.*, COALESCE((SELECT MAX(n) FROM steps s WHERE s.run_id = r.id), 0) AS step_count,"
    " (SELECT s.host FROM steps s WHERE s.run_id = r.id ORDER BY s.n DESC LIMIT 1) AS last_host"
    " FROM runs r"
)


def dump(value: Any) -> str:
    """Compact and key-order preserving: the stored text is what goes back on the wire."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def like_prefix(prefix: str) -> str:
    """A LIKE pattern (with ESCAPE '\\') matching strings that start with `prefix`."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def run_row(row: Row, status: str) -> Run:
    """The run in `row` (selected with `RUN_SELECT`), showing `status` as its status."""
    return Run(
        id=row["id"],
        status=status,
        stored_status=row["status"],
        model=row["model"],
        brief_date=row["brief_date"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        finished_at=row["finished_at"],
        system=row["system"],
        tools=json.loads(row["tools_json"]),
        user_msg=json.loads(row["user_msg_json"]),
        max_tokens=row["max_tokens"],
        max_steps=row["max_steps"],
        budget=row["budget"],
        task_cap=row["task_cap"],
        steps=row["step_count"],
        usage=usage(row),
        model_calls=row["step_count"],
        final_text=row["final_text"],
        reason=row["reason"],
        request_id=row["request_id"],
        estimated=bool(row["estimated"]),
        owner_pid=row["owner_pid"],
        owner_host=row["owner_host"],
        lease_expires_at=row["lease_expires_at"],
        version=row["version"],
        settings=RunSettings.from_json(json.loads(row["settings_json"])),
        parent_run_id=row["parent_run_id"],
        forked_at_step=row["forked_at_step"],
        pruned_at=row["pruned_at"],
        redacted_at=row["redacted_at"],
        host=row["last_host"] or row["owner_host"],
    )


def usage(row: Row) -> Usage:
    """A run's totals or a step's usage: both rows name the four parts alike."""
    return Usage(
        row["input_tokens"],
        row["output_tokens"],
        row["cache_creation_tokens"],
        row["cache_read_tokens"],
    )


def step_row(r: Row) -> Step:
    details = r["stop_details_json"]
    return Step(
        run_id=r["run_id"],
        n=r["n"],
        state=r["state"],
        stop_reason=r["stop_reason"],
        assistant=json.loads(r["assistant_json"]),
        tool_results=None if r["tool_results_json"] is None else json.loads(r["tool_results_json"]),
        usage=usage(r),
        request_id=r["request_id"],
        duration_ms=r["duration_ms"],
        pid=r["pid"],
        created_at=r["created_at"],
        completed_at=r["completed_at"],
        stop_details=None if details is None else json.loads(details),
        host=r["host"],
    )


def effect_row(r: Row) -> ToolEffect:
    return ToolEffect(
        r["run_id"],
        r["tool_use_id"],
        r["step_n"],
        r["tool_name"],
        r["content"],
        bool(r["is_error"]),
        r["created_at"],
    )


def task_row(r: Row) -> Task:
    return Task(
        id=r["id"],
        title=r["title"],
        due=r["due"],
        status=r["status"],
        source_id=r["source_id"],
        notes=r["notes"],
        idempotency_key=r["idempotency_key"],
        run_id=r["run_id"],
        created_at=r["created_at"],
        done_at=r["done_at"],
    )
