"""The one write path for updates (diagkg.kg.updates; issues 25 and 26), on the torch written in
tests/support/torch.py and on graphs written here.

* the change read off a copy is exactly what pyoxigraph does running the same update (every
  operation kind, graph variables, blank nodes, WITH/USING, requests whose later operations read
  what earlier ones wrote), whether the footprint is read from the update or taken as everything;
* the system, scenario and file graphs an update touches are validated in context, get a new
  version and fresh inferences, or the update is refused whole and nothing changes;
* caches derived from a system follow its version in this process;
* on disk, an update is worked out in a worker process that holds no lock, and at its time
  limit it is stopped with nothing written.
"""

from __future__ import annotations

import shutil
import threading
import time

import pyoxigraph as ox
import pytest
import rdflib
from rdflib.compare import isomorphic

from diagkg.errors import UpdateRefused, UpdateTimeout, ValidationError
from diagkg.kg import graphs
from diagkg.kg.deltas import footprint
from diagkg.kg.loading import inference_digest
from diagkg.kg.rdfio import to_rdflib
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.updates import GraphChange, apply_update, commit, compute

from ..support.cli import run_cli
from ..support.serving import torch_store

SEED = """
@prefix ex: <http://ex.org/> .
ex:g1 { ex:a ex:p 1 . ex:b ex:p 2 . ex:a ex:q ex:b . _:n ex:p 3 . _:n ex:r "x" . }
ex:g2 { ex:a ex:p 10 . ex:c ex:p 20 . }
{ ex:d ex:p 5 . }
"""
EX = "PREFIX ex: <http://ex.org/> "
EXACT = {
    "insert data, blank nodes, a double": EX + "INSERT DATA { GRAPH ex:g3 { ex:x ex:p 1E3 , _:b . _:b ex:q 'y' } }",
    "delete data": EX + "DELETE DATA { GRAPH ex:g1 { ex:a ex:p 1 } }",
    "delete where, graph variable": EX + "DELETE WHERE { GRAPH ?g { ?s ex:p 10 } }",
    "with, template blank nodes": EX + "WITH ex:g1 DELETE { ?s ex:p ?o } INSERT { ?s ex:p2 ?o . "
                                       "GRAPH ex:g4 { ?s ex:seen [ ex:v ?o ] } } WHERE { ?s ex:p ?o FILTER(isIRI(?s)) }",
    "using": EX + "INSERT { GRAPH ex:g5 { ?s ex:copy ?o } } USING ex:g2 WHERE { ?s ex:p ?o }",
    "using named": EX + "INSERT { GRAPH ex:g5 { ?g ex:has ?s } } USING NAMED ex:g2 WHERE { GRAPH ?g { ?s ex:p ?o } }",
    "second reads the first": EX + "INSERT DATA { GRAPH ex:g6 { ex:m ex:p 1 } } ; "
                                   "INSERT { GRAPH ex:g7 { ?s ex:again ?o } } WHERE { GRAPH ex:g6 { ?s ex:p ?o } }",
    "second deletes what the first wrote": EX + "INSERT DATA { GRAPH ex:g1 { ex:z ex:p 9 } } ; "
                                                "DELETE WHERE { GRAPH ex:g1 { ?s ex:p 9 } }",
    "graph variable in the template": EX + "INSERT { GRAPH ?g { ?s ex:tag 't' } } WHERE { GRAPH ?g { ?s ex:p ?o } }",
    "a stored blank node linked elsewhere": EX + "INSERT { GRAPH ex:g8 { ?s ex:link ?o } } WHERE { GRAPH ex:g1 { ?s ex:r ?o } }",
    "a stored blank node changed": EX + "DELETE { GRAPH ex:g1 { ?s ex:r ?o } } INSERT { GRAPH ex:g1 { ?s ex:r 'z' } } "
                                        "WHERE { GRAPH ex:g1 { ?s ex:r ?o } }",
    "clear": EX + "CLEAR GRAPH ex:g1",
    "drop": EX + "DROP GRAPH ex:g2",
    "drop named": "DROP NAMED",
    "create": EX + "CREATE GRAPH ex:empty",
    "copy (shares a blank node)": EX + "COPY ex:g1 TO ex:g2",
    "add default": EX + "ADD DEFAULT TO ex:g1",
    "base (every graph)": "BASE <http://ex.org/> INSERT DATA { GRAPH <g9> { <a> <b> <c> } }",
    "nothing matches": EX + "DELETE WHERE { GRAPH ex:g1 { ?s ex:nothing ?o } }",
}

