"""Importing scenarios from a spreadsheet (CSV) through an RML mapping.

The Turtle files of ``scenarios/catalog/`` are the source of truth; this is
for teams that author scenarios in a spreadsheet. The table has the columns of
the original project's SCENARIOS_MASTER.csv, plus optional columns that carry
what the original kept in code (faults, faulty components, ideal repair,
removed components). The import has three steps:

1. **normalise** (:func:`normalise`, in :mod:`diagkg.kg.scenario_table`): read the CSV with the standard library,
   check the syntax of every cell and split the multi-valued ones into small
   relational tables (``scenarios.csv``, ``faults.csv``, ``repair.csv``…, see
   ``mappings/scenarios.rml.ttl``), next to two lookup tables made from the
   shipped resources (system names → keys, action ids → action types);
2. **map** (:func:`materialize`): run morph-kgc on those tables with the RML
   mapping ``mappings/scenarios.rml.ttl``, which declares every IRI and every
   triple of the result;
3. **split, write and validate**: one Turtle document per scenario
   (``NNN-ID.ttl``), validated with the SHACL shapes against the system it
   names (the store's, else the shipped one). Each violation is traced back to the CSV row and column
   it comes from.

This module holds steps 2 and 3, the results (:class:`ImportResult`) and
:func:`import_scenarios`, which runs the three; step 1's names stay importable
from here.

Library code: raises :class:`~diagkg.errors.InputError` for a table that
cannot be read (with file, row and column), never prints or exits.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

import pyoxigraph as ox
import rdflib
from rdflib.namespace import DCTERMS, RDF, RDFS, XSD

from ..errors import DiagkgError, InputError
from . import resources
from .rdfio import RdfDocument, parse_text, to_rdflib
from .scenario_table import (
    COLUMNS,
    TABLES,
    Normalised,
    ScenarioRow,
    action_lookup,
    normalise,
    read_rows,
    store_systems,
    system_lookup,
)
from .validation import FileReport, Validator, Violation, store_resolver
from .validation_store import store_collisions
from .vocab import DK, DK_NS

if TYPE_CHECKING:
    from .store import KnowledgeStore

MAPPING = "scenarios.rml.ttl"
RML_SOURCE = rdflib.URIRef("http://semweb.mmlab.be/ns/rml#source")
_XSD_STRING = ox.NamedNode(str(XSD.string))


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------

@dataclass
class ImportedScenario:
    """One scenario of the table, as Turtle, with its violations."""

    number: int
    id: str
    row: int                      # spreadsheet row (the header is row 1)
    key: str | None               # system key, None when the system is unknown
    filename: str                 # NNN-ID.ttl
    name: str                     # the document's name in messages (the written path with --out)
    turtle: str
    violations: list[Violation] = field(default_factory=list)
    columns: dict[str, str] = field(default_factory=dict, repr=False)  # field -> header as written

    @property
    def conforms(self) -> bool:
        return not self.violations

    def column_of(self, violation: Violation) -> str:
        """The CSV column a violation is about (its header as written in the file)."""
        field_ = _field_of(violation)
        return self.columns.get(field_) or COLUMNS[field_][0]

    def locate(self, violation: Violation, source: str) -> str:
        """``source:row (column) → NNN-ID.ttl:line: focus — path — message``."""
        return f"{source}:{self.row} ({self.column_of(violation)}) → {violation}"


@dataclass
class ImportResult:
    """What :func:`import_scenarios` produced."""

    source: str
    scenarios: list[ImportedScenario]
    missing_columns: tuple[str, ...] = ()     # structured columns the table lacks (their header names)
    written: list[Path] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def conforms(self) -> bool:
        return all(s.conforms for s in self.scenarios)

    @property
    def violations(self) -> list[Violation]:
        return [v for s in self.scenarios for v in s.violations]

    def lines(self) -> list[str]:
        """One located line per violation, in table order."""
        return [s.locate(v, self.source) for s in self.scenarios for v in s.violations]


# ---------------------------------------------------------------------------
# 2. map
# ---------------------------------------------------------------------------

_MORPH_LOCK = threading.Lock()


@contextlib.contextmanager
def _quiet_logging() -> Iterator[None]:
    """morph-kgc calls logging.basicConfig and sets the root level: undo both."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for h in list(root.handlers):
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)


