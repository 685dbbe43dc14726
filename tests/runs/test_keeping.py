"""No finished session is lost (issue 25, item 6), on the torch written in tests/support/torch.py:
``diagkg run`` checks the store can be written before the session starts, waits its turn to
write when another process holds the lock, and keeps the trajectory in a file that ``diagkg
load`` stores later when the store still cannot take it; a crashed session's record keeps the
rounds it played.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pyoxigraph as ox
import pytest

from diagkg.env.actions import action_catalogue
from diagkg.env.workspace import resolve_scenario
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.turns import open_read_only
from diagkg.runs import keeping, trajectory

from ..support.cli import DIAGKG, run_cli
from ..support.torch import FLAT, TORCH, scenario_text, torch_memory_store


def _torch_store(tmp_path: Path) -> Path:
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "t1.ttl").write_text(scenario_text(**FLAT))
    store = tmp_path / "store"
    with KnowledgeStore(store) as held:        # loaded in this process: the commands under test come next
        load_files(held, [tmp_path / "torch.ttl", tmp_path / "t1.ttl"])
    return store


def _has_trajectory(store: Path, iri: str) -> bool:
    raw = open_read_only(store)
    return raw.contains_named_graph(graphs.named("trajectory", iri.rsplit("/", 1)[1]))


@pytest.mark.slow
def test_a_run_that_cannot_write_keeps_its_trajectory_in_a_file_that_load_stores(tmp_path):
    store = _torch_store(tmp_path)
    holder = ox.Store(str(store))          # another writer, holding the lock for longer than the run waits
    try:
        r = run_cli("--store", str(store), "--wait", "1", "run", "--scenario", "TORCH.1", "--assistant", "oracle",
                    "--format", "json")
    finally:
        del holder
    assert r.returncode == 3, r.stderr
    result = json.loads(r.stdout)          # the session's result is still printed
    kept = Path(result["kept_in"])
    assert kept.is_file() and kept.parent == tmp_path / "store.unstored"
    assert str(kept) in r.stderr and "load" in r.stderr
    assert not _has_trajectory(store, result["trajectory"])
    loaded = run_cli("--store", str(store), "load", str(kept))          # the command the message gives
    assert loaded.returncode == 0, loaded.stderr
    assert _has_trajectory(store, result["trajectory"])
    rows = KnowledgeStore.open_for_reading(store).select("trajectory-list")
    assert any(r["trajectory"] == result["trajectory"] for r in rows)


@pytest.mark.slow
def test_a_run_waits_its_turn_to_write(tmp_path):
    store = _torch_store(tmp_path)
    holder = ox.Store(str(store))
    proc = subprocess.Popen([*DIAGKG, "--store", str(store), "--wait", "60", "run", "--scenario", "TORCH.1",
                             "--assistant", "oracle", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:     # until it waits for the lock
            time.sleep(0.2)
            if any("waiting for the store" in line for line in _peek(proc)):
                break
        time.sleep(1.0)
    finally:
        del holder
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert _has_trajectory(store, json.loads(out)["trajectory"])


def _peek(proc: subprocess.Popen[str]) -> list[str]:
    """Lines the process wrote to standard error so far (without blocking)."""
    import os
    import select

    assert proc.stderr is not None
    lines: list[str] = []
    while select.select([proc.stderr], [], [], 0)[0]:
        chunk = os.read(proc.stderr.fileno(), 4096).decode("utf-8", "replace")
        if not chunk:
            break
        lines.extend(chunk.splitlines())
    return lines


def test_a_store_that_cannot_be_written_is_said_before_the_session_starts(tmp_path):
    store = _torch_store(tmp_path)
    lock = store / "LOCK"
    lock.unlink()
    lock.mkdir()                           # the lock file cannot be opened: no process can ever write here
    t0 = time.monotonic()
    r = run_cli("--store", str(store), "run", "--scenario", "TORCH.1", "--assistant", "oracle")
    assert r.returncode == 3
    assert "cannot be written" in r.stderr and "round" not in r.stdout      # no session was run
    assert time.monotonic() - t0 < 30      # not the 60 s a locked store would be waited for


def test_a_crashed_record_keeps_the_rounds_played_and_conforms(tmp_path):
    store = torch_memory_store(tmp_path)
    scenario = resolve_scenario(store, 9101)
    played = [{"round": 1, "kind": "action", "intention": "look at bat", "message": "nothing unusual", "cost": 5.0,
               "success": True, "executed": [{"action": "observe_component", "targets": ["bat"], "cost": 5.0}],
               "action": {"action": "observe_component", "targets": ["bat"], "value": None}}]
    try:
        raise RuntimeError("the assistant fell over")
    except RuntimeError as exc:
        record = keeping.crashed_record(scenario, "scripted", {"api_key": "secret", "x": 1}, 3, exc, rounds=played)
    assert record.end == "crashed" and len(record.rounds) == 2 and record.total_cost == 5.0
    assert "RuntimeError: the assistant fell over" in record.rounds[-1]["message"]
    assert record.config == {"x": 1}
    catalogue = {a: spec.iri for a, spec in action_catalogue(store).items()}
    quads = trajectory.to_quads(record, catalogue)
    trajectory.validate(quads, "crashed")
    iri = keeping.store_or_keep(store, record, catalogue)
    assert iri == record.iri and store.raw.contains_named_graph(record.graph)
