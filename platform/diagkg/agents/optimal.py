"""The optimal assistant: plays the stored optimal policy of the system (``diagkg optimum``).

The policy (:mod:`diagkg.evaluation.optimum`) is a decision tree worked out over the
system's stored scenarios as a prior: it is privileged to that prior — which
scenarios there are — and to nothing of the session's answer. It is read from
``Briefing.prior``, a read-only view of the graph ``optimum/{key}`` that the runner
gives only to the assistants ``DIAGKG_INFORMED_ASSISTANTS`` names (by default this
one; :mod:`diagkg.agents.trust`); the trajectory records ``dk:privileged false``.

At the start it picks the policy's branch for what the session shows (the lights
seen, the lights its report states, the parts fitted, the budget); after each round it follows the branch of the
report it got (:func:`outcome_key`: every field but the round, the message for
people and the false-removal count). A report the policy did not foresee (a loose
connection that fell differently in two simulations of one step) leaves the tree:
it then names the likeliest diagnosis of the last decision it stood at that it has
not named yet, and gives up when none is left.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

import pyoxigraph as ox

from ..env.actions import Action, Hypothesis
from ..env.outcomes import Outcome
from ..errors import AssistantError
from .registry import BaseAssistant, Briefing

IGNORED = ("round", "message", "healthy")     # what a branch is not chosen by


def outcome_key(outcome: Mapping[str, Any]) -> str:
    """A report as the policy's branches are keyed: its fields as canonical JSON, without the round,
    the message (for people only) and the healthy parts (the trajectory's false removals)."""
    return json.dumps({k: v for k, v in outcome.items() if k not in IGNORED}, sort_keys=True, default=str,
                      separators=(",", ":"))


@dataclass
class Decision:
    """One decision of the stored policy: its move, the next decision by report, and the diagnoses
    still possible there (most likely first)."""

    move: Action | Hypothesis
    branches: dict[str, str] = field(default_factory=dict)
    candidates: list[tuple[frozenset[str], float]] = field(default_factory=list)


def _move(row: Mapping[str, Any]) -> Action | Hypothesis:
    if row["action"] is None:
        return Hypothesis((row["parts"] or "").split(), "the optimal policy's diagnosis")
    value = float(row["value"]) if row["value"] is not None else None
    return Action(row["action"], tuple((row["targets"] or "").split()), value)


def read_policy(view: Any, system_iri: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Decision]]:
    """The stored policy of a system as its view holds it: its summary (``optimum-summary.rq``), its
    starts (``optimum-starts.rq``) and its decisions by IRI (``optimum-decisions.rq``,
    ``optimum-candidates.rq``). Raises :class:`AssistantError` when there is none."""
    system = ox.NamedNode(system_iri)
    summary = view.select("optimum-summary", {"system": system})
    if not summary:
        raise AssistantError(f"no stored optimal policy of <{system_iri}>: run `diagkg optimum` on the system first")
    decisions: dict[str, Decision] = {}
    for r in view.select("optimum-decisions", {"system": system}):
        d = decisions.get(r["decision"])
        if d is None:
            d = decisions[r["decision"]] = Decision(_move(r))
        if r["outcome"] is not None and r["next"] is not None:
            d.branches[r["outcome"]] = r["next"]
    for r in view.select("optimum-candidates", {"system": system}):
        if r["decision"] in decisions:
            decisions[r["decision"]].candidates.append((frozenset((r["parts"] or "").split()), float(r["probability"])))
    for d in decisions.values():
        d.candidates.sort(key=lambda c: (-c[1], sorted(c[0])))
    return summary[0], view.select("optimum-starts", {"system": system}), decisions


def stale(store: Any, key: str, system_iri: str, summary: Mapping[str, Any]) -> bool:
    """Whether a stored policy (its ``optimum-summary.rq`` row) was worked out for another version of the system
    than ``store`` holds."""
    from ..env.workspace import graph_holding
    from ..kg import graphs
    from ..kg.vocab import DK

    held = graph_holding(store, system_iri, str(DK.System)) or graphs.system(key)
    return bool(summary["systemVersion"] != store.version_of(held))


