"""``diagkg optimum``: the optimal policy of a system, worked out and stored (:mod:`diagkg.evaluation.optimum`)."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Callable

from .. import errors
from .output import EXIT_OK, open_store, progress_bar, say
from .output import seed as seed_arg


def add_parsers(add: Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]) -> None:
    """Register the subcommand (called by :func:`diagkg.cli.build_parser`)."""
    p = add("optimum", cmd_optimum,
            "Work out the optimal policy of a system over its stored scenarios as a uniform prior (the least "
            "expected cost of ending in success), store it in the graph optimum/KEY, and print its cost and bounds.")
    p.add_argument("system", metavar="SYSTEM", help="the system key (e.g. three_cubes)")
    p.add_argument("--scenarios", nargs="+", metavar="SEL",
                   help="the prior: 1,2,5-9 | category:NAME | scenario ids (default: every stored scenario of SYSTEM)")
    p.add_argument("--time-limit", type=float, default=600.0, metavar="SECONDS",
                   help="bound on the whole command (default 600); where it stops the search, a proven lower bound "
                        "and the cost of the completed policy (an upper bound) are reported")
    p.add_argument("--seed", type=seed_arg, default=0, help="the seed the shadow sessions start with (default 0)")
    p.add_argument("--repeats", type=int, default=2, metavar="N",
                   help="reports in a row that only reweigh the scenarios (a loose connection seen on) the policy may "
                        "follow (default 2)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="json: one JSON line last, with expected_cost, lower, upper and exact (minutes)")


def cmd_optimum(args: argparse.Namespace) -> int:
    from ..evaluation import optimum

    started = time.monotonic()
    if args.time_limit <= 0:
        raise errors.InputError("--time-limit must be positive")
    if args.repeats < 0:
        raise errors.InputError("--repeats must be 0 or more")
    with open_store(args, write=True) as store:
        chosen = optimum.scenarios_of(store, args.system, args.scenarios)
        with progress_bar(sys.stderr.isatty()) as progress:     # the lower bound, seconds against the limit
            result = optimum.solve(store, args.system, scenarios=chosen, time_limit=args.time_limit, seed=args.seed,
                                   repeats=args.repeats, started=started, notify=say, progress=progress)
        graph = optimum.store_optimum(store, result)
    data = result.to_json()
    data["graph"] = graph.value
    if args.format == "json":
        print(json.dumps(data))
        return EXIT_OK

    def minutes(x: float | None) -> str:
        return "–" if x is None or not math.isfinite(x) else f"{x:.1f}"

    if result.exact:
        head = f"{minutes(result.expected_cost)} min, exact"
    else:
        head = f"between {minutes(result.lower)} and {minutes(result.upper)} min (the stored policy costs the upper)"
    print(f"optimum of {args.system} over {len(result.scenarios)} scenario(s): {head}; perfect information "
          f"{minutes(result.perfect_information)} min, oracle {minutes(result.oracle)} min "
          f"({result.expanded} beliefs expanded in {result.seconds:.1f} s); stored in {graph.value}")
    for s in result.scenarios:
        print(f"  {s.id}: {minutes(s.expected)} min (perfect information {minutes(s.perfect)}, "
              f"oracle {minutes(s.oracle)})")
    return EXIT_OK
