"""Qualitative analysis of a finished campaign by a language model (the judge).

For each assistant × scenario whose last batch is final (converged, capped or
complete):

* **Clusters and labels** (adaptive campaigns): the final verdict's intent
  clusters (when the sentence-embedding model's files are installed) and execution clusters,
  computed again from the store exactly as :mod:`diagkg.evaluation.adaptive`
  computed them, each stored as a ``dk:BehaviourCluster`` with its members and
  its representative (the medoid), and labelled by the judge: a short label and
  a one-sentence description of the strategy (``cluster-label.j2``).
* **The rubric**: the representative of each intent cluster (execution clusters
  when intent clustering is off; every trajectory of a ``--runs N`` campaign)
  is rated on five dimensions, high / medium / low with a rationale, with an
  overall comment, and compared with the scenario's gold — its injected faults
  and ideal repair, read from the store — as correct / partial / incorrect /
  different_strategy (``rubric.j2``).

The judge answers through the LLM client's structured output (a JSON schema).
A reply still unusable after the client's retries, or with a value outside the
enums, is stored as a failed judgement with its typed cause
(:class:`~diagkg.llm.records.FailureCause`), never a crash; it is asked again
on the next run. Everything (clusters, labels, ratings, and the record of every
call) goes into the campaign's graph, one transaction per judgement, so a run
resumes where it stopped: what is done (``queries/qualitative-done.rq``) is not
asked again. Prompts are filled from SPARQL results (``trajectory-summary``,
``trajectory-rounds``, ``scenario-faults``, ``scenario-repair``, ``llm-system``).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence
from urllib.parse import quote

import pyoxigraph as ox

from ..kg.rdfio import datetime_literal
from ..kg.vocab import DK
from ..llm.records import CAUSE_IRIS, CallLog, FailureCause
from . import campaign as cp
from .campaign import RDF_TYPE, XSD, Campaign

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from ..llm.settings import LLMSettings
    from .protocol import Usable

PROV = "http://www.w3.org/ns/prov#"
JUDGE_MAX_TOKENS = 1200       # the judge's max_tokens unless its settings say otherwise
SKIP_MESSAGE = ("qualitative analysis skipped (cluster labels and the rubric): no language model is configured. "
                "Give one in --config's \"llm\" section, e.g. "
                '{"llm": {"base_url": "http://127.0.0.1:8080/v1", "model": "MODEL"}}, or set DIAGKG_LLM_BASE_URL '
                "and DIAGKG_LLM_MODEL; then run: diagkg qualitative CAMPAIGN")


class Level(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Dimension(StrEnum):
    ACTIONABILITY = "actionability"
    DIAGNOSTIC_COHERENCE = "diagnostic_coherence"
    EFFICIENCY = "efficiency"
    CONSISTENCY = "consistency"
    EVIDENCE_USAGE = "evidence_usage"


class Match(StrEnum):
    CORRECT = "correct"
    PARTIAL = "partial"
    INCORRECT = "incorrect"
    DIFFERENT_STRATEGY = "different_strategy"


class Kind(StrEnum):
    INTENT = "intent"
    EXECUTION = "execution"


LEVEL_IRIS = {Level.HIGH: DK.LevelHigh, Level.MEDIUM: DK.LevelMedium, Level.LOW: DK.LevelLow}
DIMENSION_IRIS = {Dimension.ACTIONABILITY: DK.Actionability, Dimension.DIAGNOSTIC_COHERENCE: DK.DiagnosticCoherence,
                  Dimension.EFFICIENCY: DK.Efficiency, Dimension.CONSISTENCY: DK.Consistency,
                  Dimension.EVIDENCE_USAGE: DK.EvidenceUsage}
MATCH_IRIS = {Match.CORRECT: DK.MatchCorrect, Match.PARTIAL: DK.MatchPartial, Match.INCORRECT: DK.MatchIncorrect,
              Match.DIFFERENT_STRATEGY: DK.MatchDifferentStrategy}
KIND_IRIS = {Kind.INTENT: DK.IntentClustering, Kind.EXECUTION: DK.ExecutionClustering}

LABEL_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["label", "description"],
    "properties": {"label": {"type": "string"}, "description": {"type": "string"}}}
_RATED = {"type": "object", "required": ["level", "rationale"],
          "properties": {"level": {"type": "string", "enum": [v.value for v in Level]}, "rationale": {"type": "string"}}}
RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object", "required": [*(d.value for d in Dimension), "overall", "match", "explanation"],
    "properties": {**{d.value: _RATED for d in Dimension}, "overall": {"type": "string"},
                   "match": {"type": "string", "enum": [m.value for m in Match]}, "explanation": {"type": "string"}}}


# ---------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------

def judge_settings(config: Mapping[str, Any]) -> LLMSettings | None:
    """The judge's settings: ``config``'s ``llm`` section, else its own LLM keys, else the
    ``DIAGKG_LLM_*`` environment; None when no endpoint and model are configured."""
    from ..llm.settings import LLMSettings

    section = config.get("llm")
    source = dict(section) if isinstance(section, Mapping) else dict(config)
    # a rubric reply (five rationales, a comment, an explanation) needs more room than a session's choice
    source.setdefault("max_tokens", JUDGE_MAX_TOKENS)
    settings = LLMSettings.from_config(source, need_endpoint=False)
    if not settings.base_url or not settings.model:
        return None
    return settings


# ---------------------------------------------------------------------------
# clusters
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Cluster:
    campaign: Campaign
    assistant: str
    number: int
    scenario_iri: str
    kind: Kind
    index: int
    members: tuple[str, ...]          # trajectory IRIs
    representative: str

    @property
    def iri(self) -> str:
        digest = hashlib.sha256("\n".join(self.members).encode("utf-8")).hexdigest()[:12]
        return f"{self.campaign.iri}/cluster/{self.kind.value}-{quote(self.assistant, safe='')}-{self.number}-{digest}"

    def quads(self) -> list[ox.Quad]:
        c, g = ox.NamedNode(self.iri), self.campaign.graph
        quads = [ox.Quad(c, RDF_TYPE, ox.NamedNode(DK.BehaviourCluster), g),
                 ox.Quad(c, ox.NamedNode(DK.clusterOf), self.campaign.node, g),
                 ox.Quad(c, ox.NamedNode(DK.assistantName), ox.Literal(self.assistant), g),
                 ox.Quad(c, ox.NamedNode(DK.clusterScenario), ox.NamedNode(self.scenario_iri), g),
                 ox.Quad(c, ox.NamedNode(DK.clusteringKind), ox.NamedNode(KIND_IRIS[self.kind]), g),
                 ox.Quad(c, ox.NamedNode(DK.clusterIndex), _int(self.index), g),
                 ox.Quad(c, ox.NamedNode(DK.clusterSize), _int(len(self.members)), g),
                 ox.Quad(c, ox.NamedNode(DK.representative), ox.NamedNode(self.representative), g)]
        quads += [ox.Quad(c, ox.NamedNode(DK.clusterMember), ox.NamedNode(m), g) for m in self.members]
        return quads


def _int(n: int) -> ox.Literal:
    return ox.Literal(str(n), datatype=ox.NamedNode(XSD + "integer"))


def _medoid(indices: Sequence[int], distances: Any) -> int:
    sub = distances[list(indices)][:, list(indices)]
    return int(indices[int(sub.sum(axis=1).argmin())])


def final_clusters(campaign: Campaign, assistant: str, number: int, scenario_iri: str,
                   trajectories: Sequence[Usable]) -> dict[Kind, list[Cluster]]:
    """The final verdict's clusters of these trajectories (all batches pooled, in batch then seed order,
    as :func:`diagkg.evaluation.adaptive.assess` pools them), each with its medoid."""
    from . import adaptive

    pooled = sorted(trajectories, key=lambda u: (u.batch, u.seed))
    behaviours = [adaptive.Behaviour(actions=u.actions, intentions=u.intentions) for u in pooled]
    if not behaviours:
        return {}
    out: dict[Kind, list[Cluster]] = {}
    kinds: list[tuple[Kind, Any, Any]] = []
    d = adaptive.execution_distances(behaviours)
    kinds.append((Kind.EXECUTION, d, adaptive.cluster_execution(d)))
    if adaptive.embeddings_available():
        d = adaptive.intent_distances(behaviours)
        kinds.append((Kind.INTENT, d, adaptive.cluster_intent(d)[0]))
    for kind, distances, labels in kinds:
        clusters = []
        for index in range(int(labels.max()) + 1):
            members = [i for i, x in enumerate(labels) if int(x) == index]
            rep = _medoid(members, distances)
            clusters.append(Cluster(campaign, assistant, number, scenario_iri, kind, index,
                                    tuple(pooled[i].trajectory for i in members), pooled[rep].trajectory))
        out[kind] = clusters
    return out


# ---------------------------------------------------------------------------
# what to ask
# ---------------------------------------------------------------------------

@dataclass
class Plan:
    clusters: list[Cluster] = field(default_factory=list)           # to label
    ratings: list[tuple[str, Cluster | None]] = field(default_factory=list)   # trajectory, its cluster
    notes: list[str] = field(default_factory=list)


def plan(store: KnowledgeStore, campaign: Campaign) -> Plan:
    """What the judge is to label and rate in ``campaign`` (done or not)."""
    from ..env.scenarios import ScenarioCatalog
    from .protocol import usable

    cfg = campaign.config
    catalog = ScenarioCatalog(store)
    history = cp.batches(store, campaign)
    out = Plan()
    for a in cfg.assistants:
        for n in cfg.scenarios:
            states = history.get((a, n), [])
            if not states or states[-1]["state"] not in cp.FINAL_STATES:
                out.notes.append(f"{a} on scenario {n}: not finished, not judged yet")
                continue
            scenario_iri = catalog.entry(n).iri
            trajectories = usable(store, campaign, a, scenario_iri)
            if cfg.protocol == "fixed":
                out.ratings += [(u.trajectory, None) for u in trajectories]
                continue
            clusters = final_clusters(campaign, a, n, scenario_iri, trajectories)
            for kind in (Kind.INTENT, Kind.EXECUTION):
                out.clusters += clusters.get(kind, [])
            rated = clusters.get(Kind.INTENT) or clusters.get(Kind.EXECUTION) or []
            out.ratings += [(c.representative, c) for c in rated]
    if cfg.protocol == "adaptive" and not _embeddings():
        out.notes.append("intent clustering is off (the sentence embeddings model's files are not installed): the "
                         "rubric rates the representatives of the execution clusters")
    return out


def _embeddings() -> bool:
    from .adaptive import embeddings_available

    return embeddings_available()


def done(store: KnowledgeStore, campaign: Campaign) -> tuple[set[str], set[str]]:
    """The clusters already labelled and the trajectories already rated."""
    labelled: set[str] = set()
    rated: set[str] = set()
    for r in store.select("qualitative-done", {"campaign": campaign.node}):
        (labelled if r["kind"] == "label" else rated).add(r["subject"])
    return labelled, rated


# ---------------------------------------------------------------------------
# prompts (from SPARQL results)
# ---------------------------------------------------------------------------

def trajectory_context(store: KnowledgeStore, trajectory: str) -> dict[str, Any]:
    """What the templates say about one trajectory: its headline, its rounds, its system."""
    from ..env.scenarios import ScenarioCatalog

    t = ox.NamedNode(trajectory)
    head = store.select("trajectory-summary", {"trajectory": t})[0]
    rounds: dict[int, dict[str, Any]] = {}
    for r in store.select("trajectory-rounds", {"trajectory": t}):
        entry = rounds.setdefault(int(r["position"]), {
            "position": int(r["position"]), "intention": r["intention"], "outcome": r["outcome"],
            "cost": r["cost"], "kind": r["kind"] or "none", "verdict": r["verdict"] or "", "executed": []})
        if r["executed"] and r["executed"].strip() not in entry["executed"]:
            entry["executed"].append(r["executed"].strip())
    scenario = ScenarioCatalog(store).entry(int(head["scenario"]))      # the index says enough
    system = store.select("llm-system", {"system": ox.NamedNode(scenario.system_iri)})
    return {"trajectory": head, "rounds": [rounds[k] for k in sorted(rounds)], "scenario_iri": scenario.iri,
            "system": system[0] if system else {"label": scenario.key, "description": ""}}


def gold_context(store: KnowledgeStore, scenario_iri: str) -> dict[str, Any]:
    """The scenario's injected faults and ideal repair."""
    s = ox.NamedNode(scenario_iri)

    def local(iri: str | None) -> str:
        return iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1] if iri else ""

    faults = [{"mode": r["modeLabel"], "target": local(r["target"]), "other": local(r["other"])}
              for r in store.select("scenario-faults", {"scenario": s})]
    repair = [{"position": int(r["position"]), "action": r["action"], "target": r["target"], "value": r["value"]}
              for r in store.select("scenario-repair", {"scenario": s})]
    return {"faults": faults, "repair": repair}


