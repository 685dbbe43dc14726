"""Subcommands on the knowledge graph: validate, load, dump, query, update,
remove, graphs, queries, build-systems, reason, import-scenarios."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pyoxigraph as ox

from .. import errors
from ..kg import graphs, systems
from ..kg.rdfio import python_value
from ..kg.store import KnowledgeStore
from ..kg.waiting import StillRunning, in_thread
from .output import EXIT_INPUT, EXIT_OK, EXIT_VIOLATIONS, open_store, print_table, progress_bar, say

if TYPE_CHECKING:  # pragma: no cover

    from ..kg.queries import QueryFile


def cmd_validate(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from ..kg.validation import Validator, store_resolver

    if args.record and args.memory:
        raise errors.InputError("--record keeps the report in a store: give --store (or none: the default store), "
                                "not --memory")
    started = datetime.now(timezone.utc)
    validator = Validator()
    fallback: list[str] = []
    stored = None
    if not args.memory:
        try:
            stored = open_store(args, write=False)
        except errors.StoreError:
            stored = None

    reports = validator.validate_paths(args.paths, resolve=store_resolver(stored, fallback))
    # what load would refuse besides the shapes: a claim the store holds from another file, or two files claim together
    from ..kg.validation_store import store_collisions

    store_collisions(stored, reports)
    if not reports:
        raise errors.InputError("no RDF files found in " + ", ".join(args.paths))
    unreadable = [r for r in reports if r.error is not None]
    violations = [v for r in reports for v in r.violations]
    lines = {r.file: errors.said_once(r.violations) for r in reports}     # (the report as data, and as recorded, keeps all)
    recorded = None
    if args.record:          # the report as SHACL's sh:ValidationReport, with provenance, in a graph of its own
        from ..evaluation.campaign import code_version
        from ..kg.validation_record import record

        if stored is not None:
            stored.close()
        with open_store(args, write=True) as store:
            recorded = record(store, reports, started=started, agent=code_version())
        say(f"recorded the report as <{recorded.value}> (diagkg query validation-reports lists them)")
    if args.format == "json":
        print(json.dumps({
            "conforms": not unreadable and not violations,
            "context": {"store": str(stored.path) if stored is not None else None,
                        "shipped_systems": sorted(set(fallback))},
            "recorded": recorded.value if recorded is not None else None,
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
            for line in lines[r.file]:
                print(line)
        ok = sum(1 for r in reports if r.conforms)
        where = f"the store at {stored.path}" if stored is not None else "no store (none yet)"
        print(f"{ok}/{len(reports)} file(s) conform; {sum(map(len, lines.values()))} violation(s), "
              f"{len(unreadable)} unreadable file(s) (context: the files given and {where}"
              + (f"; shipped description of {', '.join(sorted(set(fallback)))}, not in the store" if fallback else "")
              + ")", file=sys.stderr)
    if unreadable:
        return EXIT_INPUT
    return EXIT_VIOLATIONS if violations else EXIT_OK


def cmd_load(args: argparse.Namespace) -> int:
    from ..env.checks import load_warnings
    from ..kg.loading import load_files, load_shipped

    graph = ox.NamedNode(args.graph) if args.graph else None
    if not args.paths and not args.shipped:
        raise errors.InputError("give files or folders to load, or --shipped for the shipped catalogue")
    with open_store(args, write=True) as store, progress_bar(sys.stderr.isatty()) as progress:
        reports = []
        if args.shipped:
            reports.append(load_shipped(store, replace=args.replace, progress=progress, notify=say))
        if args.paths:
            reports.append(load_files(store, args.paths, graph=graph, replace=args.replace, progress=progress,
                                      notify=say))
        warnings = load_warnings(store, [key for report in reports for key in report.inferred])
    for report in reports:
        for note in report.notes:
            say(note)
        for line in report.replaced:
            print(line)
        for item in report.loaded:
            print(f"loaded {item.file} -> <{item.graph}> ({item.triples} triples)")
        for key, n in report.inferred.items():
            print(f"reasoned over {key} -> <{graphs.inferred(key).value}> ({n} inferred triples)")
        if report.revalidated:
            print(f"re-validated {len(report.revalidated)} stored scenario(s) against the replaced system(s)")
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"store: {store.location}", file=sys.stderr)
    return EXIT_OK


def _graph_name(name: str) -> ox.NamedNode:
    """A graph named as `remove` and `dump` take it: its IRI, or its name after the graph base (`scenario/3CC.S.1`)."""
    iri = name if "://" in name or name.startswith("urn:") else graphs.BASE + name
    try:
        return ox.NamedNode(iri)
    except ValueError as exc:
        raise errors.InputError(f"{name!r} is not a graph's name ({exc})") from None


def cmd_dump(args: argparse.Namespace) -> int:
    with open_store(args, write=False) as store:
        data = store.dump([_graph_name(g) for g in args.graphs])   # a name after the graph base was a traceback
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
    iri = value[1:-1] if value.startswith("<") and value.endswith(">") else (
        value if "://" in value or value.startswith("urn:") else None)
    if iri is None:
        return name, ox.Literal(value)
    try:
        return name, ox.NamedNode(iri)
    except ValueError as e:     # a space, a control character (a CSV line's \r): it was a traceback
        raise errors.QueryError(f"--param {name}: {iri!r} is not an IRI ({e})") from None


def _resolve_query_arg(query: str) -> QueryFile:
    from ..kg.queries import from_text, library, read_query_file

    path = Path(query)
    if path.suffix in (".rq", ".ru", ".j2") and path.is_file():
        return read_query_file(path)
    looks_like_a_path = not any(c.isspace() or c in "{}<>" for c in query) and (
        path.suffix in (".rq", ".ru", ".j2") or "/" in query)
    if looks_like_a_path:
        raise errors.InputError(f"{query}: no such file")
    lib = library()
    if query in lib:
        return lib.get(query)
    # text with a space or a brace is never a name (`SELCT ?s WHERE {…}` was "no query named …"): SPARQL, whose
    # parser locates the mistake
    if any(c.isspace() or c in "{}" for c in query.strip()) or any(
            k in query.upper() for k in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "INSERT", "DELETE",
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


def _typed_inputs(q: QueryFile, params: dict[str, object]) -> dict[str, object]:
    """The inputs as the kinds the query's header declares: an IRI input given something else is an error
    (bound as a literal it matched nothing, and the query said 0 rows), an integer input's text becomes an
    ``xsd:integer``."""
    kinds = {p.name: p.kind for p in q.inputs}
    typed = dict(params)
    for name, value in params.items():
        kind, text = kinds.get(name), value.value if isinstance(value, ox.Literal) else None
        if kind == "iri" and text is not None:
            raise errors.QueryError(f"{q.name}: input {name} is an IRI, got {text!r}; write it whole, e.g. "
                                    f"-p {name}=<https://…> or -p {name}=https://…")
        if kind == "integer" and text is not None:
            try:
                typed[name] = ox.Literal(int(text))
            except ValueError:
                raise errors.QueryError(f"{q.name}: input {name} is an integer, got {text!r}") from None
    return typed


def _template_values(params: dict[str, object]) -> dict[str, Any]:
    return {k: python_value(v) for k, v in params.items()}


def cmd_query(args: argparse.Namespace) -> int:
    q = _resolve_query_arg(args.query)
    params = dict(_parse_param(p) for p in args.param)
    if q.is_update:
        raise errors.QueryError(f"{q.name} is an update; `diagkg query` only reads. Run it with "
                                f"`diagkg update {args.query if len(args.query) < 60 else 'FILE'}`")
    _check_inputs(q, params)
    params = _typed_inputs(q, params)
    if args.timeout is not None and args.timeout < 0:
        raise errors.InputError(f"--timeout must be 0 (no limit) or a number of seconds, got {args.timeout:g}")
    with open_store(args, write=False) as store:
        def answer() -> None:
            result = store.query(q, **_template_values(params)) if q.is_template else store.query(q, params)
            _print_result(result, args.format)

        _waited_for(answer, args.timeout or None)
    return EXIT_OK


def _waited_for(work: Callable[[], None], timeout: float | None) -> None:
    """``work()`` in a thread of its own, waited for here (:func:`~diagkg.kg.waiting.in_thread`). Oxigraph evaluates a
    query without looking at signals: run in the main thread, a query that runs for hours could not be stopped by
    Ctrl-C, nor given a time limit. Past ``timeout`` seconds it is a :class:`~diagkg.errors.QueryError` (the thread
    is left to the process's end)."""
    try:
        in_thread(work, timeout, "diagkg-query")
    except StillRunning:
        raise errors.QueryError(f"the query ran longer than the time limit of {timeout:g} s (--timeout) and was "
                                "stopped") from None


def cmd_update(args: argparse.Namespace) -> int:
    """Run a SPARQL update by the one write path (:mod:`diagkg.kg.updates`) and say what it
    changed, graph by graph, and what followed (validation, versions, inferences)."""
    from ..kg.queries import from_text, is_query_text
    from ..kg.updates import DEFAULT_TIMEOUT, apply_update

    q = _resolve_query_arg(args.update)
    if not q.is_update and q.name == "inline" and not is_query_text(q.text):
        # text that starts as no query either (`INSRT DATA {…}`): an update with a mistake, which the update's
        # parser locates (it was "inline is a query, not an update")
        q = from_text(q.text, update=True)
    if not q.is_update:
        raise errors.QueryError(f"{q.name} is a query, not an update; run it with `diagkg query`")
    params = dict(_parse_param(p) for p in args.param)
    _check_inputs(q, params)
    params = _typed_inputs(q, params)
    timeout = DEFAULT_TIMEOUT if args.timeout is None else (args.timeout or None)
    with open_store(args, write=True) as store:
        report = apply_update(store, q, timeout=timeout, **_template_values(params))
    if report.remote:
        print(f"sent to {store.location}, which applied it")
        return EXIT_OK
    for change in report.changes:
        print(f"<{change.graph or '(default graph)'}>: {change.added} triple(s) added, {change.removed} removed")
    if not report.changes:
        print("the update changed nothing")
    for r in report.revisions:
        if r.after:
            print(f"<{r.graph}>: valid; version {r.before[:12] or '(none)'} -> {r.after[:12]}")
        else:
            print(f"<{r.graph}>: left empty, removed")
    for key, n in report.inferred.items():
        print(f"reasoned over {key} -> <{graphs.inferred(key).value}> ({n} inferred triples)")
    if report.revalidated:
        print(f"re-validated {len(report.revalidated)} stored scenario(s) against the changed system(s)")
    for key in report.stale:
        print(f"<{key}>: a trajectory of its slot changed; tally dropped (reports read the slot's trajectories "
              "until `diagkg report --rebuild` writes it afresh)")
    return EXIT_OK


def _graphs_to_remove(args: argparse.Namespace, store: KnowledgeStore) -> list[ox.NamedNode]:
    from ..env.workspace import graph_holding, resolve_scenario
    from ..kg.vocab import DK
    from ..runs.trajectory import BASE as TRAJECTORY_BASE

    names: list[ox.NamedNode] = []
    for g in args.graphs:
        names.append(_graph_name(g))
    for sid in args.scenario or []:
        scenario = resolve_scenario(store, sid)
        holder = graph_holding(store, scenario.iri, str(DK.Scenario))
        names.append(holder or graphs.named("scenario", scenario.id))
    for tid in args.trajectory or []:      # a trajectory's IRI or its bare id
        names.append(graphs.named("trajectory", tid.removeprefix(TRAJECTORY_BASE)))
    for cid in args.campaign or []:        # an id, or the name given to `evaluate --name` (one campaign's)
        from ..evaluation.campaign import open_campaign

        names.append(open_campaign(store, cid).graph)
    return list(dict.fromkeys(names))


def cmd_remove(args: argparse.Namespace) -> int:
    """Remove named graphs: a scenario, a trajectory, a campaign, or graphs by name (a system
    with its inferences; checked again inside the write lock, see :func:`diagkg.kg.updates.remove_graphs`)."""
    from ..kg.updates import removal, remove_graphs

    with open_store(args, write=True) as store:
        asked = _graphs_to_remove(args, store)
        if not asked:
            raise errors.InputError("name what to remove: GRAPH…, --scenario ID, --trajectory ID or --campaign ID")
        targets = removal(store.raw, asked)
        sizes = dict(store.graphs())
        listing = "\n".join(f"  <{g.value}> ({sizes.get(g.value, 0)} triples)" for g in targets)
        if not args.yes:
            if not sys.stdin.isatty():
                raise errors.InputError(f"would remove:\n{listing}\nwithout a terminal to confirm, add --yes")
            answer = input(f"remove these {len(targets)} graph(s)?\n{listing}\n[y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("nothing was removed", file=sys.stderr)
                return EXIT_OK
        removed = remove_graphs(store, asked)
    for g in removed:
        print(f"removed <{g.value}> ({sizes.get(g.value, 0)} triples)")
    return EXIT_OK


# the formats of `diagkg query --format` for each form of query (the first: the default)
RESULT_FORMATS = ("table", "csv", "tsv", "json")          # SELECT, ASK
GRAPH_FORMATS = ("turtle", "ntriples", "json")            # CONSTRUCT, DESCRIBE


def _print_result(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples, fmt: str | None) -> None:
    graph = isinstance(result, ox.QueryTriples)
    allowed = GRAPH_FORMATS if graph else RESULT_FORMATS
    if fmt is not None and fmt not in allowed:
        raise errors.InputError(f"--format {fmt} does not apply to a {'CONSTRUCT or DESCRIBE' if graph else 'SELECT or ASK'} "
                                f"query; use one of {', '.join(allowed)}")
    fmt = fmt or allowed[0]
    if isinstance(result, ox.QueryBoolean):
        if fmt == "table":
            print(str(bool(result)).lower())
        else:          # the SPARQL results formats ("head": {} and "boolean" in JSON)
            f = {"csv": ox.QueryResultsFormat.CSV, "tsv": ox.QueryResultsFormat.TSV, "json": ox.QueryResultsFormat.JSON}[fmt]
            print((result.serialize(format=f) or b"").decode("utf-8").rstrip("\r\n"))
        return
    if isinstance(result, ox.QueryTriples):   # CONSTRUCT / DESCRIBE
        rdf_format = {"ntriples": ox.RdfFormat.N_TRIPLES, "json": ox.RdfFormat.JSON_LD}.get(fmt, ox.RdfFormat.TURTLE)
        sys.stdout.write((ox.serialize(result, format=rdf_format) or b"").decode("utf-8") + ("\n" if fmt == "json" else ""))
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
    print_table(names, rows)
    sys.stdout.flush()          # the table before the count, where both go to one pipe
    print(f"{len(rows)} row(s)", file=sys.stderr)


def _short(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None) -> str:
    if term is None:
        return ""
    value = python_value(term)
    return str(value)


def cmd_graphs(args: argparse.Namespace) -> int:
    with open_store(args, write=False) as store:
        rows = store.graphs()
        if args.format == "json":
            print(json.dumps([{"graph": g, "triples": n} for g, n in rows], indent=2))
        else:
            print_table(["graph", "kind", "triples"], [(g, graphs.kind_of(ox.NamedNode(g)) or "", n) for g, n in rows])
    return EXIT_OK


def cmd_compact(args: argparse.Namespace) -> int:
    from ..kg.compaction import disk_bytes, optimize, table_files

    open_store(args, write=False).close()          # a store that is not there yet is not made to compact it
    with open_store(args, write=True) as store:
        if store.path is None:
            say(f"nothing to compact: {store.location} is not a store on disk")
            return EXIT_OK
        files, size = len(table_files(store)), disk_bytes(store)
        seconds = optimize(store)
        print(f"compacted the store at {store.location} in {seconds:.1f} s: {files} -> {len(table_files(store))} "
              f"table files, {size / 1e6:.1f} -> {disk_bytes(store) / 1e6:.1f} MB")
    return EXIT_OK


def cmd_queries(args: argparse.Namespace) -> int:
    from ..kg.queries import library

    rows = []
    for q in library().files():
        kind = ("update" if q.is_update else "query") + (" template" if q.is_template else "")
        inputs = ", ".join(("" if q.is_template else "?") + p.name for p in q.inputs)
        rows.append((q.name, kind, inputs, q.summary))
    print_table(["name", "kind", "inputs", "what it answers"], rows)
    return EXIT_OK


def cmd_build_systems(args: argparse.Namespace) -> int:
    changed = systems.build(args.out, check=args.check)
    for key, did in changed.items():
        state = ("out of date" if args.check else "rewritten") if did else "up to date"
        print(f"{key}.ttl: {state}")
    return EXIT_VIOLATIONS if args.check and any(changed.values()) else EXIT_OK


def cmd_reason(args: argparse.Namespace) -> int:
    from ..kg.loading import ensure_shipped, infer_system

    with open_store(args, write=True) as store:
        if not store.raw.contains_named_graph(graphs.system(args.system)):
            systems.shipped_system_file(args.system)   # an unknown key: UnknownTermError listing the known ones
            ensure_shipped(store, notify=say)
        t0 = time.perf_counter()
        n = infer_system(store, args.system, engine=args.engine)
        print(f"inferred {n} triples -> <{graphs.inferred(args.system).value}> "
              f"in {time.perf_counter() - t0:.2f} s")
    return EXIT_OK



def cmd_import_scenarios(args: argparse.Namespace) -> int:
    """Import a scenario spreadsheet (CSV) through the RML mapping, validate it, optionally write Turtle."""
    from ..kg.importer import import_scenarios

    stored = None
    if not args.memory:          # a scenario may be on a system of the store (a user's own), as for validate
        try:
            stored = open_store(args, write=False)
        except errors.StoreError:
            stored = None
    try:
        result = import_scenarios(args.file, out=args.out, store=stored)
    finally:
        if stored is not None:
            stored.close()
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
              "are incomplete; add these columns to import complete scenarios (see "
              "docs/authoring/spreadsheet.md)", file=sys.stderr)
    if result.written:
        print(f"wrote {len(result.written)} Turtle file(s) to {args.out}", file=sys.stderr)
    return EXIT_OK if result.conforms else EXIT_VIOLATIONS
