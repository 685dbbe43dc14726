"""The runner: saboteur → initial observations → rounds → end value → trajectory.

::

    from diagkg.runs.runner import run_session
    from diagkg.kg.store import KnowledgeStore
    result = run_session("3CC.S.1", "oracle", seed=0, store=KnowledgeStore())
    print(result.end, result.cost, result.trajectory)

The scenario, system, inferences and catalogues come from ``store`` (the
on-disk default store when none is given); the session works in a private
working memory; the store is written once, when the trajectory is stored.
Non-privileged assistants see a :class:`~diagkg.env.workspace.KnowledgeView`
of the system, never the scenario's answer or the live state; only those the
configuration's allow-list names are privileged (:mod:`diagkg.agents.trust`),
and an assistant may run in a process of its own (:mod:`diagkg.runs.hosting`,
:mod:`diagkg.runs.exec_boundary`). Each round is one step of the session
contract (:func:`diagkg.env.contract.play`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable

import pyoxigraph as ox

from ..agents import registry
from ..env import contract
from ..env.actions import Action
from ..env.outcomes import End
from ..env.scenarios import Scenario
from ..env.service import Hypothesis, Session
from ..env.verification import faults_left, faulty_at_start
from ..env.workspace import AnswerCache, assistant_view, prior_view, resolve_scenario
from ..errors import AssistantError, InputError, LedgerUnavailable, LLMTruncation, StoreError, UnknownTermError
from ..kg import graphs
from ..kg.store import KnowledgeStore
from ..kg.vocab import DK
from ..llm.records import CallLog, FailureCause, recorded_calls
from . import hosting, ledger, scoring, trajectory
from .exec_boundary import ExecAssistant
from .rounds import Round
from .trajectory import SessionRecord


@dataclass
class RunResult:
    trajectory: str
    scenario: int
    scenario_id: str
    assistant: str
    end: End
    cost: float
    rounds: int
    wall_time: float
    decision_times: list[float] = field(default_factory=list)
    record: SessionRecord | None = None
    hypothesis_ledger: ledger.Ledger | None = None     # the hypothesis ledger (stored with the trajectory)
    llm: CallLog | None = None                  # the language-model calls (none for most assistants)
    llm_cause: FailureCause | None = None       # why it ended with llm_truncation, when it did
    diagnosis: scoring.DiagnosisScore | None = None   # false removals, precision, recall, rounds/minutes to isolate
    fault: contract.ProtocolFault | None = None   # why an assistant in its own process was stopped, when it was
    catalogue: dict[str, str] = field(default_factory=dict)   # action id -> IRI, as the trajectory is stored with

    def to_json(self) -> dict[str, Any]:
        return {"trajectory": self.trajectory, "scenario": self.scenario, "scenario_id": self.scenario_id,
                "assistant": self.assistant, "end": self.end, "cost": self.cost, "rounds": self.rounds,
                "wall_time": round(self.wall_time, 4), **(self.diagnosis.to_json() if self.diagnosis else {}),
                **({"protocol_fault": self.fault.value} if self.fault is not None else {})}


def briefing_for(session: Session, privileged: bool, seed: int, informed: bool = False) -> registry.Briefing:
    sk = session.sk
    description = sk.description
    parts: dict[str, str] = {cid: c.type for cid, c in sk.components.items() if cid not in session.scenario.removed}
    parts.update({pid: kind for pid, kind in session.parts().items() if kind in ("enclosure", "opening")})
    ports = {cid: tuple(c.ports) for cid, c in sk.components.items() if cid not in session.scenario.removed}
    modules = tuple(sorted(pid for pid, kind in session.parts().items() if kind == "module"))
    labels = {r["id"]: r["label"] or r["id"]
              for r in sk.parts}
    return registry.Briefing(
        system=session.scenario.key, description=description, symptoms=session.scenario.observations,
        # the catalogue a copy of its own: the session's was handed over, and an assistant that set a cost in it
        # was charged that
        visible="", parts=parts, labels=labels, catalogue=dict(session.catalogue), budget=session.budget, seed=seed,
        store=assistant_view(session.source, session.scenario.system_iri, session.scenario.key),
        cache=AnswerCache(session.source),
        system_iri=session.scenario.system_iri,
        scenario=session.scenario if privileged else None,
        session=session if privileged else None, ports=ports, modules=modules, stated=dict(session.scenario.symptoms),
        prior=prior_view(session.source, session.scenario.key) if informed else None)


def run_session(scenario: str | int | Scenario, assistant: str | registry.BaseAssistant, *, seed: int = 0,
                budget: int | None = None, config: dict[str, Any] | None = None, store: KnowledgeStore | None = None,
                on_round: Callable[[Round], None] | None = None, record: bool = True,
                notify: Callable[[str], None] | None = None,
                on_start: Callable[[Session], None] | None = None, keep_ledger: bool = True,
                service: str = "deterministic", llm_log: CallLog | None = None) -> RunResult:
    """Run one session on a scenario of ``store`` and (by default) store its trajectory there.

    ``on_start`` is given the session once its faults are injected (e.g. to draw its state meanwhile);
    ``on_round`` each played :class:`~diagkg.runs.rounds.Round` (``Round.to_dict`` for JSON), and the round
    of an assistant that failed before it moved (``Round.failed``: why it ended).

    ``store`` defaults to the on-disk store; a store that has never held the
    shipped catalogue gets it first (said through ``notify``). The trajectory
    (``RunResult.record``, stored unless ``record`` is false) holds the
    hypothesis ledger (:mod:`diagkg.runs.ledger`) unless ``keep_ledger`` is false.
    ``service`` is
    ``deterministic`` (the default) or ``llm`` (:mod:`diagkg.agents.llm_service`,
    configured by the same LLM settings as the assistant). Language-model
    calls go to ``llm_log`` (a replay's log answers them from its record) and
    into the trajectory.
    """
    if service not in SERVICES:
        raise InputError(f"no service agent {service!r}; use one of {', '.join(SERVICES)}")
    if store is None:
        store = KnowledgeStore()
    scenario = resolve_scenario(store, scenario, notify)
    if isinstance(assistant, str):      # where it runs and whether it sees the answer: configuration (agents.trust)
        hosted = hosting.create(assistant, config)
        agent, privileged, informed = hosted.agent, hosted.privileged, hosted.informed
        if getattr(agent, "name", assistant) != assistant:
            # recorded by the name it was asked for (a class named "oracle" registered as another read as the oracle)
            agent.name = assistant
    else:
        agent, privileged, informed = assistant, hosting.privileged(assistant), hosting.informed(assistant)
    # recorded by the name it had when it was given the session, whose privilege that name decided (one that renamed
    # itself "oracle" while it played was stored as the oracle)
    name = str(agent.name)
    log = llm_log if llm_log is not None else CallLog()
    with Session(scenario, store, budget=budget, notify=notify) as session:    # closed: its memory is reused
        started = datetime.now(timezone.utc)
        t0 = time.perf_counter()
        obs, info = session.reset(seed=seed)
        if on_start:
            on_start(session)
        brief = briefing_for(session, privileged, seed, informed)
        brief.visible, brief.lights = obs["visible"], dict(obs["lights"])
        brief.llm = log
        svc = _service_agent(service, config or {}, log, brief) if service == "llm" else None
        rounds: list[Round] = []
        decisions: list[float] = []
        ranked: dict[int, list[frozenset[str]]] = {}      # the assistant's candidates at each decision
        terminated = truncated = False
        cause: FailureCause | None = None
        fault: contract.ProtocolFault | None = None     # why an assistant in its own process was stopped
        def failed(entry: Round) -> None:      # the assistant could not move: recorded, and told like a round
            rounds.append(entry)
            if on_round:
                on_round(entry)

        def waited(entry: Round, since: float) -> Round:
            # the time it took to fail is a decision's (a plug-in that hung until its reply was late read as quick)
            decisions.append(time.perf_counter() - since)
            return replace(entry, decision_seconds=decisions[-1])

        try:
            agent.setup(brief)
        except LLMTruncation as exc:   # the model's reading of the symptoms was unusable
            cause = borne_out(exc, log)
            session.abort("llm_truncation" if cause is not None else "surrender")
            terminated = True
            failed(Round.failed(1, "(no usable reply)", f"The assistant's reply could not be used: {exc}"))
        except AssistantError as exc:      # e.g. the oracle without a privileged briefing
            session.abort("surrender")
            terminated = True
            failed(Round.failed(1, "(failed)", f"The assistant failed: {exc}"))
        while not (terminated or truncated):
            d0 = time.perf_counter()
            instruction, mapped_by = "", 0
            try:
                suggestion = agent.suggest()
                if isinstance(suggestion, Action):
                    instruction = str(getattr(agent, "instruction", "") or "")
                    if svc is not None:    # the service agent reads the instruction, not the structured action
                        instruction = instruction or svc.instruction_for(suggestion)
                        suggestion, mapping = svc.map(instruction)
                        mapped_by = mapping.position
                elif isinstance(suggestion, Hypothesis):
                    instruction = str(getattr(agent, "instruction", "") or "")
            except LLMTruncation as exc:
                cause = borne_out(exc, log)
                session.abort("llm_truncation" if cause is not None else "surrender")
                failed(waited(Round.failed(session.round + 1, "(no usable reply)",
                                           f"The assistant's reply could not be used: {exc}"), d0))
                break
            except AssistantError as exc:
                if isinstance(exc, contract.ProtocolError):
                    fault = exc.fault
                session.abort("surrender")
                failed(waited(Round.failed(session.round + 1, "(failed)", f"The assistant failed: {exc}"), d0))
                break
            decisions.append(time.perf_counter() - d0)
            candidates = getattr(agent, "ranked_candidates", None)
            if keep_ledger and candidates is not None and suggestion is not None:
                listed = candidates()
                if listed:
                    ranked[session.round + 1] = list(listed[:ledger.MAX_CANDIDATES])
            turn = contract.play(session, suggestion)
            terminated, truncated = turn.terminated, turn.truncated
            if suggestion is None:
                break
            hypothesis = suggestion if isinstance(suggestion, Hypothesis) else None
            played = Round(turn.outcome, decisions[-1], action=suggestion if isinstance(suggestion, Action) else None,
                           suspects=tuple(sorted(hypothesis.components)) if hypothesis is not None else None,
                           explanation=hypothesis.explanation if hypothesis is not None else None,
                           instruction=instruction, mapped_by=mapped_by)
            told = turn.outcome.told()          # what the assistant is told (the record keeps it whole)
            if svc is not None:
                try:
                    played = replace(played, message_override=svc.verbalise(contract.outcome_json(told)))
                except LLMTruncation as exc:
                    rounds.append(played)        # played: told like any round (diagkg run prints it)
                    if on_round:
                        on_round(played)
                    if not (terminated or truncated):    # a session that had ended keeps its end value
                        cause = borne_out(exc, log)
                        session.abort("llm_truncation" if cause is not None else "surrender")
                    break
            r0 = time.perf_counter()
            agent.record(told)                  # typed (plug-in API 3); a shim tells an older plug-in JSON
            # digesting what an action showed is part of deciding: it counts with the round's decision
            decisions[-1] += time.perf_counter() - r0
            played = replace(played, decision_seconds=decisions[-1])
            rounds.append(played)
            if on_round:
                on_round(played)
        wall = time.perf_counter() - t0
        end = session.end or End.SURRENDER
        closing = getattr(agent, "close", None)
        if closing is not None:
            closing(end)               # an assistant in its own process is told the end and stopped
        if svc is not None:
            svc.close()
        log.replayed(str(end))        # a replay that ended otherwise than its record says so, and is not stored
        rec = trajectory.SessionRecord(
            trajectory_id=trajectory.new_id(scenario.number, name, seed), scenario_iri=scenario.iri,
            scenario_number=scenario.number, system_key=scenario.key, system_iri=scenario.system_iri,
            assistant=name, config=applied_config(agent), api_version=plugin_api_version(agent),
            seed=seed, budget=session.budget, end=end,
            total_cost=session.total_cost, rounds=rounds, started=started, wall_time=wall, privileged=privileged)
        rec.extra.extend(log.triples(rec.iri, cause if end == "llm_truncation" else None))
        # the versions of the system and the scenario it was played on (a system replaced later is told apart)
        rec.extra.extend(trajectory.version_triples(rec.iri, played_on(session)))
        diagnosis = scoring.score(faulty_at_start(session), rounds)
        rec.extra.extend(scoring.triples(diagnosis, ox.NamedNode(rec.iri + "#session")))
        # what no repair reached (a broken indicator stops no repair: a success may leave it)
        rec.extra.append(ox.Triple(ox.NamedNode(rec.iri + "#session"), DK.faultsLeft.node,
                                   ox.Literal(str(faults_left(session)), datatype=scoring.INTEGER)))
        if fault is not None:
            rec.extra.append(ox.Triple(ox.NamedNode(rec.iri + "#session"), DK.protocolFault.node,
                                       ox.NamedNode(contract.FAULT_IRIS[fault])))
        iri = rec.iri
        catalogue = {a: spec.iri for a, spec in session.catalogue.items()}
        result = RunResult(iri, scenario.number, scenario.id, name, end, session.total_cost, len(rounds), wall,
                           decisions, rec, llm=log, llm_cause=cause, diagnosis=diagnosis, fault=fault,
                           catalogue=catalogue)
        if keep_ledger:      # in the record even when it is not stored here (a campaign's writer stores it)
            # a Round reads as the plain entry the ledger reads (Mapping); its what-if worlds read the store
            try:
                book = ledger.build(session, rounds, brief.visible, end, seed)
            except StoreError as exc:    # the session was played: its result goes with the error, not lost
                raise LedgerUnavailable(exc, result) from None
            rec.extra.extend(ledger.to_triples(book, rec, catalogue, ranked))
            result.hypothesis_ledger = book
        if record:
            result.trajectory = trajectory.store_record(store, rec, catalogue)
        return result


def borne_out(exc: LLMTruncation, log: CallLog) -> FailureCause | None:
    """Why a session's language model failed, when a failed call of the session's log bears ``exc`` out; None
    otherwise. Only then does the session end in ``llm_truncation`` (left out of the success rate, run again by
    ``--retry-failed``): an assistant that raised the error itself, with no failed call, ends in surrender — a
    failure — or guessing once and "truncating" every miss read as a perfect success rate."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, FailureCause) and any(r.cause is cause for r in log.records):
        return cause
    return None


SERVICES = ("deterministic", "llm")
SECRET_KEYS = registry.SECRET_KEYS      # never recorded in a trajectory


def applied_config(agent: Any) -> dict[str, Any]:
    """The configuration ``agent`` ran with, as applied (``applied_config()``: defaults included), no secret:
    what its trajectory records and a replay runs with."""
    applied = getattr(agent, "applied_config", None)
    config = applied() if callable(applied) else (getattr(agent, "config", {}) or {})
    return {k: v for k, v in dict(config).items() if k not in SECRET_KEYS}


def plugin_api_version(agent: Any) -> int | None:
    """The plug-in API version ``agent`` was written for; None for one whose decisions come from another
    process (an ``exec:`` program, a plug-in hosted in a process of its own, a driven session): it speaks
    the assistant protocol."""
    if isinstance(agent, ExecAssistant) or getattr(agent, "in_process", True) is False:
        return None
    inner = getattr(agent, "inner", None)
    if isinstance(inner, registry.BaseAssistant) and not isinstance(agent, registry.ApiShim):
        return plugin_api_version(inner)      # a wrapper of diagkg's (the server's service gate): its assistant's
    return registry.api_version_of(agent)


def _service_agent(service: str, config: dict[str, Any], log: CallLog, brief: registry.Briefing) -> Any:
    from ..agents.llm_service import LLMServiceAgent
    from ..llm import prompting as prompts
    from ..llm.settings import LLMSettings

    settings = LLMSettings.from_config({k: v for k, v in config.items() if k not in ("corrections", "schematic")},
                                       need_endpoint=not log.replaying)
    return LLMServiceAgent(settings, log, prompts.knowledge(brief.view, brief.system_iri),
                           corrections=int(config.get("corrections", 2)))


def changed_since(store: KnowledgeStore, iri: str) -> list[tuple[str, str]]:
    """The graphs a stored session was played on that the store now holds in another version, each with what
    changed (``replaced`` or ``removed``); none for a trajectory that records no versions (before 2026-12-07)."""
    rows = store.select("trajectory-versions", {"trajectory": ox.NamedNode(iri)})
    return [(c.graph, "removed" if not c.now else "replaced") for c in graphs.changed(store, rows)]


def played_on(session: Session) -> list[tuple[ox.NamedNode, str]]:
    """The graphs a session was played on (its system's, its scenario's), each with its version (content hash)."""
    from ..env.workspace import graph_holding

    out = [(session.system_graph, session.system_version)]
    scenario_graph = graph_holding(session.store, session.scenario.iri, str(DK.Scenario))
    if scenario_graph is not None:
        out.append((scenario_graph, session.store.version_of(scenario_graph)))
    return out


def replay_session(store: KnowledgeStore, trajectory_ref: str, *, record: bool = True,
                   on_round: Callable[[Round], None] | None = None,
                   notify: Callable[[str], None] | None = None) -> RunResult:
    """Run a stored session again, answering every language-model call from its
    record (no endpoint needed): the same scenario, assistant, configuration,
    seed, budget and service agent. Raises :class:`~diagkg.llm.records.ReplayMismatch`
    when the session asks something the record does not hold, when its record cannot be read,
    and when it ends otherwise than recorded or leaves recorded calls unasked (nothing is stored then)."""
    import json

    import pyoxigraph as ox

    iri = trajectory_ref if "://" in trajectory_ref else trajectory.BASE + trajectory_ref
    rows = store.select("llm-replay-session", {"trajectory": ox.NamedNode(iri)})
    if not rows:
        raise UnknownTermError(f"no trajectory <{iri}> in the store (diagkg query trajectory-list lists them)")
    row = rows[0]
    calls = recorded_calls(store, iri)
    service = "llm" if any(c.role == "service" for c in calls) else "deterministic"
    config = json.loads(row["config"]) if row["config"] else {}
    scenario = row["number"] if row["number"] is not None else row["scenario"]
    if notify is not None:
        for graph, changed in changed_since(store, iri):
            notify(f"<{graph}> has changed since the session was recorded ({changed}): the replay plays it as it is now")
    return run_session(scenario, row["assistant"], seed=int(row["seed"]), budget=int(row["budget"]),
                       config=config, store=store, on_round=on_round, record=record, notify=notify,
                       service=service, llm_log=CallLog(replay=calls, replay_end=row["end"]))