def _messages(template: str, context: dict[str, Any]) -> list[dict[str, Any]]:
    from ..llm import prompting

    return [{"role": "system", "content": prompting.render("judge-system.j2")},
            {"role": "user", "content": prompting.render(template, trajectory_part="judge-trajectory.j2", **context)}]


# ---------------------------------------------------------------------------
# judgements as RDF
# ---------------------------------------------------------------------------

class JudgementError(Exception):
    """A reply that parsed but holds a value outside what was asked for."""


@dataclass
class Judged:
    """One judgement's outcome."""

    iri: str
    ok: bool
    cause: FailureCause | None = None
    error: str = ""


def _new_iri(campaign: Campaign) -> str:
    return f"{campaign.iri}/judgement/{uuid.uuid4().hex}"


def _base_quads(campaign: Campaign, iri: str, cls: str, log: CallLog, failure: Judged | None) -> list[ox.Quad]:
    j, g = ox.NamedNode(iri), campaign.graph
    quads = [ox.Quad(j, RDF_TYPE, ox.NamedNode(cls), g),
             ox.Quad(j, ox.NamedNode(DK.judgedIn), campaign.node, g),
             ox.Quad(j, ox.NamedNode(PROV + "generatedAtTime"),
                     datetime_literal(datetime.now(timezone.utc)), g)]
    if failure is not None and failure.cause is not None:
        quads += [ox.Quad(j, ox.NamedNode(DK.failureCause), ox.NamedNode(CAUSE_IRIS[failure.cause]), g),
                  ox.Quad(j, ox.NamedNode(DK.judgementError), ox.Literal(failure.error), g)]
    session = ox.NamedNode(iri + "#session")
    for t in log.triples(iri):            # the calls, each linked to the judgement (not to a session)
        if t.subject == session:
            continue
        if t.predicate.value == str(DK.callInSession):
            quads.append(ox.Quad(t.subject, ox.NamedNode(DK.callFor), j, g))
        else:
            quads.append(ox.Quad(t.subject, t.predicate, t.object, g))
    return quads


