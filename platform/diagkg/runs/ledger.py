"""The hypothesis ledger (OntoAct): what the evidence says of every hypothesis.

Each hypothesis an assistant states becomes RDF in its trajectory with the
conditions that would support it — *expected observations* the platform
derives by simulating the hypothesised faults, so it works for assistants that
state no conditions (random-search, an LLM):

* the hypothesis's **worlds** are the fault modes of the catalogue
  (``fault-modes.rq``: what each mode applies to, its template and default
  value) applied to its suspected parts — one mode per part, every
  combination (at most :data:`MAX_WORLDS`); each world is a hypothetical
  scenario run by a service-agent session of its own (the same code as the
  real one, same seed), through the same actions as the real session, beside
  a healthy world (no fault);
* a **condition** is what one action reports in the hypothesis's worlds: the
  lights at the start, every action of the session whose report the
  hypothesis predicts differently from the healthy system (or that no world of
  the hypothesis predicts), and — open until taken — the tests of the
  suspected parts the session never took after the hypothesis was stated,
  where the hypothesis and the healthy system disagree;
* each observation marks each condition **supported** (a world still in
  agreement with everything before predicts it), **contradicted** (none does)
  or leaves it **open**; a hypothesis is **refuted** when every world is
  contradicted (never one the verifier judged correct: its worlds then missed
  the real fault, and it stays open), **confirmed** when a world agrees with everything so far and
  an observation that departs from the healthy system supports it, and
  **open** otherwise; the rounds where that happened are kept, so its status
  at any round can be read back;
* an **intervention** (an action type with ``dk:isIntervention``; the
  verification of a hypothesis, which repairs its parts, counts too) is
  **backed** when a hypothesis naming each part it mends had been stated and
  was confirmed at that time.

Assistants that keep a ranked list of candidate diagnoses
(:meth:`~diagkg.agents.registry.BaseAssistant.ranked_candidates`) have it
recorded per round (``dk:rankedCandidate``). The metrics over all of this are
SPARQL files: ``trajectory-spurious-interventions.rq``,
``trajectory-repair-precision.rq``, ``trajectory-candidate-coverage.rq``.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import pyoxigraph as ox

from ..env.actions import Action
from ..env.outcomes import Kind, Verdict
from ..env.scenarios import Fault, Scenario
from ..env.service import Checkpoint, Session
from ..env.worlds import Shadow, fault_modes, hypothetical, opening_key
from ..errors import SessionError, SimulationError
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from .rounds import Round
    from .trajectory import SessionRecord

MAX_WORLDS = 24          # fault worlds simulated per hypothesis (combinations of the parts' modes)
MAX_CANDIDATES = 10      # ranked candidates recorded per round
PROBE_CATEGORIES = ("observe", "test")
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
# what a report says, for comparing two of them (its round and its wording aside)
COMPARED = ("kind", "intention", "success", "cost", "verdict", "refusal", "executed", "data")


class ConditionStatus(enum.Enum):
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    OPEN = "open"


class HypothesisStatus(enum.Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    OPEN = "open"


CONDITION_IRIS = {ConditionStatus.SUPPORTED: DK.ConditionSupported,
                  ConditionStatus.CONTRADICTED: DK.ConditionContradicted, ConditionStatus.OPEN: DK.ConditionOpen}
HYPOTHESIS_IRIS = {HypothesisStatus.CONFIRMED: DK.HypothesisConfirmed, HypothesisStatus.REFUTED: DK.HypothesisRefuted,
                   HypothesisStatus.OPEN: DK.HypothesisOpen}


@dataclass(frozen=True)
class Condition:
    """An expected observation: what ``probe`` reports if the hypothesis is the truth."""

    probe: Action | None                  # None: the lights seen at the start
    expected: tuple[str, ...]             # the simulated reports' data (JSON), one per world that gives it
    status: ConditionStatus
    resolved_at: int | None               # the round that marked it (0: the start); None while open


@dataclass
class Entry:
    """A hypothesis in the ledger."""

    round: int
    suspects: frozenset[str]
    worlds: int
    conditions: list[Condition] = field(default_factory=list)
    confirmed_at: int | None = None
    refuted_at: int | None = None

    @property
    def status(self) -> HypothesisStatus:
        return self.status_at(10**9)

    def status_at(self, round_: int) -> HypothesisStatus:
        """What the observations up to round ``round_`` (included) say of it."""
        if self.refuted_at is not None and self.refuted_at <= round_:
            return HypothesisStatus.REFUTED
        if self.confirmed_at is not None and self.confirmed_at <= round_:
            return HypothesisStatus.CONFIRMED
        return HypothesisStatus.OPEN


@dataclass(frozen=True)
class Intervention:
    """A repair as it was executed, and the hypotheses that backed it (if any)."""

    round: int
    position: int                         # among the round's executed actions (0: a hypothesis's verification)
    action: str
    parts: frozenset[str]
    backed_by: tuple[int, ...]            # rounds of the confirmed hypotheses naming its parts

    @property
    def backed(self) -> bool:
        return bool(self.backed_by)


@dataclass
class Ledger:
    hypotheses: list[Entry]
    interventions: list[Intervention]

    def entry(self, round_: int) -> Entry:
        return next(e for e in self.hypotheses if e.round == round_)


# ---------------------------------------------------------------------------
# catalogue data (the what-if service's fault catalogue; the interventions per version of the ontology)
# ---------------------------------------------------------------------------
_INTERVENTIONS: Memo[frozenset[str]] = Memo("ledger interventions", 16)


def interventions(session: Session) -> frozenset[str]:
    """The ids of the actions that mend the system (``dk:isIntervention``)."""
    return _INTERVENTIONS.get_or(session.store.version_of(graphs.ONTOLOGY), lambda: frozenset(
        r["id"] for r in session.store.select("intervention-actions")))


# ---------------------------------------------------------------------------
# worlds
# ---------------------------------------------------------------------------
def part_faults(session: Session, part: str) -> list[tuple[Fault, ...]]:
    """The catalogue's fault modes that can make ``part`` faulty, one world each."""
    sk, ns = session.sk, session.ns
    out: list[tuple[Fault, ...]] = []
    comp = sk.components.get(part)
    for m in fault_modes(session.store).values():
        if not m.enumerable:
            continue                 # a short to some other node, a degradation of unknown size
        if m.kind == "component" and comp is not None and comp.type in m.types:
            out.append((m.fault(ns, part),))
        elif m.kind == "port" and comp is not None and comp.type in m.types:
            ports = sorted(comp.ports)
            if "other" not in m.parameters:
                out.extend((m.fault(ns, f"{part}.{p}"),) for p in ports)
            elif comp.type != "Cable" and len(ports) == 2:      # its own two ends swapped
                out.append((m.fault(ns, f"{part}.{ports[0]}", f"{part}.{ports[1]}"),))
        elif m.kind == "coupling":
            for cp in sk.couplings:
                if part == cp.id or part in {element for element, _ in cp.blocked_when}:
                    out.append((m.fault(ns, cp.id),))
    return out


