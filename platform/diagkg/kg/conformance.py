"""A quick conformance check compiled from the shapes: which focus nodes pySHACL could find at fault.

pySHACL is the reference engine: every violation diagkg reports is pySHACL's.
It is also slow (rdflib evaluates each SPARQL constraint once per focus node),
and most documents conform. This module compiles the shapes once into plain
checks on pyoxigraph terms (targets, counts, datatypes, classes, lists, ranges,
patterns, nested shapes) and runs their SPARQL constraints with Oxigraph, each
pre-bound to its focus node (``substitutions``, the SHACL pre-binding). It says,
for each focus node, *conforms*, *violates* or *cannot tell*; a document all of
whose focus nodes conform is done without pySHACL, and pySHACL validates the
others (:mod:`diagkg.kg.validation`). The check never reports anything itself.

It is conservative by construction: where rdflib's reading of a term could
differ from Oxigraph's (a literal's lexical form rdflib normalises, a datatype
it parses its own way, a string written with an explicit ``^^xsd:string``) it
answers *cannot tell*; a shapes graph that uses a SHACL feature it does not
compile raises :class:`Unsupported`, and then pySHACL validates everything.
``tests/kg/test_conformance.py`` checks that both ways give the same report
on the whole shipped catalogue and on every broken file of the shape tests.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import AbstractSet as Set
from typing import Any, Callable, Iterable, Mapping, Sequence

import pyoxigraph as ox

Term = ox.NamedNode | ox.BlankNode | ox.Literal

SH = "http://www.w3.org/ns/shacl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
RDF_TYPE = RDF + "type"
SUBCLASS = RDFS + "subClassOf"
LANG_STRING = RDF + "langString"

# what a check answers for one node: True conforms, False violates, None cannot tell
Verdict = bool | None


class Unsupported(Exception):
    """The shapes use a SHACL feature this check does not compile."""


# shape parameters that do not constrain (or that the compiler reads with another one)
_IGNORED = {SH + n for n in ("message", "name", "description", "order", "group", "severity", "defaultValue",
                             "targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf", "path",
                             "flags", "prefixes", "declare", "prefix", "namespace", "select", "labelTemplate")}
_KINDS = {SH + "IRI": (ox.NamedNode,), SH + "BlankNode": (ox.BlankNode,), SH + "Literal": (ox.Literal,),
          SH + "BlankNodeOrIRI": (ox.BlankNode, ox.NamedNode), SH + "BlankNodeOrLiteral": (ox.BlankNode, ox.Literal),
          SH + "IRIOrLiteral": (ox.NamedNode, ox.Literal)}
_RANGES = {SH + "minInclusive": lambda v, b: v >= b, SH + "minExclusive": lambda v, b: v > b,
           SH + "maxInclusive": lambda v, b: v <= b, SH + "maxExclusive": lambda v, b: v < b}

# lexical forms whose value rdflib and this module read alike (anything else: cannot tell)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_DOUBLE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?")
# a literal typed xsd:string explicitly, in any syntax (rdflib keeps "x"^^xsd:string apart
# from "x"; Oxigraph does not); it may match more than that, which only costs a pySHACL run
EXPLICIT_STRING = re.compile(r"\^\^\s*(?:<[^>]*string>|[\w.-]*:string\b)"
                             r"|datatype\s*=\s*[\"'][^\"']*string[\"']"
                             r"|\"@type\"\s*:\s*\"[^\"]*string\"")


# an xsd:dateTime whose lexical form rdflib certainly reads as a datetime (pySHACL's sh:datatype
# check): the common form, fractions to microseconds, a zone or none; anything else: cannot tell
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})?")


def _certain_datetime(lex: str) -> bool:
    if not _DATETIME.fullmatch(lex):
        return False
    try:
        datetime.fromisoformat(lex[:-1] + "+00:00" if lex.endswith("Z") else lex)
    except ValueError:          # a month 13, a 25th hour: rdflib's reading decides
        return False
    return True


_WELL_FORMED: dict[str, Callable[[str], bool]] = {XSD + "dateTime": _certain_datetime}


class _Unknown:
    """A literal whose value this module does not read the way rdflib would."""


UNKNOWN = _Unknown()


def native(lit: ox.Literal) -> Any:
    """The Python value rdflib gives a literal, or :data:`UNKNOWN` when that is not certain."""
    dt, lex = lit.datatype.value, lit.value
    if dt in (XSD + "string", LANG_STRING):
        return lex
    if dt == XSD + "integer" and _INTEGER.fullmatch(lex):
        return int(lex)
    if dt == XSD + "decimal" and _DECIMAL.fullmatch(lex):
        try:
            return Decimal(lex)
        except InvalidOperation:   # pragma: no cover - the pattern admits only decimals
            return UNKNOWN
    if dt in (XSD + "double", XSD + "float") and _DOUBLE.fullmatch(lex):
        value = float(lex)
        return value if math.isfinite(value) else UNKNOWN
    if dt == XSD + "boolean" and lex in ("true", "false"):
        return lex == "true"
    return UNKNOWN


@dataclass(frozen=True)
class Sparql:
    """A SPARQL-based constraint: its SELECT and the prefixes it declares."""

    select: str
    prefixes: Mapping[str, str]


@dataclass
class Shape:
    """A compiled node or property shape."""

    node: Term
    path: tuple[str, bool] | None = None             # (predicate IRI, inverse?)
    target_classes: list[str] = field(default_factory=list)
    target_nodes: list[Term] = field(default_factory=list)
    subjects_of: list[str] = field(default_factory=list)
    objects_of: list[str] = field(default_factory=list)
    min_count: int | None = None
    max_count: int | None = None
    checks: list[Callable[["Data", Term], Verdict]] = field(default_factory=list)   # on each value node
    nested: list["Shape"] = field(default_factory=list)                            # sh:property
    sparql: list[Sparql] = field(default_factory=list)

    @property
    def has_targets(self) -> bool:
        return bool(self.target_classes or self.target_nodes or self.subjects_of or self.objects_of)


def _all(verdicts: Iterable[Verdict]) -> Verdict:
    out: Verdict = True
    for v in verdicts:
        if v is False:
            return False
        if v is None:
            out = None
    return out


_NONE: frozenset[Term] = frozenset()


class Data:
    """A data graph (documents, ontology, context) indexed for the checks, with an
    Oxigraph store for the SPARQL constraints. ``base`` is a graph indexed once
    (the ontology) that this one adds ``triples`` to."""

    def __init__(self, triples: Iterable[ox.Triple], base: "Data | None" = None):
        self.base = base
        self.out: dict[Term, dict[str, set[Term]]] = {}
        self.inn: dict[Term, dict[str, set[Term]]] = {}
        self._by_predicate: dict[str, list[tuple[Term, Term]]] = {}
        quads = []
        for t in triples:
            s, p, o = t.subject, t.predicate.value, t.object
            if isinstance(s, ox.Triple) or isinstance(o, ox.Triple):
                raise Unsupported("triple terms")
            objects = self.out.setdefault(s, {}).setdefault(p, set())
            if o in objects:
                continue
            objects.add(o)
            self.inn.setdefault(o, {}).setdefault(p, set()).add(s)
            self._by_predicate.setdefault(p, []).append((s, o))
            quads.append(ox.Quad(s, t.predicate, o))
        self._quads = quads
        self._store: ox.Store | None = None
        self._superclasses: dict[Term, set[Term]] = {}
        self._subclasses: dict[str, set[Term]] = {}

    @property
    def store(self) -> ox.Store:
        if self._store is None:
            self._store = ox.Store()
            if self.base is not None:
                self._store.extend(self.base._quads)
            self._store.extend(self._quads)
        return self._store

    def objects(self, s: Term, p: str) -> Set[Term]:
        mine = self.out.get(s, {}).get(p, _NONE)
        theirs = self.base.objects(s, p) if self.base is not None else _NONE
        return mine | theirs if mine and theirs else mine or theirs

    def subjects(self, p: str, o: Term) -> Set[Term]:
        mine = self.inn.get(o, {}).get(p, _NONE)
        theirs = self.base.subjects(p, o) if self.base is not None else _NONE
        return mine | theirs if mine and theirs else mine or theirs

    def pairs(self, p: str) -> list[tuple[Term, Term]]:
        """(subject, object) of every triple with predicate ``p``."""
        mine = self._by_predicate.get(p, [])
        return mine + self.base.pairs(p) if self.base is not None else mine

    def superclasses(self, cls: Term) -> set[Term]:
        """``cls`` and every class it is a subclass of, transitively (in this graph)."""
        found = self._superclasses.get(cls)
        if found is None:
            found, todo = {cls}, [cls]
            while todo:
                for sup in self.objects(todo.pop(), SUBCLASS):
                    if sup not in found:
                        found.add(sup)
                        todo.append(sup)
            self._superclasses[cls] = found
        return found

    def instances(self, cls: str) -> set[Term]:
        """The subjects typed ``cls`` or a subclass of it (pySHACL's sh:targetClass)."""
        subs = self._subclasses.get(cls)
        if subs is None:
            subs = {ox.NamedNode(cls)}
            todo: list[Term] = [ox.NamedNode(cls)]
            while todo:
                for sub in self.subjects(SUBCLASS, todo.pop()):
                    if sub not in subs:
                        subs.add(sub)
                        todo.append(sub)
            self._subclasses[cls] = subs
        return {s for c in subs for s in self.subjects(RDF_TYPE, c)}

    def is_instance(self, node: Term, cls: str) -> bool:
        target = ox.NamedNode(cls)
        return any(target in self.superclasses(t) for t in self.objects(node, RDF_TYPE))


class Checker:
    """The shapes, compiled once; :meth:`suspects` runs them on a data graph."""

    def __init__(self, shapes: Sequence[ox.Triple]):
        self._g: dict[Term, dict[str, list[Term]]] = {}
        for t in shapes:
            if isinstance(t.subject, ox.Triple) or isinstance(t.object, ox.Triple):
                raise Unsupported("triple terms in the shapes")
            self._g.setdefault(t.subject, {}).setdefault(t.predicate.value, []).append(t.object)
        for props in self._g.values():
            if SH + "parameter" in props or any(o == ox.NamedNode(SH + "ConstraintComponent")
                                                for o in props.get(RDF_TYPE, ())):
                raise Unsupported("SPARQL-based constraint components")
        self._compiled: dict[Term, Shape] = {}
        self.shapes = [self._compile(s) for s in self._g if self._is_targeted(s)]

    # -- compiling -------------------------------------------------------------
    def _is_targeted(self, node: Term) -> bool:
        props = self._g.get(node, {})
        types = {o.value for o in props.get(RDF_TYPE, ()) if isinstance(o, ox.NamedNode)}
        if types & {RDFS + "Class", OWL + "Class"} and types & {SH + "NodeShape", SH + "PropertyShape"}:
            raise Unsupported("implicit class targets")
        if SH + "target" in props:
            raise Unsupported("SPARQL-based targets")
        return any(SH + k in props for k in ("targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf"))

    def _one(self, node: Term, prop: str) -> Term | None:
        values = self._g.get(node, {}).get(SH + prop, [])
        if len(values) > 1:
            raise Unsupported(f"sh:{prop} given more than once")
        return values[0] if values else None

    def _list(self, head: Term) -> list[Term]:
        out: list[Term] = []
        while head != ox.NamedNode(RDF + "nil"):
            props = self._g.get(head, {})
            first, rest = props.get(RDF + "first", []), props.get(RDF + "rest", [])
            if len(first) != 1 or len(rest) != 1:
                raise Unsupported("a malformed RDF list in the shapes")
            out.append(first[0])
            head = rest[0]
        return out

    def _compile(self, node: Term) -> Shape:
        done = self._compiled.get(node)
        if done is not None:
            return done
        shape = Shape(node)
        self._compiled[node] = shape            # before the parts, so that shapes may refer to each other
        props = self._g.get(node, {})
        for key, values in props.items():
            if not key.startswith(SH) or key in _IGNORED:
                continue
            name = key[len(SH):]
            for value in values:
                self._parameter(shape, name, value, props)
        path = self._one(node, "path")
        if path is not None:
            shape.path = self._path(path)
        shape.target_classes = [iri(o) for o in props.get(SH + "targetClass", [])]
        shape.target_nodes = list(props.get(SH + "targetNode", []))
        shape.subjects_of = [iri(o) for o in props.get(SH + "targetSubjectsOf", [])]
        shape.objects_of = [iri(o) for o in props.get(SH + "targetObjectsOf", [])]
        return shape

    def _path(self, path: Term) -> tuple[str, bool]:
        if isinstance(path, ox.NamedNode):
            return path.value, False
        props = self._g.get(path, {})
        inverse = props.get(SH + "inversePath", [])
        if len(props) == 1 and len(inverse) == 1 and isinstance(inverse[0], ox.NamedNode):
            return inverse[0].value, True
        raise Unsupported("a property path other than an IRI or sh:inversePath of an IRI")

    def _parameter(self, shape: Shape, name: str, value: Term, props: dict[str, list[Term]]) -> None:
        if name == "deactivated":
            raise Unsupported("sh:deactivated")
        if name == "property":
            shape.nested.append(self._compile(value))
        elif name == "minCount":
            shape.min_count = int(literal(value))
        elif name == "maxCount":
            shape.max_count = int(literal(value))
        elif name == "datatype":
            shape.checks.append(_datatype(iri(value)))
        elif name == "class":
            shape.checks.append(_class(iri(value)))
        elif name == "nodeKind":
            kinds = _KINDS.get(iri(value))
            if kinds is None:
                raise Unsupported(f"sh:nodeKind {value}")
            shape.checks.append(_node_kind(kinds))
        elif name == "in":
            shape.checks.append(_member_of(frozenset(self._list(value))))
        elif name in ("minInclusive", "minExclusive", "maxInclusive", "maxExclusive"):
            if not isinstance(value, ox.Literal) or not isinstance(native(value), (int, float, Decimal)) \
                    or isinstance(native(value), bool):
                raise Unsupported(f"sh:{name} with a bound that is not a number")
            shape.checks.append(_range(_RANGES[SH + name], native(value)))
        elif name == "pattern":
            flags = [literal(f) for f in props.get(SH + "flags", [])]
            shape.checks.append(_pattern(literal(value), flags[0] if flags else ""))
        elif name == "minLength":
            shape.checks.append(_min_length(int(literal(value))))
        elif name == "node":
            shape.checks.append(self._nested(self._compile(value), negate=False))
        elif name in ("or", "and", "xone"):
            parts = [self._compile(m) for m in self._list(value)]
            shape.checks.append(self._logic(name, parts))
        elif name == "not":
            shape.checks.append(self._nested(self._compile(value), negate=True))
        elif name == "sparql":
            if SH + "path" in props:
                raise Unsupported("a SPARQL constraint on a property shape")
            shape.sparql.append(self._sparql(value))
        else:
            raise Unsupported(f"sh:{name}")

    def _nested(self, nested: Shape, negate: bool) -> Callable[[Data, Term], Verdict]:
        def check(data: Data, v: Term) -> Verdict:
            verdict = self.conforms(data, nested, v)
            return _negate(verdict) if negate else verdict
        return check

    def _logic(self, name: str, parts: list[Shape]) -> Callable[[Data, Term], Verdict]:
        def check(data: Data, v: Term) -> Verdict:
            verdicts = [self.conforms(data, p, v) for p in parts]
            if None in verdicts:
                if name == "or" and True in verdicts:
                    return True
                if name == "and" and False in verdicts:
                    return False
                return None
            if name == "or":
                return any(verdicts)
            if name == "and":
                return all(verdicts)
            return verdicts.count(True) == 1
        return check

    def _sparql(self, node: Term) -> Sparql:
        props = self._g.get(node, {})
        if SH + "ask" in props or SH + "construct" in props or len(props.get(SH + "select", [])) != 1:
            raise Unsupported("a SPARQL constraint without exactly one sh:select")
        prefixes: dict[str, str] = {}
        for owner in props.get(SH + "prefixes", []):
            for decl in self._g.get(owner, {}).get(SH + "declare", []):
                d = self._g.get(decl, {})
                prefixes[literal(d[SH + "prefix"][0])] = literal(d[SH + "namespace"][0])
        return Sparql(literal(props[SH + "select"][0]), prefixes)

    # -- checking --------------------------------------------------------------
    def suspects(self, data: Data, candidates: set[Term]) -> set[Term]:
        """The focus nodes among ``candidates`` that may not conform (violate, or cannot tell)."""
        out: set[Term] = set()
        for shape in self.shapes:
            for node in self._focus(data, shape) & candidates:
                if node not in out and self.conforms(data, shape, node) is not True:
                    out.add(node)
        return out

    def _focus(self, data: Data, shape: Shape) -> set[Term]:
        found: set[Term] = set(shape.target_nodes)
        for cls in shape.target_classes:
            found |= data.instances(cls)
        for p in shape.subjects_of:
            found.update(s for s, _ in data.pairs(p))
        for p in shape.objects_of:
            found.update(o for _, o in data.pairs(p))
        return found

    def conforms(self, data: Data, shape: Shape, focus: Term) -> Verdict:
        """Does ``focus`` conform to ``shape`` (None: cannot tell)?"""
        verdict: Verdict = True
        if shape.path is None:
            values: Set[Term] = {focus}
        else:
            p, inverse = shape.path
            values = data.subjects(p, focus) if inverse else data.objects(focus, p)
            if shape.max_count is not None and len(values) > shape.max_count:
                return False
            if shape.min_count is not None and len(values) < shape.min_count:
                # rdflib may count some literals as one that Oxigraph keeps apart, never the other way
                return False if _distinct_lower_bound(values) < shape.min_count else None
        for check in shape.checks:
            for v in values:
                result = check(data, v)
                if result is False:
                    return False
                if result is None:
                    verdict = None
        for nested in shape.nested:
            result = self.conforms(data, nested, focus)
            if result is False:
                return False
            if result is None:
                verdict = None
        for constraint in shape.sparql:
            if _rows(data, constraint, focus):
                return False
        return verdict


def _rows(data: Data, constraint: Sparql, focus: Term) -> bool:
    result = data.store.query(constraint.select, prefixes=dict(constraint.prefixes),
                              substitutions={ox.Variable("this"): focus})
    return isinstance(result, ox.QuerySolutions) and next(iter(result), None) is not None


def _distinct_lower_bound(values: Set[Term]) -> int:
    """How many values rdflib sees at least: literals of one datatype whose value
    this module cannot read may be one for rdflib."""
    keys: set[Any] = set()
    for v in values:
        if isinstance(v, ox.Literal):
            value = native(v)
            keys.add((v.datatype.value, v.language) if value is UNKNOWN else (v.datatype.value, v.language, value))
        else:
            keys.add(v)
    return len(keys)


def _negate(v: Verdict) -> Verdict:
    return None if v is None else not v


def _node_kind(kinds: tuple[type, ...]) -> Callable[[Data, Term], Verdict]:
    def check(data: Data, v: Term) -> Verdict:
        return isinstance(v, kinds)
    return check


def _member_of(members: frozenset[Term]) -> Callable[[Data, Term], Verdict]:
    def check(data: Data, v: Term) -> Verdict:
        return v in members
    return check


def _datatype(dt: str) -> Callable[[Data, Term], Verdict]:
    if dt in (RDFS + "Literal", RDFS + "Datatype"):
        raise Unsupported(f"sh:datatype <{dt}>")

    well_formed = _WELL_FORMED.get(dt)

    def check(data: Data, v: Term) -> Verdict:
        if not isinstance(v, ox.Literal) or v.datatype.value != dt:
            return False
        if native(v) is not UNKNOWN or (well_formed is not None and well_formed(v.value)):
            return True
        return None
    return check


def _class(cls: str) -> Callable[[Data, Term], Verdict]:
    def check(data: Data, v: Term) -> Verdict:
        return not isinstance(v, ox.Literal) and data.is_instance(v, cls)
    return check


def _range(compare: Callable[[Any, Any], bool], bound: Any) -> Callable[[Data, Term], Verdict]:
    def check(data: Data, v: Term) -> Verdict:
        if not isinstance(v, ox.Literal):
            return False
        value = native(v)
        if value is UNKNOWN or isinstance(value, bool):
            return None
        if isinstance(value, str):
            return False            # a string against a number: pySHACL says it does not conform
        return compare(value, bound)
    return check


def _pattern(pattern: str, flags: str) -> Callable[[Data, Term], Verdict]:
    re_flags = 0
    for f in flags:
        re_flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}.get(f, 0)
        if f not in "imsx":
            raise Unsupported(f"sh:flags {flags!r}")
    compiled = re.compile(pattern, re_flags)

    def check(data: Data, v: Term) -> Verdict:
        if isinstance(v, ox.BlankNode):
            return False
        if isinstance(v, ox.Literal) and v.datatype.value not in (XSD + "string", LANG_STRING):
            return None             # rdflib may write the lexical form its own way
        return compiled.search(v.value) is not None
    return check


def _min_length(n: int) -> Callable[[Data, Term], Verdict]:
    def check(data: Data, v: Term) -> Verdict:
        if isinstance(v, ox.BlankNode):
            return False
        if isinstance(v, ox.Literal) and v.datatype.value not in (XSD + "string", LANG_STRING):
            return None
        return len(v.value) >= n
    return check


def iri(term: Term) -> str:
    if not isinstance(term, ox.NamedNode):
        raise Unsupported(f"{term} where the shapes need an IRI")
    return term.value


def literal(term: Term) -> str:
    if not isinstance(term, ox.Literal):
        raise Unsupported(f"{term} where the shapes need a literal")
    return term.value


__all__ = ["Checker", "Data", "EXPLICIT_STRING", "Unsupported", "native"]
