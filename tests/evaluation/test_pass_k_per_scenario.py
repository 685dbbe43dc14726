"""pass^k takes k = 3 runs, or all the runs of a scenario that has fewer, scenario by scenario: one scenario with a
single run (its other sessions ended in llm_truncation, which are left out) set k to 1 for every scenario of the
assistant, so its pass^k read as pass@1 (a flaky assistant's 1/3 read 7/9)."""

from __future__ import annotations

from math import comb

import pytest

from diagkg.evaluation.regret import Row


def test_a_scenario_with_fewer_runs_lowers_k_for_itself_alone():
    row = Row("flaky", "torch", runs={1: (3, 2), 2: (3, 2), 3: (1, 1)})
    assert row.k() == 3
    # scenarios 1 and 2: two successes of three never make three in a row; scenario 3: its one run succeeded
    assert row.pass_hat_k() == pytest.approx((0 + 0 + 1) / 3)
    assert row.pass_hat_k() <= row.pass_at_1()


def test_pass_k_is_pass_1_when_every_scenario_ran_once_and_the_usual_figure_otherwise():
    once = Row("a", "torch", runs={1: (1, 1), 2: (1, 0)})
    assert once.k() == 1 and once.pass_hat_k() == pytest.approx(once.pass_at_1()) == pytest.approx(0.5)
    many = Row("b", "torch", runs={1: (5, 4), 2: (4, 3)})
    assert many.k() == 3
    assert many.pass_hat_k() == pytest.approx((comb(4, 3) / comb(5, 3) + comb(3, 3) / comb(4, 3)) / 2)
