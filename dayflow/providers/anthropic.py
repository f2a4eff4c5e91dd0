"""The Claude provider: the only module that imports the `anthropic` SDK.

`anthropic` is imported inside `AnthropicClient.__init__` (it costs seconds to import), so
importing this module is cheap, but the CLI still imports it only on the path that calls the API.

Retries. The SDK's own retry loop honours `retry-after` with no upper bound (a `retry-after:
3600` sleeps an hour) and hides the attempt count. So the SDK is built with `max_retries=0` and
this module runs a small loop of its own: it retries what the SDK would (connection errors,
timeouts, 408, 409, 429, 5xx and 529, or whatever `x-should-retry` says), backs off 0.5 s
doubling to 8 s, honours `retry-after-ms` / `retry-after` up to `max_retry_wait` and, when the
server asks for longer than that, stops at once with a retryable `ModelError` (the run can be
resumed later) instead of making a person wait. That is simpler and easier to test than wrapping
the SDK's transport (the sleep is injected), and it lets the error say how many attempts it took.
The SDK sends no idempotency key, so each retried POST may be billed: keep `max_retries` small.
`timeout` bounds the whole answer, not each read (`_deadline_client`): a server that trickles
its answer is cut off and retried like one that says nothing. An answer is read no further
than `network.MAX_ANSWER_BYTES` (50 MB; a batch's results, one line of them), through the cap
the calendar feeds are read with (`network.cap_body`): past it the call fails at once, one
line, not retried (a server that sent 50 MB would send them again).

Prompt caching. Markers are added to a copy of the request, never to the caller's
`ModelRequest` (the store keeps unmarked turns, and what it keeps is what the next call sends):
one on the system prompt (sent as a single text block), which caches the tools and the system
together since the prefix order is tools, system, messages (on the last tool instead when there
is no system prompt), and one on the last cacheable block of the last message, which moves
forward with the conversation, plus one on the turn that was newest in the previous call, so
the history is read back from the cache at exactly the point it was written. At most 4
breakpoints are ever sent.

Message Batches (`submit_batch`, `batch_status`, `batch_results`, `cancel_batch`, for
`dayflow.batching`): the same SDK client, each batch request's params built by the same
`build_params` as a normal call and each result turned into the same `ModelResponse` (its
`batch_id` set). A create is retried only after an answer that surely made no batch (429, 503,
529): after a lost connection, a timeout or another 5xx a batch may exist, and a second would
pay for every request again.

Content blocks come back through `block.to_dict(mode="json")`: exactly the fields the API sent,
which it accepts back verbatim; a bare `model_dump()` adds null fields that the API rejects.
"""

from __future__ import annotations

import copy
import email.utils
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from dayflow.errors import ModelError
from dayflow.models import Message, ModelRequest, ModelResponse, Usage
from dayflow.network import MAX_ANSWER_BYTES, AnswerRefused
from dayflow.providers import ANTHROPIC_API_URL, CANCELED, ERRORED, EXPIRED, SUCCEEDED, BatchOutcome

EPHEMERAL = {"type": "ephemeral"}
MAX_CACHE_BREAKPOINTS = 4
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
# The most tokens one call can count in any field: far beyond any model's window, well inside
# the 64-bit integers both stores keep (an answer claiming more, or fewer than 0, is refused).
USAGE_MAX = 10**12
_UNCACHEABLE = {"thinking", "redacted_thinking"}
# Answers after which the server surely took nothing (rate limit, overloaded, unavailable).
_SURELY_REFUSED = (429, 503, 529)  # the API rejects cache_control on these
# The one ValueError the SDK raises before sending anything (a non-streaming max_tokens that
# may take longer than its timeout); any other comes from reading the answer.
_NOT_SENT = "Streaming is required"
# Statuses a gateway or a proxy answers with on the server's behalf: without the API's error
# body they are the gateway's words, not the server's.
_GATEWAY = (502, 504)
_T = TypeVar("_T")


