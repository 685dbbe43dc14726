"""Diagnostic assistants: one interface, and a registry of them by name.

An assistant is set up with what a technician would be told (the system's
description and parts, the reported symptoms, the visible lights, the action
catalogue, the budget, and a read-only view of the system's knowledge graph)
and then, round after round, suggests an :class:`~diagkg.env.service.Action`,
a :class:`~diagkg.env.service.Hypothesis`, or ``None`` to give up; it is
told every outcome.

Assistants are found through the ``diagkg.assistants`` entry-point group, so
a separate package adds one without editing diagkg::

    [project.entry-points."diagkg.assistants"]
    my-assistant = "my_package.module:MyAssistant"

The registry never imports an assistant before it is asked for. diagkg's own
(``oracle``, ``random-search``, ``fixed-random``, ``unhelpful``, ``human``,
``neuro-symbolic``, ``model-based``, ``llm``, ``optimal``) are declared the same way in its ``pyproject.toml``.
:func:`register` adds one at run time (tests, notebooks).

Where an assistant runs and whether it sees the answer is configuration, never
the assistant's own say (:mod:`diagkg.agents.trust`): a plug-in of another
distribution runs in a process of its own unless it is trusted, and only the
assistants of the allow-list (by default the oracle) are briefed with the answer.

The plug-in API carries a version, :data:`API_VERSION`. A plug-in states the
version it was written for as the class attribute ``api_version``; one that
states none was written for version 1. :func:`adapt` wraps a plug-in written
for an older version in a shim (:class:`Api2Shim`, :class:`Api1Shim`) so that
the runner always talks the current contract. A
plug-in stating a version newer than this diagkg speaks is refused
(:class:`~diagkg.errors.AssistantError` naming both versions; exit 2 on the
command line). ``diagkg check-assistant NAME`` runs any assistant through the
contract's edge cases (:mod:`diagkg.runs.conformance`).

=======  ====================================================================
version  ``record(outcome)`` receives
=======  ====================================================================
1        the outcome's fields of the first plug-in API: ``round``, ``kind``,
         ``intention``, ``success``, ``message``, ``cost``, ``verdict``
         (``correct``, ``partial`` or ``wrong`` only), ``executed``, ``data``
2        the outcome as :func:`diagkg.env.contract.outcome_json` gives it:
         also ``refusal`` (why an action was not carried out), ``healthy`` (empty),
         the verdicts ``overbroad`` and ``empty``, and any field added later
3        the typed :class:`~diagkg.env.outcomes.Outcome` (``outcome.verdict``
         is a :class:`~diagkg.env.outcomes.Verdict`); it also reads as the
         mapping of version 2 (``outcome["verdict"]``, the string)
=======  ====================================================================

:meth:`BaseAssistant.applied_config` is the configuration as applied (defaults
included, :data:`SECRET_KEYS` left out): what the trajectory records, and what
a replay runs with.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

from ..env.actions import Action, ActionType, Hypothesis
from ..env.contract import outcome_json
from ..env.outcomes import Outcome
from ..errors import AssistantError, InputError, UnknownTermError, nearest
from .trust import EXEC_PREFIX, Origin, Policy

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Scenario
    from ..env.service import Session
    from ..env.workspace import AnswerCache, KnowledgeView
    from ..llm.records import CallLog

GROUP = "diagkg.assistants"

# the plug-in API: what record() receives (see the module's documentation); a plug-in that states no
# api_version was written for version 1 and runs through Api1Shim, one stating 2 through Api2Shim
API_VERSION = 3
FIRST_API_VERSION = 1
API1_FIELDS = ("round", "kind", "intention", "success", "message", "cost", "verdict", "executed", "data")
# the verdicts API 1 knew said what repairing the named parts did; overbroad and empty repair nothing
API1_VERDICTS = {"correct": "correct", "partial": "partial", "wrong": "wrong", "overbroad": "wrong", "empty": "wrong"}
SECRET_KEYS = frozenset({"api_key"})      # configuration never recorded in a trajectory


@dataclass
class Briefing:
    """What an assistant is told at the start of a session."""

    system: str                         # system key
    description: str                    # the system's description (dcterms:description)
    symptoms: str                       # the reported symptoms
    visible: str                        # the lights visible from outside, in words (for people and prompts)
    parts: dict[str, str]               # part id -> kind/type ("Bulb", "Cable", "enclosure"…)
    labels: dict[str, str]              # part id -> human label
    catalogue: dict[str, ActionType]
    budget: int
    seed: int
    store: KnowledgeView | None = None  # a read-only view: ontology, system, inferences (no answer)
    cache: AnswerCache | None = None    # where answers worth keeping go (LLM replies)
    scenario: Scenario | None = None    # only for privileged assistants (the allow-list of diagkg.agents.trust)
    session: Session | None = None      # only for privileged assistants
    system_iri: str = ""                # the system's IRI (its parts are named in its namespace)
    llm: CallLog | None = None          # the session's LLM calls, and a replay's answers
    ports: dict[str, tuple[str, ...]] = field(default_factory=dict)   # component id -> its port names
    modules: tuple[str, ...] = ()       # the system's modules (targets of some actions)
    lights: dict[str, str] = field(default_factory=dict)   # the lights visible from outside: lamp -> on/off/flickering
    # the reported symptoms as data (the scenario's dk:statedSymptom, what `symptoms` says in words): lamp ->
    # "Lit", "Dark" or "Flickering"; a lamp reported flickering may be seen either way at the start
    stated: dict[str, str] = field(default_factory=dict)
    # only for informed assistants (the allow-list of diagkg.agents.trust): a read-only view of the system's
    # stored optimal policy (graph optimum/{key}), worked out over which scenarios there are, not the answer
    prior: KnowledgeView | None = None

    @property
    def view(self) -> KnowledgeView:
        """:attr:`store`, which every session's briefing carries (one made by hand may leave it out)."""
        if self.store is None:
            raise AssistantError("this briefing carries no view of the knowledge graph (store)")
        return self.store


