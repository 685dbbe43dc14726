"""What comes back from a round, as typed records.

An :class:`Outcome` says what happened in one round: the executed actions
and their cost, a verdict for a hypothesis, a :class:`Refusal` code when an
action could not be carried out, and the observations, one typed record per
target (:class:`Terminal` for each end a connection inspection looked at,
dictionaries of numbers and verdict codes for measurements). Its ``message``
is for people only: assistants and the trajectory writer read the fields,
never the wording (a test rewords every message and checks that no decision
changes).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, Self


class Refusal(StrEnum):
    """Why an action was not carried out."""

    UNKNOWN_ACTION = "unknown-action"          # no such action in the catalogue
    NO_MOVE = "no-move"                        # a round the assistant spent without a move (NO_MOVE: its choices failed)
    TARGET_COUNT = "target-count"              # the wrong number of targets
    UNKNOWN_PART = "unknown-part"              # no such part in the system
    REMOVED_PART = "removed-part"              # the part was removed from this system (scenario configuration)
    TARGET_KIND = "target-kind"                # e.g. a port where a component is needed
    COMPONENT_TYPE = "component-type"          # e.g. a diode test on a lamp
    MISSING_TOOL = "missing-tool"              # the tool it needs is not at hand
    MISSING_VALUE = "missing-value"            # e.g. a potentiometer position
    NOT_AFFORDED = "not-afforded"              # the part does not afford it now (even after opening up)
    NO_EFFECT = "no-effect"                    # the effect cannot apply here (nothing to reconnect, no slot…)


# the reserved action id of a round an assistant spends without a move (a language model whose every choice this
# round was sent back): refused as Refusal.NO_MOVE, at no cost, the round used
NO_MOVE = "no_action"


def unknown_action(action_id: str, known: Iterable[str]) -> tuple[Refusal, str]:
    """The refusal of an action id the catalogue lacks: :data:`NO_MOVE` says the round went without a move."""
    if action_id == NO_MOVE:
        return Refusal.NO_MOVE, "No move this round: the assistant's choices could not be carried out; nothing was done."
    return Refusal.UNKNOWN_ACTION, f"Unknown action {action_id!r}. Known actions: {', '.join(sorted(known))}."


class Verdict(StrEnum):
    """The verdict on a hypothesis (:mod:`diagkg.env.verification`); only ``correct`` is a diagnosis
    that ends a session in success."""

    CORRECT = "correct"        # only faulty parts, every one of them, and their repair restores the system
    PARTIAL = "partial"        # only faulty parts (repaired), but not all of them or not enough
    WRONG = "wrong"            # no faulty part (or a whole box named instead of a part): nothing repaired
    OVERBROAD = "overbroad"    # faulty and healthy parts: turned back, nothing repaired
    EMPTY = "empty"            # no part of the system at all ("nothing is wrong")


class End(StrEnum):
    """How a session ended (the trajectory's ``dk:endValue``: one ontology individual each,
    :data:`diagkg.runs.trajectory.END_IRIS`). The values are the strings JSON carries."""

    SUCCESS = "success"                              # a correct hypothesis: a diagnosis
    SUCCESS_NO_HYPOTHESIS = "success_no_hypothesis"  # an action made the system work again, nothing diagnosed
    TIMEOUT = "timeout"                              # the budget of rounds ran out
    SURRENDER = "surrender"                          # the assistant gave up (or failed)
    LLM_TRUNCATION = "llm_truncation"                # a language model's reply could not be used
    CRASHED = "crashed"                              # the session stopped on an error (stored, not lost)

    @property
    def succeeded(self) -> bool:
        """Whether the system works at the end (with or without a diagnosis)."""
        return self in (End.SUCCESS, End.SUCCESS_NO_HYPOTHESIS)


class Kind(StrEnum):
    """What a round was."""

    ACTION = "action"
    HYPOTHESIS = "hypothesis"
    NONE = "none"              # nothing suggested: the assistant gave up


class Light(StrEnum):
    """How a lamp looks from outside (the lights at the start of a session: ``obs["lights"]``,
    ``Briefing.lights``)."""

    ON = "on"
    OFF = "off"
    FLICKERING = "flickering"


class TerminalState(StrEnum):
    """What a close look at one end of a component shows."""

    ATTACHED = "attached"
    OFF = "off"          # off its terminal, nothing attached
    LOOSE = "loose"      # attached, but the terminal is loose and the end moves when touched


@dataclass(frozen=True)
class Terminal:
    """One end of a component as an inspection sees it."""

    port: str
    state: TerminalState
    attached_to: tuple[str, ...] = ()     # "component.port" of the other ends on the same terminal

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state.value, "attached_to": list(self.attached_to)}

    @classmethod
    def from_dict(cls, port: str, data: Mapping[str, Any]) -> Terminal:
        """The terminal ``port`` whose :meth:`to_dict` is ``data``."""
        return cls(port, TerminalState(data["state"]), tuple(data.get("attached_to") or ()))

    def text(self) -> str:
        if self.state is TerminalState.OFF:
            return "off its terminal (nothing attached)"
        text = "attached to " + (", ".join(self.attached_to) if self.attached_to else "nothing else")
        if self.state is TerminalState.LOOSE:
            text += "; the terminal is loose and the end moves when touched"
        return text


class Record:
    """Base of the observation records: ``to_dict`` gives their fields as plain
    data, leaving out those that are None (a field that is absent says nothing)."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record whose :meth:`to_dict` is ``data`` (what crossed a process boundary as JSON): fields it
        leaves out take their defaults, or are None where they have none (to_dict leaves out what is None: a
        battery's continuity has no resistance), lists are tuples again, keys the record does not have are left out."""
        own = fields(cls)  # type: ignore[arg-type]
        given: dict[str, Any] = {f.name: None for f in own if f.default is MISSING and f.default_factory is MISSING}
        names = {f.name for f in own}
        given.update({k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names})
        return cls(**given)


@dataclass(frozen=True)
class Sighting(Record):
    """``visual``: what a look at a part shows (never its hidden fault)."""

    text: str
    type: str | None = None                       # the component's type (None for an enclosure or opening)
    covered: bool | None = None
    lit: bool | None = None                       # for lamps and LEDs that can be seen
    flickering: bool | None = None
    lever: str | None = None                      # "closed" / "open", for switches
    visible_ends: dict[str, TerminalState] | None = None   # for cables: the ends that can be seen
    states: tuple[str, ...] | None = None         # for enclosures and openings: Inverted, Rotated, Open…
    damage: tuple[str, ...] | None = None         # damage that shows (a fuse blown, a lamp burnt out): blown, burntOut…

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        ends = data.get("visible_ends")
        return replace(super().from_dict(data), visible_ends=None if ends is None else
                       {p: TerminalState(s) for p, s in ends.items()})


@dataclass(frozen=True)
class Voltages(Record):
    """``voltages``: each port's potential to 0 V (None: floating)."""

    port_voltages: dict[str, float | None]
    unit: str = "V"
    settled: bool | None = None                   # False: the readings keep changing (the circuit does not settle)


@dataclass(frozen=True)
class Current(Record):
    """``current``: the current through a component."""

    current: float
    unit: str = "A"
    settled: bool | None = None                   # False: the reading keeps changing (the circuit does not settle)


@dataclass(frozen=True)
class Continuity(Record):
    """``continuity``: a component's own resistance out of circuit and its verdict."""

    verdict: str                                  # nominal, open, short, degraded, not applicable (a source)…
    resistance: float | None
    unit: str = "ohm"


@dataclass(frozen=True)
class DiodeTest(Record):
    """``diode``: the verdict of a diode test (nominal, open, shorted, degraded, reversed: mounted the wrong way round)."""

    verdict: str


@dataclass(frozen=True)
class PathTest(Record):
    """``path-continuity``: the resistance between two ports with the supply off."""

    start: str
    end: str
    resistance: float
    verdict: str                                  # short (a continuous path), resistive, open

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.start, "to": self.end, "resistance": self.resistance, "verdict": self.verdict}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(data["from"], data["to"], float(data["resistance"]), data["verdict"])


