"""One TLS context per process for the HTTP clients the platform opens (a remote store, an LLM endpoint).

An ``httpx`` client built with ``verify=True`` loads the certificate store into a new context each
time (10–20 ms of CPU): a campaign opens a client per session, a test run hundreds. The context
shared here is the one the HTTP library would build for the client itself (its own
``create_ssl_context()``: the same certificates, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` honoured),
built once per library and setting; a context verifies any number of connections, from any thread.
"""

from __future__ import annotations

import os
import ssl
from functools import lru_cache
from types import ModuleType

__all__ = ["verifying_context"]


def verifying_context(library: ModuleType) -> ssl.SSLContext:
    """What ``verify=True`` gives a client of the HTTP library ``library`` (``httpx``, or the ``httpx2`` of
    openai 3), built once in this process for each certificate setting of the environment."""
    return _context(library, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@lru_cache(maxsize=8)
def _context(library: ModuleType, cafile: str | None, capath: str | None) -> ssl.SSLContext:
    context: ssl.SSLContext = library.create_ssl_context()     # reads SSL_CERT_FILE / SSL_CERT_DIR itself
    return context
