"""Verifying a hypothesis: it is judged only on what it names, and costs the
repair work it implies (minutes), access included.

* *correct* — every named part is faulty, every part whose injected fault is
  still present is named or cleared by repairing what is named (a short between
  two parts belongs to both: either end's repair clears it), and repairing the
  named parts makes the system work
  (the main lamps light, settled, no loose end left, and the switch still
  controls them — the bypass guard). Only this verdict is a diagnosis, and only
  it ends a session in ``success``.
* *partial* — every named part is faulty (they are repaired, for good), but
  some faulty part is not named or the system still does not work.
* *overbroad* — the named parts include healthy ones as well as faulty ones:
  the hypothesis is turned back and nothing is repaired (the message does not
  say which named parts were healthy).
* *wrong* — no named part is faulty: nothing is repaired. Naming a whole box
  or module instead of a part is wrong too and costs :data:`UNSPECIFIC_COST` a box,
  besides what the parts named with it cost (the healthy ones false removals).
* *empty* — the hypothesis names no part of the system ("nothing is wrong").

A part is *faulty* when it differs from its nominal description in the current
state (:func:`~diagkg.env.effects.still_broken`: an injected fault still
present, a fault the scenario declares masked, damage, a shielding enclosure
that lets a coupling act); every other part is *healthy*.

The cost rule is the one every assistant pays: the repairs the named parts
imply (the catalogue's own costs: a replacement per component, a reconnection
per cable end off, a move per shielding enclosure) plus the access each repair
needs in the current state (opening a panel, turning an enclosure over — what
a repair action would do automatically), whatever the verdict.
"""

from __future__ import annotations

import itertools
import weakref
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import pyoxigraph as ox

from ..kg.vocab import DK
from ..sim.circuit import CircuitState
from . import access, effects
from .actions import Hypothesis
from .effects import still_broken
from .outcomes import Kind, Outcome, Verdict

if TYPE_CHECKING:  # pragma: no cover
    from ..sim.simulator import Simulator
    from .roles import Workbench
    from .scenarios import Fault

# Cost rules of hypothesis verification (minutes): the repair work it implies, read from the action
# catalogue where it says (these are the values used when a catalogue lacks the action).
CABLE_PORT_COST = 10          # per cable end put back on its terminal (at least one per cable): reconnect_cable
COMPONENT_REPAIR_COST = 120   # per component replaced: replace_component
ENCLOSURE_MOVE_COST = 10      # per shielding enclosure moved: rotate_enclosure
UNSPECIFIC_COST = 120.0       # naming a whole box instead of a part (a float, as every cost a step returns)
REPAIR_TEMPLATE = "effect-repair-component"   # what naming a component does to it (made as new)
MAX_LOOSE_ENDS = 4            # loose ends tried every way they may fall (2**4 solves at most); more: not settled
REPAIR_ACTIONS = {"component": "replace_component", "cable": "reconnect_cable", "enclosure": "rotate_enclosure"}
_DEFAULT_COSTS = {"component": COMPONENT_REPAIR_COST, "cable": CABLE_PORT_COST, "enclosure": ENCLOSURE_MOVE_COST}


