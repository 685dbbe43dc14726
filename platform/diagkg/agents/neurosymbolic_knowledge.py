"""The neuro-symbolic assistant's knowledge of a system (:mod:`diagkg.agents.neurosymbolic`):
the tests (:class:`Test`) and :class:`Knowledge` read from the store through the
``ns-*`` queries (dependencies, labels, problems, tests, couplings, the fault
catalogue's priors by mode and on types), cached per version of the graphs they come from, and the
dense-set candidate rule (:func:`dense_candidates`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from ..env.service import simulator_for
from ..env.worlds import FaultMode, fault_modes
from ..errors import AssistantError, SimulationError
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.store import KnowledgeSource
from ..sim.circuit import NOMINAL, CircuitState
from ..sim.results import ComponentResult, SimulationResult
from ..sim.simulator import Simulator


@dataclass(frozen=True)
class Test:
    action: str
    component: str
    cost: float
    modes: frozenset[str]



def dense_candidates(components: set[str], evidence: list[frozenset[str]]) -> set[str]:
    """The minimum open dense set: components whose support is inclusion-maximal."""
    if not evidence:
        return set(components)
    support = {c: frozenset(i for i, e in enumerate(evidence) if c in e) for c in components}
    patterns = set(support.values())
    maximal = {p for p in patterns if not any(p < q for q in patterns)}
    return {c for c, p in support.items() if p in maximal}


@dataclass(frozen=True)
class Knowledge:
    """What the graph says about one system, read once per store (the ns-* queries).

    Shared between sessions: read it, never change it.
    """

    deps: dict[str, set[str]]
    names: dict[str, list[str]]
    problems: dict[str, set[str]]
    tests: dict[tuple[str, str], Test]
    enclosed: frozenset[str] = frozenset()        # components inside an enclosure (access costs a step)
    # couplings an element can block: (emitter, receiver, element, test) — a coupling that
    # acts when it should not is a problem of the element that would block it
    couplings: tuple[tuple[str | None, str | None, str, Test], ...] = ()
    # the fault catalogue's modes by IRI: how likely each is on a part of a type (FaultMode.prior_on)
    modes: dict[str, FaultMode] | None = None
    intermittent: frozenset[str] = frozenset()    # fault modes that act at random (a probability parameter)
    driven: frozenset[str] = frozenset()          # parts a switching coupling opens and closes (relays)
    port_modes: frozenset[str] = frozenset()      # fault modes of a part's ends (dk:targetKind "port")
    # for a system that declares no functions (no dependencies): each part's needs by the wiring
    wired: dict[str, set[str]] = field(default_factory=dict)
    # declared needs that are spares: two needs of a part either of which is enough on the simulated working
    # system (one of two supplies joined through diodes); see :func:`spare_dependencies`
    spares: dict[str, set[str]] = field(default_factory=dict)
    # each lamp dark in the working system with the parts whose opening lights it (a cable or a closed switch
    # across it): what a lamp seen lit, or coming and going, there implicates (see :func:`keepers_dark`)
    keepers: dict[str, set[str]] = field(default_factory=dict)
    # each part a switching coupling drives, with the parts its dk:closedWhen expression reads (a current, a
    # potential, a sensor lit) and the emitters of the optical couplings that light a sensor it reads: whether
    # what opens it is what its own current feeds (a lamp's current, its light), or a coil, a sensor's divider
    reads: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, store: KnowledgeSource, key: str) -> "Knowledge":
        """The knowledge of system ``key`` (cached by the versions of the graphs it is read from)."""
        version = (key, *(store.version_of(g) for g in (graphs.ONTOLOGY, graphs.system(key), graphs.inferred(key))))
        known = _KNOWLEDGE.get(version)
        if known is None:
            if not version[3]:
                raise AssistantError(f"the store holds no inferences for system {key}; load the system "
                                     "again (inferences are computed when a system is loaded) or run "
                                     f"`diagkg reason {key}`")
            system = ox.NamedNode(store.select("sim-system", {"key": ox.Literal(key)})[0]["system"])
            deps: dict[str, set[str]] = {}
            for r in store.select("ns-dependencies", {"system": system}):
                deps.setdefault(r["component"], set()).add(r["dependency"])
            # a system that declares no functions: what its wiring says instead (the assistant's `wiring`)
            sim = simulator_for(store, key)
            wired = {} if deps else wired_dependencies(sim)
            spares = spare_dependencies(sim, deps) if deps else {}
            keepers = keepers_dark(sim)
            names: dict[str, list[str]] = {}
            for r in store.select("ns-labels", {"system": system}):
                names.setdefault(r["component"], []).append(r["name"])
            problems: dict[str, set[str]] = {}
            for r in store.select("ns-problems", {"system": system}):
                problems.setdefault(r["component"], set()).add(r["mode"])
            found: dict[tuple[str, str], dict[str, Any]] = {}
            for r in store.select("ns-tests", {"system": system}):
                t = found.setdefault((r["action"], r["component"]), {"cost": float(r["cost"]), "modes": set()})
                t["modes"].add(r["mode"])
            tests = {k: Test(k[0], k[1], v["cost"], frozenset(v["modes"])) for k, v in found.items()}
            ns = graphs.namespace_of(system.value)
            enclosed = frozenset(c for c in names if store.select("part-access", {"part": ox.NamedNode(ns + c)}))
            couplings = tuple((r["emitter"], r["receiver"], r["element"],
                               Test(r["action"], r["element"], float(r["cost"]), frozenset({r["mode"]})))
                              for r in store.select("ns-coupling-tests", {"system": system}))
            modes = fault_modes(store)
            intermittent = frozenset(iri for iri, m in modes.items() if m.chance)
            driven = frozenset(r["driven"] for r in store.select("ns-switching", {"system": system}))
            port_modes = frozenset(iri for iri, m in modes.items() if m.kind == "port")
            reads = switch_reads(sim)
            known = _KNOWLEDGE.put(version, cls(deps, names, problems, tests, enclosed, couplings, modes,
                                                intermittent, driven, port_modes, wired, spares, keepers, reads))
        return known


def switch_reads(sim: Simulator) -> dict[str, frozenset[str]]:
    """Each part a switching coupling drives, with what opens and closes it: the parts its expression names,
    and the emitters of the optical couplings whose light falls on one of them (a sensor)."""
    couplings = sim.skeleton.couplings
    out: dict[str, frozenset[str]] = {}
    for c in couplings:
        if c.drives and c.closed_when is not None:
            named = {args[0] for _, args in c.closed_when.calls if args}
            out[c.drives] = frozenset(named | {o.emitter for o in couplings if o.emitter and o.receiver in named})
    return out


def opening(sim: Simulator, *cids: str) -> CircuitState:
    """The working system with the parts ``cids`` opened: every end of each off its terminal."""
    return NOMINAL.evolve(detached={(c, port) for c in cids for port in sim.skeleton.components[c].ports})


def wired_dependencies(sim: Simulator) -> dict[str, set[str]]:
    """What each component needs, by the wiring, for a system that declares no functions: the parts
    whose opening (every end off) puts it out (a lamp lit when the system works) or stops its current
    (any other part that carries one), and the switches set up open whose closing does (one across a
    lamp: stuck closed, it puts the lamp out). What ``ns-dependencies.rq`` reads from declared functions."""
    def works(r: ComponentResult | None) -> bool:
        """A lamp lit, or another part carrying a current."""
        return r is not None and (bool(r.lit) if r.lit is not None else abs(r.current) > WIRED_CURRENT)

    nominal = sim.simulate()
    working = {cid for cid, r in nominal.components.items() if works(r)}
    deps: dict[str, set[str]] = {}
    for cid in sorted(sim.skeleton.components):
        changed = [opening(sim, cid)]
        if nominal.live.get(f"closed:{cid}") is False:
            changed.append(NOMINAL.evolve(forced=((cid, True),)))
        for state in changed:
            try:
                result = sim.simulate(state)
            except SimulationError:
                continue
            for other in working - {cid}:
                if not works(result.components.get(other)):
                    deps.setdefault(other, set()).add(cid)
    return deps


def spare_dependencies(sim: Simulator, deps: dict[str, set[str]]) -> dict[str, set[str]]:
    """The declared needs a part has two of, either one enough: needs P and Q of a part X such that, in
    the simulated working system, X keeps working as it did (lit as it was, its current within
    :data:`SPARE_SHARE`) with P opened alone (every end off) and with Q opened alone, and stops working
    with both opened (a lamp fed by two supplies joined through diodes needs one of them, not both). A
    need that only one-at-a-time openings leave alone but no second opening makes needed is kept (a relay
    needs the light sensor that opens it: opening the sensor shows nothing in the working system)."""
    nominal = sim.simulate()

    def opened(*cids: str) -> SimulationResult | None:
        try:
            result = sim.simulate(opening(sim, *cids))
        except SimulationError:
            return None
        return result if result.converged else None

    def same(other: str, result: SimulationResult) -> bool:
        before, after = nominal.components.get(other), result.components.get(other)
        if before is None or after is None:
            return False
        if before.lit is not None and after.lit != before.lit:
            return False
        return abs(after.current - before.current) <= SPARE_SHARE * abs(before.current)

    working = {c for c, r in nominal.components.items() if r is not None and abs(r.current) > WIRED_CURRENT}
    needed = sorted({d for c, ds in deps.items() if c in working for d in ds} & set(sim.skeleton.components))
    alone = {cid: opened(cid) for cid in needed}
    spared: dict[str, set[str]] = {}           # per part, the needs it keeps working without, one at a time
    for cid, result in alone.items():
        if result is None:
            continue
        for other in working:
            if other != cid and cid in deps.get(other, ()) and same(other, result):
                spared.setdefault(other, set()).add(cid)
    pairs: dict[tuple[str, str], SimulationResult | None] = {}
    spares: dict[str, set[str]] = {}
    for other, maybe in sorted(spared.items()):
        for p, q in itertools.combinations(sorted(maybe), 2):
            if (p, q) not in pairs:
                pairs[(p, q)] = opened(p, q)
            both = pairs[(p, q)]
            if both is not None and not same(other, both):
                spares.setdefault(other, set()).update((p, q))
    return spares


def keepers_dark(sim: Simulator) -> dict[str, set[str]]:
    """Each lamp dark in the working system, with the parts whose opening (every end off) lights it: what
    keeps it dark (a cable or a switch set closed across it, a part that takes its current). A lamp seen
    lit, or coming and going, there speaks of these as much as of itself (a loose end of a cable across
    an LED makes it flicker), which its needs (what lights it) do not say. One simulation per part."""
    nominal = sim.simulate()
    dark = {c for c, r in nominal.components.items() if r is not None and r.lit is False}
    keepers: dict[str, set[str]] = {}
    if not dark:
        return keepers
    for cid in sorted(sim.skeleton.components):
        try:
            result = sim.simulate(opening(sim, cid))
        except SimulationError:
            continue
        for lamp in sorted(dark - {cid}):
            r = result.components.get(lamp)
            if r is not None and r.lit:
                keepers.setdefault(lamp, set()).add(cid)
    return keepers


SPARE_SHARE = 0.1        # a current that changes by less than this share is the same (a spare's opening)
WIRED_CURRENT = 1e-6     # A: a part carrying less carries none (leakage through open ends)


@dataclass(frozen=True)
class ShortScreen:
    """What a short between two nodes of the working system shows, every pair of nodes on one circuit
    (:meth:`~diagkg.sim.simulator.Simulator.screen_shorts`): each node's ports, and per pair of nodes the
    lamps lit with a short there (None: it damages something, or no solution)."""

    nodes: dict[int, tuple[tuple[str, str], ...]]
    lit: dict[tuple[int, int], frozenset[str] | None]
    # per pair of nodes, the parts a short there damages (a fuse it blows; the lamps lit are then those of the
    # damaged circuit); a pair missing here damages nothing
    damaged: dict[tuple[int, int], frozenset[str]] = field(default_factory=dict)

    def suspects(self, lit: frozenset[str], dark: frozenset[str],
                 blown: frozenset[str] = frozenset()) -> list[tuple[str, float]]:
        """The parts a short showing the lamps ``lit`` lit and ``dark`` dark may sit on, most likely first
        (:meth:`weigh` of :meth:`showing`)."""
        return self.weigh(self.showing(lit, dark, blown))

    def showing(self, lit: frozenset[str], dark: frozenset[str],
                blown: frozenset[str] = frozenset(), damaging: bool = False) -> list[tuple[int, int]]:
        """The pairs of nodes a short between which shows the lamps ``lit`` lit and ``dark`` dark. A short
        that damages something shows the lamps of the damaged circuit, and is kept only when parts were
        found so damaged (``blown``: a fuse replaced that did not bring the system back), and then only one
        that damages every one of them; with ``damaging`` (and nothing found blown), only those that damage
        something."""
        out = []
        for (a, b), shown in self.lit.items():
            damaged = self.damaged.get((a, b), frozenset())
            if shown is None or not lit <= shown or dark & shown or \
                    (not blown <= damaged if blown else bool(damaged) != damaging):
                continue
            out.append((a, b))
        return out

    def weigh(self, pairs: list[tuple[int, int]], without: frozenset[str] = frozenset()) -> list[tuple[str, float]]:
        """The parts a short between one of ``pairs`` of nodes may sit on, most likely first: a short lies
        between one port of each of its nodes, each placement alike, so a part weighs the placements it is
        an end of among those of every pair; none on a part of ``without`` (named already: naming either
        end of a short clears it, so those placements are ruled out)."""
        total = float(sum(self.placements(a, b, without) for a, b in pairs))
        return sorted(((c, w / total) for c, w in self.ending(pairs, without).items() if w), key=lambda cw: (-cw[1], cw[0]))

    def covered(self, pairs: list[tuple[int, int]], parts: frozenset[str], without: frozenset[str] = frozenset()) -> float:
        """The share of the placements of a short between one of ``pairs`` of nodes (none on a part of
        ``without``) that naming ``parts`` clears (those with an end on one of them)."""
        total = sum(self.placements(a, b, without) for a, b in pairs)
        return (total - self.uncleared(pairs, parts, without)) / total if total else 0.0

    def placements(self, a: int, b: int, without: frozenset[str] = frozenset()) -> int:
        """The placements of a short between nodes ``a`` and ``b``: a port of each, none on a part of ``without``."""
        return len(self._ends(a, without)) * len(self._ends(b, without))

    def ending(self, pairs: list[tuple[int, int]], without: frozenset[str] = frozenset()) -> dict[str, int]:
        """Per part (none of ``without``), the placements of a short between one of ``pairs`` of nodes it is an end of."""
        count: dict[str, int] = {}
        for a, b in pairs:
            for here, there in ((a, b), (b, a)):
                others = len(self._ends(there, without))
                for cid in self._ends(here, without):
                    count[cid] = count.get(cid, 0) + others
        return count

    def uncleared(self, pairs: list[tuple[int, int]], parts: frozenset[str] | set[str],
                  without: frozenset[str] = frozenset()) -> int:
        """The placements of a short between one of ``pairs`` of nodes (none on a part of ``without``) with no end on
        one of ``parts``: those naming them leaves."""
        return sum(sum(c not in parts for c in self._ends(a, without)) * sum(c not in parts for c in self._ends(b, without))
                   for a, b in pairs)

    def _ends(self, node: int, without: frozenset[str]) -> list[str]:
        """The parts with a port on ``node`` (one entry per port), but those of ``without``."""
        return [cid for cid, _ in self.nodes[node] if cid not in without]


def short_screen(store: KnowledgeSource, key: str, resistance: float) -> ShortScreen:
    """The :class:`ShortScreen` of system ``key`` (shorts of ``resistance`` ohms), worked out once per
    version of its description: a solve per pair of nodes (about 2 ms each)."""
    version = (key, resistance, *(store.version_of(g) for g in (graphs.ONTOLOGY, graphs.system(key))))
    known = _SCREENS.get(version)
    if known is None:
        sim = simulator_for(store, key)
        nodes = sim.skeleton.ports_on_net
        pairs = [(a, b) for a in sorted(nodes) for b in sorted(nodes) if a < b]
        lamps = frozenset(c for c, comp in sim.skeleton.components.items() if comp.type in ("Bulb", "LED"))
        results = sim.screen_shorts(NOMINAL, [(nodes[a][0], nodes[b][0], resistance) for a, b in pairs])
        known = _SCREENS.put(version, ShortScreen(
            nodes,
            {pair: None if r is None or not r.damage_settled else frozenset(r.lit) & lamps
             for pair, r in zip(pairs, results, strict=True)},
            {pair: frozenset(d.component for d in r.damage)
             for pair, r in zip(pairs, results, strict=True) if r is not None and r.damage}))
    return known


_SCREENS: Memo[ShortScreen] = Memo("neuro-symbolic short screens", 16)
_KNOWLEDGE: Memo[Knowledge] = Memo("neuro-symbolic knowledge", 32)    # by the versions it is read from
