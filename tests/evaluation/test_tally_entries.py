"""A slot tally keeps each session as one packed line of dk:tallySessions (diagkg.evaluation.tally.Entry):
any entry comes back from its line as it was, and a line written before a field was kept still reads, saying
what it lacks (the report then reads the trajectories for it)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diagkg.evaluation.tally import Entry, unpack_all

ENDS = ("success", "success_no_hypothesis", "timeout", "surrender", "crashed", "llm_truncation")
counts = st.integers(min_value=0, max_value=10_000)
amounts = st.floats(min_value=0, max_value=1e6, allow_nan=False)
entries = st.builds(
    Entry, seed=st.integers(min_value=0, max_value=2**31), end=st.sampled_from(ENDS), cost=amounts, rounds=counts,
    actions=counts, hypotheses=counts, correct=counts, healthy=counts, false_removals=counts,
    isolate_rounds=st.none() | counts, isolate_minutes=st.none() | amounts,
    decisions=st.tuples() | st.lists(st.floats(min_value=0, max_value=3600, allow_nan=False), max_size=12).map(tuple),
    money=amounts)


@given(st.lists(entries, max_size=6))
def test_every_entry_comes_back_from_its_line(sessions: list[Entry]) -> None:
    text = ";".join(e.pack() for e in sessions)
    assert unpack_all(text) == sessions and all(e.figures for e in unpack_all(text))


def test_lines_written_before_say_what_they_lack() -> None:
    old, older = unpack_all("3 success 40.0 2 1 1 1 0 1;4 timeout 90.0 5 5 0 0 0")
    assert (old.seed, old.end, old.cost, old.false_removals, older.false_removals) == (3, "success", 40.0, 1, 0)
    assert not old.figures and old.decisions is None and old.money == 0.0
    assert Entry(1, "success", 10.0, 1, 0, 1, 1, 0).pack() == "1 success 10.0 1 0 1 1 0 0"      # kept as it was


def test_the_ontology_and_the_docs_name_every_field_of_an_entry() -> None:
    """dk:tallySessions' comment and docs/evaluation/reports.md listed 12 fields; an entry has 13, money last."""
    import re

    import pyoxigraph as ox

    from diagkg.kg.vocab import DK

    from ..support.paths import ROOT

    entry = Entry(0, "success", 160.0, 2, 1, 1, 1, 0, 0, 2, 160.0, (0.1, 0.2), 0.5)
    fields = entry.pack().split(" ")
    onto = ox.Store()
    onto.load(path=str(ROOT / "ontology" / "evaluation.ttl"), format=ox.RdfFormat.TURTLE)
    comment = next(onto.quads_for_pattern(DK.tallySessions.node, ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#comment"),
                                          None, None)).object.value
    named = next(m.group(1).split(" ") for m in re.finditer(r"`([a-zA-Z ]+)`", comment) if " " in m.group(1))
    assert len(named) == len(fields) == 13 and named[-1] == "money"
    table = (ROOT / "docs" / "evaluation" / "reports.md").read_text(encoding="utf-8")
    assert re.search(r"^\| 13 \| money \|", table, re.MULTILINE)


def test_the_docs_name_a_tally_graph_as_it_is_stored() -> None:
    """The docs said tally/{id}/{assistant}/{n}; the stored name percent-encodes the key as one segment (h3 F8)."""
    from diagkg.evaluation import tally
    from diagkg.kg import graphs

    from ..support.paths import ROOT

    class Campaign:
        id = "h3-20261207T023615638"

    name = tally.graph_of(Campaign(), "neuro-symbolic", 1).value     # type: ignore[arg-type]
    assert name == graphs.BASE + "tally/h3-20261207T023615638%2Fneuro-symbolic%2F1"
    assert name in (ROOT / "docs" / "evaluation" / "reports.md").read_text(encoding="utf-8")
    assert "tally/{id}/{assistant}/{n}" not in (ROOT / "docs" / "store" / "index.md").read_text(encoding="utf-8")
