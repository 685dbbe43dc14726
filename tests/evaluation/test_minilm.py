"""The sentence-embedding model behind intent clustering, run with numpy (diagkg.evaluation.minilm): no torch.

Its vectors for the suite's intention texts equal sentence-transformers' (kept in
tests/data/minilm-reference.json, written by benchmarks/embeddings_runtime.py --write-fixture from
torch) within 1e-5, and give the same intent clusters; its tokens are BERT's uncased WordPiece.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from diagkg.evaluation import adaptive, minilm

from ..support.paths import DATA
from .test_adaptive import two_mode_batch

pytestmark = pytest.mark.skipif(not minilm.available(),
                                reason="the model's files are not installed (scripts/setup.sh --dev installs them)")

REFERENCE = json.loads((DATA / "minilm-reference.json").read_text(encoding="utf-8"))["vectors"]


@pytest.fixture(scope="module")
def model() -> minilm.MiniLM:
    return minilm.model()


def test_the_vectors_are_sentence_transformers_own(model):
    texts = sorted(REFERENCE)
    mine = model.encode(texts)
    reference = np.asarray([REFERENCE[t] for t in texts], dtype=np.float32)
    assert mine.shape == reference.shape == (len(texts), 384)
    assert float(np.abs(mine - reference).max()) < 1e-5
    assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-6)


def test_the_same_intent_clusters_on_the_suites_batches(model):
    rng = random.Random(2)
    pooled = [adaptive.intent_text(b) for _ in range(2) for b in two_mode_batch(rng)]

    def clusters(vectors: dict[str, np.ndarray]) -> list[int]:
        rows = np.stack([vectors[t] for t in pooled]).astype(np.float64)
        d = np.clip(1.0 - rows @ rows.T, 0.0, 2.0)
        np.fill_diagonal(d, 0.0)
        return adaptive.cluster_intent((d + d.T) / 2)[0].tolist()

    texts = sorted(set(pooled))
    mine = dict(zip(texts, model.encode(texts), strict=True))
    reference = {t: np.asarray(REFERENCE[t], dtype=np.float32) for t in texts}
    assert clusters(mine) == clusters(reference)
    assert len(set(clusters(mine))) > 1
    assert adaptive.embeddings_available()


def test_bert_uncased_wordpiece(model):
    tok = model.tokenizer
    ids = tok.ids
    assert tok.encode("Café, NAÏVE!") == [tok.cls, ids["cafe"], ids[","], ids["naive"], ids["!"], tok.sep]
    assert minilm.basic_tokens("a\tb\u00a0c\x00d 日本") == ["a", "b", "cd", "日", "本"]
    assert tok.encode("x" * 101) == [tok.cls, tok.unk, tok.sep]                 # past 100 characters
    long = tok.encode("bulb " * 400)
    assert len(long) == minilm.MAX_TOKENS and long[0] == tok.cls and long[-1] == tok.sep
    pieces = tok.wordpiece("bulbholders")            # a word the vocabulary lacks: pieces, then ## pieces
    assert len(pieces) > 1
    words = {i: w for w, i in ids.items()}
    assert "".join(words[i].removeprefix("##") for i in pieces) == "bulbholders"
    assert all(words[i].startswith("##") for i in pieces[1:])


def test_a_safetensors_file_written_here(tmp_path):
    header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}, "__metadata__": {"x": "y"}}
    text = json.dumps(header).encode()
    data = np.arange(6, dtype="<f4").tobytes() + np.asarray([7, -1], dtype="<i8").tobytes()
    path = tmp_path / "t.safetensors"
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)
    tensors = minilm.read_safetensors(path)
    assert set(tensors) == {"a", "b"}
    assert tensors["a"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and tensors["b"].tolist() == [7, -1]
    assert tensors["a"].flags["ALIGNED"] and tensors["a"].flags["WRITEABLE"]
