"""The ``llm`` assistant: a language model chooses each round's step.

The prompt (``llm/prompts/assistant-system.j2``) carries the system's
description, its parts listed once with types, labels, synonyms and ports,
and the action catalogue with costs and parameters — all from SPARQL results
(:func:`diagkg.llm.prompting.knowledge`) — plus the report; each round adds the
history of typed outcomes (``assistant-turn.j2``). The model answers through
one compact tool, ``choose``, whose JSON schema is generated from the graph
(the action identifiers as an enum; part identifiers are only in the prompt,
to keep the schema small for a 4k-token model): an action with targets and
value, ``hypothesise`` with components, or ``give_up``, always with a
plain-language ``instruction`` for a human service agent.

Every choice is checked against the graph before it runs. An unknown action
or part, or one that does not apply (wrong number or kind of targets, a
component type the action is not for, a missing value), goes back to the
model with the reason (``correction.j2``) — at most ``corrections`` times a
round (default 2), costing no minutes, each recorded with its refusal code on
the call; after that the round is used with no action (the service agent
refuses it; nothing is executed).

Configuration: the LLM settings (:mod:`diagkg.llm.settings`),
``corrections``, and ``schematic``: an image of the system (PNG, JPEG or
WebP, e.g. what a schematic renderer produced) attached to each round's
message when the settings say the model accepts images (``vision``); the
record keeps its SHA-256, not its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..env.actions import Action, Hypothesis
from ..env.outcomes import NO_MOVE, Outcome, Refusal
from ..errors import InputError
from ..llm import prompting as prompts
from ..llm.client import LLMClient, image_part
from ..llm.prompting import Knowledge
from ..llm.records import CallLog
from ..llm.settings import CONFIG_KEYS as LLM_KEYS
from ..llm.settings import LLMSettings
from .registry import BaseAssistant, Briefing
from .settings import INF, Settings

TOOL = "choose"
OWN_KEYS = frozenset({"corrections", "schematic"})       # the assistant's, not the client's
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}
NO_ACTION = NO_MOVE              # not in any catalogue: the round is used, nothing executed (refused as no-move)
# bounds in the schema: a server that enforces it (llama.cpp's grammar) stops a small model that
# would otherwise write one string until max_tokens (finish reason length: cut off)
NAME_MAX = 64
INSTRUCTION_MAX = 300


def choice_schema(k: Knowledge) -> dict[str, Any]:
    """The ``choose`` tool's parameters, generated from the catalogue."""
    return {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["action", "hypothesise", "give_up"]},
            "action": {"type": "string", "enum": sorted(k.actions)},
            "targets": {"type": "array", "items": {"type": "string", "maxLength": NAME_MAX},
                        "maxItems": max((a.target_count for a in k.actions.values()), default=1)},
            "value": {"type": "number"},
            "components": {"type": "array", "items": {"type": "string", "maxLength": NAME_MAX}, "maxItems": 8},
            "instruction": {"type": "string", "maxLength": INSTRUCTION_MAX},
        },
        "required": ["kind", "instruction"],
    }


def listed(value: Any) -> list[Any]:
    """A list the model gave, or none: a number, a string or an object where the schema asks for a
    list names nothing (both LLM assistants read their replies so), so the choice goes back to the
    model with the count it gave, instead of a string's letters read as parts or a crash."""
    return value if isinstance(value, list) else []


def check_choice(k: Knowledge, data: dict[str, Any]) -> tuple[Action | Hypothesis | None, dict[str, Any] | None]:
    """The suggestion a choice stands for, or why it cannot be carried out
    (a :class:`Refusal` code with the facts ``correction.j2`` needs)."""
    kind = data.get("kind")
    if kind == "give_up":
        return None, None
    if kind == "hypothesise":
        components = [str(c) for c in listed(data.get("components"))]
        if not components:
            return None, {"code": Refusal.TARGET_COUNT.value, "action": "", "expected": "at least one", "given": 0}
        for c in components:
            if c not in k.parts or k.parts[c].kind != "component":
                return None, {"code": Refusal.UNKNOWN_PART.value, "target": c}
        return Hypothesis(components), None
    action_id = str(data.get("action") or "")
    spec = k.actions.get(action_id)
    if kind != "action" or spec is None:
        return None, {"code": Refusal.UNKNOWN_ACTION.value, "action": action_id, "known": sorted(k.actions)}
    targets = [str(t) for t in listed(data.get("targets"))]
    if len(targets) != spec.target_count:
        return None, {"code": Refusal.TARGET_COUNT.value, "action": action_id, "expected": spec.target_count,
                      "given": len(targets)}
    for t in targets:
        part_id, _, port = t.partition(".")
        part = k.parts.get(part_id)
        if part is None or (port and port not in part.ports):
            return None, {"code": Refusal.UNKNOWN_PART.value, "target": t}
        kind_of = "port" if port else part.kind
        if spec.target_kind not in ("any", kind_of) and not (spec.target_kind == "component" and kind_of == "port"
                                                             and action_id == "short_ports"):
            return None, {"code": Refusal.TARGET_KIND.value, "action": action_id, "expected": spec.target_kind,
                          "target": t, "given": kind_of}
    first = k.parts[targets[0].partition(".")[0]] if targets else None
    if spec.types and first is not None and first.kind == "component" and first.type not in spec.types:
        return None, {"code": Refusal.COMPONENT_TYPE.value, "action": action_id,
                      "expected": ", ".join(spec.types), "target": first.id, "given": first.type}
    value = data.get("value")
    if spec.parameter and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        return None, {"code": Refusal.MISSING_VALUE.value, "action": action_id, "expected": spec.parameter}
    return Action(action_id, tuple(targets), float(value) if spec.parameter and value is not None else None), None


