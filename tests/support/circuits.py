"""Random systems written in the vocabulary, for the property-based tests (hypothesis) and
``benchmarks/random_circuits.py``.

A generated system is one to three *loops*. Each loop is a voltage source feeding a
series-parallel network of bulbs, LEDs (any colour, forward voltage 1.6-3.6 V), diodes either
way round, resistors, switches (open or closed), fuses and cables, always through a limiting
resistor or bulb of at least 10 ohms, so that no path shorts a source or puts a bare diode
across it (currents stay under 2.4 A, below every fuse's rating). Every source's negative
terminal sits on the system's ground, so the loops share only that node. Components are spread
over up to three modules.

What the generator knows about its own circuit, to check the simulator against:
:attr:`GeneratedSystem.blocked` is every component in an *open branch* (in series with an open
switch or a reversed diode or LED, in a series-parallel network fed from one side), which can
carry no current.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from hypothesis import strategies as st

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.validation import Validator
from diagkg.sim.circuit import CircuitState
from diagkg.sim.simulator import SimulationResult, Simulator

KEY = "random_circuit"
PORTS = {"VoltageSource": ("pos", "neg"), "LED": ("anode", "cathode"), "Diode": ("anode", "cathode")}
PREFIX = {"VoltageSource": "bat", "Bulb": "bulb", "LED": "led", "Diode": "d", "Resistor": "r", "Switch": "sw",
          "Fuse": "fuse", "Cable": "cable"}
COLOURS = ("red", "green", "yellow", "amber", "blue", "white", "ultraviolet")


@dataclass(frozen=True)
class Leaf:
    """One component of a network, between the network's two sides (first port on the positive side)."""

    type: str                                    # Bulb, LED, Diode, Resistor, Switch, Fuse, Cable
    params: tuple[tuple[str, object], ...] = ()  # dk: property -> value
    reversed: bool = False                       # a diode or LED with its cathode on the positive side
    detachable: bool = False
    module: int = 0

    def blocks(self, flipped: bool = False) -> bool:
        """Whether it lets no current pass from its positive side (``flipped``: every switch toggled)."""
        closed = dict(self.params).get("normallyClosed")
        return self.reversed or (closed is not None and closed == flipped)


@dataclass(frozen=True)
class Series:
    parts: tuple["Node", ...]


@dataclass(frozen=True)
class Parallel:
    parts: tuple["Node", ...]


Node = Union[Leaf, Series, Parallel]


def blocks(node: Node, flipped: bool = False) -> bool:
    """Whether no current can pass through ``node`` from its positive side."""
    if isinstance(node, Leaf):
        return node.blocks(flipped)
    if isinstance(node, Series):
        return any(blocks(p, flipped) for p in node.parts)
    return all(blocks(p, flipped) for p in node.parts)


@dataclass(frozen=True)
class Loop:
    voltage: int
    module: int
    network: Series          # the limiting resistor or bulb is one of its parts


@dataclass
class GeneratedSystem:
    loops: tuple[Loop, ...]
    key: str = KEY
    turtle: str = ""
    blocked: frozenset[str] = frozenset()                 # components in an open branch
    blocked_flipped: frozenset[str] = frozenset()         # the same with every switch toggled
    types: dict[str, str] = field(default_factory=dict)   # component -> type
    switches: dict[str, bool] = field(default_factory=dict)   # switch -> normally closed

    def flipped(self) -> CircuitState:
        """The state with every switch in the other position."""
        return CircuitState.make(positions=[(cid, not closed) for cid, closed in self.switches.items()])

    def write(self, folder: Path) -> Path:
        path = folder / f"{self.key}.ttl"
        path.write_text(self.turtle, encoding="utf-8")
        return path


# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------

modules = st.integers(0, 2)


def _leaf(type_: str, *params: tuple[str, st.SearchStrategy[object]], reversible: bool = False,
          detachable: bool = False) -> st.SearchStrategy[Leaf]:
    names = [name for name, _ in params]
    return st.builds(
        lambda values, rev, det, module: Leaf(type_, tuple((n, v) for n, v in zip(names, values, strict=True) if v is not None),
                                              rev, det, module),
        st.tuples(*(s for _, s in params)),
        st.booleans() if reversible else st.just(False),
        st.booleans() if detachable else st.just(False),
        modules)


def _volts(low: int, high: int) -> st.SearchStrategy[object]:
    """Volts with two decimals, from low/100 to high/100."""
    return st.integers(low, high).map(lambda x: x / 100)


