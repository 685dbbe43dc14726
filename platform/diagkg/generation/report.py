"""A diagnosability report as people read it (Markdown, HTML) and as the store keeps it (RDF).

The Markdown and the HTML say the same: fault resolution, ambiguity groups,
the cheapest sequence of actions that separates each pair of faults (pairs the
lights at the start already tell apart are counted, not listed: no action is
needed), the faults a person does not notice with the cheapest action that
shows them, and the fault modes that cannot be placed. The RDF
(``diagnosability/KEY``, ontology/generation.ttl, shapes/generation.ttl) holds
the same figures, groups, separations and unnoticed faults.
"""

from __future__ import annotations

from collections import Counter
from importlib import resources
from typing import TYPE_CHECKING, Any, Sequence

import jinja2
import pyoxigraph as ox

from ..kg import graphs
from ..kg.vocab import DK, DK_NS

if TYPE_CHECKING:  # pragma: no cover
    import rdflib

    from ..env.actions import Action
    from ..env.scenarios import Fault
    from ..kg.store import KnowledgeStore
    from .diagnosability import Diagnosability

REPORT_BASE = "https://w3id.org/diagkg/diagnosability/"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
XSD = "http://www.w3.org/2001/XMLSchema#"


def steps_text(steps: tuple[Action, ...]) -> str:
    return "the lights at the start" if not steps else " then ".join(str(a) for a in steps)


def _percent(x: float) -> str:
    return f"{100 * x:.1f} %"


def content(report: Diagnosability) -> dict[str, Any]:
    """What the report says, as plain data (the Markdown and HTML render it)."""
    shares, weighted = report.resolution(), report.resolution(weighted=True)
    acted = sorted((s for s in report.separations.values() if s.steps), key=lambda s: (s.a, s.b))
    by_length = Counter(len(s.steps) for s in report.separations.values())
    by_first = Counter(steps_text(s.steps) for s in acted)
    pairs = len(report.faults) * (len(report.faults) - 1) // 2
    return {
        "key": report.key, "depth": report.depth, "faults": len(report.faults), "probes": report.probes,
        "steps": report.steps, "exhausted": report.exhausted, "unnoticed_count": len(report.unnoticed),
        "resolution": [{"parts": label, "share": _percent(a), "weighted": _percent(b)}
                       for label, a, b in zip(("1 part", "≤ 2 parts", "≤ 3 parts"), shares, weighted, strict=True)],
        "groups": [{"faults": list(g.members), "parts": sorted(g.parts)} for g in report.groups if len(g.members) > 1],
        "singletons": sum(1 for g in report.groups if len(g.members) == 1),
        "pairs": pairs, "apart": len(report.separations), "at_start": by_length.get(0, 0),
        "by_length": [{"length": n, "pairs": by_length.get(n, 0)} for n in range(1, report.depth + 1)],
        "top": [{"steps": text, "pairs": n} for text, n in by_first.most_common(10)],
        "separations": [{"a": s.a, "b": s.b, "steps": steps_text(s.steps), "minutes": f"{s.minutes:g}"} for s in acted],
        "unnoticed": [{"fault": u.fault, "why": u.reason.value,
                       "shown_by": str(u.revealed_by) if u.revealed_by else "nothing tried",
                       "minutes": f"{u.minutes:g}" if u.minutes is not None else "—"} for u in report.unnoticed],
        "unplaced": [{"mode": u.mode, "why": u.reason} for u in report.unplaced],
    }


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    def cell(x: str) -> str:
        return str(x).replace("|", "\\|")
    return ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |",
            *("| " + " | ".join(cell(x) for x in row) + " |" for row in rows)]


