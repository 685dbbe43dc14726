"""Parts are not named before the shorts between two nodes that give the same lights are weighed, where a part
shorted stands or stood at the start (``shorts_before_naming``), on two systems written here.

The first: two bulbs in series on one battery, and a resistor network on another (the first loops of
``unwritten_11_4``, benchmarks/unwritten_systems.py, generator seed 11).
A short from the node between the bulbs to the battery's other side puts bulb 2 out and leaves bulb 1 lit, as
bulb 2 shorted does. The shorts between nodes were candidates only once no single fault of a part explained
what was seen, so bulb 2 shorted, the lone single fault, was named at once (120 min, wrong), and each such
session cost 260 min where the oracle's costs 120. Weighed, with each short counted as named only by the part
of its first end, naming looked dear and a test came first (140 min); counting that naming bulb 1 ends every
short at its far end (``naming_ends``), naming bulb 2, the likeliest, then bulb 1 is the cheaper plan by the
assistant's own reckoning (240 min on these scenarios, bulb 2 shorted itself 140 -> 120).

The second (``unwritten_13_13``, generator seed 13): a short from the second battery's positive pole puts out
bulbs that an open bulb or resistor would put out too; a part shorted stood at the start, a test set it aside,
and the open resistor left alone was named (wrong), then a loose end, before the shorts came: 410–440 min.

The third (``unwritten_0_15``, generator seed 0): diodes and ultraviolet LEDs beside bulbs on three batteries. A short
that lights a bulb kept dark reads as a diode shorted or turned round, or a battery turned round; turning the
battery round first (a step that changes the circuit, after which the shorts are dear to screen) led to a diode
named in vain and 320–360 min, two sessions out of rounds. Where parts shorted hold a tenth of the belief at the
start (``shorted_share``), the shorts are candidates from the start.

The fourth (``unwritten_5_11``, generator seed 5): a normally open switch before a bulb. A short that lights the bulb
reads as the switch stuck closed, which lets current through where it should block it as a short across it does;
the catalogue now says so (``dk:StuckClosed`` ``dk:raisesCurrent``), and the lone switch is no longer named before
the shorts are weighed (260 min before, 140-170 now)."""

from __future__ import annotations

import pytest

from diagkg.env.scenarios import ScenarioCatalog
from diagkg.runs.runner import run_session

from ..support.circuits import Leaf, Loop, Parallel, Series, reachable, with_generated

KEY = "stranger_bypass"
KEY_LIGHTS = "stranger_lights"
KEY_REVERSED = "stranger_reversed"
KEY_STUCK = "stranger_stuck"
SOLVED = ("success", "success_no_hypothesis")


def _system() -> str:
    def bulb(ohms: float, threshold: float) -> Leaf:
        return Leaf("Bulb", (("resistance", ohms), ("powerThreshold", threshold)), module=2)

    def resistor(ohms: float, module: int) -> Leaf:
        return Leaf("Resistor", (("resistance", ohms),), module=module)

    switch = Leaf("Switch", (("normallyClosed", True),), module=1)
    return reachable((Loop(20, 1, Series((bulb(60, 0.5), bulb(60, 1.0)))),
                      Loop(5, 2, Series((Parallel((resistor(1000, 1), Parallel((switch, resistor(4.7, 2))),
                                                   resistor(330, 1))), resistor(47, 1))))), KEY)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return with_generated(tmp_path_factory.mktemp("stranger_bypass"), KEY, _system(),
                          frozenset({"ShortBetweenNodes", "ShortedComponent"}))


def _scenarios(store, mode: str) -> list[int]:
    catalog = ScenarioCatalog(store)
    return [n for n in catalog.numbers() if (s := catalog.resolve(n)).key == KEY and s.faults[0].mode == mode]


def _session(store, n: int, seed: int, **config) -> tuple[float, str, list[tuple[str, str | None]]]:
    rounds: list[tuple[str, str | None]] = []
    result = run_session(n, "model-based", store=store, seed=seed, record=False, keep_ledger=False,
                         config=config or None,
                         on_round=lambda r: rounds.append((r.to_dict()["kind"], r.to_dict().get("verdict"))))
    return result.cost, str(result.end), rounds


def _to_the_other_loop(store, n: int) -> bool:
    """Whether scenario ``n``'s short joins the node between the bulbs to the resistors' loop (not across bulb 2's
    own two nodes, which no reading tells from bulb 2 shorted: only a repair does)."""
    fault = ScenarioCatalog(store).resolve(n).faults[0]
    ends = {iri.rsplit("/", 1)[-1].split(".")[0] for iri in (fault.target, fault.other or "")}
    return any(end.startswith(("bat3", "r", "sw")) for end in ends)


