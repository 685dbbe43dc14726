"""Reading RDF files, with precise locations when they are malformed.

Files are parsed by pyoxigraph first: it is fast and its syntax errors carry a
line and a column. The same text is then read into an rdflib graph only when a
caller needs one (pySHACL works on rdflib graphs; handing it a pyoxigraph store
gives false ``sh:in`` violations).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import pyoxigraph as ox

from ..errors import InputError, RdfSyntaxError, SourceLocation

if TYPE_CHECKING:  # pragma: no cover
    import rdflib

# a literal of a user's file that is not of its datatype ("ten"^^xsd:integer) is a violation the shapes name, at
# its line; rdflib also logged a warning with a traceback for it, which the command line printed before the report
logging.getLogger("rdflib.term").setLevel(logging.ERROR)

# file suffix -> (pyoxigraph format, rdflib format name)
FORMATS: dict[str, tuple[ox.RdfFormat, str]] = {
    ".ttl": (ox.RdfFormat.TURTLE, "turtle"),
    ".nt": (ox.RdfFormat.N_TRIPLES, "nt"),
    ".n3": (ox.RdfFormat.N3, "n3"),
    ".trig": (ox.RdfFormat.TRIG, "trig"),
    ".nq": (ox.RdfFormat.N_QUADS, "nquads"),
    ".rdf": (ox.RdfFormat.RDF_XML, "xml"),
    ".owl": (ox.RdfFormat.RDF_XML, "xml"),
    ".jsonld": (ox.RdfFormat.JSON_LD, "json-ld"),
}

_LOCATION = re.compile(r"line (\d+) column (\d+)")


@dataclass
class RdfDocument:
    """One RDF file (or text) that parsed without syntax errors."""

    name: str
    text: str
    rdf_format: ox.RdfFormat
    rdflib_format: str
    triples: list[ox.Triple] = field(repr=False)
    # for dataset formats (N-Quads, TriG): the triples of each named graph, by graph IRI
    named_graphs: dict[str, list[ox.Triple]] = field(default_factory=dict, repr=False)

    @cached_property
    def graph(self) -> rdflib.Graph:
        """The document as an rdflib graph, with its prefixes bound."""
        import rdflib

        g = rdflib.Graph()
        g.parse(data=self.text, format=self.rdflib_format)
        return g

    def line_of(self, term: rdflib.term.Node, start: int = 1) -> int | None:
        """The first line (from line ``start`` on) where ``term`` is written, as a full IRI or a prefixed name."""
        forms = self._forms(term)
        if not forms:
            return None
        for number, line in enumerate(self.text.splitlines(), start=1):
            if number >= start and _writes(line, forms):
                return number
        return None

    def statement_line(self, subject: rdflib.term.Node, predicate: rdflib.term.Node,
                       value: rdflib.term.Node | None = None) -> int | None:
        """The line where the statement ``subject predicate value`` is written, as far as the text shows it: in a
        block of statements about ``subject`` (a line that begins with it, up to the line that ends with ``.``),
        the first line that writes ``value`` (an IRI), else the first that writes ``predicate``; None when neither
        is found (a caller falls back to the subject's line). A typo'd connection written apart from the port's
        declaration (``:plate_r.n dk:connectedTo :plate_lde.anode .``) is found at that line, a coupling's
        ``dk:closedWhen`` at its own line, not at the coupling's first."""
        subjects = self._forms(subject)
        if not subjects:
            return None
        lines = self.text.splitlines()
        blocks: list[range] = []
        for i, line in enumerate(lines):
            text = line.lstrip()
            if subject_form := next((f for f in subjects if text.startswith(f) and text[len(f):len(f) + 1] in ("", " ", "\t")),
                                    None):
                end = next((j for j in range(i, len(lines)) if _COMMENT.sub("", lines[j]).rstrip().endswith(".")),
                           len(lines) - 1)
                blocks.append(range(i, end + 1))
                # the block's first line without its subject: a port connected to itself is not found where it is declared
                lines[i] = " " * (len(line) - len(text) + len(subject_form)) + text[len(subject_form):]
        for term in (value, predicate):
            forms = self._forms(term) if term is not None else []
            for block in blocks if forms else ():
                found = next((j + 1 for j in block if _writes(lines[j], forms)), None)
                if found is not None:
                    return found
        return None

    def _forms(self, term: rdflib.term.Node) -> list[str]:
        """How an IRI may be written here: in full, or as a prefixed name (none for another term)."""
        import rdflib

        if not isinstance(term, rdflib.URIRef):
            return []
        candidates = [f"<{term}>"]
        for prefix, namespace in self.graph.namespaces():
            ns = str(namespace)
            if term.startswith(ns) and len(term) > len(ns):
                candidates.append(f"{prefix}:{term[len(ns):]}")
        return candidates


_COMMENT = re.compile(r"\s#[^>\"]*$")


def _writes(line: str, candidates: Sequence[str]) -> bool:
    """Whether ``line`` writes one of ``candidates`` as a whole term (``:main_bulb`` is not in ``:main_bulb.p``)."""
    for cand in candidates:
        idx = line.find(cand)
        while idx >= 0:
            end = idx + len(cand)
            before_ok = idx == 0 or not (line[idx - 1].isalnum() or line[idx - 1] in "_-:.")
            after_ok = end == len(line) or not (line[end].isalnum() or line[end] in "_-:")
            if line[end:end + 1] == "." and end + 1 < len(line) and (line[end + 1].isalnum() or line[end + 1] == "_"):
                after_ok = False  # ':main_bulb' inside ':main_bulb.p'
            if before_ok and after_ok:
                return True
            idx = line.find(cand, idx + 1)
    return False


def format_for(path: Path) -> tuple[ox.RdfFormat, str]:
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        raise InputError(
            f"{path}: cannot tell the RDF format from the suffix {path.suffix!r} "
            f"(known: {', '.join(sorted(FORMATS))})"
        ) from None


def parse_text(text: str, name: str, suffix: str = ".ttl", base_iri: str | None = None) -> RdfDocument:
    """Parse RDF text; ``name`` is used in error messages. A byte-order mark at its start is dropped (an
    editor on Windows may write one; it was read as the first subject: "﻿ is not a valid subject")."""
    text = text.removeprefix("\ufeff")
    rdf_format, rdflib_format = format_for(Path("x" + suffix))
    try:
        quads = list(ox.parse(input=text.encode("utf-8"), format=rdf_format, base_iri=base_iri))
    except SyntaxError as exc:
        raise _syntax_error(exc, name) from None
    named: dict[str, list[ox.Triple]] = {}
    for q in quads:
        if isinstance(q.graph_name, ox.NamedNode):
            named.setdefault(q.graph_name.value, []).append(q.triple)
    return RdfDocument(name, text, rdf_format, rdflib_format, [q.triple for q in quads], named)


def document_of(triples: Sequence[ox.Triple], name: str, prefixes: Mapping[str, str] | None = None) -> RdfDocument:
    """``triples`` as the document Oxigraph writes of them (Turtle with ``prefixes``, N-Triples without):
    a violation is located in that text, and nothing is parsed to get there (rdflib reads the text only
    if the document's graph is asked for)."""
    if prefixes:
        rdf_format, rdflib_format = ox.RdfFormat.TURTLE, "turtle"
        data = ox.serialize(triples, format=rdf_format, prefixes=dict(prefixes))
    else:
        rdf_format, rdflib_format = ox.RdfFormat.N_TRIPLES, "nt"
        data = ox.serialize(triples, format=rdf_format)
    return RdfDocument(name, (data or b"").decode("utf-8"), rdf_format, rdflib_format, list(triples))


def parse_file(path: str | Path) -> RdfDocument:
    """Parse one RDF file, raising :class:`InputError` when it cannot be read."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    return parse_text(text, str(path), path.suffix.lower(), base_iri=path.resolve().as_uri())


def _syntax_error(exc: SyntaxError, name: str) -> RdfSyntaxError:
    message = str(exc.args[0]) if exc.args else str(exc)
    line = column = None
    if len(exc.args) > 1 and isinstance(exc.args[1], tuple) and len(exc.args[1]) >= 3:
        line, column = exc.args[1][1], exc.args[1][2]
    if line is None:
        m = _LOCATION.search(message)
        if m:
            line, column = int(m.group(1)), int(m.group(2))
    detail = re.sub(r"^Parser error (between|at) line \d+ column \d+( and line \d+ column \d+)?: ", "", message)
    detail = re.sub(r"^Parser error at line \d+ (between columns \d+ and \d+|column \d+): ", "", detail)
    prefix = re.fullmatch(r"The prefix (\S*:) has not been declared", detail)
    if prefix:      # the position is already in the location
        detail = f"prefix {prefix.group(1)} is not declared (add @prefix {prefix.group(1)} <…> .)"
    return RdfSyntaxError(SourceLocation(name, line, column), f"malformed RDF: {detail}")


def expand_paths(paths: Iterable[str | Path], suffixes: Sequence[str] = tuple(FORMATS)) -> list[Path]:
    """Files named directly, plus the RDF files inside any folder named (recursively, sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in suffixes)
            out.extend(found)
        else:
            out.append(p)
    return out


XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def datetime_literal(moment: datetime) -> ox.Literal:
    """``moment`` as an ``xsd:dateTime`` literal (its ISO form, offset included when it has one)."""
    return ox.Literal(moment.isoformat(), datatype=ox.NamedNode(XSD_DATETIME))


def value_of(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple) -> str:
    """The value of a term: an IRI, a blank node's id, a literal's lexical form;
    a triple term (RDF 1.2), which has none, in N-Triples syntax."""
    if isinstance(term, ox.Triple):
        return str(term)
    return term.value


def to_rdflib(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple) -> rdflib.term.Node:
    """Convert a pyoxigraph term to its rdflib equivalent (a triple term has none: TypeError)."""
    import rdflib

    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return rdflib.BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language)
        if term.datatype.value == XSD_STRING:
            # RDF 1.1: a simple literal *is* an xsd:string; rdflib keeps them
            # apart, and parsed files give plain ones, so stored strings must too
            return rdflib.Literal(term.value)
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))
    raise TypeError(f"cannot convert {term!r}")