def _stale_message(key: str) -> str:
    return (f"the stored optimal policy of {key} was worked out for another version of the system: run "
            f"`diagkg optimum {key}` again")


class OptimalAssistant(BaseAssistant):
    """Plays the stored optimal policy (see the module's documentation)."""

    name = "optimal"
    config_keys: frozenset[str] = frozenset()      # it takes no configuration

    @classmethod
    def unready(cls, store: Any, systems: Mapping[str, str]) -> list[str]:
        """A system of which no policy is stored, or one worked out for another version of it; and the trust
        policy when it does not brief this assistant with the prior (every session would fail at its start)."""
        from ..env.workspace import prior_view
        from .trust import Origin, Policy

        out = []
        if not Policy.from_env().may_see_prior(cls.name, Origin.SHIPPED):
            out.append("it is not briefed with the stored optimal policy: DIAGKG_INFORMED_ASSISTANTS does not name it "
                       "(diagkg.agents.trust)")
        for key, iri in sorted(systems.items()):
            view = prior_view(store, key)
            summary = view.select("optimum-summary", {"system": ox.NamedNode(iri)}) if view is not None else []
            if not summary:
                out.append(f"no optimal policy of {key} is stored: run `diagkg optimum {key}` first")
            elif stale(store, key, iri, summary[0]):
                out.append(_stale_message(key))
        return out

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        if briefing.prior is None:      # none stored, or not allowed it
            raise AssistantError(f"the optimal assistant was given no optimal policy of {briefing.system}: run "
                                 f"`diagkg optimum {briefing.system}` first (when one is stored, "
                                 "DIAGKG_INFORMED_ASSISTANTS does not name this assistant: diagkg.agents.trust)")
        summary, starts, self.decisions = read_policy(briefing.prior, briefing.system_iri)
        if briefing.store is not None and stale(briefing.store, briefing.system, briefing.system_iri, summary):
            raise AssistantError(_stale_message(briefing.system))
        fitted = set(briefing.parts)
        self.node: str | None = None
        self.last: str | None = None
        self.named: set[frozenset[str]] = set()
        # the start that shows these lights, whose report states these lights, with this budget and whose
        # removed parts are all missing here (the most of them: a start that removed fewer parts is another
        # configuration). A policy none of whose starts states a light (its scenarios state none, or it was
        # stored before policies conditioned on the report) is matched without them; so is a report no start
        # states (a scenario outside the prior), by the likeliest start that shows the same from outside
        stated = frozenset(f"{part}={looks}" for part, looks in briefing.stated.items())
        fits: list[tuple[int, bool, float, str]] = []
        for s in starts:
            gone = frozenset((s["removed"] or "").split())
            if s["visible"] == briefing.visible and int(s["budget"]) == briefing.budget and not gone & fitted:
                told = frozenset((s["stated"] or "").split()) == stated
                fits.append((len(gone), told, float(s["probability"]), s["decision"]))
        if fits:
            self.node = max(fits)[3]

    def suggest(self) -> Action | Hypothesis | None:
        move: Action | Hypothesis | None
        if self.node is not None and self.node in self.decisions:
            self.last = self.node
            move = self.decisions[self.node].move
        else:
            move = self._fallback()
        if isinstance(move, Hypothesis):
            self.named.add(move.components)
        return move

    def _fallback(self) -> Hypothesis | None:
        """Off the tree: the likeliest diagnosis of the last decision not named yet (None: give up)."""
        if self.last is None:
            return None
        for parts, _ in self.decisions[self.last].candidates:
            if parts and parts not in self.named:
                return Hypothesis(parts, "the likeliest diagnosis left (the report was not foreseen)")
        return None

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        here = self.decisions.get(self.node) if self.node is not None else None
        self.node = here.branches.get(outcome_key(outcome)) if here is not None else None

    def ranked_candidates(self) -> list[frozenset[str]]:
        node = self.node if self.node is not None else self.last
        d = self.decisions.get(node) if node is not None else None
        return [parts for parts, _ in d.candidates] if d is not None else []


__all__ = ["Decision", "OptimalAssistant", "outcome_key", "read_policy"]