# updates that write the store's default graph, where diagkg keeps nothing (dump and graphs leave it out): refused
WRITES_DEFAULT = {
    "insert data, default graph": EX + "INSERT DATA { ex:a ex:b ex:c }",
    "clear default": "CLEAR DEFAULT",
    "move to default": EX + "MOVE ex:g2 TO DEFAULT",
    "delete where, default graph": EX + "DELETE WHERE { ?s ex:p 5 }",
}


def _seeded() -> ox.Store:
    raw = ox.Store()
    raw.load(SEED.encode("utf-8"), ox.RdfFormat.TRIG)
    return raw


def _copy(raw: ox.Store) -> ox.Store:
    out = ox.Store()
    for g in raw.named_graphs():
        out.add_graph(g)
    out.extend(raw.quads_for_pattern(None, None, None, None))
    return out


def _dataset(raw: ox.Store) -> rdflib.Graph:
    """A whole dataset as one graph (each quad reified, each named graph declared), so that two
    datasets are isomorphic exactly when they are equal up to blank-node labels, shared nodes included."""
    out = rdflib.Graph()
    ex = rdflib.Namespace("urn:test:")
    for g in raw.named_graphs():
        out.add((to_rdflib(g), rdflib.RDF.type, ex.Graph))
    for q in raw.quads_for_pattern(None, None, None, None):
        st = rdflib.BNode()
        graph = ex.default if isinstance(q.graph_name, ox.DefaultGraph) else to_rdflib(q.graph_name)
        for p, term in ((ex.s, q.subject), (ex.p, q.predicate), (ex.o, q.object)):
            out.add((st, p, to_rdflib(term)))
        out.add((st, ex.g, graph))
    return out


@pytest.mark.parametrize("everything", [False, True], ids=["footprint", "every graph"])
@pytest.mark.parametrize("update", list(EXACT.values()), ids=list(EXACT))
def test_the_change_is_what_pyoxigraph_does(update, everything):
    direct = _seeded()
    direct.update(update)
    store = KnowledgeStore.over(_seeded())
    change = compute(_copy(store.raw), update, everything=everything)
    assert not change.text or commit(store, change)
    assert isomorphic(_dataset(store.raw), _dataset(direct))
    # and through the public entry point
    again = KnowledgeStore.over(_seeded())
    apply_update(again, update)
    assert isomorphic(_dataset(again.raw), _dataset(direct))


@pytest.mark.parametrize("update", list(WRITES_DEFAULT.values()), ids=list(WRITES_DEFAULT))
def test_an_update_that_writes_the_default_graph_is_refused(update):
    store = KnowledgeStore.over(_seeded())
    before = set(store.raw.quads_for_pattern(None, None, None, None))
    with pytest.raises(UpdateRefused):
        apply_update(store, update)
    assert set(store.raw.quads_for_pattern(None, None, None, None)) == before


def test_the_footprint_is_read_from_the_update():
    fp = footprint(EX + "WITH ex:w DELETE { ?s ex:p ?o } INSERT { GRAPH ex:g { ?s ex:q ?o } } USING ex:u "
                        "WHERE { ?s ex:p ?o GRAPH ex:h { ?s ?x ?y } FILTER NOT EXISTS { GRAPH ex:e { ?s ?x 1 } } }")
    assert fp.writes == {"http://ex.org/w", "http://ex.org/g"}
    assert {"http://ex.org/u", "http://ex.org/h", "http://ex.org/e"} <= fp.reads and not fp.reads_all
    fp = footprint(EX + "LOAD <http://ex.org/file.ttl> INTO GRAPH ex:l ; COPY ex:a TO ex:b")
    assert fp.loads and fp.writes == {"http://ex.org/l", "http://ex.org/b"} and "http://ex.org/a" in fp.reads
    for doubtful in (EX + "INSERT { GRAPH ?g { ?s ex:p 1 } } WHERE { ?s ex:q ?g }",
                     "BASE <http://ex.org/> INSERT DATA { GRAPH <g> { <a> <b> <c> } }",
                     "DROP ALL", "this is not SPARQL"):
        assert footprint(doubtful).writes_all, doubtful


