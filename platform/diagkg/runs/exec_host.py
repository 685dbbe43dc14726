"""Hosts a plug-in assistant in a process of its own, speaking the assistant protocol.

::

    python -m diagkg.runs.exec_host MODULE:ATTR
    python -m diagkg.runs.exec_host MODULE:ATTR --declared

diagkg starts this for a plug-in of another distribution that is not trusted
(:mod:`diagkg.agents.trust`): the plug-in is imported here only, is briefed
from the ``briefing`` message (no answer, no session, no store: what crosses
the process boundary is JSON), and each of its suggestions goes back as a
reply. Each ``outcome`` message is told to it as the
:class:`~diagkg.env.outcomes.Outcome` an in-process plug-in is told, rebuilt
from the JSON (:func:`~diagkg.runs.rounds.outcome_from_json`) with its
observations the typed records they were (:func:`~diagkg.runs.rounds.typed_outcome`:
a ``Voltages``, a ``Sighting``, one ``Terminal`` per port…, their type what the
round's action observes in the briefing's catalogue), and as JSON again to a
plug-in written for version 2 or 1 of the plug-in API (through its shim, as
before); the outcome an ``end`` message carries (the round that ended the
session) is told before ``close``, as the runner tells it in process.
Whatever the plug-in prints goes to standard error; standard output carries
the protocol alone. With ``--declared`` it plays no session: it says, as one
JSON line, the configuration keys and the plug-in API version the plug-in
declares (:func:`declared`), so that diagkg refuses a key it does not take, or
a version diagkg does not speak, before a session starts, as it does in process.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import IO, Any

from ..agents.registry import ApiShim, BaseAssistant, Briefing, adapt, api_version_of
from ..env.actions import ActionType
from ..env.contract import move_message
from ..env.outcomes import Outcome
from ..env.workspace import KnowledgeView
from ..errors import AssistantError
from ..llm.records import CallLog
from .rounds import outcome_from_json, typed_outcome

DECLARED = "--declared"     # the option that asks what the plug-in declares (declared), not a session


def catalogue_of(actions: list[dict[str, Any]]) -> dict[str, ActionType]:
    """The action catalogue of a briefing message, as in-process assistants have it."""
    out = {}
    for a in actions:
        targets = a.get("targets", {})
        out[a["id"]] = ActionType(
            a["id"], a.get("iri", ""), a.get("label", a["id"]), a.get("comment", ""), float(a.get("cost", 0.0)),
            a.get("category", ""), targets.get("kind", "any"), int(targets.get("count", 1)), None, a.get("observes", ""),
            bool(a.get("repair", False)), a.get("parameter"), frozenset(a.get("requires", ())),
            frozenset(a.get("tools", ())), frozenset(a.get("types", ())))
    return out


def view_of(knowledge: dict[str, Any], key: str) -> KnowledgeView:
    """A read-only view holding the knowledge a briefing carries (one N-Triples document per graph)."""
    import pyoxigraph as ox

    from ..kg.store import KnowledgeStore

    store = KnowledgeStore.memory()
    names = sorted(knowledge.get("graphs", {}))
    for name in names:
        graph = ox.NamedNode(name)
        store.add_quads(ox.Quad(q.subject, q.predicate, q.object, graph) for q in
                        ox.parse(knowledge["graphs"][name].encode("utf-8"), format=ox.RdfFormat.N_TRIPLES))
    return KnowledgeView(store, key, (key, *(store.version_of(ox.NamedNode(n)) for n in names)))


def briefing_of(message: dict[str, Any]) -> Briefing:
    """The :class:`Briefing` a hosted plug-in is set up with, from the ``briefing`` message."""
    knowledge = message.get("knowledge")
    return Briefing(
        system=message["system"], description=message.get("description", ""), symptoms=message["symptoms"],
        visible=message.get("visible", ""), lights=dict(message.get("lights", {})), parts=dict(message["parts"]),
        stated=dict(message.get("stated", {})),
        labels=dict(message.get("labels", {})),
        catalogue=catalogue_of(message["actions"]), budget=int(message["budget"]), seed=int(message.get("seed", 0)),
        store=view_of(knowledge, message["system"]) if knowledge else None, cache=None,
        system_iri=message.get("system_iri", ""), llm=CallLog(),
        ports={c: tuple(p) for c, p in message.get("ports", {}).items()}, modules=tuple(message.get("modules", ())))


def load(target: str) -> Any:
    """``MODULE:ATTR`` (or ``MODULE:A.B``) imported."""
    module, _, attr = target.partition(":")
    found: Any = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        found = getattr(found, part)
    return found


def serve(factory: Any, read: IO[bytes], write: IO[str]) -> int:
    """Answer the messages of one session on ``read`` with replies on ``write``."""
    def send(message: dict[str, Any]) -> None:
        write.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
        write.flush()

    line = read.readline()
    if not line:
        return 0
    message = json.loads(line)
    if message.get("kind") != "briefing":
        print(f"exec_host: expected a briefing, got {message.get('kind')!r}", file=sys.stderr)
        return 2
    try:      # the plug-in API version it states: adapted (an older one) or refused (a newer one)
        agent: BaseAssistant = adapt(factory(**message.get("config", {})))
    except AssistantError as exc:
        print(f"exec_host: {exc}", file=sys.stderr)
        return 2
    brief = briefing_of(message)
    known = set(brief.parts) | set(brief.modules) | {f"{c}.{p}" for c, ps in brief.ports.items() for p in ps}
    agent.setup(brief)

    def told(data: dict[str, Any]) -> Outcome:
        # typed as in process for the current API; a shim (API 2, 1) makes JSON of it again: it is left as sent
        outcome = outcome_from_json(data)
        return outcome if isinstance(agent, ApiShim) else typed_outcome(outcome, brief.catalogue)

    while True:
        move = agent.suggest()
        ranked = getattr(agent, "ranked_candidates", None)
        candidates = [c for c in (ranked() if ranked else []) if c and c <= known]
        send(move_message(move, candidates))
        line = read.readline()
        if not line:
            return 0
        message = json.loads(line)
        if message.get("kind") == "end":
            if message.get("outcome") is not None:     # the round that ended the session: told, as in process
                agent.record(told(message["outcome"]))
            close = getattr(agent, "close", None)
            if close is not None:
                close(message.get("end", ""))
            return 0
        agent.record(told(message["outcome"]))


def declared(factory: Any) -> dict[str, Any]:
    """What the plug-in declares, read from its class without making one: ``{"config_keys": [KEY…] or null
    (it declares none: it takes any key), "api_version": VERSION}`` (the plug-in API it was written for)."""
    keys = getattr(factory, "config_keys", None)
    return {"config_keys": sorted(keys) if isinstance(keys, (set, frozenset)) else None,
            "api_version": api_version_of(factory) if isinstance(factory, type) else None}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2) or ":" not in args[0] or args[1:] not in ([], [DECLARED]):
        print(f"usage: python -m diagkg.runs.exec_host MODULE:ATTR [{DECLARED}]", file=sys.stderr)
        return 2
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")   # standard output carries the protocol alone
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if args[1:] == [DECLARED]:      # asked before a session: the keys it takes, one JSON line
        protocol.write(json.dumps(declared(load(args[0]))) + "\n")
        protocol.flush()
        return 0
    return serve(load(args[0]), sys.stdin.buffer, protocol)


if __name__ == "__main__":  # pragma: no cover - run as a program
    raise SystemExit(main())
