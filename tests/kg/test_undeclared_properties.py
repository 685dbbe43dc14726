"""A description's own property written as the documentation writes it, without declaring it
(``:powers rdfs:subPropertyOf dk:dependsOn``, no ``a owl:ObjectProperty``): HermiT entails what OWL-RL
does. owlready2 took the undeclared property for a class's kin, and its reading of HermiT's answer
raised ``AttributeError: 'dependsOn' object has no attribute 'equivalent_to'`` in most runs, as Python's
hash seed fell (seeds 2 to 5 of 1 to 6: `diagkg load` and `diagkg reason KEY` crashed with a
traceback). Each seed is a process of its own; the system is a user's motorcycle lighting, in short."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

MOTO = """\
@prefix :     <https://example.org/moto/> .
@prefix dk:   <https://w3id.org/diagkg/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

:Beacon rdfs:subClassOf dk:Bulb .
:powers rdfs:subPropertyOf dk:dependsOn .
:moto a dk:System ; dk:systemKey "moto" ; dk:hasFunction :light_road .
:light_road a dk:Function ; :powers :supply .
:supply a dk:Function ; dk:dependsOn :charge .
:charge a dk:Function .
:headlamp a :Beacon ; dk:partOf :moto ; dk:hasFunction :light_road .
"""

REASON = """\
import json, sys, rdflib
from diagkg.kg.reasoning import reason
data = rdflib.Graph().parse(data=sys.argv[1], format="turtle")
print(json.dumps(sorted(" ".join(map(str, t)) for t in reason(data, engine=sys.argv[2]))))
"""


def entailed(engine: str, seed: int) -> set[str]:
    done = subprocess.run([sys.executable, "-c", REASON, MOTO, engine], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": str(seed)}, timeout=120)
    assert done.returncode == 0, done.stderr[-600:]
    return set(json.loads(done.stdout))


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime")
def test_hermit_entails_what_owlrl_does_from_a_property_left_undeclared():
    expected = entailed("owlrl", 0)
    dk, moto = "https://w3id.org/diagkg/ontology#", "https://example.org/moto/"
    assert f"{moto}light_road {dk}dependsOn {moto}charge" in expected          # through :powers, transitively
    assert f"{moto}headlamp http://www.w3.org/1999/02/22-rdf-syntax-ns#type {dk}Bulb" in expected
    for seed in (2, 3):                                     # both raised before
        assert entailed("hermit", seed) == expected, seed
