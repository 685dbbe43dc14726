"""Trajectories: diagnostic sessions recorded as RDF, one named graph each.

A trajectory graph ``trajectory/{id}`` holds:

* the trajectory's format, scoring and physics versions (``dk:scoringVersion``,
  ``dk:physicsVersion``: the rules it was judged and simulated under, see
  :mod:`diagkg.env.versions`);
* the session (``dk:DiagnosticSession``, a ``prov:Activity``) with its scenario,
  seed, end value, total cost, number of rounds, start time and wall time,
  associated with its assistant and the service agent (``prov:Agent``s, the
  assistant with its configuration);
* one ``dk:Round`` per round, with the assistant's suggestion — a
  ``dk:DiagnosticAction`` (a ``p-plan:Step`` of the session's plan) or a
  ``dk:Hypothesis`` with its suspects and verdict — the outcome text and cost;
* each action the service agent executed (``dk:ExecutedAction``, a
  ``p-plan:Activity`` corresponding to the step), automatic access included;
* what it observed: SOSA observations with QUDT values (voltages, currents,
  resistances) or simple results (lit or not, inspection results).

Trajectories conform to ``shapes/trajectory.ttl`` by construction; when a
written one is checked against the shapes is :class:`CheckPolicy`'s to say.
"""

from __future__ import annotations

import enum
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, Union

import pyoxigraph as ox

from ..env.actions import Action
from ..env.observations import HELD_LIGHTS
from ..env.outcomes import End, Kind, Light, Verdict
from ..env.versions import PHYSICS_VERSION, SCORING_VERSION
from ..errors import InputError, ValidationError
from ..kg import graphs
from ..kg.vocab import DK, DK_NS
from .rounds import Round

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

Term = Union[str, ox.NamedNode, ox.BlankNode, ox.Literal]   # a str is an IRI

BASE = "https://w3id.org/diagkg/trajectory/"
PROV = "http://www.w3.org/ns/prov#"
SOSA = "http://www.w3.org/ns/sosa/"
PPLAN = "http://purl.org/net/p-plan#"
QUDT = "http://qudt.org/schema/qudt/"
UNIT = "http://qudt.org/vocab/unit/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIXES = {"dk": DK_NS, "prov": PROV, "sosa": SOSA, "p-plan": PPLAN, "qudt": QUDT, "unit": UNIT, "xsd": XSD,
            "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#"}
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")

# one ontology individual per value, one to one (a dict keyed by the enums also answers their strings)
END_IRIS = {End.SUCCESS: DK.Success, End.SUCCESS_NO_HYPOTHESIS: DK.SuccessNoHypothesis, End.TIMEOUT: DK.Timeout,
            End.SURRENDER: DK.Surrender, End.LLM_TRUNCATION: DK.LlmTruncation, End.CRASHED: DK.Crashed}
VERDICT_IRIS = {Verdict.CORRECT: DK.Correct, Verdict.PARTIAL: DK.Partial, Verdict.WRONG: DK.Wrong,
                Verdict.OVERBROAD: DK.Overbroad, Verdict.EMPTY: DK.EmptyClaim}


@dataclass
class SessionRecord:
    """Everything the runner knows about a finished session."""

    trajectory_id: str
    scenario_iri: str
    scenario_number: int
    system_key: str
    assistant: str
    config: dict[str, Any]
    seed: int
    budget: int
    end: End
    total_cost: float
    # the played rounds (the runner's Rounds; plain entries as Round.to_dict writes them are read as Rounds)
    rounds: Sequence[Mapping[str, Any]]
    started: datetime
    wall_time: float
    system_iri: str = ""          # the system's IRI (its parts are named in its namespace)
    privileged: bool = False      # the assistant was briefed with the answer (dk:privileged)
    # the plug-in API version the assistant was written for (dk:pluginApiVersion); None: not known here
    # (an assistant in a process of its own speaks the assistant protocol)
    api_version: int | None = None
    # more statements for the trajectory's own graph, made by other parts of the
    # platform (call records, the hypothesis ledger, a campaign's summary…)
    extra: list[ox.Triple] = field(default_factory=list)

    @property
    def iri(self) -> str:
        return BASE + self.trajectory_id

    @property
    def graph(self) -> ox.NamedNode:
        return graphs.named("trajectory", self.trajectory_id)


