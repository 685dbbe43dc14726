"""What the trust layer of ``llm-grounded`` buys, measured offline: ``llm`` and ``llm-grounded``
against a noisy expert of quality p (``benchmarks/noisy_expert.py``) on the shipped scenarios,
side by side, with a paired test.

    .venv/bin/python benchmarks/llm_grounded.py                      # p = 0.9 0.7 0.5, all 135 scenarios
    .venv/bin/python benchmarks/llm_grounded.py --p 0.7 --scenarios 1 26 51 --out runs.json
    .venv/bin/python benchmarks/llm_grounded.py --tables runs.json            # the tables again, nothing run
    .venv/bin/python benchmarks/llm_grounded.py --local              # the real local model, one scenario per system
    .venv/bin/python benchmarks/llm_grounded.py --local --scenarios 1 --budget 1    # one session each, on a busy machine

Systems: ``llm`` (the control), ``llm-grounded`` and ``llm-grounded+confirmed`` (with
``require_confirmed``: the expert then states its hypothesis with the reading a probe will show
and takes the probe before it repairs). Per p and system: sessions ending in success (with a
correct diagnosis, and restored without one), mean minutes, false removals (runs/scoring.py),
language-model calls, and each error kind the expert injected with the share that the assistant
caught before it reached the session (a call sent back: ``dk:choiceRejected``; a malformed reply:
the client's retry). The paired tests compare each grounded system with ``llm`` scenario by
scenario: McNemar's exact test on success, Wilcoxon's signed-rank test on minutes. Seeded and
deterministic; sessions of the systems are interleaved; the load average is printed beside each
timing; progress on stderr.

``--local`` runs ``llm`` and ``llm-grounded`` once per shipped system (the first scenario of
each, or those ``--scenarios`` names) against a real endpoint (``diagkg llm serve-local``, the
local-llm extra) and prints the share of the model's answers that were not sent back.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _load import load_average  # noqa: E402
from diagkg.kg.loading import load_shipped  # noqa: E402
from diagkg.kg.store import KnowledgeStore  # noqa: E402
from diagkg.runs.runner import run_session  # noqa: E402
from noisy_expert import ERRORS, Expert, NoisyExpertServer  # noqa: E402

SYSTEMS = {"llm": ("llm", {}), "llm-grounded": ("llm-grounded", {}),
           "llm-grounded+confirmed": ("llm-grounded", {"require_confirmed": True})}


def one(store: KnowledgeStore, server: NoisyExpertServer, system: str, number: int, p: float, seed: int) -> dict[str, Any]:
    name, extra = SYSTEMS[system]
    expert = Expert(p, seed, grounded=name == "llm-grounded", require_confirmed=bool(extra.get("require_confirmed")))
    server.expert = expert
    cfg = {"base_url": server.base_url, "model": "noisy-expert", "timeout": 60, "retries": 2, "backoff": 0.0, **extra}
    t0 = time.perf_counter()
    r = run_session(number, name, seed=seed, config=cfg, store=store, record=False, keep_ledger=False,
                    on_start=expert.start, on_round=expert.observe)
    records = r.llm.records if r.llm else []
    caught = Counter()
    injected = Counter()
    for position, kind in expert.injected:
        injected[kind] += 1
        rec = records[position - 1] if position <= len(records) else None
        if rec is not None and (rec.rejected or rec.cause is not None):
            caught[kind] += 1
    return {"system": system, "scenario": number, "p": p, "seed": seed, "end": r.end, "cost": r.cost, "rounds": r.rounds,
            "false_removals": r.diagnosis.false_removals if r.diagnosis else 0, "calls": len(records),
            "injected": dict(injected), "caught": dict(caught),
            "codes": dict(Counter(rec.rejected for rec in records if rec.rejected)),
            "seconds": round(time.perf_counter() - t0, 3)}


def paired(runs: list[dict[str, Any]], a: str, b: str) -> str:
    from scipy.stats import binomtest, wilcoxon

    by = {(x["system"], x["scenario"]): x for x in runs}
    numbers = sorted({x["scenario"] for x in runs if x["system"] == a} & {x["scenario"] for x in runs if x["system"] == b})
    ok = lambda x: x["end"].startswith("success")       # noqa: E731
    only_b = sum(1 for n in numbers if ok(by[(b, n)]) and not ok(by[(a, n)]))
    only_a = sum(1 for n in numbers if ok(by[(a, n)]) and not ok(by[(b, n)]))
    mcnemar = binomtest(only_b, only_b + only_a).pvalue if only_a + only_b else 1.0
    diffs = [by[(b, n)]["cost"] - by[(a, n)]["cost"] for n in numbers]
    w = wilcoxon(diffs).pvalue if any(diffs) else 1.0
    removals = [by[(b, n)]["false_removals"] - by[(a, n)]["false_removals"] for n in numbers]
    wr = wilcoxon(removals).pvalue if any(removals) else 1.0
    return (f"{b} vs {a}: success {only_b} scenarios only with {b}, {only_a} only with {a} (McNemar exact p={mcnemar:.3g}); "
            f"minutes median difference {statistics.median(diffs):+.0f}, mean {statistics.mean(diffs):+.1f} "
            f"(Wilcoxon p={w:.3g}); false removals {sum(removals):+d} (Wilcoxon p={wr:.3g}); n={len(numbers)}")


def table(runs: list[dict[str, Any]], p: float, systems: list[str]) -> list[str]:
    lines = [f"### p = {p}", "",
             "| system | success | with diagnosis | mean minutes | false removals | calls/session | "
             + " | ".join(e.replace("_", " ") for e in ERRORS) + " |",
             "| --- " * (6 + len(ERRORS)) + "|"]
    for system in systems:
        mine = [x for x in runs if x["system"] == system and x["p"] == p]
        if not mine:
            continue
        injected = Counter()
        caught = Counter()
        for x in mine:
            injected.update(x["injected"])
            caught.update(x["caught"])
        cells = [f"{caught[e]}/{injected[e]}" for e in ERRORS]
        lines.append(f"| {system} | {sum(x['end'].startswith('success') for x in mine)}/{len(mine)} | "
                     f"{sum(x['end'] == 'success' for x in mine)} | {statistics.mean(x['cost'] for x in mine):.0f} | "
                     f"{sum(x['false_removals'] for x in mine)} | {statistics.mean(x['calls'] for x in mine):.1f} | "
                     + " | ".join(cells) + " |")
    return lines


def benchmark(args: argparse.Namespace) -> None:
    if args.tables:            # the tables of runs written before (--out)
        runs = json.loads(Path(args.tables).read_text())
        report(runs, args.p, args.systems, args.seed, len({x["scenario"] for x in runs}))
        return
    store = KnowledgeStore.memory()
    load_shipped(store)
    numbers = sorted(int(r["number"]) for r in store.select("scenario-index"))
    if args.scenarios:
        numbers = [n for n in numbers if n in set(args.scenarios)]
    runs = []
    with NoisyExpertServer() as server:
        for p in args.p:
            t0 = time.perf_counter()
            for i, n in enumerate(numbers, 1):
                for system in args.systems:            # interleaved, scenario by scenario
                    runs.append(one(store, server, system, n, p, args.seed))
                if i % 15 == 0:
                    print(f"  p={p}: {i}/{len(numbers)} scenarios ({time.perf_counter() - t0:.0f} s, {load_average()})",
                          file=sys.stderr)
            seconds = defaultdict(list)
            for x in runs:
                if x["p"] == p:
                    seconds[x["system"]].append(x["seconds"])
            print(f"p={p}: " + ", ".join(f"{s} {statistics.mean(v):.2f} s/session" for s, v in seconds.items())
                  + f" ({load_average()})", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(runs, indent=1))
    report(runs, args.p, args.systems, args.seed, len(numbers))


def report(runs: list[dict[str, Any]], ps: list[float], systems: list[str], seed: int, scenarios: int) -> None:
    print(f"# llm vs llm-grounded against a noisy expert (seed {seed}, {scenarios} scenarios)\n")
    print("Errors: caught/injected by kind (caught: sent back before it reached the session).\n")
    for p in ps:
        print("\n".join(table(runs, p, systems)))
        mine = [x for x in runs if x["p"] == p]
        for system in systems[1:]:
            print("\n" + paired(mine, systems[0], system))
        print()


def local(args: argparse.Namespace) -> None:
    """The real model on one scenario per shipped system, with and without the layer."""
    store = KnowledgeStore.memory()
    load_shipped(store)
    first: dict[str, Any] = {}
    for row in store.select("scenario-index"):
        if not args.scenarios or int(row["number"]) in args.scenarios:
            first.setdefault(row["key"], row)
    cfg = {"base_url": args.base_url, "model": args.model, "structured": args.structured, "timeout": args.timeout,
           "max_tokens": args.max_tokens, "retries": 1, "backoff": 0.1}
    print("| system | assistant | end | calls | valid choices |\n| --- | --- | --- | --- | --- |")
    for key, row in sorted(first.items()):
        for system in args.systems or ["llm", "llm-grounded"]:
            name, extra = SYSTEMS[system]
            t0 = time.perf_counter()
            r = run_session(row["number"], name, config={**cfg, **extra}, store=store, budget=args.budget, record=False,
                            keep_ledger=False)
            records = r.llm.records if r.llm else []
            answered = [c for c in records if c.cause is None and c.response is not None]
            valid = [c for c in answered if not c.rejected]
            end = r.end + (f" ({r.llm_cause.value})" if r.llm_cause else "")
            print(f"| {key} | {system} | {end} | {len(records)} | {len(valid)}/{len(answered)} |"
                  f"  ({time.perf_counter() - t0:.0f} s, {load_average()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=float, nargs="+", default=[0.9, 0.7, 0.5])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenarios", type=int, nargs="*", help="scenario numbers (default: all)")
    parser.add_argument("--systems", nargs="+", choices=list(SYSTEMS),
                        help="default: all three (the noisy expert), llm and llm-grounded (--local)")
    parser.add_argument("--out", help="write every run as JSON")
    parser.add_argument("--tables", metavar="FILE", help="print the tables of the runs --out wrote, running nothing")
    parser.add_argument("--local", action="store_true", help="the real local model instead of the noisy expert")
    parser.add_argument("--base-url", default="http://127.0.0.1:8011/v1")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--structured", default="json_object")
    parser.add_argument("--budget", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    if args.local:
        local(args)
    else:
        args.systems = args.systems or list(SYSTEMS)
        benchmark(args)


if __name__ == "__main__":
    main()
