"""What an expression of the behaviour declarations reads (diagkg.kg.expressions.names_read), remembered by its text:
the same answer each time, and a bad expression refused each time saying where it is."""

from __future__ import annotations

import pytest

from diagkg.errors import ExpressionError
from diagkg.kg.expressions import names_read


def test_the_names_read_are_the_same_when_asked_again():
    text = "resistance if has('resistance') else (onResistance if closed else offResistance)"
    first = names_read(text, "a stamp of :MySwitch")
    assert first == frozenset({"onResistance", "offResistance", "closed"})
    assert names_read(text, "elsewhere") == first


@pytest.mark.parametrize("where", ["a stamp of :MyLamp", "a damage rule of :MyFuse"])
def test_a_bad_expression_is_refused_each_time_naming_where_it_is(where):
    for _ in range(2):
        with pytest.raises(ExpressionError, match=where):
            names_read("__import__('os')", where)
