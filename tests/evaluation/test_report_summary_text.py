"""``diagkg report``'s lines on the terminal say how many sessions the language model ended (truncated: left out of
success and cost, as the report's ``overall`` table counts them): an outsider's four truncated sessions of four
showed as success "— [0.000, 1.000]", crashed 0, and nothing else."""

from __future__ import annotations

from diagkg.cli.evaluate import _summary_text


def test_the_terminal_summary_counts_truncated_sessions_beside_crashed_ones():
    rows = [{"assistant": "llm", "sessions": 4, "success": float("nan"), "lo": 0.0, "hi": 1.0, "mean cost": float("nan"),
             "cost / ideal": float("nan"), "truncated": 4, "crashed": 0},
            {"assistant": "oracle", "sessions": 4, "success": 1.0, "lo": 0.51, "hi": 1.0, "mean cost": 40.0,
             "cost / ideal": 1.0, "truncated": 0, "crashed": 1}]
    head, llm, oracle = _summary_text(rows).splitlines()
    columns = head.split()
    assert "truncated" in columns and columns.index("truncated") < columns.index("crashed")
    assert llm.split()[-2:] == ["4", "0"] and oracle.split()[-2:] == ["0", "1"]
