"""Prompts are template files filled from SPARQL results (on a system written
here, not shipped), and no prompt text lives in Python modules; the client's
settings, JSON repair and adaptive concurrency."""

from __future__ import annotations

import ast
import re
import threading
import time
from pathlib import Path

import pytest

from diagkg.agents.llm_assistant import check_choice, choice_schema, system_context
from diagkg.errors import InputError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.llm import prompting
from diagkg.llm.client import AdaptiveLimit, limit_for, repair_json
from diagkg.llm.settings import LLMSettings

from ..support.torch import FLAT, TORCH, scenario_text

PACKAGE = Path(prompting.__file__).resolve().parents[1]

# the torch with other names for its bulb, and a catalogue action made dearer by the user
SKOS = "@prefix skos:    <http://www.w3.org/2004/02/skos/core#> .\n"
NAMED_TORCH = SKOS + TORCH.replace(':bulb a dk:Bulb ; dcterms:identifier "bulb" ; rdfs:label "Torch bulb" ;',
                                   ':bulb a dk:Bulb ; dcterms:identifier "bulb" ; rdfs:label "Torch bulb" ; '
                                   'skos:altLabel "lamp", "globe" ;')


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("named-torch")
    (tmp_path / "torch.ttl").write_text(NAMED_TORCH)
    (tmp_path / "t1.ttl").write_text(scenario_text(**FLAT))
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "torch.ttl", tmp_path / "t1.ttl"])
    yield store
    store.close()


def test_prompts_render_from_sparql_results(torch):
    k = prompting.knowledge(torch, "https://example.org/torch/torch")
    assert k.label == "Torch" and k.description.startswith("A 6 V battery feeds a bulb")
    assert sorted(k.parts["bulb"].synonyms) == ["globe", "lamp"] and k.parts["bulb"].ports == ["n", "p"]
    assert k.parts["case"].kind == "enclosure"
    assert k.actions["replace_component"].cost == 120.0 and k.actions["adjust_potentiometer"].parameter == "position"
    text = prompting.render("assistant-system.j2", **system_context(k), budget=7, symptoms="It is dark.",
                            visible="nothing lit", tool="choose")
    assert '- bulb: Bulb, "Torch bulb" (also: "globe", "lamp"); ports n, p' in text
    assert text.count("- bat:") == 1                       # each part listed once
    assert "replace_component: replace." in text and "Cost 120.0 min" in text
    assert "needs a value (position)" in text and "7 rounds" in text and '"It is dark."' in text
    # the catalogue is the store's: a cost changed there is the cost the prompt gives
    copy = KnowledgeStore.memory()
    copy.add_quads(torch.raw.quads_for_pattern(None, None, None, None))
    copy.update("""PREFIX dk: <https://w3id.org/diagkg/ontology#>
        DELETE { GRAPH ?g { ?a dk:costMinutes ?c } } INSERT { GRAPH ?g { ?a dk:costMinutes 99.0 } }
        WHERE { GRAPH ?g { ?a dk:actionId "replace_component" ; dk:costMinutes ?c } }""")
    k2 = prompting.knowledge(copy, "https://example.org/torch/torch")
    text2 = prompting.render("assistant-system.j2", **system_context(k2), budget=7, symptoms="", visible="",
                             tool="choose")
    assert "fitted and connected. Cost 99.0 min" in text2 and "Cost 120.0 min" not in text2
    history = [{"round": 1, "intention": "measure_voltage bat", "refusal": None, "verdict": None, "cost": 20.0,
                "data": {"bat": {"port_voltages": {"pos": 0.0}}}}]
    turn = prompting.render("assistant-turn.j2", round=2, budget=7, spent=20.0, history=history)
    assert 'round 1: measure_voltage bat → done, 20.0 min; results {"bat": {"port_voltages": {"pos": 0.0}}}' in turn


def test_choices_are_checked_against_the_graph(torch):
    k = prompting.knowledge(torch, "https://example.org/torch/torch")
    schema = choice_schema(k)
    assert set(schema["properties"]["action"]["enum"]) == set(k.actions)
    ok, problem = check_choice(k, {"kind": "action", "action": "measure_voltage", "targets": ["bat"]})
    assert problem is None and str(ok) == "measure_voltage bat"
    assert check_choice(k, {"kind": "action", "action": "measure_voltage", "targets": ["bat.top"]})[1]["code"] == "unknown-part"
    assert check_choice(k, {"kind": "action", "action": "open_opening", "targets": ["bat"]})[1]["code"] == "target-kind"
    assert check_choice(k, {"kind": "action", "action": "swap_cables", "targets": ["lead"]})[1]["code"] == "target-count"
    assert check_choice(k, {"kind": "action", "action": "test_switch", "targets": ["bulb"]})[1]["code"] == "component-type"
    assert check_choice(k, {"kind": "hypothesise", "components": []})[1]["code"] == "target-count"
    assert check_choice(k, {"kind": "hypothesise", "components": ["case"]})[1]["code"] == "unknown-part"
    assert check_choice(k, {"kind": "give_up"}) == (None, None)


