"""What every subcommand shares: exit codes, the store in use, tables,
progress, one-line notes."""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from .. import errors
from ..kg.store import KnowledgeStore

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console
    from rich.progress import TaskID

    from ..kg.loading import Progress as ProgressCallback

EXIT_OK, EXIT_VIOLATIONS, EXIT_INPUT, EXIT_STORE = 0, 1, 2, 3


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def print_table(columns: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None) -> None:
    """A table: drawn by rich on a terminal (long values fold onto more lines,
    never cut); plain aligned columns, one row per line, anywhere else."""
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    if not sys.stdout.isatty():
        widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
        if title:
            print(title)
        for row in [list(columns), ["-" * w for w in widths], *cells]:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
        return
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in cells:
        table.add_row(*row)
    console().print(table)


def say(message: str) -> None:
    """A one-line note on standard error (library code reports through callbacks)."""
    print(f"note: {message}", file=sys.stderr, flush=True)


def open_store(args: argparse.Namespace, *, write: bool) -> KnowledgeStore:
    """The store in use. No command holds the write lock longer than one write:
    ``write`` only says whether the command may write at all."""
    from ..kg.remote import connect  # an http(s):// --store is a SPARQL 1.1 server

    return connect(args.store, read_only=not write, in_memory=args.memory, wait=args.wait, on_wait=say)


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[ProgressCallback | None]:
    """A progress display on standard error; yields a ``(stage, done, total)`` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not enabled:
        yield None
        return
    with Progress(TextColumn("{task.description:>22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console(stderr=True), transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            name = stage.split(" (", 1)[0]
            if name not in tasks:
                tasks[name] = bar.add_task(stage, total=total)
            bar.update(tasks[name], description=stage, completed=done, total=total)

        yield update


def is_file_ref(ref: str) -> bool:
    from ..env.workspace import is_file_ref as names_a_file

    return names_a_file(ref)


def scenario_ref(args: argparse.Namespace, store: KnowledgeStore) -> str:
    """``--scenario N|ID|FILE.ttl``: a file is validated against the store, loaded, and named by its id."""
    from ..env.workspace import load_scenario_file

    ref: str = args.scenario
    if not is_file_ref(ref):
        return ref
    with progress_bar(sys.stderr.isatty()) as progress:
        sid, report = load_scenario_file(store, ref, replace=getattr(args, "replace", False), progress=progress,
                                         notify=say)
    for line in (*report.notes, *report.replaced):
        say(line)
    say(f"loaded {ref} into <{report.loaded[0].graph}>")
    return sid


def seed(text: str) -> int:
    """The value of a ``--seed`` option: a whole number, 0 or more (Python's random draws the same from -5
    as from 5, so a negative seed would repeat another under a name of its own)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, 0 or more, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, 0 or more, not {value}")
    return value


def json_config(text: str | None) -> dict[str, Any]:
    """The value of a ``--config`` option: a JSON object (empty when not given)."""
    import json

    if not text:
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise errors.InputError(f"--config is not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(config, dict):
        raise errors.InputError("--config must be a JSON object")
    return config
