"""Subcommands that simulate and diagnose: simulate, run, transcript, demo."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .. import errors
from ..kg import graphs, systems
from ..kg.store import KnowledgeStore
from .output import EXIT_OK, EXIT_VIOLATIONS, is_file_ref, json_config, open_store, print_table, progress_bar, say, scenario_ref

if TYPE_CHECKING:  # pragma: no cover
    from ..runs.rounds import Round
    from ..runs.runner import RunResult
    from ..sim.circuit import CircuitState
    from ..sim.simulator import Simulator


def _simulator_for(store: KnowledgeStore, key: str) -> Simulator:
    """A simulator for system ``key`` of the store (a store that has never held
    the shipped catalogue gets it first when ``key`` is a shipped system)."""
    from ..env.service import simulator_for
    from ..kg.loading import ensure_shipped

    if not store.raw.contains_named_graph(graphs.system(key)):
        try:
            systems.shipped_system_file(key)
        except errors.UnknownTermError as exc:
            import difflib

            held = sorted(r["key"] for r in store.select("system-summary"))
            close = difflib.get_close_matches(key, held, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            if _is_scenario(store, key):
                hint = f"; {key} is a scenario: diagkg simulate --scenario {key}"
            raise errors.UnknownTermError(f"no system {key!r} in the store (it holds: {', '.join(held) or 'none'}) "
                                          f"nor among the shipped ones ({exc}){hint}") from None
        if ensure_shipped(store, notify=say) is None:
            raise errors.UnknownTermError(f"no system {key!r} in the store; load it (diagkg load --shipped)")
    return simulator_for(store, key)


def _is_scenario(store: KnowledgeStore, ref: str) -> bool:
    """Whether ``ref`` names a scenario of ``store``, or a shipped one (by number or identifier), read without loading
    anything (an error's hint: ``resolve_scenario`` would load the shipped catalogue into the store)."""
    from ..env.scenarios import ScenarioCatalog
    from ..env.workspace import names_shipped_scenario

    try:
        ScenarioCatalog.find(store, ref)
    except errors.DiagkgError:
        return names_shipped_scenario(ref)
    return True


def cmd_simulate(args: argparse.Namespace) -> int:
    import random

    from ..sim.circuit import NOMINAL, state_from_turtle
    from ..sim.simulator import result_quads

    if args.scenario is not None:
        return _simulate_scenario(args)
    if args.system is None:
        raise errors.InputError("give a SYSTEM key or --scenario N|ID")
    with open_store(args, write=True) as store:
        if is_file_ref(args.system):      # a system file: validated and simulated in a scratch copy of the store
            from .generation import system_store

            if args.record:
                raise errors.InputError(f"--record writes into the store: load {args.system} first (diagkg load FILE), "
                                        "then simulate it by its key")
            from ..env.service import simulator_for

            scratch, args.system = system_store(store, args.system)
            sim = simulator_for(scratch, args.system)
        else:
            sim = _simulator_for(store, args.system)
        state = NOMINAL
        if args.state:
            path = Path(args.state)
            if not path.is_file():
                raise errors.InputError(f"{path}: no such file")
            state = state_from_turtle(path.read_text(encoding="utf-8"), str(path), sim.skeleton)
        if args.netlist:
            print(sim.netlist(state))
            return EXIT_OK
        with _engine(args, sim) as sim:
            result = sim.simulate(state, random.Random(args.seed))
        if args.record:
            graph = graphs.named("simulation", f"{args.system}-{int(time.time() * 1000)}")
            store.add_quads(result_quads(result, sim.skeleton, graph))
            print(f"recorded as SOSA observations in <{graph.value}>", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2))
        return EXIT_VIOLATIONS if result.error else EXIT_OK
    print(f"system: {result.system}   converged: {'yes' if result.converged else 'NO'} "
          f"({result.iterations} solve(s))" + (f"   error: {result.error}" if result.error else ""))
    if result.error:
        from ..env.checks import unsolved

        print(f"error: {args.system} cannot be solved: {unsolved(sim.skeleton, result.error)}", file=sys.stderr)
    print("lit: " + (", ".join(result.lit) or "(nothing)"))
    if state.damaged:
        print("damaged in the state: " + ", ".join(f"{c} ({sim.skeleton.damage_labels.get(d, d)})"
                                                  for c, d in sorted(state.damaged)))
    _print_solve(result, sim, state)
    return EXIT_VIOLATIONS if result.error else EXIT_OK


