"""What keeps the fast paths fast, asserted as behaviour (the figures
themselves are in benchmarks/, not in timed tests):

* ngspice keeps no result after it is read, however many solves have run,
  and a failed solve does not stop the next one;
* a session's working memory is reused by a later session on the same
  knowledge, holds nothing of the earlier session, is never shared by two live
  sessions, and is not reused once the knowledge changed;
* every assistant's trajectory conforms to the shapes (checked here on a
  user's own system), while in normal use only the first of each kind and a
  sample are checked;
* ``simulate`` and ``run`` import neither rdflib, pySHACL, owlready2, Jinja
  (simulate) nor PySpice.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import subprocess
import sys

import pyoxigraph as ox
import pytest

import diagkg
from diagkg.agents import registry
from diagkg.errors import InputError, SessionError, SimulationError
from diagkg.kg.loading import load_files, load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK, DK_NS
from diagkg.runs import trajectory
from diagkg.runs.runner import run_session
from diagkg.sim.spice import Element, NgspiceEngine

from ..support.llm_server import LLMServer, Reply
from ..support.torch import FLAT, TORCH, scenario_text, torch_memory_store

# ngspice
# ---------------------------------------------------------------------------


def test_results_are_freed_after_every_solve():
    engine = NgspiceEngine.shared()
    elements = [Element("v1", "V", "a", "0"), Element("r1", "R", "a", "b"), Element("r2", "R", "b", "0")]
    topology = ("test-divider",)
    for i in range(60):
        op = engine.operating_point(topology, elements, {"v1": 10.0, "r1": 100.0 + i, "r2": 100.0}, ["a", "b"])
        assert op.voltages["b"] == pytest.approx(10.0 * 100.0 / (200.0 + i))
        assert op.currents["v1"] == pytest.approx(-10.0 / (200.0 + i))
        assert op.currents["r1"] == pytest.approx(op.currents["r2"]) == pytest.approx(10.0 / (200.0 + i))
    # only ngspice's constants plot is left: no result kept from the 60 solves
    assert engine._lib.ngSpice_CurPlot() == b"const"


def test_a_failed_solve_does_not_stop_the_next():
    engine = NgspiceEngine.shared()
    clash = [Element("v1", "V", "a", "0"), Element("v2", "V", "a", "0")]   # 1 V and 2 V across one pair of nodes
    with pytest.raises(SimulationError, match="aborted"):
        engine.operating_point(("test-clash",), clash, {"v1": 1.0, "v2": 2.0}, ["a"])
    fine = [Element("v1", "V", "a", "0"), Element("r1", "R", "a", "0")]
    assert engine.operating_point(("test-fine",), fine, {"v1": 2.0, "r1": 10.0}, ["a"]).voltages["a"] == pytest.approx(2.0)
    assert engine._lib.ngSpice_CurPlot() == b"const"


# ---------------------------------------------------------------------------
# working memories
# ---------------------------------------------------------------------------


@pytest.fixture()
def torch_store(tmp_path) -> KnowledgeStore:
    return torch_memory_store(tmp_path)


def _state_graphs(memory: KnowledgeStore) -> list[str]:
    return [g.value for g in memory.raw.named_graphs() if "/state/" in g.value]


def test_a_working_memory_is_reused_empty_of_the_earlier_session(torch_store):
    first = diagkg.make("TORCH.1", torch_store)
    first.reset(seed=0)
    first.step(diagkg.Action("replace_component", ("bat",)))
    memory = first.store
    assert _state_graphs(memory) == [first.state_graph.value]
    first.close()                                      # released explicitly …
    second = diagkg.make("TORCH.2", torch_store)
    assert second.store is memory                      # … and reused …
    assert _state_graphs(memory) == []                 # … without the first session's state
    scenarios = [r["id"] for r in second.store.select("scenario-index")]
    assert scenarios == ["TORCH.2"]                    # nor its scenario
    obs, _ = second.reset(seed=0)
    assert obs["scenario_id"] == "TORCH.2"
    with pytest.raises(SessionError, match="closed"):
        first.step(diagkg.Action("replace_component", ("bat",)))     # a closed session cannot go on
    with pytest.raises(SessionError, match="closed"):
        first.reset(seed=0)


def test_a_working_memory_is_never_released_by_the_garbage_collector(torch_store):
    held = [diagkg.make("TORCH.1", torch_store) for _ in range(5)]     # takes what the pool held of this knowledge
    held[0].close()
    pooled = held[0].store
    dropped = diagkg.make("TORCH.1", torch_store)
    assert dropped.store is pooled                         # the one memory released
    del dropped
    gc.collect()                                           # never closed: its memory is not given back
    again = diagkg.make("TORCH.1", torch_store)
    assert again.store is not pooled
    again.close()
    again.close()                                          # closing twice releases once
    a, b = diagkg.make("TORCH.1", torch_store), diagkg.make("TORCH.1", torch_store)
    assert a.store is again.store and b.store is not a.store


def test_live_sessions_never_share_a_working_memory(torch_store):
    a = diagkg.make("TORCH.1", torch_store)
    b = diagkg.make("TORCH.1", torch_store)
    assert a.store is not b.store
    a.reset(seed=0)
    b.reset(seed=0)
    a.step(diagkg.Action("replace_component", ("bat",)))
    assert a.state() != b.state()


def test_a_changed_system_is_not_served_from_an_old_working_memory(torch_store, tmp_path):
    first = diagkg.make("TORCH.1", torch_store)
    memory = first.store
    del first
    gc.collect()
    changed = tmp_path / "torch.ttl"
    changed.write_text(TORCH.replace('rdfs:label "Torch" ;', 'rdfs:label "Torch (revised)" ;'))
    assert changed.read_text() != TORCH
    load_files(torch_store, [changed], replace=True)
    again = diagkg.make("TORCH.1", torch_store)
    assert again.store is not memory
    labels = {r["label"] for r in again.store.select("system-summary")}
    assert labels == {"Torch (revised)"}


# ---------------------------------------------------------------------------
# trajectories: correct by construction, checked where it protects
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in registry.names() if n != "human"])
def test_every_assistant_writes_trajectories_that_conform(torch_store, name, monkeypatch):
    checked: list[str] = []
    real = trajectory.validate

    def counting(quads, label):
        checked.append(label)
        real(quads, label)

    monkeypatch.setattr(trajectory, "validate", counting)
    with contextlib.ExitStack() as stack:
        if name in ("llm", "llm-grounded"):      # a language model: a scripted local endpoint that looks, then
            # gives up (llm-grounded reads neither as its decision: it ends in llm_truncation, recorded too)
            server = stack.enter_context(LLMServer())
            server.script.content = '{"kind": "give_up", "instruction": "Stop."}'
            server.script.then(Reply(tool={"name": "choose", "arguments": {
                "kind": "action", "action": "observe_component", "targets": ["bulb"], "instruction": "Look."}}))
            monkeypatch.setenv("DIAGKG_LLM_BASE_URL", server.base_url)
            monkeypatch.setenv("DIAGKG_LLM_MODEL", "stub-model")
            monkeypatch.setenv("DIAGKG_LLM_BACKOFF", "0.01")        # a malformed reply is asked again at once
        for scenario in ("TORCH.1", "TORCH.2"):
            result = run_session(scenario, name, store=torch_store, seed=1)
            assert torch_store.raw.contains_named_graph(result.record.graph)
    assert len(checked) == 2           # the test suite checks every one (DIAGKG_CHECK_TRAJECTORIES=always)


def test_the_default_policy_checks_the_first_of_each_kind_and_a_sample(torch_store, monkeypatch):
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "first")
    monkeypatch.setattr(trajectory, "_checked_kinds", set())
    monkeypatch.setattr(trajectory, "_written", 0)
    torch_store.remove_graphs([ox.NamedNode(g) for g, _ in torch_store.graphs() if "/trajectory/" in g])
    monkeypatch.setattr(trajectory, "SAMPLE_EVERY", 4)
    checked: list[str] = []
    monkeypatch.setattr(trajectory, "validate", lambda quads, label: checked.append(label))
    ends = [run_session("TORCH.1", "oracle", store=torch_store).end for _ in range(8)]
    assert set(ends) == {"success"}   # the oracle names the faulty part (honest scoring)
    assert len(checked) == 3            # the first oracle × torch run, then the 4th and the 8th …
    run_session("TORCH.1", "unhelpful", store=torch_store)
    assert len(checked) == 4            # … and the first of another kind (the 9th written)


def test_an_unknown_check_policy_is_named(monkeypatch):
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "sometimes")
    with pytest.raises(InputError, match="DIAGKG_CHECK_TRAJECTORIES is 'sometimes'; use one of always, first"):
        trajectory.CheckPolicy.from_env()


# ---------------------------------------------------------------------------
# start-up: commands import what they use
# ---------------------------------------------------------------------------

HEAVY = ("rdflib", "pyshacl", "owlready2", "PySpice", "numpy", "morph_kgc", "jinja2", "rich")

PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(%r)))))
from diagkg.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _imported(store: str, *args: str, check: str = "first") -> list[str]:
    env = dict(os.environ, DIAGKG_CHECK_TRAJECTORIES=check)      # "first": as in normal use
    out = subprocess.run([sys.executable, "-c", PROBE % (HEAVY,), "--store", store, *args],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_commands_import_only_what_they_use(tmp_path):
    store = tmp_path / "store"
    with KnowledgeStore(store) as s:
        load_shipped(s)
        run_session(1, "oracle", store=s)     # the first oracle trajectory on 3 cubes is checked (pySHACL)
    gc.collect()          # nothing of this process holds the store's files when the commands below open it
    assert _imported(str(store), "--help") == []
    assert _imported(str(store), "simulate", "three_cubes") == []
    # a run renders SPARQL update templates (Jinja); nothing else heavy
    assert _imported(str(store), "run", "--scenario", "1", "--assistant", "oracle") == ["jinja2"]
    # a trajectory checked against the shapes that conforms needs neither rdflib nor pySHACL (the
    # compiled shapes clear it; they are loaded only to locate a violation)
    assert _imported(str(store), "run", "--scenario", "2", "--assistant", "oracle", check="always") == ["jinja2"]


def test_vocabulary_terms_are_iris_with_both_libraries_views():
    import rdflib

    assert DK.Bulb == DK_NS + "Bulb" and isinstance(DK.Bulb, str)
    assert DK.Bulb.node == ox.NamedNode(DK_NS + "Bulb")
    assert DK.Bulb.uri == rdflib.URIRef(DK_NS + "Bulb")


# ---------------------------------------------------------------------------
# one writer for many writes
# ---------------------------------------------------------------------------

COUNT_GRAPHS = """
import sys
from diagkg.kg.store import KnowledgeStore
s = KnowledgeStore(sys.argv[1], wait=float(sys.argv[2]))
try:
    with s.writing():
        print("wrote")
