"""The adaptive protocol on synthetic trajectory sets whose convergence is known.

Behaviours are written here (action tokens and intentions as an assistant would produce them);
the verdicts come from the real clustering (rapidfuzz, scipy, scikit-learn) and, where the
``embeddings`` extra is installed (the test command installs it), the real sentence-embedding
model.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.cluster.hierarchy import dendrogram

from diagkg.evaluation import adaptive
from diagkg.evaluation.adaptive import AdaptiveSettings, Behaviour, Reason, Verdict, assess

FAST = AdaptiveSettings(bootstrap=40, seed=3)

# two ways of diagnosing a dark torch: suspect the bulb, or suspect the battery
BULB = ("observe:bulb", "measure:voltage:bulb", "replace:bulb")
BULB_LONG = ("observe:bulb", "observe:sw", "measure:voltage:bulb", "replace:bulb")
BATTERY = ("measure:voltage:bat", "measure:current:lead1", "replace:bat")
BATTERY_LONG = ("observe:case", "measure:voltage:bat", "measure:current:lead1", "replace:bat")
BULB_SAYS = [("Look at the bulb filament", "Measure the voltage across the bulb", "Replace the bulb"),
             ("Inspect the bulb", "Check the voltage at the bulb terminals", "Swap the bulb for a new one")]
BATTERY_SAYS = [("Measure the battery voltage", "Check the current through the lead", "Replace the battery"),
                ("Test whether the battery is flat", "Measure current in lead one", "Put in a fresh battery")]


def two_mode_batch(rng: random.Random) -> list[Behaviour]:
    """Ten sessions: six bulb-first (two of them longer; two wordings, three each), four
    battery-first (one longer), in a random order."""
    items = ([Behaviour(BULB, BULB_SAYS[i % 2]) for i in range(4)]
             + [Behaviour(BULB_LONG, BULB_SAYS[i % 2]) for i in range(2)]
             + [Behaviour(BATTERY, BATTERY_SAYS[0]) for i in range(3)]
             + [Behaviour(BATTERY_LONG, BATTERY_SAYS[0])])
    rng.shuffle(items)
    return items


def drifting_batch(k: int, rng: random.Random) -> list[Behaviour]:
    """Batch k suspects part k: every batch behaves unlike all before it."""
    part = f"part{k}"
    plain = (f"observe:{part}", f"measure:voltage:{part}", f"replace:{part}")
    says = (f"Inspect {part} number {k}", f"Measure the voltage on {part}", f"Replace {part}")
    items = [Behaviour(plain, says)] * 7 + [Behaviour(plain[:1] + ("observe:sw",) + plain[1:], says)] * 3
    rng.shuffle(items)
    return items


@pytest.fixture()
def no_embeddings(monkeypatch):
    monkeypatch.setattr(adaptive, "embeddings_available", lambda: False)


def test_constant_behaviour_converges_at_once():
    same = Behaviour(BULB, BULB_SAYS[0])
    verdict = assess([[same] * 10], AdaptiveSettings())
    assert verdict == Verdict(True, Reason.CONSTANT, None, None, None, (0,) * 10, (0,) * 10, verdict.notes)
    assert verdict.reason == "constant"            # a str enum: compares and serialises as its value
    # one differing intention is no longer constant, and one batch is not enough to say more
    other = Behaviour(BULB, BULB_SAYS[1])
    verdict = assess([[same] * 9 + [other]], FAST)
    assert (verdict.converged, verdict.reason) == (False, Reason.CONTINUE)
    assert any("second batch" in n for n in verdict.notes)


def test_two_stable_modes_converge_after_the_second_batch(no_embeddings):
    rng = random.Random(7)
    batches = [two_mode_batch(rng) for _ in range(3)]
    first = assess(batches[:1], FAST)
    assert (first.converged, first.reason, first.execution_ari) == (False, Reason.CONTINUE, None)
    verdict = assess(batches[:2], FAST)
    assert verdict.converged and verdict.reason == Reason.STABLE
    assert verdict.execution_ari is not None and verdict.noise_floor is not None
    assert verdict.execution_ari >= max(FAST.min_ari, verdict.noise_floor)
    # the execution clusters separate the two strategies: no cluster mixes bulb and battery sessions
    pooled = [b for batch in batches[:2] for b in batch]
    for label in set(verdict.execution_labels):
        kinds = {b.actions[-1] for b, lab in zip(pooled, verdict.execution_labels, strict=True) if lab == label}
        assert len(kinds) == 1
    assert verdict.intent_labels is None and verdict.intent_ari is None
    assert any("intent clustering off" in n and "embeddings" in n for n in verdict.notes)


def test_drifting_behaviour_runs_to_the_cap(no_embeddings):
    rng = random.Random(11)
    batches = [drifting_batch(k, rng) for k in range(FAST.max_batches)]
    for k in range(1, FAST.max_batches):
        verdict = assess(batches[:k], FAST)
        assert (verdict.converged, verdict.reason) == (False, Reason.CONTINUE), (k, verdict)
    verdict = assess(batches, FAST)
    assert (verdict.converged, verdict.reason) == (False, Reason.CAP)
    assert verdict.execution_ari is not None and verdict.execution_ari < max(FAST.min_ari, verdict.noise_floor or 0)
    # every batch is a behaviour of its own
    assert len(set(verdict.execution_labels)) >= FAST.max_batches


def test_a_new_mode_in_the_last_batch_is_not_convergence(no_embeddings):
    """The original compared only the earlier trajectories' labels, so a batch that formed a
    cluster of its own left the ARI at 1 (reference facts §9.1 step 6)."""
    rng = random.Random(5)
    first = two_mode_batch(rng)
    odd = [Behaviour(("observe:case", "rotate:case", "observe:bulb"), ("Turn the case round",))] * 10
    verdict = assess([first, odd], FAST)
    assert not verdict.converged
    assert verdict.execution_ari is not None and verdict.execution_ari < FAST.min_ari


def test_noise_points_are_singletons():
    # five points close together and two far apart from them and from each other
    d = np.full((7, 7), 0.9)
    d[:5, :5] = 0.05
    np.fill_diagonal(d, 0.0)
    labels, real = adaptive.cluster_intent(d)
    assert real == 1
    assert len(set(labels[:5].tolist())) == 1
    assert len({labels[5], labels[6], labels[0]}) == 3      # each outlier alone, not one "noise" cluster


def test_execution_distance_and_dendrogram():
    behaviours = [Behaviour(BULB, ()), Behaviour(BULB_LONG, ()), Behaviour(BATTERY, ())]
    d = adaptive.execution_distances(behaviours)
    assert d[0, 1] == pytest.approx(1 / 4)      # one inserted token in four
    assert d[0, 2] == pytest.approx(1.0)        # no token in common at the same place
    z = adaptive.execution_linkage(behaviours)
    assert z.shape == (2, 4)
    tree = dendrogram(z, no_plot=True)
    assert sorted(tree["leaves"]) == [0, 1, 2]


@pytest.mark.skipif(not adaptive.embeddings_available(),
                    reason="the embeddings model's files are not installed (scripts/setup.sh --dev installs them)")
def test_intent_clustering_with_the_real_model():
    rng = random.Random(2)
    batches = [two_mode_batch(rng) for _ in range(2)]
    verdict = assess(batches, FAST)
    assert verdict.intent_labels is not None and verdict.intent_ari is not None
    pooled = [b for batch in batches for b in batch]
    # the two strategies never share an intent cluster (each paraphrase, repeated, may be its own)
    bulb = {lab for b, lab in zip(pooled, verdict.intent_labels, strict=True) if b.actions[-1] == "replace:bulb"}
    battery = {lab for b, lab in zip(pooled, verdict.intent_labels, strict=True) if b.actions[-1] == "replace:bat"}
    assert bulb and battery and not bulb & battery
    assert verdict.converged and verdict.reason == Reason.STABLE
    assert not any("intent clustering off" in n for n in verdict.notes)
    # and the embeddings give meaning-based distances: a paraphrase is nearer than the other strategy
    d = adaptive.intent_distances([Behaviour((), BULB_SAYS[0]), Behaviour((), BULB_SAYS[1]), Behaviour((), BATTERY_SAYS[0])])
    assert d[0, 1] < d[0, 2]