def version_triples(iri: str, versions: Sequence[tuple[ox.NamedNode, str]]) -> list[ox.Triple]:
    """The session's ``dk:usedVersion``s: each graph it was played on with its version, as a campaign records them
    (:func:`diagkg.kg.graphs.used_versions`)."""
    return graphs.used_versions(ox.NamedNode(iri + "#session"), iri, versions)


def new_id(scenario_number: int, assistant: str, seed: int) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", assistant)[:40]     # e.g. "exec:node agent.js" (the label keeps it whole)
    return f"{stamp}-s{scenario_number:03d}-{name}-{seed}-{uuid.uuid4().hex[:6]}"


def to_quads(record: SessionRecord, catalogue_iris: dict[str, str]) -> list[ox.Quad]:
    """The trajectory of a session as quads in its own named graph."""
    g = record.graph
    sys_ns = graphs.namespace_of(record.system_iri) if record.system_iri else graphs.system_namespace(record.system_key)
    quads: list[ox.Quad] = []

    def node(suffix: str) -> ox.NamedNode:
        return ox.NamedNode(f"{record.iri}#{suffix}")

    def add(s: ox.NamedNode, p: str | ox.NamedNode, o: Term) -> None:
        predicate = p if isinstance(p, ox.NamedNode) else ox.NamedNode(str(p))
        obj = ox.NamedNode(str(o)) if isinstance(o, str) else o     # str (and rdflib URIRef): an IRI
        quads.append(ox.Quad(s, predicate, obj, g))

    def lit(value: Any, datatype: str | None = None) -> ox.Literal:
        if datatype:
            return ox.Literal(str(value), datatype=ox.NamedNode(XSD + datatype))
        return ox.Literal(value)

    traj, session, plan = ox.NamedNode(record.iri), node("session"), node("plan")
    # agents are described inside each trajectory (no triple is shared between
    # trajectory graphs, so queries over their union count every session once)
    assistant, service = node("assistant"), node("service-agent")
    add(traj, RDF_TYPE, DK.Trajectory)
    add(traj, DK.formatVersion, lit(FORMAT_VERSION, "integer"))      # Oxigraph keeps derived integer types as xsd:integer
    add(traj, DK.scoringVersion, lit(SCORING_VERSION))      # the rules it was judged and simulated under
    add(traj, DK.physicsVersion, lit(PHYSICS_VERSION))
    add(traj, DK.recordOf, session)
    add(session, RDF_TYPE, DK.DiagnosticSession)
    add(session, DK.onScenario, record.scenario_iri)
    add(session, PROV + "wasAssociatedWith", assistant)
    add(session, PROV + "wasAssociatedWith", service)
    add(session, DK.seed, lit(record.seed, "integer"))
    add(session, DK.actionBudget, lit(record.budget, "integer"))
    add(session, DK.endValue, END_IRIS[End(record.end)])
    add(session, DK.costMinutes, lit(float(record.total_cost)))
    add(session, DK.roundCount, lit(len(record.rounds), "integer"))
    add(session, PROV + "startedAtTime", lit(record.started.isoformat(), "dateTime"))
    add(session, DK.wallTimeSeconds, lit(round(record.wall_time, 6)))
    add(session, DK.privileged, lit(bool(record.privileged)))
    add(plan, RDF_TYPE, PPLAN + "Plan")
    add(plan, PROV + "wasAttributedTo", assistant)
    add(assistant, RDF_TYPE, DK.DiagnosticAssistant)
    add(assistant, RDF_TYPE, PROV + "SoftwareAgent")
    add(assistant, RDFS_LABEL, lit(record.assistant))
    add(assistant, DK.assistantConfiguration, lit(json.dumps(record.config, sort_keys=True)))
    if record.api_version is not None:
        add(assistant, DK.pluginApiVersion, lit(int(record.api_version), "integer"))
    add(service, RDF_TYPE, DK.ServiceAgent)
    add(service, RDFS_LABEL, lit("simulator-backed service agent"))

    for r in map(Round.of, record.rounds):
        n = r.number or len(record.rounds)
        rnd = node(f"round-{n}")
        add(rnd, RDF_TYPE, DK.Round)
        add(rnd, DK.inSession, session)
        add(rnd, DK.position, lit(n, "integer"))
        add(rnd, DK.intention, lit(r.intention))
        add(rnd, DK.outcomeText, lit(r.message))
        if r.refusal is not None:      # why nothing was done, as a code (only the words said it)
            add(rnd, DK.refusal, lit(r.refusal.value))
        add(rnd, DK.costMinutes, lit(float(r.cost)))
        if r.decision_seconds is not None:
            add(rnd, DK.wallTimeSeconds, lit(round(r.decision_seconds, 6)))
        for c in r.healthy:       # the false removals of the round, as the service agent judged them
            add(rnd, DK.healthyPart, sys_ns + c)
        step = None
        action = r.action
        if r.kind is Kind.ACTION and action is not None and action.action in catalogue_iris:
            step = node(f"step-{n}")
            add(rnd, DK.suggestion, step)
            add(step, RDF_TYPE, DK.DiagnosticAction)
            add(step, PPLAN + "isStepOfPlan", plan)
            add(step, DK.position, lit(n, "integer"))
            add(step, DK.actionType, catalogue_iris[action.action])
            for t in action.targets:
                add(step, DK.target, sys_ns + t)
            if action.value is not None:
                add(step, DK.actionParameterValue, lit(float(action.value)))
            if r.instruction:
                add(step, DK.instruction, lit(r.instruction))
        elif r.kind is Kind.HYPOTHESIS:
            hyp = node(f"hypothesis-{n}")
            add(rnd, DK.suggestion, hyp)
            add(hyp, RDF_TYPE, DK.Hypothesis)
            add(hyp, PROV + "wasAttributedTo", assistant)
            for c in r.suspects or ():
                add(hyp, DK.suspects, sys_ns + c)
            if r.explanation:
                add(hyp, DK.explanation, lit(r.explanation))
            if r.instruction:
                add(hyp, DK.instruction, lit(r.instruction))
            if r.verdict is None:
                raise InputError(f"round {n} states a hypothesis without a verdict")
            add(hyp, DK.verdict, VERDICT_IRIS[r.verdict])
            # its own cost (the repairs it implies): the access they needed is stored as executed actions, each with
            # its cost, so that a round costs its executed actions and its hypothesis, each counted once
            access = sum(cost for action_id, _, cost in r.executed if action_id in catalogue_iris)
            add(hyp, DK.costMinutes, lit(float(r.cost) - access))
        if r.mapped_by:    # the service agent's mapping of the instruction (a recorded LLM call)
            add(rnd, DK.mappedBy, node(f"llm-call-{r.mapped_by}"))
        for k, (action_id, targets, cost) in enumerate(r.executed, 1):
            if action_id not in catalogue_iris:
                continue   # verify_repair (a hypothesis) or an unknown action: nothing was executed
            ex = node(f"round-{n}-executed-{k}")
            add(rnd, DK.executed, ex)
            add(ex, RDF_TYPE, DK.ExecutedAction)
            add(ex, DK.actionType, catalogue_iris[action_id])
            add(ex, DK.position, lit(k, "integer"))
            for t in targets:
                add(ex, DK.target, sys_ns + t)
            add(ex, DK.costMinutes, lit(float(cost)))
            add(ex, DK.succeeded, lit(bool(r.success) or cost > 0))
            add(ex, PROV + "wasAssociatedWith", service)
            if step is not None:
                add(ex, PPLAN + "correspondsToStep", step)
        if r.kind is Kind.ACTION and r.success and action is not None:
            last = node(f"round-{n}-executed-{len(r.executed)}")
            _observations(r, action, last, node, add, lit, sys_ns)
    quads.extend(ox.Quad(t.subject, t.predicate, t.object, g) for t in record.extra)
    return quads