bulbs = _leaf("Bulb", ("resistance", st.sampled_from([10, 22, 47, 60, 100, 220])),
              ("powerThreshold", st.sampled_from([0.05, 0.1, 0.5, 1.0])))
leds = _leaf("LED", ("forwardVoltage", _volts(160, 360)), ("color", st.sampled_from(COLOURS)),
             ("forwardCurrent", st.sampled_from([None, 0.01, 0.02])),
             ("powerThreshold", st.sampled_from([None, 0.005, 0.02])), reversible=True)
diodes = _leaf("Diode", ("forwardVoltage", _volts(30, 100)), reversible=True)
resistors = _leaf("Resistor", ("resistance", st.sampled_from([1, 4.7, 33, 100, 330, 1000, 4700, 10000])))
switches = _leaf("Switch", ("normallyClosed", st.booleans()))
fuses = _leaf("Fuse", ("ratedCurrent", st.sampled_from([5, 10])))
cables = _leaf("Cable", ("resistance", st.sampled_from([None, 0.05, 0.5])), detachable=True)
# LEDs twice as often as the rest: their model is the one that gets things wrong
leaves: st.SearchStrategy[Node] = st.one_of(leds, bulbs, leds, diodes, resistors, switches, fuses, cables)
limiters = st.one_of(_leaf("Resistor", ("resistance", st.sampled_from([10, 47, 100, 470, 1000]))), bulbs)

networks: st.SearchStrategy[Node] = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, min_size=2, max_size=3).map(lambda xs: Series(tuple(xs))),
                            st.lists(inner, min_size=2, max_size=3).map(lambda xs: Parallel(tuple(xs)))),
    max_leaves=8)


@st.composite
def loops(draw: st.DrawFn) -> Loop:
    network = draw(networks)
    parts = list(network.parts) if isinstance(network, Series) else [network]
    parts.insert(draw(st.integers(0, len(parts))), draw(limiters))
    return Loop(draw(st.integers(3, 24)), draw(modules), Series(tuple(parts)))


def systems(max_loops: int = 2) -> st.SearchStrategy[GeneratedSystem]:
    """Valid random systems (see the module's docstring), rendered as Turtle."""
    return st.lists(loops(), min_size=1, max_size=max_loops).map(lambda ls: render(tuple(ls)))


# ---------------------------------------------------------------------------
# Turtle
# ---------------------------------------------------------------------------

def _literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def render(loops_: tuple[Loop, ...], key: str = KEY) -> GeneratedSystem:
    """The Turtle of a system made of ``loops_``, and what is known about it."""
    counter = itertools.count()
    lines: list[str] = []
    nets: dict[int, list[str]] = {}
    blocked: tuple[set[str], set[str]] = (set(), set())    # nominal, every switch flipped
    types: dict[str, str] = {}
    switches: dict[str, bool] = {}
    used_modules: set[int] = set()
    net_ids = itertools.count(1)
    ground = 0

    def component(type_: str, params: tuple[tuple[str, object], ...], module: int, detachable: bool) -> str:
        cid = f"{PREFIX[type_]}{next(counter)}"
        used_modules.add(module)
        types[cid] = type_
        ports = PORTS.get(type_, ("p", "n"))
        affords = "dk:Observable, dk:Measurable, dk:Replaceable" + (", dk:Detachable" if detachable else "")
        props = "".join(f" dk:{name} {_literal(value)} ;" for name, value in params)
        lines.append(f':{cid} a dk:{type_} ; dcterms:identifier "{cid}" ; rdfs:label "{type_} {cid[len(PREFIX[type_]):]}" ; '
                     f"dk:partOf :m{module} ;{props}\n    dk:affords {affords} ; "
                     f"dk:hasPort {', '.join(f':{cid}.{p}' for p in ports)} .")
        lines.append(" ".join(f':{cid}.{p} a dk:Port ; dk:portName "{p}" .' for p in ports))
        return cid

    def place(node: Node, a: int, b: int, off: tuple[bool, bool]) -> None:
        """Put ``node`` between nets ``a`` (positive side) and ``b``; ``off``: whether it is in an
        open branch (nominally, and with every switch flipped)."""
        if isinstance(node, Leaf):
            cid = component(node.type, node.params, node.module, node.detachable)
            first, second = PORTS.get(node.type, ("p", "n"))
            if node.reversed:
                first, second = second, first
            nets.setdefault(a, []).append(f"{cid}.{first}")
            nets.setdefault(b, []).append(f"{cid}.{second}")
            for flipped in (False, True):
                if off[flipped] or node.blocks(flipped):
                    blocked[flipped].add(cid)
            if node.type == "Switch":
                switches[cid] = bool(dict(node.params)["normallyClosed"])
        elif isinstance(node, Series):
            off = (off[0] or blocks(node), off[1] or blocks(node, True))
            ends = [a, *(next(net_ids) for _ in node.parts[1:]), b]
            for part, (x, y) in zip(node.parts, itertools.pairwise(ends), strict=True):
                place(part, x, y, off)
        else:
            for part in node.parts:
                place(part, a, b, off)

    for loop in loops_:
        source = component("VoltageSource", (("voltage", loop.voltage),), loop.module, False)
        top = next(net_ids)
        nets.setdefault(top, []).append(f"{source}.pos")
        nets.setdefault(ground, []).append(f"{source}.neg")
        for flipped in (False, True):
            if blocks(loop.network, flipped):
                blocked[flipped].add(source)
        place(loop.network, top, ground, (False, False))

    first_source = next(cid for cid, t in types.items() if t == "VoltageSource")
    head = [
        f"@prefix : <https://example.org/{key}/> .",
        "@prefix dk: <https://w3id.org/diagkg/ontology#> .",
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .",
        "@prefix dcterms: <http://purl.org/dc/terms/> .",
        "",
        f':{key} a dk:System ; dk:systemKey "{key}" ; dcterms:identifier "{key}" ; rdfs:label "A random circuit" ;',
        f"    dk:groundReference :{first_source}.neg ;",
        f'    dcterms:description "{len(loops_)} source(s) feeding series-parallel networks, generated for a '
        'property-based test." .',
    ]
    head += [f':m{m} a dk:Module ; dcterms:identifier "m{m}" ; rdfs:label "Module {m}" ; dk:partOf :{key} .'
             for m in sorted(used_modules)]
    wiring = [f":{ports[0]} dk:connectedTo {', '.join(f':{p}' for p in ports[1:])} ."
              for _, ports in sorted(nets.items()) if len(ports) > 1]
    turtle = "\n".join([*head, "", *lines, "", *wiring]) + "\n"
    return GeneratedSystem(loops_, key, turtle, frozenset(blocked[0]), frozenset(blocked[1]), types, switches)


