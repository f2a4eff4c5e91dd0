"""A loopback server that speaks the Message Batches API too, for the batch path's tests.

`FakeBatchAPI` is a `FakeAPI` (so `POST /v1/messages` still answers, from the same script or
responder: the normal API a batch item falls back to) that also serves

    POST /v1/messages/batches               create: {"requests": [{"custom_id", "params"}]}
    GET  /v1/messages/batches/{id}          retrieve, with processing_status and request_counts
    GET  /v1/messages/batches/{id}/results  the results as JSONL, once the batch has ended
    POST /v1/messages/batches/{id}/cancel   cancel: what is not processed yet becomes canceled

A batch ends on the `polls_to_end`-th retrieve (1: the first) unless `held` is set (a test
that must kill a driver while its batch is in progress holds it, then `release()`s it). When
it ends, each request is answered in order by the same script / responder as a normal call
(a `Fault` there makes the item errored), unless `outcome(custom_id)` says "errored",
"expired" or "canceled" for it. `create_faults` are answered to the next creates instead
(an overloaded 529, a 500). `creates` counts the batches made; `batches` keeps each one's
requests (the params exactly as received) and results.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakeapi import (
    Drop,
    FakeAPI,
    Fault,
    MessagesHandler,
    RecordedRequest,
    Reply,
    error_body,
    validate_request,
    wire_message,
)

BATCHES = "/v1/messages/batches"
STAMP = "2026-11-05T06:00:00Z"


@dataclass
class FakeBatch:
    id: str
    requests: list[dict[str, Any]]  # {"custom_id", "params"} as received
    status: str = "in_progress"  # in_progress | canceling | ended
    polls: int = 0
    canceled: bool = False
    results: list[dict[str, Any]] = field(default_factory=list)  # one JSONL line each

    def counts(self) -> dict[str, int]:
        tally = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if self.status != "ended":
            tally["processing"] = len(self.requests)
        for line in self.results:
            tally[line["result"]["type"]] += 1
        return tally


class FakeBatchAPI(FakeAPI):
    """A loopback Messages API with the Message Batches endpoints (see the module docstring)."""

    def __init__(self, *args: Any, polls_to_end: int = 1, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.polls_to_end = polls_to_end
        self.held = False
        self.outcome: Callable[[str], str] = lambda custom_id: "succeeded"
        self.batches: dict[str, FakeBatch] = {}
        self.creates = 0
        self.create_faults: list[Fault] = []  # answered to the next creates, in order
        self._batch_lock = threading.Lock()

    def __enter__(self) -> FakeBatchAPI:
        self.start()
        return self

    def handler_type(self) -> type[MessagesHandler]:
        return BatchesHandler

    def release(self) -> None:
        """Let held batches end at their next retrieve."""
        self.held = False

    @property
    def batch_items(self) -> list[dict[str, Any]]:
        """Every request submitted in any batch, in order."""
        return [r for b in self.batches.values() for r in b.requests]

    # called by the handler (under _batch_lock)
    def _create(self, body: Any) -> FakeBatch | str:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return "requests: a non-empty list is required"
        ids = [r.get("custom_id") for r in requests if isinstance(r, dict)]
        if len(ids) != len(requests) or len(set(ids)) != len(ids):
            return "requests: each needs a custom_id, unique within the batch"
        self.creates += 1
        batch = FakeBatch(f"msgbatch_fake{self.creates:04d}", requests)
        self.batches[batch.id] = batch
        return batch

    def _poll(self, batch: FakeBatch) -> None:
        batch.polls += 1
        if batch.status != "ended" and (batch.canceled or not self.held):
            if batch.canceled or batch.polls >= self.polls_to_end:
                self._end(batch)

    def _end(self, batch: FakeBatch) -> None:
        for request in batch.requests:
            custom_id, params = request["custom_id"], request.get("params")
            result = self._result(custom_id, params, batch.canceled)
            batch.results.append({"custom_id": custom_id, "result": result})
        batch.status = "ended"

    def _result(self, custom_id: str, params: Any, canceled: bool) -> dict[str, Any]:
        kind = "canceled" if canceled else self.outcome(custom_id)
        if kind != "succeeded":
            if kind == "errored":
                return {"type": "errored", "error": error_body("api_error", "Internal error")}
            return {"type": kind}
        problem = validate_request(params, extra_block_types=self.extra_block_types)
        if problem:
            return {"type": "errored", "error": error_body("invalid_request_error", problem)}
        item = self._next_item("/v1/messages", params)
        msg_id, _ = self._next_ids()
        if isinstance(item, Fault):
            return {"type": "errored", "error": error_body(item.type, item.message)}
        if isinstance(item, int | Drop):  # not a Messages answer: never scripted for a batch
            return {"type": "errored", "error": error_body("api_error", "bad script item")}
        assert isinstance(item, Reply)
        return {"type": "succeeded", "message": wire_message(item, params, msg_id)}

    def _wire(self, batch: FakeBatch) -> dict[str, Any]:
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": batch.counts(),
            "created_at": STAMP,
            "expires_at": "2026-11-06T06:00:00Z",
            "ended_at": STAMP if ended else None,
            "cancel_initiated_at": STAMP if batch.canceled else None,
            "archived_at": None,
            "results_url": f"{self.base_url}{BATCHES}/{batch.id}/results" if ended else None,
        }


class BatchesHandler(MessagesHandler):
    api: FakeBatchAPI

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if not path.startswith(BATCHES + "/"):
            return super().do_GET()
        self.close_connection = True
        record = self._record("GET", path, b"")
        if not self._authorized(record):
            return None
        api = self.api
        name, _, tail = path.removeprefix(BATCHES + "/").partition("/")
        with api._batch_lock:
            batch = api.batches.get(name)
            if batch is None or tail not in ("", "results"):
                return self._missing(path)
            if tail == "":
                api._poll(batch)
                return self._send_json(200, api._wire(batch), {"request-id": "req_batch"})
            if batch.status != "ended":
                return self._send_json(
                    400, error_body("invalid_request_error", "batch has not ended"), {}
                )
            data = "".join(json.dumps(line) + "\n" for line in batch.results).encode()
        self.send_response(200)
        self.send_header("content-type", "application/binary")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        if not path.startswith(BATCHES):
            return super().do_POST()
        self.close_connection = True
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        record = self._record("POST", path, raw)
        if not self._authorized(record):
            return None
        api = self.api
        with api._batch_lock:
            if path == BATCHES and api.create_faults:
                fault = api.create_faults.pop(0)
                record.status = fault.status
                body = error_body(fault.type, fault.message)
                return self._send_json(fault.status, body, {"request-id": "req_batch"})
            if path == BATCHES:
                made = api._create(record.json)
                if isinstance(made, str):
                    return self._reject(record, 400, "invalid_request_error", made)
                record.status = 200
                return self._send_json(200, api._wire(made), {"request-id": "req_batch"})
            name, _, tail = path.removeprefix(BATCHES + "/").partition("/")
            batch = api.batches.get(name)
            if batch is None or tail != "cancel":
                return self._missing(path)
            if batch.status != "ended":
                batch.canceled, batch.status = True, "canceling"
            record.status = 200
            return self._send_json(200, api._wire(batch), {"request-id": "req_batch"})

    def _record(self, method: str, path: str, raw: bytes) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        record = RecordedRequest(method, path, headers, raw, parsed)
        with self.api._lock:
            self.api.requests.append(record)
        return record

    def _authorized(self, record: RecordedRequest) -> bool:
        """The key and version checks of the Messages endpoint; False once answered 4xx."""
        headers = record.headers
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if not key or (self.api.api_key is not None and key != self.api.api_key):
            self._reject(record, 401, "authentication_error", "invalid x-api-key")
            return False
        if "anthropic-version" not in headers:
            self._reject(
                record, 400, "invalid_request_error", "anthropic-version: header is required"
            )
            return False
        return True

    def _missing(self, path: str) -> None:
        self._send_json(404, error_body("not_found_error", f"Not found: {path}"), {})
