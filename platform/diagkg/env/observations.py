"""Observations: what a person sees or measures after an action — never the fault itself.

One handler per kind of observation, registered under the value that the
action catalogue gives in ``dk:observes`` (``visual``, ``connections``,
``voltages``…); a test checks that every kind in the catalogue has one.
A handler fills the round's :class:`~diagkg.env.outcomes.Outcome` with typed
data (the fields assistants and the trajectory writer read) and a message
for people.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Callable

from ..sim import meter
from ..sim.circuit import NOMINAL, CircuitState, PortRef
from ..sim.couplings import next_live
from ..sim.simulator import SimulationResult
from . import access, effects
from .actions import Action, ActionType
from .outcomes import (
    Continuity,
    Current,
    DiodeTest,
    Light,
    Outcome,
    PathTest,
    Refusal,
    Sighting,
    Subchain,
    SwitchTest,
    Terminal,
    TerminalState,
    Voltages,
)

if TYPE_CHECKING:  # pragma: no cover
    from .roles import Workbench

Observer = Callable[["Workbench", Action, SimulationResult, Outcome], None]


def fixed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals, a value rounded to zero shown as zero (``0.0000``, not ``-0.0000``: a floating
    circuit's terminal, a split supply's 0 V lead)."""
    shown = f"{x:.{digits}f}"
    return shown[1:] if shown.startswith("-") and not shown.strip("-0.") else shown


def volts(v: float) -> float:
    """A voltage as the meter shows it (to 0.1 mV): a value rounded to zero is zero, never ``-0.0`` (a flat battery's
    leakage of -1e-9 V read as ``-0.0`` where a blown fuse's open end read ``0.0``: the sign of a rounding, which no
    meter shows, told the two apart in the typed data and the optimal policy's reports)."""
    return round(v, 4) + 0.0


def amps(a: float) -> float:
    """A current as the meter shows it (its size, to 1 µA)."""
    return round(abs(a), 6)


def number(value: object) -> float:
    """A parameter value (from the graph: a number, or a numeric string) as a float."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def observe_nothing(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    """Actions whose effect is the point (open a panel, replace a part): nothing to report."""


def observe_moved_led(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    led = action.targets[0]
    lit = led in result.lit
    module = effects.module_of(session, action.targets[1])
    out.data["lit"] = lit
    text = f"{led} now sits in the LED slot of {module} and is {'lit' if lit else 'dark'}."
    displaced = out.data.get("slot", {}).get("displaced")
    if displaced:
        text += f" {displaced} took its place and is {'lit' if displaced in result.lit else 'dark'}."
    out.message = text


def observe_subchain(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    first, last = (effects.module_of(session, t) for t in action.targets)
    supply = next((c.module for c in session.sk.components.values() if c.type == "VoltageSource"), None)
    load = next((session.sk.components[b].module for b in sorted(session.main_bulbs)), None)
    if first is None or last is None or supply is None or load is None or len({first, last} & {supply, load}):
        out.success = False
        out.refuse(Refusal.TARGET_KIND, "Name the first and the last control module (or their cubes) of the run to test.")
        return
    psu_out = effects.chain_ends(session, supply, nearest=False)
    load_in = effects.chain_ends(session, load, nearest=True)
    run_in = effects.chain_ends(session, first, nearest=True)
    run_out = effects.chain_ends(session, last, nearest=False)
    if min(len(psu_out), len(load_in), len(run_in), len(run_out)) < 2:
        out.success = False
        out.refuse(Refusal.NO_EFFECT, "These modules have no cables to connect a supply and a load to.")
        return
    state = session.state()
    rewired = [r for r in state.rewired if r[0] not in run_in + load_in]
    rewired += list(zip(run_in, psu_out, strict=False)) + list(zip(load_in, run_out, strict=False))
    trial = state.evolve(rewired=rewired, detached=[d for d in state.detached if d not in run_in + load_in])
    test = session.sim.simulate(trial, session.rng)
    lamp = bool(session.main_bulbs & set(test.lit))
    out.data["subchain"] = Subchain(first, last, lamp)
    out.message = (f"With the supply wired straight to {first} and {last} wired straight to the load, "
                   f"the lamp {'lights' if lamp else 'stays dark'}"
                   + ("" if test.converged else " (and keeps flickering)") + ".")


def observe_visual(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    state = session.state()
    notes = []
    for target in action.targets:
        sighting = describe_part(target, session, result, state)
        out.data[target] = sighting
        notes.append(sighting.text)
    out.message = " ".join(notes)


def observe_connections(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    state = session.state()
    texts = []
    for target in action.targets:
        if target not in session.sk.components:
            continue
        ends = {port: connection_of(session, (target, port), state, result)
                for port in sorted(session.sk.components[target].ports)}
        out.data[target] = ends
        texts.append(f"{target}: " + "; ".join(f"{p}: {t.text()}" for p, t in ends.items()) + ".")
    out.message = " ".join(texts) if texts else "Nothing to inspect."


def _as_fallen(session: Workbench, result: SimulationResult) -> CircuitState:
    """The session's state as ``result`` fell: a loose end off in it is off here too, none left loose."""
    state = session.state()
    if not state.loose:
        return state
    off = frozenset(p for p, _ in state.loose if (c := result.components.get(p[0])) is None or c.port_v.get(p[1]) is None)
    return state.evolve(detached=state.detached | off, loose=())


