"""Grounded messages: the claims a message to the service agent makes, checked
deterministically against the graph and the session's observations.

A message carries its claims as structured fields — the parts it names, the
observations it cites (a part, a reading, a value and, optionally, the round), the
relations it asserts (``connected_to``, ``part_of``, ``contained_in`` between two
parts) — beside its plain text, which is never parsed. :meth:`ClaimChecker.check`
finds each claim that does not hold:

* ``ungrounded-part`` — a named part (or ``part.port``) that the system does not have;
* ``unobserved-value`` — a cited observation this session never made, or made with
  another value (numbers within the meter's tolerance, :mod:`.grounding_observed`);
* ``false-relation`` — a relation the graph does not state (``queries/grounding-*.rq``);
* ``malformed-claim`` — a claim that is not one of these shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import pyoxigraph as ox

from .grounding_observed import Reading, Tolerance, Value, matches, plain_value

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource


class Relation(StrEnum):
    CONNECTED_TO = "connected_to"
    PART_OF = "part_of"
    CONTAINED_IN = "contained_in"


RELATION_QUERIES = {Relation.CONNECTED_TO: "grounding-connected", Relation.PART_OF: "grounding-part-of",
                    Relation.CONTAINED_IN: "grounding-contained-in"}


class Failure(StrEnum):
    """Why a claim does not hold (the code recorded on the call, ``dk:choiceRejected``)."""

    UNGROUNDED_PART = "ungrounded-part"
    UNOBSERVED_VALUE = "unobserved-value"
    FALSE_RELATION = "false-relation"
    MALFORMED_CLAIM = "malformed-claim"


@dataclass(frozen=True)
class Citation:
    part: str
    reading: str
    value: Value | None
    round: int | None = None

    def __str__(self) -> str:
        at = f" in round {self.round}" if self.round is not None else ""
        return f"{self.part} {self.reading} = {self.value!r}{at}"


@dataclass(frozen=True)
class Assertion:
    relation: Relation
    subject: str
    object: str

    def __str__(self) -> str:
        return f"{self.subject} {self.relation.value} {self.object}"


@dataclass(frozen=True)
class Message:
    """A message to the service agent: its text and its claims."""

    text: str
    parts: tuple[str, ...] = ()
    cites: tuple[Citation, ...] = ()
    relations: tuple[Assertion, ...] = ()

    def without(self, failing: Iterable["Problem"]) -> "Message":
        """The message less the claims that failed."""
        bad = {p.claim for p in failing}
        return Message(self.text, tuple(p for p in self.parts if p not in bad),
                       tuple(c for c in self.cites if str(c) not in bad),
                       tuple(r for r in self.relations if str(r) not in bad))

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "parts": list(self.parts),
                "cites": [{"part": c.part, "reading": c.reading, "value": c.value, "round": c.round} for c in self.cites],
                "relations": [{"relation": r.relation.value, "subject": r.subject, "object": r.object}
                              for r in self.relations]}


@dataclass(frozen=True)
class Problem:
    """A claim that does not hold, and why."""

    failure: Failure
    claim: str
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"failure": self.failure.value, "claim": self.claim, "detail": self.detail}


def _text(value: Any, limit: int = 300) -> str:
    return value[:limit] if isinstance(value, str) else ""


def parse_message(data: Any) -> tuple[Message, list[Problem]]:
    """A message from a model's JSON (anything at all): the claims it could read, and
    a ``malformed-claim`` problem for each one it could not."""
    if isinstance(data, str):
        return Message(_text(data)), []
    if not isinstance(data, Mapping):
        return Message(""), []
    problems: list[Problem] = []

    def items(key: str) -> list[Any]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            problems.append(Problem(Failure.MALFORMED_CLAIM, f"{key}: {str(value)[:60]}", "a list is expected"))
            return []
        return value[:12]

    parts = []
    for p in items("parts"):
        if isinstance(p, str) and p:
            parts.append(p[:80])
        else:
            problems.append(Problem(Failure.MALFORMED_CLAIM, f"parts: {str(p)[:60]}", "a part identifier is expected"))
    cites = []
    for c in items("cites"):
        round_ = c.get("round") if isinstance(c, Mapping) else None
        if isinstance(c, Mapping) and isinstance(c.get("part"), str) and isinstance(c.get("reading"), str):
            cites.append(Citation(c["part"][:80], c["reading"][:80], plain_value(c.get("value")),
                                  int(round_) if isinstance(round_, (int, float)) and not isinstance(round_, bool) else None))
        else:
            problems.append(Problem(Failure.MALFORMED_CLAIM, f"cites: {str(c)[:60]}",
                                    "a citation names a part, a reading and a value"))
    relations = []
    for r in items("relations"):
        kind = r.get("relation") if isinstance(r, Mapping) else None
        if isinstance(r, Mapping) and kind in set(Relation) and isinstance(r.get("subject"), str) \
                and isinstance(r.get("object"), str):
            relations.append(Assertion(Relation(kind), r["subject"][:80], r["object"][:80]))
        else:
            problems.append(Problem(Failure.MALFORMED_CLAIM, f"relations: {str(r)[:60]}",
                                    f"a relation is one of {', '.join(Relation)} between two parts"))
    return Message(_text(data.get("text")), tuple(parts), tuple(cites), tuple(relations)), problems


class ClaimChecker:
    """Checks messages about one system (its parts, their ports and modules, and ``source``,
    the assistant's view of the graph) against the readings of the session so far."""

    def __init__(self, source: KnowledgeSource, namespace: str, ports: Mapping[str, Iterable[str]],
                 others: Iterable[str] = (), tolerance: Tolerance | None = None):
        self.source = source
        self.namespace = namespace
        self.ports = {part: frozenset(p) for part, p in ports.items()}
        self.known = frozenset(self.ports) | frozenset(others)
        self.tolerance = tolerance or Tolerance()

    def exists(self, name: str) -> bool:
        if name in self.known:
            return True
        part, _, port = name.partition(".")
        return bool(port) and port in self.ports.get(part, ())

    def check(self, message: Message, seen: list[Reading]) -> list[Problem]:
        """Every claim of ``message`` that does not hold, given the readings ``seen``."""
        problems: list[Problem] = []
        for part in message.parts:
            if not self.exists(part):
                problems.append(Problem(Failure.UNGROUNDED_PART, part, "no such part in this system"))
        for c in message.cites:
            if not self.exists(c.part):
                problems.append(Problem(Failure.UNGROUNDED_PART, str(c), f"no part {c.part!r} in this system"))
                continue
            same = [r for r in seen if r.part == c.part and r.path == c.reading
                    and (c.round is None or r.round == c.round)]
            if not same:
                problems.append(Problem(Failure.UNOBSERVED_VALUE, str(c), "no such reading was made in this session"))
            elif not any(matches(c.value, r, self.tolerance) for r in same):
                shown = ", ".join(f"{r.value!r} (round {r.round})" for r in same[-3:])
                problems.append(Problem(Failure.UNOBSERVED_VALUE, str(c), f"the session read {shown}"))
        for a in message.relations:
            missing = [n for n in (a.subject, a.object) if not self.exists(n)]
            if missing:
                problems.append(Problem(Failure.UNGROUNDED_PART, str(a), f"no part {missing[0]!r} in this system"))
            elif not self.holds(a):
                problems.append(Problem(Failure.FALSE_RELATION, str(a), "the graph does not state it"))
        return problems

    def holds(self, a: Assertion) -> bool:
        rows = self.source.select(RELATION_QUERIES[a.relation], {
            "subject": ox.NamedNode(self.namespace + a.subject), "object": ox.NamedNode(self.namespace + a.object)})
        return bool(rows)


__all__ = ["Assertion", "Citation", "ClaimChecker", "Failure", "Message", "Problem", "Relation", "parse_message"]
