"""A repair that undoes what the readings show, for the neuro-symbolic assistant
(:mod:`diagkg.agents.neurosymbolic`): :class:`Undoing`, a mixin that reads the state the assistant keeps.

A part a test found faulty is named (or replaced), which costs a replacement. The catalogue may hold a
cheaper repair of the same part that undoes its fault: a battery put in the wrong way round is turned
round (30 minutes) rather than replaced (120). Which fault the part has, the readings say: each fault
mode the part may still have (:attr:`problems`, not :attr:`cleared`) is set alone on the system as
described (a mode of ports on each of the part's ports; one acting at random as come off for good), in
the session's what-if session (:class:`~diagkg.env.worlds.Shadow`, as the model-based assistant's
worlds: started afresh for each), and asked each test already done on the part; those whose reports agree with the ones seen
(their data, within a meter's tolerance: :mod:`~diagkg.agents.readings`) are the faults the part may
have. If some agree and one repair of the catalogue fitting the part leaves it with no fault in every
one of them, for less than naming the part would cost there (a replacement; a cable's ends put back),
that repair is done instead of naming the part; a session it does not end goes on as after any repair
that helped only partly. Nothing here is about batteries: the catalogue's fault modes, repairs and their
templates decide, on systems nobody on the team wrote as on the shipped ones. A mode with a second target
(a short to another node, two ends crossed) or with no size cannot be set alone as it stands and is not
tried. Config ``undo`` (default true)."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from ..env.actions import ActionType, repairs_fitting
from ..env.effects import still_broken
from ..env.outcomes import Outcome
from ..env.scenarios import Fault
from ..env.service import Action, Hypothesis
from ..env.verification import naming_floor, repair_cost
from ..env.worlds import FaultMode, Shadow, fault_modes, hypothetical
from ..errors import SessionError, SimulationError
from ..kg import graphs
from ..kg.store import KnowledgeStore
from ..sim.simulator import Simulator
from .readings import reading
from .registry import Briefing

_WORLDS = itertools.count()
UNDO_WORLDS = "neuro-symbolic-undo"        # the name of the what-if session's state graph (see Undoing._world)


class Undoing:
    """What the neuro-symbolic assistant makes of a part's readings when it is about to name the part.
    Needs of the assistant: ``briefing``, ``catalogue``, ``part_types``, ``problems``, ``cleared``,
    ``settings.undo``, ``simulator``."""

    briefing: Briefing | None
    catalogue: dict[str, ActionType]
    part_types: dict[str, str]
    problems: dict[str, set[str]]
    cleared: set[tuple[str, str]]
    settings: Any
    simulator: Simulator
    read_on: dict[str, list[tuple[Action, Outcome]]]     # part -> the tests done on it and what they showed
    undo_graph: KnowledgeStore | None                   # what the what-if session reads (made on first need)
    undo_shadow: Shadow | None = None                   # the what-if session (made on first need)

    def _note_test(self, action: Action, outcome: Outcome) -> None:
        """Keep a test done on one part, and what it showed (what :meth:`_undoing` asks the modes)."""
        if outcome.get("success") and len(action.targets) == 1:
            self.read_on.setdefault(action.targets[0], []).append((action, outcome))

    def _undoing(self, hyp: Hypothesis | None) -> Action | None:
        """The catalogue's repair to do instead of naming ``hyp``'s one part: cheaper than naming it, it
        undoes every fault the part's readings fit (see the module's docstring); None if none."""
        briefing = self.briefing
        if hyp is None or len(hyp.components) != 1 or not self.settings.undo or briefing is None or briefing.store is None:
            return None
        part = next(iter(hyp.components))
        tests = self.read_on.get(part)
        kind = self.part_types.get(part)
        if not tests or kind is None:
            return None
        # naming a cable with an end off costs putting it back on: only what costs less than naming can be cheaper
        floor = naming_floor(self.catalogue, kind)
        cheaper = [spec for spec in repairs_fitting(self.catalogue, kind, "component") if spec.cost < floor]
        if not cheaper:
            return None
        left = self._modes_left(part)
        # per fault that fits the readings, the cheaper repairs that undo it (each world started once)
        undone = [by for mode in left for fault in self._placements(part, mode)
                  if (by := self._undone_by(fault, part, tests, cheaper)) is not None]
        for spec in cheaper:             # cheapest first
            if undone and all(spec.id in by for by in undone):
                return Action(spec.id, (part,))
        return None

    def _explains_all(self, part: str) -> bool:
        """Whether a fault of ``part`` alone that gives every report seen of the tests done on it also shows
        the lights seen at the start (each fault mode the part may still have, set alone on the system as
        described): then it accounts for every anomaly there, whatever the dependencies say (a reversed LED
        across a lamp's feed darkens the lamp, though nothing is said to depend on the LED)."""
        briefing = self.briefing
        if briefing is None or briefing.store is None or not briefing.lights:
            return False
        tests = self.read_on.get(part, [])
        for mode in self._modes_left(part):
            for fault in self._placements(part, mode) + self._turned_round(part, mode):
                world = self._world(fault)
                if world is None:
                    continue
                shadow, point, lights = world
                if lights == dict(briefing.lights) and self._gives(shadow, point, tests):
                    return True
        return False

    def _modes_left(self, part: str) -> list[FaultMode]:
        """The fault modes ``part`` may still have: its problems no test has ruled out."""
        assert self.briefing is not None
        modes = fault_modes(self.briefing.view)
        return [modes[m] for m in sorted(self.problems.get(part, ())) if (part, m) not in self.cleared and m in modes]

    @staticmethod
    def _gives(shadow: Shadow, point: Any, tests: list[tuple[Action, Outcome]]) -> bool:
        """Whether the world of ``shadow``, from ``point``, gives every report seen of ``tests`` (their data,
        within a meter's tolerance)."""
        return all((shown := shadow.trial(point, action)) is not None and
                   reading({"data": shown.get("data")}).agrees(reading({"data": seen.get("data")}))
                   for action, seen in tests)

    def _placements(self, part: str, mode: FaultMode) -> list[Fault]:
        """``mode`` set on ``part`` (a mode of ports: on each of its ports), acting at random as if it had
        come off for good (what a test shows of it when it is off; when it is on, the part is as described);
        none for a mode with a second target or no size."""
        if mode.two_targets or not mode.sized or mode.kind not in ("component", "port"):
            return []
        ns = graphs.namespace_of(self.simulator.skeleton.iri)
        targets = [part] if mode.kind == "component" else \
            [f"{part}.{port}" for port in sorted(self.simulator.skeleton.components[part].ports)]
        faults = [mode.fault(ns, target) for target in targets]
        return [dataclasses.replace(f, probability=1.0) if mode.chance else f for f in faults]

    def _turned_round(self, part: str, mode: FaultMode) -> list[Fault]:
        """``mode`` on ``part``'s own two ends when its second target is the part's own (``dk:otherTargetRule
        "own"``: a part put in backwards); none otherwise."""
        ports = sorted(self.simulator.skeleton.components[part].ports) if part in self.simulator.skeleton.components else []
        if mode.rule != "own" or not mode.two_targets or len(ports) != 2 or not mode.sized:
            return []
        ns = graphs.namespace_of(self.simulator.skeleton.iri)
        return [mode.fault(ns, f"{part}.{ports[0]}", f"{part}.{ports[1]}")]

    def _world(self, fault: Fault) -> tuple[Shadow, Any, dict[str, Any]] | None:
        """The what-if session started with ``fault`` alone (its first checkpoint and the lights it shows
        then), or None. One what-if session serves every world of the session, its state graph named
        alike in every session (:data:`UNDO_WORLDS`): a world started before in this process is written back
        rather than injected again, and what its steps worked out is remembered (as the model-based
        assistant's worlds)."""
        briefing = self.briefing
        assert briefing is not None and briefing.store is not None
        skeleton = self.simulator.skeleton
        removed = frozenset(c for c in skeleton.components if c not in briefing.parts)
        scenario = hypothetical((fault,), iri=f"urn:diagkg:neuro-symbolic:undo:{next(_WORLDS)}",
                                system_iri=skeleton.iri, key=briefing.system, removed=removed)
        if self.undo_shadow is None:
            if self.undo_graph is None:
                self.undo_graph = briefing.store.shared_copy()
            self.undo_shadow = Shadow(scenario, self.undo_graph, session_id=UNDO_WORLDS)
        shadow = self.undo_shadow
        try:
            lights = shadow.start(scenario, 0)["lights"]
            return shadow, shadow.checkpoint(), dict(lights)
        except (SessionError, SimulationError):
            return None

    def close(self, end: str) -> None:
        """The session is over: the what-if session gives its working memory back."""
        if self.undo_shadow is not None:
            self.undo_shadow.close()
            self.undo_shadow = None

    def _undone_by(self, fault: Fault, part: str, tests: list[tuple[Action, Outcome]],
                   repairs: list[ActionType]) -> frozenset[str] | None:
        """In the world of ``fault`` alone: None if it does not give every report seen of the tests done
        (their data, within a meter's tolerance); else the ``repairs`` that cost less there than naming
        ``part`` would and leave it with no fault."""
        world = self._world(fault)
        if world is None:
            return None
        shadow, point, _ = world
        naming = repair_cost(shadow, part, shadow.state())     # as the world stands before any step
        if not self._gives(shadow, point, tests):
            return None
        undone = set()
        for spec in repairs:
            if spec.cost >= naming:      # naming it does as much for as little
                continue
            done = shadow.trial(point, Action(spec.id, (part,)))
            if done is not None and done.success and part not in still_broken(shadow, shadow.state()):
                undone.add(spec.id)
        return frozenset(undone)


__all__ = ["Undoing"]
