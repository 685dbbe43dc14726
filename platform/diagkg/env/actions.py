"""Actions, hypotheses and the action catalogue.

An :class:`Action` names a catalogue action (``dk:actionId`` in
ontology/actions.ttl) and its targets; a :class:`Hypothesis` names the parts
thought faulty. :func:`action_catalogue` reads the catalogue of a store (or
an assistant's view) once per version of the ontology.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..errors import ActionError
from ..kg import graphs
from ..kg.vocab import DK_NS

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource


def _names(names: Iterable[Any], what: str) -> None:
    """Refuse what is not a part's name (a number, None: the round's record broke on it)."""
    odd = [n for n in names if not isinstance(n, str)]
    if odd:
        raise ActionError(f"{what} are part names (strings), got {odd[0]!r}")


@dataclass(frozen=True)
class Action:
    """A structured action: a catalogue action id, its targets, an optional value."""

    action: str
    targets: tuple[str, ...] = ()
    value: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.action, str):
            raise ActionError(f"an action is named by its catalogue id (a string), got {self.action!r}")
        targets: Any = self.targets          # callers may pass one target as a plain string, or a list
        object.__setattr__(self, "targets", (targets,) if isinstance(targets, str) else tuple(targets or ()))
        _names(self.targets, "an action's targets")
        value: Any = self.value              # a number; its text too ("0.5" broke the round's record)
        if value is not None and not isinstance(value, float):
            try:
                if isinstance(value, bool):
                    raise TypeError
                object.__setattr__(self, "value", float(value))
            except (TypeError, ValueError):
                raise ActionError(f"an action's value is a number, got {value!r}") from None
        if self.value is not None and not math.isfinite(self.value):   # (NaN was played and recorded as "nan")
            raise ActionError(f"an action's value is a finite number, got {self.value!r}")

    @classmethod
    def parse(cls, text: str) -> "Action":
        """``"replace_component battery"``, ``"swap_cables a b"``, ``"adjust_potentiometer pot 0.3"``."""
        words = text.split()
        if not words:
            raise ActionError("empty action")
        value = None
        targets = words[1:]
        if targets:
            try:
                value = float(targets[-1])
                targets = targets[:-1]
            except ValueError:
                value = None
        return cls(words[0], tuple(targets), value)

    def __str__(self) -> str:
        extra = f" {self.value:g}" if self.value is not None else ""
        return f"{self.action} {' '.join(self.targets)}{extra}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "targets": list(self.targets), "value": self.value}


@dataclass(frozen=True)
class Hypothesis:
    """A claim that these parts are faulty (verified by repairing exactly them)."""

    components: frozenset[str]
    explanation: str = ""

    def __init__(self, components: Iterable[str], explanation: str = ""):
        # one part may be given as a plain string, as an action's target may (a string is an iterable of
        # its characters: ``Hypothesis("fuse")`` named the parts f, u, s and e)
        if components is None or not isinstance(components, (str, Iterable)):
            raise ActionError(f"a hypothesis names its parts (strings), got {components!r}")
        object.__setattr__(self, "components", frozenset((components,) if isinstance(components, str) else components))
        _names(self.components, "a hypothesis's parts")
        object.__setattr__(self, "explanation", explanation)

    def __str__(self) -> str:
        return "hypothesis {" + ", ".join(sorted(self.components)) + "}"


@dataclass(frozen=True)
class ActionType:
    id: str
    iri: str
    label: str
    comment: str
    cost: float
    category: str
    target_kind: str
    target_count: int
    template: str | None
    observes: str
    repair: bool
    parameter: str | None
    requires: frozenset[str]
    tools: frozenset[str]
    types: frozenset[str] = frozenset()     # component types it applies to (empty: any)


def fits_target(spec: ActionType, part: str, components: Mapping[str, Any], kinds: Mapping[str, str]) -> bool:
    """Whether an action of ``spec`` may take ``part``: a component (of ``components``, by id) of a type
    it applies to, or another part whose kind (``kinds``: "enclosure", "opening"…) it takes, as the
    service's own checks have it."""
    if part in components:
        return spec.target_kind in ("component", "any") and (not spec.types or components[part].type in spec.types)
    return kinds.get(part) == spec.target_kind or (spec.target_kind == "any" and kinds.get(part) in ("enclosure", "opening"))


