"""A loopback HTTP server that speaks enough of the Anthropic Messages API for tests.

Point the real SDK at it (`base_url=fake.base_url`, or `ANTHROPIC_BASE_URL` for a subprocess)
and script what it answers:

    with FakeAPI([reply([text("hi")]), error(529, "overloaded_error", "Overloaded")]) as fake:
        ...
        fake.requests[0].json, fake.requests[0].body, fake.requests[0].headers

Each `POST /v1/messages` takes the next item of the script (`FakeAPI(script)`,
`fake.enqueue(...)`); once the script is empty it asks `fake.responder`, a callable
`(request_json) -> item` (`responder_from_client(model)` puts any `ModelClient` behind the API);
with neither it answers 500 "script exhausted" with `x-should-retry: false`. So faults can be
scripted ahead of a responder. An item is a `Reply` (a success, sent as the full wire message
with a `request-id` header), a `Fault` (an HTTP error with an API error body and optional headers
such as `retry-after`) or a `Drop` (headers and half the body, then the connection closes); any
item can carry a `delay` (seconds) first, cut short when the server closes. A plain dict is
read as `Reply` fields. `count_tokens` answers from its own queue (`fake.count_script`: ints or
faults), else with an estimate.

`FakeAPI(local=Local(...))` answers the way a local server (Ollama, llama-server, LiteLLM in
front of them) does: message and tool ids not in Anthropic's shapes (`chatcmpl-…`, `call_…`:
a scripted `toolu_…` id is rewritten, deterministically), usage without the cache fields, no
`request-id` header, no `count_tokens` endpoint (404), `cache_control` accepted and ignored,
and `GET /v1/models` listing `Local.models`. Its quirks are flags: `tool_turns_end_turn`
reports a tool turn as `end_turn` (LiteLLM's Ollama path), `blank_text` puts an empty text
block before the content, `no_usage` leaves usage out. `LOCAL_SHAPED` has the first two.

Requests are checked the way the real API checks them (see `validate_request`); a bad one is
answered 400 `invalid_request_error`, recorded with its `error`, and consumes no script item.
Every request is recorded in order, raw body bytes included, so tests can compare bytes.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MODEL = "claude-haiku-5-5"

# Content block types a client may send, by role. Anything else is a 400, as on the real API.
USER_BLOCK_TYPES = {"text", "image", "document", "tool_result", "search_result", "container_upload"}
ASSISTANT_BLOCK_TYPES = {
    "text",
    "tool_use",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
}
# Fields the API accepts back on the blocks the loop round-trips. A null optional field (what a
# bare `model_dump()` adds: `citations: null`, `caller: null`) is rejected like an unknown one.
BLOCK_FIELDS = {
    "text": ({"text"}, {"citations", "cache_control"}),
    "tool_use": ({"id", "name", "input"}, {"cache_control", "caller"}),
    "tool_result": ({"tool_use_id"}, {"content", "is_error", "cache_control"}),
    "thinking": ({"thinking", "signature"}, set()),
    "redacted_thinking": ({"data"}, set()),
}
SAMPLING_FIELDS = ("temperature", "top_p", "top_k")  # gone in API version 2026-10-21
TOP_LEVEL_FIELDS = {
    "model",
    "max_tokens",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "metadata",
    "stop_sequences",
    "stream",
    "thinking",
    "cache_control",
    "container",
    "service_tier",
    "output_config",
    "diagnostics",
    "inference_geo",
    "speed",
    "mcp_servers",
    "context_management",
}
MAX_CACHE_BREAKPOINTS = 4


# --- script items ---------------------------------------------------------------------------


@dataclass
class Reply:
    """A successful Messages response; wrapped into the full wire JSON when sent."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    usage: dict[str, Any] | None = None  # None: an estimate from the request size
    model: str | None = None  # None: the model the request named
    stop_details: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Fault:
    """An HTTP error with an API error body: `{"type": "error", "error": {...}}`."""

    status: int
    type: str = "api_error"
    message: str = "Internal server error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Drop:
    """Send the status line, headers and part of a success body, then close the connection."""

    delay: float = 0.0


