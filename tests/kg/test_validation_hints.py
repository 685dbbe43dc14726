"""Where validation messages point, and their "did you mean" (outsider h1, F12): a typo'd connection target was first
reported at the line that declares the port it leaves from, a coupling's expression at the coupling's first line, and
neither a misspelt part nor a misspelt term got the nearest declared name."""

from __future__ import annotations

from diagkg.kg.rdfio import parse_text
from diagkg.kg.validation import Validator

from ..support.torch import TORCH

COUPLED = TORCH + """
:drive a dk:SwitchingCoupling ;
    rdfs:label "the bulb's voltage holds the switch" ;
    dk:drives :sw ;
    dk:closedWhen "voltage('bulbb', 'p') > 1" ; dk:activeByDefault true .
:torch dk:hasCoupling :drive .
"""


def violations(text: str):
    doc = parse_text(text, "torch.ttl")
    return Validator().validate_documents([doc])[doc.name]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_typod_connection_is_located_at_its_statement_with_the_nearest_port():
    text = TORCH.replace(":r_led.n dk:connectedTo :led.anode .", ":r_led.n dk:connectedTo :lde.anode .")
    found = violations(text)
    wiring = line_of(text, ":r_led.n dk:connectedTo :lde.anode")
    assert wiring != line_of(text, ":r_led.n a dk:Port")
    connection = next(v for v in found if v.focus == ":r_led.n" and v.path == "dk:connectedTo")
    assert connection.line == wiring and connection.suggestion == ":led.anode"
    assert str(connection).endswith("(value: :lde.anode); did you mean :led.anode?")
    # every message about the typo is at that line, the undeclared port's too, each with the suggestion
    about = [v for v in found if ":lde.anode" in (v.focus, v.value)]
    assert {v.line for v in about} == {wiring} and {v.suggestion for v in about} == {":led.anode"}
    assert min(v.line or 0 for v in found if v.suggestion) == wiring


def test_a_couplings_expression_is_located_at_its_closed_when_line():
    found = violations(COUPLED)
    expression = next(v for v in found if v.path == "dk:closedWhen")
    assert "names 'bulbb', which is no component of the system (did you mean 'bulb'?)" in expression.message
    assert expression.line == line_of(COUPLED, "dk:closedWhen") != line_of(COUPLED, ":drive a dk:SwitchingCoupling")


def test_an_unknown_term_gets_the_nearest_ontology_term():
    text = TORCH.replace("dk:resistance 60 ;", "dk:resistence 60 ;")
    unknown = next(v for v in violations(text) if v.path == "dk:resistence")
    assert unknown.suggestion == "dk:resistance" and str(unknown).endswith("; did you mean dk:resistance?")
    assert unknown.line == line_of(text, "dk:resistence")
    far = TORCH.replace("dk:resistance 60 ;", "dk:zzzqqq 60 ;")     # nothing near: no suggestion
    assert next(v for v in violations(far) if v.path == "dk:zzzqqq").suggestion is None


def test_an_ill_typed_value_is_reported_without_a_library_warning():
    """rdflib warned "Serializing weird numerical Literal(…)" on the terminal, with its own file and line, each time a
    violation about a value such as "abc"^^xsd:decimal was written."""
    import warnings

    text = TORCH.replace("dk:resistance 60 ;", 'dk:resistance "abc"^^<http://www.w3.org/2001/XMLSchema#decimal> ;')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = violations(text)
    assert [str(v) for v in found if v.value == '"abc"^^xsd:decimal'] and not [w for w in caught if w.category is UserWarning]
