"""``diagkg.make`` on a scenario file, as ``diagkg run --scenario FILE`` takes one: the Python API took only a
scenario of the store (``no scenario 'flat.ttl' in the store``). The file is validated against the store and
loaded first; a file that does not validate is refused with its located violations, and nothing is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

import diagkg
from diagkg.errors import InputError, ValidationError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.torch import FLAT, TORCH, scenario_text


def test_a_session_on_a_scenario_file(tmp_path: Path):
    (tmp_path / "torch.ttl").write_text(TORCH)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "torch.ttl"])
    flat = tmp_path / "flat.ttl"
    flat.write_text(scenario_text(**FLAT))
    for ref in (str(flat), flat):
        with diagkg.make(ref, store=store) as session:
            obs, _ = session.reset(seed=0)
            assert obs["scenario_id"] == "TORCH.1"
            *_, terminated, _, info = session.step(diagkg.Hypothesis({"bat"}))
            assert terminated and info["end"] == "success"
    bad = tmp_path / "bad.ttl"
    bad.write_text(scenario_text(**dict(FLAT, id="TORCH.7", number=9107, target="nowhere")))
    with pytest.raises(ValidationError) as refused:
        diagkg.make(bad, store=store)
    assert any("nowhere" in line and str(bad) in line for line in refused.value.lines), refused.value.lines
    assert "TORCH.7" not in {r["id"] for r in store.select("scenario-index")}
    with pytest.raises(InputError, match="no such file"):
        diagkg.make(tmp_path / "missing.ttl", store=store)
