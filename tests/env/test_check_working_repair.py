"""`diagkg check` on a scenario whose faults leave the system working (the pump's indicator LED burnt out: the pump
runs): besides the `working` check, the `repair` check said the ideal repair (the LED's own replacement) "works around
a fault instead of repairing it (give the faulty part's own repair)", advice that was wrong and could not be followed.
It now says that the system works as the faults leave it, so no step ends the session. The pump controller is the
tests' own (tests/support/pump.py)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_cli
from tests.support.pump import PUMP, case


def test_the_repair_check_does_not_call_the_faulty_parts_own_repair_a_workaround(tmp_path: Path):
    system, scenario = tmp_path / "pump.ttl", tmp_path / "led.ttl"
    system.write_text(PUMP)
    scenario.write_text(case("PUMP.LED", 9611, [("OpenComponent", "led")], [("ReplaceComponent", "led")]))
    r = run_cli("--memory", "check", str(system), str(scenario))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "PUMP.LED: working: the system works with the faults in place" in r.stdout
    (repair,) = [line for line in r.stdout.splitlines() if "PUMP.LED: repair:" in line]
    assert "works around a fault" not in repair and "give the faulty part's own repair" not in repair
    assert repair.endswith("the system works as the faults leave it (check working), so no step ends the session")