def verify(session: Workbench, hypothesis: Hypothesis) -> Outcome:
    out = Outcome(session.round, Kind.HYPOTHESIS, str(hypothesis), False, "", 0.0)
    # the system itself named is the widest box of all (it was ignored as an unknown name: "the battery, and the
    # whole torch" was correct)
    whole = [c for c in hypothesis.components if c == session.scenario.key and session.part_class(c) is None]
    unknown = sorted(c for c in hypothesis.components if session.part_class(c) is None and c not in whole)
    candidates = sorted({c.split(".", 1)[0] for c in hypothesis.components
                         if session.part_class(c) is not None and c not in session.scenario.removed})
    shielding = {el for c in session.sk.couplings for el, _ in c.blocked_when}
    enclosures = [c for c in candidates if session.parts().get(c) in ("enclosure", "module", "opening")]
    if not candidates and not whole:
        out.verdict, out.message = Verdict.EMPTY, (
            "The hypothesis names nothing that is in this system" + (f" ({', '.join(unknown)})" if unknown else "") + ".")
        out.executed.append(("verify_repair", tuple(sorted(hypothesis.components)), 0.0))
        out.data = {"candidates": [], "verdict": Verdict.EMPTY.value}
        return out
    vague = [c for c in enclosures if c not in shielding] + whole
    if vague:
        # judged no further, but charged and counted as any naming is: each box as a replacement, the parts named
        # beside it at their repairs with their access, the healthy ones false removals (a box added to a
        # hypothesis naming every part made it cost 120 minutes and count none)
        parts = [c for c in candidates if c not in vague]
        state = session.state()
        out.healthy = tuple(sorted(set(parts) - still_broken(session, state)))
        _charge(session, out, parts, state, tuple(sorted({*candidates, *whole})), boxes=len(vague))
        out.verdict = Verdict.WRONG
        out.message = (f"{', '.join(vague)} is a whole box or module, not a part that can be repaired: "
                       "name the specific components you suspect.")
        out.data = {"candidates": candidates, "verdict": Verdict.WRONG.value}
        return out
    state = session.state()
    broken = still_broken(session, state)
    faulty_named = sorted(set(candidates) & broken)
    healthy_named = sorted(set(candidates) - broken)
    _charge(session, out, candidates, state, tuple(candidates))
    works: bool | None = None
    if healthy_named:
        out.healthy = tuple(healthy_named)
        out.verdict = Verdict.OVERBROAD if faulty_named else Verdict.WRONG
        out.message = ("Among " + ", ".join(candidates) + ", at least one part is not faulty: the hypothesis is "
                       "turned back and nothing was replaced." if faulty_named else
                       "Repairing " + ", ".join(candidates) + " changes nothing: none of them was faulty.")
    else:
        trial = repaired_state(session, candidates)
        works = main_function_works(session, trial)
        # every part with a fault of its own must be named, or be cleared by what is: a short between
        # two parts belongs to both, so repairing either end clears it
        left = injected_parts(session) & still_broken(session, trial) - set(candidates)
        out.verdict = Verdict.CORRECT if works and not left else Verdict.PARTIAL
        for part in faulty_named:
            make_repair(session, part)
        session.repaired.update(faulty_named)
        if out.verdict is Verdict.CORRECT:
            out.message = "Repairing " + ", ".join(candidates) + " makes the system work again: the hypothesis is correct."
        elif works:
            out.message = (", ".join(candidates) + " " + ("was" if len(candidates) == 1 else "were") + " indeed faulty and "
                           "has been repaired, and the system works again; but something else is still faulty.")
        else:
            out.message = (", ".join(candidates) + " " + ("was" if len(candidates) == 1 else "were") + " indeed faulty and "
                           "has been repaired, but the system still does not work: something else is wrong too.")
            again = failed_again(session, trial, faulty_named)
            if again:       # what a technician sees at once: the new fuse blows the moment it is in
                out.data["failed_again"] = again
                out.message += (" The new " + ", ".join(again) + (" fails" if len(again) == 1 else " fail") +
                                " again at once: something still drives " + ("it" if len(again) == 1 else "them") +
                                " past " + ("its" if len(again) == 1 else "their") + " rating.")
    out.success = out.verdict is Verdict.CORRECT
    out.message += f" (Unknown names ignored: {', '.join(unknown)}.)" if unknown else ""
    out.data = {"candidates": candidates, "actually_faulty": faulty_named, "verdict": out.verdict.value, **out.data}
    if works is not None:      # what the repair did to the main function (the message says it in words)
        out.data["works"] = works
    return out


def _charge(session: Workbench, out: Outcome, parts: Sequence[str], state: CircuitState, named: tuple[str, ...],
            boxes: int = 0) -> None:
    """Charge a hypothesis naming ``named``: the access each repair of ``parts`` needs, as the actions that would get
    it (charged like them: a box turned over or a lid opened once for all the parts behind it; it was charged once
    per part named), then the repairs of ``parts`` and :data:`UNSPECIFIC_COST` for each of ``boxes`` named."""
    for part in parts:
        out.executed.extend(step for step in access_steps(session, part) if step not in out.executed)
    repairs = UNSPECIFIC_COST * boxes + sum(repair_cost(session, c, state) for c in parts)
    out.executed.append(("verify_repair", named, float(repairs)))
    out.cost = float(sum(c for _, _, c in out.executed))


