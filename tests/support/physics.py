"""Physical laws a simulation result must keep, read from the result alone (no second model):
the currents at every node sum to zero, and the sources deliver what the rest dissipates."""

from __future__ import annotations

from diagkg.sim.circuit import CircuitState, Skeleton
from diagkg.sim.simulator import SimulationResult

KCL_ABS = 1e-6      # A
KCL_REL = 1e-3      # of the largest current at the node
POWER_REL = 1e-3    # of the power the sources deliver
POWER_ABS = 1e-6    # W: a dead circuit's nanowatts are noise (results drop values under a nanowatt)


def kirchhoff_violations(sk: Skeleton, state: CircuitState, result: SimulationResult) -> list[str]:
    """Every net where the currents entering the components' ports (and the state's shorts)
    do not sum to zero within 1 µA or 0.1 % of the largest of them."""
    rewired = dict(state.rewired)
    sums: dict[int, float] = {}
    largest: dict[int, float] = {}

    def add(port: tuple[str, str], current: float) -> None:
        net = sk.net_of_port[rewired.get(port, port)]
        sums[net] = sums.get(net, 0.0) + current
        largest[net] = max(largest.get(net, 0.0), abs(current))

    for cid, c in result.components.items():
        for port, current in c.port_i.items():
            if current is not None:
                add((cid, port), current)
    for short in result.shorts:
        add(short.between[0], short.current)
        add(short.between[1], -short.current)
    return [f"net {net} ({', '.join(f'{c}.{p}' for c, p in sk.ports_on_net[net])}): currents sum to {total:.3g} A"
            for net, total in sums.items() if abs(total) > max(KCL_ABS, KCL_REL * largest[net])]


def power_gap(result: SimulationResult) -> tuple[float, float, bool]:
    """(power the sources deliver, power the rest dissipates, whether they agree within 0.1 %)."""
    delivered = sum(c.power for c in result.components.values() if c.type == "VoltageSource")
    dissipated = sum(c.power for c in result.components.values() if c.type != "VoltageSource")
    dissipated += sum(s.power for s in result.shorts)
    return delivered, dissipated, abs(delivered - dissipated) <= max(POWER_REL * delivered, POWER_ABS)
