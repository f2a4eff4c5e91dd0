"""A model's or an MCP server's answer is capped while it is read (issue 32.13's cousin): a
100 MB answer from the Claude API's address, a local model server or an MCP server over HTTP
was read whole (~400 MB resident) and only then refused. Each is now read through the cap the
calendar feeds are read with (`network.AnswerCap`, 50 MB, before and after decompressing) and
refused in one line as it passes it. The servers here send far more than the cap (or without
end); what they managed to send is what the client read, plus the sockets' buffers."""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import ModelError
from dayflow.models import ModelRequest
from dayflow.network import MAX_ANSWER_BYTES, AnswerCap, AnswerRefused
from dayflow.providers import local
from dayflow.providers.anthropic import AnthropicClient
from tests.harness import invoke

pytestmark = pytest.mark.slow  # loopback servers sending tens of megabytes

BUFFERS = 16 * 2**20  # what the two sockets' buffers may hold beyond what was read
CHUNK = b"a" * 65536
Answer = tuple[dict[str, str], Iterator[bytes]]  # headers and the body's chunks


class Server:
    """An HTTP/1.1 server on 127.0.0.1 that answers each request with `answer(method, path,
    body)`, its body sent without a length and the connection closed after it; `sent` counts
    the body bytes the client took."""

    def __init__(self, answer: Callable[[str, str, bytes], Answer]) -> None:
        self.answer, self.sent = answer, 0
        self.paths: list[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept()
        self._listener.close()
        self._thread.join(10)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            reader = conn.makefile("rb")
            line = reader.readline().decode()
            headers = {}
            while (h := reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = h.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = reader.read(int(headers.get("content-length") or 0))
            method, path = line.split(" ")[:2]
            self.paths.append(f"{method} {path}")
            head, chunks = self.answer(method, path, body)
            status = head.pop(":status", "200 OK")
            lines = [f"HTTP/1.1 {status}", "Connection: close"]
            lines += [f"{k}: {v}" for k, v in head.items()]
            try:
                conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
                for chunk in chunks:
                    conn.sendall(chunk)
                    self.sent += len(chunk)
            except OSError:
                return  # the client stopped reading: what the test wants


def endless_message(times: int = 4 * MAX_ANSWER_BYTES // len(CHUNK)) -> Iterator[bytes]:
    """A Messages API answer whose one text never ends (4 times the cap)."""
    yield b'{"type": "message", "role": "assistant", "content": [{"type": "text", "text": "'
    for _ in range(times):
        yield CHUNK


def gzip_bomb() -> Iterator[bytes]:
    """200 MB of a text, compressed to under 1 MB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    yield packer.compress(b'{"type": "message", "content": [{"type": "text", "text": "')
    ones = b"a" * 2**20
    for _ in range(200):
        if out := packer.compress(ones):
            yield out
    yield packer.flush()


def request() -> ModelRequest:
    messages = [{"role": "user", "content": "Brief me."}]
    return ModelRequest(
        model="claude-haiku-5-5", system="", tools=[], messages=messages, max_tokens=64
    )


def test_a_model_answer_past_the_cap_is_refused_as_it_is_read() -> None:
    with Server(lambda *_: ({"Content-Type": "application/json"}, endless_message())) as server:
        kw: dict[str, Any] = {"timeout": 60.0, "max_retries": 2, "sleep": lambda s: None}
        with AnthropicClient(api_key="test", base_url=server.url, **kw) as client:
            with pytest.raises(ModelError) as caught:
                client.create(request())
    assert str(caught.value) == "Anthropic API sent more than 50 MB; refused"
    assert not caught.value.retryable
    assert server.sent < MAX_ANSWER_BYTES + BUFFERS  # the old client read all 200 MB
    assert server.paths == ["POST /v1/messages"]  # not asked again: it would send it again


def test_a_local_models_answer_is_capped_the_same_way() -> None:
    """With a 1 MB cap (the same code, a smaller number: 50 MB takes seconds to send)."""
    with Server(lambda *_: ({"Content-Type": "application/json"}, endless_message())) as server:
        with local.make_client(server.url, max_retries=1, answer_cap=2**20) as client:
            with pytest.raises(ModelError) as caught:
                client.create(request())
    assert str(caught.value) == f"local model server at {server.url} sent more than 1 MB; refused"
    assert server.sent < 2**20 + BUFFERS and server.paths == ["POST /v1/messages"]


def test_a_compressed_model_answer_is_capped_once_decompressed() -> None:
    """A gzip bomb: under 1 MB sent, 200 MB once decompressed by httpx, then refused."""
    head = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    with Server(lambda *_: (dict(head), gzip_bomb())) as server:
        with AnthropicClient(api_key="test", base_url=server.url, answer_cap=2**20) as client:
            with pytest.raises(ModelError) as caught:
                client.create(request())
    assert str(caught.value) == "Anthropic API sent more than 1 MB once decompressed; refused"


def test_a_compressed_model_answer_is_still_read() -> None:
    wire = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-5-5",
        "content": [{"type": "text", "text": "All clear."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
    body = gzip.compress(json.dumps(wire).encode())
    head = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    with Server(lambda *_: (dict(head), iter([body]))) as server:
        with AnthropicClient(api_key="test", base_url=server.url, max_retries=0) as client:
            answer = client.create(request())
    assert answer.content == [{"type": "text", "text": "All clear."}]


def test_a_brief_on_a_local_server_that_never_stops_answering_fails_in_one_line(
    tmp_path: Path,
) -> None:
    with Server(lambda *_: ({"Content-Type": "application/json"}, endless_message())) as server:
        result = invoke(
            tmp_path / "d.db",
            lambda model, settings: local.make_client(server.url, answer_cap=2**20),
            "brief",
            "--date",
            "2026-11-05",
            "--model",
            "qwen3:8b",
        )
    assert result.code == 6, result.err
    (error,) = [line for line in result.err.splitlines() if line.startswith("error")]
    assert f": local model server at {server.url} sent more than 1 MB; refused; " in error
    assert "`dayflow resume " in error and "Traceback" not in result.err
    assert server.sent < 2**20 + BUFFERS


# --- the cap itself -------------------------------------------------------------------------


def test_the_cap_counts_a_stream_of_records_by_line() -> None:
    """Batch results and server-sent events are many short records: the cap is one's."""
    cap = AnswerCap(limit=100, per_line=True)
    for _ in range(1000):
        assert cap.feed(b"x" * 60 + b"\n") == b"x" * 60 + b"\n"
    with pytest.raises(AnswerRefused, match="sent a line of more than 100 bytes; refused"):
        for _ in range(3):
            cap.feed(b"y" * 60)


def test_the_cap_undoes_deflate_in_both_forms_and_refuses_what_it_does_not_read() -> None:
    text = b"an answer " * 1000
    for packed in (zlib.compress(text), zlib.compress(text, wbits=-15)):
        cap = AnswerCap("deflate")
        out = b"".join(cap.feed(packed[i : i + 7]) for i in range(0, len(packed), 7))
        cap.end()
        assert out == text
    with pytest.raises(AnswerRefused, match="in the 'br' encoding, which is not read"):
        AnswerCap("br")
    cap = AnswerCap("gzip")
    cap.feed(gzip.compress(text)[:-12])
    with pytest.raises(AnswerRefused, match="sent gzip data that does not decompress"):
        cap.end()


# --- MCP over HTTP --------------------------------------------------------------------------

TOOL = {
    "name": "ok",
    "description": "Fine.",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
}


def mcp_answers(huge: str) -> Callable[[str, str, bytes], Answer]:
    """A streamable-HTTP MCP server answering in JSON, whose `huge` method ("tools/list" or
    "tools/call") answers without end."""

    def answer(method: str, path: str, body: bytes) -> Answer:
        head = {"Content-Type": "application/json"}
        if method != "POST":
            return {":status": "405 Method Not Allowed", "Content-Length": "0"}, iter([])
        request = json.loads(body)
        if "id" not in request:
            return {":status": "202 Accepted", "Content-Length": "0"}, iter([])
        name = request.get("params", {}).get("name")
        if request["method"] == huge and name in (None, "huge"):
            start = {"jsonrpc": "2.0", "id": request["id"], "result": {"tools": [TOOL]}}
            opening = json.dumps(start).encode()[:-3] + b', "x": "'
            return head, iter([opening, *(CHUNK for _ in range(1000))])  # 64 MB
        result: dict[str, Any] = {"content": [{"type": "text", "text": "ok: fine"}]}
        if request["method"] == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "huge", "version": "1"},
            }
        elif request["method"] == "tools/list":
            result = {"tools": [TOOL, {**TOOL, "name": "huge"}]}
        reply = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        return head, iter([reply])

    return answer


def mcp_servers(url: str) -> Any:
    from dayflow.mcp.config import ServerSpec
    from dayflow.mcp.servers import Servers

    spec = ServerSpec(name="web", url=url, allow_tools=("ok", "huge"), tool_timeout=60.0)
    return Servers({}, specs_of=lambda _: (spec,))


def test_an_mcp_result_past_the_cap_is_that_calls_error_and_the_next_is_answered() -> None:
    with Server(mcp_answers("tools/call")) as server:
        servers = mcp_servers(server.url + "/mcp")
        try:
            assert servers.call(None, "web", "ok", {}) == ("ok: fine", False)
            content, is_error = servers.call(None, "web", "huge", {})
            sent = server.sent
            after = servers.call(None, "web", "ok", {})
        finally:
            servers.close()
    assert is_error
    assert content == "Error: huge's result was refused: the server sent more than 50 MB; refused"
    assert sent < MAX_ANSWER_BYTES + BUFFERS  # the old client read all 64 MB
    assert after == ("ok: fine", False)


def test_an_mcp_listing_past_the_cap_leaves_the_server_down_saying_why() -> None:
    with Server(mcp_answers("tools/list")) as server:
        servers = mcp_servers(server.url + "/mcp")
        try:
            prepared = servers.prepare(None)
        finally:
            servers.close()
    assert list(prepared.down) == [("web", "sent more than 50 MB; refused")]
    assert server.sent < MAX_ANSWER_BYTES + BUFFERS