@pytest.mark.parametrize("ends", [False, True])
def test_a_short_that_puts_a_bulb_out_as_its_own_short_would_is_weighed_before_a_naming(store, ends: bool):
    shorts = _scenarios(store, "ShortBetweenNodes")
    farther = [n for n in shorts if _to_the_other_loop(store, n)]
    assert len(shorts) >= 3 and len(farther) >= 2
    for n in shorts:
        # two seeds (three before): no draw changes these sessions (seeds 0, 1 and 2 gave the same rounds, each
        # scenario and setting, when cut down), and two still show that none does
        for seed in (0, 1):
            before = _session(store, n, seed, shorts_before_naming=False, naming_ends=ends)
            cost, end, rounds = _session(store, n, seed, naming_ends=ends)
            # across bulb 2's own nodes no reading tells the short from bulb 2 shorted: one test more at most
            assert end in SOLVED and cost <= before[0] + (0 if n in farther else 20), (n, seed, before, cost, end)
            if n in farther:
                # before: bulb 2 shorted, the lone single fault, named at once (wrong)
                assert before[2][0] == ("hypothesis", "wrong"), (n, seed, before)
                if not ends:
                    # each short named under its own part, naming them looked dear: a test first, no naming in vain
                    assert rounds[0][0] == "action" and cost <= before[0] - 60, (n, seed, before, cost, rounds)
                else:
                    # every short weighed, and naming bulb 1 ends each one at its far end (naming_ends): bulb 2, the
                    # likeliest, then bulb 1 costs less by the assistant's own reckoning than a test first (about
                    # 188 against 194 min): two namings, the second correct, nothing else
                    assert rounds == [("hypothesis", "wrong"), ("hypothesis", "correct")], (n, seed, rounds)


def test_a_part_shorted_costs_at_most_one_test_more(store):
    for n in _scenarios(store, "ShortedComponent"):
        for seed in (0, 1):         # two seeds, as above: seeds 0, 1 and 2 gave the same sessions
            cost, end, _ = _session(store, n, seed)
            oracle = run_session(n, "oracle", store=store, seed=seed, record=False, keep_ledger=False)
            assert end in SOLVED and cost <= oracle.cost + 20, (n, seed, cost, end)


def _saved(tmp_path_factory, key: str, turtle: str, before: dict, seeds: tuple[int, ...]) -> list[tuple[int, int]]:
    """The generated shorts between nodes of ``turtle`` (at least 15), each session on ``seeds`` run with the
    configuration ``before`` and as shipped: every one solved as shipped and no dearer than before; the sessions
    at least 100 min cheaper."""
    store = with_generated(tmp_path_factory.mktemp(key), key, turtle, frozenset({"ShortBetweenNodes"}))
    catalog = ScenarioCatalog(store)
    shorts = [n for n in catalog.numbers() if catalog.resolve(n).key == key]
    assert len(shorts) >= 15
    saved = []
    for n in shorts:
        for seed in seeds:
            old = run_session(n, "model-based", store=store, seed=seed, record=False, keep_ledger=False, config=before)
            now = run_session(n, "model-based", store=store, seed=seed, record=False, keep_ledger=False)
            assert str(now.end) in SOLVED and now.cost <= old.cost, (n, seed, old.cost, old.end, now.cost, now.end)
            if old.cost - now.cost >= 100:
                saved.append((n, seed))
    return saved


def _lights_system() -> str:
    def bulb(ohms: float, threshold: float, module: int) -> Leaf:
        return Leaf("Bulb", (("resistance", ohms), ("powerThreshold", threshold)), module=module)

    fuses = Series((Leaf("Switch", (("normallyClosed", False),), module=1), Leaf("Fuse", (("ratedCurrent", 10),), module=2),
                    Leaf("Fuse", (("ratedCurrent", 5),), module=2)))
    branches = Parallel((bulb(60, 1.0, 1), Series((bulb(100, 1.0, 2), Leaf("Resistor", (("resistance", 33),), module=0))),
                         fuses))
    return reachable((Loop(18, 0, Series((branches, bulb(10, 0.05, 1)))),
                      Loop(6, 1, Series((bulb(60, 0.05, 1), bulb(60, 0.05, 1), bulb(22, 0.1, 2))))), KEY_LIGHTS)


def test_a_part_shorted_at_the_start_keeps_the_shorts_in_mind_after_a_test_sets_it_aside(tmp_path_factory):
    saved = _saved(tmp_path_factory, KEY_LIGHTS, _lights_system(), {"shorts_before_naming": False}, (0,))
    # the shorts from the second battery's positive pole, and one from the first's (410-440 and 270 min before)
    assert len(saved) >= 8, saved


