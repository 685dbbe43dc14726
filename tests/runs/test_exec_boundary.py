"""Assistants as programs of their own (``exec:COMMAND``): JSON lines over standard input and output.

The programs are written here, in Python, JavaScript (Node.js) and POSIX shell; they drive sessions
on the torch (a system written in the tests) and on a shipped scenario, to success and to the end of
the budget. Every message that crosses is checked against the shipped JSON Schemas. Replies that
cannot be used (malformed, off-schema, unknown ids, oversized, late, a program that dies or runs out
of memory) end the session cleanly, with a typed fault in the stored trajectory.
"""

from __future__ import annotations

import json
import shutil
import sys

import pyoxigraph as ox
import pytest

from diagkg.env import contract
from diagkg.env.contract import ProtocolFault
from diagkg.errors import InputError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs import hosting
from diagkg.runs.exec_boundary import ExecAssistant, Limits, command_of
from diagkg.runs.runner import run_session

from ..support.paths import ROOT, THREE_CUBES
from ..support.programs import NODE_SEARCHER, SEARCHER, SH_STOPPER
from ..support.torch import torch_memory_store

SHIPPED = "3CC.S.1"


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("exec-torch"))


@pytest.fixture(scope="module")
def shipped():
    """A shipped system and one of its shipped scenarios (loaded as a user would)."""
    store = KnowledgeStore.memory()
    (scenario,) = (ROOT / "scenarios" / "catalog").glob(f"*-{SHIPPED}.ttl")
    load_files(store, [THREE_CUBES, scenario])
    return store


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def lines(log: str) -> tuple[list[dict], list[dict]]:
    """What a program read and what it wrote, as messages."""
    read, wrote = [], []
    with open(log, encoding="utf-8") as f:
        for line in f:
            way, _, text = line.partition(" ")
            (read if way == "in" else wrote).append(json.loads(text))
    return read, wrote


def assert_fits_schemas(messages: list[dict]) -> None:
    for m in messages:
        assert contract.problems(m["kind"], m) == [], m["kind"]
        if m["kind"] in contract.REPLIES:
            assert contract.problems("reply", m) == []


def stored(store, iri: str, predicate: str) -> list[ox.Term]:
    return [q.object for q in store.raw.quads_for_pattern(ox.NamedNode(iri + "#session"), ox.NamedNode(predicate),
                                                          None, None)]


