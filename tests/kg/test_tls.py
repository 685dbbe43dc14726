"""The TLS context the platform's HTTP clients share (:mod:`diagkg.kg.tls`): the one the HTTP library would
build for a client itself (the same certificates, verification on), built once per process and setting."""

from __future__ import annotations

import ssl

import certifi
import httpx
import pytest

from diagkg.kg.tls import verifying_context
from diagkg.llm.bounded import _http_library, bounded_http_client


def _libraries() -> list:
    from openai import DefaultHttpxClient

    return list({id(lib): lib for lib in (httpx, _http_library(DefaultHttpxClient))}.values())


@pytest.mark.parametrize("library", _libraries(), ids=lambda lib: lib.__name__)
def test_the_shared_context_is_the_librarys_own_built_once(library, monkeypatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    shared = verifying_context(library)
    assert verifying_context(library) is shared
    own = library.create_ssl_context()
    assert shared.verify_mode == own.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert shared.cert_store_stats() == own.cert_store_stats()
    # another certificate setting of the environment: the context the library builds for it
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    other = verifying_context(library)
    assert other is not shared
    assert other.cert_store_stats() == library.create_ssl_context().cert_store_stats()


def test_an_llm_client_verifies_with_the_shared_context() -> None:
    client = bounded_http_client(1 << 20)
    try:
        from openai import DefaultHttpxClient

        contexts = {id(t._pool._ssl_context) for t in [client._transport]}
        assert contexts == {id(verifying_context(_http_library(DefaultHttpxClient)))}
    finally:
        client.close()
