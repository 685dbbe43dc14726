"""Generated scenarios as Turtle files, numbered clear of what exists.

A generated scenario file is written as a person would write one
(``scenarios/catalog/NNN-ID.ttl``): the faults, the symptoms stated as data
(every lamp and LED, from the simulation), what a correct hypothesis names,
the ideal repair, categories and budget derived from data, masked faults
declared, a description and initial observations from a template, and a
design note saying how it was made. The graph is built as RDF and serialised
(nothing is pasted into Turtle text but the comment lines at its top).

Numbers and identifiers collide neither with the scenarios the store holds
nor with the shipped catalogue (read from its files, loaded or not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

import pyoxigraph as ox
import rdflib
from rdflib.namespace import DCTERMS, RDF, RDFS, XSD

from ..env.scenarios import Fault
from ..kg import resources
from ..kg.vocab import DK, DK_NS
from .bench import Bench, Look, Repair

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource

SCENARIO_BASE = "https://w3id.org/diagkg/scenario/"
SIZE_LETTERS = {1: "S", 2: "D", 3: "T"}
_D = rdflib.Namespace(DK_NS)


@dataclass(frozen=True)
class Taken:
    """The scenario numbers and identifiers already in use."""

    numbers: frozenset[int]
    ids: frozenset[str]

    def next_free(self, start: int, count: int, key: str, size: int) -> list[tuple[int, str]]:
        """``count`` (number, identifier) pairs from ``start`` on, skipping what is taken."""
        out: list[tuple[int, str]] = []
        n = start
        while len(out) < count:
            sid = identifier(key, size, n)
            if n not in self.numbers and sid not in self.ids:
                out.append((n, sid))
            n += 1
        return out


def identifier(key: str, size: int, number: int) -> str:
    """A generated scenario's identifier, e.g. ``GEN-three_cubes.S.136``."""
    return f"GEN-{key}.{SIZE_LETTERS.get(size, str(size))}.{number}"


def taken(store: KnowledgeSource) -> Taken:
    """The numbers and identifiers of the store's scenarios and of the shipped catalogue's."""
    numbers = {int(r["number"]) for r in store.select("scenario-index")}
    ids = {str(r["id"]) for r in store.select("scenario-index")}
    number_p, id_p = ox.NamedNode(str(DK.scenarioNumber)), ox.NamedNode(str(DCTERMS.identifier))
    for f in resources.catalog_files():
        for q in ox.parse(input=f.read_bytes(), format=ox.RdfFormat.TURTLE):
            if q.predicate == number_p and isinstance(q.object, ox.Literal):
                numbers.add(int(q.object.value))
            elif q.predicate == id_p and isinstance(q.object, ox.Literal):
                ids.add(q.object.value)
    return Taken(frozenset(numbers), frozenset(ids))


SIZE_BLOCK = 10_000        # numbers between the first scenarios of one, two and three faults