class AnthropicClient:
    """A `ModelClient` backed by the Anthropic Messages API."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout: float = 120.0,
        max_retry_wait: float = 20.0,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        on_retry: Callable[[str], None] | None = None,
        label: str = "Anthropic API",
        environ: Mapping[str, str] | None = None,
        answer_cap: int = MAX_ANSWER_BYTES,
    ) -> None:
        import anthropic

        from dayflow.network import proxy_for

        self._anthropic = anthropic
        # The proxy is chosen here, not by httpx from the environment: never one for a server
        # on this machine (a local model's prompt and inbox), the environment's otherwise
        # (dayflow.network), and `proxy` says which for the run's header.
        self.proxy = proxy_for(base_url or ANTHROPIC_API_URL, environ or {})
        self._sdk = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,  # retries are ours: see the module docstring
            timeout=timeout,
            http_client=http_client or _deadline_client(anthropic, timeout, self.proxy, answer_cap),
        )
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_retry_wait = max_retry_wait
        self.label = label  # what errors call the server ("local model server at ...")
        self._sleep = sleep
        # Told before each retry (the CLI prints it on stderr): a hung or failing API is
        # never a silent wait.
        self.on_retry = on_retry

    def create(self, request: ModelRequest) -> ModelResponse:
        """Make one Messages API call (retrying transient failures); raises ModelError."""
        params = build_params(request)
        message = self._with_retries(lambda: self._sdk.messages.create(**params))
        if isinstance(message, str):  # a 200 that is not JSON (a proxy's or a web server's page)
            raise ModelError(f"{self.label} answered with no message: {message[:60]!r}")
        request_id = getattr(message, "_request_id", None)
        return _response(message, request.model, request_id, label=self.label)

    def submit_batch(self, requests: Sequence[tuple[str, ModelRequest]]) -> str:
        """Submit (custom_id, request) pairs as one Message Batch, each request's params built
        exactly as `create` builds them; return the batch id. Only what surely created nothing
        is retried (a refusal such as 429 or 529): a lost answer may have made a batch, and a
        second one would pay for every request again."""
        body: list[Any] = [{"custom_id": cid, "params": build_params(r)} for cid, r in requests]
        batch = self._with_retries(
            lambda: self._sdk.messages.batches.create(requests=body),
            unsure_ok=False,
        )
        return str(batch.id)

    def batch_status(self, batch_id: str) -> str:
        """The batch's processing_status ("in_progress", "canceling", "ended")."""
        batch = self._with_retries(lambda: self._sdk.messages.batches.retrieve(batch_id))
        return str(batch.processing_status)

    def batch_results(self, batch_id: str) -> dict[str, BatchOutcome]:
        """Each request's outcome in the ended batch, by custom_id (the results JSONL)."""
        lines = self._with_retries(lambda: list(self._sdk.messages.batches.results(batch_id)))
        return {line.custom_id: _outcome(line.custom_id, line.result, batch_id) for line in lines}

    def cancel_batch(self, batch_id: str) -> None:
        """Ask the API to cancel the batch's unprocessed requests."""
        self._with_retries(lambda: self._sdk.messages.batches.cancel(batch_id))

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The input tokens `request` would cost, or None if the API cannot say (one attempt)."""
        kwargs: dict[str, Any] = {"model": request.model, "messages": request.messages}
        if request.system:
            kwargs["system"] = request.system
        if request.tools:
            kwargs["tools"] = request.tools
        try:
            return int(self._sdk.messages.count_tokens(**kwargs).input_tokens)
        except Exception:  # an estimate is optional: any failure means "unknown"
            return None

    def list_models(self) -> list[str] | None:
        """The ids of the models the server serves (`GET /v1/models`), or None where it has no
        such endpoint (404); one attempt. An unreachable server is a ModelError."""
        sdk = self._anthropic
        try:
            page = self._sdk.models.list(limit=1000)
            return [str(m.id) for m in page.data]
        except sdk.NotFoundError:
            return None
        except sdk.APIStatusError as err:
            raise ModelError(_status_message(err, self.label), status=err.status_code) from None
        except sdk.APIConnectionError as err:
            if (refused := _refusal(err)) is not None:
                raise ModelError(f"{self.label} {refused}") from None
            raise ModelError(f"{self.label} connection error: {_cause(err)}") from None

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._sdk.close()

    def __enter__(self) -> AnthropicClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _with_retries(self, call: Callable[[], _T], *, unsure_ok: bool = True) -> _T:
        """`call()`, retried as the module docstring says; with `unsure_ok` False, a failure
        after which the request may have been taken (a lost connection, a timeout, a 5xx other
        than 503/529) is not retried."""
        sdk = self._anthropic
        attempt = 0
        while True:
            attempt += 1
            try:
                return call()
            except sdk.APIStatusError as err:
                headers = err.response.headers
                retryable = _is_retryable(err.status_code, headers.get("x-should-retry"))
                failure = _status_message(err, self.label)
                wait = _retry_after(headers)
                status, request_id = err.status_code, err.request_id
            except sdk.APIConnectionError as err:
                if (refused := _refusal(err)) is not None:  # an answer past the cap
                    raise ModelError(f"{self.label} {refused}") from None
                retryable, wait, status, request_id = True, None, None, None
                if isinstance(err, sdk.APITimeoutError):
                    failure = f"{self.label} timed out (no answer in {self.timeout:g}s)"
                else:
                    failure = f"{self.label} connection error: {_cause(err)}"
            except json.JSONDecodeError as err:  # the SDK read the answer as JSON: it was not
                raise ModelError(
                    f"{self.label} answered with a body that is not JSON ({err})"
                ) from None
            except RecursionError:  # JSON nested past what Python's reader can follow
                raise ModelError(
                    f"{self.label} answered with JSON nested too deeply to read"
                ) from None
            except RuntimeError as err:  # httpx's StreamError: a streamed answer past the cap
                if (refused := _refusal(err)) is None:
                    raise
                raise ModelError(f"{self.label} {refused}") from None
            except ValueError as err:
                if _NOT_SENT in str(err):  # the SDK refuses a huge max_tokens before sending
                    raise ModelError(f"{self.label} request not sent: {err}") from None
                # After the request went: an answer the SDK could not read (not UTF-8 ...).
                raise ModelError(
                    f"{self.label} answered with something that cannot be read "
                    f"({type(err).__name__}: {str(err)[:120]})"
                ) from None
            except sdk.AnthropicError as err:
                raise ModelError(f"{self.label} error: {err}") from err
            suffix = f" after {attempt} attempt{'s' if attempt > 1 else ''}"
            if not unsure_ok and status not in _SURELY_REFUSED:
                retryable = False
            if not retryable:
                raise ModelError(
                    failure + (suffix if attempt > 1 else ""),
                    status=status,
                    request_id=request_id,
                    retryable=False,
                ) from None
            if attempt > self.max_retries:
                raise ModelError(
                    failure + suffix, status=status, request_id=request_id, retryable=True
                ) from None
            if wait is not None and wait > self.max_retry_wait:
                raise ModelError(
                    f"{failure}{suffix}; the server asked to wait {wait:g}s "
                    f"(over the {self.max_retry_wait:g}s cap), try again later",
                    status=status,
                    request_id=request_id,
                    retryable=True,
                ) from None
            backoff = min(INITIAL_BACKOFF * 2 ** (attempt - 1), MAX_BACKOFF)
            pause = min(wait if wait and wait > 0 else backoff, self.max_retry_wait)
            if self.on_retry is not None:
                self.on_retry(
                    f"{failure}; retrying in {pause:g}s "
                    f"(attempt {attempt + 1} of {self.max_retries + 1})"
                )
            self._sleep(pause)


def _deadline_client(
    anthropic: Any, seconds: float, proxy: str | None = None, cap: int = MAX_ANSWER_BYTES
) -> Any:
    """The SDK's default HTTP client (its keep-alive and limits), going through `proxy` or
    straight to the server (the environment's proxy variables are not read by httpx: the
    caller chose), with a deadline on the whole answer: httpx's timeouts are per read, so a
    server that trickles a byte a second would otherwise be waited on forever. Past `seconds`
    the read raises httpx's ReadTimeout, which the SDK reports as a timeout (retried as
    one)."""
    import httpx2

    from dayflow.network import cap_body

    class Deadline(httpx2.SyncByteStream):
        def __init__(self, inner: Any, deadline: float, request: Any) -> None:
            self._inner, self._deadline, self._request = inner, deadline, request

        def __iter__(self) -> Any:
            for chunk in self._inner:
                if time.monotonic() > self._deadline:
                    raise httpx2.ReadTimeout(
                        f"the answer took longer than {seconds:g}s", request=self._request
                    )
                yield chunk

        def close(self) -> None:
            self._inner.close()

    class Client(anthropic.DefaultHttpxClient):  # type: ignore[misc, name-defined]
        def send(self, request: Any, *, stream: bool = False, **kw: Any) -> Any:
            deadline = time.monotonic() + seconds
            response = super().send(request, stream=True, **kw)
            # A batch's results are JSON lines, capped per line; any other answer is capped
            # whole (or by its Content-Type). Told by the path, not by `stream`: SDKs from
            # 2.17 on ask every answer as a stream and read it themselves.
            results = str(getattr(request.url, "path", "")).endswith("/results")
            cap_body(response, per_line=True if results else None, limit=cap)
            response.stream = Deadline(response.stream, deadline, request)
            if not stream:
                try:
                    response.read()
                except BaseException:
                    response.close()
                    raise
            return response

    if proxy is None:
        from dayflow.network import direct_client_options

        return Client(timeout=seconds, **direct_client_options())
    try:
        return Client(timeout=seconds, proxy=proxy)
    except (ImportError, ValueError) as err:  # SOCKS without socksio, or an unknown scheme
        from dayflow.errors import ConfigError
        from dayflow.network import shown_url

        why = str(err).split(". ")[0].rstrip(".")
        raise ConfigError(
            f"cannot use the proxy {shown_url(proxy)} from the environment ({why}); "
            "set NO_PROXY for this server or name an http:// proxy"
        ) from None


def _response(
    message: Any,
    model: str,
    request_id: str | None,
    batch_id: str | None = None,
    *,
    label: str = "the API",
) -> ModelResponse:
    """The SDK `message` as the plain `ModelResponse` the store keeps; an answer that is not
    a Messages API message, or has an impossible token count, is refused (ModelError) like
    any other bad answer."""
    wrong_shape = _shape_problem(message)
    if wrong_shape is not None:
        # The SDK builds its objects without validating them, so a server (or a proxy) that
        # answers 200 with something else would reach the store, or crash the loop.
        raise ModelError(
            f"{label} answered with something that is not a Messages API message ({wrong_shape})",
            request_id=request_id,
        )
    # A local server may leave out the cache counts, or usage altogether: 0, not a crash.
    usage = getattr(message, "usage", None)
    counts = {
        name: getattr(usage, name, None) or 0
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        )
    }
    wrong = [f"{k}={v!r}" for k, v in counts.items() if not _is_count(v)]
    if wrong:
        # A broken answer (or a broken proxy): no store can keep, and no bill has, such a
        # count. Refused like any other bad answer: the run fails resumably, one line.
        raise ModelError(
            f"{label} answered with an impossible token count ({', '.join(wrong)[:200]})",
            request_id=request_id,
        )
    details = getattr(message, "stop_details", None)
    try:
        # The SDK builds its models without validating them, so a value of an unexpected type
        # (citations: "x") made pydantic print a UserWarning per block on stderr as it dumped
        # it; the value is kept as sent, and `turns` judges the answer (one line if refused).
        blocks = [
            block.to_dict(mode="json", warnings=False)
            for block in getattr(message, "content", None) or []
        ]
        stop_details = details.to_dict(mode="json", warnings=False) if details is not None else None
    except (ValueError, RecursionError) as err:  # "Maximum serialization depth exceeded"
        raise ModelError(
            f"{label} answered with content that cannot be kept ({str(err)[:80]})",
            request_id=request_id,
        ) from None
    return ModelResponse(
        content=blocks,
        stop_reason=getattr(message, "stop_reason", None) or "",
        usage=Usage(**counts),
        model=getattr(message, "model", None) or model,
        request_id=request_id,
        stop_details=stop_details,
        batch_id=batch_id,
    )


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= USAGE_MAX


def _shape_problem(message: Any) -> str | None:
    """What makes `message` no Messages API message, in a few words; None when it is one."""
    from anthropic.types.message import Message as SdkMessage

    if not isinstance(message, SdkMessage):
        text = " ".join(str(message).split())[:60]
        return f"a {type(message).__name__}: {text!r}"
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return (
            "no content list"
            if content is None
            else f"content is {type(content).__name__}, not a list"
        )
    for block in content:
        kind = getattr(block, "type", None) if hasattr(block, "to_dict") else None
        if not isinstance(kind, str):
            return f"a content block that is a {type(block).__name__}, not a typed block"
    stop = getattr(message, "stop_reason", None)
    if stop is not None and not isinstance(stop, str):
        return f"stop_reason is {type(stop).__name__}, not a string"
    return None


def _outcome(custom_id: str, result: Any, batch_id: str) -> BatchOutcome:
    """One line of a batch's results as a `BatchOutcome` (an unusable answer is errored)."""
    kind = str(getattr(result, "type", ""))
    if kind == SUCCEEDED:
        message = result.message
        try:
            response = _response(message, str(message.model), None, batch_id)
        except ModelError as err:
            return BatchOutcome(custom_id, ERRORED, detail=str(err))
        return BatchOutcome(custom_id, SUCCEEDED, response)
    if kind == ERRORED:
        inner = getattr(getattr(result, "error", None), "error", None)
        why = f"{getattr(inner, 'type', 'error')}: {getattr(inner, 'message', '')}".strip()
        return BatchOutcome(custom_id, ERRORED, detail=why)
    return BatchOutcome(custom_id, kind if kind in (EXPIRED, CANCELED) else ERRORED, detail=kind)


