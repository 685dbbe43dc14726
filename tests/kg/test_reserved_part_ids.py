"""A part may not be called by a word an action's report uses for a field of its own (``lights``, ``path``…): its
reading and the field would be one key of the report's data, and one of them lost. A torch written here whose bulb
is called ``lights`` is refused at the line of its identifier, through ``diagkg validate`` as a user runs it."""

from __future__ import annotations

import re

import rdflib

from diagkg.env.outcomes import RESERVED_DATA_KEYS

from ..support.cli import run_cli
from ..support.paths import ROOT
from ..support.torch import TORCH

SH = rdflib.Namespace("http://www.w3.org/ns/shacl#")


def test_a_part_called_by_a_reserved_word_is_refused_where_it_is_named(tmp_path):
    renamed = re.sub(r"\bbulb\b", "lights", TORCH)
    (tmp_path / "torch.ttl").write_text(renamed)
    r = run_cli("validate", str(tmp_path / "torch.ttl"))
    line = next(n for n, text in enumerate(renamed.splitlines(), 1) if 'dcterms:identifier "lights"' in text)
    assert r.returncode == 1, r.stdout + r.stderr
    said = [x for x in r.stdout.splitlines() if "may not be one of the words" in x]
    assert said and all(f"torch.ttl:{line}:" in x for x in said), r.stdout
    (tmp_path / "torch.ttl").write_text(re.sub(r"\bbulb\b", "main_lights", TORCH))
    assert run_cli("validate", str(tmp_path / "torch.ttl")).returncode == 0


def test_the_shape_refuses_exactly_the_words_reports_use():
    shapes = rdflib.Graph().parse(ROOT / "shapes" / "system.ttl")
    words = {str(w) for refused in shapes.objects(None, SH["not"]) for listed in shapes.objects(refused, SH["in"])
             for w in rdflib.collection.Collection(shapes, listed)}
    assert words == RESERVED_DATA_KEYS
