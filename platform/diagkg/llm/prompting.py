"""Prompts: Jinja2 templates in ``diagkg/llm/prompts/`` filled from SPARQL results.

No prompt text lives in Python (a test scans the modules). :func:`knowledge`
reads what a prompt may say about a system — its description
(``queries/llm-system.rq``), its parts with labels, synonyms and ports
(``queries/llm-components.rq``) and the action catalogue with costs and
parameters (``queries/action-catalogue.rq``) — and :func:`render` fills a
template with it (undefined names are errors). A user's text goes in through the
``quoted`` filter: one JSON string, its quotes and line breaks escaped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
import pyoxigraph as ox

from ..errors import UnknownTermError

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource

DK = "https://w3id.org/diagkg/ontology#"


@dataclass
class Part:
    id: str
    kind: str                       # component, enclosure, opening
    type: str = ""                  # the component type's local name (Bulb, Cable…)
    label: str = ""
    synonyms: list[str] = field(default_factory=list)
    ports: list[str] = field(default_factory=list)


@dataclass
class CatalogueAction:
    id: str
    label: str
    comment: str
    cost: float
    target_kind: str
    target_count: int
    parameter: str | None
    repair: bool
    types: list[str] = field(default_factory=list)


@dataclass
class Knowledge:
    """What prompts may say about one system (all of it from SPARQL results)."""

    key: str
    label: str
    description: str
    parts: dict[str, Part]
    actions: dict[str, CatalogueAction]

    def components(self) -> list[Part]:
        return [p for p in self.parts.values() if p.kind == "component"]


def knowledge(source: KnowledgeSource, system_iri: str) -> Knowledge:
    """The system, its parts and the action catalogue as ``source`` holds them."""
    system = ox.NamedNode(system_iri)
    rows = source.select("llm-system", {"system": system})
    if not rows:
        raise UnknownTermError(f"no system <{system_iri}> in the store")
    parts: dict[str, Part] = {}
    for r in source.select("llm-components", {"system": system}):
        part = parts.setdefault(r["id"], Part(r["id"], r["kind"], r["type"] or "", r["label"] or r["id"]))
        if r["synonym"] and r["synonym"] not in part.synonyms:
            part.synonyms.append(r["synonym"])
        if r["port"] and r["port"] not in part.ports:
            part.ports.append(r["port"])
    actions: dict[str, CatalogueAction] = {}
    for r in source.select("action-catalogue"):
        a = actions.setdefault(r["id"], CatalogueAction(
            r["id"], r["label"], r["comment"], float(r["cost"]), r["targetKind"], int(r["targetCount"]),
            r["parameter"], bool(r["repair"])))
        if r["forType"] and r["forType"].startswith(DK) and r["forType"][len(DK):] not in a.types:
            a.types.append(r["forType"][len(DK):])
    row = rows[0]
    return Knowledge(row["key"], row["label"] or row["key"], row["description"] or "", parts, actions)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    folder = resources.files("diagkg.llm").joinpath("prompts")

    def load(name: str) -> str:
        entry = folder.joinpath(name)
        if not entry.is_file():
            raise jinja2.TemplateNotFound(name)
        return entry.read_text(encoding="utf-8")

    env = jinja2.Environment(loader=jinja2.FunctionLoader(load), undefined=jinja2.StrictUndefined,
                             autoescape=False, keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True)
    env.filters["compact"] = lambda value: json.dumps(value, sort_keys=True, ensure_ascii=False)
    # a user's text (a label, a synonym, a description, a report, a model's own words) as one JSON string:
    # its quotes and line breaks escaped, so it cannot end its quotation and write a line of the prompt
    env.filters["quoted"] = lambda value: json.dumps(str(value), ensure_ascii=False)
    # a noun with its article: "an enclosure", "an LED", "a port" (as the service agent says it)
    env.filters["a"] = lambda noun: f"{'an' if str(noun)[:1].lower() in 'aeiou' or str(noun).startswith('LED') else 'a'} {noun}"
    return env


def render(name: str, **context: Any) -> str:
    """The prompt template ``name`` (e.g. ``assistant-system.j2``) filled with ``context``."""
    return _environment().get_template(name).render(**context).strip()


def template_names() -> list[str]:
    folder = resources.files("diagkg.llm").joinpath("prompts")
    return sorted(e.name for e in folder.iterdir() if e.name.endswith(".j2"))