@dataclass
class Body:
    """A 200 (or `status`) answer of exactly these bytes: a server or proxy that answers
    something other than a Messages API message (HTML, another JSON shape, broken JSON)."""

    data: bytes
    content_type: str = "application/json"
    status: int = 200
    delay: float = 0.0
    every: float = 0.0  # > 0: the body is sent one byte at a time, this many seconds apart


Item = Reply | Fault | Drop | Body


@dataclass(frozen=True)
class Local:
    """How a local server's answers differ from the real API's (see the module docstring)."""

    tool_turns_end_turn: bool = False
    blank_text: bool = False
    no_usage: bool = False  # leave `usage` out of the answer altogether
    models: tuple[str, ...] = ("qwen3:8b",)  # what GET /v1/models lists; () answers 404


LOCAL_SHAPED = Local(tool_turns_end_turn=True, blank_text=True)
# Answered when the script is empty and there is no responder; not retried by the SDK.
EXHAUSTED = Fault(
    500, "api_error", "fake API: script exhausted", headers={"x-should-retry": "false"}
)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(id: str, name: str, input: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input or {}}


def reply(content: list[dict[str, Any]], stop_reason: str = "end_turn", **kw: Any) -> Reply:
    return Reply(content, stop_reason, **kw)


def error(status: int, type: str, message: str, **kw: Any) -> Fault:
    return Fault(status, type, message, **kw)


def overloaded(**kw: Any) -> Fault:
    return Fault(529, "overloaded_error", "Overloaded", **kw)


def rate_limited(retry_after: float | None = None, **kw: Any) -> Fault:
    headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
    return Fault(429, "rate_limit_error", "Rate limited", headers=headers, **kw)


def as_item(value: Any) -> Item:
    """Accept an item, a full wire message dict, or a dict of `Reply` fields."""
    if isinstance(value, Reply | Fault | Drop | Body):
        return value
    if isinstance(value, dict):
        keys = ("content", "stop_reason", "usage", "model", "stop_details")
        return Reply(**{k: value[k] for k in keys if value.get(k) is not None})
    raise TypeError(f"not a fake API response: {value!r}")


# --- validation -----------------------------------------------------------------------------


def validate_request(
    body: Any, *, count_tokens: bool = False, extra_block_types: Iterable[str] = ()
) -> str | None:
    """The real API's 400 message for `body`, or None when it would be accepted.

    `extra_block_types` are accepted in messages of either role on top of the known ones (to
    model a newer API that knows a block type this fake does not).
    """
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    required = ("model", "messages") if count_tokens else ("model", "max_tokens", "messages")
    for name in required:
        if name not in body:
            return f"{name}: Field required"
    for name in SAMPLING_FIELDS:
        if name in body:
            return f"{name}: Extra inputs are not permitted"
    unknown = sorted(set(body) - TOP_LEVEL_FIELDS)
    if unknown:
        return f"{unknown[0]}: Extra inputs are not permitted"
    if body.get("stream"):
        return "stream: this fake API does not stream"
    if not count_tokens and (not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1):
        return "max_tokens: must be a positive integer"
    problem = _validate_tools(body.get("tools", [])) or _validate_system(body.get("system", ""))
    if problem:
        return problem
    problem = _validate_messages(body["messages"], set(extra_block_types))
    if problem:
        return problem
    markers = count_cache_control(body.get("tools")) + count_cache_control(body.get("system"))
    markers += count_cache_control(body["messages"])
    if markers > MAX_CACHE_BREAKPOINTS:
        return (
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {markers}."
        )
    return None


