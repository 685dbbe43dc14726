"""The package is laid out by layer, and the layers only import downwards.

::

    cli/         the command line (wires the layers together)
    server/      diagkg serve: SPARQL endpoint, JSON API, web page
    evaluation/  campaigns, adaptive protocol, metrics, reports
    runs/        runner, trajectories, transcripts
    agents/  assistant registry (entry points), baselines, human, neuro-symbolic, LLM
    generation/  scenarios from the fault catalogue, diagnosability, splits (beside agents)
    env/     scenarios, sessions, working memory and the assistants' view
    sim/     circuit, simulator, SPICE engine
    llm/     the LLM client, call records, replay, prompts (beside sim: neither imports the other)
    kg/      store, queries, RDF I/O, validation, reasoning, loading, vocabulary
    errors

Every import counts, at module level or inside a function, and no module takes
part in an import cycle, counting the imports made for typing only (under
``if TYPE_CHECKING:``) and the packages an import goes through (``from ..kg import
graphs`` imports ``diagkg.kg``'s ``__init__`` first). The layers are checked on the
imports that run (typing-only ones are left out there). The top-level facade
(``diagkg/__init__.py``, which imports the session API lazily when an attribute is
asked for) is the one package ``__init__`` every module goes through and is left out.
No module is longer than 600 lines, except generated ones. Assistants are plug-ins:
a package built and installed here adds one without touching diagkg.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .support.cli import DIAGKG
from .support.paths import ROOT, THREE_CUBES

PACKAGE = ROOT / "platform" / "diagkg"
LAYERS = {"errors": 0, "kg": 1, "sim": 2, "llm": 2, "env": 3, "agents": 4, "generation": 4, "runs": 5, "evaluation": 6,
          "server": 7, "cli": 8}
MAX_LINES = 600    # no module may grow past this, except generated ones (their header says GENERATED)


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None     # the package itself (its lazy facade for diagkg.make & co.)
    return LAYERS.get(parts[1])


def imports(path: Path, typing: bool = False, packages: bool = False) -> set[str]:
    """Modules of diagkg that ``path`` imports at run time (with ``typing``, for typing only too;
    with ``packages``, the subpackages whose ``__init__`` each import goes through too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    skip: set[int] = set()
    for node in ast.walk(tree):
        if not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("diagkg"):
                continue
            for alias in node.names:   # `from . import x` may name a module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if _exists(candidate) else target)
            if packages:
                found.update(_packages_of(target))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("diagkg"))
            if packages:
                found.update(p for a in node.names if a.name.startswith("diagkg") for p in _packages_of(a.name))
    found.discard(me)
    return {m for m in found if _exists(m)}


