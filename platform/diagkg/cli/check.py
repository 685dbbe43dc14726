"""``diagkg check``: scenarios checked by simulation (see :mod:`diagkg.env.checks`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import errors
from ..kg.store import KnowledgeStore
from .output import EXIT_OK, EXIT_VIOLATIONS, is_file_ref, open_store, progress_bar, say

if TYPE_CHECKING:  # pragma: no cover
    from ..env.checks import Finding
    from ..env.scenarios import Scenario
    from ..generation.bench import Bench


def _scenarios_of(store: KnowledgeStore, refs: list[str]) -> list[Scenario]:
    from ..env.scenarios import ScenarioCatalog
    from ..env.workspace import resolve_scenario
    from ..kg.loading import ensure_shipped, has_shipped

    if refs == ["all"]:
        if not has_shipped(store) and not store.select("scenario-index"):
            ensure_shipped(store, notify=say)
        catalog = ScenarioCatalog(store)
        if not len(catalog):
            raise errors.InputError("the store holds no scenario")
        return [catalog.resolve(n) for n in catalog.numbers()]
    return [resolve_scenario(store, ref, say) for ref in refs]


def _scenarios_from_files(store: KnowledgeStore, paths: list[str]) -> tuple[KnowledgeStore, list[Scenario]]:
    """Files are validated and loaded into a scratch copy of the store's knowledge."""
    from ..env.checks import scratch_with
    from ..env.scenarios import ScenarioCatalog
    from ..kg.loading import has_shipped, load_files, load_shipped

    scratch = scratch_with(store)
    if not has_shipped(store):
        load_shipped(scratch)            # the shipped systems, as every other command would find them
    with progress_bar(sys.stderr.isatty()) as progress:
        report = load_files(scratch, paths, progress=progress)
    wanted = {item.graph for item in report.loaded}
    rows = scratch.select("graph-claims")
    ids = [r["value"] for r in rows if r["graph"] in wanted and r["kind"] == "scenario identifier"]
    if not ids:
        raise errors.InputError(f"{', '.join(paths)}: no scenario in the file(s)")
    catalog = ScenarioCatalog(scratch)
    return scratch, [catalog.resolve(i) for i in ids]


class _Benches:
    """One generation bench per system, to look for a repair cheaper than a scenario's ideal repair."""

    def __init__(self, store: KnowledgeStore):
        self.store = store
        self.benches: dict[str, Bench] = {}

    def __enter__(self) -> "_Benches":
        return self

    def __exit__(self, *exc: object) -> None:
        for bench in self.benches.values():
            bench.close()

    def cheaper(self, scenario: Scenario, findings: list[Finding]) -> list[Finding]:
        """A warning when a repair cheaper than the ideal one restores the system (``cost / ideal`` is measured
        against the ideal repair, so an assistant that finds the cheaper one reads below 1), at the repair's line;
        none unless the ideal repair passed its check."""
        from ..env.checks import Finding
        from ..generation.bench import Bench

        repair = next((f for f in findings if f.check == "repair"), None)
        if repair is None or not repair.passed:
            return []
        try:
            bench = self.benches.get(scenario.key) or self.benches.setdefault(scenario.key, Bench(self.store, scenario.key))
            found = bench.cheaper_repair(scenario)
        except errors.DiagkgError:
            return []
        if found is None:
            return []
        steps, cheaper, ideal = found
        said = "; ".join(f"{s.action} {' '.join(s.targets)}" for s in steps.steps)
        return [Finding(scenario.id, "ideal", True, f"a repair cheaper than the ideal one restores the system: {said} "
                        f"({cheaper:g} min as a session charges it, access included, the ideal repair {ideal:g} min); "
                        "cost / ideal is measured against the ideal repair", repair.file, repair.line, warning=True)]


def cmd_check(args: argparse.Namespace) -> int:
    from ..env.checks import check_scenario

    refs: list[str] = args.scenarios
    files = [r for r in refs if is_file_ref(r) or Path(r).is_dir()]
    if files and len(files) != len(refs):
        raise errors.InputError("give scenario files, or scenarios of the store (ids, numbers or all), not both")
    if args.seeds < 1:
        raise errors.InputError(f"--seeds must be at least 1, not {args.seeds}")
    with open_store(args, write=not files) as store:
        target, scenarios = _scenarios_from_files(store, files) if files else (store, _scenarios_of(store, refs))
        reports = []
        with progress_bar(sys.stderr.isatty()) as progress, _Benches(target) as benches:
            for done, scenario in enumerate(scenarios, 1):
                report = check_scenario(target, scenario, seeds=args.seeds)
                report.findings += benches.cheaper(scenario, report.findings)
                reports.append(report)
                if progress:
                    progress(f"checking ({scenario.id})", done, len(scenarios))
    failed = [r for r in reports if not r.passed]
    findings = [f for r in reports for f in r.findings]
    if args.format == "json":
        print(json.dumps({"conforms": not failed, "checked": len(reports), "failed": len(failed),
                          "scenarios": [r.to_dict() for r in reports]}, indent=2))
    else:
        for f in findings:
            if not f.passed or f.warning or args.verbose:
                print(("" if not f.passed else "warning: " if f.warning else "ok: ") + str(f))
        bad = sum(1 for f in findings if not f.passed)
        print(f"{len(reports)} scenario(s) checked: {len(reports) - len(failed)} pass, {len(failed)} fail "
              f"({bad} of {len(findings)} checks failed)", file=sys.stderr)
    return EXIT_VIOLATIONS if failed else EXIT_OK