# ---------------------------------------------------------------------------
# the rules, on the torch
# ---------------------------------------------------------------------------

SYSTEM = graphs.system("torch")
BULB = "https://example.org/torch/bulb"


def bulb_resistance(value: str) -> str:
    g = SYSTEM.value
    return (f"PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
            f"DELETE {{ GRAPH <{g}> {{ <{BULB}> dk:resistance ?r }} }}\n"
            f"INSERT {{ GRAPH <{g}> {{ <{BULB}> dk:resistance {value} }} }}\n"
            f"WHERE {{ GRAPH <{g}> {{ <{BULB}> dk:resistance ?r }} }}")


@pytest.fixture()
def torch(torch_quads) -> KnowledgeStore:
    s = KnowledgeStore.memory()
    s.add_quads(torch_quads)
    return s


def _quads(store: KnowledgeStore) -> set[ox.Quad]:
    return set(store.raw.quads_for_pattern(None, None, None, None))


def _resistance(store: KnowledgeStore) -> list[float]:
    return [float(q.object.value) for q in store.raw.quads_for_pattern(
        ox.NamedNode(BULB), ox.NamedNode("https://w3id.org/diagkg/ontology#resistance"), None, SYSTEM)]


def test_a_system_update_is_validated_versioned_and_reasoned(torch):
    old = torch.version_of(SYSTEM)
    origin = list(torch.raw.quads_for_pattern(SYSTEM, ox.NamedNode("https://w3id.org/diagkg/ontology#loadedFrom"),
                                              None, SYSTEM))
    report = apply_update(torch, bulb_resistance("1e9"))
    assert report.changes == [GraphChange(SYSTEM.value, 1, 1)]
    assert _resistance(torch) == [1e9]
    new = torch.version_of(SYSTEM)
    assert new != old and [(r.graph, r.before, r.after) for r in report.revisions] == [(SYSTEM.value, old, new)]
    assert list(torch.raw.quads_for_pattern(SYSTEM, ox.NamedNode("https://w3id.org/diagkg/ontology#loadedFrom"),
                                            None, SYSTEM)) == origin
    assert torch.version_of(graphs.inferred("torch")) == inference_digest(new)
    assert report.inferred["torch"] > 0
    assert sorted(report.revalidated) == [graphs.named("scenario", "TORCH.1").value,
                                          graphs.named("scenario", "TORCH.2").value]
    assert not apply_update(torch, bulb_resistance("1e9")).changes        # the same again: nothing to write
    assert torch.version_of(SYSTEM) == new


@pytest.mark.parametrize("value", ["-5", '"high"', "0"])
def test_an_update_that_breaks_the_shapes_writes_nothing(torch, value):
    before = _quads(torch)
    with pytest.raises(ValidationError) as caught:
        apply_update(torch, bulb_resistance(value))
    assert any("resistance" in v.path and "bulb" in v.focus for v in caught.value.violations)
    assert _quads(torch) == before


SCENARIO_1 = graphs.named("scenario", "TORCH.1").value
REFUSED = {
    "inferences": "PREFIX dk: <https://w3id.org/diagkg/ontology#> DELETE WHERE { "
                  f"GRAPH <{graphs.inferred('torch').value}> {{ ?s a ?c }} }}",
    "ontology": f"INSERT DATA {{ GRAPH <{graphs.ONTOLOGY.value}> {{ <urn:a> <urn:b> <urn:c> }} }}",
    "a system's key": "PREFIX dk: <https://w3id.org/diagkg/ontology#> DELETE { GRAPH ?g { ?s dk:systemKey ?k } } "
                      "INSERT { GRAPH ?g { ?s dk:systemKey 'lamp' } } WHERE { GRAPH ?g { ?s dk:systemKey ?k } }",
    "a scenario number another holds": "PREFIX dk: <https://w3id.org/diagkg/ontology#> "
                                       f"DELETE {{ GRAPH <{SCENARIO_1}> {{ ?s dk:scenarioNumber ?n }} }} "
                                       f"INSERT {{ GRAPH <{SCENARIO_1}> {{ ?s dk:scenarioNumber 9102 }} }} "
                                       f"WHERE {{ GRAPH <{SCENARIO_1}> {{ ?s dk:scenarioNumber ?n }} }}",
    "a system scenarios run on, emptied": f"CLEAR GRAPH <{SYSTEM.value}>",
}


