"""The ``diagkg`` command line.

Exit codes (the same for every subcommand):

== ==========================================================
0  success
1  the input was read but does not conform to the shapes
2  unreadable input, unknown name, bad query or bad usage
3  the store cannot be used (e.g. locked by another writer)
== ==========================================================

Library code raises :mod:`diagkg.errors`; this module alone prints and exits.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import pyoxigraph as ox

from . import __version__, errors
from .kg import graphs, systems
from .kg.store import DEFAULT_WAIT, KnowledgeStore, default_store_path, python_value

if TYPE_CHECKING:  # pragma: no cover
    import rdflib
    from rich.console import Console
    from rich.progress import TaskID

    from .kg.loading import Progress as ProgressCallback
    from .kg.queries import QueryFile
    from .sim.simulator import Simulator

EXIT_OK, EXIT_VIOLATIONS, EXIT_INPUT, EXIT_STORE = 0, 1, 2, 3


# ---------------------------------------------------------------------------
# output helpers
# ---------------------------------------------------------------------------

def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _print_table(columns: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None) -> None:
    """A table: drawn by rich on a terminal (long values fold onto more lines,
    never cut); plain aligned columns, one row per line, anywhere else."""
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    if not sys.stdout.isatty():
        widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
        if title:
            print(title)
        for row in [list(columns), ["-" * w for w in widths], *cells]:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
        return
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in cells:
        table.add_row(*row)
    _console().print(table)


def _say(message: str) -> None:
    """A one-line note on standard error (library code reports through callbacks)."""
    print(f"note: {message}", file=sys.stderr, flush=True)


def _open_store(args: argparse.Namespace, *, write: bool) -> KnowledgeStore:
    """The store in use. No command holds the write lock longer than one write:
    ``write`` only says whether the command may write at all."""
    if args.memory:
        return KnowledgeStore.memory()
    return KnowledgeStore(args.store, read_only=not write, wait=args.wait, on_wait=_say)


@contextmanager
def _progress(enabled: bool = True) -> Iterator[ProgressCallback | None]:
    """A progress display on standard error; yields a ``(stage, done, total)`` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not enabled:
        yield None
        return
    with Progress(TextColumn("{task.description:>22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=_console(stderr=True), transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            name = stage.split(" (", 1)[0]
            if name not in tasks:
                tasks[name] = bar.add_task(stage, total=total)
            bar.update(tasks[name], description=stage, completed=done, total=total)

        yield update


def _is_file_ref(ref: str) -> bool:
    return Path(ref).suffix.lower() in (".ttl", ".nt", ".trig", ".nq", ".rdf", ".owl", ".jsonld", ".n3")


def _scenario_ref(args: argparse.Namespace, store: KnowledgeStore) -> str:
    """``--scenario N|ID|FILE.ttl``: a file is validated against the store, loaded, and named by its id."""
    from .kg.loading import load_files

    ref: str = args.scenario
    if not _is_file_ref(ref):
        return ref
    with _progress(sys.stderr.isatty()) as progress:
        report = load_files(store, [ref], replace=getattr(args, "replace", False), progress=progress, notify=_say)
    for line in (*report.notes, *report.replaced):
        _say(line)
    graph = report.loaded[0].graph if report.loaded else ""
    rows = store.select("graph-claims")
    ids: list[str] = [r["value"] for r in rows if r["graph"] == graph and r["kind"] == "scenario identifier"]
    if not ids:
        raise errors.InputError(f"{ref}: holds no scenario")
    _say(f"loaded {ref} into <{graph}>")
    return ids[0]


# ---------------------------------------------------------------------------
# subcommands
# ---------------------------------------------------------------------------

def cmd_validate(args: argparse.Namespace) -> int:
    from .kg.validation import Validator, shipped_system_graph

    validator = Validator()
    fallback: list[str] = []
    stored = None
    if not args.memory:
        try:
            stored = KnowledgeStore(args.store, read_only=True)
        except errors.StoreError:
            stored = None

    def resolve(iri: str) -> rdflib.Graph | None:
        graph = stored.system_graph(iri) if stored is not None else None
        if graph is None:
            graph = shipped_system_graph(iri)
            if graph is not None:
                fallback.append(iri)
        return graph

    reports = validator.validate_paths(args.paths, resolve=resolve)
    if not reports:
        raise errors.InputError("no RDF files found in " + ", ".join(args.paths))
    unreadable = [r for r in reports if r.error is not None]
    violations = [v for r in reports for v in r.violations]
    if args.format == "json":
        print(json.dumps({
            "conforms": not unreadable and not violations,
            "context": {"store": str(stored.path) if stored is not None else None,
                        "shipped_systems": sorted(set(fallback))},
            "files": [{
                "file": r.file, "conforms": r.conforms,
                "error": str(r.error) if r.error else None,
                "violations": [v.__dict__ for v in r.violations],
            } for r in reports],
        }, indent=2))
    else:
        for r in reports:
            if r.error is not None:
                print(f"error: {r.error}", file=sys.stderr)
            for v in r.violations:
                print(v)
        ok = sum(1 for r in reports if r.conforms)
        where = f"the store at {stored.path}" if stored is not None else "no store (none yet)"
        print(f"{ok}/{len(reports)} file(s) conform; {len(violations)} violation(s), "
              f"{len(unreadable)} unreadable file(s) (context: the files given and {where}"
              + (f"; shipped description of {', '.join(sorted(set(fallback)))}, not in the store" if fallback else "")
              + ")", file=sys.stderr)
    if unreadable:
        return EXIT_INPUT
    return EXIT_VIOLATIONS if violations else EXIT_OK


def cmd_load(args: argparse.Namespace) -> int:
    from .kg.loading import load_files, load_shipped

    graph = ox.NamedNode(args.graph) if args.graph else None
    if not args.paths and not args.shipped:
        raise errors.InputError("give files or folders to load, or --shipped for the shipped catalogue")
    with _open_store(args, write=True) as store, _progress(sys.stderr.isatty()) as progress:
        reports = []
        if args.shipped:
            reports.append(load_shipped(store, replace=args.replace, progress=progress, notify=_say))
        if args.paths:
            reports.append(load_files(store, args.paths, graph=graph, replace=args.replace, progress=progress,
                                      notify=_say))
    for report in reports:
        for note in report.notes:
            _say(note)
        for line in report.replaced:
            print(line)
        for item in report.loaded:
            print(f"loaded {item.file} -> <{item.graph}> ({item.triples} triples)")
        for key, n in report.inferred.items():
            print(f"reasoned over {key} -> <{graphs.inferred(key).value}> ({n} inferred triples)")
        if report.revalidated:
            print(f"re-validated {len(report.revalidated)} stored scenario(s) against the replaced system(s)")
    print(f"store: {store.path or 'in memory'}", file=sys.stderr)
    return EXIT_OK


def cmd_dump(args: argparse.Namespace) -> int:
    with _open_store(args, write=False) as store:
        data = store.dump([ox.NamedNode(g) for g in args.graphs])
    if args.out:
        Path(args.out).write_bytes(data)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return EXIT_OK


def _parse_param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise errors.QueryError(f"--param takes NAME=VALUE, got {text!r}")
    name, value = text.split("=", 1)
    name = name.lstrip("?")
    if value.startswith("<") and value.endswith(">"):
        return name, ox.NamedNode(value[1:-1])
    if "://" in value or value.startswith("urn:"):
        return name, ox.NamedNode(value)
    return name, ox.Literal(value)


def _resolve_query_arg(query: str) -> QueryFile:
    from .kg.queries import from_text, library, parse_header

    path = Path(query)
    if path.suffix in (".rq", ".ru", ".j2") and path.is_file():
        text = path.read_text(encoding="utf-8")
        try:
            return parse_header(path.stem, path.name, text)
        except errors.QueryError:
            return from_text(text, path.name)
    lib = library()
    if query in lib:
        return lib.get(query)
    if any(k in query.upper() for k in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "INSERT", "DELETE",
                                         "DROP", "CLEAR", "LOAD", "CREATE", "COPY", "MOVE", "ADD")):
        return from_text(query)
    return lib.get(query)  # raises UnknownQueryError with suggestions


def _check_inputs(q: QueryFile, params: dict[str, object]) -> None:
    """Every input a query's header declares (and does not mark optional) must be given;
    no input it does not declare may be."""
    declared = {p.name: p for p in q.inputs}
    unknown = sorted(set(params) - set(declared))
    missing = [p for p in q.inputs if not p.optional and p.name not in params]
    if not unknown and not missing:
        return
    listing = ", ".join(f"{p.name} ({p.kind}{', optional' if p.optional else ''})" for p in q.inputs) or "none"
    problem = (f"has no input {', '.join(unknown)}" if unknown
               else "needs " + ", ".join(p.name for p in missing))
    raise errors.QueryError(f"{q.name} {problem}; its inputs are: {listing} (give each with -p NAME=VALUE)")


def _template_values(params: dict[str, object]) -> dict[str, Any]:
    return {k: python_value(v) for k, v in params.items()}


def cmd_query(args: argparse.Namespace) -> int:
    q = _resolve_query_arg(args.query)
    params = dict(_parse_param(p) for p in args.param)
    if q.is_update:
        raise errors.QueryError(f"{q.name} is an update; `diagkg query` only reads. Run it with "
                                f"`diagkg update {args.query if len(args.query) < 60 else 'FILE'}`")
    _check_inputs(q, params)
    with _open_store(args, write=False) as store:
        if q.is_template:
            result = store.query(q, **_template_values(params))
        else:
            result = store.query(q, params)
        _print_result(result, args.format)
    return EXIT_OK


def cmd_update(args: argparse.Namespace) -> int:
    """Run a SPARQL update and say what it changed, graph by graph."""
    q = _resolve_query_arg(args.update)
    if not q.is_update:
        raise errors.QueryError(f"{q.name} is a query, not an update; run it with `diagkg query`")
    params = dict(_parse_param(p) for p in args.param)
    _check_inputs(q, params)
    with _open_store(args, write=True) as store:
        before = set(store.raw.quads_for_pattern(None, None, None, None))
        store.update(q, **_template_values(params))
        after = set(store.raw.quads_for_pattern(None, None, None, None))
    added: dict[str, int] = {}
    removed: dict[str, int] = {}
    for quad, tally in [(q_, added) for q_ in after - before] + [(q_, removed) for q_ in before - after]:
        name = quad.graph_name.value if isinstance(quad.graph_name, ox.NamedNode) else "(default graph)"
        tally[name] = tally.get(name, 0) + 1
    for graph in sorted(set(added) | set(removed)):
        print(f"<{graph}>: {added.get(graph, 0)} triple(s) added, {removed.get(graph, 0)} removed")
    if not added and not removed:
        print("the update changed nothing")
    return EXIT_OK


def _graphs_to_remove(args: argparse.Namespace, store: KnowledgeStore) -> list[ox.NamedNode]:
    from .env.workspace import graph_holding, resolve_scenario
    from .kg.vocab import DK
    from .runs.trajectory import BASE as TRAJECTORY_BASE

    names: list[ox.NamedNode] = []
    for g in args.graphs:
        names.append(ox.NamedNode(g if "://" in g or g.startswith("urn:") else graphs.BASE + g))
    for sid in args.scenario or []:
        scenario = resolve_scenario(store, sid)
        holder = graph_holding(store, scenario.iri, str(DK.Scenario))
        names.append(holder or graphs.named("scenario", scenario.id))
    for tid in args.trajectory or []:      # a trajectory's IRI or its bare id
        names.append(graphs.named("trajectory", tid.removeprefix(TRAJECTORY_BASE)))
    for cid in args.campaign or []:
        names.append(graphs.named("evaluation", cid))
    return list(dict.fromkeys(names))


def cmd_remove(args: argparse.Namespace) -> int:
    """Remove named graphs: a scenario, a trajectory, a campaign, or graphs by name."""
    with _open_store(args, write=True) as store:
        targets = _graphs_to_remove(args, store)
        if not targets:
            raise errors.InputError("name what to remove: GRAPH…, --scenario ID, --trajectory ID or --campaign ID")
        sizes = dict(store.graphs())
        missing = [g.value for g in targets if g.value not in sizes]
        if missing:
            raise errors.InputError("no graph " + ", ".join(f"<{m}>" for m in missing) + " in the store "
                                    "(see `diagkg graphs`)")
        own = [g.value for g in targets if g in (graphs.ONTOLOGY, graphs.SHAPES)]
        if own:
            raise errors.InputError(f"<{own[0]}> is diagkg's own and every load refreshes it; it cannot be removed")
        # a system takes its inferences with it, and cannot go while scenarios that run on it stay
        for g in list(targets):
            if graphs.kind_of(g) == "system":
                key = g.value.rsplit("/", 1)[-1]
                if graphs.inferred(key).value in sizes and graphs.inferred(key) not in targets:
                    targets.append(graphs.inferred(key))
                claims = [r for r in store.select("graph-claims") if r["graph"] == g.value and r["kind"] == "system"]
                for claim in claims:
                    left = [r["graph"] for r in store.select("scenarios-on-system", {"system": ox.NamedNode(claim["value"])})
                            if ox.NamedNode(r["graph"]) not in targets]
                    if left:
                        raise errors.InputError(f"<{g.value}> describes a system that {len(left)} stored scenario(s) run on "
                                                f"(e.g. <{left[0]}>); remove them in the same command, or keep the system")
        listing = "\n".join(f"  <{g.value}> ({sizes.get(g.value, 0)} triples)" for g in targets)
        if not args.yes:
            if not sys.stdin.isatty():
                raise errors.InputError(f"would remove:\n{listing}\nwithout a terminal to confirm, add --yes")
            answer = input(f"remove these {len(targets)} graph(s)?\n{listing}\n[y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("nothing was removed", file=sys.stderr)
                return EXIT_OK
        store.remove_graphs(targets)
    for g in targets:
        print(f"removed <{g.value}> ({sizes.get(g.value, 0)} triples)")
    return EXIT_OK


def _print_result(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples, fmt: str) -> None:
    if isinstance(result, ox.QueryBoolean):
        print(json.dumps({"boolean": bool(result)}) if fmt == "json" else str(bool(result)).lower())
        return
    if isinstance(result, ox.QueryTriples):   # CONSTRUCT / DESCRIBE
        rdf_format = ox.RdfFormat.N_TRIPLES if fmt in ("csv", "tsv", "ntriples") else ox.RdfFormat.TURTLE
        sys.stdout.write((ox.serialize(result, format=rdf_format) or b"").decode("utf-8"))
        return
    if fmt in ("csv", "tsv", "json"):
        f = {"csv": ox.QueryResultsFormat.CSV, "tsv": ox.QueryResultsFormat.TSV,
             "json": ox.QueryResultsFormat.JSON}[fmt]
        sys.stdout.write((result.serialize(format=f) or b"").decode("utf-8"))
        if fmt == "json":
            sys.stdout.write("\n")
        return
    names = [v.value for v in result.variables]
    rows = [[_short(row[n]) for n in names] for row in result]
    _print_table(names, rows)
    print(f"{len(rows)} row(s)", file=sys.stderr)


def _short(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None) -> str:
    if term is None:
        return ""
    value = python_value(term)
    return str(value)


def cmd_graphs(args: argparse.Namespace) -> int:
    with _open_store(args, write=False) as store:
        rows = store.graphs()
        if args.format == "json":
            print(json.dumps([{"graph": g, "triples": n} for g, n in rows], indent=2))
        else:
            _print_table(["graph", "kind", "triples"], [(g, graphs.kind_of(ox.NamedNode(g)) or "", n) for g, n in rows])
    return EXIT_OK


def cmd_queries(args: argparse.Namespace) -> int:
    from .kg.queries import library

    rows = []
    for q in library().files():
        kind = ("update" if q.is_update else "query") + (" template" if q.is_template else "")
        inputs = ", ".join(("" if q.is_template else "?") + p.name for p in q.inputs)
        rows.append((q.name, kind, inputs, q.summary))
    _print_table(["name", "kind", "inputs", "what it answers"], rows)
    return EXIT_OK


def cmd_build_systems(args: argparse.Namespace) -> int:
    changed = systems.build(args.out, check=args.check)
    for key, did in changed.items():
        state = ("out of date" if args.check else "rewritten") if did else "up to date"
        print(f"{key}.ttl: {state}")
    return EXIT_VIOLATIONS if args.check and any(changed.values()) else EXIT_OK


def cmd_reason(args: argparse.Namespace) -> int:
    from .kg.loading import ensure_shipped, infer_system

    with _open_store(args, write=True) as store:
        if not store.raw.contains_named_graph(graphs.system(args.system)):
            systems.shipped_system_file(args.system)   # an unknown key: UnknownTermError listing the known ones
            ensure_shipped(store, notify=_say)
        t0 = time.perf_counter()
        n = infer_system(store, args.system, engine=args.engine)
        print(f"inferred {n} triples -> <{graphs.inferred(args.system).value}> "
              f"in {time.perf_counter() - t0:.2f} s")
    return EXIT_OK


def _simulator_for(store: KnowledgeStore, key: str) -> Simulator:
    """A simulator for system ``key`` of the store (a store that has never held
    the shipped catalogue gets it first when ``key`` is a shipped system)."""
    from .env.service import simulator_for
    from .kg.loading import ensure_shipped

    if not store.raw.contains_named_graph(graphs.system(key)):
        try:
            systems.shipped_system_file(key)
        except errors.UnknownTermError as exc:
            held = sorted(r["key"] for r in store.select("system-summary"))
            raise errors.UnknownTermError(f"no system {key!r} in the store (it holds: {', '.join(held) or 'none'}) "
                                          f"nor among the shipped ones ({exc})") from None
        if ensure_shipped(store, notify=_say) is None:
            raise errors.UnknownTermError(f"no system {key!r} in the store; load it (diagkg load --shipped)")
    return simulator_for(store, key)


def cmd_simulate(args: argparse.Namespace) -> int:
    import random

    from .sim.circuit import NOMINAL, state_from_turtle
    from .sim.simulator import result_quads

    if args.scenario is not None:
        return _simulate_scenario(args)
    if args.system is None:
        raise errors.InputError("give a SYSTEM key or --scenario N|ID")
    with _open_store(args, write=True) as store:
        sim = _simulator_for(store, args.system)
        state = NOMINAL
        if args.state:
            path = Path(args.state)
            if not path.is_file():
                raise errors.InputError(f"{path}: no such file")
            state = state_from_turtle(path.read_text(encoding="utf-8"), str(path), sim.skeleton)
        if args.netlist:
            print(sim.netlist(state))
            return EXIT_OK
        result = sim.simulate(state, random.Random(args.seed))
        if args.record:
            graph = graphs.named("simulation", f"{args.system}-{int(time.time() * 1000)}")
            store.add_quads(result_quads(result, sim.skeleton, graph))
            print(f"recorded as SOSA observations in <{graph.value}>", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2))
        return EXIT_OK
    print(f"system: {result.system}   converged: {'yes' if result.converged else 'NO'} "
          f"({result.iterations} solve(s))" + (f"   error: {result.error}" if result.error else ""))
    print("lit: " + (", ".join(result.lit) or "(nothing)"))
    if result.live:
        print("live: " + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in sorted(result.live.items())))
    rows = []
    for cid, c in sorted(result.components.items()):
        volts = ", ".join(f"{p}={'floating' if x is None else f'{x:.3f}'}" for p, x in c.port_v.items())
        rows.append((cid, c.type, volts, f"{c.current * 1000:.3f}", f"{c.power * 1000:.3f}",
                     "" if c.lit is None else ("lit" if c.lit else "off")))
    _print_table(["component", "type", "port voltages (V)", "current (mA)", "power (mW)", "light"], rows)
    return EXIT_OK


def _simulate_scenario(args: argparse.Namespace) -> int:
    """The state right after a scenario's faults are injected (the saboteur of a session)."""
    from .env.service import make

    with _open_store(args, write=True) as store:
        session = make(_scenario_ref(args, store), store, notify=_say)
    session.reset(seed=args.seed)
    scenario, nominal, result = session.scenario, session.nominal_result, session.initial_result
    is_nominal = session.is_nominal()
    if args.format == "json":
        data = result.to_json()
        data.update(scenario=scenario.number, scenario_id=scenario.id, nominal=is_nominal,
                    nominal_lit=sorted(nominal.lit))
        print(json.dumps(data, indent=2))
        return EXIT_OK
    print(f"scenario {scenario.number} ({scenario.id}): {scenario.label} — system {scenario.key}")
    print(f"nominal lights: {', '.join(nominal.lit) or '(none)'}")
    print(f"after the faults: {', '.join(result.lit) or '(nothing lit)'}; converged: "
          f"{'yes' if result.converged else 'NO'}; nominal: {'yes' if is_nominal else 'no'}")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """Run one diagnostic session and store its trajectory."""
    from .runs.runner import run_session

    config = {}
    if args.config:
        try:
            config = json.loads(args.config)
        except json.JSONDecodeError as exc:
            raise errors.InputError(f"--config is not valid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(config, dict):
            raise errors.InputError("--config must be a JSON object")

    def show(entry: dict[str, Any]) -> None:
        if args.format != "text":
            return
        executed = ", ".join(f"{e['action']} {' '.join(e['targets'])} ({e['cost']:g})" for e in entry["executed"])
        verdict = f" [{entry['verdict']}]" if entry.get("verdict") else ""
        print(f"round {entry['round']:2d}: {entry['intention']}{verdict}")
        if executed:
            print(f"          executed: {executed}")
        print(f"          outcome:  {entry['message']}")
        print(f"          cost:     {entry['cost']:g} min")

    if args.budget is not None and args.budget < 1:
        raise errors.InputError(f"--budget must be at least 1 round, got {args.budget}")
    with _open_store(args, write=True) as store:
        result = run_session(_scenario_ref(args, store), args.assistant, seed=args.seed, budget=args.budget,
                             config=config, store=store, on_round=show, notify=_say)
    if args.format == "json":
        print(json.dumps({k: v for k, v in result.to_json().items() if k != "wall_time"}))
    else:
        print(f"end: {result.end}   total cost: {result.cost:g} min   rounds: {result.rounds}")
        print(f"trajectory: {result.trajectory}")
    return EXIT_OK


def cmd_transcript(args: argparse.Namespace) -> int:
    from .runs import transcript

    with _open_store(args, write=False) as store:
        data = transcript.load(store, args.trajectory)
    text = json.dumps(data, indent=2) if args.format == "json" else transcript.to_html(data)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    """The main job: validate and load the shipped systems and scenarios into the
    store (reasoning over each system as it is loaded), run a diagnostic session
    with the neuro-symbolic assistant and the oracle, and summarise the store."""
    from .env.workspace import resolve_scenario
    from .kg.loading import load_shipped
    from .runs.runner import run_session

    t0 = time.perf_counter()
    with _open_store(args, write=True) as store:
        with _progress(sys.stderr.isatty()) as progress:
            report = load_shipped(store, validate=True, replace=args.replace, progress=progress, notify=_say)
        n_sys = sum(1 for i in report.loaded if "/graph/system/" in i.graph)
        print(f"validated and loaded: {len(report.loaded)} files ({n_sys} systems, {len(report.loaded) - n_sys} "
              f"scenarios), {sum(i.triples for i in report.loaded)} triples into "
              f"{store.path or 'an in-memory store'}")
        for line in report.replaced:
            print(f"  {line}")
        for key, n in sorted(report.inferred.items()):
            print(f"reasoned: <{graphs.inferred(key).value}> ({n} inferred triples)")
        t1 = time.perf_counter()
        scenario = resolve_scenario(store, args.scenario)
        rows = store.select("system-summary")
        _print_table(["system", "label", "modules", "components", "ports", "connections"],
                     [(r["key"], r["label"], r["modules"], r["components"], r["ports"], r["connections"]) for r in rows],
                     title="systems in the store")
        print(f"\nscenario {scenario.number} ({scenario.id}): {scenario.label}\nreported: {scenario.observations}\n")
        for name in ("neuro-symbolic", "oracle"):
            def on_round(e: dict[str, Any], n: str = name) -> None:
                print(f"  [{n}] round {e['round']}: {e['intention']} → {e['message']} ({e['cost']:g} min)")

            result = run_session(scenario, name, seed=args.seed, store=store, notify=_say, on_round=on_round)
            print(f"  [{name}] end: {result.end}, cost {result.cost:g} min, {result.rounds} rounds\n"
                  f"  [{name}] trajectory: {result.trajectory}\n")
        t2 = time.perf_counter()
        rows = store.select("trajectory-success")
        _print_table(["assistant", "scenario", "runs", "success rate", "mean cost (min)"],
                     [(r["assistant"], r["id"], r["runs"], f"{r['successRate']:.0%}", f"{r['meanCost']:.0f}")
                      for r in rows], title="all trajectories in the store (queries/trajectory-success.rq)")
    print(f"validated, reasoned and loaded in {t1 - t0:.2f} s, sessions in {t2 - t1:.2f} s", file=sys.stderr)
    return EXIT_OK


def cmd_import_scenarios(args: argparse.Namespace) -> int:
    """Import a scenario spreadsheet (CSV) through the RML mapping, validate it, optionally write Turtle."""
    from .kg.importer import import_scenarios

    result = import_scenarios(args.file, out=args.out)
    for line in result.lines():
        print(line)
    bad = sum(1 for s in result.scenarios if not s.conforms)
    t = result.timings
    print(f"imported {len(result.scenarios)} scenario(s) from {args.file}: {len(result.scenarios) - bad} conform, "
          f"{bad} do not; {len(result.violations)} violation(s) (in {t['total']:.2f} s: normalise "
          f"{t['normalise']:.2f}, RML {t['rml']:.2f}, Turtle {t['turtle']:.2f}, validation {t['validate']:.2f})",
          file=sys.stderr)
    if result.missing_columns:
        print(f"note: {args.file} has no column(s) " + ", ".join(repr(c) for c in result.missing_columns)
              + ": the scenarios lack their faults, faulty components, repair or configuration, so they "
              "are incomplete; add these columns to import complete scenarios (see the README, "
              "\"Importing scenarios from a spreadsheet\")", file=sys.stderr)
    if result.written:
        print(f"wrote {len(result.written)} Turtle file(s) to {args.out}", file=sys.stderr)
    return EXIT_OK if result.conforms else EXIT_VIOLATIONS


# ---------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="diagkg",
        description="diagkg: diagnostic scenarios and assistants on a knowledge graph (RDF, SHACL, SPARQL).",
        epilog="Exit codes: 0 ok, 1 SHACL violations, 2 bad input/query/usage, 3 store unusable.",
    )
    parser.add_argument("--version", action="version", version=f"diagkg {__version__}")
    parser.add_argument("--store", metavar="PATH",
                        help=f"on-disk store to use (default: $DIAGKG_STORE or {default_store_path()})")
    parser.add_argument("--memory", action="store_true", help="use a throw-away in-memory store")
    parser.add_argument("--wait", type=float, default=DEFAULT_WAIT, metavar="SECONDS",
                        help=f"how long a write waits for another process writing the store "
                             f"(default {DEFAULT_WAIT:g}); then exit 3")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(func=func)
        return p

    p = add("validate", cmd_validate, "Validate RDF files or folders against the SHACL shapes.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, or folders searched recursively")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = add("load", cmd_load, "Validate RDF files in the context of the store, then load them (all or nothing).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files, or folders searched recursively")
    p.add_argument("--shipped", action="store_true", help="load the shipped systems and scenarios")
    p.add_argument("--replace", action="store_true",
                   help="replace what a different file loaded before under the same identifier, number or IRI "
                        "(says what it replaced; keep a copy first with `diagkg dump`)")
    p.add_argument("--graph", metavar="IRI", help="load one file into this named graph instead of the conventional one")

    p = add("dump", cmd_dump, "Export named graphs (all by default) as N-Quads; `load` puts a dump's graphs back.")
    p.add_argument("graphs", nargs="*", metavar="GRAPH", help="graph IRIs (see `diagkg graphs`)")
    p.add_argument("--out", metavar="FILE.nq", help="write to FILE instead of standard output")

    p = add("query", cmd_query, "Run a read-only SPARQL query: a file, a query name from queries/, or inline text.")
    p.add_argument("query", help="path to a .rq file, a name (see `diagkg queries`), or SPARQL text")
    p.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                   help="bind an input: <iri> or scheme://… for IRIs, anything else is a literal")
    p.add_argument("--format", choices=("table", "csv", "tsv", "json", "turtle", "ntriples"), default="table",
                   help="SELECT/ASK: table, csv, tsv, json; CONSTRUCT/DESCRIBE: turtle (default) or ntriples")

    p = add("update", cmd_update, "Run a SPARQL update (a .ru file, a name, or text) and say what it changed.")
    p.add_argument("update", metavar="UPDATE", help="path to a .ru file, an update name from queries/, or SPARQL text")
    p.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                   help="bind an input: <iri> or scheme://… for IRIs, anything else is a literal")

    p = add("remove", cmd_remove, "Remove named graphs: a scenario, a trajectory, a campaign, or graphs by name.")
    p.add_argument("graphs", nargs="*", metavar="GRAPH",
                   help="graph IRIs, or their names after the graph base (e.g. scenario/3CC.S.1)")
    p.add_argument("--scenario", action="append", metavar="ID", help="the graph of this scenario (number or id)")
    p.add_argument("--trajectory", action="append", metavar="ID", help="a trajectory (IRI or id)")
    p.add_argument("--campaign", action="append", metavar="ID", help="an evaluation campaign's graph")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation (needed without a terminal)")

    p = add("graphs", cmd_graphs, "List the named graphs of the store with their triple counts.")
    p.add_argument("--format", choices=("table", "json"), default="table")

    add("queries", cmd_queries, "List the query files shipped in queries/.")

    p = add("build-systems", cmd_build_systems,
            "Regenerate the shipped system Turtle files from their templates.")
    p.add_argument("--check", action="store_true", help="only report files that are out of date (exit 1 if any)")
    p.add_argument("--out", metavar="DIR", help="write into DIR instead of scenarios/systems/")

    p = add("reason", cmd_reason, "Run the OWL reasoner on a loaded system; store the result in inferred/{key}.")
    p.add_argument("system", metavar="KEY", help="system key, e.g. three_cubes")
    p.add_argument("--engine", choices=("auto", "hermit", "owlrl"), default="auto",
                   help="HermiT through owlready2 (needs Java) or OWL-RL rules; auto picks HermiT when Java is there")

    p = add("simulate", cmd_simulate,
            "Simulate a system (DC operating point with ngspice): lights, convergence, voltages, currents.")
    p.add_argument("system", metavar="SYSTEM", nargs="?",
                   help="system key: three_cubes, ten_cubes, asymmetric_chains, ambient_light_sensor, "
                        "current_sensor, or the key of any system loaded into the store")
    p.add_argument("--scenario", metavar="N|ID|FILE",
                   help="simulate the state right after this scenario's faults are injected (a scenario of the "
                        "store, or a scenario file, validated and loaded first)")
    p.add_argument("--state", metavar="FILE.ttl", help="a circuit state in Turtle (faults, positions…)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--seed", type=int, default=0, help="seed for loose connections (default 0)")
    p.add_argument("--record", action="store_true",
                   help="also store the result as SOSA observations in a simulation/… graph")
    p.add_argument("--netlist", action="store_true", help="print the SPICE netlist instead of solving")

    p = add("run", cmd_run, "Run a diagnostic session: an assistant on a scenario; stores the trajectory.")
    p.add_argument("--scenario", required=True, metavar="N|ID|FILE",
                   help="a scenario of the store by number or id (e.g. 3CC.S.1), or a scenario file, "
                        "validated against the store's systems and loaded first")
    p.add_argument("--replace", action="store_true", help="with a FILE: replace a stored scenario it collides with")
    p.add_argument("--assistant", required=True, metavar="NAME", help="an installed assistant, e.g. neuro-symbolic, oracle, random-search "
                        "(an unknown name lists them all)")
    p.add_argument("--seed", type=int, default=0, help="seed for loose connections and random assistants")
    p.add_argument("--budget", type=int, metavar="ROUNDS", help="override the scenario's action budget")
    p.add_argument("--config", metavar="JSON", help="assistant configuration as a JSON object")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = add("transcript", cmd_transcript, "Render a stored trajectory as an HTML chat transcript (or JSON).")
    p.add_argument("trajectory", metavar="TRAJECTORY", help="trajectory IRI (see `diagkg query trajectory-list`)")
    p.add_argument("--format", choices=("html", "json"), default="html")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")

    p = add("demo", cmd_demo, "The main job: validate and load every shipped system and scenario, reason, "
                              "run a diagnostic session, and summarise the store.")
    p.add_argument("--scenario", default="3CC.S.3", metavar="N|ID", help="the scenario to run (default 3CC.S.3)")
    p.add_argument("--replace", action="store_true", help="replace what other files loaded under the shipped names")
    p.add_argument("--seed", type=int, default=0)

    p = add("import-scenarios", cmd_import_scenarios,
            "Import scenarios from a spreadsheet (CSV) with the RML mapping; validate; write one Turtle file each.")
    p.add_argument("file", metavar="FILE.csv", help="a scenario table with the columns of SCENARIOS_MASTER.csv "
                   "(and optionally: faults, faulty components, ideal repair, removed components)")
    p.add_argument("--out", metavar="DIR", help="write one NNN-ID.ttl file per scenario into DIR")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except errors.ValidationError as exc:
        for v in exc.violations:
            print(v, file=sys.stderr)
        print(f"error: {exc}; nothing was loaded", file=sys.stderr)
        return EXIT_VIOLATIONS
    except errors.StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_STORE
    except (errors.InputError, errors.QueryError, errors.UnknownTermError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except errors.DiagkgError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
