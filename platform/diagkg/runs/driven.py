"""Sessions driven from outside, one move at a time: the bridge under ``diagkg mcp``.

The runner pulls each move from its assistant (``suggest``); a client of a
protocol such as MCP pushes them, one call at a time. :class:`DrivenSession`
runs :func:`~diagkg.runs.runner.run_session` in a thread of its own with a
:class:`DrivenAssistant` that waits for each move, so a driven session *is* the
runner's session: the same briefing, budget and cost rule, the same checks of
a move (each goes through the session contract's
:func:`~diagkg.env.contract.read_reply`, as an ``exec:`` program's reply does),
the same scoring, hypothesis ledger and trajectory, stored under the client's
name. It is never briefed with the answer, whatever the allow-list says: its
decisions come from outside this process.

::

    session = DrivenSession(store, "TORCH.1", "mcp:my-agent/1.0")
    session.start()
    step = session.play({"kind": "act", "action": "measure_voltage", "targets": ["bat"]})
    step = session.play({"kind": "hypothesis", "parts": ["bat"]})
    step.end, step.trajectory          # "success", the stored trajectory's IRI

A move that fails the checks raises :class:`~diagkg.env.contract.ProtocolError`
and plays no round: the caller may try again. A client that goes away is
:meth:`DrivenSession.abandon`-ed (the session ends in surrender with a typed
fault and is stored); one that sends nothing for ``idle_seconds`` likewise.
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..agents.registry import BaseAssistant, Briefing
from ..env.actions import Action, Hypothesis
from ..env.contract import PROTOCOL_VERSION, Move, ProtocolError, ProtocolFault, read_reply
from ..env.outcomes import Outcome
from ..errors import InputError, LedgerUnavailable, SessionError, TrajectoryKept
from .exec_boundary import Limits, action_json, known_ids

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Scenario
    from ..kg.store import KnowledgeStore
    from .runner import RunResult

DEFAULT_IDLE_SECONDS = 1800.0      # a client that sends no move for this long has gone (as an HTTP session's idle time)


@dataclass(frozen=True)
class Step:
    """Where a driven session stands after a move."""

    outcome: dict[str, Any] | None      # the round's outcome (what an in-process assistant is told); None for a stop
    round: int                          # rounds played
    rounds_left: int
    total_cost: float                   # minutes of work so far
    end: str | None                     # the end value once the session is over
    trajectory: str | None              # the stored trajectory's IRI once the session is over

    def to_json(self) -> dict[str, Any]:
        return {"protocol": PROTOCOL_VERSION, "round": self.round, "rounds_left": self.rounds_left,
                "total_cost": self.total_cost, "end": self.end, "trajectory": self.trajectory,
                "outcome": self.outcome}


class DrivenAssistant(BaseAssistant):
    """The runner's side of a driven session: each ``suggest`` waits for the next move from outside."""

    in_process = False       # its decisions come from outside this process: never briefed with the answer

    def __init__(self, name: str, owner: "DrivenSession"):
        super().__init__()
        self.name = name
        self.owner = owner
        self.candidates: list[frozenset[str]] = []
        self.told: list[Outcome] = []       # the outcomes, typed (``outcomes``: as the client is sent them)

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.told = []
        self.owner._briefed(briefing)

    def record(self, outcome: Outcome) -> None:
        self.told.append(outcome)
        super().record(outcome)

    def suggest(self) -> Action | Hypothesis | None:
        move, self.candidates = self.owner._next_move()
        return move

    def ranked_candidates(self) -> list[frozenset[str]]:
        return list(self.candidates)

    def close(self, end: str) -> None:
        self.owner._event("closed", end)


MOVE_BYTES = Limits().line_bytes      # the longest move, as JSON: an exec: program's longest reply line
_Event = tuple[str, Any]


