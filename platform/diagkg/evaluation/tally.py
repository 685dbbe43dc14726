"""Slot tallies: the counts and sums the metrics need, per assistant × scenario
of a campaign, each in a small graph of its own: ``tally/{key}``, the key ``{id}/{assistant}/{n}`` (``n`` the
scenario number) percent-encoded as one segment (``/`` as ``%2F``: :func:`diagkg.kg.graphs.named`).

A tally is a pure function of the slot's trajectories: the campaign writer
rewrites a slot's tally graph in the *same* transaction as each trajectory it
stores (so a campaign killed at any moment never leaves the two disagreeing),
and writes every tally afresh from the trajectories (``queries/tally-source.rq``,
one query) whenever a campaign starts or resumes; ``diagkg report --rebuild``
does the same by hand. The metric queries (``queries/tally-*.rq``) then read a
few hundred nodes instead of every trajectory.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pyoxigraph as ox

from ..errors import InputError
from ..kg import graphs
from ..kg.vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from .campaign import Campaign

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
SUCCESS_ENDS = frozenset({"success", "success_no_hypothesis"})


@dataclass(frozen=True)
class Entry:
    """One session of a slot, as the tally keeps it."""

    seed: int
    end: str
    cost: float
    rounds: int
    actions: int
    hypotheses: int
    correct: int
    healthy: int
    false_removals: int = 0      # healthy parts replaced or named (dk:falseRemovals; 0 before it was recorded)
    isolate_rounds: int | None = None      # a diagnosed session's dk:roundsToIsolate
    isolate_minutes: float | None = None   # and dk:minutesToIsolate
    # each round's decision time (dk:wallTimeSeconds), in order; None in a tally written before they were
    # kept, which the figures measured against the optimum then read from the trajectories instead
    decisions: tuple[float, ...] | None = None
    money: float = 0.0        # spent on language models, with the failed sessions it replaced (dk:priorMoneyCost)
    trajectory: str | None = field(default=None, compare=False)      # its graph's IRI (not packed)

    @property
    def truncated(self) -> bool:
        return self.end == "llm_truncation"

    @property
    def ok(self) -> bool:
        return self.end in SUCCESS_ENDS

    @property
    def diagnosed(self) -> bool:
        """Ended in success with a correct hypothesis (not merely repaired)."""
        return self.end == "success"

    @property
    def figures(self) -> bool:
        """Whether the entry holds what the figures measured against the optimum need (decision times)."""
        return self.decisions is not None

    def pack(self) -> str:
        """One entry of ``dk:tallySessions`` (13 space-separated fields): nine numbers and words, then (when kept)
        the rounds and minutes to isolate (``-`` for none), the decision times (``,``-separated; ``-`` for a
        session of no round) and the money."""
        head = (f"{self.seed} {self.end} {self.cost!r} {self.rounds} {self.actions} {self.hypotheses} "
                f"{self.correct} {self.healthy} {self.false_removals}")
        if self.decisions is None:
            return head
        rounds = "-" if self.isolate_rounds is None else str(self.isolate_rounds)
        minutes = "-" if self.isolate_minutes is None else repr(float(self.isolate_minutes))
        times = ",".join(repr(float(t)) for t in self.decisions) or "-"
        return f"{head} {rounds} {minutes} {times} {float(self.money)!r}"

    @classmethod
    def unpack(cls, text: str) -> "Entry":
        fields = text.split(" ")
        seed, end, cost, rounds, actions, hyps, correct, healthy = fields[:8]
        removals = int(fields[8]) if len(fields) > 8 else 0     # tallies written before false removals
        if len(fields) < 13:                                     # tallies written before the figures' fields
            return cls(int(seed), end, float(cost), int(rounds), int(actions), int(hyps), int(correct), int(healthy),
                       removals)
        times = fields[11]
        return cls(int(seed), end, float(cost), int(rounds), int(actions), int(hyps), int(correct), int(healthy),
                   removals, None if fields[9] == "-" else int(fields[9]),
                   None if fields[10] == "-" else float(fields[10]),
                   () if times == "-" else tuple(map(float, times.split(","))), float(fields[12]))


def unpack_all(text: str) -> list[Entry]:
    return [Entry.unpack(part) for part in text.split(";") if part]


@dataclass
class Tallies:
    """Every slot's sessions of one campaign (by seed), and the graphs that hold them."""

    campaign: Campaign
    slots: dict[tuple[str, int], dict[int, Entry]] = field(default_factory=dict)
    scenario_iris: dict[int, str] = field(default_factory=dict)

    def put(self, assistant: str, number: int, scenario_iri: str, entry: Entry) -> tuple[str, int]:
        """Add (or replace, for a retried seed) a session; returns its slot."""
        self.scenario_iris[number] = scenario_iri
        self.slots.setdefault((assistant, number), {})[entry.seed] = entry
        return (assistant, number)

    def graph(self, slot: tuple[str, int]) -> ox.NamedNode:
        return graph_of(self.campaign, *slot)

    def triples(self, slot: tuple[str, int]) -> list[ox.Triple]:
        """The tally graph's content for one slot."""
        assistant, number = slot
        entries = [self.slots[slot][s] for s in sorted(self.slots[slot])]
        node = ox.NamedNode(f"{self.campaign.iri}#tally-{quote(assistant, safe='')}-{number}")

        def integer(n: int) -> ox.Literal:
            return ox.Literal(str(n), datatype=ox.NamedNode(XSD + "integer"))

        numbers = counts(entries)
        values: list[tuple[str, ox.Literal]] = [
            *((prop, ox.Literal(repr(float(numbers[key])), datatype=ox.NamedNode(XSD + "double")) if key == "cost"
               else integer(int(numbers[key]))) for key, prop in COUNTS),
            (DK.tallySessions, ox.Literal(";".join(e.pack() for e in entries)))]
        example = next((e.trajectory for e in entries if e.trajectory), None)     # the lowest seed's
        return [ox.Triple(node, RDF_TYPE, ox.NamedNode(DK.SlotTally)),
                ox.Triple(node, ox.NamedNode(DK.tallyOf), self.campaign.node),
                ox.Triple(node, ox.NamedNode(DK.assistantName), ox.Literal(assistant)),
                ox.Triple(node, ox.NamedNode(DK.tallyScenario), ox.NamedNode(self.scenario_iris[number])),
                *(ox.Triple(node, ox.NamedNode(p), v) for p, v in values),
                *([ox.Triple(node, DK.tallyExample.node, ox.NamedNode(example))] if example else [])]


