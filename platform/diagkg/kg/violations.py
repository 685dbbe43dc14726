"""One way a file does not conform, as diagkg reports it (a SHACL result, an unknown term…)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    """One way a file does not conform."""

    file: str
    focus: str
    path: str
    message: str
    line: int | None = None
    severity: str = "Violation"
    value: str | None = None
    shape: str | None = None
    # the same, as RDF terms in N-Triples syntax (for a SHACL report kept in the store: validate --record)
    focus_node: str | None = None       # the focus node
    result_path: str | None = None      # the path, when it is one property
    value_term: str | None = None       # the value
    source_shape: str | None = None     # the shape (a named one)
    component: str | None = None        # the constraint component (diagkg's own for its checks beside the shapes)
    # the declared name nearest to a value or focus node declared nowhere, or to an unknown term (a misspelling's
    # "did you mean"), as the file writes it
    suggestion: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        shown = self.value is not None and self.value != self.focus and self.value not in self.message
        value = f" (value: {self.value})" if shown else ""
        hint = f"; did you mean {self.suggestion}?" if self.suggestion else ""
        return f"{where}: {self.focus} — {self.path} — {self.message}{value}{hint}"
