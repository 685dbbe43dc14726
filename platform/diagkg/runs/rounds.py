"""A played round as a typed record: the session's :class:`~diagkg.env.outcomes.Outcome` and what the
runner adds to it.

:func:`~diagkg.runs.runner.run_session` makes one :class:`Round` per round it plays; the trajectory
writer (:func:`diagkg.runs.trajectory.to_quads`), the diagnosis figures
(:func:`diagkg.runs.scoring.score`) and the ``on_round`` callbacks read its fields::

    r.kind is Kind.HYPOTHESIS, r.verdict, r.suspects, r.action.targets, r.decision_seconds

:meth:`Round.to_dict` gives it as the plain entry the runner has always made (the outcome as
:func:`~diagkg.env.contract.outcome_json` gives it, then ``decision_seconds``, ``suspects`` and
``explanation`` or ``action``, ``instruction`` and ``mapped_by`` when there are any, ``message`` as
the service agent worded it): what the server streams and a stored round says. A round also reads
as that mapping (``r["verdict"]``, the string), so code written for the entries keeps working.

Rounds written as plain entries (tests, a crashed session's record) are read with :meth:`Round.of`;
an outcome that crossed a process boundary as JSON is rebuilt with :func:`outcome_from_json`, and its observations
made the typed records they were with :func:`typed_outcome`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

from ..env import contract
from ..env.actions import Action, ActionType
from ..env.outcomes import OUTCOME_KEYS, Kind, Outcome, Refusal, Verdict, typed_data

# what a round where nothing was played holds (the assistant failed before its move)
BARE_KEYS = ("round", "kind", "intention", "message", "cost", "success", "executed")


@dataclass(frozen=True, eq=False)
class Round(Mapping[str, Any]):
    """One played round: the typed outcome and the runner's additions (see the module)."""

    outcome: Outcome
    decision_seconds: float | None = None      # deciding, and digesting the outcome, in seconds
    action: Action | None = None               # the action suggested (None for a hypothesis)
    suspects: tuple[str, ...] | None = None    # the parts a hypothesis named, sorted (None for an action)
    explanation: str | None = None             # why, as the hypothesis said (None for an action)
    instruction: str = ""                      # the instruction for the service agent, when there was one
    mapped_by: int = 0                         # the recorded LLM call that mapped it to the action (0: none)
    message_override: str | None = None        # the service agent's wording of the outcome, when it worded it
    bare: bool = False                         # nothing was played: the assistant failed before its move

    @classmethod
    def failed(cls, number: int, intention: str, message: str) -> Round:
        """The round of an assistant that failed before it moved (nothing executed, nothing spent)."""
        return cls(Outcome(number, Kind.NONE, intention, False, message, 0.0), bare=True)

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> Round:
        """``entry`` as a round: itself when it is one, else read from a plain entry (:meth:`from_dict`)."""
        return entry if isinstance(entry, Round) else cls.from_dict(entry)

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> Round:
        """A round from a plain entry as :meth:`to_dict` writes it; keys it leaves out take their defaults."""
        action = entry.get("action")
        suspects = entry.get("suspects")
        explanation = entry.get("explanation")
        return cls(outcome_from_json(entry), decision_seconds=entry.get("decision_seconds"),
                   action=Action(action["action"], tuple(action.get("targets") or ()), action.get("value"))
                   if isinstance(action, Mapping) else None,
                   suspects=tuple(str(p) for p in suspects) if suspects is not None else None,
                   explanation=str(explanation) if explanation is not None else None,
                   instruction=str(entry.get("instruction") or ""), mapped_by=int(entry.get("mapped_by") or 0),
                   bare=str(entry.get("kind") or "none") == Kind.NONE.value and "data" not in entry)

    # -- the outcome's fields ------------------------------------------------------------------------------

    @property
    def number(self) -> int:
        """The round's number (``round`` in the entry)."""
        return self.outcome.round

    @property
    def kind(self) -> Kind:
        return self.outcome.kind

    @property
    def intention(self) -> str:
        return self.outcome.intention

    @property
    def success(self) -> bool:
        return self.outcome.success

    @property
    def cost(self) -> float:
        return self.outcome.cost

    @property
    def message(self) -> str:
        """What the round said, in words: the service agent's wording when it worded it."""
        return self.message_override if self.message_override is not None else self.outcome.message

    @property
    def verdict(self) -> Verdict | None:
        return self.outcome.verdict

    @property
    def refusal(self) -> Refusal | None:
        return self.outcome.refusal

    @property
    def executed(self) -> list[tuple[str, tuple[str, ...], float]]:
        """What the service agent carried out: (action id, targets, cost), in order."""
        return self.outcome.executed

    @property
    def healthy(self) -> tuple[str, ...]:
        return self.outcome.healthy

    @property
    def data(self) -> dict[str, Any]:
        """What the round observed, as plain data (the entry's ``data``)."""
        return self.outcome["data"]  # type: ignore[no-any-return]

    # -- as the plain entry --------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The round as the runner's plain entry (see the module); JSON data throughout."""
        if self.bare:
            return {key: self[key] for key in self._keys}
        out = dict(self._json)
        if self.message_override is not None:
            out["message"] = self.message_override
        out.update((key, self._added(key)) for key in self._keys if key in _ADDED)
        return out

    @cached_property
    def _json(self) -> dict[str, Any]:
        """The outcome as JSON data, worked out once (a round's outcome does not change once played)."""
        return contract.outcome_json(self.outcome)

    @cached_property
    def _keys(self) -> tuple[str, ...]:
        if self.bare:       # (with the time it took to fail, where it was timed)
            return BARE_KEYS + (("decision_seconds",) if self.decision_seconds is not None else ())
        keys = list(self.outcome)
        keys += [f.name for f in fields(self.outcome) if f.name not in keys]
        if self.decision_seconds is not None:
            keys.append("decision_seconds")
        if self.suspects is not None:
            keys += ["suspects", "explanation"]
        elif self.action is not None:
            keys.append("action")
        if self.instruction:
            keys.append("instruction")
        if self.mapped_by:
            keys.append("mapped_by")
        return tuple(keys)

    def _added(self, key: str) -> Any:
        if key == "decision_seconds":
            return self.decision_seconds
        if key == "suspects":
            return list(self.suspects or ())
        if key == "explanation":
            return self.explanation
        if key == "action":
            return self.action.to_dict() if self.action is not None else None
        if key == "instruction":
            return self.instruction
        return self.mapped_by

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        if key in _ADDED:
            return self._added(key)
        if key == "message" and self.message_override is not None:
            return self.message_override
        return self._json[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


_ADDED = frozenset({"decision_seconds", "suspects", "explanation", "action", "instruction", "mapped_by"})


class LaterOutcome(Outcome):
    """An outcome carrying keys this diagkg does not know (``later``: plain data), read through the mapping and
    given by :func:`~diagkg.env.contract.outcome_json` like its own: an outcome of a later diagkg read back
    from JSON, or the conformance check's outcome with unknown keys."""

    def __init__(self, *args: Any, later: Mapping[str, Any] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.later = {k: v for k, v in (later or {}).items() if k not in OUTCOME_KEYS}

    def __getitem__(self, key: str) -> Any:
        if key in self.later:
            return self.later[key]
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        yield from OUTCOME_KEYS
        yield from self.later

    def __len__(self) -> int:
        return len(OUTCOME_KEYS) + len(self.later)

    def to_dict(self) -> dict[str, Any]:
        return {key: self[key] for key in self}


def outcome_from_json(data: Mapping[str, Any]) -> Outcome:
    """The :class:`Outcome` whose :func:`~diagkg.env.contract.outcome_json` is ``data`` (an outcome as JSON
    carries it: its observations stay plain data until :func:`typed_outcome` makes them records). Keys it leaves
    out take their defaults; keys an outcome does not have are kept as a :class:`LaterOutcome`'s (the runner's
    additions to an entry are not)."""
    verdict, refusal = data.get("verdict"), data.get("refusal")
    later = {k: v for k, v in data.items() if k not in OUTCOME_KEYS and k not in _ADDED}
    kind = LaterOutcome if later else Outcome
    out = kind(int(data.get("round") or 0), Kind(data.get("kind") or Kind.NONE.value), str(data.get("intention") or ""),
               bool(data.get("success")), str(data.get("message") or ""), float(data.get("cost") or 0.0),
               [(str(e["action"]), tuple(e.get("targets") or ()), float(e.get("cost") or 0.0))
                for e in data.get("executed") or ()],
               dict(data.get("data") or {}), Verdict(verdict) if verdict else None,
               Refusal(refusal) if refusal else None, tuple(data.get("healthy") or ()))
    if isinstance(out, LaterOutcome):
        out.later = dict(later)
    return out


def typed_outcome(outcome: Outcome, catalogue: Mapping[str, ActionType]) -> Outcome:
    """``outcome`` (as :func:`outcome_from_json` rebuilt it) with its observations the typed records the session
    made (:func:`~diagkg.env.outcomes.typed_data`): their type is what the round's action observes in
    ``catalogue`` (``dk:observes``). The action is the last one executed (those before it got at its targets:
    opening a panel observes nothing); a round whose action is not in the catalogue (a hypothesis) is left as
    it is. What an in-process assistant is told, told to a plug-in hosted in a process of its own."""
    if not outcome.executed:
        return outcome
    action, targets, _ = outcome.executed[-1]
    spec = catalogue.get(action)
    if spec is not None:
        outcome.data = typed_data(spec.observes, targets, outcome.data)
    return outcome

__all__ = ["BARE_KEYS", "LaterOutcome", "Round", "outcome_from_json", "typed_outcome"]
