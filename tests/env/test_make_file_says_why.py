"""``diagkg.make`` of a scenario file that does not conform says which violations, in the exception's
message: a Python user saw ``ValidationError: 1 SHACL violation(s) in FILE`` and never why (a scenario on
a system the store does not hold yet). The CLI still prints each violation once, then the count."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import diagkg
from diagkg.errors import ValidationError
from diagkg.kg.store import KnowledgeStore

from ..support.cli import DIAGKG

SCENARIO = """\
@prefix sys:     <https://example.org/ghostlamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

<https://example.org/ghostlamp-scenarios/GL.1> a dk:Scenario ; dk:scenarioNumber 9761 ; dcterms:identifier "GL.1" ;
    rdfs:label "Lamp burnt" ; dk:onSystem sys:ghostlamp ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:lamp ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ] ;
    dk:actionBudget 6 .
"""


def test_the_message_names_the_violation(tmp_path: Path):
    path = tmp_path / "gl1.ttl"
    path.write_text(SCENARIO)
    with pytest.raises(ValidationError) as caught:
        diagkg.make(path, store=KnowledgeStore.memory())
    message = str(caught.value)
    assert message.startswith(f"1 SHACL violation(s) in {path}:"), message
    said = f"{path}:6: <https://example.org/ghostlamp-scenarios/GL.1> — dk:onSystem — the system sys:ghostlamp is not known"
    assert said in message, message
    assert caught.value.summary == f"1 SHACL violation(s) in {path}"


def test_many_violations_are_named_up_to_a_few(tmp_path: Path):
    text = SCENARIO
    for n in range(2, 9):       # seven more scenarios of the same unknown system, one file each
        (tmp_path / f"gl{n}.ttl").write_text(text.replace("GL.1", f"GL.{n}").replace("9761", str(9760 + n)))
    (tmp_path / "gl1.ttl").write_text(text)
    from diagkg.kg.loading import load_files

    with pytest.raises(ValidationError) as caught:
        load_files(KnowledgeStore.memory(), sorted(tmp_path.glob("gl*.ttl")))
    lines = str(caught.value).split("\n")
    assert len(caught.value.lines) == 8 and len(lines) == 1 + ValidationError.SHOWN + 1, lines
    assert lines[-1] == "  … and 3 more (.lines holds them all)"


def test_the_cli_prints_each_violation_once(tmp_path: Path):
    (tmp_path / "gl1.ttl").write_text(SCENARIO)
    r = subprocess.run([*DIAGKG, "--store", str(tmp_path / "store"), "load", str(tmp_path / "gl1.ttl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("the system sys:ghostlamp is not known here") == 1, r.stderr
    assert f"error: 1 SHACL violation(s) in {tmp_path / 'gl1.ttl'}; nothing was loaded" in r.stderr, r.stderr