def _print_solve(result: Any, sim: Simulator, state: CircuitState) -> None:
    """A solve of ``state`` as a person reads it: what the circuit damaged, the contacts, every part's potentials,
    current, power and light, and notes on nodes nothing holds and sources taking power in."""
    from ..sim import meter

    if result.damage:
        print(_damage_line(result, sim))
    if result.live:
        print("live: " + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in sorted(result.live.items())))
    rows = []
    for cid, c in sorted(result.components.items()):
        volts = ", ".join(f"{p}={'floating' if x is None else _shown(x)}" for p, x in c.port_v.items())
        rows.append((cid, c.type, volts, _shown(c.current * 1000), _shown(c.power * 1000),
                     "" if c.lit is None else ("lit" if c.lit else "off")))
    for short in result.shorts:          # (a short of the state carries current too: each node's currents add up)
        (a, pa), (b, pb) = short.between
        rows.append((f"short {a}.{pa}–{b}.{pb}", "short", "", _shown(short.current * 1000), _shown(short.power * 1000), ""))
    print_table(["component", "type", "port voltages (V)", "current (mA)", "power (mW)", "light"], rows)
    damaged = state.evolve(damaged=state.damaged | {(d.component, d.state) for d in result.damage})   # as it ends
    loose = sorted({cid for cid, _ in meter.unheld(sim, damaged, result)})
    if loose:
        print(f"not joined to 0 V (potentials as the solve leaves them; a voltmeter, through which alone they reach "
              f"0 V, reads them otherwise): {', '.join(loose)}")
    # a source takes power in where the current entering its positive port flows towards its negative one,
    # (v(pos) - v(neg)) * current > 0: the power column is unsigned, and a source turned round delivers with
    # its current entering at its positive port (its positive port is then the lower one)
    charged = sorted(cid for cid, c in result.components.items() if c.type == "VoltageSource"
                     and None not in (vp := c.port_v.get("pos"), vn := c.port_v.get("neg"))
                     and ((vp or 0.0) - (vn or 0.0)) * c.current > 1e-6)
    if charged:
        print(f"taking power in, not giving it (another source drives current into its positive end): {', '.join(charged)}")


@contextlib.contextmanager
def _engine(args: argparse.Namespace, sim: Simulator) -> Iterator[Simulator]:
    """``sim`` itself, or with ``--engine pyspice`` a simulator of the same system on PySpice's
    engine (its child process started first, so that a missing PySpice is said at once)."""
    if args.engine != "pyspice":
        yield sim
        return
    from ..sim.pyspice_engine import PySpiceEngine
    from ..sim.simulator import Simulator

    with PySpiceEngine() as engine:
        engine.start()
        yield Simulator(sim.skeleton, engine=engine)


def _shown(x: float) -> str:
    """``x`` with three decimals, as a reading is shown (:func:`~diagkg.env.observations.fixed`)."""
    from ..env.observations import fixed

    return fixed(x, 3)


def _damage_line(result: Any, sim: Simulator) -> str:
    """The parts the circuit damaged in a simulation, and at what current."""
    text = "damaged by the circuit: " + ", ".join(
        f"{d.component} ({sim.skeleton.damage_labels.get(d.state, d.state)} at {abs(d.current):.4g} A, {d.power:.4g} W)"
        for d in result.damage)
    return text + ("" if result.damage_settled else " (and still spreading: stopped)")


