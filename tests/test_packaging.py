"""The built wheel carries the declarative folders, found by package name."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .support.paths import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # built with the setuptools of the environment (scripts/setup.sh installs the version pyproject.toml asks for): an
    # isolated build first installed setuptools into a fresh environment, most of the fixture's time
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    # a folder of the package that setuptools would ship only by accident: a 40-line warning in every setup
    assert "is absent from the `packages` configuration" not in r.stdout + r.stderr, r.stderr
    (whl,) = out.glob("diagkg-*.whl")
    return whl


def test_wheel_contains_declarative_folders(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "diagkg/cli/__init__.py", "diagkg/cli/sessions.py", "diagkg/kg/vocab.py", "diagkg/kg/store.py", "diagkg/sim/simulator.py",
        "diagkg/env/service.py", "diagkg/agents/neurosymbolic.py", "diagkg/runs/runner.py",
        "diagkg/llm/prompts/classify-symptoms.j2", "diagkg/llm/prompts/assistant-system.j2", "diagkg/templates/transcript.html.j2",
        "diagkg/server/static/index.html", "diagkg/server/static/app.js", "diagkg/server/static/app.css",
        "diagkg/data/ontology/diagkg.ttl", "diagkg/data/ontology/external.ttl",
        "diagkg/data/shapes/system.ttl",
        "diagkg/data/queries/graph-summary.rq", "diagkg/data/queries/set-label.ru.j2",
        "diagkg/data/scenarios/systems/three_cubes.ttl",
        "diagkg/data/scenarios/systems/three_cubes.ttl.j2",
        "diagkg/data/scenarios/systems/modules/modules.ttl.j2",
        "diagkg/data/schemas/briefing.schema.json", "diagkg/data/schemas/reply.schema.json",
    }
    assert expected - names == set()
    assert not any(n.startswith("platform/") for n in names), "platform/ must never be a package"
    # every module of the package is shipped
    for f in (ROOT / "platform" / "diagkg").rglob("*.py"):
        rel = f.relative_to(ROOT / "platform").as_posix()
        assert rel in names, f"{rel} is missing from the wheel"
    # every source file of the repository's declarative folders is shipped
    for folder in ("ontology", "shapes", "queries", "mappings", "scenarios", "schemas"):
        for f in (ROOT / folder).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                rel = f.relative_to(ROOT).as_posix()
                assert f"diagkg/data/{rel}" in names, f"{rel} is missing from the wheel"


def test_unpacked_wheel_finds_resources_by_name(wheel, tmp_path):
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "import diagkg, diagkg.kg.resources as r, diagkg.kg.validation as v, pathlib;"
        "p = pathlib.Path(str(r.folder('ontology')));"
        f"assert str(p).startswith({str(tmp_path)!r}), p;"
        "f = [x for x in r.system_files() if x.name == 'three_cubes.ttl'][0];"
        "rep = v.Validator().validate_file(pathlib.Path(str(f)));"
        "assert rep.conforms, rep.violations;"
        "import diagkg.env.contract as c; assert c.validator('reply').is_valid({'kind': 'stop'});"
        "print('ok', diagkg.__file__)"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok " + str(tmp_path))


def test_platform_is_not_a_package():
    assert not (ROOT / "platform" / "__init__.py").exists()
    import platform

    assert hasattr(platform, "python_version"), "the standard library's platform module must win"
