"""A continuity test on a relay its coupling keeps switching (an outsider's greenhouse controller: the relay coil
shorted to the grow lamp it feeds, so the lamp puts the relay out and back in, written in
tests/agents/test_model_based_unblocked_coupling.py). A sound relay read "open", a broken one's verdict, and the
neuro-symbolic assistant named it (120 minutes): its position as the last solve left it was judged against what its
coupling made of that solve, which in a state that does not settle is the other position by definition. A contact
that chatters is judged against the position it is in."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Action
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..agents.test_model_based_unblocked_coupling import SCENARIO, SYSTEM

STUCK = SCENARIO.replace("GLASS.1", "GLASS.2").replace("9821", "9822").replace(
    "dk:injects [", "dk:injects [ a dk:Fault ; dk:faultMode dk:StuckOpen ; dk:faultTarget sys:relay ] , [")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("glasshouse")
    for name, text in (("glasshouse.ttl", SYSTEM), ("GLASS.1.ttl", SCENARIO), ("GLASS.2.ttl", STUCK)):
        (folder / name).write_text(text)
    store = KnowledgeStore.memory()
    load_files(store, [folder / n for n in ("glasshouse.ttl", "GLASS.1.ttl", "GLASS.2.ttl")])
    return store


@pytest.mark.parametrize(("scenario", "said"), [("GLASS.1", "nominal"),    # sound, chattering
                                                 ("GLASS.2", "open")])      # stuck open: it does not chatter
def test_a_relay_that_chatters_reads_as_a_sound_one(store, scenario, said):
    with diagkg.make(scenario, store) as s:
        s.reset(seed=0)
        assert not s.initial_result.converged or scenario == "GLASS.2"
        obs = s.step(Action("test_continuity", ("relay",)))[0]
    assert obs.refusal is None, obs.message
    assert str(obs.data["relay"].verdict) == said, obs.message