def failed_again(session: Workbench, state: CircuitState, parts: Iterable[str]) -> list[str]:
    """Those of ``parts`` (just repaired: ``state`` is the session's with their repairs) that the circuit damages
    again at once, however a loose end falls: a new fuse a short left in place blows."""
    damaged = {d.component for fallen in loose_falls(state) or () for d in session.sim.simulate(fallen, session.rng).damage}
    return sorted(damaged & set(parts))


def fault_parts(session: Workbench, fault: Fault) -> set[str]:
    """The parts ``fault`` is injected into (a port's fault is its component's; a short's, both ends'; a fault
    on a coupling names no part)."""
    out: set[str] = set()
    for iri in (fault.target, fault.other):
        if iri and iri.startswith(session.ns):
            part = iri[len(session.ns):].split(".", 1)[0]
            if session.part_class(part) is not None:
                out.add(part)
    return out


def injected_parts(session: Workbench) -> set[str]:
    """The parts the scenario injected a fault into, whatever their state now."""
    return set().union(*(fault_parts(session, fault) for fault in session.scenario.faults))


def faults_left(session: Workbench) -> int:
    """How many of the faults at the start no repair of the session reached: each injected fault none of whose
    parts was repaired (a short belongs to both its ends: repairing either clears it), and each part the faults
    damaged at once that was not replaced."""
    repaired = session.repaired
    parts = [fault_parts(session, fault) for fault in session.scenario.faults]
    left = sum(1 for mine in parts if mine and not mine & repaired)
    return left + len({d.component for d in session.initial_result.damage} - repaired - set().union(*parts))


def faulty_at_start(session: Workbench) -> set[str]:
    """The parts faulty when the session begins: those the scenario injected a fault into and those the
    faults damaged at once (a fuse a shorted lamp blew), which a correct hypothesis must name too."""
    return injected_parts(session) | {d.component for d in session.initial_result.damage}


def access_steps(session: Workbench, part: str) -> list[tuple[str, tuple[str, ...], float]]:
    """What getting at ``part`` to repair it takes in the current state: the automatic access a
    repair action would perform (opening a panel, turning the enclosure over), as executed steps
    with their catalogue costs; none for a part within reach or a shielding enclosure. Worked
    out on the state and set back (nothing of it is kept), remembered per physical state."""
    if part not in session.sk.components or access.affords(session, part, "Reachable"):
        return []
    recall = session.recall
    key = (access.physical_key(session), part)
    known = recall.access_steps.get(key) if recall is not None else None
    if known is None:
        before = session.state_key()
        probe = Outcome(session.round, Kind.HYPOTHESIS, "", False, "", 0.0)
        try:
            effects.gain_access(session, part, "Reachable", probe)
        finally:
            session.set_state(before)
        known = tuple(probe.executed)
        if recall is not None:
            recall.access_steps.put(key, known)
    return list(known)


def _catalogue_cost(session: Workbench, kind: str) -> float:
    return _cost_in(session.catalogue, kind)


def _cost_in(catalogue: Mapping[str, Any], kind: str) -> float:
    spec = catalogue.get(REPAIR_ACTIONS[kind])
    return float(spec.cost) if spec is not None else float(_DEFAULT_COSTS[kind])


def naming_floor(catalogue: Mapping[str, Any], part_type: str) -> float:
    """The least that naming one component of ``part_type`` (a type's local name) can cost, whatever
    its state: :func:`repair_cost` with no cable end off."""
    return _cost_in(catalogue, "cable" if part_type == "Cable" else "component")


def repair_cost(session: Workbench, part: str, state: CircuitState) -> float:
    kind = session.parts().get(part)
    if kind in ("enclosure", "module", "opening"):
        return _catalogue_cost(session, "enclosure")
    comp = session.sk.components[part]
    if comp.type == "Cable":
        if _inside(part, state):
            return _catalogue_cost(session, "component")      # broken or shorted inside: a new cable
        ends = {p for c, p in state.detached if c == part} | {p for (c, p), _ in state.rewired if c == part}
        ends |= {p for (c, p), _ in state.loose if c == part}
        return naming_floor(session.catalogue, comp.type) * max(1, len(ends))
    return naming_floor(session.catalogue, comp.type)


