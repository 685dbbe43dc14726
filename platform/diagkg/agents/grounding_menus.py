"""Choices the graph allows: the (action, part) pairs a service agent can carry out now,
and the JSON schemas that offer exactly those.

:func:`affordable` reads the pairs with ``queries/affordable-pairs.rq``: what each part
affords by design, by the physical state, or through the access the service agent gains
by itself for sight and reach. The state is the one a round starts from: a session puts
the system back to its fault snapshot after every action (docs/sessions.md: what the
service agent opened or turned over for a round does not stay so; only repairs do, and
they change no physical state), and no fault sets one, so each round starts with every
panel closed and every enclosure in place (the state graph it names, :data:`STATE_GRAPH`,
holds nothing).

A :class:`Menu` gives the schema of a choice among the pairs: one branch per action,
whose targets are an ``enum`` of the parts it can be carried out on, so an endpoint that
enforces schemas (llama.cpp's grammar) can only produce a choice the graph allows
(OpenAI's strict mode takes only schemas whose every property is required: not made here).
A large menu is narrowed instead of cut: a part first (:meth:`Menu.parts`), then an action
on it (:meth:`Menu.narrowed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..env.actions import Action
from ..env.workspace import graph_holding
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource
    from ..llm.prompting import Knowledge

STATE_GRAPH = graphs.named("state", "assistant-belief")     # the physical states a round starts from


@dataclass(frozen=True)
class Menu:
    """The (action, part) pairs on offer, with what the catalogue says of each action."""

    pairs: frozenset[tuple[str, str]]
    counts: Mapping[str, int] = field(default_factory=dict)        # action -> number of targets
    parameters: Mapping[str, str | None] = field(default_factory=dict)

    def actions(self) -> list[str]:
        return sorted({a for a, _ in self.pairs})

    def targets(self, action: str) -> list[str]:
        return sorted(p for a, p in self.pairs if a == action)

    def parts(self) -> list[str]:
        return sorted({p for _, p in self.pairs})

    def __len__(self) -> int:
        return len(self.pairs)

    def offers(self, action: Action) -> bool:
        """Whether every target of ``action`` (a part, or a port of one) is on offer for it."""
        return bool(action.targets) and all((action.action, t.split(".", 1)[0]) in self.pairs for t in action.targets)

    def narrowed(self, part: str) -> "Menu":
        """The actions that can be carried out on ``part`` (an action of two targets keeps
        its other targets)."""
        keep = {a for a, p in self.pairs if p == part}
        pairs = {(a, p) for a, p in self.pairs if a in keep and (p == part or self.counts.get(a, 1) > 1)}
        return Menu(frozenset(pairs), self.counts, self.parameters)

    def schema(self) -> dict[str, Any]:
        """A choice among the pairs: one branch per action, its targets an enum."""
        branches = []
        for a in self.actions():
            n = self.counts.get(a, 1)
            props: dict[str, Any] = {
                "action": {"type": "string", "enum": [a]},
                "targets": {"type": "array", "items": {"type": "string", "enum": self.targets(a)},
                            "minItems": n, "maxItems": n}}
            required = ["action", "targets"]
            if self.parameters.get(a):
                props["value"] = {"type": "number"}
                required.append("value")
            branches.append({"type": "object", "properties": props, "required": required,
                             "additionalProperties": False})
        return {"anyOf": branches} if branches else {"type": "object", "properties": {}}


def pairs_of(schema: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The (action, part) pairs a choice schema made by :meth:`Menu.schema` enumerates."""
    out: set[tuple[str, str]] = set()
    for branch in schema.get("anyOf", []):
        props = branch["properties"]
        for action in props["action"]["enum"]:
            out.update((action, t) for t in props["targets"]["items"]["enum"])
    return out


_MENUS: Memo[Menu] = Memo("grounding menus", 64)      # by the view's graph versions, system and parts


def affordable(view: KnowledgeSource, system_iri: str, knowledge: Knowledge, present: Iterable[str]) -> Menu:
    """The menu of a round: the affordable pairs in the state a round starts from, on the
    parts the briefing names (a part removed from the system is not there); read once per
    version of the graphs the view holds."""
    parts = frozenset(present)
    key = (getattr(view, "versions", None) or id(view), system_iri, parts)
    found = _MENUS.get(key)
    if found is None:
        graph = graph_holding(view, system_iri, str(DK.System))
        rows = view.select("affordable-pairs", {"systemGraph": graph if graph is not None else graphs.system(knowledge.key),
                                                "stateGraph": STATE_GRAPH})
        found = Menu(frozenset((r["action"], r["part"]) for r in rows if r["part"] in parts),
                     {a.id: a.target_count for a in knowledge.actions.values()},
                     {a.id: a.parameter for a in knowledge.actions.values()})
        _MENUS.put(key, found)
    return found


__all__ = ["Menu", "STATE_GRAPH", "affordable", "pairs_of"]
