"""The Gymnasium-style contract as an RL researcher reads it (an outsider's loop over thousands of episodes):
a refused move costs nothing and its cost is a float, ``info`` holds nothing an agent could not see, numpy's
integers are seeds, and a move that is not one is refused when it is made."""

from __future__ import annotations

import numpy as np
import pytest

import diagkg
from diagkg.env.actions import Action, Hypothesis
from diagkg.errors import ActionError
from diagkg.kg.store import KnowledgeStore


@pytest.fixture(scope="module")
def torch(torch_quads):
    store = KnowledgeStore.memory()          # (the torch loaded once for the test session, copied)
    store.raw.extend(torch_quads)
    return store


def test_a_refused_move_costs_a_float_zero_and_info_shows_no_hidden_lamp(torch):
    s = diagkg.make("TORCH.1", torch)
    _, info = s.reset(seed=0)
    assert set(info) == {"end", "round", "budget", "total_cost", "repaired"}     # no lamps lit nowhere to be seen
    _, cost, *_, info = s.step(Action("observe_component", ("no_such_part",)))
    assert cost == 0.0 and type(cost) is float and type(info["total_cost"]) is float      # (it was the int 0)
    s.close()


def test_a_refused_subchain_test_is_not_charged(shipped):
    """``test_control_subchain`` on modules that are not control modules was refused after it was charged
    (80 minutes for nothing done), on every cube system."""
    s = diagkg.make("3CC.S.1", shipped)
    s.reset(seed=0)
    obs, cost, *_, info = s.step(Action("test_control_subchain", ("cube_ctrl", "cube_load")))
    assert obs.refusal is not None and cost == 0.0 and info["total_cost"] == 0.0, (obs.message, obs.executed)
    s.close()


def test_numpy_integers_are_seeds_and_odd_moves_are_refused_when_made(torch):
    s = diagkg.make("TORCH.2", torch)
    first = s.reset(seed=np.int64(3))[0]
    assert s.seed == 3 and type(s.seed) is int and first == s.reset(seed=3)[0]
    s.close()
    with pytest.raises(ActionError):
        Action(123, ("bulb",))          # type: ignore[arg-type]
    with pytest.raises(ActionError):
        Hypothesis(None)                # type: ignore[arg-type]
