"""A short that blows a fuse where a short that damages nothing also shows the lights seen (issue 30). On a
system written here (not shipped), a 19 V battery feeds two bulbs and a 10 A fuse in series, and a 14 V battery
an LED through a resistor. A short from the 14 V battery's positive terminal to the fuse's bulb end pushes
current through the fuse (it blows) and leaves the second bulb lit, the first dark. Some shorts that damage
nothing show those lights too, but none gives the currents read (no current through the blown fuse). The
neuro-symbolic assistant kept only those that damage nothing, then dropped them on the readings, and was left
with no suspect (``unwritten_1_15`` S.448, S.453, S.462 on the random systems ran out of rounds). Now the
shorts that damage something are the suspects when none that damages nothing gives the readings."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.runs.runner import run_session

from ..support.circuits import Loop, Series, part, reachable, scenarios_between, with_generated

KEY = "two_batteries"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    loops = (Loop(19, 0, Series((part("Bulb", 0, resistance=10, powerThreshold=0.5),
                                 part("Bulb", 1, resistance=22, powerThreshold=0.5), part("Fuse", 0, ratedCurrent=10)))),
             Loop(14, 1, Series((part("Resistor", 1, resistance=330),
                                 part("LED", 1, forwardVoltage=1.91, color="white", powerThreshold=0.005)))))
    return with_generated(tmp_path_factory.mktemp(KEY), KEY, reachable(loops, KEY), frozenset({"ShortBetweenNodes"}))


def test_a_short_that_blew_the_fuse_is_a_suspect_when_the_readings_rule_out_the_others(store):
    (number,) = scenarios_between(store, {"bat4.pos", "bulb2.n"})
    assistant = NeuroSymbolic()
    named: list[tuple[str, ...]] = []
    run_session(number, assistant, store=store, seed=0, record=False, keep_ledger=False,
                on_round=lambda r: named.append(tuple(r.to_dict().get("suspects") or ())))
    screen = assistant._screen()
    node = {port: n for n, ports in screen.nodes.items() for port in ports}
    truth = tuple(sorted((node["bat4", "pos"], node["bulb2", "n"])))
    assert assistant.readings and truth in (assistant.short_pairs or [])     # the fuse it blew: still a suspect
    assert "fuse3" in screen.damaged[truth]
    ends = {cid for n in truth for cid, _ in screen.nodes[n]}
    assert [s for s in named if s] and set(next(s for s in named if s)) <= ends   # its first naming: an end of it


def test_once_an_end_of_the_short_is_repaired_what_it_blew_is_named(store):
    """Its first suspect, an end of the short, is judged partial (the short cleared, the fuse it blew still
    blown): no more short suspects, the fuse is named next (``short_damage``). Before, the assistant went on
    naming the short's other possible ends."""
    (number,) = scenarios_between(store, {"bat4.pos", "bulb2.n"})

    def session(**config: bool) -> tuple[str, float, list[tuple[str, ...]]]:
        named: list[tuple[str, ...]] = []
        result = run_session(number, NeuroSymbolic(**config), store=store, seed=0, record=False, keep_ledger=False,
                             on_round=lambda r: named.append(tuple(r.to_dict().get("suspects") or ())))
        return str(result.end), result.cost, [s for s in named if s]

    end, cost, named = session()
    assert end == "success" and named[-1] == ("fuse3",) and len(named) == 2, named
    end_before, cost_before, named_before = session(short_damage=False)
    assert end_before != "success" or cost_before > cost, named_before