def _simulate_scenario(args: argparse.Namespace) -> int:
    """The state right after a scenario's faults are injected (the saboteur of a session)."""
    from ..env.service import make

    with open_store(args, write=True) as store:
        session = make(scenario_ref(args, store), store, notify=say)
    with _engine(args, session.sim) as sim:
        session.sim = sim
        session.reset(seed=args.seed)
        is_nominal = session.is_nominal()
    scenario, nominal, result = session.scenario, session.nominal_result, session.initial_result
    if args.record:       # (it was taken and ignored)
        from ..sim.simulator import result_quads

        graph = graphs.named("simulation", f"{scenario.key}-{scenario.number}-{int(time.time() * 1000)}")
        with open_store(args, write=True) as store:
            store.add_quads(result_quads(result, session.sim.skeleton, graph))
        print(f"recorded as SOSA observations in <{graph.value}>", file=sys.stderr)
    if args.format == "json":
        data = result.to_json()
        # nominal: whether the system works as a session judges it (every main light as in the working system,
        # whatever a loose end does); an indicator (an LED not declared a main light) does not count
        data.update(scenario=scenario.number, scenario_id=scenario.id, nominal=is_nominal,
                    nominal_lit=sorted(nominal.lit))
        print(json.dumps(data, indent=2))
        return EXIT_OK
    print(f"scenario {scenario.number} ({scenario.id}): {scenario.label} — system {scenario.key}")
    print(f"nominal lights: {', '.join(nominal.lit) or '(none)'}")
    print(f"after the faults: {', '.join(result.lit) or '(nothing lit)'}; converged: "
          f"{'yes' if result.converged else 'NO'}; works as a session judges it (its main lights, however a loose "
          f"end falls): {'yes' if is_nominal else 'no'}")
    _print_solve(result, session.sim, session.injected_state)
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """Run one diagnostic session and store its trajectory: the store is checked writable before the
    session starts; once it ends, the trajectory waits its turn to be written (``--wait``), and goes to
    a file (said, with the command that loads it) if the store still cannot take it."""
    from ..runs.runner import run_session

    config = json_config(args.config)

    def show(entry: Round) -> None:
        if args.format != "text":
            return
        executed = ", ".join(f"{action} {' '.join(targets)} ({cost:g})" for action, targets, cost in entry.executed)
        verdict = f" [{entry.verdict.value}]" if entry.verdict else ""
        print(f"round {entry.number:2d}: {entry.intention}{verdict}")
        if executed:
            print(f"          executed: {executed}")
        print(f"          outcome:  {entry.message}")
        print(f"          cost:     {entry.cost:g} min")

    if args.budget is not None and args.budget < 1:
        raise errors.InputError(f"--budget must be at least 1 round, got {args.budget}")
    if args.cost_limit is not None:
        config["cost_limit"] = args.cost_limit
    if args.replay:
        if args.scenario or args.assistant or args.config or args.budget is not None:
            raise errors.InputError("--replay takes the scenario, assistant, configuration and budget from the "
                                    "trajectory; give none of --scenario, --assistant, --config, --budget")
        from ..runs.runner import replay_session

        with open_store(args, write=True) as store:
            store.check_writable()
            result = _played(lambda: replay_session(store, args.replay, on_round=show, notify=say, record=False))
            kept = _keep(store, result)
    else:
        if not args.scenario or not args.assistant:
            raise errors.InputError("give --scenario and --assistant (or --replay TRAJECTORY)")
        with open_store(args, write=True) as store:
            store.check_writable()
            ref = scenario_ref(args, store)
            result = _played(lambda: run_session(ref, args.assistant, seed=args.seed, budget=args.budget, config=config,
                                                 store=store, on_round=show, notify=say, service=args.service,
                                                 record=False))
            kept = _keep(store, result)
    if args.format == "json":
        data = {k: v for k, v in result.to_json().items() if k != "wall_time"}
        if kept is not None:
            data["kept_in"] = str(kept.file)
        print(json.dumps(data))
    else:
        cause = f" ({result.llm_cause.value})" if result.llm_cause is not None else \
            f" (the assistant was stopped: {result.fault.value})" if result.fault is not None else ""
        print(f"end: {result.end}{cause}   total cost: {result.cost:g} min   rounds: {result.rounds}")
        if result.llm is not None and result.llm.records:
            log = result.llm
            print(f"language model: {len(log.records)} call(s), {log.prompt_tokens} prompt + "
                  f"{log.completion_tokens} completion tokens ({log.cached_tokens} cached)"
                  + (f", cost {log.money:.4f}" if log.money else ""))
        print(f"trajectory: {result.trajectory}")
    if kept is not None:
        raise kept           # exit 3, saying where the trajectory is and how to store it
    if result.fault is not None:      # an assistant in its own process that failed: stored, and not a clean exit
        say(f"the assistant was stopped ({result.fault.value}): its last round says why; the trajectory is stored")
        return EXIT_VIOLATIONS
    return EXIT_OK


