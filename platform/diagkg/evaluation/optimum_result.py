"""What working out a system's optimum gives (:func:`diagkg.evaluation.optimum.solve`): its bounds,
its figures per scenario and the search's effort; stored as RDF by
:mod:`~diagkg.evaluation.optimum_rdf`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pyoxigraph as ox


@dataclass(frozen=True)
class ScenarioFigures:
    """One scenario of the prior: the policy's expected cost there, its perfect-information bound and
    the oracle's cost (None when the oracle's plan does not end in success)."""

    number: int
    id: str
    iri: str
    expected: float
    perfect: float
    oracle: float | None


@dataclass
class Optimum:
    """The optimum of a system as worked out: its bounds, figures per scenario, and the search's effort."""

    system: str
    system_iri: str
    system_version: str
    lower: float
    upper: float
    exact: bool
    scenarios: list[ScenarioFigures]
    seconds: float
    time_limit: float
    seed: int
    expanded: int
    nodes: int
    steps: int
    moves: int
    starts: int
    triples: list[ox.Triple] = field(default_factory=list, repr=False)

    @property
    def expected_cost(self) -> float:
        """The stored policy's expected cost (the upper bound; infinite when no complete policy was found)."""
        return self.upper

    @property
    def perfect_information(self) -> float:
        return sum(s.perfect for s in self.scenarios) / len(self.scenarios)

    @property
    def oracle(self) -> float | None:
        known = [s.oracle for s in self.scenarios]
        return None if any(v is None for v in known) else sum(v for v in known if v is not None) / len(known)

    @property
    def gap(self) -> float:
        """How far the bounds are apart, relative to the lower one (0 when exact)."""
        if self.exact:
            return 0.0
        return (self.upper - self.lower) / self.lower if self.lower > 0 else math.inf

    def to_json(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else round(x, 6)

        return {"system": self.system, "expected_cost": num(self.expected_cost), "lower": num(self.lower),
                "upper": num(self.upper), "exact": self.exact, "gap": num(self.gap),
                "perfect_information": num(self.perfect_information), "oracle": num(self.oracle),
                "scenarios": len(self.scenarios), "seconds": round(self.seconds, 2), "time_limit": self.time_limit,
                "seed": self.seed, "expanded": self.expanded, "nodes": self.nodes, "steps": self.steps,
                "moves": self.moves, "starts": self.starts,
                "per_scenario": [{"scenario": s.number, "id": s.id, "expected": num(s.expected),
                                  "perfect": num(s.perfect), "oracle": num(s.oracle)} for s in self.scenarios]}


__all__ = ["Optimum", "ScenarioFigures"]
