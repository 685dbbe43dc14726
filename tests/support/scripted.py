"""An assistant that suggests a fixed plan (for tests of the ledger and the trajectory)."""

from __future__ import annotations

from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action, Hypothesis


class Scripted(BaseAssistant):
    """Suggests a fixed sequence; holds a fixed ranked candidate list per round."""

    name = "scripted"

    def __init__(self, plan: list[Action | Hypothesis],
                 candidates: dict[int, list[frozenset[str]]] | None = None):
        super().__init__()
        self.plan = list(plan)
        self.lists = candidates or {}

    def suggest(self) -> Action | Hypothesis | None:
        return self.plan.pop(0) if self.plan else None

    def ranked_candidates(self) -> list[frozenset[str]]:
        return self.lists.get(len(self.outcomes) + 1, [])
