"""What keeps the model-based assistant's decisions quick without changing them.

* Worlds alike where an observation looks (what one simulation shows of the
  part, only in what that kind of observation reads; the faults it can see; the
  same access state) share one prediction: the assistant chooses exactly what it
  chose predicting every world on its own, with fewer predictions, and worlds in
  one class report alike.
* One pass over the whole sample, pruned by bounds, finds the option that
  scoring every option would.
* The simulator solves once for states that differ only in a panel or box
  that blocks no coupling; a box that blocks a coupling still counts.
* An effect applied again to the same state is set again, not run again, and
  leaves the same state.
* The sessions of a process share what their worlds predicted (the same faults,
  circuit state, repairs and step on the same versions of the system and
  ontology): a session run again chooses the same with fewer predictions, and a
  system changed since reuses none of them.
* … and the worlds that disagreed with what was seen (the same faults, steps and
  reports): a session run again starts fewer worlds and chooses the same, its
  pairs screened as before; a system changed since reuses none of them.

On the torch written in tests/support/torch.py (not shipped), and on shipped
scenarios with a loose connection and a double fault.
"""

from __future__ import annotations

import itertools

import pytest

import diagkg
from diagkg.agents.likeness import OBSERVATIONS, cell
from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.agents.readings import reading
from diagkg.agents.worlds import PREDICTED, REFUTED
from diagkg.env.actions import Hypothesis
from diagkg.env.observations import volts
from diagkg.errors import SessionError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session
from diagkg.sim.circuit import CircuitState

from ..support.stores import catalog_copy
from ..support.torch import FLAT, TORCH, scenario_text, torch_memory_store
from ..support.worlds import set_up_worlds


@pytest.fixture(scope="module")
def torch_store(tmp_path_factory) -> KnowledgeStore:
    return torch_memory_store(tmp_path_factory.mktemp("model-based-speed"))


def _run(store: KnowledgeStore, scenario: str, keep: bool = False, **config) -> tuple[tuple[str, float, list[str]], int]:
    """How a session went (end, cost, steps), and how many actions the assistant tried in its worlds
    (on its own: what earlier sessions predicted is forgotten first, unless ``keep``)."""
    if not keep:
        PREDICTED.clear()
        REFUTED.clear()
    assistant = ModelBasedAssistant(**config)
    result = run_session(scenario, assistant, store=store, seed=0, record=False)
    worlds = assistant.worlds
    return (result.end, result.cost, [str(step) for step, _ in worlds.steps]), worlds.predictions


@pytest.mark.parametrize("scenario", ["TORCH.1", "TORCH.2"])
def test_worlds_alike_share_predictions_on_a_users_system(torch_store, scenario):
    alone, every = _run(torch_store, scenario, screen=False, named_options=100)
    shared, fewer = _run(torch_store, scenario)
    assert shared == alone
    assert fewer <= every


@pytest.mark.parametrize("scenario", ["3CC.L.1", "3CC.M.4"])      # a loose connection; a double fault
def test_worlds_alike_share_predictions_and_choose_the_same(scenario):
    store = catalog_copy()
    alone, every = _run(store, scenario, screen=False, named_options=100)
    shared, fewer = _run(store, scenario)
    assert shared == alone
    assert fewer < every * 0.75


def test_sessions_share_what_worlds_predicted_on_a_users_system(torch_store, tmp_path):
    first, made = _run(torch_store, "TORCH.1")
    hits = PREDICTED.hits
    again, remade = _run(torch_store, "TORCH.1", keep=True)
    assert again == first
    assert made > 0 and remade < made and PREDICTED.hits > hits
    # the same torch with another bulb: a new version of the system, nothing of the first reused
    (tmp_path / "torch.ttl").write_text(TORCH.replace("dk:resistance 60 ;", "dk:resistance 30 ;"))
    (tmp_path / "t1.ttl").write_text(scenario_text(**FLAT))
    changed = KnowledgeStore.memory()
    load_files(changed, [tmp_path / "torch.ttl", tmp_path / "t1.ttl"])
    after, made_after = _run(changed, "TORCH.1", keep=True)
    alone, made_alone = _run(changed, "TORCH.1")
    assert after == alone and made_after == made_alone


