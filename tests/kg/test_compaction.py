"""Compacting the on-disk store (issue 31): every commit leaves table files of its own that each read
looks into; ``diagkg.kg.compaction.optimize`` merges them and changes no quad, a campaign that grew the store
by a fifth compacts it at its end, and ``diagkg compact`` does it on demand. On the torch written in
the tests (a real Oxigraph store on disk)."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox

from diagkg.kg.compaction import GROWTH, compact_if_grown, disk_bytes, optimize
from diagkg.kg.store import KnowledgeStore

from ..support.cli import run_cli
from ..support.torch import FLAT, TORCH, scenario_text

GRAPH = "https://example.org/test/graph/"


def _store_with_commits(path: Path, commits: int) -> KnowledgeStore:
    """The torch, then ``commits`` commits as a campaign's writer makes them: each a batch of new trajectory-like
    graphs added by a bulk load, which leaves table files of its own beside the others."""
    store = KnowledgeStore(path)
    torch = ox.NamedNode(GRAPH + "torch")
    store.replace_graph(torch, (q.triple for q in _torch_quads()))
    label = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
    start = sum(1 for _ in store.raw.named_graphs())
    for i in range(start, start + commits):
        fresh = {}
        for t in range(3):
            graph = ox.NamedNode(f"{GRAPH}trajectory/{i}-{t}")
            fresh[graph] = [ox.Quad(ox.NamedNode(f"https://example.org/test/{i}-{t}/round/{k}"), label,
                                    ox.Literal(f"round {k}"), graph) for k in range(100)]
        store.write_graphs({}, fresh=fresh)
    return store


def _torch_quads() -> list[ox.Quad]:
    return list(ox.parse(TORCH.encode(), format=ox.RdfFormat.TURTLE))


def _quads(store: KnowledgeStore) -> list[str]:
    return sorted(str(q) for q in store.raw.quads_for_pattern(None, None, None, None))


def test_compacting_merges_the_files_commits_left_and_changes_no_quad(tmp_path):
    store = _store_with_commits(tmp_path / "store", 12)
    before, files = _quads(store), len(list((tmp_path / "store").glob("*.sst")))
    assert files >= 12                           # each bulk load leaves files of its own
    seconds = optimize(store)
    assert seconds > 0
    store.refresh()
    assert _quads(store) == before and len(before) == 12 * 3 * 100 + len(_torch_quads())
    assert len(list((tmp_path / "store").glob("*.sst"))) < files       # some merged
    assert optimize(KnowledgeStore.memory()) == 0.0     # nothing to do in memory


def test_a_campaign_compacts_only_once_its_writes_are_a_fair_share_of_the_store(tmp_path):
    store = _store_with_commits(tmp_path / "store", 2)
    size = disk_bytes(store)
    assert size > 0
    _store_with_commits(tmp_path / "store", 12)        # the campaign's commits: the store grew
    grown = disk_bytes(store) - size
    assert grown >= GROWTH * size
    told: list[str] = []
    assert compact_if_grown(store, size, 0, told.append) == 0.0                                 # nothing written
    assert compact_if_grown(store, int(grown / GROWTH) + 1, 12, told.append) == 0.0    # a large store
    assert told == []
    assert compact_if_grown(store, size, 12, told.append) > 0
    assert len(told) == 1 and "compacted" in told[0]


def test_a_campaign_then_diagkg_compact_on_the_command_line(tmp_path):
    path = tmp_path / "store"
    r = run_cli("--store", str(path), "compact")
    assert r.returncode == 3 and "no store" in r.stderr and not path.exists()     # not made to compact it
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "t1.ttl").write_text(scenario_text(**FLAT))
    assert run_cli("--store", str(path), "load", str(tmp_path / "torch.ttl"), str(tmp_path / "t1.ttl")).returncode == 0
    r = run_cli("--store", str(path), "evaluate", "--assistant", "oracle,random-search", "--scenarios", "TORCH.1",
                "--runs", "10", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["compacted"] > 0 and "compacted the store" in r.stderr    # it doubled the store
    before = _quads(KnowledgeStore.open_for_reading(path))
    r = run_cli("--store", str(path), "compact")
    assert r.returncode == 0 and "compacted the store" in r.stdout, r.stderr
    assert _quads(KnowledgeStore.open_for_reading(path)) == before
    assert run_cli("--memory", "compact").returncode == 0
