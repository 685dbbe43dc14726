"""`diagkg query -p NAME=VALUE` with a value that looks like an IRI but is not one (a space in it, or the carriage
return a CSV line read by a shell keeps: `-p campaign=$(tail -1 out.csv)`) ended in a Python traceback (exit 1, a
ValueError from pyoxigraph); it is an input error like any other (exit 2, naming the input and the value)."""

from __future__ import annotations

from tests.support.cli import run_cli

QUERY = """\
# The lamps of a system (written for this test).
# complexity: one system's parts
# inputs:
#   ?system (iri)  the system
# outputs:
#   ?lamp
PREFIX dk: <https://w3id.org/diagkg/ontology#>
SELECT ?lamp WHERE { ?lamp dk:partOf ?m . ?m dk:partOf ?system . ?lamp a dk:Bulb }
"""


def test_a_value_that_is_not_an_iri_is_an_input_error(tmp_path):
    q = tmp_path / "lamps.rq"
    q.write_text(QUERY)
    for value in ("https://example.org/pump/pump\r", "<https://example.org/pump pump>", "https://example.org/a b"):
        r = run_cli("--memory", "query", str(q), "-p", f"system={value}")
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr
        assert r.stderr.startswith("error: --param system: ") and "is not an IRI" in r.stderr
    r = run_cli("--memory", "query", str(q), "-p", "system=https://example.org/pump/pump", "--format", "csv")
    assert r.returncode == 0, r.stderr
