"""A placement of faults tried on the system: what a person sees, what it
damages, which parts it leaves faulty, whether each fault shows while the
others are present, and the cheapest repair that brings the system back.

Everything is simulated through a service-agent session on a hypothetical
scenario (the same code as a real session, so what a generated scenario
states is what ``diagkg check`` finds). A person *notices* a placement when
the lamps and LEDs look otherwise than in the working system (over several
seeds for a fault that shows at random) and the service agent judges the
system not working (a lamp that should light does not). What a fault changes
that can be seen or measured (lights, terminal voltages) is its *signature*,
as ``diagkg check`` compares them.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..env.actions import Action, action_catalogue
from ..env.checks import Signature, signature, worked
from ..env.effects import still_broken
from ..env.scenarios import RepairStep, Scenario
from ..env.service import Checkpoint, Session, simulator_for
from ..env.worlds import UNBOUNDED, Shadow
from ..errors import SessionError, SimulationError
from ..kg.vocab import DK
from .catalogue import Placement, local

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from ..sim.simulator import SimulationResult

LIGHTS = frozenset({str(DK.Bulb), str(DK.LED)})     # what a stated symptom may be about (shapes/scenario.ttl)
MAX_REPAIR_STEPS = 4


def appearance(results: list[SimulationResult], cid: str) -> str:
    """How a lamp looks over several simulations: Lit, Dark or Flickering (as ``diagkg check``)."""
    seen = {"Flickering" if cid in r.flickering else ("Lit" if cid in r.lit else "Dark") for r in results}
    return seen.pop() if len(seen) == 1 else "Flickering"


@dataclass(frozen=True)
class Look:
    """What a placement does to the system right after it is injected."""

    placement: Placement
    appearances: tuple[tuple[str, str], ...]     # every lamp and LED: (id, "Lit" | "Dark" | "Flickering")
    signatures: frozenset[Signature]              # over the seeds
    faulty: frozenset[str]                        # parts that differ from their description (damage included)
    damaged: tuple[str, ...]                      # parts the faults damage at once
    working: bool                                 # the service agent judges the system working
    changed: tuple[str, ...]                      # lamps that look otherwise than in the working system

    @property
    def noticed(self) -> bool:
        """A person notices it: a lamp looks otherwise, and the system does not work."""
        return bool(self.changed) and not self.working

    @property
    def intermittent(self) -> bool:
        return any(f.probability is not None for f in self.placement.faults) or \
            any(a == "Flickering" for _, a in self.appearances)


@dataclass(frozen=True)
class Repair:
    """The cheapest sequence of repairs that brings the system back (every fault cleared)."""

    steps: tuple[RepairStep, ...]
    minutes: float
    permanent: frozenset[str]          # interventions that are not repairs, kept for this scenario
    charged: float | None = None       # what a session charges for the steps in this order (Bench.played_first)


class Bench:
    """Placements of faults on one system of ``store``, tried one after another on one session."""

    def __init__(self, store: KnowledgeStore, key: str, seeds: int = 8):
        self.store = store
        self.key = key
        self.seeds = seeds
        self.sk = simulator_for(store, key).skeleton
        self.ns = self.sk.iri[: max(self.sk.iri.rfind("/"), self.sk.iri.rfind("#")) + 1]
        self.lamps = tuple(sorted(cid for cid, c in self.sk.components.items() if c.type_iri in LIGHTS))
        self.labels = {r["id"]: r["label"] or r["id"] for r in self.sk.parts}
        self.session: Session = Shadow(self.scenario(Placement((), 1.0, frozenset())), store)
        self.catalogue = action_catalogue(self.session.store)
        self.interventions = frozenset(r["id"] for r in self.session.store.select("intervention-actions"))
        self.session.reset(seed=0)
        self.nominal = self.session.nominal_result
        self.nominal_signature = signature(self.nominal)
        self.nominal_look = tuple((cid, appearance([self.nominal], cid)) for cid in self.lamps)

    def scenario(self, placement: Placement, permanent: frozenset[str] = frozenset(), budget: int = UNBOUNDED) -> Scenario:
        """A hypothetical scenario injecting ``placement``'s faults (no configuration change)."""
        return Scenario(iri=f"urn:diagkg:generation:{placement.key}", number=0, id="generated", label=placement.key,
                        system_iri=self.sk.iri, key=self.key, budget=budget, observations="", diagnosis=None,
                        description=None, categories=(), faulty=frozenset(), removed=frozenset(),
                        permanent=permanent, notes=(), faults=placement.faults)

    def close(self) -> None:
        """Release the shadow session's working memory (nothing more is simulated)."""
        self.session.close()

    def _start(self, scenario: Scenario) -> Session:
        self.session.scenario = scenario
        self.session.reset(seed=0)
        return self.session

    def results(self, placement: Placement) -> list[SimulationResult]:
        """The faulty system simulated with each seed (one when no fault is left to chance)."""
        s = self._start(self.scenario(placement))
        state = s.state()
        return [s.sim.simulate(state, random.Random(seed)) for seed in range(self._draws(placement))]

    def _draws(self, placement: Placement) -> int:
        """How many simulations tell what ``placement`` shows: ``seeds`` when a fault is left to chance, else one."""
        return self.seeds if any(f.probability is not None for f in placement.faults) else 1

    def look(self, placement: Placement) -> Look:
        """What ``placement`` does (see :class:`Look`)."""
        results = self.results(placement)
        s = self.session
        looks = tuple((cid, appearance(results, cid)) for cid in self.lamps)
        nominal = dict(self.nominal_look)
        return Look(placement, looks, frozenset(signature(r) for r in results),
                    frozenset(still_broken(s, s.state())), tuple(sorted({d.component for d in s.initial_result.damage})),
                    s.is_nominal(), tuple(cid for cid, a in looks if a != nominal[cid]))

    def shows(self, placement: Placement) -> bool:
        """Whether the placement changes anything that can be seen or measured."""
        return self.look(placement).signatures != {self.nominal_signature}

    def masked(self, look: Look) -> tuple[bool, ...]:
        """For each fault of a placement of several: whether the others hide it (the signatures
        are the same without it)."""
        faults = look.placement.faults
        if len(faults) < 2:
            return (False,) * len(faults)
        out = []
        views: dict[str, frozenset[Signature]] | None = None
        for i in range(len(faults)):
            rest = Placement(faults[:i] + faults[i + 1:], 1.0, frozenset())
            hidden = frozenset(signature(r) for r in self.results(rest)) == look.signatures
            if hidden:       # and with each hand switch worked (as ``diagkg check`` judges it)
                views = self.worked(look.placement) if views is None else views
                hidden = self.worked(rest) == views
            out.append(hidden)
        return tuple(out)

    def worked(self, placement: Placement) -> dict[str, frozenset[Signature]]:
        """What can be seen or measured with each hand switch worked, ``placement``'s faults injected."""
        s = self._start(self.scenario(placement))
        return worked(s, s.state(), self._draws(placement))

    # -- the cheapest repair ---------------------------------------------------
    def kept_interventions(self) -> frozenset[str]:
        """The interventions of the catalogue that are not repairs (kept for a scenario that needs them)."""
        return frozenset(a for a in self.interventions if a in self.catalogue and not self.catalogue[a].repair)

    def repair(self, look: Look) -> Repair | None:
        """The cheapest sequence (minutes, then fewest steps) of repair actions and interventions
        of the catalogue on the faulty parts after which the system works and no part is faulty
        any more; None when none of at most :data:`MAX_REPAIR_STEPS` steps does."""
        keep = self.kept_interventions()
        s = self._start(self.scenario(look.placement, permanent=keep))
        options = self._repair_options(sorted(look.faulty))
        if not options:
            return None
        depth = min(MAX_REPAIR_STEPS, len(look.faulty) + 1)
        root = s.checkpoint()
        counter = itertools.count()
        frontier: list[tuple[float, int, int, tuple[Action, ...], Checkpoint]] = [(0.0, 0, next(counter), (), root)]
        # the cheapest way found to each state: two repairs may leave the same state at different costs (a battery
        # turned round, or replaced), and the first tried must not hide the cheaper
        seen: dict[tuple[Any, ...], tuple[float, int]] = {}
        while frontier:
            minutes, n, _, steps, point = heapq.heappop(frontier)
            if steps and self._restored(point):
                return self._as_repair(steps, minutes, keep)
            if n >= depth:
                continue
            for action in options:
                if action in steps:
                    continue
                s.rollback(dataclasses.replace(point, end=None))
                try:
                    out, cost, *_ = s.step(action)
                except (SessionError, SimulationError):
                    continue
                if not out["success"]:
                    continue
                after = s.checkpoint()
                ident = (after.state, after.repaired)
                reached = (minutes + cost, n + 1)
                if ident in seen and seen[ident] <= reached:
                    continue
                seen[ident] = reached
                heapq.heappush(frontier, (minutes + cost, n + 1, next(counter), steps + (action,), after))
        return None

    def played_first(self, look: Look, repair: Repair) -> Repair:
        """``repair``'s steps in the order a session charges least for (it ends once the system works: the lamp's
        repair before a broken indicator's leaves the indicator's unpaid), the order found first on a tie (the
        plan's own first), with what a session charges for them (``charged``)."""
        orders = itertools.permutations(repair.steps) if 2 <= len(repair.steps) <= 3 else iter((repair.steps,))
        best: tuple[RepairStep, ...] = ()
        least = float("inf")
        for order in orders:
            steps = tuple(dataclasses.replace(step, position=i) for i, step in enumerate(order, 1))
            minutes = self.paid(look.placement, steps, repair.permanent)
            if minutes < least - 1e-9:
                best, least = steps, minutes
        return dataclasses.replace(repair, steps=best, charged=least)

    def _repair_options(self, faulty: list[str]) -> list[Action]:
        out = []
        for aid, spec in sorted(self.catalogue.items()):
            if not (spec.repair or aid in self.interventions) or spec.parameter:
                continue
            if spec.target_count == 1:
                out += [Action(aid, (p,)) for p in faulty]
            elif spec.target_count == 2:
                out += [Action(aid, pair) for pair in itertools.combinations(faulty, 2)]
        return out

    def _restored(self, point: Checkpoint) -> bool:
        s = self.session
        s.rollback(point)
        state = s.state()
        return not still_broken(s, state) and s.is_nominal(state)

    def _as_repair(self, steps: tuple[Action, ...], minutes: float, keep: frozenset[str]) -> Repair:
        return Repair(tuple(RepairStep(i, a.action, a.targets) for i, a in enumerate(steps, 1)), minutes,
                      frozenset(a.action for a in steps if a.action in keep))

    def cheaper_repair(self, scenario: Scenario) -> tuple[Repair, float, float] | None:
        """A repair of ``scenario``'s faults cheaper than its ideal repair (the steps ``cost / ideal`` is measured
        against), with both costs as a session charges them (each step with its access: :meth:`paid`); None when
        its ideal repair is the cheapest found, or the scenario changes the system (parts removed, repairs of
        its own) as the bench does not."""
        if scenario.removed or scenario.permanent or not scenario.repair:
            return None
        placement = Placement(scenario.faults, 1.0, frozenset())
        found = self.repair(self.look(placement))
        if found is None:
            return None
        keep = self.kept_interventions()
        ideal = self.paid(placement, scenario.repair, keep)
        return (found, found.minutes, ideal) if found.minutes < ideal - 1e-9 else None

    def paid(self, placement: Placement, steps: tuple[RepairStep, ...], permanent: frozenset[str]) -> float:
        """What a session charges for ``steps`` carried out one a round on ``placement``'s faults, as :meth:`repair`
        prices what it finds: each with the access it needs (a lid opened, an enclosure turned; undone after its
        round, so paid again by the next step behind it). A step refused costs what the catalogue says."""
        s = self._start(self.scenario(placement, permanent=permanent))
        minutes = 0.0
        for step in steps:
            try:
                minutes += s.step(Action(step.action, step.targets, step.value))[1] if s.end is None else 0.0
            except (SessionError, SimulationError):
                minutes += self.catalogue[step.action].cost if step.action in self.catalogue else 0.0
        return minutes

    def action_types(self) -> dict[str, str]:
        """The catalogue's action types by action id (their IRIs)."""
        return {aid: spec.iri for aid, spec in self.catalogue.items()}

    def label(self, part: str) -> str:
        """A part's label (a port: its component's label and the port's name)."""
        if part in self.labels:
            return str(self.labels[part])
        cid, _, port = part.partition(".")
        return f"{self.labels.get(cid, cid)} ({port} end)" if port else part

    def target_label(self, iri: str) -> str:
        return self.label(local(iri))


__all__ = ["Bench", "LIGHTS", "Look", "MAX_REPAIR_STEPS", "Repair", "Signature", "appearance", "signature"]
