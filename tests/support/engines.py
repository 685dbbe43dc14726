"""Comparing two simulations of the same state (the fast engine's and PySpice's)."""

from __future__ import annotations

from diagkg.sim.simulator import SimulationResult

VOLTS = 1e-3            # V: port voltages agree within 1 mV...
# ...or, for a part that carries only leakage (both currents under FLOOR), within 10 mV: a node held by
# nothing but reverse junctions and 1e9-ohm contacts has a potential the solver leaves undetermined within
# its current tolerance, and ngspice starts each operating point from the one it solved before on that
# circuit, so what it finds there depends on what the process solved earlier (DCAC.D.2's control module 3,
# cut off by a cable end: 0.1633 V after some sessions, 0.1654 V fresh)
LEAKING_VOLTS = 1e-2
SHARE = 5e-3            # currents agree within 0.5 % of the larger...
FLOOR = 1e-8            # A: ...or within 10 nA, for currents that are leakage (1e9-ohm contacts, reverse diodes)


def differences(a: SimulationResult, b: SimulationResult) -> list[str]:
    """How two results of one state differ beyond the tolerances above (empty: they agree)."""
    out: list[str] = []
    if (a.error is None) != (b.error is None):
        return [f"one engine failed and the other did not: {a.error!r} / {b.error!r}"]
    if a.converged != b.converged:
        out.append(f"converged {a.converged} / {b.converged}")
    if set(a.lit) != set(b.lit):
        out.append(f"lit {sorted(a.lit)} / {sorted(b.lit)}")
    if set(a.components) != set(b.components):
        return [*out, f"components {sorted(a.components)} / {sorted(b.components)}"]
    for cid in sorted(a.components):
        x, y = a.components[cid], b.components[cid]
        if abs(x.current - y.current) > max(FLOOR, SHARE * max(abs(x.current), abs(y.current))):
            out.append(f"{cid} current {x.current:.9g} / {y.current:.9g} A")
        within = LEAKING_VOLTS if max(abs(x.current), abs(y.current)) < FLOOR else VOLTS
        for port in sorted(set(x.port_v) | set(y.port_v)):
            v, w = x.port_v.get(port), y.port_v.get(port)
            if (v is None) != (w is None) or (v is not None and w is not None and abs(v - w) > within):
                out.append(f"{cid}.{port} at {v} / {w} V")
    return out
