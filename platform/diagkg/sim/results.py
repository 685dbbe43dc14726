"""What a simulation gives back: each component's port voltages, port currents, power and
light, the state's shorts, the parts the circuit damaged, and whether the state settled; and the
same as SOSA observations (:func:`result_quads`).

Sign convention: a component's ``current`` is the current entering it at its positive-side port
(``pos``, ``p`` or ``anode``), ``port_i`` the current entering it at each port (they sum to zero
over its ports), so a battery that delivers power has a negative current; ``power`` is the power
it dissipates or delivers, always positive.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pyoxigraph as ox

from ..kg.rdfio import datetime_literal
from ..kg.vocab import DK
from .circuit import PortRef, Skeleton


@dataclass(frozen=True, slots=True)
class ComponentResult:
    type: str
    port_v: dict[str, float | None]
    current: float
    power: float
    lit: bool | None = None           # None for components that cannot emit light
    # the current entering the component at each port (A); None for a port that floats
    port_i: dict[str, float | None] = field(default_factory=dict)
    # the current through the component itself, where a fault's short across it (dk:bypassesComponent) carries
    # the rest of `current`: what a coupling's current('id') reads (a shorted relay coil pulls nothing in)
    own_current: float | None = None


@dataclass(frozen=True, slots=True)
class Damage:
    """A part the circuit damaged (a damage rule of its type held, ontology/behaviour.ttl)."""

    component: str
    state: str                        # the damage state it is now in: "blown", "burntOut"…
    current: float                    # its current (A) in the solve that damaged it
    power: float                      # and its power (W)


@dataclass(frozen=True, slots=True)
class ShortResult:
    """A short of the state (``dk:ShortCircuit``) as solved."""

    between: tuple[PortRef, PortRef]
    current: float                    # from the first port's node to the second's (A)
    power: float                      # dissipated in the short (W)


@dataclass(frozen=True)
class SimulationResult:
    system: str
    converged: bool
    iterations: int
    lit: tuple[str, ...]
    components: dict[str, ComponentResult]
    live: dict[str, bool] = field(default_factory=dict)   # relay contacts and sensors after the last solve
    error: str | None = None
    probe_current: float | None = None                    # through an ohmmeter probe, if the state has one
    # lamps and LEDs that go on and off while the state does not settle (couplings
    # that keep switching): lit in some of the last solves and dark in others
    flickering: tuple[str, ...] = ()
    shorts: tuple[ShortResult, ...] = ()
    # damage the circuit did to its parts in this state (beyond what the state says already), as
    # (component, damage state); the rest of the result is that of the damaged circuit
    damage: tuple[Damage, ...] = ()
    damage_settled: bool = True           # False: damage was still spreading after MAX_DAMAGE_ROUNDS

    def is_lit(self, component: str) -> bool:
        return component in self.lit

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "converged": self.converged,
            "iterations": self.iterations,
            "lit": list(self.lit),
            "live": dict(sorted(self.live.items())),
            "error": self.error,
            "damage": [{"component": d.component, "state": d.state, "current": _round(d.current),
                        "power": _round(d.power)} for d in self.damage],
            "damage_settled": self.damage_settled,
            "components": {
                cid: {"type": c.type, "port_v": {p: _round(x) for p, x in c.port_v.items()},
                      "port_i": {p: _round(x) for p, x in c.port_i.items()},
                      "current": _round(c.current), "power": _round(c.power),
                      **({"lit": c.lit} if c.lit is not None else {})}
                for cid, c in sorted(self.components.items())
            },
            # a short of the state is no component, but carries current: without it a node's currents do not add up
            "shorts": [{"between": [f"{a[0]}.{a[1]}", f"{b[0]}.{b[1]}"], "current": _round(s.current),
                        "power": _round(s.power)} for s in self.shorts for a, b in [s.between]],
        }


def _round(x: float | None) -> float | None:
    """Nine significant digits, for output."""
    return None if x is None else (0.0 if -1e-9 < x < 1e-9 else float(f"{x:.9g}"))


# ---------------------------------------------------------------------------
# results as SOSA observations
# ---------------------------------------------------------------------------

def result_quads(result: SimulationResult, skeleton: Skeleton, graph: ox.NamedNode,
                 activity: ox.NamedNode | None = None) -> list[ox.Quad]:
    """The result as SOSA observations (values as QUDT quantity values) in ``graph``."""
    sosa = "http://www.w3.org/ns/sosa/"
    qudt = "http://qudt.org/schema/qudt/"
    unit = "http://qudt.org/vocab/unit/"
    rdf_type = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    activity = activity or ox.NamedNode(f"urn:uuid:{uuid.uuid4()}")
    now = datetime_literal(datetime.now(timezone.utc))
    quads: list[ox.Quad] = []

    def add(s: ox.NamedNode | ox.BlankNode, p: str | ox.NamedNode, o: ox.NamedNode | ox.BlankNode | ox.Literal) -> None:
        quads.append(ox.Quad(s, ox.NamedNode(p) if isinstance(p, str) else p, o, graph))

    add(activity, rdf_type, ox.NamedNode(str(DK.Simulation)))
    add(activity, str(DK.onSystem), ox.NamedNode(skeleton.iri))
    add(activity, str(DK.converged), ox.Literal(result.converged))
    add(activity, "http://www.w3.org/ns/prov#endedAtTime", now)

    def observe(feature: str, prop: str, simple: bool | None = None, value: float | None = None,
                unit_name: str | None = None) -> None:
        obs = ox.BlankNode()
        add(obs, rdf_type, ox.NamedNode(sosa + "Observation"))
        add(obs, sosa + "hasFeatureOfInterest", ox.NamedNode(feature))
        add(obs, sosa + "observedProperty", ox.NamedNode(str(prop)))
        add(obs, sosa + "resultTime", now)
        add(obs, "http://www.w3.org/ns/prov#wasGeneratedBy", activity)
        if simple is not None:
            add(obs, sosa + "hasSimpleResult", ox.Literal(simple))
        else:
            assert value is not None and unit_name is not None
            res = ox.BlankNode()
            add(obs, sosa + "hasResult", res)
            add(res, rdf_type, ox.NamedNode(qudt + "QuantityValue"))
            add(res, qudt + "numericValue", ox.Literal(float(value)))
            add(res, qudt + "hasUnit", ox.NamedNode(unit + unit_name))

    for cid, c in result.components.items():
        comp = skeleton.components[cid]
        observe(comp.iri, DK.ElectricCurrent, value=c.current, unit_name="A")
        observe(comp.iri, DK.ElectricPower, value=c.power, unit_name="W")
        if c.lit is not None:
            observe(comp.iri, DK.LightEmission, simple=c.lit)
        for port, volts in c.port_v.items():
            if volts is not None:
                observe(comp.ports[port], DK.ElectricPotential, value=volts, unit_name="V")
    return quads


__all__ = ["ComponentResult", "Damage", "ShortResult", "SimulationResult", "result_quads"]
