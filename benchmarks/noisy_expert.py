"""A deterministic OpenAI-compatible "noisy expert": a language model of chosen quality p,
for measuring what the trust layer of ``llm-grounded`` buys without a large model.

With probability p a request is answered with the move a strong assistant would make — the
oracle's plan (``Oracle.cheapest``: the scenario's ideal repair, or naming every faulty part,
whichever costs less), read off the session that the benchmark hands over when it starts
(``run_session(on_start=...)``) and followed round by round (``on_round``). Otherwise with an
error drawn uniformly from a taxonomy of what language models get wrong:

* ``unknown_part`` — a target or component that the system does not have;
* ``unafforded`` — an action on a part of the right kind and type that the part does not
  afford now (read with the platform's own ``queries/affordable-pairs.rq`` on the live state);
* ``healthy_hypothesis`` — a hypothesis naming a healthy part (with the faulty ones or alone);
* ``unobserved_citation`` — the expert's move with a claim citing an observation never made
  (a structured citation for ``llm-grounded``, a sentence of the instruction for ``llm``);
* ``undeclared_query`` — a SPARQL query with a property the ontology does not declare (for
  ``llm``, which has no query tool, a reply whose kind is ``query``);
* ``malformed_json`` — a reply cut off in the middle of its JSON.

Draws are seeded by (seed, p, scenario, round, attempt), so two assistants meet the same draws
as long as they are at the same point. For ``llm-grounded`` with ``require_confirmed`` the
expert first states its hypothesis with the reading a probe of each part will show (simulated
on the session and set back) and takes the probes, so that its repairs are backed.

The server is the standard library's, on a free loopback port, in a thread.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from diagkg.agents.baselines import Oracle
from diagkg.agents.grounding_observed import readings
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.verification import injected_parts

ERRORS = ("unknown_part", "unafforded", "healthy_hypothesis", "unobserved_citation", "undeclared_query",
          "malformed_json")
PROBE_CATEGORIES = ("observe", "test")
PREFERRED_READINGS = ("verdict", "lit", "current", "passed", "lamp_lit")
PICK_ERRORS = ("unknown_part", "unafforded", "malformed_json")


def _step(action: Action) -> dict[str, Any]:
    step: dict[str, Any] = {"action": action.action, "targets": list(action.targets)}
    if action.value is not None:
        step["value"] = action.value
    return step


@dataclass
class Move:
    """What the expert would do: an action, a hypothesis, or a supposition with its predictions."""

    kind: str                                   # action, hypothesise, suppose
    action: Action | None = None
    parts: tuple[str, ...] = ()
    predicts: list[dict[str, Any]] = field(default_factory=list)


class Expert:
    """The state of one session: the plan, how far it went, and the draws."""

    def __init__(self, p: float, seed: int, grounded: bool, require_confirmed: bool):
        self.p, self.seed, self.grounded, self.confirm = p, seed, grounded, require_confirmed
        self.lock = threading.Lock()
        self.injected: list[tuple[int, str]] = []       # (request number, error kind)
        self.requests = 0

    # -- driven by the benchmark, on the runner's thread -------------------------------------
    def start(self, session: Any) -> None:
        self.session = session
        scenario = session.scenario
        repair: list[Action | Hypothesis] = [Action(s.action, s.targets, s.value) for s in scenario.repair]
        repair.append(Hypothesis(scenario.faulty))
        self.plan = Oracle.cheapest(session, repair)
        self.step = 0
        self.faulty = frozenset(injected_parts(session)) | frozenset(scenario.faulty)
        self.catalogue = session.catalogue
        self.components = sorted(c for c in session.sk.components if c not in scenario.removed)
        self.kinds = {p: session.part_class(p) for p in self.components + sorted(session.parts())}
        self.interventions = frozenset(r["id"] for r in session.store.select("intervention-actions"))
        self.seen: list[Any] = []
        self.confirmed: set[str] = set()
        self.stated: set[frozenset[str]] = set()
        self.round, self.attempt = 1, 0
        self.pending: list[tuple[str, Action, dict[str, Any]]] = []    # probes still to take
        self.deferred: tuple[Action, str | None] | None = None           # the action meant by a part chosen
        self.move = self._next()

    def observe(self, entry: dict[str, Any]) -> None:
        """A round's entry (``run_session(on_round=...)``): follow the plan."""
        with self.lock:
            self.seen.extend(readings(entry))
            target = self.plan[self.step] if self.step < len(self.plan) else None
            done = entry.get("action")
            if entry.get("kind") == "action" and done and entry.get("success"):
                taken = Action(done["action"], tuple(done["targets"]), done.get("value"))
                for part, probe, _ in list(self.pending):
                    if probe == taken:
                        self.confirmed.add(part)
                        self.pending = [x for x in self.pending if x[0] != part]
                if isinstance(target, Action) and taken == target:
                    self.step += 1
            elif entry.get("kind") == "hypothesis" and isinstance(target, Hypothesis) \
                    and frozenset(entry.get("suspects", ())) == target.components:
                self.step += 1
            self.round, self.attempt = int(entry.get("round", 0)) + 1, 0
            self.move = self._next()

    def affordable(self) -> set[tuple[str, str]]:
        s = self.session
        return {(r["action"], r["part"]) for r in s.store.select(
            "affordable-pairs", {"systemGraph": s.system_graph, "stateGraph": s.state_graph})}

    def _next(self) -> Move | None:
        """The expert's move now (simulating probes on the session, set back)."""
        if self.step >= len(self.plan) or self.session.end is not None:
            return None
        target = self.plan[self.step]
        mends = (set(target.components) if isinstance(target, Hypothesis)
                 else {t.split(".", 1)[0] for t in target.targets} if target.action in self.interventions else set())
        if self.grounded and self.confirm and mends - self.confirmed:
            missing = frozenset(mends - self.confirmed)
            if missing not in self.stated:
                self.pending = [probe for part in sorted(missing) if (probe := self._probe(part))]
                return Move("suppose", parts=tuple(sorted(missing)), predicts=[x[2] for x in self.pending])
            if self.pending:
                return Move("action", self.pending[0][1])
        if isinstance(target, Hypothesis):
            return Move("hypothesise", parts=tuple(sorted(target.components)))
        return Move("action", target)

    def _probe(self, part: str) -> tuple[str, Action, dict[str, Any]] | None:
        """The cheapest observation or test of ``part`` that reports a reading of it, and the
        reading; for a part that reports none (an enclosure turned the wrong way), a look at a
        lamp that shows the trouble (flickering, else lit or dark)."""
        afford = self.affordable()
        options = sorted((spec.cost, aid) for aid, spec in self.catalogue.items()
                         if spec.category in PROBE_CATEGORIES and spec.target_count == 1 and not spec.parameter
                         and (aid, part) in afford)
        for _, aid in options:
            found = self._readings(Action(aid, (part,)), part)
            if found:
                return part, Action(aid, (part,)), found[0]
        looks = []
        for c in self.components:
            if ("observe_component", c) in afford:
                looks.extend(r for r in self._readings(Action("observe_component", (c,)), c)
                             if r["reading"] in ("flickering", "lit"))
        looks.sort(key=lambda r: (r["reading"] != "flickering" or r["value"] is not True, r["target"]))
        if looks:
            return part, Action("observe_component", (looks[0]["target"],)), looks[0]
        return None

    def _readings(self, action: Action, part: str) -> list[dict[str, Any]]:
        """What ``action`` would report of ``part`` now (tried on the session and set back), best first."""
        point = self.session.checkpoint()
        try:
            report, *_ = self.session.step(action)
        finally:
            self.session.rollback(point)
        found = [r for r in readings(report) if r.part == part and r.value is not None]
        found.sort(key=lambda r: (not any(r.path.endswith(k) for k in PREFERRED_READINGS), r.path))
        return [{"action": action.action, "target": part, "reading": r.path, "value": r.value} for r in found]

    # -- answering, on the server's thread -----------------------------------------------------
    def answer(self, tool: str, schema: dict[str, Any]) -> tuple[str, str | None]:
        """The arguments (JSON text) of the tool call answering one request, and the error kind
        drawn (None: the expert's move). A menu narrowed by part is answered in two requests:
        the part, then (``pick``) the action meant when the part was chosen, where an error in
        that action is counted (that is where it is caught, or not)."""
        with self.lock:
            self.requests += 1
            self.attempt += 1
            rng = random.Random(f"{self.seed}/{self.p}/{self.session.scenario.number}/{self.round}/{self.attempt}")
            honest = rng.random() < self.p
            error = None if honest else rng.choice(ERRORS)
            if tool == "pick" and error not in PICK_ERRORS:
                error = None                     # only a wrong action, a wrong part or broken JSON fit a pick
            if error == "malformed_json":
                self.injected.append((self.requests, error))
                return '{"kind": "action", "step": {"action": "', error
            move = self.move
            if move is None:               # nothing left to do (should not be asked)
                return json.dumps({"kind": "give_up", "message": {"text": "Nothing more to do."},
                                   "instruction": "Nothing more to do."}), None
            if tool == "pick" and self.deferred is not None and error is None:
                action, meant = self.deferred
                self.deferred = None
                if meant is not None:
                    self.injected.append((self.requests, meant))
                return json.dumps({"kind": "action", "step": _step(action), "message": {"text": "As chosen."}}), meant
            self.deferred = None
            args, action, error = self._arguments(tool, schema, move, error, rng)
            offered = ((schema.get("properties") or {}).get("part") or {}).get("enum") or []
            if tool != "pick" and "part" in args and action is not None and args["part"] in offered:
                # the part is chosen now; the action (and an error in it, or in the message) comes with the pick
                self.deferred = (action, error if error in ("unafforded", "unobserved_citation") else None)
                if error in ("unafforded", "unobserved_citation"):
                    return json.dumps(args), None
            if error is not None:
                self.injected.append((self.requests, error))
            if error is None and move.kind == "suppose":
                self.stated.add(frozenset(move.parts))
                self.move = self._next()
            return json.dumps(args), error

    def _bad_name(self, part: str, rng: random.Random) -> str:
        return rng.choice([f"{part}_1", f"{part}s", f"the_{part}", part.replace("_", "")]) if "_" in part \
            else rng.choice([f"{part}_1", f"{part}s", f"the_{part}"])

    def _arguments(self, tool: str, schema: dict[str, Any], move: Move, error: str | None,
                   rng: random.Random) -> tuple[dict[str, Any], Action | None, str | None]:
        kind, action, parts = move.kind, move.action, list(move.parts)
        predicts = list(move.predicts)
        cites: list[dict[str, Any]] = []
        query = ""
        if error == "unafforded":
            wrong = self._unafforded(rng, action.targets[0] if tool == "pick" and action is not None else None)
            if wrong is None:
                error = "unknown_part"          # nothing the part does not afford: a wrong name instead
            else:
                kind, action = "action", wrong
        if error == "unknown_part":
            if action is not None and kind == "action":
                action = Action(action.action, (self._bad_name(action.targets[0], rng), *action.targets[1:]), action.value)
            else:
                kind, parts = "hypothesise", [self._bad_name(rng.choice(sorted(self.faulty) or self.components), rng)]
        elif error == "healthy_hypothesis":
            healthy = [c for c in self.components if c not in self.faulty]
            if healthy:
                h = rng.choice(healthy)
                kind, parts = "hypothesise", sorted(set(self.faulty) | {h}) if rng.random() < 0.5 else [h]
        elif error == "unobserved_citation":
            cites = [self._unobserved(rng)]
        elif error == "undeclared_query":
            kind = "query"
            part = rng.choice(self.components)
            query = f"SELECT ?t WHERE {{ sys:{part} dk:{rng.choice(['hasTerminal', 'connectsTo', 'ratedVoltage'])} ?t }}"
        text = self._text(kind, action, parts, cites)
        if tool == "choose":        # the llm assistant's tool
            out: dict[str, Any] = {"kind": kind if kind != "suppose" else "hypothesise", "instruction": text}
            if action is not None and kind == "action":
                out.update(action=action.action, targets=list(action.targets))
                if action.value is not None:
                    out["value"] = action.value
            elif kind in ("hypothesise", "suppose"):
                out["components"] = parts
            return out, None, error
        step = _step(action) if action is not None else {}
        if tool == "pick":
            return {"step": step}, None, error
        message = {"text": text, "parts": sorted({t.split(".", 1)[0] for t in (action.targets if action and kind == "action"
                                                                             else parts)}), "cites": cites}
        out = {"kind": kind, "message": message}
        if kind == "action":
            if "part" in schema.get("properties", {}):
                out["part"] = step["targets"][0] if step.get("targets") else ""
            else:
                out["step"] = step
        elif kind == "hypothesise":
            out["components"] = parts
        elif kind == "suppose":
            out["parts"] = parts
            out["predicts"] = predicts
        elif kind == "query":
            out["query"] = query
        return out, action if kind == "action" else None, error

    def _unafforded(self, rng: random.Random, part: str | None) -> Action | None:
        """An action on a part of the kind and type it takes, that the part does not afford now."""
        afford = self.affordable()
        options = []
        for aid, spec in sorted(self.catalogue.items()):
            if spec.target_count != 1 or spec.parameter:
                continue
            for p, kind in self.kinds.items():
                if part is not None and p != part:
                    continue
                if spec.target_kind not in ("any", kind) or (aid, p) in afford:
                    continue
                if spec.types and kind == "component" and self.session.sk.components[p].type not in spec.types:
                    continue
                options.append(Action(aid, (p,)))
        return rng.choice(options) if options else None

    def _unobserved(self, rng: random.Random) -> dict[str, Any]:
        """A citation of a reading this session never made."""
        for _ in range(20):
            part = rng.choice(self.components)
            cite = rng.choice([{"reading": "verdict", "value": rng.choice(["open", "short", "nominal"])},
                               {"reading": "lit", "value": rng.random() < 0.5},
                               {"reading": "current", "value": round(rng.uniform(0.001, 2.0), 3)}])
            if not any(r.part == part and r.path == cite["reading"] for r in self.seen):
                return {"part": part, **cite, "round": max(1, self.round - 1)}
        return {"part": self.components[0], "reading": "current", "value": 123.0}

    def _text(self, kind: str, action: Action | None, parts: list[str], cites: list[dict[str, Any]]) -> str:
        if kind == "action" and action is not None:
            spec = self.catalogue.get(action.action)
            text = f"{spec.label if spec else action.action}: {' and '.join(action.targets)}."
        elif kind == "hypothesise":
            text = f"Replace or repair {', '.join(parts)}: I think they are faulty."
        elif kind == "suppose":
            text = f"I suspect {', '.join(parts)}."
        else:
            text = "Looking it up."
        for c in cites:
            text += f" {c['part']} showed {c['reading']} {c['value']} in round {c['round']}."
        return text


class NoisyExpertServer:
    """The endpoint: answers every chat completion with the current expert's tool call."""

    def __init__(self) -> None:
        self.expert: Expert | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:     # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                tools = body.get("tools") or []
                fn = tools[0]["function"] if tools else {"name": "answer", "parameters": {}}
                assert outer.expert is not None
                arguments, _ = outer.expert.answer(fn["name"], fn.get("parameters") or {})
                reply = {"id": "noisy", "object": "chat.completion", "created": 0, "model": body.get("model", "noisy"),
                         "choices": [{"index": 0, "finish_reason": "stop", "message": {
                             "role": "assistant", "content": None, "tool_calls": [{
                                 "id": "call", "type": "function",
                                 "function": {"name": fn["name"], "arguments": arguments}}]}}],
                         "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": len(arguments) // 4,
                                   "total_tokens": 0}}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "NoisyExpertServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
