"""The rule when a partial hypothesis leaves the system working (``works`` true: what is still faulty stops no repair,
as a broken indicator): the session goes on, since the assistant may still complete its diagnosis. Naming what is
left ends it in ``success`` (diagnosed); any action after it — even one refused at no cost — ends it in
``success_no_hypothesis`` (the lamps work, by the repairs the assistant paid for); giving up ends it in surrender,
running out of rounds in timeout. On the torch (written in the tests): the bulb's lead off and the power LED open."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Action, Hypothesis
from diagkg.kg.loading import load_files

from ..support.torch import LOOSE_LEAD, scenario_text, torch_memory_store

BOTH = "dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:lead.n ]"


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("torch")
    store = torch_memory_store(folder)
    text = scenario_text(**dict(LOOSE_LEAD, id="TORCH.P", number=9181, label="Lead off, LED open",
                                symptoms="The torch stays dark and the green LED is dark too."))
    assert BOTH in text
    text = text.replace(BOTH, BOTH + " , [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:led ]")
    (folder / "p.ttl").write_text(text)
    load_files(store, [folder / "p.ttl"])
    return store


def _partial(store):
    session = diagkg.make("TORCH.P", store)
    session.reset(seed=0)
    outcome, cost, terminated, truncated, info = session.step(Hypothesis(frozenset({"lead"})))
    assert (outcome["verdict"], outcome["data"]["works"], terminated, info["end"]) == ("partial", True, False, None)
    assert cost == 10.0
    return session


def test_naming_what_is_left_is_a_diagnosis(torch):
    with _partial(torch) as session:
        outcome, cost, terminated, _, info = session.step(Hypothesis(frozenset({"led"})))
        assert (outcome["verdict"], terminated, info["end"], info["total_cost"]) == ("correct", True, "success", 130.0)


def test_any_action_after_it_ends_without_a_diagnosis_even_a_refused_one(torch):
    with _partial(torch) as session:
        outcome, cost, terminated, _, info = session.step(Action("observe_component", ("no_such_part",)))
        assert (outcome["refusal"], cost, terminated, info["end"]) == ("unknown-part", 0.0, True, "success_no_hypothesis")
        assert info["total_cost"] == 10.0


def test_giving_up_after_it_is_a_surrender(torch):
    with _partial(torch) as session:
        *_, terminated, _, info = session.step(None)
        assert (terminated, info["end"]) == (True, "surrender")
