"""What a report says, as the model-based assistant compares it: a
:class:`Reading` is a report with its measured values set apart, so that two
reports agree when they differ by no more than a meter could (the tolerance of
the measurement), and the lights a service agent describes at the start."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..env.outcomes import told_data

# what a meter may be off by, (absolute, relative) per unit of a reading: an autoranging
# multimeter's accuracy, about ±(1 % + a few digits of its range)
TOLERANCE = {"V": (0.002, 0.01), "A": (0.0001, 0.01), "ohm": (0.1, 0.01)}
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass(frozen=True)
class Reading:
    """What a report says, comparable with the tolerance of the measurement: the report with
    its measured values masked (and the numbers in its message), and those values with the
    absolute and relative tolerance of their unit."""

    masked: str
    values: tuple[tuple[float, float, float], ...] = ()
    verdict: str | None = None
    success: bool = False
    works: bool = False      # a hypothesis's repair made the system work (``data["works"]``), named in full or not

    def agrees(self, other: "Reading") -> bool:
        return self.masked == other.masked and len(self.values) == len(other.values) and all(
            abs(x - y) <= a + r * max(abs(x), abs(y)) for (x, a, r), (y, _, _) in zip(self.values, other.values, strict=True))

    def apart(self, other: "Reading") -> bool:
        """Whether no report in ``other``'s :meth:`group` can agree with this one: its words
        differ, or a value lies two cells or more away on the grid (a cell is four tolerances
        wide, so values that agree lie at most one cell apart)."""
        mine, theirs = self.group(), other.group()
        return mine[0] != theirs[0] or len(mine[1]) != len(theirs[1]) or \
            any(abs(x - y) >= 2 for x, y in zip(mine[1], theirs[1], strict=True))

    def group(self) -> tuple[str, tuple[int, ...]]:
        """A coarse class of readings (values on a grid four tolerances wide) to split candidates by."""
        return self.masked, tuple(grid(x, a, r) for x, a, r in self.values)


def grid(value: float, absolute: float, relative: float) -> int:
    """``value``'s cell on a grid four tolerances wide wherever it lies: the tolerance grows with
    the value (``absolute + relative × |value|``), so the cells are counted on the scale whose
    unit is one tolerance, ln(1 + relative × |value| / absolute) / relative (signed)."""
    return round(math.copysign(math.log1p(relative * abs(value) / absolute) / relative, value) / 4)


UNKNOWN = Reading("?")        # what a world that cannot take an action reports


def masked_values(node: Any) -> tuple[Any, tuple[tuple[float, float, float], ...]]:
    """``node`` (a report's data) with every value measured in a unit of :data:`TOLERANCE` set apart:
    the node with ``"#"`` in its place, and the values in order with their absolute and relative
    tolerance."""
    values: list[tuple[float, float, float]] = []

    def mask(node: Any, unit: str | None) -> Any:
        if isinstance(node, dict):
            unit = node.get("unit", unit)
            return {k: mask(v, unit) for k, v in node.items()}
        if isinstance(node, list):
            return [mask(v, unit) for v in node]
        if isinstance(node, float) and unit in TOLERANCE:
            values.append((node, *TOLERANCE[unit]))
            return "#"
        return node

    return mask(node, None), tuple(values)


def reading(report: Mapping[str, Any]) -> Reading:
    """What a report says (its round number aside), as a :class:`Reading` (``report``: a step's
    :class:`~diagkg.env.outcomes.Outcome`, or a round as a trajectory holds it)."""
    outcome = dict(report)       # each field made plain once
    # as the assistant is told it (Outcome.told): a world's report holds what only the evaluator knows
    body = {k: v for k, v in outcome.items() if k not in ("round", "data", "message", "healthy")}
    data = outcome.get("data")
    if isinstance(data, Mapping):
        data = told_data(outcome.get("verdict"), data)
    body["data"], values = masked_values(data)
    body["message"] = _NUMBER.sub("#", str(outcome.get("message", ""))) if values else outcome.get("message")
    masked = json.dumps(body, sort_keys=True, default=str)
    works = bool(data.get("works")) if isinstance(data, Mapping) else False
    return Reading(masked, values, outcome.get("verdict"), bool(outcome.get("success")), works)


__all__ = ["TOLERANCE", "UNKNOWN", "Reading", "masked_values", "reading"]