def _reversed_system() -> str:
    def bulb(ohms: float, threshold: float, module: int) -> Leaf:
        return Leaf("Bulb", (("resistance", ohms), ("powerThreshold", threshold)), module=module)

    def diode(volts: float, backwards: bool, module: int) -> Leaf:
        return Leaf("Diode", (("forwardVoltage", volts),), reversed=backwards, module=module)

    def violet(volts: float, backwards: bool, *more: tuple[str, object]) -> Leaf:
        return Leaf("LED", (("forwardVoltage", volts), ("color", "ultraviolet"), *more), reversed=backwards, module=1)

    chain = Series((diode(0.37, False, 0), violet(1.88, True, ("forwardCurrent", 0.01), ("powerThreshold", 0.005)),
                    diode(0.41, True, 1)))
    feed = Series((Leaf("Resistor", (("resistance", 1),), module=1), diode(0.97, True, 2), bulb(22, 0.5, 2)))
    return reachable((Loop(23, 2, Series((Parallel((chain, violet(1.6, False, ("powerThreshold", 0.02)))), bulb(220, 0.1, 1)))),
                      Loop(22, 2, Series((Parallel((bulb(47, 0.05, 1), feed)), bulb(10, 0.05, 0)))),
                      Loop(12, 2, Series((diode(0.59, True, 2), bulb(100, 0.05, 1))))), KEY_REVERSED)


def test_where_parts_shorted_read_the_lights_the_shorts_are_candidates_from_the_start(tmp_path_factory):
    # a share no reading reaches unless parts shorted are all the candidates: the start as before
    saved = _saved(tmp_path_factory, KEY_REVERSED, _reversed_system(), {"shorted_share": 1.0}, (0,))
    assert len(saved) >= 12, saved        # 320-360 min before (two out of rounds), 140-260 now


def _stuck_system() -> str:
    def bulb(ohms: float, threshold: float, module: int) -> Leaf:
        return Leaf("Bulb", (("resistance", ohms), ("powerThreshold", threshold)), module=module)

    def diode(volts: float, module: int) -> Leaf:
        return Leaf("Diode", (("forwardVoltage", volts),), reversed=True, module=module)

    def cable(ohms: float | None = None, detachable: bool = False) -> Leaf:
        return Leaf("Cable", (("resistance", ohms),) if ohms else (), detachable=detachable, module=2)

    def switch(closed: bool, module: int) -> Leaf:
        return Leaf("Switch", (("normallyClosed", closed),), module=module)

    resistor = Leaf("Resistor", (("resistance", 10000),), module=2)
    bypass = Parallel((cable(0.05), switch(True, 0)))
    white = Leaf("LED", (("forwardVoltage", 2.91), ("color", "white"), ("powerThreshold", 0.005)), reversed=True, module=2)
    feed = Series((Leaf("Fuse", (("ratedCurrent", 10),), module=0), bulb(22, 0.5, 1), cable(detachable=True)))
    branches = Parallel((Series((switch(False, 2), bulb(60, 0.1, 0))), Series((white, cable(0.5), diode(0.36, 0)))))
    return reachable((Loop(12, 2, Series((bulb(22, 0.1, 0), Parallel((diode(0.68, 1), cable(0.5), bulb(220, 0.5, 2)))))),
                      Loop(13, 2, Series((feed, branches, bulb(100, 0.1, 0)))),
                      Loop(14, 0, Series((Parallel((Series((bulb(100, 1.0, 2), resistor)), bypass)), bulb(22, 0.5, 2))))),
                     KEY_STUCK)


def test_a_switch_stuck_closed_is_not_named_before_the_shorts_that_light_its_bulb(tmp_path_factory):
    store = with_generated(tmp_path_factory.mktemp("stranger_stuck"), KEY_STUCK, _stuck_system(), frozenset({"ShortBetweenNodes"}))
    catalog = ScenarioCatalog(store)
    shorts = [n for n in catalog.numbers() if catalog.resolve(n).key == KEY_STUCK]
    # the shorts that light the bulb behind the open switch (its feed, bulb 10's p end), as the switch stuck closed
    # does; those across the switch's own branch (to bulb 7, cable 8) are told from it by no reading
    ends = {n: {t.rsplit("/", 1)[-1] for f in catalog.resolve(n).faults for t in (f.target, f.other) if t} for n in shorts}
    behind = [n for n in shorts if "bulb10.p" in ends[n] and not any(e.startswith(("bulb7.", "cable8.")) for e in ends[n])]
    assert len(shorts) >= 20 and len(behind) >= 5
    for n in shorts:
        result = run_session(n, "model-based", store=store, seed=0, record=False, keep_ledger=False)
        assert str(result.end) in SOLVED, (n, result.end)
        if n in behind:
            assert result.cost <= 180, (n, result.cost)      # 260 before: the switch named first, in vain
