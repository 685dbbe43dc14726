"""``diagkg generate``, ``diagkg diagnosability`` and ``diagkg split``: scenarios from the
fault catalogue, what a system's tests tell apart, and benchmark splits
(see :mod:`diagkg.generation`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import errors
from ..kg import graphs
from .output import EXIT_OK, is_file_ref, open_store, progress_bar, say
from .output import seed as seed_arg

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

Add = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]
SIZES = {"single": 1, "double": 2, "triple": 3}


def add_parsers(add: Add) -> None:
    p = add("generate", cmd_generate, "Generate scenarios from the fault catalogue on a system: every placement of "
            "a fault the catalogue allows (or of two or three, drawn by prior), simulated; those a person notices "
            "are written as scenario files that validate and pass `diagkg check`.")
    p.add_argument("system", metavar="SYSTEM", help="a system key of the store (a shipped one is loaded when the "
                   "store lacks it), or a system file, validated and loaded into a scratch copy of the store")
    p.add_argument("--faults", choices=tuple(SIZES), default="single", help="faults per scenario (default single)")
    p.add_argument("--modes", metavar="MODE,…", help="only these fault modes, by local name (the catalogue: "
                   "`diagkg query fault-modes`)")
    p.add_argument("--limit", type=int, metavar="N", help="try at most N placements (drawn by prior weight; "
                   "default: every single fault, 200 placements of several)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the draws (default 0): the same seed writes the "
                   "same files")
    p.add_argument("--seeds", type=int, default=8, help="simulations of a fault that shows at random (default 8, "
                   "as `diagkg check`)")
    p.add_argument("--out", metavar="DIR", help="folder to write the scenario files into (default generated/SYSTEM)")
    p.add_argument("--first", type=int, metavar="N", help="number the scenarios from N on (numbers in use are "
                   "skipped; default: past every number the store and the shipped catalogue use, at the next hundred, "
                   "10000 further for each fault beyond the first)")
    p.add_argument("--no-check", action="store_true", help="do not run `diagkg check`'s checks on what is written")
    p.add_argument("--words", choices=("template", "llm"), default="template",
                   help="where the description and initial observations come from: templates (default), or a "
                        "language model (DIAGKG_LLM_* or --config), its words kept only when they agree with the "
                        "stated symptoms")
    p.add_argument("--config", metavar="JSON", help="with --words llm: the model's settings as a JSON object "
                   '(e.g. {"base_url": …, "model": …})')
    p.add_argument("--format", choices=("text", "json"), default="text")
    add_diagnosability(add)
    add_split(add)


def system_store(store: KnowledgeStore, ref: str) -> tuple[KnowledgeStore, str]:
    """The store a system is read from and its key: ``store`` itself when it holds the system,
    else a scratch copy of its knowledge holding the system file (or the shipped system)."""
    from ..env.checks import scratch_with
    from ..kg import systems
    from ..kg.loading import load_files, load_shipped

    if is_file_ref(ref):
        scratch = scratch_with(store)
        with progress_bar(sys.stderr.isatty()) as progress:
            report = load_files(scratch, [ref], replace=True, progress=progress)   # a scratch copy: a system held is replaced there
        wanted = {item.graph for item in report.loaded}
        keys = [r["value"] for r in scratch.select("graph-claims") if r["graph"] in wanted and r["kind"] == "system key"]
        if len(keys) != 1:
            raise errors.InputError(f"{ref}: holds {len(keys)} systems; give a file describing one system")
        return scratch, keys[0]
    if store.raw.contains_named_graph(graphs.system(ref)):
        return store, ref
    try:
        systems.shipped_system_file(ref)
    except errors.UnknownTermError as exc:
        held = sorted(r["key"] for r in store.select("system-summary"))
        raise errors.UnknownTermError(f"no system {ref!r} in the store (it holds: {', '.join(held) or 'none'}) "
                                      f"nor among the shipped ones ({exc})") from None
    say(f"the store does not hold {ref}: reading the shipped systems into a scratch copy")
    scratch = scratch_with(store)
    load_shipped(scratch)
    return scratch, ref


def cmd_generate(args: argparse.Namespace) -> int:
    from ..generation.generate import GenerationConfig, generate

    if args.limit is not None and args.limit < 1:
        raise errors.InputError(f"--limit must be at least 1, not {args.limit}")
    if args.seeds < 1:
        raise errors.InputError(f"--seeds must be at least 1, not {args.seeds}")
    if args.first is not None and args.first < 1:
        raise errors.InputError(f"--first must be at least 1, not {args.first}")
    modes = frozenset(m.strip() for m in args.modes.split(",") if m.strip()) if args.modes else None
    wording = _wording(args)
    with open_store(args, write=False) as store:
        source, key = system_store(store, args.system)
        config = GenerationConfig(key, SIZES[args.faults], modes, args.limit, args.seed, args.seeds, not args.no_check,
                                  args.first)
        with progress_bar(sys.stderr.isatty()) as progress:
            gen = generate(source, config, progress, wording)
    out = Path(args.out) if args.out else Path("generated") / key
    paths = gen.write(out)
    left = Counter(item.reason.value for item in gen.left)
    if args.format == "json":
        print(json.dumps({
            "system": key, "faults": config.faults, "seed": config.seed, "tried": gen.tried, "folder": str(out),
            "written": [_written(w, p) for w, p in zip(gen.written, paths, strict=True)],
            "left": [{"placement": item.placement, "reason": item.reason.value, "detail": item.detail}
                     for item in gen.left],
            "unplaced": [{"mode": u.mode, "reason": u.reason} for u in gen.unplaced],
            "words": _words(gen)}, indent=2))
    else:
        for w, path in zip(gen.written, paths, strict=True):
            print(f"{path}: {w.look.placement.key}")
        for u in gen.unplaced:
            say(f"fault mode {u.mode} is not placed: {u.reason}")
        for placement, said in sorted(gen.words.items()):
            if said.problem:
                say(f"{placement}: the template's words are kept: {said.problem}")
    print(f"{key}: {gen.tried} placement(s) tried, {len(gen.written)} scenario(s) written to {out}"
          + (" (left out: " + ", ".join(f"{n} {r}" for r, n in sorted(left.items())) + ")" if left else ""),
          file=sys.stderr)
    return EXIT_OK


def _wording(args: argparse.Namespace) -> Any:
    from ..generation.wording import Wording
    from ..llm.settings import LLMSettings
    from .output import json_config

    if args.words != "llm":
        if args.config:
            raise errors.InputError("--config is for --words llm")
        return Wording()
    return Wording(LLMSettings.from_config(json_config(args.config)))


def _written(w: Any, path: Path) -> dict[str, Any]:
    return {"number": w.number, "id": w.id, "file": str(path), "faults": w.look.placement.key,
            "faulty": sorted(w.look.faulty), "categories": [c.rsplit("#", 1)[-1] for c in w.categories],
            "budget": w.budget, "repair": [[s.action, *s.targets] for s in w.repair.steps],
            "repair_minutes": w.repair.minutes, "masked": list(w.masked)}


def _words(gen: Any) -> dict[str, Any]:
    return {key: {"by_model": said.by_model, "problem": said.problem} for key, said in sorted(gen.words.items())}


def add_diagnosability(add: Add) -> None:
    from ..generation import STEP_BUDGET  # the package alone: --help imports nothing heavy

    p = add("diagnosability", cmd_diagnosability, "What a system's tests can tell apart among its single faults: "
            "ambiguity groups, the cheapest actions that separate two faults, fault resolution, and the faults "
            "nobody notices (Markdown on standard output; kept as RDF in the store).")
    p.add_argument("system", metavar="SYSTEM", help="a system key of the store (a shipped one is read from the "
                   "package when the store lacks it), or a system file, validated and loaded into a scratch copy")
    p.add_argument("--depth", type=int, default=3, metavar="N",
                   help="the longest sequence of actions tried to tell two faults apart (default 3)")
    p.add_argument("--steps", type=int, default=STEP_BUDGET, metavar="N",
                   help=f"simulated steps spent on sequences of two or more actions (default {STEP_BUDGET})")
    p.add_argument("--modes", metavar="MODE,…", help="only these fault modes, by local name")
    p.add_argument("--out", metavar="DIR", help="write diagnosability-SYSTEM.md and .html into DIR instead of "
                   "printing the Markdown")


def cmd_diagnosability(args: argparse.Namespace) -> int:
    from ..generation import report as reports
    from ..generation.diagnosability import diagnose

    if args.depth < 1:
        raise errors.InputError(f"--depth must be at least 1, not {args.depth}")
    if args.steps < 0:
        raise errors.InputError(f"--steps must be at least 0, not {args.steps}")
    modes = frozenset(m.strip() for m in args.modes.split(",") if m.strip()) if args.modes else None
    with open_store(args, write=True) as store:
        source, key = system_store(store, args.system)
        with progress_bar(sys.stderr.isatty()) as progress:
            report = diagnose(source, key, args.depth, modes, args.steps, progress)
        from ..env.actions import action_catalogue
        from ..env.service import simulator_for

        catalogue = {aid: spec.iri for aid, spec in action_catalogue(source).items()}
        graph = reports.store(store, report, simulator_for(source, key).skeleton.iri, catalogue,
                              source.graph_as_rdflib(graphs.system(key)))
    text = reports.markdown(report)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"diagnosability-{key}.md").write_text(text, encoding="utf-8")
        (out / f"diagnosability-{key}.html").write_text(reports.html(report), encoding="utf-8")
        say(f"wrote {out / f'diagnosability-{key}.md'} and .html")
    else:
        sys.stdout.write(text)
    one, two, three = report.resolution()
    print(f"{key}: {len(report.faults)} noticed single faults, {sum(1 for g in report.groups if len(g.members) > 1)} "
          f"ambiguity group(s), isolated to 1/2/3 parts: {one:.0%}/{two:.0%}/{three:.0%}; kept in {graph.value}",
          file=sys.stderr)
    return EXIT_OK


def add_split(add: Add) -> None:
    p = add("split", cmd_split, "Pick a stratified lite set of scenarios (about N per system) and the held-out "
            "rest, and keep both in the store as named sets that `evaluate --scenarios set:NAME-lite` runs.")
    p.add_argument("--scenarios", nargs="+", default=["all"], metavar="SEL",
                   help="the scenarios to split, as evaluate takes them (default all): all | 1,2,5-9 | system:KEY | "
                        "category:NAME | set:NAME | scenario ids")
    p.add_argument("--name", required=True, help="the split's name: the sets are NAME-lite and NAME-held-out")
    p.add_argument("--per-system", type=int, default=20, metavar="N", help="lite scenarios per system (default 20)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the picks within each stratum (default 0)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def cmd_split(args: argparse.Namespace) -> int:
    from ..env.scenarios import ScenarioCatalog
    from ..evaluation.campaign import select_scenarios
    from ..generation.splits import graph_of, split, store

    if args.per_system < 1:
        raise errors.InputError(f"--per-system must be at least 1, not {args.per_system}")
    with open_store(args, write=True) as held:
        numbers = select_scenarios(held, args.scenarios)
        if not numbers:
            raise errors.InputError("--scenarios selects no scenario")
        catalog = ScenarioCatalog(held)
        scenarios = [catalog.resolve(n) for n in numbers]
        result = split(scenarios, args.name, args.per_system, args.seed)
        taken = {str(r["name"]): str(r["graph"]) for r in held.select("scenario-sets")}
        clash = [n for n in (result.lite_name, result.held_out_name)
                 if n in taken and taken[n] != graph_of(args.name).value]
        if clash:
            raise errors.InputError(f"the store already holds a set named {clash[0]} (in {taken[clash[0]]}); "
                                    "choose another --name")
        graph = store(held, result, {s.number: s.iri for s in scenarios})
    if args.format == "json":
        print(json.dumps({"name": args.name, "seed": args.seed, "graph": graph.value,
                          "sets": {result.lite_name: list(result.lite), result.held_out_name: list(result.held_out)},
                          "strata": [{"system": k[0], "faults": k[1], "chance": k[2], "scenarios": n, "lite": m}
                                     for k, (n, m) in sorted(result.strata.items())]}, indent=2))
    else:
        for (system, faults, chance), (n, m) in sorted(result.strata.items()):
            print(f"{system}: {faults} fault(s){', left to chance' if chance else ''}: {m} of {n}")
    print(f"{result.lite_name}: {len(result.lite)} scenario(s), {result.held_out_name}: {len(result.held_out)}; "
          f"kept in {graph.value} (evaluate --scenarios set:{result.lite_name})", file=sys.stderr)
    return EXIT_OK
