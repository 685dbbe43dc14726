"""The bounds the shapes put on the parameters of each class of part (``queries/parameter-ranges.rq``):
what a description's own values are held to by validation, for the values that do not go through it (a
circuit state's parameter overrides, ``diagkg simulate --state FILE``)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pyoxigraph as ox

from .vocab import DK_NS


@dataclass(frozen=True)
class Bound:
    """One parameter's bounds on one class of part (None: unbounded on that side)."""

    low: float | None
    low_open: bool
    high: float | None
    high_open: bool
    message: str

    def admits(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return not (self.high is not None and (value >= self.high if self.high_open else value > self.high))

    def says(self) -> str:
        """The range in words: ``between 0 and 1``, ``> 0``."""
        low = None if self.low is None else f"{'>' if self.low_open else '≥'} {self.low:g}"
        high = None if self.high is None else f"{'<' if self.high_open else '≤'} {self.high:g}"
        if low and high and not self.low_open and not self.high_open:
            return f"between {self.low:g} and {self.high:g}"
        return " and ".join(x for x in (low, high) if x)


@functools.lru_cache(maxsize=1)
def bounds() -> dict[tuple[str, str], tuple[Bound, ...]]:
    """(class IRI, parameter IRI) -> its bounds (one per shape that holds it), from the shipped shapes and
    ontology (read once a process)."""
    from . import graphs, resources
    from .store import KnowledgeStore

    store = KnowledgeStore.memory()
    try:
        for graph, folder in ((graphs.SHAPES, resources.shape_files()), (graphs.ONTOLOGY, resources.ontology_files())):
            triples = [q.triple for f in folder for q in ox.parse(input=f.read_bytes(), format=ox.RdfFormat.TURTLE)]
            store.replace_graph(graph, triples)
        out: dict[tuple[str, str], tuple[Bound, ...]] = {}
        for r in store.select("parameter-ranges"):
            low = r["minInclusive"] if r["minInclusive"] is not None else r["minExclusive"]
            high = r["maxInclusive"] if r["maxInclusive"] is not None else r["maxExclusive"]
            key = (r["class"], r["parameter"])
            out[key] = (*out.get(key, ()), Bound(None if low is None else float(low), r["minInclusive"] is None,
                                                 None if high is None else float(high), r["maxInclusive"] is None,
                                                 str(r["message"] or "")))
        return out
    finally:
        store.close()


def out_of_range(type_iri: str, parameter: str, value: float) -> Bound | None:
    """The bound ``value`` breaks as parameter ``parameter`` (local name or IRI) of a part of class ``type_iri``,
    or None."""
    iri = parameter if ":" in parameter else DK_NS + parameter
    return next((b for b in bounds().get((type_iri, iri), ()) if not b.admits(value)), None)


__all__ = ["Bound", "bounds", "out_of_range"]
