"""An assistant's configuration is checked against the keys it declares: a misspelt key is refused,
naming the nearest one (exit 2 on the command line), instead of running silently with the default;
every key an assistant's module reads is declared; a plug-in that declares nothing takes anything."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from diagkg.agents import registry
from diagkg.agents.llm_assistant import LLMAssistant
from diagkg.agents.llm_grounded import GroundedAssistant
from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.agents.modelbased_config import ModelBasedConfig
from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.agents.neurosymbolic_config import NeuroSymbolicConfig
from diagkg.agents.registry import BaseAssistant
from diagkg.errors import InputError
from diagkg.llm.settings import CONFIG_KEYS as LLM_KEYS

from ..support.cli import DIAGKG
from ..support.torch import FLAT, TORCH, scenario_text

DECLARED = [ModelBasedAssistant, NeuroSymbolic, LLMAssistant, GroundedAssistant]
READ = re.compile(r"""config(?:\.get\(|\[)\s*["']([a-z_]+)["']""")


@pytest.mark.parametrize("cls", DECLARED, ids=[c.name for c in DECLARED])
def test_every_key_its_module_reads_is_declared(cls):
    source = Path(sys.modules[cls.__module__].__file__ or "").read_text()
    named = {p.name for p in inspect.signature(cls.__init__).parameters.values()
             if p.name != "self" and p.kind is not p.VAR_KEYWORD}
    read = set(READ.findall(source)) | named
    if cls is ModelBasedAssistant:      # its configuration is a dataclass: every field is a key
        read |= {f.name for f in dataclasses.fields(ModelBasedConfig)}
    if cls is NeuroSymbolic:
        read |= {f.name for f in dataclasses.fields(NeuroSymbolicConfig)}
    assert read, "the keys the module reads and the constructor's named parameters"
    assert cls.config_keys is not None and read <= cls.config_keys, sorted(read - (cls.config_keys or set()))


@pytest.mark.parametrize("name, typo, meant", [("model-based", "minimal_frist", "minimal_first"),
                                               ("neuro-symbolic", "repair_prob", "repair_probe"),
                                               ("llm", "base_ulr", "base_url"),
                                               ("llm-grounded", "require_confirm", "require_confirmed")])
def test_a_misspelt_key_is_refused_naming_the_nearest(name, typo, meant):
    with pytest.raises(InputError, match=rf"takes no configuration key '{typo}' \(did you mean '{meant}'\?\)"):
        registry.create(name, **{typo: True})


def test_declared_keys_are_taken():
    assert registry.create("model-based", minimal_first=False).config == {"minimal_first": False}
    assert registry.create("neuro-symbolic", classifier="keywords", rebase=False).config["rebase"] is False
    assert set(LLM_KEYS) <= GroundedAssistant.config_keys and set(LLM_KEYS) <= NeuroSymbolic.config_keys


def test_the_model_based_configuration_is_checked_when_built():
    """Every key of the model-based assistant is a field of its frozen configuration, typed and
    range-checked: a wrong type or a value out of range is refused, naming the key."""
    assert ModelBasedAssistant.config_keys == {f.name for f in dataclasses.fields(ModelBasedConfig)}
    settings = registry.create("model-based", confident=1, quick=2, chance=False).settings
    assert (settings.confident, settings.quick, settings.chance) == (1.0, 2, False)
    assert isinstance(settings.confident, float) and settings.round_minutes == 20.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.quick = 3          # type: ignore[misc]
    for key, value, said in [("sample", 0, "sample takes a value at least 1"), ("sample", 2.5, "sample takes a whole number"),
                             ("chance", 1, "chance takes true or false"), ("confident", "high", "confident takes a number"),
                             ("confident", 1.5, "confident takes a value from 0.0 to 1.0"),
                             ("unexplained", 0.95, "unexplained takes a value from 0.0 to 0.9"),
                             ("max_pairs", True, "max_pairs takes a whole number")]:
        with pytest.raises(InputError, match=said):
            registry.create("model-based", **{key: value})


def test_an_assistant_that_declares_nothing_takes_anything():
    class Undeclared(BaseAssistant):
        name = "undeclared"

        def suggest(self):
            return None

    assert Undeclared(anything=1).config == {"anything": 1}


def test_the_command_line_exits_2_and_says_why(tmp_path):
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "t1.ttl").write_text(scenario_text(**FLAT))
    cli = [*DIAGKG, "--store", str(tmp_path / "store")]
    loaded = subprocess.run([*cli, "load", str(tmp_path / "torch.ttl"), str(tmp_path / "t1.ttl")], capture_output=True,
                            text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    r = subprocess.run([*cli, "run", "--scenario", "TORCH.1", "--assistant", "neuro-symbolic",
                        "--config", json.dumps({"repair_prob": True})], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "did you mean 'repair_probe'" in r.stderr, r.stderr


def test_every_shipped_assistant_declares_its_keys():
    shipped = [n for n in registry.names() if registry.origin(n) is registry.Origin.SHIPPED]
    assert {"oracle", "random-search", "model-based", "neuro-symbolic"} <= set(shipped)
    assert all(registry.declared_keys(n) is not None for n in shipped), \
        [n for n in shipped if registry.declared_keys(n) is None]
    assert registry.declared_keys("oracle") == frozenset()
    with pytest.raises(InputError, match="oracle takes no configuration key 'sample'"):
        registry.create("oracle", sample=3)
    assert registry.declared_keys("exec:python -c pass") is None       # a program: not known here


def test_a_campaign_gives_each_assistant_the_keys_it_declares():
    """A campaign's configuration is shared by its assistants: each is given what it declares (the
    baselines nothing), the judge's section is kept for the judge, and a key no assistant of the
    campaign takes is refused, naming the nearest."""
    from diagkg.evaluation.campaign import CampaignConfig

    cfg = CampaignConfig(assistants=("model-based", "oracle", "neuro-symbolic"), scenarios=(1,),
                         config={"sample": 5, "rebase": False, "llm": {"model": "judge"}})
    assert cfg.config_for("model-based") == {"sample": 5}
    assert cfg.config_for("oracle") == {}
    assert cfg.config_for("neuro-symbolic") == {"rebase": False}
    registry.create("model-based", **cfg.config_for("model-based"))      # each is taken by its assistant
    registry.create("oracle", **cfg.config_for("oracle"))
    with pytest.raises(InputError, match=r"takes the configuration key 'smaple' \(did you mean 'sample'\?\)"):
        CampaignConfig(assistants=("model-based", "oracle"), scenarios=(1,), config={"smaple": 5})
    assert CampaignConfig.from_json(cfg.to_json()).config_for("model-based") == {"sample": 5}
    # an assistant whose keys cannot be known here (a program, an outside plug-in in a process of its own) is given
    # the keys no other assistant declares: given neuro-symbolic's too, an outside plug-in refused every session
    outside = "exec:python -c pass"
    mixed = CampaignConfig(assistants=("neuro-symbolic", outside), scenarios=(1,), config={"rebase": False, "mine": 1})
    assert mixed.config_for(outside) == {"mine": 1} and mixed.config_for("neuro-symbolic") == {"rebase": False}


def test_the_neuro_symbolic_configuration_is_checked_and_recorded_as_applied():
    """Its keys are a frozen configuration's fields: typed, words among their choices, and what the
    trajectory records is every key as applied (defaults included), a language model's keys as given."""
    made = registry.create("neuro-symbolic", rebase=False, chain_modules=3, model="m", api_key="secret")
    assert made.settings.rebase is False and made.rebase is False and made.chain_modules == 3
    applied = made.applied_config()
    assert applied["rebase"] is False and applied["split"] == "sides" and applied["model"] == "m"
    assert set(NeuroSymbolicConfig.keys()) <= set(applied) and "api_key" not in applied
    for key, value, said in [("split", "halves", "split takes one of dependencies, sides, problems"),
                             ("priors", "yes", "priors takes true or false"),
                             ("chain_modules", -1, "chain_modules takes a value at least 0"),
                             ("classifier", "oracle", "classifier takes one of keywords, llm")]:
        with pytest.raises(InputError, match=said):
            registry.create("neuro-symbolic", **{key: value})
