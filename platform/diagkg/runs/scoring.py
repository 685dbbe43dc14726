"""How well a session diagnosed, as data: figures computed from its rounds and the scenario's
injected faults, recorded in the trajectory (``dk:falseRemovals``, ``dk:diagnosisPrecision``…)
and read back by the queries and the reports.

* **false removals** — healthy parts replaced (a repair used as a probe) or named in a
  hypothesis, one per part and round (:attr:`diagkg.env.outcomes.Outcome.healthy`);
* **precision and recall of the diagnosis** against the parts faulty at the start: those the
  scenario injected faults into and those the faults damaged at once (a fuse a short blew, which a
  correct hypothesis names too; against the injected parts alone, naming it halved precision):
  the diagnosis is every part named by a hypothesis judged *correct* or *partial*
  (what the assistant established), else the last hypothesis it stated; precision is None
  when it named nothing;
* **rounds and minutes to isolate** — the round of the correct hypothesis and the minutes
  spent up to and including it (None without one).

Only a correct hypothesis is a diagnosis: ``diagnosed`` says whether the session has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import pyoxigraph as ox

from ..env.outcomes import Kind, Verdict
from ..kg.vocab import DK
from .rounds import Round

XSD = "http://www.w3.org/2001/XMLSchema#"
INTEGER = ox.NamedNode(XSD + "integer")

ESTABLISHED = (Verdict.CORRECT, Verdict.PARTIAL)


@dataclass(frozen=True)
class DiagnosisScore:
    """A session's diagnosis figures (see the module)."""

    false_removals: int
    precision: float | None
    recall: float | None
    rounds_to_isolate: int | None
    minutes_to_isolate: float | None
    diagnosed: bool

    def to_json(self) -> dict[str, Any]:
        return {"false_removals": self.false_removals, "precision": self.precision, "recall": self.recall,
                "rounds_to_isolate": self.rounds_to_isolate, "minutes_to_isolate": self.minutes_to_isolate,
                "diagnosed": self.diagnosed}


def score(injected: Iterable[str], rounds: Iterable[Mapping[str, Any]]) -> DiagnosisScore:
    """The figures of a session from its rounds (the runner's :class:`~diagkg.runs.rounds.Round` records, or
    plain entries read as rounds: their ``kind``, ``verdict``, ``suspects``, ``cost``, ``round`` and
    ``healthy``) and the parts faulty at the start (:func:`~diagkg.env.verification.faulty_at_start`)."""
    faulty = frozenset(injected)
    false_removals = 0
    established: set[str] = set()
    last_named: frozenset[str] | None = None
    spent = 0.0
    rounds_to_isolate: int | None = None
    minutes_to_isolate: float | None = None
    for r in map(Round.of, rounds):
        spent += r.cost
        false_removals += len(r.healthy)
        if r.kind is not Kind.HYPOTHESIS:
            continue
        named = frozenset(p.split(".", 1)[0] for p in r.suspects or ())
        last_named = named
        if r.verdict in ESTABLISHED:
            established |= named
        if r.verdict is Verdict.CORRECT and rounds_to_isolate is None:
            rounds_to_isolate, minutes_to_isolate = r.number, spent
    diagnosis = frozenset(established) if established else (last_named or frozenset())
    hits = len(diagnosis & faulty)
    precision = hits / len(diagnosis) if diagnosis else None
    recall = hits / len(faulty) if faulty else None
    return DiagnosisScore(false_removals, precision, recall, rounds_to_isolate, minutes_to_isolate,
                          rounds_to_isolate is not None)


def triples(figures: DiagnosisScore, session: ox.NamedNode) -> list[ox.Triple]:
    """The figures as statements about the trajectory's session node (absent figures are left out)."""
    out = [ox.Triple(session, DK.falseRemovals.node, ox.Literal(str(figures.false_removals),
                                                                  datatype=ox.NamedNode(XSD + "integer")))]
    for prop, value, kind in ((DK.diagnosisPrecision, figures.precision, "double"),
                              (DK.diagnosisRecall, figures.recall, "double"),
                              (DK.roundsToIsolate, figures.rounds_to_isolate, "integer"),
                              (DK.minutesToIsolate, figures.minutes_to_isolate, "double")):
        if value is not None:
            text = str(int(value)) if kind == "integer" else repr(float(value))
            out.append(ox.Triple(session, prop.node, ox.Literal(text, datatype=ox.NamedNode(XSD + kind))))
    return out


__all__ = ["DiagnosisScore", "score", "triples"]
