"""Subcommands of evaluation campaigns: evaluate, report, export, import."""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import errors
from .output import EXIT_OK, json_config, open_store, progress_bar, say
from .output import seed as seed_arg

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.execution import Progress


def add_parsers(add: Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]) -> None:
    """Register the subcommands (called by :func:`diagkg.cli.build_parser`)."""
    p = add("evaluate", cmd_evaluate, "Run an evaluation campaign: assistants × scenarios × runs (or the adaptive "
                                      "protocol), every trajectory stored; resumable after Ctrl-C or kill -9.")
    p.add_argument("--assistant", metavar="NAME[,NAME…]", action="append",
                   help="the assistants to compare, comma-separated or the option given again (exec:COMMAND: a program "
                        "of its own, docs/assistant-protocol.md)")
    p.add_argument("--config", metavar="JSON", help="assistant configuration as a JSON object, shared: each assistant takes the "
                   "keys it declares; a key none of them takes is refused")
    p.add_argument("--scenarios", nargs="+", default=["all"], metavar="SEL",
                   help="all | 1,2,5-9 | system:KEY | category:NAME | set:NAME | scenario ids | FILE.ttl… | FOLDER "
                        "(default all)")
    p.add_argument("--runs", type=int, default=None, help="runs per assistant and scenario, seeds S…S+N-1 (default 1)")
    p.add_argument("--protocol", choices=("fixed", "adaptive"), default=None,
                   help="fixed (--runs N) or adaptive (batches until behaviour converges or --max-batches)")
    p.add_argument("--batch-size", type=int, default=10, help="adaptive: runs per batch (default 10)")
    p.add_argument("--max-batches", type=int, default=5, help="adaptive: batches at most (default 5)")
    p.add_argument("--seed", type=seed_arg, default=0, help="first seed (default 0)")
    p.add_argument("--workers", type=int, default=1, help="sessions in N processes (default 1: this process)")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="local processes, or a Dask distributed cluster")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="dask: the scheduler (e.g. tcp://host:8786); default a LocalCluster of --workers processes")
    p.add_argument("--session-seconds", type=float, metavar="S",
                   help="stop a session that runs longer than S seconds (its worker process is ended; it runs again "
                        "alone once, then is recorded as crashed, saying so); sessions then run in worker processes "
                        "even with --workers 1. Default: no limit")
    p.add_argument("--resume", metavar="RUN", help="continue the campaign RUN, by id or by the name given to --name "
                   "(its settings are read from the store)")
    p.add_argument("--retry-failed", action="store_true",
                   help="with --resume: run again the sessions that crashed or ended in llm_truncation")
    p.add_argument("--mix-versions", action="store_true",
                   help="with --resume: continue even if the campaign holds trajectories made under other scoring "
                        "or physics versions than this diagkg's")
    p.add_argument("--allow-changed", action="store_true",
                   help="with --resume: continue even if the campaign's scenarios or systems changed since it "
                        "started (by default that is refused, naming each graph and both versions)")
    p.add_argument("--name", default="campaign", help="a name for a new campaign (its id starts with it)")
    p.add_argument("--cost-limit", type=float, metavar="USD",
                   help="stop scheduling sessions once the campaign's language-model calls (all its sessions, also "
                        "those of earlier runs) cost this much; each session may spend only what remains (needs a "
                        "pricing table); --resume with a higher limit continues")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = add("report", cmd_report, "Tables (Markdown, LaTeX, CSV), plots (PNG) and one HTML report of campaigns, "
                                  "recomputed from the store.")
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="campaign ids, or the names given to --name (default: every campaign in the store)")
    p.add_argument("--out", metavar="DIR", default="report", help="folder to write into (default ./report)")
    p.add_argument("--pool", action="store_true",
                   help="report campaigns that repeat an (assistant, scenario, seed) together anyway (refused by "
                        "default: the same session would count twice); the report says what it pooled")
    p.add_argument("--rebuild", action="store_true",
                   help="first write the campaigns' slot tallies afresh from their trajectories (one query each)")
    p.add_argument("--rescore", action="store_true",
                   help="work every figure out afresh from the campaigns' trajectories (not their slot tallies): a "
                        "figure added as a queries/figure-*.rq file shows on stored campaigns without running them "
                        "again")
    p.add_argument("--mix-versions", action="store_true",
                   help="report trajectories made under different scoring or physics versions together")
    p.add_argument("--figures", metavar="DIR", action="append", default=[],
                   help="a folder of your own figure-*.rq query files (each taking ?campaign alone): each is a "
                        "table of the report too, on stored campaigns (repeatable)")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = add("qualitative", cmd_qualitative,
            "Label a finished campaign's behaviour clusters and rate representative trajectories on the qualitative "
            "rubric with a language model (resumable: what is done is not asked again).")
    p.add_argument("campaign", metavar="RUN", help="the campaign id")
    p.add_argument("--config", metavar="JSON",
                   help='the judge: {"llm": {"base_url": …, "model": …, …}} (default: the campaign\'s configuration, '
                        "then the DIAGKG_LLM_* environment)")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = add("export", cmd_export, "Write a campaign with its trajectories and the scenario and system versions it "
                                  "used as gzipped N-Quads (to standard output or --out).")
    p.add_argument("campaign", metavar="CAMPAIGN", help="the campaign id, or the name given to --name")
    p.add_argument("--out", metavar="FILE.nq.gz", help="write to FILE instead of standard output")

    p = add("import", cmd_import, "Import a campaign exported by `diagkg export` (refuses campaigns and "
                                  "trajectories the store already holds).")
    p.add_argument("file", metavar="FILE", help="a .nq.gz (or .nq) file written by `diagkg export`")


