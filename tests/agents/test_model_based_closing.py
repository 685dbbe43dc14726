"""A naming judged partial that made the system work: the model-based assistant's next step is the
cheapest look, since any step then ends the session as a repair. On the twin written in
``tests/support/chains.py`` (two supplies, a diode each), the bulb is open and diode 2 shorted: the
lights show the bulb only (either supply lights it, a shorted diode shows nowhere), so the bulb is named,
judged partial (the diode is left) with the bulb lit again. Before, a 20-minute measurement followed
(3CC.M.2 and 3CC-CS.M.2, M.3 on the shipped catalogue did the same)."""

from __future__ import annotations

from pathlib import Path

from diagkg.env.actions import action_catalogue
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.runs.runner import run_session
from tests.support.chains import _stored, scenario, twin
from tests.support.circuits import with_generated

from .test_neurosymbolic_lit_past import KEY, _system


def test_a_partial_naming_that_made_the_system_work_is_followed_by_the_cheapest_look(tmp_path: Path):
    store = _stored(tmp_path, {"twin.ttl": twin(), "w2.ttl": scenario(
        "twin", "TWIN.2", 9310, "The bulb open, diode 2 shorted", [("OpenComponent", "bulb"), ("ShortedComponent", "d2")],
        "The bulb stays dark. Both supply LEDs are lit.")})
    rounds = []
    result = run_session(9310, "model-based", seed=0, store=store, record=False, keep_ledger=False,
                         on_round=lambda r: rounds.append(r.to_dict()))
    verdicts = [r.get("verdict") for r in rounds]
    assert "partial" in verdicts
    after = rounds[verdicts.index("partial") + 1]
    catalogue = action_catalogue(store)
    cheapest = min(a.cost for a in catalogue.values() if a.category == "observe")
    # the step right after is a look at what the person can see, at the least a look costs, and it ends the session
    assert [(e["action"], e["cost"]) for e in after["executed"]] == [("observe_component", cheapest)]
    assert catalogue[after["executed"][0]["action"]].category == "observe"
    assert after is rounds[-1]
    assert result.end == "success_no_hypothesis"
    assert result.cost == sum(r["cost"] for r in rounds)


def test_what_is_likely_left_is_named_when_that_costs_no_more_than_the_look(tmp_path: Path):
    """On a system nobody on the team wrote (``unwritten_5_11`` of benchmarks/unwritten_systems.py, written out in
    ``test_neurosymbolic_lit_past``), two cables' ends crossed: reconnecting one is judged partial with the system
    working, and the other, as likely as the assistant's threshold for naming says and as cheap to name as a look, is
    named rather than looked past — the session ends with the diagnosis, at the same cost."""
    store = with_generated(tmp_path, KEY, _system(), frozenset({"CrossedCables"}))
    catalog = ScenarioCatalog(store)
    crossed = [n for n in catalog.numbers()
               if {f.target.rsplit("/", 1)[-1] for f in catalog.resolve(n).faults} == {"cable12.n"}
               and {(f.other or "").rsplit("/", 1)[-1] for f in catalog.resolve(n).faults} == {"cable3.n"}]
    assert len(crossed) == 1
    rounds: list[dict] = []
    result = run_session(crossed[0], "model-based", seed=0, store=store, record=False, keep_ledger=False,
                         on_round=lambda r: rounds.append(r.to_dict()))
    verdicts = [r.get("verdict") for r in rounds if r.get("verdict")]
    assert verdicts[-2:] == ["partial", "correct"]
    assert result.end == "success"
    assert result.cost == sum(r["cost"] for r in rounds)