def worlds_of(session: Session, suspects: Iterable[str]) -> list[tuple[Fault, ...]]:
    """Every combination of one fault per suspected part (at most :data:`MAX_WORLDS`)."""
    options = [part_faults(session, p) for p in sorted(suspects)]
    if not options or any(not o for o in options):
        return []
    return [tuple(itertools.chain.from_iterable(combo))
            for combo in itertools.islice(itertools.product(*options), MAX_WORLDS)]


def report_key(outcome: Mapping[str, Any], fixed: bool = False) -> str:
    """What a report says, comparable across sessions (no round number, no wording)."""
    return json.dumps({**{k: outcome.get(k) for k in COMPARED}, "fixed": fixed}, sort_keys=True, default=str)


# what worlds showed, kept across sessions (a campaign runs each scenario many times
# with the same actions): the lights at the start by world (system and ontology
# versions, configuration, faults and, for faults that act at random, seed), the
# report of each action after the same actions, and what a test would have shown
MEMO_LIMIT = 20_000          # entries per memo (each a few hundred bytes)
LEDGER_WORLDS = "ledger-worlds"     # the name of the state graph the ledger's worlds are played in (see _Worlds.shade)
_OPENINGS: Memo[str] = Memo("ledger openings", MEMO_LIMIT)
_REPORTS: Memo[str] = Memo("ledger reports", MEMO_LIMIT)
_PROBES: Memo[str] = Memo("ledger probes", MEMO_LIMIT)


