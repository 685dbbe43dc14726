"""The documentation names only what exists.

README.md and every page of docs/ are scanned for:

* dotted names ``diagkg.x.y[.z]`` (and ``from diagkg.x import a, b`` in code): each must be an
  importable module or an attribute of one (a class's dataclass fields and annotations count);
* ``diagkg [GLOBAL OPTIONS] COMMAND [SUBCOMMAND] … --option`` in code spans and shell blocks: the
  command, the subcommand and each option must exist in the parser ``diagkg.cli.build_parser``
  builds (asked directly, no subprocess); ``diagkg query NAME`` / ``update NAME`` must name a
  file of ``queries/``, as must every ``queries/NAME.rq`` path;
* a code span that is only an option (`` `--resume RUN` ``): some command (or a script of
  ``scripts/`` or ``benchmarks/``) must have it;
* relative links of the README: the file must exist.

The checker itself is tested on a page with a misspelling of each kind. Besides, the README's
command table names every subcommand, and docs/cli.md documents every option of each.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from diagkg.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CLI_PAGE = ROOT / "docs" / "cli.md"
README_MAX_LINES = 250

# a dotted name that is not inside a path (ontology/diagkg.ttl) or a longer word
DOTTED = re.compile(r"(?<![\w./-])diagkg(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"^\s*from\s+(diagkg(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n]+)", re.MULTILINE)
FILE_SUFFIXES = {"ttl", "rq", "ru", "j2", "py", "md", "csv", "nq", "gz", "html", "yml", "yaml", "toml", "json", "png",
                 "svg", "txt", "js", "css"}
# dotted names that are not Python: the entry-point group of plug-in assistants
NOT_PYTHON = {"diagkg.assistants"}

CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w-]*)")
SHELL_LANGUAGES = {"", "sh", "bash", "shell", "console"}     # ```text holds output, not commands
# `diagkg` as a command word: at the start, after a separator or a path (.venv/bin/diagkg)
COMMAND = re.compile(r"(?:^|(?<=[\s;&|(/]))diagkg(?=\s)")
# where one command ends: ; && || | > & # (with spaces around, so <RUN> and table\|csv stay)
SEPARATOR = re.compile(r"\s(?:;|&&|\|\||\||>|&)(?=\s|$)|\s#")
TOKEN = re.compile(r"'[^']*'?|\"[^\"]*\"?|\S+")
WORD = re.compile(r"[a-z][a-z0-9-]*")
OPTION = re.compile(r"^[\[(]*(--?[A-Za-z][\w-]*)")
QUERY_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
QUERY_PATH = re.compile(r"(?<![\w/.-])queries/([\w-]+\.(?:rq|ru)(?:\.j2)?)\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def doc_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


# --- what exists ---------------------------------------------------------------------------------

def resolves(name: str) -> bool:
    """Whether ``name`` is an importable module, or an attribute of one."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module_name = ".".join(parts[:i])
        try:
            obj: object = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name != exc.name and not module_name.startswith(exc.name + "."):
                raise       # a dependency missing: the environment's problem, not the page's
            continue
        for attr in parts[i:]:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif isinstance(obj, type) and (attr in getattr(obj, "__annotations__", {}) or
                                            (dataclasses.is_dataclass(obj) and attr in obj.__dataclass_fields__)):
                return True     # a field: its value lives on instances
            else:
                return False
        return True
    return False


@dataclasses.dataclass(frozen=True)
class Command:
    """One subcommand: its options, and its own subcommands (``diagkg llm serve-local``)."""

    options: frozenset[str]
    children: dict[str, "Command"]

    def all_options(self) -> frozenset[str]:
        return self.options.union(*(c.all_options() for c in self.children.values()))


def _command(parser: argparse.ArgumentParser) -> Command:
    options: set[str] = set()
    children: dict[str, Command] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            children.update({name: _command(p) for name, p in action.choices.items()})
        else:
            options.update(action.option_strings)
    return Command(frozenset(options), children)


@cache
def cli() -> Command:
    return _command(build_parser())


GLOBAL_WITH_VALUE = {"--store", "--wait"}