# two faults on the torch (tests/support/torch.py): the bulb and the LED's resistor open. Torch and LED dark
# look like a flat battery; once the battery is seen to be fine, no single fault explains what was seen and
# the worlds widen to pairs
TWO_FAULTS = """\
@prefix :        <https://example.org/torch-scenarios/> .
@prefix sys:     <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:TORCH.9 a dk:Scenario ; dk:scenarioNumber 9109 ; dcterms:identifier "TORCH.9" ;
    rdfs:label "Bulb and LED resistor open" ; dk:onSystem sys:torch ; dk:hasCategory dk:Double ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:bulb ] ,
               [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:r_led ] ;
    dk:initialObservations "The torch stays dark when switched on, and the green LED is dark too." ;
    dk:faultyComponent sys:bulb , sys:r_led ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:bulb ] ,
                [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:r_led ] ] ;
    dk:actionBudget 12 .
"""


def _starts(store: KnowledgeStore, scenario: str, keep: bool = False) -> tuple[tuple[str, float, list[str]], int, int]:
    """How a session went (end, cost, steps), how many worlds it started and took through the steps,
    and how many of its starts found their world refuted by an earlier session (what earlier sessions
    found is forgotten first, unless ``keep``); the session must have widened to pairs."""
    if not keep:
        PREDICTED.clear()
        REFUTED.clear()
    hits = REFUTED.hits
    assistant = ModelBasedAssistant()
    result = run_session(scenario, assistant, store=store, seed=0, record=False)
    worlds = assistant.worlds
    assert assistant.space.widenings > 0 or assistant.space.widened
    return (result.end, result.cost, [str(step) for step, _ in worlds.steps]), worlds.started, REFUTED.hits - hits


def test_sessions_share_the_worlds_refuted_on_a_users_system(tmp_path):
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "t9.ttl").write_text(TWO_FAULTS)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "torch.ttl", tmp_path / "t9.ttl"])
    first, started, _ = _starts(store, "TORCH.9")
    assert first[0] in ("success", "success_no_hypothesis")
    again, restarted, found = _starts(store, "TORCH.9", keep=True)
    assert again == first
    assert found > 0 and restarted < started
    # the same torch with another bulb: a new version of the system, nothing found refuted before
    (tmp_path / "torch2.ttl").write_text(TORCH.replace("dk:resistance 60 ;", "dk:resistance 30 ;"))
    changed = KnowledgeStore.memory()
    load_files(changed, [tmp_path / "torch2.ttl", tmp_path / "t9.ttl"])
    after, started_after, found_after = _starts(changed, "TORCH.9", keep=True)
    alone, started_alone, _ = _starts(changed, "TORCH.9")
    assert found_after == 0 and after == alone and started_after == started_alone


def _every_world(store: KnowledgeStore, scenario: str) -> tuple[ModelBasedAssistant, list]:
    """The assistant after one round (see tests/support/worlds.py), with a world for every
    single fault without chance."""
    assistant = set_up_worlds(store, scenario)
    worlds = []
    for c in assistant.space.singles:
        if c.faults[0].probability is None:
            started = assistant.worlds.start(c)
            assert started is not None
            worlds.append((c, started[0]))
    return assistant, worlds


