"""A short between two parts belongs to both: repairing either clears it for good.

Repairing a component removes the shorts on its terminals; the reset after each action puts
back, from the fault snapshot, what belongs to no repaired part. A short between two
components is about both of them, so replacing either one keeps it gone (it used to belong
to whichever of its two ends the state graph happened to list first, so one of the two
repairs failed, depending on set order). On the torch of tests/support/torch.py, written in
the test."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.torch import TORCH, short_scenario

SHORT = short_scenario("TORCH.SHORT", 9131, "lead.n", "ret.p", "Bulb lead shorted to the return lead",
                       "Nothing lights.")


@pytest.fixture(scope="module")
def torch_short(tmp_path_factory):
    folder = tmp_path_factory.mktemp("short")
    (folder / "torch.ttl").write_text(TORCH)
    (folder / "short.ttl").write_text(SHORT)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "torch.ttl", folder / "short.ttl"])
    return store


@pytest.mark.parametrize("part", ["lead", "ret"])
def test_replacing_either_end_of_a_short_clears_it(torch_short, part):
    session = diagkg.make("TORCH.SHORT", torch_short)
    session.reset(seed=0)
    assert session.state().shorts and not session.is_nominal()
    session.step(diagkg.Action("observe_component", ("bulb",)))
    assert session.state().shorts                       # an observation leaves the fault as it was
    session.step(diagkg.Action("replace_component", (part,)))
    assert not session.state().shorts
    assert session.end == "success_no_hypothesis"
