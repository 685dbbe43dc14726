"""Assistants' configurations as frozen, checked values.

An assistant's configuration is a frozen dataclass subclassing :class:`Settings`: one field per
key, its default what the assistant does unconfigured. Built from the configuration mapping
(:meth:`Settings.from_mapping`), every value is checked against its field's type (``bool``,
``int``, ``float`` or ``str``), the class's :attr:`~Settings.RANGES` (numbers) and
:attr:`~Settings.CHOICES` (words): a wrong one is an :class:`~diagkg.errors.InputError` naming the
assistant, the key and what it takes. Unknown keys are refused before, by
:class:`~diagkg.agents.registry.BaseAssistant` against the assistant's ``config_keys``
(:meth:`Settings.keys`, plus any it takes for others). What a trajectory records is
:meth:`Settings.applied`: every key, defaults included.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from ..errors import InputError

INF = math.inf
S = TypeVar("S", bound="Settings")

_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}
_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "a word"}


@dataclasses.dataclass(frozen=True)
class Settings:
    """The base of assistants' configurations (see the module)."""

    ASSISTANT: ClassVar[str] = "assistant"                      # whose configuration, for messages
    RANGES: ClassVar[dict[str, tuple[float, float]]] = {}       # (least, most) of a number
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {}          # the words a key takes

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kind = _KINDS[f.type if isinstance(f.type, str) else f.type.__name__]
            if kind is bool:
                ok = isinstance(value, bool)
            elif kind is int:
                ok = isinstance(value, int) and not isinstance(value, bool)
            elif kind is str:
                ok = isinstance(value, str)
            else:
                ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            if not ok:
                raise InputError(f"{self.ASSISTANT}: {f.name} takes {_WORDS[kind]}, not {value!r}")
            low, high = self.RANGES.get(f.name, (None, None))
            if low is not None and not low <= value <= high:
                within = f"at least {low}" if high == INF else f"from {low} to {high}"
                raise InputError(f"{self.ASSISTANT}: {f.name} takes a value {within}, not {value!r}")
            choices = self.CHOICES.get(f.name)
            if choices is not None and value not in choices:
                raise InputError(f"{self.ASSISTANT}: {f.name} takes one of {', '.join(choices)}, not {value!r}")

    @classmethod
    def keys(cls) -> frozenset[str]:
        """The configuration keys (one per field)."""
        return frozenset(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls: type[S], config: Mapping[str, Any]) -> S:
        """The configuration ``config`` gives for this class's keys (those it leaves out keep their
        default; others are not this class's: see the module); a whole number where a number is
        taken is that number."""
        floats = {f.name for f in dataclasses.fields(cls) if f.type in ("float", float)}
        values = {k: float(v) if k in floats and isinstance(v, int) and not isinstance(v, bool) else v
                  for k, v in config.items() if k in cls.keys()}
        return cls(**values)

    def applied(self) -> dict[str, Any]:
        """Every key as applied, defaults included (what a trajectory records)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


__all__ = ["INF", "Settings"]