def mapping_text() -> str:
    """The shipped RML mapping."""
    return resources.folder("mappings").joinpath(MAPPING).read_text(encoding="utf-8")


def materialize(folder: Path, mapping: str | None = None) -> list[str]:
    """Run morph-kgc with the mapping on the normalised tables in ``folder``;
    returns N-Triples lines (without the final `` .``).

    The mapping names its sources relative to the tables' folder; a copy with
    those names made absolute is written next to them.
    """
    try:
        import morph_kgc  # noqa: PLC0415 - heavy, and installed with --no-deps
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise DiagkgError(f"morph-kgc is not installed ({exc}); run `bash scripts/setup.sh`, which installs it "
                          "with --no-deps") from None
    g = rdflib.Graph()
    g.parse(data=mapping if mapping is not None else mapping_text(), format="turtle")
    for s, o in list(g.subject_objects(RML_SOURCE)):
        g.remove((s, RML_SOURCE, o))
        g.add((s, RML_SOURCE, rdflib.Literal(str((folder / str(o)).resolve()))))
    mapping_file = folder / "mapping.rml.ttl"
    g.serialize(mapping_file, format="turtle", encoding="utf-8")
    config = ("[CONFIGURATION]\n"
              "number_of_processes = 1\n"
              "logging_level = ERROR\n"
              "[Scenarios]\n"
              f"mappings = {mapping_file}\n")
    with _MORPH_LOCK, _quiet_logging():
        try:
            return sorted(morph_kgc.materialize_set(config))
        except Exception as exc:  # morph-kgc raises plain exceptions
            raise DiagkgError(f"the RML mapping failed: {type(exc).__name__}: {exc}") from exc


# ---------------------------------------------------------------------------
# 3. split, serialise, validate
# ---------------------------------------------------------------------------

def _split(graph: rdflib.Graph) -> dict[str, set[rdflib.term.Node]]:
    """Scenario identifier -> the nodes that belong to it (the scenario and every
    node of the output reachable from it)."""
    subjects = set(graph.subjects())
    out: dict[str, set[rdflib.term.Node]] = {}
    for scenario in graph.subjects(RDF.type, DK.Scenario.uri):
        ident = graph.value(scenario, DCTERMS.identifier)
        nodes: set[rdflib.term.Node] = set()
        todo = [scenario]
        while todo:
            node = todo.pop()
            if node in nodes:
                continue
            nodes.add(node)
            todo.extend(o for o in graph.objects(node) if o in subjects and o not in nodes)
        out[str(ident)] = nodes
    return out


def _turtle(graph: rdflib.Graph, nodes: set[rdflib.term.Node], row: ScenarioRow, source: str, label: str | None) -> str:
    g = rdflib.Graph(bind_namespaces="none")
    scenario = next(n for n in nodes if (n, RDF.type, DK.Scenario.uri) in graph)
    g.bind("", str(scenario).rsplit("/", 1)[0] + "/")
    if row.namespace:
        g.bind("sys", row.namespace)
    g.bind("dk", DK_NS)
    g.bind("rdfs", str(RDFS))
    g.bind("xsd", str(XSD))
    g.bind("dcterms", str(DCTERMS))
    for node in nodes:
        for p, o in graph.predicate_objects(node):
            g.add((node, p, o))
    body = g.serialize(format="turtle")
    head = (f"# Scenario {row.number} ({row.id}): {label or '(no label)'}\n"
            f"# Imported by `diagkg import-scenarios` from {Path(source).name}, row {row.row}.\n")
    return head + body


def _field_of(v: Violation) -> str:
    focus, path = v.focus, v.path
    if "/fault/" in focus:
        return "faults"
    if "/repair" in focus:
        return "repair"
    if "/configuration" in focus:
        return "removed"
    if v.shape == "import" and path == "dk:onSystem":
        return "system"
    by_path = {
        "dk:scenarioNumber": "number", "dcterms:identifier": "id", "rdfs:label": "label",
        "dk:onSystem": "system", "dk:hasCategory": "category", "dk:injects": "faults",
        "dk:faultyComponent": "faulty", "dk:idealRepair": "repair", "dk:actionBudget": "allowance",
        "dk:initialObservations": "observations", "dk:idealDiagnosis": "diagnosis",
        "dk:configuration": "removed", "dcterms:description": "description", "rdfs:comment": "context",
        "dk:actionType": "repair", "dk:permanentRepair": "permanent",
    }
    return by_path.get(path, "id")


