"""The ontology's documentation, generated with pyLODE from ``ontology/*.ttl``.

A MkDocs hook (``hooks:`` in mkdocs.yml): before each build it writes
``docs/ontology/diagkg.html`` (git-ignored) from the ontology files of the
checkout, so the site always documents the ontology it ships; ``docs/ontology.md``
links to it. Run by hand::

    .venv/bin/python scripts/ontology_docs.py [OUT.html]

pyLODE (the ``dev`` extra) renders every class, property and named individual
of the one ``owl:Ontology`` the files declare together, with their labels,
comments, domains, ranges and super-classes.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ONTOLOGY = ROOT / "ontology"
OUT = ROOT / "docs" / "ontology" / "diagkg.html"


def generate(out: Path = OUT, folder: Path = ONTOLOGY) -> Path:
    """Write the pyLODE page of every ``*.ttl`` of ``folder`` (read as one graph) to ``out``."""
    import rdflib
    from pylode import OntPub

    graph = rdflib.Graph()
    for path in sorted(folder.glob("*.ttl")):
        graph.parse(path, format="turtle")
    logging.getLogger().setLevel(max(logging.getLogger().level, logging.WARNING))   # pyLODE logs at INFO
    html = OntPub(ontology=graph).make_html()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text(encoding="utf-8") != html:
        out.write_text(html, encoding="utf-8")
    return out


def on_pre_build(config: Any, **kwargs: Any) -> None:
    """MkDocs: the ontology page, before the files of docs/ are collected."""
    generate()


if __name__ == "__main__":
    print(generate(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