def _progress_display(enabled: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from .output import console

    if not enabled:
        return None
    return Progress(TextColumn("scenarios {task.fields[groups]}"), TextColumn("batches {task.fields[batches]}"),
                    BarColumn(), MofNCompleteColumn(), TextColumn("trajectories, {task.fields[wins]} successes"),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=console(stderr=True), transient=False)


class ProgressLines:
    """Progress where no bar can be drawn (not a terminal): a line on standard error at most every
    ``every`` seconds, and when the campaign is done."""

    def __init__(self, every: float = 10.0):
        import time

        self.every, self.clock = every, time.monotonic
        self.last = -every
        self.done = -1

    def show(self, p: Progress) -> None:
        now = self.clock()
        finished = p.planned > 0 and p.stored >= p.planned
        if p.stored == self.done or (now - self.last < self.every and not finished):
            return
        self.last, self.done = now, p.stored
        rate = p.ran / p.seconds if p.seconds > 0 and p.ran else 0.0
        left = f", about {(p.planned - p.stored) / rate:.0f} s left" if rate > 0 and not finished else ""
        # (assistant × scenario slots: "scenarios 130/130" read as 130 scenarios where there were 26, for 5 assistants)
        print(f"progress: {p.stored}/{p.planned} trajectories, {p.successes} successes, assistant × scenario slots "
              f"{p.scenarios_done}/{p.scenarios}, {p.seconds:.0f} s{left}", file=sys.stderr, flush=True)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from ..evaluation import campaign as cp
    from ..evaluation import execution
    from ..evaluation.budget import Spending, check_pricing, judge_allowance
    from ..kg.loading import ensure_shipped, load_files

    execution.check_execution(args.workers, args.executor, args.session_seconds)
    if args.retry_failed and not args.resume:
        raise errors.InputError("--retry-failed continues a campaign: give --resume RUN")
    if args.allow_changed and not args.resume:
        raise errors.InputError("--allow-changed continues a campaign: give --resume RUN")
    with open_store(args, write=True) as store:
        if args.resume:
            if args.assistant or args.runs or args.protocol or args.config:
                say("--resume: the campaign's own settings are used (the other options are ignored)")
            campaign = cp.open_campaign(store, args.resume, allow_changed=args.allow_changed)
            for changed in cp.changed_versions(store, campaign) if args.allow_changed else ():
                say(f"--allow-changed: {changed} changed since the campaign started; resuming anyway")
            from ..evaluation.versions import check_resume

            check_resume(store, campaign, mix=args.mix_versions)
            if args.cost_limit is not None:
                check_pricing(campaign.config.config, args.cost_limit)
        else:
            if not args.assistant:
                raise errors.InputError("name the assistants: --assistant NAME[,NAME…] (or --resume RUN)")
            from ..agents.registry import names
            from ..agents.trust import EXEC_PREFIX
            from ..runs.hosting import check

            assistants = tuple(dict.fromkeys(a.strip() for given in args.assistant for a in given.split(",") if a.strip()))
            unknown = [a for a in assistants if not a.startswith(EXEC_PREFIX) and a not in names()]
            if unknown:
                raise errors.InputError(f"--assistant: unknown {', '.join(unknown)}; installed: {', '.join(names())}")
            for a in assistants:
                check(a)          # an exec: program that is not there: said now, not in every session
            config = json_config(args.config)
            protocol = args.protocol or "fixed"
            if protocol == "adaptive":
                if args.runs is not None:
                    raise errors.InputError("--runs and --protocol adaptive exclude each other")
                from ..evaluation.protocol import adaptive_module

                adaptive_module()
            from ..env.scenarios import ScenarioCatalog

            if not ScenarioCatalog(store).numbers():      # an empty store: the shipped catalogue first
                ensure_shipped(store, notify=say)

            def load(files: list[str]) -> list[str]:
                report = load_files(store, files, notify=say)
                rows = store.select("graph-claims")
                graphs_loaded = {i.graph for i in report.loaded}
                ids = [r["value"] for r in rows if r["graph"] in graphs_loaded and r["kind"] == "scenario identifier"]
                for line in (*report.notes, *report.replaced):
                    say(line)
                return ids

            numbers = cp.select_scenarios(store, args.scenarios, load)
            cfg = cp.CampaignConfig(assistants=assistants, scenarios=tuple(numbers), config=config, protocol=protocol,
                                    runs=args.runs if args.runs is not None else 1, batch_size=args.batch_size,
                                    max_batches=args.max_batches, seed=args.seed, name=args.name)
            if args.cost_limit is not None:
                check_pricing(cfg.config, args.cost_limit)
            cp.check_ready(store, ((a, n) for a in cfg.assistants for n in cfg.scenarios))
            campaign = cp.create(store, cfg)
            say(f"campaign {campaign.id}: {len(cfg.assistants)} assistant(s) × {len(cfg.scenarios)} scenario(s), "
                f"{'adaptive' if protocol == 'adaptive' else f'{cfg.runs} run(s) each'}")
        from ..evaluation.budget import campaign_limit

        cost_limit = campaign_limit(store, campaign, args.cost_limit)
        if args.resume and args.cost_limit is None and cost_limit is not None:
            say(f"--resume: the campaign's LLM cost limit of {cost_limit:g} holds (--cost-limit changes it)")
        display = _progress_display(sys.stderr.isatty() and args.format == "text")
        lines = None if display is not None else ProgressLines()
        task_id = None

        def show(p: Progress) -> None:
            nonlocal task_id
            if lines is not None:
                lines.show(p)
            if display is None:
                return
            fields = dict(groups=f"{p.scenarios_done}/{p.scenarios}", batches=p.batches, wins=p.successes)
            if task_id is None:
                task_id = display.add_task("campaign", total=p.planned, completed=p.stored, **fields)
            display.update(task_id, total=p.planned, completed=p.stored, **fields)

        try:
            if display is not None:
                display.start()
            summary = execution.run(store, campaign, workers=args.workers, executor=args.executor,
                                    scheduler=args.scheduler, retry_failed=args.retry_failed,
                                    cost_limit=cost_limit, on_progress=show, notify=say,
                                    session_seconds=args.session_seconds)
        except KeyboardInterrupt:
            if display is not None:
                display.stop()
            print(f"interrupted; what finished is stored. Continue with: diagkg evaluate --resume {campaign.id}",
                  file=sys.stderr)
            return 130
        except Exception as exc:
            # a campaign started now that could not run a session (its workers could not start) is not left behind
            # empty: a later `report NAME` found several campaigns of that name
            # (a store that cannot be written, a full disk, keeps it: the error that stopped the campaign is said)
            kept = True
            with contextlib.suppress(errors.StoreError):
                if not args.resume and not cp.recorded(store, campaign):
                    store.remove_graphs([campaign.graph])
                    say(f"campaign {campaign.id} ran nothing and is not kept")
                    kept = False
            if kept and isinstance(exc, errors.StoreError):     # (a full disk, a store server gone)
                say(f"what finished is stored; once the store can be used: diagkg evaluate --resume {campaign.id}")
            raise
        finally:
            if display is not None:
                display.stop()
        if summary.stopped is not None:
            qual: dict[str, Any] | None = None
            say("qualitative analysis not run: the campaign stopped at its cost limit")
        else:       # the judge gets what the sessions and its earlier runs left (nothing: it does not start)
            left = judge_allowance(store, campaign, cost_limit)
            qual = run_qualitative(store, campaign, campaign.config.config, cost_left=left,
                                   quiet=args.format == "json", cost_limit=cost_limit)
        summary.money = Spending.read(store, campaign).spent      # with what the judge spent now
    data = summary.to_json()
    data["qualitative"] = qual
    if args.format == "json":
        if summary.stopped is not None:
            data["stopped"]["message"] = summary.stopped.message(campaign.id)
            print(summary.stopped.message(campaign.id), file=sys.stderr)
        print(json.dumps(data))
    else:
        p = summary.progress
        print(f"campaign {campaign.id}: {p.stored} trajectories ({p.ran} run now in {p.seconds:.1f} s), "
              f"{p.successes} successes; ends: {', '.join(f'{k} {v}' for k, v in sorted(p.ends.items()) if v)}")
        print(f"scenarios: {', '.join(f'{k} {v}' for k, v in sorted(summary.states.items()))}")
        if summary.money or summary.cost_limit is not None:
            limit = f" of a limit of {summary.cost_limit:g}" if summary.cost_limit is not None else ""
            print(f"language models: {summary.money:.4f} spent{limit}")
        if summary.stopped is not None:
            print(summary.stopped.message(campaign.id))
        print(f"report: diagkg report {campaign.id}")
    return EXIT_OK


def run_qualitative(store: Any, campaign: Any, config: dict[str, Any], *, cost_left: float | None = None,
                    quiet: bool = False, cost_limit: float | None = None) -> dict[str, Any] | None:
    """The qualitative analysis of a campaign, or the skip message when no language model is configured
    or nothing is left of the campaign's cost limit (``cost_left`` 0)."""
    from dataclasses import replace

    from ..evaluation import qualitative

    settings = qualitative.judge_settings(config)
    if settings is None:
        say(qualitative.SKIP_MESSAGE)
        return None
    if cost_left is not None and cost_left <= 0:
        say(f"qualitative analysis not run: the campaign's LLM cost limit"
            f"{f' of {cost_limit:g}' if cost_limit is not None else ''} is reached by what its sessions and its "
            f"judge spent; continue with a higher limit: diagkg evaluate --resume {campaign.id} --cost-limit AMOUNT")
        return None
    if cost_left is not None:
        settings = replace(settings, cost_limit=cost_left)
    with progress_bar(sys.stderr.isatty() and not quiet) as progress:
        summary = qualitative.run(store, campaign, settings, progress=progress)
    for note in summary.notes:
        say(note)
    data = summary.to_json()
    if not quiet:
        causes = ", ".join(f"{k} {v}" for k, v in data["failure_causes"].items())
        print(f"qualitative analysis of {campaign.id}: {summary.labels} cluster label(s), {summary.ratings} rubric "
              f"rating(s) now ({summary.already} already done), {summary.labels_failed + summary.ratings_failed} "
              f"failed{f' ({causes})' if causes else ''}; {summary.calls} call(s), {summary.money:.4f} spent")
    return data


def cmd_qualitative(args: argparse.Namespace) -> int:
    from ..evaluation import campaign as cp

    with open_store(args, write=True) as store:
        campaign = cp.open_campaign(store, args.campaign)
        config = json_config(args.config) or campaign.config.config
        data = run_qualitative(store, campaign, config, quiet=args.format == "json")
    if args.format == "json":
        print(json.dumps(data if data is not None else {"campaign": campaign.id, "skipped": True}))
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from ..evaluation import campaign as cp
    from ..evaluation import report
    from ..evaluation.versions import check_report

    with open_store(args, write=args.rebuild) as store:
        ids = args.runs or [r["campaign"][len(cp.CAMPAIGN_BASE):] for r in cp.campaigns(store)]
        check_report(store, [cp.open_campaign(store, cid) for cid in ids], mix=args.mix_versions)
        if args.rebuild:
            from ..evaluation import tally

            for cid in args.runs or [r["campaign"][len(cp.CAMPAIGN_BASE):] for r in cp.campaigns(store)]:
                slots = tally.rebuild(store, cp.open_campaign(store, cid))
                print(f"campaign {cid}: {slots} slot tallies rebuilt from its trajectories", file=sys.stderr)
        notes: list[str] = []
        summary: list[dict[str, Any]] = []
        with progress_bar(sys.stderr.isatty()) as progress:
            written = report.write_report(store, args.runs, Path(args.out), progress=progress, pool=args.pool,
                                          notes=notes, rescore=args.rescore, figures=[Path(f) for f in args.figures],
                                          summary=summary)
        for note in notes:
            say(note)
    if args.format == "json":
        print(json.dumps({"out": str(args.out), "files": [str(p) for p in written], "overall": summary}))
    else:
        print(_summary_text(summary))
        print(f"wrote {len(written)} files into {args.out} (open {Path(args.out) / 'report.html'})")
    return EXIT_OK


def _summary_text(rows: list[dict[str, Any]]) -> str:
    """Each assistant's overall figures as a few aligned columns (the report's ``overall`` table, in brief)."""
    def num(value: Any, digits: int) -> str:
        return "—" if value is None or value != value else f"{float(value):.{digits}f}"

    # (a session ended by the language model, truncated, is left out of success and cost: said beside them)
    head = ["assistant", "sessions", "success [95 %]", "mean cost", "cost / ideal", "truncated", "crashed"]
    body = [[str(r["assistant"]), str(r["sessions"]),
             f"{num(r['success'], 3)} [{num(r['lo'], 3)}, {num(r['hi'], 3)}]", num(r["mean cost"], 1),
             num(r["cost / ideal"], 3), str(r["truncated"]), str(r["crashed"])] for r in rows]
    widths = [max(len(line[i]) for line in (head, *body)) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                                enumerate(zip(line, widths, strict=True))) for line in (head, *body))


def cmd_export(args: argparse.Namespace) -> int:
    from ..evaluation import transfer

    with open_store(args, write=False) as store:
        data = transfer.export_campaign(store, args.campaign)
    packed = gzip.compress(data, mtime=0)
    if args.out:
        Path(args.out).write_bytes(packed)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        if sys.stdout.isatty():
            raise errors.InputError("the export is binary (gzip): redirect it to a file or give --out FILE.nq.gz")
        sys.stdout.buffer.write(packed)
        sys.stdout.buffer.flush()
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from ..evaluation import transfer

    path = Path(args.file)
    if not path.is_file():
        raise errors.InputError(f"{path}: no such file")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise errors.InputError(f"{path}: not a readable gzip file ({exc})") from None
    with open_store(args, write=True) as store:
        result = transfer.import_campaign(store, raw, str(path))
    print(f"imported campaign {result.campaign}: {result.trajectories} trajectories, "
          f"{result.knowledge_added} scenario, system and policy graphs added, {result.knowledge_kept} already present")
    return EXIT_OK