def make_client(api_key: str, base_url: str | None, **kw: Any) -> AnthropicClient:
    """Build an `AnthropicClient`; `kw` are its keyword options."""
    return AnthropicClient(api_key=api_key, base_url=base_url, **kw)


def build_params(request: ModelRequest) -> dict[str, Any]:
    """The `messages.create` keyword arguments for `request`, cache markers added on copies."""
    tools = list(request.tools)
    messages = list(request.messages)
    budget = MAX_CACHE_BREAKPOINTS - _count_markers([tools, messages])
    params: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens}
    if request.system:
        if budget > 0:
            params["system"] = [
                {"type": "text", "text": request.system, "cache_control": EPHEMERAL}
            ]
            budget -= 1
        else:
            params["system"] = request.system
    elif tools and budget > 0 and "cache_control" not in tools[-1]:
        tools[-1] = {**copy.deepcopy(tools[-1]), "cache_control": dict(EPHEMERAL)}
        budget -= 1
    if tools:
        params["tools"] = tools
    if messages and budget > 0:
        messages[-1] = _mark_last_block(messages[-1])
        budget -= 1
    # The previous call's newest turn (its cache write) is marked too, so this call reads the
    # history back from the cache at exactly that point, however many blocks came after it.
    # (Not the job itself when it is a plain string: marking would turn it into a block, and
    # the same message must go out in the same form in every request.)
    previous = messages[-3] if len(messages) >= 3 else None
    if (
        previous
        and previous["role"] == "user"
        and isinstance(previous["content"], list)
        and budget > 0
    ):
        messages[-3] = _mark_last_block(messages[-3])
    params["messages"] = messages
    return params