@dataclass(frozen=True)
class SwitchTest(Record):
    """``switch-test``: continuity with the switch closed and open, and whether it passes."""

    closed: str
    open: str
    passed: bool


@dataclass(frozen=True)
class Subchain(Record):
    """``subchain``: a run of control modules tested on its own between the supply and the load."""

    first: str
    last: str
    lamp_lit: bool


# the record each kind of observation (the action catalogue's dk:observes) gives: one per target of the action
# (one Terminal per port of each target for connections), or under a key of its own (RECORD_KEYS)
RECORDS: dict[str, type[Record] | type[Terminal]] = {
    "visual": Sighting, "connections": Terminal, "voltages": Voltages, "current": Current, "continuity": Continuity,
    "diode": DiodeTest, "path-continuity": PathTest, "switch-test": SwitchTest, "subchain": Subchain}
RECORD_KEYS = {"path-continuity": "path", "subchain": "subchain"}


def typed_data(observes: str, targets: Sequence[str], data: Mapping[str, Any]) -> dict[str, Any]:
    """An outcome's ``data`` as plain JSON data gives it (:func:`plain`) with the observations typed records again:
    those of an action on ``targets`` that observes ``observes`` (:data:`RECORDS`). Its other keys (a hypothesis's
    ``actually_faulty``, an effect's ``moves`` or ``slot``, a moved LED's ``lit``) are plain data, as they are
    in the session."""
    record = RECORDS.get(observes)
    out = dict(data)
    keys = (RECORD_KEYS[observes],) if observes in RECORD_KEYS else tuple(targets)
    for key in keys:
        value = out.get(key)
        if record is None or not isinstance(value, Mapping):
            continue
        if record is Terminal:
            out[key] = {port: Terminal.from_dict(port, end) for port, end in value.items()}
        elif issubclass(record, Record):
            out[key] = record.from_dict(value)
    return out


