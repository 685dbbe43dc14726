"""Settings of the LLM client, from a configuration mapping and the environment.

A key of the configuration wins over the environment::

    base_url      DIAGKG_LLM_BASE_URL, then OPENAI_BASE_URL
    model         DIAGKG_LLM_MODEL
    api_key       DIAGKG_LLM_API_KEY, then OPENAI_API_KEY   (never recorded anywhere)
    timeout       DIAGKG_LLM_TIMEOUT       seconds per request (default 60)
    retries       DIAGKG_LLM_RETRIES       extra attempts after a failed one (default 3)
    backoff       DIAGKG_LLM_BACKOFF       first wait between attempts, doubled each time (default 1 s)
    temperature   (default 0)
    max_tokens    (default 400)
    concurrency   DIAGKG_LLM_CONCURRENCY   requests in flight toward one endpoint at most (default 4)
    structured    tools | json_schema | json_object   (default tools; see :mod:`diagkg.llm.client`)
    pricing       {"model": [USD per million prompt tokens, per million completion tokens]}
    cost_limit    DIAGKG_LLM_COST_LIMIT    money a session may spend (USD; none by default)
    vision        the model accepts images (default false): a system schematic is attached when there is one
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import urlsplit

from ..errors import InputError

STRUCTURED_MODES = ("tools", "json_schema", "json_object")
# the configuration keys LLMSettings.from_config reads (an assistant that talks to a model accepts them)
CONFIG_KEYS = frozenset({"base_url", "model", "api_key", "timeout", "retries", "backoff", "temperature", "max_tokens",
                         "concurrency", "structured", "pricing", "cost_limit", "vision"})


@dataclass(frozen=True)
class Price:
    """Money per million tokens."""

    prompt: float
    completion: float

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    model: str
    api_key: str = field(default="not-needed", repr=False)
    timeout: float = 60.0
    retries: int = 3
    backoff: float = 1.0
    temperature: float = 0.0
    max_tokens: int = 400
    concurrency: int = 4
    structured: str = "tools"
    pricing: Mapping[str, Price] = field(default_factory=dict)
    cost_limit: float | None = None
    vision: bool = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, need_endpoint: bool = True) -> "LLMSettings":
        """Settings from ``config`` (an assistant's configuration) and the environment.

        Without an endpoint and a model (and ``need_endpoint``), raises :class:`InputError`
        saying what to set; a replayed session needs neither.
        """
        env = os.environ

        def pick(key: str, *names: str, default: Any = None) -> Any:
            if config.get(key) not in (None, ""):
                return config[key]
            for name in names:
                if env.get(name):
                    return env[name]
            return default

        base_url = pick("base_url", "DIAGKG_LLM_BASE_URL", "OPENAI_BASE_URL", default="")
        model = pick("model", "DIAGKG_LLM_MODEL", default="")
        if need_endpoint and (not base_url or not model):
            raise InputError("the language model needs an endpoint and a model: give base_url and model in the "
                             "configuration (--config) or set DIAGKG_LLM_BASE_URL and DIAGKG_LLM_MODEL")
        if base_url:
            _check_endpoint(str(base_url))
        structured = str(pick("structured", "DIAGKG_LLM_STRUCTURED", default="tools"))
        if structured not in STRUCTURED_MODES:
            raise InputError(f"structured is {structured!r}; use one of {', '.join(STRUCTURED_MODES)}")
        pricing: dict[str, Price] = {}
        for name, value in dict(config.get("pricing") or {}).items():
            if not (isinstance(value, (list, tuple)) and len(value) == 2):
                raise InputError(f"pricing[{name!r}] must be [per million prompt tokens, per million completion tokens]")
            try:
                price = Price(float(value[0]), float(value[1]))
            except (TypeError, ValueError):
                raise InputError(f"pricing[{name!r}] is not two numbers: {value!r}") from None
            if not all(math.isfinite(v) and v >= 0 for v in (price.prompt, price.completion)):
                raise InputError(f"pricing[{name!r}] must be two finite numbers ≥ 0, not {list(value)!r}")
            pricing[str(name)] = price
        for key in ("retries", "max_tokens", "concurrency"):      # 2.9 was 2 retries, true one request in flight
            given = config.get(key)
            if isinstance(given, bool) or (isinstance(given, float) and not given.is_integer()):
                raise InputError(f"{key} takes a whole number, not {given!r}")
        limit = pick("cost_limit", "DIAGKG_LLM_COST_LIMIT")
        try:
            settings = cls(
                base_url=str(base_url), model=str(model),
                api_key=str(pick("api_key", "DIAGKG_LLM_API_KEY", "OPENAI_API_KEY", default="not-needed")),
                timeout=float(pick("timeout", "DIAGKG_LLM_TIMEOUT", default=60.0)),
                retries=int(pick("retries", "DIAGKG_LLM_RETRIES", default=3)),
                backoff=float(pick("backoff", "DIAGKG_LLM_BACKOFF", default=1.0)),
                temperature=float(pick("temperature", default=0.0)),
                max_tokens=int(pick("max_tokens", default=400)),
                concurrency=int(pick("concurrency", "DIAGKG_LLM_CONCURRENCY", default=4)),
                structured=structured, pricing=pricing,
                cost_limit=None if limit in (None, "") else float(limit),
                vision=_flag(config.get("vision", False), "vision"))
        except (TypeError, ValueError) as exc:
            raise InputError(f"an LLM setting is not a number: {exc}") from None
        if settings.cost_limit is not None and settings.model and settings.price() is None:
            raise InputError(f"a cost limit needs the price of model {settings.model!r}: give pricing "
                             f'{{"{settings.model}": [per million prompt tokens, per million completion tokens]}}')
        if settings.retries < 0 or settings.timeout <= 0 or settings.concurrency < 1 or settings.max_tokens < 1:
            raise InputError("LLM settings: retries ≥ 0, timeout > 0, concurrency ≥ 1 and max_tokens ≥ 1")
        # nan passed every comparison (a cost limit of nan spent without limit), inf overflowed the
        # client's clock, a negative backoff crashed the first retry: all refused before a session starts
        numbers = {"timeout": settings.timeout, "backoff": settings.backoff, "temperature": settings.temperature,
                   "cost_limit": 0.0 if settings.cost_limit is None else settings.cost_limit}
        bad = [f"{k} is {v!r}" for k, v in numbers.items() if not math.isfinite(v) or v < 0]
        if bad:
            raise InputError(f"LLM settings must be finite numbers ≥ 0: {', '.join(bad)}")
        return settings

    def price(self) -> Price | None:
        return self.pricing.get(self.model)

    def parameters(self) -> dict[str, Any]:
        """What is recorded of the settings with each call (never the key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "structured": self.structured}


def _flag(value: Any, key: str) -> bool:
    """A yes/no setting: a JSON boolean (the text "false" was read as true)."""
    if not isinstance(value, bool):
        raise InputError(f"{key} must be true or false, not {value!r}")
    return value


def _check_endpoint(url: str) -> None:
    """An http(s) URL with a host (``http://[::1`` crashed the HTTP client with InvalidURL mid-session;
    a URL without a scheme or with another one failed every call as a server error)."""
    try:
        parts = urlsplit(url)
        port = parts.port      # a port out of range or not a number raises here
    except ValueError as exc:
        raise InputError(f"base_url {url!r} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise InputError(f"base_url {url!r} must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8011/v1")
