"""Language models through any OpenAI-compatible endpoint, and the LLM
implementation of the neuro-symbolic assistant's symptom classification.

The endpoint, model and key come from the assistant's configuration
(``base_url``, ``model``, ``api_key``) or from the environment
(``DIAGKG_LLM_BASE_URL``, ``DIAGKG_LLM_MODEL``, ``DIAGKG_LLM_API_KEY``, then
``OPENAI_BASE_URL``/``OPENAI_API_KEY``). Answers are kept in the store's
``cache/llm`` graph by the SHA-256 of model and prompt, so a question is asked
once. A reply that is cut off or is not the JSON asked for raises
:class:`~diagkg.errors.LLMTruncation` (the session then ends with
``llm_truncation``).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2

from ..errors import AssistantError, LLMTruncation
from ..kg import graphs

if TYPE_CHECKING:  # pragma: no cover
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONObject

    from .registry import Briefing

    class JSONObjectWithSchema(ResponseFormatJSONObject, total=False):
        """``json_object`` with the schema that OpenAI-compatible servers (vLLM, llama.cpp) enforce."""

        schema: dict[str, Any]

CACHE_GRAPH = graphs.named("cache", "llm")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"anomalous": {"type": "array", "items": {"type": "string"}},
                   "nominal": {"type": "array", "items": {"type": "string"}}},
    "required": ["anomalous", "nominal"],
}


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    model: str
    api_key: str
    timeout: float = 60.0
    max_tokens: int = 400

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "LLMSettings":
        env = os.environ
        base_url = config.get("base_url") or env.get("DIAGKG_LLM_BASE_URL") or env.get("OPENAI_BASE_URL")
        model = config.get("model") or env.get("DIAGKG_LLM_MODEL")
        if not base_url or not model:
            raise AssistantError("the LLM classifier needs an endpoint and a model: give base_url and model in the "
                                 "assistant's configuration or set DIAGKG_LLM_BASE_URL and DIAGKG_LLM_MODEL")
        key = config.get("api_key") or env.get("DIAGKG_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "not-needed"
        return cls(base_url, model, key, float(config.get("timeout", 60.0)), int(config.get("max_tokens", 400)))


@lru_cache(maxsize=1)
def _prompt_template() -> jinja2.Template:
    text = resources.files("diagkg").joinpath("templates", "classify-symptoms.j2").read_text(encoding="utf-8")
    return jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False).from_string(text)


def chat_json(settings: LLMSettings, prompt: str) -> str:
    """Ask for one JSON object; returns the reply text (raises LLMTruncation when it is cut off)."""
    from openai import APIError, OpenAI

    client = OpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.timeout, max_retries=1)
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": prompt}]
    response_format: JSONObjectWithSchema = {"type": "json_object", "schema": SCHEMA}
    try:
        reply = client.chat.completions.create(
            model=settings.model, temperature=0, max_tokens=settings.max_tokens,
            messages=messages, response_format=response_format,
        )
    except APIError as exc:
        raise AssistantError(f"the language model endpoint {settings.base_url} failed: {exc}") from None
    except Exception as exc:  # connection errors and timeouts come as various httpx exceptions
        raise AssistantError(f"cannot reach the language model at {settings.base_url}: {exc}") from None
    choice = reply.choices[0]
    if choice.finish_reason == "length":
        raise LLMTruncation(f"the model's reply was cut off after {settings.max_tokens} tokens")
    return choice.message.content or ""


def parse_classification(raw: str, known: set[str]) -> tuple[set[str], set[str]]:
    """The two lists of a reply, keeping only known identifiers."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LLMTruncation(f"the model's reply is not JSON ({exc.msg} at character {exc.pos}): {raw[:80]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("anomalous"), list) or not isinstance(data.get("nominal"), list):
        raise LLMTruncation(f"the model's reply lacks the 'anomalous' and 'nominal' lists: {raw[:80]!r}")
    anomalous = {str(x) for x in data["anomalous"]} & known
    nominal = ({str(x) for x in data["nominal"]} & known) - anomalous
    return anomalous, nominal


def classify_symptoms(briefing: Briefing, names: dict[str, list[str]], config: dict[str, Any]) -> tuple[set[str], set[str]]:
    """Anomalous and nominal components according to the language model (cached in the graph)."""
    import pyoxigraph as ox

    settings = LLMSettings.from_config(config)
    prompt = _prompt_template().render(
        description=briefing.description, symptoms=briefing.symptoms, visible=briefing.visible,
        components=sorted((cid, sorted(set(aliases))) for cid, aliases in names.items()))
    digest = hashlib.sha256(f"{settings.model}\n{prompt}".encode("utf-8")).hexdigest()
    cache = briefing.cache
    ns = graphs.namespace_of(briefing.system_iri) if briefing.system_iri else graphs.system_namespace(briefing.system)
    rows = cache.lookup("llm-cache-lookup", {"hash": ox.Literal(digest)}) if cache is not None else []
    if rows:
        return parse_classification(rows[0]["raw"], set(names))
    raw = chat_json(settings, prompt)
    anomalous, nominal = parse_classification(raw, set(names))
    if cache is not None:
        cache.keep("llm-cache-store", graph=CACHE_GRAPH, entry=f"urn:uuid:{uuid.uuid4()}", hash=digest,
                   model=settings.model, raw=raw, anomalous=[ns + c for c in sorted(anomalous)],
                   nominal=[ns + c for c in sorted(nominal)])
    return anomalous, nominal
