"""The inferred triples of a system description, kept in a cache folder by the digest of the
description and the ontology they follow from (derived data: the same inputs always give the
same triples). :mod:`diagkg.kg.loading` stores them in ``inferred/{key}``."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyoxigraph as ox

if TYPE_CHECKING:  # pragma: no cover
    import rdflib

# part of every inference digest (:func:`diagkg.kg.loading.inference_digest`): raised when the reasoning
# itself changes what it entails, so that neither this folder nor a store's inferred graphs are reused.
# 2: HermiT's results completed by the description's own axioms too (a user's class under dk:Bulb)
# 3: the ontology module keeps an ontology term's IRI-valued annotations (dk:Bulb dk:readsParameter …)
# 4: the whole ontology for a description with an axiom of its own that can reach the ontology's
#    individuals it never names (dk:Verdict rdfs:subClassOf [ owl:oneOf ( :me ) ] made no verdict of :me)
# 5: the OWL-RL rules refuse an inconsistent description (its contradictions were dropped with the closure)
REASONING_VERSION = 5


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "diagkg" / "inferred"


def cached_inferences(digest: str) -> list[ox.Triple] | None:
    """The inferred triples kept in the cache folder under ``digest``, if any."""
    cached = _cache_dir() / f"{digest}.nt"
    if not cached.is_file():
        return None
    try:
        return [q.triple for q in ox.parse(input=cached.read_bytes(), format=ox.RdfFormat.N_TRIPLES)]
    except (SyntaxError, OSError):
        return None     # a damaged cache entry: compute again


def inferred_triples(data: rdflib.Graph, digest: str, engine: str = "auto", use_cache: bool = True) -> list[ox.Triple]:
    """What the reasoner entails about a system description (an rdflib graph);
    kept in a cache folder under ``digest`` (derived data: the same inputs
    always give the same triples), read from it first unless not ``use_cache``."""
    from .rdfio import to_oxigraph_triple
    from .reasoning import reason

    found = cached_inferences(digest) if use_cache else None
    if found is not None:
        return found
    with _one_at_a_time(digest):     # processes reasoning over the same description: one works, the others read
        found = cached_inferences(digest) if use_cache else None
        if found is not None:
            return found
        triples = [to_oxigraph_triple(triple) for triple in reason(data, engine=engine)]
        _keep(digest, triples)
        return triples


def inferred_together(items: list[tuple[rdflib.Graph, str]]) -> list[list[ox.Triple]]:
    """:func:`inferred_triples` of several system descriptions (each with its digest): those the cache
    folder does not hold are reasoned over in one run (:func:`~diagkg.kg.reasoning.reason_together`),
    and each is kept under its own digest."""
    from .rdfio import to_oxigraph_triple
    from .reasoning import reason_together

    out: dict[str, list[ox.Triple]] = {}
    with contextlib.ExitStack() as held:
        for digest in sorted({d for _, d in items}):      # always in one order: two processes never deadlock
            found = cached_inferences(digest)
            if found is None:
                held.enter_context(_one_at_a_time(digest))
                found = cached_inferences(digest)         # another process may have kept it meanwhile
            if found is not None:
                out[digest] = found
        todo = list({d: g for g, d in items if d not in out}.items())
        for (digest, _), facts in zip(todo, reason_together([g for _, g in todo]), strict=True):
            out[digest] = [to_oxigraph_triple(triple) for triple in facts]
            _keep(digest, out[digest])
    return [out[d] for _, d in items]


def _keep(digest: str, triples: list[ox.Triple]) -> None:
    """Write ``triples`` into the cache folder under ``digest`` (in one step: a reader never sees half)."""
    cached = _cache_dir() / f"{digest}.nt"
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=cached.parent, delete=False, suffix=".tmp") as fh:
            fh.write(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"")
        os.replace(fh.name, cached)
    except OSError:   # pragma: no cover - an unwritable cache only costs time
        pass


@contextlib.contextmanager
def _one_at_a_time(digest: str) -> Iterator[None]:
    """Hold the cache folder's lock file of ``digest`` (an advisory lock, released with the process), so
    that of the processes reasoning over one description at once (a campaign's workers, a test run's),
    one reasons and the others wait and read what it kept. Without a usable cache folder, nothing."""
    try:
        folder = _cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / f"{digest}.lock", "a+b")     # noqa: SIM115 - held for the block
    except OSError:   # pragma: no cover - an unwritable cache only costs time
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


__all__ = ["cached_inferences", "inferred_triples"]
