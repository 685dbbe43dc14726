"""SPARQL queries kept as files, and the only ways values get into them.

Every query diagkg runs is a file in ``queries/`` (or a folder given by the
user). A file starts with a header comment::

    # One line saying what the query answers.
    #
    # complexity: one system: O(its parts)
    # inputs:
    #   ?system   (iri)      the system to describe
    # outputs:
    #   ?component ?type

Two kinds of files:

``*.rq`` / ``*.ru``
    Plain SPARQL. Inputs are query variables; values are bound as RDF terms
    through pyoxigraph's ``substitutions`` (SEP-0007), never pasted in.

``*.rq.j2`` / ``*.ru.j2``
    Jinja2 templates, for queries whose *structure* varies (a list of values, an
    optional filter) and for updates (pyoxigraph has no substitutions for
    updates). Undefined variables are errors, and every ``{{ … }}`` must go
    through the ``iri``, ``literal``, ``term`` or ``triple`` filter: printing anything else
    raises :class:`~diagkg.errors.QueryError`. Those filters emit escaped RDF
    terms, so a value can only ever be data.

The ``complexity:`` line states what the query reads as the store grows: a
scope from :data:`SCOPES` (what its inputs narrow it to), a colon, and a
bound (``one trajectory: O(its rounds)``, ``all trajectories: O(T), for export
only``). :func:`complexity_scope` reads the scope back.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping

import pyoxigraph as ox

from ..errors import QueryError, UnknownQueryError
from . import resources
from .rdfio import to_oxigraph

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

SUFFIXES = (".rq.j2", ".ru.j2", ".rq", ".ru")

RdfTerm = ox.NamedNode | ox.BlankNode | ox.Literal
Substitution = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple   # what pyoxigraph binds a variable to


class SparqlTerm(str):
    """Text of one RDF term in SPARQL syntax, produced only by the filters below."""


_RDFLIB_TYPES: dict[tuple[str, ...], tuple[Any, tuple[type, ...]]] = {}


def _is_rdflib(value: Any, *names: str) -> bool:
    """Whether ``value`` is one of rdflib's ``names`` (without importing rdflib:
    a process that has not imported it holds no rdflib term). The classes are
    looked up once per rdflib module (rdflib's attribute access is slow)."""
    rdflib = sys.modules.get("rdflib")
    if rdflib is None:
        return False
    known = _RDFLIB_TYPES.get(names)
    if known is None or known[0] is not rdflib:
        known = _RDFLIB_TYPES[names] = (rdflib, tuple(getattr(rdflib, n) for n in names))
    return isinstance(value, known[1])


def _as_term(value: Any) -> RdfTerm:
    """An RDF term for a Python value (str -> plain literal)."""
    if isinstance(value, (ox.NamedNode, ox.BlankNode, ox.Literal)):
        return value
    if _is_rdflib(value, "URIRef", "Literal"):
        return to_oxigraph(value)
    if isinstance(value, bool):
        return ox.Literal("true" if value else "false", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#boolean"))
    if isinstance(value, (int, float, str)):
        return ox.Literal(value)
    raise QueryError(f"cannot use {type(value).__name__} {value!r} as an RDF term")


def iri_filter(value: Any) -> SparqlTerm:
    """``{{ x | iri }}``: an IRI, validated and written ``<…>``."""
    if isinstance(value, ox.NamedNode):
        value = value.value
    elif _is_rdflib(value, "URIRef"):
        value = str(value)
    if not isinstance(value, str):
        raise QueryError(f"expected an IRI, got {type(value).__name__} {value!r}")
    try:
        return SparqlTerm(str(ox.NamedNode(value)))
    except ValueError as exc:
        raise QueryError(f"not a valid IRI: {value!r} ({exc})") from None


def literal_filter(value: Any, datatype: str | None = None, lang: str | None = None) -> SparqlTerm:
    """``{{ x | literal }}``: a literal with escaped quotes and newlines."""
    if datatype or lang:
        try:
            term: RdfTerm = ox.Literal(str(value), datatype=ox.NamedNode(datatype) if datatype else None, language=lang)
        except ValueError as exc:
            raise QueryError(f"bad literal {value!r}: {exc}") from None
    else:
        term = _as_term(value)
        if not isinstance(term, ox.Literal):
            raise QueryError(f"expected a literal value, got the IRI {term}")
    return SparqlTerm(str(term))


def term_filter(value: Any) -> SparqlTerm:
    """``{{ x | term }}``: any RDF term (IRIs must be pyoxigraph/rdflib IRI objects)."""
    term = _as_term(value)
    if isinstance(term, ox.BlankNode):
        raise QueryError("blank nodes cannot be written into a query")
    return SparqlTerm(str(term))


def triple_filter(value: Any) -> SparqlTerm:
    """``{{ t | triple }}``: a whole triple (subject, predicate, object) for
    ``INSERT DATA``, written by pyoxigraph's own N-Triples serialisation; blank
    nodes are allowed here, where they stand for fresh nodes."""
    if not isinstance(value, ox.Triple):
        raise QueryError(f"expected a pyoxigraph Triple, got {type(value).__name__} {value!r}")
    return SparqlTerm(str(value))


def triples_filter(value: Any) -> SparqlTerm:
    """``{{ ts | triples }}``: many triples for ``INSERT DATA``, each ending with its dot, written
    by pyoxigraph's N-Triples serialiser in one call (a triple at a time through ``triple``
    costs twenty times as much for a large graph)."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(t, ox.Triple) for t in value):
        raise QueryError(f"expected a list of pyoxigraph Triples, got {type(value).__name__}")
    return SparqlTerm((ox.serialize(value, format=ox.RdfFormat.N_TRIPLES) or b"").decode("utf-8"))


# what a SPARQL text holds that is not a prefixed name: IRIs, strings, comments
_SKIP = r'<[^<>"{}|^`\\\s]*>|"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#[^\n]*'
_NAMES = re.compile(_SKIP + r"|(?<![\w?$:@.-])([A-Za-z][\w-]*(?:\.[\w-]+)*)?:")
_DECLARED = re.compile(r"(?i)\bPREFIX\s+([A-Za-z][\w-]*(?:\.[\w-]+)*)?:\s*<")


def undeclared_prefix(text: str) -> tuple[str, int, int] | None:
    """The first prefix a SPARQL text uses without declaring it, with its line and column."""
    declared = {m.group(1) or "" for m in _DECLARED.finditer(text)}
    for m in _NAMES.finditer(text):
        if m.group(0).startswith(("<", '"', "'", "#")):
            continue
        prefix = m.group(1) or ""
        if prefix not in declared and prefix != "_":
            line = text.count("\n", 0, m.start()) + 1
            column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            return prefix, line, column
    return None


def explain_syntax_error(name: str, text: str, exc: SyntaxError) -> str:
    """One readable line for a query or update that does not parse: an
    undeclared prefix is named (the parser itself only says what it expected)."""
    missing = undeclared_prefix(text)
    if missing is not None:
        prefix, line, column = missing
        return f"{name}: line {line}, column {column}: prefix {prefix}: is not declared (add PREFIX {prefix}: <…>)"
    message = " ".join(str(exc).split())
    if len(message) > 300:
        message = message[:300] + "…"
    return f"{name}: {message}"


def _finalize(value: Any) -> str:
    if isinstance(value, SparqlTerm):
        return value
    raise QueryError(
        f"a template printed {value!r} without the iri, literal or term filter; "
        "values must go through one of them"
    )


# the scopes a query's ``complexity:`` line may state, and whether the query then reads every
# trajectory of the store (or of a campaign, which may hold them all)
SCOPES: dict[str, bool] = {
    "constant": False,           # a key looked up, a graph's presence: O(1) index reads
    "the catalogue": False,      # the ontology and catalogues: O(catalogue), whatever the store holds
    "one system": False,         # one system's graph (its parts, ports, connections)
    "one scenario": False,       # one scenario's statements
    "one part": False,           # one part and its neighbours (ports, enclosure, affordances)
    "one resource": False,       # one IRI's statements (its types, its graphs)
    "one graph": False,          # one named graph's triples (a state, the ontology)
    "one trajectory": False,     # one trajectory's graph (its rounds, calls)
    "one slot": False,           # one assistant on one scenario: O(the trajectories on that scenario)
    "one campaign": False,       # one campaign's own graph, slot tallies or records: O(slots), not O(trajectories)
    "all campaigns": False,      # every campaign's own node: O(campaigns)
    "all systems": False,        # every system: O(systems × parts)
    "all scenarios": False,      # every scenario: O(scenarios)
    "all loaded graphs": False,  # the graphs loaded from files (ontology, systems, scenarios): O(those graphs)
    "the graphs written": False,  # an update's own graphs: O(the triples written or replaced)
    "a campaign's trajectories": True,   # every trajectory of one campaign: O(its trajectories)
    "all trajectories": True,    # every trajectory in the store: O(T)
    "all graphs": True,          # every named graph, each trajectory's among them: O(graphs) >= O(T)
    "the whole store": True,     # every quad: O(quads)
}


def complexity_scope(statement: str) -> str | None:
    """The scope a ``complexity:`` statement names (``None`` when it names none of :data:`SCOPES`)."""
    head = statement.split(":", 1)[0].strip().lower()
    return head if head in SCOPES else None


@dataclass(frozen=True)
class Param:
    """One input declared in a query's header."""

    name: str
    kind: str  # "iri", "literal", "term", "list of iri", "flag"…
    doc: str = ""
    optional: bool = False


@dataclass
class QueryFile:
    """A query or update file and its header."""

    name: str
    source: str
    text: str
    summary: str
    inputs: list[Param] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    complexity: str = ""      # the header's ``complexity:`` statement ("" when it states none)

    @property
    def is_template(self) -> bool:
        return self.source.endswith(".j2")

    @property
    def is_update(self) -> bool:
        return ".ru" in self.source

    def render(self, **values: Any) -> str:
        """The SPARQL text; templates are rendered with ``values`` (strictly)."""
        if not self.is_template:
            if values:
                raise QueryError(f"{self.name} is not a template; bind its variables instead")
            return self.text
        import jinja2

        try:
            key: Hashable = (self.text, tuple(sorted(values.items())))
            known = _RENDERED.get(key)
        except TypeError:            # an unhashable value (a list): rendered every time
            key = known = None
        if known is not None:
            return known
        try:
            text = _compiled(self.text).render(**values)
        except jinja2.UndefinedError as exc:
            raise QueryError(f"{self.name}: {exc.message}") from None
        except jinja2.TemplateError as exc:
            raise QueryError(f"{self.name}: template error: {exc}") from None
        if key is not None:
            if len(_RENDERED) >= 8192:
                _RENDERED.clear()
            _RENDERED[key] = text
        return text

    def substitutions(self, values: Mapping[str, Any]) -> dict[ox.Variable, Substitution]:
        """pyoxigraph substitutions for a plain query; names must be declared inputs."""
        declared = {p.name for p in self.inputs}
        out: dict[ox.Variable, Substitution] = {}
        for name, value in values.items():
            if name not in declared:
                raise QueryError(
                    f"{self.name} has no input ?{name}; its inputs are: "
                    f"{', '.join('?' + n for n in sorted(declared)) or '(none)'}"
                )
            out[ox.Variable(name)] = _as_term(value)
        return out


# a template's text rendered with the same values renders the same (the filters are pure):
# sessions render the same updates over and over (a model-based assistant's worlds above all)
_RENDERED: dict[Hashable, str] = {}


@lru_cache(maxsize=256)
def _compiled(text: str) -> jinja2.Template:
    """A template compiled once per text (compiling costs far more than rendering)."""
    return _environment().from_string(text)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, autoescape=False, finalize=_finalize,
        keep_trailing_newline=True,
    )
    env.filters.update(iri=iri_filter, literal=literal_filter, term=term_filter, triple=triple_filter,
                       triples=triples_filter)
    return env


_PARAM = re.compile(r"^\?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\((?P<kind>[^)]*)\))?\s*(?P<doc>.*)$")
_TEMPLATE_PARAM = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\((?P<kind>[^)]*)\))?\s*(?P<doc>.*)$")