def schematic_part(path: Path) -> dict[str, Any]:
    """The schematic image as a message part (a clear error for a file that cannot be one)."""
    media = IMAGE_TYPES.get(path.suffix.lower())
    if media is None:
        raise InputError(f"{path}: a schematic must be PNG, JPEG or WebP for a model to see it")
    if not path.is_file():
        raise InputError(f"{path}: no such schematic file")
    return image_part(path.read_bytes(), media)


def open_client(config: dict[str, Any], briefing: Briefing, own_keys: frozenset[str]
                ) -> tuple[CallLog, LLMClient, dict[str, Any] | None]:
    """What a language-model assistant's setup opens: the session's call log (made when the
    briefing has none), a client configured from ``config`` without the assistant's own keys
    (an endpoint needed unless the log replays), and the schematic as a message part when the
    model sees images and ``config`` names one."""
    if briefing.llm is None:
        briefing.llm = CallLog()
    log = briefing.llm
    settings = LLMSettings.from_config({k: v for k, v in config.items() if k not in own_keys},
                                       need_endpoint=not log.replaying)
    schematic = config.get("schematic")
    image = schematic_part(Path(str(schematic))) if settings.vision and schematic else None
    return log, LLMClient(settings, log, role="assistant"), image


def system_context(k: Knowledge) -> dict[str, Any]:
    """What the system templates say about a system."""
    parts = sorted(k.parts.values(), key=lambda p: (p.kind != "component", p.id))
    ported = next((p for p in parts if p.ports), None)
    return {"system": k, "parts": parts, "actions": [k.actions[a] for a in sorted(k.actions)],
            "example_port": f"{ported.id}.{ported.ports[0]}" if ported else "bulb.p"}


def close_client(assistant: BaseAssistant) -> None:
    """Let the endpoint's connections of an assistant's client go (its session is over; none before setup)."""
    client: LLMClient | None = getattr(assistant, "client", None)
    if client is not None:
        client.close()


@dataclass(frozen=True)
class LLMConfig(Settings):
    """The ``llm`` assistant's own keys, checked (``corrections: -1`` asked nothing and ended every
    session in ``timeout``; ``null`` crashed it with a TypeError)."""

    ASSISTANT: ClassVar[str] = "llm"
    RANGES: ClassVar[dict[str, tuple[float, float]]] = {"corrections": (0, INF)}

    corrections: int = 2


class LLMAssistant(BaseAssistant):
    """A language model through any OpenAI-compatible endpoint (see the module)."""

    name = "llm"
    config_keys = OWN_KEYS | {"corrections"} | LLM_KEYS

    def __init__(self, corrections: int = 2, **config: Any):
        super().__init__(corrections=corrections, **config)
        self.corrections = LLMConfig.from_mapping({"corrections": corrections}).corrections
        self.instruction = ""            # the plain-language instruction of the last suggestion
        self.image: dict[str, Any] | None = None

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.log, self.client, self.image = open_client(self.config, briefing, OWN_KEYS)
        self.knowledge = prompts.knowledge(briefing.view, briefing.system_iri)
        self.schema = choice_schema(self.knowledge)
        self.system_prompt = prompts.render("assistant-system.j2", **system_context(self.knowledge),
                                            budget=briefing.budget, symptoms=briefing.symptoms,
                                            visible=briefing.visible, tool=TOOL)
        self.spent = 0.0

    def close(self, end: str) -> None:
        close_client(self)

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        self.spent += float(outcome.get("cost") or 0.0)

    def suggest(self) -> Action | Hypothesis | None:
        assert self.briefing is not None
        turn = prompts.render("assistant-turn.j2", round=len(self.outcomes) + 1, budget=self.briefing.budget,
                              spent=self.spent, history=self.outcomes)
        content: Any = turn if self.image is None else [{"type": "text", "text": turn}, self.image]
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt},
                                          {"role": "user", "content": content}]
        for left in range(self.corrections, -1, -1):
            data, record = self.client.ask(messages, self.schema, name=TOOL, purpose="suggest")
            choice, problem = check_choice(self.knowledge, data)
            self.instruction = str(data.get("instruction") or "")[:INSTRUCTION_MAX]     # (a 5 MB one was stored whole)
            if problem is None:
                return choice
            record.rejected = problem["code"]
            if left == 0:
                break
            context = {"action": "", "target": "", "expected": "", "given": "", "known": []}
            context.update(problem)
            messages = messages + [{"role": "assistant", "content": prompts.render("choice.j2", choice=data)},
                                   {"role": "user", "content": prompts.render("correction.j2", left=left, **context)}]
        self.instruction = ""
        return Action(NO_ACTION)
