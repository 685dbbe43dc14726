"""The ``llm-grounded`` assistant: a language model behind a trust layer of plain code.

It shares the LLM layer with the ``llm`` assistant (the same settings, ``--config`` and
``DIAGKG_LLM_*``, client, recording and replay), and adds, each round
(the ``grounding_*`` modules):

1. **Choices the graph allows.** The (action, part) pairs the service agent can carry
   out in the state a round starts from are read with ``queries/affordable-pairs.rq``, and
   the ``decide`` tool's schema enumerates them (one branch per action, its targets an
   ``enum``), so an endpoint that enforces schemas can only produce a valid choice; a
   choice from one that does not is checked against the same pairs. More than
   ``menu_limit`` pairs are narrowed, not cut: a part first, then the actions on it (a
   second call, ``pick``).
2. **Queries checked before they run.** ``kind: query`` asks the knowledge view in
   SPARQL; the query is checked against the ontology (:mod:`.grounding_sparql_check`)
   and, if accepted, run bounded in time and rows (:mod:`.grounding_bounded`); the
   verdict and the answer go back to the model.
3. **Grounded messages.** The message to the service agent carries its claims as fields
   (parts, cited observations, relations); a message with a claim that does not hold
   goes back once with the failing claims (:mod:`.grounding_claims`), then goes without them.
4. **Hypotheses with conditions.** ``kind: suppose`` states a hypothesis with the
   observations it predicts; each report judges them (:mod:`.grounding_conditions`).
   With ``require_confirmed``, an intervention (``dk:isIntervention``) or a hypothesis
   whose parts no confirmed supposition names is turned back with the reason.

Queries and suppositions are free steps (``steps`` a round); a choice that cannot be
carried out goes back with the reason at most ``corrections`` times a round, then the
round is used with no action. Every call is recorded; a call whose answer was sent back
carries the code of what was caught (``dk:choiceRejected``: a refusal code such as
``unknown-part`` or ``not-afforded``, ``not-confirmed``, a claim's failure such as
``unobserved-value``, or a query's verdict such as ``query-undeclared``), and
:attr:`GroundedAssistant.caught` counts them by kind.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from ..env.actions import Action, Hypothesis
from ..env.outcomes import Outcome, Refusal
from ..kg import graphs
from ..llm import prompting as prompts
from ..llm.records import CallRecord
from ..llm.settings import CONFIG_KEYS as LLM_KEYS
from .grounding_bounded import BoundedQueries
from .grounding_claims import ClaimChecker, Failure, Message, Problem, Relation, parse_message
from .grounding_conditions import ConditionLedger, Prediction
from .grounding_menus import Menu, affordable
from .grounding_observed import Reading, Tolerance, plain_value, readings
from .grounding_sparql_check import PREFIXES, QueryChecker
from .llm_assistant import INSTRUCTION_MAX, NAME_MAX, NO_ACTION, check_choice, close_client, listed, open_client, system_context
from .registry import BaseAssistant, Briefing
from .settings import INF, Settings

TOOL = "decide"
PICK_TOOL = "pick"
OWN_KEYS = frozenset({"corrections", "schematic", "steps", "require_confirmed", "menu_limit", "tolerance",
                      "query_timeout", "query_rows"})
NOT_AFFORDED = Refusal.NOT_AFFORDED.value
NOT_CONFIRMED = "not-confirmed"
QUERY_MAX = 600        # longer bounds make a grammar llama.cpp refuses (it parses maxLength as a repetition)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _context(**values: Any) -> dict[str, Any]:
    """What grounded-correction.j2 reads, with its defaults."""
    out: dict[str, Any] = {"action": "", "target": "", "expected": "", "given": "", "known": [], "parts": [],
                           "problems": []}
    out.update(values)
    return out


@dataclass(frozen=True)
class GroundedConfig(Settings):
    """The ``llm-grounded`` assistant's own keys, checked (each was converted as given: a negative
    count, a time limit below zero, a tolerance of nan, ``"no"`` read as true)."""

    ASSISTANT: ClassVar[str] = "llm-grounded"
    RANGES: ClassVar[dict[str, tuple[float, float]]] = {
        "corrections": (0, INF), "steps": (0, INF), "menu_limit": (1, INF), "tolerance": (0.0, INF),
        "query_timeout": (0.001, INF), "query_rows": (1, INF)}

    corrections: int = 2
    steps: int = 3
    require_confirmed: bool = False
    menu_limit: int = 60
    tolerance: float = 0.01
    query_timeout: float = 5.0
    query_rows: int = 20


class GroundedAssistant(BaseAssistant):
    """A language model whose every choice, query, message and hypothesis is checked (see the module)."""

    name = "llm-grounded"
    config_keys = OWN_KEYS | LLM_KEYS

    def __init__(self, corrections: int = 2, steps: int = 3, require_confirmed: bool = False, menu_limit: int = 60,
                 tolerance: float = 0.01, query_timeout: float = 5.0, query_rows: int = 20, **config: Any):
        super().__init__(corrections=corrections, steps=steps, require_confirmed=require_confirmed,
                         menu_limit=menu_limit, tolerance=tolerance, query_timeout=query_timeout,
                         query_rows=query_rows, **config)
        own = GroundedConfig.from_mapping(dict(corrections=corrections, steps=steps, require_confirmed=require_confirmed,
                                               menu_limit=menu_limit, tolerance=tolerance, query_timeout=query_timeout,
                                               query_rows=query_rows))
        self.corrections, self.steps, self.require_confirmed = own.corrections, own.steps, own.require_confirmed
        self.menu_limit, self.tolerance = own.menu_limit, Tolerance(own.tolerance)
        self.query_timeout, self.query_rows = own.query_timeout, own.query_rows
        self.instruction = ""
        self.message = Message("")
        self.caught: Counter[str] = Counter()
        self.image: dict[str, Any] | None = None
        self._runner: BoundedQueries | None = None

    # -- the session -----------------------------------------------------------
    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.log, self.client, self.image = open_client(self.config, briefing, OWN_KEYS)
        view = briefing.view
        self.knowledge = k = prompts.knowledge(view, briefing.system_iri)
        self.namespace = graphs.namespace_of(briefing.system_iri)
        self.prefixes = dict(PREFIXES, sys=self.namespace)
        present = set(briefing.parts) | set(briefing.modules)
        self.names = sorted(present)
        self.components = sorted(p.id for p in k.components() if p.id in present)
        self.claims = ClaimChecker(view, self.namespace, {p.id: p.ports for p in k.parts.values()},
                                   others=briefing.modules, tolerance=self.tolerance)
        self.ledger = ConditionLedger(self.tolerance)
        self.queries = QueryChecker(view, self.prefixes)
        self.interventions = frozenset(r["id"] for r in view.select("intervention-actions"))
        self.seen: list[Reading] = []
        self.spent = 0.0
        self.caught = Counter()
        self.system_prompt = prompts.render(
            "grounded-system.j2", **system_context(k), budget=briefing.budget, symptoms=briefing.symptoms,
            visible=briefing.visible, tool=TOOL, free=self.steps, require_confirmed=self.require_confirmed,
            prefixes=sorted(f"{p}:" for p in self.prefixes))

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        self.spent += float(outcome.get("cost") or 0.0)
        self.seen.extend(readings(outcome))
        self.ledger.observe(outcome)

    def ranked_candidates(self) -> list[frozenset[str]]:
        return self.ledger.ranked()

    def close(self, end: str) -> None:
        close_client(self)
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    # -- one round -------------------------------------------------------------
    def suggest(self) -> Action | Hypothesis | None:
        assert self.briefing is not None
        menu = affordable(self.briefing.view, self.briefing.system_iri, self.knowledge, self.names)
        narrowed = len(menu) > self.menu_limit
        turn = prompts.render("grounded-turn.j2", round=len(self.outcomes) + 1, budget=self.briefing.budget,
                              spent=self.spent, history=self.outcomes,
                              suppositions=[h.to_json() for h in self.ledger.hypotheses], narrowed=narrowed)
        content: Any = turn if self.image is None else [{"type": "text", "text": turn}, self.image]
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt},
                                          {"role": "user", "content": content}]
        free, left, returned = self.steps, self.corrections, False
        while True:
            data, record = self.client.ask(messages, self.schema(menu, narrowed, free > 0), name=TOOL, purpose="suggest")
            kind = data.get("kind")
            if kind in ("query", "suppose") and free > 0:
                free -= 1
                reply = self._query(data, record, free) if kind == "query" else self._suppose(data, record, free)
                messages = messages + [{"role": "assistant", "content": prompts.render("choice.j2", choice=data)},
                                       {"role": "user", "content": reply}]
                continue
            message, malformed = parse_message(data.get("message"))
            self.instruction, self.message = message.text[:INSTRUCTION_MAX], message
            if kind == "give_up":
                return None
            problem: dict[str, Any] | None = None
            choice: Action | Hypothesis | None = None
            offered = menu
            if narrowed and kind == "action":
                data, record, messages, problem = self._pick(data, record, menu, messages)
                offered = menu.narrowed(str(data.get("part")))       # the pick is on the part chosen
            if problem is None:
                choice, problem = self._choice(data, offered)
            grounding = False
            if problem is None:
                failing = malformed + self.claims.check(message, self.seen)
                if not failing:
                    return choice
                if returned:       # sent back once already: it goes without the claims that fail
                    self._catch(record, failing[0].failure.value, len(failing))
                    self.message = message.without(failing)
                    return choice
                returned = grounding = True
                problem = _context(code=failing[0].failure.value, problems=[p.to_json() for p in failing])
            self._catch(record, problem["code"], len(problem["problems"]) or 1)
            shown = left
            if not grounding:
                if left == 0:
                    break
                left -= 1
            messages = messages + [{"role": "assistant", "content": prompts.render("choice.j2", choice=data)},
                                   {"role": "user", "content": prompts.render("grounded-correction.j2",
                                                                              left=shown, **problem)}]
        self.instruction, self.message = "", Message("")
        return Action(NO_ACTION)

    def _catch(self, record: CallRecord, code: str, count: int = 1) -> None:
        record.rejected = code
        self.caught[code] += count

    # -- schemas ---------------------------------------------------------------
    def schema(self, menu: Menu, narrowed: bool, free: bool) -> dict[str, Any]:
        """The ``decide`` tool's parameters: the menu (or its parts, when narrowed), the
        components a hypothesis may name, the message and its claims; with free steps
        left, suppositions (any part: an enclosure turned the wrong way too) and queries."""
        kinds = ["action", "hypothesise"] + (["suppose", "query"] if free else []) + ["give_up"]
        props: dict[str, Any] = {"kind": {"type": "string", "enum": kinds}}
        if narrowed:
            props["part"] = {"type": "string", "enum": menu.parts()}
        else:
            props["step"] = menu.schema()
        props["components"] = {"type": "array", "items": {"$ref": "#/$defs/component"}, "maxItems": 8}
        if free:
            props["parts"] = {"type": "array", "items": {"$ref": "#/$defs/part"}, "maxItems": 8}
            props["predicts"] = {"type": "array", "maxItems": 4, "items": {
                "type": "object", "properties": {
                    "action": {"type": "string", "enum": sorted(self.knowledge.actions)},
                    "target": {"$ref": "#/$defs/part"}, "reading": {"type": "string", "maxLength": NAME_MAX},
                    "value": {"type": ["number", "boolean", "string"]}},
                "required": ["action", "target", "reading", "value"]}}
            props["query"] = {"type": "string", "maxLength": QUERY_MAX}
        props["message"] = {"type": "object", "properties": {
            "text": {"type": "string", "maxLength": INSTRUCTION_MAX},
            "parts": {"type": "array", "items": {"$ref": "#/$defs/part"}, "maxItems": 6},
            "cites": {"type": "array", "maxItems": 4, "items": {"type": "object", "properties": {
                "part": {"$ref": "#/$defs/part"}, "reading": {"type": "string", "maxLength": NAME_MAX},
                "value": {"type": ["number", "boolean", "string"]}, "round": {"type": "integer", "minimum": 1}},
                "required": ["part", "reading", "value"]}},
            "relations": {"type": "array", "maxItems": 4, "items": {"type": "object", "properties": {
                "relation": {"type": "string", "enum": [r.value for r in Relation]},
                "subject": {"$ref": "#/$defs/part"}, "object": {"$ref": "#/$defs/part"}},
                "required": ["relation", "subject", "object"]}}},
            "required": ["text"]}
        schema: dict[str, Any] = {"type": "object", "properties": props, "required": ["kind", "message"],
                                  "$defs": {"part": {"type": "string", "enum": self.names},
                                            "component": {"type": "string", "enum": self.components}}}
        if self.client.mode != "tools":
            schema["anyOf"] = self._branches(props, kinds, "part" if narrowed else "step")
        return schema

    @staticmethod
    def _branches(props: dict[str, Any], kinds: list[str], step: str) -> list[dict[str, Any]]:
        """One branch per kind of choice, with what that kind needs required (an action its step or
        part, a hypothesis a component at least), for an endpoint that enforces the schema as a
        grammar (llama.cpp: an object's properties not required are optional, so without the branches
        SmolLM2 answered actions with no part). Only with a response format: function calling leaves
        the choice of a schema's root to the provider."""
        def branch(kind: str, required: list[str], **changed: Any) -> dict[str, Any]:
            return {"type": "object", "properties": {**props, "kind": {"type": "string", "enum": [kind]}, **changed},
                    "required": ["kind", "message", *required]}

        out = [branch("action", [step]),
               branch("hypothesise", ["components"], components={**props["components"], "minItems": 1})]
        needs = {"suppose": ["parts", "predicts"], "query": ["query"], "give_up": []}
        return out + [branch(k, needs[k]) for k in kinds if k in needs]

    def _pick(self, data: dict[str, Any], record: CallRecord, menu: Menu, messages: list[dict[str, Any]]
              ) -> tuple[dict[str, Any], CallRecord, list[dict[str, Any]], dict[str, Any] | None]:
        """The second call of a narrowed menu: the actions on the part chosen."""
        part = data.get("part")
        if not isinstance(part, str) or not self.claims.exists(part):
            return data, record, messages, _context(code=Refusal.UNKNOWN_PART.value, target=str(part)[:NAME_MAX])
        if part not in menu.parts():
            return data, record, messages, _context(code=NOT_AFFORDED, action="anything", target=part,
                                                    known=menu.parts())
        messages = messages + [{"role": "assistant", "content": prompts.render("choice.j2", choice=data)},
                               {"role": "user", "content": prompts.render("grounded-narrow.j2", part=part, tool=PICK_TOOL)}]
        schema = {"type": "object", "properties": {"step": menu.narrowed(part).schema()}, "required": ["step"]}
        picked, record = self.client.ask(messages, schema, name=PICK_TOOL, purpose="suggest")
        return dict(data, step=picked.get("step")), record, messages, None

    # -- checks ------------------------------------------------------------------
    def _choice(self, data: dict[str, Any], menu: Menu) -> tuple[Action | Hypothesis | None, dict[str, Any] | None]:
        """The action or hypothesis a reply stands for, or why it cannot be carried out."""
        kind = data.get("kind")
        if kind == "hypothesise":
            choice, problem = check_choice(self.knowledge, {"kind": "hypothesise", "components": data.get("components")})
        else:
            step = _dict(data.get("step"))
            targets, value = listed(step.get("targets")), step.get("value")
            offered = Action(str(step.get("action")), tuple(str(t) for t in targets),
                             float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None)
            if kind == "action" and menu.offers(offered) and len(targets) == menu.counts.get(offered.action, 1) \
                    and (offered.value is not None or not menu.parameters.get(offered.action)):
                choice, problem = offered, None       # on the menu (modules too, which the catalogue check does not know)
            else:
                choice, problem = check_choice(self.knowledge, {"kind": kind, "action": step.get("action"),
                                                                "targets": targets, "value": value})
        if problem is not None:
            return None, _context(**problem)
        if isinstance(choice, Action) and not menu.offers(choice):
            target = next(t for t in choice.targets if (choice.action, t.split(".", 1)[0]) not in menu.pairs)
            return None, _context(code=NOT_AFFORDED, action=choice.action, target=target, known=menu.targets(choice.action))
        if self.require_confirmed and choice is not None:
            mends = (choice.components if isinstance(choice, Hypothesis)
                     else {t.split(".", 1)[0] for t in choice.targets} if choice.action in self.interventions else set())
            unbacked = self.ledger.unbacked(mends)
            if unbacked:
                return None, _context(code=NOT_CONFIRMED, parts=unbacked)
        return choice, None

    def _query(self, data: dict[str, Any], record: CallRecord, free: int) -> str:
        text = data.get("query")
        if not isinstance(text, str) or not text.strip():
            self._catch(record, "query-syntax")
            return prompts.render("grounded-query.j2", accepted=False, code="query-syntax", free=free,
                                  findings=[{"detail": "no query was given", "did_you_mean": []}])
        verdict = self.queries.check(text)
        if not verdict.accepted:
            self._catch(record, verdict.code.value)
            return prompts.render("grounded-query.j2", accepted=False, code=verdict.code.value, free=free,
                                  findings=[f.to_json() for f in verdict.findings])
        answer = self._bounded().run(text)
        if answer.timed_out:
            self._catch(record, "query-timeout")
        return prompts.render("grounded-query.j2", accepted=True, answer=answer.to_json(), free=free)

    def _bounded(self) -> BoundedQueries:
        if self._runner is None:
            assert self.briefing is not None
            documents: dict[str, str] = getattr(self.briefing.store, "ntriples", dict)()
            self._runner = BoundedQueries(documents, self.prefixes, self.prefixes, timeout=self.query_timeout,
                                          max_rows=self.query_rows)
        return self._runner

    def _suppose(self, data: dict[str, Any], record: CallRecord, free: int) -> str:
        parts = [str(c) for c in listed(data.get("parts"))]
        problem = ""
        if not parts or any(p not in self.names for p in parts):
            bad = next((p for p in parts if p not in self.names), "")
            problem = f"there is no part {bad!r} in this system" if bad else "it names no part"
            self._catch(record, Refusal.UNKNOWN_PART.value if bad else Refusal.TARGET_COUNT.value)
        predictions = []
        for item in listed(data.get("predicts"))[:4]:
            item = _dict(item)
            value = plain_value(item.get("value"))
            action, target, reading = item.get("action"), item.get("target"), item.get("reading")
            if action in self.knowledge.actions and isinstance(target, str) and self.claims.exists(target) \
                    and isinstance(reading, str) and reading and value is not None:
                predictions.append(Prediction(str(action), target, reading[:NAME_MAX], value))
        if not problem and not predictions:
            problem = "it predicts nothing an action reports (an action, its target, a reading and a value)"
            self._catch(record, Failure.MALFORMED_CLAIM.value)
        if not problem:          # what it rests on is checked like any message's claims
            message, malformed = parse_message(data.get("message"))
            failing = malformed + self.claims.check(message, self.seen)
            if failing:
                problem = "; ".join(f"{p.claim}: {p.failure.value} ({p.detail})" for p in failing)
                self._catch(record, failing[0].failure.value, len(failing))
        if problem:
            return prompts.render("grounded-supposition.j2", problem=problem, free=free)
        h = self.ledger.state(parts, predictions, len(self.outcomes) + 1)
        return prompts.render("grounded-supposition.j2", problem="", h=h.to_json(), free=free)


__all__ = ["GroundedAssistant", "NOT_AFFORDED", "NOT_CONFIRMED", "PICK_TOOL", "Problem", "TOOL"]