# 2: structured results of inspections and tests (1: inspections as text); 3: each round's healthy parts (dk:healthyPart);
# 4: a hypothesis's dk:costMinutes is its own (the repairs it implies), the access they needed being executed actions
# of the round (it was the round's, counting the access twice for whoever summed both)
FORMAT_VERSION = 4

TERMINAL_STATES = {"attached": DK.Attached, "loose": DK.Loose, "off": DK.Off}
VERDICTS = {"nominal": DK.VerdictNominal, "open": DK.VerdictOpen, "short": DK.VerdictShort,
            "degraded": DK.VerdictDegraded, "shorted": DK.VerdictShorted, "resistive": DK.VerdictResistive,
            "not applicable (a source)": DK.VerdictNotApplicable, "one end is off its terminal": DK.VerdictEndOff}


def _observations(r: Round, action: Action, activity: ox.NamedNode, node: Callable[[str], ox.NamedNode],
                  add: Callable[[ox.NamedNode, str | ox.NamedNode, Term], None],
                  lit: Callable[..., ox.Literal], sys_ns: str) -> None:
    """SOSA observations for what an executed action measured or saw."""
    count = 0

    def observe(feature: str, prop: str, value: float | None = None, unit: str = "", simple: Any = None,
                terminal: dict[str, Any] | None = None, verdict: str | None = None,
                settled: bool | None = None, floating: bool = False) -> None:
        nonlocal count
        count += 1
        obs = node(f"round-{r.number}-observation-{count}")
        add(obs, RDF_TYPE, SOSA + "Observation")
        add(obs, SOSA + "hasFeatureOfInterest", sys_ns + feature)
        add(obs, SOSA + "observedProperty", prop)
        add(obs, PROV + "wasGeneratedBy", activity)
        if settled is False:      # a reading that kept changing (typed Voltages/Current.settled); None says nothing
            add(obs, DK.settled, lit(False))
        if floating:              # a potential the meter could not read: an end nothing holds (no result)
            add(obs, DK.floating, lit(True))
        if simple is not None:
            add(obs, SOSA + "hasSimpleResult", lit(simple))
        elif verdict is not None:
            add(obs, SOSA + "hasResult", verdict)
        elif terminal is not None:
            res = node(f"round-{r.number}-observation-{count}-result")
            add(obs, SOSA + "hasResult", res)
            add(res, RDF_TYPE, SOSA + "Result")
            add(res, DK.terminalState, TERMINAL_STATES[terminal["state"]])
            for other in terminal.get("attached_to", ()):
                add(res, DK.attachedTo, sys_ns + other)
        elif value is not None:
            res = node(f"round-{r.number}-observation-{count}-result")
            add(obs, SOSA + "hasResult", res)
            add(res, RDF_TYPE, QUDT + "QuantityValue")
            add(res, QUDT + "numericValue", lit(float(value)))
            add(res, QUDT + "hasUnit", UNIT + unit)

    data = r.data
    for target in action.targets:
        d = data.get(target)
        if not isinstance(d, dict):
            continue
        for port, volts in (d.get("port_voltages") or {}).items():
            # a floating end is an observation too (it was left out: read as an end never measured)
            observe(f"{target}.{port}", DK.ElectricPotential, volts, "V", settled=d.get("settled"), floating=volts is None)
        if "current" in d and isinstance(d["current"], (int, float)):
            observe(target, DK.ElectricCurrent, d["current"], "A", settled=d.get("settled"))
        if isinstance(d.get("resistance"), (int, float)):
            observe(target, DK.ElectricResistance, d["resistance"], "OHM")
        if "lit" in d:
            observe(target, DK.LightEmission, simple=bool(d["lit"]))
        if isinstance(d.get("verdict"), str) and d["verdict"] in VERDICTS:
            observe(target, DK.TestVerdict, verdict=VERDICTS[d["verdict"]])
        if isinstance(d.get("passed"), bool):
            observe(target, DK.TestVerdict, verdict=DK.VerdictPass if d["passed"] else DK.VerdictFail)
        ends = dict(d.get("visible_ends") or {})       # what a look shows of a cable's ends
        ends.update({port: end for port, end in d.items()      # a connection inspection's terminals
                     if isinstance(end, dict) and "attached_to" in end})
        for port, end in ends.items():
            end = end if isinstance(end, dict) else {"state": end}
            if end.get("state") in TERMINAL_STATES:
                observe(f"{target}.{port}", DK.TerminalConnection, terminal=end)
    held = data.get(HELD_LIGHTS)     # the lights seen while a test held (a bridge, a switch opened: seen_while_held)
    if isinstance(held, dict) and HELD_LIGHTS not in action.targets:
        looks = frozenset(Light)        # (a Light is its string: plain data or typed alike)
        for lamp, light in held.items():
            if light in looks:
                observe(lamp, DK.LightEmission, simple=light != Light.OFF)
    path = data.get("path")
    if isinstance(path, dict) and isinstance(path.get("resistance"), (int, float)) and path["resistance"] < 1e300:
        observe(path["from"], DK.ElectricResistance, path["resistance"], "OHM")
    if count == 0:
        observe(action.targets[0], DK.InspectionResult, simple=r.message)


