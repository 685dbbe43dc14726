"""The optimal policy as RDF (ontology/optimum.ttl): what ``diagkg optimum`` stores in ``optimum/{key}``.

::

    <…/optimum/three_cubes/policy> a dk:OptimalPolicy ; dk:policyOf <system> ;
        dk:expectedCost 94.0 ; dk:lowerBound 94.0 ; dk:upperBound 94.0 ; dk:exactOptimum true ;
        dk:priorScenario <scenario>… ; dk:hasStart <…/start-0>… ; dk:hasDecision <…/d0>… ;
        dk:hasScenarioOptimum <…/scenario-1>… .
    <…/start-0> a dk:PolicyStart ; dk:visibleLights "main_bulb is off." ; dk:removedPart "psu_green_led"… ;
        dk:startBudget 10 ; dk:priorProbability 0.2 ; dk:startsWith <…/d0> .
    <…/d0> a dk:PolicyDecision ; dk:decisionDepth 0 ; dk:moveAction "measure_voltage" ; dk:moveTargets "battery" ;
        dk:hasBranch <…/d0-b0>… ; dk:hasCandidate <…/d0-c0>… .
    <…/d0-b0> a dk:PolicyBranch ; dk:onReport "{…}" ; dk:leadsTo <…/d3> .

Only the decisions of the best complete policy are stored (one per belief it reaches).
"""

from __future__ import annotations

import datetime
import math
from typing import TYPE_CHECKING, Callable
from urllib.parse import quote

import pyoxigraph as ox

from ..env.actions import Hypothesis
from ..kg.vocab import DK
from .optimum_search import Node, Search

if TYPE_CHECKING:  # pragma: no cover
    from .optimum_result import Optimum

BASE = "https://w3id.org/diagkg/optimum/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
CREATED = ox.NamedNode("http://purl.org/dc/terms/created")


def _double(x: float) -> ox.Literal:
    return ox.Literal(repr(float(x)), datatype=ox.NamedNode(XSD + "double"))


def _integer(n: int) -> ox.Literal:
    return ox.Literal(str(int(n)), datatype=ox.NamedNode(XSD + "integer"))


def _boolean(b: bool) -> ox.Literal:
    return ox.Literal("true" if b else "false", datatype=ox.NamedNode(XSD + "boolean"))


def policy_iri(key: str) -> str:
    """The IRI of the stored optimal policy of system ``key``."""
    return f"{BASE}{quote(key, safe='')}/policy"


