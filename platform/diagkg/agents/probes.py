"""Probes for the model-based assistant (:mod:`diagkg.agents.modelbased`):
a test that would tell a diagnosis about to be named from "something else"
(the candidates may all be wrong: the single fault elsewhere that shows the
same lights best stands in for it), and a repair tried as a probe when nothing
explains the reports any more (IRS)."""

from __future__ import annotations

import json
from typing import Any

from ..env.actions import Action, Hypothesis, repairs_fitting
from ..env.service import Checkpoint
from .combinations import Candidate
from .likeness import OBSERVATIONS
from .readings import UNKNOWN, Reading
from .readings import lamps_of as _lamps


def finding(key: Reading) -> tuple[Any, ...]:
    """What a report found (its data and values on the grid), leaving out what getting there cost."""
    group = key.group()
    return json.loads(key.masked).get("data") if key.masked.startswith("{") else key.masked, group[1]


class Probes:
    """A mixin: it reads the assistant's system, briefing, steps and single faults."""

    sk: Any
    briefing: Any
    steps: list[tuple[Any, Any]]
    pairable: list[Candidate]
    since: int
    confirm: float
    confirm_after_wrong: bool
    _checked: set[frozenset[str]]
    _probing: int
    _through: dict[int, tuple[dict[str, str], frozenset[int], Checkpoint | None, int]]
    _first_lamps: dict[int, tuple[Candidate, tuple[Any, ...], str]]
    anchor: tuple[Any, ...]

    def _sample(self) -> list[tuple[Candidate, Checkpoint]]:   # pragma: no cover - the assistant's
        raise NotImplementedError

    def _predicted(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis,
                   coin: Any = None) -> tuple[Reading, float, bool]:   # pragma: no cover - the assistant's
        raise NotImplementedError

    def _run_through(self, c: Candidate) -> tuple[dict[str, str], frozenset[int]]:   # pragma: no cover
        raise NotImplementedError

    def _confirming(self, named: frozenset[str], sample: list[tuple[Candidate, Checkpoint]]) -> Action | None:
        """Before naming ``named``, the cheapest test of its parts that would tell it from
        "something else" (the candidates may all be wrong, with probability :attr:`confirm`):
        the single fault elsewhere that shows the same lights best, taken through the same steps,
        reports otherwise. Chosen when that chance of saving the naming is worth the test; once
        per diagnosis; with :attr:`confirm_after_wrong`, only once a naming since the last
        rebase was judged wrong."""
        assert self.briefing is not None
        worlds = [(c, point) for c, point in sample if c.faulty == named]
        if named in self._checked or not worlds:
            return None
        # a naming judged wrong says the candidates may miss the truth: those since the last
        # rebase (a repair that fixed something starts the candidates again from what follows)
        if self.confirm_after_wrong and not any(isinstance(step, Hypothesis) and seen.verdict == "wrong"
                                                for step, seen in self.steps[self.since:]):
            return None
        self._checked.add(named)
        c, point = worlds[0]
        naming = self._predicted(c, point, Hypothesis(named))[1]
        seen = _lamps(self.briefing.visible)
        scores = {id(o): sum(self._lamps_of(o).get(lamp) == state for lamp, state in seen.items())
                  for o in self.pairable if not o.faulty & named and o.faults[0].probability is None}
        # the best still standing after every step (a world a hypothesis or repair fixed is no stand-in)
        ranked = sorted((o for o in self.pairable if id(o) in scores), key=lambda o: (scores[id(o)], o.prior), reverse=True)
        other = next((o for o in ranked if self._standing(o)), None)
        if other is None:
            return None
        there = self._through[id(other)][2]
        assert there is not None
        done = {str(step) for step, _ in self.steps}
        best: tuple[float, Action] | None = None
        for part in sorted(p for p in named if p in self.sk.components):
            for action in OBSERVATIONS:
                spec, step = self.briefing.catalogue.get(action), Action(action, (part,))
                if spec is None or (spec.types and self.sk.components[part].type not in spec.types) or str(step) in done:
                    continue
                minutes = self._predicted(c, point, step)[1]
                if self.confirm * naming <= minutes or (best is not None and minutes >= best[0]):
                    continue
                found = self._predicted(other, there, step)[0]
                if found == UNKNOWN:
                    continue
                elsewhere = finding(found)
                # what it finds (not how it got there) must tell every fault named so (each fault
                # mode of the part) from the stand-in
                if all(finding(self._predicted(w, at, step)[0]) != elsewhere for w, at in worlds):
                    best = (minutes, step)
        return best[1] if best is not None else None

    def _needed(self, part: str) -> bool:
        """Whether the system needs ``part`` repaired in most of the worlds that name it: in a
        world that names more parts, repairing the others alone may make it work (an indicator
        lamp that is out does not stop the main function), and replacing it first is then waste."""
        worlds = [(c, point) for c, point in self._sample() if part in c.faulty]
        total = sum(c.prior for c, _ in worlds)
        needed = sum(c.prior for c, point in worlds
                     if c.faulty == {part} or not self._predicted(c, point, Hypothesis(c.faulty - {part}))[2])
        return needed >= 0.5 * total

    def _standing(self, c: Candidate) -> bool:
        """Whether ``c``'s world, taken through every step (see _run_through), still has a fault."""
        self._run_through(c)
        point = self._through[id(c)][2]
        return point is not None and point.end is None

    def _lamps_of(self, c: Candidate) -> dict[str, str]:
        """The lamps ``c``'s world shows at the start: as its world showed them when it was started
        (with the same anchor), else as :meth:`_run_through` finds them."""
        known = self._first_lamps.get(id(c))
        if known is not None and known[0] is c and known[1] == self.anchor:
            return _lamps(known[2])
        return self._run_through(c)[0]

    def _repairs_fitting(self, kind: str) -> list[Any]:
        """The catalogue's repairs of one part that fit a part of type ``kind``, cheapest first."""
        assert self.briefing is not None
        return repairs_fitting(self.briefing.catalogue, kind)

    def _probe_repair(self) -> Action | None:
        """Nothing explains the reports, not even pairs or triples: repair, as a probe (IRS), the
        part of the single fault that explains most of what was seen (the lights at the start,
        then the reports), with the cheapest repair of the catalogue that fits it. A repair done
        this way is taken to have fixed something (see :meth:`_rebase`)."""
        assert self.briefing is not None
        seen = {} if self.since else _lamps(self.briefing.visible)
        done = {str(step) for step, _ in self.steps}

        def explains(c: Candidate) -> tuple[int, float]:
            lamps, alike = self._run_through(c)
            return sum(lamps.get(lamp) == state for lamp, state in seen.items()) + len(alike), c.prior

        for c in sorted(self.pairable, key=explains, reverse=True):
            for part in sorted(p for p in c.faulty if p in self.sk.components):
                for spec in self._repairs_fitting(self.sk.components[part].type):
                    action = Action(spec.id, (part,))
                    if str(action) not in done:
                        self._probing = len(self.steps)
                        return action
        return None


__all__ = ["Probes", "finding"]
