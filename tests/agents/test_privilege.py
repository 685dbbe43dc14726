"""Privilege is configuration, not self-declaration; an untrusted plug-in runs in a process of its own.

A plug-in package written here, built and installed into a site folder of the test, holds two
adversaries: one declares itself privileged, the other walks the call stack and the garbage
collector's objects for a session or a scenario. Each names the faulty parts if it finds them and
gives up otherwise. Run as plug-ins and as ``exec:`` programs, on the torch (a system written in
the tests) and on a shipped scenario, neither finds the answer, and the trajectory says the session
was not privileged.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pyoxigraph as ox
import pytest

from diagkg.agents import registry
from diagkg.agents.registry import BaseAssistant
from diagkg.agents.trust import Origin, Policy
from diagkg.env.actions import Hypothesis
from diagkg.errors import AssistantError, InputError, ValidationError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs import hosting, trajectory
from diagkg.runs.runner import run_session

from ..support.paths import ROOT, THREE_CUBES
from ..support.torch import torch_memory_store

ADVERSARIES = textwrap.dedent('''
    """Assistants that try to get at the answer; each names it when it finds it, and gives up otherwise."""
    import gc
    import inspect

    from diagkg.agents.registry import BaseAssistant
    from diagkg.env.actions import Hypothesis


    def answer_in(thing):
        """The faulty parts a session or a scenario would give away."""
        try:
            scenario = getattr(thing, "scenario", thing)
            faulty = getattr(scenario, "faulty", None)
        except Exception:
            return None
        if isinstance(faulty, (set, frozenset)) and faulty and all(isinstance(p, str) for p in faulty):
            return frozenset(faulty)
        return None


    class Claimer(BaseAssistant):
        name = "claimer"
        privileged = True

        def setup(self, briefing):
            super().setup(briefing)
            self.found = answer_in(briefing.session) or answer_in(briefing.scenario)

        def suggest(self):
            return Hypothesis(self.found, "I was told") if self.found and not self.outcomes else None


    class StackWalker(BaseAssistant):
        name = "stack-walker"

        def suggest(self):
            if self.outcomes:
                return None
            for frame in inspect.stack():
                for value in list(frame.frame.f_locals.values()):
                    found = answer_in(value)
                    if found:
                        return Hypothesis(found, "read off the call stack")
            for thing in gc.get_objects():
                found = answer_in(thing)
                if found:
                    return Hypothesis(found, "found among the live objects")
            return None
''')

PYPROJECT = textwrap.dedent('''
    [build-system]
    requires = ["setuptools>=61"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "diagkg-adversaries"
    version = "0.1"

    [project.entry-points."diagkg.assistants"]
    claimer = "diagkg_adversaries:Claimer"
    stack-walker = "diagkg_adversaries:StackWalker"
    oracle = "diagkg_adversaries:Claimer"

    [tool.setuptools]
    py-modules = ["diagkg_adversaries"]
''')

SHIPPED = "3CC.S.1"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> str:
    """The adversaries, built into a wheel and installed into a folder of their own."""
    tmp = tmp_path_factory.mktemp("adversaries")
    src = tmp / "src"
    src.mkdir()
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "diagkg_adversaries.py").write_text(ADVERSARIES)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(tmp / "wheels"), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (wheel,) = (tmp / "wheels").glob("diagkg_adversaries-*.whl")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(tmp / "site"),
                        str(wheel)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return str(tmp / "site")


@pytest.fixture()
def installed(site, monkeypatch):
    """The adversaries installed in this process's path (and, through it, their hosts')."""
    monkeypatch.syspath_prepend(site)
    monkeypatch.delenv("DIAGKG_TRUSTED_ASSISTANTS", raising=False)
    monkeypatch.delenv("DIAGKG_PRIVILEGED_ASSISTANTS", raising=False)
    registry.rescan()
    yield site
    sys.modules.pop("diagkg_adversaries", None)
    monkeypatch.undo()
    registry.rescan()


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("privilege-torch"))


@pytest.fixture(scope="module")
def shipped():
    store = KnowledgeStore.memory()
    (scenario,) = (ROOT / "scenarios" / "catalog").glob(f"*-{SHIPPED}.ttl")
    load_files(store, [THREE_CUBES, scenario])
    return store


def privileged_flag(store, result) -> list[ox.Term]:
    return [q.object for q in store.raw.quads_for_pattern(ox.NamedNode(result.trajectory + "#session"),
                                                          DK.privileged.node, None, None)]


@pytest.mark.parametrize("name", ["claimer", "stack-walker"])
def test_an_untrusted_plugin_finds_no_answer(name, installed, torch, shipped):
    hosted = hosting.create(name)
    assert hosted.origin is Origin.PLUGIN and not hosted.in_process and not hosted.privileged
    for store, scenario in ((torch, "TORCH.1"), (shipped, SHIPPED)):
        result = run_session(scenario, name, store=store, seed=0)
        assert result.end == "surrender" and result.rounds == 0, result.record.rounds
        assert privileged_flag(store, result) == [ox.Literal(False)]
    assert "diagkg_adversaries" not in sys.modules          # diagkg never imported it


def test_the_stack_walker_is_a_real_threat_in_process(installed, torch, monkeypatch):
    """Trusted, it runs in diagkg's process and reads the answer off the runner's frames: the process
    boundary, not good manners, is what keeps the untrusted one from it."""
    monkeypatch.setenv("DIAGKG_TRUSTED_ASSISTANTS", "stack-walker")
    result = run_session("TORCH.1", "stack-walker", store=torch, seed=0)
    assert result.end == "success" and result.record.rounds[0]["explanation"] == "read off the call stack"
    assert privileged_flag(torch, result) == [ox.Literal(False)]       # and the record says it was not told


@pytest.mark.parametrize("attr", ["Claimer", "StackWalker"])
def test_the_adversaries_as_exec_programs_find_no_answer(attr, installed, torch, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", installed)
    name = f"exec:{sys.executable} -m diagkg.runs.exec_host diagkg_adversaries:{attr}"
    result = run_session("TORCH.2", name, store=torch, seed=0)
    assert result.end == "surrender" and result.rounds == 0
    assert privileged_flag(torch, result) == [ox.Literal(False)]


def test_trust_lets_a_plugin_in_but_only_the_allow_list_shows_it_the_answer(installed, torch, monkeypatch):
    monkeypatch.setenv("DIAGKG_TRUSTED_ASSISTANTS", "claimer")
    hosted = hosting.create("claimer")
    assert hosted.in_process and not hosted.privileged and hosted.agent.privileged     # its say grants nothing
    result = run_session("TORCH.1", "claimer", store=torch, seed=0)
    assert result.end == "surrender" and privileged_flag(torch, result) == [ox.Literal(False)]
    monkeypatch.setenv("DIAGKG_PRIVILEGED_ASSISTANTS", "oracle,claimer")
    result = run_session("TORCH.1", "claimer", store=torch, seed=0)
    assert result.end == "success" and privileged_flag(torch, result) == [ox.Literal(True)]


def test_a_plugin_cannot_stand_in_for_diagkgs_own(installed, torch):
    assert registry.entry_point("oracle").value == "diagkg.agents.baselines:Oracle"
    assert registry.origin("oracle") is Origin.SHIPPED and registry.origin("claimer") is Origin.PLUGIN
    with pytest.raises(AssistantError, match="not trusted.*DIAGKG_TRUSTED_ASSISTANTS"):
        registry.create("claimer")        # never imported into diagkg's process behind the policy's back
    result = run_session("TORCH.1", "oracle", store=torch, seed=0)
    assert result.end.startswith("success") and privileged_flag(torch, result) == [ox.Literal(True)]


class SelfDeclared(BaseAssistant):
    """Registered at run time (in process) and declaring itself privileged."""

    name = "self-declared"
    privileged = True

    def suggest(self):
        scenario = self.briefing.scenario if self.briefing else None
        return Hypothesis(scenario.faulty) if scenario is not None and not self.outcomes else None


def test_only_the_allow_list_grants_the_answer(torch, monkeypatch):
    registry.register("self-declared", SelfDeclared)
    monkeypatch.delenv("DIAGKG_PRIVILEGED_ASSISTANTS", raising=False)
    result = run_session("TORCH.1", "self-declared", store=torch, seed=0)
    assert result.end == "surrender" and not result.record.privileged
    monkeypatch.setenv("DIAGKG_PRIVILEGED_ASSISTANTS", "self-declared")
    result = run_session("TORCH.1", "self-declared", store=torch, seed=0)
    assert result.end == "success" and result.record.privileged
    # the oracle left off the list is not briefed with the answer, and says so
    result = run_session("TORCH.1", "oracle", store=torch, seed=0)
    assert result.end == "surrender" and not result.record.privileged
    assert "DIAGKG_PRIVILEGED_ASSISTANTS" in result.record.rounds[0]["message"]
    # an assistant object the caller made is judged by its name
    assert hosting.privileged(SelfDeclared(), Policy(privileged=("self-declared",)))
    assert not hosting.privileged(SelfDeclared(), Policy())


class Impostor(SelfDeclared):
    """A user's class bearing the oracle's name."""

    name = "oracle"


def test_a_class_bearing_a_shipped_assistants_name_is_not_that_assistant(torch, monkeypatch):
    """A user's class named "oracle" (registered as "fake", or made by the caller) was briefed with the answer,
    its trajectories labelled the oracle's; registering it as "oracle" was accepted."""
    monkeypatch.delenv("DIAGKG_PRIVILEGED_ASSISTANTS", raising=False)      # the oracle alone, as shipped
    with pytest.raises(InputError, match="one of diagkg's own assistants"):
        registry.register("oracle", Impostor)
    registry.register("fake", Impostor)
    try:
        result = run_session("TORCH.1", "fake", store=torch, seed=0)
    finally:
        registry._REGISTERED.pop("fake", None)
    assert result.end == "surrender" and not result.record.privileged     # not told the answer
    assert result.assistant == result.record.assistant == "fake"          # recorded by the name it was run as
    assert not hosting.privileged(Impostor(), Policy(privileged=("oracle",)))
    assert run_session("TORCH.1", "oracle", store=torch, seed=0).record.privileged     # the oracle itself is


def test_a_trajectory_must_say_whether_it_was_privileged(torch):
    result = run_session("TORCH.1", "random-search", store=torch, seed=0, record=False)
    quads = trajectory.to_quads(result.record, {})
    trajectory.validate(quads, "as written")
    with pytest.raises(ValidationError, match="privileged"):
        trajectory.validate([q for q in quads if q.predicate != DK.privileged.node], "without dk:privileged")


def test_the_policy_reads_patterns_from_the_environment():
    policy = Policy.from_env({"DIAGKG_PRIVILEGED_ASSISTANTS": " oracle , ", "DIAGKG_TRUSTED_ASSISTANTS": "my-*,exec:*"})
    assert policy.privileged == ("oracle",) and policy.trusts("my-assistant") and policy.trusts("exec:node a.js")
    assert not policy.trusts("claimer")
    assert policy.may_see_answer("oracle", Origin.SHIPPED) and not policy.may_see_answer("oracle", Origin.PROGRAM)
    assert not policy.may_see_answer("oracle", Origin.PLUGIN)          # a plug-in in its own process never does
    assert Policy.from_env({}).privileged == ("oracle",)
    assert Policy.from_env({"DIAGKG_PRIVILEGED_ASSISTANTS": ""}).privileged == ()
