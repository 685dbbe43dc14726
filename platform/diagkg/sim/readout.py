"""Reading one solve: each component's port voltages, port currents, power and light, and the
damage its rules call for, from the solved operating point alone (its elements' currents as the
engine gives them, ``diagkg.sim.spice``). A :class:`Reader` per component says where to look; it
is built once per component signature (with the component's part of a plan), so that a solve only
looks values up."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..errors import ExpressionError
from .results import ComponentResult

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.expressions import Expression
    from .circuit import DamageRule
    from .spice import OperatingPoint


@dataclass(frozen=True)
class Reader:
    """How to read one component's results off a solved operating point: built once per
    component signature (with its part), so that a solve only looks values up."""

    cid: str
    type: str
    elements: tuple[tuple[str, str, str, str], ...]   # (element, node_a, node_b, dk:elementName)
    positive: str                                     # the SPICE node of its positive-side port
    ports: tuple[tuple[str, str | None, str], ...]    # (port, its net's node or None when floating, SPICE node)
    emit: Expression | None                           # its type's emission rule
    rules: tuple[DamageRule, ...]                     # damage rules that apply: it has every parameter they read
    env: dict[str, Any] | None                        # its parameters (and 0 for named elements), for its rules
    named: frozenset[str]                             # the dk:elementName of elements whose values rules read
    simple: bool                                      # one element, from one of its two ports to the other
    # the ports its rules' `voltage` is read across: its positive-side port minus the first other one,
    # as `current` enters at the positive side (it was the alphabetically first port minus the last:
    # v(n) - v(p) for a part with ports p and n)
    across: tuple[str, str] = ("", "")
    # its elements that bypass it (dk:bypassesComponent: a fault's short across it): in its port currents and
    # power, not in the current and power its rules read nor in its own current (what a relay's coil is driven by)
    bypass: frozenset[str] = frozenset()
    # the contacts its ends sit on their nodes through (a cable's: 0.1 mOhm each), as (element, node_a, node_b):
    # their heat is in its power, which its port voltages and current show, not in what its rules read
    contacts: tuple[tuple[str, str, str], ...] = ()


def read(readers: list[Reader], op: OperatingPoint) -> tuple[dict[str, ComponentResult], dict[tuple[str, str], float]]:
    """Each component's results at ``op``, and the damage (component, damage state) its damage
    rules call for, each with how far past its limit the component is (:func:`overload`)."""
    v = op.grounded if op.grounded is not None else {**op.voltages, "0": 0.0}
    currents = op.currents
    out: dict[str, ComponentResult] = {}
    hits: dict[tuple[str, str], float] = {}
    for r in readers:
        # <name>Power, <name>Current of the elements whose values its rules read
        named: dict[str, float] | None = {} if r.named else None
        port_v: dict[str, float | None] = {}
        port_i: dict[str, float | None] = {}
        if r.simple:
            # one element between its two ports (most parts): read it straight
            name, a, b, label = r.elements[0]
            i = currents[name]
            p = (v[a] - v[b]) * i
            power = p if p >= 0.0 else -p
            current_in = i if r.positive == a else -i
            own_in, own_power = (0.0, 0.0) if name in r.bypass else (current_in, power)
            if label and named is not None:
                named[label + "Power"], named[label + "Current"] = p, i
            for port, net, own in r.ports:
                if net is None:
                    port_v[port] = port_i[port] = None
                else:
                    port_v[port] = v[net]
                    x = i if own == a else -i
                    port_i[port] = x if x >= 1e-9 or x <= -1e-9 else 0.0
        else:
            leaving: dict[str, float] = {}      # SPICE node -> current from it into the component's elements
            through: dict[str, float] = {}      # the same, leaving out the elements that bypass it
            power = own_power = 0.0
            for name, a, b, label in r.elements:
                i = currents[name]
                p = (v[a] - v[b]) * i
                power += p
                leaving[a] = leaving.get(a, 0.0) + i
                leaving[b] = leaving.get(b, 0.0) - i
                if name not in r.bypass:
                    own_power += p
                    through[a], through[b] = through.get(a, 0.0) + i, through.get(b, 0.0) - i
                if label and named is not None:
                    named[label + "Power"], named[label + "Current"] = p, i
            power, own_power = abs(power), abs(own_power)
            current_in = leaving.get(r.positive, 0.0)
            own_in = through.get(r.positive, 0.0)
            for port, net, own in r.ports:
                if net is None:
                    port_v[port] = port_i[port] = None
                else:
                    port_v[port] = v[net]
                    port_i[port] = _clean(leaving.get(own, 0.0))
        for name, a, b in r.contacts:                 # a cable carrying 125 A: 3.1 W in its two ends
            power += abs((v[a] - v[b]) * currents[name])
        lit = None
        if r.env is not None:
            env = r.env.copy()
            env["power"], env["current"] = own_power, own_in
            positive, other = r.across
            env["voltage"] = (port_v[positive] or 0.0) - (port_v[other] or 0.0)
            if named:
                env.update(named)
            if r.emit is not None:
                lit = bool(r.emit(env))
            for rule in r.rules:
                if rule.condition(env):
                    key = (r.cid, rule.state)
                    hits[key] = max(hits.get(key, 0.0), overload(rule, env))
        out[r.cid] = ComponentResult(r.type, port_v, _clean(current_in), _clean(power), lit, port_i,
                                     _clean(own_in) if r.bypass else None)
    return out, hits


def overload(rule: DamageRule, env: dict[str, Any]) -> float:
    """How far past its limit a component that a damage rule damages is (its reading over the limit, for a rule
    written as one: :func:`~diagkg.kg.expressions.overload`); infinite for a rule of another form."""
    if rule.overload is None:
        return math.inf
    try:
        value = float(rule.overload(env))
    except ExpressionError:           # a limit of 0
        return math.inf
    return value if value == value else math.inf


def first_to_fail(hits: dict[tuple[str, str], float], type_of: Callable[[str], str],
                  first: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The damage a solve calls for that happens first (``hits``: each with its :func:`overload`): a damage
    state that fails first (``first``, ``dk:failsFirst``: a fuse blowing) before any other, so that a fuse a
    short blows protects the diode and lamps behind it; of the components of one type (``type_of``) that would
    take the same damage, those furthest past their limit, the circuit then solved again (of two fuses in
    series, the one at the higher multiple of its rating blows; the other, its current gone, holds). Damage of
    other types, or by a rule not written as a limit, at once."""
    if any(state in first for _, state in hits):
        hits = {key: over for key, over in hits.items() if key[1] in first}
    groups: dict[tuple[str, str], list[tuple[tuple[str, str], float]]] = {}
    for (cid, state), over in hits.items():
        groups.setdefault((type_of(cid), state), []).append(((cid, state), over))
    out: list[tuple[str, str]] = []
    for group in groups.values():
        worst = max(over for _, over in group)
        out += [key for key, over in group if worst == math.inf or over >= worst * (1 - 1e-9)]
    return sorted(out)


def _clean(x: float) -> float:
    """Drop the numerical noise of the solver (below a nanoampere/nanowatt)."""
    return 0.0 if -1e-9 < x < 1e-9 else x


__all__ = ["Reader", "first_to_fail", "overload", "read"]
