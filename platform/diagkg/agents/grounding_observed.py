"""Readings in the typed outcomes of a session, and whether a value someone states
matches one, within the meter's tolerance.

An outcome's ``data`` holds one typed record per target (``{"bat": {"port_voltages":
{"pos": 5.98}, "unit": "V"}}``) or, for some actions, records under their own key
(``{"path": {"resistance": 0.2, "verdict": "short"}}``). A *reading* names a value in
one of them by a dotted path: ``port_voltages.pos``, ``lit``, ``verdict``,
``path.resistance``. Numbers match within :class:`Tolerance` (a share of the value, at
least the meter's resolution in the record's unit); truth values and words match
exactly (words without regard to case).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

Value = float | bool | str

# what a meter shows at least, by the unit of the record (diagkg.env.observations rounds volts to
# 0.1 mV and amps to 1 µA; a value quoted to the millivolt is as good as the reading)
RESOLUTION: Mapping[str, float] = {"V": 1e-3, "A": 1e-6, "ohm": 1e-2}
DEFAULT_RESOLUTION = 1e-3


@dataclass(frozen=True)
class Tolerance:
    """How far a stated number may be from the reading: ``relative`` of the reading, and
    never less than the resolution of the meter in the reading's unit."""

    relative: float = 0.01

    def allows(self, stated: float, observed: float, unit: str | None) -> bool:
        margin = max(abs(observed) * self.relative, RESOLUTION.get(unit or "", DEFAULT_RESOLUTION))
        return abs(stated - observed) <= margin + 1e-12


@dataclass(frozen=True)
class Reading:
    """One value an outcome reported: the round, the action and its targets, the part it is
    about, the reading's path and its value, and the record's unit."""

    round: int
    action: str
    targets: tuple[str, ...]
    part: str
    path: str
    value: Value | None
    unit: str | None


def _walk(record: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(record, Mapping):
        for key, value in record.items():
            yield from _walk(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(record, (bool, int, float, str)) or record is None:
        yield prefix, record


def readings(outcome: Mapping[str, Any]) -> list[Reading]:
    """Every value a successful action round reported (none for a refused round or a hypothesis)."""
    if outcome.get("kind") != "action" or not outcome.get("success"):
        return []
    executed = [e for e in outcome.get("executed") or [] if isinstance(e, Mapping)]
    main = executed[-1] if executed else {}
    action = str(main.get("action", ""))
    targets = tuple(str(t) for t in main.get("targets") or [])
    out: list[Reading] = []
    for key, record in (outcome.get("data") or {}).items():
        unit = record.get("unit") if isinstance(record, Mapping) else None
        owners = [key] if key in targets or key.split(".", 1)[0] in targets else list(targets)
        for path, value in _walk(record, "" if key in owners else key):
            if path in ("", "unit", "text", "type") or path.endswith(".text"):
                continue     # words for people, and what a part is: not readings
            for owner in owners:
                out.append(Reading(int(outcome.get("round") or 0), action, targets, owner, path,
                                   value, unit if isinstance(unit, str) else None))
    return out


def matches(stated: Any, reading: Reading, tolerance: Tolerance) -> bool:
    """Whether ``stated`` is what the reading showed."""
    observed = reading.value
    if isinstance(observed, bool) or isinstance(stated, bool):
        return isinstance(stated, bool) and stated is observed
    if isinstance(observed, (int, float)):
        return isinstance(stated, (int, float)) and tolerance.allows(float(stated), float(observed), reading.unit)
    if isinstance(observed, str):
        return isinstance(stated, str) and stated.strip().lower() == observed.lower()
    return stated is None and observed is None


def plain_value(value: Any) -> Value | None:
    """A stated value as the comparison takes it (a number, a truth value, a word), or None."""
    if isinstance(value, (bool, int, float)):
        return value if isinstance(value, bool) else float(value)
    if isinstance(value, str):
        return value[:80]
    return None


__all__ = ["Reading", "Tolerance", "Value", "matches", "plain_value", "readings"]