# each count a slot tally keeps, as :func:`counts` names it, and its property
COUNTS: tuple[tuple[str, str], ...] = (
    ("total", DK.tallyTotal), ("truncated", DK.tallyTruncated), ("crashed", DK.tallyCrashed),
    ("successes", DK.tallySuccesses), ("cost", DK.tallyCost), ("rounds", DK.tallyRounds),
    ("actions", DK.tallyActions), ("hypotheses", DK.tallyHypotheses), ("correct", DK.tallyCorrect),
    ("healthy", DK.tallyHealthy), ("diagnosed", DK.tallyDiagnosed), ("falseRemovals", DK.tallyFalseRemovals))


def counts(entries: Sequence[Entry]) -> dict[str, int | float]:
    """A slot's counts (what its tally keeps beside the sessions, and what ``metrics-by-scenario.rq``
    computes from the trajectories): sessions, those cut short by a language model's truncation (left
    out of every other count), crashed; then over the rest: successes, minutes, rounds, actions,
    hypotheses, parts named rightly and healthy, sessions diagnosed, healthy parts removed."""
    kept = [e for e in entries if not e.truncated]
    return {"total": len(entries), "truncated": len(entries) - len(kept),
            "crashed": sum(1 for e in entries if e.end == "crashed"),
            "successes": sum(1 for e in kept if e.ok), "cost": float(sum(e.cost for e in kept)),
            "rounds": sum(e.rounds for e in kept), "actions": sum(e.actions for e in kept),
            "hypotheses": sum(e.hypotheses for e in kept), "correct": sum(e.correct for e in kept),
            "healthy": sum(e.healthy for e in kept), "diagnosed": sum(1 for e in kept if e.diagnosed),
            "falseRemovals": sum(e.false_removals for e in kept)}


def scenario_row(campaign: str, assistant: str, scenario: int, entries: Sequence[Entry]) -> dict[str, Any]:
    """One slot's metrics row, with the columns of ``metrics-by-scenario.rq`` (``n``: the sessions counted)."""
    numbers = counts(entries)
    return {"campaign": campaign, "assistant": assistant, "scenario": scenario, **numbers,
            "n": int(numbers["total"]) - int(numbers["truncated"])}


def up_to_date(store: KnowledgeStore, campaign: ox.NamedNode, sessions: int) -> bool:
    """Whether a campaign's slot tallies, holding ``sessions`` sessions in all, hold every trajectory it has
    (``campaign-trajectory-count.rq``): a campaign killed after a batch's trajectories went in and before its
    tallies did has more, until a resume writes them afresh."""
    rows = store.select("campaign-trajectory-count", {"campaign": campaign})
    return (int(rows[0]["trajectories"]) if rows else 0) == sessions


def graph_of(campaign: Campaign, assistant: str, number: int) -> ox.NamedNode:
    return graphs.named("tally", f"{campaign.id}/{assistant}/{number}")


def tally_graphs(store: KnowledgeStore, campaign: Campaign) -> list[ox.NamedNode]:
    return [ox.NamedNode(r["graph"]) for r in store.select("tally-graphs", {"campaign": campaign.node})]