def parse_header(name: str, source: str, text: str) -> QueryFile:
    """Read the header comment of a query file."""
    summary_lines: list[str] = []
    inputs: list[Param] = []
    outputs: list[str] = []
    complexity: list[str] = []
    section = "summary"
    for raw in text.splitlines():
        if not raw.startswith("#"):
            if raw.strip() == "" and section == "summary" and not summary_lines:
                continue
            break
        line = raw[1:].strip()
        low = line.lower()
        if low.startswith("inputs:"):
            section, line = "inputs", line[7:].strip()
        elif low.startswith("outputs:"):
            section, line = "outputs", line[8:].strip()
        elif low.startswith("complexity:"):
            section, line = "complexity", line[11:].strip()
        if not line or line == "(none)":
            continue
        if section == "summary":
            summary_lines.append(line)
        elif section == "complexity":
            complexity.append(line)
        elif section == "inputs":
            m = (_TEMPLATE_PARAM if source.endswith(".j2") and not line.startswith("?") else _PARAM).match(line)
            if m:
                kind = (m.group("kind") or "term").strip()
                inputs.append(Param(m.group("name"), kind.replace(", optional", "").strip(),
                                    m.group("doc").strip(), optional="optional" in kind))
        else:
            outputs.extend(tok.lstrip("?") for tok in line.split() if tok.startswith("?"))
    if not summary_lines:
        raise QueryError(f"{source}: a query file must start with a comment saying what it does")
    return QueryFile(name, source, text, " ".join(summary_lines), inputs, outputs, " ".join(complexity))


