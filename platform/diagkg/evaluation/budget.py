"""A campaign's money: what its sessions spent on language models, and its
cost limit (``diagkg evaluate --cost-limit USD``).

The store is the source of truth: what a campaign has spent is the sum, over
its trajectories, of each session's ``dk:moneyCost`` plus the
``dk:priorMoneyCost`` of the failed sessions a trajectory replaced
(``--retry-failed``), read with ``queries/campaign-money.rq``, plus what the
sessions of runs killed with them in flight spent (``dk:UnstoredSpending``,
:mod:`~diagkg.evaluation.money_journal`), plus what its
judge spent (cluster labels, rubric ratings: the ``dk:moneyCost`` of each call
record linked to one of its judgements with ``dk:callFor``,
``queries/campaign-judge-money.rq``), read when a campaign starts or resumes;
the writer then adds each trajectory it stores. The judge is given what
remains after the sessions and does not start once the limit is reached
(:func:`judge_allowance`). A new
session is given only what remains (its own ``cost_limit``), and when the
limit is reached — or a session stopped because what remained was too little
for its next call — the campaign schedules nothing more (sessions already in
flight finish) and records a :data:`~diagkg.kg.vocab.DK.CampaignStop` with its
typed reason in its graph. ``--resume`` with a higher limit continues; a
``--resume`` without one keeps the limit the campaign was last given
(:func:`campaign_limit`, ``dk:costLimit`` on the campaign).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Iterable

import pyoxigraph as ox

from ..errors import InputError
from ..kg.rdfio import datetime_literal
from ..kg.vocab import DK
from ..llm.records import CAUSE_IRIS, FailureCause
from .campaign import RDF_TYPE, XSD, Campaign, Task

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

PROV = "http://www.w3.org/ns/prov#"


class StopReason(StrEnum):
    """Why a campaign stopped scheduling sessions (``skos:notation`` of the ``dk:Stop*`` individuals)."""

    COST_LIMIT = "cost_limit"


STOP_IRIS = {StopReason.COST_LIMIT: DK.StopCostLimit}
_CAUSES: dict[str, FailureCause] = {str(iri): cause for cause, iri in CAUSE_IRIS.items()}


@dataclass(frozen=True)
class Stop:
    """A campaign run that stopped early: why, the limit, what was spent, sessions not run."""

    reason: StopReason
    limit: float
    spent: float
    left: int

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason.value, "cost_limit": self.limit, "spent": round(self.spent, 8), "left": self.left}

    def message(self, campaign_id: str) -> str:
        return (f"stopped: the campaign's LLM cost limit of {self.limit:g} was reached (its finished sessions and "
                f"its judge spent {self.spent:.4f}); {self.left} planned session(s) not run. Everything finished is "
                f"stored; continue with a higher limit: diagkg evaluate --resume {campaign_id} --cost-limit AMOUNT")


def check_pricing(config: dict[str, Any], limit: float) -> None:
    """Refuse a cost limit that cannot be kept: no model or no price for it."""
    from ..llm.settings import LLMSettings

    if limit < 0:
        raise InputError(f"--cost-limit must be at least 0, got {limit:g}")
    settings = LLMSettings.from_config(dict(config, cost_limit=limit), need_endpoint=False)
    if not settings.model or settings.price() is None:
        raise InputError("--cost-limit needs the model and its price: give model and pricing "
                         '{"MODEL": [per million prompt tokens, per million completion tokens]} in --config '
                         "(or DIAGKG_LLM_MODEL)")


@dataclass
class Spending:
    """What a campaign's trajectories spent, by trajectory (money, prior money), what its judge
    spent, by call record, and its limit."""

    limit: float | None = None
    by_trajectory: dict[str, tuple[float, float]] = field(default_factory=dict)
    starved: bool = False       # a session stopped at the limit: what remains is too little for a call
    by_judge_call: dict[str, float] = field(default_factory=dict)
    unstored: float = 0.0       # spent by sessions of killed runs that never reached the store (money_journal)

    @classmethod
    def read(cls, store: KnowledgeStore, campaign: Campaign, limit: float | None = None) -> "Spending":
        rows = store.select("campaign-money", {"campaign": campaign.node})
        spending = cls(limit, {r["trajectory"]: (float(r["money"]), float(r["prior"])) for r in rows})
        spending.by_judge_call = {r["call"]: float(r["money"])
                                  for r in store.select("campaign-judge-money", {"campaign": campaign.node})}
        spending.unstored = sum(float(r["money"]) for r in store.select("campaign-unstored-money",
                                                                        {"campaign": campaign.node}))
        # a limit no higher than one the campaign already stopped at leaves too little for a call
        spending.starved = limit is not None and any(
            r["reason"] == StopReason.COST_LIMIT.value and r["limit"] is not None and float(r["limit"]) >= limit
            for r in stops(store, campaign))
        return spending

    @property
    def sessions(self) -> float:
        """What the sessions spent (failed sessions that were run again included, and those of killed runs that
        never reached the store)."""
        return sum(m + p for m, p in self.by_trajectory.values()) + self.unstored

    @property
    def judge(self) -> float:
        """What the judge spent (cluster labels and rubric ratings, failed ones included)."""
        return sum(self.by_judge_call.values())

    @property
    def spent(self) -> float:
        return self.sessions + self.judge

    @property
    def remaining(self) -> float | None:
        return None if self.limit is None else max(0.0, self.limit - self.spent)

    def exhausted(self) -> bool:
        return self.limit is not None and (self.starved or self.spent >= self.limit)

    def allow(self, task: Task) -> Task:
        """The task with what remains as its session's cost limit (unchanged without a limit)."""
        left = self.remaining
        if left is None:
            return task
        return replace(task, config=dict(task.config, cost_limit=round(left, 8)))

    def count(self, trajectory: str, money: float, cause: FailureCause | None, replaces: str = "") -> list[ox.Triple]:
        """Count a trajectory about to be stored, whose money and truncation cause its worker read
        (:func:`session_money`); returns the triples to add to its graph (what the failed session it
        replaces had spent, so the campaign keeps counting it)."""
        old = self.by_trajectory.pop(replaces, (0.0, 0.0)) if replaces else (0.0, 0.0)
        prior = old[0] + old[1]
        self.by_trajectory[trajectory] = (money, prior)
        if cause is FailureCause.COST_LIMIT and self.limit is not None:
            self.starved = True
        if not prior:
            return []
        return [ox.Triple(ox.NamedNode(trajectory), ox.NamedNode(DK.priorMoneyCost),
                          ox.Literal(f"{prior:.8f}", datatype=ox.NamedNode(XSD + "decimal")))]

    def stop(self, left: int) -> Stop:
        assert self.limit is not None
        return Stop(StopReason.COST_LIMIT, self.limit, self.spent, left)


