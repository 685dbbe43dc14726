"""The generic simulator: skeleton + state -> SPICE -> lights, voltages, currents.

Nothing here knows about any particular system or component type: element
kinds, values, emission rules and couplings all come from the declarations in
the graph (see ``ontology/behaviour.ttl``).

Per call, :meth:`Simulator.simulate`:

1. *realises* the state: each loose connection flips its coin (session RNG);
2. looks the realised state up in a result cache (a repeated state costs a
   dictionary lookup);
3. otherwise builds (or reuses) the state's *plan*: the SPICE elements and
   nodes, the static element values, and the expressions that depend on live
   values (a relay's contact, a sensor's light);
4. solves the operating point with ngspice, evaluates the couplings, and
   solves again until nothing changes (at most :data:`MAX_ITERATIONS` solves;
   a state that keeps changing is reported as not converged).

Sign convention: a component's ``current`` is the current entering it at its
positive-side port (``pos``, ``p`` or ``anode``), so a battery that delivers
power has a negative current; ``power`` is the power it dissipates or
delivers, always positive.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from ..errors import ExpressionError, SimulationError, UnknownTermError
from ..kg.expressions import THERMAL_VOLTAGE
from .circuit import NOMINAL, CircuitState, Component, Fall, PortRef, Skeleton, load_skeleton
from .couplings import next_live
from .readout import Reader, first_to_fail, read
from .results import ComponentResult, Damage, ShortResult, SimulationResult, result_quads
from .spice import ISLAND_OHMS, Element, NgspiceEngine, OperatingPoint, SolverEngine, element_power, island_ties, topology_id

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.expressions import Expression
    from ..kg.store import KnowledgeSource

MAX_ITERATIONS = 10
MAX_DAMAGE_ROUNDS = 10   # solves of a state and its damage: each round damages at least one more part
FLICKER_WINDOW = 4       # the last solves of an unsettled state that say which lights flicker
CONTACT_OHMS = 1e-4          # a port's end on its node
OPEN_CONTACT_OHMS = 1e9      # a detached end (as open as a switch; keeps the matrix well conditioned)
POSITIVE_PORTS = ("pos", "p", "anode")
PROBE_VOLTS = 1e-3           # an ohmmeter's test voltage
METER_OHMS = 1e7             # a voltmeter's input resistance (a digital multimeter's 10 MΩ)
HUB_OPEN_OHMS = 1e12         # a screening hub's tie to a node no screened short is on (see screen_shorts)
SCREENED = 2048              # screened shorts remembered (a system's every pair of nodes: ten cubes has 1,891)


@dataclass
class _ElementPlan:
    element: Element
    component: str
    static_value: float | None            # None -> evaluate per iteration
    expression: Expression | None = None  # compiled expression when dynamic
    env: dict[str, Any] | None = None
    label: str = ""                       # the element's dk:elementName, if it has one

    def value(self, live: dict[str, bool]) -> float:
        """The element's value given the live contacts and sensors."""
        if self.static_value is not None:
            return self.static_value
        assert self.expression is not None and self.env is not None   # a dynamic element has both
        self.env["closed"] = live.get(f"closed:{self.component}", True)
        self.env["illuminated"] = live.get(f"illuminated:{self.component}", False)
        return float(self.expression(self.env))


@dataclass
class _Plan:
    """Everything about one realised state that does not depend on live values."""

    topology: tuple[str, int]             # (system key, topology id of the elements)
    elements: list[_ElementPlan]
    nodes: list[str]
    port_node: dict[PortRef, str]         # ports that are on a node (not floating)
    params: dict[str, dict[str, Any]]     # component -> effective parameters
    by_component: dict[str, list[_ElementPlan]]
    dynamic: list[_ElementPlan]
    readers: list[Reader]                    # how to read each component's results off a solve
    short_elements: list[Element]            # the state's shorts, in order
    spice: list[Element]                     # the elements, as the engine takes them
    static: dict[str, float]                 # the values that no live state changes


# a component's share of a state: (id, overrides, detached ports, rewired ports, covered, damage states)
_Signature = tuple[str, tuple[tuple[str, float], ...], frozenset[str], tuple[tuple[str, PortRef], ...], bool,
                   frozenset[str]]


