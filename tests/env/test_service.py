"""The service agent's mechanics (facts §10): automatic access, the reset to
the fault snapshot, loose connections, the ambient-light rotation repair, a
double fault, the bypass guard, the hypothesis cost rules, end values, and
reproducibility. Scenarios are built here from the fault catalogue so that
each test states exactly what it injects."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.scenarios import Fault, Scenario
from diagkg.env.service import Action, Hypothesis, action_catalogue

from ..support.stores import shipped_store

SYS = "https://w3id.org/diagkg/system/{key}/"


def scenario(key: str, faults: list[tuple], faulty: set[str], budget: int = 10, removed=(), permanent=()) -> Scenario:
    ns = SYS.format(key=key)
    built = []
    for mode, template, target, *rest in faults:
        kw = rest[0] if rest else {}
        other = kw.get("other")
        built.append(Fault(mode, mode, template, ns + target, ns + other if other else None,
                           kw.get("value"), kw.get("probability")))
    return Scenario(iri="urn:test", number=999, id="TEST", label="test", system_iri=ns + key, key=key,
                    budget=budget, observations="test", diagnosis=None, description=None, categories=(),
                    faulty=frozenset(faulty), removed=frozenset(removed), permanent=frozenset(permanent),
                    notes=(), faults=tuple(built), repair=())


def session_for(sc: Scenario, seed: int = 0):
    s = diagkg.Session(sc, shipped_store())
    s.reset(seed=seed)
    return s


BURNED = ("OpenComponent", "fault-override-resistance", "main_bulb", {"value": 1e9})
DETACHED = ("DetachedEnd", "effect-detach-port", "ctrl_cable_out_pos.p")
FEEDBACK = ("CouplingEnabled", "fault-enable-coupling", "lamp_light_on_sensor")


def test_catalogue_costs_are_minutes_with_a_derived_category():
    cat = action_catalogue(shipped_store())
    assert cat["replace_component"].cost == 120 and cat["replace_component"].category == "replace"
    assert cat["observe_component"].cost == 10 and cat["observe_component"].category == "observe"
    assert cat["measure_voltage"].category == "test" and "multimeter" in cat["measure_voltage"].tools
    assert cat["reconnect_cable"].repair and not cat["open_switch"].repair


def test_automatic_access_is_charged():
    s = session_for(scenario("three_cubes", [BURNED], {"main_bulb"}))
    obs, cost, *_ = s.step(Action("measure_voltage", ("internal_bulb",)))
    assert [e["action"] for e in obs["executed"]] == ["invert_enclosure", "measure_voltage"]
    assert cost == 10 + 20
    # the access is undone afterwards: the peephole/cube are back as in the fault state
    assert not s.affords("internal_bulb", "Reachable")


def test_access_prefers_a_panel():
    s = session_for(scenario("current_sensor", [BURNED], {"main_bulb"}))
    obs, cost, *_ = s.step(Action("test_continuity", ("load_diode",)))
    assert [e["action"] for e in obs["executed"]] == ["open_opening", "test_continuity"]
    assert obs["executed"][0]["targets"] == ["load_panel"]


def test_observation_does_not_leak_the_fault():
    s = session_for(scenario("three_cubes", [BURNED], {"main_bulb"}))
    obs, *_ = s.step(Action("observe_component", ("main_bulb",)))
    assert "dark" in obs["message"]
    text = str(obs).lower()
    assert "1e9" not in text and "1000000000" not in text and "override" not in text and "resistance" not in text


def test_actions_are_reset_after_each_round_but_repairs_stay():
    s = session_for(scenario("three_cubes", [DETACHED, BURNED], {"main_bulb", "ctrl_cable_out_pos"}))
    s.step(Action("open_switch", ("ctrl_switch",)))
    assert dict(s.state().positions) == {}, "a switch toggle is undone by the reset to the fault snapshot"
    obs, _, terminated, *_ = s.step(Action("reconnect_cable", ("ctrl_cable_out_pos",)))
    assert obs["success"] and not terminated
    assert not s.state().detached, "a repair survives the reset"
    obs, _, terminated, _, info = s.step(Action("replace_component", ("main_bulb",)))
    assert terminated and info["end"] == "success_no_hypothesis"


def test_unknown_action_and_part_cost_nothing():
    s = session_for(scenario("three_cubes", [BURNED], {"main_bulb"}))
    obs, cost, *_ = s.step(Action("kick", ("main_bulb",)))
    assert not obs["success"] and cost == 0 and "Unknown action" in obs["message"]
    obs, cost, *_ = s.step(Action("replace_component", ("flux_capacitor",)))
    assert not obs["success"] and cost == 0 and "no 'flux_capacitor'" in obs["message"]


def test_removed_component_is_not_present():
    s = session_for(scenario("three_cubes", [BURNED], {"main_bulb"}, removed={"psu_green_led", "psu_green_resistor"}))
    obs, cost, *_ = s.step(Action("observe_component", ("psu_green_led",)))
    assert "not present" in obs["message"] and cost == 0


def test_loose_connection_is_intermittent_in_a_session():
    sc = scenario("three_cubes", [("LooseConnectionFault", "fault-loose-connection", "load_cable_neg.n",
                                   {"probability": 0.5})], {"load_cable_neg"})
    s = session_for(sc, seed=3)
    lit = []
    for _ in range(20):
        lit.append("main_bulb" in s.simulate().lit)
    assert lit.count(True) >= 3 and lit.count(False) >= 3
    assert not s.is_nominal(), "a remaining loose connection is never nominal"
    obs, *_ , info = s.step(Action("reconnect_cable", ("load_cable_neg",)))
    assert info["end"] == "success_no_hypothesis"


def test_same_seed_same_run():
    sc = scenario("three_cubes", [("LooseConnectionFault", "fault-loose-connection", "psu_cable_pos.p",
                                   {"probability": 0.5})], {"psu_cable_pos"})
    runs = []
    for _ in range(2):
        s = session_for(sc, seed=11)
        runs.append([s.step(Action("observe_component", ("main_bulb",)))[0]["message"] for _ in range(6)])
    assert runs[0] == runs[1]
    assert len(set(runs[0])) == 2, "the loose end shows both ways within six looks"


def test_ambient_light_rotation_repair():
    sc = scenario("ambient_light_sensor", [FEEDBACK], {"cube_ctrl"}, permanent={"rotate_enclosure"})
    s = session_for(sc)
    assert not s.simulate().converged
    obs, *_ = s.step(Action("adjust_potentiometer", ("ctrl_sensitivity_pot",), 0.9))
    assert obs["success"] and not s.simulate().converged, "the bait potentiometer changes nothing"
    obs, cost, terminated, _, info = s.step(Action("rotate_enclosure", ("cube_ctrl",)))
    assert terminated and info["end"] == "success_no_hypothesis"


def test_ambient_light_hypothesis_on_the_enclosure():
    sc = scenario("ambient_light_sensor", [FEEDBACK], {"cube_ctrl"})
    s = session_for(sc)
    obs, cost, terminated, *_ = s.step(Hypothesis({"cube_load"}))
    assert obs["verdict"] == "correct" and cost == 10
    s = session_for(sc)
    obs, cost, *_ = s.step(Hypothesis({"cube_psu"}))
    assert obs["verdict"] == "wrong" and cost == 120 and "name the specific components" in obs["message"]


def test_double_fault_needs_both_repairs():
    short = ("ShortBetweenNodes", "fault-short-between", "psu_cable_pos.n", {"other": "psu_cable_neg.n", "value": 0.001})
    depleted = ("DepletedBattery", "fault-depleted-battery", "battery")
    sc = scenario("ten_cubes", [short, depleted], {"battery", "psu_cable_pos"})
    s = session_for(sc)
    obs, *_ = s.step(Hypothesis({"battery"}))
    assert obs["verdict"] == "partial"
    s = session_for(sc)
    obs, *_ = s.step(Hypothesis({"psu_cable_pos"}))
    assert obs["verdict"] == "partial"
    s = session_for(sc)
    obs, _, terminated, *_ = s.step(Hypothesis({"battery", "psu_cable_pos"}))
    assert obs["verdict"] == "correct" and terminated
    # the partial hypothesis repaired the battery for good; the short remains
    s = session_for(sc)
    s.step(Hypothesis({"battery"}))
    assert "battery" in s.repaired and s.state().shorts


def test_bypass_guard():
    # a wire bridging the whole control module plus a burned lamp: replacing the
    # lamp lights it, but the switch no longer controls it, so it is no repair
    bridge = ("ShortBetweenNodes", "fault-short-between", "psu_cable_pos.n", {"other": "load_cable_pos.p", "value": 0.01})
    sc = scenario("three_cubes", [bridge, BURNED, DETACHED], {"main_bulb", "ctrl_cable_out_pos"})
    s = session_for(sc)
    obs, *_ = s.step(Hypothesis({"main_bulb"}))
    assert obs["verdict"] == "partial", obs["message"]
    s = session_for(sc)
    obs, *_ = s.step(Hypothesis({"main_bulb", "ctrl_cable_out_pos", "psu_cable_pos"}))
    assert obs["verdict"] == "correct"


def test_hypothesis_cost_rules():
    crossed = ("CrossedCables", "effect-swap-ends", "ctrl_cable_in_pos.p", {"other": "ctrl_cable_in_neg.p"})
    s = session_for(scenario("three_cubes", [crossed, DETACHED], {"ctrl_cable_in_pos", "ctrl_cable_in_neg", "ctrl_cable_out_pos"}))
    obs, cost, *_ = s.step(Hypothesis({"load_cable_pos"}))            # healthy cable: 10 at least
    assert obs["verdict"] == "wrong" and cost == 10
    obs, cost, *_ = s.step(Hypothesis({"ctrl_red_led"}))              # healthy component: 120
    assert obs["verdict"] == "wrong" and cost == 120
    obs, cost, *_ = s.step(Hypothesis({"ctrl_cable_out_pos"}))        # one end to put back: 10, partial
    assert obs["verdict"] == "partial" and cost == 10
    obs, cost, terminated, *_ = s.step(Hypothesis({"ctrl_cable_in_pos", "ctrl_cable_in_neg"}))
    assert obs["verdict"] == "correct" and cost == 20 and terminated


def test_budget_and_surrender():
    s = session_for(scenario("three_cubes", [BURNED], {"main_bulb"}, budget=2))
    s.step(Action("observe_component", ("main_bulb",)))
    obs, cost, terminated, truncated, info = s.step(Action("observe_component", ("battery",)))
    assert truncated and not terminated and info["end"] == "timeout"
    s = session_for(scenario("three_cubes", [BURNED], {"main_bulb"}))
    obs, cost, terminated, truncated, info = s.step(None)
    assert terminated and info["end"] == "surrender" and cost == 0


def test_measurements():
    s = session_for(scenario("three_cubes", [("DepletedBattery", "fault-depleted-battery", "battery")], {"battery"}))
    obs, *_ = s.step(Action("measure_voltage", ("psu_cable_pos",)))
    assert obs["data"]["psu_cable_pos"]["port_voltages"]["n"] == pytest.approx(0.0, abs=1e-3)
    s = session_for(scenario("three_cubes", [DETACHED], {"ctrl_cable_out_pos"}))
    obs, *_ = s.step(Action("measure_voltage", ("ctrl_cable_out_pos",)))
    assert obs["data"]["ctrl_cable_out_pos"]["port_voltages"]["p"] is None
    obs, *_ = s.step(Action("inspect_connections", ("ctrl_switch",)))
    assert "ctrl_cable_out_pos" not in obs["data"]["ctrl_switch"]["n"]
    obs, *_ = s.step(Action("test_path_continuity", ("ctrl_switch", "load_cable_pos")))
    assert obs["data"]["path"]["verdict"] == "open"
    obs, *_ = s.step(Action("test_switch", ("ctrl_switch",)))
    assert obs["data"]["ctrl_switch"]["passed"] is True
    stuck = session_for(scenario("three_cubes", [("StuckOpen", "fault-stuck-open", "ctrl_switch")], {"ctrl_switch"}))
    obs, *_ = stuck.step(Action("test_switch", ("ctrl_switch",)))
    assert obs["data"]["ctrl_switch"]["passed"] is False
    diode = session_for(scenario("three_cubes", [("OpenComponent", "fault-override-resistance", "load_diode",
                                                  {"value": 1e9})], {"load_diode"}))
    obs, *_ = diode.step(Action("test_diode", ("load_diode",)))
    assert obs["data"]["load_diode"]["verdict"] == "open"
    obs, *_ = diode.step(Action("test_continuity", ("main_bulb",)))
    assert obs["data"]["main_bulb"]["verdict"] == "nominal"


def test_reversed_battery_repair_is_self_inverse():
    s = session_for(scenario("three_cubes", [("ReversedBattery", "effect-reverse-battery", "battery")], {"battery"}))
    assert "ctrl_red_led" in s.simulate().lit
    obs, _, terminated, _, info = s.step(Action("reverse_battery", ("battery",)))
    assert terminated and info["end"] == "success_no_hypothesis"


def test_crossed_cables_swap_back():
    crossed = ("CrossedCables", "effect-swap-ends", "ctrl_cable_in_pos.p", {"other": "ctrl_cable_in_neg.p"})
    s = session_for(scenario("current_sensor", [crossed], {"ctrl_cable_in_pos", "ctrl_cable_in_neg"}))
    assert "main_bulb" not in s.simulate().lit
    obs, cost, terminated, *_ = s.step(Action("swap_cables", ("ctrl_cable_in_pos", "ctrl_cable_in_neg")))
    assert terminated and cost == 40


def test_make_by_number_and_id():
    assert diagkg.make(1).scenario.id == "3CC.S.1"
    assert diagkg.make("3CC.S.1").scenario.number == 1
    with pytest.raises(Exception, match="did you mean"):
        diagkg.make("3CC.S.01")


def test_control_subchain_test():
    det = ("DetachedEnd", "effect-detach-port", "ctrl6_cable_in_pos.n")
    s = session_for(scenario("ten_cubes", [det], {"ctrl6_cable_in_pos"}))
    lamp = {}
    for first, last in [(1, 5), (5, 8), (6, 6), (7, 8)]:
        obs, cost, *_ = s.step(Action("test_control_subchain", (f"cube_ctrl{first}", f"cube_ctrl{last}")))
        assert cost == 80
        lamp[(first, last)] = obs["data"]["subchain"]["lamp_lit"]
    assert lamp == {(1, 5): True, (5, 8): False, (6, 6): False, (7, 8): True}
    assert s.state().rewired == (), "the test leaves the wiring as it was"


def test_move_led_into_an_empty_slot_and_as_a_swap():
    det = ("DetachedEnd", "effect-detach-port", "ctrl6_cable_in_pos.n")
    removed = [f"ctrl{k}_green_{x}" for k in range(1, 9) for x in ("led", "resistor")]
    s = session_for(scenario("ten_cubes", [det], {"ctrl6_cable_in_pos"}, removed=removed))
    obs, cost, *_ = s.step(Action("move_led", ("psu_green_led", "cube_ctrl5")))
    assert obs["data"]["lit"] is True and cost == 30
    obs, *_ = s.step(Action("move_led", ("psu_green_led", "cube_ctrl7")))
    assert obs["data"]["lit"] is False
    s = session_for(scenario("ten_cubes", [det], {"ctrl6_cable_in_pos"}))
    obs, *_ = s.step(Action("move_led", ("ctrl5_green_led", "cube_ctrl6")))
    assert obs["data"]["lit"] is False and "ctrl6_green_led took its place and is lit" in obs["message"]


def test_making_a_session_never_writes_the_store(tmp_path):
    # a store without current inferences for its system (an older store): the session works
    # them out for its working memory; the store is written only by the explicit step
    from diagkg.kg import graphs
    from diagkg.kg.loading import ensure_inferences
    from diagkg.runs.runner import run_session

    from ..support.torch import torch_memory_store

    store = torch_memory_store(tmp_path)
    with_inferences = run_session("TORCH.1", "neuro-symbolic", store=store, record=False)
    inferred = set(store.raw.quads_for_pattern(None, None, None, graphs.inferred("torch")))
    assert inferred
    store.remove_graphs([graphs.inferred("torch")])
    before = set(store.raw.quads_for_pattern(None, None, None, None))
    told: list[str] = []
    with diagkg.make("TORCH.1", store, notify=told.append) as session:
        session.reset(seed=0)
        assert set(session.store.raw.quads_for_pattern(None, None, None, graphs.inferred("torch"))) == inferred
    assert set(store.raw.quads_for_pattern(None, None, None, None)) == before          # nothing written
    assert any("no current inferences" in t for t in told)
    without = run_session("TORCH.1", "neuro-symbolic", store=store, record=False)
    assert (without.end, without.cost, without.rounds) == (with_inferences.end, with_inferences.cost,
                                                           with_inferences.rounds)
    ensure_inferences(store, "torch")                                                   # the explicit write
    assert set(store.raw.quads_for_pattern(None, None, None, graphs.inferred("torch"))) == inferred


def test_bypass_guard_on_a_switch_that_never_controlled_the_main_lamp(tmp_path):
    """On a system written here (the torch of tests/support/torch.py with its switch moved to the LED's
    branch), opening the only closed hand switch leaves the bulb lit in the working system too: that is
    no bypass, and naming the burnt bulb is correct. Before, the guard took every first closed switch
    for the main lamp's: on random systems nobody drew, generated scenarios failed `diagkg check`."""
    from diagkg.kg.loading import load_files
    from diagkg.kg.store import KnowledgeStore

    from ..support.torch import ONE_FAULT, TORCH

    system = TORCH.replace(":bat.pos dk:connectedTo :sw.p, :r_led.p .", ":bat.pos dk:connectedTo :sw.p, :lead.p .") \
                  .replace(":sw.n dk:connectedTo :lead.p .", ":sw.n dk:connectedTo :r_led.p .")
    assert system != TORCH
    (tmp_path / "torch.ttl").write_text(system)
    (tmp_path / "burnt.ttl").write_text(ONE_FAULT.format(
        id="TORCH.SW", number=9170, label="Burnt bulb", category="Simple", fault="dk:faultMode dk:OpenComponent ; "
        "dk:faultTarget sys:bulb", symptoms="The bulb stays dark; the green LED is lit.", faulty="sys:bulb",
        repair="ReplaceComponent", part="bulb"))
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "torch.ttl", tmp_path / "burnt.ttl"])
    s = diagkg.make("TORCH.SW", store)
    s.reset(seed=0)
    obs, *_, info = s.step(Hypothesis({"bulb"}))
    assert obs["verdict"] == "correct" and info["end"] == "success", obs["message"]
    # the guard still holds where the switch does control the lamp in the working system (the test above)