def observe_voltages(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    target = action.targets[0]
    comp = result.components.get(target)
    if comp is None:      # not in the circuit as simulated (every end off): nothing attached anywhere
        values: dict[str, float | None] = {p: None for p in sorted(session.sk.components[target].ports)}
    else:       # as a voltmeter reads each terminal (diagkg.sim.meter), on the state read once
        fallen = _as_fallen(session, result)
        values = {p: (None if v is None else volts(meter.reading(session.sim, fallen, (target, p), volts(v), result,
                                                                 session.rng)))
                  for p, v in comp.port_v.items()}
    out.data[target] = Voltages(values, settled=None if result.converged else False)
    out.message = f"Voltages at {target} (to 0 V): " + ", ".join(
        f"{p} {'floating (nothing attached)' if v is None else fixed(v, 4) + ' V'}" for p, v in values.items()) + "."
    if not result.converged:
        out.message += " The readings keep changing."


def observe_current(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    target = action.targets[0]
    comp = result.components.get(target)
    current = comp.current if comp is not None else 0.0      # not in the circuit as simulated: no current
    out.data[target] = Current(amps(current), settled=None if result.converged else False)
    out.message = f"Current through {target}: {abs(current):.6f} A."
    if not result.converged:
        out.message += " The reading keeps changing."


def observe_continuity(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    target = action.targets[0]
    state = session.state()
    verdict, ohms = continuity(session, target, state, result)
    out.data[target] = Continuity(verdict, ohms)
    # what the meter shows: a number, or a junction's one-way conduction; a source (or a part whose
    # end is off) shows neither (a battery read "a diode (it conducts one way), not applicable (a source)")
    if ohms is not None:
        out.message = f"Continuity of {target}: {ohms:.4g} Ω, {verdict}."
    elif any(kind == "D" for kind, _ in session.sim.own_elements(state, target)):
        out.message = f"Continuity of {target}: a diode (it conducts one way), {verdict}."
    else:
        out.message = f"Continuity of {target}: {verdict}."


def observe_diode(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    """A diode test reads what the component is declared to be now: a diode
    (forward voltage) or, with a fault, the resistor it has become."""
    target = action.targets[0]   # a diode or an LED (dk:forComponentType)
    state = session.state()
    elements = session.sim.own_elements(state, target)
    params = dict(session.sk.params_of(session.sk.components[target]))
    params.update(state.override_map.get(target, {}))
    ports = tuple(session.sk.components[target].ports)
    rewired = dict(state.rewired)
    one_way = any(kind == "D" for kind, _ in elements) or not elements
    if one_way and len(ports) == 2 and \
            rewired.get((target, ports[0])) == (target, ports[1]) and rewired.get((target, ports[1])) == (target, ports[0]):
        # tested in place, probes on the terminals as marked: it conducts from the one marked for its cathode
        verdict, text = "reversed", "conducts the wrong way between its terminals: mounted the wrong way round"
    elif one_way:
        vf = number(params["forwardVoltage"])
        verdict, text = "nominal", f"forward voltage {vf:.2f} V: nominal"
    else:
        ohms = session.sim.own_resistance(state, target) or 0.0
        if ohms > 1e6:
            verdict, text = "open", "no forward conduction: open"
        elif ohms < 5:
            verdict, text = "shorted", "no forward voltage: shorted"
        else:
            verdict, text = "degraded", f"conducts both ways through {ohms:.3g} Ω: degraded"
    out.data[target] = DiodeTest(verdict)
    out.message = f"Diode test of {target}: {text}."


def observe_path_continuity(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    a, b = action.targets
    pa, pb = effects.port_of(session, a), effects.port_of(session, b)
    if pa[0] == pb[0] and "." not in a and "." not in b:
        names = sorted(session.sk.components[pa[0]].ports)
        pa, pb = (pa[0], names[0]), (pa[0], names[-1])
    ohms = path_resistance(session, pa, pb)
    verdict = "short" if ohms < 1 else ("resistive" if ohms < 1e6 else "open")  # short = continuous path
    out.data["path"] = PathTest(f"{pa[0]}.{pa[1]}", f"{pb[0]}.{pb[1]}", ohms, verdict)
    out.message = (f"Resistance from {pa[0]}.{pa[1]} to {pb[0]}.{pb[1]} (supply off): "
                   f"{'over 1 MΩ' if ohms >= 1e6 else f'{ohms:.4g} Ω'} ({verdict}).")


def observe_switch_test(session: Workbench, action: Action, result: SimulationResult, out: Outcome) -> None:
    target = action.targets[0]
    state = session.state()
    readings = {}
    for closed in (True, False):
        trial = state.evolve(positions=[p for p in state.positions if p[0] != target] + [(target, closed)])
        readings["closed" if closed else "open"] = continuity(session, target, trial, session.sim.simulate(trial, session.rng),
                                                              against_closed=True)[0]
    passed = readings["closed"] in ("nominal", "short") and readings["open"] == "open"
    out.data[target] = SwitchTest(readings["closed"], readings["open"], passed)
    out.message = (f"Switch test of {target}: closed it reads {readings['closed']}, open it reads "
                   f"{readings['open']}: {'PASS' if passed else 'FAIL'}.")


def _lever(session: Workbench, cid: str, state: CircuitState) -> bool:
    params = session.sk.params_of(session.sk.components[cid])
    return dict(state.positions).get(cid, bool(params.get("normallyClosed", True)))


def describe_part(part: str, session: Workbench, result: SimulationResult, state: CircuitState) -> Sighting:
    """What a person sees when looking at a part (never its hidden fault)."""
    sk = session.sk
    if part not in sk.components:
        states = tuple(sorted(st for el, st in state.physical if el == part))
        text = f"{part}: " + (", ".join(s.lower() for s in states) if states else "in its normal position") + "."
        return Sighting(text, states=states)
    comp = sk.components[part]
    bits = []
    covered = lit = flickering = None
    lever: str | None = None
    visible: dict[str, TerminalState] | None = None
    if part in state.covered:
        bits.append("it is covered")
        covered = True
    c = result.components.get(part)
    if c is not None and c.lit is not None and part not in state.covered:
        lit = c.lit
        bits.append("it is lit" if c.lit else "it is dark")
        if not result.converged:
            bits.append("it keeps going on and off")
            flickering = True
    damage = tuple(sorted(state.damage_of(part))) or None
    if damage:
        bits.append("it is " + " and ".join(sk.damage_labels.get(d, d) for d in damage))
    if comp.type == "Switch":
        lever = "closed" if _lever(session, part, state) else "open"
        bits.append(f"its lever is in the {lever} position")
    ends = access.visible_ends(session, part, state)
    off = [p for p in ends if (part, p) in state.detached and (part, p) not in dict(state.rewired)]
    if comp.type == "Cable":
        visible = {p: (TerminalState.OFF if p in off else TerminalState.ATTACHED) for p in ends}
        if off:
            bits.append("end " + " and ".join(off) + " is off its terminal")
        elif ends:
            bits.append("its visible end(s) " + ", ".join(ends) + " are attached")
    text = f"{part} ({comp.type.lower()}): " + ("; ".join(bits) if bits else "nothing unusual to see") + "."
    return Sighting(text, type=comp.type, covered=covered, lit=lit, flickering=flickering, lever=lever,
                    visible_ends=visible, damage=damage)


def connection_of(session: Workbench, port: PortRef, state: CircuitState, result: SimulationResult) -> Terminal:
    """What a close inspection shows at one terminal."""
    sk = session.sk
    rewired = dict(state.rewired)
    loose = dict(state.loose)
    if port in state.detached and port not in rewired:
        return Terminal(port[1], TerminalState.OFF)
    here = sk.net_of_port[rewired.get(port, port)]
    others = sorted(f"{c}.{p}" for c, p in sk.ports_on_net[here]
                    if (c, p) != port and c != port[0] and c not in state.removed
                    and not ((c, p) in state.detached and (c, p) not in rewired)
                    and (c, p) not in rewired)
    others += sorted(f"{c}.{p}" for (c, p), target in rewired.items()
                     if sk.net_of_port[target] == here and (c, p) != port)
    return Terminal(port[1], TerminalState.LOOSE if port in loose else TerminalState.ATTACHED, tuple(others))


SHORT_OHMS = 1.0       # a continuity reading this low that is not the part's own reads as a short


def continuity(session: Workbench, cid: str, state: CircuitState, result: SimulationResult,
               against_closed: bool = False) -> tuple[str, float | None]:
    """A component's own resistance out of circuit, classified against its nominal value.

    What the component *is* under test comes from its behaviour declaration in
    the graph (:meth:`~diagkg.sim.simulator.Simulator.own_elements`): a source
    cannot be tested this way; a working diode conducts one way; anything else
    reads its resistive elements (:meth:`~diagkg.sim.simulator.Simulator.own_resistance`:
    a short across a lamp in parallel with its filament) — contacts as they are now,
    judged against a sound contact in the position it should be in now (its lever, or
    what its coupling drives: a relay at rest reads open as it should; one stuck open
    where its coil pulls it in reads open against closed), sensors in the dark, a blown
    fuse or a burnt-out lamp open. A reading of at most :data:`SHORT_OHMS` that is not
    the part's own is a short, whatever the part (a 21 W lamp shorted through 0.5 Ω reads
    0.47 Ω, a 5 W one 0.49 Ω: both shorts), as is one under 5 % of its own. ``against_closed``: a contact
    is judged against a sound closed one, whatever its position (a switch test: does it conduct, does it block).
    """
    comp = session.sk.components[cid]
    # where a sound contact would be now: its lever, or what its coupling makes of this solve (stuck or not)
    lever = {**result.live, f"closed:{cid}": _lever(session, cid, state)}
    should = against_closed or next_live(session.sk, state.evolve(forced=()), dict.fromkeys(result.components, {}),
                                         result.components, lever)[f"closed:{cid}"]
    closed = dict(state.forced).get(cid, result.live.get(f"closed:{cid}", lever[f"closed:{cid}"]))
    if not (against_closed or result.converged) and cid not in dict(state.forced) and f"closed:{cid}" in result.live:
        # a contact its coupling keeps switching (the state does not settle) is in either position in turn, as a
        # sound one would be: judged against the position it is in (its coupling's answer to the last solve is
        # the other one, by the chattering itself: a sound relay read "open" and was named)
        should = closed
    live = {f"closed:{cid}": closed, f"illuminated:{cid}": False}
    now = session.sim.own_elements(state, cid, live)
    kinds = {kind for kind, _ in now}
    if "V" in kinds:
        return "not applicable (a source)", None
    if "D" in kinds:
        return "nominal", None           # a diode or LED that conducts one way, as it should
    if any((cid, p) in state.detached for p in comp.ports):
        return "one end is off its terminal", None
    sound = {f"closed:{cid}": should, f"illuminated:{cid}": False}
    reference = session.sim.own_elements(NOMINAL, cid, sound)
    if not now or not reference:
        return "not applicable (a source)", None     # nothing that conducts is declared for this type
    ohms = session.sim.own_resistance(state, cid, live) or 0.0
    # a diode's forward conduction has no resistance to compare with: any stamped resistance is judged against 1 Ω
    nominal = 1.0 if any(kind == "D" for kind, _ in reference) else (session.sim.own_resistance(NOMINAL, cid, sound) or 0.0)
    ref = max(nominal, 1.0)
    if ohms > 1e6 and nominal < 1e6:
        return "open", ohms
    if (ohms < 0.05 * ref or ohms <= SHORT_OHMS) and abs(ohms - nominal) / ref >= 0.05:
        return "short", ohms
    if abs(ohms - nominal) / ref < 0.05:
        return "nominal", ohms
    return "degraded", ohms


def path_resistance(session: Workbench, a: PortRef, b: PortRef) -> float:
    """Ohmmeter between two ports: every source set to 0 V, 1 mV applied, R = V / I."""
    state = session.state()
    zero = [o for o in state.overrides if o[1] != "voltage"]
    zero += [(cid, "voltage", 0.0) for cid, c in session.sk.components.items() if c.type == "VoltageSource"]
    probe_state = state.evolve(overrides=zero, probe=(a, b))
    result = session.sim.simulate(probe_state, session.rng)
    current = result.probe_current or 0.0
    return math.inf if current < 1e-12 else 1e-3 / current


def visible_lights(result: SimulationResult, session: Workbench,
                   observable: frozenset[str] | None = None) -> dict[str, Light]:
    """The lights a person sees from outside (derived from the simulation), lamp by lamp: what
    assistants read (the words of :func:`describe_lights` are for people). ``observable``: the
    parts that can be seen in the state the lights are of, when the session stands elsewhere
    (``access.affording(session, "Observable")`` where it stands, by default)."""
    sk = session.sk
    seen: dict[str, Light] = {}
    if observable is None:
        observable = access.affording(session, "Observable")
    for cid in sorted(sk.components):
        c = result.components.get(cid)
        if c is None or c.lit is None or sk.components[cid].iri not in observable:
            continue
        seen[cid] = Light.FLICKERING if cid in result.flickering else (Light.ON if c.lit else Light.OFF)
    return seen


HELD_LIGHTS = "lights"      # the key of an outcome's data that holds the lights seen while a test holds


def seen_while_held(session: Workbench, spec: ActionType, result: SimulationResult, out: Outcome) -> None:
    """A test undone after its round (a bridge, a switch opened, a cable taken off, a box turned: an action with an
    effect that is no repair, nor one the scenario keeps, ``dk:permanentRepair``) shows what can be seen from
    outside while it holds: the lights, as a session's start shows them (``out.data["lights"]``, and in words).
    Without them a bridge across a suspect part told only how its two ends look, and it was gone by the next
    round's look: no test of the kind could tell anything."""
    if spec.template is None or spec.repair or spec.id in session.scenario.permanent or out.refusal is not None \
            or HELD_LIGHTS in out.data:      # (a part named "lights" among the targets keeps its own record)
        return
    lights = visible_lights(result, session)
    out.data[HELD_LIGHTS] = lights
    out.message = f"{out.message} While it holds: {describe_lights(lights)}"


def describe_lights(lights: Mapping[str, str]) -> str:
    """The lights seen, in words."""
    return "; ".join(f"{cid} is {state}" for cid, state in lights.items()) + "." if lights \
        else "No lights can be seen from outside."


def describe_visible(result: SimulationResult, session: Workbench) -> str:
    """The lights a person sees from outside, in words (:func:`visible_lights`)."""
    return describe_lights(visible_lights(result, session))


OBSERVERS: dict[str, Observer] = {
    "none": observe_nothing,
    "moved-led": observe_moved_led,
    "subchain": observe_subchain,
    "visual": observe_visual,
    "connections": observe_connections,
    "voltages": observe_voltages,
    "current": observe_current,
    "continuity": observe_continuity,
    "diode": observe_diode,
    "path-continuity": observe_path_continuity,
    "switch-test": observe_switch_test,
}