def markdown(report: Diagnosability) -> str:
    c = content(report)
    out = [f"# Diagnosability of {c['key']}", "",
           f"{c['faults']} single faults of the fault catalogue are noticed by a person on this system; "
           f"{c['unnoticed_count']} are not (listed below). {c['probes']} probes (catalogue actions on their "
           f"targets) were tried on every pair of noticed faults, and sequences of up to {c['depth']} on the parts "
           f"a group's faults touch and their neighbours; {c['steps']} simulated steps."
           + (" The budget of steps ran out: some groups were not searched to the end." if c["exhausted"] else ""),
           "", "## Fault resolution", "",
           "The share of noticed faults whose ambiguity group makes at most so many replaceable parts faulty.", "",
           *_table(["isolated to", "share of faults", "weighted by prior"],
                   [[r["parts"], r["share"], r["weighted"]] for r in c["resolution"]]),
           "", "## Ambiguity groups", ""]
    if c["groups"]:
        out += ["Faults that no sequence of actions tried tells apart:", "",
                *_table(["faults", "faulty parts"], [[", ".join(g["faults"]), ", ".join(g["parts"])] for g in c["groups"]])]
    else:
        out.append("None: every noticed fault is told apart from every other.")
    out += ["", f"{c['singletons']} faults are told apart from every other.", "",
            "## The cheapest actions that separate two faults", "",
            f"Of {c['pairs']} pairs of noticed faults, {c['apart']} are told apart: {c['at_start']} by the lights at "
            "the start (no action needed), "
            + ", ".join(f"{r['pairs']} by {r['length']} action{'s' if r['length'] > 1 else ''}" for r in c["by_length"])
            + ".", "", "The actions that separate the most pairs:", "",
            *_table(["cheapest separating actions", "pairs"], [[r["steps"], str(r["pairs"])] for r in c["top"]]),
            "", "Every pair that needs an action:", "",
            *_table(["fault", "fault", "cheapest separating actions", "minutes"],
                    [[s["a"], s["b"], s["steps"], s["minutes"]] for s in c["separations"]]),
            "", "## Faults a person does not notice", "",
            "Left out by `diagkg generate`: every lamp looks as in the working system (unseen), or only an "
            "indicator changes while the system works (working).", ""]
    out += _table(["fault", "why", "cheapest action that shows it", "minutes"],
                  [[u["fault"], u["why"], u["shown_by"], u["minutes"]] for u in c["unnoticed"]]) if c["unnoticed"] \
        else ["None."]
    if c["unplaced"]:
        out += ["", "## Fault modes not placed", "", *_table(["mode", "why"], [[u["mode"], u["why"]] for u in c["unplaced"]])]
    return "\n".join(out) + "\n"


