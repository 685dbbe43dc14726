"""A connection that shorts a part out is reported at the line that writes it (an outsider's tail lamp, written
here): a port connected to itself, or to another port of its own component, written apart from the port's
declaration (`:lamp.p dk:connectedTo :lamp.n .` among the wiring), was reported where the port is first written
(its component's dk:hasPort line), as the shapes gave no path; they now give dk:connectedTo, and a statement whose
value is its own subject is looked for past the subject that opens its block."""

from __future__ import annotations

import pytest

from diagkg.kg.validation import Validator

SYSTEM = """\
@prefix :        <https://example.org/loop/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:loop a dk:System ; dk:systemKey "loop" ; dcterms:identifier "loop" ; rdfs:label "Loop" ;
    dk:groundReference :bat.neg ; dcterms:description "A battery lights a lamp." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :loop .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1 ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
# wiring
:bat.pos dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
"""


@pytest.mark.parametrize("wrong, message", [(":lamp.p dk:connectedTo :lamp.p .", "connected to itself"),
                                            (":lamp.p dk:connectedTo :lamp.n .", "a port of the same component")])
def test_the_connection_is_reported_at_its_own_line(tmp_path, wrong, message):
    path = tmp_path / "loop.ttl"
    path.write_text(SYSTEM + wrong + "\n")
    (report,) = Validator().validate_paths([path])
    (violation,) = [v for v in report.violations if message in v.message]
    assert violation.line == len(SYSTEM.splitlines()) + 1
    assert violation.path == "dk:connectedTo"
