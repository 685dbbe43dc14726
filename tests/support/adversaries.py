"""Assistants that try to game the score, written against the public API only (what an outside
reviewer would write). None of them diagnoses anything; honest scoring must never let a
hypothesis-naming one end in a ``success…``, and the replacer at most ``success_no_hypothesis`` with
its healthy replacements counted.

========================  ==========================================================
``adv-name-all``          names every part of the system in one hypothesis, every round
``adv-thirds``            names a different third of the parts each round (two at least)
``adv-empty``             claims that nothing is wrong (a hypothesis naming nothing)
``adv-repeat``            names half of the parts, then repeats that hypothesis for ever
``adv-replace-all``       replaces every component, one per round
========================  ==========================================================

Used by the tests (tests/agents/test_honest_success.py) and by ``benchmarks/honest_scoring.py``;
:func:`register_all` makes them known to the registry by name in this process.
"""

from __future__ import annotations

from diagkg.agents.registry import BaseAssistant, Briefing, register
from diagkg.env.actions import Action, Hypothesis

BOXES = ("enclosure", "opening", "module")


def _components(briefing: Briefing) -> list[str]:
    return sorted(p for p, kind in briefing.parts.items() if kind not in BOXES)


class NameAll(BaseAssistant):
    """Every part of the system, in one hypothesis, every round."""

    name = "adv-name-all"

    def suggest(self) -> Action | Hypothesis | None:
        return Hypothesis(frozenset(_components(self.briefing)), "everything")


class Thirds(BaseAssistant):
    """A different third of the parts each round (every part over three rounds; at least two parts
    a round, so that a system of three parts is not searched one part at a time)."""

    name = "adv-thirds"

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        parts = _components(briefing)
        size = max(2, -(-len(parts) // 3))
        self.thirds = [frozenset(parts[(i * size + j) % len(parts)] for j in range(size)) for i in range(3)]
        self.turn = 0

    def suggest(self) -> Action | Hypothesis | None:
        third = self.thirds[self.turn % 3]
        self.turn += 1
        return Hypothesis(third, "a third of the parts")


class Empty(BaseAssistant):
    """"Nothing is wrong": a hypothesis that names nothing."""

    name = "adv-empty"

    def suggest(self) -> Action | Hypothesis | None:
        return Hypothesis(frozenset(), "nothing is wrong")


class Repeat(BaseAssistant):
    """Half of the parts named, then the same hypothesis again and again."""

    name = "adv-repeat"

    def suggest(self) -> Action | Hypothesis | None:
        parts = _components(self.briefing)
        return Hypothesis(frozenset(parts[: max(2, len(parts) // 2)]), "the same again")


class ReplaceAll(BaseAssistant):
    """Replaces every component in turn (repairs used as probes), never names anything."""

    name = "adv-replace-all"

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.todo = _components(briefing) if "replace_component" in briefing.catalogue else []

    def suggest(self) -> Action | Hypothesis | None:
        return Action("replace_component", (self.todo.pop(0),)) if self.todo else None


HYPOTHESIS_ADVERSARIES = (NameAll, Thirds, Empty, Repeat)
ADVERSARIES = (*HYPOTHESIS_ADVERSARIES, ReplaceAll)


def register_all() -> None:
    for cls in ADVERSARIES:
        register(cls.name, cls)
