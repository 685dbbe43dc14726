"""Schemathesis against ``/openapi.json`` of a real ``diagkg serve`` on a scratch store (the
torch, written in the tests): every route, with inputs that fit the schema and inputs that
do not (wrong types, missing and extra parameters, boundary values), each case sent without
the token and with it. No answer is a server error (5xx).

A few examples per route keep it within a minute or two on two cores; the examples are
derandomized, so a run is repeatable (``hypothesis`` keeps no database here).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from ..support.serving import TOKEN, start_server, stop_server, torch_store

pytestmark = pytest.mark.slow

EXAMPLES = 4           # per route and generation mode (keeps the test under a minute)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    proc, url = start_server(torch_store(tmp_path_factory.mktemp("serve-fuzz")), "--query-timeout", "5")
    yield url
    stop_server(proc)


@pytest.fixture(scope="module")
def api(base):
    schema = schemathesis.openapi.from_url(base + "/openapi.json")
    schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=EXAMPLES,
                                    deterministic=True, database="none")
    return schema


def test_no_route_answers_a_server_error(api, base):
    failures: list[str] = []
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) >= 20                       # every route of the API is there
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def call(case: schemathesis.Case) -> None:
                for headers in ({}, {"authorization": f"Bearer {TOKEN}"}):
                    response = case.call(base_url=base, headers=headers, timeout=60)
                    if response.status_code >= 500:
                        failures.append(f"{case.method} {case.formatted_path} token={bool(headers)}: "
                                        f"{response.status_code} {response.text[:300]!r} "
                                        f"(query {case.query!r}, body {str(case.body)[:200]!r})")

            try:
                call()
            except Unsatisfiable:           # a route without parameters has no wrong inputs to make
                assert mode is GenerationMode.NEGATIVE, operation.label
    assert not failures, "\n".join(failures[:20])