@pytest.mark.parametrize("update", list(REFUSED.values()), ids=list(REFUSED))
def test_what_no_update_may_do(torch, update):
    before = _quads(torch)
    with pytest.raises(UpdateRefused):
        apply_update(torch, update)
    assert _quads(torch) == before


def test_a_system_dropped_with_its_scenarios_takes_its_inferences(torch):
    update = " ; ".join(f"DROP GRAPH <{g}>" for g in (SYSTEM.value, SCENARIO_1,
                                                       graphs.named("scenario", "TORCH.2").value))
    report = apply_update(torch, update)
    assert {r.graph for r in report.revisions if not r.after} == {SYSTEM.value, SCENARIO_1,
                                                                  graphs.named("scenario", "TORCH.2").value}
    names = {g.value for g in torch.raw.named_graphs()}
    assert SYSTEM.value not in names and graphs.inferred("torch").value not in names


def test_caches_follow_the_version(torch):
    from diagkg.env.service import Session, simulator_for
    from diagkg.env.workspace import assistant_view, resolve_scenario
    from diagkg.runs.runner import run_session

    def lamps() -> frozenset[str]:      # what a session judges a repair by: the lamps the working system lights
        with Session(resolve_scenario(torch, "TORCH.1"), torch) as session:
            session.reset(seed=0)
            return session.nominal_bulbs

    sim = simulator_for(torch, "torch")
    view = assistant_view(torch, "https://example.org/torch/torch", "torch")
    assert run_session("TORCH.1", "oracle", store=torch, record=False).end == "success" and lamps() == {"bulb"}
    apply_update(torch, bulb_resistance("1e9"))
    assert lamps() == frozenset()          # a bulb of 1e9 ohm lights in no working torch
    assert simulator_for(torch, "torch") is not sim
    again = assistant_view(torch, "https://example.org/torch/torch", "torch")
    assert again is not view and again.version_of(SYSTEM) == torch.version_of(SYSTEM)
    # the view's copy holds the changed description (seeds are read once per version, not once per store)
    old_copy, new_copy = (set(v._backing.raw.quads_for_pattern(None, None, None, SYSTEM)) for v in (view, again))
    assert new_copy == set(torch.raw.quads_for_pattern(None, None, None, SYSTEM)) != old_copy
    after = run_session("TORCH.1", "oracle", store=torch, record=False)
    # a store that never saw the old description ends the same (the flat battery now stops nothing the session
    # judges by: no action restores the torch, only the hypothesis ends the session, scoring 6)
    fresh = KnowledgeStore.memory()
    fresh.add_quads(torch.raw.quads_for_pattern(None, None, None, None))
    again_fresh = run_session("TORCH.1", "oracle", store=fresh, record=False)
    assert (after.end, after.cost, after.rounds) == (again_fresh.end, again_fresh.cost, again_fresh.rounds)


def test_a_change_applies_only_to_the_store_it_was_worked_out_on():
    store = KnowledgeStore.over(_seeded())
    change = compute(_copy(store.raw), EX + "INSERT { GRAPH ex:copy { ?s ?p ?o } } WHERE { GRAPH ex:g2 { ?s ?p ?o } }")
    store.add_quads([ox.Quad(ox.NamedNode("http://ex.org/e"), ox.NamedNode("http://ex.org/p"), ox.Literal("30"),
                             ox.NamedNode("http://ex.org/g2"))])          # another writer, meanwhile
    before = _quads(store)
    assert commit(store, change) is False       # what it read changed: nothing written
    assert _quads(store) == before
    assert commit(KnowledgeStore.over(_seeded()), change) is True


# ---------------------------------------------------------------------------
# on disk: a worker process, no lock held, a time limit
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch_on_disk(tmp_path_factory):
    """``torch_on_disk(folder)``: a copy, in ``folder``, of one on-disk store holding the torch and a scenario
    (:func:`torch_store`, loaded once for the module); each test writes only its own copy."""
    template = torch_store(tmp_path_factory.mktemp("torch"))

    def copy(folder):
        shutil.copytree(template, folder / "store")
        return folder / "store"
    return copy