def reachable(loops_: tuple[Loop, ...], key: str) -> str:
    """The Turtle of the system of ``loops_`` with every part reachable by the service agent too (the
    generator's parts afford only what a simulation needs), as benchmarks/unwritten_systems.py loads them."""
    return render(loops_, key=key).turtle.replace("dk:affords dk:Observable,", "dk:affords dk:Observable, dk:Reachable,")


def part(kind: str, module: int, reversed: bool = False, detachable: bool = False, **params: object) -> Leaf:
    """A component of ``kind`` in box ``module`` with its ``params`` (dk: property -> value), as a test writes one."""
    return Leaf(kind, tuple(params.items()), reversed=reversed, detachable=detachable, module=module)


def scenarios_between(store: KnowledgeStore, ends: set[str]) -> list[int]:
    """The stored scenarios whose faults' ends (``part.port`` of each target and other end) are ``ends``: the
    generated short between two nodes, found by where it goes."""
    from diagkg.env.scenarios import ScenarioCatalog

    catalog = ScenarioCatalog(store)
    return [n for n in catalog.numbers()
            if {(iri or "").rsplit("/", 1)[-1] for f in catalog.resolve(n).faults for iri in (f.target, f.other)}
            - {""} == ends]


def with_generated(folder: Path, key: str, turtle: str, modes: frozenset[str], **options: Any) -> KnowledgeStore:
    """A fresh in-memory store holding the shipped catalogue, the system ``turtle`` (written into ``folder``
    as ``key``.ttl) and the scenarios ``diagkg generate`` makes of it with fault ``modes`` (not checked;
    ``options``: more of its configuration, e.g. ``seeds``)."""
    from diagkg.generation.generate import GenerationConfig, generate

    from .stores import catalog_copy

    (folder / f"{key}.ttl").write_text(turtle)
    store = catalog_copy()          # the shipped catalogue, copied from one loaded once
    load_files(store, [folder / f"{key}.ttl"])
    gen = generate(store, GenerationConfig(key, modes=modes, check=False, **options))
    load_files(store, gen.write(folder / "scenarios"))
    return store


def load(system: GeneratedSystem, folder: Path, validator: Validator | None = None) -> KnowledgeStore:
    """A fresh in-memory store holding ``system``, validated with the shapes and loaded as a user would."""
    store = KnowledgeStore.memory()
    load_files(store, [system.write(folder)], validator=validator)
    return store


