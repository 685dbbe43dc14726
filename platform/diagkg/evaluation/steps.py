"""Every round of a campaign's trajectories, for the report's step viewer.

Three queries per campaign (``queries/campaign-steps.rq``,
``campaign-step-actions.rq``, ``campaign-step-ledger.rq``) give, for each
round: what the assistant suggested (its intention, the action and targets or
the parts a hypothesis named, the instruction it gave), what the service agent
did (the executed actions), what was observed (the outcome), the hypothesis
ledger as it stood after the round (each hypothesis stated so far with its
status at that round; the assistant's ranked candidates) and the running cost.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import pyoxigraph as ox

from .campaign import CAMPAIGN_BASE

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

QUERIES = ("campaign-steps", "campaign-step-actions", "campaign-step-ledger")


@dataclass
class LedgerEntry:
    """A hypothesis as it stood after a round."""

    stated: int                 # the round that stated it
    parts: list[str]
    status: str                 # at this round: confirmed, refuted, open


@dataclass
class Step:
    position: int
    intention: str
    kind: str                   # action, hypothesis, none
    verdict: str | None
    explanation: str | None
    instruction: str | None
    suggested: str              # the action and its targets, or the parts a hypothesis named
    executed: list[str]         # what the service agent carried out, with each action's cost
    outcome: str                # what was observed
    cost: float
    running_cost: float
    ledger: list[LedgerEntry] = field(default_factory=list)
    candidates: list[list[str]] = field(default_factory=list)     # the ranked list at the decision, best first


@dataclass
class TrajectorySteps:
    campaign: str
    trajectory: str
    assistant: str
    scenario: int
    scenario_id: str
    seed: int
    end: str
    steps: list[Step]

    @property
    def total_cost(self) -> float:
        return self.steps[-1].running_cost if self.steps else 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["total_cost"] = self.total_cost
        return data


def _status_at(row: dict[str, Any], position: int) -> str:
    confirmed, refuted = row.get("confirmedAt"), row.get("refutedAt")
    if confirmed is not None and int(confirmed) <= position:
        return "confirmed"
    if refuted is not None and int(refuted) <= position:
        return "refuted"
    return "open"


VIEWER_LIMIT = 1000     # trajectories of one campaign the step viewer shows all of; beyond, each slot's example


def load(store: KnowledgeStore, campaign_ids: Iterable[str], limit: int | None = None,
         notes: list[str] | None = None) -> list[TrajectorySteps]:
    """Every trajectory of these campaigns with its rounds (see the module's documentation); of a campaign
    holding more than ``limit`` (default :data:`VIEWER_LIMIT`) trajectories, the example of each of its
    slots (the lowest seed's trajectory, ``tally-examples.rq``), at most ``limit`` of them, each read on
    its own (what is left out is said in ``notes``)."""
    limit = VIEWER_LIMIT if limit is None else limit
    out: list[TrajectorySteps] = []
    for cid in campaign_ids:
        node = ox.NamedNode(cid if cid.startswith(CAMPAIGN_BASE) else CAMPAIGN_BASE + cid)
        slots = store.select("tally-examples", {"campaign": node})
        total = sum(int(r["total"]) for r in slots)
        examples = [r["example"] for r in slots if r["example"] is not None]
        if total > limit and len(examples) == len(slots):
            shown = examples[:limit]
            for trajectory in shown:
                out += _load(store, {"campaign": node, "trajectory": ox.NamedNode(trajectory)})
            if notes is not None:
                notes.append(f"campaign {node.value[len(CAMPAIGN_BASE):]} holds {total} trajectories: the step "
                             f"viewer shows {len(shown)}, the lowest seed's of "
                             f"{'each' if len(shown) == len(slots) else f'the first {len(shown)}'} of its "
                             f"{len(slots)} assistant × scenario slots")
            continue
        out += _load(store, {"campaign": node})
    return out


def _load(store: KnowledgeStore, bound: dict[str, ox.NamedNode]) -> list[TrajectorySteps]:
    """The trajectories the three step queries give with these inputs, each with its rounds."""
    out: list[TrajectorySteps] = []
    node = bound["campaign"]
    parts: dict[tuple[str, int, str], dict[int, list[str]]] = {}
    costs: dict[tuple[str, int, int], float] = {}
    actions: dict[tuple[str, int, str, int], str] = {}
    for r in store.select("campaign-step-actions", bound):
        key = (r["trajectory"], int(r["position"]), r["role"])
        k = int(r["k"])
        targets = parts.setdefault(key, {}).setdefault(k, [])
        if r["target"] is not None and r["target"] not in targets:
            targets.append(r["target"])
        if r["action"] is not None:
            actions[(r["trajectory"], int(r["position"]), r["role"], k)] = r["action"]
        if r["cost"] is not None:
            costs[(r["trajectory"], int(r["position"]), k)] = float(r["cost"])
    hypotheses: dict[str, list[dict[str, Any]]] = {}
    ranked: dict[tuple[str, int], dict[int, list[str]]] = {}
    for r in store.select("campaign-step-ledger", bound):
        if r["what"] == "hypothesis":
            hypotheses.setdefault(r["trajectory"], []).append(r)
        elif r["part"] is not None:
            ranked.setdefault((r["trajectory"], int(r["position"])), {}).setdefault(int(r["rank"]), []).append(r["part"])
    current: TrajectorySteps | None = None
    for r in store.select("campaign-steps", bound):
        if current is None or current.trajectory != r["trajectory"]:
            current = TrajectorySteps(node.value[len(CAMPAIGN_BASE):], r["trajectory"], r["assistant"],
                                      int(r["scenario"]), r["scenarioId"], int(r["seed"]), r["end"], [])
            out.append(current)
        if r["position"] is None:
            continue
        t, n = r["trajectory"], int(r["position"])
        kind = r["kind"] or "none"
        if kind == "hypothesis":
            suggested = "hypothesis {" + ", ".join(parts.get((t, n, "suspected"), {}).get(0, [])) + "}"
        elif kind == "action":
            suggested = " ".join([actions.get((t, n, "suggested", 0), ""),
                                  *parts.get((t, n, "suggested"), {}).get(0, [])]).strip()
        else:
            suggested = ""
        executed = [f"{actions.get((t, n, 'executed', k), '?')} {' '.join(targets)} ({costs.get((t, n, k), 0.0):g} min)"
                    .replace("  ", " ")
                    for k, targets in sorted(parts.get((t, n, "executed"), {}).items())]
        running = (current.steps[-1].running_cost if current.steps else 0.0) + float(r["cost"])
        ledger = [LedgerEntry(int(h["position"]),
                              parts.get((t, int(h["position"]), "suspected"), {}).get(0, []), _status_at(h, n))
                  for h in hypotheses.get(t, []) if int(h["position"]) <= n]
        candidates = [ranked[(t, n)][k] for k in sorted(ranked.get((t, n), {}))]
        current.steps.append(Step(n, r["intention"], kind, r["verdict"], r["explanation"], r["instruction"],
                                  suggested, executed, r["outcome"], float(r["cost"]), running, ledger,
                                  candidates))
    return out