class DrivenSession:
    """One diagnostic session whose moves come from outside (see the module's documentation).

    ``scenario`` is a scenario of ``store`` (number, identifier or :class:`~diagkg.env.scenarios.Scenario`);
    ``name`` is the assistant's name in the trajectory; ``budget`` overrides the scenario's rounds;
    ``idle_seconds`` (None: no limit) is how long the session waits for a move before it ends it.
    """

    def __init__(self, store: KnowledgeStore, scenario: str | int | Scenario, name: str, *, seed: int = 0,
                 budget: int | None = None, idle_seconds: float | None = DEFAULT_IDLE_SECONDS,
                 notify: Callable[[str], None] | None = None):
        if not name.strip():
            raise InputError("a driven session needs an assistant name")
        self.store, self.scenario, self.name, self.seed, self.budget = store, scenario, name, seed, budget
        self.idle_seconds, self.notify = idle_seconds, notify
        self.agent = DrivenAssistant(name, self)
        self.briefing: Briefing | None = None
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self.end: str | None = None
        self._moves: queue.Queue[tuple[Move, list[frozenset[str]]] | ProtocolError] = queue.Queue()
        self._events: queue.Queue[_Event] = queue.Queue()
        self._known: frozenset[str] = frozenset()
        self._turn = threading.Lock()          # one move in flight at a time
        self._thread: threading.Thread | None = None
        self._done = threading.Event()

    # -- the runner's thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        from .keeping import store_or_keep
        from .runner import RunResult, run_session

        try:
            try:
                result = run_session(self.scenario, self.agent, seed=self.seed, budget=self.budget, store=self.store,
                                     notify=self.notify, record=False)
            except LedgerUnavailable as exc:       # played to its end: kept without its ledger, not lost
                assert isinstance(exc.result, RunResult)
                result = exc.result
                if self.notify is not None:
                    self.notify(f"{exc}; the trajectory is kept without it")
            assert result.record is not None
            self.result = result
            try:     # a store that cannot take it (a remote one gone away): saved to a file, and the error says where
                result.trajectory = store_or_keep(self.store, result.record, result.catalogue)
            except TrajectoryKept as kept:
                result.trajectory = result.record.iri
                self.error = kept
                self._event("error", kept)
                return
            self._event("done", self.result)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller waiting on the session
            self.error = exc
            self._event("error", exc)
        finally:
            self._done.set()

    def _briefed(self, briefing: Briefing) -> None:
        self.briefing = briefing
        self._known = known_ids(briefing)

    def _event(self, kind: str, value: Any) -> None:
        if kind == "closed":
            self.end = str(value)
        self._events.put((kind, value))

    def _next_move(self) -> tuple[Move, list[frozenset[str]]]:
        self._event("ready", None)
        try:
            got = self._moves.get(timeout=self.idle_seconds)
        except queue.Empty:
            raise ProtocolError(ProtocolFault.LATE, f"no move within {self.idle_seconds:g} s: the client has gone") from None
        if isinstance(got, ProtocolError):
            raise got
        return got

    # -- the caller's side --------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._thread is not None

    @property
    def over(self) -> bool:
        return self._done.is_set() or self.end is not None

    def start(self) -> Briefing:
        """Start the session (faults injected, assistant briefed) and return the briefing; raises what stopped
        it from starting (an unknown scenario, a store that cannot be used)."""
        if self._thread is not None:
            raise SessionError("the session has already started")
        self._thread = threading.Thread(target=self._run, name=f"driven-session-{self.name}", daemon=True)
        self._thread.start()
        kind, value = self._events.get()
        if kind == "error":
            raise value
        if self.briefing is None:         # ended before its first move (the runner could not brief it)
            raise SessionError(f"the session ended before its first move ({kind})")
        if kind != "ready":
            self._wait_done()
        return self.briefing

    def play(self, reply: Mapping[str, Any]) -> Step:
        """Play one move, given as the assistant protocol's reply (``act``, ``hypothesis`` or ``stop``, without
        ``protocol``): checked as an ``exec:`` reply is; a move that fails raises :class:`ProtocolError` and
        plays no round."""
        if self.briefing is None:
            raise SessionError("the session has not started")
        if self.over:
            raise SessionError(self._over_text())
        if not self._turn.acquire(blocking=False):
            raise SessionError("another move is being played; wait for its outcome")
        try:
            line = json.dumps({"protocol": PROTOCOL_VERSION, **reply})
            if len(line.encode("utf-8")) > MOVE_BYTES:    # as an exec: program's reply line: kept out of the trajectory
                raise ProtocolError(ProtocolFault.OVERSIZED, f"a move longer than {MOVE_BYTES} bytes as JSON")
            move, candidates = read_reply(line, self._known, self.briefing.catalogue)
            before = len(self.agent.outcomes)
            self._moves.put((move, candidates))
            kind, value = self._events.get()
            if kind == "error":
                raise value
            if kind == "closed":
                self._wait_done()
            outcome = self.agent.outcomes[-1] if len(self.agent.outcomes) > before else None
            return self.step(outcome)
        finally:
            self._turn.release()

    def step(self, outcome: dict[str, Any] | None = None) -> Step:
        """Where the session stands now (with ``outcome`` as the last round's)."""
        told = list(self.agent.told)
        rounds = len(told)
        budget = self.briefing.budget if self.briefing is not None else 0
        total = sum(o.cost for o in told)
        left = 0 if self.over else max(0, budget - rounds)
        return Step(outcome, rounds, left, total, self.end,
                    self.result.trajectory if self.result is not None else None)

    def abandon(self, fault: ProtocolFault = ProtocolFault.EXITED, detail: str = "the client went away", *,
                wait: bool = True) -> None:
        """End a session its client left: it ends in surrender with ``fault`` recorded, and is stored (by the time
        this returns, unless ``wait`` is false: a signal handler only asks)."""
        if self._thread is None:
            return
        if not self._done.is_set() and self.end is None:      # still waiting for a move (else: being stored)
            self._moves.put(ProtocolError(fault, detail))
        if wait:
            self._done.wait()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the session is over and stored (or ``timeout`` seconds); whether it is."""
        return self._done.wait(timeout)

    def _wait_done(self) -> None:
        self._done.wait()
        if self.error is not None:
            raise self.error

    def _over_text(self) -> str:
        where = f"; its trajectory is {self.result.trajectory}" if self.result is not None else ""
        if isinstance(self.error, TrajectoryKept):
            where = f"; {self.error}"
        return f"the session is over (end: {self.end or 'unknown'}){where}"

    # -- what a client may read ---------------------------------------------------------------------------

    def briefing_json(self) -> dict[str, Any]:
        """What a technician is told (the ``briefing`` message's content), never the answer."""
        b = self._brief()
        return {"protocol": PROTOCOL_VERSION, "assistant": self.name, "system": b.system,
                "system_iri": b.system_iri, "description": b.description, "symptoms": b.symptoms,
                "visible": b.visible, "lights": dict(b.lights), "parts": dict(b.parts), "labels": dict(b.labels),
                "ports": {c: list(p) for c, p in b.ports.items()}, "modules": list(b.modules),
                "budget": b.budget, "seed": b.seed, **self._standing()}

    def affordable_actions(self) -> dict[str, Any]:
        """The catalogue's actions with the parts each may target (of the kind it targets and, when it names
        component types, of one of them), and their cost; none once no round is left."""
        b = self._brief()
        standing = self._standing()
        actions = []
        if standing["rounds_left"] > 0:
            for _, spec in sorted(b.catalogue.items()):
                entry = action_json(spec)
                entry["applies_to"] = applicable_parts(spec.target_kind, spec.types, b.parts)
                actions.append(entry)
        return {"protocol": PROTOCOL_VERSION, "actions": actions, **standing}

    def observations(self) -> dict[str, Any]:
        """What was done and observed so far: the reported symptoms, the visible lights, every round's outcome."""
        b = self._brief()
        return {"protocol": PROTOCOL_VERSION, "symptoms": b.symptoms, "visible": b.visible,
                "lights": dict(b.lights), "rounds": [dict(o) for o in list(self.agent.outcomes)], **self._standing()}

    def _brief(self) -> Briefing:
        if self.briefing is None:
            raise SessionError("the session has not started")
        return self.briefing

    def _standing(self) -> dict[str, Any]:
        s = self.step()
        return {"round": s.round, "rounds_left": s.rounds_left, "total_cost": s.total_cost, "end": s.end,
                "trajectory": s.trajectory}


def applicable_parts(kind: str, types: frozenset[str], parts: Mapping[str, str]) -> list[str]:
    """The parts (``id -> component type``, or ``enclosure``/``opening``) an action of target kind ``kind``
    (``component``, ``enclosure``, ``opening``, ``any``) restricted to ``types`` (none: any) may target."""
    places = ("enclosure", "opening")
    out = []
    for pid, ptype in sorted(parts.items()):
        if kind == "component" and ptype in places:
            continue
        if kind in places and ptype != kind:
            continue
        if types and ptype not in types:
            continue
        out.append(pid)
    return out