def to_oxigraph(term: rdflib.term.Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    """Convert an rdflib term to its pyoxigraph equivalent."""
    import rdflib

    if isinstance(term, rdflib.URIRef):
        return ox.NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return ox.BlankNode(str(term))
    if isinstance(term, rdflib.Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        if term.datatype:
            return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)))
        return ox.Literal(str(term))
    raise TypeError(f"cannot convert {term!r}")


def to_oxigraph_triple(triple: tuple[rdflib.term.Node, rdflib.term.Node, rdflib.term.Node]) -> ox.Triple:
    """Convert an rdflib triple to a pyoxigraph triple."""
    subject, predicate, obj = (to_oxigraph(t) for t in triple)
    if isinstance(subject, ox.Literal) or not isinstance(predicate, ox.NamedNode):
        raise TypeError(f"cannot convert {triple!r}: not an RDF triple")
    return ox.Triple(subject, predicate, obj)


def quads_of(quads: Sequence[ox.Quad] | bytes) -> Sequence[ox.Quad]:
    """``quads``, parsed where they come as N-Quads."""
    return list(ox.parse(quads, format=ox.RdfFormat.N_QUADS)) if isinstance(quads, bytes) else quads


def python_value(term: Any) -> Any:
    """A Python value for an RDF term: str for IRIs and strings, numbers, bools."""
    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    if isinstance(term, ox.Literal):
        dt = term.datatype.value
        xsd = "http://www.w3.org/2001/XMLSchema#"
        try:
            if dt in (xsd + "integer", xsd + "int", xsd + "long", xsd + "positiveInteger", xsd + "nonNegativeInteger"):
                return int(term.value)
            if dt in (xsd + "decimal", xsd + "double", xsd + "float"):
                return float(term.value)
            if dt == xsd + "boolean":
                return term.value in ("true", "1")
        except ValueError:
            return term.value
        return term.value
    return str(term)
