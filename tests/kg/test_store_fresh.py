"""``write_graphs(fresh=...)``: new graphs added by a bulk load just before the update, under one lock."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from diagkg.errors import InputError
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.bike_lamp import bike_lamp

P = ox.NamedNode("urn:p")


def _quads(graph: ox.NamedNode, *values: str) -> list[ox.Quad]:
    return [ox.Quad(ox.NamedNode("urn:s"), P, ox.Literal(v), graph) for v in values]


def _content(s: KnowledgeStore, graph: ox.NamedNode) -> set[str]:
    return {q.object.value for q in s.quads(graph)}


@pytest.mark.parametrize("on_disk", [True, False])
def test_fresh_graphs_go_in_with_the_rest_and_one_held_meanwhile_is_replaced(tmp_path, on_disk):
    s = KnowledgeStore(tmp_path / "store") if on_disk else KnowledgeStore.memory()
    held, gone, tally = graphs.named("file", "held"), graphs.named("file", "gone"), graphs.named("file", "tally")
    s.write_graphs({held: [q.triple for q in _quads(held, "old")], gone: [q.triple for q in _quads(gone, "x")],
                    tally: [q.triple for q in _quads(tally, "1")]})
    a, b = graphs.named("file", "a"), graphs.named("file", "b")
    generation = s.generation
    s.write_graphs({tally: [q.triple for q in _quads(tally, "3")]}, drop=[gone],
                   fresh={a: _quads(a, "a1", "a2"), b: _quads(b, "b1"), held: _quads(held, "new")})
    assert s.generation == generation + 1
    assert {g for g, _ in s.graphs()} == {held.value, tally.value, a.value, b.value}
    assert _content(s, a) == {"a1", "a2"} and _content(s, b) == {"b1"}
    assert _content(s, held) == {"new"}          # the store held it: emptied first, not merged
    assert _content(s, tally) == {"3"}
    if on_disk:
        assert _content(KnowledgeStore.open_for_reading(tmp_path / "store"), a) == {"a1", "a2"}


def test_an_empty_file_is_not_loaded_as_a_graph(tmp_path):
    """`diagkg load empty.ttl` (or a dump of nothing) said "loaded … (0 triples)" and left a graph holding only its
    provenance, which any update then removes as a graph left empty. It is refused, and nothing of the batch is
    loaded."""
    (tmp_path / "empty.ttl").write_text("# nothing yet\n@prefix dk: <https://w3id.org/diagkg/ontology#> .\n")
    (tmp_path / "elamp.ttl").write_text(bike_lamp("elamp"))
    store = KnowledgeStore.memory()
    with pytest.raises(InputError, match="empty.ttl: holds no RDF statements"):
        load_files(store, [tmp_path / "elamp.ttl", tmp_path / "empty.ttl"])
    assert [g for g, _ in store.graphs() if "/file/" in g or "/system/" in g] == []