class Assistant(Protocol):
    name: str

    def setup(self, briefing: Briefing) -> None: ...

    def suggest(self) -> Action | Hypothesis | None: ...

    def record(self, outcome: Outcome) -> None: ...


def check_config_keys(name: str, config: Mapping[str, Any], known: frozenset[str] | None) -> None:
    """Refuse (:class:`~diagkg.errors.InputError`) a configuration key of ``config`` that assistant ``name`` does not
    declare among ``known`` (None: it declares none, and takes any key), saying the nearest it takes."""
    unknown = sorted(set(config) - known) if known is not None else []
    if unknown:
        raise InputError(f"{name} takes no configuration key {keys_with_nearest(unknown, known or ())}"
                         f"; it takes {', '.join(sorted(known or ())) or 'none'}")


class BaseAssistant:
    """Remembers the briefing and the outcomes; subclasses implement :meth:`suggest`."""

    name = "base"
    # whether it needs the answer (the oracle). Not a grant: the runner briefs an assistant with the answer
    # only when the configuration's allow-list names it (diagkg.agents.trust), whatever this says
    privileged = False
    # the keys its configuration may hold; None: not declared (a plug-in written before it could say),
    # then any key is taken. A key outside them is refused, naming the nearest ones (exit 2 on the CLI)
    config_keys: frozenset[str] | None = None
    # the plug-in API version it was written for (API_VERSION). A subclass outside diagkg that does not
    # state it (in its own class or a base of its own) was written for version 1 (declared_api_version)
    api_version: int = API_VERSION

    def __init__(self, **config: Any):
        check_config_keys(self.name, config, type(self).config_keys)
        self.config = dict(config)
        self.briefing: Briefing | None = None
        self.outcomes: list[dict[str, Any]] = []     # what it was told, as plain data (outcome_json)

    def setup(self, briefing: Briefing) -> None:
        self.briefing = briefing
        self.outcomes = []

    def record(self, outcome: Outcome) -> None:
        """Told a round's outcome (typed; it also reads as a mapping): kept in :attr:`outcomes` as plain data."""
        self.outcomes.append(plain_outcome(outcome))

    def suggest(self) -> Action | Hypothesis | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def applied_config(self) -> dict[str, Any]:
        """The configuration as applied, what the trajectory records and a replay runs with: by default the
        configuration it was given; an assistant whose keys have defaults gives them too. Never a secret
        (:data:`SECRET_KEYS`)."""
        return {k: v for k, v in (getattr(self, "config", {}) or {}).items() if k not in SECRET_KEYS}

    def ranked_candidates(self) -> list[frozenset[str]]:
        """The candidate diagnoses (sets of parts) it holds now, most likely
        first; empty for an assistant that keeps no such list. The runner
        records the list at each decision (the hypothesis ledger's candidate
        coverage at k)."""
        return []

    def close(self, end: str) -> None:
        """The session is over (``end`` is its end value); called once by the runner. An assistant
        that holds resources (a process of its own) lets them go here."""

    @classmethod
    def unready(cls, store: Any, systems: Mapping[str, str]) -> list[str]:
        """What keeps it from playing on these systems of ``store`` (key -> system IRI), one sentence each, said
        before a campaign runs a session rather than in every session's failed first round: none by default
        (the optimal assistant needs a current stored policy of each)."""
        return []


