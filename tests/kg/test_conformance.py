"""The compiled check (diagkg.kg.conformance) clears conforming documents without pySHACL and
sends every other one to pySHACL, so the report is pySHACL's either way.

Each broken file of tests/kg/test_shapes.py is validated alone, so pySHACL validates it whole
there (the test checks that the compiled check sent it, ``by_pyshacl``); here, batches where
pySHACL validates only some documents' focus nodes, the whole shipped catalogue, and the cases
where the check must say it cannot tell, each against ``Validator(reference=True)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib

from diagkg.kg import conformance, resources
from diagkg.kg.rdfio import RdfDocument, parse_text
from diagkg.kg.validation import Validator

from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text


def _docs(**texts: str) -> list[RdfDocument]:
    return [parse_text(text, f"{name}.ttl") for name, text in texts.items()]


def _both(docs: list[RdfDocument]) -> tuple[Validator, dict[str, list[object]]]:
    fast, reference = Validator(reference=False), Validator(reference=True)
    got = fast.validate_documents(docs)
    assert got == reference.validate_documents(docs)
    return fast, got


def test_a_sound_batch_needs_no_pyshacl():
    fast, got = _both(_docs(torch=TORCH, flat=scenario_text(**FLAT), loose=scenario_text(**LOOSE_LEAD)))
    assert got == {"torch.ttl": [], "flat.ttl": [], "loose.ttl": []}
    assert fast.by_pyshacl == 0


def test_pyshacl_sees_only_the_broken_scenario_and_reports_as_alone():
    broken = scenario_text(**LOOSE_LEAD).replace("dk:actionBudget 10", "dk:actionBudget 0").replace(
        "dk:faultyComponent sys:lead", "dk:faultyComponent sys:lead, sys:flux_capacitor")
    fast, got = _both(_docs(torch=TORCH, flat=scenario_text(**FLAT), loose=broken))
    assert fast.by_pyshacl == 1
    assert got["torch.ttl"] == [] and got["flat.ttl"] == []
    messages = " | ".join(v.message for v in got["loose.ttl"])       # type: ignore[attr-defined]
    assert "positive integer" in messages and "is not a part of the scenario's system" in messages


def test_a_broken_system_shows_in_the_scenarios_that_name_its_part():
    torch = TORCH.replace("dk:resistance 60 ;", "dk:resistance -5 ;")
    flat = scenario_text(**{**FLAT, "faulty": "bulb", "target": "bulb", "mode": "OpenComponent"})
    fast, got = _both(_docs(torch=torch, flat=flat, loose=scenario_text(**LOOSE_LEAD)))
    assert fast.by_pyshacl == 2        # the system, and the scenario naming its bulb
    assert [v.focus for v in got["torch.ttl"]] == [":bulb"]           # type: ignore[attr-defined]
    assert got["loose.ttl"] == []


@pytest.mark.parametrize("value", ['"60"^^xsd:string', '"1e999"^^xsd:double', '"6e1"^^xsd:decimal', '"INF"^^xsd:double'])
def test_what_rdflib_may_read_otherwise_goes_to_pyshacl(value):
    torch = TORCH.replace("@prefix dcterms:", "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n@prefix dcterms:") \
        .replace("dk:resistance 60 ;", f"dk:resistance {value} ;")
    fast, _ = _both(_docs(torch=torch))
    assert fast.by_pyshacl == 1


def test_shapes_the_check_cannot_compile_leave_everything_to_pyshacl(tmp_path: Path):
    shapes = rdflib.Graph().parse(data="""
        @prefix sh: <http://www.w3.org/ns/shacl#> .
        @prefix dk: <https://w3id.org/diagkg/ontology#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        [] a sh:NodeShape ; sh:targetClass dk:Bulb ;
           sh:property [ sh:path rdfs:label ; sh:equals dk:nickname ] .""", format="turtle")
    with pytest.raises(conformance.Unsupported):
        conformance.Checker([t for d in _docs(s=shapes.serialize(format="turtle")) for t in d.triples])
    fast, reference = Validator(shapes=shapes), Validator(shapes=shapes, reference=True)
    docs = _docs(torch=TORCH)
    assert fast.validate_documents(docs) == reference.validate_documents(docs)
    assert [v.focus for v in fast.validate_documents(docs)["torch.ttl"]] == [":bulb"]   # no dk:nickname
    assert fast.by_pyshacl == 2


@pytest.mark.slow
def test_the_shipped_catalogue_gets_the_same_report_without_pyshacl():
    files = [Path(str(f)) for f in (*resources.system_files(), *resources.catalog_files())]
    fast = Validator(reference=False)
    got = fast.validate_paths(files)
    assert fast.by_pyshacl == 0
    assert all(r.conforms for r in got)
    reference = Validator(reference=True).validate_paths(files)
    assert [(r.file, r.violations, r.error) for r in got] == [(r.file, r.violations, r.error) for r in reference]


def test_shapes_and_ontology_given_as_triples_report_as_the_graphs_do():
    """``Validator.of_triples`` (what the trajectory check uses, to spare a process rdflib and
    pySHACL): the compiled check clears the sound documents, and the broken one goes to pySHACL on
    graphs made from the triples, with the report the rdflib graphs of the same files give."""
    prefixes: dict[str, str] = {}

    def folder(name: str) -> tuple[list, bool]:
        texts = [f.read_text(encoding="utf-8") for f in resources.files(name)]
        for text in texts:
            prefixes.update(rdflib.Graph().parse(data=text, format="turtle").namespaces())
        return ([t for i, text in enumerate(texts) for t in parse_text(text, f"{name}{i}.ttl").triples],
                any(conformance.EXPLICIT_STRING.search(text) for text in texts))

    broken = scenario_text(**LOOSE_LEAD).replace("dk:actionBudget 10", "dk:actionBudget 0")
    docs = _docs(torch=TORCH, flat=scenario_text(**FLAT), loose=broken)
    shapes = folder("shapes")
    by_triples = Validator.of_triples(shapes, folder("ontology"), prefixes=prefixes)
    got = by_triples.validate_documents(docs)
    assert got == Validator(reference=True).validate_documents(docs)
    assert got["torch.ttl"] == [] and got["flat.ttl"] == [] and got["loose.ttl"]
    assert by_triples.by_pyshacl == 1


def test_pyshacl_judging_only_the_nodes_the_check_suspects_reports_as_on_the_whole(tmp_path: Path):
    # pySHACL took a broken system whole (a hundred parts of three cubes, half a second a file); it now judges only
    # the focus nodes the compiled check could not clear, every other one conforming for sure: the same report, on a
    # sample of the broken systems of tests/kg/test_shapes.py (one case in eight, each shape's kind among them)
    from .test_shapes import CASES, THREE_CUBES, _validate

    cases = [c for c in CASES if c.base == THREE_CUBES and c.shape is not None][::8]
    assert len(cases) >= 6
    fast, reference = Validator(reference=False), Validator(reference=True)
    for case in cases:
        got = _validate(fast, case.base, case.mutate, tmp_path)
        expected = _validate(reference, case.base, case.mutate, tmp_path)
        assert got.violations and got.violations == expected.violations, case.id
