"""A bound on the size of an endpoint's reply, enforced while it is read.

A chat completion is at most ``max_tokens`` tokens of text, a few bytes each, in a small JSON
envelope; a reply much larger than that is no completion the session can use (a proxy's error page
repeated, a misconfigured server streaming a file). The ``openai`` package reads a reply whole
into memory, and the session stored it whole in its ledger, once per attempt, so one such endpoint
filled memory and the store. :func:`bounded_http_client` stops reading past :func:`reply_limit`
bytes (as sent: a compressed reply is counted as it arrives) and raises :class:`ReplyTooLarge`,
which the client records as a server error (retried, then the session ends in ``llm_truncation``)
holding no part of the reply.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["ReplyTooLarge", "bounded_http_client", "reply_limit", "too_large"]

MIN_REPLY_BYTES = 1 << 20         # a reply may always be this large
BYTES_PER_TOKEN = 64              # and this many bytes for each token it may hold (JSON escapes, envelope, usage)


def reply_limit(max_tokens: int) -> int:
    """The largest reply read for a request of at most ``max_tokens`` tokens."""
    return max(MIN_REPLY_BYTES, BYTES_PER_TOKEN * max_tokens)


class ReplyTooLarge(Exception):
    """The endpoint's reply passed :func:`reply_limit`; it was not read further."""

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"the endpoint's reply is larger than {limit:,} bytes, more than a completion of the "
                         "requested max_tokens can be; it was not read further")


def too_large(exc: BaseException) -> ReplyTooLarge | None:
    """The :class:`ReplyTooLarge` behind ``exc`` (the ``openai`` package wraps it in a connection error)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ReplyTooLarge):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def bounded_http_client(limit: int) -> Any:
    """An HTTP client for the ``openai`` package whose replies are read to ``limit`` bytes at most: its
    ``DefaultHttpxClient`` with a response hook that wraps each reply's body in a counting stream before it is
    read (see the module), through any transport, proxies from the environment included. Built on the HTTP
    library the installed ``openai`` is built on (``httpx``, or ``httpx2`` from openai 3 on)."""
    from openai import DefaultHttpxClient

    from ..kg.tls import verifying_context

    library = _http_library(DefaultHttpxClient)
    counting = _stream_class(library)

    def bound(response: Any) -> None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            response.close()
            raise ReplyTooLarge(limit)
        response.stream = counting(response.stream, limit)

    return _client_class(DefaultHttpxClient)(event_hooks={"response": [bound]}, verify=verifying_context(library))


@functools.cache
def _client_class(default: type) -> Any:
    class Closing(default):  # type: ignore[misc]
        """Closed (its connections with it) when it is collected, as the ``openai`` package's own client is."""

        def __del__(self) -> None:
            if not self.is_closed:
                with contextlib.suppress(Exception):
                    self.close()

    return Closing


def _http_library(client_class: type) -> ModuleType:
    for base in client_class.__mro__[1:]:
        root = base.__module__.split(".")[0]
        if root.startswith("httpx"):
            return sys.modules[root]
    raise ImportError(f"cannot tell which HTTP library {client_class.__module__}.{client_class.__name__} is built on")


@functools.cache
def _stream_class(hx: ModuleType) -> Any:
    """A body stream of the HTTP library ``hx`` that stops past a number of bytes."""

    class Counting(hx.SyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any, limit: int):
            self._inner = inner
            self._limit = limit

        def __iter__(self) -> Iterator[bytes]:
            read = 0
            for chunk in self._inner:
                read += len(chunk)
                if read > self._limit:
                    raise ReplyTooLarge(self._limit)
                yield chunk

        def close(self) -> None:
            self._inner.close()

    return Counting
