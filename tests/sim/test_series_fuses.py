"""Two fuses in series, written here as a stranger wired a garden lantern (not shipped): a 12 V battery, a 3 A main
fuse, a 0.5 A lantern fuse, and a lamp. A short across the lamp blew both fuses at once ("fuse_main (blown at 18.99
A), fuse_branch (blown at 18.99 A)"), and a small overload (3.9 A) blew the 3 A fuse at 1.3 times its rating
alongside the 0.5 A one at 7.8 times: in a real lantern the 0.5 A fuse opens first and the 3 A one, its current gone,
holds. Of the parts of one type that one solve would damage alike, only those furthest past their limit are
damaged, and the circuit is solved again."""

from __future__ import annotations

import pytest

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import state_from_turtle
from diagkg.sim.simulator import Simulator

LANTERN = '''\
@prefix :        <https://example.org/lantern/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:lantern a dk:System ; dk:systemKey "lantern" ; dcterms:identifier "lantern" ; rdfs:label "Garden lantern" ;
    dk:groundReference :bat.neg ;
    dcterms:description """A 12 V battery feeds a lamp through a 3 A main fuse and a 0.5 A lantern fuse; a second
0.5 A fuse guards a marker lamp.""" .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :lantern .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "12 V battery" ; dk:partOf :box ;
    dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:main a dk:Fuse ; dcterms:identifier "main" ; rdfs:label "3 A main fuse" ; dk:partOf :box ; dk:ratedCurrent 3.0 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :main.p, :main.n .
:main.p a dk:Port ; dk:portName "p" .
:main.n a dk:Port ; dk:portName "n" .
:branch a dk:Fuse ; dcterms:identifier "branch" ; rdfs:label "0.5 A lantern fuse" ; dk:partOf :box ; dk:ratedCurrent 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :branch.p, :branch.n .
:branch.p a dk:Port ; dk:portName "p" .
:branch.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lantern lamp" ; dk:partOf :box ; dk:resistance 72 ;
    dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:marker_fuse a dk:Fuse ; dcterms:identifier "marker_fuse" ; rdfs:label "0.5 A marker fuse" ; dk:partOf :box ;
    dk:ratedCurrent 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :marker_fuse.p, :marker_fuse.n .
:marker_fuse.p a dk:Port ; dk:portName "p" .
:marker_fuse.n a dk:Port ; dk:portName "n" .
:marker a dk:Bulb ; dcterms:identifier "marker" ; rdfs:label "Marker lamp" ; dk:partOf :box ; dk:resistance 72 ;
    dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :marker.p, :marker.n .
:marker.p a dk:Port ; dk:portName "p" .
:marker.n a dk:Port ; dk:portName "n" .

:bat.pos dk:connectedTo :main.p .
:main.n dk:connectedTo :branch.p, :marker_fuse.p .
:branch.n dk:connectedTo :lamp.p .
:marker_fuse.n dk:connectedTo :marker.p .
:lamp.n dk:connectedTo :bat.neg .
:marker.n dk:connectedTo :bat.neg .
'''

PREFIXES = "@prefix : <https://example.org/lantern/> .\n@prefix dk: <https://w3id.org/diagkg/ontology#> .\n"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Simulator:
    path = tmp_path_factory.mktemp("lantern") / "lantern.ttl"
    path.write_text(LANTERN)
    store = KnowledgeStore.memory()
    load_files(store, [path])
    return Simulator.from_store(store, "lantern")


def _short(sim: Simulator, part: str, ohms: float) -> dict[str, float]:
    state = state_from_turtle(PREFIXES + f":{part} dk:hasOverride [ a dk:ParameterValue ; dk:parameter dk:resistance ; "
                              f"dk:value {ohms} ] .", "state.ttl", sim.skeleton)
    r = sim.simulate(state)
    assert r.converged
    return {d.component: d.current for d in r.damage}


def test_the_fuse_furthest_past_its_rating_blows_and_the_other_holds(sim):
    r = sim.simulate()
    assert set(r.lit) == {"lamp", "marker"} and not r.damage
    # the lamp nearly shorted: 12 V / 3 ohm = 4 A through both fuses, 1.3 times the main fuse's rating, 8 times
    # the lantern fuse's
    blown = _short(sim, "lamp", 3.0)
    assert set(blown) == {"branch"} and blown["branch"] == pytest.approx(12 / 3, rel=0.02)
    after = sim.simulate(state_from_turtle(PREFIXES + ":branch dk:blown true .", "state.ttl", sim.skeleton))
    assert after.lit == ("marker",) and abs(after.components["main"].current) < 3.0
    # the current law where the main fuse's current divides: the marker's branch carries it all
    c = after.components
    assert c["main"].current == pytest.approx(c["marker_fuse"].current + c["branch"].current, rel=1e-6)


def test_alike_fuses_at_one_multiple_blow_together(sim):
    # both lamps nearly shorted: each 0.5 A fuse at the same multiple; together 8 A through the main fuse, less
    # than three times its rating, so it holds
    state = state_from_turtle(PREFIXES + "".join(
        f":{p} dk:hasOverride [ a dk:ParameterValue ; dk:parameter dk:resistance ; dk:value 3.0 ] .\n"
        for p in ("lamp", "marker")), "state.ttl", sim.skeleton)
    r = sim.simulate(state)
    assert {d.component for d in r.damage} == {"branch", "marker_fuse"}
    assert r.lit == ()


def test_an_edited_file_of_a_loaded_system_is_simulated_as_edited(tmp_path):
    # `diagkg simulate FILE` works in a scratch copy of the store: where the store already held the system, it said
    # "nothing was loaded … load with --replace", an option simulate does not have
    from ..support.cli import run_cli

    store = str(tmp_path / "store")
    (tmp_path / "lantern.ttl").write_text(LANTERN)
    assert run_cli("--store", store, "load", str(tmp_path / "lantern.ttl")).returncode == 0
    (tmp_path / "edited.ttl").write_text(LANTERN.replace("dk:resistance 72 ;\n    dk:powerThreshold 0.5 ;\n    dk:affords "
                                                         "dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; "
                                                         "dk:hasPort :lamp.p", "dk:resistance 36 ;\n    dk:powerThreshold "
                                                         "0.5 ;\n    dk:affords dk:Observable, dk:Reachable, "
                                                         "dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p"))
    r = run_cli("--store", store, "simulate", str(tmp_path / "edited.ttl"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert _lamp_milliamps(r.stdout) == pytest.approx(12 / 36 * 1000, rel=0.01), r.stdout   # not 12 V / 72 ohm
    r = run_cli("--store", store, "simulate", "lantern")
    assert _lamp_milliamps(r.stdout) == pytest.approx(12 / 72 * 1000, rel=0.01), r.stdout   # the store's own


def _lamp_milliamps(table: str) -> float:
    return float(next(x for x in table.splitlines() if x.startswith("lamp ")).split()[-3])
