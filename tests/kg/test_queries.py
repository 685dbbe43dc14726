"""Queries live in files, and values can only ever be data.

Every shipped query and template is run with hostile values (quotes, braces,
``DROP ALL``, newlines, ``>``): plain queries get them as pyoxigraph
substitutions, templates through the escaping filters. The store must come out
unchanged (for queries) or changed only as intended (for updates).
"""

from __future__ import annotations

import re

import pyoxigraph as ox
import pytest

from diagkg.errors import QueryError, UnknownQueryError
from diagkg.kg.loading import load_files
from diagkg.kg.queries import QueryFile, QueryLibrary, library, parse_header
from diagkg.kg.store import KnowledgeStore

from ..support.paths import ROOT, THREE_CUBES

HOSTILE = [
    'a" } ; DROP ALL ; INSERT DATA { <urn:x> <urn:y> "z',
    "a' } DROP ALL #",
    "}\n DROP ALL\n{",
    "x> . DROP ALL . <y",
    '\\" ; CLEAR DEFAULT ; #',
    "line1\nline2\r\n\"quoted\"",
    "{{ 7*7 }}",
]

SYSTEM = "https://w3id.org/diagkg/system/three_cubes/three_cubes"
GRAPH = "https://w3id.org/diagkg/graph/system/three_cubes"
STATE = "https://w3id.org/diagkg/graph/state/hostile"


@pytest.fixture(scope="module")
def three_cubes_quads() -> list[ox.Quad]:
    """What loading three_cubes writes (validated and reasoned over once for the module: ~1,000 tests
    each loaded it again, most of this file's time)."""
    with KnowledgeStore.memory() as s:
        load_files(s, [THREE_CUBES])
        return list(s.raw.quads_for_pattern(None, None, None, None))


@pytest.fixture()
def loaded(store, three_cubes_quads):
    """A fresh store holding exactly what the load wrote (each test may change it)."""
    store.add_quads(three_cubes_quads)
    return store


@pytest.fixture(scope="module")
def loaded_once(three_cubes_quads):
    """One store holding what the load wrote, for the read-only queries of the module (a query
    cannot write: Oxigraph parses a query and an update apart; ``test_a_query_cannot_write``)."""
    with KnowledgeStore.memory() as s:
        s.add_quads(three_cubes_quads)
        yield s
        # each test checks the count; what the store holds, quad for quad, once they are all done
        assert _snapshot(s) == set(three_cubes_quads), "a read-only query changed the shared store"


@pytest.fixture(scope="module")
def three_cubes_set(three_cubes_quads) -> frozenset:
    return frozenset(three_cubes_quads)


def _snapshot(store) -> set:
    return set(store.raw.quads_for_pattern(None, None, None, None))


def test_every_query_file_has_a_header():
    lib = library()
    assert lib.names(), "queries/ is empty"
    for q in lib.files():
        assert q.summary and q.summary != "inline query"
        assert q.outputs or q.is_update or "ASK" in q.text, f"{q.name} declares no outputs"