CROSS = ("INSERT { GRAPH <urn:x:slow> { ?a <urn:x:p> ?z } } "
         "WHERE { GRAPH ?g1 { ?a ?b ?c } GRAPH ?g2 { ?d ?e ?f } GRAPH ?g3 { ?g ?h ?i } GRAPH ?g4 { ?j ?k ?z } }")


def test_an_update_holds_no_lock_while_worked_out_and_stops_at_its_time_limit(tmp_path, torch_on_disk):
    path = torch_on_disk(tmp_path)
    before = KnowledgeStore.open_for_reading(path).dump()
    outcome: list[BaseException] = []

    def slow() -> None:
        try:
            apply_update(KnowledgeStore(path), CROSS, timeout=4)
        except BaseException as exc:  # noqa: BLE001 - looked at below
            outcome.append(exc)

    worker = threading.Thread(target=slow)
    t0 = time.monotonic()
    worker.start()
    while not any(p.name.startswith(".diagkg-update-") for p in tmp_path.iterdir()):
        assert time.monotonic() - t0 < 30, "the update's worker never started"
        time.sleep(0.05)
    note = ox.Quad(ox.NamedNode("urn:x:a"), ox.NamedNode("urn:x:b"), ox.Literal("meanwhile"), ox.NamedNode("urn:x:n"))
    KnowledgeStore(path, wait=1.0).add_quads([note])        # another writer gets the lock at once
    worker.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], UpdateTimeout)
    after = KnowledgeStore.open_for_reading(path)
    assert not after.raw.contains_named_graph(ox.NamedNode("urn:x:slow"))
    assert set(after.raw.quads_for_pattern(None, None, None, None)) == _quads_of(before) | {note}
    assert not any(p.name.startswith(".diagkg-update-") for p in tmp_path.iterdir())   # its checkpoint is gone


def _quads_of(dump: bytes) -> set[ox.Quad]:
    return {q for q in ox.parse(dump, format=ox.RdfFormat.N_QUADS) if isinstance(q, ox.Quad)}


def test_diagkg_update_refuses_a_negative_resistance_stops_at_its_timeout_and_applies_a_valid_one(tmp_path, torch_on_disk):
    path = torch_on_disk(tmp_path)
    store = ["--store", str(path)]
    before = KnowledgeStore.open_for_reading(path)
    old, dump = before.version_of(SYSTEM), before.dump()
    r = run_cli(*store, "update", bulb_resistance("-5"))
    assert r.returncode == 1 and "resistance" in r.stderr, r.stderr
    r = run_cli(*store, "update", CROSS, "--timeout", "2")
    assert r.returncode == 2 and "time limit of 2 s" in r.stderr, r.stderr
    assert _quads_of(KnowledgeStore.open_for_reading(path).dump()) == _quads_of(dump)
    r = run_cli(*store, "update", bulb_resistance("1e9"))
    assert r.returncode == 0, r.stderr
    assert f"<{SYSTEM.value}>: 1 triple(s) added, 1 removed" in r.stdout and "reasoned over torch" in r.stdout
    assert KnowledgeStore.open_for_reading(path).version_of(SYSTEM) not in ("", old)


def test_what_parts_afford_is_shared_between_sessions_and_follows_the_version(torch):
    # the affordance answers are remembered for every session of the process by the system
    # graph's version: an update that takes the bulb's dk:Observable away is seen by the next session
    from diagkg import make
    from diagkg.env import access

    def observable(store: KnowledgeStore) -> frozenset[str]:
        with make("TORCH.1", store) as session:         # closed: its working memory goes back to the pool
            session.reset(seed=0)
            return access.affording(session, "Observable")

    assert BULB in observable(torch)
    assert BULB in observable(torch)                     # answered from the shared memo
    apply_update(torch, "PREFIX dk: <https://w3id.org/diagkg/ontology#> "
                        f"DELETE DATA {{ GRAPH <{SYSTEM.value}> {{ <{BULB}> dk:affords dk:Observable }} }}")
    assert BULB not in observable(torch)