Factory = Callable[..., BaseAssistant]
_REGISTERED: dict[str, Factory] = {}


_FOUND: dict[str, EntryPoint] | None = None


def _entry_points(fresh: bool = False) -> dict[str, EntryPoint]:
    """The installed assistants (read once per process: reading every
    distribution's metadata costs milliseconds; ``fresh`` reads again)."""
    global _FOUND
    if _FOUND is None or fresh:
        found: dict[str, EntryPoint] = {}
        for ep in entry_points(group=GROUP):
            # diagkg's own assistants keep their names: a plug-in cannot stand in for the oracle
            if ep.name not in found or (is_shipped(ep) and not is_shipped(found[ep.name])):
                found[ep.name] = ep
        _FOUND = found
    return _FOUND


_SHIPPED: dict[int, tuple[EntryPoint, bool]] = {}     # id of an entry point -> it, and whether it is diagkg's own


def is_shipped(ep: EntryPoint) -> bool:
    """Whether an entry point is one of diagkg's own (declared by the diagkg distribution, in diagkg).
    Remembered per entry point: its distribution's name is read from its metadata file at every ask
    (0.7 ms, twice a session)."""
    known = _SHIPPED.get(id(ep))
    if known is not None and known[0] is ep:
        return known[1]
    dist = getattr(ep, "dist", None)
    name = (getattr(dist, "name", None) or "").lower().replace("_", "-")
    shipped = name == "diagkg" and ep.value.startswith("diagkg.")
    if len(_SHIPPED) > 1024:
        _SHIPPED.clear()
    _SHIPPED[id(ep)] = (ep, shipped)
    return shipped


def shipped_name(name: str) -> bool:
    """Whether ``name`` is one of diagkg's own assistants' (the entry points read once a process: no new scan)."""
    found = _entry_points().get(name)
    return found is not None and is_shipped(found)


def register(name: str, factory: Factory) -> None:
    """Make an assistant available by name at run time (entry points are the
    lasting way: see the module's documentation). diagkg's own names are refused: a class registered as
    ``oracle`` was briefed with the answer, and its sessions read as the oracle's."""
    if shipped_name(name):
        raise InputError(f"{name!r} is one of diagkg's own assistants: register yours under another name")
    _REGISTERED[name] = factory
    declared_keys.cache_clear()


def registered(names: Iterable[str]) -> dict[str, Factory]:
    """The factories of those of ``names`` registered at run time in this process (:func:`register`)."""
    return {n: _REGISTERED[n] for n in names if n in _REGISTERED}


def rescan() -> None:
    """Read the installed entry points again (a plug-in installed while this process runs)."""
    declared_keys.cache_clear()
    _entry_points(fresh=True)


def is_registered(name: str) -> bool:
    """Whether ``name`` was registered at run time in this process (:func:`register`)."""
    return name in _REGISTERED


def entry_point(name: str) -> EntryPoint:
    """The installed entry point of assistant ``name``, not loaded (raises
    :class:`~diagkg.errors.UnknownTermError` with the closest names when there is none)."""
    found = _entry_points()
    if name not in found:
        found = _entry_points(fresh=True)     # installed since the first look?
    if name not in found:
        known = names()
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(known)}"
        raise UnknownTermError(f"no assistant named {name!r}{hint}")
    return found[name]


def origin(name: str) -> Origin:
    """Where the assistant ``name`` comes from (an ``exec:`` program, one registered at run time,
    diagkg's own, or a plug-in of another distribution); nothing is imported."""
    if name.startswith(EXEC_PREFIX):
        return Origin.PROGRAM
    if name in _REGISTERED:
        return Origin.REGISTERED
    return Origin.SHIPPED if is_shipped(entry_point(name)) else Origin.PLUGIN


