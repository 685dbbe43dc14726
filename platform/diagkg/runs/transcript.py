"""A trajectory as a self-contained HTML chat transcript, or as JSON."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
import pyoxigraph as ox

from ..errors import UnknownTermError

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

def load(store: KnowledgeStore, trajectory: str) -> dict[str, Any]:
    """A trajectory's summary and rounds, read from the store with SPARQL
    (``trajectory`` is its IRI, or the id after ``…/trajectory/``)."""
    from .trajectory import BASE

    if ":" not in trajectory:
        trajectory = BASE + trajectory
    try:
        iri = ox.NamedNode(trajectory)
    except ValueError:
        raise UnknownTermError(f"{trajectory!r} is not a trajectory IRI or id (see `diagkg query trajectory-list`)") from None
    summary = store.select("trajectory-summary", {"trajectory": iri})
    if not summary:
        raise UnknownTermError(f"no trajectory {trajectory} in the store")
    rounds: dict[int, dict[str, Any]] = {}
    for r in store.select("trajectory-rounds", {"trajectory": iri}):
        entry = rounds.setdefault(r["position"], {
            "position": r["position"], "intention": r["intention"], "outcome": r["outcome"], "cost": r["cost"],
            "kind": r["kind"] or "none", "verdict": r["verdict"], "refusal": r["refusal"],
            "executed": []})
        if r["executed"] and not any(e["k"] == r["k"] for e in entry["executed"]):
            entry["executed"].append({"k": r["k"], "action": r["executed"].strip(), "cost": r["executedCost"]})
    # a hypothesis is executed as verify_repair on the parts it names, after the round's access (as `diagkg run`
    # prints it): its own cost, so that a round's executed costs add up to the round's cost
    repairs: dict[int, tuple[float, set[str], set[str]]] = {}
    for r in store.select("trajectory-hypotheses", {"trajectory": iri}):
        cost, parts, named = repairs.setdefault(r["position"], (r["cost"], set(), set()))
        if r["part"]:
            parts.add(r["part"])
        if r["suspect"]:
            named.add(r["suspect"].rsplit("/", 1)[-1])
    for position, (cost, parts, named) in repairs.items():
        if position in rounds:      # a hypothesis naming nothing the system has: the names it gave, as the text says
            rounds[position]["executed"].append({"action": " ".join(["verify_repair", *sorted(parts or named)]),
                                                 "cost": cost})
    data = dict(summary[0])
    data["rounds"] = [rounds[k] for k in sorted(rounds)]
    for r in data["rounds"]:
        for e in r["executed"]:
            e.pop("k", None)
    return data


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    text = resources.files("diagkg").joinpath("templates", "transcript.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(text)


def to_html(data: dict[str, Any]) -> str:
    """The transcript as one HTML page (styles inline, no external resources)."""
    summary = {k: v for k, v in data.items() if k != "rounds"}
    return _template().render(t=summary, rounds=data["rounds"])