def _validate_tools(tools: Any) -> str | None:
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            return f"tools.{i}.name: Field required"
        if "type" not in tool and not isinstance(tool.get("input_schema"), dict):
            return f"tools.{i}.input_schema: Field required"
        problem = _validate_cache_control(tool, f"tools.{i}")
        if problem:
            return problem
    return None


def _validate_system(system: Any) -> str | None:
    if isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid string or list"
    for i, block in enumerate(system):
        problem = _validate_block(block, {"text"}, f"system.{i}")
        if problem:
            return problem
    return None


def _validate_cache_control(obj: dict[str, Any], where: str) -> str | None:
    if "cache_control" not in obj:
        return None
    marker = obj["cache_control"]
    if not isinstance(marker, dict) or marker.get("type") != "ephemeral":
        return f"{where}.cache_control: Input should be {{'type': 'ephemeral'}}"
    if set(marker) - {"type", "ttl"} or marker.get("ttl", "5m") not in ("5m", "1h"):
        return f"{where}.cache_control: invalid fields"
    if obj.get("type") == "text" and not obj.get("text"):
        return f"{where}: cache_control cannot be set for empty text blocks"
    if obj.get("type") in ("thinking", "redacted_thinking"):
        return f"{where}: thinking blocks cannot be cached directly"
    return None


def _validate_block(block: Any, allowed: set[str], where: str) -> str | None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return f"{where}.type: Field required"
    kind = block["type"]
    if kind not in allowed:
        return (
            f"{where}: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags"
        )
    if kind in BLOCK_FIELDS:
        required, optional = BLOCK_FIELDS[kind]
        for name in required:
            if name not in block:
                return f"{where}.{kind}.{name}: Field required"
        for name, value in block.items():
            if name != "type" and name not in required and (name not in optional or value is None):
                return f"{where}.{kind}.{name}: Extra inputs are not permitted"
    if kind == "text" and not isinstance(block["text"], str):
        return f"{where}.text: Input should be a valid string"
    if kind == "tool_use" and not isinstance(block["input"], dict):
        return f"{where}.input: Input should be a valid dictionary"
    if kind == "tool_result":
        content = block.get("content", "")
        if not isinstance(content, str):
            if not isinstance(content, list):
                return f"{where}.content: Input should be a valid string or list"
            for j, inner in enumerate(content):
                problem = _validate_block(
                    inner, {"text", "image", "document", "search_result"}, f"{where}.content.{j}"
                )
                if problem:
                    return problem
        if "is_error" in block and not isinstance(block["is_error"], bool):
            return f"{where}.is_error: Input should be a valid boolean"
    return _validate_cache_control(block, where)


def _validate_messages(messages: Any, extra: set[str]) -> str | None:
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    merged: list[tuple[str, list[Any]]] = []  # the API merges consecutive same-role turns
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
            allowed = USER_BLOCK_TYPES if message["role"] == "user" else ASSISTANT_BLOCK_TYPES
            allowed = allowed | extra
            for j, block in enumerate(blocks):
                problem = _validate_block(block, allowed, f"messages.{i}.content.{j}")
                if problem:
                    return problem
                if block["type"] == "text" and not block["text"].strip():
                    return "messages: text content blocks must contain non-whitespace text"
        else:
            return f"messages.{i}.content: Field required"
        if merged and merged[-1][0] == message["role"]:
            merged[-1][1].extend(blocks)
        else:
            merged.append((message["role"], list(blocks)))
    if merged[0][0] != "user":
        return 'messages: first message must use the "user" role'
    for i, (role, blocks) in enumerate(merged):
        if role != "user":
            continue
        previous = merged[i - 1][1] if i > 0 else []
        expected = [b["id"] for b in previous if b.get("type") == "tool_use"]
        results = []
        for block in blocks:
            if block.get("type") != "tool_result":
                break
            results.append(block["tool_use_id"])
        stray = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        unknown = [tid for tid in stray if tid not in expected]
        if unknown:
            return (
                f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{unknown[0]}. Each `tool_result` block must have a corresponding `tool_use` "
                "block in the previous message."
            )
        if expected and (sorted(results) != sorted(expected) or len(stray) != len(results)):
            return _missing_results(expected, i)
    if merged[-1][0] == "assistant" and any(b.get("type") == "tool_use" for b in merged[-1][1]):
        ids = [b["id"] for b in merged[-1][1] if b.get("type") == "tool_use"]
        return _missing_results(ids, len(merged))
    return None


