"""Where an assistant runs, and whether it is briefed with the answer (:mod:`diagkg.agents.trust` decides).

:func:`create` makes the assistant a session is run with, by name:

* ``exec:COMMAND`` — an :class:`~diagkg.runs.exec_boundary.ExecAssistant` running the command;
* a plug-in of another distribution that is not trusted — the same, running
  ``python -m diagkg.runs.exec_host MODULE:ATTR``: the plug-in is imported in
  that process only, never in diagkg's;
* diagkg's own assistants, those registered at run time and trusted plug-ins —
  in process, privileged when the allow-list names them.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Mapping

from ..agents import registry
from ..agents.registry import BaseAssistant
from ..agents.trust import EXEC_PREFIX, Origin, Policy
from ..errors import AssistantError, UnknownTermError
from .exec_boundary import ExecAssistant, command_of
from .exec_host import DECLARED


@dataclass(frozen=True)
class Hosted:
    """An assistant made for a session, where it runs and whether it may see the answer."""

    agent: BaseAssistant
    origin: Origin
    in_process: bool
    privileged: bool
    informed: bool = False        # briefed with the prior (the stored optimal policy)


def host_command(target: str) -> list[str]:
    """The command that hosts plug-in ``MODULE:ATTR`` in a process of its own."""
    return [sys.executable, "-m", "diagkg.runs.exec_host", target]


def _child_env() -> dict[str, str]:
    """The environment of a hosted plug-in: this one, with this process's import path (the plug-in is
    found where it was found here)."""
    path = [p for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(path)))


@functools.lru_cache(maxsize=64)
def hosted_declared(target: str) -> tuple[frozenset[str] | None, Any]:
    """The configuration keys plug-in ``MODULE:ATTR`` declares (None: it declares none) and the plug-in API
    version it was written for, asked of it in a process of its own (it is never imported in this one);
    ``(None, None)`` when it cannot say (it cannot be loaded: its session then says why, as the program's fault)."""
    try:
        done = subprocess.run([*host_command(target), DECLARED], capture_output=True, text=True, env=_child_env(),
                              stdin=subprocess.DEVNULL, timeout=60)
        said = json.loads(done.stdout.splitlines()[0]) if done.returncode == 0 else {}
        keys, version = said.get("config_keys"), said.get("api_version")
    except (subprocess.TimeoutExpired, OSError, ValueError, IndexError, AttributeError):
        return None, None
    return (frozenset(str(k) for k in keys) if isinstance(keys, list) else None), version


def check_hosted(name: str, target: str, config: Mapping[str, Any]) -> None:
    """Refuse what :class:`~diagkg.agents.registry.BaseAssistant` and :func:`~diagkg.agents.registry.adapt`
    refuse in process, before any session starts: a configuration key the hosted plug-in does not declare
    (:class:`~diagkg.errors.InputError`), a plug-in API version diagkg does not speak (``AssistantError``)."""
    known, version = hosted_declared(target)
    if version is not None:
        registry.check_api_version(name, version)
    registry.check_config_keys(name, config, known)


def declared_keys(name: str) -> frozenset[str] | None:
    """The configuration keys the assistant ``name`` declares, wherever it runs: read from its class in this
    process (:func:`~diagkg.agents.registry.declared_keys`), or asked of a plug-in that is not trusted in a
    process of its own (:func:`hosted_declared`); None for a program (``exec:…``), or one that declares none."""
    try:
        hosted = registry.origin(name) is Origin.PLUGIN and not Policy.from_env().trusts(name)
        target = registry.entry_point(name).value.split()[0] if hosted else ""
    except (AssistantError, UnknownTermError):
        return None
    return hosted_declared(target)[0] if hosted else registry.declared_keys(name)


def check(name: str) -> None:
    """Raise a clear error now if ``name`` names no assistant (an unknown name, a program that is not there)."""
    if name.startswith(EXEC_PREFIX):
        command_of(name[len(EXEC_PREFIX):])
    else:
        registry.origin(name)


def create(name: str, config: Mapping[str, Any] | None = None, policy: Policy | None = None) -> Hosted:
    """The assistant ``name`` with its configuration, where the policy (default: the environment's) puts it."""
    policy = policy or Policy.from_env()
    config = dict(config or {})
    origin = registry.origin(name)
    if origin is Origin.PROGRAM:
        argv = command_of(name[len(EXEC_PREFIX):])
        return Hosted(ExecAssistant(argv, name, config=config, knowledge=policy.trusts(name)), origin, False, False)
    if origin is Origin.PLUGIN and not policy.trusts(name):
        target = registry.entry_point(name).value.split()[0]        # MODULE:ATTR (without [extras])
        check_hosted(name, target, config)
        return Hosted(ExecAssistant(host_command(target), name, config=config, env=_child_env()), origin, False, False)
    return Hosted(registry.create(name, **config), origin, True, policy.may_see_answer(name, origin),
                  policy.may_see_prior(name, origin))


def impersonates(agent: Any) -> bool:
    """Whether ``agent`` (an object the caller made) bears the name of one of diagkg's own assistants without
    being one: a class of a user's named ``oracle`` was briefed with the answer (the allow-list goes by name)."""
    if not registry.shipped_name(str(getattr(agent, "name", ""))):
        return False
    wrapped = getattr(agent, "inner", agent) if isinstance(agent, registry.ApiShim) else agent    # (behind its shim)
    return type(wrapped).__module__.split(".")[0] != "diagkg"


def privileged(agent: Any, policy: Policy | None = None) -> bool:
    """Whether an assistant object the caller made (in this process) is briefed with the answer: the
    allow-list names it, and it is what bears that name; never one in a process of its own."""
    if isinstance(agent, ExecAssistant) or getattr(agent, "in_process", True) is False:
        return False      # in a process of its own, or driven from outside (runs.driven): never
    if impersonates(agent):
        return False
    return (policy or Policy.from_env()).may_see_answer(str(getattr(agent, "name", "")), Origin.REGISTERED)


def informed(agent: Any, policy: Policy | None = None) -> bool:
    """Whether an assistant object the caller made (in this process) is briefed with the prior: the
    informed allow-list names it; never one in a process of its own."""
    if isinstance(agent, ExecAssistant) or getattr(agent, "in_process", True) is False or impersonates(agent):
        return False
    return (policy or Policy.from_env()).may_see_prior(str(getattr(agent, "name", "")), Origin.REGISTERED)
