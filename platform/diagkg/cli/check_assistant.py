"""``diagkg check-assistant NAME``: an assistant run through the session contract's edge cases
(:mod:`diagkg.runs.conformance` does the checking; this module only parses and prints).

Exit 0 when every required check passes, 1 when one fails, 2 for an unknown name or a
configuration the assistant does not take. :func:`add_parsers` adds the subcommand to the
``diagkg`` parser; ``python -m diagkg.cli.check_assistant NAME …`` runs it on its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Callable, Sequence

from .. import errors
from .output import EXIT_INPUT, EXIT_OK, EXIT_VIOLATIONS, is_file_ref, json_config, open_store, say, scenario_ref

if TYPE_CHECKING:  # pragma: no cover
    from ..runs.conformance import Report

HELP = ("Check an assistant against the session contract: run it (a name, an installed plug-in, or exec:COMMAND) "
        "through the contract's edge cases on a torch written in the check and a shipped scenario; each check "
        "passes or fails with its reason (exit 1 if a required one fails).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assistant", metavar="NAME",
                   help="the assistant's name (see `diagkg run --help`), or exec:COMMAND for a program of its own")
    p.add_argument("--config", metavar="JSON", help="the assistant's configuration as a JSON object")
    p.add_argument("--scenario", metavar="N|ID|FILE",
                   help="the scenario checked besides the torch (default 3CC.S.1): a shipped one, one of the store "
                        "in use, or a scenario file (loaded into the check's own store, never the store in use)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def add_parsers(add: Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]) -> None:
    """Register the subcommand (to be called by :func:`diagkg.cli.build_parser`, as the others are)."""
    add_arguments(add("check-assistant", cmd_check_assistant, HELP))


def _check(args: argparse.Namespace, config: dict[str, object]) -> Report:
    from ..runs import hosting
    from ..runs.conformance import check_assistant, fixture_store

    hosting.check(args.assistant)          # an unknown name: exit 2 before anything runs
    if args.scenario is None:
        return check_assistant(args.assistant, config, notify=say)
    if is_file_ref(args.scenario):
        own = fixture_store(shared=False, with_torch=False)     # the user's file only: no number of the torch's
        return check_assistant(args.assistant, config, scenario=scenario_ref(args, own), store=own, notify=say)
    try:                                    # a shipped scenario: the check's own store holds it
        return check_assistant(args.assistant, config, scenario=args.scenario, notify=say)
    except errors.UnknownTermError:
        with open_store(args, write=True) as store:     # one of the store in use (the shipped catalogue loaded)
            return check_assistant(args.assistant, config, scenario=args.scenario, store=store, notify=say)


def cmd_check_assistant(args: argparse.Namespace) -> int:
    report = _check(args, json_config(args.config))
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        for finding in report.findings:
            print(finding)
        bad, warned = len(report.failures), len(report.warnings)
        print(f"{report.assistant}: {'conforms' if report.passed else 'does not conform'} "
              f"({len(report.findings)} checks: {bad} failed, {warned} warning(s))", file=sys.stderr)
    return EXIT_OK if report.passed else EXIT_VIOLATIONS


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m diagkg.cli.check_assistant``: the subcommand on its own, with the global store options."""
    from ..kg.store import DEFAULT_WAIT

    parser = argparse.ArgumentParser(prog="diagkg check-assistant", description=HELP)
    parser.add_argument("--store", metavar="PATH|URL", help="the store in use (as diagkg --store)")
    parser.add_argument("--memory", action="store_true", help="a throw-away in-memory store")
    parser.add_argument("--wait", type=float, default=DEFAULT_WAIT, metavar="SECONDS")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return cmd_check_assistant(args)
    except errors.DiagkgError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":  # pragma: no cover - run as a program
    raise SystemExit(main())
