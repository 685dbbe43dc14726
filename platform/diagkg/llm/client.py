"""One client for any OpenAI-compatible chat-completions endpoint (OpenAI,
OpenRouter, Ollama, vLLM, llama.cpp), through the ``openai`` package.

:meth:`LLMClient.ask` sends chat messages and returns one JSON object that
follows a JSON schema. How the schema reaches the model is the settings'
``structured`` mode:

* ``tools`` (the default) — the schema is the parameters of one function tool
  and the call is forced (``tool_choice``);
* ``json_schema`` — ``response_format={"type": "json_schema", ...}``;
* ``json_object`` — ``response_format={"type": "json_object", "schema": ...}``
  (llama.cpp and vLLM enforce the schema; others only promise JSON).

An endpoint that refuses a mode (HTTP 400) gets the next one down the list,
for the rest of the session (the fallback). A reply that is not JSON gets
one repair (code fences stripped, the first JSON object in the text taken)
before it counts as unparseable.

Every attempt is a :class:`~diagkg.llm.records.CallRecord` in the session's
:class:`~diagkg.llm.records.CallLog`. Timeouts, 429s, 5xx, replies cut off at
the token limit (finish reason ``length``) and unparseable replies are retried
after a doubling wait, ``retries`` times; then :class:`LLMFailure` says why
(:class:`FailureCause`), and the runner ends the session with
``llm_truncation``. A request the endpoint refuses outright (a 4xx other than
429 once no lower structured-output mode remains, such as a prompt longer than
the model's context) is recorded and not retried (cause ``refused``). A
request that would take a session past its cost limit is not sent. Requests toward one endpoint share an :class:`AdaptiveLimit`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import LLMTruncation
from ..kg.waiting import StillRunning, in_thread
from . import shared_money
from .bounded import ReplyTooLarge, bounded_http_client, reply_limit, too_large
from .records import CallLog, CallRecord, FailureCause, endpoint_key, request_key
from .settings import STRUCTURED_MODES, LLMSettings

if TYPE_CHECKING:  # pragma: no cover
    from openai import OpenAI


NOT_A_COMPLETION = "the endpoint's answer is not a chat completion"


class LLMFailure(LLMTruncation):
    """A language model's reply could not be used after the retries; ``cause`` says why."""

    def __init__(self, cause: FailureCause, detail: str):
        self.cause = cause
        super().__init__(f"{cause.value}: {detail}")


class _PastDeadline(Exception):
    """A request's answer had not come in whole within ``timeout``."""