@pytest.mark.parametrize("name", library().names())
@pytest.mark.parametrize("hostile", HOSTILE, ids=[f"h{i}" for i in range(len(HOSTILE))])
def test_hostile_values_stay_data(name, hostile, request, three_cubes_set):
    q = library().get(name)
    before = three_cubes_set                     # what ``loaded`` holds
    # an update gets a store of its own; the queries share one, which must not change either
    loaded = request.getfixturevalue("loaded" if q.is_update else "loaded_once")

    def unchanged() -> bool:     # quad for quad in a store of its own; the shared one at its teardown
        return _snapshot(loaded) == before if q.is_update else len(loaded.raw) == len(before)

    if not q.is_template:
        # plain query: every input bound as a literal and as an IRI-looking literal
        for p in q.inputs:
            result = loaded.query(q, {p.name: ox.Literal(hostile)})
            list(result) if isinstance(result, ox.QuerySolutions) else None
        assert unchanged()
        return
    values = {}
    for p in q.inputs:
        if p.kind == "literal":
            values[p.name] = hostile
        elif p.kind.startswith("list"):
            values[p.name] = [hostile]
        else:
            values[p.name] = hostile
    # hostile text in an IRI position is refused outright
    if any(p.kind != "literal" for p in q.inputs):
        with pytest.raises(QueryError):
            q.render(**values)
    # with legitimate IRIs, hostile literals render, parse and stay literals
    target_graph = None
    for p in q.inputs:
        if p.kind == "iri":
            if p.name == "state":
                values[p.name] = target_graph = STATE
            elif "graph" in p.doc:
                values[p.name] = GRAPH
                target_graph = target_graph or (GRAPH if p.name == "graph" else None)
            elif p.name == "system":
                values[p.name] = SYSTEM
            else:
                values[p.name] = SYSTEM.rsplit("/", 1)[0] + "/main_bulb"
        elif p.kind == "list of graph":   # graphs to write: hostile text as a literal of a triple
            label = ox.Triple(ox.NamedNode(SYSTEM.rsplit("/", 1)[0] + "/main_bulb"),
                              ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label"), ox.Literal(hostile))
            values[p.name] = [{"name": GRAPH, "triples": [label]}]
            target_graph = GRAPH
        elif p.kind.startswith("list"):
            values[p.name] = ["https://w3id.org/diagkg/ontology#Bulb"]
    text = q.render(**values)
    if q.is_update:
        loaded.update(q, **values)
        after = _snapshot(loaded)
        changed = before ^ after
        assert all(quad.graph_name == ox.NamedNode(target_graph) for quad in changed), "update escaped its graph"
        strings = [quad.object.value for quad in after - before
                   if isinstance(quad.object, ox.Literal) and quad.object.datatype.value.endswith("#string")]
        assert all(s == hostile for s in strings)
    else:
        result = loaded.query(q, **values)
        if isinstance(result, ox.QuerySolutions):
            list(result)
        assert unchanged()
    assert "DROP ALL" not in re.sub(r'"(?:[^"\\]|\\.)*"', '""', text), "hostile text escaped its literal"


def test_a_query_cannot_write(loaded):
    """Why the read-only queries above share one store: text that would write, handed to the store
    as a query (rendered or with bound values), is refused and changes nothing."""
    before = _snapshot(loaded)
    for text in ("DROP ALL", "INSERT DATA { <urn:x> <urn:y> <urn:z> }",
                 "SELECT * WHERE { ?s ?p ?o } ; DROP ALL", "ASK {} DELETE WHERE { ?s ?p ?o }"):
        with pytest.raises(SyntaxError):
            loaded.raw.query(text)
    assert _snapshot(loaded) == before


def test_update_round_trips_the_exact_string(loaded):
    hostile = HOSTILE[0] + "\n" + HOSTILE[3]
    loaded.update("set-label", graph=GRAPH, part=SYSTEM.rsplit("/", 1)[0] + "/main_bulb", label=hostile)
    rows = loaded.select("system-components", {"system": ox.NamedNode(SYSTEM)})
    labels = {r["id"]: r["label"] for r in rows}
    assert labels["main_bulb"] == hostile
    assert len(loaded.graphs()) == 4      # ontology, shapes, the system and its inferences


def test_plain_substitution_binds_an_iri(loaded):
    rows = loaded.select("system-components", {"system": ox.NamedNode(SYSTEM)})
    assert {"main_bulb", "battery", "ctrl_switch"} <= {r["id"] for r in rows}
    assert loaded.select("system-components", {"system": ox.Literal(SYSTEM)}) == []


def test_template_refuses_unfiltered_output():
    q = QueryFile("t", "t.rq.j2", "# t\nSELECT * WHERE { ?s ?p {{ x }} }", "t")
    with pytest.raises(QueryError, match="without the iri, literal or term filter"):
        q.render(x="<urn:a> . } DROP ALL {")


def test_template_undefined_variable_is_an_error():
    q = library().get("components-of-types")
    with pytest.raises(QueryError, match="undefined"):
        q.render(system=SYSTEM)


def test_unknown_input_is_refused():
    q = library().get("system-components")
    with pytest.raises(QueryError, match="no input"):
        q.substitutions({"nope": ox.Literal("x")})


def test_unknown_query_name_suggests():
    with pytest.raises(UnknownQueryError, match="did you mean graph-summary"):
        library().get("graph-sumary")


def test_header_without_summary_is_refused():
    with pytest.raises(QueryError):
        parse_header("x", "x.rq", "SELECT * WHERE { ?s ?p ?o }")


def test_extra_query_folder(tmp_path):
    (tmp_path / "mine.rq").write_text("# Count triples.\n# outputs: ?n\nSELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\n")
    lib = QueryLibrary([tmp_path])
    assert "mine" in lib and "graph-summary" in lib


def test_no_sparql_in_python_sources():
    pattern = re.compile(r"\b(SELECT|CONSTRUCT|ASK|DESCRIBE|INSERT|DELETE)\b[^\n]{0,200}\bWHERE\b|PREFIX\s+\w*:\s*<", re.I)
    offenders = []
    for py in (ROOT / "platform" / "diagkg").rglob("*.py"):
        for n, line in enumerate(py.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{py.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_every_template_named_in_the_catalogues_exists():
    from diagkg.kg.validation import default_ontology
    from diagkg.kg.vocab import DK

    names = {str(o) for o in default_ontology().objects(None, DK.updateTemplate.uri)}
    assert names and names <= set(library().names())