def cheapest_look(catalogue: Mapping[str, ActionType], parts: Iterable[str], components: Mapping[str, Any],
                  kinds: Mapping[str, str]) -> Action | None:
    """The cheapest look of the catalogue (an observation: no effect, one target) at one of ``parts``,
    cheapest first, then by the action's id and the part's; None when none fits. What an assistant takes
    when any step will do: after a naming judged partial that made the system work, the next step of any
    kind ends the session as a repair where every bulb is lit again."""
    looks = sorted((spec.cost, spec.id, part) for spec in catalogue.values()
                   if spec.category == "observe" and not spec.repair and spec.template is None and spec.target_count == 1
                   for part in parts if fits_target(spec, part, components, kinds))
    return Action(looks[0][1], (looks[0][2],)) if looks else None


def repairs_fitting(catalogue: dict[str, ActionType], kind: str, target_kind: str | None = None) -> list[ActionType]:
    """The catalogue's one-target repairs that fit a part of type ``kind`` (and take a target of
    ``target_kind``, when given), cheapest first, then by id."""
    return sorted((a for a in catalogue.values() if a.repair and a.target_count == 1
                   and (target_kind is None or a.target_kind == target_kind) and (not a.types or kind in a.types)),
                  key=lambda a: (a.cost, a.id))


# derived data, keyed by the versions of the graphs it is read from
_CATALOGUES: dict[str, dict[str, ActionType]] = {}


def action_catalogue(store: KnowledgeSource) -> dict[str, ActionType]:
    """The action catalogue (ontology/actions.ttl) of a store, by action id: a dictionary of the caller's own (the
    one kept for every caller was handed out, and an assistant that set replace_component to cost nothing in its
    briefing's catalogue made every later session in the process, the oracle's too, replace for free)."""
    key = store.version_of(graphs.ONTOLOGY)
    if key not in _CATALOGUES:
        rows: dict[str, dict[str, Any]] = {}
        for r in store.select("action-catalogue"):
            entry = rows.setdefault(r["id"], {"row": r, "requires": set(), "tools": set(), "types": set()})
            if r["forType"]:
                entry["types"].add(r["forType"][len(DK_NS):])
            if r["requires"]:
                entry["requires"].add(r["requires"][len(DK_NS):])
            if r["tool"]:
                entry["tools"].add(r["tool"][len(DK_NS):].lower())
        _CATALOGUES[key] = {
            aid: ActionType(aid, e["row"]["type"], e["row"]["label"], e["row"]["comment"], float(e["row"]["cost"]),
                            e["row"]["category"], e["row"]["targetKind"], int(e["row"]["targetCount"]),
                            e["row"]["template"], e["row"]["observes"], bool(e["row"]["repair"]),
                            e["row"]["parameter"], frozenset(e["requires"]), frozenset(e["tools"]),
                            frozenset(e["types"]))
            for aid, e in rows.items()
        }
    return dict(_CATALOGUES[key])


# ---------------------------------------------------------------------------
# what comes back
# ---------------------------------------------------------------------------


def tools_at_hand(tools: str | Iterable[str], catalogue: Mapping[str, ActionType]) -> frozenset[str]:
    """The tools a session's service agent has (``tools``: names, or one name), lower-cased, each one some action of
    ``catalogue`` needs: ``"multimeter"`` was read letter by letter (no tool at hand, every measurement refused),
    and a misspelt name left the tool missing without a word."""
    from ..errors import SessionError

    given = frozenset(t.lower() for t in ((tools,) if isinstance(tools, str) else tools))
    known = frozenset(t for spec in catalogue.values() for t in spec.tools)
    if unknown := sorted(given - known):
        raise SessionError(f"no action needs the tool(s) {', '.join(map(repr, unknown))}; the catalogue's tools are "
                           f"{', '.join(sorted(known)) or 'none'}")
    return given
