"""Damage in a session: a shorted tail lamp blows the fuse (tests/support/rear.py, a system
written in the test). The blown fuse is part of the session's state: inspection shows it, a
meter reads it, replacing the fuse while the short persists blows it again, and it stays blown
after an action's effect is undone, until it is replaced."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.checks import check_scenario, rating_warnings
from diagkg.env.outcomes import Continuity, Current, Sighting
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.env.service import simulator_for

from ..support.rear import rear_memory_store


@pytest.fixture(scope="module")
def rear(tmp_path_factory):
    return rear_memory_store(tmp_path_factory.mktemp("rear"))


def act(session, action: str, *targets: str):
    out, *_ = session.step(diagkg.Action(action, targets))
    return out


def blown(session) -> bool:
    return ("fuse", "blown") in session.state().damaged


def test_the_blown_fuse_is_seen_measured_and_blows_again_until_the_short_is_gone(rear):
    session = diagkg.make("REAR.1", rear)
    obs, info = session.reset(seed=0)
    assert session.initial_result.lit == () and blown(session)               # the fault blew the fuse as it was injected
    assert "tail_r is off" in obs["visible"]
    seen = act(session, "observe_component", "fuse")["data"]["fuse"]
    assert seen["damage"] == ["blown"] and "blown" in seen["text"]
    assert act(session, "measure_current", "fuse")["data"]["fuse"]["current"] == 0.0
    assert act(session, "test_continuity", "fuse")["data"]["fuse"]["verdict"] == "open"
    assert act(session, "test_continuity", "tail_l")["data"]["tail_l"]["verdict"] == "short"

    # a new fuse, the short still there: it blows again
    out = act(session, "replace_component", "fuse")
    assert out["data"]["fuse"]["damage"] == ["blown"] and blown(session) and session.end is None
    assert act(session, "measure_current", "fuse")["data"]["fuse"]["current"] == 0.0

    # the lamp replaced, the fuse is still blown (history); a new fuse then holds
    act(session, "replace_component", "tail_l")
    assert blown(session) and session.end is None
    act(session, "replace_component", "fuse")
    assert not blown(session) and session.end == "success_no_hypothesis"


def test_the_typed_records_agree(rear):
    session = diagkg.make("REAR.1", rear)
    session.reset(seed=0)
    session.step(diagkg.Action("observe_component", ("fuse",)))
    sighting = session.history[-1].data["fuse"]
    assert isinstance(sighting, Sighting) and sighting.damage == ("blown",)
    session.step(diagkg.Action("measure_current", ("tail_l",)))
    assert session.history[-1].data["tail_l"] == Current(0.0)
    session.step(diagkg.Action("test_continuity", ("fuse",)))
    assert isinstance(session.history[-1].data["fuse"], Continuity)


def test_hypotheses_see_the_damage(rear):
    session = diagkg.make("REAR.1", rear)
    session.reset(seed=0)
    # naming the fuse alone: it is faulty (blown) and is replaced, but the short blows it again
    out, *_ = session.step(diagkg.Hypothesis(frozenset({"fuse"})))
    assert out["verdict"] == "partial" and blown(session)
    out, *_ = session.step(diagkg.Hypothesis(frozenset({"tail_l", "fuse"})))
    assert out["verdict"] == "correct" and not blown(session)


def test_damage_done_by_an_action_outlives_the_action(rear):
    """Bridging the harness to 0 V is undone after the round; the fuse it blew is not."""
    session = diagkg.make("REAR.2", rear)
    session.reset(seed=0)
    assert not blown(session) and "tail_l" in session.initial_result.lit
    out = act(session, "short_ports", "harness.n", "bat.neg")
    assert out["success"]
    assert not session.state().shorts                          # the bridge is gone after the round…
    assert blown(session) and session.simulate().lit == ()      # …the fuse it blew stays blown
    act(session, "replace_component", "tail_r")
    assert session.end is None and blown(session)               # the lamp is fixed, the fuse is still blown
    act(session, "replace_component", "fuse")
    assert session.end == "success_no_hypothesis"


def test_the_check_knows_the_fuse_blows(rear):
    scenario = ScenarioCatalog(rear).resolve("REAR.1")
    report = check_scenario(rear, scenario, seeds=1)
    assert report.passed, [str(f) for f in report.findings]
    damage = [f for f in report.findings if f.check == "damage"]
    assert damage and "fuse (blown" in damage[0].message


def test_a_nominal_state_past_a_rating_is_a_located_warning(tmp_path):
    store = rear_memory_store(tmp_path, rating=0.5)     # 0.79 A flow in the working system
    warnings = rating_warnings(store, simulator_for(store, "rear"))
    assert len(warnings) == 1
    w = warnings[0]
    assert w.warning and w.passed and w.check == "ratings"
    assert w.file == str(tmp_path / "rear.ttl")
    assert ":fuse a dk:Fuse" in (tmp_path / "rear.ttl").read_text().splitlines()[w.line - 1]
    assert "fuse is blown" in w.message and "ratedCurrent" in w.message
    scenario = ScenarioCatalog(store).resolve("REAR.1")
    assert any(f.warning and f.check == "ratings" for f in check_scenario(store, scenario, seeds=1).findings)
