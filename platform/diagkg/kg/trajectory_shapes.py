"""A trajectory graph against its shapes, and the slot tallies a changed trajectory leaves stale.

Both the writers of trajectories (:mod:`diagkg.runs.trajectory`) and the one write path of
updates (:mod:`diagkg.kg.revision`) check a trajectory here: ``shapes/trajectory.ttl`` (with
``system.ttl`` for ``dksh:Number``) over the ontology's class hierarchy and individuals, read by
Oxigraph; rdflib and pySHACL are loaded only for a trajectory the compiled shapes cannot clear.
The ontology is given as its hierarchy only, so the unknown-term check (a check beside the shapes,
``dk:UnknownTermConstraintComponent``) is left out: it would not know the ontology's properties.

A campaign's slot tally (``tally/{id}/{assistant}/{n}``) is a pure function of the slot's
trajectories. An update that changes a campaign's trajectory drops the tallies of the slots
it touched in the same write (:func:`stale_tallies`); a report then reads those slots from the
trajectories themselves (the tallies no longer hold every trajectory of the campaign), until
``diagkg report --rebuild`` or a resume of the campaign writes them afresh.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import pyoxigraph as ox

from . import resources
from .vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from .validation import Validator
    from .violations import Violation

UNKNOWN_TERM = f"<{DK.UnknownTermConstraintComponent}>"      # (as rdflib writes it: n3(), without importing it)


@lru_cache(maxsize=1)
def validator() -> "Validator":
    """The validator of trajectories (see the module)."""
    from . import conformance
    from .validation import Validator, _folder_triples

    shapes: list[ox.Triple] = []
    prefixes: dict[str, str] = {}
    explicit = False
    for f in resources.shape_files():
        if f.name in ("system.ttl", "trajectory.ttl"):
            text = f.read_text(encoding="utf-8")
            parser = ox.parse(input=text.encode("utf-8"), format=ox.RdfFormat.TURTLE)
            shapes += [q.triple for q in parser]
            prefixes.update(parser.prefixes)
            explicit = explicit or conformance.EXPLICIT_STRING.search(text) is not None
    full, onto_explicit = _folder_triples("ontology")
    kept = (ox.NamedNode(conformance.RDF_TYPE), ox.NamedNode(conformance.SUBCLASS))   # hierarchy and individuals
    return Validator.of_triples((shapes, explicit), ([t for t in full if t.predicate in kept], onto_explicit),
                                prefixes=prefixes)


def violations(triples: Sequence[ox.Triple], name: str, prefixes: Mapping[str, str] | None = None) -> list["Violation"]:
    """How the trajectory made of ``triples`` breaks its shapes, located in the document Oxigraph
    writes of them (Turtle with ``prefixes``) and named ``name``; empty: it conforms."""
    from .rdfio import document_of

    found = validator().validate_documents([document_of(list(triples), name, prefixes)])[name]
    return [v for v in found if v.component != UNKNOWN_TERM]


def _slots(triples: Iterable[ox.Triple]) -> set[tuple[ox.NamedNode, str, ox.NamedNode]]:
    """The (campaign, assistant name, scenario) slots a trajectory graph's content puts it in."""
    triples = list(triples)
    campaigns = {t.subject for t in triples if t.predicate.value == str(DK.hasTrajectory)
                 and isinstance(t.subject, ox.NamedNode)}
    assistants = {t.object.value for t in triples if t.predicate.value == str(DK.assistantName)
                  and isinstance(t.object, ox.Literal)}
    scenarios = {t.object for t in triples if t.predicate.value == str(DK.onScenario) and isinstance(t.object, ox.NamedNode)}
    return {(c, a, s) for c in campaigns for a in assistants for s in scenarios}


def stale_tallies(raw: ox.Store, before: Iterable[ox.Triple], after: Iterable[ox.Triple]) -> set[str]:
    """The tally graphs (keys) of the slots a trajectory was in before a change and is in after it."""
    out: set[str] = set()
    tally_of, assistant_name, scenario_of = (ox.NamedNode(str(DK.tallyOf)), ox.NamedNode(str(DK.assistantName)),
                                             ox.NamedNode(str(DK.tallyScenario)))
    for campaign, assistant, scenario in _slots(before) | _slots(after):
        for q in raw.quads_for_pattern(None, tally_of, campaign, None):
            g = q.graph_name
            if not isinstance(g, ox.NamedNode):
                continue
            if (next(raw.quads_for_pattern(q.subject, assistant_name, ox.Literal(assistant), g), None) is not None
                    and next(raw.quads_for_pattern(q.subject, scenario_of, scenario, g), None) is not None):
                out.add(g.value)
    return out
