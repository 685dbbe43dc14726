"""``diagkg validate`` says what ``diagkg load`` would refuse of a file for what it claims (outsider h1, F13): a
scenario whose number the store already holds from another file passed validate, and load then refused it."""

from __future__ import annotations

import pytest

from diagkg.errors import InputError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.validation import Validator, store_resolver
from diagkg.kg.validation_store import store_collisions
from diagkg.kg.vocab import DK

from ..support.cli import run_cli
from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text

EXIT_VIOLATIONS = 1


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_scenario_number_the_store_holds_is_a_violation_at_its_line(tmp_path):
    files = [tmp_path / "torch.ttl", tmp_path / "t1.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    text = scenario_text(**dict(LOOSE_LEAD, number=FLAT["number"]))   # another scenario, the flat battery's number
    dup = tmp_path / "dup.ttl"
    dup.write_text(text)
    path = tmp_path / "store"
    with KnowledgeStore(path) as store:
        load_files(store, files)
        again = Validator().validate_paths(files)
        store_collisions(store, again)
        reports = Validator().validate_paths([dup], resolve=store_resolver(store))
        store_collisions(store, reports)
    assert all(r.conforms for r in again)          # the files the store holds from them: no collision
    (violation,) = reports[0].violations
    assert violation.line == line_of(text, "dk:scenarioNumber") and violation.path == "dk:scenarioNumber"
    assert violation.component == DK.StoreIdentityConstraintComponent.uri.n3()
    assert f"the scenario number {FLAT['number']}" in violation.message and str(files[1]) in violation.message

    r = run_cli("--store", str(path), "validate", str(dup))
    assert r.returncode == EXIT_VIOLATIONS, r.stdout + r.stderr
    assert f"{dup}:{violation.line}: :TORCH.2 — dk:scenarioNumber — defines the scenario number 9101" in r.stdout
    with KnowledgeStore(path) as store, pytest.raises(InputError, match="defines the scenario number 9101, which the "
                                                                           "store already holds"):
        load_files(store, [dup])                                                 # as load refuses it


def test_two_files_given_together_that_claim_one_number_collide_as_load_says(tmp_path):
    torch, one, two = tmp_path / "torch.ttl", tmp_path / "one.ttl", tmp_path / "two.ttl"
    torch.write_text(TORCH)
    one.write_text(scenario_text(**FLAT))
    text = scenario_text(**dict(LOOSE_LEAD, number=FLAT["number"]))
    two.write_text(text)
    reports = Validator().validate_paths([torch, one, two])
    store_collisions(None, reports)                                            # no store: the batch alone
    said = {r.file: [(v.line, v.message) for v in r.violations] for r in reports}
    assert said == {str(torch): [], str(one): [], str(two): [
        (line_of(text, "dk:scenarioNumber"), f"defines the scenario number 9101, as {one} does: diagkg load refuses "
                                             "the two together")]}
    with pytest.raises(InputError, match="both define the scenario number 9101"):
        load_files(KnowledgeStore.memory(), [torch, one, two])