class _Part:
    """What a component contributes to a plan under its share of a state: its elements, the
    nodes of its ports, its parameters and its reader, with what a plan gathers from them worked
    out once: its elements' ``shape`` (the elements alone, no values; one object for equal shapes,
    see :meth:`Simulator._intern`), those read per component (not the contacts of its ends), those
    whose value follows live contacts and sensors, and the values that do not."""

    __slots__ = ("elements", "ports", "params", "reader", "shape", "own", "dynamic", "static")

    def __init__(self, elements: list[_ElementPlan], ports: dict[PortRef, str], params: dict[str, Any],
                 reader: Reader, shape: tuple[Element, ...]):
        self.elements, self.ports, self.params, self.reader, self.shape = elements, ports, params, reader, shape
        self.own = [ep for ep in elements if not ep.element.name.startswith("rc")]
        self.dynamic = [ep for ep in elements if ep.static_value is None]
        self.static = {ep.element.name: ep.static_value for ep in elements if ep.static_value is not None}


def _has(overrides: dict[str, float]) -> Callable[[str], bool]:
    return lambda name: name in overrides


class Simulator:
    """Simulates one system; holds its skeleton, plans and result cache."""

    def __init__(self, skeleton: Skeleton, engine: SolverEngine | None = None, cache_size: int = 4096):
        self.skeleton = skeleton
        self.engine: SolverEngine = engine or NgspiceEngine.shared()
        self.cache_size = cache_size
        self._results: OrderedDict[CircuitState, SimulationResult] = OrderedDict()
        self._plans: OrderedDict[CircuitState, _Plan] = OrderedDict()
        self._index = {cid: i for i, cid in enumerate(sorted(skeleton.components))}
        self._ground_net = skeleton.net_of_port[skeleton.ground]
        self._parts: dict[_Signature, _Part] = {}
        self._plain: dict[str, _Part] = {}     # each component's part where a state leaves it as it is
        # element shapes, one object per distinct shape, and the nodes and topology of each sequence of
        # them (by identity: a state that changes values only is planned without hashing its elements)
        self._shapes: dict[tuple[Element, ...], tuple[Element, ...]] = {}
        self._structures: dict[tuple[Any, ...], tuple[list[str], tuple[str, int], list[Element]]] = {}
        self._port_names = {cid: sorted(c.ports) for cid, c in skeleton.components.items()}
        # the port a component's current is measured into (pos, p, anode…)
        self.positive_port = {cid: next((p for p in POSITIVE_PORTS if p in c.ports), min(c.ports))
                              for cid, c in skeleton.components.items()}
        self._type = {cid: c.type for cid, c in skeleton.components.items()}
        self._type_iri = {cid: c.type_iri for cid, c in skeleton.components.items()}
        self._undamaged = dict.fromkeys(skeleton.damage_labels, False)
        self.stats = {"solves": 0, "cache_hits": 0}
        # the physical states (a box opened, turned over) a solve reads: those that block a coupling
        self._blocking = frozenset(pair for c in skeleton.couplings for pair in c.blocked_when)
        # screening hubs (see screen_shorts): a base plan's topology -> its ties, elements, nodes, topology
        self._hubs: dict[tuple[str, int], tuple[dict[str, Element], list[Element], list[str], tuple[str, int]]] = {}
        self._screened: OrderedDict[tuple[CircuitState, tuple[PortRef, PortRef, float]], SimulationResult | None] = \
            OrderedDict()

    @classmethod
    def from_store(cls, store: KnowledgeSource, key: str, **kw: Any) -> "Simulator":
        return cls(load_skeleton(store, key), **kw)

    # ------------------------------------------------------------------
    def realize(self, state: CircuitState, rng: random.Random | None = None) -> CircuitState:
        """Flip the coin of every loose connection (one flip per call; a :class:`Fall` says how each falls)."""
        if not state.loose:
            return state
        rng = rng or random.Random(0)
        off = set(state.detached)
        for port, probability in state.loose:
            if port not in off and (port in rng.opened if isinstance(rng, Fall) else rng.random() < probability):
                off.add(port)
        return state.evolve(detached=off, loose=())

    def simulate(self, state: CircuitState = NOMINAL, rng: random.Random | None = None) -> SimulationResult:
        """Simulate a state (loose connections drawn from ``rng``)."""
        self._check(state)
        realized = self._electrical(self.realize(state, rng))
        cached = self._results.get(realized)
        if cached is not None:
            self._results.move_to_end(realized)
            self.stats["cache_hits"] += 1
            return cached
        result = self._solve(realized)
        self._results[realized] = result
        if result.damage and result.damage_settled:
            # the damaged state solves the same, with no further damage: a session that keeps the
            # damage in its state simulates that next
            damaged = realized.damaged | {(d.component, d.state) for d in result.damage}
            self._results[realized.evolve(damaged=damaged)] = replace(result, damage=())
        while len(self._results) > self.cache_size:
            self._results.popitem(last=False)
        return result

    def _electrical(self, state: CircuitState) -> CircuitState:
        """``state`` less physical states that block no coupling (an opened panel: no solve of its own)."""
        if state.physical and not state.physical <= self._blocking:
            return state.evolve(physical=state.physical & self._blocking)
        return state

    def screen_shorts(self, state: CircuitState,
                      shorts: list[tuple[PortRef, PortRef, float]]) -> list[SimulationResult | None]:
        """``state`` (no loose connection) with each of ``shorts`` added on its own, solved on one
        circuit: every net node tied to a *hub* through an open resistor (:data:`HUB_OPEN_OHMS`), a
        short is its two nodes' ties set to half its resistance each (values changed, no circuit
        parsed per short). Lights and damage come out as with the short's own resistor; currents in
        open branches (picoamperes) and the short's own are not for reading: a screen, remembered
        apart from :meth:`simulate`'s results. None for a short off the circuit or unsolvable."""
        self._check(state)
        if state.loose:
            raise ValueError("screen_shorts takes a state without loose connections")
        realized = self._electrical(state)
        out, screened = [], self._screened
        for short in shorts:
            key = (realized, short)
            if key not in screened:
                try:
                    screened[key] = self._solve(realized, hub=short)
                except (SimulationError, KeyError):
                    screened[key] = None
                if len(screened) > SCREENED:
                    screened.popitem(last=False)
            screened.move_to_end(key)
            out.append(screened[key])
        return out

    def _hub_plan(self, state: CircuitState, short: tuple[PortRef, PortRef, float]) -> _Plan:
        """``state``'s plan tied to a hub, ``short`` made through it (see :meth:`screen_shorts`)."""
        base = self._plan(state)
        hub = self._hubs.get(base.topology)
        if hub is None:
            nets = sorted({n for n in base.nodes if n.startswith("n")} | {"0"})
            ties = {node: Element(f"rh{i}", "R", node, "hub") for i, node in enumerate(nets)}
            spice = base.spice + list(ties.values())
            topology = (self.skeleton.key, topology_id(tuple(spice)))
            hub = self._hubs[base.topology] = (ties, spice, [*base.nodes, "hub"], topology)
            if len(self._hubs) > 256:
                self._hubs.pop(next(iter(self._hubs)))
        ties, spice, nodes, topology = hub
        rewired = dict(state.rewired)
        pa, pb, ohms = short
        a, b = ties[self._net_node(pa, rewired)], ties[self._net_node(pb, rewired)]
        static = dict(base.static)
        static.update(dict.fromkeys((el.name for el in ties.values()), HUB_OPEN_OHMS))
        if a is not b:
            static[a.name] = static[b.name] = float(ohms) / 2
        elements = base.elements + [_ElementPlan(el, "", static[el.name]) for el in ties.values()]
        return _Plan(topology, elements, nodes, base.port_node, base.params, base.by_component, base.dynamic,
                     base.readers, base.short_elements, spice, static)

    def own_elements(self, state: CircuitState, cid: str,
                     live: dict[str, bool] | None = None) -> list[tuple[str, float]]:
        """A component's own SPICE elements in ``state`` as its behaviour
        declaration (``dk:stampedAs`` in ontology/behaviour.ttl) gives them:
        (kind, value) pairs — a blown fuse's ``R 1e9``, a diode with a
        resistance fault stamped as that resistor, a contact's on or off
        resistance for the ``live`` contact positions."""
        plan = self._plan(state.evolve(loose=()))
        return [(ep.element.kind, ep.value(live or {})) for ep in plan.by_component.get(cid, [])]

    def own_resistance(self, state: CircuitState, cid: str, live: dict[str, bool] | None = None) -> float | None:
        """What an ohmmeter reads across a component out of circuit: its resistive elements
        (see :meth:`own_elements`), those that join the same two nodes in parallel (a short
        across a lamp's filament), the groups in series (a potentiometer's two halves). None
        for a component that is not only resistors (a source, a working diode)."""
        plan = self._plan(state.evolve(loose=()))
        eps = plan.by_component.get(cid, [])
        if not eps or any(ep.element.kind != "R" for ep in eps):
            return None
        conductance: dict[frozenset[str], float] = {}
        for ep in eps:
            ends = frozenset((ep.element.node_a, ep.element.node_b))
            conductance[ends] = conductance.get(ends, 0.0) + 1.0 / ep.value(live or {})
        return sum(1.0 / g for g in conductance.values())

    def clear_cache(self) -> None:
        self._results.clear()
        self._screened.clear()
        self._plans.clear()
        self._parts.clear()
        self._plain.clear()
        self._shapes.clear()
        self._structures.clear()

    # ------------------------------------------------------------------
    def _check(self, state: CircuitState) -> None:
        comps = self.skeleton.components
        for cid in (*(c for c, *_ in (*state.overrides, *state.positions, *state.forced)), *state.covered,
                    *state.removed, *(c for c, _ in state.damaged)):
            if cid not in comps:
                raise UnknownTermError(f"{cid!r} is not a component of {self.skeleton.key}")

    def _plan(self, state: CircuitState) -> _Plan:
        plan = self._plans.get(state)
        if plan is not None:
            return plan
        sk = self.skeleton
        overrides = state.override_map
        rewired = dict(state.rewired)
        detached_by: dict[str, set[str]] = {}
        for cid, port in state.detached:
            detached_by.setdefault(cid, set()).add(port)
        rewired_by: dict[str, list[tuple[str, PortRef]]] = {}
        for (cid, port), target in rewired.items():
            rewired_by.setdefault(cid, []).append((port, target))
        elements: list[_ElementPlan] = []
        port_node: dict[PortRef, str] = {}
        params_all: dict[str, dict[str, Any]] = {}
        readers: list[Reader] = []
        shapes: list[int] = []          # the identities of the parts' shapes (interned: see _intern)
        by_component: dict[str, list[_ElementPlan]] = {}
        dynamic: list[_ElementPlan] = []
        static: dict[str, float] = {}
        damaged_by: dict[str, set[str]] = {}
        for cid, damage in state.damaged:
            damaged_by.setdefault(cid, set()).add(damage)
        touched = set(overrides) | set(detached_by) | set(rewired_by) | state.covered | set(damaged_by)
        for cid in self._port_names:
            if cid in state.removed:
                continue
            signature: _Signature
            if cid in touched:
                signature = (cid, tuple(sorted(overrides.get(cid, {}).items())),
                             frozenset(detached_by.get(cid, ())), tuple(sorted(rewired_by.get(cid, ()))),
                             cid in state.covered, frozenset(damaged_by.get(cid, ())))
                part = self._parts.get(signature)
                if part is None:
                    if len(self._parts) > 50_000:       # bounded: each new parameter value makes one
                        self._forget_parts()
                    part = self._parts[signature] = self._component_part(cid, signature)
            else:
                part = self._plain.get(cid)        # most components of most states: no signature to hash
                if part is None:
                    signature = (cid, (), frozenset(), (), False, frozenset())
                    part = self._plain[cid] = self._parts.get(signature) or self._component_part(cid, signature)
            elements.extend(part.elements)
            port_node.update(part.ports)
            params_all[cid] = part.params
            readers.append(part.reader)
            shapes.append(id(part.shape))
            if part.own:
                by_component[cid] = part.own
            if part.dynamic:
                dynamic.extend(part.dynamic)
            static.update(part.static)
        short_elements = []
        for m, (pa, pb, _) in enumerate(state.shorts):
            short_elements.append(Element(f"rs{m}", "R", self._net_node(pa, rewired), self._net_node(pb, rewired)))
        # what the state adds besides its parts: its shorts, an ohmmeter's probe, a voltmeter's input resistance
        added = [(e, float(ohms)) for e, (_, _, ohms) in zip(short_elements, state.shorts, strict=True)]
        if state.probe:
            a, b = (self._probe_node(p, port_node, rewired) for p in state.probe)
            added.append((Element("vprobe", "V", a, b), PROBE_VOLTS))
        if state.meter:
            added.append((Element("rmeter", "R", self._probe_node(state.meter, port_node, rewired), "0"), METER_OHMS))
        extra: list[Element] = [e for e, _ in added]
        for element, value in added:
            elements.append(_ElementPlan(element, "", value))
            static[element.name] = value
        structure = (tuple(shapes), *extra)
        known = self._structures.get(structure)
        if known is None:
            ties = island_ties([ep.element for ep in elements])
            nodes = sorted({n for ep in elements for n in (ep.element.node_a, ep.element.node_b) if n != "0"})
            known = self._structures[structure] = (nodes, (sk.key, topology_id(tuple(
                [ep.element for ep in elements] + ties))), ties)
        nodes, topology, ties = known
        elements += [_ElementPlan(tie, "", ISLAND_OHMS) for tie in ties]
        static.update(dict.fromkeys((tie.name for tie in ties), ISLAND_OHMS))
        spice = [ep.element for ep in elements]
        plan = _Plan(topology, elements, nodes, port_node, params_all, by_component, dynamic, readers,
                     short_elements, spice, static)
        self._plans[state] = plan
        if len(self._plans) > self.cache_size:
            self._plans.popitem(last=False)
        return plan

    def _probe_node(self, port: PortRef, port_node: dict[PortRef, str], rewired: dict[PortRef, PortRef]) -> str:
        """Where a probe tip touches: the port's node, or the floating end itself."""
        if port in port_node:
            return port_node[port]
        cid, name = port
        k = self._index[cid]
        return f"c{k}p{self._port_names[cid].index(name)}"

    def _net_node(self, port: PortRef, rewired: dict[PortRef, PortRef]) -> str:
        sk = self.skeleton
        net = sk.net_of_port[rewired.get(port, port)]
        return "0" if net == self._ground_net else f"n{net}"

    def _component_part(self, cid: str, signature: _Signature) -> _Part:
        """A component's elements, port nodes and parameters under its share of a state."""
        _, own_overrides, detached, rewired_ports, covered, damage = signature
        sk = self.skeleton
        comp = sk.components[cid]
        k = self._index[cid]
        own = dict(own_overrides)
        rewired = {(cid, port): target for port, target in rewired_ports}
        params = sk.params_of(comp)
        params.update(own)
        env = dict(params)
        env.update(has=_has(own), thermalVoltage=THERMAL_VOLTAGE, closed=True, illuminated=False,
                   covered=covered)
        env.update(self._undamaged)                # blown, burntOut… false, but those it is in
        env.update(dict.fromkeys(damage, True))
        elements: list[_ElementPlan] = []
        ports: dict[PortRef, str] = {}
        spice_node: dict[str, str] = {}   # port name -> the SPICE node its element ends use
        for j, name in enumerate(sorted(comp.ports)):
            ref = (cid, name)
            floating = name in detached and ref not in rewired
            net = self._net_node(ref, rewired)
            if comp.detachable or name in detached or ref in rewired:
                # ends that can come off sit on their node through a contact, so
                # that detaching one is a change of value, not of topology
                spice_node[name] = f"c{k}p{j}"
                contact = Element(f"rc{k}_{j}", "R", spice_node[name], net)
                elements.append(_ElementPlan(contact, cid, OPEN_CONTACT_OHMS if floating else CONTACT_OHMS))
            else:
                spice_node[name] = net
            if not floating:
                ports[ref] = net
        for e_index, decl in enumerate(sk.mapping[comp.type_iri]):
            where = f"{comp.type} element {decl.name or decl.kind} of {cid}"
            try:
                if decl.condition is not None and not decl.condition(env):
                    continue
                a, b = (self._node_name(comp, k, spice_node, n, where) for n in (decl.from_node, decl.to_node))
                model = None
                if decl.kind == "D":
                    n = decl.emission_expression(env) if decl.emission_expression else decl.emission
                    model = (float(decl.saturation(env)) if decl.saturation else 1e-14, float(n or 1.0))
                element = Element(f"{decl.kind.lower()}{k}_{e_index}", decl.kind, a, b, model)
                if decl.kind == "D":
                    elements.append(_ElementPlan(element, cid, 0.0, label=decl.name))
                elif decl.value is None:
                    raise ExpressionError(f"{where}: an {decl.kind} element needs a value (dk:valueExpression)")
                elif decl.value.names & {"closed", "illuminated"}:
                    elements.append(_ElementPlan(element, cid, None, decl.value, env, label=decl.name))
                else:
                    elements.append(_ElementPlan(element, cid, float(decl.value(env)), label=decl.name))
            except ExpressionError:
                raise
            except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
                raise ExpressionError(f"{where}: {exc}") from None
        return _Part(elements, ports, params, self._reader(cid, elements, ports, params, spice_node),
                     self._intern(tuple(ep.element for ep in elements)))

    def _intern(self, shape: tuple[Element, ...]) -> tuple[Element, ...]:
        """One object for each distinct shape: the structure cache of :meth:`_plan` keys on their
        identities, which stay unique while the parts holding them live."""
        return self._shapes.setdefault(shape, shape)

    def _forget_parts(self) -> None:
        """Drop every part with the shapes and structures keyed on them (an identity is unique only
        while its object lives: no structure may outlive the parts whose shapes it names)."""
        self._parts.clear()
        self._plain.clear()
        self._shapes.clear()
        self._structures.clear()

    def _reader(self, cid: str, elements: list[_ElementPlan], ports: dict[PortRef, str], params: dict[str, Any],
                spice_node: dict[str, str]) -> Reader:
        sk = self.skeleton
        type_iri = self._type_iri[cid]
        emit = sk.emits.get(type_iri)
        # each named element of the type, stamped in this state or not, as <name>Power and <name>Current
        values = sk.element_values(type_iri)
        rules = sk.damage_rules_for(sk.components[cid], params)
        reads = {name for rule in ([emit] if emit is not None else []) + [r.condition for r in rules] for name in rule.names}
        own = []
        for ep in elements:
            el = ep.element
            if not el.name.startswith("rc"):      # not a contact of one of its ends
                read = ep.label and (f"{ep.label}Power" in reads or f"{ep.label}Current" in reads)
                own.append((el.name, el.node_a, el.node_b, ep.label if read else ""))
        single = len(own) == 1 and len(spice_node) == 2 and own[0][1] != own[0][2] \
            and {own[0][1], own[0][2]} == set(spice_node.values())
        positive = self.positive_port[cid]
        other = next((name for name in self._port_names[cid] if name != positive), positive)
        bypass = frozenset(ep.element.name for ep in elements if any(d.bypass and d.name == ep.label for d in sk.mapping[type_iri]))
        contacts = tuple((e.name, e.node_a, e.node_b) for e in (ep.element for ep in elements) if e.name.startswith("rc"))
        return Reader(cid, self._type[cid], tuple(own), spice_node[positive],
                      tuple((name, ports.get((cid, name)), spice_node[name]) for name in self._port_names[cid]), emit, rules,
                      {**params, **values} if emit is not None or rules else None,
                      frozenset(label for *_, label in own if label), single, (positive, other), bypass, contacts)

    @staticmethod
    def _node_name(comp: Component, k: int, spice_node: dict[str, str], name: str, where: str) -> str:
        if name.startswith("#"):
            return f"c{k}i{name[1:]}"
        if name not in spice_node:
            raise ExpressionError(f"{where}: the mapping names port {name!r}, which a {comp.type} does not have")
        return spice_node[name]

    # ------------------------------------------------------------------
    def _contact_state(self, state: CircuitState, plan: _Plan) -> dict[str, bool]:
        """Initial live values: contacts by forced > position > nominal; sensors dark."""
        sk = self.skeleton
        forced, positions = dict(state.forced), dict(state.positions)
        live: dict[str, bool] = {}
        for cid, params in plan.params.items():
            if "normallyClosed" in params:
                live[f"closed:{cid}"] = forced.get(cid, positions.get(cid, bool(params["normallyClosed"])))
        for c in sk.couplings:
            if c.kind == "OpticalCoupling" and c.receiver in plan.params:
                live[f"illuminated:{c.receiver}"] = False
        return live

    def _solve(self, state: CircuitState, hub: tuple[PortRef, PortRef, float] | None = None) -> SimulationResult:
        """Solve ``state``, then damage what its damage rules say is damaged and solve again,
        until no further damage occurs (at most :data:`MAX_DAMAGE_ROUNDS` rounds); with ``hub``,
        a short between two of its nodes added through the hub (see :meth:`screen_shorts`)."""
        current = state
        settled = False
        events: list[Damage] = []
        for _ in range(MAX_DAMAGE_ROUNDS):
            result, hits, seen = self._solve_once(current, hub)
            fresh = {k: v for k, v in hits.items() if k not in current.damaged}
            new = first_to_fail(fresh, lambda cid: self.skeleton.components[cid].type, self.skeleton.damage_first) if fresh else []
            if not new:
                settled = True
                break
            events += [Damage(cid, name, seen[cid].current, seen[cid].power) for cid, name in new]
            current = current.evolve(damaged=current.damaged | set(new))
        if not events:
            return result
        return replace(result, damage=tuple(events), damage_settled=settled, converged=result.converged and settled)

    def _solve_once(self, state: CircuitState, hub: tuple[PortRef, PortRef, float] | None = None,
                    ) -> tuple[SimulationResult, dict[tuple[str, str], float], dict[str, ComponentResult]]:
        """Solve ``state`` and its couplings; the result, the damage its operating points call for, and each
        damaged component as the solve that damages it most found it. The damage of the converged solve; of a
        state that does not settle (a relay chattering), what any of its last solves (:data:`FLICKER_WINDOW`)
        calls for: it passes through each of them in turn, and a fuse carrying many times its rating in one
        blows."""
        plan = self._plan(state) if hub is None else self._hub_plan(state, hub)
        live = self._contact_state(state, plan)
        values = plan.static.copy()
        components: dict[str, ComponentResult] = {}
        converged = False
        error = None
        iterations = 0
        lit_history: list[frozenset[str]] = []
        hit_history: list[tuple[dict[tuple[str, str], float], dict[str, ComponentResult]]] = []
        solved_live = live
        op: OperatingPoint | None = None
        for iterations in range(1, MAX_ITERATIONS + 1):  # noqa: B007 - read after the loop
            for ep in plan.dynamic:
                values[ep.element.name] = ep.value(live)
            try:
                op = self.engine.operating_point(plan.topology, plan.spice, values, plan.nodes)
            except SimulationError as exc:
                error = str(exc)
                components = {}
                op = None
                break
            self.stats["solves"] += 1
            components, hits = read(plan.readers, op)   # each component's results, the damage its rules call for
            hit_history.append((hits, components))
            lit_history.append(frozenset(cid for cid, c in components.items() if c.lit))
            solved_live = live
            new_live = self._couplings(state, plan, components, live)
            if new_live == live:
                converged = True
                break
            live = new_live
        lit = tuple(sorted(cid for cid, c in components.items() if c.lit))
        flickering: tuple[str, ...] = ()
        damage: dict[tuple[str, str], float] = {}
        seen: dict[str, ComponentResult] = {}
        if error is None:
            recent = lit_history[-FLICKER_WINDOW:]
            flickering = () if converged else tuple(sorted(frozenset().union(*recent) - frozenset.intersection(*recent)))
            for hits, at in hit_history[-1:] if converged else hit_history[-FLICKER_WINDOW:]:
                for key, over in hits.items():
                    if key not in damage or over > damage[key]:
                        damage[key], seen[key[0]] = over, at[key[0]]
        probe = None
        shorts: tuple[ShortResult, ...] = ()
        if op is not None:
            if state.probe:
                probe = abs(op.currents.get("vprobe", 0.0))
            shorts = tuple(ShortResult((pa, pb), op.currents[f"rs{m}"], element_power(op, plan.short_elements[m]))
                           for m, (pa, pb, _) in enumerate(state.shorts))
        return SimulationResult(self.skeleton.key, converged, iterations, lit, components, solved_live, error,
                                probe_current=probe, flickering=flickering, shorts=shorts), damage, seen

    def _couplings(self, state: CircuitState, plan: _Plan, components: dict[str, ComponentResult],
                   live: dict[str, bool]) -> dict[str, bool]:
        return next_live(self.skeleton, state, plan.params, components, live)

    # ------------------------------------------------------------------
    def netlist(self, state: CircuitState = NOMINAL) -> str:
        """The SPICE netlist of a (realised) state, for people to read."""
        plan = self._plan(self.realize(state))
        live = self._contact_state(state, plan)
        lines = [f"* {self.skeleton.label} ({self.skeleton.key})"]
        for ep in plan.elements:
            comment = f" ; {ep.component or ('tie to ground' if ep.element.name.startswith('rtie') else 'short')}"
            lines.append(ep.element.card(ep.value(live)) + comment)
            if ep.element.model:
                lines.append(f".model m_{ep.element.name} D(IS={ep.element.model[0]!r} N={ep.element.model[1]!r})")
        return "\n".join(lines)


__all__ = ["Simulator", "SimulationResult", "ComponentResult", "Damage", "ShortResult", "result_quads", "CircuitState",
           "NOMINAL"]

