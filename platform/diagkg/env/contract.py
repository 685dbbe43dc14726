"""The session contract: a move in, a typed :class:`~diagkg.env.outcomes.Outcome` out, and its JSON messages.

Every way of working a session sits on :func:`play`: the runner's in-process
assistants, programs in a process of their own (:mod:`diagkg.runs.exec_boundary`)
and any later server. A *move* is an :class:`~diagkg.env.actions.Action`, a
:class:`~diagkg.env.actions.Hypothesis`, or ``None`` (stop); a :class:`Turn` is
what one move gives: the typed outcome and where the session stands::

    from diagkg.env import contract
    turn = contract.play(session, Hypothesis({"bulb"}))
    turn.outcome.verdict, turn.end, turn.rounds_left

Across a process boundary the contract is JSON lines, one message a line,
each described by a JSON Schema (draft 2020-12) shipped in the package
(``diagkg.data.schemas``, :func:`schema`): diagkg sends ``briefing``, then
``outcome`` after each round that did not end the session, and ``end``; the
assistant answers each ``briefing`` and ``outcome`` with exactly one reply,
``act``, ``hypothesis`` or ``stop`` (:func:`read_reply`). Every message carries
``"protocol":`` :data:`PROTOCOL_VERSION`. A reply that cannot be used is a
:class:`ProtocolError` with a typed :class:`ProtocolFault`; the session ends
there (docs/assistant-protocol.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Collection, Mapping, Union

from ..errors import AssistantError
from ..kg.vocab import DK
from .actions import Action, Hypothesis
from .outcomes import End, Outcome, plain

if TYPE_CHECKING:  # pragma: no cover
    from .service import Session

PROTOCOL_VERSION = 1
TO_ASSISTANT = ("briefing", "outcome", "end")        # the messages diagkg sends
REPLIES = ("act", "hypothesis", "stop")              # the messages an assistant sends
SCHEMA_BASE = f"https://w3id.org/diagkg/schemas/assistant-protocol/{PROTOCOL_VERSION}/"

Move = Union[Action, Hypothesis, None]      # None: stop (give up)


@dataclass(frozen=True)
class Turn:
    """What one move gave: the round's typed outcome and where the session stands after it."""

    outcome: Outcome
    terminated: bool          # the session ended on its own terms (success, surrender)
    truncated: bool           # the budget ran out
    end: End | None           # the end value once the session has ended
    round: int                # rounds played so far
    budget: int
    total_cost: float

    @property
    def rounds_left(self) -> int:
        return max(0, self.budget - self.round)

    @property
    def over(self) -> bool:
        return self.end is not None


def play(session: Session, move: Move) -> Turn:
    """One round of ``session``: carry out ``move`` and return the :class:`Turn` (the session's own
    :meth:`~diagkg.env.service.Session.step`, typed)."""
    _, _, terminated, truncated, _ = session.step(move)
    return Turn(session.history[-1], terminated, truncated, session.end, session.round, session.budget,
                session.total_cost)


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """An outcome as plain JSON data: what in-process assistants are given (``Outcome.to_dict``),
    and every other field of the dataclass as it is (so a field added to :class:`Outcome` crosses
    the boundary without a change here)."""
    data = outcome.to_dict()
    names = _FIELDS.get(type(outcome))
    if names is None:
        names = _FIELDS[type(outcome)] = tuple(f.name for f in fields(outcome))
    for name in names:
        if name not in data:
            data[name] = plain(getattr(outcome, name))
    return data


_FIELDS: dict[type, tuple[str, ...]] = {}      # an outcome class's field names, read once


def outcome_message(turn: Turn) -> dict[str, Any]:
    """The ``outcome`` message of a round that did not end the session."""
    return {"kind": "outcome", "protocol": PROTOCOL_VERSION, "round": turn.round, "rounds_left": turn.rounds_left,
            "total_cost": turn.total_cost, "outcome": outcome_json(turn.outcome)}


def end_message(end: str, outcome: Outcome | Mapping[str, Any] | None, rounds: int, total_cost: float,
                fault: "ProtocolFault | None" = None) -> dict[str, Any]:
    """The ``end`` message: the end value, and the last round's outcome when that round ended the session."""
    last = outcome_json(outcome) if isinstance(outcome, Outcome) else (dict(outcome) if outcome is not None else None)
    return {"kind": "end", "protocol": PROTOCOL_VERSION, "end": end, "outcome": last, "rounds": rounds,
            "total_cost": total_cost, "fault": fault.value if fault is not None else None}


def move_message(move: Move, candidates: list[frozenset[str]] | None = None) -> dict[str, Any]:
    """The reply that stands for ``move`` (what a hosted assistant sends)."""
    out: dict[str, Any]
    if move is None:
        return {"kind": "stop", "protocol": PROTOCOL_VERSION}
    if isinstance(move, Hypothesis):
        out = {"kind": "hypothesis", "protocol": PROTOCOL_VERSION, "parts": sorted(move.components)}
        if move.explanation:
            out["explanation"] = move.explanation
    else:
        out = {"kind": "act", "protocol": PROTOCOL_VERSION, "action": move.action, "targets": list(move.targets)}
        if move.value is not None:
            out["value"] = move.value
    if candidates:
        out["candidates"] = [sorted(c) for c in candidates[:100] if c]
    return out


# ---------------------------------------------------------------------------
# protocol faults
# ---------------------------------------------------------------------------

