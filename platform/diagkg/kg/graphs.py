"""The named-graph convention of the diagkg store.

Every graph name starts with :data:`BASE`. One graph per kind of content and
per thing, so that each can be replaced or dropped on its own:

==========================  ===============================================
graph                       content
==========================  ===============================================
``ontology``                the ontology files (TBox)
``shapes``                  the SHACL shapes
``system/{key}``            one system description (ABox)
``inferred/{key}``          what the reasoner entails for that system
``scenario/{id}``           one scenario
``state/{session}``         a session's circuit state (faults, switches…)
``simulation/{id}``         a recorded simulation's SOSA observations
``trajectory/{id}``         one diagnostic session's record
``evaluation/{id}``         one evaluation run's results
``tally/{id}%2F{a}%2F{n}``  one campaign slot's tally (assistant a on scenario number n; the key
                            ``{id}/{a}/{n}`` is percent-encoded as one segment by :func:`named`)
``cache/{name}``            answers of language models, kept by prompt hash
``optimum/{key}``           the optimal policy of a system (``diagkg optimum``)
``diagnosability/{key}``    what a system's tests tell apart (``diagkg diagnosability``)
``scenarioset/{name}``      named sets of scenarios, a split's lite and held-out sets (``diagkg split``)
``run/{id}``                who runs a campaign now: its run's lease (:mod:`diagkg.evaluation.run_lease`)
``file/{name}``             any other RDF file loaded by hand
==========================  ===============================================
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Protocol
from urllib.parse import quote

import pyoxigraph as ox

from ..errors import ChangedGraph
from .vocab import DK

BASE = "https://w3id.org/diagkg/graph/"
SYSTEM_BASE = "https://w3id.org/diagkg/system/"

KINDS = ("system", "inferred", "scenario", "state", "simulation", "trajectory", "evaluation", "tally", "cache",
         "file", "validation", "optimum", "diagnosability", "scenarioset", "run")

ONTOLOGY = ox.NamedNode(BASE + "ontology")
SHAPES = ox.NamedNode(BASE + "shapes")

_RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def named(kind: str, key: str) -> ox.NamedNode:
    """The graph for one thing of a kind, e.g. ``named("system", "three_cubes")``."""
    if kind not in KINDS:
        raise ValueError(f"unknown graph kind {kind!r}; expected one of {', '.join(KINDS)}")
    if not key:
        raise ValueError("a graph key cannot be empty")
    safe = key if _KEY.match(key) else quote(key, safe="")
    return ox.NamedNode(f"{BASE}{kind}/{safe}")


def system(key: str) -> ox.NamedNode:
    return named("system", key)


def inferred(key: str) -> ox.NamedNode:
    return named("inferred", key)


def kind_of(graph: ox.NamedNode) -> str | None:
    """``"system"`` for a system graph, ``"ontology"`` for the ontology graph, None for foreign graphs."""
    value = graph.value
    if not value.startswith(BASE):
        return None
    rest = value[len(BASE):]
    return rest.split("/", 1)[0]


def system_namespace(key: str) -> str:
    """The namespace of a *shipped* system's parts, e.g. ``https://w3id.org/diagkg/system/three_cubes/``
    (a system written by a user may live anywhere: see :func:`namespace_of`)."""
    return f"{SYSTEM_BASE}{key}/"


def namespace_of(system_iri: str) -> str:
    """The namespace of a system's parts: its IRI up to the last ``/`` or ``#``
    (``https://example.org/torch/torch`` → ``https://example.org/torch/``).
    Parts are named ``<namespace><identifier>``, as the shapes require."""
    cut = max(system_iri.rfind("/"), system_iri.rfind("#"))
    return system_iri[: cut + 1]


def used_versions(subject: ox.NamedNode, base: str, versions: Iterable[tuple[ox.NamedNode, str]]) -> list[ox.Triple]:
    """``subject``'s ``dk:usedVersion``s (a campaign's, a session's), the nodes ``{base}#version-{i}``: each graph it
    was played on (``dk:ofGraph``) with its version then (``dk:contentHash``), which :func:`changed` compares."""
    out: list[ox.Triple] = []
    for i, (graph, version) in enumerate(versions):
        v = ox.NamedNode(f"{base}#version-{i}")
        out += [ox.Triple(subject, DK.usedVersion.node, v), ox.Triple(v, _RDF_TYPE, DK.GraphVersion.node),
                ox.Triple(v, DK.ofGraph.node, graph), ox.Triple(v, DK.contentHash.node, ox.Literal(version))]
    return out


class Versioned(Protocol):
    """What tells a graph's version (:meth:`diagkg.kg.store.KnowledgeStore.version_of`)."""

    def version_of(self, graph: ox.NamedNode) -> str: ...


def changed(store: Versioned, recorded: Iterable[Mapping[str, Any]]) -> list[ChangedGraph]:
    """Of the graphs ``recorded`` (rows of ``graph`` and the ``hash`` of the version it was used at: a campaign's or
    a trajectory's ``dk:usedVersion``s), those the store now holds at another version, or no longer holds."""
    out = []
    for r in recorded:
        now = store.version_of(ox.NamedNode(r["graph"]))
        if now != r["hash"]:
            out.append(ChangedGraph(r["graph"], str(r["hash"]), now))
    return out
