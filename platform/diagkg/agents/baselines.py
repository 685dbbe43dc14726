"""The baseline assistants: bounds and references for the others.

========================  ==========================================================
``oracle``                executes the scenario's ideal repair (its steps in the cheapest
                          order), then names the faulty parts, or names every faulty part
                          (a sanity bound; the only assistant that sees the answer)
``random-search``         names one part per round, in a random order, without repeats
``fixed-random``          one of five fixed random action sequences of the system,
                          chosen by the seed, then gives up
``unhelpful``             always the same useless suggestion
========================  ==========================================================
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ..env.actions import Action, Hypothesis, repairs_fitting
from ..errors import AssistantError
from .registry import BaseAssistant, Briefing

MAX_ORDERED = 4        # ideal repairs of at most this many steps are tried in every order


class Oracle(BaseAssistant):
    """The scenario's ideal repair, step by step, then the correct hypothesis."""

    name = "oracle"
    privileged = True
    config_keys: frozenset[str] = frozenset()      # it takes no configuration

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        scenario = briefing.scenario
        if scenario is None:
            raise AssistantError("the oracle was not briefed with the answer: DIAGKG_PRIVILEGED_ASSISTANTS does not "
                                 "name it (diagkg.agents.trust)")
        repair: list[Action | Hypothesis] = [Action(s.action, s.targets, s.value) for s in scenario.repair]
        repair.append(Hypothesis(scenario.faulty, "the scenario's faulty components"))
        self.plan = repair
        if briefing.session is not None:
            self.plan = self.cheapest(briefing.session, repair)

    @staticmethod
    def cheapest(session: Any, repair: list[Action | Hypothesis]) -> list[Action | Hypothesis]:
        """The cheapest of the ways the oracle knows, under the cost rule every assistant pays: the
        scenario's ideal repair, its steps in any order (then naming its faulty parts: the session ends
        as soon as the system works, so a step that makes it work first saves the others), each faulty
        part's own cheapest repair in the catalogue in any order, or naming every faulty part at once (a
        diagnosis; preferred at equal cost, then the ideal repair, then its own order). Each is tried on
        the session and set back."""
        from ..env.effects import still_broken

        broken = still_broken(session, session.state())
        naming: list[Action | Hypothesis] = [Hypothesis(frozenset(broken), "every part that differs from its description")]
        steps = [s for s in repair if isinstance(s, Action)]
        tail = [s for s in repair if not isinstance(s, Action)]
        plans = [naming, *(order + tail for order in _orders(steps))]
        # each faulty part's own cheapest repair in the catalogue: the ideal repair may take a dearer
        # action (swapping two crossed cables, 40 min, where putting each back costs 10)
        own = [fix for part in sorted(broken) if (fix := _cheapest_repair(session, part))]
        if own and own != steps:
            plans += [order + tail for order in _orders(own)]
        tried: list[tuple[float, int, list[Action | Hypothesis]]] = []
        for rank, plan in enumerate(plans):
            point = session.checkpoint()
            try:
                cost, ended = 0.0, False
                for step in plan:
                    _, spent, terminated, truncated, info = session.step(step)
                    cost += spent
                    if terminated or truncated:
                        ended = str(info.get("end", "")).startswith("success")
                        break
                if ended:
                    tried.append((cost, rank, plan))
            finally:
                session.rollback(point)
        return min(tried, key=lambda t: (t[0], t[1]))[2] if tried else repair

    def suggest(self) -> Action | Hypothesis | None:
        return self.plan.pop(0) if self.plan else None


def _orders(steps: list[Action]) -> list[list[Action]]:
    """The steps in every order (at most :data:`MAX_ORDERED` of them), else as they are."""
    return [list(p) for p in itertools.permutations(steps)] if len(steps) <= MAX_ORDERED else [steps]


def _cheapest_repair(session: Any, part: str) -> Action | None:
    """The catalogue's cheapest repair of one component that fits its type (None: none does, or
    ``part`` is not a component)."""
    comp = session.sk.components.get(part)
    if comp is None:
        return None
    fitting = repairs_fitting(session.catalogue, comp.type, "component")
    return Action(fitting[0].id, (part,)) if fitting else None


class RandomSearch(BaseAssistant):
    """Hypothesises one part at a time, every part once, in a random order."""

    name = "random-search"
    config_keys: frozenset[str] = frozenset()      # it takes no configuration

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.order = sorted(briefing.parts)
        random.Random(briefing.seed).shuffle(self.order)

    def suggest(self) -> Action | Hypothesis | None:
        return Hypothesis({self.order.pop(0)}, "a random guess") if self.order else None


class FixedRandom(BaseAssistant):
    """One of five action sequences drawn once per system (fixed), picked by the seed: each step an action of
    one target and a component of a type it applies to (drawn among such pairs: a bulb is not disconnected
    as a cable, and a sequence is what random acting costs, not a run of refusals at 0 minutes)."""

    name = "fixed-random"
    config_keys: frozenset[str] = frozenset()      # it takes no configuration
    SEQUENCES = 5

    @staticmethod
    def sequences(briefing: Briefing) -> list[list[Action]]:
        rng = random.Random(f"fixed-random/{briefing.system}")   # the same sequences on every run
        components = sorted(p for p, kind in briefing.parts.items() if kind not in ("enclosure", "opening", "module"))
        single = sorted(a for a, spec in briefing.catalogue.items()
                        if spec.target_count == 1 and spec.target_kind in ("component", "any") and not spec.parameter)
        pairs = [(a, c) for a in single for c in components
                 if not briefing.catalogue[a].types or briefing.parts[c] in briefing.catalogue[a].types]
        out = []
        for _ in range(FixedRandom.SEQUENCES):
            out.append([Action(a, (c,)) for a, c in (rng.choice(pairs) for _ in range(rng.randint(3, 5)))])
        return out

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.plan = list(self.sequences(briefing)[briefing.seed % self.SEQUENCES])

    def suggest(self) -> Action | Hypothesis | None:
        return self.plan.pop(0) if self.plan else None


class Unhelpful(BaseAssistant):
    """Always suggests looking at the same enclosure again."""

    name = "unhelpful"
    config_keys: frozenset[str] = frozenset()      # it takes no configuration

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        boxes = sorted(p for p, kind in briefing.parts.items() if kind == "enclosure")
        self.target = boxes[0] if boxes else sorted(briefing.parts)[0]

    def suggest(self) -> Action | Hypothesis | None:
        return Action("observe_component", (self.target,))
