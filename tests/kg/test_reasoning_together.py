"""Systems reasoned over together: one run of HermiT for every system a load has to reason over
(its Java starts once; most of a run's time on a small system), the same entailments for each as
alone. A user's two systems written here (the torch of tests/support/torch.py, and the same torch
under another namespace), with a shipped one."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest
import rdflib

from diagkg.errors import ReasonerError
from diagkg.kg import reasoning

from ..support.torch import TORCH

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime")

ROOT = Path(__file__).resolve().parents[2]
OTHER = TORCH.replace("<https://example.org/torch/>", "<https://example.org/lantern/>") \
    .replace('dk:systemKey "torch"', 'dk:systemKey "lantern"')


def graph(text: str) -> rdflib.Graph:
    return rdflib.Graph().parse(data=text, format="turtle")


@functools.lru_cache(maxsize=None)
def alone(text: str) -> frozenset:
    """What HermiT entails of a description reasoned over alone, worked out once per text for the module (a pure
    function of the text: two tests compare with the torch alone; their own counted runs are counted before)."""
    return frozenset(reasoning.reason(graph(text), engine="hermit"))


@pytest.fixture
def runs(monkeypatch) -> list[int]:
    """The number of systems' facts in each run of HermiT."""
    seen: list[int] = []
    real = reasoning._hermit

    def counted(data, ontology):
        seen.append(len(data))
        return real(data, ontology)

    monkeypatch.setattr(reasoning, "_hermit", counted)
    return seen


def test_systems_reasoned_together_get_what_each_gets_alone(runs):
    datas = [graph(TORCH), graph(OTHER), rdflib.Graph().parse(ROOT / "scenarios/systems/three_cubes.ttl")]
    together = reasoning.reason_together(datas, engine="hermit")
    assert len(runs) == 1
    by_itself = [alone(TORCH), alone(OTHER), frozenset(reasoning.reason(datas[2], engine="hermit"))]
    for mine, theirs in zip(together, by_itself, strict=True):
        assert len(mine) > 0 and set(mine) == set(theirs)
    # the lantern's facts are about the lantern's parts only
    assert all(str(s).startswith("https://example.org/lantern/") for s in together[1].subjects())


def test_an_inconsistent_system_is_reasoned_over_alone_and_says_so(runs):
    broken = TORCH + "\n:bulb a dk:Function .\n"          # a part cannot be a function (disjoint classes)
    with pytest.raises(ReasonerError, match="inconsistent"):
        reasoning.reason_together([graph(OTHER), graph(broken)], engine="hermit")
    assert len(runs) == 3          # together (inconsistent), then each alone: the lantern, then the torch


def test_systems_that_share_a_resource_are_reasoned_over_alone(runs):
    extra = TORCH.split(":body a dk:Module")[0] + ":bulb dk:partOf :torch .\n"    # says more about the torch's bulb
    out = reasoning.reason_together([graph(TORCH), graph(extra)], engine="hermit")
    assert len(runs) == 2 and set(out[0]) == alone(TORCH)


def test_a_load_reasons_over_its_new_systems_in_one_run(tmp_path, monkeypatch, runs):
    from diagkg.kg import graphs
    from diagkg.kg.loading import load_files
    from diagkg.kg.store import KnowledgeStore

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))        # nothing kept yet
    files = [tmp_path / "torch.ttl", tmp_path / "lantern.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(OTHER)
    store = KnowledgeStore.memory()
    report = load_files(store, files)
    assert len(runs) == 1 and set(report.inferred) == {"torch", "lantern"} and min(report.inferred.values()) > 0
    assert all(store.raw.contains_named_graph(graphs.inferred(k)) for k in ("torch", "lantern"))
    # each kept under its own digest: another store reads them without reasoning
    again = load_files(KnowledgeStore.memory(), files)
    assert len(runs) == 1 and again.inferred == report.inferred
