"""A transcript's JSON lists what each round executed, a hypothesis's repairs too (outsider h1, F10): ``diagkg run``
printed ``executed: verify_repair tail_l (120)`` where the JSON had ``"executed": []``, so that summing the executed
costs did not give the round's cost."""

from __future__ import annotations

import pytest

from diagkg.runs import transcript
from diagkg.runs.runner import run_session

from ..support.torch import torch_memory_store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = torch_memory_store(tmp_path_factory.mktemp("torch"))
    yield s
    s.close()


def test_a_hypothesis_round_lists_its_repair_and_the_costs_add_up(store):
    result = run_session(9101, "oracle", store=store)         # the flat battery: one hypothesis, {bat}
    rounds = transcript.load(store, result.trajectory)["rounds"]
    hypotheses = [r for r in rounds if r["kind"] == "hypothesis"]
    assert hypotheses and hypotheses[-1]["executed"][-1] == {"action": "verify_repair bat", "cost": hypotheses[-1]["cost"]}
    assert hypotheses[-1]["cost"] > 0
    assert hypotheses[-1]["verdict"] == result.record.rounds[-1]["verdict"] == "correct"    # (it read "Correct")


def test_every_round_costs_what_it_executed(store):
    for assistant, seed in (("random-search", 3), ("model-based", 0)):
        result = run_session(9102, assistant, seed=seed, store=store)
        rounds = transcript.load(store, result.trajectory)["rounds"]
        assert [(r["position"], sum(e["cost"] for e in r["executed"])) for r in rounds] == \
            [(r["position"], pytest.approx(r["cost"])) for r in rounds], assistant
        assert sum(r["cost"] for r in rounds) == pytest.approx(result.cost)
