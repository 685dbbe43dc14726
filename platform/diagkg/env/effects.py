"""Effects: actions applied to the session's state through their catalogue
templates (SPARQL UPDATE), with the arguments that depend on the action, the
damage the circuit does kept in the state (:func:`keep_damage`), and the
topology some effects need (LED slots of modules, the cable ends of a chain of
modules)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from ..kg.vocab import DK
from ..sim.circuit import CircuitState, PortRef
from . import access
from .actions import Action, ActionType
from .outcomes import Outcome, Refusal

if TYPE_CHECKING:  # pragma: no cover
    from ..sim.simulator import SimulationResult
    from .roles import Workbench

# Effect templates that only undo faults of their target (a repair): on a component that does
# not differ from its nominal description (:func:`still_broken`) they change nothing that is read
# of the state, so they are not run there (tests/test_prediction_shortcuts.py runs them on every
# component of every single-fault world of a system written in the test and checks it).
UNDOING = frozenset({"effect-repair-component", "effect-reconnect-cable"})

# A test's bridge (short_ports) is a short named in the state graph's own namespace with this
# fragment: the service agent takes it off at the end of its round (:func:`is_bridge`).
BRIDGE = "#bridge-"

# Arguments of the effect templates that depend on the action, not on its target.
EFFECT_ARGUMENTS: dict[str, dict[str, Any]] = {
    "open_switch": {"closed": False},
    "close_switch": {"closed": True},
    "open_opening": {"add": [str(DK.Open)], "remove": []},
    "close_opening": {"add": [], "remove": [str(DK.Open)]},
    "invert_enclosure": {"add": [str(DK.Inverted)], "remove": []},
    "restore_enclosure": {"add": [], "remove": [str(DK.Inverted), str(DK.Rotated)]},
    "rotate_enclosure": {"add": [str(DK.Rotated)], "remove": []},
    "cover_component": {"covered": True},
    "uncover_component": {"covered": False},
}


def apply_effect(session: Workbench, spec: ActionType, action: Action, out: Outcome) -> bool:
    args: dict[str, Any] = {"state": session.state_graph, "system": session.system_graph,
                            "target": session.iri_of(action.targets[0])}
    args.update(EFFECT_ARGUMENTS.get(spec.id, {}))
    if spec.id == "reverse_battery" and session.sk.components[action.targets[0]].type != "VoltageSource":
        out.refuse(Refusal.COMPONENT_TYPE, f"{action.targets[0]} is not a battery.")
        return False
    if spec.id == "adjust_potentiometer":
        if action.value is None or not 0.0 <= action.value <= 1.0:
            out.refuse(Refusal.MISSING_VALUE, "A potentiometer's position is between 0 and 1.")
            return False
        args["value"] = float(action.value)
    if spec.id == "swap_cables":
        if action.targets[0] == action.targets[1]:      # (it cost 40 minutes and counted the cable repaired)
            out.refuse(Refusal.NO_EFFECT, f"Swapping {action.targets[0]} with itself changes nothing: name two cables.")
            return False
        a, b = swap_ends(session, *action.targets)
        args.update(target=session.iri_of(a), other=session.iri_of(b))
    assert spec.template is not None      # only actions with an effect template get here
    if spec.template in UNDOING and action.targets[0] in session.sk.components and \
            action.targets[0] not in still_broken(session, session.state()):
        return True                       # nothing to undo: the template would write nothing
    if spec.id == "move_led":
        moves = led_moves(session, action.targets[0], action.targets[1], out)
        if moves is None:
            return False
        session.sync()
        for port, onto in moves:
            session.store.update(spec.template, state=session.state_graph, target=session.iri_of(port), other=session.iri_of(onto))
        out.data["moves"] = [{"end": end, "onto": onto} for end, onto in moves]
        return True
    if spec.id == "short_ports":
        pa, pb = (port_of(session, t) for t in action.targets)
        if pa == pb:
            out.refuse(Refusal.NO_EFFECT, f"Bridging {pa[0]}.{pa[1]} to itself changes nothing: name two terminals.")
            return False
        session.short_count += 1
        args.update(target=session.iri_of(f"{pa[0]}.{pa[1]}"), other=session.iri_of(f"{pb[0]}.{pb[1]}"),
                    value=0.01, short=f"{session.state_graph.value}{BRIDGE}{session.short_count}")
    apply_template(session, spec.template, args)
    return True


def is_bridge(session: Workbench, term: object) -> bool:
    """Whether ``term`` is a bridge a test placed in this session's state graph (see :data:`BRIDGE`)."""
    return isinstance(term, ox.NamedNode) and term.value.startswith(session.state_graph.value + BRIDGE)