# ---------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------

CURRENT_FLOOR = 1e-6        # A: a node's currents sum to zero within this, or within CURRENT_SHARE of the largest
CURRENT_SHARE = 1e-3
POWER_FLOOR = 1e-6          # W: power balances within this, or within POWER_SHARE of what the sources deliver
POWER_SHARE = 1e-3
OPEN_CURRENT = 1e-6         # A: the most a component in an open branch may carry (leakage through 1e9 ohm, gmin)


def invariant_failures(result: SimulationResult, sim: Simulator, blocked: frozenset[str]) -> list[str]:
    """What is wrong with ``result`` (a solve of a generated system whose open branches are
    ``blocked``): current law at every node, power balance, each light as its type's emission
    rule says on the reported values, nothing in an open branch carrying current."""
    sk = sim.skeleton
    out: list[str] = []
    if not result.converged or result.error:
        return [f"did not converge ({result.error})"]
    comps = result.components

    def across(cid: str) -> float:
        c = comps[cid]
        positive = sim.positive_port[cid]
        other = next(p for p in c.port_v if p != positive)
        return (c.port_v[positive] or 0.0) - (c.port_v[other] or 0.0)

    # current law: what leaves each net into the ports on it (each component's reported port currents),
    # and each component's current is what enters at its positive port
    terms: dict[int, list[tuple[str, float]]] = {}
    for (cid, port), net in sk.net_of_port.items():
        entering = comps[cid].port_i[port]
        assert entering is not None, f"{cid}.{port} floats"
        terms.setdefault(net, []).append((f"{cid}.{port}", entering))
    for cid, c in sorted(comps.items()):
        entering = c.port_i[sim.positive_port[cid]] or 0.0
        if abs(entering - c.current) > max(CURRENT_FLOOR, CURRENT_SHARE * abs(c.current)):
            out.append(f"{cid}'s current is {c.current:.6g} A, but {entering:.6g} A enter at its positive port")
    for _, currents in sorted(terms.items()):
        total = sum(i for _, i in currents)
        scale = max(abs(i) for _, i in currents)
        if abs(total) > max(CURRENT_FLOOR, CURRENT_SHARE * scale):
            out.append(f"current law broken at the node of {', '.join(p for p, _ in currents)}: "
                       f"the currents leaving it ({', '.join(f'{p} {i:.6g}' for p, i in currents)}) sum to {total:.3g} A")
    # power balance: what the ports take in (sources negative) sums to zero, and the reported powers agree
    sources = [cid for cid, c in comps.items() if c.type == "VoltageSource"]
    delivered = -sum(across(cid) * comps[cid].current for cid in sources)
    absorbed = sum(across(cid) * comps[cid].current for cid in comps if cid not in sources)
    tolerance = max(POWER_FLOOR, POWER_SHARE * abs(delivered))
    if abs(delivered - absorbed) > tolerance:
        out.append(f"power balance broken: the sources deliver {delivered:.6g} W, the rest takes {absorbed:.6g} W")
    reported = sum(comps[cid].power for cid in comps if cid not in sources)
    if abs(sum(comps[cid].power for cid in sources) - reported) > tolerance:
        out.append(f"reported powers do not balance: sources {sum(comps[c].power for c in sources):.6g} W, "
                   f"the rest {reported:.6g} W")
    # lights: lit exactly when the emission rule holds on the reported values
    for cid, c in sorted(comps.items()):
        comp = sk.components[cid]
        rule = sk.emits.get(comp.type_iri)
        if rule is None:
            continue
        params = sk.params_of(comp)
        env: dict[str, Any] = dict(params)
        # a generated part is never shorted or faulted: all of a lamp's current and power are its filament's
        # (each named element's as <name>Power and <name>Current)
        env.update(power=c.power, current=c.current, voltage=across(cid))
        for decl in sk.mapping[comp.type_iri]:
            if decl.name:
                env.update({f"{decl.name}Power": c.power, f"{decl.name}Current": c.current})
        expected = bool(rule(env))
        if c.lit is not expected:
            out.append(f"{cid} is {'lit' if c.lit else 'dark'}, but its emission rule says {'lit' if expected else 'dark'} "
                       f"(current {c.current:.6g} A, power {c.power:.6g} W, voltage {across(cid):.6g} V)")
    # open branches
    for cid in sorted(blocked):
        c = comps[cid]
        if abs(c.current) > OPEN_CURRENT or c.lit:
            out.append(f"{cid} is in an open branch but carries {c.current:.6g} A" + (" and is lit" if c.lit else ""))
    return out
