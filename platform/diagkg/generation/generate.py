"""``diagkg generate``: scenarios from the fault catalogue, checked by simulation.

Every placement of a fault (or of two or three faults, drawn by prior weight
when there are too many) is injected into the system and simulated
(:class:`~diagkg.generation.bench.Bench`); those a person notices and a
repair of the catalogue clears are written as scenario files
(:mod:`~diagkg.generation.files`), then validated against the shapes and run
through every check of ``diagkg check`` in a scratch copy of the store's
knowledge: a scenario that fails a check is left out and said. The same seed on
the same store writes the same files.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..kg.rdfio import parse_text
from .bench import Bench, Look, Repair
from .catalogue import Placement, Unplaced, combinations, fault_modes, single_placements
from .files import (
    Written,
    budget,
    categories,
    category_counts,
    description,
    file_name,
    first_number,
    identifier,
    observations,
    scenario_graph,
    taken,
    turtle,
)
from .wording import Wording, Words

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

Progress = Callable[[str, int, int], None]
DEFAULT_LIMIT = 200          # placements of several faults tried when --limit is not given


class Dropped(StrEnum):
    """Why a placement was not written."""

    UNSEEN = "unseen"            # every lamp looks as in the working system
    WORKING = "working"          # the service agent judges the system working (its main lamps light)
    NO_REPAIR = "no-repair"      # no sequence of the catalogue's repairs clears it
    CHECK = "check"              # the written scenario fails a check of `diagkg check`
    ALIKE = "alike"              # another placement shows and is repaired the same (a short between a part's two
                                 # nodes and the part shorted): one scenario, not two weighing double in a campaign


@dataclass(frozen=True)
class Left:
    """A placement left out, and why."""

    placement: str
    reason: Dropped
    detail: str = ""


@dataclass(frozen=True)
class GenerationConfig:
    key: str
    faults: int = 1                          # faults per scenario: 1, 2 or 3
    modes: frozenset[str] | None = None      # only these fault modes (local names)
    limit: int | None = None                 # at most this many placements tried
    seed: int = 0
    seeds: int = 8                           # simulations of a fault left to chance
    check: bool = True                       # run diagkg check's checks on what is written
    first: int | None = None                 # the first number to give (default: see files.first_number)


@dataclass
class Generation:
    """What a run generated, left out and could not place."""

    config: GenerationConfig
    tried: int = 0
    singles_noticed: int = 0
    written: list[Written] = field(default_factory=list)
    left: list[Left] = field(default_factory=list)
    unplaced: list[Unplaced] = field(default_factory=list)
    words: dict[str, Words] = field(default_factory=dict)      # placement key -> the words written

    def write(self, folder: str | Path) -> list[Path]:
        """Write every scenario into ``folder`` (made if needed); returns the files."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for w in self.written:
            path = out / w.file_name
            path.write_text(w.text, encoding="utf-8")
            paths.append(path)
        return paths


def candidates(bench: Bench, config: GenerationConfig, singles: list[Placement],
               looks: dict[str, Look]) -> list[Placement]:
    """The placements to try: every single fault (or ``limit`` of them, drawn by prior), or
    combinations of the single faults that change what can be seen or measured."""
    if config.faults == 1:
        if config.limit is None or config.limit >= len(singles):
            return singles
        rng = random.Random(config.seed)
        keyed = sorted(range(len(singles)), key=lambda i: -rng.random() ** (1.0 / max(singles[i].prior, 1e-9)))
        return [singles[i] for i in sorted(keyed[: config.limit])]
    pool = [p for p in singles if looks[p.key].signatures != {bench.nominal_signature}]
    return combinations(pool, config.faults, config.limit if config.limit is not None else DEFAULT_LIMIT,
                        config.seed)


