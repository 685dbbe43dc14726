"""A faulty component that is no part of the scenario's system is reported at its own statement with its own path
(``dk:faultyComponent``), as the shape's constraint now says which statement named it; it was reported on the
scenario's first line as "(the node itself)", and the spreadsheet import told the faulty and removed components apart
by the violation's wording. On the torch written in the tests."""

from __future__ import annotations

from ..support.cli import run_cli
from ..support.torch import FLAT, TORCH, scenario_text


def test_a_faulty_component_not_of_the_system_is_reported_at_its_statement(tmp_path):
    text = scenario_text(**{**FLAT, "faulty": "bulbb"})
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "t1.ttl").write_text(text)
    r = run_cli("validate", str(tmp_path / "torch.ttl"), str(tmp_path / "t1.ttl"))
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(n for n, x in enumerate(text.splitlines(), 1) if "dk:faultyComponent" in x)
    said = [x for x in r.stdout.splitlines() if "is not a part of the scenario's system" in x and "step's" not in x]
    assert said and all(f"t1.ttl:{line}:" in x and "dk:faultyComponent" in x for x in said), r.stdout