def _missing_results(ids: list[str], index: int) -> str:
    return (
        f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(ids)}. Each `tool_use` block must have a corresponding `tool_result` "
        "block in the next message, before any other content."
    )


def count_cache_control(value: Any) -> int:
    """How many places in `value` carry a `cache_control` (each one is a breakpoint)."""
    if isinstance(value, dict):
        own = 1 if "cache_control" in value else 0
        return own + sum(count_cache_control(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(count_cache_control(v) for v in value)
    return 0


# --- the server -----------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as received. `status` and `error` are filled in once it is answered."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    json: Any
    status: int | None = None  # -1: the connection was dropped mid-response
    error: str | None = None  # why it was not answered as scripted (a 400, an empty script)


Responder = Callable[[dict[str, Any]], Any]


class FakeAPI:
    """A threaded loopback Messages API. Use as a context manager, or `start()` / `close()`."""

    def __init__(
        self,
        script: Iterable[Any] = (),
        *,
        responder: Responder | None = None,
        api_key: str | None = None,
        extra_block_types: Iterable[str] = (),
        local: Local | None = None,
    ) -> None:
        self.local = local
        self.script: deque[Any] = deque(script)
        self.count_script: deque[Any] = deque()
        self.responder = responder
        self.api_key = api_key  # None: any non-empty key is accepted
        self.extra_block_types = set(extra_block_types)
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._served = 0

    # lifecycle
    def start(self) -> FakeAPI:
        handler = type("Handler", (self.handler_type(),), {"api": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        with self._lock:
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._server.server_close()  # joins the handler threads
        assert self._thread is not None
        self._thread.join()
        self._server = None

    def __enter__(self) -> FakeAPI:
        return self.start()

    def handler_type(self) -> type[MessagesHandler]:
        """The request handler (a server that speaks more of the API subclasses it)."""
        return MessagesHandler

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeAPI is not started"
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # bound to 127.0.0.1
        return f"http://{host}:{port}"

    # scripting and inspection
    def enqueue(self, *items: Any) -> None:
        with self._lock:
            self.script.extend(items)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The `POST /v1/messages` calls received, rejected ones included."""
        return [r for r in self.requests if r.path == "/v1/messages"]

    @property
    def rejected(self) -> list[RecordedRequest]:
        """Requests not answered as scripted: validation errors, an exhausted script."""
        return [r for r in self.requests if r.error is not None]

    # called by the handler
    def _next_item(self, path: str, body: dict[str, Any]) -> Item | int:
        with self._lock:
            if path.endswith("/count_tokens"):
                if self.count_script:
                    return self.count_script.popleft()  # type: ignore[no-any-return]
                return max(1, len(json.dumps(body)) // 4)
            if self.script:
                return as_item(self.script.popleft())
            responder = self.responder
        if responder is None:
            return EXHAUSTED
        return as_item(responder(body))

    def _next_ids(self) -> tuple[str, str]:
        with self._lock:
            self._served += 1
            n = self._served
        if self.local is not None:
            return f"chatcmpl-{n:04d}", ""
        return f"msg_fake{n:04d}", f"req_fake{n:04d}"


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # so server_close() joins every handler thread: nothing outlives close()


class MessagesHandler(BaseHTTPRequestHandler):
    api: FakeAPI
    protocol_version = "HTTP/1.1"
    timeout = 10  # a stuck client cannot hold the server open forever

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.api._lock:
            self.api._connections.add(self.connection)

    def finish(self) -> None:
        with self.api._lock:
            self.api._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def do_GET(self) -> None:
        self.close_connection = True
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = RecordedRequest("GET", path, headers, b"", None)
        with self.api._lock:
            self.api.requests.append(record)
        local = self.api.local
        if path == "/v1/models" and local is not None and local.models:
            record.status = 200
            data = [{"type": "model", "id": m, "display_name": m} for m in local.models]
            body = {"data": data, "has_more": False, "first_id": data[0]["id"]}
            body["last_id"] = data[-1]["id"]
            return self._send_json(200, body, {})
        record.status = 404
        self._send_json(404, error_body("not_found_error", f"Not found: {path}"), {})

    def do_POST(self) -> None:
        self.close_connection = True  # one request per connection: nothing idles at close()
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        record = RecordedRequest("POST", path, headers, raw, parsed)
        with self.api._lock:
            self.api.requests.append(record)
        try:
            self._answer(record)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test): nothing to answer

    def _answer(self, record: RecordedRequest) -> None:
        api, headers = self.api, record.headers
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if not key or (api.api_key is not None and key != api.api_key):
            return self._reject(record, 401, "authentication_error", "invalid x-api-key")
        if "anthropic-version" not in headers:
            return self._reject(
                record, 400, "invalid_request_error", "anthropic-version: header is required"
            )
        if record.path not in ("/v1/messages", "/v1/messages/count_tokens"):
            return self._reject(record, 404, "not_found_error", f"Not found: {record.path}")
        counting = record.path.endswith("/count_tokens")
        if counting and api.local is not None:  # local servers have no count_tokens
            record.status = 404
            return self._send_json(
                404, error_body("not_found_error", f"Not found: {record.path}"), {}
            )
        body = record.json
        problem = validate_request(
            body, count_tokens=counting, extra_block_types=api.extra_block_types
        )
        if problem:
            return self._reject(record, 400, "invalid_request_error", problem)
        item = api._next_item(record.path, body)
        msg_id, request_id = api._next_ids()
        if isinstance(item, int):
            record.status = 200
            return self._send_json(200, {"input_tokens": item}, {"request-id": request_id})
        if item.delay and api._stopping.wait(item.delay):
            return  # closing: do not answer
        if isinstance(item, Body):
            record.status = item.status
            return self._send_raw(item, request_id)
        if isinstance(item, Fault):
            record.status = item.status
            if item is EXHAUSTED:
                record.error = item.message
            return self._send_json(
                item.status,
                error_body(item.type, item.message),
                {"request-id": request_id, **item.headers},
            )
        wire = wire_message(
            Reply([text("partial")]) if isinstance(item, Drop) else item, body, msg_id
        )
        if api.local is not None:
            wire = _local_shape(wire, api.local)
        if isinstance(item, Drop):
            record.status = -1
            return self._drop(wire, request_id)
        record.status = 200
        head = {"request-id": request_id} if request_id else {}
        self._send_json(200, wire, {**head, **item.headers})

    def _reject(self, record: RecordedRequest, status: int, kind: str, message: str) -> None:
        record.status, record.error = status, message
        self._send_json(
            status,
            error_body(kind, message),
            {"request-id": "req_fake_rejected", "x-should-retry": "false"},
        )

    def _send_json(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, item: Body, request_id: str) -> None:
        self.send_response(item.status)
        self.send_header("content-type", item.content_type)
        self.send_header("content-length", str(len(item.data)))
        self.send_header("connection", "close")
        self.send_header("request-id", request_id)
        self.end_headers()
        if item.every <= 0:
            self.wfile.write(item.data)
            return
        for i in range(len(item.data)):  # a server that trickles its answer
            self.wfile.write(item.data[i : i + 1])
            self.wfile.flush()
            if self.api._stopping.wait(item.every):
                return

    def _drop(self, wire: dict[str, Any], request_id: str) -> None:
        data = json.dumps(wire).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", request_id)
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)


def _local_shape(wire: dict[str, Any], local: Local) -> dict[str, Any]:
    """`wire` as a local server would send it: its own tool ids, no cache counts, quirks."""
    content = []
    for block in wire["content"]:
        if block.get("type") == "tool_use" and str(block.get("id", "")).startswith("toolu_"):
            digest = hashlib.sha256(block["id"].encode()).hexdigest()[:16]
            block = {**block, "id": f"call_{digest}"}
        content.append(block)
    if local.blank_text:
        content.insert(0, text(""))
    usage = {k: v for k, v in wire["usage"].items() if not k.startswith("cache_")}
    stop = wire["stop_reason"]
    if local.tool_turns_end_turn and stop == "tool_use":
        stop = "end_turn"
    shaped = {**wire, "content": content, "usage": usage, "stop_reason": stop}
    if local.no_usage:
        del shaped["usage"]
    return shaped


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def wire_message(item: Reply, request: dict[str, Any], msg_id: str) -> dict[str, Any]:
    usage = item.usage or {
        "input_tokens": max(1, len(json.dumps(request)) // 4),
        "output_tokens": max(1, len(json.dumps(item.content)) // 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    wire: dict[str, Any] = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": item.model or request.get("model", DEFAULT_MODEL),
        "content": item.content,
        "stop_reason": item.stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    if item.stop_details is not None:
        wire["stop_details"] = item.stop_details
    return wire


# --- plugging in a ModelClient and pytest -----------------------------------------------------


def slowed(responder: Responder, delay: float) -> Responder:
    """`responder` with each of its replies held back `delay` seconds (errors and drops go at
    once): a model slow enough for another process to arrive while it answers."""

    def respond(body: dict[str, Any]) -> Any:
        item = responder(body)
        return replace(item, delay=delay) if isinstance(item, Reply) else item

    return respond


def responder_from_client(client: Any) -> Responder:
    """A responder that answers each request with `client.create(...)` (e.g. the offline model).

    Cache markers are stripped first (and the last message's marked single text block turned
    back into a string), so the client sees the request as the caller stored it.
    A `ModelError` from the client becomes an API error with its status (500 when it has none).
    """
    from dayflow.errors import ModelError
    from dayflow.models import ModelRequest

    def respond(body: dict[str, Any]) -> Item:
        clean = strip_cache_control(body)
        last = body["messages"][-1] if body.get("messages") else {}
        if _is_marked_string(last.get("content")):
            # The provider turned a string into a text block to mark it: undo that too.
            clean["messages"][-1]["content"] = last["content"][0]["text"]
        system = clean.get("system", "")
        if isinstance(system, list):
            system = "".join(block.get("text", "") for block in system)
        request = ModelRequest(
            model=clean["model"],
            system=system,
            tools=clean.get("tools", []),
            messages=clean["messages"],
            max_tokens=clean["max_tokens"],
        )
        try:
            response = client.create(request)
        except ModelError as err:
            return Fault(err.status or 500, "api_error", str(err))
        u = response.usage
        usage = {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
        }
        return Reply(
            response.content, response.stop_reason, usage, response.model, response.stop_details
        )

    return respond


def _is_marked_string(content: Any) -> bool:
    return (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and set(content[0]) == {"type", "text", "cache_control"}
        and content[0]["type"] == "text"
    )


def strip_cache_control(value: Any) -> Any:
    """`value` without cache markers (the provider adds them on the wire, never in the rows)."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def serve_fake_api() -> Iterator[FakeAPI]:
    """Generator for a pytest fixture: `fake_api = pytest.fixture(serve_fake_api)` in conftest.

    Yields a started `FakeAPI` with an empty script (call `fake.enqueue(...)` or set
    `fake.responder`), and closes it after the test.
    """
    with FakeAPI() as fake:
        yield fake
