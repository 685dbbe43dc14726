"""Damage on the command line, on a car rear-light system written in the test
(tests/support/rear.py): ``load`` and ``check`` warn, at the fuse's line, about a nominal state
past its rating; ``simulate --state`` applies damage; ``simulate --scenario`` says what blew."""

from __future__ import annotations

import json

from ..support.cli import run_cli
from ..support.rear import SHORTED_TAIL, rear_text

BLOWN = """\
@prefix : <https://example.org/rear/> .
@prefix dk: <https://w3id.org/diagkg/ontology#> .
:fuse dk:blown true .
"""


def test_damage_on_the_command_line(tmp_path):
    store = str(tmp_path / "store")
    system, scenario, state = tmp_path / "rear.ttl", tmp_path / "rear-1.ttl", tmp_path / "blown.ttl"
    system.write_text(rear_text(rating=0.5))       # the working system draws 0.79 A
    scenario.write_text(SHORTED_TAIL)
    state.write_text(BLOWN)
    fuse_line = next(n for n, line in enumerate(system.read_text().splitlines(), 1) if line.startswith(":fuse "))

    done = run_cli("--store", store, "load", str(system), str(scenario))
    assert done.returncode == 0, done.stderr
    assert f"warning: {system}:{fuse_line}: rear: ratings: fuse is blown in the nominal state" in done.stderr

    done = run_cli("--store", store, "check", "REAR.1")
    assert f"warning: {system}:{fuse_line}: REAR.1: ratings: fuse is blown" in done.stdout

    done = run_cli("--store", store, "simulate", "rear", "--state", str(state), "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["lit"] == [] and abs(result["components"]["fuse"]["current"]) < 1e-6

    system.write_text(rear_text())                 # a 5 A fuse: the working system holds
    done = run_cli("--store", store, "load", "--replace", str(system))
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    done = run_cli("--store", store, "simulate", "--scenario", "REAR.1", "--record")
    assert done.returncode == 0, done.stderr
    assert "damaged by the circuit: fuse (blown at" in done.stdout
    # --record keeps the faulted state's solve as observations (it was taken and ignored with --scenario)
    graph = done.stderr.split("recorded as SOSA observations in <", 1)[1].split(">", 1)[0]
    asked = run_cli("--store", store, "query", "ASK { GRAPH ?g { ?o a <http://www.w3.org/ns/sosa/Observation> } "
                    f"FILTER (?g = <{graph}>) }}", "--format", "json")
    assert asked.returncode == 0 and json.loads(asked.stdout) == {"head": {}, "boolean": True}, (asked.stdout, asked.stderr)
    # the table of the faulted state, as `simulate SYSTEM --state` prints it (it printed the lights alone)
    assert any(line.split()[:2] == ["fuse", "Fuse"] for line in done.stdout.splitlines()), done.stdout
    done = run_cli("--store", store, "simulate", "--scenario", "REAR.1", "--format", "json")
    damage = json.loads(done.stdout)["damage"]
    assert [(d["component"], d["state"]) for d in damage] == [("fuse", "blown")] and damage[0]["current"] > 5
    # a scenario that leaves the blown fuse out of its faulty components: `check` said "so the scenario names it
    # among its faulty components" without looking, and only a partial correct hypothesis showed something wrong
    unnamed = tmp_path / "rear-unnamed.ttl"
    unnamed.write_text(SHORTED_TAIL.replace("dk:faultyComponent sys:tail_l, sys:fuse ;", "dk:faultyComponent sys:tail_l ;"))
    line = next(n for n, text in enumerate(unnamed.read_text().splitlines(), 1) if "dk:faultyComponent" in text)
    done = run_cli("--store", store, "check", str(unnamed))
    assert done.returncode == 1
    assert (f"{unnamed}:{line}: REAR.1: damage: the faults damage fuse (blown at" in done.stdout
            and "but the scenario does not name fuse among its faulty components" in done.stdout), done.stdout
