"""Does a lite set rank assistants as the full set does? The study behind ``diagkg split``.

    .venv/bin/python benchmarks/splits.py [--systems KEY,…] [--doubles N] [--per-system 20] [--split-seed 0]
        [--seeds 0,1,2] [--assistants oracle,model-based,neuro-symbolic,random-search,fixed-random]
        [--results FILE.json] [--join PART.json…] [--max-scenarios N] [--boots 2000] [--robustness N]

For each system: every single fault the catalogue allows that a person notices, plus ``--doubles``
double faults drawn by prior (``diagkg generate``), loaded into an in-memory store with the shipped
catalogue: the *full* set. ``diagkg split``'s stratified lite set (``--per-system`` per system) is
drawn from it. Every assistant runs every scenario of the full set with each seed (the lite set's
sessions are among them). Per seed and on the mean over the seeds, the assistants are ranked by
success rate and by mean cost (minutes) on the full set and on the lite set; printed: each
assistant's figures, Kendall's tau-b between the two rankings, and whether the lite set ranks them
*exactly as the full set does, ties allowed* (no pair of assistants ordered one way on one set and
the other way on the other). Because two assistants a few minutes apart on the full set are not
told apart by it either, a second verdict takes as ties the pairs the full set does not order
significantly (95 % paired bootstrap over its scenarios, ``--boots`` resamples): the lite set
agrees when no pair the full set orders significantly is ordered the other way on it. With
``--robustness N`` the same is worked out from the kept sessions for the lite sets of split seeds
0 … N-1 (no session is run for them): how often a lite set drawn this way agrees. Sessions are kept
in ``--results`` (JSON) as they finish, so a run
that is stopped continues where it was; parts run side by side (one process per seed, each with a
results file of its own) are joined with ``--join``. The study's sessions are kept in
``docs/results/splits-2026-12.json``. The load average is printed beside each figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from pathlib import Path
from statistics import mean

from scipy.stats import kendalltau

from _load import load_average
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.evaluation.metrics import bootstrap_mean
from diagkg.generation.generate import GenerationConfig, generate
from diagkg.generation.splits import split
from diagkg.kg.loading import load_files, load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

ASSISTANTS = "oracle,model-based,neuro-symbolic,random-search,fixed-random"
SOLVED = ("success", "success_no_hypothesis")


def catalogue(store: KnowledgeStore, keys: list[str], doubles: int, folder: Path) -> list[int]:
    """Generate and load the full set, system after system; returns its scenario numbers."""
    for key in keys:
        t0 = time.perf_counter()
        single = generate(store, GenerationConfig(key))
        single.write(folder / key / "single")
        made = len(single.written)
        if doubles:
            double = generate(store, GenerationConfig(key, faults=2, limit=doubles, seed=0))
            double.write(folder / key / "double")
            made += len(double.written)
        load_files(store, [folder / key])          # before the next system: its numbers start past these
        print(f"generated {key}: {made} scenarios in {time.perf_counter() - t0:.0f} s ({load_average()})", flush=True)
    catalog = ScenarioCatalog(store)
    return [n for n in catalog.numbers() if catalog.resolve(n).id.startswith("GEN-") and catalog.resolve(n).key in keys]


def keep(path: Path, done: dict[str, dict[str, float | str]]) -> None:
    """Write the sessions kept so far (whole or not at all: a stop while writing leaves the last file)."""
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(done))
    part.replace(path)


def ranking_agrees(full: dict[str, float], lite: dict[str, float]) -> bool:
    """No pair ordered one way on one set and the other way on the other (ties allowed)."""
    def sign(x: float) -> int:
        return (x > 1e-9) - (x < -1e-9)
    return all(sign(full[a] - full[b]) * sign(lite[a] - lite[b]) >= 0 for a, b in itertools.combinations(full, 2))


def significant(values: dict[str, list[float]], boots: int) -> set[tuple[str, str]]:
    """The pairs (a, b) whose mean over the scenarios is significantly above b's: the lower end of the
    percentile-bootstrap 95 % interval of the mean paired difference (``metrics.bootstrap_mean``, the
    report's own) is above zero (``values``: each assistant's figure per scenario, in one order)."""
    out = set()
    for a, b in itertools.permutations(values, 2):
        diff = [x - y for x, y in zip(values[a], values[b], strict=True)]
        if bootstrap_mean(diff, resamples=boots)[0] > 0:
            out.add((a, b))
    return out


def agrees_beyond_ties(ordered: set[tuple[str, str]], lite: dict[str, float]) -> bool:
    """No pair the full set orders significantly (a above b) is ordered the other way on the lite set."""
    return all(lite[a] >= lite[b] for a, b in ordered)


def tau(full: dict[str, float], lite: dict[str, float]) -> float:
    names = sorted(full)
    value = kendalltau([full[n] for n in names], [lite[n] for n in names]).statistic
    return float(value) if value == value else 1.0       # NaN when a side is all ties


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", default="three_cubes,current_sensor")
    parser.add_argument("--doubles", type=int, default=40, help="double faults per system (default 40)")
    parser.add_argument("--per-system", type=int, default=20)
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--assistants", default=ASSISTANTS)
    parser.add_argument("--results", type=Path, default=Path("splits-results.json"))
    parser.add_argument("--max-scenarios", type=int, default=None, help="only the first N of the full set (a try-out)")
    parser.add_argument("--join", nargs="*", type=Path, default=[], metavar="FILE",
                        help="first add the sessions kept in these files (parts run side by side, one per seed)")
    parser.add_argument("--boots", type=int, default=2000, help="bootstrap resamples for significance (default 2000)")
    parser.add_argument("--robustness", type=int, default=0, metavar="N",
                        help="also the lite sets of split seeds 0 … N-1, from the kept sessions")
    args = parser.parse_args()
    keys = args.systems.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    assistants = args.assistants.split(",")
    store = KnowledgeStore.memory()
    load_shipped(store)
    numbers = catalogue(store, keys, args.doubles, Path(tempfile.mkdtemp(prefix="diagkg-splits-")))
    catalog = ScenarioCatalog(store)
    scenarios = [catalog.resolve(n) for n in numbers][: args.max_scenarios]
    lite = split(scenarios, "study", per_system=args.per_system, seed=args.split_seed)
    print(f"full set: {len(scenarios)} scenarios on {', '.join(keys)}; lite set: {len(lite.lite)} ({load_average()})")
    for (system, faults, chance), (n, m) in sorted(lite.strata.items()):
        print(f"  stratum {system}, {faults} fault(s){', chance' if chance else ''}: {m} of {n}")
    done: dict[str, dict[str, float | str]] = json.loads(args.results.read_text()) if args.results.exists() else {}
    for part in args.join:
        done.update(json.loads(part.read_text()))
    # identifiers (not numbers) name the sessions: the same seed generates the same scenarios
    total = len(assistants) * len(seeds) * len(scenarios)
    t0, ran = time.perf_counter(), 0
    for assistant in assistants:
        spent = time.perf_counter()
        for seed in seeds:
            for s in scenarios:
                ident = f"{assistant}|{s.id}|{seed}"
                if ident in done:
                    continue
                r = run_session(s, assistant, seed=seed, store=store, record=False, keep_ledger=False)
                done[ident] = {"end": r.end, "cost": r.cost}
                ran += 1
                keep(args.results, done)        # after each session: a stop loses none
                if ran % 25 == 0:
                    print(f"  {len(done)}/{total} sessions, {time.perf_counter() - t0:.0f} s ({load_average()})", flush=True)
        keep(args.results, done)
        print(f"{assistant}: {time.perf_counter() - spent:.0f} s for its sessions ({load_average()})", flush=True)

    def per_scenario(members: list[str], seed_list: list[int]) -> dict[str, dict[str, list[float]]]:
        """Each metric's figure of each assistant per scenario (the mean over ``seed_list``)."""
        out: dict[str, dict[str, list[float]]] = {"success": {}, "cost": {}}
        for a in assistants:
            rows = [[done[f"{a}|{sid}|{seed}"] for seed in seed_list] for sid in members]
            out["success"][a] = [mean(1.0 if r["end"] in SOLVED else 0.0 for r in row) for row in rows]
            out["cost"][a] = [mean(float(r["cost"]) for r in row) for row in rows]
        return out

    def means(got: dict[str, dict[str, list[float]]]) -> tuple[dict[str, float], dict[str, float]]:
        return ({a: mean(v) for a, v in got["success"].items()}, {a: mean(v) for a, v in got["cost"].items()})

    def figures(members: set[str], seed_list: list[int]) -> tuple[dict[str, float], dict[str, float]]:
        return means(per_scenario(sorted(members), seed_list))

    full_ids = {s.id for s in scenarios}
    lite_ids = {s.id for s in scenarios if s.number in set(lite.lite)}
    seed_lists = [[s] for s in seeds] + [seeds]
    # the full set's figures per seed list, worked out once: its per-scenario values, their means, and the
    # pairs they order significantly
    full_values = {",".join(map(str, sl)): per_scenario(sorted(full_ids), sl) for sl in seed_lists}
    full_figures = {label: means(got) for label, got in full_values.items()}
    ordered = {(label, metric): significant(values, args.boots)
               for label, got in full_values.items() for metric, values in got.items()}
    print(f"\n| seeds | metric | {' | '.join(assistants)} | Kendall tau-b | same ranking (ties allowed) | "
          "same ranking (ties: not significant on the full set) |")
    print("| --- | --- | " + " | ".join("---" for _ in assistants) + " | --- | --- | --- |")
    for seed_list in seed_lists:
        label = ",".join(map(str, seed_list))
        fs, fc = full_figures[label]
        ls, lc = figures(lite_ids, seed_list)
        for metric, full, small in (("success", fs, ls), ("cost", fc, lc)):
            cells = " | ".join(f"{full[a]:.3f} / {small[a]:.3f}" if metric == "success" else f"{full[a]:.0f} / {small[a]:.0f}"
                               for a in assistants)
            beyond = agrees_beyond_ties(ordered[label, metric], small)
            print(f"| {label} | {metric} (full / lite) | {cells} | {tau(full, small):.2f} | "
                  f"{'yes' if ranking_agrees(full, small) else 'NO'} | {'yes' if beyond else 'NO'} "
                  f"({len(ordered[label, metric])} pairs ordered) |")
    if args.robustness:
        strict = beyond_ties = 0
        for split_seed in range(args.robustness):
            drawn = split(scenarios, "study", per_system=args.per_system, seed=split_seed)
            ids = {s.id for s in scenarios if s.number in set(drawn.lite)}
            verdicts = []
            for seed_list in seed_lists:
                label = ",".join(map(str, seed_list))
                full, small = full_figures[label], figures(ids, seed_list)
                verdicts.append((all(ranking_agrees(f, m) for f, m in zip(full, small, strict=True)),
                                 all(agrees_beyond_ties(ordered[label, metric], m)
                                     for metric, m in zip(("success", "cost"), small, strict=True))))
            strict += all(v[0] for v in verdicts)
            beyond_ties += all(v[1] for v in verdicts)
        print(f"\nlite sets of split seeds 0-{args.robustness - 1} that rank as the full set does, on both metrics, "
              f"each seed and their mean: {strict} of {args.robustness} (ties allowed), {beyond_ties} of "
              f"{args.robustness} (ties: not significant on the full set)")
    print(f"\n({load_average()}; {ran} sessions run now, {len(done)} kept in {args.results})")


if __name__ == "__main__":
    main()
