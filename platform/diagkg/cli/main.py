"""The ``diagkg`` command line.

Exit codes (the same for every subcommand):

== ==========================================================
0  success
1  the input was read but does not conform to the shapes
2  unreadable input, unknown name, bad query or bad usage
3  the store cannot be used (e.g. locked by another writer)
== ==========================================================

Library code raises :mod:`diagkg.errors`; this module alone prints and exits.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

from .. import __version__, errors
from ..kg.store import DEFAULT_WAIT, default_store_path
from . import check, check_assistant, evaluate, generation, knowledge, serve, sessions
from . import llm as llm_cli
from . import mcp as mcp_cli
from . import optimum as optimum_cli
from .output import EXIT_INPUT, EXIT_OK, EXIT_STORE, EXIT_VIOLATIONS
from .output import seed as seed_arg

__all__ = ["EXIT_INPUT", "EXIT_OK", "EXIT_STORE", "EXIT_VIOLATIONS", "build_parser", "main"]


class _Help(argparse.HelpFormatter):
    """Help that lists the installed assistants, read only when help is shown
    (reading every package's entry points costs more than some commands)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if action.dest == "assistant" and text:
            from ..agents.registry import names

            text += "; installed: " + ", ".join(names())
        return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="diagkg",
        description="diagkg: diagnostic scenarios and assistants on a knowledge graph (RDF, SHACL, SPARQL).",
        epilog="Exit codes: 0 ok, 1 SHACL violations, 2 bad input/query/usage, 3 store unusable.",
    )
    parser.add_argument("--version", action="version", version=f"diagkg {__version__}")
    parser.add_argument("--store", metavar="PATH|URL",
                        help=f"on-disk store to use (default: $DIAGKG_STORE or {default_store_path()}), or the "
                             "http(s):// URL of a SPARQL 1.1 server, e.g. oxigraph serve")
    parser.add_argument("--memory", action="store_true", help="use a throw-away in-memory store")
    parser.add_argument("--wait", type=float, default=DEFAULT_WAIT, metavar="SECONDS",
                        help=f"how long a write waits for another process writing the store "
                             f"(default {DEFAULT_WAIT:g}); then exit 3")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_, formatter_class=_Help)
        p.set_defaults(func=func)
        return p

    p = add("validate", knowledge.cmd_validate, "Validate RDF files or folders against the SHACL shapes.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, or folders searched recursively")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--record", action="store_true",
                   help="also keep the report in the store: a SHACL sh:ValidationReport with its provenance "
                        "(files, content hashes, shapes, validator, times) in a validation/… graph")

    p = add("load", knowledge.cmd_load, "Validate RDF files in the context of the store, then load them (all or nothing).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files, or folders searched recursively")
    p.add_argument("--shipped", action="store_true", help="load the shipped systems and scenarios")
    p.add_argument("--replace", action="store_true",
                   help="replace what a different file loaded before under the same identifier, number or IRI "
                        "(says what it replaced; keep a copy first with `diagkg dump`)")
    p.add_argument("--graph", metavar="IRI", help="load one file into this named graph instead of the conventional one")

    p = add("dump", knowledge.cmd_dump, "Export named graphs (all by default) as N-Quads; `load` puts a dump's graphs back.")
    p.add_argument("graphs", nargs="*", metavar="GRAPH", help="graph IRIs (see `diagkg graphs`)")
    p.add_argument("--out", metavar="FILE.nq", help="write to FILE instead of standard output")

    p = add("query", knowledge.cmd_query, "Run a read-only SPARQL query: a file, a query name from queries/, or inline text.")
    p.add_argument("query", help="path to a .rq file, a name (see `diagkg queries`), or SPARQL text")
    p.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                   help="bind an input: <iri> or scheme://… for IRIs, anything else is a literal")
    p.add_argument("--format", choices=("table", "csv", "tsv", "json", "turtle", "ntriples"), default=None,
                   help="SELECT/ASK: table (default), csv, tsv, json; CONSTRUCT/DESCRIBE: turtle (default), ntriples or "
                        "json (JSON-LD); a format the query's form has not is refused (exit 2)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop the query after this many seconds (exit 2); default, and 0: no limit (Ctrl-C stops it)")

    p = add("update", knowledge.cmd_update, "Run a SPARQL update (a .ru file, a name, or text) and say what it changed; "
            "the system, scenario and file graphs it changes are validated again (all or nothing), get a new "
            "version, and a system's inferences follow.")
    p.add_argument("update", metavar="UPDATE", help="path to a .ru file, an update name from queries/, or SPARQL text")
    p.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                   help="bind an input: <iri> or scheme://… for IRIs, anything else is a literal")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop the update (nothing written, exit 2) when working it out takes longer "
                        "(default 300; 0: no limit)")

    p = add("remove", knowledge.cmd_remove, "Remove named graphs: a scenario, a trajectory, a campaign, or graphs by name.")
    p.add_argument("graphs", nargs="*", metavar="GRAPH",
                   help="graph IRIs, or their names after the graph base (e.g. scenario/3CC.S.1)")
    p.add_argument("--scenario", action="append", metavar="ID", help="the graph of this scenario (number or id)")
    p.add_argument("--trajectory", action="append", metavar="ID", help="a trajectory (IRI or id)")
    p.add_argument("--campaign", action="append", metavar="ID", help="an evaluation campaign's graph")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation (needed without a terminal)")

    p = add("graphs", knowledge.cmd_graphs, "List the named graphs of the store with their triple counts.")
    p.add_argument("--format", choices=("table", "json"), default="table")

    add("queries", knowledge.cmd_queries, "List the query files shipped in queries/.")

    add("compact", knowledge.cmd_compact,
        "Compact the on-disk store's files (reads get faster after many writes; a campaign that grew the store "
        "by a fifth does it at its end); holds the write lock while it works, changes no quad.")

    p = add("build-systems", knowledge.cmd_build_systems,
            "Regenerate the shipped system Turtle files from their templates.")
    p.add_argument("--check", action="store_true", help="only report files that are out of date (exit 1 if any)")
    p.add_argument("--out", metavar="DIR", help="write into DIR instead of scenarios/systems/")

    p = add("reason", knowledge.cmd_reason, "Run the OWL reasoner on a loaded system; store the result in inferred/{key}.")
    p.add_argument("system", metavar="KEY", help="system key, e.g. three_cubes")
    p.add_argument("--engine", choices=("auto", "hermit", "owlrl"), default="auto",
                   help="HermiT through owlready2 (needs Java) or OWL-RL rules; auto picks HermiT when Java is there")

    p = add("check", check.cmd_check, "Check scenarios by simulation: the faults show, the ideal repair works, "
                                      "hypotheses are judged right, the stated symptoms agree (exit 1 if not).")
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO",
                   help="scenario files or folders of them, searched recursively (validated and checked in a "
                        "scratch copy of the store's knowledge), or scenarios of the store: numbers, ids, or all")
    p.add_argument("--seeds", type=int, default=8, help="seeds to try when a fault is intermittent (default 8)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--verbose", action="store_true", help="also list the checks that pass")

    p = add("simulate", sessions.cmd_simulate,
            "Simulate a system (DC operating point with ngspice): lights, convergence, voltages, currents.")
    p.add_argument("system", metavar="SYSTEM", nargs="?",
                   help="system key: three_cubes, ten_cubes, asymmetric_chains, ambient_light_sensor, "
                        "current_sensor, or the key of any system loaded into the store; or a system file, "
                        "validated and simulated in a scratch copy of the store")
    p.add_argument("--scenario", metavar="N|ID|FILE",
                   help="simulate the state right after this scenario's faults are injected (a scenario of the "
                        "store, or a scenario file, validated and loaded first)")
    p.add_argument("--state", metavar="FILE.ttl", help="a circuit state in Turtle (faults, positions…)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed for loose connections (default 0)")
    p.add_argument("--record", action="store_true",
                   help="also store the result as SOSA observations in a simulation/… graph")
    p.add_argument("--netlist", action="store_true", help="print the SPICE netlist instead of solving")
    p.add_argument("--engine", choices=("ngspice", "pyspice"), default="ngspice",
                   help="ngspice (default): the fast engine, ngspice's library through ctypes; pyspice: the same "
                        "circuit built and solved through PySpice's own API in a child process, a slower "
                        "cross-check that prints the same output")

    p = add("run", sessions.cmd_run, "Run a diagnostic session: an assistant on a scenario; stores the trajectory.")
    p.add_argument("--scenario", metavar="N|ID|FILE",
                   help="a scenario of the store by number or id (e.g. 3CC.S.1), or a scenario file, "
                        "validated against the store's systems and loaded first")
    p.add_argument("--replace", action="store_true", help="with a FILE: replace a stored scenario it collides with")
    p.add_argument("--assistant", metavar="NAME", help="the assistant's name (e.g. llm, neuro-symbolic, oracle), or "
                   "exec:COMMAND for a program of its own speaking the assistant protocol (docs/assistant-protocol.md)")
    p.add_argument("--service", choices=("deterministic", "llm"), default="deterministic",
                   help="the service agent: deterministic (default) or llm (maps free-text instructions to actions)")
    p.add_argument("--replay", metavar="TRAJECTORY",
                   help="run a stored session again, answering every language-model call from its record "
                        "(no endpoint needed); takes the scenario, assistant, seed and budget from it")
    p.add_argument("--cost-limit", type=float, metavar="MONEY",
                   help="stop the session before its language-model calls cost more than this (needs a pricing table)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed for loose connections and random assistants")
    p.add_argument("--budget", type=int, metavar="ROUNDS", help="override the scenario's action budget")
    p.add_argument("--config", metavar="JSON", help="assistant configuration as a JSON object")
    p.add_argument("--format", choices=("text", "json"), default="text")

    llm_cli.register(sub, add)

    p = add("transcript", sessions.cmd_transcript, "Render a stored trajectory as an HTML chat transcript (or JSON).")
    p.add_argument("trajectory", metavar="TRAJECTORY", help="trajectory IRI (see `diagkg query trajectory-list`)")
    p.add_argument("--format", choices=("html", "json"), default="html")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")

    p = add("demo", sessions.cmd_demo, "The main job: validate and load every shipped system and scenario, reason, "
                              "run a diagnostic session, and summarise the store.")
    p.add_argument("--scenario", default="3CC.S.3", metavar="N|ID", help="the scenario to run (default 3CC.S.3)")
    p.add_argument("--replace", action="store_true", help="replace what other files loaded under the shipped names")
    p.add_argument("--seed", type=seed_arg, default=0)
    p.add_argument("--store", metavar="PATH|URL", default=argparse.SUPPRESS,
                   help=f"the store to write (as diagkg --store; default: $DIAGKG_STORE or {default_store_path()}); "
                        "the demo says which one it writes before it does")

    p = add("import-scenarios", knowledge.cmd_import_scenarios,
            "Import scenarios from a spreadsheet (CSV) with the RML mapping; validate; write one Turtle file each.")
    p.add_argument("file", metavar="FILE.csv", help="a scenario table with the columns of SCENARIOS_MASTER.csv "
                   "(and optionally: faults, faulty components, ideal repair, removed components)")
    p.add_argument("--out", metavar="DIR", help="write one NNN-ID.ttl file per scenario into DIR")
    serve.add_parser(sub, _Help)
    mcp_cli.add_parser(sub, _Help)
    evaluate.add_parsers(add)
    optimum_cli.add_parsers(add)
    generation.add_parsers(add)
    check_assistant.add_parsers(add)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except errors.ValidationError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        print(f"error: {exc.summary}; nothing was loaded", file=sys.stderr)
        return EXIT_VIOLATIONS
    except (errors.StoreError, errors.EnvironmentFailure) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_STORE
    except (errors.InputError, errors.QueryError, errors.UnknownTermError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except errors.DiagkgError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:      # the reader stopped early (`| head`): nothing more to say, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())     # (the interpreter flushes stdout at exit)
        return 141
    except OSError as exc:       # a file or folder named on the command line that cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130