def first_number(used: Taken, size: int = 1) -> int:
    """Where generated numbers start: past every number in use, at the next hundred, then
    :data:`SIZE_BLOCK` further for each fault beyond the first (so that single, double and
    triple faults generated one after another without loading them in between do not meet)."""
    top = max(used.numbers, default=0)
    return (top // 100 + 1) * 100 + 1 + SIZE_BLOCK * (size - 1)


@dataclass(frozen=True)
class Written:
    """One generated scenario: its number, identifier, file name and Turtle text."""

    number: int
    id: str
    file_name: str
    text: str
    look: Look
    repair: Repair
    masked: tuple[bool, ...]
    categories: tuple[str, ...]
    budget: int


def categories(look: Look, masked: Iterable[bool], by_count: dict[int, str], coupling_modes: frozenset[str]) -> tuple[str, ...]:
    """Categories from data: the category whose ``dk:faultCount`` is the number of faults
    (for a single fault, only when it shows steadily and acts in the circuit), intermittent
    when a fault is left to chance or a lamp flickers, misleading when a fault is masked,
    unforeseen interaction when a fault acts through a coupling (``coupling_modes``: the modes
    whose target kind is a coupling)."""
    size = len(look.placement)
    coupling = any(f.mode in coupling_modes for f in look.placement.faults)
    out = []
    if size in by_count and (size > 1 or not (look.intermittent or coupling)):
        out.append(by_count[size])
    if look.intermittent:
        out.append(str(DK.Intermittent))
    if any(masked):
        out.append(str(DK.Misleading))
    if coupling:
        out.append(str(DK.UnforeseenInteraction))
    return tuple(out)


def category_counts(store: KnowledgeSource) -> dict[int, str]:
    """Scenario categories by the number of faults they stand for (``dk:faultCount``)."""
    rows = store.select("generation-categories")
    return {int(r["count"]): str(r["category"]) for r in rows}


def budget(placements: int, repair: Repair, intermittent: bool) -> int:
    """Rounds enough to halve the system's noticed single faults down to one
    (log2 of their number), carry out the ideal repair and state the diagnosis, plus two
    spare rounds (four when a fault shows at random: a test may need repeating)."""
    return math.ceil(math.log2(max(placements, 2))) + len(repair.steps) + 1 + (4 if intermittent else 2)


def observations(bench: Bench, look: Look) -> str:
    """The initial observations, in words, from the stated symptoms."""
    nominal = dict(bench.nominal_look)
    words = {"Lit": "lit", "Dark": "dark", "Flickering": "flickering"}
    changed = [f"{bench.label(cid)} is {words[a]}, where it is {words[nominal[cid]]} when the system works"
               for cid, a in look.appearances if cid in look.changed]
    same = [bench.label(cid) for cid, _ in look.appearances if cid not in look.changed]
    text = "With every switch as set up, " + "; ".join(changed) + "."
    if same:
        text += " " + _join(same) + (" looks" if len(same) == 1 else " look") + " as usual."
    return text


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def description(bench: Bench, look: Look, comments: dict[str, str]) -> str:
    """What was broken, from the fault modes' labels and comments."""
    return " ".join(f"{label_of(bench, f)}: {comments.get(f.mode, '').rstrip('.')}." for f in look.placement.faults)


def label(bench: Bench, look: Look) -> str:
    """The scenario's title: each fault's mode and where it is, both ends of a fault between two (two
    shorts from the same terminal are two scenarios, not one title twice)."""
    return "; ".join(label_of(bench, f) for f in look.placement.faults)


def label_of(bench: Bench, f: Fault) -> str:
    """A fault's mode and where it is (``Short between nodes on 9 V battery (neg end) and Lamp (p end)``)."""
    where = bench.target_label(f.target) + (f" and {bench.target_label(f.other)}" if f.other else "")
    return f"{f.label[:1].upper()}{f.label[1:]} on {where}"


def scenario_graph(bench: Bench, look: Look, repair: Repair, masked: tuple[bool, ...], number: int, sid: str,
                   cats: tuple[str, ...], rounds: int, words: tuple[str, str], defaults: dict[str, float | None],
                   seed: int, note: str | None = None) -> rdflib.Graph:
    """The scenario as RDF (``words``: its description and initial observations; ``note``: one
    more design note)."""
    g = rdflib.Graph(bind_namespaces="none")
    g.bind("", SCENARIO_BASE)
    g.bind("sys", bench.ns)
    g.bind("dk", DK_NS)
    g.bind("rdfs", str(RDFS))
    g.bind("dcterms", str(DCTERMS))
    g.bind("xsd", str(XSD))
    s = rdflib.URIRef(SCENARIO_BASE + sid)
    counter = iter(range(1, 10**6))

    def blank() -> rdflib.BNode:        # named in order: the same scenario serialises the same
        return rdflib.BNode(f"g{next(counter):04d}")

    def part(p: str) -> rdflib.URIRef:
        return rdflib.URIRef(bench.ns + p)

    g.add((s, RDF.type, _D.Scenario))
    g.add((s, _D.scenarioNumber, rdflib.Literal(number, datatype=XSD.integer)))
    g.add((s, DCTERMS.identifier, rdflib.Literal(sid)))
    g.add((s, RDFS.label, rdflib.Literal(label(bench, look))))
    g.add((s, DCTERMS.description, rdflib.Literal(words[0])))
    g.add((s, _D.onSystem, rdflib.URIRef(bench.sk.iri)))
    for c in cats:
        g.add((s, _D.hasCategory, rdflib.URIRef(c)))
    for f, hidden in zip(look.placement.faults, masked, strict=True):
        node = blank()
        g.add((s, _D.injects, node))
        g.add((node, RDF.type, _D.Fault))
        g.add((node, _D.faultMode, rdflib.URIRef(DK_NS + f.mode)))
        g.add((node, _D.faultTarget, rdflib.URIRef(f.target)))
        if f.other:
            g.add((node, _D.otherTarget, rdflib.URIRef(f.other)))
        if f.probability is not None:
            g.add((node, _D.probability, rdflib.Literal(str(f.probability), datatype=XSD.decimal)))
        if f.value is not None and f.value != defaults.get(f.mode):
            g.add((node, _D.faultValue, rdflib.Literal(f.value, datatype=XSD.double)))
        if hidden:
            g.add((node, _D.masked, rdflib.Literal(True)))
    g.add((s, _D.initialObservations, rdflib.Literal(words[1])))
    for cid, seen in look.appearances:
        node = blank()
        g.add((s, _D.statedSymptom, node))
        g.add((node, _D.about, part(cid)))
        g.add((node, _D.appearance, rdflib.URIRef(DK_NS + seen)))
    for p in sorted(look.faulty):
        g.add((s, _D.faultyComponent, part(p)))
    plan = blank()
    g.add((s, _D.idealRepair, plan))
    g.add((plan, RDF.type, _D.RepairPlan))
    # what a session charges for it, the access each step needs included (cost / ideal is measured against it): played
    # as a session plays it, which ends once the system works (a broken indicator stops no repair: the steps after
    # are not charged; stating the whole plan's minutes put the oracle at 0.76 of its ideal on a stranger's system)
    minutes = repair.charged if repair.charged is not None else bench.paid(look.placement, repair.steps, repair.permanent)
    g.add((plan, _D.costMinutes, rdflib.Literal(str(round(float(minutes), 6)), datatype=XSD.decimal)))
    action_types = bench.action_types()
    for step in repair.steps:
        node = blank()
        g.add((plan, _D.step, node))
        g.add((node, RDF.type, _D.DiagnosticAction))
        g.add((node, _D.position, rdflib.Literal(step.position, datatype=XSD.integer)))
        g.add((node, _D.actionType, rdflib.URIRef(action_types[step.action])))
        for t in step.targets:
            g.add((node, _D.target, part(t)))
    for aid in sorted(repair.permanent):
        g.add((s, _D.permanentRepair, rdflib.URIRef(action_types[aid])))
    g.add((s, _D.actionBudget, rdflib.Literal(rounds, datatype=XSD.integer)))
    g.add((s, _D.generationSeed, rdflib.Literal(seed, datatype=XSD.integer)))
    g.add((s, _D.designNote, rdflib.Literal(
        "Generated by `diagkg generate` from the fault catalogue: the stated symptoms are the simulation's, the "
        "faulty components are the parts that differ from their description once the faults are injected (what "
        "they damage included), the ideal repair is the cheapest sequence of repairs found by search that "
        "clears every fault, and a fault is declared masked when the others hide it.")))
    if note:
        g.add((s, _D.designNote, rdflib.Literal(note)))
    return g


def turtle(g: rdflib.Graph, number: int, sid: str, title: str) -> str:
    head = f"# Scenario {number} ({sid}): {title}\n# Generated by `diagkg generate` (diagkg.generation).\n"
    return head + g.serialize(format="turtle")


def file_name(number: int, sid: str) -> str:
    return f"{number:03d}-{sid}.ttl"


__all__ = ["SCENARIO_BASE", "SIZE_BLOCK", "Taken", "Written", "budget", "categories", "category_counts", "description",
           "file_name", "first_number", "identifier", "observations", "scenario_graph", "taken", "turtle"]
