"""The LLM implementation of the neuro-symbolic assistant's symptom classification,
on the one LLM client (:mod:`diagkg.llm.client`).

The endpoint, model and key come from the assistant's configuration or the
environment (:class:`~diagkg.llm.settings.LLMSettings`). The prompt is the
template ``llm/prompts/classify-symptoms.j2`` filled from SPARQL results; the
input is fixed for a scenario, so the reply is kept in the store's response
cache (``cache/llm``) and a question is asked once. A reply that stays cut off
or unusable after the retries raises :class:`~diagkg.llm.client.LLMFailure`
(the session then ends with ``llm_truncation``, its cause recorded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..llm import prompting as prompts
from ..llm.cache import CACHE_GRAPH, GraphCache
from ..llm.client import LLMClient
from ..llm.records import CallLog
from ..llm.settings import LLMSettings

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Briefing

__all__ = ["CACHE_GRAPH", "SCHEMA", "classify_symptoms", "parse_classification"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"anomalous": {"type": "array", "items": {"type": "string"}},
                   "nominal": {"type": "array", "items": {"type": "string"}}},
    "required": ["anomalous", "nominal"],
}


def parse_classification(data: dict[str, Any], known: set[str]) -> tuple[set[str], set[str]]:
    """The two lists of a reply, keeping only known identifiers (a list that is
    not a list counts as empty)."""
    def ids(key: str) -> set[str]:
        value = data.get(key)
        return {str(x) for x in value} & known if isinstance(value, list) else set()

    anomalous = ids("anomalous")
    return anomalous, ids("nominal") - anomalous


def classify_symptoms(briefing: Briefing, names: dict[str, list[str]], config: dict[str, Any]) -> tuple[set[str], set[str]]:
    """Anomalous and nominal components according to the language model (cached in the graph)."""
    log: CallLog = briefing.llm if briefing.llm is not None else CallLog()
    settings = LLMSettings.from_config(config, need_endpoint=not log.replaying)
    cache = GraphCache(briefing.cache) if briefing.cache is not None else None
    prompt = prompts.render(
        "classify-symptoms.j2", description=briefing.description, symptoms=briefing.symptoms, visible=briefing.visible,
        components=sorted((cid, sorted(set(aliases))) for cid, aliases in names.items()))
    with LLMClient(settings, log, cache=cache, role="assistant") as client:
        data, _ = client.ask([{"role": "user", "content": prompt}], SCHEMA, name="classify", purpose="classify",
                             cacheable=True)
    return parse_classification(data, set(names))