def keep_damage(session: Workbench, result: SimulationResult) -> None:
    """Write the damage the circuit did in ``result`` (a fuse blown, a lamp burnt out: its damage
    rules, ontology/behaviour.ttl) into the session's state graph, where it stays until the part
    is replaced (effect-repair-component): it is history, not a function of the faults."""
    for d in result.damage:
        apply_template(session, "state-damage", {"state": session.state_graph, "target": session.iri_of(d.component),
                                          "property": session.damage_iris[d.state]})


def still_broken(session: Workbench, state: CircuitState) -> set[str]:
    """Parts that differ from their nominal description in this state."""
    broken = {c for c, _, _ in state.overrides} | {c for c, _ in state.forced} | {c for c, _ in state.damaged}
    broken |= {c for c, _ in state.detached} | {c for (c, _), _ in state.rewired}
    broken |= {c for (c, _), _ in state.loose}
    broken |= {p[0] for a, b, _ in state.shorts for p in (a, b)}
    active = dict(state.couplings)
    for c in session.sk.couplings:
        if active.get(c.id, c.active_by_default) and not c.active_by_default:
            if not any(pair in state.physical for pair in c.blocked_when):
                broken |= {el for el, _ in c.blocked_when}
    return broken - set(state.removed)


def apply_template(session: Workbench, template: str, args: dict[str, Any]) -> None:
    """Run an effect's template on the state graph. The same effect on the same state always
    writes the same state (the template reads only the system and the state graph), so a
    session that remembers (a what-if shadow: :class:`~diagkg.env.roles.Recall`) keeps the state
    it led to and sets it again directly the next time."""
    recall = session.recall
    if recall is None:             # a real session: each effect is applied once
        session.sync()
        session.store.update(template, **args)
        return
    key = (session.state_key(), template,
           tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in args.items())))
    after = recall.effects.get(key)
    if after is None:
        session.sync()
        session.store.update(template, **args)
        recall.effects.put(key, session.state_key())
    else:
        session.set_state(after)


def module_of(session: Workbench, part: str) -> str | None:
    """The module a component, enclosure or opening belongs to."""
    session.parts()
    if part in session.sk.components:
        return session.sk.components[part].module
    seen: str | None = part
    while seen is not None and session.parts().get(seen) != "module":
        seen = session.parent_of.get(seen)
    return seen


def led_and_resistor(session: Workbench, module: str) -> tuple[str, str] | None:
    """A module's indicator LED and the resistor in series with it (from the wiring)."""
    net = session.sk.net_of_port
    for cid in sorted(session.sk.components):
        comp = session.sk.components[cid]
        if comp.type != "LED" or comp.module != module:
            continue
        anode = net[(cid, "anode")]
        for rid in sorted(session.sk.components):
            r = session.sk.components[rid]
            if r.type == "Resistor" and r.module == module and any(net[(rid, p)] == anode for p in r.ports):
                return cid, rid
    return None


def led_slot(session: Workbench, module: str) -> tuple[str, str, str, str] | None:
    """(LED, resistor, resistor's far end, LED cathode) of a module's LED slot."""
    pair = led_and_resistor(session, module)
    if pair is None:
        return None
    led, res = pair
    net = session.sk.net_of_port
    far = next(p for p in sorted(session.sk.components[res].ports) if net[(res, p)] != net[(led, "anode")])
    return led, res, f"{res}.{far}", f"{led}.cathode"


def led_moves(session: Workbench, led: str, destination: str, out: Outcome) -> list[tuple[str, str]] | None:
    if led not in session.sk.components or session.sk.components[led].type != "LED":
        out.refuse(Refusal.COMPONENT_TYPE, f"{led} is not an LED.")
        return None
    source, target = module_of(session, led), module_of(session, destination)
    here, there = (led_slot(session, m) if m else None for m in (source, target))
    if here is None or there is None or source == target:
        out.refuse(Refusal.NO_EFFECT, f"There is no other LED slot in {destination} to move {led} to.")
        return None
    moves = [(here[2], there[2]), (here[3], there[3])]
    if there[0] not in session.scenario.removed:       # an LED already sits there: swap them
        moves += [(there[2], here[2]), (there[3], here[3])]
    out.data["slot"] = {"led": led, "module": target, "displaced": there[0]
                        if there[0] not in session.scenario.removed else None}
    return moves