def _played(play: Callable[[], RunResult]) -> RunResult:
    """``play()``'s result; a session whose ledger could not be read off the store (it went away as the session
    ended) is said and kept without it, not lost."""
    try:
        return play()
    except errors.LedgerUnavailable as exc:
        from ..runs.runner import RunResult as Result

        say(f"{exc}; the trajectory is kept without it")
        assert isinstance(exc.result, Result)
        return exc.result


def _keep(store: KnowledgeStore, result: RunResult) -> errors.TrajectoryKept | None:
    """Store a finished session's trajectory; when the store cannot take it, it is kept in a file
    (:mod:`diagkg.runs.keeping`) and the error saying so is returned."""
    from ..runs.keeping import store_or_keep

    assert result.record is not None
    try:
        result.trajectory = store_or_keep(store, result.record, result.catalogue)
    except errors.TrajectoryKept as kept:
        result.trajectory = result.record.iri
        return kept
    return None


def cmd_transcript(args: argparse.Namespace) -> int:
    from ..runs import transcript

    with open_store(args, write=False) as store:
        data = transcript.load(store, args.trajectory)
    text = json.dumps(data, indent=2) if args.format == "json" else transcript.to_html(data)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    """The main job: validate and load the shipped systems and scenarios into the
    store (reasoning over each system as it is loaded), run a diagnostic session
    with the neuro-symbolic assistant and the oracle, and summarise the store."""
    from ..env.workspace import resolve_scenario
    from ..kg.loading import load_shipped
    from ..runs.runner import run_session

    t0 = time.perf_counter()
    with open_store(args, write=True) as store:
        print(f"demo: writing to the store at {store.location} (choose another with --store PATH)", flush=True)
        with progress_bar(sys.stderr.isatty()) as progress:
            report = load_shipped(store, validate=True, replace=args.replace, progress=progress, notify=say)
        n_sys = sum(1 for i in report.loaded if "/graph/system/" in i.graph)
        print(f"validated and loaded: {len(report.loaded)} files ({n_sys} systems, {len(report.loaded) - n_sys} "
              f"scenarios), {sum(i.triples for i in report.loaded)} triples into "
              f"{store.location}")
        for line in report.replaced:
            print(f"  {line}")
        for key, n in sorted(report.inferred.items()):
            print(f"reasoned: <{graphs.inferred(key).value}> ({n} inferred triples)")
        t1 = time.perf_counter()
        scenario = resolve_scenario(store, args.scenario)
        rows = store.select("system-summary")
        print_table(["system", "label", "modules", "components", "ports", "connections"],
                     [(r["key"], r["label"], r["modules"], r["components"], r["ports"], r["connections"]) for r in rows],
                     title="systems in the store")
        print(f"\nscenario {scenario.number} ({scenario.id}): {scenario.label}\nreported: {scenario.observations}\n")
        for name in ("neuro-symbolic", "oracle"):
            def on_round(e: Round, n: str = name) -> None:
                print(f"  [{n}] round {e.number}: {e.intention} → {e.message} ({e.cost:g} min)")

            result = run_session(scenario, name, seed=args.seed, store=store, notify=say, on_round=on_round)
            print(f"  [{name}] end: {result.end}, cost {result.cost:g} min, {result.rounds} rounds\n"
                  f"  [{name}] trajectory: {result.trajectory}\n")
        t2 = time.perf_counter()
        rows = store.select("trajectory-success")
        print_table(["assistant", "scenario", "runs", "success rate", "mean cost (min)"],
                     [(r["assistant"], r["id"], r["runs"], f"{r['successRate']:.0%}", f"{r['meanCost']:.0f}")
                      for r in rows], title="all trajectories in the store (queries/trajectory-success.rq)")
    print(f"validated, reasoned and loaded in {t1 - t0:.2f} s, sessions in {t2 - t1:.2f} s", file=sys.stderr)
    return EXIT_OK