@dataclass
class _Replay:
    visible: str
    keys: list[str]                                # one per action round of the real session
    points: dict[int, Checkpoint]                  # the world just before each hypothesis round (if simulated)
    opening: str = ""


class _Worlds:
    """The real session's actions played in hypothetical worlds, on one what-if shadow
    (:class:`~diagkg.env.worlds.Shadow`)."""

    def __init__(self, session: Session, steps: list[tuple[int, Action | None]], seed: int,
                 visible: str, reports: list[str]):
        self.session, self.steps, self.seed = session, steps, seed
        self.visible, self.reports = visible, reports      # what the real session showed
        self.shadow: Shadow | None = None
        self.replays: dict[tuple[Fault, ...], _Replay] = {}
        self._openings: dict[int, tuple[tuple[Fault, ...], str]] = {}     # id of a tuple of faults -> (it, its digest)
        self._healthy: tuple[_Replay, list[Any]] | None = None       # the healthy world, and how far it was played
        self.step_index = {n: k for k, (n, _) in enumerate(steps)}
        self.action_index = [k for k, (_, step) in enumerate(steps) if step is not None]
        catalogue = session.catalogue
        self.movers = frozenset(a for a in interventions(session)
                                if a in catalogue and catalogue[a].target_kind == "enclosure")

    def scenario(self, faults: tuple[Fault, ...]) -> Scenario:
        coupling = any(f.template == "fault-enable-coupling" for f in faults)
        return hypothetical(faults, iri=f"urn:diagkg:ledger:{abs(hash(faults))}", base=self.session.scenario,
                            permanent=self.movers if coupling else ())

    def _opening(self, faults: tuple[Fault, ...]) -> str:
        """What a world's reports depend on besides the actions (:func:`~diagkg.env.worlds.opening_key`
        of the real session's configuration with ``faults``), as one digest worked out once per tuple of
        faults: the memos below look it up for every probe of every world, and hashing and comparing the
        key itself (a world of a hypothesis that names a hundred parts holds a hundred faults) took most
        of a ledger's time."""
        known = self._openings.get(id(faults))
        if known is not None and known[0] is faults:
            return known[1]
        real = self.session
        key = opening_key(real.store, dataclasses.replace(real.scenario, faults=faults), self.seed)
        # sets in a fixed order: equal keys, equal texts
        text = repr(tuple(sorted(part) if isinstance(part, frozenset) else part for part in key))
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self._openings[id(faults)] = (faults, digest)       # the tuple is kept: its id is not reused
        return digest

    def replay(self, faults: tuple[Fault, ...], simulate: bool = False) -> _Replay:
        """The world of ``faults`` through the real session's actions, only until
        it first disagrees with the real session (a world that has disagreed
        supports nothing after). Reports remembered from earlier sessions (same
        world, same actions so far) are not simulated again, unless ``simulate``
        (the world's state at each hypothesis is wanted)."""
        known = self.replays.get(faults)
        if known is not None and (known.points or not simulate):
            return known
        opening = self._opening(faults)
        if not simulate:
            remembered = self._remembered(opening)
            if remembered is not None:
                result = self.replays[faults] = remembered
                return result
        scenario = self.scenario(faults)
        shadow = self.shade(scenario)
        keys: list[str] = []
        points: dict[int, Checkpoint] = {}
        visible = "?"
        prefix: tuple[str, ...] = ()
        try:
            obs = shadow.start(scenario, self.seed)
            visible = _OPENINGS.put(opening, obs["visible"])
            agrees = visible == self.visible
            for n, step in self.steps:
                if not agrees:
                    break
                if step is None:
                    points[n] = shadow.checkpoint()
                    continue
                if shadow.end is not None:
                    keys.append("(ended)")
                else:
                    out, *_ = shadow.step(step)
                    keys.append(report_key(out, shadow.end == "success_no_hypothesis"))
                prefix += (str(step),)
                _REPORTS.put((opening, prefix), keys[-1])
                agrees = keys[-1] == self.reports[len(keys) - 1]
        except (SessionError, SimulationError):
            pass
        keys += ["?"] * (len(self.reports) - len(keys))
        result = self.replays[faults] = _Replay(visible, keys, points, opening)
        return result

    def _remembered(self, opening: str) -> _Replay | None:
        """A world's reports as earlier sessions simulated them (None if any is missing)."""
        visible = _OPENINGS.get(opening)
        if visible is None:
            return None
        keys: list[str] = []
        prefix: tuple[str, ...] = ()
        agrees = visible == self.visible
        for _, step in self.steps:
            if not agrees:
                break
            if step is None:
                continue
            prefix += (str(step),)
            key = _REPORTS.get((opening, prefix))
            if key is None:
                return None
            keys.append(key)
            agrees = key == self.reports[len(keys) - 1]
        return _Replay(visible, keys + ["?"] * (len(self.reports) - len(keys)), {}, opening)

    def healthy(self, upto: int) -> _Replay:
        """The healthy world, played only as far as the ``upto``-th entry of the
        session's steps (it is compared only while some hypothesis's world agrees)."""
        state = self._healthy
        if state is None:
            healthy = self.scenario(())
            shadow = self.shade(healthy)
            try:
                visible = shadow.start(healthy, self.seed)["visible"]
            except (SessionError, SimulationError):
                visible = "?"
            state = self._healthy = (_Replay(visible, [], {}), [0, shadow.checkpoint()])
        replay, progress = state
        position, point = progress
        if position > upto or position >= len(self.steps):
            return replay
        assert self.shadow is not None
        self.shadow.rollback(point)
        try:
            for n, step in self.steps[position:upto + 1]:
                if step is None:
                    replay.points[n] = self.shadow.checkpoint()
                elif self.shadow.end is not None:
                    replay.keys.append("(ended)")
                else:
                    out, *_ = self.shadow.step(step)
                    replay.keys.append(report_key(out, self.shadow.end == "success_no_hypothesis"))
                position += 1
        except (SessionError, SimulationError):
            position = len(self.steps)
            replay.keys += ["?"] * (len(self.reports) - len(replay.keys))
        state[1][0], state[1][1] = position, self.shadow.checkpoint()
        return replay

    def healthy_key(self, i: int) -> str:
        """The healthy world's report for the ``i``-th action round."""
        prefix = tuple(str(step) for _, step in self.steps if step is not None)[:i + 1]
        memo = (self._opening(()), prefix)
        known = _REPORTS.get(memo)
        if known is not None:
            return known
        return _REPORTS.put(memo, self.healthy(self.action_index[i]).keys[i])

    def probe(self, faults: tuple[Fault, ...], round_: int, action: Action) -> str:
        """What ``action`` would report in the world of ``faults`` just before round ``round_``."""
        prefix = tuple(str(step) for n, step in self.steps if step is not None and n < round_)
        memo = (self._opening(faults), prefix, str(action))
        known = _PROBES.get(memo)
        if known is not None:
            return known
        if not faults:
            point = self.healthy(self.step_index[round_]).points.get(round_)
        else:
            point = self.replay(faults, simulate=True).points.get(round_)
        if point is None or self.shadow is None:
            return "?"
        out = self.shadow.trial(point, action)
        if out is None:
            return "?"
        return _PROBES.put(memo, report_key(out, self.shadow.end == "success_no_hypothesis"))

    def shade(self, scenario: Scenario) -> Shadow:
        """The what-if shadow these worlds are played on (made on first need), its state graph named alike
        in every session (:data:`LEDGER_WORLDS`): a world started before in this process (the same scenario
        another seed played) is written back rather than injected again."""
        if self.shadow is None:
            self.shadow = Shadow(scenario, self.session.source, session_id=LEDGER_WORLDS)
        return self.shadow


