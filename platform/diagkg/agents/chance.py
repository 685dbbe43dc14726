"""How the loose connections of a model-based world fall (:mod:`diagkg.agents.worlds`): a coin
that always falls one way for one connection, and every way several may fall, each with its
probability, as the real system's draws do (:class:`~diagkg.sim.circuit.Fall` per way)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ..sim.circuit import Decided, Fall, PortRef


class Coin(Decided):
    """A coin that always falls the same way, for a world's loose connections: 0.0 opens every
    one of them (``random() < probability``), 1.0 keeps every one closed (shared by every world of
    the process: it keeps no state, :class:`~diagkg.sim.circuit.Decided`)."""

    def __init__(self, value: float):
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


OPEN, CLOSED = Coin(0.0), Coin(1.0)


Fallen = Coin | Fall           # how a world's loose connections fall
Way = Fallen | None             # ... or None, for a world without chance


def coins(chance: float) -> tuple[tuple[Coin, float], ...]:
    """The two ways a loose connection may fall, each with its probability."""
    return (OPEN, chance), (CLOSED, 1.0 - chance)


def falls(loose: Sequence[tuple[PortRef, float]]) -> tuple[tuple[Fallen, float], ...]:
    """Every way the loose connections ``loose`` (port, probability) may fall, each with its
    probability: one connection falls open or closed (:func:`coins`); several fall each its own way
    (all open first, all closed last), as the real system's draws do."""
    if len(loose) == 1:
        return coins(loose[0][1])
    out: list[tuple[Fallen, float]] = []
    for opened in itertools.product((True, False), repeat=len(loose)):
        weight = math.prod(p if o else 1.0 - p for (_, p), o in zip(loose, opened, strict=True))
        out.append((Fall(port for (port, _), o in zip(loose, opened, strict=True) if o), weight))
    return tuple(out)


__all__ = ["CLOSED", "OPEN", "Coin", "Fallen", "Way", "coins", "falls"]