def names() -> list[str]:
    """Every assistant name: the entry points' and those registered at run time."""
    return sorted(set(_entry_points()) | set(_REGISTERED))


def factory(name: str) -> Factory:
    """The class (or factory) of the assistant ``name``, imported only now. A plug-in of another
    distribution is imported only when it is trusted (:mod:`diagkg.agents.trust`); an untrusted one
    runs in a process of its own (:func:`diagkg.runs.hosting.create`)."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    ep = entry_point(name)
    if not is_shipped(ep) and not Policy.from_env().trusts(name):
        raise AssistantError(f"the assistant {name!r} ({ep.value}) is a plug-in that is not trusted: it runs in a "
                             f"process of its own (diagkg.runs.hosting.create), or in this one once "
                             f"DIAGKG_TRUSTED_ASSISTANTS names it")
    try:
        loaded = ep.load()
    except Exception as exc:   # a broken plug-in: say which, not a traceback
        raise AssistantError(f"the assistant {name!r} ({ep.value}) cannot be loaded: {exc}") from exc
    if not callable(loaded):
        raise AssistantError(f"the assistant {name!r} ({ep.value}) is not a class or factory")
    return loaded  # type: ignore[no-any-return]


def keys_with_nearest(unknown: Iterable[str], known: Iterable[str]) -> str:
    """Unknown configuration keys as a message says them, each with the nearest known key
    (``'smaple' (did you mean 'sample'?)``)."""
    pool = sorted(known)
    said = []
    for key in unknown:
        near = nearest(key, pool)
        said.append(repr(key) + (f" (did you mean {near!r}?)" if near else ""))
    return ", ".join(said)


@functools.lru_cache(maxsize=256)
def declared_keys(name: str) -> frozenset[str] | None:
    """The configuration keys the assistant ``name`` declares (``config_keys``), read from its class
    without making one; None when it declares none, or when that cannot be known in this process (a
    program, ``exec:…``, or a plug-in that is not trusted: it runs in a process of its own)."""
    try:
        made_by = factory(name)
    except (AssistantError, UnknownTermError):
        return None
    keys = getattr(made_by, "config_keys", None)
    return frozenset(keys) if isinstance(keys, (set, frozenset)) else None


def create(name: str, **config: Any) -> BaseAssistant:
    """An assistant by name, with its configuration, speaking the current API (:func:`adapt`)."""
    return adapt(factory(name)(**config))


def declared_api_version(agent: Any) -> int | None:
    """The plug-in API version ``agent`` (an assistant or its class) states, or None when it states none:
    ``api_version`` set in its class or a base of its own, not inherited from :class:`BaseAssistant`.
    diagkg's own assistants follow the current API."""
    cls = agent if isinstance(agent, type) else type(agent)
    own = {} if isinstance(agent, type) else getattr(agent, "__dict__", {})
    if "api_version" in own:            # set on the object itself
        return own["api_version"]  # type: ignore[no-any-return]
    for klass in cls.__mro__:
        if klass is BaseAssistant:
            break
        if "api_version" in vars(klass):
            return vars(klass)["api_version"]  # type: ignore[no-any-return]
    if cls.__module__.split(".")[0] == "diagkg":
        return API_VERSION
    return None


def api_version_of(agent: Any) -> int:
    """The plug-in API version ``agent`` was written for (:data:`FIRST_API_VERSION` when it states none;
    the wrapped plug-in's for a shim)."""
    if isinstance(agent, ApiShim):
        return agent.wraps_version
    version = declared_api_version(agent)
    return FIRST_API_VERSION if version is None else version


def adapt(agent: Any) -> BaseAssistant:
    """``agent`` speaking the current API: as it is when written for :data:`API_VERSION`, wrapped in
    :class:`Api2Shim` or :class:`Api1Shim` when written for version 2 or 1; a version this diagkg does not
    know is refused."""
    if isinstance(agent, ApiShim):
        return agent
    version = api_version_of(agent)
    check_api_version(getattr(agent, "name", type(agent).__name__), version)
    if version == FIRST_API_VERSION:
        return Api1Shim(agent)
    if version == 2:
        return Api2Shim(agent)
    return agent  # type: ignore[no-any-return]