def label_quads(cluster: Cluster, iri: str, log: CallLog, reply: dict[str, Any] | None,
                failure: Judged | None) -> list[ox.Quad]:
    g = cluster.campaign.graph
    j = ox.NamedNode(iri)
    quads = cluster.quads() + _base_quads(cluster.campaign, iri, DK.StrategyLabel, log, failure)
    quads.append(ox.Quad(j, ox.NamedNode(DK.labelsCluster), ox.NamedNode(cluster.iri), g))
    if reply is not None:
        quads += [ox.Quad(j, ox.NamedNode(DK.strategyLabel), ox.Literal(str(reply["label"]).strip()), g),
                  ox.Quad(j, ox.NamedNode(DK.strategyDescription), ox.Literal(str(reply["description"]).strip()), g)]
    return quads


@dataclass(frozen=True)
class Rubric:
    """A parsed rubric reply."""

    levels: dict[Dimension, tuple[Level, str]]
    overall: str
    match: Match
    explanation: str

    @classmethod
    def parse(cls, reply: Mapping[str, Any]) -> "Rubric":
        """The typed rubric, or :class:`JudgementError` naming the value that is not allowed."""
        levels: dict[Dimension, tuple[Level, str]] = {}
        for d in Dimension:
            item = reply.get(d.value)
            if not isinstance(item, Mapping):
                raise JudgementError(f"{d.value} is not an object with level and rationale")
            try:
                levels[d] = (Level(str(item.get("level", "")).strip().lower()), str(item.get("rationale", "")))
            except ValueError:
                raise JudgementError(f"{d.value}: level {item.get('level')!r} is not high, medium or low") from None
        try:
            match = Match(str(reply.get("match", "")).strip().lower())
        except ValueError:
            raise JudgementError(f"match {reply.get('match')!r} is not one of "
                                 f"{', '.join(m.value for m in Match)}") from None
        return cls(levels, str(reply.get("overall", "")), match, str(reply.get("explanation", "")))


