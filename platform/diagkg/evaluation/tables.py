"""Report tables (Markdown, LaTeX, CSV) and the matplotlib figure helper shared by
:mod:`diagkg.evaluation.report` and :mod:`diagkg.evaluation.rubric_report`."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Any


@dataclass
class Table:
    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]


PRIVILEGED_MARK = " (privileged)"      # after an assistant briefed with the answer (dk:privileged)


def mark_privileged(tables: list[Table], assistants: set[str]) -> None:
    """Mark the rows (and side-by-side columns) of assistants that were briefed with the answer."""
    for t in tables:
        where = [i for i, c in enumerate(t.columns) if c in ("assistant", "a", "b")]
        for row in t.rows:
            for i in where:
                if row[i] in assistants:
                    row[i] = f"{row[i]}{PRIVILEGED_MARK}"
        t.columns = [next((a + PRIVILEGED_MARK + c[len(a):] for a in assistants if c.startswith(a + " ")), c)
                     if i not in where else c for i, c in enumerate(t.columns)]


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


_MD_ESCAPES = str.maketrans({c: "\\" + c for c in "\\`*_[]|#"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;",
                                                                   "\n": " ", "\r": " "})


def markdown_text(text: str) -> str:
    """Text as it reads in a Markdown table cell: no HTML (``<``, ``>``, ``&`` as entities),
    no emphasis, links or code (backslash escapes), no line breaks or cell separators."""
    return text.translate(_MD_ESCAPES)


def to_markdown(t: Table) -> str:
    lines = [f"### {markdown_text(t.title)}", "", "| " + " | ".join(markdown_text(c) for c in t.columns) + " |",
             "|" + "---|" * len(t.columns)]
    lines += ["| " + " | ".join(markdown_text(_fmt(v)) for v in row) + " |" for row in t.rows]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"), ("_", r"\_"),
                 ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}"),
                 ("×", r"$\times$"), ("–", "--")):
        text = text.replace(a, b)
    return text


def to_latex(t: Table) -> str:
    head = " & ".join(_latex_escape(c) for c in t.columns)
    body = "\n".join(" & ".join(_latex_escape(_fmt(v)) for v in row) + r" \\" for row in t.rows)
    return (f"% {t.title}\n\\begin{{tabular}}{{{'l' * len(t.columns)}}}\n\\hline\n{head} \\\\\n\\hline\n{body}\n"
            f"\\hline\n\\end{{tabular}}\n")


def to_csv(t: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(t.columns)
    for row in t.rows:
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


