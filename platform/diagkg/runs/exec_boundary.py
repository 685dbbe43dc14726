"""Assistants in a process of their own: ``--assistant exec:COMMAND``, and untrusted plug-ins.

:class:`ExecAssistant` is an assistant of the runner like any other, whose
decisions are made by a separate program speaking JSON lines on its standard
input and output (:mod:`diagkg.env.contract`; docs/assistant-protocol.md)::

    diagkg run --scenario 5 --assistant "exec:node my-agent.js"

The command is split as a shell would split it (:func:`shlex.split`) and run
without a shell, in a session (process group) of its own, with a memory limit
(``RLIMIT_AS``) and a time limit on each reply (:class:`Limits`). Only the
protocol's messages cross: the briefing (what a technician is told; the
knowledge view too, as N-Triples, when the program is trusted), each outcome,
the end. A reply that is malformed, breaks its schema, names an unknown action
or part, is late or never comes (the program exited) raises a
:class:`~diagkg.env.contract.ProtocolError` with its typed fault: the runner
ends the session there and the trajectory records the fault. Whatever the
program writes to its standard error is kept (the last lines go into the
failure's message).
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import json
import os
import resource  # here: the child must import nothing between fork and exec
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterator, Mapping

from ..agents.registry import BaseAssistant, Briefing
from ..env.actions import Action, ActionType, Hypothesis
from ..env.contract import PROTOCOL_VERSION, ProtocolError, ProtocolFault, end_message, outcome_json, read_reply
from ..env.outcomes import Outcome
from ..errors import InputError

ENV_START = "DIAGKG_EXEC_START_SECONDS"
ENV_REPLY = "DIAGKG_EXEC_REPLY_SECONDS"
ENV_MEMORY = "DIAGKG_EXEC_MEMORY_MB"


@dataclass(frozen=True)
class Limits:
    """What a program in its own process is allowed (settable through the environment)."""

    start_seconds: float = 60.0        # to start and answer the briefing
    reply_seconds: float = 30.0        # to answer each outcome
    memory_mb: int = 2048              # address space (RLIMIT_AS)
    line_bytes: int = 1 << 20          # the longest reply line
    grace_seconds: float = 2.0         # to exit after the end message

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Limits":
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for var, key, kind in ((ENV_START, "start_seconds", float), (ENV_REPLY, "reply_seconds", float),
                               (ENV_MEMORY, "memory_mb", int)):
            text = env.get(var)
            if text is None or not text.strip():
                continue
            try:
                value = kind(text)
            except ValueError:
                raise InputError(f"{var} is {text!r}; give a positive number") from None
            if value <= 0:
                raise InputError(f"{var} is {text!r}; give a positive number")
            values[key] = value
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        return {"start_seconds": self.start_seconds, "reply_seconds": self.reply_seconds,
                "memory_mb": self.memory_mb, "line_bytes": self.line_bytes}


def command_of(text: str) -> list[str]:
    """A command line split as a shell would (no shell runs it); its program must exist."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise InputError(f"exec:{text}: cannot split the command ({exc})") from None
    if not argv:
        raise InputError("exec: needs a command, e.g. exec:\"python3 my_agent.py\"")
    program = argv[0]
    if os.sep in program:
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            raise InputError(f"exec:{text}: {program} is not an executable file")
    elif shutil.which(program) is None:
        raise InputError(f"exec:{text}: no program {program!r} on the PATH")
    return argv


# ---------------------------------------------------------------------------
# messages
# ---------------------------------------------------------------------------

def action_json(spec: ActionType) -> dict[str, Any]:
    return {"id": spec.id, "iri": spec.iri, "label": spec.label, "comment": spec.comment, "cost": spec.cost,
            "category": spec.category, "targets": {"count": spec.target_count, "kind": spec.target_kind},
            "types": sorted(spec.types), "parameter": spec.parameter, "repair": spec.repair,
            "observes": spec.observes, "requires": sorted(spec.requires), "tools": sorted(spec.tools)}


