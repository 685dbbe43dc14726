"""What a voltmeter reads at a terminal (physics version 3).

A digital multimeter reads through its input resistance to 0 V (``METER_OHMS``, 10 MΩ). On a node something holds
(a path of parts to 0 V, through sources, conducting diodes and resistances below :data:`OPEN_OHMS`) that changes nothing a
reading shows. A node cut off on every side by opens (a blown fuse, an open part, an end off: the simulator's 1 GΩ stand for
"open") sits, in the operating point alone, at the ratio of the opens' resistances — half the supply between two of
them — where the meter pulls it to about 1 % of the supply. Such a node is solved again with the meter on it
(``CircuitState.meter``), and that reading is the one shown when it differs from the node's by more than
:data:`SHIFT` (1 %, at least 10 mV).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import TYPE_CHECKING

from .circuit import CircuitState, PortRef

if TYPE_CHECKING:  # pragma: no cover
    from .results import SimulationResult
    from .simulator import Simulator, _Plan

OPEN_OHMS = 1e8        # a resistance this large holds nothing (the simulator's opens are 1 GΩ)
# a diode carrying this much holds its node (its own resistance there, tens of kΩ, is far below the meter's)
DIODE_HOLDS = 1e-6     # A
SHIFT = 0.01           # a metered reading is shown when it differs from the node's by more (1 %, at least 10 mV)
_HELD: OrderedDict[tuple[int, frozenset[tuple[str, bool]], frozenset[str]], tuple[_Plan, frozenset[str]]] = OrderedDict()


def _held_nodes(plan: _Plan, result: SimulationResult) -> frozenset[str]:
    """The nodes of ``plan`` joined to 0 V through sources, resistances below :data:`OPEN_OHMS` and diodes that
    conduct (at least :data:`DIODE_HOLDS`; contacts as the solve ``result`` left them). A diode that carries next to
    nothing holds nothing: an LED fed only through an open contact's leakage sits, in the operating point, where
    its own leakage matches that (2 V on a white LED), and the meter's 10 MΩ pull it to near 0 V. Remembered by
    plan, live state and the diodes conducting."""
    live = result.live
    conducting = frozenset(ep.component for ep in plan.elements if ep.element.kind == "D" and ep.component in
                           result.components and abs(result.components[ep.component].current) >= DIODE_HOLDS)
    key = (id(plan), frozenset(live.items()), conducting)
    known = _HELD.get(key)
    if known is not None and known[0] is plan:
        return known[1]
    joined: dict[str, list[str]] = {}
    for ep in plan.elements:
        e = ep.element
        if (e.kind == "R" and ep.value(live) >= OPEN_OHMS) or (e.kind == "D" and ep.component not in conducting):
            continue
        joined.setdefault(e.node_a, []).append(e.node_b)
        joined.setdefault(e.node_b, []).append(e.node_a)
    held, todo = {"0"}, ["0"]
    while todo:
        for other in joined.get(todo.pop(), ()):
            if other not in held:
                held.add(other)
                todo.append(other)
    _HELD[key] = (plan, frozenset(held))
    if len(_HELD) > 4096:
        _HELD.popitem(last=False)
    return frozenset(held)


def reading(sim: Simulator, state: CircuitState, port: PortRef, volts_open: float, result: SimulationResult,
            rng: random.Random) -> float:
    """What the meter shows at ``port`` of ``state`` (realised: no loose end left), whose node the solve ``result``
    puts at ``volts_open``."""
    plan = sim._plan(state)
    node = plan.port_node.get(port)
    if node is None or node in _held_nodes(plan, result):
        return volts_open
    loaded = sim.simulate(state.evolve(meter=port), rng).components.get(port[0])
    shown = loaded.port_v.get(port[1]) if loaded is not None else None
    if shown is None or abs(shown - volts_open) <= max(SHIFT * abs(volts_open), SHIFT):
        return volts_open
    return shown


def unheld(sim: Simulator, state: CircuitState, result: SimulationResult) -> frozenset[PortRef]:
    """The ports of ``state``'s circuit (as the solve ``result`` left its contacts) on a node nothing joins to 0 V:
    their potentials are the operating point's (the opens' ratio, a floating circuit's leakage), where a
    voltmeter reads them otherwise (:func:`reading`)."""
    plan = sim._plan(state)
    held = _held_nodes(plan, result)
    return frozenset(port for port, node in plan.port_node.items() if node not in held)


__all__ = ["DIODE_HOLDS", "OPEN_OHMS", "SHIFT", "reading", "unheld"]
