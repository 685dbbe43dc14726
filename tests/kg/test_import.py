"""`diagkg import-scenarios`: a scenario spreadsheet (CSV) → normalised tables →
RML (morph-kgc) → one Turtle file per scenario, validated with the shapes."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest
import rdflib

from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg import resources
from diagkg.kg.importer import import_scenarios, normalise
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.cli import run_cli
from ..support.stores import shipped_store
from ..support.torch import TORCH

DK = rdflib.Namespace("https://w3id.org/diagkg/ontology#")
MASTER_HEADER = [
    "scenario number", "scenario id (system+first category+index)", "target system",
    "alterations to system configuartion", "additional context", "category", "injected fault",
    "scenario description", "canonical initial observations", "ideal diagnosis example",
    "minimum round number allowance",
]
EXTRA = ["faults", "faulty components", "ideal repair", "removed components"]
SYSTEM_KEYS = {
    "3 cubes chain": "three_cubes", "10 cubes chain": "ten_cubes",
    "Doubly connected asymmetric chains": "asymmetric_chains",
    "3 cubes chain with ambient sensor": "ambient_light_sensor",
    "3 cubes chain with current sensor": "current_sensor",
}

# The facts of shipped scenarios 1, 3, 16, 21 and 134, written the spreadsheet way.
COMPLETE_ROWS = [
    {"scenario number": "1", "scenario id (system+first category+index)": "3CC.S.1",
     "target system": "3 cubes chain", "category": "Simple", "injected fault": "Depleted battery",
     "scenario description": "The battery has run flat: it delivers 0 V.",
     "canonical initial observations": "Operating the switch does not light the lamp.",
     "faults": "DepletedBattery battery", "faulty components": "battery",
     "ideal repair": "replace_component battery"},
    {"scenario number": "3", "scenario id (system+first category+index)": "3CC.S.3",
     "target system": "3 cubes chain", "category": "Simple", "injected fault": "Crossed supply–control cables",
     "canonical initial observations": "The green LED is lit, and so is the red LED on the control cube.",
     "ideal diagnosis example": "Check the polarity at the control cube's input; swap the cables back.",
     "faults": "CrossedCables ctrl_cable_in_pos.p ctrl_cable_in_neg.p",
     "faulty components": "ctrl_cable_in_pos, ctrl_cable_in_neg",
     "ideal repair": "swap_cables ctrl_cable_in_pos ctrl_cable_in_neg"},
    {"scenario number": "16", "scenario id (system+first category+index)": "3CC.L.1",
     "target system": "3 cubes chain", "alterations to system configuartion": "all indicators removed",
     "category": "Limited Observability", "injected fault": "Depleted battery (no indicator LEDs)",
     "canonical initial observations": "Nothing but the lamp can be watched.",
     "faults": "DepletedBattery battery", "faulty components": "battery",
     "ideal repair": "replace_component battery",
     "removed components": "psu_green_led psu_green_resistor ctrl_red_led ctrl_red_resistor"},
    {"scenario number": "21", "scenario id (system+first category+index)": "3CC.I.1",
     "target system": "3 cubes chain", "category": "Intermittent", "injected fault": "Loose battery-cable connection",
     "canonical initial observations": "Every so often the lamp goes out by itself.\nIt comes back later.",
     "faults": "LooseConnectionFault psu_cable_pos.p 0.5", "faulty components": "psu_cable_pos",
     "ideal repair": "reconnect_cable psu_cable_pos"},
    {"scenario number": "134", "scenario id (system+first category+index)": "3CC-CS.M.9",
     "target system": "3 cubes chain with current sensor", "category": "Misleading, Double",
     "injected fault": "Shorted main lamp and open supply LED",
     "canonical initial observations": "The lamp never stays lit; at most it flickers.",
     "minimum round number allowance": "11",
     "faults": "ShortedComponent main_bulb; OpenComponent psu_green_led", "faulty components": "main_bulb",
     "ideal repair": "replace_component psu_green_led; replace_component main_bulb"},
]


def write_csv(path: Path, rows: list[dict], header: list[str] = MASTER_HEADER + EXTRA, bom: bool = True) -> Path:
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)
        # what follows a blank row is not part of the table
        f.write(",,,,\n" + "999,DRAFT,nowhere,,,,,,,,\n")
    return path


def catalog_of(files: list[Path], validate: bool = True) -> ScenarioCatalog:
    store = KnowledgeStore.memory()
    systems = [Path(str(f)) for f in resources.system_files()]
    load_files(store, systems + files, validate=validate)
    return ScenarioCatalog(store)


# ---------------------------------------------------------------------------
# (a) a master table: the columns of the scenario spreadsheet, without the structured ones
# ---------------------------------------------------------------------------

def master_rows(every: int = 3) -> list[dict]:
    """The headline facts of every third shipped scenario (1, 4, 7…: each system, each category), written the
    spreadsheet's way (its original columns only: no faults, faulty components or ideal repair), taken from
    the shipped catalogue itself; a configuration is given in words, as the spreadsheet gives it."""
    names = {key: label for label, key in SYSTEM_KEYS.items()}
    catalog = ScenarioCatalog(shipped_store())
    rows = []
    for n in catalog.numbers()[::every]:
        s = catalog.resolve(n)
        rows.append({"scenario number": str(n), MASTER_HEADER[1]: s.id, "target system": names[s.key],
                     "alterations to system configuartion": (f"{', '.join(sorted(s.removed))} taken out"
                                                             if s.removed else ""),
                     "category": ", ".join(c.title() for c in s.categories), "injected fault": s.label,
                     "canonical initial observations": s.observations,
                     "minimum round number allowance": str(s.budget)})
    return rows


@pytest.fixture(scope="module")
def master_import(tmp_path_factory):
    folder = tmp_path_factory.mktemp("master")
    rows = master_rows()
    table = write_csv(folder / "master.csv", rows, MASTER_HEADER)
    out = folder / "out"
    # a store of its own: the tables hold the shipped scenarios' ids, which collide with the shipped catalogue
    # that another test's `check` or `evaluate` may have loaded into this worker's default store
    r = run_cli("--store", str(folder / "store"), "import-scenarios", str(table), "--out", str(out))
    return r, out, table, rows


def test_a_master_table_imports_every_scenario(master_import):
    r, out, _, rows = master_import
    files = sorted(out.glob("*.ttl"))
    assert len(files) == len(rows) > 40, r.stderr
    assert [f.name for f in files] == [f"{int(r['scenario number']):03d}-{r[MASTER_HEADER[1]]}.ttl" for r in rows]
    imported = catalog_of(files, validate=False)
    assert imported.numbers() == [int(row["scenario number"]) for row in rows]
    for row in rows:
        s = imported.resolve(int(row["scenario number"]))
        assert s.id == row[MASTER_HEADER[1]]
        assert s.key == SYSTEM_KEYS[row["target system"]]
        assert s.label == row["injected fault"].strip()
        assert s.observations == row["canonical initial observations"].strip()
        labels = {c.strip().lower() for c in row["category"].split(",")}
        assert set(s.categories) == labels, (s.id, s.categories)
        assert s.budget == int(row["minimum round number allowance"])
        assert not s.faults and not s.faulty and not s.repair
    # the same headline facts as the shipped catalogue
    shipped = ScenarioCatalog(shipped_store())
    assert {s.key for s in map(shipped.resolve, imported.numbers())} == set(SYSTEM_KEYS.values())
    for n in imported.numbers():
        a, b = imported.resolve(n), shipped.resolve(n)
        assert (a.id, a.key, a.budget, a.categories) == (b.id, b.key, b.budget, b.categories), n
    # configurations given only in words are kept as a comment on a dk:ConfigurationChange
    worded = next(row for row in rows if row["alterations to system configuartion"])
    name = f"{int(worded['scenario number']):03d}-{worded[MASTER_HEADER[1]]}.ttl"
    g = rdflib.Graph().parse(out / name)
    config = g.value(rdflib.URIRef(f"https://w3id.org/diagkg/scenario/{worded[MASTER_HEADER[1]]}"), DK.configuration)
    assert (config, rdflib.RDF.type, DK.ConfigurationChange) in g
    assert str(g.value(config, rdflib.RDFS.comment)) == worded["alterations to system configuartion"]


def test_a_master_table_reports_missing_faults(master_import):
    r, _, table, rows = master_import
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3 * len(rows)
    first = [line for line in lines if "001-3CC.S.1.ttl" in line]
    assert {line.split(" → ")[0] for line in first} == {
        f"{table}:2 (faults)", f"{table}:2 (faulty components)", f"{table}:2 (ideal repair)"}
    assert any(":3CC.S.1 — dk:injects — a scenario injects at least one dk:Fault" in line for line in first)
    assert f"imported {len(rows)} scenario(s)" in r.stderr and "0 conform" in r.stderr
    assert "no column(s) 'faults', 'faulty components', 'ideal repair'" in r.stderr


# ---------------------------------------------------------------------------
# (b) a table with the structured columns
# ---------------------------------------------------------------------------

def test_complete_rows_conform_and_equal_the_catalogue(tmp_path):
    table = write_csv(tmp_path / "scenarios.csv", COMPLETE_ROWS)
    out = tmp_path / "out"
    r = run_cli("--store", str(tmp_path / "store"), "import-scenarios", str(table), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ""
    assert "5 conform, 0 do not; 0 violation(s)" in r.stderr
    files = sorted(out.glob("*.ttl"))
    assert [f.name for f in files] == ["001-3CC.S.1.ttl", "003-3CC.S.3.ttl", "016-3CC.L.1.ttl",
                                       "021-3CC.I.1.ttl", "134-3CC-CS.M.9.ttl"]
    # no blank nodes: faults, plans and steps are IRIs below the scenario's
    text = (out / "134-3CC-CS.M.9.ttl").read_text()
    assert "[" not in text and "_:" not in text
    assert "<https://w3id.org/diagkg/scenario/3CC-CS.M.9/fault/2>" in text
    assert "@prefix sys: <https://w3id.org/diagkg/system/current_sensor/> ." in text
    imported = catalog_of(files)                      # load_files validates again
    shipped = ScenarioCatalog(shipped_store())
    for n in (1, 3, 16, 21, 134):
        a, b = imported.resolve(n), shipped.resolve(n)
        assert a.iri == b.iri and a.system_iri == b.system_iri
        # the spreadsheet has no column for dk:masked (nor for stated symptoms and design notes)
        unmasked = [dataclasses.replace(f, masked=False) for f in b.faults]
        assert sorted(a.faults, key=repr) == sorted(unmasked, key=repr), n
        assert a.faulty == b.faulty, n
        assert a.repair == b.repair, n
        assert a.removed == b.removed, n
        assert (a.categories, a.budget) == (b.categories, b.budget), n
    assert imported.resolve(21).faults[0].probability == 0.5
    assert imported.resolve(21).observations == "Every so often the lamp goes out by itself.\nIt comes back later."


def test_normalised_tables(tmp_path):
    norm = normalise(write_csv(tmp_path / "s.csv", COMPLETE_ROWS))
    assert [r.id for r in norm.rows] == ["3CC.S.1", "3CC.S.3", "3CC.L.1", "3CC.I.1", "3CC-CS.M.9"]
    assert {(r["id"], r["category"]) for r in norm.tables["categories"]} >= {
        ("3CC.L.1", "LimitedObservability"), ("3CC-CS.M.9", "Misleading"), ("3CC-CS.M.9", "Double")}
    crossed = next(r for r in norm.tables["faults"] if r["id"] == "3CC.S.3")
    tc = "https://w3id.org/diagkg/system/three_cubes/"     # parts are written as IRIs in their system's namespace
    assert (crossed["mode"], crossed["target"], crossed["other"]) == (
        "CrossedCables", tc + "ctrl_cable_in_pos.p", tc + "ctrl_cable_in_neg.p")
    loose = next(r for r in norm.tables["faults"] if r["id"] == "3CC.I.1")
    assert (loose["probability"], loose["value"]) == ("0.5", "")
    steps = [(r["position"], r["action"], r["target"]) for r in norm.tables["repair"] if r["id"] == "3CC-CS.M.9"]
    cs = "https://w3id.org/diagkg/system/current_sensor/"
    assert steps == [("1", "replace_component", cs + "psu_green_led"), ("2", "replace_component", cs + "main_bulb")]
    assert {"id": "replace_component", "name": "ReplaceComponent"} in norm.tables["actions"]
    assert norm.missing_columns == ()


# ---------------------------------------------------------------------------
# (c) malformed tables
# ---------------------------------------------------------------------------

def test_missing_id_column_exit_2(tmp_path):
    header = [h for h in MASTER_HEADER + EXTRA if not h.startswith("scenario id")]
    rows = [{k: v for k, v in COMPLETE_ROWS[0].items() if k in header}]
    r = run_cli("import-scenarios", str(write_csv(tmp_path / "bad.csv", rows, header)))
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{tmp_path / 'bad.csv'}: row 1 (header): missing column(s) " \
           "'scenario id (system+first category+index)'" in r.stderr


def test_ill_formed_cells_exit_2(tmp_path):
    rows = [dict(COMPLETE_ROWS[0], **{"scenario number": "one"}),
            dict(COMPLETE_ROWS[1], faults="CrossedCables a.p b.p c.p"),
            dict(COMPLETE_ROWS[3], **{"minimum round number allowance": "a few"})]
    r = run_cli("import-scenarios", str(write_csv(tmp_path / "bad.csv", rows)))
    assert r.returncode == 2
    assert "3 problem(s)" in r.stderr
    assert "row 2, column 'scenario number': expected a whole number ≥ 1, got 'one'" in r.stderr
    assert "row 3, column 'faults': fault 1 ('CrossedCables a.p b.p c.p')" in r.stderr
    assert "row 4, column 'minimum round number allowance'" in r.stderr


def test_missing_file_exit_2(tmp_path):
    r = run_cli("import-scenarios", str(tmp_path / "nope.csv"))
    assert r.returncode == 2 and "no such file" in r.stderr


def test_unknown_names_are_located_violations(tmp_path):
    rows = [dict(COMPLETE_ROWS[0], faults="DepletedBatery battery"),          # unknown fault mode
            dict(COMPLETE_ROWS[1], **{"faulty components": "ctrl_cable_in_pos ctrl_cable_9",   # unknown parts
                                      "removed components": "psu_green_led psu_gren_led"}),
            dict(COMPLETE_ROWS[3], faults="LooseConnectionFault psu_cable_pos.q 0.5",          # unknown port
                 **{"ideal repair": "reconect_cable psu_cable_pos"}),        # unknown action
            dict(COMPLETE_ROWS[4], **{"target system": "3 cubes chain with a toaster"})]
    table = write_csv(tmp_path / "bad.csv", rows)
    r = run_cli("import-scenarios", str(table))
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()

    def at(prefix: str) -> list[str]:
        return [line for line in lines if line.startswith(f"{table}:{prefix}")]

    assert any("unknown term dk:DepletedBatery" in line for line in at("2 (faults) → 001-3CC.S.1.ttl"))
    assert any("fault-mode catalogue" in line for line in at("2 (faults)"))
    assert any("sys:ctrl_cable_9 is not a part of the scenario's system" in line
               for line in at("3 (faulty components) → 003-3CC.S.3.ttl"))
    assert any("sys:psu_gren_led is not a part of the scenario's system" in line
               for line in at("3 (removed components) → 003-3CC.S.3.ttl"))
    assert any("sys:psu_cable_pos.q does not exist in the scenario's system" in line for line in at("4 (faults)"))
    assert any("unknown action 'reconect_cable'; did you mean 'reconnect_cable'?" in line
               for line in at("4 (ideal repair)"))
    assert any("unknown target system '3 cubes chain with a toaster'" in line for line in at("5 (target system)"))
    assert "0 conform, 4 do not" in r.stderr


# ---------------------------------------------------------------------------
# (d) the whole shipped catalogue, written as a spreadsheet, comes back intact
# ---------------------------------------------------------------------------

def _as_row(s) -> dict:
    ns = f"https://w3id.org/diagkg/system/{s.key}/"
    faults = []
    for f in s.faults:
        words = [f.mode, f.target.removeprefix(ns)] + ([f.other.removeprefix(ns)] if f.other else [])
        number = f.probability if f.mode == "LooseConnectionFault" else f.value
        faults.append(" ".join(words + ([repr(number)] if number is not None else [])))
    steps = [" ".join([st.action, *st.targets] + ([repr(st.value)] if st.value is not None else []))
             for st in s.repair]
    return {"scenario number": s.number, "scenario id": s.id, "target system": s.key,
            "category": ", ".join(s.categories), "injected fault": s.label,
            "scenario description": s.description or "", "canonical initial observations": s.observations,
            "ideal diagnosis example": s.diagnosis or "", "minimum round number allowance": s.budget,
            "faults": "; ".join(faults), "faulty components": " ".join(sorted(s.faulty)),
            "ideal repair": "; ".join(steps), "removed components": " ".join(sorted(s.removed)),
            "permanent repairs": " ".join(sorted(s.permanent))}


def test_shipped_catalogue_round_trips(tmp_path):
    shipped = ScenarioCatalog(shipped_store())
    rows = [_as_row(shipped.resolve(n)) for n in shipped.numbers()]
    table = tmp_path / "catalogue.csv"
    with open(table, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    result = import_scenarios(table, tmp_path / "out")
    assert result.lines() == [] and result.conforms
    imported = catalog_of(result.written, validate=False)
    assert imported.numbers() == shipped.numbers()
    for n in shipped.numbers():
        a, b = imported.resolve(n), shipped.resolve(n)
        for name in ("iri", "id", "key", "label", "budget", "categories", "observations", "diagnosis",
                     "description", "faulty", "removed", "permanent", "repair"):
            assert getattr(a, name) == getattr(b, name), (n, name)
        # the spreadsheet has no column for dk:masked (nor for stated symptoms and design notes)
        unmasked = [dataclasses.replace(f, masked=False) for f in b.faults]
        assert sorted(a.faults, key=repr) == sorted(unmasked, key=repr), n


# ---------------------------------------------------------------------------
# (d) a user's own system
# ---------------------------------------------------------------------------

def test_scenarios_on_a_users_system_of_the_store_import_validate_and_run(tmp_path):
    """A table naming a system of the store by its label or key: the importer knew only the shipped systems
    (`unknown target system 'Torch'`), and wrote every part in the shipped namespace."""
    store = str(tmp_path / "store")
    (tmp_path / "torch.ttl").write_text(TORCH)
    with KnowledgeStore(store) as held:           # the user's system, loaded in this process: the commands are the subject
        load_files(held, [tmp_path / "torch.ttl"])
    rows = [{"scenario number": "9301", "scenario id (system+first category+index)": "TORCH.C1",
             "target system": "Torch", "category": "Simple", "injected fault": "Flat battery",
             "canonical initial observations": "The torch stays dark, and so does its green LED.",
             "faults": "DepletedBattery bat", "faulty components": "bat", "ideal repair": "replace_component bat"},
            {"scenario number": "9302", "scenario id (system+first category+index)": "TORCH.C2",
             "target system": "torch", "category": "Simple", "injected fault": "Bulb lead off",
             "canonical initial observations": "The torch stays dark; the green LED is lit.",
             "faults": "DetachedEnd lead.n", "faulty components": "lead", "ideal repair": "reconnect_cable lead"},
            {"scenario number": "9303", "scenario id (system+first category+index)": "TORCH.C3",
             "target system": "torch", "category": "Simple", "injected fault": "A part the torch lacks",
             "faults": "OpenComponent main_bulb", "faulty components": "main_bulb",
             "ideal repair": "replace_component main_bulb"}]
    table = write_csv(tmp_path / "torch.csv", rows)
    out = tmp_path / "out"
    r = run_cli("--store", store, "import-scenarios", str(table), "--out", str(out))
    assert r.returncode == 1, r.stdout + r.stderr          # the third names a part of a shipped system
    assert "unknown target system" not in r.stdout
    assert f"{table}:4 (faults) → {out / '9303-TORCH.C3.ttl'}" in r.stdout and "main_bulb" in r.stdout
    assert "torch.csv:2" not in r.stdout and "torch.csv:3" not in r.stdout
    text = (out / "9301-TORCH.C1.ttl").read_text()
    assert "@prefix sys: <https://example.org/torch/> ." in text and "dk:onSystem sys:torch" in text
    (out / "9303-TORCH.C3.ttl").unlink()
    assert run_cli("--store", store, "load", str(out)).returncode == 0
    r = run_cli("--store", store, "check", "TORCH.C1", "TORCH.C2")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("--store", store, "run", "--scenario", "TORCH.C2", "--assistant", "model-based")
    assert r.returncode == 0 and "end: success" in r.stdout, r.stdout + r.stderr


def test_a_row_with_a_wrong_id_or_number_is_still_checked_to_its_end(tmp_path):
    """A duplicate or missing identifier, or a scenario number that is not one, stopped the checks of its row:
    the row's other ill-formed cells (a fault with three targets, an allowance in words) showed only once that one
    was fixed, though the table is refused with every problem of every row."""
    rows = [dict(COMPLETE_ROWS[0]),
            dict(COMPLETE_ROWS[1], **{"scenario id (system+first category+index)": "3CC.S.1",
                                      "faults": "CrossedCables a.p b.p c.p"}),
            dict(COMPLETE_ROWS[3], **{"scenario number": "four", "minimum round number allowance": "a few"}),
            dict(COMPLETE_ROWS[4], **{"scenario number": "1", "ideal repair": "replace_component"})]
    r = run_cli("import-scenarios", str(write_csv(tmp_path / "bad.csv", rows)))
    assert r.returncode == 2, r.stdout + r.stderr
    problems = [line.strip() for line in r.stderr.splitlines() if line.startswith("  row ")]
    assert [p.split(":", 1)[0] for p in problems] == [
        "row 3, column 'scenario id (system+first category+index)'", "row 3, column 'faults'",
        "row 4, column 'scenario number'", "row 4, column 'minimum round number allowance'",
        "row 5, column 'scenario number'", "row 5, column 'ideal repair'"], r.stderr


def test_a_scenario_the_store_holds_from_another_file_is_a_located_violation(tmp_path):
    """import-scenarios said a row conformed whose scenario the store already held from another file, and the
    `diagkg load` of the file it wrote refused it. It now says what `diagkg validate` says, at the row and column:
    written again where the stored file is, it conforms (load replaces that file's graph)."""
    store = str(tmp_path / "store")
    (tmp_path / "torch.ttl").write_text(TORCH)
    rows = [{"scenario number": "9311", "scenario id (system+first category+index)": "TORCH.D1",
             "target system": "torch", "category": "Simple", "injected fault": "Flat battery",
             "canonical initial observations": "The torch stays dark, and so does its green LED.",
             "faults": "DepletedBattery bat", "faulty components": "bat", "ideal repair": "replace_component bat"}]
    table = write_csv(tmp_path / "torch.csv", rows)
    first, second = tmp_path / "first", tmp_path / "second"
    # the store, set up in this process (the torch, and the scenario as the importer writes it, loaded from first):
    # the commands below are the subject
    with KnowledgeStore(store) as held:
        load_files(held, [tmp_path / "torch.ttl"])
        imported = import_scenarios(table, first, store=held)
        assert imported.conforms and imported.lines() == [], imported.lines()
        load_files(held, [first])
    r = run_cli("--store", store, "import-scenarios", str(table), "--out", str(first))
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("--store", store, "import-scenarios", str(table), "--out", str(second))
    assert r.returncode == 1, r.stdout + r.stderr
    assert (f"{table}:2 (scenario id (system+first category+index)) → {second / '9311-TORCH.D1.ttl'}:"
            in r.stdout), r.stdout
    assert f"which the store already holds in <https://w3id.org/diagkg/graph/scenario/TORCH.D1> from " \
           f"{first / '9311-TORCH.D1.ttl'}" in r.stdout
    assert run_cli("--store", store, "load", str(second)).returncode == 2


def test_a_quote_left_open_is_located_at_its_row(tmp_path):
    """A quoted cell never closed (a spreadsheet cell edited by hand) was refused as "malformed CSV: unexpected end
    of data", without a row: the reader ran on to the end of the file. The row the record starts on is named."""
    table = write_csv(tmp_path / "torch.csv", [dict(COMPLETE_ROWS[0]), dict(COMPLETE_ROWS[1])])
    lines = table.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    lines[2] = lines[2].replace("3CC.S.3", '"3CC.S.3', 1)         # row 3 opens a quote it never closes
    table.write_text("".join(lines), encoding="utf-8")
    r = run_cli("import-scenarios", str(table))
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{table}: row 3: malformed CSV:" in r.stderr, r.stderr


def test_a_decimal_comma_is_a_decimal_point(tmp_path):
    """A table of a locale that writes decimal commas (exported with semicolons, which the reader takes) wrote a
    fault's probability as 0,5: the cell was split at the comma ("fault 1 (...): at most one number, at the end"),
    and an allowance of 12,0 was refused. Both now read as numbers; a list of parts stays a list."""
    header = MASTER_HEADER + EXTRA
    rows = [dict(COMPLETE_ROWS[3], faults="LooseConnectionFault psu_cable_pos.p 0,5",
                 **{"minimum round number allowance": "12,0"})]
    table = tmp_path / "eu.csv"
    with open(table, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, delimiter=";")
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "out"
    r = run_cli("--store", str(tmp_path / "store"), "import-scenarios", str(table), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    text = (out / "021-3CC.I.1.ttl").read_text()
    assert "dk:probability 0.5" in text and "dk:actionBudget 12" in text, text