_PRIMITIVE = frozenset({str, int, float, bool, type(None)})   # exactly these types: already plain


def plain(value: Any) -> Any:
    """A typed record (or containers of them) as plain JSON-like data."""
    if type(value) in _PRIMITIVE:
        return value
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@dataclass(eq=False)
class Outcome(Mapping[str, Any]):
    """The result of one round: an executed action, a verified hypothesis, or nothing.

    What :meth:`~diagkg.env.service.Session.step` returns. Read its fields (``outcome.verdict``,
    an enum); it also reads as the plain mapping :meth:`to_dict` gives (``outcome["verdict"]``, the
    string), as a step's outcome did before it was typed."""

    round: int
    kind: Kind
    intention: str
    success: bool
    message: str                                # for people; never read by code
    cost: float
    executed: list[tuple[str, tuple[str, ...], float]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None
    refusal: Refusal | None = None
    # healthy parts this round replaced (a repair action used as a probe) or named in a hypothesis:
    # false removals, for the trajectory's diagnosis figures (never told to an assistant: see told)
    healthy: tuple[str, ...] = ()

    def refuse(self, reason: Refusal, message: str) -> None:
        self.refusal = reason
        self.message = message

    def told(self) -> "Outcome":
        """The outcome as an assistant is told it: without what only the evaluator knows. The healthy parts of a
        round (a repair action's or a hypothesis's false removals) are not told: a technician who turns a battery
        round or replaces a lamp while another fault keeps the system dark cannot tell whether it had a fault; an
        assistant that turned every part round learnt which were faulty. An overbroad hypothesis is turned back
        without saying which of its parts are faulty (an assistant naming every part learnt the answer at once)."""
        # a copy of its own: an assistant in the process that changed what it was told changed the record (a
        # plug-in that set a reading to -999 V stored -999 V)
        return replace(self, healthy=(), data=copy.deepcopy(told_data(self.verdict, self.data)),
                       executed=list(self.executed))

    # as a mapping: the keys of to_dict, each read on its own (predictions compare a few of them)
    def __getitem__(self, key: str) -> Any:
        if key in _AS_IS:
            return getattr(self, key)
        if key in ("kind", "verdict", "refusal"):
            value = getattr(self, key)
            return value.value if value is not None else None
        if key == "executed":
            return [{"action": a, "targets": list(t), "cost": c} for a, t, c in self.executed]
        if key == "data":
            return plain(self.data)
        if key == "healthy":
            return list(self.healthy)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(OUTCOME_KEYS)

    def __len__(self) -> int:
        return len(OUTCOME_KEYS)

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain data: each key of :data:`OUTCOME_KEYS` as the mapping reads it."""
        return {key: self[key] for key in OUTCOME_KEYS}


# the words an outcome's data uses for fields of its own, beside the parts an action read (keyed by their ids): a
# part may not be called so (shapes/system.ttl refuses such a dcterms:identifier, and a test keeps the two lists
# equal), or its reading and the field would be one key
RESERVED_DATA_KEYS = frozenset({"actually_faulty", "candidates", "failed_again", "lights", "lit", "moves", "path", "slot",
                                "subchain", "verdict", "works"})


def told_data(verdict: str | None, data: Mapping[str, Any]) -> dict[str, Any]:
    """An outcome's data as an assistant is told it (:meth:`Outcome.told`; a report as a mapping, ``verdict`` its
    value): an overbroad verdict's faulty parts left out."""
    return {k: v for k, v in data.items() if not (k == "actually_faulty" and verdict == Verdict.OVERBROAD)}


OUTCOME_KEYS = ("round", "kind", "intention", "success", "message", "cost", "verdict", "refusal", "executed", "data",
                "healthy")
_AS_IS = frozenset({"round", "intention", "success", "message", "cost"})
