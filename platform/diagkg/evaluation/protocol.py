"""The adaptive protocol's side of a campaign: read one assistant's behaviour
on one scenario from the store, batch by batch, and ask
:func:`diagkg.evaluation.adaptive.assess` whether it has converged.

Trajectories that ended in ``llm_truncation`` or ``crashed`` say nothing about
behaviour and are left out of the clustering (they still count as failures in
the metrics).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from ..errors import DiagkgError
from .campaign import RETRY_ENDS, Campaign

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore


def adaptive_module() -> ModuleType:
    """:mod:`diagkg.evaluation.adaptive`, or a clear error when this install lacks it."""
    try:
        return importlib.import_module("diagkg.evaluation.adaptive")
    except ModuleNotFoundError as exc:
        if exc.name != "diagkg.evaluation.adaptive":
            raise
        raise DiagkgError("--protocol adaptive needs diagkg.evaluation.adaptive (the clustering and convergence "
                          "module), which this installation lacks; use --runs N instead") from None


@dataclass(frozen=True)
class Usable:
    """A trajectory whose behaviour counts: its IRI, slot and behaviour."""

    trajectory: str
    seed: int
    batch: int
    actions: tuple[str, ...]
    intentions: tuple[str, ...]


def usable(store: KnowledgeStore, campaign: Campaign, assistant: str, scenario_iri: str) -> list[Usable]:
    """The trajectories of one assistant on one scenario that say something about behaviour, in seed order.

    A token is ``action:target:target…`` for an executed action, ``hypothesis:part:part…``
    for a hypothesis (its verification repairs exactly those parts)."""
    rows = store.select("campaign-behaviours", {"campaign": campaign.node, "assistant": ox.Literal(assistant),
                                                "scenario": ox.NamedNode(scenario_iri)})
    per: dict[str, dict[str, Any]] = {}
    for r in rows:
        t = per.setdefault(r["trajectory"], {"seed": int(r["seed"]), "batch": int(r["batch"]), "end": r["end"],
                                             "intentions": {}, "actions": {}})
        t["intentions"][int(r["round"])] = r["intention"]
        if r["action"] is not None:
            t["actions"].setdefault((int(r["round"]), int(r["position"])), [r["action"]]).append(r["target"] or "")
        if r["suspect"] is not None:      # a hypothesis: verified by repairing what it names
            t["actions"].setdefault((int(r["round"]), 0), ["hypothesis"]).append(r["suspect"])
    out: list[Usable] = []
    for iri, t in sorted(per.items(), key=lambda kv: kv[1]["seed"]):
        if t["end"] in RETRY_ENDS:
            continue
        actions = tuple(f"{v[0]}:{':'.join(sorted({x for x in v[1:] if x}))}" for _, v in sorted(t["actions"].items()))
        intentions = tuple(v for _, v in sorted(t["intentions"].items()))
        out.append(Usable(iri, t["seed"], t["batch"], actions, intentions))
    return out


def behaviours(store: KnowledgeStore, campaign: Campaign, assistant: str,
               scenario_iri: str) -> dict[int, list[tuple[tuple[str, ...], tuple[str, ...]]]]:
    """Per batch, in seed order: (executed-action tokens, intentions) of each usable trajectory
    (:func:`usable`)."""
    out: dict[int, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
    for u in usable(store, campaign, assistant, scenario_iri):
        out.setdefault(u.batch, []).append((u.actions, u.intentions))
    return out


def assess_group(store: KnowledgeStore, campaign: Campaign, assistant: str, scenario_iri: str,
                 batch: int) -> tuple[Any, str]:
    """The verdict after ``batch`` and the scenario's state: converged, cap or continue."""
    adaptive = adaptive_module()
    cfg = campaign.config
    per_batch = behaviours(store, campaign, assistant, scenario_iri)
    batches = [[adaptive.Behaviour(actions=a, intentions=i) for a, i in per_batch.get(b, [])]
               for b in range(batch + 1)]
    settings = adaptive.AdaptiveSettings(batch_size=cfg.batch_size, max_batches=cfg.max_batches, seed=cfg.seed)
    verdict = adaptive.assess(batches, settings)
    if verdict.converged:
        state = "converged"
    elif verdict.reason == "cap" or batch + 1 >= cfg.max_batches:
        state = "cap"
    else:
        state = "continue"
    return verdict, state