def _probes(session: Session, suspects: frozenset[str]) -> list[Action]:
    out = []
    for part in sorted(suspects):
        comp = session.sk.components.get(part)
        if comp is None:
            continue
        for aid, spec in sorted(session.catalogue.items()):
            if spec.category in PROBE_CATEGORIES and spec.target_count == 1 and spec.target_kind in ("component", "any") \
                    and (not spec.types or comp.type in spec.types) and not spec.parameter:
                out.append(Action(aid, (part,)))
    return out


def _data(key: str) -> str:
    return json.dumps(json.loads(key).get("data"), sort_keys=True) if key.startswith("{") else key


# ---------------------------------------------------------------------------
# the ledger of a session
# ---------------------------------------------------------------------------
def build(session: Session, rounds: Sequence[Round], visible: str, end: str, seed: int) -> Ledger:
    """The ledger of a finished session: ``rounds`` as the runner played them,
    ``visible`` the lights described at the start, ``end`` its end value."""
    steps: list[tuple[int, Action | None]] = []
    real: list[tuple[int, str, Action]] = []        # the action rounds: number, report, action
    last = rounds[-1].number if rounds else 0
    for r in rounds:
        if r.kind is Kind.ACTION and r.action is not None:
            steps.append((r.number, r.action))
            real.append((r.number, report_key(r, r.number == last and end == "success_no_hypothesis"), r.action))
        elif r.kind is Kind.HYPOTHESIS:
            steps.append((r.number, None))
    worlds = _Worlds(session, steps, seed, visible, [key for _, key, _ in real])
    try:
        entries = [_entry(session, worlds, r, real, visible)
                   for r in rounds if r.kind is Kind.HYPOTHESIS]
    finally:
        if worlds.shadow is not None:
            worlds.shadow.close()          # its working memory goes back to the pool
    return Ledger(entries, _interventions(session, rounds, entries))


