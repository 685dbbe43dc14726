"""pySHACL's runs on one validator share the ontology's graph (:class:`diagkg.kg.shacl.DataBase`): each run adds
its documents and their context to it and takes them out after. A run must report exactly what it reports on a
graph of its own: no earlier document's triples or prefixes left behind. On a user's system written here (the
bench lamp) and its scenarios, validated by pySHACL alone (the reference engine)."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.rdfio import parse_file
from diagkg.kg.validation import Validator

from ..support.bench_lamp import BENCH, SCEN

# the scenario as written, its fault on a part the system does not have; the same under another prefix
_MISSING = SCEN.replace("dk:faultTarget sys:lamp_a", "dk:faultTarget sys:no_such_lamp")
_OTHER_PREFIX = _MISSING.replace("sys:", "bench:").replace("@prefix bench:", "@prefix bench:")


def _files(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    system, missing, other, good = (tmp_path / n for n in ("bench.ttl", "missing.ttl", "other.ttl", "good.ttl"))
    system.write_text(BENCH.replace("LABEL", "Left lamp"))
    missing.write_text(_MISSING)
    other.write_text(_OTHER_PREFIX.replace(":BENCH.1", ":BENCH.3").replace("9701", "9703"))
    good.write_text(SCEN)
    return system, missing, other, good


def test_a_run_reports_as_on_a_graph_of_its_own_whatever_ran_before(tmp_path: Path) -> None:
    system, missing, other, good = _files(tmp_path)
    context = [parse_file(system)]

    def alone(path: Path) -> list[tuple]:
        return _seen(Validator(reference=True).validate_file(path, context))

    expected = {path: alone(path) for path in (missing, other, good)}
    assert any("bench:no_such_lamp" in m for *_, m in expected[other]), expected[other]   # its own prefix names it
    assert any("sys:no_such_lamp" in m for *_, m in expected[missing]), expected[missing]
    assert expected[good] == []

    shared = Validator(reference=True)
    base = shared._pyshacl_base
    graph = base._graph
    for path in (missing, other, good, other, missing, good):
        assert _seen(shared.validate_file(path, context)) == expected[path], path.name
    # what is left between runs is the ontology alone, in the graph the first run had (not built again)
    assert base._graph is graph
    assert len(base._graph) == len(shared.ontology)
    assert set(base._graph) == set(shared.ontology)


def _seen(report) -> list[tuple]:
    assert report.error is None, report.error
    return sorted((v.file, v.line, v.focus, v.path, v.shape, v.message) for v in report.violations)