def _inside(part: str, state: CircuitState) -> bool:
    """Whether ``part`` has a fault of its own besides its ends (a value changed, damage, a short on one of
    its ports): reconnecting an end does not repair it, replacing it does."""
    return (any(c == part for c, _, _ in state.overrides) or any(c == part for c, _ in state.damaged)
            or any(p[0] == part for a, b, _ in state.shorts for p in (a, b)))


def least_naming_cost(session: Workbench, parts: Iterable[str]) -> float:
    """The least that naming ``parts`` can cost, whatever the state: each component's repair with
    no cable end off (:func:`repair_cost`); 0 when a part is not a component of the system as it
    stands (a box, a port, an unknown or removed part is judged otherwise)."""
    parts = set(parts)
    if any(p not in session.sk.components or p in session.scenario.removed for p in parts):
        return 0.0
    nominal = CircuitState()
    return float(sum(repair_cost(session, p, nominal) for p in parts))


def repaired_state(session: Workbench, parts: Iterable[str]) -> CircuitState:
    """The current state with these parts repaired, tried with the same repair templates as a
    real repair on the session's state graph, which is then set back (nothing of it is kept).
    The templates read only the system and the state graph: the same parts repaired in the same
    state give the same state, which is remembered (and each repair on the way, as an effect)."""
    parts = tuple(parts)
    recall = session.recall
    key = (session.state_key(), parts)
    known = recall.trials.get(key) if recall is not None else None
    if known is None:
        state = session.state()
        broken = still_broken(session, state)
        # a component that does not differ from its nominal description is as new already: its
        # repair template deletes only what still_broken reads, so it would write nothing
        writing = tuple(p for p in parts if p not in session.sk.components or p in broken)
        known = _tried(session, writing) if writing else state
        if recall is not None:
            recall.trials.put(key, known)
    return known


def _tried(session: Workbench, parts: tuple[str, ...]) -> CircuitState:
    before = session.state_key()
    try:
        for part in parts:
            make_repair(session, part)
        return session.state()
    finally:
        session.set_state(before)


def loose_falls(state: CircuitState) -> list[CircuitState] | None:
    """``state`` with its loose ends fallen every way they may (each on or off; one whose probability is 0 or
    1 only the way it always falls): a system works only if it works in each, so a loose end on a lamp's path
    is no working system, and one on an indicator's alone is none of its business (as a broken indicator);
    None when more than :data:`MAX_LOOSE_ENDS` ends are loose (then it does not work)."""
    if not state.loose:
        return [state]
    if len(state.loose) > MAX_LOOSE_ENDS:
        return None
    ways = [((False, True) if 0 < p < 1 else ((p >= 1),)) for _, p in state.loose]
    return [state.evolve(detached=set(state.detached) | {port for (port, _), off in zip(state.loose, fallen, strict=True) if off},
                         loose=()) for fallen in itertools.product(*ways)]


def worked_at_start(session: Workbench, snapshot: frozenset[ox.Quad], lamps: frozenset[str]) -> bool:
    """Whether the system worked, as a repair is judged (:meth:`~diagkg.env.service.Session.works_again`: ``lamps``
    lit, however its loose ends fall, the switch controlling them), as the faults left it (``snapshot``): then its
    faults stop nothing a session judges by (a loose end on an indicator's branch alone), ``diagkg check`` says so,
    and no action restores it — only a correct hypothesis ends such a session in success (a first observation ended
    it in ``success_no_hypothesis``). Worked out only when an action would end a session so."""
    current = session.state_key()
    session.set_state(snapshot)
    try:
        return lamps_work(session, session.state(), lamps, bypass=True)
    finally:
        session.set_state(current)


def lamps_work(session: Workbench, state: CircuitState, lamps: frozenset[str], bypass: bool) -> bool:
    """However ``state``'s loose ends fall (:func:`loose_falls`): it settles, every lamp of ``lamps`` lights, none
    lights that is dark as set up (:func:`none_lit_past`) and, with ``bypass``, its switch controls the lamps
    (:func:`switch_controls`)."""
    falls = loose_falls(state)
    if falls is None:
        return False
    for fallen in falls:
        result = session.sim.simulate(fallen, session.rng)
        if not (result.converged and lamps <= set(result.lit) and none_lit_past(session, result)):
            return False
        if bypass and not switch_controls(session, fallen, result):
            return False
    return True


