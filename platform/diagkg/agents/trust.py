"""Who is briefed with the answer, and who runs in diagkg's own process: configuration, never self-declaration.

Three settings, each a comma-separated list of assistant names (shell-style
patterns: ``*`` matches anything), read from the environment at each session:

``DIAGKG_PRIVILEGED_ASSISTANTS`` (default ``oracle``)
    the assistants briefed with the answer (``Briefing.scenario`` and
    ``Briefing.session``), provided they run in diagkg's process. An
    assistant's own ``privileged = True`` grants nothing.
``DIAGKG_INFORMED_ASSISTANTS`` (default ``optimal``)
    the assistants briefed with the prior (``Briefing.prior``: a read-only
    view of the system's stored optimal policy, ``optimum/{key}``, worked out
    over which scenarios there are — never the session's answer), provided
    they run in diagkg's process; they stay unprivileged (``dk:privileged``
    false).
``DIAGKG_TRUSTED_ASSISTANTS`` (default empty)
    plug-ins of other distributions allowed to run in diagkg's process (they
    are then briefed as diagkg's own assistants are, the knowledge view
    included), and ``exec:`` programs whose briefing carries the knowledge
    view as N-Triples.

Where each kind of assistant runs (:class:`Origin`):

* diagkg's own assistants (entry points of the diagkg distribution) and those
  registered at run time in this process run in process;
* a plug-in of another distribution runs in a process of its own, hosted by
  ``python -m diagkg.runs.exec_host MODULE:ATTR`` and speaking the JSON-lines
  protocol (docs/assistant-protocol.md), unless it is trusted; diagkg never
  imports an untrusted plug-in;
* ``exec:COMMAND`` is a program of its own, always.

Code in diagkg's process can reach anything in it (the call stack, the
garbage collector's objects); the process boundary is what keeps an untrusted
assistant from the answer, and the allow-list is what records who saw it.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Mapping

ENV_PRIVILEGED = "DIAGKG_PRIVILEGED_ASSISTANTS"
ENV_TRUSTED = "DIAGKG_TRUSTED_ASSISTANTS"
ENV_INFORMED = "DIAGKG_INFORMED_ASSISTANTS"
DEFAULT_PRIVILEGED = ("oracle",)
DEFAULT_INFORMED = ("optimal",)
EXEC_PREFIX = "exec:"      # --assistant exec:COMMAND: a program of its own


class Origin(StrEnum):
    """Where an assistant comes from (which decides where it runs)."""

    SHIPPED = "shipped"            # an entry point of diagkg itself
    REGISTERED = "registered"      # registered at run time in this process (registry.register)
    PLUGIN = "plug-in"             # an entry point of another distribution
    PROGRAM = "program"            # exec:COMMAND


def _names(text: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if text is None:
        return default
    return tuple(n.strip() for n in text.split(",") if n.strip())


@dataclass(frozen=True)
class Policy:
    """The allow-lists (see the module's documentation)."""

    privileged: tuple[str, ...] = DEFAULT_PRIVILEGED
    trusted: tuple[str, ...] = ()
    informed: tuple[str, ...] = DEFAULT_INFORMED

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Policy":
        env = os.environ if environ is None else environ
        return cls(_names(env.get(ENV_PRIVILEGED), DEFAULT_PRIVILEGED), _names(env.get(ENV_TRUSTED), ()),
                   _names(env.get(ENV_INFORMED), DEFAULT_INFORMED))

    @staticmethod
    def _matches(name: str, patterns: tuple[str, ...]) -> bool:
        return any(name == p or fnmatch.fnmatchcase(name, p) for p in patterns)

    def trusts(self, name: str) -> bool:
        """Whether ``name`` is trusted (a plug-in that may run in process, a program given the knowledge view)."""
        return self._matches(name, self.trusted)

    def in_process(self, name: str, origin: Origin) -> bool:
        """Whether an assistant of this name and origin runs in diagkg's process."""
        return origin in (Origin.SHIPPED, Origin.REGISTERED) or (origin is Origin.PLUGIN and self.trusts(name))

    def may_see_answer(self, name: str, origin: Origin) -> bool:
        """Whether the assistant is briefed with the answer: named in the allow-list, and in process
        (the answer never crosses a process boundary)."""
        return self.in_process(name, origin) and self._matches(name, self.privileged)

    def may_see_prior(self, name: str, origin: Origin) -> bool:
        """Whether the assistant is briefed with the prior (the stored optimal policy): named in the
        informed allow-list, and in process."""
        return self.in_process(name, origin) and self._matches(name, self.informed)
