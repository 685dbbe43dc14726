"""Every subcommand, given bad input, exits with the documented code and says
what is wrong in one line — never a traceback. A table drives the test; a
second test makes sure the table covers every subcommand."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.cli import SUBCOMMANDS, run_cli
from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text

EXIT_VIOLATIONS, EXIT_INPUT = 1, 2


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bad-input")
    out = {
        "store": folder / "store",
        "garbage": folder / "garbage.ttl",
        "prefix": folder / "prefix.ttl",
        "text-number": folder / "torch-text-number.ttl",
        "torch": folder / "torch.ttl",
        "scenario": folder / "torch-1.ttl",
        "csv": folder / "bad.csv",
        "missing": folder / "missing.ttl",
        "two": folder / "two.ttl",
    }
    out["garbage"].write_text("not turtle at all {{{\n")
    out["prefix"].write_text('@prefix dk: <https://w3id.org/diagkg/ontology#> .\n\nex:a dk:b "c" .\n')
    out["text-number"].write_text(TORCH.replace("dk:resistance 60 ;", 'dk:resistance "sixty" ;'))
    out["torch"].write_text(TORCH)
    out["scenario"].write_text(scenario_text(**FLAT))
    out["csv"].write_text("a,b\n1,2\n")
    out["two"].write_text(scenario_text(**FLAT) + scenario_text(**LOOSE_LEAD))     # (repeated @prefix lines are fine)
    r = run_cli("--store", str(out["store"]), "load", "--shipped", str(out["torch"]), str(out["scenario"]))
    assert r.returncode == 0, r.stderr
    return out


# (subcommand and arguments, exit code, a fragment of the one-line message); {name} is a file above
CASES = [
    ("validate {missing}", EXIT_INPUT, "missing.ttl"),
    ("validate {garbage}", EXIT_INPUT, "garbage.ttl:1"),
    ("validate {text-number}", EXIT_VIOLATIONS, "torch-text-number.ttl:32: :bulb — dk:resistance — needs exactly "
                                                "one dk:resistance, a number of ohms > 0 (value: \"sixty\")"),
    ("load {prefix}", EXIT_INPUT, "prefix.ttl:3:1: malformed RDF: prefix ex: is not declared"),
    # one scenario per file: validate says so as load does (it said the file conforms)
    ("validate {two}", EXIT_INPUT, "two.ttl: holds several scenarios; use one file per scenario"),
    ("load {two}", EXIT_INPUT, "two.ttl: holds several scenarios; use one file per scenario"),
    ("load", EXIT_INPUT, "give files or folders to load"),
    ("dump --bogus", EXIT_INPUT, "unrecognized arguments: --bogus"),
    # a graph by its name after the graph base, that the store has not (it was a traceback)
    ("dump scenario/NOPE.1", EXIT_INPUT, "no graph <https://w3id.org/diagkg/graph/scenario/NOPE.1> in the store"),
    ("dump https://w3id.org/diagkg/graph/nope", EXIT_INPUT, "no graph <https://w3id.org/diagkg/graph/nope>"),
    ("query nope-query", EXIT_INPUT, "no query named 'nope-query'"),
    ("query SELECT * WHERE { ?s ex:p ?o }", EXIT_INPUT, "line 1, column 21: prefix ex: is not declared"),
    ("query system-components", EXIT_INPUT, "system-components needs system"),
    ("query INSERT DATA { <urn:a> <urn:b> 1 }", EXIT_INPUT, "is an update"),
    ("update DELETE", EXIT_INPUT, "inline: error at 1:7"),
    # a misspelt keyword: the parser's place, not "no query named 'SELCT * WHERE …'" nor "inline is a query"
    ("query SELCT * WHERE { ?s ?p ?o }", EXIT_INPUT, "inline: error at 1:"),
    ("update INSRT DATA { GRAPH <urn:g> { <urn:a> <urn:b> 1 } }", EXIT_INPUT, "inline: error at 1:"),
    ("update /nowhere/nope.ru", EXIT_INPUT, "/nowhere/nope.ru: no such file"),
    ("remove", EXIT_INPUT, "name what to remove"),
    ("remove https://w3id.org/diagkg/graph/nope --yes", EXIT_INPUT, "no graph <https://w3id.org/diagkg/graph/nope>"),
    # a scenario's id given as a graph's name: the graph whose name ends with it is suggested
    ("remove TORCH.1 --yes", EXIT_INPUT, "no graph <https://w3id.org/diagkg/graph/TORCH.1> in the store (see `diagkg "
                                         "graphs`); did you mean scenario/TORCH.1? (or --scenario, --trajectory, "
                                         "--campaign with an id)"),
    ("remove --scenario TORCH.1", EXIT_INPUT, "--yes"),
    ("graphs --format xml", EXIT_INPUT, "invalid choice: 'xml'"),
    ("queries --bogus", EXIT_INPUT, "unrecognized arguments: --bogus"),
    ("build-systems --out /dev/null/x", EXIT_INPUT, "Not a directory"),
    ("reason nosuchsystem", EXIT_INPUT, "no shipped system 'nosuchsystem'"),
    ("check NOPE.1", EXIT_INPUT, "no scenario 'NOPE.1'"),
    ("check TORCH.1 --seeds 0", EXIT_INPUT, "--seeds must be at least 1"),
    ("simulate nosuchsystem", EXIT_INPUT, "no system 'nosuchsystem' in the store"),
    ("simulate torhc", EXIT_INPUT, "did you mean torch?"),
    ("simulate three_cubes --state {missing}", EXIT_INPUT, "missing.ttl: no such file"),
    ("run --scenario 9999 --assistant oracle", EXIT_INPUT, "no scenario number 9999"),
    ("run --scenario TORCH.1 --assistant nobody", EXIT_INPUT, "no assistant named 'nobody'"),
    ("run --scenario TORCH.1 --assistant oracle --config {bad", EXIT_INPUT, "--config is not valid JSON"),
    ("run --scenario TORCH.1 --assistant oracle --budget 0", EXIT_INPUT, "--budget must be at least 1 round, got 0"),
    ("run --scenario TORCH.1 --assistant oracle --budget -1", EXIT_INPUT, "--budget must be at least 1 round"),
    ("transcript nope", EXIT_INPUT, "no trajectory https://w3id.org/diagkg/trajectory/nope"),
    ("demo --scenario NOPE.1", EXIT_INPUT, "no scenario 'NOPE.1'"),
    ("import-scenarios {missing}", EXIT_INPUT, "missing.ttl: no such file"),
    ("import-scenarios {csv}", EXIT_INPUT, "row 1 (header): missing column(s)"),
    ("evaluate --assistant nobody --scenarios TORCH.1", EXIT_INPUT, "--assistant: unknown nobody"),
    ("evaluate --assistant oracle --scenarios NOPE.9", EXIT_INPUT, "no scenario 'NOPE.9' in the store"),
    ("report nope-run", EXIT_INPUT, "no campaign 'nope-run' in the store"),
    ("export nope-run", EXIT_INPUT, "no campaign 'nope-run' in the store"),
    ("qualitative nope-run", EXIT_INPUT, "no campaign 'nope-run' in the store"),
    ("evaluate --assistant oracle --scenarios TORCH.1 --cost-limit 1", EXIT_INPUT, "--cost-limit needs the model"),
    ("import {missing}", EXIT_INPUT, "missing.ttl: no such file"),
    ("serve --port 0x", EXIT_INPUT, "argument --port: invalid int value: '0x'"),
    ("mcp --scenario 9999", EXIT_INPUT, "no scenario number 9999"),
    ("mcp --scenario TORCH.1 --http 0", EXIT_INPUT, "--http needs a token"),
    ("llm --bogus", EXIT_INPUT, "unrecognized arguments: --bogus"),
    ("optimum nosuchsystem", EXIT_INPUT, "no stored scenario on a system 'nosuchsystem'"),
    ("optimum torch --scenarios NOPE.9", EXIT_INPUT, "no scenario 'NOPE.9' in the store"),
    ("optimum torch --time-limit 0", EXIT_INPUT, "--time-limit must be positive"),
]


def _args(template: str, files: dict[str, Path]) -> list[str]:
    words = template.split(" ")
    for name, path in files.items():
        words = [w.replace("{" + name + "}", str(path)) for w in words]
    return words


@pytest.mark.parametrize(("template", "code", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_gets_its_exit_code_and_one_line(files, template, code, fragment):
    args = _args(template, files)
    if args[0] in ("query", "update") and len(args) > 2:
        args = [args[0], " ".join(args[1:])]          # one inline query text
    r = run_cli("--store", str(files["store"]), *args, env={"COLUMNS": "400"})
    assert r.returncode == code, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    said = [line for line in (r.stdout + r.stderr).splitlines() if fragment in line]
    assert said, f"{fragment!r} not in:\n{r.stdout}{r.stderr}"
    if code == EXIT_INPUT:
        errors = [line for line in r.stderr.splitlines() if "error:" in line]
        assert len(errors) == 1, r.stderr                 # one line says what is wrong


def test_the_table_covers_every_subcommand():
    assert {c[0].split(" ")[0] for c in CASES} == set(SUBCOMMANDS)


def test_dump_takes_a_graph_by_its_name_as_remove_does(files):
    """`diagkg dump scenario/TORCH.1` (a graph's name after the graph base, as `remove` takes it) was a traceback
    ("ValueError: No scheme found in an absolute IRI")."""
    r = run_cli("--store", str(files["store"]), "dump", "scenario/TORCH.1")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    lines = r.stdout.splitlines()
    assert lines and all(line.endswith("<https://w3id.org/diagkg/graph/scenario/TORCH.1> .") for line in lines)
