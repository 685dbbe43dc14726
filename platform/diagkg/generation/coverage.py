"""Whether generated scenarios reproduce scenarios written by hand.

A scenario of the store with one fault is *reproduced* by a generated one
with the same fault (mode, targets — the two targets of a two-target fault in
either order — and parameter) when every symptom it states (a lamp or LED
lit, dark or flickering) is stated the same by the generated one. A generated
scenario states every lamp and LED of the system; one written by hand usually
states some, and one whose configuration removes a part states none about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .catalogue import local

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Fault, Scenario
    from ..kg.store import KnowledgeSource
    from .generate import Generation


def fault_identity(f: Fault) -> tuple[str, frozenset[str], float | None, float | None]:
    """What makes two faults the same: mode, targets (unordered), value, probability."""
    targets = frozenset(local(t) for t in (f.target, f.other) if t)
    return f.mode, targets, f.value, f.probability


@dataclass(frozen=True)
class Match:
    """A hand-written scenario and the generated scenario that reproduces it (None: none does)."""

    scenario: str
    number: int
    generated: str | None
    why: str = ""


def reproduced(store: KnowledgeSource, key: str, generation: Generation) -> list[Match]:
    """For each single-fault scenario of the store on system ``key``: the generated scenario that
    reproduces it, or why none does."""
    from ..env.scenarios import ScenarioCatalog

    catalog = ScenarioCatalog(store)    # type: ignore[arg-type]
    by_fault = {fault_identity(w.look.placement.faults[0]): w for w in generation.written
                if len(w.look.placement.faults) == 1}
    out = []
    for n in catalog.numbers():
        s: Scenario = catalog.resolve(n)
        if s.key != key or len(s.faults) != 1:
            continue
        w = by_fault.get(fault_identity(s.faults[0]))
        if w is None:
            out.append(Match(s.id, n, None, "no generated scenario injects this fault"))
            continue
        stated = dict(w.look.appearances)
        wrong = [f"{cid}: {seen} by hand, {stated.get(cid)} generated" for cid, seen in s.symptoms
                 if stated.get(cid) != seen]
        out.append(Match(s.id, n, w.id if not wrong else None, "; ".join(wrong)))
    return out


__all__ = ["Match", "fault_identity", "reproduced"]
