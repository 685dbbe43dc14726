"""``diagkg split``: a stratified lite set and the held-out rest, kept as named sets that
``evaluate --scenarios set:NAME`` runs. On scenarios generated on the workshop lamp written in
the test (tests/generation/workshop.py)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from diagkg.env.scenarios import ScenarioCatalog
from diagkg.errors import InputError
from diagkg.evaluation.campaign import select_scenarios
from diagkg.generation.generate import GenerationConfig, generate
from diagkg.generation.splits import split, stratum
from diagkg.kg.loading import load_files

from ..support.cli import run_cli
from .workshop import WORKSHOP


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    """The workshop and its generated single and double faults, loaded into a store on disk."""
    from diagkg.kg.store import KnowledgeStore

    folder = tmp_path_factory.mktemp("split")
    (folder / "workshop.ttl").write_text(WORKSHOP)
    memory = KnowledgeStore.memory()
    load_files(memory, [folder / "workshop.ttl"])
    generate(memory, GenerationConfig("workshop")).write(folder / "generated" / "single")
    doubles = generate(memory, GenerationConfig("workshop", faults=2, modes=frozenset({"OpenComponent", "DetachedEnd"}),
                                                limit=12, seed=1))
    doubles.write(folder / "generated" / "double")
    path = folder / "store"
    with KnowledgeStore(path) as held:
        load_files(held, [folder / "workshop.ttl", folder / "generated"])
    return path


def test_the_lite_set_covers_every_stratum_and_is_reproducible(catalogue):
    from diagkg.kg.store import KnowledgeStore

    with KnowledgeStore.open_for_reading(catalogue) as held:
        cat = ScenarioCatalog(held)
        scenarios = [cat.resolve(n) for n in cat.numbers()]
    result = split(scenarios, "ws", per_system=10, seed=2)
    assert len(result.lite) == 10 and set(result.lite).isdisjoint(result.held_out)
    assert set(result.lite) | set(result.held_out) == {s.number for s in scenarios}
    strata = Counter(stratum(s) for s in scenarios)
    assert len(strata) == 3                     # one fault steady, one left to chance, two faults
    picked = Counter(stratum(s) for s in scenarios if s.number in result.lite)
    assert set(picked) == set(strata)           # every stratum is represented
    assert split(scenarios, "ws", per_system=10, seed=2) == result
    assert split(scenarios, "ws", per_system=10, seed=3).lite != result.lite
    with pytest.raises(InputError, match="set name"):
        split(scenarios, "bad name", per_system=10)


def test_sets_are_kept_and_selected_by_name(catalogue, tmp_path):
    r = run_cli("--store", str(catalogue), "split", "--name", "ws", "--per-system", "6", "--seed", "1",
                "--format", "json")
    assert r.returncode == 0, r.stderr
    sets = json.loads(r.stdout)["sets"]
    assert len(sets["ws-lite"]) == 6
    from diagkg.kg.store import KnowledgeStore

    with KnowledgeStore.open_for_reading(catalogue) as held:
        assert select_scenarios(held, ["set:ws-lite"]) == sets["ws-lite"]
        assert sorted(select_scenarios(held, ["set:ws-held-out"])) == sets["ws-held-out"]
        with pytest.raises(InputError, match="no scenario set 'nope'.*ws-held-out, ws-lite"):
            select_scenarios(held, ["set:nope"])
    # the campaign runs exactly the lite set
    run = run_cli("--store", str(catalogue), "evaluate", "--assistant", "oracle", "--scenarios", "set:ws-lite",
                  "--name", "lite", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["scenarios"] == len(sets["ws-lite"])
