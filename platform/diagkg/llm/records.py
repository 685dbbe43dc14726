"""Records of language-model calls, as data and as RDF in a trajectory.

A session's :class:`CallLog` holds one :class:`CallRecord` per attempt, with
the messages (as JSON text, with the hash of model, messages and parameters),
the parameters (never the API key), the response, tokens, latency, money,
the error and its :class:`FailureCause`. :meth:`CallLog.triples` turns them
into statements of the trajectory graph (``ontology/llm.ttl``);
:func:`recorded_calls` reads them back, and a log made with ``replay=`` answers
every call of a re-run session from them, in order.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from ..errors import InputError
from ..kg.vocab import DK
from .settings import STRUCTURED_MODES

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


class FailureCause(StrEnum):
    """Why a reply could not be used (``skos:notation`` of the ``dk:Cause*`` individuals)."""

    TIMEOUT = "timeout"
    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    CUT_OFF = "cut_off"
    UNPARSEABLE = "unparseable"
    COST_LIMIT = "cost_limit"
    INVALID_CHOICE = "invalid_choice"
    REFUSED = "refused"


CAUSE_IRIS = {FailureCause.TIMEOUT: DK.CauseTimeout, FailureCause.RATE_LIMIT: DK.CauseRateLimit,
              FailureCause.SERVER_ERROR: DK.CauseServerError, FailureCause.CUT_OFF: DK.CauseCutOff,
              FailureCause.UNPARSEABLE: DK.CauseUnparseable, FailureCause.COST_LIMIT: DK.CauseCostLimit,
              FailureCause.INVALID_CHOICE: DK.CauseInvalidChoice, FailureCause.REFUSED: DK.CauseRefused}


def request_key(model: str, messages: list[dict[str, Any]], parameters: dict[str, Any]) -> str:
    """SHA-256 of model, messages and parameters: the cache and replay key."""
    text = json.dumps([model, messages, parameters], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def endpoint_key(base_url: str | None, key: str) -> str:
    """The response cache's key: a request's :func:`request_key` as asked of one endpoint. Two endpoints that
    serve a model of the same name may serve different models (a model named "llama" on two servers), so one's
    answer is no answer of the other's; a replay, which asks no endpoint, matches on the request key alone."""
    return hashlib.sha256(f"{base_url or ''}\n{key}".encode("utf-8")).hexdigest()


@dataclass
class CallRecord:
    """One attempt at a call."""

    purpose: str
    role: str
    model: str
    messages: list[dict[str, Any]]
    parameters: dict[str, Any]
    key: str
    response: dict[str, Any] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    latency: float = 0.0
    money: float = 0.0
    error: str = ""
    cause: FailureCause | None = None
    source: str = "endpoint"           # endpoint, cache, replay, none (not sent)
    rejected: str = ""                 # why the choice it carried was sent back (a refusal code)
    position: int = 0


class ReplayMismatch(InputError):
    """A replayed session asked something its record does not hold."""


