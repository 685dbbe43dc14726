"""The worlds a model-based decision looks at weigh each diagnosis as the candidates do.

With more candidate worlds than the sample holds (``sample``, 24), a decision looked at one world per
diagnosis, at that one world's weight. A diagnosis of one world (a battery turned round) then outweighed one of
many (a short between a fuse and any of several nodes, each placement a world of its own): on a system nobody on
the team wrote (``unwritten_5_6`` of benchmarks/unwritten_systems.py, written out in
``test_model_based_probe_price``) the batteries held 3 % of the belief and 27 % of the sample, so turning each
round (and back) looked like the best test, and a short between two fuses took 440 minutes (the oracle 120).
Now (``diagnosis_mass``, :func:`diagkg.agents.candidates.stratified`) every diagnosis has a place, the places
left are shared by weight, and a diagnosis's worlds in the sample stand for the whole of its weight."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagkg.agents.candidates import Live, stratified
from diagkg.agents.combinations import Candidate
from diagkg.runs.runner import run_session

from ..support.circuits import scenarios_between, with_generated
from .test_model_based_probe_price import KEY, _system


def _groups(weights: list[list[float]]) -> list[Live]:
    """One diagnosis per list of weights, each weight a world (its checkpoint a stand-in object)."""
    return [[(Candidate((), frozenset({f"part{d}"}), w), cast(Any, object())) for w in ws] for d, ws in enumerate(weights)]


@settings(max_examples=200, deadline=None)
@given(size=st.integers(2, 30), data=st.data())
def test_a_sample_weighs_each_diagnosis_as_all_its_worlds(size: int, data: st.DataObject):
    weights = data.draw(st.lists(st.lists(st.floats(1e-4, 1.0), min_size=1, max_size=12), min_size=1, max_size=size - 1))
    groups = _groups(weights)
    out = stratified(groups, size)
    assert len(out) <= size
    assert len({id(point) for _, point in out}) == len(out)           # no world twice
    mass: dict[frozenset[str], float] = defaultdict(float)
    for c, _ in out:
        mass[c.faulty] += c.prior
    for g in groups:
        faulty = g[0][0].faulty
        points = {id(p) for _, p in g}
        assert all(id(p) in points for c, p in out if c.faulty == faulty)     # its own worlds only
        assert mass[faulty] == pytest.approx(sum(c.prior for c, _ in g), rel=1e-9)   # every diagnosis, whole
        # its likeliest worlds first
        kept = sorted((c.prior for c, p in g if any(p is q for _, q in out)), reverse=True)
        assert kept == sorted((c.prior for c, _ in g), reverse=True)[:len(kept)]


def test_diagnoses_alike_get_alike_places_and_few_worlds_are_all_kept():
    # two diagnoses of ten worlds each, alike; one of a single world: 24 places
    out = stratified(_groups([[0.1] * 10, [0.1] * 10, [0.3]]), 24)
    places: dict[frozenset[str], int] = defaultdict(int)
    for c, _ in out:
        places[c.faulty] += 1
    assert places[frozenset({"part0"})] == places[frozenset({"part1"})] == 10       # every world of each
    assert places[frozenset({"part2"})] == 1
    # a diagnosis of many light worlds against one heavy world: the heavy one is not counted as many
    out = stratified(_groups([[0.01] * 40, [0.2]]), 6)
    weight = {next(iter(c.faulty)): 0.0 for c, _ in out}
    for c, _ in out:
        weight[next(iter(c.faulty))] += c.prior
    assert weight["part0"] == pytest.approx(0.4) and weight["part1"] == pytest.approx(0.2)
    assert len(out) == 6


@pytest.mark.parametrize("by_mass", [True, False])
def test_a_short_between_fuses_is_not_met_by_turning_batteries_round(tmp_path: Path, by_mass: bool):
    store = with_generated(tmp_path, KEY, _system(), frozenset({"ShortBetweenNodes"}))
    short = scenarios_between(store, {"fuse5.p", "fuse6.n"})
    assert len(short) == 1
    rounds: list[dict] = []
    result = run_session(short[0], "model-based", seed=0, store=store, record=False, keep_ledger=False,
                         config={"diagnosis_mass": by_mass}, on_round=lambda r: rounds.append(r.to_dict()))
    turned = [e["targets"] for r in rounds for e in r["executed"] if e["action"] == "reverse_battery"]
    if by_mass:
        assert result.end in ("success", "success_no_hypothesis") and not turned and result.cost <= 200
    else:       # one world per diagnosis at its own weight: each battery round and back, out of rounds when written;
        # since an assistant is not told which parts a repair found healthy (Outcome.told), each battery named (540 min)
        assert result.cost >= 400
