"""A part is named by its identifier in its system's namespace, a port by its component and its name.

diagkg names parts by their identifiers (``bat``, ``bat.pos``) and finds them again in the namespace of the
system's IRI. A user's torch whose system node sat in another namespace than its parts
(``<https://example.org/systems/torch>``, its parts ``<https://example.org/torch/…>``) validated and loaded,
its scenario validated and loaded, and then every ``check`` and ``run`` failed with ``https://example.org/
systems/bat is not a part of system torch``. So did a part whose identifier differed from its IRI's end. The
shapes now refuse both, located at the part."""

from __future__ import annotations

from ..support.cli import run_cli
from ..support.torch import FLAT, TORCH, scenario_text


def test_a_system_node_outside_its_parts_namespace_is_refused_at_each_part(tmp_path):
    moved = TORCH.replace("@prefix dcterms: <http://purl.org/dc/terms/> .",
                          "@prefix dcterms: <http://purl.org/dc/terms/> .\n@prefix top: <https://example.org/systems/> .") \
        .replace(":torch a dk:System", "top:torch a dk:System").replace("dk:partOf :torch .", "dk:partOf top:torch .")
    assert moved.count("top:torch") == 2
    system = tmp_path / "torch.ttl"
    system.write_text(moved)
    r = run_cli("validate", str(system))
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(i for i, text in enumerate(moved.splitlines(), 1) if text.startswith(":bat a dk:VoltageSource"))
    assert f"{system}:{line}: :bat — (the node itself) — the part's IRI must be its system's namespace followed " \
           "by its identifier: top:bat (diagkg names a part by its identifier)" in r.stdout
    assert run_cli("--store", str(tmp_path / "store"), "load", str(system)).returncode == 1     # nothing loaded
    # as written in one namespace, the same torch and its scenario load and run
    system.write_text(TORCH)
    scenario = tmp_path / "flat.ttl"
    scenario.write_text(scenario_text(**FLAT))
    assert run_cli("--store", str(tmp_path / "store"), "load", str(system), str(scenario)).returncode == 0
    r = run_cli("--store", str(tmp_path / "store"), "run", "--scenario", "TORCH.1", "--assistant", "oracle")
    assert r.returncode == 0 and "end: success" in r.stdout, r.stdout + r.stderr


def test_an_identifier_other_than_the_iris_end_is_refused(tmp_path):
    renamed = TORCH.replace(':bulb a dk:Bulb ; dcterms:identifier "bulb"', ':bulb a dk:Bulb ; dcterms:identifier "lamp"')
    assert renamed != TORCH
    system = tmp_path / "torch.ttl"
    system.write_text(renamed)
    r = run_cli("validate", str(system))
    assert r.returncode == 1
    assert ":bulb — (the node itself) — the part's IRI must be its system's namespace followed by its identifier: " \
           ":lamp" in r.stdout
