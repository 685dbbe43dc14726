"""Validation reports kept in the store (``diagkg validate --record``): SHACL's report vocabulary with provenance,
on files written in the test (the torch with a resistance in words, a scenario with a misspelt property, a file
that is not RDF)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone

import pyoxigraph as ox
import pytest

from diagkg.cli.main import main
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.validation import Validator
from diagkg.kg.validation_record import record
from diagkg.kg.vocab import DK

from ..support.torch import FLAT, TORCH, scenario_text

SH = "http://www.w3.org/ns/shacl#"
PROV = "http://www.w3.org/ns/prov#"


@pytest.fixture()
def files(tmp_path):
    out = {"torch": tmp_path / "torch-bad.ttl", "scenario": tmp_path / "flat.ttl", "garbage": tmp_path / "garbage.ttl",
           "good": tmp_path / "torch.ttl"}
    out["torch"].write_text(TORCH.replace("dk:resistance 60 ;", 'dk:resistance "sixty" ;'))
    out["scenario"].write_text(scenario_text(**FLAT).replace("dk:actionBudget 10", "dk:actionBudgett 10"))
    out["garbage"].write_text("not turtle {{{\n")
    out["good"].write_text(TORCH)
    return out


def values(store, s, p) -> list:
    return [q.object for q in store.raw.quads_for_pattern(s, ox.NamedNode(p), None, None)]


def test_the_report_is_shacl_with_provenance(files):
    reports = Validator().validate_paths([files["torch"], files["scenario"], files["garbage"]])
    store = KnowledgeStore.memory()
    report = record(store, reports, started=datetime.now(timezone.utc), agent="diagkg (test)")
    (row,) = store.select("validation-reports")
    assert (row["report"], row["conforms"], row["files"]) == (report.value, False, 3)
    violations = [v for r in reports for v in r.violations]
    assert row["results"] == len(violations) + 1                      # and the file that is not RDF
    results = values(store, report, SH + "result")
    by_component = {}
    for result in results:
        for p in ("focusNode", "resultSeverity", "sourceConstraintComponent", "resultMessage"):
            assert len(values(store, result, SH + p)) == 1, (result, p)       # what SHACL requires of a result
        (component,) = values(store, result, SH + "sourceConstraintComponent")
        by_component.setdefault(component.value, []).append(result)
    (unknown,) = by_component[str(DK.UnknownTermConstraintComponent)]
    assert values(store, unknown, SH + "focusNode") == [ox.NamedNode("https://example.org/torch-scenarios/TORCH.1")]
    assert values(store, unknown, SH + "resultPath") == [ox.NamedNode("https://w3id.org/diagkg/ontology#actionBudgett")]
    (garbage,) = by_component[str(DK.WellFormedConstraintComponent)]
    assert values(store, garbage, SH + "focusNode") == [ox.NamedNode(files["garbage"].resolve().as_uri())]
    shaped = [r for c, rs in by_component.items() if c.startswith(SH) for r in rs]
    assert shaped and all(values(store, r, SH + "sourceShape") or values(store, r, SH + "resultPath") for r in shaped)
    on_bulb = [r for r in shaped if values(store, r, SH + "focusNode") == [ox.NamedNode("https://example.org/torch/bulb")]]
    assert on_bulb and all(values(store, r, SH + "value") == [ox.Literal("sixty")] for r in on_bulb)
    assert all(values(store, r, str(DK.sourceLine)) for r in on_bulb)
    (activity,) = values(store, report, PROV + "wasGeneratedBy")
    used = set(values(store, activity, PROV + "used"))
    assert {ox.NamedNode(f.resolve().as_uri()) for f in (files["torch"], files["scenario"], files["garbage"])} <= used
    digest = "sha256:" + hashlib.sha256(files["torch"].read_bytes()).hexdigest()
    assert values(store, ox.NamedNode(files["torch"].resolve().as_uri()), str(DK.contentHash)) == [ox.Literal(digest)]
    (agent,) = values(store, activity, PROV + "wasAssociatedWith")
    assert values(store, agent, "http://www.w3.org/2000/01/rdf-schema#label") == [ox.Literal("diagkg (test)")]


def test_validate_record_on_the_command_line(files, tmp_path, capsys):
    db = str(tmp_path / "store")
    assert main(["--store", db, "validate", str(files["good"]), "--record", "--format", "json"]) == 0
    recorded = json.loads(capsys.readouterr().out)["recorded"]
    assert main(["--store", db, "validate", str(files["torch"]), "--record"]) == 1
    assert "recorded the report as" in capsys.readouterr().err
    store = KnowledgeStore(db, read_only=True)
    try:
        rows = {r["report"]: r for r in store.select("validation-reports")}
    finally:
        store.close()
    assert rows[recorded]["conforms"] is True and rows[recorded]["results"] == 0 and len(rows) == 2
    assert main(["--memory", "validate", str(files["good"]), "--record"]) == 2
    assert "--record keeps the report in a store" in capsys.readouterr().err