def _query_name(filename: str) -> str | None:
    for suffix in SUFFIXES:
        if filename.endswith(suffix):
            return filename[: -len(suffix)]
    return None


class QueryLibrary:
    """The query files of ``queries/`` (and of any extra folders), by name."""

    def __init__(self, extra: Iterable[str | Path] = ()):
        self._files: dict[str, QueryFile] = {}
        roots: list[Traversable] = [resources.folder("queries")] + [Path(p) for p in extra]
        for root in roots:
            for entry in sorted(root.iterdir(), key=lambda e: e.name):
                name = _query_name(entry.name)
                if name is None or not entry.is_file():
                    continue
                if name in self._files:
                    raise QueryError(f"two query files are named {name!r}")
                self._files[name] = parse_header(name, entry.name, entry.read_text(encoding="utf-8"))

    def names(self) -> list[str]:
        return sorted(self._files)

    def __contains__(self, name: str) -> bool:
        return name in self._files

    def get(self, name: str) -> QueryFile:
        try:
            return self._files[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._files, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownQueryError(f"no query named {name!r} in queries/{hint}") from None

    def files(self) -> list[QueryFile]:
        return [self._files[n] for n in self.names()]


@lru_cache(maxsize=1)
def library() -> QueryLibrary:
    """The shipped query library (cached)."""
    return QueryLibrary()


_UPDATE_KEYWORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH")
_PROLOGUE = re.compile(r"\s*(?:#[^\n]*\n|PREFIX\s+[^\s:]*:\s*<[^>]*>|BASE\s+<[^>]*>|\s+)", re.IGNORECASE)


def is_update_text(text: str) -> bool:
    """Is this SPARQL text an update (its first keyword after the prologue)?"""
    pos = 0
    while True:
        m = _PROLOGUE.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
    word = re.match(r"[A-Za-z]+", text[pos:])
    return word is not None and word.group(0).upper() in _UPDATE_KEYWORDS


def _first_word(text: str) -> str:
    """The first keyword of SPARQL text after its prologue, in lower case ('' when none)."""
    pos = 0
    while True:
        m = _PROLOGUE.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
    word = re.match(r"[A-Za-z]+", text[pos:])
    return word.group(0).lower() if word else ""


def is_query_text(text: str) -> bool:
    """Does this SPARQL text start as a query (SELECT, ASK, CONSTRUCT, DESCRIBE after the prologue)?"""
    return _first_word(text) in ("select", "ask", "construct", "describe")


def query_form(text: str) -> str:
    """The form of SPARQL text: ``select``, ``ask``, ``construct``, ``describe`` (its first keyword after
    the prologue), or ``update``."""
    if is_update_text(text):
        return "update"
    form = _first_word(text)
    return form if form in ("select", "ask", "construct", "describe") else "select"


def read_query_file(path: Path) -> QueryFile:
    """A query or update file of one's own, with its header (its inputs) when it has one, else as inline text."""
    text = path.read_text(encoding="utf-8")
    try:
        return parse_header(path.stem, path.name, text)
    except QueryError:
        return from_text(text, path.name)


def from_text(text: str, name: str = "inline", *, update: bool | None = None) -> QueryFile:
    """A query or update given inline (no header needed); it takes no inputs. ``update``: what it is meant to
    be (None: its first keyword says)."""
    suffix = ".ru" if (is_update_text(text) if update is None else update) else ".rq"
    return QueryFile(name, name + suffix, text, "inline " + ("update" if suffix == ".ru" else "query"))


# -- bound values as a VALUES block (a remote store; a variable Oxigraph will not substitute) -----

_KEYWORDS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE",
             "WHERE")
