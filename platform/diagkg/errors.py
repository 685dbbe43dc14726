"""The exceptions diagkg raises.

Library code raises these and never prints or exits; only the command line
(:mod:`diagkg.cli`) turns them into messages and exit codes::

    DiagkgError
    ├── InputError              unreadable input: missing file, bad syntax (exit 2)
    │   ├── RdfSyntaxError      malformed RDF, with file, line and column
    │   ├── ExpressionError     a behaviour expression that is not allowed or fails
    │   ├── NotRdfError         a document a SPARQL LOAD fetched is not RDF
    │   ├── UpdateRefused       an update that would write what no update may (derived graphs…)
    │   └── KnowledgeChanged    a campaign's scenarios or systems changed since it started
    ├── ValidationError         input read fine but violates the SHACL shapes (exit 1)
    ├── QueryError              a SPARQL query or template that cannot be used (exit 2)
    │   ├── UnknownQueryError   no query of that name in queries/
    │   └── UpdateTimeout       an update ran past its time limit and was stopped (nothing written)
    ├── UnknownTermError        a name that is not in the ontology or the store
    ├── ActionError             a structured action naming an unknown action or part
    ├── AssistantError          an assistant could not decide
    │   └── LLMTruncation       a language model's reply was cut off or unusable
    ├── ReasonerError           the OWL reasoner could not run or found the data inconsistent
    │   └── ReasonerUnavailable HermiT could not be run (no Java, or Java failed)
    ├── SimulationError         ngspice could not be loaded or could not solve a circuit
    ├── SessionError            a session used out of order (step before reset, after its end)
    └── StoreError              the store cannot be opened or written
        ├── StoreLockedError    another process still holds the write lock after waiting
        ├── CampaignRunning     another process runs the campaign now (one run of a campaign at a time)
        ├── UpdateConflict      what an update read kept changing under it (nothing written)
        ├── LedgerUnavailable   a session ended but its ledger could not be read off the store (its result kept)
        └── TrajectoryKept      a finished session's trajectory went to a file instead of the store
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol, Sequence


class Located(Protocol):
    """What a violation has (see :class:`diagkg.kg.validation.Violation`)."""

    @property
    def file(self) -> str: ...


def nearest(name: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known name nearest to ``name`` (a misspelling's "did you mean"), None when none is near enough:
    for configuration keys, part names and ontology terms alike."""
    import difflib

    near = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=cutoff)
    return near[0] if near else None


def said_once(violations: Iterable[Located]) -> list[str]:
    """The lines that say ``violations`` to people, each once: two SHACL results on one value may read
    alike ("ten" is neither an integer nor one > 0); the report as data keeps both."""
    return list(dict.fromkeys(map(str, violations)))


class DiagkgError(Exception):
    """Base class of every error diagkg raises on purpose."""


class InputError(DiagkgError):
    """An input that cannot be read at all (missing file, unknown format, bad syntax)."""


@dataclass
class SourceLocation:
    """Where in a file something is: 1-based line and column (either may be unknown)."""

    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class RdfSyntaxError(InputError):
    """Malformed RDF: the message starts with ``file:line:column``."""

    def __init__(self, location: SourceLocation, detail: str):
        self.location = location
        self.detail = detail
        super().__init__(f"{location}: {detail}")


class ValidationError(DiagkgError):
    """The data was read but does not conform to the shapes; nothing was loaded."""

    SHOWN = 5       # the violations its message names (``lines`` holds every one)

    def __init__(self, violations: Sequence[Located]):
        self.violations = list(violations)
        self.lines = said_once(self.violations)
        files = sorted({v.file for v in self.violations})
        # the count alone, for callers that print ``lines`` themselves (the CLI, the server)
        self.summary = f"{len(self.lines)} SHACL violation(s) in {', '.join(files) or 'the data'}"
        # the message names the first violations: from Python (diagkg.make of a scenario file), a traceback
        # said "1 SHACL violation(s) in FILE" and never which
        more = len(self.lines) - self.SHOWN
        super().__init__("\n  ".join([self.summary + ":", *self.lines[:self.SHOWN]])
                         + (f"\n  … and {more} more (.lines holds them all)" if more > 0 else ""))


class QueryError(DiagkgError):
    """A query that cannot be parsed, rendered or run."""


class UnknownQueryError(QueryError):
    """No query file of that name."""


class UpdateTimeout(QueryError):
    """A SPARQL update ran longer than its time limit; its worker was stopped and nothing was written."""


class NotRdfError(InputError):
    """A document that a SPARQL ``LOAD`` fetched is not RDF (or not in the format it claims)."""


class UpdateRefused(InputError):
    """An update that writes what no update may write (diagkg's own graphs, derived graphs), or that
    would change what a graph is (the system or scenario it describes)."""


@dataclass(frozen=True)
class ChangedGraph:
    """A graph whose version differs from the one recorded (see :class:`KnowledgeChanged`)."""

    graph: str
    recorded: str
    now: str

    def __str__(self) -> str:
        return f"<{self.graph}> (recorded {self.recorded[:16] or 'absent'}, now {self.now[:16] or 'absent'})"