def test_worlds_in_one_class_report_alike(torch_store):
    """Every observation of every part, in every world: worlds that share a class give the same
    report (on the grid readings are split by) at the same cost, so one prediction serves them."""
    assistant, worlds = _every_world(torch_store, "TORCH.1")
    catalogue = assistant.briefing.catalogue
    likeness, predicted = assistant.likeness, assistant.worlds.predicted
    shared_across_faults = set()
    for part, comp in sorted(assistant.worlds.sk.components.items()):
        for action in OBSERVATIONS:
            spec = catalogue.get(action)
            if spec is None or (spec.types and comp.type not in spec.types):
                continue
            step = diagkg.Action(action, (part,))
            classes: dict = {}
            for c, point in worlds:
                key = likeness.alike(c, point, step, 0)
                assert key is not None
                classes.setdefault(key, []).append((c, point))
            for members in classes.values():
                reports = {(report.group(), minutes)
                           for report, minutes, _ in (predicted(c, point, step) for c, point in members)}
                assert len(reports) == 1, (step, [c.label for c, _ in members])
                touched = {bool(likeness.touched(c) & likeness.near[part]) for c, _ in members}
                if len(touched) > 1:
                    shared_across_faults.add(spec.observes)
            assert len(classes) < len(worlds) or action != "measure_voltage"
    # a meter reads what the part shows, whatever the faults next to it: worlds with a fault next
    # to the part share with worlds without one when the voltages are alike
    assert "voltages" in shared_across_faults
    c, point = worlds[0]
    # a verdict is about the whole system, and a repair changes it: never shared
    assert likeness.alike(c, point, Hypothesis({"bulb"}), 0) is None
    assert likeness.alike(c, point, diagkg.Action("replace_component", ("bulb",)), 0) is None


def test_signatures_sit_on_the_grid_of_what_the_meter_shows():
    """A voltage just off a grid line reads, to 0.1 mV, on the other side of it: the signature
    takes the reading as the meter shows it, as the report does."""
    raw = next(v / 1e7 for v in range(200_000, 300_000) if cell(v / 1e7, "V") != cell(volts(v / 1e7), "V"))
    report = reading({"kind": "action", "data": {"x": {"port_voltages": {"a": volts(raw)}, "unit": "V"}}})
    assert cell(raw, "V") != cell(volts(raw), "V")
    assert report.group()[1] == (cell(volts(raw), "V"),)


class ScoringChecked(ModelBasedAssistant):
    """The model-based assistant checking, before each decision with two candidates or more, that
    the single pass finds the option scoring every option finds (see the test below)."""

    checked = 0

    def choose(self):
        if len(self.candidates()) >= 2:
            likeness, scorer = self.likeness, self.scorer
            kept = dict(scorer.last_rates)
            sample = self.space.sample()
            options = likeness.screened(likeness.options(sample), sample)
            pruned = scorer.scored(options, sample)
            every = scorer.scored(options, sample, keep=len(options))
            assert len(pruned) < len(every)
            best = max(every, key=lambda o: o.rate).step
            assert max(pruned, key=lambda o: o.rate).step == best
            # whatever comes first (the options best last time are scored first: here the worst)
            scorer.last_rates = {str(o.step): -o.rate for o in every}
            assert max(scorer.scored(options, sample), key=lambda o: o.rate).step == best
            scorer.last_rates = kept
            ScoringChecked.checked += 1
        return super().choose()


def test_one_pass_finds_the_best_option_on_the_whole_sample():
    """The bounds prune only what cannot be best: the single pass chooses what scoring every
    option would (on a double fault, at each of its first decisions)."""
    ScoringChecked.checked = 0
    run_session("10CC.D.1", ScoringChecked(), store=catalog_copy(), seed=0, budget=3, record=False)
    assert ScoringChecked.checked >= 2


def test_an_option_is_dropped_while_its_reports_are_predicted(torch_store):
    """On the torch's first choice, with the best option scored first, others are dropped part
    way through the sample (their bound falls below the best rate found), and the choice is the
    one scoring every option on every world makes."""
    assistant = set_up_worlds(torch_store, "TORCH.1")
    likeness, scorer, space = assistant.likeness, assistant.scorer, assistant.space
    space.live = [(c, started[0]) for c in space.singles if (started := assistant.worlds.start(c)) is not None]
    sample = space.sample()
    options = likeness.screened(likeness.options(sample), sample)
    every = scorer.scored(options, sample, keep=len(options))
    best = max(every, key=lambda o: o.rate)
    asked: list[str] = []
    outcomes = likeness.outcomes

    def counting(c, point, step):
        asked.append(str(step))
        return outcomes(c, point, step)

    likeness.outcomes = counting            # type: ignore[method-assign]
    scorer.last_rates = {str(best.step): best.rate}
    pruned = scorer.scored(options, sample)
    assert max(pruned, key=lambda o: o.rate).step == best.step
    partly = [o for o in set(asked) if 0 < asked.count(o) < len(sample)]
    assert len(sample) > 2 and partly