PROMPT_PHRASES = re.compile(r"\b(You are|You help|Answer with|Answer by|Respond with|Reply with|Choose (one|the)|"
                            r"Call the tool|JSON object and nothing else)\b", re.IGNORECASE)


def test_no_prompt_text_in_python():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                    and PROMPT_PHRASES.search(node.value):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value[:60]!r}")
    assert not found, "prompt text belongs in llm/prompts/*.j2:\n" + "\n".join(found)
    # and the scan would see one
    assert PROMPT_PHRASES.search(prompting.render("assistant-system.j2", **system_context(
        prompting.Knowledge("k", "K", "", {}, {})), budget=1, symptoms="", visible="", tool="choose"))


@pytest.mark.parametrize("template", ["correction.j2", "grounded-correction.j2"])
def test_a_correction_names_kinds_with_their_article(template):
    """"rx_box is an enclosure", "tx_led is an LED", as the service agent says it (were "a enclosure", "a LED")."""
    told = prompting.render(template, code="target-kind", action="measure_voltage", expected="component",
                            target="rx_box", given="enclosure", left=1, known=[], candidates=[], parts=[])
    assert "applies to a component, and rx_box is an enclosure." in told
    told = prompting.render(template, code="component-type", action="adjust_potentiometer", expected="Potentiometer",
                            target="tx_led", given="LED", left=1, known=[], candidates=[], parts=[])
    assert "tx_led is an LED." in told


def test_every_prompt_template_is_used():
    sources = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    for name in prompting.template_names():
        assert f'"{name}"' in sources, f"llm/prompts/{name} is not used"


def test_settings_from_config_and_environment(monkeypatch):
    monkeypatch.setenv("DIAGKG_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("DIAGKG_LLM_MODEL", "env-model")
    monkeypatch.setenv("DIAGKG_LLM_API_KEY", "k-env")
    s = LLMSettings.from_config({"model": "cfg-model", "pricing": {"cfg-model": [1, 2]}, "cost_limit": 0.5})
    assert (s.base_url, s.model, s.api_key, s.cost_limit) == ("http://127.0.0.1:1/v1", "cfg-model", "k-env", 0.5)
    assert "k-env" not in repr(s) and "k-env" not in str(s.parameters())
    assert s.price() is not None and s.price().of(1_000_000, 1_000_000) == 3.0
    with pytest.raises(InputError, match="structured is 'xml'"):
        LLMSettings.from_config({"structured": "xml"})
    with pytest.raises(InputError, match="pricing"):
        LLMSettings.from_config({"pricing": {"m": 3}})
    with pytest.raises(InputError, match="a cost limit needs the price of model 'other'"):
        LLMSettings.from_config({"model": "other", "pricing": {"cfg-model": [1, 2]}, "cost_limit": 1})


def test_json_repair():
    assert repair_json('{"a": 1}') == {"a": 1}
    assert repair_json('Sure! ```json\n{"a": [1, 2]}\n``` Hope it helps') == {"a": [1, 2]}
    # a raw line break inside a string, as SmolLM2 writes under llama.cpp's JSON grammar
    assert repair_json('{ "kind": "action", "instruction": "Open the box.\nThen look." }')["instruction"] == \
        "Open the box.\nThen look."
    with pytest.raises(ValueError):
        repair_json("no json here {")


def test_clients_of_one_endpoint_with_other_concurrency_share_one_limit():
    """A client whose ``concurrency`` differs from the last one's made a new limiter, which counted none of the
    requests in flight under the old: two settings taking turns (a session's and a judge's) bounded nothing."""
    url = "http://127.0.0.1:9/v1-shared-limit"
    first = limit_for(url, 2)
    first.throttled()                        # a 429: one at a time
    with first:
        other = limit_for(url, 4)
        assert other is first and other.active == 1 and other.limit == 1 and other.ceiling == 4
        assert limit_for(url, 1) is first and first.limit == 1
    raised = limit_for(url, 3)
    for _ in range(5):
        raised.succeeded()
    assert raised is first and first.limit == 3      # grows back, to the ceiling asked last


def test_adaptive_limit_backs_off_on_429_and_recovers():
    limit = AdaptiveLimit(4)
    limit.throttled()
    assert limit.limit == 2
    limit.throttled()
    limit.throttled()
    assert limit.limit == 1
    peak = 0
    lock = threading.Lock()

    def work():
        nonlocal peak
        with limit:
            with lock:
                peak = max(peak, limit.active)
            time.sleep(0.02)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 1                         # one in flight while throttled
    for _ in range(5):
        limit.succeeded()
    assert limit.limit == 4                  # back up to the ceiling, never above