def validate(quads: Iterable[ox.Quad], name: str) -> None:
    """Raise :class:`ValidationError` if the trajectory does not conform.

    It is checked as the Turtle document its triples make (Oxigraph writes it; a violation names
    its line there, and its terms by these prefixes): the compiled shapes read the triples as they
    are, and only a trajectory they cannot clear is parsed by rdflib for pySHACL
    (:mod:`diagkg.kg.trajectory_shapes`)."""
    from ..kg import trajectory_shapes

    found = trajectory_shapes.violations([q.triple for q in quads], name, PREFIXES)
    if found:
        raise ValidationError(found)


class CheckPolicy(enum.Enum):
    """When a written trajectory is checked against the shapes before it is stored.

    Trajectories are built correct by construction (:func:`to_quads`; the
    tests check every writer's output against the shapes), so a full SHACL
    run, which costs more than the session itself, is kept where it protects:

    * ``always`` — every trajectory (the test suite, imported records);
    * ``first`` — the first trajectory of each kind (assistant × system) a
      store receives, and one in :data:`SAMPLE_EVERY` of those a process
      writes (the default);
    * ``never`` — none (benchmarks of the session alone).

    Set with ``DIAGKG_CHECK_TRAJECTORIES``; hand-written or imported
    trajectories are validated when they are loaded, like any other file.
    """

    ALWAYS = "always"
    FIRST = "first"
    NEVER = "never"

    @classmethod
    def from_env(cls) -> "CheckPolicy":
        value = os.environ.get("DIAGKG_CHECK_TRAJECTORIES", cls.FIRST.value).strip().lower()
        try:
            return cls(value)
        except ValueError:
            raise InputError(f"DIAGKG_CHECK_TRAJECTORIES is {value!r}; use one of "
                             f"{', '.join(p.value for p in cls)}") from None