@cache
def other_options() -> frozenset[str]:
    """Options of the scripts and benchmarks, which the pages may name in a code span of their own."""
    found: set[str] = set()
    for path in [*(ROOT / "scripts").glob("*.sh"), *(ROOT / "benchmarks").glob("*.py")]:
        found.update(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", path.read_text(encoding="utf-8")))
    return frozenset(found)


def query_exists(name: str) -> bool:
    return any((ROOT / "queries").glob(f"{name}.r[qu]*"))


# --- what the pages say --------------------------------------------------------------------------

def code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every code span outside fences and of every line of a shell block
    (a line continued with a backslash is joined to the next)."""
    lines = text.splitlines()
    fence: str | None = None
    shell = False
    pending: tuple[int, str] | None = None
    for number, line in enumerate(lines, 1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence, shell = opening.group(2), opening.group(3).lower() in SHELL_LANGUAGES
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
                continue
            if shell:
                start, before = pending if pending else (number, "")
                if line.rstrip().endswith("\\"):
                    pending = (start, before + line.rstrip()[:-1] + " ")
                else:
                    pending = None
                    yield start, before + line
            continue
        for span in CODE_SPAN.finditer(line):
            yield number, span.group(1)


def command_problems(text: str) -> Iterator[tuple[int, str]]:
    """Unknown commands, subcommands, options and query names in the ``diagkg …`` command lines."""
    root = cli()
    for number, code in code_lines(text):
        stripped = code.strip()
        if stripped.startswith("--") and not COMMAND.search(code):
            for token in TOKEN.findall(stripped):
                option = OPTION.match(token)
                if option and option.group(1).startswith("--") and \
                        option.group(1) not in root.all_options() | other_options():
                    yield number, f"no command has the option {option.group(1)}"
            continue
        for match in COMMAND.finditer(code):
            segment = SEPARATOR.split(code[match.end():], maxsplit=1)[0]
            yield from ((number, p) for p in _check_command(TOKEN.findall(segment), root))


def _check_command(tokens: list[str], root: Command) -> Iterator[str]:
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        option = tokens[i].split("=")[0]
        takes_value = option in GLOBAL_WITH_VALUE
        if option not in root.options:
            yield f"diagkg has no global option {option}"
            takes_value = i + 1 < len(tokens) and tokens[i + 1] not in root.children
        i += 2 if takes_value and "=" not in tokens[i] else 1
    if i == len(tokens) or not WORD.fullmatch(tokens[i]):
        return      # `diagkg --help`, or a placeholder such as COMMAND or <cmd>
    name, command = tokens[i], root.children.get(tokens[i])
    if command is None:
        yield f"diagkg has no command {name!r}"
        return
    rest = tokens[i + 1:]
    if command.children and rest and WORD.fullmatch(rest[0]):
        child = command.children.get(rest[0])
        if child is None:
            yield f"diagkg {name} has no subcommand {rest[0]!r}"
            return
        name, command, rest = f"{name} {rest[0]}", child, rest[1:]
    for token in rest:
        option = OPTION.match(token)
        if option and not token.startswith(("'", '"')) and option.group(1) not in command.options:
            yield f"diagkg {name} has no option {option.group(1)}"
    if name in ("query", "update"):
        positional = next((t for t in rest if not t.startswith("-")), None)
        if positional and QUERY_NAME.fullmatch(positional) and not query_exists(positional):
            yield f"no query named {positional!r} in queries/"


def name_problems(text: str) -> Iterator[tuple[int, str]]:
    """Dotted ``diagkg.…`` names and ``from diagkg… import …`` names that do not exist."""
    for number, line in enumerate(text.splitlines(), 1):
        for match in DOTTED.finditer(line):
            name = match.group(0)
            if name in NOT_PYTHON or name.rsplit(".", 1)[1] in FILE_SUFFIXES:
                continue
            if not resolves(name):
                yield number, f"{name} is neither a module nor a name of one"
        for path in QUERY_PATH.findall(line):
            if not (ROOT / "queries" / path).is_file():
                yield number, f"queries/{path} does not exist"
    for match in FROM_IMPORT.finditer(text):
        number = text.count("\n", 0, match.start()) + 1
        names = re.sub(r"#.*", "", match.group(2)).strip("() \n")
        for imported in (n.strip() for n in names.split(",")):
            if imported and not resolves(f"{match.group(1)}.{imported}"):
                yield number, f"{match.group(1)} has no {imported}"


def link_problems(path: Path, text: str) -> Iterator[tuple[int, str]]:
    """Relative links whose file does not exist (MkDocs checks those of docs/ itself)."""
    for number, line in enumerate(text.splitlines(), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:|#", target):
                continue
            if not (path.parent / target.split("#")[0]).exists():
                yield number, f"the link {target} leads nowhere"


def problems(path: Path, *, links: bool = False) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [*name_problems(text), *command_problems(text), *(link_problems(path, text) if links else ())]
    return [f"{path.name}:{number}: {message}" for number, message in sorted(found)]


# --- the tests -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_name_command_and_option_a_page_mentions_exists(path: Path) -> None:
    assert problems(path, links=path == README) == []


def test_the_checker_reports_each_kind_of_misspelling(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n"
        "The store is `diagkg.kg.stroe.KnowledgeStore`; sessions see a diagkg.env.workspace.KnowledgeViwe.\n"
        "```python\nfrom diagkg.kg.loading import load_files, load_shiped\n```\n"
        "```sh\n"
        "diagkg evalute --assistant oracle\n"
        "diagkg --stor /tmp/s run --scenaro 3 \\\n    --assistant oracle\n"
        "diagkg llm serve-locl\n"
        "diagkg query trajectory-lst   # a comment --not-an-option\n"
        "```\n"
        "Resume with `--resum RUN`; see `queries/trajectory-lst.rq` and [the CLI](docs/nope.md).\n",
        encoding="utf-8")
    assert problems(page, links=True) == [
        "page.md:2: diagkg.env.workspace.KnowledgeViwe is neither a module nor a name of one",
        "page.md:2: diagkg.kg.stroe.KnowledgeStore is neither a module nor a name of one",
        "page.md:4: diagkg.kg.loading has no load_shiped",
        "page.md:7: diagkg has no command 'evalute'",
        "page.md:8: diagkg has no global option --stor",
        "page.md:8: diagkg run has no option --scenaro",
        "page.md:10: diagkg llm has no subcommand 'serve-locl'",
        "page.md:11: no query named 'trajectory-lst' in queries/",
        "page.md:13: no command has the option --resum",
        "page.md:13: queries/trajectory-lst.rq does not exist",
        "page.md:13: the link docs/nope.md leads nowhere",
    ]


def test_the_checker_accepts_what_exists(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "`diagkg.kg.store.KnowledgeStore`, `diagkg.make`, diagkg.agents.registry.Briefing.system, "
        "`ontology/diagkg.ttl`, the `diagkg.assistants` group.\n"
        "`diagkg --store http://127.0.0.1:7878 --memory run --scenario 3 --assistant oracle [--seed S]` and "
        "`diagkg remove GRAPH... \\| --scenario ID \\| --campaign ID [--yes]`\n"
        "```sh\nDIAGKG_TOKEN=x .venv/bin/diagkg serve --port 8080 --token T &\n"
        "diagkg export RUN > run.nq.gz ; diagkg --store other import run.nq.gz\n"
        "diagkg query 'SELECT * WHERE { ?s ?p ?o } # --x' --format csv\n"
        "diagkg llm serve-local --port 8011\ndiagkg query queries/system-components.rq -p system=<x>\n```\n"
        "`--retry-failed`, `--no-ledger` (a benchmark's), `diagkg <command> --help`, `diagkg COMMAND`.\n",
        encoding="utf-8")
    assert problems(page, links=True) == []


def test_the_readme_is_short_and_lists_every_command() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    table = [line for line in text.splitlines() if line.startswith("| `diagkg ")]
    for name in cli().children:
        assert any(f"`diagkg {name} " in row or f"`diagkg {name}`" in row for row in table), \
            f"the README's command table has no row for `diagkg {name}`"


def test_the_command_line_page_documents_every_option_of_every_command() -> None:
    text = CLI_PAGE.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### diagkg ([a-z-]+)\n(.*?)(?=^#{1,3} |\Z)", text, re.MULTILINE | re.DOTALL))
    for name, command in cli().children.items():
        assert name in sections, f"docs/cli.md has no section '### diagkg {name}'"
        named = set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", sections[name]))
        missing = sorted(command.all_options() - named - {"-h", "--help"})
        assert not missing, f"docs/cli.md, '### diagkg {name}': document {', '.join(missing)}"