def judge_allowance(store: KnowledgeStore, campaign: Campaign, limit: float | None) -> float | None:
    """What the judge may spend now: ``limit`` less everything the campaign spent (its sessions and
    its judge so far, read from the store); None without a limit, 0 when the limit is reached (the
    judge is then not started)."""
    if limit is None:
        return None
    return Spending.read(store, campaign, limit).remaining


def session_money(trajectory: str, triples: Iterable[ox.Triple]) -> tuple[float, FailureCause | None]:
    """A trajectory's session money and the cause of its LLM truncation (if any), from its triples."""
    session = ox.NamedNode(trajectory + "#session")
    money, cause = 0.0, None
    for t in triples:
        if t.subject != session or isinstance(t.object, ox.Triple):
            continue
        if t.predicate.value == str(DK.moneyCost):
            money = float(t.object.value)
        elif t.predicate.value == str(DK.failureCause):
            cause = _CAUSES.get(t.object.value)
    return money, cause


def stop_quads(campaign: Campaign, stop: Stop) -> list[ox.Quad]:
    """The record of a stop, for the campaign's graph."""
    now = datetime.now(timezone.utc)
    node = ox.NamedNode(f"{campaign.iri}#stop-{now.strftime('%Y%m%dT%H%M%S%f')}")
    g = campaign.graph

    def dec(x: float) -> ox.Literal:
        return ox.Literal(f"{x:.8f}", datatype=ox.NamedNode(XSD + "decimal"))

    return [ox.Quad(node, RDF_TYPE, ox.NamedNode(DK.CampaignStop), g),
            ox.Quad(node, ox.NamedNode(DK.stoppedCampaign), campaign.node, g),
            ox.Quad(node, ox.NamedNode(DK.stopReason), ox.NamedNode(STOP_IRIS[stop.reason]), g),
            ox.Quad(node, ox.NamedNode(DK.costLimit), dec(stop.limit), g),
            ox.Quad(node, ox.NamedNode(DK.moneySpent), dec(stop.spent), g),
            ox.Quad(node, ox.NamedNode(DK.sessionsLeft), ox.Literal(str(stop.left), datatype=ox.NamedNode(XSD + "integer")), g),
            ox.Quad(node, ox.NamedNode(PROV + "atTime"), datetime_literal(now), g)]


def stops(store: KnowledgeStore, campaign: Campaign) -> list[dict[str, Any]]:
    """The campaign's recorded stops, oldest first."""
    return store.select("campaign-stops", {"campaign": campaign.node})


def campaign_limit(store: KnowledgeStore, campaign: Campaign, given: float | None) -> float | None:
    """The campaign's cost limit: ``given`` (recorded on the campaign, in its graph, for later resumes),
    else the one it was last given (``queries/campaign-cost-limit.rq``; None if never). A resume after
    Ctrl-C or kill -9 without ``--cost-limit`` ran every session left, and the judge, with no limit."""
    if given is None:
        rows = store.select("campaign-cost-limit", {"campaign": campaign.node})
        return float(rows[0]["limit"]) if rows else None
    store.update("campaign-set-cost-limit", graph=campaign.graph, campaign=campaign.node,
                 limit=ox.Literal(f"{given:.8f}", datatype=ox.NamedNode(XSD + "decimal")))
    return given