def test_openings_that_block_no_coupling_share_a_solve(torch_store):
    sim = diagkg.env.service.simulator_for(torch_store, "torch")
    sim.clear_cache()
    base = sim.simulate(CircuitState())
    solves = sim.stats["solves"]
    opened = sim.simulate(CircuitState.make(physical={("case", "Inverted")}))
    assert sim.stats["solves"] == solves and opened is base
    # a box that blocks a coupling (the ambient light sensor's) still changes what is solved
    store = catalog_copy()
    als = diagkg.env.service.simulator_for(store, "ambient_light_sensor")
    blocking = sorted({pair for c in als.skeleton.couplings for pair in c.blocked_when})
    assert blocking
    als.clear_cache()
    als.simulate(CircuitState())
    before = als.stats["solves"]
    als.simulate(CircuitState.make(physical={blocking[0]}))
    assert als.stats["solves"] == before + 1


def _updates(session) -> list:
    """The updates ``session`` runs on its store from now on (each one's query)."""
    calls = []
    update = session.store.update

    def counting(*args, **kw):
        calls.append(args[0])
        return update(*args, **kw)

    session.store.update = counting          # type: ignore[method-assign]
    return calls


def test_an_effect_on_the_same_state_is_set_again(torch_store):
    """A what-if shadow (a real session applies each effect once, remembering nothing)."""
    from diagkg.env.workspace import resolve_scenario
    from diagkg.env.worlds import Shadow

    with Shadow(resolve_scenario(torch_store, "TORCH.2"), torch_store) as session:   # the bulb lead is off
        session.reset(seed=0)
        point = session.checkpoint()
        calls = _updates(session)
        measure = diagkg.Action("reconnect_cable", ("lead",))
        first, *_ = session.step(measure)
        after_first = session.state_key()
        assert calls, "reconnecting runs an effect"
        runs = len(calls)
        session.rollback(point)
        second, *_ = session.step(measure)
        assert len(calls) == runs               # the same effect on the same state: set again, not run
        assert session.state_key() == after_first
        assert {k: v for k, v in first.items() if k != "round"} == {k: v for k, v in second.items() if k != "round"}


def test_a_repair_of_a_part_as_new_runs_no_effect(torch_store):
    """With a flat battery the lead is as new: reconnecting it would write nothing, so its
    template is not run (effects.UNDOING), and the state stays as it was."""
    session = diagkg.make("TORCH.1", torch_store)
    session.reset(seed=0)
    before = session.state_key()
    calls = _updates(session)
    out, *_ = session.step(diagkg.Action("reconnect_cable", ("lead",)))
    assert out["success"] and not calls
    assert session.state_key() == before and "lead" in session.repaired


def test_the_same_seed_gives_the_same_session_whatever_the_hash_seed():
    """Options are put in a fixed order (a set of diagnoses used to be iterated as it came, so a
    tie between two hypotheses went one way or the other with Python's string hashing)."""
    import json
    import os
    import subprocess
    import sys

    script = ("import json; from diagkg.kg.loading import load_shipped; from diagkg.kg.store import KnowledgeStore; "
              "from diagkg.runs.runner import run_session; s = KnowledgeStore.memory(); load_shipped(s); "
              "r = run_session('3CC-CS.I.2', 'model-based', seed=0, store=s, record=False); "
              "print(json.dumps([r.end, r.cost, r.rounds]))")
    runs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONHASHSEED": str(h)}) for h in (0, 1)]
    outs = [json.loads(p.communicate(timeout=240)[0].strip().splitlines()[-1]) for p in runs]
    assert outs[0] == outs[1]