def _entry(session: Session, worlds: _Worlds, r: Round, real: list[tuple[int, str, Action]],
           visible: str) -> Entry:
    h = r.number
    suspects = frozenset(r.suspects or ())
    faults = worlds_of(session, suspects)
    entry = Entry(h, suspects, len(faults))
    if not faults:
        return entry
    replays = [worlds.replay(f) for f in faults]
    alive = set(range(len(faults)))
    alive_at_h: set[int] | None = None          # the worlds still in agreement when it was stated
    # the lights at the start, then every action round, in order (the healthy
    # world is simulated only when some world is left to compare with it)
    observed: list[tuple[int, str, int, list[str], Action | None]] = [
        (0, visible, -1, [rp.visible for rp in replays], None)]
    observed += [(n, key, i, [rp.keys[i] for rp in replays], action) for i, (n, key, action) in enumerate(real)]
    for n, seen, i, predicted, action in observed:
        if alive_at_h is None and n >= h:
            alive_at_h = set(alive)
        if not alive:
            break
        normal = worlds.healthy_key(i) if i >= 0 else ""
        matching = {w for w in alive if predicted[w] == seen}
        informative = i >= 0 and any(predicted[w] != normal for w in alive)
        expected = tuple(sorted({_data(predicted[w]) if n else predicted[w] for w in alive}))
        if matching and (informative or n == 0):
            entry.conditions.append(Condition(action, expected, ConditionStatus.SUPPORTED, n))
            if n >= 1 and seen != normal and entry.confirmed_at is None:
                entry.confirmed_at = n
        elif not matching:
            entry.conditions.append(Condition(action, expected, ConditionStatus.CONTRADICTED, n))
            # (not a hypothesis the verifier judged correct: its worlds then missed the real fault — a crossed pair,
            # an end that floats — and it stays open; such hypotheses were recorded refuted)
            if r.verdict is not Verdict.CORRECT:
                entry.refuted_at = n
        alive = matching
    if alive_at_h is None:
        alive_at_h = set(alive)
    # the tests of the suspected parts not taken after the hypothesis: open conditions
    later = {str(a) for n, _, a in real if n > h}
    for probe in _probes(session, suspects):
        if str(probe) in later or not alive_at_h:
            continue
        normal = worlds.probe((), h, probe)
        forecast = {worlds.probe(faults[w], h, probe) for w in sorted(alive_at_h)}
        if any(p != normal and p != "?" for p in forecast):
            entry.conditions.append(Condition(probe, tuple(sorted(_data(p) for p in forecast)),
                                              ConditionStatus.OPEN, None))
    return entry