# after these the next "{" opens the pattern (after CONSTRUCT it opens the template)
_OPENS_PATTERN = frozenset(_KEYWORDS) - {"CONSTRUCT"}
_TOKENS = re.compile(_SKIP + r"|(?P<word>\b(?:" + "|".join(_KEYWORDS) + r")\b)|(?P<open>\{)|(?P<close>\})", re.IGNORECASE)


def _where_brace(text: str) -> int:
    """The offset just after the ``{`` that opens the query's outermost WHERE group."""
    form: str | None = None
    depth = 0
    for m in _TOKENS.finditer(text):
        word = m.group("word")
        if word is not None:
            word = word.upper()
            if form is None and word != "WHERE":
                form = word
            elif depth == 0 and word == "WHERE" and form is not None:
                form = "WHERE"
        elif m.group("open") is not None:
            if depth == 0 and form in _OPENS_PATTERN:
                return m.end()
            depth += 1
        elif m.group("close") is not None:
            depth -= 1
    raise QueryError("cannot bind values: no WHERE group found in the query")


def term_text(term: Substitution) -> str:
    """One bound value as SPARQL text (pyoxigraph's own escaping)."""
    if isinstance(term, ox.BlankNode):
        raise QueryError("a blank node cannot be bound in a query sent to a remote store")
    return str(term)


def bind_values(text: str, substitutions: Mapping[ox.Variable, Substitution]) -> str:
    """The query with its bound variables given as a ``VALUES`` block at the start of its
    outermost WHERE group (what pyoxigraph's substitutions do, in standard SPARQL)."""
    if not substitutions:
        return text
    names = " ".join(str(v) for v in substitutions)
    values = " ".join(term_text(t) for t in substitutions.values())
    at = _where_brace(text)
    return f"{text[:at]} VALUES ({names}) {{ ({values}) }} {text[at:]}"
