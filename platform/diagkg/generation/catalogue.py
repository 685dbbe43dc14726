"""Where the fault catalogue lets a fault be placed on a system.

Every fault mode of the catalogue (``fault-modes.rq``, read by :mod:`diagkg.env.worlds`) is placed on
every target of the system it applies to (``generation-fault-targets.rq``:
components of a type it applies to, subclasses included, ports of the
components it may take ports of, couplings). A two-target mode takes its
second target where its ``dk:otherTargetRule`` says:

* ``own`` — the component's other end (a part put in backwards), for
  components with exactly two such ports;
* ``alike`` — the same end of another component of the same type in the same
  module (two cables crossed);
* ``node`` — a port on another node of the circuit (a short between two
  nodes), one placement per pair of nodes.

A mode that takes a value and has no default (a drift of unknown size) cannot
be placed; neither can a two-target mode without a rule. Both are said, not
guessed. Several faults at once are drawn by prior weight (``dk:priorWeight``)
when there are more combinations than asked for.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

import pyoxigraph as ox

from ..env import worlds
from ..env.scenarios import Fault
from ..env.worlds import FaultMode

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource
    from ..sim.circuit import Skeleton

RULES = ("own", "alike", "node")


def unplaceable(mode: FaultMode) -> str | None:
    """Why ``mode`` cannot be placed (None when it can)."""
    if not mode.sized:
        return "it takes a value and the catalogue gives no default (dk:defaultFaultValue)"
    if mode.two_targets and mode.rule not in RULES:
        return "it takes a second target and says nowhere where that lies (dk:otherTargetRule)"
    return None


@dataclass(frozen=True)
class Placement:
    """One or more faults of the catalogue placed on a system, with their prior weight
    (the product of the modes' weights) and the parts their targets belong to."""

    faults: tuple[Fault, ...]
    prior: float
    parts: frozenset[str]

    @property
    def key(self) -> str:
        """A stable name of the placement ("Mode:target+other; …", targets by local name)."""
        return "; ".join(fault_key(f) for f in self.faults)

    def __len__(self) -> int:
        return len(self.faults)


def local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1] if "#" in iri else iri.rsplit("/", 1)[-1]


def fault_key(f: Fault) -> str:
    """``Mode:target`` (``+other`` for a second target), targets by local name."""
    return f"{f.mode}:{local(f.target)}" + (f"+{local(f.other)}" if f.other else "")


def fault_modes(store: KnowledgeSource) -> dict[str, FaultMode]:
    """The fault catalogue by local name (the what-if service's, :func:`diagkg.env.worlds.fault_modes`)."""
    return {m.name: m for m in worlds.fault_modes(store).values()}


def make_fault(mode: FaultMode, target: str, other: str | None = None) -> Fault:
    """A fault of ``mode`` on ``target`` (IRIs), its parameter at the mode's default."""
    return mode.fault("", target, other)


@dataclass(frozen=True)
class Unplaced:
    """A mode of the catalogue that generation leaves out, and why."""

    mode: str
    reason: str


def single_placements(store: KnowledgeSource, sk: Skeleton,
                      modes: Iterable[str] | None = None) -> tuple[list[Placement], list[Unplaced]]:
    """Every single fault the catalogue allows on the system of ``sk`` (``modes``: only these,
    by local name), in a fixed order, and the modes that cannot be placed."""
    catalogue = fault_modes(store)
    wanted = set(modes) if modes is not None else set(catalogue)
    unknown = wanted - set(catalogue)
    if unknown:
        from ..errors import UnknownTermError

        raise UnknownTermError(f"no fault mode {', '.join(sorted(unknown))} in the catalogue "
                               f"(it has {', '.join(sorted(catalogue))})")
    targets: dict[str, list[tuple[str, str | None]]] = {}
    for r in store.select("generation-fault-targets", {"system": ox.NamedNode(sk.iri)}):
        targets.setdefault(local(r["mode"]), []).append((r["target"], r["component"]))
    out: list[Placement] = []
    unplaced: list[Unplaced] = []
    for name in sorted(wanted):
        mode = catalogue[name]
        why = unplaceable(mode)
        if why is not None:
            unplaced.append(Unplaced(name, why))
            continue
        found = [(t, sk.iri_to_id.get(c) if c else None) for t, c in targets.get(name, [])]
        if mode.two_targets:
            out += _pairs(mode, sk, [(t, c) for t, c in found if c is not None])
        else:
            for target, owner in found:
                parts = frozenset({owner}) if owner else _coupling_parts(sk, target)
                out.append(Placement((make_fault(mode, target),), _prior(mode, sk, parts), parts))
    return out, unplaced


