"""The model-based scorer splits candidates only where the judge would (diagkg.agents.scoring).

Predicted reports are classed by cells of a grid four tolerances wide (``Reading.group``); two readings on
either side of a cell's edge fell in two classes though they agree within the measurement's tolerance, so a
test looked as if it told their worlds apart while the judge (``Reading.agrees``) keeps both whatever is
read. On ``unwritten_0_10`` (benchmarks/unwritten_systems.py, seed 0) a short placed on either side of a fuse
(3.0113 V against 3.0133 V) made five voltage measurements in a row look worth taking; none removed a
candidate, and the session ran out of rounds."""

from __future__ import annotations

from diagkg.agents.combinations import Candidate
from diagkg.agents.readings import Reading
from diagkg.agents.scoring import Scorer, _alike
from diagkg.env.actions import Action

VOLTS = (0.002, 0.01)          # a voltmeter's absolute and relative tolerance


def _volts(*values: float) -> Reading:
    return Reading("voltages", tuple((v, *VOLTS) for v in values))


def test_readings_across_a_cells_edge_that_agree_are_one_report():
    a, b = _volts(3.0230), _volts(3.0250)
    assert a.group() != b.group() and a.agrees(b)        # two cells, one report to the judge
    assert _alike({a.group(): [a], b.group(): [b]}) == {b.group(): a.group()}
    far = _volts(3.5)
    assert not far.agrees(a) and _alike({a.group(): [a], far.group(): [far]}) == {}


def test_classes_join_only_where_every_report_agrees():
    # one cell holds 2.96 V and 3.02 V; the next 3.03 V, which agrees with 3.02 V but not with 2.96 V
    low, high, next_cell = _volts(2.96), _volts(3.02), _volts(3.03)
    assert low.group() == high.group() != next_cell.group()
    assert high.agrees(next_cell) and not low.agrees(next_cell)
    assert _alike({low.group(): [low, high], next_cell.group(): [next_cell]}) == {}
    assert _alike({high.group(): [high], next_cell.group(): [next_cell]}) == {next_cell.group(): high.group()}


class _Predicted:
    """What each candidate's world reports (the scorer's view of the worlds)."""

    def __init__(self, reports: dict[str, Reading]):
        self.reports = reports

    def outcomes(self, c, point, step):
        return [(1.0, self.reports[next(iter(c.faulty))], 20.0)]

    def ways(self, c):
        return [(None, 1.0)]


def _score(reports: dict[str, Reading]):
    scorer = Scorer(_Predicted(reports))  # type: ignore[arg-type]
    sample = [(Candidate((), frozenset({part}), 1.0), None) for part in reports]
    total = float(len(sample))
    return scorer.score(Action("measure_voltage", ("fuse4",)), sample, total, 10.0, 20.0, [0.0] * (len(sample) + 1),
                        None)


def test_a_test_whose_reports_all_agree_tells_nothing():
    assert _score({"bulb10": _volts(3.0230), "sw5": _volts(3.0230), "fuse4": _volts(3.0250)}) is None


def test_a_test_that_splits_is_still_scored_with_its_classes_joined():
    scored = _score({"bulb10": _volts(3.0230), "sw5": _volts(3.5), "fuse4": _volts(3.0250)})
    assert scored is not None
    # two reports, not three: {bulb10, fuse4} and {sw5}
    assert sorted(sorted(p for s in g for p in s) for g in scored.groups.values()) == [["bulb10", "fuse4"], ["sw5"]]
    assert sum(len(m) for m in scored.members.values()) == 3
