"""What a system's tests can tell apart: ``diagkg diagnosability``.

Over the single faults the catalogue allows on a system (those
:mod:`~diagkg.generation.catalogue` places), each a world of its own
(:mod:`~diagkg.generation.probes`):

* a fault a person does not notice (``diagkg generate`` leaves it out) is
  listed with the cheapest probe whose report differs from the working
  system's, if any;
* two noticed faults are **told apart** by a sequence of probes when some step
  reports differently in their worlds (after the same earlier steps). The
  lights a person sees at the start tell faults apart for free. Single probes
  are tried on every pair, the cheapest first (a pair is settled once no
  cheaper probe is left, so each world stops being probed once all its pairs
  are); for pairs no probe tells apart, sequences of two and three probes on
  the parts the group's faults make faulty and their neighbours (parts sharing
  a node with them), whose first steps change the system (a switch opened, a
  part replaced), are tried within each group, up to a budget of simulated
  steps;
* **ambiguity groups** are the faults linked by pairs nothing told apart;
* **fault resolution** (the testability figure): the share of noticed faults
  whose group makes at most 1, 2 or 3 replaceable parts faulty.

A cost is minutes of the catalogue (access included), the more expensive of
the two worlds'.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..env.actions import Action
from . import STEP_BUDGET
from .bench import Bench, Look
from .catalogue import Placement, Unplaced, single_placements
from .generate import Dropped
from .probes import Answer, Worlds, apart, probes

if TYPE_CHECKING:  # pragma: no cover
    from ..env.service import Checkpoint
    from ..kg.store import KnowledgeStore

Progress = Callable[[str, int, int], None]
HEALTHY = "(working system)"


@dataclass(frozen=True)
class Separation:
    """Two faults and the cheapest sequence of probes found to tell them apart (no step: the
    lights at the start do)."""

    a: str
    b: str
    steps: tuple[Action, ...]
    minutes: float


@dataclass(frozen=True)
class Group:
    """Faults nothing tried tells apart, and the parts they make faulty."""

    members: tuple[str, ...]
    parts: frozenset[str]


@dataclass(frozen=True)
class Unnoticed:
    """A fault a person does not notice, and the cheapest probe that shows it (None: none does)."""

    fault: str
    reason: Dropped
    revealed_by: Action | None
    minutes: float | None


@dataclass
class Diagnosability:
    key: str
    depth: int
    faults: list[str] = field(default_factory=list)             # the noticed single faults
    looks: dict[str, Look] = field(default_factory=dict)
    groups: list[Group] = field(default_factory=list)
    separations: dict[tuple[str, str], Separation] = field(default_factory=dict)
    unnoticed: list[Unnoticed] = field(default_factory=list)
    unplaced: list[Unplaced] = field(default_factory=list)
    probes: int = 0
    steps: int = 0
    exhausted: bool = False      # the budget ran out before every sequence was tried

    def group_of(self, fault: str) -> Group:
        return next(g for g in self.groups if fault in g.members)

    def resolution(self, weighted: bool = False) -> tuple[float, float, float]:
        """Shares of the noticed faults isolated to 1, ≤ 2 and ≤ 3 replaceable parts (``weighted``:
        each fault by its prior weight)."""
        weight = {f: (self.looks[f].placement.prior if weighted else 1.0) for f in self.faults}
        total = sum(weight.values()) or 1.0
        sizes = {f: len(self.group_of(f).parts) for f in self.faults}
        return tuple(sum(w for f, w in weight.items() if sizes[f] <= n) / total for n in (1, 2, 3))  # type: ignore[return-value]


def diagnose(store: KnowledgeStore, key: str, depth: int = 3, modes: frozenset[str] | None = None,
             budget: int = STEP_BUDGET, progress: Progress | None = None) -> Diagnosability:
    """The diagnosability of system ``key`` of ``store`` (nothing is written)."""
    bench = Bench(store, key)
    report = Diagnosability(key, depth)
    singles, report.unplaced = single_placements(store, bench.sk, modes)
    worlds = Worlds(bench)
    worlds.start(HEALTHY, Placement((), 1.0, frozenset()))
    for i, p in enumerate(singles, 1):
        look = bench.look(p)
        report.looks[p.key] = look
        worlds.start(p.key, p)
        if progress:
            progress("simulating single faults", i, len(singles))
    report.faults = [p.key for p in singles if report.looks[p.key].noticed]
    tried = probes(bench)
    report.probes = len(tried)
    _unnoticed(report, worlds, tried, [p.key for p in singles if not report.looks[p.key].noticed], progress)
    after = _singles(report, worlds, tried, progress)
    if depth >= 2:
        _sequences(report, worlds, tried, after, depth, budget, progress)
    _group(report)
    report.steps = worlds.steps
    bench.close()
    return report


def _unnoticed(report: Diagnosability, worlds: Worlds, tried: list[Action], faults: list[str],
               progress: Progress | None) -> None:
    healthy: dict[Action, Answer] = {}
    for i, fault in enumerate(faults, 1):
        look = report.looks[fault]
        reason = Dropped.WORKING if look.changed else Dropped.UNSEEN
        found: tuple[Action, float] | None = None
        for probe in tried:
            if found is not None and probe_cost(probe, worlds) > found[1]:
                break
            if probe not in healthy:
                healthy[probe] = worlds.answer(HEALTHY, probe)
            mine = worlds.answer(fault, probe)
            if apart(mine, healthy[probe], works=False):
                cost = max(mine.minutes, healthy[probe].minutes)
                if found is None or cost < found[1]:
                    found = (probe, cost)
        report.unnoticed.append(Unnoticed(fault, reason, found[0] if found else None, found[1] if found else None))
        if progress:
            progress("probing unnoticed faults", i, len(faults))


def probe_cost(probe: Action, worlds: Worlds) -> float:
    """The catalogue's cost of a probe's action (what probes are ordered by)."""
    spec = worlds.bench.catalogue[probe.action]
    return float(spec.cost)


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def _singles(report: Diagnosability, worlds: Worlds, tried: list[Action],
             progress: Progress | None) -> dict[tuple[str, Action], Checkpoint]:
    """Single probes on every pair of noticed faults, cheapest first; returns the states the
    probes that change something lead to (the first steps of longer sequences)."""
    faults = report.faults
    # the lights at the start tell faults apart for free
    for a, b in itertools.combinations(faults, 2):
        if worlds.visible[a] != worlds.visible[b]:
            report.separations[_pair(a, b)] = Separation(*_pair(a, b), (), 0.0)
    open_pairs = {_pair(a, b) for a, b in itertools.combinations(faults, 2)} - set(report.separations)
    after: dict[tuple[str, Action], Checkpoint] = {}
    for i, probe in enumerate(tried, 1):
        cost = probe_cost(probe, worlds)
        # a pair settled by a probe no dearer than this one needs no more probing
        open_pairs = {p for p in open_pairs if p not in report.separations or report.separations[p].minutes >= cost}
        active = sorted({f for p in open_pairs for f in p})
        answers = {}
        for f in active:
            answers[f] = worlds.answer(f, probe)
            changed = answers[f].after
            if changed is not None:
                after[(f, probe)] = changed
        for a, b in [p for p in open_pairs]:
            if a in answers and b in answers and apart(answers[a], answers[b]):
                minutes = max(answers[a].minutes, answers[b].minutes)
                known = report.separations.get((a, b))
                if known is None or minutes < known.minutes:
                    report.separations[(a, b)] = Separation(a, b, (probe,), minutes)
        if progress:
            progress("probing pairs of faults", i, len(tried))
    return after


def _sequences(report: Diagnosability, worlds: Worlds, tried: list[Action],
               after: dict[tuple[str, Action], Checkpoint], depth: int, budget: int,
               progress: Progress | None) -> None:
    """Sequences of two (then three) probes within each group no single probe split, on the
    parts its faults make faulty and their neighbours (parts sharing a node with them): the
    first steps are actions with an effect on the system (``dk:updateTemplate``: a switch
    opened, a part replaced) that change it in some world of the group, one per set of states
    they lead to; each group gets its share of ``budget`` simulated steps."""
    groups = [m for m in _components(report) if len(m) > 1]
    for n, members in enumerate(groups, 1):
        near = _neighbourhood(worlds.bench, frozenset().union(*(report.looks[f].faulty for f in members)))
        local = [p for p in tried if all(t.split(".", 1)[0] in near for t in p.targets)]
        effects = [p for p in local if worlds.bench.catalogue[p.action].template]
        start, share = worlds.steps, budget // len(groups)
        unsettled = {_pair(a, b) for a, b in itertools.combinations(members, 2)} - set(report.separations)
        # prefix -> (its cost, the state each world of the group stands in after it)
        frontier: dict[tuple[Action, ...], tuple[float, dict[str, Checkpoint | None]]] = {}
        for probe in effects:
            points = {f: after.get((f, probe)) for f in members}
            if any(points.values()):
                frontier[(probe,)] = (probe_cost(probe, worlds), points)
        for length in range(2, depth + 1):
            grown: dict[tuple[Action, ...], tuple[float, dict[str, Checkpoint | None]]] = {}
            seen_states: set[tuple[object, ...]] = set()
            for prefix, (base, points) in sorted(frontier.items(), key=lambda x: x[1][0]):
                states = tuple((p.state, p.repaired) if p else None for p in points.values())
                if states in seen_states:
                    continue            # another prefix, no dearer, leads every world to the same state
                seen_states.add(states)
                for probe in local:
                    if not unsettled or worlds.steps - start > share:
                        break
                    answers = {f: worlds.answer(f, probe, dataclasses.replace(p, end=None) if p else None)
                               for f, p in points.items()}
                    for a, b in sorted(unsettled):
                        if apart(answers[a], answers[b]):
                            minutes = base + max(answers[a].minutes, answers[b].minutes)
                            report.separations[(a, b)] = Separation(a, b, prefix + (probe,), minutes)
                            unsettled.discard((a, b))
                    if length < depth and probe in effects and any(ans.after for ans in answers.values()):
                        grown[prefix + (probe,)] = (base + probe_cost(probe, worlds),
                                                    {f: ans.after or points[f] for f, ans in answers.items()})
            frontier = grown
        if unsettled and worlds.steps - start > share:
            report.exhausted = True
        if progress:
            progress("probing sequences", n, len(groups))


def _neighbourhood(bench: Bench, parts: frozenset[str]) -> frozenset[str]:
    """``parts`` and the components sharing a node with one of them (and, for a part that is
    not a component, what contains it)."""
    nets = {net for (cid, _), net in bench.sk.net_of_port.items() if cid in parts}
    near = {cid for (cid, _), net in bench.sk.net_of_port.items() if net in nets}
    return frozenset(parts | near)


def _components(report: Diagnosability) -> list[list[str]]:
    """The noticed faults linked by pairs not told apart (connected components)."""
    link: dict[str, set[str]] = {f: set() for f in report.faults}
    for a, b in itertools.combinations(report.faults, 2):
        if _pair(a, b) not in report.separations:
            link[a].add(b)
            link[b].add(a)
    seen: set[str] = set()
    out = []
    for f in report.faults:
        if f in seen:
            continue
        todo, members = [f], []
        seen.add(f)
        while todo:
            g = todo.pop()
            members.append(g)
            for h in sorted(link[g] - seen):
                seen.add(h)
                todo.append(h)
        out.append(sorted(members))
    return out


def _group(report: Diagnosability) -> None:
    report.groups = [Group(tuple(m), frozenset().union(*(report.looks[f].faulty for f in m)))
                     for m in _components(report)]


__all__ = ["Diagnosability", "Group", "HEALTHY", "STEP_BUDGET", "Separation", "Unnoticed", "diagnose"]
