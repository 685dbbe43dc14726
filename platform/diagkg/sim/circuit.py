"""A system's netlist skeleton and its circuit state, both read from the graph.

The *skeleton* of a system (components, ports, nominal parameters, wiring, the
SPICE mapping of each type, emission rules, couplings, positions) is read once
with the ``sim-*`` queries of ``queries/``. The *state* of a session (faults,
switch positions, detached or rewired ends, enclosure positions, panels) lives
in a named graph using the state vocabulary of ``ontology/behaviour.ttl`` and
is read with ``state-read.rq`` into an immutable, hashable
:class:`CircuitState`, which serves as the simulator's canonical cache key.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import pyoxigraph as ox

from ..errors import InputError, UnknownTermError
from ..kg.expressions import (
    COUPLING_FUNCTIONS,
    ELEMENT_FUNCTIONS,
    RESULT_FUNCTIONS,
    Expression,
    compile_expression,
    overload,
    unknown_references,
)
from ..kg.vocab import DK, DK_NS

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource, KnowledgeStore

PortRef = tuple[str, str]  # (component id, port name)

# names a behaviour expression may call, by context


@dataclass(frozen=True)
class ElementDecl:
    """One SPICE element of a component type (from ``dk:stampedAs``)."""

    kind: str
    name: str
    from_node: str
    to_node: str
    value: Expression | None
    condition: Expression | None
    saturation: Expression | None
    emission: float | None
    emission_expression: Expression | None = None     # N as an expression (dk:emissionCoefficientExpression)
    bypass: bool = False     # a path across the component beside it (dk:bypassesComponent): not its own current


@dataclass(frozen=True)
class DamageRule:
    """One way the circuit damages components of a type (``dk:hasDamageRule``)."""

    condition: Expression     # over the solved component (as an emission rule)
    state: str                # the damage state it sets: the local name of a sub-property of dk:damage
    source: str               # the condition as written, for messages
    overload: Expression | None = None   # how far past its limit, for a condition written as one (expressions.overload)


@dataclass
class Component:
    id: str
    iri: str
    type_iri: str
    type_label: str
    ports: dict[str, str] = field(default_factory=dict)  # port name -> port IRI
    params: dict[str, object] = field(default_factory=dict)
    open_ports: set[str] = field(default_factory=set)
    detachable: bool = False
    module: str | None = None

    @property
    def type(self) -> str:
        return self.type_iri[len(DK_NS):] if self.type_iri.startswith(DK_NS) else self.type_iri

    @property
    def is_lamp(self) -> bool:
        """A light the working system needs lit where it lights as set up: a bulb, or an LED declared
        ``dk:isIndicator false`` (an LED is an indicator unless its description says it is not)."""
        return self.type == "Bulb" or (self.type == "LED" and self.params.get("isIndicator") is False)


@dataclass(frozen=True)
class Coupling:
    id: str
    kind: str  # "OpticalCoupling" | "SwitchingCoupling"
    active_by_default: bool
    emitter: str | None = None
    receiver: str | None = None
    max_distance: float | None = None
    blocked_when: tuple[tuple[str, str], ...] = ()  # (element id, state local name)
    drives: str | None = None
    closed_when: Expression | None = None
    iri: str = ""           # the coupling's own IRI (its id is the IRI's last segment)


@dataclass
class Skeleton:
    """Everything the simulator needs about a system, read once from the store."""

    key: str
    iri: str
    label: str
    ground: PortRef
    components: dict[str, Component]
    port_of_iri: dict[str, PortRef]
    net_of_port: dict[PortRef, int]
    mapping: dict[str, list[ElementDecl]]
    emits: dict[str, Expression]
    defaults: dict[str, dict[str, object]]  # type IRI ("" = any type) -> parameter -> value
    couplings: list[Coupling]
    positions: dict[str, tuple[float, float, float]]
    iri_to_id: dict[str, str]
    parts: tuple[dict[str, Any], ...] = ()      # system-parts.rq rows: every identified part
    description: str = ""
    damage_rules: dict[str, list[DamageRule]] = field(default_factory=dict)   # type IRI -> its rules
    damage_states: dict[str, str] = field(default_factory=dict)   # IRI -> local name (blown, burntOut…)
    damage_labels: dict[str, str] = field(default_factory=dict)   # local name -> label ("blown", "burnt out")
    damage_first: frozenset[str] = frozenset()    # local names of the damage that fails first (dk:failsFirst: blown)
    # what a state graph's content reads as (see read_state): derived, per skeleton
    read_states: "OrderedDict[frozenset[ox.Quad], CircuitState]" = field(
        default_factory=OrderedDict, repr=False, compare=False)
    _element_values: dict[str, dict[str, float]] = field(default_factory=dict, repr=False, compare=False)
    _rules_for: dict[tuple[str, frozenset[str]], tuple["DamageRule", ...]] = field(
        default_factory=dict, repr=False, compare=False)

    @functools.cached_property
    def ports_on_net(self) -> dict[int, tuple[PortRef, ...]]:
        """Each net's ports (as wired by the description), in a fixed order."""
        out: dict[int, list[PortRef]] = {}
        for port, net in sorted(self.net_of_port.items()):
            out.setdefault(net, []).append(port)
        return {net: tuple(ports) for net, ports in out.items()}

    def port_ref(self, iri: str) -> PortRef:
        try:
            return self.port_of_iri[iri]
        except KeyError:
            raise UnknownTermError(f"{iri} is not a port of system {self.key}") from None

    def part_id(self, iri: str) -> str:
        try:
            return self.iri_to_id[iri]
        except KeyError:
            raise UnknownTermError(f"{iri} is not a part of system {self.key}") from None

    def element_values(self, type_iri: str) -> dict[str, float]:
        """What emission and damage rules read of a type's named elements, each at 0 until a
        solve says: ``<name>Power`` and ``<name>Current`` for each element with a dk:elementName.
        Worked out once per type (a part whose values change is planned again at every solve): do not
        change the dict returned."""
        known = self._element_values.get(type_iri)
        if known is None:
            known = self._element_values[type_iri] = {f"{decl.name}{what}": 0.0 for decl in self.mapping.get(type_iri, ())
                                                      if decl.name for what in ("Power", "Current")}
        return known

    def damage_rules_for(self, comp: Component, params: dict[str, object] | None = None) -> tuple[DamageRule, ...]:
        """The damage rules that apply to a component: those of its type that read only what it
        has (its parameters, with ``params`` in place of its nominal ones, its named elements'
        values, and power, current and voltage). A lamp that states no maximum is not rated."""
        rules = self.damage_rules.get(comp.type_iri, ())
        if not rules:
            return ()
        names = frozenset((params if params is not None else self.params_of(comp)).keys())
        known = self._rules_for.get((comp.type_iri, names))
        if known is None:
            readable = names | self.element_values(comp.type_iri).keys() | {"power", "current", "voltage"}
            known = self._rules_for[(comp.type_iri, names)] = tuple(r for r in rules if r.condition.names <= readable)
        return known

    def params_of(self, comp: Component) -> dict[str, object]:
        """Nominal parameters with defaults filled in (property default < type default < stated)."""
        out = dict(self.defaults.get("", {}))
        out.update(self.defaults.get(comp.type_iri, {}))
        out.update(comp.params)
        return out


