"""An ideal repair played in a session, for ``diagkg check`` (:mod:`diagkg.env.checks`): how the session ends, what it
charges, how many steps it plays; and the warnings about a plan whose session ends before its last step or charges
other than the plan's price (the ``ideal`` check).

A session ends once the system works as it judges it (every lamp the working system lights is lit, its switch
controlling them). A fault that changes no lamp it judges by stops no repair: a broken indicator, or a part whose
fault the lamps do not show (a shorted protection diode with the battery the right way round). A plan that repairs
such a part after the lamps' own repairs is then played only up to them, and the session ends in success leaving the
part as the faults made it (``dk:faultsLeft``: ``diagkg query figure-faults-left`` counts those successes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from .actions import Action
from .scenarios import RepairStep, Scenario
from .service import Session

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore


@dataclass(frozen=True)
class Play:
    """Steps played in a session: its end (None: still running), whether the system then works although the
    session goes on (a fault worked around), the first step refused, the minutes charged, the access the
    session took by itself on the way (``open_opening lid``), how many of the steps it played before it ended, and
    the parts damaged when it stops (a fuse replaced while the short that blew it is still there blows again)."""

    end: str | None
    workaround: bool
    refused: str | None
    minutes: float
    access: tuple[str, ...]
    steps: int = 0
    damaged: frozenset[str] = frozenset()


def played(store: "KnowledgeStore", scenario: Scenario, steps: tuple[RepairStep, ...], seed: int) -> Play:
    """``steps`` played in a session of ``scenario`` until it ends."""
    s = Session(scenario, store)
    s.reset(seed=seed)
    refused: str | None = None
    minutes, access, count = 0.0, [], 0
    for position, step in enumerate(steps, 1):
        outcome, _, terminated, truncated, _ = s.step(Action(step.action, step.targets, step.value))
        count = position
        minutes += outcome.cost
        access += [f"{a} {' '.join(t)}" for a, t, _ in outcome.executed if a != step.action]
        if outcome.refusal is not None and refused is None:
            refused = f"step {position} ({outcome.intention}) is refused: {outcome.message}"
        if terminated or truncated:
            break
    play = Play(s.end, s.end is None and s.is_nominal(), refused, minutes, tuple(access), count,
                frozenset(part for part, _ in s.state().damaged))
    s.close()
    return play


def _indicators(session: Session, parts: Sequence[str]) -> bool:
    """Whether every one of ``parts`` is an indicator (an LED not declared ``dk:isIndicator false``)."""
    comps = [session.sk.components.get(p.split(".", 1)[0]) for p in parts]
    return bool(comps) and all(c is not None and c.type == "LED" and not c.is_lamp for c in comps)


def _why_no_repair(session: Session, parts: Sequence[str]) -> str:
    """Why a session ends with ``parts`` left as the faults made them, as the parts are."""
    if _indicators(session, parts):
        return "a broken indicator stops no repair"
    return (f"the fault of {', '.join(parts)} changes no lamp a session judges by, and a fault that changes none "
            "stops no repair")


def ideal_warnings(store: "KnowledgeStore", session: Session, scenario: Scenario, plays: Sequence[Play],
                   seeds: int) -> list[str]:
    """The ``ideal`` warnings on a scenario whose ideal repair restores nominal (``plays``: it played with seeds 0,
    1…; ``session``: one of the scenario as found): a step a session ends in success without, and a session that
    charges other than the plan's price (for the steps it played, or for access it took by itself)."""
    out = []
    catalogue = session.catalogue
    for position, step in enumerate(scenario.repair if len(scenario.repair) > 1 else (), 1):
        rest = tuple(s for s in scenario.repair if s is not step)
        if all(played(store, scenario, rest, seed).end == "success_no_hypothesis" for seed in range(min(seeds, 3))):
            spec = catalogue.get(step.action)
            out.append(f"a session ends in success without step {position} ({step.action} {' '.join(step.targets)}): "
                       + (f"the lamps light with what it repairs left as the faults made it "
                          f"({_why_no_repair(session, step.targets)}), so an assistant that leaves it reads below 1 in "
                          "cost / ideal"
                          if spec is None or spec.repair else
                          "it repairs nothing, and a session takes the access a repair needs by itself (charged as the "
                          "action would be): the plan is the same without it"))
    planned = scenario.repair_minutes if scenario.repair_minutes is not None else \
        sum(float(catalogue[step.action].cost) for step in scenario.repair if step.action in catalogue)
    first = plays[0]
    charged = first.minutes
    if abs(charged - planned) > 0.5:
        price = (f", where its plan states dk:costMinutes {planned:g}" if scenario.repair_minutes is not None else
                 f", where its steps cost {planned:g} at the catalogue's prices")
        unplayed = scenario.repair[first.steps:] if first.end is not None else ()
        left = list(dict.fromkeys(t for step in unplayed for t in step.targets))
        if left:
            # the session ended before the plan did: its price is that of a repair that leaves a fault
            out.append(
                f"a session charges {charged:g} min for the ideal repair{price}: it ends in success after step "
                f"{first.steps} of {len(scenario.repair)}, leaving {', '.join(left)} as the faults made it "
                f"({_why_no_repair(session, left)}); cost / ideal is measured against {planned:g}, and a session "
                "that ends so counts as leaving a fault (dk:faultsLeft; diagkg query figure-faults-left)"
                + (f"; if the ideal repair may leave the indicator broken (as generated scenarios' plans do), state "
                   f"dk:costMinutes {charged:g} on the plan" if _indicators(session, left) else
                   f"; dk:costMinutes {charged:g} on the plan would price a repair that leaves {', '.join(left)} "
                   "broken"))
        else:
            out.append(
                f"a session charges {charged:g} min for the ideal repair"
                + (f" (taking {', '.join(dict.fromkeys(first.access))} by itself)" if first.access else "")
                + price + f": cost / ideal is measured against {planned:g}; state dk:costMinutes {charged:g} on the plan")
    return out