@dataclass
class CallLog:
    """A session's calls; with ``replay``, the recorded calls that answer them."""

    records: list[CallRecord] = field(default_factory=list)
    replay: list[CallRecord] | None = None
    replay_end: str | None = None       # how the replayed session ended, as recorded
    _next: int = 0

    @property
    def replaying(self) -> bool:
        return self.replay is not None

    def add(self, record: CallRecord) -> None:
        record.position = len(self.records) + 1
        self.records.append(record)

    def next_recorded(self, key: str, purpose: str) -> CallRecord:
        assert self.replay is not None
        if self._next >= len(self.replay):
            raise ReplayMismatch(f"the replayed session makes more language-model calls than its record holds "
                                 f"({len(self.replay)}); the call for {purpose!r} has no recorded answer")
        recorded = self.replay[self._next]
        self._next += 1
        if recorded.key and recorded.key != key:
            raise ReplayMismatch(f"call {self._next} of the replayed session ({purpose}) differs from the "
                                 f"recorded one ({recorded.purpose}): the prompt, model or parameters changed")
        return recorded

    def replayed(self, end: str) -> None:
        """Raises :class:`ReplayMismatch` when a replay ended otherwise than its record, or left recorded
        calls unasked: a recorded answer was changed (the request's hash does not cover the answer, so a
        changed last answer, or one the next prompt does not show, was replayed as it was)."""
        if self.replay is None:
            return
        if self._next < len(self.replay):
            raise ReplayMismatch(f"the replayed session made {self._next} of the {len(self.replay)} language-model "
                                 f"calls its record holds: the record or the platform changed")
        if self.replay_end is not None and end != self.replay_end:
            raise ReplayMismatch(f"the replayed session ended {end!r}, its record {self.replay_end!r}: a recorded "
                                 f"answer or the platform changed")

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.records if r.source == "endpoint" or r.source == "replay")

    @property
    def completion_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.records if r.source == "endpoint" or r.source == "replay")

    @property
    def cached_tokens(self) -> int:
        return sum(r.cached_tokens for r in self.records)

    @property
    def money(self) -> float:
        return sum(r.money for r in self.records)

    def triples(self, trajectory_iri: str, cause: FailureCause | None = None) -> list[ox.Triple]:
        """The calls as statements of the trajectory graph, with the session's
        token and money totals and (when it ended so) the cause of its truncation."""
        session = ox.NamedNode(f"{trajectory_iri}#session")
        out: list[ox.Triple] = []

        def add(s: ox.NamedNode, p: str, o: ox.NamedNode | ox.Literal) -> None:
            out.append(ox.Triple(s, ox.NamedNode(p), o))

        def typed(value: Any, datatype: str) -> ox.Literal:
            return ox.Literal(str(value), datatype=ox.NamedNode(XSD + datatype))

        if self.records:
            add(session, DK.promptTokens, typed(self.prompt_tokens, "integer"))
            add(session, DK.completionTokens, typed(self.completion_tokens, "integer"))
            add(session, DK.cachedTokens, typed(self.cached_tokens, "integer"))
            add(session, DK.moneyCost, typed(round(self.money, 8), "decimal"))
        if cause is not None:
            add(session, DK.failureCause, ox.NamedNode(CAUSE_IRIS[cause]))
        for r in self.records:
            call = ox.NamedNode(f"{trajectory_iri}#llm-call-{r.position}")
            add(call, str(RDF_TYPE.value), DK.LLMCall.node)
            add(call, DK.callInSession, session)
            add(call, DK.position, typed(r.position, "integer"))
            add(call, DK.callPurpose, ox.Literal(r.purpose))
            add(call, DK.callRole, ox.Literal(r.role))
            add(call, DK.model, ox.Literal(r.model))
            add(call, DK.requestMessages, ox.Literal(json.dumps(r.messages, ensure_ascii=False)))
            add(call, DK.messagesHash, ox.Literal(r.key))
            add(call, DK.requestParameters, ox.Literal(json.dumps(r.parameters, sort_keys=True)))
            if r.response is not None:
                add(call, DK.responseBody, ox.Literal(json.dumps(r.response, ensure_ascii=False)))
            add(call, DK.promptTokens, typed(r.prompt_tokens, "integer"))
            add(call, DK.completionTokens, typed(r.completion_tokens, "integer"))
            add(call, DK.cachedTokens, typed(r.cached_tokens, "integer"))
            add(call, DK.latencySeconds, typed(round(r.latency, 6), "decimal"))
            add(call, DK.moneyCost, typed(round(r.money, 8), "decimal"))
            add(call, DK.answeredFrom, ox.Literal(r.source))
            if r.error:
                add(call, DK.callError, ox.Literal(r.error))
            if r.cause is not None:
                add(call, DK.failureCause, ox.NamedNode(CAUSE_IRIS[r.cause]))
            if r.rejected:
                add(call, DK.choiceRejected, ox.Literal(r.rejected))
        return out


def recorded_calls(store: KnowledgeSource, trajectory_iri: str) -> list[CallRecord]:
    """The calls a stored trajectory records, in order (``queries/llm-calls.rq``)."""
    out = []
    for row in store.select("llm-calls", {"trajectory": ox.NamedNode(trajectory_iri)}):
        try:
            out.append(_call_of(row))
        except (ValueError, TypeError) as exc:       # JSONDecodeError is a ValueError
            raise ReplayMismatch(f"call {row['position']} of <{trajectory_iri}> cannot be read back "
                                 f"(its record was changed?): {exc}") from None
    return out


def _call_of(row: dict[str, Any]) -> CallRecord:
    """One recorded call; ``ValueError`` when a part of it is not what the client records (JSON of the
    wrong shape: a replay crashed on it with AttributeError or TypeError)."""
    record = _fields(row)
    p, response = record.parameters, record.response
    if not (isinstance(record.messages, list) and all(isinstance(m, dict) for m in record.messages)):
        raise ValueError("its messages are not a list of messages")
    if not (isinstance(p, dict) and isinstance(p.get("temperature", 0.0), (int, float))
            and isinstance(p.get("max_tokens", 1), int) and p.get("structured", STRUCTURED_MODES[0]) in STRUCTURED_MODES):
        raise ValueError("its parameters are not the client's")
    if response is not None:
        calls = response.get("tool_calls") if isinstance(response, dict) else None
        if not (isinstance(response, dict) and isinstance(calls or [], list)
                and all(isinstance(c, dict) and "arguments" in c for c in calls or [])):
            raise ValueError("its answer is not a reply as recorded")
    return record


def _fields(row: dict[str, Any]) -> CallRecord:
    return CallRecord(
        purpose=row["purpose"], role=row["role"], model=row["model"], messages=json.loads(row["messages"]),
        parameters=json.loads(row["parameters"]), key=row["hash"],
        response=json.loads(row["response"]) if row["response"] else None,
        prompt_tokens=int(row["promptTokens"]), completion_tokens=int(row["completionTokens"]),
        cached_tokens=int(row["cachedTokens"]), latency=float(row["latency"]), money=float(row["money"]),
        error=row["error"] or "", cause=FailureCause(row["cause"]) if row["cause"] else None,
        source=row["source"], rejected=row["rejected"] or "", position=int(row["position"]))