def _interventions(session: Session, rounds: Sequence[Round], entries: list[Entry]) -> list[Intervention]:
    mending = interventions(session)

    def backers(parts: frozenset[str], at: int) -> tuple[int, ...]:
        """The hypotheses stated by round ``at`` and confirmed before it that name each of ``parts``."""
        confirmed = [e for e in entries if e.round <= at and e.status_at(at - 1) is HypothesisStatus.CONFIRMED]
        if not parts or any(not any(p in e.suspects for e in confirmed) for p in parts):
            return ()
        return tuple(sorted({e.round for e in confirmed if e.suspects & parts}))

    out = []
    for r in rounds:
        n = r.number
        if r.kind is Kind.HYPOTHESIS:
            parts = frozenset(r.suspects or ())
            out.append(Intervention(n, 0, "verify_repair", parts, backers(parts, n)))
            continue
        if r.kind is not Kind.ACTION or not r.success:
            continue
        for k, (action, targets, _) in enumerate(r.executed, 1):
            if action in mending:
                parts = frozenset(t.split(".", 1)[0] for t in targets)
                out.append(Intervention(n, k, action, parts, backers(parts, n)))
    return out


# ---------------------------------------------------------------------------
# RDF
# ---------------------------------------------------------------------------
def to_triples(ledger: Ledger, record: SessionRecord, catalogue_iris: Mapping[str, str],
               candidates: Mapping[int, list[frozenset[str]]] | None = None) -> list[ox.Triple]:
    """The ledger (and the ranked candidates per round) as statements of the
    trajectory's graph, on the nodes :func:`~diagkg.runs.trajectory.to_quads` names."""
    sys_ns = graphs.namespace_of(record.system_iri) if record.system_iri else graphs.system_namespace(record.system_key)
    out: list[ox.Triple] = []

    def node(suffix: str) -> ox.NamedNode:
        return ox.NamedNode(f"{record.iri}#{suffix}")

    def add(s: ox.NamedNode, p: Any, o: ox.NamedNode | ox.Literal) -> None:
        out.append(ox.Triple(s, p if isinstance(p, ox.NamedNode) else ox.NamedNode(str(p)), o))

    def integer(value: int, datatype: str = "integer") -> ox.Literal:
        return ox.Literal(str(value), datatype=ox.NamedNode(XSD + datatype))

    for e in ledger.hypotheses:
        hyp = node(f"hypothesis-{e.round}")
        add(hyp, DK.hypothesisStatus, HYPOTHESIS_IRIS[e.status].node)
        add(hyp, DK.simulatedWorlds, integer(e.worlds))
        if e.confirmed_at is not None:
            add(hyp, DK.confirmedAtRound, integer(e.confirmed_at))
        if e.refuted_at is not None:
            add(hyp, DK.refutedAtRound, integer(e.refuted_at))
        for i, c in enumerate(e.conditions, 1):
            cond = node(f"hypothesis-{e.round}-condition-{i}")
            add(hyp, DK.hasCondition, cond)
            add(cond, RDF_TYPE, DK.ExpectedObservation.node)
            add(cond, DK.conditionStatus, CONDITION_IRIS[c.status].node)
            if c.status is not ConditionStatus.SUPPORTED:       # a supported one: what the round observed
                for expected in c.expected:
                    add(cond, DK.expectedResult, ox.Literal(expected))
            if c.resolved_at is not None:
                add(cond, DK.resolvedAtRound, integer(c.resolved_at))
            if c.probe is not None:
                if c.probe.action in catalogue_iris:
                    add(cond, DK.probeAction, ox.NamedNode(catalogue_iris[c.probe.action]))
                for t in c.probe.targets:
                    add(cond, DK.probeTarget, ox.NamedNode(sys_ns + t))
    for iv in ledger.interventions:
        subject = node(f"hypothesis-{iv.round}") if iv.position == 0 else node(f"round-{iv.round}-executed-{iv.position}")
        add(subject, DK.backed, ox.Literal(iv.backed))
        for h in iv.backed_by:
            add(subject, DK.backedBy, node(f"hypothesis-{h}"))
    for n, ranked in sorted((candidates or {}).items()):
        for rank, parts in enumerate(ranked[:MAX_CANDIDATES], 1):
            cand = node(f"round-{n}-candidate-{rank}")
            add(node(f"round-{n}"), DK.rankedCandidate, cand)
            add(cand, RDF_TYPE, DK.RankedCandidate.node)
            add(cand, DK.rank, integer(rank))
            for p in sorted(parts):
                add(cand, DK.candidatePart, ox.NamedNode(sys_ns + p))
    return out


__all__ = ["Condition", "ConditionStatus", "Entry", "HypothesisStatus", "Intervention", "Ledger", "build",
           "part_faults", "report_key", "to_triples", "worlds_of"]
