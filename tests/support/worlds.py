"""A model-based assistant set up on a scenario, every candidate world started."""

from __future__ import annotations

import dataclasses

from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session


class KeptOpen(ModelBasedAssistant):
    """A model-based assistant whose worlds stay open when its session ends, for a test that looks
    into its decisions afterwards (the runner's close would release its shadow)."""

    def close(self, end: str) -> None:
        pass


def set_up_worlds(store: KnowledgeStore, scenario: str, **config) -> ModelBasedAssistant:
    """An assistant set up on ``scenario`` whose candidate worlds all start (whatever was seen)."""
    assistant = ModelBasedAssistant(**config)
    run_session(scenario, assistant, store=store, seed=0, budget=1, record=False)
    assistant.worlds.steps.clear()
    assistant.worlds.since = 1
    assistant.briefing = dataclasses.replace(assistant.briefing, budget=10)     # rounds to spare
    return assistant