def _problem_violations(doc: RdfDocument, scenario: rdflib.term.Node,
                        problems: Sequence[tuple[str, str, str]]) -> list[Violation]:
    focus = doc.graph.namespace_manager.normalizeUri(str(scenario))
    return [Violation(file=doc.name, focus=focus, path=path, message=message,
                      line=doc.line_of(scenario), shape="import")
            for _field, path, message in problems]


def import_scenarios(path: str | Path, out: str | Path | None = None, *, validate: bool = True,
                     validator: Validator | None = None, store: "KnowledgeStore | None" = None) -> ImportResult:
    """Import a scenario table: normalise it, map it with RML, split it into one
    Turtle document per scenario, validate them with the shapes (unless
    ``validate=False``: then only the names the normaliser could not resolve
    are reported) and,
    with ``out``, write them there as ``NNN-ID.ttl`` (conforming or not, so that
    they can be completed by hand). With ``store``, a scenario may be on one of its systems (a user's
    own), and is validated against the store's description of its system (else the shipped one)."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    norm = normalise(path, store_systems(store))
    t1 = time.perf_counter()
    timings["normalise"] = t1 - t0
    with tempfile.TemporaryDirectory(prefix="diagkg-import-") as tmp:
        norm.write(Path(tmp))
        lines = materialize(Path(tmp))
    t2 = time.perf_counter()
    timings["rml"] = t2 - t1
    data = ox.parse(input=("".join(line + " .\n" for line in lines)).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    graph = rdflib.Graph()
    for q in data:
        obj = q.object
        # plain strings stay plain (rdflib would write "…"^^xsd:string)
        obj = (rdflib.Literal(obj.value) if isinstance(obj, ox.Literal) and obj.datatype == _XSD_STRING
               and not obj.language else to_rdflib(obj))
        graph.add((to_rdflib(q.subject), to_rdflib(q.predicate), obj))
    parts = _split(graph)
    labels = {r["id"]: r["label"] for r in norm.tables["scenarios"]}
    out_dir = Path(out) if out is not None else None
    scenarios: list[ImportedScenario] = []
    docs: list[RdfDocument] = []
    for row in norm.rows:
        filename = f"{row.number:03d}-{row.id}.ttl"
        name = str(out_dir / filename) if out_dir is not None else filename
        nodes = parts.get(row.id)
        if nodes is None:  # pragma: no cover - the mapping always makes the scenario node
            raise DiagkgError(f"the RML mapping produced no scenario for {row.id} (row {row.row})")
        text = _turtle(graph, nodes, row, norm.source, labels.get(row.id))
        doc = parse_text(text, name)
        docs.append(doc)
        scenarios.append(ImportedScenario(row.number, row.id, row.row, row.key, filename, name, text,
                                          columns=norm.columns))
    t3 = time.perf_counter()
    timings["turtle"] = t3 - t2
    results = (validator or Validator()).validate_documents(docs, resolve=store_resolver(store)) if validate else {}
    # what load would refuse the written files for besides the shapes, as `diagkg validate` says it: a scenario
    # number, identifier or IRI the store holds from another file (the import said "conform" and load refused)
    claims = [FileReport(doc.name, document=doc) for doc in docs]
    if validate and store is not None:
        store_collisions(store, claims)
    for s, doc, row, claim in zip(scenarios, docs, norm.rows, claims, strict=False):
        scenario = next(doc.graph.subjects(RDF.type, DK.Scenario.uri))
        problems = _problem_violations(doc, scenario, norm.problems.get(row.id, []))
        s.violations = problems + results.get(doc.name, []) + claim.violations
    t4 = time.perf_counter()
    timings["validate"] = t4 - t3
    written: list[Path] = []
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            for s in scenarios:
                target = out_dir / s.filename
                target.write_text(s.turtle, encoding="utf-8")
                written.append(target)
        except OSError as exc:
            raise InputError(f"{out_dir}: cannot write: {exc.strerror or exc}") from None
    timings["write"] = time.perf_counter() - t4
    timings["total"] = time.perf_counter() - t0
    return ImportResult(norm.source, scenarios, norm.missing_columns, written, timings)


__all__ = ["ImportResult", "ImportedScenario", "Normalised", "import_scenarios", "normalise", "materialize",
           "read_rows", "system_lookup", "action_lookup", "COLUMNS", "TABLES"]
