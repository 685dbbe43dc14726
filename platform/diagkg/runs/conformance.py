"""The assistant conformance check: any assistant run through the edge cases of the session contract.

``check_assistant("neuro-symbolic").passed``; ``diagkg check-assistant NAME`` prints the report. The assistant (a name of the
registry, an installed plug-in, or ``exec:COMMAND``) is made as ``diagkg run``
makes it (:func:`diagkg.runs.hosting.create`: where it runs and whether it sees
the answer is the configuration's say, so the oracle is checked with its
privileged briefing) and set up afresh for each probe, on a torch written in
the check (:mod:`diagkg.runs.conformance_torch`) and on a shipped scenario (or
the one given). Each check is a :class:`Finding` (passed or not, and why);
a ``required`` one that fails makes the report fail, the others are warnings.

========================  ===========================================================
check                     what passes
========================  ===========================================================
``api-version``           the plug-in API version it states is one this diagkg speaks
``declares-api-version``  it states ``api_version`` (warning)
``declares-config-keys``  it declares ``config_keys`` (warning)
``create``                it is made with the configuration
``setup``                 ``setup(briefing)`` returns
``move-type``             every suggestion is an Action, a Hypothesis or None
``known-actions``         every action it names is in the catalogue
``known-targets``         every part, module or port it names is in the briefing
``suggest-time``          every suggestion within the time limit (:class:`Limits`)
``record``                ``record(outcome)`` takes every outcome of its moves (typed, or as its
                          plug-in API version told them: through the shim)
``ends-within-budget``    it gives up or solves within the budget (a warning: running out of rounds is a
                          legitimate end, the ``unhelpful`` baseline's)
``briefing-unchanged``    the briefing is as it was given
``close``                 ``close(end)`` returns
``refused-action``        it goes on after an outcome whose action was refused
``verdict-…``             it goes on after a hypothesis judged wrong, overbroad, partial
``unknown-keys``          it goes on when outcomes carry keys it does not know (a later diagkg's)
``empty-visible``         it suggests when nothing is visible from outside
========================  ===========================================================
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from ..agents import registry
from ..agents.trust import EXEC_PREFIX, Origin, Policy
from ..env import contract
from ..env.actions import Action, Hypothesis
from ..env.outcomes import Outcome
from ..env.scenarios import Scenario
from ..env.service import Session
from ..env.workspace import resolve_scenario
from ..errors import AssistantError
from ..kg.store import KnowledgeStore
from ..llm.records import CallLog
from . import conformance_torch as torch
from . import hosting
from .exec_boundary import known_ids
from .rounds import LaterOutcome
from .runner import briefing_for

DEFAULT_SCENARIO = "3CC.S.1"      # the shipped scenario checked besides the torch
SHIPPED_FILES = ("three_cubes.ttl", "001-3CC.S.1.ttl")      # its system and itself, in the shipped files
BRIEFING_FIELDS = ("system", "description", "symptoms", "visible", "lights", "parts", "labels", "catalogue", "budget",
                   "seed", "system_iri", "ports", "modules")
EXTRA_KEYS = {"x_later_field": {"nested": [1, 2.5, None], "flag": True}, "x_note": "a field of a later diagkg"}


@dataclass(frozen=True)
class Limits:
    """What the check allows an assistant."""

    suggest_seconds: float = 10.0     # each suggestion (a program's own reply limit also applies)


@dataclass(frozen=True)
class Finding:
    """One check: passed or not, why, and on which scenario."""

    check: str
    passed: bool
    reason: str
    required: bool = True
    scenario: str = ""

    def __str__(self) -> str:
        where = f" [{self.scenario}]" if self.scenario else ""
        state = "ok" if self.passed else ("FAIL" if self.required else "warning")
        return f"{state}: {self.check}{where}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "passed": self.passed, "required": self.required, "scenario": self.scenario,
                "reason": self.reason}


@dataclass
class Report:
    """Every finding on one assistant."""

    assistant: str
    api_version: int | None = None             # the version it states (None: none, or not read: another process)
    findings: list[Finding] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every required check passed."""
        return all(f.passed for f in self.findings if f.required)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.passed and f.required]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if not f.passed and not f.required]

    def of(self, check: str) -> list[Finding]:
        return [f for f in self.findings if f.check == check]

    def to_json(self) -> dict[str, Any]:
        return {"assistant": self.assistant, "passed": self.passed, "api_version": self.api_version,
                "current_api_version": registry.API_VERSION, "findings": [f.to_json() for f in self.findings]}


_SHARED: list[KnowledgeStore] = []