class ResponseCache(Protocol):
    """Where replies to fixed inputs are kept (the store's ``cache/llm`` graph)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, model: str, response: dict[str, Any]) -> None: ...


class AdaptiveLimit:
    """How many requests may be in flight toward one endpoint: grows by one
    after each success up to the ceiling, halves after a 429 (AIMD)."""

    def __init__(self, ceiling: int):
        self.ceiling = ceiling
        self.limit = ceiling
        self.active = 0
        self._cond = threading.Condition()

    def __enter__(self) -> "AdaptiveLimit":
        with self._cond:
            while self.active >= self.limit:
                self._cond.wait()
            self.active += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self.active -= 1
            self._cond.notify_all()

    def succeeded(self) -> None:
        with self._cond:
            self.limit = min(self.ceiling, self.limit + 1)
            self._cond.notify_all()

    def throttled(self) -> None:
        with self._cond:
            self.limit = max(1, self.limit // 2)

    def set_ceiling(self, ceiling: int) -> None:
        """A new ceiling, kept with the requests in flight and what 429s taught (lower at once, higher by successes)."""
        with self._cond:
            self.ceiling = ceiling
            self.limit = min(self.limit, ceiling)
            self._cond.notify_all()


_LIMITS: dict[str, AdaptiveLimit] = {}
_LIMITS_LOCK = threading.Lock()


def limit_for(base_url: str, ceiling: int) -> AdaptiveLimit:
    """The one :class:`AdaptiveLimit` of an endpoint in this process, with ``ceiling`` (the settings of the last
    client to ask: a client with another ``concurrency`` changes it in place; a new limiter in its place counted
    none of the requests in flight under the old one, so two settings taking turns bounded nothing)."""
    with _LIMITS_LOCK:
        found = _LIMITS.get(base_url)
        if found is None:
            found = _LIMITS[base_url] = AdaptiveLimit(ceiling)
        elif found.ceiling != ceiling:
            found.set_ceiling(ceiling)
        return found


def repair_json(text: str) -> Any:
    """The JSON value of a reply: as it is, or else the first JSON object in it
    (after code fences are dropped); control characters such as a raw line break
    inside a string (which small models write, and which a grammar may let
    through) are accepted. Raises ``ValueError`` when there is none."""
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        pass
    stripped = text.replace("```json", "```").replace("```", "\n")
    decoder = json.JSONDecoder(strict=False)
    for start, ch in enumerate(stripped):
        if ch == "{":
            try:
                value, _ = decoder.raw_decode(stripped[start:])
                return value
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON object in the reply")


class LLMClient:
    """Asks one model for JSON objects; records every attempt in ``log``."""

    def __init__(self, settings: LLMSettings, log: CallLog, cache: ResponseCache | None = None,
                 role: str = "assistant", sleep: Any = time.sleep):
        if log.replay:     # a replay asks with the recorded model and parameters
            first = next((r for r in log.replay if r.role == role and r.key), None)
            if first is not None:
                p = first.parameters
                settings = replace(settings, model=first.model, temperature=float(p.get("temperature", 0.0)),
                                   max_tokens=int(p.get("max_tokens", settings.max_tokens)),
                                   structured=str(p.get("structured", settings.structured)))
        self.settings = settings
        self.log = log
        self.cache = cache
        self.role = role
        self.mode = settings.structured
        self._sleep = sleep
        self._asked_wait = 0.0       # what the endpoint's last 429 asked for (Retry-After), in seconds
        self._openai: OpenAI | None = None

    def close(self) -> None:
        """Let the endpoint's connections go now (the owner's work with the model is done). Left to the garbage
        collector, a connection's socket could be finalised before the client that would close it (they are
        collected together), warned of as unclosed. Asking again opens a new client."""
        client, self._openai = self._openai, None
        if client is not None:
            client.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the one entry point ------------------------------------------------
    def ask(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str, purpose: str,
            cacheable: bool = False) -> tuple[dict[str, Any], CallRecord]:
        """The model's JSON object for ``messages`` and the record of the attempt that gave it.

        Raises :class:`LLMFailure` after the retries (or at once for the cost limit).
        """
        s = self.settings
        last: CallRecord | None = None
        for attempt in range(s.retries + 1):
            if attempt and not self.log.replaying:
                self._sleep(max(s.backoff * 2 ** (attempt - 1), self._asked_wait))
            self._asked_wait = 0.0
            record, value = self._attempt(messages, schema, name, purpose, cacheable)
            if value is not None:
                return value, record
            last = record
            if record.cause is FailureCause.REFUSED:
                break
        assert last is not None and last.cause is not None
        attempts = "" if last.cause is FailureCause.REFUSED else f" (after {s.retries + 1} attempts)"
        raise LLMFailure(last.cause, f"{last.error}{attempts}")

    # -- one attempt -----------------------------------------------------------
    def _attempt(self, messages: list[dict[str, Any]], schema: dict[str, Any], name: str, purpose: str,
                 cacheable: bool) -> tuple[CallRecord, dict[str, Any] | None]:
        s = self.settings
        while True:
            params = dict(s.parameters(), structured=self.mode, schema_name=name, schema=schema)
            key = request_key(s.model, messages, params)
            record = CallRecord(purpose=purpose, role=self.role, model=s.model, messages=compact_messages(messages),
                                parameters=params, key=key)
            if self.log.replaying:
                recorded = self.log.next_recorded(key, purpose)
                if recorded.cause is FailureCause.COST_LIMIT:
                    self.log.add(recorded)
                    raise LLMFailure(FailureCause.COST_LIMIT, recorded.error)
                record.response, record.error, record.cause = recorded.response, recorded.error, recorded.cause
                record.prompt_tokens, record.completion_tokens = recorded.prompt_tokens, recorded.completion_tokens
                record.cached_tokens, record.latency = recorded.cached_tokens, recorded.latency
                record.money, record.source = recorded.money, "replay"
                if recorded.response is None and recorded.cause is None:     # the recorded fallback
                    self.log.add(record)
                    self.mode = STRUCTURED_MODES[STRUCTURED_MODES.index(self.mode) + 1]
                    continue
                break
            cache_key = endpoint_key(s.base_url, key)
            hit = self.cache.get(cache_key) if (cacheable and self.cache is not None) else None
            if hit is not None:
                record.response, record.source = hit, "cache"
                break
            held = self._check_budget(messages, schema)
            try:
                answered = self._call_endpoint(record, messages, schema, name)
            finally:
                if held is not None:           # what the call held for the campaign becomes what it cost
                    shared = shared_money.current()
                    assert shared is not None
                    shared.settle(held, record.money)
            if answered:
                break       # an answer, or an error to retry
            self.log.add(record)   # the refused mode, recorded
            self.mode = STRUCTURED_MODES[STRUCTURED_MODES.index(self.mode) + 1]
        value = None if record.cause is not None else self._parse(record, schema)
        if value is not None and cacheable and self.cache is not None and record.source == "endpoint":
            self.cache.put(cache_key, s.model, record.response or {})
        self.log.add(record)
        return record, value

    def _check_budget(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> float | None:
        """Refuse (:class:`LLMFailure`, ``cost_limit``) a call whose estimated cost would take the session past its
        limit, or its campaign's sessions together past what the campaign had left (:mod:`diagkg.llm.shared_money`,
        where the call's estimate is then held: returned, to be settled once the call is done)."""
        s = self.settings
        price = s.price()
        if s.cost_limit is None or price is None:
            return None
        estimate = price.of(*self._largest(messages, schema))
        shared = shared_money.current()
        why = ""
        if self.log.money + estimate > s.cost_limit:
            why = (f"the next call (about {estimate:.4f}) would take the session past its cost limit of "
                   f"{s.cost_limit:g} (spent {self.log.money:.4f})")
        elif shared is not None and not shared.reserve(estimate):
            spent, held = shared.totals()
            why = (f"the next call (about {estimate:.4f}) would take the campaign's sessions together past what the "
                   f"campaign had left, {shared.allowance:.4f} (its sessions in flight spent {spent:.4f} and hold "
                   f"{held:.4f} for calls under way)")
        if why:
            record = CallRecord(purpose="(not sent)", role=self.role, model=s.model, messages=compact_messages(messages),
                                parameters=s.parameters(), key="", cause=FailureCause.COST_LIMIT, error=why, source="none")
            self.log.add(record)
            raise LLMFailure(FailureCause.COST_LIMIT, record.error)
        return estimate if shared is not None else None

    def _largest(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> tuple[int, int]:
        """The most prompt and completion tokens a call of ``messages`` can be billed: its estimated prompt and
        ``max_tokens`` (what the check before a call holds, and what a call given up at its timeout is charged)."""
        return prompt_estimate(messages, schema), self.settings.max_tokens

    def _client(self) -> OpenAI:
        if self._openai is None:
            from openai import OpenAI

            s = self.settings
            self._openai = OpenAI(base_url=s.base_url, api_key=s.api_key, timeout=s.timeout, max_retries=0,
                                  http_client=bounded_http_client(reply_limit(s.max_tokens)))
        return self._openai

    def _call_endpoint(self, record: CallRecord, messages: list[dict[str, Any]], schema: dict[str, Any],
                       name: str) -> bool:
        """Fill ``record`` from the endpoint; False when the endpoint refused the
        structured-output mode and a lower one remains."""
        import openai

        s = self.settings
        kwargs: dict[str, Any] = {"model": s.model, "messages": messages, "temperature": s.temperature,
                                  "max_tokens": s.max_tokens}
        if self.mode == "tools":
            kwargs["tools"] = [{"type": "function", "function": {"name": name, "parameters": schema}}]
            kwargs["tool_choice"] = {"type": "function", "function": {"name": name}}
        elif self.mode == "json_schema":
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
        else:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        limit = limit_for(s.base_url, s.concurrency)
        t0 = time.perf_counter()
        try:
            with limit:
                client = self._client()
                reply = self._by_deadline(lambda: client.chat.completions.create(**kwargs))
        except (openai.APITimeoutError, _PastDeadline):
            record.cause, record.error = FailureCause.TIMEOUT, f"no answer within {s.timeout:g} s"
            # the endpoint goes on with a request the client gave up on, and bills it: counted as the largest it
            # can be (the estimated prompt and max_tokens), as the pre-call check counts it, not as nothing
            record.prompt_tokens, record.completion_tokens = self._largest(messages, schema)
            price = s.price()
            record.money = price.of(record.prompt_tokens, record.completion_tokens) if price else 0.0
        except openai.RateLimitError as exc:
            limit.throttled()
            self._asked_wait = min(retry_after(exc.response.headers.get("retry-after")), s.timeout)
            record.cause, record.error = FailureCause.RATE_LIMIT, f"429 from the endpoint: {_short(exc)}"
        except ReplyTooLarge as exc:      # a reply past the bound (see diagkg.llm.bounded)
            record.cause, record.error = FailureCause.SERVER_ERROR, str(exc)
        except openai.APIConnectionError as exc:       # (openai before 3 wraps the bound's error in this one)
            record.cause = FailureCause.SERVER_ERROR
            big = too_large(exc)
            record.error = str(big) if big is not None else f"cannot reach {s.base_url}: {_short(exc)}"
        except ValueError as exc:     # a body that is not JSON text (not UTF-8, say): the client could not read it
            record.cause, record.error = FailureCause.SERVER_ERROR, f"{NOT_A_COMPLETION}: {_short(exc)}"
        except openai.APIStatusError as exc:
            if exc.status_code >= 500:
                record.cause, record.error = FailureCause.SERVER_ERROR, f"{exc.status_code} from the endpoint: {_short(exc)}"
            elif exc.status_code in (400, 422) and self.mode != STRUCTURED_MODES[-1]:
                record.error = f"{exc.status_code}: the endpoint refused structured output {self.mode!r}: {_short(exc)}"
                record.latency = time.perf_counter() - t0
                return False
            else:      # the request itself (its length, its parameters): asking again would not help
                record.cause = FailureCause.REFUSED
                record.error = f"the endpoint refused the request ({exc.status_code}): {_short(exc)}"
        record.latency = time.perf_counter() - t0
        if record.cause is not None:
            return True
        choices = getattr(reply, "choices", None)
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = getattr(choice, "message", None)
        # HTML from a proxy, an error object with status 200, no choices; a message that is no object (a string)
        if message is None or not hasattr(message, "content"):
            record.cause, record.error = FailureCause.SERVER_ERROR, f"{NOT_A_COMPLETION}: {_shown(reply)}"
            return True
        limit.succeeded()
        tool_calls = getattr(message, "tool_calls", None)
        calls = [{"name": c.function.name, "arguments": c.function.arguments}
                 for c in (tool_calls if isinstance(tool_calls, list) else []) if getattr(c, "function", None) is not None]
        record.response = {"content": message.content, "tool_calls": calls,
                           "finish_reason": getattr(choice, "finish_reason", None)}
        self._count_tokens(record, messages, schema, getattr(reply, "usage", None))
        price = s.price()
        record.money = price.of(record.prompt_tokens, record.completion_tokens) if price else 0.0
        return True

    @staticmethod
    def _count_tokens(record: CallRecord, messages: list[dict[str, Any]], schema: dict[str, Any], usage: Any) -> None:
        """The reply's token counts; where the endpoint reports none that can be counted (no usage,
        a negative count, text, a fraction) each side is estimated at about 3 characters a token, as
        :meth:`_check_budget` does, so a priced session is never charged nothing (or less than nothing)."""
        prompt = _count(getattr(usage, "prompt_tokens", None))
        completion = _count(getattr(usage, "completion_tokens", None))
        if prompt is None:
            prompt = prompt_estimate(messages, schema)
        if completion is None:
            completion = len(json.dumps(record.response, ensure_ascii=False)) // 3
        details = getattr(usage, "prompt_tokens_details", None)
        record.prompt_tokens, record.completion_tokens = prompt, completion
        record.cached_tokens = min(prompt, _count(getattr(details, "cached_tokens", None)) or 0)

    def _by_deadline(self, request: Any) -> Any:
        """``request()``'s answer, if it comes within ``timeout`` in all. The HTTP client's timeout
        bounds each wait for a byte, not the whole answer: an endpoint that sent its reply a few bytes at
        a time held a session far past ``timeout`` (a 1 s timeout took 5 s), and could hold it forever.
        Past the deadline the client is closed (its read stops) and a new one serves the next attempt."""
        try:
            return in_thread(request, self.settings.timeout, "diagkg-llm-request")
        except StillRunning:
            self.close()
            raise _PastDeadline() from None

    def _parse(self, record: CallRecord, schema: dict[str, Any]) -> dict[str, Any] | None:
        response = record.response or {}
        if response.get("finish_reason") == "length":
            record.cause = FailureCause.CUT_OFF
            record.error = f"the reply was cut off at {self.settings.max_tokens} tokens"
            return None
        calls = response.get("tool_calls") or []
        text = calls[0]["arguments"] if calls else (response.get("content") or "")
        if not isinstance(text, str):     # arguments null, content as a list of parts: not the JSON text asked for
            text = json.dumps(text)
        try:
            value = repair_json(text)
        except ValueError:
            value = None
        missing = [k for k in schema.get("required", []) if not isinstance(value, dict) or k not in value]
        if not isinstance(value, dict) or missing:
            record.cause = FailureCause.UNPARSEABLE
            record.error = (f"the reply is not the JSON object asked for"
                            f"{' (missing ' + ', '.join(missing) + ')' if isinstance(value, dict) else ''}: {text[:80]!r}")
            return None
        return value


def image_part(data: bytes, media_type: str) -> dict[str, Any]:
    """A chat-message content part carrying an image (for models that accept images)."""
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{base64.b64encode(data).decode()}"}}


def compact_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as recorded: an attached image is kept as the SHA-256 of its data
    URI (the request key is computed on the full messages)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                url = part.get("image_url", {}).get("url", "") if isinstance(part, dict) else ""
                if url.startswith("data:"):
                    digest = hashlib.sha256(url.encode("ascii")).hexdigest()
                    part = {"type": "image_url", "image_url": {"url": f"sha256:{digest}"}}
                parts.append(part)
            m = dict(m, content=parts)
        out.append(m)
    return out


def prompt_estimate(messages: list[dict[str, Any]], schema: dict[str, Any]) -> int:
    """A request's prompt tokens, with no tokenizer: ~3 characters a token of its messages and of the
    schema sent with them (a tool's parameters or a response format, which endpoints bill as prompt)."""
    return (len(json.dumps(messages)) + len(json.dumps(schema))) // 3


def retry_after(header: str | None) -> float:
    """The seconds a ``Retry-After`` header asks for (a number, or an HTTP date); 0 when none can be read."""
    if not header:
        return 0.0
    try:
        seconds = float(header)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            seconds = parsedate_to_datetime(header).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return 0.0
    return seconds if seconds == seconds and seconds > 0 else 0.0


def _count(value: Any) -> int | None:
    """A token count as reported: an integer ≥ 0 (JSON's 12.0 too), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        return None
    return int(value) if float(value).is_integer() else None


def _shown(reply: Any) -> str:
    """What an answer that is not a chat completion holds, briefly (its fields set, or its text)."""
    dump = getattr(reply, "model_dump", None)
    data = dump(exclude_none=True, warnings=False) if callable(dump) else reply
    text = data if isinstance(data, str) else json.dumps(data, default=str, ensure_ascii=False)
    return repr(text[:160])


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
