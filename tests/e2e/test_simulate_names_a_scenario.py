"""`diagkg simulate TORCH.1`: a user who gives a scenario where the command takes a system is told how to
simulate the scenario (the error only listed the systems), on the torch written in the tests."""

from __future__ import annotations

from ..support.cli import run_cli
from ..support.torch import FLAT, TORCH, scenario_text


def test_a_scenario_given_as_the_system_says_how_to_simulate_it(tmp_path):
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "flat.ttl").write_text(scenario_text(**FLAT))
    store = str(tmp_path / "store")
    assert run_cli("--store", store, "load", str(tmp_path / "torch.ttl"), str(tmp_path / "flat.ttl")).returncode == 0
    r = run_cli("--store", store, "simulate", "TORCH.1")
    assert r.returncode != 0 and "diagkg simulate --scenario TORCH.1" in r.stderr, r.stderr
    r = run_cli("--store", store, "simulate", "TORCH.9")       # neither a system nor a scenario: no such hint
    assert r.returncode != 0 and "--scenario" not in r.stderr and "no system 'TORCH.9'" in r.stderr, r.stderr
    r = run_cli("--store", store, "simulate", "--scenario", "TORCH.1", "--format", "json")     # what the hint says works
    assert r.returncode == 0, r.stderr


def test_a_shipped_scenario_given_as_the_system_is_hinted_without_loading_anything(tmp_path):
    store = str(tmp_path / "empty")
    r = run_cli("--store", store, "simulate", "3CC.S.1")
    assert r.returncode != 0 and "diagkg simulate --scenario 3CC.S.1" in r.stderr, r.stderr
    r = run_cli("--store", store, "graphs", "--format", "json")     # the hint loaded nothing into the store
    assert r.returncode == 0 and "scenario/3CC.S.1" not in r.stdout, r.stdout