def generate(store: KnowledgeStore, config: GenerationConfig, progress: Progress | None = None,
             wording: Wording | None = None) -> Generation:
    """Generate scenarios on system ``config.key`` of ``store`` (nothing is written to the store);
    ``wording``: where their words come from (the templates by default)."""
    if config.faults not in (1, 2, 3):
        from ..errors import InputError

        raise InputError(f"--faults takes single, double or triple, not {config.faults} faults")
    gen = Generation(config)
    bench = Bench(store, config.key, seeds=config.seeds)
    if bench.nominal.error is not None:        # every placement would read as unseen
        from ..env.checks import unsolved
        from ..errors import InputError

        raise InputError(f"{config.key} cannot be solved as it works: {unsolved(bench.sk, bench.nominal.error)}")
    singles, gen.unplaced = single_placements(store, bench.sk, config.modes)
    looks: dict[str, Look] = {}
    for i, p in enumerate(singles, 1):
        looks[p.key] = bench.look(p)
        if progress:
            progress("simulating single faults", i, len(singles))
    gen.singles_noticed = sum(1 for look in looks.values() if look.noticed)
    tried = candidates(bench, config, singles, looks)
    gen.tried = len(tried)
    modes = fault_modes(store)
    comments = {name: m.comment for name, m in modes.items()}
    defaults = {name: m.default for name, m in modes.items()}
    coupling_modes = frozenset(name for name, m in modes.items() if m.kind == "coupling")
    by_count = category_counts(store)
    kept: list[tuple[Look, Repair, tuple[bool, ...]]] = []
    seen: dict[tuple[object, ...], int] = {}       # what a person sees and what repairs it -> its place in kept
    for i, p in enumerate(tried, 1):
        look = looks.get(p.key) if len(p) == 1 else None
        look = look or bench.look(p)
        if progress:
            progress("simulating and repairing", i, len(tried))
        if not look.changed:
            gen.left.append(Left(p.key, Dropped.UNSEEN))
            continue
        if look.working:
            gen.left.append(Left(p.key, Dropped.WORKING, "changed: " + ", ".join(look.changed)))
            continue
        repair = bench.repair(look)
        if repair is None:
            gen.left.append(Left(p.key, Dropped.NO_REPAIR, "faulty: " + ", ".join(sorted(look.faulty))))
            continue
        repair = bench.played_first(look, repair)
        alike = (look.signatures, look.faulty, repair.steps, repair.permanent, look.intermittent)
        first = seen.get(alike)
        if first is not None:          # one of them, the likelier (the first of equals)
            other = kept[first][0].placement
            dropped, kept_key = (p, other.key) if p.prior <= other.prior else (other, p.key)
            gen.left.append(Left(dropped.key, Dropped.ALIKE, f"as {kept_key}"))
            if dropped is other:
                kept[first] = (look, repair, bench.masked(look))
            continue
        seen[alike] = len(kept)
        kept.append((look, repair, bench.masked(look)))
    wording = wording or Wording()
    for i, (look, _, _) in enumerate(kept, 1):
        gen.words[look.placement.key] = wording.words(bench, look, description(bench, look, comments),
                                                      observations(bench, look))
        if progress and wording.client is not None:
            progress("wording", i, len(kept))
    wording.close()
    used = taken(store)
    start = config.first if config.first is not None else first_number(used, config.faults)
    written = _written(bench, config, kept, used.next_free(start, len(kept), config.key, config.faults), gen.words,
                       defaults, coupling_modes, by_count, gen.singles_noticed)
    if config.check:
        written = _checked(store, config, written, gen, progress)
        # numbered again without the gaps the checks left (the number changes nothing a check reads)
        again = used.next_free(start, len(written), config.key, config.faults)
        by_key = {w.look.placement.key: (w.look, w.repair, w.masked) for w in written}
        written = _written(bench, config, [by_key[w.look.placement.key] for w in written], again, gen.words,
                           defaults, coupling_modes, by_count, gen.singles_noticed)
    gen.written = written
    bench.close()
    return gen


def _written(bench: Bench, config: GenerationConfig, kept: list[tuple[Look, Repair, tuple[bool, ...]]],
             numbers: list[tuple[int, str]], words: dict[str, Words], defaults: dict[str, float | None],
             coupling_modes: frozenset[str], by_count: dict[int, str], noticed: int) -> list[Written]:
    out = []
    for (look, repair, masked), (number, sid) in zip(kept, numbers, strict=True):
        cats = categories(look, masked, by_count, coupling_modes)
        rounds = budget(noticed, repair, look.intermittent)
        said = words[look.placement.key]
        note = ("The description and the initial observations were written by a language model and checked "
                "against the stated symptoms.") if said.by_model else None
        g = scenario_graph(bench, look, repair, masked, number, sid, cats, rounds, (said.description, said.observations),
                           defaults, config.seed, note)
        text = turtle(g, number, sid, look.placement.key)
        out.append(Written(number, sid, file_name(number, sid), text, look, repair, masked, cats, rounds))
    return out


def _checked(store: KnowledgeStore, config: GenerationConfig, written: list[Written], gen: Generation,
             progress: Progress | None) -> list[Written]:
    """Validate and load the scenarios into a scratch copy of the store's knowledge and run every
    check on each; those failing one are left out (with the first failing check)."""
    from ..env.checks import check_scenario, scratch_with
    from ..env.scenarios import ScenarioCatalog
    from ..kg.loading import load_documents

    if not written:
        return written
    scratch = scratch_with(store)
    docs = [(parse_text(w.text, w.file_name), f"generated:{w.file_name}") for w in written]
    load_documents(scratch, docs)
    catalog = ScenarioCatalog(scratch)
    kept = []
    for i, w in enumerate(written, 1):
        report = check_scenario(scratch, catalog.resolve(w.id), seeds=config.seeds, file=None)
        failed = [f for f in report.findings if not f.passed]
        if failed:
            gen.left.append(Left(w.look.placement.key, Dropped.CHECK, f"{failed[0].check}: {failed[0].message}"))
        else:
            kept.append(w)
        if progress:
            progress("checking", i, len(written))
    scratch.close()
    return kept


__all__ = ["DEFAULT_LIMIT", "Dropped", "Generation", "GenerationConfig", "Left", "candidates", "generate",
           "identifier"]
