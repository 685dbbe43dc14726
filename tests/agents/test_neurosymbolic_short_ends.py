"""Where the neuro-symbolic assistant looks for a short between two nodes (issue 30), on the car rear-light
system of the tests (written from the README, not shipped) with its harness shorted to ground behind the
5 A fuse (REAR.9: the fuse blows, nothing lights).

* A fuse replaced (a repair, not a naming) that does not bring the system back counts as one named that
  way: a short may blow the new one, so the parts it may end on are named, then the fuse again.
* A part set aside (its own faults ruled out, the candidates used up) may still be an end of the short;
  only a part named (or repaired) already is not.
* A part cut inside (a fuse blown) reads its net's potential at both ends: a reading there is what the
  part's opening gives, not a sign of a short."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.env.service import Action, Hypothesis
from diagkg.kg.loading import load_files
from diagkg.runs.runner import run_session

from ..support.rear import rear_memory_store
from .test_neurosymbolic_shorts import HARNESS_SHORTED


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rear-short")
    store = rear_memory_store(folder)
    (folder / "rear-9.ttl").write_text(HARNESS_SHORTED)
    load_files(store, [folder / "rear-9.ttl"])
    return store


class ReplacesTheFuse(NeuroSymbolic):
    """Replaces the fuse the first time it would name it alone (as it does when naming it could not be the
    whole diagnosis): the session's repair path instead of its naming path."""

    def _repair_instead(self, hyp: Hypothesis) -> Action | None:
        if set(hyp.components) == {"fuse"} and not self.blown and not self.renew:
            return Action("replace_component", ("fuse",))
        return super()._repair_instead(hyp)


def _session(store, assistant: NeuroSymbolic) -> tuple[str, list[dict]]:
    rounds: list[dict] = []
    result = run_session("REAR.9", assistant, store=store, seed=0, record=False, keep_ledger=False,
                         on_round=lambda r: rounds.append(r.to_dict()))
    return str(result.end), rounds


def test_a_fuse_replaced_that_blows_again_points_to_the_short(store, monkeypatch):
    end, rounds = _session(store, ReplacesTheFuse())
    steps = [(r["intention"], frozenset(r.get("suspects") or ())) for r in rounds]
    replaced = [i for i, (what, _) in enumerate(steps) if what.startswith("replace_component fuse")]
    named = [parts for what, parts in steps if parts]
    assert end == "success", steps
    assert replaced and named[-1] == {"fuse"}                 # replaced, and named again once the short is cleared
    assert any(parts & {"plate", "r_plate"} for parts in named)   # an end of the short, named after the replacement
    # without counting the replacement as a fuse that blew again, nothing points at a short: out of rounds
    monkeypatch.setattr(NeuroSymbolic, "_fuse_replaced", lambda self, part: None)
    end_before, _ = _session(store, ReplacesTheFuse())
    assert end_before != "success"


def test_a_part_set_aside_may_still_be_an_end_of_the_short(store):
    assistant = NeuroSymbolic()
    _session(store, assistant)
    # every part set aside, none named: the short's ends are still there to name
    assistant.tried, assistant.excluded = set(), set(assistant.components)
    assistant.short_pairs, assistant.renew, assistant.blown = None, frozenset(), {"fuse"}
    first = assistant._short_suspect()
    assert isinstance(first, Hypothesis) and len(first.components) == 1
    ends = {"plate", "r_plate", "fuse", "sw", "dio", "harness", "bat", "tail_l", "tail_r", "ind", "r_ind"}
    assert set(first.components) <= ends
    # a part named already is not named again: each naming is a new part, until none is left
    seen = {next(iter(first.components))}
    while (nxt := assistant._short_suspect()) is not None:
        part = next(iter(nxt.components))
        assert part not in seen
        seen.add(part)
    assert {"plate", "r_plate"} & seen


def test_a_blown_fuse_read_at_both_ends_is_what_its_opening_gives(store):
    assistant = NeuroSymbolic()
    _session(store, assistant)
    assistant.conducts, assistant.excluded, assistant.partly_repaired = set(), set(), False
    working = assistant.nominal.components["fuse"].port_v
    # the fuse blown: its supply end at the battery's potential, its other end at 0 V (nothing feeds it)
    assistant.readings = [("fuse", "voltages", {"port_voltages": {"p": working["p"], "n": 0.0}})]
    assert "fuse" in assistant._opens_explaining()
    # a reading no opening of the fuse gives (both ends at 0 V) does not count for it
    assistant.readings = [("fuse", "voltages", {"port_voltages": {"p": 0.0, "n": 0.0}})]
    assert "fuse" not in assistant._opens_explaining()
