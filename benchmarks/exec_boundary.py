"""What a process boundary costs: the same assistant in diagkg's process, as an ``exec:`` program
(Python; Node.js when installed) and as a plug-in hosted by ``python -m diagkg.runs.exec_host``.

    .venv/bin/python benchmarks/exec_boundary.py [--repeats 5] [--scenario 1] [--rounds 20]

Every variant makes the same moves (a voltage measurement of the first part by name, every round,
until the budget ends), so the sessions differ only in where the decisions are made. The variants
run interleaved, ``--repeats`` times each, with budgets of 1 and ``--rounds`` rounds, on one
scenario of the shipped catalogue (loaded into memory first); from the medians the table derives the
time per round and the start (a session of one round less that round), with the load average
beside each figure. Last, what the session contract adds to an in-process round (a typed
outcome turned into JSON, ``diagkg.env.contract.outcome_json``) against the round itself.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _load import load_average
from diagkg.agents import registry
from diagkg.agents.registry import BaseAssistant, Briefing
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.contract import outcome_json, play
from diagkg.env.service import make
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

MODULE = textwrap.dedent('''
    from diagkg.agents.registry import BaseAssistant
    from diagkg.env.actions import Action


    class Measurer(BaseAssistant):
        name = "measurer"

        def setup(self, briefing):
            super().setup(briefing)
            self.first = sorted(p for p, k in briefing.parts.items() if k not in ("enclosure", "opening"))[0]

        def suggest(self):
            return Action("measure_voltage", (self.first,))
''')

PROGRAM = textwrap.dedent('''
    import json, sys
    brief = json.loads(sys.stdin.readline())
    first = sorted(p for p, k in brief["parts"].items() if k not in ("enclosure", "opening"))[0]
    while True:
        reply = {"kind": "act", "action": "measure_voltage", "targets": [first]}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
        if json.loads(sys.stdin.readline())["kind"] == "end":
            break
''')

NODE = textwrap.dedent('''
    const lines = require("readline").createInterface({ input: process.stdin });
    let first = null;
    lines.on("line", (line) => {
      const m = JSON.parse(line);
      if (m.kind === "end") { lines.close(); return; }
      if (m.kind === "briefing") {
        first = Object.keys(m.parts).filter((p) => !["enclosure", "opening"].includes(m.parts[p])).sort()[0];
      }
      const reply = { kind: "act", action: "measure_voltage", targets: [first] };
      process.stdout.write(JSON.stringify(reply) + "\\n");
    });
''')


class Measurer(BaseAssistant):
    """In process: the same moves as the programs (one measurement a round, until the budget ends)."""

    name = "measurer"

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.first = sorted(p for p, k in briefing.parts.items() if k not in ("enclosure", "opening"))[0]

    def suggest(self) -> Action | Hypothesis | None:
        return Action("measure_voltage", (self.first,))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scenario", default="1", help="a scenario of the shipped catalogue (number or id)")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of the longer session")
    args = parser.parse_args()
    scenario: int | str = int(args.scenario) if args.scenario.isdigit() else args.scenario
    folder = Path(tempfile.mkdtemp(prefix="diagkg-exec-bench-"))
    (folder / "bench_measurer.py").write_text(MODULE)
    (folder / "program.py").write_text(PROGRAM)
    (folder / "program.js").write_text(NODE)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH", "")]))
    store = KnowledgeStore.memory()
    load_shipped(store)
    registry.register("measurer", Measurer)
    variants = {"in process": "measurer",
                "exec: python": f"exec:{sys.executable} {folder / 'program.py'}",
                "hosted plug-in": f"exec:{sys.executable} -m diagkg.runs.exec_host bench_measurer:Measurer"}
    if shutil.which("node"):
        variants["exec: node"] = f"exec:node {folder / 'program.js'}"
    run_session(scenario, "measurer", store=store, budget=args.rounds, record=False)     # warm caches
    times: dict[tuple[str, int], list[float]] = {}
    loads: dict[str, str] = {}
    for _ in range(args.repeats):
        for label, name in variants.items():         # interleaved: each repeat runs every variant at both budgets
            for budget in (1, args.rounds):
                t0 = time.perf_counter()
                result = run_session(scenario, name, store=store, budget=budget, record=False)
                times.setdefault((label, budget), []).append(time.perf_counter() - t0)
                assert result.rounds == budget, (label, result.end, result.record.rounds[-1] if result.record else None)
            loads[label] = load_average()
    print(f"scenario {args.scenario}: sessions of 1 and {args.rounds} rounds, {args.repeats} repeats, medians")
    print(f"{'variant':16} {'1 round ms':>10} {f'{args.rounds} rounds ms':>14} {'ms/round':>9} {'start ms':>9}")
    per_round: dict[str, float] = {}
    for label in variants:
        one, many = (statistics.median(times[(label, b)]) for b in (1, args.rounds))
        per_round[label] = (many - one) / (args.rounds - 1)
        print(f"{label:16} {one * 1000:10.1f} {many * 1000:14.1f} {per_round[label] * 1000:9.2f} "
              f"{(one - per_round[label]) * 1000:9.1f}   {loads[label]}")
    # the contract's own share of an in-process round: the typed outcome as JSON, against the step itself
    session = make(scenario, store, budget=args.rounds)
    session.reset(seed=0)
    typed, steps = [], []
    first = sorted(session.sk.components)[0]
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        turn = play(session, Action("measure_voltage", (first,)))
        steps.append(time.perf_counter() - t0)
        typed.append(turn.outcome)
        if turn.over:
            break
    t0 = time.perf_counter()
    for _ in range(1000):
        for o in typed:
            o.to_dict()            # what the runner did before the contract
    before = (time.perf_counter() - t0) / (1000 * len(typed))
    t0 = time.perf_counter()
    for _ in range(1000):
        for o in typed:
            outcome_json(o)
    per = (time.perf_counter() - t0) / (1000 * len(typed))
    print(f"Outcome.to_dict (before): {before * 1e6:.1f} µs per round   {load_average()}")
    print(f"outcome_json: {per * 1e6:.1f} µs per round, against a median step of {statistics.median(steps) * 1000:.2f} ms "
          f"({len(typed)} rounds; the exec: python round costs {(per_round['exec: python'] - per_round['in process']) * 1000:.2f} "
          f"ms more than in process)   {load_average()}")


if __name__ == "__main__":
    main()
