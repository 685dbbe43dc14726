"""Probes for the model-based assistant (:mod:`diagkg.agents.modelbased`):
a test that would tell a diagnosis about to be named from "something else"
(the candidates may all be wrong: the single fault elsewhere that shows the
same lights best stands in for it), and a repair tried as a probe when nothing
explains the reports any more (IRS)."""

from __future__ import annotations

import json
from typing import Any

from ..env.actions import Action, Hypothesis, cheapest_look, repairs_fitting
from ..env.service import Checkpoint
from .candidates import CandidateSpace
from .combinations import Candidate
from .likeness import OBSERVATIONS
from .modelbased_config import ModelBasedConfig
from .readings import UNKNOWN, Reading
from .worlds import Worlds


def finding(key: Reading) -> tuple[Any, ...]:
    """What a report found (its data and values on the grid), leaving out what getting there cost."""
    group = key.group()
    return json.loads(key.masked).get("data") if key.masked.startswith("{") else key.masked, group[1]


class Prober:
    """Probes on ``worlds`` for the candidates of ``space``, as ``config`` says (``confirm``,
    ``confirm_after_wrong``)."""

    def __init__(self, worlds: Worlds, space: CandidateSpace, config: ModelBasedConfig):
        self.worlds = worlds
        self.space = space
        self.confirm = config.confirm
        self.confirm_after_wrong = config.confirm_after_wrong
        self.checked: set[frozenset[str]] = set()       # diagnoses a test was chosen to confirm
        self.probing = -1         # the step a repair was tried as a probe at (see probe_repair)

    def confirming(self, named: frozenset[str], sample: list[tuple[Candidate, Checkpoint]]) -> Action | None:
        """Before naming ``named``, the cheapest test of its parts that would tell it from
        "something else" (the candidates may all be wrong, with probability :attr:`confirm`):
        the single fault elsewhere that shows the same lights best, taken through the same steps,
        reports otherwise. Chosen when that chance of saving the naming is worth the test; once
        per diagnosis; with :attr:`confirm_after_wrong`, only once a naming since the last
        rebase was judged wrong."""
        worlds = [(c, point) for c, point in sample if c.faulty == named]
        if named in self.checked or not worlds:
            return None
        # a naming judged wrong says the candidates may miss the truth: those since the last
        # rebase (a repair that fixed something starts the candidates again from what follows)
        if self.confirm_after_wrong and not any(isinstance(step, Hypothesis) and seen.verdict == "wrong"
                                                for step, seen in self.worlds.steps[self.worlds.since:]):
            return None
        self.checked.add(named)
        c, point = worlds[0]
        naming = self.worlds.predicted(c, point, Hypothesis(named))[1]
        seen = self.worlds.briefing.lights
        scores = {id(o): sum(self.worlds.lamps_at_start(o).get(lamp) == state for lamp, state in seen.items())
                  for o in self.space.pairable if not o.faulty & named and o.faults[0].probability is None}
        # the best still standing after every step (a world a hypothesis or repair fixed is no stand-in)
        ranked = sorted((o for o in self.space.pairable if id(o) in scores), key=lambda o: (scores[id(o)], o.prior), reverse=True)
        other = next((o for o in ranked if self.worlds.standing(o)), None)
        if other is None:
            return None
        there = self.worlds.through_point(other)
        assert there is not None
        done = {str(step) for step, _ in self.worlds.steps}
        best: tuple[float, Action] | None = None
        for part in sorted(p for p in named if p in self.worlds.sk.components):
            for action in OBSERVATIONS:
                spec, step = self.worlds.briefing.catalogue.get(action), Action(action, (part,))
                if spec is None or (spec.types and self.worlds.sk.components[part].type not in spec.types) or str(step) in done:
                    continue
                minutes = self.worlds.predicted(c, point, step)[1]
                if self.confirm * naming <= minutes or (best is not None and minutes >= best[0]):
                    continue
                found = self.worlds.predicted(other, there, step)[0]
                if found == UNKNOWN:
                    continue
                elsewhere = finding(found)
                # what it finds (not how it got there) must tell every fault named so (each fault
                # mode of the part) from the stand-in
                if all(finding(self.worlds.predicted(w, at, step)[0]) != elsewhere for w, at in worlds):
                    best = (minutes, step)
        return best[1] if best is not None else None

    def needed(self, part: str) -> bool:
        """Whether the system needs ``part`` repaired in most of the worlds that name it: in a
        world that names more parts, repairing the others alone may make it work (an indicator
        lamp that is out does not stop the main function), and replacing it first is then waste."""
        worlds = [(c, point) for c, point in self.space.sample() if part in c.faulty]
        total = sum(c.prior for c, _ in worlds)
        needed = sum(c.prior for c, point in worlds
                     if c.faulty == {part} or not self.works_without(c, point, part))
        return needed >= 0.5 * total

    def works_without(self, c: Candidate, point: Checkpoint, part: str) -> bool:
        """Whether, in ``c``'s world at ``point``, repairing the parts it names but ``part`` makes the
        system work (the session goes on when ``part`` is faulty too: naming only some of the faulty
        parts is a partial diagnosis, but an action that made the system work would have ended it)."""
        report, _, solved = self.worlds.predicted(c, point, Hypothesis(c.faulty - {part}))
        return solved or report.works

    def closing_step(self) -> Action | None:
        """The step after a naming judged partial that made the main function work: the next step of any
        kind may end the session as a repair, so the cheapest look at a lamp the person described at the
        start and can see there (:func:`~diagkg.env.actions.cheapest_look`). Where the session goes on (a
        bulb the naming did not repair is still dark), what the look shows is evidence like any report."""
        briefing, base = self.worlds.briefing, self.worlds.base_start()
        seen = [lamp for lamp in sorted(briefing.lights) if base is None or self.worlds.ns + lamp in base[1]]
        return cheapest_look(briefing.catalogue, seen, self.worlds.sk.components, briefing.parts)

    def repairs_fitting(self, kind: str) -> list[Any]:
        """The catalogue's repairs of one part that fit a part of type ``kind``, cheapest first."""
        return repairs_fitting(self.worlds.briefing.catalogue, kind)

    def probe_repair(self) -> Action | None:
        """Nothing explains the reports, not even pairs or triples: repair, as a probe (IRS), the
        part of the single fault that explains most of what was seen (the lights at the start,
        then the reports), with the cheapest repair of the catalogue that fits it. A repair done
        this way is taken to have fixed something (see the assistant's rebase)."""
        seen = {} if self.worlds.since else dict(self.worlds.briefing.lights)
        done = {str(step) for step, _ in self.worlds.steps}

        def explains(c: Candidate) -> tuple[int, float]:
            lamps, alike = self.worlds.run_through(c)
            return sum(lamps.get(lamp) == state for lamp, state in seen.items()) + len(alike), c.prior

        for c in sorted(self.space.pairable, key=explains, reverse=True):
            for part in sorted(p for p in c.faulty if p in self.worlds.sk.components):
                for spec in self.repairs_fitting(self.worlds.sk.components[part].type):
                    action = Action(spec.id, (part,))
                    if str(action) not in done:
                        self.probing = len(self.worlds.steps)
                        return action
        return None


__all__ = ["Prober", "finding"]
