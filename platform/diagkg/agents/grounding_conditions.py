"""Hypotheses an assistant states with the observations they predict, judged as reports arrive.

A stated hypothesis names the parts thought faulty and its *conditions*: what an
action on a part will report (``test_continuity`` of ``bulb``: ``verdict`` ``open``). Each
condition is **supported** when a report of that action on that part shows the predicted
value (numbers within the meter's tolerance, :mod:`.grounding_observed`), **contradicted** when it
shows another, and **open** until then — judged at once against what the session has
already reported, then against every new report (the latest report decides). A
hypothesis is **refuted** when any of its conditions is contradicted, **confirmed** when
at least one is supported and none contradicted, **open** otherwise (the statuses of the
platform's hypothesis ledger, :mod:`diagkg.runs.ledger`, which judges hypotheses by
simulation after the session; here the conditions are the assistant's own).

An intervention (an action with ``dk:isIntervention``, or the verification of a
hypothesis, which repairs the parts it names) is **backed** when a confirmed hypothesis
names each part it mends — the ledger's rule; :meth:`ConditionLedger.unbacked` lists the
parts that are not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Iterable, Mapping

from .grounding_observed import Reading, Tolerance, Value, matches, readings


class ConditionStatus(StrEnum):
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    OPEN = "open"


class HypothesisStatus(StrEnum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    OPEN = "open"


@dataclass(frozen=True)
class Prediction:
    """What ``action`` on ``target`` will report: ``value`` at ``reading`` (a dotted path)."""

    action: str
    target: str
    reading: str
    value: Value

    def concerns(self, r: Reading) -> bool:
        return r.action == self.action and r.part == self.target and r.path == self.reading


@dataclass
class Condition:
    prediction: Prediction
    status: ConditionStatus = ConditionStatus.OPEN
    resolved_at: int | None = None          # the round of the report that decided it
    observed: Value | None = None


@dataclass
class StatedHypothesis:
    number: int                              # 1, 2… in the order stated
    stated_at: int                           # the round during which it was stated
    parts: frozenset[str]
    conditions: list[Condition] = field(default_factory=list)

    @property
    def status(self) -> HypothesisStatus:
        statuses = {c.status for c in self.conditions}
        if ConditionStatus.CONTRADICTED in statuses:
            return HypothesisStatus.REFUTED
        if ConditionStatus.SUPPORTED in statuses:
            return HypothesisStatus.CONFIRMED
        return HypothesisStatus.OPEN

    def to_json(self) -> dict[str, Any]:
        """What the prompts say of it."""
        return {"number": self.number, "parts": sorted(self.parts), "status": self.status.value,
                "conditions": [{"action": c.prediction.action, "target": c.prediction.target,
                                "reading": c.prediction.reading, "predicted": c.prediction.value,
                                "status": c.status.value, "observed": c.observed, "round": c.resolved_at}
                               for c in self.conditions]}


class ConditionLedger:
    """The hypotheses stated in one session and what the reports say of them."""

    def __init__(self, tolerance: Tolerance | None = None):
        self.tolerance = tolerance or Tolerance()
        self.hypotheses: list[StatedHypothesis] = []
        self.seen: list[Reading] = []

    def state(self, parts: Iterable[str], predictions: Iterable[Prediction], round_: int) -> StatedHypothesis:
        """Add a hypothesis, judged at once against every report so far."""
        h = StatedHypothesis(len(self.hypotheses) + 1, round_, frozenset(parts),
                             [Condition(p) for p in predictions])
        for r in self.seen:
            self._judge(h, r)
        self.hypotheses.append(h)
        return h

    def observe(self, outcome: Mapping[str, Any]) -> list[tuple[StatedHypothesis, Condition]]:
        """Judge every hypothesis's conditions against the report of one round; the
        conditions whose status changed."""
        changed: list[tuple[StatedHypothesis, Condition]] = []
        for r in readings(outcome):
            self.seen.append(r)
            for h in self.hypotheses:
                changed.extend((h, c) for c in self._judge(h, r))
        return changed

    def _judge(self, h: StatedHypothesis, r: Reading) -> list[Condition]:
        changed = []
        for c in h.conditions:
            if not c.prediction.concerns(r):
                continue
            status = (ConditionStatus.SUPPORTED if matches(c.prediction.value, r, self.tolerance)
                      else ConditionStatus.CONTRADICTED)
            if status is not c.status or c.observed != r.value:
                c.status, c.resolved_at, c.observed = status, r.round, r.value
                changed.append(c)
        return changed

    def confirmed(self) -> list[StatedHypothesis]:
        return [h for h in self.hypotheses if h.status is HypothesisStatus.CONFIRMED]

    def unbacked(self, parts: Iterable[str]) -> list[str]:
        """The parts of an intervention that no confirmed hypothesis names."""
        named = set().union(*(h.parts for h in self.confirmed())) if self.confirmed() else set()
        return sorted(p for p in set(parts) if p not in named)

    def ranked(self) -> list[frozenset[str]]:
        """The stated hypotheses as candidate diagnoses: confirmed, then open, latest first."""
        order = {HypothesisStatus.CONFIRMED: 0, HypothesisStatus.OPEN: 1, HypothesisStatus.REFUTED: 2}
        alive = [h for h in self.hypotheses if h.status is not HypothesisStatus.REFUTED]
        out: list[frozenset[str]] = []
        for h in sorted(alive, key=lambda h: (order[h.status], -h.number)):
            if h.parts and h.parts not in out:
                out.append(h.parts)
        return out


__all__ = ["Condition", "ConditionLedger", "ConditionStatus", "HypothesisStatus", "Prediction", "StatedHypothesis"]
