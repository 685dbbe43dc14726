"""Generated scenarios' words from a language model (a scripted OpenAI-compatible server),
kept only when they agree with the stated symptoms; otherwise the template's words, and why.
On the workshop lamp written in the test (tests/generation/workshop.py)."""

from __future__ import annotations

import json

import pytest

from diagkg.generation.generate import GenerationConfig, generate
from diagkg.generation.wording import Wording
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.llm.settings import LLMSettings

from ..support.llm_server import LLMServer, Reply
from .workshop import WORKSHOP

GOOD = {"description": "The protection diode has burned open.",
        "observations": "Both the left lamp and the right lamp stay dark when switched on; the supply LED is lit.",
        "mentions": [{"part": "lamp_a", "appearance": "Dark"}, {"part": "lamp_b", "appearance": "Dark"},
                     {"part": "led", "appearance": "Lit"}]}
WRONG = {"description": "The feed cable is broken.", "observations": "The left lamp is lit but the right lamp is dark.",
         "mentions": [{"part": "lamp_a", "appearance": "Lit"}, {"part": "lamp_b", "appearance": "Dark"}]}
LEFT = {"description": "A lamp is broken.", "observations": "The left lamp is dark.",
        "mentions": [{"part": "lamp_a", "appearance": "Dark"}]}
RIGHT = {"description": "A lamp is broken.", "observations": "The right lamp is dark.",
         "mentions": [{"part": "lamp_b", "appearance": "Dark"}]}
LEAK = {"description": "A lamp lead is broken.", "observations": "The left lamp is dark: the left lamp lead is broken.",
        "mentions": [{"part": "lamp_a", "appearance": "Dark"}]}


@pytest.fixture(scope="module")
def workshop(tmp_path_factory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("workshop")
    (folder / "workshop.ttl").write_text(WORKSHOP)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "workshop.ttl"])
    return store


def test_a_models_words_are_kept_only_when_they_agree_with_the_stated_symptoms(workshop):
    config = GenerationConfig("workshop", modes=frozenset({"OpenComponent"}))
    with LLMServer() as server:
        # one call per kept placement, in order: dio, feed, lamp_a, lamp_b, lead_a, …
        server.script.then(*(Reply(content=json.dumps(x)) for x in (GOOD, WRONG, LEFT, RIGHT, LEAK)))
        wording = Wording(LLMSettings(base_url=server.base_url, model="stub", retries=0))
        gen = generate(workshop, config, wording=wording)
    words = gen.words
    assert words["OpenComponent:dio"].by_model and words["OpenComponent:dio"].problem is None
    assert "lamp_a is lit; the scenario states it is dark" in words["OpenComponent:feed"].problem
    assert words["OpenComponent:lamp_a"].by_model              # the lamp itself may be named: it is what is seen
    assert words["OpenComponent:lamp_b"].by_model
    assert "name lead_a, a faulty part" in words["OpenComponent:lead_a"].problem
    assert "the language model failed" in words["OpenComponent:ret"].problem   # the server's default is no answer
    dio = next(w for w in gen.written if w.look.placement.key == "OpenComponent:dio")
    assert GOOD["observations"] in dio.text and "written by a language model" in dio.text
    feed = next(w for w in gen.written if w.look.placement.key == "OpenComponent:feed")
    assert "where it is lit when the system works" in feed.text     # the template's words
    assert all(item.reason.value != "check" for item in gen.left)