def _packages_of(module: str) -> set[str]:
    """The subpackages an import of ``module`` goes through (itself if it is one), not the top facade."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)
            if (PACKAGE / Path(*parts[1:i]) / "__init__.py").is_file()}


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def graph(typing: bool = False, packages: bool = False) -> dict[str, set[str]]:
    return {module_name(p): imports(p, typing, packages) for p in PACKAGE.rglob("*.py")}


def test_the_layout_shows_the_layers():
    packages = {p.parent.name for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE}
    # data: the declarative folders' anchor
    assert packages == {"kg", "sim", "llm", "env", "agents", "generation", "runs", "evaluation", "server", "cli", "data"}
    assert [p.name for p in (PACKAGE / "data").glob("*.py")] == ["__init__.py"]
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == {"__init__", "errors"}
    long = {module_name(p): n for p in PACKAGE.rglob("*.py")
            if (n := len((text := p.read_text(encoding="utf-8")).splitlines())) > MAX_LINES
            and "GENERATED" not in text[:300]}
    assert long == {}


def test_layers_only_import_downwards():
    upward = []
    for module, targets in graph().items():
        mine = layer_of(module)
        if mine is None:
            continue
        for target in targets:
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_import_cycles():
    g = graph(typing=True, packages=True)
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_checker_sees_function_level_and_relative_imports(tmp_path):
    # the checker itself must not be blind: a module of the package imports upwards inside a function
    store = PACKAGE / "kg" / "store.py"
    found = imports(store)
    assert "diagkg.kg.queries" in found and "diagkg.errors" in found
    runner = imports(PACKAGE / "runs" / "runner.py")
    assert "diagkg.agents.registry" in runner and "diagkg.env.service" in runner
    # typing-only imports and the packages an import goes through, when asked for
    registry = PACKAGE / "agents" / "registry.py"
    assert "diagkg.env.service" not in imports(registry) and "diagkg.env.service" in imports(registry, typing=True)
    assert "diagkg.kg" in imports(store, packages=True) and "diagkg.kg" not in found


def test_the_cycle_check_sees_a_typing_only_cycle_and_one_through_a_package(tmp_path, monkeypatch):
    # a package whose helpers import the module that imports them, for typing only, and a package
    # whose __init__ imports a submodule that imports from the package: both are cycles
    root = tmp_path / "diagkg"
    (root / "env").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "env" / "__init__.py").write_text("")
    (root / "env" / "service.py").write_text("from . import helper\n")
    (root / "env" / "helper.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                            "    from .service import Session\n")
    (root / "cli").mkdir()
    (root / "cli" / "__init__.py").write_text("from . import run\n")
    (root / "cli" / "run.py").write_text("from .output import x\n")
    (root / "cli" / "output.py").write_text("x = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", root)
    assert "diagkg.env.service" not in imports(root / "env" / "helper.py")
    assert "diagkg.env.service" in imports(root / "env" / "helper.py", typing=True)
    assert "diagkg.cli" in imports(root / "cli" / "run.py", packages=True)
    g = graph(typing=True, packages=True)
    assert "diagkg.cli" in g["diagkg.cli.run"] and "diagkg.cli.run" in g["diagkg.cli"]
    assert "diagkg.env.helper" in g["diagkg.env.service"] and "diagkg.env.service" in g["diagkg.env.helper"]


# ---------------------------------------------------------------------------
# assistants as plug-ins
# ---------------------------------------------------------------------------

PLUGIN = textwrap.dedent('''
    """A plug-in assistant: names the first part of the system it is told about, then gives up."""
    from diagkg.agents.registry import BaseAssistant
    from diagkg.env.service import Hypothesis


    class FirstPart(BaseAssistant):
        name = "first-part"

        def setup(self, briefing):
            super().setup(briefing)
            self.left = [sorted(briefing.parts)[0]]

        def suggest(self):
            return Hypothesis(self.left[:1], "the first part, by name") if self.left and not self.outcomes else None
''')

PYPROJECT = textwrap.dedent('''
    [build-system]
    requires = ["setuptools>=61"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "diagkg-first-part"
    version = "0.1"

    [project.entry-points."diagkg.assistants"]
    first-part = "diagkg_first_part:FirstPart"

    [tool.setuptools]
    py-modules = ["diagkg_first_part"]
''')


@pytest.mark.slow
def test_a_plugin_package_adds_an_assistant(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "diagkg_first_part.py").write_text(PLUGIN)
    wheels = tmp_path / "wheels"
    # built with the setuptools of the environment (scripts/setup.sh installs it): an isolated build made a fresh
    # environment and installed setuptools into it first, most of this test's time; the wheel and its entry point
    # are the same
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(wheels), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (wheel,) = wheels.glob("diagkg_first_part-*.whl")
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, PYTHONPATH=str(site), COLUMNS="200")
    cmd = [*DIAGKG, "--store", str(tmp_path / "store")]
    r = subprocess.run([*cmd, "run", "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert "first-part" in r.stdout
    # the system and the one scenario run (the store then holds 3CC.S.1: the run does not bring in the whole shipped
    # catalogue, five systems and 135 scenarios, to find it)
    scenario = ROOT / "scenarios" / "catalog" / "001-3CC.S.1.ttl"
    assert subprocess.run([*cmd, "load", str(THREE_CUBES), str(scenario)], capture_output=True, env=env,
                          timeout=120).returncode == 0
    r = subprocess.run([*cmd, "run", "--scenario", "3CC.S.1", "--assistant", "first-part", "--format", "json"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["assistant"] == "first-part" and result["rounds"] == 1
    # without the package, the name is unknown, with a clear message
    r = subprocess.run([*cmd, "run", "--scenario", "3CC.S.1", "--assistant", "first-part"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "no assistant named 'first-part'" in r.stderr
