"""``diagkg split``: a small *lite* set of scenarios that stands for a large one, and the
held-out rest, kept in the store as named sets (``evaluate --scenarios set:NAME``).

Scenarios are grouped into strata by system, number of faults and whether a
fault is left to chance (all read from the scenarios). Each system gets about
``per_system`` lite scenarios, shared among its strata in proportion to their
size (largest remainders; every stratum gets one while there is room). Within
a stratum the scenarios are ordered by how much their ideal repair involves
(steps, parts named faulty), then by fault mode and identifier, and picked at
even spacing from an offset drawn by seed, so the lite set spreads over the
stratum's fault modes and repair sizes. Whether the lite set ranks assistants
as the whole set does is measured, not assumed: ``benchmarks/splits.py``.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyoxigraph as ox

from ..kg import graphs
from ..kg.vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Scenario
    from ..kg.store import KnowledgeStore

SET_BASE = "https://w3id.org/diagkg/scenarioset/"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
XSD_INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
STRATA = "system, number of faults, fault left to chance"


def stratum(s: Scenario) -> tuple[str, int, bool]:
    return s.key, len(s.faults), any(f.probability is not None for f in s.faults)


@dataclass(frozen=True)
class Split:
    """A lite set and the held-out rest (scenario numbers), with the strata they came from."""

    name: str
    seed: int
    lite: tuple[int, ...]
    held_out: tuple[int, ...]
    strata: dict[tuple[str, int, bool], tuple[int, int]]     # stratum -> (scenarios, picked)

    @property
    def lite_name(self) -> str:
        return f"{self.name}-lite"

    @property
    def held_out_name(self) -> str:
        return f"{self.name}-held-out"


def _shares(sizes: dict[tuple[str, int, bool], int], total: int) -> dict[tuple[str, int, bool], int]:
    """``total`` picks shared in proportion to ``sizes`` (largest remainders), one per stratum first
    while there is room, never more than a stratum holds."""
    total = min(total, sum(sizes.values()))
    out = {k: 0 for k in sizes}
    order = sorted(sizes, key=lambda k: (-sizes[k], k))
    for k in order[:total]:
        out[k] = 1
    left = total - sum(out.values())
    if left > 0:
        whole = sum(sizes.values())
        exact = {k: (total * sizes[k] / whole) - out[k] for k in sizes}
        for k in sizes:
            extra = min(max(0, math.floor(exact[k])), sizes[k] - out[k])
            out[k] += extra
        left = total - sum(out.values())
        for k in sorted(sizes, key=lambda k: (-(exact[k] - math.floor(exact[k])), k)):
            if left <= 0:
                break
            if out[k] < sizes[k]:
                out[k] += 1
                left -= 1
    return out


def split(scenarios: list[Scenario], name: str, per_system: int = 20, seed: int = 0) -> Split:
    """A stratified lite set of about ``per_system`` scenarios per system, and the rest."""
    if not NAME.match(name):
        from ..errors import InputError

        raise InputError(f"a set name is letters, digits, '_', '.' and '-' (starting with a letter or digit), "
                         f"not {name!r}")
    rng = random.Random(seed)
    groups: dict[tuple[str, int, bool], list[Scenario]] = defaultdict(list)
    for s in scenarios:
        groups[stratum(s)].append(s)
    picked: list[int] = []
    strata: dict[tuple[str, int, bool], tuple[int, int]] = {}
    for system in sorted({k[0] for k in groups}):
        mine = {k: len(v) for k, v in groups.items() if k[0] == system}
        for k, n in sorted(_shares(mine, per_system).items()):
            members = sorted(groups[k], key=lambda s: (len(s.repair), len(s.faulty), s.faults[0].mode if s.faults
                                                       else "", s.id))
            if n:
                step = len(members) / n
                offset = rng.random() * step
                picked += [members[min(len(members) - 1, int(offset + i * step))].number for i in range(n)]
            strata[k] = (len(members), n)
    lite = tuple(sorted(set(picked)))
    rest = tuple(sorted(s.number for s in scenarios if s.number not in set(lite)))
    return Split(name, seed, lite, rest, strata)


def graph_of(name: str) -> ox.NamedNode:
    return graphs.named("scenarioset", name)


def triples(result: Split, iris: dict[int, str]) -> list[ox.Triple]:
    """Both sets as RDF (``iris``: scenario numbers to their IRIs)."""
    lite, rest = ox.NamedNode(SET_BASE + result.lite_name), ox.NamedNode(SET_BASE + result.held_out_name)
    out: list[ox.Triple] = []
    for node, set_name, members, other in ((lite, result.lite_name, result.lite, rest),
                                           (rest, result.held_out_name, result.held_out, lite)):
        out.append(ox.Triple(node, RDF_TYPE, DK.ScenarioSet.node))
        out.append(ox.Triple(node, DK.setName.node, ox.Literal(set_name)))
        out.append(ox.Triple(node, DK.stratum.node, ox.Literal(STRATA)))
        out.append(ox.Triple(node, DK.splitSeed.node, ox.Literal(str(result.seed), datatype=XSD_INTEGER)))
        out += [ox.Triple(node, DK.setMember.node, ox.NamedNode(iris[n])) for n in members]
        out.append(ox.Triple(node, DK.complementOf.node, other))
    return out


def store(target: KnowledgeStore, result: Split, iris: dict[int, str]) -> ox.NamedNode:
    """Validate both sets and keep them in ``scenarioset/NAME`` (replacing an older split of that name)."""
    from .report import checked

    graph = graph_of(result.name)
    target.write_graphs({graph: checked(triples(result, iris), graph.value)})
    return graph


__all__ = ["SET_BASE", "STRATA", "Split", "graph_of", "split", "store", "stratum", "triples"]
