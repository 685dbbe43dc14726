"""Scenarios: reading them from the store, and the saboteur that injects them.

A scenario (``scenarios/catalog/NNN-ID.ttl``) names a system, optional
configuration changes, the faults to inject (each a mode of the fault
catalogue applied to a target), what a correct hypothesis must name, its
ideal repair, and its budget. The saboteur writes the configuration and then
each fault into a session's circuit-state graph with the fault mode's SPARQL
UPDATE template.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

import pyoxigraph as ox

from ..errors import UnknownTermError
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.vocab import DK

XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore


@dataclass(frozen=True)
class Fault:
    mode: str            # local name of the fault mode, e.g. "DepletedBattery"
    label: str
    template: str
    target: str          # IRI
    other: str | None = None
    value: float | None = None
    probability: float | None = None
    masked: bool = False      # hidden on purpose by the scenario's other faults (dk:masked)


@dataclass(frozen=True)
class RepairStep:
    position: int
    action: str                  # action id, e.g. "replace_component"
    targets: tuple[str, ...]     # part identifiers
    value: float | None = None


@dataclass(frozen=True)
class Scenario:
    iri: str
    number: int
    id: str
    label: str
    system_iri: str
    key: str
    budget: int
    observations: str
    diagnosis: str | None
    description: str | None
    categories: tuple[str, ...]
    faulty: frozenset[str]
    removed: frozenset[str]
    permanent: frozenset[str]
    notes: tuple[str, ...]
    faults: tuple[Fault, ...]
    repair: tuple[RepairStep, ...] = field(default=())
    symptoms: tuple[tuple[str, str], ...] = ()     # stated as data: (component id, "Lit" | "Dark" | "Flickering")
    repair_minutes: float | None = None            # what the ideal repair's plan states a session charges for it

    @property
    def system_graph(self) -> ox.NamedNode:
        return graphs.system(self.key)


_SCENARIOS: Memo[Scenario] = Memo("scenarios", 1024)   # derived: by the versions of the graphs read


class IndexEntry(NamedTuple):
    """A scenario as the scenario index lists it (:meth:`ScenarioCatalog.entry`)."""

    number: int
    id: str
    iri: str
    system_iri: str
    key: str


class ScenarioCatalog:
    """The scenarios of a store, found by number or identifier.

    There is no other catalogue: the shipped scenarios are found here once they
    are loaded (``diagkg load --shipped``, or automatically, see
    :func:`diagkg.env.workspace.resolve_scenario`)."""

    def __init__(self, store: "KnowledgeStore"):
        self.store = store
        self._rows = {int(r["number"]): r for r in store.select("scenario-index")}
        self._by_id = {r["id"]: n for n, r in self._rows.items()}
        self._cache: dict[int, Scenario] = {}

    @staticmethod
    def find(store: "KnowledgeStore", ref: str | int) -> Scenario:
        """One scenario by number or identifier, without listing the others
        (what a session start needs); an unknown one is said as by :meth:`resolve`."""
        bound: dict[str, ox.Literal] = {}
        if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit()):
            bound["number"] = ox.Literal(str(int(ref)), datatype=ox.NamedNode(XSD_INTEGER))
        elif isinstance(ref, str):
            bound["id"] = ox.Literal(ref)
        rows = store.select("scenario-index", bound) if bound else []
        if len(rows) != 1:
            return ScenarioCatalog(store).resolve(ref)
        row = rows[0]
        holder = store.select("graph-of", {"node": ox.NamedNode(row["scenario"]), "class": DK.Scenario.node})
        if not holder:
            return _read_scenario(store, row)
        # a scenario reads its graph, its system's graph and the fault catalogue (in the ontology)
        key = (row["scenario"], *(store.version_of(g) for g in (
            ox.NamedNode(holder[0]["graph"]), graphs.system(row["key"]), graphs.ONTOLOGY)))
        return _SCENARIOS.get_or(key, lambda: _read_scenario(store, row))

    def iri(self, number: int) -> str:
        """The IRI of scenario ``number`` (read from the index: the scenario itself is not read)."""
        if number not in self._rows:
            return self.resolve(number).iri          # says what is wrong, with the closest
        return str(self._rows[number]["scenario"])

    def numbers(self) -> list[int]:
        return sorted(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def entry(self, ref: str | int) -> IndexEntry:
        """What the scenario index says of a scenario (by number or identifier, as :meth:`resolve`
        finds it): its IRI, system and key, without reading the scenario itself (five queries)."""
        row = self._rows[self._number(ref)]
        return IndexEntry(int(row["number"]), row["id"], str(row["scenario"]), str(row["system"]), row["key"])

    def resolve(self, ref: str | int) -> Scenario:
        """A scenario by number (``5`` or ``"5"``) or identifier (``"3CC.S.5"``)."""
        number = self._number(ref)
        if number not in self._cache:
            self._cache[number] = _read_scenario(self.store, self._rows[number])
        return self._cache[number]

    def _number(self, ref: str | int) -> int:
        """The number of the scenario ``ref`` names; an unknown one is said with the closest."""
        number: int | None = None
        if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit()):
            number = int(ref)
            if number not in self._rows:
                held = (f"it holds {len(self)} (numbers {min(self._rows)}–{max(self._rows)})" if self._rows
                        else "it holds none: load a scenario file first (diagkg load FILE.ttl)")
                raise UnknownTermError(f"no scenario number {number} in the store; {held}")
        else:
            number = self._by_id.get(ref)
            if number is None:
                lowered = {k.lower(): k for k in self._by_id}
                if ref.lower() in lowered:
                    number = self._by_id[lowered[ref.lower()]]
                else:
                    close = difflib.get_close_matches(ref, list(self._by_id), n=3, cutoff=0.5)
                    hint = f"; did you mean {', '.join(close)}?" if close else ""
                    raise UnknownTermError(f"no scenario {ref!r} in the store{hint}; load its file "
                                           "(diagkg load FILE.ttl) or list them (diagkg query scenario-index)")
        return number


def _read_scenario(store: "KnowledgeStore", row: dict[str, Any]) -> Scenario:
    """A scenario from its ``scenario-index`` row and its details."""
    iri = ox.NamedNode(row["scenario"])
    details: dict[str, list[str]] = {"category": [], "faulty": [], "removed": [], "permanent": [], "note": []}
    for r in store.select("scenario-details", {"scenario": iri}):
        details[r["what"]].append(r["id"] if r["what"] != "note" else r["value"])
    faults = tuple(
        Fault(mode=r["mode"].rsplit("#", 1)[-1], label=r["modeLabel"], template=r["template"],
              target=r["target"], other=r["other"],
              # the mode's default fills its parameter: a probability for chance faults, else a value
              value=float(r["value"]) if r["value"] is not None else (
                  float(r["default"]) if r["default"] is not None and not r["chance"] else None),
              probability=float(r["probability"]) if r["probability"] is not None else (
                  float(r["default"]) if r["default"] is not None and r["chance"] else None),
              masked=bool(r["masked"]))
        for r in store.select("scenario-faults", {"scenario": iri}))
    steps: dict[int, dict[str, Any]] = {}
    for r in store.select("scenario-repair", {"scenario": iri}):
        step = steps.setdefault(int(r["position"]), {"action": r["action"], "targets": [], "value": r["value"]})
        step["targets"].append(r["target"])
    repair = tuple(RepairStep(pos, s["action"], tuple(s["targets"]),
                              float(s["value"]) if s["value"] is not None else None)
                   for pos, s in sorted(steps.items()))
    return Scenario(
        iri=iri.value, number=int(row["number"]), id=row["id"], label=row["label"],
        system_iri=row["system"], key=row["key"], budget=int(row["budget"]),
        observations=row["observations"], diagnosis=row["diagnosis"], description=row["description"],
        categories=tuple(sorted(details["category"])), faulty=frozenset(details["faulty"]),
        removed=frozenset(details["removed"]), permanent=frozenset(details["permanent"]),
        notes=tuple(details["note"]), faults=faults, repair=repair,
        symptoms=tuple((r["id"], r["appearance"].rsplit("#", 1)[-1])
                       for r in store.select("scenario-symptoms", {"scenario": iri})),
        repair_minutes=float(row["repairCost"]) if row.get("repairCost") is not None else None,
    )


# ---------------------------------------------------------------------------
# the saboteur
# ---------------------------------------------------------------------------

def configure(store: "KnowledgeStore", scenario: Scenario, state: ox.NamedNode) -> None:
    """Start ``state`` afresh with the scenario's configuration changes (no faults)."""
    store.touch()
    store.raw.remove_graph(state) if store.raw.contains_named_graph(state) else None
    store.raw.add(ox.Quad(state, ox.NamedNode(str(DK.stateOf)), ox.NamedNode(scenario.system_iri), state))
    ns = graphs.namespace_of(scenario.system_iri)
    for cid in sorted(scenario.removed):
        store.update("config-remove-component", state=state, target=ns + cid)


