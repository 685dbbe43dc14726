"""The diagkg command line: subcommands, help, output formats and exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.cli import SUBCOMMANDS, run_cli
from ..support.paths import DATA, ROOT, TC_TRIPLES, THREE_CUBES


@pytest.fixture(scope="module")
def shipped_folder(tmp_path_factory) -> Path:
    """A store on disk holding the shipped catalogue, loaded once for the module as ``diagkg load --shipped`` loads
    it (``load_shipped``). Never used in place: a test copies it (:func:`shipped_copy`)."""
    from diagkg.kg.loading import load_shipped
    from diagkg.kg.store import KnowledgeStore

    path = tmp_path_factory.mktemp("shipped") / "store"
    with KnowledgeStore(path) as s:
        load_shipped(s)
    return path


def shipped_copy(folder: Path, to: Path) -> Path:
    """A store of one's own holding the shipped catalogue, as after ``diagkg load --shipped``: each command on an
    empty store (``--memory`` too) would load the whole catalogue (five systems, 135 scenarios) first."""
    shutil.copytree(folder, to)
    return to


def test_help_lists_subcommands():
    r = run_cli("--help")
    assert r.returncode == 0
    for cmd in SUBCOMMANDS:
        assert cmd in r.stdout


@pytest.mark.parametrize("cmd", SUBCOMMANDS)
def test_every_subcommand_has_help(cmd):
    r = run_cli(cmd, "--help")
    assert r.returncode == 0 and "usage: diagkg " + cmd in r.stdout


def test_validate_ok():
    r = run_cli("validate", str(THREE_CUBES), str(DATA / "workbench.ttl"))
    assert r.returncode == 0, r.stderr
    assert "2/2 file(s) conform" in r.stderr


def test_validate_folder():
    r = run_cli("validate", str(THREE_CUBES.parent))
    assert r.returncode == 0, r.stdout + r.stderr


def test_validate_violation_exit_1(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text(THREE_CUBES.read_text().replace("dk:resistance 120.0", "dk:resistance 0"))
    r = run_cli("validate", str(bad))
    assert r.returncode == 1
    line = next(out for out in r.stdout.splitlines() if ":main_bulb" in out)
    assert line.startswith(f"{bad}:") and " — dk:resistance — " in line


def test_validate_json(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text(THREE_CUBES.read_text().replace("dk:forwardVoltage 0.7 ;", ""))
    # a store of its own: the process's default store may hold the shipped three cubes by now (an earlier test's
    # command loaded them), and a file defining a system the store holds is told so too
    r = run_cli("--store", str(tmp_path / "store"), "validate", "--format", "json", str(bad))
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert data["conforms"] is False
    (v,) = data["files"][0]["violations"]
    assert v["focus"] == ":load_diode" and v["path"] == "dk:forwardVoltage"


def test_validate_malformed_exit_2(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix : <http://x/> .\n:a :b .\n")
    r = run_cli("validate", str(bad))
    assert r.returncode == 2
    assert f"{bad}:2:" in r.stderr


def test_validate_missing_file_exit_2(tmp_path):
    r = run_cli("validate", str(tmp_path / "nope.ttl"))
    assert r.returncode == 2 and "no such file" in r.stderr


def test_load_query_graphs(tmp_path):
    store = ["--store", str(tmp_path / "store")]
    r = run_cli(*store, "load", str(THREE_CUBES))
    assert r.returncode == 0, r.stderr
    assert "graph/system/three_cubes" in r.stdout
    r = run_cli(*store, "graphs", "--format", "json")
    graphs = {g["graph"].rsplit("/graph/", 1)[1]: g["triples"] for g in json.loads(r.stdout)}
    assert graphs["system/three_cubes"] == TC_TRIPLES and "ontology" in graphs and "shapes" in graphs
    r = run_cli(*store, "query", "system-summary", "--format", "json")
    rows = json.loads(r.stdout)["results"]["bindings"]
    assert rows[0]["components"]["value"] == "18"
    r = run_cli(*store, "query", "system-components", "-p",
                "system=https://w3id.org/diagkg/system/three_cubes/three_cubes", "--format", "csv")
    assert r.returncode == 0 and "main_bulb" in r.stdout
    r = run_cli(*store, "query", "ASK { ?s a <https://w3id.org/diagkg/ontology#Bulb> }")
    assert r.stdout.strip() == "true"
    q = tmp_path / "count.rq"
    q.write_text("# Count bulbs.\n# outputs: ?n\nPREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
                 "SELECT (COUNT(*) AS ?n) WHERE { ?b a dk:Bulb }\n")
    r = run_cli(*store, "query", str(q), "--format", "tsv")
    assert r.returncode == 0 and r.stdout.splitlines()[1].startswith("2")
    r = run_cli(*store, "query", "components-of-types", "-p",
                "system=https://w3id.org/diagkg/system/three_cubes/three_cubes",
                "--format", "json")
    assert r.returncode == 2 and "needs types" in r.stderr  # the template's input types is missing, and named


def test_load_violation_loads_nothing(tmp_path):
    store = ["--store", str(tmp_path / "store")]
    bad = tmp_path / "bad.ttl"
    bad.write_text(THREE_CUBES.read_text().replace('dk:systemKey "three_cubes"', 'dk:systemKey "3cubes"'))
    r = run_cli(*store, "load", str(DATA / "workbench.ttl"), str(bad))
    assert r.returncode == 1 and "nothing was loaded" in r.stderr
    r = run_cli(*store, "graphs", "--format", "json")
    assert json.loads(r.stdout) == []


def test_bad_query_exit_2(tmp_path):
    r = run_cli("--memory", "query", "SELECT ?x WHERE { ?x ?y }")
    assert r.returncode == 2 and "error at 1:" in r.stderr
    r = run_cli("--memory", "query", "graph-sumary")
    assert r.returncode == 2 and "did you mean graph-summary" in r.stderr


def test_queries_lists_files():
    r = run_cli("queries")
    assert r.returncode == 0 and "graph-summary" in r.stdout and "set-label" in r.stdout


def test_build_systems_check():
    r = run_cli("build-systems", "--check")
    assert r.returncode == 0, r.stdout
    assert "three_cubes.ttl: up to date" in r.stdout


def test_demo_on_disk(tmp_path):
    r = run_cli("demo", "--store", str(tmp_path / "mine"), env={"DIAGKG_STORE": str(tmp_path / "unused")})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith(f"demo: writing to the store at {tmp_path / 'mine'}")   # said first
    assert "three_cubes" in r.stdout and "18" in r.stdout
    assert (tmp_path / "mine").is_dir() and not (tmp_path / "unused").exists()


def test_simulate_json_shape():
    r = run_cli("--memory", "simulate", "three_cubes", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["system"] == "three_cubes" and data["converged"] is True
    assert set(data["lit"]) == {"psu_green_led", "main_bulb", "internal_bulb"}
    bulb = data["components"]["main_bulb"]
    assert bulb["type"] == "Bulb" and set(bulb["port_v"]) == {"p", "n"}
    assert isinstance(bulb["current"], float) and isinstance(bulb["power"], float) and bulb["lit"] is True
    assert "ngspice" not in r.stderr.lower() and "spinit" not in r.stderr


def test_simulate_with_state_file(tmp_path, shipped_folder):
    store = str(shipped_copy(shipped_folder, tmp_path / "store"))
    st = tmp_path / "state.ttl"
    st.write_text("@prefix : <https://w3id.org/diagkg/system/three_cubes/> .\n"
                  "@prefix dk: <https://w3id.org/diagkg/ontology#> .\n"
                  ":battery dk:hasOverride [ dk:parameter dk:voltage ; dk:value -12.0 ] .\n")
    r = run_cli("--store", store, "simulate", "three_cubes", "--state", str(st))
    assert r.returncode == 0, r.stderr
    assert "lit: ctrl_red_led" in r.stdout and "converged: yes" in r.stdout
    st.write_text("@prefix : <https://w3id.org/diagkg/system/three_cubes/> .\n"
                  "@prefix dk: <https://w3id.org/diagkg/ontology#> .\n:lamp dk:covered true .\n")
    r = run_cli("--store", store, "simulate", "three_cubes", "--state", str(st))
    assert r.returncode == 2 and "not a part of system three_cubes" in r.stderr


def test_simulate_loaded_system_and_record(tmp_path):
    store = ["--store", str(tmp_path / "store")]
    assert run_cli(*store, "load", str(DATA / "workbench.ttl")).returncode == 0
    r = run_cli(*store, "simulate", "workbench", "--record", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)["lit"]) == {"lamp", "led"}
    r = run_cli(*store, "graphs", "--format", "json")
    assert any("/graph/simulation/workbench-" in g["graph"] for g in json.loads(r.stdout))


def test_simulate_unknown_system():
    r = run_cli("--memory", "simulate", "five_cubes")
    assert r.returncode == 2 and "known: ambient_light_sensor" in r.stderr


def test_simulate_netlist(tmp_path, shipped_folder):
    store = str(shipped_copy(shipped_folder, tmp_path / "store"))
    r = run_cli("--store", store, "simulate", "current_sensor", "--netlist")
    assert r.returncode == 0 and "; ctrl_relay" in r.stdout


def test_validate_all_scenarios():
    scenarios = THREE_CUBES.parents[1]
    r = run_cli("validate", str(scenarios))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "140/140" in r.stderr or "conform; 0 violation(s)" in r.stderr


def test_validate_broken_scenario(tmp_path):
    src = THREE_CUBES.parents[1] / "catalog" / "005-3CC.S.5.ttl"
    bad = tmp_path / "005-3CC.S.5.ttl"
    bad.write_text(src.read_text().replace("dk:faultTarget sys:main_bulb", "dk:faultTarget sys:main_bulb_x", 1))
    r = run_cli("validate", str(bad))
    assert r.returncode == 1
    assert any(line.startswith(f"{bad}:") and "main_bulb_x" in line and "does not exist in the scenario's system" in line
               for line in r.stdout.splitlines()), r.stdout
    wrong = tmp_path / "001-3CC.S.1.ttl"
    wrong.write_text((THREE_CUBES.parents[1] / "catalog" / "001-3CC.S.1.ttl").read_text()
                     .replace("dk:faultTarget sys:battery", "dk:faultTarget sys:main_bulb"))
    r = run_cli("validate", str(wrong))
    assert r.returncode == 1 and "does not apply to sys:main_bulb: it applies to dk:VoltageSource" in r.stdout, r.stdout


def test_the_readme_python_examples_run_as_written_from_any_directory(tmp_path):
    """The README's Python blocks, in order, run in a folder that is not the
    repository (shipped files are found through the package) and play a round."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks
    script = tmp_path / "readme_examples.py"
    script.write_text("\n".join(blocks) + "\nprint('round', info['round'], 'verdict', obs['verdict'])\n")
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, DIAGKG_STORE=str(tmp_path / "store")))
    assert r.returncode == 0, r.stderr
    assert "round 1 verdict" in r.stdout