def _prior(mode: FaultMode, sk: Skeleton, parts: frozenset[str]) -> float:
    """How likely ``mode`` is on ``parts``: its weight on their type (``dk:TypePrior``) when it is on
    one part, or on parts of one type; else the mode's own."""
    types = {sk.components[p].type for p in parts if p in sk.components}
    return mode.prior_on(types.pop()) if len(types) == 1 else mode.prior


def _coupling_parts(sk: Skeleton, iri: str) -> frozenset[str]:
    """The parts a coupling fault makes faulty: what blocks the coupling (what a repair moves)."""
    cid = sk.iri_to_id.get(iri, local(iri))
    for c in sk.couplings:
        if c.id == cid:
            return frozenset(element for element, _ in c.blocked_when)
    return frozenset()


def _pairs(mode: FaultMode, sk: Skeleton, ports: list[tuple[str, str]]) -> list[Placement]:
    """The placements of a two-target mode: ``ports`` are its eligible (port IRI, component id)."""
    out: list[Placement] = []
    refs = {iri: sk.port_of_iri[iri] for iri, _ in ports if iri in sk.port_of_iri}

    def place(a: str, b: str) -> None:
        parts = frozenset({refs[a][0], refs[b][0]})
        out.append(Placement((make_fault(mode, a, b),), _prior(mode, sk, parts), parts))

    if mode.rule == "own":
        by_component: dict[str, list[str]] = {}
        for iri in sorted(refs):
            by_component.setdefault(refs[iri][0], []).append(iri)
        for _, own in sorted(by_component.items()):
            if len(own) == 2 and len(sk.components[refs[own[0]][0]].ports) == 2:
                place(*sorted(own, key=lambda i: refs[i][1]))
    elif mode.rule == "alike":
        groups: dict[tuple[str, str | None, str], list[str]] = {}
        for iri in sorted(refs, key=lambda i: refs[i]):
            cid, port = refs[iri]
            comp = sk.components[cid]
            groups.setdefault((comp.type_iri, comp.module, port), []).append(iri)
        for _, members in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1] or "", g[0][2])):
            for a, b in itertools.combinations(members, 2):
                place(a, b)
    else:       # "node": one short per pair of nodes, between the first eligible port of each
        first: dict[int, str] = {}
        for iri in sorted(refs, key=lambda i: refs[i]):
            net = sk.net_of_port.get(refs[iri])
            if net is not None and net not in first:
                first[net] = iri
        for (_, a), (_, b) in itertools.combinations(sorted(first.items()), 2):
            place(a, b)
    return out


def combinations(singles: list[Placement], size: int, limit: int | None, seed: int) -> list[Placement]:
    """Placements of ``size`` faults, each from ``singles`` on parts no other fault of it touches.
    All of them (in a fixed order) when there are at most ``limit``; otherwise ``limit`` drawn
    without repetition, each fault drawn by its prior weight (a combination is then about as
    likely as the product of its faults' weights), reproducibly by ``seed``."""
    if size == 1:
        return list(singles) if limit is None else list(singles[:limit])
    total = math.comb(len(singles), size)
    if limit is None or total <= limit:
        combos = [c for c in itertools.combinations(singles, size) if _disjoint(c)]
        if limit is None or len(combos) <= limit:
            return [_joined(c) for c in combos]
    rng = random.Random(seed)
    weights = [s.prior for s in singles]
    chosen: dict[tuple[int, ...], Placement] = {}
    attempts = 0
    while len(chosen) < limit and attempts < 50 * limit:
        attempts += 1
        picked: list[int] = []
        while len(picked) < size:
            i = rng.choices(range(len(singles)), weights)[0]
            if i not in picked:
                picked.append(i)
        ident = tuple(sorted(picked))
        combo = tuple(singles[i] for i in ident)
        if ident not in chosen and _disjoint(combo):
            chosen[ident] = _joined(combo)
    return list(chosen.values())


def _disjoint(combo: tuple[Placement, ...]) -> bool:
    seen: set[str] = set()
    for p in combo:
        if p.parts & seen:
            return False
        seen |= p.parts
    return True


def _joined(combo: tuple[Placement, ...]) -> Placement:
    return Placement(tuple(f for p in combo for f in p.faults), math.prod(p.prior for p in combo),
                     frozenset().union(*(p.parts for p in combo)))


__all__ = ["FaultMode", "Placement", "RULES", "Unplaced", "combinations", "fault_key", "fault_modes", "local",
           "make_fault", "single_placements"]
