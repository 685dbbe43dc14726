"""Live diagnostic sessions: started over HTTP, run in threads, streamed as server-sent events.

A session is :func:`diagkg.runs.runner.run_session` in a thread of its own, on
the server's store (its trajectory is stored the same way as ``diagkg run``'s;
writers take turns on the store's lock). People take part in two ways:

- as the **service agent** (``service="human"``): each suggestion of the
  assistant waits until the person carries it out (``POST …/step``
  ``{"execute": true}``) or stops the session (``{"stop": true}``); the
  simulated result follows as the round's event;
- as the **assistant** (``assistant="human"``): each round waits for a choice
  from menus generated from the action catalogue and the system's parts
  (``{"action": ID, "targets": [...], "value": x}``, ``{"hypothesis": [...]}``,
  or ``{"give_up": true}``).

Events (``GET /api/sessions/{id}/events``, ``text/event-stream``): ``start``,
``suggestion``, ``waiting``, ``round``, ``storing``, ``end``, ``error``; each has a ``seq``
(the SSE id: a client that reconnects with ``Last-Event-ID`` gets the rest).

No finished session is lost: a session whose assistant or step raises is stored
with end ``crashed`` (its rounds so far, then what went wrong; the ``error``
event names its trajectory); a trajectory whose write finds another writer
holding the store's lock tries again (``storing`` says so once) until it is
stored, or, if the server stops meanwhile, is kept in a file
(:mod:`diagkg.runs.keeping`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, AsyncIterator

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field, StrictInt, StrictStr

from ..agents.registry import BaseAssistant, Briefing
from ..env.actions import Action, Hypothesis
from ..env.outcomes import Outcome
from ..errors import InputError, StoreError, StoreLockedError, TrajectoryKept
from .state import TokenFirst, check_token, state_of

if TYPE_CHECKING:  # pragma: no cover
    from ..runs.rounds import Round

router = APIRouter(prefix="/api/sessions", tags=["sessions"], route_class=TokenFirst)
SERVICES = ("simulated", "human")
SAVE_WAIT = 1.0       # seconds one try to store a trajectory waits for the lock (then it tries again)


class _Stop(Exception):
    """The person (or the server's shutdown) stopped the session."""


def _plain(value: Any) -> Any:
    """A JSON-ready copy (typed values become strings)."""
    return json.loads(json.dumps(value, default=str))


def menus_of(briefing: Briefing) -> dict[str, Any]:
    """What a person playing the assistant may choose: the catalogue's actions
    (with the parts each may target: of the kind it targets and, when it names component
    types, of one of them, as ``affordable_actions`` of ``diagkg mcp`` lists them) and the parts
    for a hypothesis. An action no part of the system fits is left out (offering every part, as
    the menus did, let a person spend a round on a move the service agent refuses)."""
    from ..runs.driven import applicable_parts

    parts = [{"id": p, "label": briefing.labels.get(p, p), "type": t} for p, t in sorted(briefing.parts.items())]
    actions = []
    for aid, spec in sorted(briefing.catalogue.items()):
        fitting = applicable_parts(spec.target_kind, spec.types, briefing.parts)
        if fitting or spec.target_count == 0:
            actions.append({"id": aid, "label": spec.label, "cost": spec.cost, "category": spec.category,
                            "target_count": spec.target_count, "target_kind": spec.target_kind,
                            "parameter": spec.parameter, "targets": fitting})
    return {"actions": actions, "parts": parts, "budget": briefing.budget}


@dataclass
class LiveSession:
    id: str
    scenario: str
    assistant: str
    service: str
    seed: int
    events: list[dict[str, Any]] = field(default_factory=list)
    status: str = "starting"              # running, waiting, done, failed
    pending: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    menus: dict[str, Any] | None = None
    session: Any = None                   # the env Session, once started (for its schematic)
    # the circuit state as the last round left it (its schematic): read while the session held it, since a
    # session's working memory goes back to the pool when it ends, where the next session empties and reuses it
    state: Any = None
    idle: float | None = None             # seconds it waits for a person at most: then it stops (what it played stored)
    inbox: "queue.Queue[dict[str, Any]]" = field(default_factory=queue.Queue)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _subs: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(default_factory=set)

    def emit(self, kind: str, **data: Any) -> None:
        with self._lock:
            event = _plain({"seq": len(self.events), "type": kind, **data})
            self.events.append(event)
            subs = list(self._subs)
        for loop, flag in subs:
            try:
                loop.call_soon_threadsafe(flag.set)
            except RuntimeError:      # that client's loop is gone
                pass

    def wait_for_person(self, pending: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            # the question is named by its waiting event's seq (only this thread emits): an answer that names
            # it is never taken for an answer to the next one (a double click, a request sent again)
            pending = {**pending, "question": len(self.events)}
            self.pending, self.status = pending, "waiting"
        self.emit("waiting", pending=pending)
        try:
            answer = self.inbox.get(timeout=self.idle)
        except queue.Empty:     # nobody came back: the session stops as if they had stopped it (a thread each)
            self.status = "running"
            self.emit("idle", message=f"nobody answered for {self.idle:g} s: the session stops")
            raise _Stop() from None
        self.status = "running"
        if answer.get("stop") or answer.get("shutdown"):
            raise _Stop()
        return answer

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "scenario": self.scenario, "assistant": self.assistant, "service": self.service,
                "seed": self.seed, "status": self.status, "pending": self.pending, "result": self.result,
                "rounds": sum(1 for e in self.events if e["type"] == "round")}

    async def stream(self, start: int = 0) -> AsyncIterator[dict[str, Any] | None]:
        """Events from ``start`` on, as they happen; None now and then to keep the connection alive."""
        loop, flag = asyncio.get_running_loop(), asyncio.Event()
        sub = (loop, flag)
        self._subs.add(sub)
        try:
            i = start
            while True:
                flag.clear()
                with self._lock:
                    new, done = self.events[i:], self.finished
                for event in new:
                    yield event
                i += len(new)
                if new:
                    continue
                if done:
                    return
                try:
                    await asyncio.wait_for(flag.wait(), 15)
                except TimeoutError:
                    yield None
        finally:
            self._subs.discard(sub)


class ServiceGate(BaseAssistant):
    """An assistant whose every suggestion waits for the person playing the service agent."""

    def __init__(self, inner: BaseAssistant, live: LiveSession):
        super().__init__()
        self.inner, self.live = inner, live
        self.name = inner.name
        self.privileged = inner.privileged
        self.config = getattr(inner, "config", {})

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.inner.setup(briefing)

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        self.inner.record(outcome)

    def applied_config(self) -> dict[str, Any]:
        return self.inner.applied_config()

    def close(self, end: str) -> None:
        self.inner.close(end)

    def suggest(self) -> Action | Hypothesis | None:
        suggestion = self.inner.suggest()
        if suggestion is None:
            return None
        self.live.emit("suggestion", suggestion=describe(suggestion))
        try:
            self.live.wait_for_person({"kind": "execute", "suggestion": describe(suggestion)})
        except _Stop:
            return None
        return suggestion


class WebHuman(BaseAssistant):
    """The assistant played by a person on the web page, choosing from menus."""

    name = "human"
    config_keys = frozenset()        # as `diagkg run --assistant human`: a configuration was taken and dropped

    def __init__(self, live: LiveSession, **config: Any):
        super().__init__(**config)
        self.live = live

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.live.menus = menus_of(briefing)

    def suggest(self) -> Action | Hypothesis | None:
        try:
            answer = self.live.wait_for_person({"kind": "choose", "menus": self.live.menus})
        except _Stop:
            return None
        if answer.get("give_up"):
            return None
        if answer.get("hypothesis"):
            return Hypothesis(answer["hypothesis"], "chosen on the web page")
        return Action(answer["action"], tuple(answer.get("targets") or ()), answer.get("value"))


def describe(s: Action | Hypothesis) -> dict[str, Any]:
    if isinstance(s, Hypothesis):
        return {"kind": "hypothesis", "suspects": sorted(s.components), "text": str(s)}
    return {"kind": "action", **s.to_dict(), "text": str(s)}


class StartRequest(BaseModel):
    # a number or a string; whole numbers strictly (as reset() and --seed take them: true read as seed 1 and
    # "5" as 5, where the Python API refuses both)
    scenario: StrictInt | StrictStr = Field(description="scenario number or identifier")
    assistant: str = Field(description="an installed assistant, or `human` (a person on the web page)")
    service: str = Field("simulated", description="`simulated`, or `human`: a person carries out each suggestion")
    seed: StrictInt = Field(0, ge=0, description="seed of loose connections and random assistants (0 or more)")
    budget: StrictInt | None = Field(None, ge=1, description="rounds at most (default: the scenario's budget)")
    config: dict[str, Any] = Field(default_factory=dict)


class StepRequest(BaseModel):
    execute: bool = False                 # service agent: carry out the suggestion
    stop: bool = False                    # service agent: stop the session
    action: str | None = None             # assistant: an action of the catalogue …
    targets: list[str] = Field(default_factory=list)
    value: float | None = Field(None, allow_inf_nan=False)   # (NaN or 1e999 reached the trajectory as "nan", "inf")
    hypothesis: list[str] | None = None   # … or a hypothesis …
    give_up: bool = False                 # … or give up
    question: StrictInt | None = Field(None, description="the question answered (its `question`, the seq of its "
                                                          "`waiting` event): refused with 409 once it was answered")


def warm_up() -> None:
    """Import, in one thread, what sessions import lazily: two threads importing
    the same module at once can see it half made (``partially initialized module``)."""
    import importlib
    import pkgutil

    import rdflib

    import diagkg

    for m in pkgutil.walk_packages(diagkg.__path__, "diagkg."):
        if m.name.split(".")[1] not in ("cli", "server"):
            importlib.import_module(m.name)
    g = rdflib.Graph().parse(data="<urn:a> <urn:b> <urn:c> .", format="turtle")
    g.serialize(format="turtle")
    g.query("ASK { ?s ?p ?o }")


class Sessions:
    """The server's live sessions."""

    KEEP = 200

    def __init__(self) -> None:
        self.by_id: dict[str, LiveSession] = {}
        self.threads: dict[str, threading.Thread] = {}
        self.stopping = threading.Event()      # the server is shutting down: stop retrying to store
        self._starting = threading.Lock()
        self._warm = False

    def start(self, app_state: Any, req: StartRequest) -> LiveSession:
        with self._starting:
            if not self._warm:
                warm_up()
                self._warm = True
            return self._start(app_state, req)

    def _start(self, app_state: Any, req: StartRequest) -> LiveSession:
        from ..agents.trust import EXEC_PREFIX
        from ..env.scenarios import ScenarioCatalog
        from ..runs import hosting
        from ..runs.runner import run_session

        if req.service not in SERVICES:
            raise HTTPException(400, f"service must be one of {', '.join(SERVICES)}, not {req.service!r}")
        if req.assistant.startswith(EXEC_PREFIX):        # a request must never run a command on this machine
            raise HTTPException(400, "exec: assistants run a command: they are not started over HTTP (use diagkg run)")
        most = app_state.config.max_sessions
        if (busy := sum(1 for s in self.by_id.values() if not s.finished)) >= most:     # a thread each, held
            raise HTTPException(429, f"{busy} sessions are running or waiting for a person on this server, its most "
                                     f"(--max-sessions {most}): finish or stop one first", headers={"Retry-After": "10"})
        store = app_state.fresh()
        scenario = ScenarioCatalog.find(store, req.scenario)     # UnknownTermError: 404
        live = LiveSession(uuid.uuid4().hex[:12], scenario.id, req.assistant, req.service, req.seed,
                           idle=app_state.config.session_idle)
        # where the assistant runs (a plug-in that is not trusted: a process of its own) is hosting's to say
        agent: BaseAssistant = WebHuman(live, **req.config) if req.assistant == "human" else hosting.create(req.assistant,
                                                                                                 req.config).agent
        if req.service == "human":
            agent = ServiceGate(agent, live)

        played: list[dict[str, Any]] = []

        def on_start(session: Any) -> None:
            live.session, live.state = session, session.state()

        def on_round(entry: Round) -> None:
            played.append(entry.to_dict())      # what a crashed session's record keeps
            if live.session is not None:
                live.state = live.session.state()
            # the page is sent the round as an assistant is told it (a person at the page may be the assistant)
            live.emit("round", round=dataclasses.replace(entry, outcome=entry.outcome.told()).to_dict())

        def run() -> None:
            from ..runs.keeping import crashed_record

            live.status = "running"
            live.emit("start", scenario=scenario.id, number=scenario.number, system=scenario.key,
                      symptoms=scenario.observations, assistant=agent.name, service=req.service, seed=req.seed)
            started, t0 = datetime.now(timezone.utc), time.perf_counter()
            try:
                result = run_session(scenario, agent, seed=req.seed, budget=req.budget, store=store,
                                     on_round=on_round, on_start=on_start,
                                     record=False)
            except Exception as exc:      # the session failed: stored as crashed, and the page says why
                if isinstance(exc, InputError) and not played:
                    # refused before a round was played (an assistant's configuration: an LLM without an
                    # endpoint): nothing to keep, as `diagkg run` keeps nothing (a crashed session of 0 rounds
                    # was stored)
                    live.result = {"trajectory": None, "scenario": scenario.number, "scenario_id": scenario.id,
                                   "assistant": agent.name, "end": None, "refused": str(exc)}
                    live.status = "failed"
                    live.emit("error", message=f"{type(exc).__name__}: {exc}", result=live.result)
                    return
                record = crashed_record(scenario, agent.name, dict(getattr(agent, "config", {}) or {}), req.seed,
                                        exc, rounds=played, started=started, wall_time=time.perf_counter() - t0,
                                        budget=req.budget)
                saved = self.save(app_state, record, live)
                live.result = {"trajectory": record.iri, "scenario": scenario.number, "scenario_id": scenario.id,
                               "assistant": agent.name, "end": "crashed", "cost": record.total_cost,
                               "rounds": len(record.rounds), **saved}
                live.status = "failed"
                live.emit("error", message=f"{type(exc).__name__}: {exc}", result=live.result)
                return
            assert result.record is not None
            saved = self.save(app_state, result.record, live)
            live.result = _plain({**result.to_json(), **saved})
            live.status = "done"
            live.emit("end", result=live.result)

        self.by_id[live.id] = live
        self._forget_old()
        thread = threading.Thread(target=run, name=f"diagkg-session-{live.id}", daemon=True)
        self.threads[live.id] = thread
        thread.start()
        return live

    def save(self, app_state: Any, record: Any, live: LiveSession) -> dict[str, Any]:
        """Store a finished session's trajectory, trying again while another writer holds the lock
        (until the server stops: then it is kept in a file). Returns what the result adds: the file
        it was kept in, or why it could not be kept at all."""
        from ..env.actions import action_catalogue
        from ..kg.store import KnowledgeStore
        from ..runs.keeping import store_or_keep

        told = False

        def again(exc: StoreLockedError) -> bool:
            nonlocal told
            if not told:
                live.emit("storing", message="another process is writing the store; the trajectory waits its turn")
                told = True
            return not self.stopping.is_set()

        try:
            writer = KnowledgeStore(app_state.config.store_path, wait=SAVE_WAIT)
            catalogue = {a: spec.iri for a, spec in action_catalogue(writer).items()}
            store_or_keep(writer, record, catalogue, retry=again)
        except TrajectoryKept as kept:
            return {"kept_in": str(kept.file), "store_error": str(kept.reason)}
        except StoreError as exc:
            return {"store_error": str(exc)}
        return {}

    def _forget_old(self) -> None:
        """Keep the last :attr:`KEEP` finished sessions (their trajectories are in the store)."""
        finished = [sid for sid, s in self.by_id.items() if s.finished]
        for sid in finished[:max(0, len(finished) - self.KEEP)]:
            del self.by_id[sid]
            self.threads.pop(sid, None)

    def get(self, sid: str) -> LiveSession:
        if sid not in self.by_id:
            raise HTTPException(404, f"no session {sid!r} on this server")
        return self.by_id[sid]

    def close(self) -> None:
        self.stopping.set()
        for live in self.by_id.values():
            if not live.finished:
                live.inbox.put({"shutdown": True})
        for thread in self.threads.values():
            thread.join(5)


def sessions_of(app: FastAPI) -> Sessions:
    if not hasattr(app.state, "sessions"):
        app.state.sessions = Sessions()
    found: Sessions = app.state.sessions
    return found


@router.post("", dependencies=[Depends(check_token)], summary="Start a session (needs the token)")
def start(request: Request, body: StartRequest) -> dict[str, Any]:
    return sessions_of(request.app).start(state_of(request), body).summary()


@router.get("", summary="The sessions of this server")
def list_sessions(request: Request) -> list[dict[str, Any]]:
    return [s.summary() for s in sessions_of(request.app).by_id.values()]


@router.get("/{sid}", summary="A session: status, what it waits for, its events so far")
def get_session(request: Request, sid: str) -> dict[str, Any]:
    live = sessions_of(request.app).get(sid)
    return {**live.summary(), "events": list(live.events)}


@router.post("/{sid}/step", dependencies=[Depends(check_token)],
             summary="Answer what the session waits for: carry out / stop, or the assistant's choice")
def step(request: Request, sid: str, body: StepRequest) -> dict[str, Any]:
    live = sessions_of(request.app).get(sid)
    pending = live.pending
    if pending is None:
        raise HTTPException(409, f"session {sid} is {live.status}; it waits for nobody now")
    if body.question is not None and body.question != pending["question"]:
        raise HTTPException(409, f"question {body.question} was answered already; the session waits for the answer "
                                 f"to question {pending['question']}")
    if pending["kind"] == "execute":
        if not (body.execute or body.stop):
            raise HTTPException(400, "the session waits for the service agent: send {\"execute\": true} or {\"stop\": true}")
        return _answer(live, pending, {"stop": body.stop}, "stop" if body.stop else "execute")
    menus = live.menus or {}
    parts = {p["id"] for p in menus.get("parts", [])}
    if body.give_up or body.stop:
        return _answer(live, pending, {"give_up": True}, "give up")
    if body.execute:
        raise HTTPException(400, "the session waits for the assistant's choice: an action, a hypothesis or give_up")
    if body.hypothesis is not None and not body.hypothesis:
        raise HTTPException(400, "a hypothesis names at least one part (to stop, give up)")
    if body.hypothesis:
        unknown = sorted(set(body.hypothesis) - parts)
        if unknown:
            raise HTTPException(400, f"no part {', '.join(unknown)} in this system")
        return _answer(live, pending, {"hypothesis": body.hypothesis}, "hypothesis")
    actions = {a["id"]: a for a in menus.get("actions", [])}
    if body.action not in actions:
        raise HTTPException(400, f"choose an action of the catalogue, a hypothesis, or give up (got {body.action!r})")
    spec = actions[body.action]
    if len(body.targets) != spec["target_count"] or not set(body.targets) <= set(spec["targets"]):
        raise HTTPException(400, f"{body.action} takes {spec['target_count']} target(s) among: "
                                 + ", ".join(spec["targets"]))
    if spec["parameter"] and body.value is None:
        raise HTTPException(400, f"{body.action} needs a value for {spec['parameter']}")
    if not spec["parameter"] and body.value is not None:      # (it was recorded as the action's parameter value)
        raise HTTPException(400, f"{body.action} takes no value")
    return _answer(live, pending, {"action": body.action, "targets": body.targets, "value": body.value}, "action")


def _answer(live: LiveSession, pending: dict[str, Any], message: dict[str, Any], what: str) -> dict[str, Any]:
    """Hand one answer to the session (a second answer to the same question is refused)."""
    with live._lock:
        if live.pending is not pending:
            raise HTTPException(409, "this question was answered already")
        live.pending = None
        live.inbox.put(message)
    return {"accepted": what}


@router.get("/{sid}/schematic.{fmt}", summary="The session's system as it is now: lamps as simulated (svg, png, dot)")
def session_schematic(request: Request, sid: str, fmt: str) -> Response:
    import random

    from ..sim.schematic import FORMATS, render

    live = sessions_of(request.app).get(sid)
    if fmt not in FORMATS:
        raise HTTPException(404, f"a schematic comes as {', '.join('.' + f for f in FORMATS)}")
    session, state = live.session, live.state
    if session is None or state is None:
        raise HTTPException(409, f"session {sid} has not started yet")
    result = session.sim.simulate(state, random.Random(live.seed))
    body = render(session.store, session.scenario.key, state=state, result=result, fmt=fmt, faults=False)
    return Response(body, media_type=FORMATS[fmt])


@router.get("/{sid}/events", summary="The session's events as server-sent events (text/event-stream)")
async def events(request: Request, sid: str) -> StreamingResponse:
    live = sessions_of(request.app).get(sid)
    last = request.headers.get("last-event-id")
    start_at = int(last) + 1 if last and last.isdigit() else 0

    async def body() -> AsyncIterator[str]:
        async for event in live.stream(start_at):
            if event is None:
                yield ": keep-alive\n\n"
            else:
                yield f"id: {event['seq']}\nevent: {event['type']}\ndata: {json.dumps(event)}\n\n"

    return StreamingResponse(body(), media_type="text/event-stream", headers={"cache-control": "no-cache"})
