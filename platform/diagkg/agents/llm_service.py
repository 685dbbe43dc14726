"""The ``llm`` service agent: carries out free-text instructions.

A person or an assistant says what to do in plain words; the service agent
maps the instruction to one catalogue action with the language model (a
``perform`` tool whose schema is generated from the graph; the choice is
checked against the graph like the ``llm`` assistant's, with the same bounded
corrections), the session executes it, and the model puts the typed result
into plain words. Every mapping and wording is a recorded call (role
``service``). The deterministic service agent stays the default; ``diagkg run
--service llm`` selects this one.
"""

from __future__ import annotations

from typing import Any

from ..env.actions import Action
from ..llm import prompting as prompts
from ..llm.client import LLMClient
from ..llm.prompting import Knowledge
from ..llm.records import CallLog, CallRecord
from ..llm.settings import LLMSettings
from .llm_assistant import NO_ACTION, check_choice, system_context

MAP_TOOL = "perform"
SAY_TOOL = "report"
SAY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class LLMServiceAgent:
    """Maps instructions to actions and verbalises results (see the module)."""

    def __init__(self, settings: LLMSettings, log: CallLog, knowledge: Knowledge, corrections: int = 2):
        self.client = LLMClient(settings, log, role="service")
        self.knowledge = knowledge
        self.corrections = corrections
        self.system_prompt = prompts.render("service-system.j2", **system_context(knowledge))
        self.schema: dict[str, Any] = {
            "type": "object",
            "properties": {"action": {"type": "string", "enum": sorted(knowledge.actions)},
                           "targets": {"type": "array", "items": {"type": "string"}},
                           "value": {"type": "number"}},
            "required": ["action", "targets"],
        }

    def close(self) -> None:
        """The session is over: the endpoint's connections go."""
        self.client.close()

    def instruction_for(self, action: Action) -> str:
        """Plain words for an action of an assistant that gave none."""
        spec = self.knowledge.actions.get(action.action)
        return prompts.render("instruction-from-action.j2", label=spec.label if spec else action.action,
                              targets=list(action.targets), value=action.value)

    def map(self, instruction: str) -> tuple[Action, CallRecord]:
        """The catalogue action an instruction asks for (``no_action`` after the corrections)."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": prompts.render("service-map.j2", instruction=instruction, tool=MAP_TOOL)}]
        for left in range(self.corrections, -1, -1):
            data, record = self.client.ask(messages, self.schema, name=MAP_TOOL, purpose="service-map")
            choice, problem = check_choice(self.knowledge, dict(data, kind="action"))
            if problem is None and isinstance(choice, Action):
                return choice, record
            record.rejected = problem["code"] if problem else "unknown-action"
            if left == 0:
                return Action(NO_ACTION), record
            context = {"action": "", "target": "", "expected": "", "given": "", "known": []}
            context.update(problem or {})
            messages = messages + [{"role": "assistant", "content": prompts.render("choice.j2", choice=data)},
                                   {"role": "user", "content": prompts.render("correction.j2", left=left, **context)}]
        raise AssertionError("unreachable")  # pragma: no cover

    def verbalise(self, outcome: dict[str, Any]) -> str:
        """The typed result of a round in plain words."""
        messages = [{"role": "system", "content": self.system_prompt},
                    {"role": "user", "content": prompts.render(
                        "service-verbalise.j2", intention=outcome["intention"], refusal=outcome.get("refusal"),
                        cost=float(outcome.get("cost") or 0.0), data=outcome.get("data") or {},
                        verdict=outcome.get("verdict"), tool=SAY_TOOL)}]
        data, _ = self.client.ask(messages, SAY_SCHEMA, name=SAY_TOOL, purpose="service-verbalise")
        return str(data["text"])