class ProtocolFault(StrEnum):
    """Why an assistant's reply could not be used (``skos:notation`` of the ``dk:Fault*`` individuals).
    Each one ends the session; the trajectory records it (``dk:protocolFault``)."""

    MALFORMED = "malformed"                  # not a JSON object on one line (or not UTF-8)
    SCHEMA = "schema_violation"              # JSON that fits no reply's schema (unknown kind, fields, version)
    UNKNOWN_ACTION = "unknown_action"        # an action id that is not in the catalogue
    UNKNOWN_PART = "unknown_part"            # a part id the briefing did not name
    OVERSIZED = "oversized"                  # a reply line longer than the limit
    OUT_OF_TURN = "out_of_turn"              # a reply before the message it would answer (one reply per message)
    LATE = "late_reply"                      # no reply (or its input not read) within the time limit
    EXITED = "exited"                        # the program ended, or closed its output, before replying
    START = "start_failed"                   # the program could not be started


FAULT_IRIS = {ProtocolFault.MALFORMED: DK.FaultMalformed, ProtocolFault.SCHEMA: DK.FaultSchemaViolation,
              ProtocolFault.UNKNOWN_ACTION: DK.FaultUnknownAction, ProtocolFault.UNKNOWN_PART: DK.FaultUnknownPart,
              ProtocolFault.OVERSIZED: DK.FaultOversized, ProtocolFault.OUT_OF_TURN: DK.FaultOutOfTurn,
              ProtocolFault.LATE: DK.FaultLateReply,
              ProtocolFault.EXITED: DK.FaultExited, ProtocolFault.START: DK.FaultStartFailed}


class ProtocolError(AssistantError):
    """An assistant's reply could not be used; :attr:`fault` says why (typed), the message says what."""

    def __init__(self, fault: ProtocolFault, detail: str):
        self.fault = fault
        self.detail = detail
        super().__init__(f"{fault.value}: {detail}")


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------

def schema_names() -> tuple[str, ...]:
    """Every shipped schema: the messages' and ``reply`` (any reply)."""
    return (*TO_ASSISTANT, *REPLIES, "reply")


@lru_cache(maxsize=None)
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of message ``name`` (``briefing``, ``outcome``, ``end``, ``act``, ``hypothesis``,
    ``stop``, or ``reply``), read from the package's ``schemas`` folder."""
    from ..kg import resources

    if name not in schema_names():
        raise ValueError(f"no schema {name!r}; expected one of {', '.join(schema_names())}")
    data: dict[str, Any] = json.loads(resources.folder("schemas").joinpath(f"{name}.schema.json")
                                      .read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=None)
def validator(name: str) -> Any:
    """A Draft 2020-12 validator of message ``name`` (``$ref`` between the schemas resolved)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry: Any = Registry().with_resources(
        (SCHEMA_BASE + f"{n}.schema.json", Resource.from_contents(schema(n))) for n in schema_names())
    return Draft202012Validator(schema(name), registry=registry)


def problems(name: str, message: Any) -> list[str]:
    """What is wrong with ``message`` as a ``name`` message, located by JSON path (empty: it fits)."""
    out = []
    for error in sorted(validator(name).iter_errors(message), key=lambda e: list(e.absolute_path)):
        where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "(the message)"
        out.append(f"{where}: {error.message}")
    return out


def read_reply(line: bytes | str, parts: Collection[str], actions: Collection[str]) -> tuple[Move, list[frozenset[str]]]:
    """The move a reply line stands for, and the candidates it lists (most likely first).

    ``parts`` are the ids an assistant may name (parts, modules, ``component.port``), ``actions`` the
    catalogue's action ids. Raises :class:`ProtocolError`: malformed JSON, a schema violation, an
    unknown action or part id.
    """
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        message = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(ProtocolFault.MALFORMED, f"the reply is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError(ProtocolFault.MALFORMED, f"the reply is JSON but not an object: {_short(text)}")
    kind = message.get("kind")
    if kind not in REPLIES:
        raise ProtocolError(ProtocolFault.SCHEMA, f"the reply's kind is {kind!r}; expected one of {', '.join(REPLIES)}")
    wrong = problems(str(kind), message)
    if wrong:
        raise ProtocolError(ProtocolFault.SCHEMA, f"the {kind} reply does not fit its schema: {'; '.join(wrong[:3])}")
    known = set(parts)

    def check(ids: list[str], what: str) -> None:
        unknown = sorted({i for i in ids if i not in known})
        if unknown:
            raise ProtocolError(ProtocolFault.UNKNOWN_PART, f"{what} names {', '.join(map(repr, unknown))}, "
                                                           "which the briefing did not name")

    candidates = [frozenset(c) for c in message.get("candidates", [])]
    for c in candidates:
        check(sorted(c), "a candidate")
    if kind == "stop":
        return None, candidates
    if kind == "hypothesis":
        check(message["parts"], "the hypothesis")
        return Hypothesis(message["parts"], message.get("explanation", "")), candidates
    if message["action"] not in actions:
        raise ProtocolError(ProtocolFault.UNKNOWN_ACTION, f"no action {message['action']!r} in the catalogue")
    check(message["targets"], "the act")
    value = message.get("value")
    if value is not None and not math.isfinite(value):      # Python's JSON reads NaN, Infinity and 1e999
        raise ProtocolError(ProtocolFault.SCHEMA, f"the act's value is not a finite number: {_short(text)}")
    return Action(message["action"], tuple(message["targets"]), float(value) if value is not None else None), candidates


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