def test_tables_never_cut_identifiers(tmp_path, shipped_folder):
    """Piped output is plain aligned columns with every identifier whole."""
    store = shipped_copy(shipped_folder, tmp_path / "store")
    r = run_cli("--store", str(store), "simulate", "ten_cubes", env={"COLUMNS": "60"})
    assert r.returncode == 0
    assert "battery_internal_resistor" in r.stdout and "…" not in r.stdout
    r = run_cli("--store", str(store), "graphs", env={"COLUMNS": "60"})
    assert "https://w3id.org/diagkg/graph/inferred/ambient_light_sensor" in r.stdout and "…" not in r.stdout


def test_evaluate_takes_the_assistants_comma_separated_or_the_option_again(tmp_path):
    """``--assistant a --assistant b,c`` compares all three (argparse kept only the last one given)."""
    r = run_cli("--memory", "evaluate", "--assistant", "unhelpful,oracle", "--assistant", "random-search",
                "--assistant", "oracle", "--scenarios", "3CC.S.3", "--runs", "1", "--format", "json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["trajectories"] == 3, summary          # each named once


@pytest.mark.parametrize("command", [["run", "--scenario", "1", "--assistant", "oracle"],
                                     ["evaluate", "--assistant", "oracle", "--scenarios", "1"],
                                     ["simulate", "three_cubes"]])
def test_a_negative_seed_is_refused_before_anything_is_written(tmp_path, command):
    # Python's random draws the same from -5 as from 5: a session of seed -5 repeated seed 5 under a name of its own
    store = tmp_path / "store"
    r = run_cli("--store", str(store), *command, "--seed", "-5")
    assert r.returncode == 2 and "a seed is a whole number, 0 or more, not -5" in r.stderr, r.stderr
    assert not store.exists()


def test_a_file_saved_with_a_byte_order_mark_and_windows_line_ends_loads_and_runs(tmp_path):
    # an editor on Windows may start a UTF-8 file with a byte-order mark: it was read as the first subject
    from ..support.torch import FLAT, TORCH, scenario_text

    files = []
    for name, text in (("torch.ttl", TORCH), ("flat.ttl", scenario_text(**FLAT))):
        (path := tmp_path / name).write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
        files.append(str(path))
    store = ["--store", str(tmp_path / "store")]
    r = run_cli(*store, "validate", *files)
    assert r.returncode == 0, r.stderr
    assert run_cli(*store, "load", *files).returncode == 0
    r = run_cli(*store, "run", "--scenario", FLAT["id"], "--assistant", "oracle", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["end"] == "success", r.stderr


def test_a_literal_not_of_its_datatype_is_one_located_line_without_a_library_traceback(tmp_path):
    # "ten"^^xsd:integer breaks two constraints that read alike: the lines say it once; rdflib's own warning, with a
    # traceback, used to come first
    from ..support.torch import FLAT, TORCH, scenario_text

    (system := tmp_path / "torch.ttl").write_text(TORCH)
    bad = scenario_text(**FLAT).replace("dk:actionBudget 10", 'dk:actionBudget "ten"^^<http://www.w3.org/2001/XMLSchema#integer>')
    (scenario := tmp_path / "flat.ttl").write_text(bad)
    store = ["--store", str(tmp_path / "store")]
    assert run_cli(*store, "load", str(system)).returncode == 0
    r = run_cli(*store, "validate", str(scenario))
    lines = [line for line in r.stdout.splitlines() if "actionBudget" in line]
    assert r.returncode == 1 and len(lines) == 1 and '"ten"' in lines[0] and "flat.ttl:" in lines[0], r.stdout
    assert "Traceback" not in r.stderr and "1 violation(s)" in r.stderr, r.stderr
    data = json.loads(run_cli(*store, "validate", str(scenario), "--format", "json").stdout)
    assert len(data["files"][0]["violations"]) >= 1
    r = run_cli(*store, "load", str(scenario))
    assert r.returncode == 1 and "Traceback" not in r.stderr and "1 SHACL violation(s)" in r.stderr, r.stderr


def test_a_store_is_not_made_in_a_folder_of_other_files_nor_in_a_file(tmp_path):
    # `--store .` in a project folder, or a home, used to fill it with dozens of the store's own files
    from ..support.torch import TORCH

    (system := tmp_path / "torch.ttl").write_text(TORCH)
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("mine")
    r = run_cli("--store", str(project), "load", str(system))
    assert r.returncode == 3 and "holds files that are not a store's (notes.txt)" in r.stderr, r.stderr
    assert [p.name for p in project.iterdir()] == ["notes.txt"]
    r = run_cli("--store", str(project / "notes.txt"), "graphs")
    assert r.returncode == 3 and "is a file, not a store" in r.stderr, r.stderr
    (empty := tmp_path / "empty").mkdir()
    assert run_cli("--store", str(empty), "load", str(system)).returncode == 0
    assert run_cli("--store", str(empty), "load", str(system)).returncode == 0      # a store's own files are its own


def test_a_state_file_on_a_users_system_says_what_it_cannot_read(tmp_path):
    # on the torch (written in the tests): a switch written open as "false" (a string, which read as closed) and a
    # misspelt property are refused, saying what a state file may say
    from ..support.torch import TORCH

    (system := tmp_path / "torch.ttl").write_text(TORCH)
    store = ["--store", str(tmp_path / "store")]
    assert run_cli(*store, "load", str(system)).returncode == 0
    head = "@prefix t: <https://example.org/torch/> .\n@prefix dk: <https://w3id.org/diagkg/ontology#> .\n"
    state = tmp_path / "state.ttl"
    for body, says in (('t:sw dk:isClosed "false" .\n', 'is true or false (unquoted), got "false"'),
                       ("t:sw dk:isClosd false .\n", "dk:isClosd is not part of the circuit-state vocabulary (did you "
                                                     "mean dk:isClosed?)"),
                       # a value the shapes refuse in the description (was simulated: a wiper at 1.5 of its track)
                       ("t:bulb dk:hasOverride [ a dk:ParameterValue ; dk:parameter dk:resistance ; dk:value -5 ] .\n",
                        "the override of dk:resistance on bulb is -5, out of its range (> 0; the shapes:")):
        state.write_text(head + body)
        r = run_cli(*store, "simulate", "torch", "--state", str(state), "--format", "json")
        assert r.returncode == 2 and says in r.stderr, r.stderr
    state.write_text(head + "t:sw dk:isClosed false .\n")
    r = run_cli(*store, "simulate", "torch", "--state", str(state), "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["lit"] == ["led"], r.stdout     # opened: the bulb dark, not the LED


def test_a_query_file_of_ones_own_is_taken_by_path_in_python_as_on_the_command_line(tmp_path, store):
    # `diagkg query FILE.rq -p …` read a file of one's own with its header; `store.select("FILE.rq", …)` took the
    # path for a query name and refused it
    mine = tmp_path / "my-parts.rq"
    mine.write_text("# Parts of a system.\n#\n# inputs:\n#   ?system (iri)  the system\n# outputs:\n#   ?part\n"
                    "PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
                    "SELECT ?part WHERE { ?part dk:partOf ?system }\n")
    import pyoxigraph as ox

    assert store.select(str(mine), {"system": ox.NamedNode("https://example.org/none")}) == []


def test_a_reader_that_stops_early_gets_no_error(tmp_path):
    # `diagkg simulate … | head -3` printed "error: Broken pipe" on stderr (exit 2): a reader that stops reading is
    # no error, as for other command-line tools
    import subprocess

    from ..support.cli import DIAGKG

    proc = subprocess.Popen([*DIAGKG, "--store", str(tmp_path / "store"), "queries"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()                   # gone before the command writes a line
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141 and "error" not in err and "Traceback" not in err, err