def fixture_store(shared: bool = True, with_torch: bool = True) -> KnowledgeStore:
    """An in-memory store holding the shipped system of :data:`DEFAULT_SCENARIO` with that scenario, and
    the check's torch: one for the process (sessions read their store, never write it), or a new one to
    load more into (``shared`` false; ``with_torch`` false leaves the torch out, so that a user's file
    never collides with the torch's scenario numbers). Another shipped scenario is found by loading them all."""
    from ..kg.loading import load_files, shipped_files

    if shared and _SHARED:
        return _SHARED[0]
    store = KnowledgeStore.memory()
    load_files(store, [f for f in shipped_files() if f.name in SHIPPED_FILES], validate=False)
    if with_torch or shared:
        torch.load_torch(store)
    if shared:
        _SHARED.append(store)
    return store


def _failure(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {exc}"


def move_problems(move: Any, brief: registry.Briefing) -> dict[str, str]:
    """What is wrong with a suggestion, by check (``move-type``, ``known-actions``, ``known-targets``)."""
    if move is None:
        return {}
    if not isinstance(move, (Action, Hypothesis)):
        return {"move-type": f"suggested {type(move).__name__} {move!r:.80}, not an Action, a Hypothesis or None"}
    known = known_ids(brief)
    named = move.components if isinstance(move, Hypothesis) else move.targets
    out = {}
    if isinstance(move, Action) and move.action not in brief.catalogue:
        out["known-actions"] = f"the action {move.action!r} is not in the catalogue"
    unknown = sorted(str(t) for t in named if t not in known)
    if unknown:
        out["known-targets"] = f"{', '.join(map(repr, unknown))} named, which the briefing does not name"
    return out


class _Probe:
    """One assistant made afresh, briefed on a fresh session of one scenario."""

    def __init__(self, make: Callable[[], hosting.Hosted], store: KnowledgeStore, scenario: Scenario, seed: int,
                 limits: Limits, visible: bool = True):
        self.limits, self.scenario = limits, scenario
        self.session = Session(scenario, store)
        obs, _ = self.session.reset(seed=seed)
        self.hosted = make()
        self.agent = self.hosted.agent
        self.brief = briefing_for(self.session, self.hosted.privileged, seed, self.hosted.informed)
        self.brief.visible = obs["visible"] if visible else ""
        self.brief.lights = dict(obs["lights"]) if visible else {}
        self.brief.llm = CallLog()
        self.before = {k: copy.deepcopy(getattr(self.brief, k)) for k in BRIEFING_FIELDS}
        self.slowest = 0.0
        self.problems: dict[str, str] = {}      # check -> the first problem seen

    def setup(self) -> str | None:
        try:
            self.agent.setup(self.brief)
        except Exception as exc:
            return _failure(exc)
        return None

    def suggest(self) -> Any:
        """The next suggestion (its problems noted); raises what the assistant raised."""
        t0 = time.perf_counter()
        move = self.agent.suggest()
        took = time.perf_counter() - t0
        self.slowest = max(self.slowest, took)
        if took > self.limits.suggest_seconds:
            self.problems.setdefault("suggest-time", f"a suggestion took {took:.1f} s (limit "
                                                     f"{self.limits.suggest_seconds:g} s)")
        for check, problem in move_problems(move, self.brief).items():
            self.problems.setdefault(check, problem)
        return move

    def play(self, move: Any) -> tuple[contract.Turn, Outcome]:
        turn = contract.play(self.session, move)
        return turn, turn.outcome.told()       # as the runner tells it

    def changed(self) -> list[str]:
        return [k for k in BRIEFING_FIELDS if getattr(self.brief, k) != self.before[k]]

    def close(self, end: str) -> str | None:
        try:
            closing = getattr(self.agent, "close", None)
            if closing is not None:
                closing(end)
        except Exception as exc:
            return _failure(exc)
        finally:
            self.session.close()
        return None


def _whole_session(probe: _Probe) -> list[Finding]:
    """Setup, then its own moves to the end; the findings of the whole session."""
    sid = probe.scenario.id

    def finding(check: str, passed: bool, reason: str, required: bool = True) -> Finding:
        return Finding(check, passed, reason, required, sid)

    out: list[Finding] = []
    problem = probe.setup()
    out.append(finding("setup", problem is None, problem or "setup(briefing) returned"))
    ended = None
    if problem is None:
        record_problem, told = None, 0
        while ended is None:
            try:
                move = probe.suggest()
            except Exception as exc:
                probe.problems.setdefault("move-type", f"suggest() {_failure(exc)}")
                break
            if move is not None and not isinstance(move, (Action, Hypothesis)):
                break
            turn, outcome = probe.play(move)
            if move is not None:        # as the runner: told every outcome of a move, the last one too
                try:
                    probe.agent.record(outcome)
                    told += 1
                except Exception as exc:
                    record_problem = f"record() of round {turn.round}'s outcome {_failure(exc)}"
                    break
            if turn.over or move is None:
                ended = turn.end
                break
        rounds = probe.session.round
        for check, ok in (("move-type", "every suggestion an Action, a Hypothesis or None"),
                          ("known-actions", "every action in the catalogue"),
                          ("known-targets", "every part named in the briefing"),
                          ("suggest-time", f"the slowest suggestion took {probe.slowest:.2f} s")):
            out.append(finding(check, check not in probe.problems, probe.problems.get(check, ok)))
        out.append(finding("record", record_problem is None, record_problem or f"took {told} outcome(s)"))
        good = ended is not None and ended != "timeout"
        why = (f"ended {ended} after {rounds} round(s)" if good else "the session broke off (see the other findings)"
               if ended is None else f"still going when the budget of {probe.session.budget} rounds ran out")
        out.append(finding("ends-within-budget", good, why, False))
    changed = probe.changed()
    out.append(finding("briefing-unchanged", not changed,
                       f"changed: {', '.join(changed)}" if changed else "the briefing is as it was given"))
    end = str(probe.session.end or "surrender")
    problem = probe.close(end)
    out.append(finding("close", problem is None, problem or f"close({end!r}) returned"))
    return out


def _goes_on(probe: _Probe, check: str, outcomes: Callable[[Any], list[Outcome]], what: str) -> Finding:
    """Set up, suggest, be told ``outcomes(first move)`` (real outcomes of the probe's session), suggest again."""
    sid = probe.scenario.id
    try:
        problem = probe.setup()
        if problem is not None:
            return Finding(check, False, f"setup {problem}", True, sid)
        move = probe.suggest()
        for outcome in outcomes(move):
            probe.agent.record(outcome)
            move = probe.suggest()
        bad = {k: v for k, v in probe.problems.items() if k != "suggest-time"}
        if bad:
            return Finding(check, False, f"then: {next(iter(bad.values()))}", True, sid)
        return Finding(check, True, f"{what}; its next suggestion: {type(move).__name__}", True, sid)
    except Exception as exc:
        return Finding(check, False, f"{what}: {_failure(exc)}", True, sid)
    finally:
        probe.close(str(probe.session.end or "surrender"))


def _refused(probe: _Probe) -> Callable[[Any], list[Outcome]]:
    def outcomes(move: Any) -> list[Outcome]:
        action = move.action if isinstance(move, Action) else sorted(probe.brief.catalogue)[0]
        _, outcome = probe.play(Action(action, ("no-such-part",)))
        return [outcome]
    return outcomes


def _hypothesis(probe: _Probe, parts: set[str], verdict: str) -> Callable[[Any], list[Outcome]]:
    def outcomes(move: Any) -> list[Outcome]:
        _, outcome = probe.play(Hypothesis(frozenset(parts), "the conformance check's hypothesis"))
        if outcome.get("verdict") != verdict:     # the torch no longer gives it: say so rather than pass
            raise AssertionError(f"the check's own hypothesis was judged {outcome.get('verdict')}, not {verdict}")
        return [outcome]
    return outcomes


def _with_extra_keys(probe: _Probe, told: list[int]) -> Callable[[Any], list[Outcome]]:
    def outcomes(move: Any) -> list[Outcome]:
        for _ in range(3):          # its own moves, each outcome told with keys it cannot know
            if move is None or not isinstance(move, (Action, Hypothesis)):
                break
            turn, outcome = probe.play(move)
            if turn.over:
                break
            probe.agent.record(later(outcome))
            told.append(turn.round)
            move = probe.suggest()
        return []
    return outcomes


def later(outcome: Outcome) -> LaterOutcome:
    """``outcome`` as a later diagkg might tell it: with the keys :data:`EXTRA_KEYS` (read through the mapping,
    and in its JSON)."""
    return LaterOutcome(**{f: getattr(outcome, f) for f in _OUTCOME_FIELDS}, later=copy.deepcopy(EXTRA_KEYS))


_OUTCOME_FIELDS = tuple(f.name for f in fields(Outcome))


def _declarations(name: str, report: Report) -> bool:
    """The ``api-version`` and declaration findings; False when the stated version is refused."""
    if name.startswith(EXEC_PREFIX) or (registry.origin(name) is Origin.PLUGIN
                                        and not Policy.from_env().trusts(name)):
        report.findings.append(Finding("api-version", True, "runs in a process of its own: it speaks the "
                                       f"assistant protocol, version {contract.PROTOCOL_VERSION}"))
        return True
    made = registry.factory(name)
    stated = registry.declared_api_version(made) if isinstance(made, type) else getattr(made, "api_version", None)
    report.api_version = stated
    version = registry.FIRST_API_VERSION if stated is None else stated
    ok = isinstance(version, int) and registry.FIRST_API_VERSION <= version <= registry.API_VERSION
    report.findings.append(Finding(
        "api-version", ok, f"written for plug-in API version {version}" + (
            f" (through the shim for version {version})" if ok and version < registry.API_VERSION else "")
        if ok else f"states plug-in API version {version!r}; this diagkg speaks {registry.FIRST_API_VERSION} to "
                   f"{registry.API_VERSION}"))
    report.findings.append(Finding(
        "declares-api-version", stated is not None, f"states api_version = {stated}" if stated is not None else
        f"states no api_version: taken as version {registry.FIRST_API_VERSION} (set api_version = "
        f"{registry.API_VERSION} once it takes the current outcomes)", required=False))
    keys = getattr(made, "config_keys", None)
    report.findings.append(Finding(
        "declares-config-keys", keys is not None, f"takes {', '.join(sorted(keys)) or 'no key'}" if keys is not None
        else "declares no config_keys: any configuration key is taken, a misspelt one silently", required=False))
    return ok


def check_assistant(name: str, config: Mapping[str, Any] | None = None, *, scenario: str | int | None = None,
                    store: KnowledgeStore | None = None, seed: int = 0, limits: Limits | None = None,
                    notify: Callable[[str], None] | None = None) -> Report:
    """Run the assistant ``name`` through the contract's edge cases (see the module's documentation).

    ``scenario`` is checked besides the torch (default :data:`DEFAULT_SCENARIO`, from the check's own
    store; from ``store`` when one is given). Raises :class:`~diagkg.errors.UnknownTermError` for an
    unknown name, :class:`~diagkg.errors.InputError` for a configuration it does not take.
    """
    limits = limits or Limits()
    hosting.check(name)
    report = Report(name)
    if not _declarations(name, report):
        return report
    config = dict(config or {})

    def make() -> hosting.Hosted:
        return hosting.create(name, config)

    try:
        make().agent.close("surrender")     # a configuration it does not take is the caller's error: raised
    except AssistantError as exc:
        report.findings.append(Finding("create", False, _failure(exc)))
        return report
    report.findings.append(Finding("create", True, "made with " + (f"configuration {config}" if config else
                                                                    "no configuration")))
    own = fixture_store()
    other = store if store is not None else own
    chosen = resolve_scenario(other, DEFAULT_SCENARIO if scenario is None else scenario, notify)
    for sid in torch.WHOLE_SESSIONS:
        report.findings += _whole_session(_Probe(make, own, resolve_scenario(own, sid), seed, limits))
    report.findings += _whole_session(_Probe(make, other, chosen, seed, limits))
    t1, t3 = resolve_scenario(own, torch.WHOLE_SESSIONS[0]), resolve_scenario(own, torch.TWO_FAULTS)
    probe = _Probe(make, own, t1, seed, limits)
    report.findings.append(_goes_on(probe, "refused-action", _refused(probe), "told its action was refused"))
    for verdict, parts in (("wrong", {"bulb"}), ("overbroad", {"bat", "bulb"}), ("partial", {"lead"})):
        probe = _Probe(make, own, t3, seed, limits)
        report.findings.append(_goes_on(probe, f"verdict-{verdict}", _hypothesis(probe, parts, verdict),
                                        f"told of a hypothesis judged {verdict}"))
    probe, told = _Probe(make, own, t3, seed, limits), list[int]()
    found = _goes_on(probe, "unknown-keys", _with_extra_keys(probe, told),
                     f"told outcomes with the unknown keys {', '.join(EXTRA_KEYS)}")
    if found.passed and not told:      # its first move ended even the two-fault torch: nothing was told
        found = Finding("unknown-keys", False, "not tried: its first move ended the session", False, t3.id)
    report.findings.append(found)
    probe = _Probe(make, own, t1, seed, limits, visible=False)
    report.findings.append(_goes_on(probe, "empty-visible", lambda move: [], "briefed with no visible text"))
    return report