def policy_triples(optimum: Optimum, search: Search) -> list[ox.Triple]:
    """The optimum and its best complete policy as triples (see the module's documentation)."""
    base = f"{BASE}{quote(optimum.system, safe='')}/"
    policy = ox.NamedNode(policy_iri(optimum.system))
    out: list[ox.Triple] = []

    def add(s: ox.NamedNode, p: str, o: ox.NamedNode | ox.Literal) -> None:
        out.append(ox.Triple(s, ox.NamedNode(p), o))

    add(policy, str(RDF_TYPE.value), DK.OptimalPolicy.node)
    add(policy, DK.policyOf, ox.NamedNode(optimum.system_iri))
    add(policy, DK.systemVersion, ox.Literal(optimum.system_version))
    add(policy, DK.lowerBound, _double(optimum.lower))
    if math.isfinite(optimum.upper):
        add(policy, DK.upperBound, _double(optimum.upper))
        add(policy, DK.expectedCost, _double(optimum.upper))
    add(policy, DK.exactOptimum, _boolean(optimum.exact))
    add(policy, DK.perfectInformationCost, _double(optimum.perfect_information))
    if optimum.oracle is not None:
        add(policy, DK.oracleCost, _double(optimum.oracle))
    add(policy, DK.searchSeconds, _double(optimum.seconds))
    add(policy, DK.timeLimitSeconds, _double(optimum.time_limit))
    add(policy, DK.expandedNodes, _integer(optimum.expanded))
    add(policy, DK.seed, _integer(optimum.seed))
    out.append(ox.Triple(policy, CREATED, ox.Literal(datetime.datetime.now(datetime.timezone.utc).isoformat(),
                                                     datatype=ox.NamedNode(XSD + "dateTime"))))
    for s in optimum.scenarios:
        node = ox.NamedNode(f"{base}scenario-{s.number}")
        add(policy, DK.priorScenario, ox.NamedNode(s.iri))
        add(policy, DK.hasScenarioOptimum, node)
        add(node, str(RDF_TYPE.value), DK.ScenarioOptimum.node)
        add(node, DK.optimumOf, ox.NamedNode(s.iri))
        if math.isfinite(s.expected):
            add(node, DK.expectedCost, _double(s.expected))
        if math.isfinite(s.perfect):
            add(node, DK.perfectInformationCost, _double(s.perfect))
        if s.oracle is not None:
            add(node, DK.oracleCost, _double(s.oracle))
    nodes = search.policy_nodes()
    ids = {id(n): ox.NamedNode(f"{base}d{i}") for i, n in enumerate(sorted(nodes, key=lambda n: n.depth))}
    for i, (start, (mass, root)) in enumerate(zip(search.starts, search.roots, strict=True)):
        node = ox.NamedNode(f"{base}start-{i}")
        add(policy, DK.hasStart, node)
        add(node, str(RDF_TYPE.value), DK.PolicyStart.node)
        add(node, DK.visibleLights, ox.Literal(start.visible))
        for part in sorted(start.removed):
            add(node, DK.removedPart, ox.Literal(part))
        for part, looks in sorted(start.stated):
            add(node, DK.statedLight, ox.Literal(f"{part}={looks}"))
        add(node, DK.startBudget, _integer(start.budget))
        add(node, DK.priorProbability, _double(mass))
        if id(root) in ids:
            add(node, DK.startsWith, ids[id(root)])
    for n in nodes:
        _decision(search, n, ids, policy, add)
    return out


def _decision(search: Search, node: Node, ids: dict[int, ox.NamedNode], policy: ox.NamedNode,
              add: Callable[[ox.NamedNode, str, ox.NamedNode | ox.Literal], None]) -> None:
    option = search.chosen(node)
    if option is None:
        return
    me = ids[id(node)]
    add(policy, DK.hasDecision, me)
    add(me, str(RDF_TYPE.value), DK.PolicyDecision.node)
    add(me, DK.decisionDepth, _integer(node.depth))
    move = search.w.moves[option.move]
    if isinstance(move, Hypothesis):
        add(me, DK.moveParts, ox.Literal(" ".join(sorted(move.components))))
    else:
        add(me, DK.moveAction, ox.Literal(move.action))
        add(me, DK.moveTargets, ox.Literal(" ".join(move.targets)))
        if move.value is not None:
            add(me, DK.moveValue, _double(move.value))
    for k, (_, report, child) in enumerate(option.children):
        if id(child) not in ids:
            continue
        branch = ox.NamedNode(f"{me.value}-b{k}")
        add(me, DK.hasBranch, branch)
        add(branch, str(RDF_TYPE.value), DK.PolicyBranch.node)
        add(branch, DK.onReport, ox.Literal(search.w.report_texts[report]))
        add(branch, DK.leadsTo, ids[id(child)])
    weights: dict[str, float] = {}
    for world, p in node.worlds:
        parts = " ".join(sorted(search.w.broken(world)))
        weights[parts] = weights.get(parts, 0.0) + p
    for k, (parts, p) in enumerate(sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))):
        candidate = ox.NamedNode(f"{me.value}-c{k}")
        add(me, DK.hasCandidate, candidate)
        add(candidate, str(RDF_TYPE.value), DK.PolicyCandidate.node)
        add(candidate, DK.diagnosisParts, ox.Literal(parts))
        add(candidate, DK.priorProbability, _double(p))


__all__ = ["BASE", "policy_iri", "policy_triples"]