def briefing_message(brief: Briefing, limits: Limits, config: Mapping[str, Any],
                     knowledge: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``briefing`` message: what ``brief`` tells an in-process assistant, less the objects (never the answer)."""
    out: dict[str, Any] = {
        "kind": "briefing", "protocol": PROTOCOL_VERSION, "system": brief.system, "system_iri": brief.system_iri,
        "description": brief.description, "symptoms": brief.symptoms, "visible": brief.visible,
        "lights": dict(brief.lights), "stated": dict(brief.stated), "parts": dict(brief.parts),
        "labels": dict(brief.labels),
        "ports": {c: list(p) for c, p in brief.ports.items()}, "modules": list(brief.modules),
        "actions": [action_json(spec) for _, spec in sorted(brief.catalogue.items())],
        "budget": brief.budget, "seed": brief.seed, "config": dict(config), "limits": limits.to_json()}
    if knowledge is not None:
        out["knowledge"] = {"format": "application/n-triples", "graphs": knowledge}
    return out


def view_as_ntriples(view: Any) -> dict[str, str]:
    """The knowledge view (ontology, system, inferences) as one N-Triples document per named graph."""
    return dict(view.ntriples())


def known_ids(brief: Briefing) -> frozenset[str]:
    """The ids a reply may name: the briefing's parts and modules, and ``component.port``."""
    ids = set(brief.parts) | set(brief.modules)
    ids.update(f"{c}.{p}" for c, ports in brief.ports.items() for p in ports)
    return frozenset(ids)


# ---------------------------------------------------------------------------
# the program
# ---------------------------------------------------------------------------

def _limit_memory(megabytes: int) -> None:
    """In the child before it runs the program: its address space and no core file."""
    size = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


PR_SET_PDEATHSIG = 1          # linux/prctl.h
_WHOLE_SESSION = contextvars.ContextVar("diagkg_exec_whole_session", default=False)


@contextlib.contextmanager
def whole_session_in_this_thread() -> Iterator[None]:
    """Around a session played start to end in the calling thread (a campaign's task, in a worker process's main
    thread or a Dask worker's thread): the programs it starts may die with that thread."""
    token = _WHOLE_SESSION.set(True)
    try:
        yield
    finally:
        _WHOLE_SESSION.reset(token)


def _dies_with_parent() -> Callable[[], None]:
    """What the child runs before the program, so that the program dies (SIGKILL) when the process that started it
    does, however it ends: a campaign's worker killed with its campaign (kill -9) left its program running, adopted
    by init. Linux only, and only from the main thread or a session played whole in its thread
    (:func:`whole_session_in_this_thread`): the kernel signals when the *thread* that started the child ends, and a
    server's request thread may end before its session does. The child imports nothing, so ``prctl`` is found here."""
    if not sys.platform.startswith("linux") or (threading.current_thread() is not threading.main_thread()
                                                 and not _WHOLE_SESSION.get()):
        return lambda: None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None
    parent, kill = os.getpid(), int(signal.SIGKILL)

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:      # the parent died before the line above
            os._exit(1)
    return arm


def _stop(proc: subprocess.Popen[bytes], grace: float) -> None:
    """Let the program exit within ``grace`` seconds, then end its process group."""
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            continue
    try:          # whatever it started in its process group goes with it
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Channel:
    """JSON lines to and from a child process, each within a deadline."""

    def __init__(self, argv: list[str], limits: Limits, env: Mapping[str, str] | None = None):
        self.limits = limits
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        arm = _dies_with_parent()

        def prepare() -> None:
            _limit_memory(limits.memory_mb)
            arm()
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, close_fds=True,
                start_new_session=True, env=dict(env) if env is not None else None, preexec_fn=prepare)
        except OSError as exc:
            self.stderr.close()
            raise ProtocolError(ProtocolFault.START, f"cannot start {' '.join(argv)}: {exc}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._buffer = b""
        self._finalizer = weakref.finalize(self, _stop, self.proc, 0.0)

    def _exited(self, what: str) -> ProtocolError:
        try:
            code = self.proc.wait(timeout=1.0)
            status = f"exit status {code}" if code >= 0 else f"killed by signal {-code}"
        except subprocess.TimeoutExpired:
            status = "its output closed"
        return ProtocolError(ProtocolFault.EXITED, f"the program ended {what} ({status}){self.tail()}")

    def tail(self, limit: int = 600) -> str:
        """The last lines the program wrote to its standard error, as a suffix of a message."""
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - limit))
            text = self.stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return f"; its standard error ends: {text}" if text else ""

    def send(self, message: Mapping[str, Any], seconds: float) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as sel:
            sel.register(self._in, selectors.EVENT_WRITE)
            while data:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProtocolError(ProtocolFault.LATE, f"the program did not read its input within {seconds:g} s")
                if not sel.select(left):
                    continue
                try:
                    data = data[os.write(self._in, data):]
                except BrokenPipeError:
                    raise self._exited(f"before reading the {message.get('kind')} message") from None

    def early(self) -> bool:
        """Whether the program has written something nobody asked for yet (a reply out of turn)."""
        if self._buffer:
            return True
        try:
            chunk = os.read(self._out, 65536)
        except BlockingIOError:
            return False
        self._buffer += chunk
        return bool(chunk)

    def receive(self, seconds: float, waiting_for: str) -> bytes:
        """One line, without its end; raises :class:`ProtocolError` (late, exited, oversized)."""
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as sel:
            sel.register(self._out, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if len(self._buffer) > self.limits.line_bytes:
                    raise ProtocolError(ProtocolFault.OVERSIZED, f"a reply longer than {self.limits.line_bytes} bytes")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProtocolError(ProtocolFault.LATE, f"no reply to the {waiting_for} within {seconds:g} s")
                if not sel.select(left):
                    continue
                chunk = os.read(self._out, 65536)
                if not chunk:
                    raise self._exited(f"without replying to the {waiting_for}")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        if len(line) > self.limits.line_bytes:
            raise ProtocolError(ProtocolFault.OVERSIZED, f"a reply longer than {self.limits.line_bytes} bytes")
        return line.rstrip(b"\r")

    def close(self, grace: float) -> None:
        if self._finalizer.alive:
            self._finalizer.detach()
            _stop(self.proc, grace)
            self.stderr.close()


class ExecAssistant(BaseAssistant):
    """An assistant whose decisions a separate program makes (see the module's documentation).

    ``argv`` is the program and its arguments; ``name`` is the assistant's name in the trajectory
    (``exec:COMMAND``, or a hosted plug-in's name); ``config`` goes to the program in the briefing;
    ``knowledge`` sends it the knowledge view.
    """

    def __init__(self, argv: list[str], name: str, *, config: Mapping[str, Any] | None = None,
                 limits: Limits | None = None, knowledge: bool = False, env: Mapping[str, str] | None = None):
        super().__init__(**dict(config or {}))
        self.argv, self.name, self.knowledge = list(argv), name, knowledge
        self.limits = limits or Limits.from_env()
        self.env = env
        self.channel: Channel | None = None
        self.failure: ProtocolError | None = None
        self.fault: ProtocolFault | None = None      # why the session ended at this boundary, if it did
        self.pending: dict[str, Any] | None = None   # the last outcome, not sent yet
        self.sent_outcomes = 0
        self.known: frozenset[str] = frozenset()
        self.candidates: list[frozenset[str]] = []
        self.closed = False

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.known = known_ids(briefing)
        self.pending, self.sent_outcomes, self.candidates, self.closed = None, 0, [], False
        graphs = view_as_ntriples(briefing.store) if self.knowledge and briefing.store is not None else None
        message = briefing_message(briefing, self.limits, self.config, graphs)
        try:
            self.channel = Channel(self.argv, self.limits, self.env)
            self.channel.send(message, self.limits.start_seconds)
        except ProtocolError as exc:       # told at the first suggestion: the runner ends the session there
            self.failure = exc

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        self.pending = outcome_json(outcome)   # JSON across the boundary, sent when the next reply is asked for;
        # the end message carries the last

    def suggest(self) -> Action | Hypothesis | None:
        try:
            if self.failure is not None:
                raise self.failure
            assert self.channel is not None and self.briefing is not None
            if self.pending is None:
                waiting, seconds = "briefing", self.limits.start_seconds
            else:
                if self.channel.early():
                    raise ProtocolError(ProtocolFault.OUT_OF_TURN, "a reply came before the outcome it would answer "
                                                                   "(exactly one reply follows each message)")
                outcome, self.pending = self.pending, None
                self.sent_outcomes += 1
                budget = self.briefing.budget
                total = sum(float(o.get("cost", 0.0)) for o in self.outcomes)
                self.channel.send({"kind": "outcome", "protocol": PROTOCOL_VERSION, "round": len(self.outcomes),
                                   "rounds_left": max(0, budget - len(self.outcomes)), "total_cost": total,
                                   "outcome": outcome}, self.limits.reply_seconds)
                waiting, seconds = "outcome", self.limits.reply_seconds
            move, self.candidates = read_reply(self.channel.receive(seconds, f"{waiting} message"), self.known,
                                               self.briefing.catalogue)
            return move
        except ProtocolError as exc:
            self.fault = exc.fault
            raise

    def ranked_candidates(self) -> list[frozenset[str]]:
        return list(self.candidates)

    def close(self, end: str) -> None:
        if self.closed or self.channel is None:
            return
        self.closed = True
        total = sum(float(o.get("cost", 0.0)) for o in self.outcomes)
        try:
            self.channel.send(end_message(end, self.pending, len(self.outcomes), total, self.fault),
                              min(self.limits.grace_seconds, self.limits.reply_seconds))
        except ProtocolError:
            pass      # it is going anyway
        self.channel.close(self.limits.grace_seconds)