class Checking(ModelBasedAssistant):
    """The model-based assistant, taking every step it refutes from a prediction anyway."""

    refuted = 0

    def setup(self, briefing):
        super().setup(briefing)
        refuted, worlds = self.likeness.refuted, self.worlds

        def checked(c, point, step, seen):
            out = refuted(c, point, step, seen)
            if out:
                worlds.shadow.rollback(point)
                try:
                    likelihood = worlds.take(step, seen, worlds.falls(c))
                except SessionError:        # a world that cannot take the step is dropped too
                    likelihood = 0.0
                assert likelihood == 0.0, (c.label, str(step))
                Checking.refuted += 1
            return out

        self.likeness.refuted = checked         # type: ignore[method-assign]


@pytest.mark.parametrize("scenario", ["3CC.L.1", "10CC.D.1"])      # a loose connection; a double fault
def test_a_world_refuted_by_its_prediction_would_disagree(scenario):
    """What a report rules out is read from the predictions made while choosing (the world's
    own, or its class's when two cells apart) before any step is taken again: only worlds that
    would have disagreed are dropped so, and the session goes as before."""
    Checking.refuted = 0
    store = catalog_copy()
    checked = run_session(scenario, Checking(), store=store, seed=0, record=False)
    plain = run_session(scenario, ModelBasedAssistant(), store=store, seed=0, record=False)
    assert (checked.end, checked.cost) == (plain.end, plain.cost)
    assert Checking.refuted > 0


def test_readings_two_cells_apart_cannot_agree():
    """Values that agree within the tolerance lie at most one cell apart on the grid, so two
    readings two cells apart (or worded differently) cannot agree."""
    def volts_reading(v: float):
        return reading({"kind": "action", "data": {"x": {"port_voltages": {"a": v}, "unit": "V"}}})

    values = [x / 1000 for x in range(-3000, 3000, 7)] + [1.0 + x / 10_000 for x in range(200)]
    for x in values:
        a = volts_reading(x)
        for y in (x * 1.004, x + 0.002, x - 0.0021, x * 0.99, x + 0.02, x * 1.2):
            b = volts_reading(round(y, 4))
            if a.agrees(b):
                assert not a.apart(b), (x, y)
        assert a.apart(volts_reading(round(x + 10 * (0.002 + 0.01 * abs(x)), 4)))
    assert volts_reading(1.0).apart(reading({"kind": "action", "data": {"x": {"current": 1.0, "unit": "A"}}}))


def test_the_grid_is_four_tolerances_wide_wherever_a_value_lies():
    """A cell is four tolerances wide at 1 mV as at 12 V: 2 V and 3 V are far apart on it."""
    from diagkg.agents.readings import TOLERANCE, grid
    a, r = TOLERANCE["V"]
    for x in (0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 3.0, 6.0, 12.0, -3.0):
        tol = a + r * abs(x)
        assert 1 <= abs(grid(x + 8 * tol, a, r) - grid(x, a, r)) <= 3, x
        assert grid(x + 0.5 * tol, a, r) - grid(x, a, r) in (0, 1), x
    assert grid(3.0, a, r) - grid(2.0, a, r) > 5


def test_two_parts_are_swapped_only_where_one_fault_is_on_both():
    """Crossed cables are one fault on two cables: swapping them is an option. Two cables off
    their terminals are two faults, each repaired on its own: no swap."""
    from diagkg.agents.combinations import Candidate
    store = catalog_copy()
    assistant = ModelBasedAssistant()
    run_session("3CC.S.1", assistant, store=store, seed=0, budget=1, record=False)
    singles, options = assistant.space.singles, assistant.likeness.options
    crossed = next(c for c in singles if len(c.faulty) == 2)
    first, second = sorted(crossed.faulty)
    apart = [next(c for c in singles if c.faulty == {part} and c.faults[0].probability is None)
             for part in (first, second)]
    pair = Candidate(apart[0].faults + apart[1].faults, frozenset({first, second}))
    live = assistant.space.live
    point = live[0][1] if live else None
    swaps = [o for o in options([(crossed, point)]) if isinstance(o, diagkg.Action) and len(o.targets) == 2]
    assert swaps and all(o.targets == (first, second) for o in swaps)
    assert not [o for o in options([(pair, point)]) if isinstance(o, diagkg.Action) and len(o.targets) == 2]


