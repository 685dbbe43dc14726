"""The ontology: well-formed, documented, consistent, and mirrored by diagkg.kg.vocab."""

from __future__ import annotations

import shutil

import pytest
import rdflib
from rdflib.namespace import OWL, RDF, RDFS

from diagkg.kg import vocabgen
from diagkg.kg.validation import default_ontology
from diagkg.kg.vocab import DK, DK_NS


def test_vocab_module_matches_the_ontology():
    assert vocabgen.render(vocabgen.ontology_graph()) == vocabgen.target().read_text(encoding="utf-8"), \
        "diagkg/kg/vocab.py is out of date: run python -m diagkg.kg.vocabgen"


def test_vocab_is_closed():
    assert str(DK.Bulb) == DK_NS + "Bulb"
    with pytest.raises(AttributeError):
        DK.Bulbb  # noqa: B018


def test_every_term_has_label_and_comment():
    g = default_ontology()
    missing = []
    for local in vocabgen.defined_terms(g):
        term = rdflib.URIRef(DK_NS + local)
        for prop in (RDFS.label, RDFS.comment):
            if g.value(term, prop) is None:
                missing.append(f"dk:{local} lacks {prop.n3(g.namespace_manager)}")
    assert missing == []


def test_every_class_and_property_is_declared():
    g = default_ontology()
    used = {o for o in g.objects(None, RDFS.subClassOf)} | {o for o in g.objects(None, RDFS.domain)}
    declared = set(g.subjects(RDF.type, OWL.Class))
    undeclared = {str(u) for u in used if isinstance(u, rdflib.URIRef) and u not in declared}
    assert undeclared == set()


def test_component_types_declare_their_ports():
    g = default_ontology()
    types = set(g.subjects(RDF.type, DK.ComponentType.uri))
    assert len(types) == 12
    for t in types:
        assert list(g.objects(t, DK.hasPortName.uri)), t


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime")
def test_ontology_is_consistent_for_hermit(tmp_path):
    """Real OWL reasoning: HermiT (through owlready2) accepts the ontology plus
    the 3-cubes system and infers the transitive part-of closure."""
    from diagkg.kg.reasoning import reason

    from ..support.paths import THREE_CUBES

    data = rdflib.Graph().parse(THREE_CUBES)
    inferred = reason(data, engine="hermit")
    sys_ns = rdflib.Namespace("https://w3id.org/diagkg/system/three_cubes/")
    assert (sys_ns.main_bulb, DK.within.uri, sys_ns.three_cubes) in inferred
    assert (sys_ns.fn_illuminate, DK.dependsOn.uri, sys_ns.fn_supply_power) in inferred      # transitivity
    assert (sys_ns.fn_indicate_power, DK.dependsOn.uri, sys_ns.fn_supply_power) in inferred  # monitors ⊑ dependsOn
    assert (sys_ns.main_bulb, DK.physicallyWithin.uri, sys_ns.cube_load) in inferred


def test_owlrl_fallback_agrees_on_part_of():
    from diagkg.kg.reasoning import reason

    from ..support.paths import THREE_CUBES

    data = rdflib.Graph().parse(THREE_CUBES)
    inferred = reason(data, engine="owlrl")
    sys_ns = rdflib.Namespace("https://w3id.org/diagkg/system/three_cubes/")
    assert (sys_ns.main_bulb, DK.within.uri, sys_ns.three_cubes) in inferred
    assert (sys_ns.fn_illuminate, DK.dependsOn.uri, sys_ns.fn_supply_power) in inferred


def test_auto_reasoner_falls_back_to_owlrl_without_java(monkeypatch):
    from diagkg.kg import reasoning

    from ..support.paths import THREE_CUBES

    monkeypatch.setattr(reasoning, "java_available", lambda: False)
    data = rdflib.Graph().parse(THREE_CUBES)
    inferred = reasoning.reason(data, engine="auto")
    sys_ns = rdflib.Namespace("https://w3id.org/diagkg/system/three_cubes/")
    assert (sys_ns.main_bulb, DK.within.uri, sys_ns.three_cubes) in inferred
    with pytest.raises(reasoning.ReasonerUnavailable, match="Java"):
        reasoning.reason(data, engine="hermit")


def test_hermit_starts_with_the_quick_jvm_options_unless_the_user_set_their_own(tmp_path, monkeypatch):
    """HermiT's Java gets :data:`JVM_OPTIONS` through ``JDK_JAVA_OPTIONS`` for its run only (the
    variable is gone afterwards); a user's own ``JDK_JAVA_OPTIONS`` is what it gets instead, and is kept."""
    import os
    import shutil

    import owlready2

    from diagkg.kg import reasoning

    from ..support.paths import THREE_CUBES

    seen = tmp_path / "seen"
    java = tmp_path / "java"
    java.write_text(f'#!/bin/sh\nprintf "%s\\n" "$JDK_JAVA_OPTIONS" >> {seen}\nexec {shutil.which("java")} "$@"\n')
    java.chmod(0o755)
    monkeypatch.setattr(owlready2, "JAVA_EXE", str(java))
    monkeypatch.delenv("JDK_JAVA_OPTIONS", raising=False)
    data = rdflib.Graph().parse(THREE_CUBES)
    sys_ns = rdflib.Namespace("https://w3id.org/diagkg/system/three_cubes/")
    inferred = reasoning.reason(data, engine="hermit")
    assert (sys_ns.main_bulb, DK.within.uri, sys_ns.three_cubes) in inferred
    assert "JDK_JAVA_OPTIONS" not in os.environ
    monkeypatch.setenv("JDK_JAVA_OPTIONS", "-Xss2m")
    assert set(reasoning.reason(data, engine="hermit")) == set(inferred)          # the same entailments
    assert os.environ["JDK_JAVA_OPTIONS"] == "-Xss2m"
    assert seen.read_text().splitlines() == [reasoning.JVM_OPTIONS, "-Xss2m"]