class KnowledgeChanged(InputError):
    """A campaign's scenarios or systems changed since it started (resume refuses unless told)."""

    def __init__(self, campaign: str, changed: Sequence[ChangedGraph]):
        self.campaign = campaign
        self.changed = list(changed)
        super().__init__(
            f"campaign {campaign}: {len(self.changed)} graph(s) changed since it started, so its trajectories "
            f"would not be comparable: " + "; ".join(str(c) for c in self.changed)
            + ". Start a new campaign, or resume anyway with --allow-changed")


class VersionsNotKept(InputError):
    """A campaign cannot be exported or imported with the knowledge it was played on: the store (export) or the
    export (import) holds another version of a scenario, system or policy it used (``changed`` names each)."""

    def __init__(self, message: str, changed: Sequence[ChangedGraph]):
        self.changed = list(changed)
        super().__init__(message)


class UnknownTermError(DiagkgError):
    """A term (component, system, scenario…) that does not exist."""


class AssistantError(DiagkgError):
    """An assistant failed to produce a suggestion."""


class LLMTruncation(AssistantError):
    """A language model's reply was cut off or could not be used; the session
    ends with ``llm_truncation`` (excluded from success metrics)."""


class StoreError(DiagkgError):
    """The store cannot be opened, read or written."""


class StoreLockedError(StoreError):
    """Another process holds the write lock of an on-disk store (for a reader: it is writing, and readers
    open the store between writers' commits, :mod:`diagkg.kg.turns`)."""

    def __init__(self, path: Path, waited: float = 0.0, *, reading: bool = False, holder: str = ""):
        self.path = path
        self.waited = waited
        self.reading = reading
        self.holder = holder        # who holds it, where the machine tells (pid N (command)); else empty
        who = f" It is held by {holder}." if holder else ""
        if reading:
            text = (f"the store at {path} is still being written by another process after waiting {waited:g} s "
                    f"(readers open it between commits).{who} Nothing was read or changed; try again when the other "
                    "process is done, or wait longer with --wait SECONDS.")
        else:
            text = (f"the store at {path} is still being written by another process after waiting "
                    f"{waited:g} s (one writer at a time).{who} Nothing was written. Read-only commands "
                    "(query, graphs, dump) still work between its commits; try again when the other process is "
                    "done, wait longer with --wait SECONDS, or use --store to pick another store.")
        super().__init__(text)


class CampaignRunning(StoreError):
    """Another run holds the campaign now (this machine's lock file, :mod:`diagkg.evaluation.money_journal`, or
    the lease in the store, from any machine, :mod:`diagkg.evaluation.run_lease`): a second run would play the same
    slots and count the other's money as a killed run's."""

    def __init__(self, campaign: str, holder: str = ""):
        self.campaign = campaign
        self.holder = holder        # the process running it (pid N [on HOST]), where its lock file or lease tells
        who = f" ({holder})" if holder else ""
        super().__init__(f"campaign {campaign} is being run by another process{who}; nothing was run. Wait for it "
                         f"to end, or stop it, then resume: diagkg evaluate --resume {campaign}")


class UpdateConflict(StoreError):
    """The graphs an update read or wrote kept changing (other writers) between computing its change
    and applying it; nothing was written."""


class TrajectoryKept(StoreError):
    """A finished session could not be stored; its trajectory was saved as an N-Quads file
    (:attr:`file`) that :attr:`command` loads into the store later: nothing is lost."""

    def __init__(self, reason: StoreError, file: Path, command: str):
        self.reason = reason
        self.file = file
        self.command = command
        super().__init__(f"the finished session's trajectory could not be stored: {reason} It is kept in "
                         f"{file}; store it later with: {command}")


class LedgerUnavailable(StoreError):
    """A session ended, but the store could not be read to work out its hypothesis ledger (a remote store
    that went away): :attr:`result` is the session's result, its trajectory complete but for the ledger,
    for the caller to store or keep (:func:`diagkg.runs.keeping.store_or_keep`) rather than lose."""

    def __init__(self, reason: StoreError, result: object):
        self.reason = reason
        self.result = result
        super().__init__(f"the session ended, but its hypothesis ledger could not be worked out: {reason}")


class ExpressionError(InputError):
    """An expression in a behaviour declaration that is not allowed or fails."""


class ActionError(DiagkgError):
    """A structured action that names an unknown action or part."""


class ReasonerError(DiagkgError):
    """The reasoner could not run or found the data inconsistent."""


class ReasonerUnavailable(ReasonerError):
    """HermiT could not be run (no Java, or the Java process failed)."""


class SimulationError(DiagkgError):
    """ngspice could not be loaded or could not solve a circuit."""


class SessionError(DiagkgError):
    """A session used out of order: a step before ``reset()``, or after the session ended."""


class EnvironmentFailure(DiagkgError):
    """The machines a command runs on failed it, not its input: worker processes that keep dying, a Dask
    cluster whose scheduler is gone (exit 3 on the command line, as a store that cannot be used)."""


class ClusterLost(EnvironmentFailure):
    """A campaign's Dask cluster cancelled the sessions it was running (its scheduler is gone)."""


class WorkerDied(EnvironmentFailure):
    """A campaign's worker process died running a session (a native crash, the out-of-memory killer): the
    session is recorded ``crashed`` with this as its reason; raised when worker processes keep dying."""