def html(report: Diagnosability) -> str:
    text = resources.files("diagkg").joinpath("templates", "diagnosability.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(text).render(**content(report))


# ---------------------------------------------------------------------------
# RDF
# ---------------------------------------------------------------------------

def graph_of(key: str) -> ox.NamedNode:
    return graphs.named("diagnosability", key)


def triples(report: Diagnosability, system_iri: str, catalogue: dict[str, str]) -> list[ox.Triple]:
    """The report as RDF (``catalogue``: action ids to their action types' IRIs)."""
    base = REPORT_BASE + report.key
    node = ox.NamedNode(base)
    out: list[ox.Triple] = []

    def add(s: ox.NamedNode | ox.BlankNode, p: str, o: ox.NamedNode | ox.BlankNode | ox.Literal) -> None:
        out.append(ox.Triple(s, ox.NamedNode(p) if isinstance(p, str) else p, o))

    def lit(value: object, datatype: str) -> ox.Literal:
        return ox.Literal(str(value).lower() if isinstance(value, bool) else str(value), datatype=ox.NamedNode(XSD + datatype))

    names: dict[str, ox.NamedNode] = {}

    def fault(key: str, f: Fault | None) -> ox.NamedNode:
        if key not in names:
            n = names[key] = ox.NamedNode(f"{base}#fault-{len(names) + 1}")
            out.append(ox.Triple(n, RDF_TYPE, DK.Fault.node))
            out.append(ox.Triple(n, RDFS_LABEL, ox.Literal(key)))
            if f is not None:
                add(n, DK.faultMode, ox.NamedNode(DK_NS + f.mode))
                add(n, DK.faultTarget, ox.NamedNode(f.target))
                if f.other:
                    add(n, DK.otherTarget, ox.NamedNode(f.other))
        return names[key]

    def of(key: str) -> ox.NamedNode:
        look = report.looks.get(key)
        return fault(key, look.placement.faults[0] if look and look.placement.faults else None)

    def action(a: Action, position: int) -> ox.BlankNode:
        step = ox.BlankNode()
        out.append(ox.Triple(step, RDF_TYPE, DK.DiagnosticAction.node))
        add(step, DK.position, lit(position, "integer"))
        add(step, DK.actionType, ox.NamedNode(catalogue[a.action]))
        for t in a.targets:
            add(step, DK.target, ox.NamedNode(system_iri[: max(system_iri.rfind("/"), system_iri.rfind("#")) + 1] + t))
        return step

    out.append(ox.Triple(node, RDF_TYPE, DK.DiagnosabilityReport.node))
    add(node, DK.onSystem, ox.NamedNode(system_iri))
    add(node, DK.actionDepth, lit(report.depth, "integer"))
    add(node, DK.faultsConsidered, lit(len(report.faults), "integer"))
    for term, share in zip((DK.isolatedToOne, DK.isolatedToTwo, DK.isolatedToThree), report.resolution(), strict=True):
        add(node, term, lit(round(share, 6), "decimal"))
    for i, g in enumerate(report.groups, 1):
        gn = ox.NamedNode(f"{base}#group-{i}")
        add(node, DK.ambiguityGroup, gn)
        out.append(ox.Triple(gn, RDF_TYPE, DK.AmbiguityGroup.node))
        add(gn, DK.replaceableParts, lit(len(g.parts), "integer"))
        for m in g.members:
            add(gn, DK.groupMember, of(m))
    for i, s in enumerate(sorted(report.separations.values(), key=lambda s: (s.a, s.b)), 1):
        if not s.steps:
            continue
        sn = ox.NamedNode(f"{base}#separation-{i}")
        add(node, DK.separation, sn)
        out.append(ox.Triple(sn, RDF_TYPE, DK.Separation.node))
        add(sn, DK.separates, of(s.a))
        add(sn, DK.separates, of(s.b))
        add(sn, DK.costMinutes, lit(s.minutes, "decimal"))
        for position, a in enumerate(s.steps, 1):
            add(sn, DK.separatingStep, action(a, position))
    for u in report.unnoticed:
        un = of(u.fault)
        add(node, DK.unnoticedFault, un)
        if u.revealed_by is not None:
            add(un, DK.revealedBy, action(u.revealed_by, 1))
    add(node, DK.pairsSeenAtStart, lit(sum(1 for s in report.separations.values() if not s.steps), "integer"))
    return out




def checked(triples_: list[ox.Triple], name: str, context: Sequence[rdflib.Graph] = ()) -> list[ox.Triple]:
    """``triples_`` once they conform to the shapes (:class:`~diagkg.errors.ValidationError`
    with every violation otherwise): what diagkg writes is held to the shapes as a user's file is
    (``context``: the system it is about)."""
    from ..errors import ValidationError
    from ..kg.rdfio import document_of
    from ..kg.validation import Validator

    violations = Validator().validate_document(document_of(triples_, name), context)
    if violations:
        raise ValidationError(violations)
    return triples_


def store(target: KnowledgeStore, report: Diagnosability, system_iri: str, catalogue: dict[str, str],
          system: rdflib.Graph) -> ox.NamedNode:
    """Validate the report's RDF (``system``: the description it is about) and keep it in
    ``diagnosability/KEY``, replacing an older one."""
    graph = graph_of(report.key)
    target.write_graphs({graph: checked(triples(report, system_iri, catalogue), graph.value, [system])})
    return graph


__all__ = ["REPORT_BASE", "checked", "content", "graph_of", "html", "markdown", "store", "triples"]
