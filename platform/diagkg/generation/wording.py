"""The words of a generated scenario: from templates, or from a language model when one is
configured, then checked against what the scenario states as data.

A model is asked (``llm/prompts/generation-describe.j2``) for a description of what was broken,
the reporter's observations, and the lamps and LEDs those observations speak of with how they
say each looks. Its answer is kept only when those claims agree with the stated symptoms: every
lamp it names is a lamp or LED of the system and looks as it says, every lamp that looks
otherwise than in the working system is spoken of, each is named in the words, and the
observations name no faulty part that is not a lamp (they must not give the diagnosis away).
Otherwise, or when the model fails, the template's words are kept and the reason is said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..llm.client import LLMClient, LLMFailure
from ..llm.prompting import render
from ..llm.records import CallLog

if TYPE_CHECKING:  # pragma: no cover
    from ..llm.settings import LLMSettings
    from .bench import Bench, Look

APPEARANCES = ("Lit", "Dark", "Flickering")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "observations": {"type": "string"},
        "mentions": {"type": "array", "items": {
            "type": "object", "properties": {"part": {"type": "string"}, "appearance": {"enum": list(APPEARANCES)}},
            "required": ["part", "appearance"]}},
    },
    "required": ["description", "observations", "mentions"],
}


@dataclass(frozen=True)
class Words:
    """A scenario's description and initial observations, and where they come from."""

    description: str
    observations: str
    by_model: bool = False
    problem: str | None = None       # why the model's words were not kept


def problem_with(answer: dict[str, Any], bench: Bench, look: Look) -> str | None:
    """What is wrong with a model's words against the stated symptoms (None: nothing)."""
    stated = dict(look.appearances)
    text = str(answer.get("observations", ""))
    low = text.lower()
    mentions: dict[str, str] = {}
    for m in answer.get("mentions") or []:
        part, seen = str(m.get("part", "")), str(m.get("appearance", ""))
        if part not in stated:
            return f"the words speak of {part!r}, which is not a lamp or LED of the system"
        if seen != stated[part]:
            return f"the words say {part} is {seen.lower()}; the scenario states it is {stated[part].lower()}"
        mentions[part] = seen
    for part in look.changed:
        if part not in mentions:
            return f"the words do not speak of {part}, which looks otherwise than in the working system"
    for part in mentions:
        if bench.label(part).lower() not in low and part.lower() not in low:
            return f"the words claim to speak of {part} but do not name it"
    for part in sorted(look.faulty - set(stated)):
        if bench.label(part).lower() in low or part.lower() in low:
            return f"the observations name {part}, a faulty part: they would give the diagnosis away"
    return None


class Wording:
    """Words for generated scenarios: the template's, or a model's once checked."""

    def __init__(self, settings: LLMSettings | None = None):
        self.log = CallLog()
        self.client = LLMClient(settings, self.log, role="generation") if settings is not None else None

    def close(self) -> None:
        """The generation is over: the endpoint's connections go."""
        if self.client is not None:
            self.client.close()

    def words(self, bench: Bench, look: Look, description: str, observations: str) -> Words:
        """The words for ``look`` (``description`` and ``observations``: the template's)."""
        if self.client is None:
            return Words(description, observations)
        nominal = dict(bench.nominal_look)
        lamps = [{"id": cid, "label": bench.label(cid), "now": seen.lower(), "working": nominal[cid].lower()}
                 for cid, seen in look.appearances]
        faults = [f"{f.label} on {bench.target_label(f.target)}" + (f" and {bench.target_label(f.other)}" if f.other
                                                                    else "") for f in look.placement.faults]
        prompt = render("generation-describe.j2", description=bench.sk.description, lamps=lamps, faults=faults)
        try:
            answer, _ = self.client.ask([{"role": "user", "content": prompt}], SCHEMA, name="describe",
                                        purpose="the words of a generated scenario")
        except LLMFailure as exc:
            return Words(description, observations, problem=f"the language model failed: {exc}")
        problem = problem_with(answer, bench, look)
        if problem is not None:
            return Words(description, observations, problem=problem)
        return Words(str(answer["description"]), str(answer["observations"]), by_model=True)


__all__ = ["SCHEMA", "Wording", "Words", "problem_with"]