def test_the_schemas_ship_and_are_draft_2020_12():
    from jsonschema import Draft202012Validator

    for name in contract.schema_names():
        schema = contract.schema(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"{contract.SCHEMA_BASE}{name}.schema.json"
        if name != "reply":
            assert schema["properties"]["protocol"]["const"] == contract.PROTOCOL_VERSION


def test_a_python_program_diagnoses_the_torch(tmp_path, torch):
    log = str(tmp_path / "log")
    name = f"exec:{sys.executable} {write(tmp_path, 'searcher.py', SEARCHER)} {log} search"
    config = {"depth": 2, "knowledge": True, "limits": "mine"}        # the program's own keys, whatever they are
    result = run_session("TORCH.1", name, store=torch, seed=0, config=config)
    assert result.end == "success" and result.rounds == 2 and result.assistant == name
    assert result.record.config == config
    read, wrote = lines(log)
    assert [m["kind"] for m in read] == ["briefing", "outcome", "end"]
    assert [m["kind"] for m in wrote] == ["act", "hypothesis"]
    assert_fits_schemas(read + wrote)
    brief, outcome, end = read
    assert "bat" in brief["parts"] and brief["ports"]["bat"] and "knowledge" not in brief   # not trusted
    assert brief["config"] == config and brief["budget"] == 10 and "knowledge" not in brief
    assert {a["id"] for a in brief["actions"]} >= {"measure_voltage", "replace_component"}
    assert outcome["outcome"]["data"]["bat"]["port_voltages"]          # the measurement came back, typed
    assert end["end"] == "success" and end["outcome"]["verdict"] == "correct"   # the verdict that ended it
    # the trajectory is stored (and checked against the shapes): not privileged, no fault, candidates kept
    assert stored(torch, result.trajectory, DK.privileged) == [ox.Literal(False)]
    assert stored(torch, result.trajectory, DK.protocolFault) == []
    assert any(t.predicate.value == DK.rankedCandidate for t in result.record.extra)


def test_a_program_runs_to_the_end_of_its_budget(tmp_path, torch):
    log = str(tmp_path / "log")
    name = f"exec:{sys.executable} {write(tmp_path, 'searcher.py', SEARCHER)} {log} measure"
    result = run_session("TORCH.2", name, store=torch, seed=0, budget=3)
    assert result.end == "timeout" and result.rounds == 3
    read, wrote = lines(log)
    assert [m["kind"] for m in read] == ["briefing", "outcome", "outcome", "end"]
    assert [m["rounds_left"] for m in read[1:3]] == [2, 1]
    assert read[-1]["end"] == "timeout" and read[-1]["outcome"]["round"] == 3
    assert_fits_schemas(read + wrote)


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_a_javascript_program_on_the_torch_and_on_a_shipped_scenario(tmp_path, torch, shipped):
    name = f"exec:node {write(tmp_path, 'searcher.js', NODE_SEARCHER)}"
    assert run_session("TORCH.1", name, store=torch, seed=0).end == "success"
    result = run_session(SHIPPED, name, store=shipped, seed=0, budget=40)
    assert result.end == "success", result.record.rounds[-1]
    verdicts = [r["verdict"] for r in result.record.rounds]
    assert verdicts[-1] == "correct" and set(verdicts[:-1]) <= {"wrong", "partial"}


def test_a_shell_script_gives_up(tmp_path, torch):
    result = run_session("TORCH.1", f"exec:sh {write(tmp_path, 'stop.sh', SH_STOPPER)}", store=torch, seed=0)
    assert result.end == "surrender" and result.rounds == 0


def test_a_python_program_on_a_shipped_scenario(tmp_path, shipped):
    log = str(tmp_path / "log")
    name = f"exec:{sys.executable} {write(tmp_path, 'searcher.py', SEARCHER)} {log} search"
    result = run_session(SHIPPED, name, store=shipped, seed=0, budget=40)
    assert result.end == "success"
    read, wrote = lines(log)
    assert_fits_schemas(read + wrote)
    assert read[0]["system"] == THREE_CUBES.stem and read[0]["modules"]


REPLY_ONCE = "import sys, time\nsys.stdin.readline()\n"

BROKEN = {
    "malformed": (REPLY_ONCE + "print('this is not JSON', flush=True)\nsys.stdin.readline()\n", {},
                  ProtocolFault.MALFORMED),
    "schema": (REPLY_ONCE + "print('{\"kind\": \"act\", \"action\": \"measure_voltage\"}', flush=True)\n"
               "sys.stdin.readline()\n", {}, ProtocolFault.SCHEMA),
    "version": (REPLY_ONCE + "print('{\"kind\": \"stop\", \"protocol\": 99}', flush=True)\nsys.stdin.readline()\n",
                {}, ProtocolFault.SCHEMA),
    "unknown-action": (REPLY_ONCE + "print('{\"kind\": \"act\", \"action\": \"teleport\", \"targets\": [\"bat\"]}', "
                       "flush=True)\nsys.stdin.readline()\n", {}, ProtocolFault.UNKNOWN_ACTION),
    "unknown-part": (REPLY_ONCE + "print('{\"kind\": \"hypothesis\", \"parts\": [\"flux_capacitor\"]}', flush=True)\n"
                     "sys.stdin.readline()\n", {}, ProtocolFault.UNKNOWN_PART),
    "oversized": (REPLY_ONCE + "print('{\"kind\": \"stop\", \"x\": \"' + 'x' * (2 << 20) + '\"}', flush=True)\n"
                  "sys.stdin.readline()\n", {}, ProtocolFault.OVERSIZED),
    # answers the briefing, then nothing within the reply limit
    "late": (REPLY_ONCE + "print('{\"kind\": \"act\", \"action\": \"measure_voltage\", \"targets\": [\"bat\"]}', "
             "flush=True)\nsys.stdin.readline()\ntime.sleep(60)\n", {"DIAGKG_EXEC_REPLY_SECONDS": "1"},
             ProtocolFault.LATE),
    # two replies to the briefing, written at once
    "out-of-turn": (REPLY_ONCE + "print('{\"kind\": \"act\", \"action\": \"measure_voltage\", \"targets\": [\"bat\"]}\\n"
                    "{\"kind\": \"stop\"}', flush=True)\nsys.stdin.readline()\n", {}, ProtocolFault.OUT_OF_TURN),
    "exits": (REPLY_ONCE + "print('boom', file=sys.stderr)\nsys.exit(3)\n", {}, ProtocolFault.EXITED),
    "memory": (REPLY_ONCE + "hog = bytearray(1 << 30)\nprint('{\"kind\": \"stop\"}', flush=True)\n",
               {"DIAGKG_EXEC_MEMORY_MB": "200"}, ProtocolFault.EXITED),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_an_unusable_reply_ends_the_session_with_a_typed_fault(case, tmp_path, torch, monkeypatch):
    source, env, fault = BROKEN[case]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    hosted = hosting.create(f"exec:{sys.executable} {write(tmp_path, 'broken.py', source)}")
    agent = hosted.agent
    assert isinstance(agent, ExecAssistant) and not hosted.in_process and not hosted.privileged
    result = run_session("TORCH.1", agent, store=torch, seed=0)
    assert result.end == "surrender"
    last = result.record.rounds[-1]
    assert last["kind"] == "none" and fault.value in last["message"]
    assert stored(torch, result.trajectory, DK.protocolFault) == [ox.NamedNode(contract.FAULT_IRIS[fault])]
    assert agent.fault is fault and agent.channel is not None and agent.channel.proc.poll() is not None   # gone
    if case == "exits":
        assert "exit status 3" in last["message"] and "boom" in last["message"]
    if case == "memory":
        assert "MemoryError" in last["message"]
    if case == "late":       # the second it waited for the reply is the round's decision time (it read 0)
        assert last["decision_seconds"] >= 1.0 and result.decision_times[-1] == last["decision_seconds"]


def test_commands_are_split_like_a_shell_and_checked(tmp_path):
    script = write(tmp_path, "my agent.py", "")
    assert command_of(f"{sys.executable} '{script}' --flag \"two words\"") == [sys.executable, script, "--flag",
                                                                              "two words"]
    with pytest.raises(InputError, match="no program 'no-such-program-here'"):
        command_of("no-such-program-here --help")
    with pytest.raises(InputError, match="cannot split"):
        command_of("python3 'unclosed")
    with pytest.raises(InputError, match="needs a command"):
        command_of("  ")
    with pytest.raises(InputError, match="DIAGKG_EXEC_REPLY_SECONDS"):
        Limits.from_env({"DIAGKG_EXEC_REPLY_SECONDS": "soon"})


def test_diagkg_run_with_an_exec_program(tmp_path):
    from ..support.cli import run_cli
    from ..support.torch import FLAT, TORCH, scenario_text

    files = [write(tmp_path, "torch.ttl", TORCH), write(tmp_path, "t1.ttl", scenario_text(**FLAT))]
    store = ["--store", str(tmp_path / "store")]
    with KnowledgeStore(tmp_path / "store") as held:        # loaded in this process: the command under test is run
        load_files(held, files)
    log = str(tmp_path / "log")
    program = f"exec:{sys.executable} {write(tmp_path, 'searcher.py', SEARCHER)} {log} search"
    r = run_cli(*store, "run", "--scenario", FLAT["id"], "--assistant", program, "--format", "json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["end"] == "success" and result["assistant"] == program and result["rounds"] == 2
    r = run_cli(*store, "run", "--scenario", FLAT["id"], "--assistant", "exec:no-such-program-here --now")
    assert r.returncode == 2 and "no program 'no-such-program-here'" in r.stderr
    # a program that fails: the trajectory is stored, the fault said, and the exit is not clean (it was 0, the
    # reason buried in the last round's text)
    source, _, fault = BROKEN["exits"]
    broken = f"exec:{sys.executable} {write(tmp_path, 'broken.py', source)}"
    r = run_cli(*store, "run", "--scenario", FLAT["id"], "--assistant", broken, "--format", "json")
    assert r.returncode == 1 and json.loads(r.stdout)["protocol_fault"] == fault.value, (r.stdout, r.stderr)
    assert f"the assistant was stopped ({fault.value})" in r.stderr


def test_a_trusted_program_is_sent_the_knowledge_view_and_never_the_answer(tmp_path, torch, monkeypatch):
    from diagkg.env.workspace import assistant_view
    from diagkg.runs.exec_host import view_of

    monkeypatch.setenv("DIAGKG_TRUSTED_ASSISTANTS", "exec:*")
    log = str(tmp_path / "log")
    name = f"exec:{sys.executable} {write(tmp_path, 'searcher.py', SEARCHER)} {log} search"
    assert run_session("TORCH.2", name, store=torch, seed=0, budget=2).end == "timeout"
    brief = lines(log)[0][0]
    knowledge = brief["knowledge"]
    assert knowledge["format"] == "application/n-triples"
    triples = {g: list(ox.parse(text.encode(), format=ox.RdfFormat.N_TRIPLES)) for g, text in knowledge["graphs"].items()}
    assert any(t.object == DK.System.node for ts in triples.values() for t in ts)          # the torch is there
    used = {t.predicate for ts in triples.values() for t in ts}
    assert not used & {DK.faultyComponent.node, DK.injects.node, DK.faultTarget.node, DK.idealRepair.node}
    assert not any(t.object == DK.Scenario.node and t.predicate.value.endswith("#type")
                   for ts in triples.values() for t in ts)                                   # no scenario at all
    # a hosted plug-in is given it back as a read-only view
    view = view_of(knowledge, brief["system"])
    assert view.select("sim-system", {"key": ox.Literal("torch")})
    assert view.graphs() == assistant_view(torch, brief["system_iri"], brief["system"]).graphs()   # all of it, by graph


def test_diagkg_evaluate_refuses_a_missing_program(tmp_path):
    from ..support.cli import run_cli

    r = run_cli("--store", str(tmp_path / "store"), "evaluate", "--assistant", "oracle,exec:no-such-program-here",
                "--scenarios", "1")
    assert r.returncode == 2 and "no program 'no-such-program-here'" in r.stderr


def test_a_campaigns_report_counts_the_sessions_ended_by_a_protocol_fault(tmp_path):
    # an outside assistant that dies ends its sessions as a surrender, like one that gave up: the report said
    # nothing else (an outside researcher's crashing plug-in read "surrender 6, crashed 0"); its own figure
    # (queries/figure-protocol-faults.rq) counts them by fault
    from diagkg.evaluation import campaign as cp
    from diagkg.evaluation import execution
    from diagkg.evaluation.campaign import CampaignConfig
    from diagkg.evaluation.regret import extra_tables

    store = torch_memory_store(tmp_path)
    dies = f"exec:{sys.executable} {write(tmp_path, 'dies.py', BROKEN['exits'][0])}"
    campaign = cp.create(store, CampaignConfig(assistants=(dies,), scenarios=(9101, 9102), runs=1, name="dies"))
    execution.run(store, campaign, workers=1)
    (table,) = [t for t in extra_tables(store, [campaign.id]) if t.name == "figure-protocol-faults"]
    rows = [dict(zip(table.columns, row, strict=True)) for row in table.rows]
    assert [(r["assistant"], r["fault"], r["end"], int(r["sessions"])) for r in rows] == [(dies, "exited", "surrender", 2)]