class Decided(random.Random):
    """A generator whose draws are decided beforehand (:class:`Fall`, the model-based assistant's coins): it
    keeps no state. A session's checkpoint keeps its generator's state, and rolling back sets it: a decided
    one reports the same state always and ignores what it is set to, so a checkpoint taken under it carries
    nothing of what ran before, in this session or in an earlier one of the process (a shared coin once
    carried one session's draws into the next one's worlds)."""

    _STATE = random.Random(0).getstate()

    def getstate(self) -> tuple[Any, ...]:
        return self._STATE

    def setstate(self, state: tuple[Any, ...]) -> None:
        del state


class Fall(Decided):
    """How the loose connections of a state fall when a model tries each way they may (a world of the
    model-based assistant with several of them): those at the ports of ``opened`` come off, every other
    one holds. Any other generator draws each one (:meth:`~diagkg.sim.simulator.Simulator.realize`)."""

    def __init__(self, opened: Iterable[PortRef]):
        super().__init__(0)
        self.opened = frozenset(opened)


@dataclass(frozen=True)
class CircuitState:
    """How a system differs from its nominal description; hashable and canonical.

    Every field is a sorted tuple or a frozenset, so two states that say the
    same thing compare (and hash) equal whatever order they were written in.
    """

    overrides: tuple[tuple[str, str, float], ...] = ()        # (component, parameter, value)
    positions: tuple[tuple[str, bool], ...] = ()              # switch -> closed by hand
    forced: tuple[tuple[str, bool], ...] = ()                 # switch/relay -> stuck closed/open
    physical: frozenset[tuple[str, str]] = frozenset()        # (element, "Inverted"|"Rotated"|"Open")
    covered: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    damaged: frozenset[tuple[str, str]] = frozenset()         # (component, damage state: "blown", "burntOut"…)
    detached: frozenset[PortRef] = frozenset()
    rewired: tuple[tuple[PortRef, PortRef], ...] = ()         # port -> port whose node it now sits on
    couplings: tuple[tuple[str, bool], ...] = ()              # coupling -> active
    shorts: tuple[tuple[PortRef, PortRef, float], ...] = ()
    loose: tuple[tuple[PortRef, float], ...] = ()             # port -> probability of being off
    probe: tuple[PortRef, PortRef] | None = None               # an ohmmeter's 1 mV source between two ports
    meter: PortRef | None = None                               # a voltmeter's input resistance from a port to 0 V

    @staticmethod
    def make(**fields: Any) -> "CircuitState":
        """Build a canonical state from any iterables."""
        return CircuitState(**{name: _canonical(name, value) for name, value in fields.items()})

    def evolve(self, **fields: Any) -> "CircuitState":
        """A copy with some fields replaced (canonicalised; the others are already canonical)."""
        return dataclasses.replace(self, **{name: _canonical(name, value) for name, value in fields.items()})

    @property
    def override_map(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for comp, param, value in self.overrides:
            out.setdefault(comp, {})[param] = value
        return out

    def is_nominal(self) -> bool:
        return self == NOMINAL

    def damage_of(self, component: str) -> frozenset[str]:
        """The damage states a component is in (e.g. {"blown"})."""
        return frozenset(st for c, st in self.damaged if c == component)


def _canonical(name: str, value: Any) -> Any:
    """A :class:`CircuitState` field's value in its canonical form: sets as frozensets, the rest sorted
    without repeats, a probe or meter as a tuple or None."""
    if name in ("probe", "meter"):
        return tuple(value) if value else None
    if name in _SETS:
        return frozenset(value)
    return tuple(sorted(dict.fromkeys(value)))


_SETS = frozenset(("physical", "covered", "removed", "damaged", "detached"))
NOMINAL = CircuitState()


def _touched(name: str, entry: Any) -> set[str]:
    """The parts (components, couplings, elements) an entry of state field ``name`` is about."""
    if name in ("covered", "removed"):
        return {entry}                         # a component
    if name == "loose":
        return {entry[0][0]}                   # (port, probability)
    if name in ("rewired", "shorts"):
        return {entry[0][0], entry[1][0]}      # (port, port[, ohms])
    return {entry[0]}        # detached: a port; overrides, positions, forced, couplings, physical, damaged: (part, ...)


def composed(base: CircuitState, states: Iterable[CircuitState]) -> CircuitState | None:
    """The state holding what each of ``states`` adds to ``base`` (faults injected one by one into
    the same world, each on its own), or None when that cannot be told so: one takes something of
    ``base`` away, two change the same part (a port is its component's; how two faults on one part
    combine is for their effects to say), or one has a probe or a meter."""
    states = tuple(states)
    if any(s.probe is not None or s.meter is not None for s in (base, *states)):
        return None
    fields: dict[str, Any] = {}
    touched: list[set[str]] = [set() for _ in states]
    for name in CircuitState.__dataclass_fields__:
        if name in ("probe", "meter"):
            continue
        before = set(getattr(base, name))
        merged = set(before)
        for k, s in enumerate(states):
            items = set(getattr(s, name))
            if not before <= items:
                return None
            for entry in items - before:
                touched[k] |= _touched(name, entry)
            merged |= items
        fields[name] = merged
    if sum(map(len, touched)) != len(set().union(*touched)):
        return None
    return CircuitState.make(**fields)


# ---------------------------------------------------------------------------
# reading the skeleton
# ---------------------------------------------------------------------------

def load_skeleton(store: "KnowledgeSource", key: str) -> Skeleton:
    """Read system ``key`` from the store (it must have been loaded)."""
    rows = store.select("sim-system", {"key": ox.Literal(key)})
    if not rows:
        raise UnknownTermError(f"no system with key {key!r} in the store")
    if len({r["system"] for r in rows}) > 1:
        raise InputError(f"several systems have the key {key!r}")
    system = ox.NamedNode(rows[0]["system"])
    label = rows[0]["label"] or key

    components: dict[str, Component] = {}
    port_of_iri: dict[str, PortRef] = {}
    iri_to_id: dict[str, str] = {}
    for r in store.select("sim-components", {"system": system}):
        comp = components.get(r["id"])
        if comp is None:
            comp = components[r["id"]] = Component(r["id"], r["component"], r["type"], r["typeLabel"])
            iri_to_id[r["component"]] = r["id"]
        comp.ports[r["portName"]] = r["port"]
        comp.detachable = bool(r["detachable"])
        comp.module = r["module"]
        port_of_iri[r["port"]] = (r["id"], r["portName"])
        if r["openByDesign"]:
            comp.open_ports.add(r["portName"])
    for r in store.select("sim-parameters", {"system": system}):
        if r["id"] in components:
            components[r["id"]].params[r["name"]] = r["value"]
    # every part (enclosures, openings, modules) by IRI, for the state
    parts = tuple(store.select("system-parts", {"system": system}))
    for r in parts:
        iri_to_id.setdefault(r["part"], r["id"])

    ground_iri = rows[0]["ground"]
    if ground_iri not in port_of_iri:
        raise InputError(f"the ground reference of {key} is not a port of one of its components")

    # electrical nodes: union-find over the system's connections
    parent: dict[PortRef, PortRef] = {p: p for p in port_of_iri.values()}

    def find(p: PortRef) -> PortRef:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for r in store.select("sim-connections", {"system": system}):
        a, b = port_of_iri.get(r["a"]), port_of_iri.get(r["b"])
        if a and b:
            parent[find(a)] = find(b)
    roots: dict[PortRef, int] = {}
    net_of_port = {}
    for p in sorted(parent):
        net_of_port[p] = roots.setdefault(find(p), len(roots))

    mapping: dict[str, list[ElementDecl]] = {}
    for r in store.select("sim-mapping"):
        where = f"SPICE mapping of {r['type'][len(DK_NS):]}"
        decl = ElementDecl(
            kind=r["kind"].upper(), name=r["name"] or "",
            from_node=r["from"], to_node=r["to"],
            value=compile_expression(r["value"], where, ELEMENT_FUNCTIONS) if r["value"] else None,
            condition=compile_expression(r["condition"], where, ELEMENT_FUNCTIONS) if r["condition"] else None,
            saturation=compile_expression(r["saturation"], where, ELEMENT_FUNCTIONS) if r["saturation"] else None,
            emission=float(r["emission"]) if r["emission"] is not None else None,
            emission_expression=compile_expression(r["emissionExpression"], where, ELEMENT_FUNCTIONS)
            if r["emissionExpression"] else None,
            bypass=r["bypass"] is True,
        )
        if decl.kind not in ("R", "V", "D"):
            raise InputError(f"{where}: unknown element kind {decl.kind!r} (R, V or D)")
        mapping.setdefault(r["type"], []).append(decl)

    emits: dict[str, Expression] = {}
    defaults: dict[str, dict[str, object]] = {}
    for r in store.select("sim-type-rules"):
        if r["scope"] == "emission":
            emits[r["type"]] = compile_expression(r["emits"], f"emission rule of {r['type'][len(DK_NS):]}",
                                                  RESULT_FUNCTIONS)
        elif r["scope"] == "type":
            defaults.setdefault(r["type"], {})[r["parameter"]] = r["default"]
        else:
            defaults.setdefault("", {})[r["parameter"]] = r["default"]

    for comp in components.values():
        if comp.type_iri not in mapping:
            raise InputError(f"component {comp.id}: its type {comp.type} has no SPICE mapping (dk:stampedAs)")

    damage_rules: dict[str, list[DamageRule]] = {}
    damage_states: dict[str, str] = {}
    damage_labels: dict[str, str] = {}
    first: set[str] = set()
    for r in store.select("sim-damage"):
        name = r["state"][len(DK_NS):] if r["state"].startswith(DK_NS) else r["state"].rsplit("#", 1)[-1]
        if r["scope"] == "state":
            damage_states[r["state"]] = name
            damage_labels[name] = r["label"] or name
            first |= {name} if r["first"] is True else set()
        else:
            where = f"damage rule of {r['type'][len(DK_NS):]}"
            condition = compile_expression(r["condition"], where, RESULT_FUNCTIONS)
            damage_rules.setdefault(r["type"], []).append(DamageRule(condition, name, r["condition"], overload(condition)))
    for rules in damage_rules.values():
        for rule in rules:
            if rule.state not in damage_labels:
                raise InputError(f"a damage rule sets {rule.state}, which is not a sub-property of dk:damage")

    couplings = _read_couplings(store, system)
    ports = {cid: c.ports.keys() for cid, c in components.items()}
    for c in couplings:
        unknown = unknown_references(c.closed_when, ports) if c.closed_when is not None else []
        if unknown:
            raise InputError(f"coupling {c.id}: {'; '.join(unknown)}")
    positions = {r["id"]: (float(r["x"]), float(r["y"]), float(r["z"]))
                 for r in store.select("sim-positions", {"system": system})}
    ground = port_of_iri[ground_iri]
    return Skeleton(key, system.value, label, ground, components, port_of_iri, net_of_port,
                    mapping, emits, defaults, couplings, positions, iri_to_id, parts,
                    rows[0].get("description") or "", damage_rules, damage_states, damage_labels, frozenset(first))


def _read_couplings(store: "KnowledgeSource", system: ox.NamedNode) -> list[Coupling]:
    rows = store.select("sim-couplings", {"system": system})
    by_id: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = by_id.setdefault(r["coupling"], {"row": r, "blocks": set()})
        if r["blockElement"]:
            entry["blocks"].add((r["blockElement"], r["blockState"][len(DK_NS):]))
    out = []
    for iri, entry in sorted(by_id.items()):
        r = entry["row"]
        cid = iri.rsplit("/", 1)[-1]
        closed = (compile_expression(r["closedWhen"], f"coupling {cid}", COUPLING_FUNCTIONS)
                  if r["closedWhen"] else None)
        active = r["activeByDefault"]
        out.append(Coupling(
            id=cid, iri=iri, kind=r["kind"], active_by_default=True if active is None else bool(active),
            emitter=r["emitter"], receiver=r["receiver"],
            max_distance=float(r["maxDistance"]) if r["maxDistance"] is not None else None,
            blocked_when=tuple(sorted(entry["blocks"])), drives=r["drives"], closed_when=closed,
        ))
        if r["kind"] == "OpticalCoupling" and not (r["emitter"] and r["receiver"]):
            raise InputError(f"optical coupling {cid} needs a dk:emitter and a dk:receiver")
        if r["kind"] == "SwitchingCoupling" and not (r["drives"] and closed):
            raise InputError(f"switching coupling {cid} needs dk:drives and dk:closedWhen")
    return out


# ---------------------------------------------------------------------------
# reading a state
# ---------------------------------------------------------------------------

# what state graphs read as, per system: a model of the system reads back thousands of worlds' states
# (seed 0's 135 model-based sessions: 627,000 reads; with 256 entries 52,000 missed and 19,000 of those
# had been read before, with 4,096 34,000 missed)
_STATE_CACHE_SIZE = 4096


def read_state(store: "KnowledgeStore", graph: ox.NamedNode, skeleton: Skeleton,
               content: frozenset[ox.Quad] | None = None) -> CircuitState:
    """The circuit state held in named graph ``graph``.

    The state is read with ``state-read.rq``; a session asks for it several
    times per round, mostly unchanged, so what a given content of the graph
    (its quads, a few dozen; the caller may pass them as ``content``) reads as
    is remembered per skeleton.
    """
    if content is None:
        content = frozenset(store.raw.quads_for_pattern(None, None, None, graph))
    cache = skeleton.read_states
    state = cache.get(content)
    if state is None:
        state = cache[content] = _read_state(store, graph, skeleton)
        if len(cache) > _STATE_CACHE_SIZE:
            cache.popitem(last=False)
    else:
        cache.move_to_end(content)
    return state


def _read_state(store: "KnowledgeStore", graph: ox.NamedNode, skeleton: Skeleton) -> CircuitState:
    acc: dict[str, list[Any]] = {k: [] for k in ("overrides", "positions", "forced", "physical", "covered",
                                            "removed", "damaged", "detached", "rewired", "couplings",
                                            "shorts", "loose")}
    coupling_ids = {c.id for c in skeleton.couplings}
    for r in store.select("state-read", {"state": graph}):
        what, subj = r["what"], r["subject"]
        if what == "physical":
            acc["physical"].append((skeleton.part_id(subj), r["object"][len(DK_NS):]))
        elif what in ("position", "forced"):
            acc["positions" if what == "position" else "forced"].append((skeleton.part_id(subj), bool(r["value"])))
        elif what in ("covered", "removed"):
            if r["value"]:
                acc[what].append(skeleton.part_id(subj))
        elif what == "damage":
            if r["value"] and r["object"] in skeleton.damage_states:
                acc["damaged"].append((skeleton.part_id(subj), skeleton.damage_states[r["object"]]))
        elif what == "detached":
            if r["value"]:
                acc["detached"].append(skeleton.port_ref(subj))
        elif what == "active":
            cid = subj.rsplit("/", 1)[-1]
            if cid not in coupling_ids:
                raise UnknownTermError(f"{subj} is not a coupling of system {skeleton.key}")
            acc["couplings"].append((cid, bool(r["value"])))
        elif what == "rewired":
            acc["rewired"].append((skeleton.port_ref(subj), skeleton.port_ref(r["object"])))
        elif what == "override":
            name = r["object"][len(DK_NS):]
            acc["overrides"].append((skeleton.part_id(subj), name, float(r["value"])))
        elif what == "short":
            value = float(r["value"]) if r["value"] is not None else 1e-3
            acc["shorts"].append((skeleton.port_ref(r["object"]), skeleton.port_ref(r["extra"]), value))
        elif what == "loose":
            acc["loose"].append((skeleton.port_ref(r["object"]), float(r["value"])))
    return CircuitState.make(**acc)


def state_from_turtle(text: str, name: str, skeleton: Skeleton) -> CircuitState:
    """Parse a state written in Turtle (e.g. ``diagkg simulate --state FILE``)."""
    from ..kg import graphs
    from ..kg.rdfio import parse_text
    from ..kg.store import KnowledgeStore

    doc = parse_text(text, name)
    scratch = KnowledgeStore.memory()
    graph = graphs.named("state", "file")
    scratch.replace_graph(graph, doc.triples)
    # which properties are damage (state-read.rq reads it from the ontology): as the skeleton read it
    sub_property = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#subPropertyOf")
    scratch.replace_graph(graphs.ONTOLOGY, [ox.Triple(ox.NamedNode(iri), sub_property, DK.damage.node)
                                            for iri in skeleton.damage_states])
    _check_state_terms(doc.triples, name, skeleton)
    state = read_state(scratch, graph, skeleton)
    _check_overrides(state, name, skeleton)
    return state


def _check_overrides(state: CircuitState, name: str, skeleton: Skeleton) -> None:
    """Refuse a parameter override the shapes would refuse in the description (a wiper at 1.5 of its track made
    a 20 ohm potentiometer 30 ohms without a word), and a position on a part that has no contact."""
    from ..kg.ranges import out_of_range

    for cid in sorted({cid for cid, _ in (*state.positions, *state.forced)} & set(skeleton.components)):
        if "normallyClosed" not in skeleton.components[cid].params:       # a lamp "closed" was taken and ignored
            raise InputError(f"{name}: {cid} is a {skeleton.components[cid].type}, with no contact to open or close "
                             "(dk:isClosed and dk:forcedClosed are said of a switch or a relay)")
    for cid, parameter, value in state.overrides:
        component = skeleton.components.get(cid)
        bound = out_of_range(component.type_iri, parameter, value) if component is not None else None
        if bound is not None:
            raise InputError(f"{name}: the override of dk:{parameter} on {cid} is {value:g}, out of its range "
                             f"({bound.says()}; the shapes: {bound.message})")


_BOOLEAN = ox.NamedNode("http://www.w3.org/2001/XMLSchema#boolean")


def _check_state_terms(triples: Iterable[ox.Triple], name: str, skeleton: Skeleton) -> None:
    known = {str(getattr(DK, t)) for t in (
        "hasPhysicalState", "isClosed", "forcedClosed", "covered", "removed", "detached",
        "rewiredTo", "active", "hasOverride", "parameter", "value", "between", "onPort", "probability",
        "resistance", "CircuitState", "stateOf", "ShortCircuit", "LooseConnection", "ParameterValue")}
    known |= set(skeleton.damage_states)
    flags = {str(getattr(DK, t)) for t in ("isClosed", "forcedClosed", "covered", "removed", "active")}
    for t in triples:
        p = t.predicate.value
        if p in flags and not (isinstance(t.object, ox.Literal) and t.object.datatype == _BOOLEAN):
            # ("false" in quotes is a string, and any string read as true: a switch written open was closed)
            raise InputError(f"{name}: dk:{p[len(DK_NS):]} of {t.subject} is true or false (unquoted), "
                             f"got {t.object}")
        if p.startswith(DK_NS) and p not in known:
            import difflib

            terms = sorted(k[len(DK_NS):] for k in known if k.startswith(DK_NS) and k[len(DK_NS)].islower())
            near = difflib.get_close_matches(p[len(DK_NS):], terms, n=1)
            raise InputError(f"{name}: dk:{p[len(DK_NS):]} is not part of the circuit-state vocabulary"
                             f"{f' (did you mean dk:{near[0]}?)' if near else ''}; its properties: "
                             f"{', '.join('dk:' + t for t in terms)}")


__all__ = ["CircuitState", "DamageRule", "Decided", "Fall", "NOMINAL", "Skeleton", "load_skeleton", "read_state",
           "state_from_turtle"]
