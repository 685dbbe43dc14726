"""How couplings act on a solve (:class:`~diagkg.sim.simulator.Simulator` iterates until they
settle): a lit emitter illuminates a receiver within reach and not blocked or covered; a switching
coupling opens or closes what it drives as its ``dk:closedWhen`` expression says of the solve."""

from __future__ import annotations

import math
from typing import Any

from ..errors import ExpressionError
from .circuit import CircuitState, Skeleton
from .results import ComponentResult


def next_live(sk: Skeleton, state: CircuitState, params: dict[str, dict[str, Any]],
              components: dict[str, ComponentResult], live: dict[str, bool]) -> dict[str, bool]:
    """The live contacts and sensors after a solve giving ``components`` (``params``: the
    components in the circuit), from ``live``, those the solve was made with."""
    new = dict(live)
    active_override = dict(state.couplings)
    forced = dict(state.forced)
    illuminated: dict[str, bool] = {}

    def lit(cid: str) -> bool:
        c = components.get(cid)
        return bool(c and c.lit)

    def current(cid: str) -> float:
        if cid not in components:
            raise ExpressionError(f"coupling refers to {cid!r}, which is not in the circuit")
        c = components[cid]
        return c.current if c.own_current is None else c.own_current      # a short across it is not its own

    def voltage(cid: str, port: str) -> float:
        if cid not in components:
            raise ExpressionError(f"coupling refers to {cid!r}, which is not in the circuit")
        return components[cid].port_v.get(port) or 0.0

    def is_illuminated(cid: str) -> bool:
        return live.get(f"illuminated:{cid}", False)

    for c in sk.couplings:
        active = active_override.get(c.id, c.active_by_default)
        if c.kind == "OpticalCoupling":
            if c.receiver not in params:
                continue
            assert c.emitter is not None and c.receiver is not None   # checked by _read_couplings
            reaches = (active and lit(c.emitter)
                       and not any(pair in state.physical for pair in c.blocked_when)
                       and c.emitter not in state.covered and c.receiver not in state.covered
                       and within(sk, c.emitter, c.receiver, c.max_distance))
            illuminated[c.receiver] = illuminated.get(c.receiver, False) or reaches
        elif c.kind == "SwitchingCoupling" and active and c.drives in params:
            if c.drives in forced:
                continue
            assert c.closed_when is not None   # checked by _read_couplings
            env = {"current": current, "lit": lit, "voltage": voltage, "illuminated": is_illuminated}
            new[f"closed:{c.drives}"] = bool(c.closed_when(env))
    for cid, value in illuminated.items():
        new[f"illuminated:{cid}"] = value
    return new


def within(sk: Skeleton, a: str, b: str, distance: float | None) -> bool:
    """Whether ``a`` and ``b`` are at most ``distance`` apart (no distance, or no position: yes)."""
    if distance is None:
        return True
    pa, pb = sk.positions.get(a), sk.positions.get(b)
    if pa is None or pb is None:
        return True
    return math.dist(pa, pb) <= distance + 1e-9


__all__ = ["next_live", "within"]