SAMPLE_EVERY = 50
_checked_kinds: set[tuple[str, str]] = set()
_written = 0


def _wants_check(policy: CheckPolicy, record: SessionRecord, store: KnowledgeStore) -> bool:
    global _written
    if policy is CheckPolicy.ALWAYS:
        return True
    if policy is CheckPolicy.NEVER:
        return False
    _written += 1
    kind = (record.assistant, record.system_iri or record.system_key)
    if kind not in _checked_kinds:
        _checked_kinds.add(kind)
        if not record.system_iri or not store.select("trajectory-of-kind", {
                "assistant": ox.Literal(record.assistant), "system": ox.NamedNode(record.system_iri),
                "format": ox.Literal(str(FORMAT_VERSION), datatype=ox.NamedNode(XSD + "integer"))}):
            return True        # the first of its kind in this store
    return _written % SAMPLE_EVERY == 0


def store_record(store: KnowledgeStore, record: SessionRecord, catalogue_iris: dict[str, str],
                 check: CheckPolicy | None = None) -> str:
    """Store a trajectory (checked against the shapes as ``check`` says, by
    default as ``DIAGKG_CHECK_TRAJECTORIES`` says); returns its IRI."""
    quads = to_quads(record, catalogue_iris)
    if _wants_check(check or CheckPolicy.from_env(), record, store):
        validate(quads, f"trajectory {record.trajectory_id}")
    store.replace_graph(record.graph, [q.triple for q in quads])
    return record.iri