def source_rows(store: KnowledgeStore, campaign: Campaign) -> list[dict[str, Any]]:
    """One row per trajectory of the campaign: its slot, batch, end and summary, and (``decisions``) its rounds'
    decision times in order (``tally-source.rq`` and ``tally-source-decisions.rq``)."""
    rows = store.select("tally-source", {"campaign": campaign.node})
    times: dict[str, list[tuple[int, float]]] = {}
    for r in store.select("tally-source-decisions", {"campaign": campaign.node}):
        times.setdefault(r["trajectory"], []).append((int(r["position"]), float(r["seconds"])))
    for r in rows:
        r["decisions"] = tuple(t for _, t in sorted(times.get(r["trajectory"], [])))
    return rows


def from_rows(campaign: Campaign, rows: Iterable[dict[str, Any]]) -> Tallies:
    """The campaign's tallies from ``source_rows``; a trajectory whose summary is not what its shapes ask
    (a value that is not a number, two values where one is kept) is an :class:`~diagkg.errors.InputError`
    naming it (it got into the store by a write that did not check it)."""
    tallies = Tallies(campaign)
    seen: set[str] = set()
    for r in rows:
        if r["trajectory"] in seen:
            raise InputError(f"campaign {campaign.id}: the trajectory <{r['trajectory']}> has more than one value of a "
                             "summary property (cost, rounds, seed…); its shapes allow one: correct or remove it")
        seen.add(r["trajectory"])
        try:
            entry = Entry(int(r["seed"]), r["end"], float(r["cost"]), int(r["rounds"]), int(r["actions"]),
                          int(r["hypotheses"]), int(r["correct"]), int(r["healthy"]), int(r["falseRemovals"] or 0),
                          optional_int(r["roundsToIsolate"]), optional_float(r["minutesToIsolate"]),
                          tuple(r.get("decisions", ())),
                          float(r["money"] or 0.0) + float(r["priorMoney"] or 0.0), r["trajectory"])
            number = int(r["scenario"])
        except (TypeError, ValueError) as exc:
            raise InputError(f"campaign {campaign.id}: the trajectory <{r['trajectory']}> has a summary value that is "
                             f"not a number ({exc}); its shapes ask for numbers: correct or remove it") from None
        tallies.put(r["assistant"], number, r["scenarioIri"], entry)
    return tallies


def write_all(store: KnowledgeStore, tallies: Tallies) -> int:
    """Make the campaign's tally graphs exactly those of ``tallies`` (one transaction); returns their number."""
    new = {tallies.graph(slot): tallies.triples(slot) for slot in tallies.slots}
    stale = [g for g in tally_graphs(store, tallies.campaign) if g not in new]
    if new or stale:
        store.write_graphs(new, drop=stale)
    return len(new)


def rebuild(store: KnowledgeStore, campaign: Campaign) -> int:
    """Write a campaign's tallies afresh from its trajectories; returns the number of slots."""
    return write_all(store, from_rows(campaign, source_rows(store, campaign)))


def entry_of(triples: Iterable[ox.Triple], seed: int, end: str) -> Entry:
    """A session's entry from its trajectory graph (the session's summary)."""
    triples = list(triples)
    sessions = {t.subject for t in triples if t.predicate.value == str(DK.roundCount)}
    if len(sessions) != 1:
        raise ValueError(f"a trajectory graph holds {len(sessions)} sessions with a round count; expected one")
    session = sessions.pop()
    values: dict[str, str] = {t.predicate.value: t.object.value for t in triples
                              if t.subject == session and isinstance(t.object, ox.Literal)}

    def num(term: str) -> str:
        if term not in values:
            raise ValueError(f"the trajectory's session has no {term.rsplit('#', 1)[-1]}")
        return values[term]

    rounds = {t.subject for t in triples if t.predicate.value == str(DK.inSession) and t.object == session}
    position: dict[Any, int] = {}
    seconds: dict[Any, float] = {}
    for t in triples:
        if t.subject not in rounds or not isinstance(t.object, ox.Literal):
            continue
        if t.predicate.value == str(DK.position):
            position[t.subject] = int(t.object.value)
        elif t.predicate.value == str(DK.wallTimeSeconds):
            seconds[t.subject] = float(t.object.value)
    decisions = tuple(seconds[r] for r in sorted(seconds, key=lambda r: position.get(r, 0)))
    trajectory = next((t.subject.value for t in triples if t.predicate.value == str(DK.recordOf)
                       and t.object == session and isinstance(t.subject, ox.NamedNode)), None)
    return Entry(seed, end, float(num(DK.costMinutes)), int(num(DK.roundCount)), int(num(DK.actionCount)),
                 int(num(DK.hypothesisCount)), int(num(DK.correctHypothesisCount)),
                 int(num(DK.healthyReplacementCount)), int(values.get(str(DK.falseRemovals), "0")),
                 optional_int(values.get(str(DK.roundsToIsolate))), optional_float(values.get(str(DK.minutesToIsolate))),
                 decisions, float(values.get(str(DK.moneyCost), 0.0)), trajectory)


def optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def keep_figures(entries: Iterable[Entry]) -> bool:
    """Whether every entry holds what the figures need beyond the counts (its decision times, its money…):
    a tally written before they were kept does not, and its campaign's figures are read from the trajectories."""
    return all(e.figures for e in entries)
