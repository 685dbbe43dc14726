"""The campaign's writer hands the trajectories its workers wrote as N-Quads to the store as they are (issue 31:
no parsing again in the writer): Oxigraph parses them as it loads a batch. Only N-Quads whose every line ends in
the trajectory's graph go so; anything else is parsed and put in that graph, as before. On the torch (a system
written in the tests), sessions of a campaign run in this process."""

from __future__ import annotations

import dataclasses

import pyoxigraph as ox
import pytest

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, writer
from diagkg.evaluation.budget import Spending
from diagkg.evaluation.campaign import CampaignConfig, Task
from diagkg.evaluation.sessions import run_task
from diagkg.evaluation.tally import from_rows
from diagkg.evaluation.writer import CampaignWriter, in_graph
from diagkg.kg import rdfio

G = ox.NamedNode("https://example.org/trajectory/t1")
S, P = ox.NamedNode("https://example.org/s"), ox.NamedNode("https://example.org/p")


def nquads(*quads: ox.Quad) -> bytes:
    return ox.serialize(list(quads), format=ox.RdfFormat.N_QUADS) or b""


@pytest.mark.parametrize("data, expected", [
    (nquads(ox.Quad(S, P, ox.Literal("two\nlines <https://example.org/trajectory/t1> .\n"), G),
            ox.Quad(ox.BlankNode("b"), P, ox.Literal("x", language="en"), G)), True),
    (b"", True),
    (nquads(ox.Quad(S, P, S, G), ox.Quad(S, P, S, ox.NamedNode("https://example.org/trajectory/t2"))), False),
    (nquads(ox.Quad(S, P, S, G), ox.Quad(S, P, ox.Literal("ends <https://example.org/trajectory/t1> ."))), False),
    (nquads(ox.Quad(S, P, S, G)).rstrip(b"\n"), False),
])
def test_n_quads_handed_on_unparsed_are_those_all_in_the_graph(data: bytes, expected: bool) -> None:
    assert in_graph(data, G) is expected


@pytest.fixture()
def batch(torch_copy):
    """Three torch sessions of a campaign, as its workers send them, and what a campaign's loop hands them to."""
    store = torch_copy
    campaign = cp.create(store, CampaignConfig(assistants=("oracle",), scenarios=(9101,), runs=3, name="nq"))
    outcomes = [run_task(store, Task(campaign.iri, "oracle", {}, 9101, seed, 0)) for seed in range(3)]
    tallies = from_rows(campaign, [])
    return store, campaign, outcomes, CampaignWriter(store, tallies, bulk_from=1), tallies


def graph_quads(store, graph: str) -> set[ox.Quad]:
    return set(store.raw.quads_for_pattern(None, None, None, ox.NamedNode(graph)))


def test_a_batch_reaches_the_store_without_being_parsed_in_python(batch, monkeypatch) -> None:
    store, campaign, outcomes, w, tallies = batch
    spending, done = Spending.read(store, campaign, None), {}
    parsed: list[int] = []
    real = rdfio.quads_of
    monkeypatch.setattr(writer, "quads_of", lambda q: parsed.append(1) or real(q))
    monkeypatch.setattr(execution.ox, "parse", lambda *a, **k: pytest.fail("the writer parsed what a worker wrote"))
    for o in outcomes:
        execution.store_outcome(w, o, done, tallies, spending)
    assert w.commit() == 3 and not parsed
    monkeypatch.undo()
    for o in outcomes:        # each graph holds exactly what its worker wrote (as a store holds it: numbers canonical)
        wrote = ox.Store()
        wrote.extend(ox.parse(o.nquads, format=ox.RdfFormat.N_QUADS))
        assert graph_quads(store, o.graph) == set(wrote) and len(wrote) > 20
    assert not list(store.raw.quads_for_pattern(None, None, None, ox.DefaultGraph()))


def test_n_quads_outside_the_trajectory_graph_are_put_in_it(batch) -> None:
    store, campaign, outcomes, w, tallies = batch
    spending, done = Spending.read(store, campaign, None), {}
    stray = ox.Quad(S, P, ox.Literal("stray"))                     # in the default graph
    odd = dataclasses.replace(outcomes[0], nquads=outcomes[0].nquads + nquads(stray))
    for o in (odd, *outcomes[1:]):
        execution.store_outcome(w, o, done, tallies, spending)
    assert w.commit() == 3
    assert ox.Quad(S, P, ox.Literal("stray"), ox.NamedNode(odd.graph)) in graph_quads(store, odd.graph)
    assert not list(store.raw.quads_for_pattern(None, None, None, ox.DefaultGraph()))