def main_function_works(session: Workbench, state: CircuitState) -> bool:
    """The test_repair check: main lamps lit, none lit that is dark as set up, settled (however a loose end
    falls), and no bypass. A system none of whose lamps lights as set up (a warning lamp, dark while all is well)
    works when none lights, as a session's repair judges it (``Session.works_again``)."""
    return lamps_work(session, state, session.main_bulbs, bypass=True)


def none_lit_past(session: Workbench, result: Any) -> bool:
    """No bulb is lit in ``result`` that is dark in the system as set up: a lamp a blown fuse (or a part
    left out) no longer bypasses lights where the working system keeps it dark, and that is no working
    system, however the other lamps light."""
    lit_as_set_up = set(session.nominal_result.lit)
    return all(cid in lit_as_set_up or not session.sk.components[cid].is_lamp for cid in result.lit)


def switch_controls(session: Workbench, state: CircuitState, result: Any) -> bool:
    """The bypass guard: opening each closed hand switch puts out, in ``state`` (simulated: ``result``), every
    main lamp it puts out in the system as set up (a switch of another circuit, on a system nobody drew for
    this, puts none out, and is not tried). A switch stuck closed, or a short across it or past it to one of
    its lamps, keeps a lamp lit: that is not a working system, whatever lights. Every switch is tried, not
    the first: with a brake switch and a light switch, the light switch stuck closed is no working system
    however the brake switch works."""
    # the verdict is the circuit's alone (no coin is flipped where no end is loose): remembered per simulator,
    # since a model-based assistant asks it of the same few states thousands of times a decision
    key = None if state.loose or session.nominal_state.loose else (state, session.nominal_state, session.main_bulbs)
    known = VERDICTS.setdefault(session.sim, {})
    if key is not None and key in known:
        return known[key]
    verdict = True
    for cid in hand_switches(session):
        if cid in state.removed or not result.live.get(f"closed:{cid}", False):
            continue
        controlled = put_out(session, session.nominal_state, cid)
        # a switch stuck closed is one too: opening it by hand leaves it closed, and its lamps lit
        if controlled and not controlled <= put_out(session, state, cid):
            verdict = False
            break
    if key is not None:
        if len(known) >= MAX_VERDICTS:
            known.clear()
        known[key] = verdict
    return verdict


MAX_VERDICTS = 20_000
VERDICTS: weakref.WeakKeyDictionary[Simulator, dict[tuple[CircuitState, CircuitState, frozenset[str]], bool]] = \
    weakref.WeakKeyDictionary()      # switch_controls' verdicts, per simulator (its system's skeleton)


def hand_switches(session: Workbench) -> list[str]:
    """The switches a person works by hand, in order (a relay's contacts, driven by a coupling, are not)."""
    driven = {c.drives for c in session.sk.couplings if c.kind == "SwitchingCoupling"}
    return [cid for cid, comp in sorted(session.sk.components.items()) if comp.type == "Switch" and cid not in driven]


def set_by_hand(state: CircuitState, switch: str, closed: bool) -> CircuitState:
    """``state`` with ``switch`` put closed (or open) by hand."""
    return state.evolve(positions=[p for p in state.positions if p[0] != switch] + [(switch, closed)])


def put_out(session: Workbench, state: CircuitState, switch: str) -> frozenset[str]:
    """The main lamps not lit in ``state`` with ``switch`` opened by hand."""
    return frozenset(session.main_bulbs - set(session.sim.simulate(set_by_hand(state, switch, False), session.rng).lit))


def make_repair(session: Workbench, part: str, graph: ox.NamedNode | None = None) -> None:
    """Repair a part for good in ``graph`` (the session's state by default): a
    shielding enclosure is moved, a component is made as new."""
    if session.parts().get(part) == "enclosure":
        template = "effect-physical-state"
        args: dict[str, Any] = {"target": session.iri_of(part), "add": [str(DK.Rotated)], "remove": []}
    else:
        template = REPAIR_TEMPLATE
        args = {"system": session.system_graph, "target": session.iri_of(part)}
    if graph is None:
        # the session's own state: the same repair of the same state gives the same state (remembered)
        effects.apply_template(session, template, {"state": session.state_graph, **args})
    else:
        session.store.update(template, state=graph, **args)