def check_api_version(name: str, version: Any) -> None:
    """Refuse (:class:`~diagkg.errors.AssistantError`) a plug-in API version this diagkg does not speak: not a
    whole number from :data:`FIRST_API_VERSION`, or newer than :data:`API_VERSION`."""
    if isinstance(version, bool) or not isinstance(version, int) or version < FIRST_API_VERSION:
        raise AssistantError(f"the assistant {name!r} states api_version {version!r}; diagkg speaks plug-in API "
                             f"versions {FIRST_API_VERSION} to {API_VERSION}")
    if version > API_VERSION:
        raise AssistantError(f"the assistant {name!r} was written for plug-in API version {version}, newer than "
                             f"this diagkg's version {API_VERSION}: upgrade diagkg, or use a release of the "
                             f"plug-in written for version {API_VERSION}")


def plain_outcome(outcome: Outcome | Mapping[str, Any]) -> dict[str, Any]:
    """An outcome as plain JSON data (:func:`~diagkg.env.contract.outcome_json`); a mapping (what a caller
    of the version 2 API passed) as a new dict."""
    return outcome_json(outcome) if isinstance(outcome, Outcome) else dict(outcome)


def api1_outcome(outcome: Mapping[str, Any]) -> dict[str, Any]:
    """An outcome as plug-in API version 1 told it: its first fields only, the later verdicts as the one
    of version 1 that says the same of the system (nothing was repaired: ``wrong``). A refusal is told
    by ``success`` false and the message, as then."""
    out = {k: outcome[k] for k in API1_FIELDS if k in outcome}
    verdict = out.get("verdict")
    if verdict is not None:
        out["verdict"] = API1_VERDICTS.get(str(verdict), "wrong")
    data = out.get("data")
    if isinstance(data, dict) and data.get("verdict") in API1_VERDICTS:
        out["data"] = dict(data, verdict=API1_VERDICTS[data["verdict"]])
    return out


class ApiShim(BaseAssistant):
    """A plug-in written for an older API version behind the current contract: every call passes through,
    and :meth:`record` gives it the outcome as its version told it (:meth:`told`). Its other attributes
    (``instruction``, ``briefing``, ``outcomes``…) are read from the plug-in."""

    api_version = API_VERSION
    wraps_version = API_VERSION         # the version of the plug-in it wraps

    def __init__(self, inner: Any):     # no BaseAssistant.__init__: the plug-in holds its configuration
        self.inner = inner
        self.name = str(getattr(inner, "name", type(inner).__name__))
        self.config = dict(getattr(inner, "config", {}) or {})
        self.privileged = bool(getattr(inner, "privileged", False))
        self.config_keys = getattr(inner, "config_keys", None)

    def __getattr__(self, attr: str) -> Any:
        if attr == "inner":             # not set yet (copying, unpickling)
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def told(self, outcome: Outcome) -> Any:  # pragma: no cover - each shim says
        raise NotImplementedError

    def setup(self, briefing: Briefing) -> None:
        self.inner.setup(briefing)

    def suggest(self) -> Action | Hypothesis | None:
        return self.inner.suggest()  # type: ignore[no-any-return]

    def record(self, outcome: Outcome) -> None:
        self.inner.record(self.told(outcome))

    def applied_config(self) -> dict[str, Any]:
        applied = getattr(self.inner, "applied_config", None)
        config = applied() if callable(applied) else self.config
        return {k: v for k, v in dict(config).items() if k not in SECRET_KEYS}

    def ranked_candidates(self) -> list[frozenset[str]]:
        ranked = getattr(self.inner, "ranked_candidates", None)
        return list(ranked()) if ranked is not None else []

    def close(self, end: str) -> None:
        closing = getattr(self.inner, "close", None)
        if closing is not None:
            closing(end)


class Api2Shim(ApiShim):
    """A plug-in written for API version 2: :meth:`record` gives it the outcome as plain JSON data
    (:func:`diagkg.env.contract.outcome_json`), a new dict each time."""

    wraps_version = 2

    def told(self, outcome: Outcome) -> Any:
        return plain_outcome(outcome)


class Api1Shim(Api2Shim):
    """A plug-in written for API version 1: :meth:`record` gives it the outcome as version 1 told it
    (:func:`api1_outcome` of what version 2 is told)."""

    wraps_version = FIRST_API_VERSION

    def told(self, outcome: Outcome) -> Any:
        return api1_outcome(super().told(outcome))