def chain_ends(session: Workbench, module: str, nearest: bool) -> list[PortRef]:
    """The two outer cable ends of a module nearest to (or farthest from) the supply,
    as (+ line, - line) by their nominal voltage."""
    distance = distances(session, )
    ends = []
    for cid in sorted(session.sk.components):
        comp = session.sk.components[cid]
        if comp.module != module or comp.type != "Cable":
            continue
        for port, iri in comp.ports.items():
            if not access.inside(session, iri):
                ends.append((cid, port))
    if len(ends) < 2:
        return []
    volts = session.nominal_result.components
    ends.sort(key=lambda e: -(volts[e[0]].port_v.get(e[1]) or 0.0) if e[0] in volts else 0.0)
    half = len(ends) // 2
    pick = min if nearest else max
    key = lambda e: distance.get(session.sk.net_of_port[e], 10**6)   # noqa: E731
    return [pick(ends[:half], key=key), pick(ends[half:], key=key)]


def distances(session: Workbench) -> dict[int, int]:
    """Breadth-first distance of every electrical node from the supply's nodes."""
    from collections import deque

    sk = session.sk
    by_net: dict[int, set[str]] = {}
    for (cid, _), net in sk.net_of_port.items():
        by_net.setdefault(net, set()).add(cid)
    sources = {sk.net_of_port[(cid, p)] for cid, c in sk.components.items() if c.type == "VoltageSource"
               for p in c.ports}
    dist = {n: 0 for n in sources}
    queue = deque(sources)
    while queue:
        net = queue.popleft()
        for cid in by_net.get(net, ()):
            for p in sk.components[cid].ports:
                other = sk.net_of_port[(cid, p)]
                if other not in dist:
                    dist[other] = dist[net] + 1
                    queue.append(other)
    return dist


def port_of(session: Workbench, target: str) -> PortRef:
    if "." in target:
        cid, port = target.split(".", 1)
        return cid, port
    comp = session.sk.components[target]
    return target, session.sim.positive_port.get(target, min(comp.ports))


def swap_ends(session: Workbench, a: str, b: str) -> tuple[str, str]:
    """The ends of two cables to exchange: the rewired ones, else their p ends."""
    state = session.state()
    rewired = dict(state.rewired)
    ends = []
    for cable in (a, b):
        moved = [f"{cid}.{port}" for (cid, port) in rewired if cid == cable]
        ends.append(moved[0] if moved else f"{cable}.p")
    return ends[0], ends[1]


def gain_access(session: Workbench, part: str, needed: str, out: Outcome) -> None:
    """Open an opening, else turn an enclosure over: those whose state the part's conditional affordances
    say grants ``needed``, wherever they are (its own enclosure's openings first, panels first; then an
    opening of another enclosure, a hatch in the fairing over a lamp's housing, or one a part in no
    enclosure names); else, as a panel gives reach and sight and a peephole only sight, a panel (or a
    peephole, for sight) of its enclosure, then the enclosure turned over."""
    rows = access.access_rows(session, session.iri_of(part))
    enclosure = rows[0]["enclosureId"] if rows else None
    openings = sorted({(r["openingKind"], r["openingId"]) for r in rows if r["openingId"]},
                      key=lambda o: (o[0] != "InspectionPanel", o))
    granting = access.granting(session, part, needed)
    if granting:
        own = [opening for _, opening in openings]
        named = sorted(element for element, state in granting if state == "Open" and element not in own)
        for opening in own + named:
            if (opening, "Open") in granting:
                automatic(session, "open_opening", opening, out)
                if access.affords(session, part, needed):
                    return
        for box in sorted((e for e, state in granting if state == "Inverted"), key=lambda e: (e != enclosure, e)):
            automatic(session, "invert_enclosure", box, out)
            if access.affords(session, part, needed):
                return
        return
    if enclosure is None:
        return
    for kind, opening in openings:
        if needed == "Reachable" and kind == "Peephole":
            continue
        automatic(session, "open_opening", opening, out)
        if access.affords(session, part, needed):
            return
    automatic(session, "invert_enclosure", enclosure, out)


def automatic(session: Workbench, action_id: str, target: str, out: Outcome) -> None:
    spec = session.catalogue[action_id]
    apply_effect(session, spec, Action(action_id, (target,)), out)
    out.executed.append((action_id, (target,), spec.cost))