def rating_quads(campaign: Campaign, trajectory: str, cluster: Cluster | None, iri: str, log: CallLog,
                 rubric: Rubric | None, failure: Judged | None) -> list[ox.Quad]:
    g = campaign.graph
    j = ox.NamedNode(iri)
    quads = (cluster.quads() if cluster else []) + _base_quads(campaign, iri, DK.RubricRating, log, failure)
    quads.append(ox.Quad(j, ox.NamedNode(DK.ratedTrajectory), ox.NamedNode(trajectory), g))
    if cluster is not None:
        quads.append(ox.Quad(j, ox.NamedNode(DK.ratesCluster), ox.NamedNode(cluster.iri), g))
    if rubric is not None:
        for d, (level, why) in rubric.levels.items():
            node = ox.NamedNode(f"{iri}#{d.value}")
            quads += [ox.Quad(j, ox.NamedNode(DK.dimensionRating), node, g),
                      ox.Quad(node, RDF_TYPE, ox.NamedNode(DK.DimensionRating), g),
                      ox.Quad(node, ox.NamedNode(DK.rubricDimension), ox.NamedNode(DIMENSION_IRIS[d]), g),
                      ox.Quad(node, ox.NamedNode(DK.ratingLevel), ox.NamedNode(LEVEL_IRIS[level]), g),
                      ox.Quad(node, ox.NamedNode(DK.rationale), ox.Literal(why), g)]
        quads += [ox.Quad(j, ox.NamedNode(DK.overallComment), ox.Literal(rubric.overall), g),
                  ox.Quad(j, ox.NamedNode(DK.goldMatch), ox.NamedNode(MATCH_IRIS[rubric.match]), g),
                  ox.Quad(j, ox.NamedNode(DK.goldExplanation), ox.Literal(rubric.explanation), g)]
    return quads