def _mark_last_block(message: Message) -> Message:
    """A deep copy of `message` whose last cacheable block carries a cache marker."""
    marked = copy.deepcopy(message)
    content = marked["content"]
    if isinstance(content, str):
        if not content:
            return marked  # the API rejects cache_control on an empty text block
        marked["content"] = content = [{"type": "text", "text": content}]
    for block in reversed(content):
        if block.get("type") in _UNCACHEABLE or (block.get("type") == "text" and not block["text"]):
            continue
        if "cache_control" not in block:
            block["cache_control"] = dict(EPHEMERAL)
        break
    return marked


def _count_markers(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_count_markers(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_markers(v) for v in value)
    return 0


def _is_retryable(status: int, should_retry: str | None) -> bool:
    if should_retry in ("true", "false"):
        return should_retry == "true"
    return status in (408, 409, 429) or status >= 500


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, then `retry-after`), if any."""
    try:
        return float(headers["retry-after-ms"]) / 1000
    except (KeyError, TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        date = email.utils.parsedate_tz(value)
        return None if date is None else max(0.0, email.utils.mktime_tz(date) - time.time())


def _status_message(err: Any, label: str = "Anthropic API") -> str:
    kind = err.type or "error"
    detail = err.api_message or err.response.reason_phrase or "no message"
    text = f"{label} {err.status_code} {kind}: {detail}"
    if err.type is None and err.status_code in _GATEWAY:
        # No API error body: a gateway or proxy on the way said it, not the model server.
        reason = err.response.reason_phrase or "no message"
        text = (
            f"{label} not reached: {err.status_code} {reason} from a gateway or proxy "
            "on the way (not the server's own answer)"
        )
    if err.request_id:
        text += f" (request {err.request_id})"
    if err.status_code == 401 and label == "Anthropic API":
        text += "; check ANTHROPIC_API_KEY"
    return text


def _refusal(err: BaseException) -> AnswerRefused | None:
    """The cap's refusal behind an SDK or httpx error (`network.cap_body`), if it is one."""
    inner: BaseException | None = err
    while inner is not None:
        if isinstance(inner, AnswerRefused):
            return inner
        inner = inner.__cause__
    return None


def _cause(err: BaseException) -> str:
    """The innermost reason behind an SDK connection error ("Connection error." says little)."""
    inner: BaseException = err
    while inner.__cause__ is not None:
        inner = inner.__cause__
    return str(inner) or type(inner).__name__