def test_a_pair_world_composed_from_its_singles_shows_what_it_shows(torch_store):
    """A pair of faults is screened by the lights its world would show at the start, composed from
    the states its two singles' worlds were injected into (no world written): they must be the
    lights the pair's own world shows, for every pair of the torch's singles whose states compose."""
    from diagkg.agents.combinations import Candidate

    assistant = set_up_worlds(torch_store, "TORCH.1")
    worlds = assistant.worlds
    singles = [c for c in assistant.space.pairable if c.faults[0].probability is None]
    for c in singles:
        worlds.run_through(c)
    composed = 0
    for a, b in itertools.combinations(singles, 2):
        shown = worlds.composed_lights((a, b))
        if shown is None:
            continue
        composed += 1
        pair = Candidate(a.faults + b.faults, a.faulty | b.faulty, 1.0)
        scenario = worlds.scenario(pair)
        own = worlds.shade(scenario).start(scenario, 0)["lights"]
        assert shown == dict(own), (a.label, b.label)
    assert composed >= len(singles) * (len(singles) - 1) // 4      # most pairs compose (not those on one part)


def test_a_pair_world_with_a_loose_connection_composed_shows_what_it_shows_each_way(torch_store):
    """A pair with a loose connection is screened by the lights its world would show at the start each
    way the connection may fall, composed from its singles' states: they must be what the pair's own
    world shows each way, with the same probabilities, for every such pair of the torch's singles."""
    from diagkg.agents.combinations import Candidate

    assistant = set_up_worlds(torch_store, "TORCH.2")
    worlds = assistant.worlds
    singles = list(assistant.space.pairable)
    for c in singles:
        worlds.run_through(c)
    loose = [c for c in singles if c.faults[0].probability is not None]
    composed = 0
    for a, b in itertools.product(loose, singles):
        ways = None if a is b else worlds.composed_ways((a, b))
        if ways is None:
            continue
        composed += 1
        pair = Candidate(a.faults + b.faults, a.faulty | b.faulty, 1.0)
        scenario = worlds.scenario(pair)
        worlds.shade(scenario).start(scenario, 0)
        falls = worlds.falls(pair)
        assert falls is not None
        assert ways == [(worlds.lights(coin), weight) for coin, weight in falls], (a.label, b.label)
    assert loose and composed >= len(loose) * 2


@pytest.mark.parametrize("scenario", ["3CC.M.4", "3CC.M.1"])      # double faults: pairs are tried
def test_screening_pairs_by_composed_lights_chooses_the_same(scenario, monkeypatch):
    """The screen only spares writing the worlds it turns away: sessions go as without it (on
    3CC.M.1, pairs with a loose connection are turned away too, by the lights each way it falls)."""
    from diagkg.agents.worlds import Worlds

    store = catalog_copy()
    screened, loose = [], []
    original, original_ways = Worlds.composed_lights, Worlds.composed_ways

    def counting(self, combo):
        shown = original(self, combo)
        screened.append(shown is not None and shown != self.briefing.lights)
        return shown

    def counting_ways(self, combo):
        ways = original_ways(self, combo)
        loose.append(ways is not None and self.likelihood_at_start(ways) <= 0)
        return ways

    monkeypatch.setattr(Worlds, "composed_lights", counting)
    monkeypatch.setattr(Worlds, "composed_ways", counting_ways)
    with_screen, _ = _run(store, scenario)
    assert any(screened), "no pair was turned away by its composed lights"
    assert any(loose) or scenario != "3CC.M.1", "no pair with a loose connection was turned away"
    monkeypatch.setattr(Worlds, "composed_lights", lambda self, combo: None)
    monkeypatch.setattr(Worlds, "composed_ways", lambda self, combo: None)
    without, _ = _run(store, scenario)
    assert with_screen == without