def inject(store: "KnowledgeStore", scenario: Scenario, state: ox.NamedNode) -> None:
    """Write every fault of the scenario into ``state`` (after :func:`configure`)."""
    for fault in scenario.faults:
        apply_fault(store, fault, state, scenario.system_graph)


def apply_fault(store: "KnowledgeStore", fault: Fault, state: ox.NamedNode, system_graph: ox.NamedNode) -> None:
    from ..kg.queries import library

    template = library().get(fault.template)
    available = {
        "state": state, "system": system_graph, "target": fault.target, "other": fault.other,
        "value": fault.value, "probability": fault.probability,
        "short": f"{state.value}#short-{abs(hash((fault.target, fault.other))) % 10**8}",
    }
    values = {}
    for p in template.inputs:
        value = available.get(p.name)
        if value is None:
            raise UnknownTermError(f"fault {fault.label} on {fault.target} needs a {p.name!r} to apply "
                                   f"template {fault.template}")
        values[p.name] = value
    store.update(template, **values)


def state_quads(store: "KnowledgeStore", state: ox.NamedNode) -> list[ox.Quad]:
    return list(store.raw.quads_for_pattern(None, None, None, state))


def restore(store: "KnowledgeStore", state: ox.NamedNode, quads: Iterable[ox.Quad],
            holds: frozenset[ox.Quad] | None = None) -> None:
    """Make ``state`` hold exactly ``quads`` (a snapshot taken with :func:`state_quads`).
    With ``holds``, what the graph is known to hold now, only the difference is written: an
    in-memory store keeps each removed quad as an old version, and a graph written whole again
    and again (a model trying one world after another) reads and writes slower and slower."""
    store.touch()
    raw = store.raw
    if holds is None or not isinstance(raw, ox.Store):     # a remote store's graph is written whole
        raw.remove_graph(state) if raw.contains_named_graph(state) else None
        raw.extend(quads)
        return
    wanted = quads if isinstance(quads, frozenset) else frozenset(quads)
    for q in holds - wanted:
        raw.remove(q)
    raw.extend(wanted - holds)
