"""The catalogue's actions as probes of hypothetical worlds, and what their reports say.

A *world* is the system with one placement of faults injected (or none: the
working system), run by the service agent's own session. A *probe* is an action
of the catalogue on its targets (every component of a type it applies to, every
enclosure or opening it takes, pairs of components that share a node for the
actions that take two). What a probe reports is compared as the model-based
assistant compares reports (:class:`~diagkg.agents.readings.Reading`): its
fields without the round, the wording or the healthy-part bookkeeping, with
measured values within a meter's tolerance. A world where a fault shows at
random answers with every report a few draws give.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..agents.readings import Reading, masked_values
from ..env.actions import Action, fits_target
from ..errors import SessionError, SimulationError

if TYPE_CHECKING:  # pragma: no cover
    from ..env.service import Checkpoint
    from .bench import Bench
    from .catalogue import Placement

DRAWS = 4                 # draws of a world where a fault shows at random
IGNORED = ("round", "message", "healthy", "intention")


def reading_of(report: Mapping[str, Any], works: bool | None) -> Reading:
    """What a report says (not its wording), as a comparable reading; ``works``: whether the
    system works again after it (a person sees that; None: left out)."""
    outcome = dict(report)       # each field made plain once
    body = {k: v for k, v in outcome.items() if k not in IGNORED and k != "data"}
    body["data"], values = masked_values(outcome.get("data"))
    if works is not None:
        body["works"] = works
    return Reading(json.dumps(body, sort_keys=True, default=str), values, outcome.get("verdict"),
                   bool(outcome.get("success")))


@dataclass(frozen=True)
class Answer:
    """What a probe gives in one world: its readings (one per draw, several only for a world
    left to chance; ``seen``: the same without whether the system works again), its cost in
    minutes, and the world's state after it (None when the probe was refused or changed nothing)."""

    readings: tuple[Reading, ...]
    seen: tuple[Reading, ...]
    minutes: float
    after: Checkpoint | None


def apart(a: Answer, b: Answer, works: bool = True) -> bool:
    """Whether the two answers can tell their worlds apart: some reading of one agrees with no
    reading of the other (``works``: whether the system works again counts; a world that never
    worked, compared with the working system, is told apart by what is seen only)."""
    x, y = (a.readings, b.readings) if works else (a.seen, b.seen)
    return any(not any(r.agrees(s) for s in y) for r in x) or any(not any(s.agrees(r) for r in x) for s in y)


def probes(bench: Bench) -> list[Action]:
    """Every action of the catalogue on every target it may take in the system (actions that take a
    value are left out), the cheapest first."""
    session = bench.session
    kinds = session.parts()
    comps = bench.sk.components
    nets: dict[str, set[int]] = {}
    for (cid, _), net in bench.sk.net_of_port.items():
        nets.setdefault(cid, set()).add(net)
    out: list[tuple[float, Action]] = []
    for aid, spec in sorted(bench.catalogue.items()):
        if spec.parameter:
            continue

        targets = [p for p in sorted(set(comps) | set(kinds)) if fits_target(spec, p, comps, kinds)]
        if spec.target_count == 1:
            out += [(spec.cost, Action(aid, (t,))) for t in targets]
        elif spec.target_count == 2:
            pairs = [(a, b) for a, b in itertools.combinations(targets, 2)
                     if a not in comps or b not in comps or nets.get(a, set()) & nets.get(b, set())]
            out += [(spec.cost, Action(aid, pair)) for pair in pairs]
    return [a for _, a in sorted(out, key=lambda x: (x[0], x[1].action, x[1].targets))]


class Worlds:
    """Worlds of one system on the bench's session, each started once and rolled back to."""

    def __init__(self, bench: Bench):
        self.bench = bench
        self.roots: dict[str, Checkpoint] = {}
        self.visible: dict[str, str] = {}
        self.chance: dict[str, bool] = {}
        self.steps = 0

    def start(self, name: str, placement: Placement) -> None:
        s = self.bench.session
        s.scenario = self.bench.scenario(placement)
        obs, _ = s.reset(seed=0)
        self.roots[name] = s.checkpoint()
        self.visible[name] = str(obs["visible"])
        self.chance[name] = any(f.probability is not None for f in placement.faults)

    def answer(self, name: str, probe: Action, point: Checkpoint | None = None) -> Answer:
        """What ``probe`` reports in world ``name`` (from ``point``, by default its start)."""
        s = self.bench.session
        start = point if point is not None else self.roots[name]
        readings: list[Reading] = []
        seen: list[Reading] = []
        minutes = 0.0
        after: Checkpoint | None = None
        for draw in range(DRAWS if self.chance[name] else 1):
            s.rollback(start)
            if self.chance[name]:
                s.rng = random.Random(draw)
            self.steps += 1
            try:
                out, cost, *_ = s.step(probe)
            except (SessionError, SimulationError):
                readings.append(Reading("?"))
                seen.append(Reading("?"))
                continue
            readings.append(reading_of(out, s.end in ("success", "success_no_hypothesis")))
            seen.append(reading_of(out, None))
            minutes = max(minutes, float(cost))
            if draw == 0 and out["success"]:
                point_after = s.checkpoint()
                if point_after.state != start.state or point_after.repaired != start.repaired:
                    after = point_after
        return Answer(tuple(dict.fromkeys(readings)), tuple(dict.fromkeys(seen)), minutes, after)


__all__ = ["Answer", "DRAWS", "Worlds", "apart", "probes", "reading_of"]