except Exception as exc:
    print(type(exc).__name__)
"""


def test_holding_keeps_one_writer_for_many_writes(tmp_path):
    path = tmp_path / "store"
    store = KnowledgeStore(path)
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "t1.ttl").write_text(scenario_text(**FLAT))
    load_files(store, [tmp_path / "torch.ttl", tmp_path / "t1.ttl"])
    with store.holding():
        first = run_session("TORCH.1", "oracle", store=store)
        assert store.raw.contains_named_graph(first.record.graph)       # a read sees the write at once
        other = subprocess.run([sys.executable, "-c", COUNT_GRAPHS, str(path), "0.3"],
                               capture_output=True, text=True, timeout=120)
        assert other.stdout.strip() == "StoreLockedError", other.stderr  # another writer waits, then gives up
        store.renew_writer()                                             # saved; a fresh writer, still ours
        assert subprocess.run([sys.executable, "-c", COUNT_GRAPHS, str(path), "0.3"], capture_output=True,
                              text=True, timeout=120).stdout.strip() == "StoreLockedError"
        second = run_session("TORCH.1", "neuro-symbolic", store=store)
    after = subprocess.run([sys.executable, "-c", COUNT_GRAPHS, str(path), "5"],
                           capture_output=True, text=True, timeout=120)
    assert after.stdout.strip() == "wrote"                                # released when the block ends
    reread = KnowledgeStore(path, read_only=True)
    assert reread.raw.contains_named_graph(first.record.graph)
    assert reread.raw.contains_named_graph(second.record.graph)


def test_an_in_memory_store_is_compacted_after_many_writes_and_keeps_its_content():
    # pyoxigraph's in-memory store keeps removed quads as older versions: a graph
    # rewritten again and again makes every scan slower until the content moves to a fresh store
    store = KnowledgeStore.memory()
    g = ox.NamedNode("urn:test:state")
    other = [ox.Quad(ox.NamedNode(f"urn:test:s{i}"), ox.NamedNode("urn:test:p"), ox.Literal(i),
                     ox.NamedNode("urn:test:kept")) for i in range(50)]
    store.add_quads(other)
    quads = [ox.Quad(ox.NamedNode(f"urn:test:x{i}"), ox.NamedNode("urn:test:p"), ox.Literal(i), g) for i in range(5)]
    assert store.compact(every=10) is False            # too few writes yet
    for _ in range(12):
        store.raw.remove_graph(g)
        store.raw.extend(quads)
        store.touch()
    before = store.raw
    assert store.compact(every=10) is True
    assert store.raw is not before
    assert set(store.raw) == set(other) | set(quads)
    assert store.compact(every=10) is False            # nothing written since
