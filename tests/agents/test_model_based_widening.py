"""When the model-based assistant widens to pairs of faults, it admits the pairs whose worlds agree with
what was seen in the order they rank, at most ``max_pairs``; it settles for a quarter of that once what
agrees is enough to choose between. One pair alone that agrees is no such choice: settling on it made its
diagnosis certain (a belief of 1) while the pair that was the truth ranked further down, and the wrong
part was replaced first (3CC-CS.M.9: a shorted internal bulb replaced, 270 min, where the main bulb was
shorted, 160). So it settles only once two diagnoses agree, or one fault alone does (a short between
two nodes, tried before the pairs). Checked on the battery pack written in
``test_model_based_repair_cost`` (its pairs of single faults, which pairs agree scripted)."""

from __future__ import annotations

import itertools

import pytest

from diagkg.agents.combinations import Candidate
from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from .test_model_based_repair_cost import pack_store


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    return pack_store(tmp_path_factory.mktemp("pack-widening"))


class Scripted(ModelBasedAssistant):
    """At its first decision, admits 16 pairs at most from a ranking of 40 whose agreeing ones are
    scripted (``agree``: their places in the ranking), and notes how many were tried; then goes on as
    before, its candidates as they were."""

    agree: tuple[int, ...] = ()
    standing: int = 0          # faults of a candidate already standing when the pairs come (a short: 1)

    def suggest(self):
        if not hasattr(self, "tried"):
            space = self.space
            kept = (space.admit, space.live, set(space.tried_pairs), self.worlds.since)
            ranked = list(itertools.combinations(space.pairable, 2))[:40]
            agreeing = {id(ranked[n][0]) ^ id(ranked[n][1]) for n in self.agree}
            tried: list[int] = []

            def admit(candidates):
                for c in candidates:
                    tried.append(len(tried))
                    # a pair agrees when it is one of the scripted ones (its two singles' faults)
                    n = next(k for k, (a, b) in enumerate(ranked) if c.faults == a.faults + b.faults)
                    if id(ranked[n][0]) ^ id(ranked[n][1]) in agreeing:
                        space.live.append((c, None))

            space.admit, space.live, space.tried_pairs = admit, [], set()
            if self.standing:         # one diagnosis already standing: one fault, or a pair of two
                a, b = ranked[-1]
                c = a if self.standing == 1 else Candidate(a.faults + b.faults, a.faulty | b.faulty, 1.0)
                space.live.append((c, None))
            self.worlds.since = 1          # (no lights at the start composed: every pair goes to admit)
            space.admit_combos(ranked, 16)
            self.tried = len(tried)
            space.admit, space.live, space.tried_pairs, self.worlds.since = kept
        return super().suggest()


def _tried(store: KnowledgeStore, agree: tuple[int, ...], standing: int = 0) -> int:
    assistant = Scripted()
    assistant.agree, assistant.standing = agree, standing
    run_session("PACK.3", assistant, store=store, seed=0, record=False, keep_ledger=False)
    return assistant.tried


def test_one_pair_that_agrees_is_no_reason_to_stop_looking(store):
    # the second pair agrees, no other: every one of the 16 is tried (it stopped at a quarter, 4)
    assert _tried(store, (1,)) == 16


def test_two_diagnoses_that_agree_settle_it(store):
    assert _tried(store, (1, 2)) == 4          # two agree within the first quarter: a quarter
    assert _tried(store, (1, 6)) == 7          # the second agrees at the seventh: stop there
    assert _tried(store, ()) == 16             # none agrees: all of them


def test_one_fault_that_agrees_settles_it(store):
    # a short between two nodes (one fault, tried before the pairs) that agrees settles the pairs at a
    # quarter, though it is one diagnosis: one fault that explains everything is likelier than two, as a
    # single fault of a part is (S.745 of a system nobody wrote: 600 pairs started after a rebase, the
    # shorts that agreed all naming one part)
    assert _tried(store, (), standing=1) == 4
    # one pair standing is no such reason
    assert _tried(store, (), standing=2) == 16


class Ranking(ModelBasedAssistant):
    """At its first decision, ranks the pairs of its singles as a widening does, and keeps the ranking, and
    the pairs built one by one from the ranking's own indices."""

    def suggest(self):
        if not hasattr(self, "ranked"):
            space, worlds = self.space, self.worlds
            runs = [worlds.run_through(c) for c in space.pairable]
            self.ranked = space.combinations.ranked_pairs(dict(worlds.briefing.lights), runs, len(worlds.steps))
            self.built = [(space.pairable[int(a)], space.pairable[int(b)])
                          for a, b in zip(self.ranked.first.tolist(), self.ranked.second.tolist(), strict=True)]
        return super().suggest()


def test_the_pairs_ranked_are_made_as_they_are_read_and_read_as_a_list(store):
    # a widening reads a few hundred pairs of the ranking: they are made when read (Ranked), not all first
    assistant = Ranking()
    run_session("PACK.3", assistant, store=store, seed=0, record=False, keep_ledger=False)
    ranked, built = assistant.ranked, assistant.built
    singles = assistant.space.pairable
    targets = [c.faults[0].target for c in singles]
    # every pair of singles on two targets, once each
    assert len(ranked) == len(built) == sum(1 for a, b in itertools.combinations(targets, 2) if a != b) > 40
    assert list(ranked) == built
    assert ranked[:40] == built[:40] and ranked[5:9] == built[5:9] and ranked[-1] == built[-1]
    assert all(a is not b and a.faults[0].target != b.faults[0].target for a, b in ranked)
