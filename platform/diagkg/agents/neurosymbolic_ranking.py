"""How the neuro-symbolic assistant (:mod:`diagkg.agents.neurosymbolic`) weighs
its hypotheses and chooses its next test: :class:`Ranking`, the part of the
assistant that weights the remaining problems (suspicion × prior), picks the
test with the best information gain per minute (what its outcome would speak
of: :meth:`Ranking._reach`), ranks the candidates, and proposes repair as a
probe. It reads the assistant's state and changes nothing but the probes it
has tried.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable

from ..env.actions import Action, ActionType, repairs_fitting
from ..env.service import Hypothesis
from ..env.worlds import FaultMode
from ..sim.results import SimulationResult
from .neurosymbolic_config import NeuroSymbolicConfig
from .neurosymbolic_knowledge import Test
from .neurosymbolic_shorts import VOLTAGE_TOLERANCE

SUSPECT_WEIGHT = 1.5                # prior weight of the problems of a component seen misbehaving
SPLITTING = {"voltages", "current"}   # observations whose outcome depends on what the part depends on


class Ranking:
    """The weights, tests and candidates of :class:`~diagkg.agents.neurosymbolic.NeuroSymbolic`
    (a mixin: the assistant sets the state declared here)."""

    # configuration
    split: str
    round_minutes: float
    access: bool
    weights: str
    intermittent_weight: float
    trip_weight: float
    blind_looks: bool
    tiebreak: str
    chain_modules: int
    cable_potentials: str
    side_only: bool
    endgame: int
    budget: int
    outcomes: list[dict[str, Any]]
    partly_repaired: bool
    repair_probe: bool
    dark_currents: bool
    settings: NeuroSymbolicConfig
    last: Action | Hypothesis | None
    # the system: its knowledge, catalogue and nominal state
    catalogue: dict[str, ActionType]
    components: set[str]
    part_types: dict[str, str]
    deps: dict[str, set[str]]
    wired: bool                          # the dependencies are the wiring's (the system declares no functions)
    dependents: dict[str, int]
    problems: dict[str, set[str]]
    tests: dict[tuple[str, str], Test]
    revealed: dict[str, set[str]]
    modes: dict[str, FaultMode]          # the catalogue's fault modes (empty: every problem weighs the same)
    intermittent_modes: set[str]
    raising_modes: set[str]              # fault modes that raise a current (dk:raisesCurrent)
    fed_by_switch: set[str]              # parts fed by the current of a switch that this current opens
    tripping: bool
    coupling_modes: set[str]
    enclosed: frozenset[str]
    nominal: SimulationResult
    lamps: set[str]
    dark: set[str]
    cables: set[str]
    sides: dict[str, frozenset[str]]
    module_of: dict[str, str | None]
    # the session so far
    candidates: set[str]
    plan: set[tuple[str, str]]
    suspicious: set[str]
    flickering: bool
    executed: set[tuple[str, str]]
    tried: set[frozenset[str]]
    _open_worlds: Callable[[], dict[str, SimulationResult]]

    def _weight(self, part: str, mode: str, shares: int = 1) -> float:
        """One problem's weight: how suspect its part is (shared among ``shares`` problems), its
        mode's prior on the part's type (the mode's own where the catalogue gives none for the type), the
        boost of a mode acting at random while a light comes and goes, and that of a mode raising the
        current of what a switch feeds once a reading showed the switch may keep tripping."""
        boost = self.intermittent_weight if self.flickering and mode in self.intermittent_modes else 1.0
        if self.tripping and mode in self.raising_modes and part in self.fed_by_switch:
            boost *= self.trip_weight
        known = self.modes.get(mode)
        prior = known.prior_on(self.part_types.get(part)) if known is not None else 1.0
        return (SUSPECT_WEIGHT if part in self.suspicious else 1.0) / shares * prior * boost

    def _weights(self) -> dict[tuple[str, str], float]:
        """Each problem of the plan weighted by how suspect its part is and its mode's prior."""
        count: dict[str, int] = {}
        if self.weights == "candidates":        # each candidate weighs the same, shared among its problems
            for c, _ in self.plan:
                count[c] = count.get(c, 0) + 1
        return {(c, m): self._weight(c, m, count.get(c, 1)) for c, m in self.plan}

    def _weight_of(self, problems: set[tuple[str, str]]) -> float:
        """The summed weight of ``problems``, as :meth:`_weights` weighs each."""
        return sum(self._weight(c, m) for c, m in problems)

    def _repair_cost(self, part: str) -> float:
        """What repairing a part costs: the cheapest repair action of the catalogue for its type."""
        fitting = repairs_fitting(self.catalogue, self.part_types.get(part, ""), "component")
        return fitting[0].cost if fitting else math.inf

    def _cheap_repairs(self) -> Hypothesis | None:
        """Repair as a probe: the candidates cheaper to repair than to test (a cable is put
        back on its terminals for less than an inspection costs), repaired together when
        that costs less in expectation than finding the fault among the candidates by
        tests (about log2(n + 1) tests for n candidates, each at the best test's cost)."""
        if not self.repair_probe or not self.plan:
            return None
        owners = {c for c, _ in self.plan} & self.candidates
        cheap = {c for c in owners
                 if self._repair_cost(c) <= min((t.cost for (a, p), t in self.tests.items() if p == c), default=0.0)}
        if not cheap or frozenset(cheap) in self.tried:
            return None
        test = self._best_test()
        per_test = self._expected_cost(test) if test is not None else math.inf
        weight = self._weights()
        total = sum(weight.values())
        p = sum(w for (c, _), w in weight.items() if c in cheap) / total if total else 0.0
        repair = sum(self._repair_cost(c) for c in cheap) + self.round_minutes
        by_tests = math.log2(len(owners) + 1) * per_test
        rest = math.log2(len(owners - cheap) + 1) * per_test
        if repair + (1 - p) * rest < by_tests:
            self.tried.add(frozenset(cheap))
            return Hypothesis(frozenset(cheap), "the suspects that cost less to repair than to test")
        return None

    def _untested(self) -> Hypothesis | None:
        """Nothing left to test among the candidates: the likeliest of them whose own faults no test has
        ruled out (a test's anomaly fits them, and nothing tells them apart: an LED a person cannot measure,
        seen dark), named alone, one not named yet. A short between two nodes is not a part's own: the search
        for shorts goes on elsewhere."""
        if not self.settings.name_untested:
            return None
        weight = self._weights()
        by_part: dict[str, float] = {}
        for (part, mode), w in weight.items():
            if part in self.candidates and (self.modes.get(mode) is None or self.modes[mode].rule != "node"):
                by_part[part] = by_part.get(part, 0.0) + w
        for part in sorted(by_part, key=lambda p: (-by_part[p], p)):
            key = frozenset({part})
            if key not in self.tried:
                self.tried.add(key)
                self.last = Hypothesis(key, "suspected of what no test can rule out")
                return self.last
        return None

    def _best_test(self) -> Test | None:
        """The test with the best information gain per minute over the remaining
        problems, each problem weighted by how suspect its component is (a
        component seen misbehaving weighs :data:`SUSPECT_WEIGHT` times more)."""
        weight = self._weights()
        total = sum(weight.values())
        if total == 0:
            return None
        by_part: dict[str, float] = {}       # each part's problems of the plan, weighed together
        for (part, _), w in weight.items():
            by_part[part] = by_part.get(part, 0.0) + w
        best, best_gain = None, -1.0
        # the candidates all parts whose opening explains every reading: a voltage splits them as it reads in each's world
        worlds = self._open_worlds() if set(by_part) <= self.candidates else {}
        # in a fixed order (action, component), so that ties never depend on the store's row order
        for (action, comp), test in sorted(self.tests.items()):
            if comp not in self.candidates or (action, comp) in self.executed:
                continue
            if not self.blind_looks and self.catalogue[action].observes == "visual" and not test.modes & self.coupling_modes \
                    and comp not in self.lamps and comp not in self.cables:
                continue           # a look shows a light or a cable's ends, nothing of other parts
            if not self.dark_currents and comp in self.dark and self.catalogue[action].observes == "current":
                continue           # no current flows through a lamp seen dark, whatever the fault
            # the weight of the problems under which it would show an anomaly (_anomalous_if), summed by part
            own = test.component
            covered = sum(weight[(own, m)] for m in test.modes if (own, m) in weight) + \
                sum(by_part.get(c, 0.0) for c in self._reach(test) - {own})
            a, b = covered, total - covered
            split = 0.0 if b <= 1e-9 or a <= 0 else \
                (a / total) * math.log2(total / a) + (b / total) * math.log2(total / b)
            if worlds and set(by_part) <= worlds.keys() and self.catalogue[action].observes == "voltages":
                # or as its readings in the candidates' worlds split them, where that tells more
                split = max(split, _entropy(_readings_apart(worlds, comp, by_part)))
            elif covered == 0:
                continue
            # a test that covers everything still tells something when only one problem is left
            gain = (split if split > 0 else 1e-3) / max(self._expected_cost(test), 1.0)
            if gain > best_gain + 1e-12 or (abs(gain - best_gain) <= 1e-12 and best and self._before(test, best)):
                best, best_gain = test, gain
        return best

    def ranked_candidates(self) -> list[frozenset[str]]:
        """Its candidates, one part each, the heaviest first: the summed weight of
        each one's remaining problems (suspicion × prior), then by name."""
        weight: dict[str, float] = {c: 0.0 for c in self.candidates}
        for c, m in self.plan:
            if c in weight:
                weight[c] += self._weight(c, m)
        return [frozenset({c}) for c in sorted(weight, key=lambda c: (-weight[c], c))]

    def _before(self, test: Test, other: Test) -> bool:
        """Between two tests of equal gain: the cheaper, then (``tiebreak="upstream"``)
        the one on the part more others depend on; otherwise the first in (action, part) order."""
        if test.cost != other.cost:
            return test.cost < other.cost
        if self.tiebreak == "upstream":
            return self.dependents.get(test.component, 0) > self.dependents.get(other.component, 0)
        return False

    def _sides(self) -> dict[str, frozenset[str]]:
        """The side of the supply each part sits on in the nominal state: "high" for
        ports near the supply's potential, "low" for ports near 0 V (a lamp has both)."""
        volts = [v for c in self.nominal.components.values() for v in c.port_v.values() if v is not None]
        top = max((abs(v) for v in volts), default=0.0)
        sides: dict[str, frozenset[str]] = {}
        for cid, comp in self.nominal.components.items():
            found = {"high" if abs(v) > top / 2 else "low" for v in comp.port_v.values() if v is not None}
            sides[cid] = frozenset(found or {"high", "low"})
        return sides

    def _reach(self, test: Test, working: bool = False) -> set[str]:
        """The parts whose faults the outcome of ``test`` speaks of: its own part, and for an
        observation that splits the candidates the parts the observed one depends on. With
        ``working``, those a nominal outcome shows working: the graph orders dependencies
        between modules, not among the parts of one module (a module's function depends on
        all its cables), so a nominal reading clears nothing of its own module but its part;
        unless the dependencies are the wiring's (``wired_within``), which orders a module's parts too."""
        comp, kind = test.component, self.catalogue[test.action].observes
        deps = self.deps.get(comp, set()) & self.components
        if self.split == "dependencies" and kind in SPLITTING:
            return {comp} | deps
        if self.split != "sides":
            return {comp}
        if kind == "visual" and comp in self.lamps and comp in self.nominal.lit:
            found = {comp} | deps     # a lamp lights only when everything it depends on works
        elif kind == "voltages" and self._bisects(comp):
            # a potential shows breaks between it and the supply's pole on its side
            side = self.sides.get(comp, frozenset({"high", "low"}))
            if working and self.side_only:
                # a right potential vouches for the parts wholly on its side: not for a source or a
                # lamp that spans both (a flat battery still reads 0 V at its negative end)
                found = {comp} | {d for d in deps if self.sides.get(d, side) <= side}
            else:
                found = {comp} | {d for d in deps if self.sides.get(d, side) & side}
        else:
            return {comp}
        if working and not (self.wired and self.settings.wired_within):
            module = self.module_of.get(comp)
            found = {d for d in found if d == comp or module is None or self.module_of.get(d) != module}
        return found

    def _bisects(self, part: str) -> bool:
        """Whether a potential read at ``part`` speaks of the chain between it and the supply (not only
        of ``part``): while the candidates lie in a chain of modules, or, for a cable (whose two ends
        sit on two nets of the chain) once a repair helped only partly and no light comes and goes;
        never in the last rounds, when only what a test shows of its own part can still be named."""
        if self._rounds_left() <= self.endgame:
            return False
        if len({self.module_of.get(c) for c in self.candidates}) >= self.chain_modules:
            return True
        return part in self.cables and not self.flickering and (
            self.cable_potentials == "always" or (self.cable_potentials == "after-repair" and self.partly_repaired))

    def _rounds_left(self) -> int:
        """The rounds the budget leaves after those played (each outcome is one round)."""
        return self.budget - len(self.outcomes)

    def _anomalous_if(self, test: Test) -> set[tuple[str, str]]:
        """The problems of the plan under which ``test`` would show an anomaly: its own
        part's modes it reveals, and every problem of the other parts in its reach (the
        evidence an outcome adds narrows the candidates to its reach, or away from it)."""
        own = {(test.component, m) for m in test.modes if (test.component, m) in self.plan}
        reach = self._reach(test) - {test.component}
        return own | {(c, m) for c, m in self.plan if c in reach}

    def _shown_working(self, test: Test) -> set[tuple[str, str]]:
        """The problems a nominal outcome of ``test`` rules out: the modes it reveals, on its
        own part and on the parts in its reach."""
        modes = self.revealed.get(test.action, set())
        return {(c, m) for c in self._reach(test, working=True) - {test.component}
                for m in self.problems.get(c, ()) if m in modes}

    def _expected_cost(self, test: Test) -> float:
        """Its minutes, getting at the part when it is inside an enclosure, and the round it takes."""
        access = 0.0
        if self.access and test.component in self.enclosed and \
                self.catalogue[test.action].requires & {"Observable", "Reachable"}:
            access = min((spec.cost for aid, spec in self.catalogue.items() if aid == "open_opening"), default=0.0)
        return test.cost + access + self.round_minutes


def _readings_apart(worlds: dict[str, SimulationResult], part: str, weight: dict[str, float],
                    tolerance: float = VOLTAGE_TOLERANCE) -> list[float]:
    """The weight of the candidates (``weight`` by part) grouped by what ``part``'s potentials read in each one's
    world (``worlds``), within ``tolerance`` volts: the outcomes a voltage reading there tells apart."""
    groups: dict[tuple[tuple[str, int | None], ...] | None, float] = defaultdict(float)
    for cid, w in weight.items():
        there = worlds[cid].components.get(part)
        key = None if there is None else tuple(sorted((p, None if v is None else round(v / tolerance))
                                                       for p, v in there.port_v.items()))
        groups[key] += w
    return list(groups.values())


def _entropy(weights: list[float]) -> float:
    """The entropy in bits of the outcomes weighing ``weights``."""
    total = sum(weights)
    return -sum(w / total * math.log2(w / total) for w in weights if w > 0) if total > 0 else 0.0