# ---------------------------------------------------------------------------
# running it
# ---------------------------------------------------------------------------

@dataclass
class Summary:
    campaign: str
    labels: int = 0
    labels_failed: int = 0
    ratings: int = 0
    ratings_failed: int = 0
    already: int = 0              # judgements found done and not asked again
    calls: int = 0
    money: float = 0.0
    causes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"campaign": self.campaign, "labels": self.labels, "labels_failed": self.labels_failed,
                "ratings": self.ratings, "ratings_failed": self.ratings_failed, "already_done": self.already,
                "calls": self.calls, "money": round(self.money, 8), "failure_causes": dict(sorted(self.causes.items())),
                "notes": list(self.notes)}


def run(store: KnowledgeStore, campaign: Campaign, settings: LLMSettings, *,
        progress: Callable[[str, int, int], None] | None = None) -> Summary:
    """Label the campaign's clusters and rate its representatives; what is done is not asked again."""
    from ..errors import LLMTruncation
    from ..llm.client import LLMClient, LLMFailure

    work = plan(store, campaign)
    labelled, rated = done(store, campaign)
    summary = Summary(campaign.id, notes=list(work.notes))
    todo_labels = [c for c in work.clusters if c.iri not in labelled]
    todo_ratings = [(t, c) for t, c in dict(work.ratings).items() if t not in rated]
    summary.already = len(work.clusters) - len(todo_labels) + len(dict(work.ratings)) - len(todo_ratings)
    total = len(todo_labels) + len(todo_ratings)
    spent = 0.0
    steps = 0

    def ask(template: str, context: dict[str, Any], schema: dict[str, Any], name: str,
            ) -> tuple[CallLog, dict[str, Any] | None, Judged | None]:
        nonlocal spent
        left = None if settings.cost_limit is None else max(0.0, settings.cost_limit - spent)
        from dataclasses import replace

        log = CallLog()
        client = LLMClient(replace(settings, cost_limit=left), log, role="judge")
        try:
            reply, _ = client.ask(_messages(template, context), schema, name=name, purpose=name)
            return log, reply, None
        except LLMFailure as exc:
            return log, None, Judged("", False, exc.cause, str(exc))
        except LLMTruncation as exc:         # pragma: no cover - LLMFailure is the client's only truncation
            return log, None, Judged("", False, FailureCause.UNPARSEABLE, str(exc))
        finally:
            client.close()
            spent += log.money
            summary.calls += sum(1 for r in log.records if r.source == "endpoint")

    def tick(what: str) -> None:
        nonlocal steps
        steps += 1
        if progress:
            progress(what, steps, total)

    if progress:
        progress("qualitative analysis", 0, total)
    stopped = False
    for cluster in todo_labels:
        context = trajectory_context(store, cluster.representative)
        context.update(kind=cluster.kind.value, size=len(cluster.members),
                       total=sum(len(c.members) for c in work.clusters
                                 if (c.assistant, c.number, c.kind) == (cluster.assistant, cluster.number, cluster.kind)))
        log, reply, failure = ask("cluster-label.j2", context, LABEL_SCHEMA, "cluster-label")
        if reply is not None and not str(reply.get("label", "")).strip():
            reply, failure = None, Judged("", False, FailureCause.UNPARSEABLE, "the label is empty")
        store.add_quads(label_quads(cluster, _new_iri(campaign), log, reply, failure))
        stopped = _count(summary, failure, label=True)
        tick(f"labels ({cluster.assistant})")
        if stopped:
            break
    for trajectory, rated_cluster in ([] if stopped else todo_ratings):
        context = trajectory_context(store, trajectory)
        context.update(gold_context(store, context["scenario_iri"]))
        log, reply, failure = ask("rubric.j2", context, RUBRIC_SCHEMA, "rubric")
        rubric = None
        if reply is not None:
            try:
                rubric = Rubric.parse(reply)
            except JudgementError as exc:
                failure = Judged("", False, FailureCause.UNPARSEABLE, f"the rubric reply is not usable: {exc}")
        store.add_quads(rating_quads(campaign, trajectory, rated_cluster, _new_iri(campaign), log, rubric, failure))
        stopped = _count(summary, failure, label=False)
        tick("rubric")
        if stopped:
            break
    if stopped:
        summary.notes.append("the judge's cost limit was reached: the rest is asked on the next run")
    summary.money = spent
    return summary


def _count(summary: Summary, failure: Judged | None, *, label: bool) -> bool:
    """Count one judgement; True when nothing more can be asked (the cost limit)."""
    if failure is None:
        if label:
            summary.labels += 1
        else:
            summary.ratings += 1
        return False
    if label:
        summary.labels_failed += 1
    else:
        summary.ratings_failed += 1
    cause = failure.cause.value if failure.cause else "unknown"
    summary.causes[cause] = summary.causes.get(cause, 0) + 1
    return failure.cause is FailureCause.COST_LIMIT
