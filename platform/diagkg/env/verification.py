"""Verifying a hypothesis: repair exactly the named parts on a copy of the
state and see whether the system works again; the repair work it implies is
its cost (minutes).

*correct* if the main lamps light (settled, no loose end left, and the switch
still controls them — the bypass guard), *partial* if some named part was
faulty (it stays repaired), *wrong* otherwise. Naming a whole box or module
instead of a part is wrong and costs :data:`UNSPECIFIC_COST`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import pyoxigraph as ox

from ..kg.vocab import DK
from ..sim.circuit import CircuitState
from . import effects
from .actions import Hypothesis
from .effects import still_broken
from .outcomes import Outcome

if TYPE_CHECKING:  # pragma: no cover
    from .service import Session

# Cost rules of hypothesis verification (minutes): the repair work it implies.
CABLE_PORT_COST = 10          # per cable end put back on its terminal (at least one per cable)
COMPONENT_REPAIR_COST = 120   # per component replaced
ENCLOSURE_MOVE_COST = 10      # per shielding enclosure moved
UNSPECIFIC_COST = 120         # naming a whole box instead of a part


def verify(session: Session, hypothesis: Hypothesis) -> Outcome:
    out = Outcome(session.round, "hypothesis", str(hypothesis), False, "", 0.0)
    unknown = sorted(c for c in hypothesis.components if session.part_class(c) is None)
    candidates = sorted(c.split(".", 1)[0] for c in hypothesis.components
                        if session.part_class(c) is not None and c not in session.scenario.removed)
    candidates = sorted(set(candidates))
    shielding = {el for c in session.sk.couplings for el, _ in c.blocked_when}
    enclosures = [c for c in candidates if session.parts().get(c) in ("enclosure", "module", "opening")]
    if not candidates:
        out.verdict, out.message = "wrong", (
            "The hypothesis names nothing that is in this system" + (f" ({', '.join(unknown)})" if unknown else "") + ".")
        out.executed.append(("verify_repair", tuple(sorted(hypothesis.components)), 0.0))
        return out
    vague = [c for c in enclosures if c not in shielding]
    if vague:
        out.verdict = "wrong"
        out.cost = UNSPECIFIC_COST
        out.executed.append(("verify_repair", tuple(candidates), UNSPECIFIC_COST))
        out.message = (f"{', '.join(vague)} is a whole box or module, not a part that can be repaired: "
                       "name the specific components you suspect.")
        return out
    state = session.state()
    broken = still_broken(session, state)
    actually = sorted(set(candidates) & broken)
    cost = sum(repair_cost(session, c, state) for c in candidates)
    trial = repaired_state(session, candidates)
    works = main_function_works(session, trial)
    verdict = "correct" if works else ("partial" if actually else "wrong")
    out.verdict = verdict
    out.cost = cost
    out.executed.append(("verify_repair", tuple(candidates), cost))
    out.success = verdict == "correct"
    if verdict in ("correct", "partial"):
        fixed = actually + ([c for c in candidates if c in shielding] if works else [])
        for part in fixed:
            make_repair(session, part)
        session.repaired.update(fixed)
    texts = {
        "correct": "Repairing " + ", ".join(candidates) + " makes the system work again: the hypothesis is correct.",
        "partial": "Among " + ", ".join(candidates) + f", {', '.join(actually)} was indeed faulty and has been "
                   "repaired, but the system still does not work: something else is wrong too.",
        "wrong": "Repairing " + ", ".join(candidates) + " changes nothing: none of them was faulty.",
    }
    out.message = texts[verdict] + (f" (Unknown names ignored: {', '.join(unknown)}.)" if unknown else "")
    out.data = {"candidates": candidates, "actually_faulty": actually, "verdict": verdict}
    return out


def repair_cost(session: Session, part: str, state: CircuitState) -> float:
    kind = session.parts().get(part)
    if kind in ("enclosure", "module", "opening"):
        return ENCLOSURE_MOVE_COST
    comp = session.sk.components[part]
    if comp.type == "Cable":
        ends = {p for c, p in state.detached if c == part} | {p for (c, p), _ in state.rewired if c == part}
        ends |= {p for (c, p), _ in state.loose if c == part}
        return CABLE_PORT_COST * max(1, len(ends))
    return COMPONENT_REPAIR_COST


def least_naming_cost(session: Session, parts: Iterable[str]) -> float:
    """The least that naming ``parts`` can cost, whatever the state: each component's repair with
    no cable end off (:func:`repair_cost`); 0 when a part is not a component of the system as it
    stands (a box, a port, an unknown or removed part is judged otherwise)."""
    parts = set(parts)
    if any(p not in session.sk.components or p in session.scenario.removed for p in parts):
        return 0.0
    nominal = CircuitState()
    return float(sum(repair_cost(session, p, nominal) for p in parts))


def repaired_state(session: Session, parts: Iterable[str]) -> CircuitState:
    """The current state with these parts repaired, tried with the same repair templates as a
    real repair on the session's state graph, which is then set back (nothing of it is kept).
    The templates read only the system and the state graph: the same parts repaired in the same
    state give the same state, which is remembered (and each repair on the way, as an effect)."""
    parts = tuple(parts)
    key = (session.state_key(), parts)
    known = session.trial_cache.get(key)
    if known is None:
        state = session.state()
        broken = still_broken(session, state)
        # a component that does not differ from its nominal description is as new already: its
        # repair template deletes only what still_broken reads, so it would write nothing
        writing = tuple(p for p in parts if p not in session.sk.components or p in broken)
        known = _tried(session, writing) if writing else state
        if len(session.trial_cache) > 20_000:
            session.trial_cache.clear()
        session.trial_cache[key] = known
    return known


def _tried(session: Session, parts: tuple[str, ...]) -> CircuitState:
    before = session.state_key()
    try:
        for part in parts:
            make_repair(session, part)
        return session.state()
    finally:
        session.set_state(before)


def main_function_works(session: Session, state: CircuitState) -> bool:
    """The test_repair check: main lamps lit, settled, no loose end, and no bypass."""
    if state.loose or not session.main_bulbs:
        return False
    result = session.sim.simulate(state, session.rng)
    if not (result.converged and session.main_bulbs <= set(result.lit)):
        return False
    # bypass guard: opening the first closed hand switch must put a main lamp out
    driven = {c.drives for c in session.sk.couplings if c.kind == "SwitchingCoupling"}
    for cid in sorted(session.sk.components):
        comp = session.sk.components[cid]
        if comp.type != "Switch" or cid in driven or cid in state.removed:
            continue
        if not result.live.get(f"closed:{cid}", False):
            continue
        opened = state.evolve(positions=[p for p in state.positions if p[0] != cid] + [(cid, False)])
        if dict(opened.forced).get(cid) is True:
            continue
        check = session.sim.simulate(opened, session.rng)
        if session.main_bulbs <= set(check.lit):
            return False
        break
    return True


def make_repair(session: Session, part: str, graph: ox.NamedNode | None = None) -> None:
    """Repair a part for good in ``graph`` (the session's state by default): a
    shielding enclosure is moved, a component is made as new."""
    if session.parts().get(part) == "enclosure":
        template = "effect-physical-state"
        args: dict[str, Any] = {"target": session.iri_of(part), "add": [str(DK.Rotated)], "remove": []}
    else:
        template = "effect-repair-component"
        args = {"system": session.system_graph, "target": session.iri_of(part)}
    if graph is None:
        # the session's own state: the same repair of the same state gives the same state (remembered)
        effects._update(session, template, {"state": session.state_graph, **args})
    else:
        session.store.update(template, state=graph, **args)
