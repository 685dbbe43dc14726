"""Evaluation campaigns as RDF: configuration, versions, slots, batches.

A campaign ``evaluation/{id}`` holds a ``dk:EvaluationRun`` with its
configuration (JSON), the code version, the version (content hash) of every
scenario and system graph it used, and one ``dk:EvaluationBatch`` per finished
batch of each assistant on each scenario (the convergence state after it).
Each trajectory states ``<campaign> dk:hasTrajectory <trajectory>`` (and its
batch, and a summary of counts) in *its own* graph, so a trajectory and its
campaign entry are one transaction: a campaign killed at any moment resumes
with no finished trajectory lost or run twice.

A slot is (assistant, scenario number, seed); the fixed protocol runs seeds
``seed … seed+runs-1`` as one batch, the adaptive one runs batch ``b`` on seeds
``seed + b·batch_size …``.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pyoxigraph as ox

from .. import __version__
from ..errors import AssistantError, ChangedGraph, InputError, KnowledgeChanged, UnknownTermError
from ..kg import graphs
from ..kg.vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from ..agents.trust import Origin
    from ..env.scenarios import Scenario
    from ..kg.store import KnowledgeStore

CAMPAIGN_BASE = "https://w3id.org/diagkg/evaluation/"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
PROTOCOLS = ("fixed", "adaptive")
RETRY_ENDS = frozenset({"crashed", "llm_truncation"})
STATE_IRIS = {"continue": DK.Continuing, "converged": DK.Converged, "cap": DK.Capped, "complete": DK.Completed}
FINAL_STATES = frozenset({"converged", "cap", "complete"})


@dataclass(frozen=True)
class CampaignConfig:
    """What a campaign runs; stored as JSON in its graph and read back on resume."""

    assistants: tuple[str, ...]
    scenarios: tuple[int, ...]
    config: dict[str, Any] = field(default_factory=dict)   # every assistant's configuration
    protocol: str = "fixed"
    runs: int = 1
    batch_size: int = 10
    max_batches: int = 5
    seed: int = 0
    name: str = "campaign"

    def __post_init__(self) -> None:
        if not self.assistants:
            raise InputError("name at least one assistant (--assistant NAME[,NAME…])")
        if len(set(self.assistants)) != len(self.assistants):
            raise InputError(f"an assistant is named twice: {', '.join(self.assistants)}")
        if not self.scenarios:
            raise InputError("the scenario selection is empty")
        if self.protocol not in PROTOCOLS:
            raise InputError(f"unknown protocol {self.protocol!r}; use one of {', '.join(PROTOCOLS)}")
        for what, value in (("--runs", self.runs), ("--batch-size", self.batch_size),
                            ("--max-batches", self.max_batches)):
            if value < 1:
                raise InputError(f"{what} must be at least 1, got {value}")
        self.check_keys()

    def declared(self) -> dict[str, frozenset[str] | None]:
        """Each assistant's declared configuration keys (None: it takes any, see
        :func:`~diagkg.runs.hosting.declared_keys`: a plug-in that is not trusted is asked in a process of its own)."""
        from ..runs.hosting import declared_keys

        return {a: declared_keys(a) for a in self.assistants}

    def check_keys(self) -> None:
        """Refuse a configuration key that no assistant of the campaign takes (nor the campaign's judge:
        ``llm`` and a language model's keys), naming the nearest ones."""
        from ..agents.registry import keys_with_nearest
        from ..llm.settings import CONFIG_KEYS as LLM_KEYS

        declared = [keys for keys in self.declared().values() if keys is not None]
        if not self.config or len(declared) < len(self.assistants):
            return
        taken = frozenset({"llm"}) | LLM_KEYS | frozenset().union(*declared)
        unknown = sorted(set(self.config) - taken)
        if unknown:
            raise InputError(f"no assistant of the campaign ({', '.join(self.assistants)}) takes the configuration "
                             f"key {keys_with_nearest(unknown, taken)}")

    def config_for(self, assistant: str) -> dict[str, Any]:
        """What ``assistant`` is given of the campaign's configuration (shared by every assistant): the keys it
        declares; one that declares none (or whose keys cannot be known: a program, a plug-in that cannot be
        loaded) the keys no other assistant of the campaign declares (a shipped assistant's key given to an
        outside plug-in beside it made it refuse every session)."""
        declared = self.declared()
        keys = declared.get(assistant)
        if keys is None:
            claimed = set().union(*(k for a, k in declared.items() if a != assistant and k is not None))
            return {k: v for k, v in self.config.items() if k not in claimed}
        return {k: v for k, v in self.config.items() if k in keys}

    @property
    def per_batch(self) -> int:
        return self.runs if self.protocol == "fixed" else self.batch_size

    @property
    def batch_cap(self) -> int:
        return 1 if self.protocol == "fixed" else self.max_batches

    def seeds(self, batch: int) -> list[int]:
        start = self.seed + batch * self.per_batch
        return list(range(start, start + self.per_batch))

    def to_json(self) -> str:
        data = asdict(self)
        data["assistants"], data["scenarios"] = list(self.assistants), list(self.scenarios)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "CampaignConfig":
        data = json.loads(text)
        data["assistants"], data["scenarios"] = tuple(data["assistants"]), tuple(data["scenarios"])
        return cls(**data)


@dataclass(frozen=True)
class Campaign:
    id: str
    config: CampaignConfig
    allow_changed: bool = False     # resume even if its scenarios or systems changed (see check_versions)

    @property
    def iri(self) -> str:
        return CAMPAIGN_BASE + self.id

    @property
    def node(self) -> ox.NamedNode:
        return ox.NamedNode(self.iri)

    @property
    def graph(self) -> ox.NamedNode:
        return graphs.named("evaluation", self.id)


@dataclass(frozen=True)
class Task:
    """One session to run: a slot of a campaign."""

    campaign: str          # the campaign's IRI
    assistant: str
    config: dict[str, Any]
    scenario: int
    seed: int
    batch: int
    replaces: str = ""     # the IRI of a failed trajectory this one replaces (--retry-failed)

    @property
    def slot(self) -> tuple[str, int, int]:
        return (self.assistant, self.scenario, self.seed)


@dataclass(frozen=True)
class Recorded:
    trajectory: str
    batch: int
    end: str


def code_version() -> str:
    """diagkg's version, with the git commit when the code is a checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
        commit = out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"diagkg {__version__}" + (f" ({commit})" if commit else "")


def new_campaign_id(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "campaign"
    return f"{safe}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S%f')[:-3]}"


# ---------------------------------------------------------------------------
# scenario selection
# ---------------------------------------------------------------------------

def select_scenarios(store: KnowledgeStore, items: Iterable[str],
                     load: Callable[[list[str]], list[str]] | None = None) -> list[int]:
    """Scenario numbers for ``all``, ``1,2,5-9``, ``system:KEY``, ``category:NAME``, ``set:NAME``
    (a named set, see ``diagkg split``), identifiers and scenario files or folders of them (loaded through
    ``load``, which returns their identifiers)."""
    from ..env.scenarios import ScenarioCatalog

    catalog = ScenarioCatalog(store)
    chosen: list[int] = []
    files: list[str] = []
    for raw in items:
        for item in (p.strip() for p in raw.split(",")):
            if not item:
                continue
            low = item.lower()
            if Path(item).suffix.lower() in (".ttl", ".trig", ".nt", ".nq", ".jsonld", ".rdf"):
                files.append(item)
            elif low == "all":
                chosen.extend(catalog.numbers())
            elif low.startswith("system:"):
                key = item.split(":", 1)[1]
                entries = [catalog.entry(n) for n in catalog.numbers()]
                found = [e.number for e in entries if e.key == key]
                if not found:
                    keys = sorted({e.key for e in entries})
                    raise InputError(f"--scenarios {item}: no scenario on a system {key!r} "
                                     f"(systems with scenarios: {', '.join(keys) or 'none'})")
                chosen.extend(found)
            elif low.startswith("set:"):
                chosen.extend(set_members(store, item.split(":", 1)[1]))
            elif low.startswith("category:"):
                name = item.split(":", 1)[1].lower()
                found = [s.number for s in _all(store, catalog) if name in {c.lower() for c in s.categories}]
                if not found:
                    cats = sorted({c for s in _all(store, catalog) for c in s.categories})
                    raise InputError(f"--scenarios {item}: no scenario of category {name!r} "
                                     f"(categories: {', '.join(cats) or 'none'})")
                chosen.extend(found)
            elif re.fullmatch(r"\d+-\d+", item):
                lo, hi = (int(x) for x in item.split("-"))
                if lo > hi:
                    raise InputError(f"--scenarios {item}: the range is empty")
                known = set(catalog.numbers())
                missing = [n for n in range(lo, hi + 1) if n not in known]
                if missing:
                    raise InputError(f"--scenarios {item}: no scenario numbered {', '.join(map(str, missing[:10]))}")
                chosen.extend(range(lo, hi + 1))
            else:
                try:
                    chosen.append(catalog.resolve(int(item) if item.isdigit() else item).number)
                except UnknownTermError as exc:
                    if not Path(item).is_dir():       # a folder of scenario files, as load and check take one
                        raise InputError(f"--scenarios {item}: {exc}") from None
                    files.append(item)
    if files:
        if load is None:
            raise InputError("scenario files cannot be loaded here")
        ids = load(files)
        catalog = ScenarioCatalog(store)           # after the load: it lists the new scenarios
        chosen.extend(catalog.resolve(sid).number for sid in ids)
    return list(dict.fromkeys(chosen))


def set_members(store: KnowledgeStore, name: str) -> list[int]:
    """The numbers of the scenarios of a named set (``diagkg split``), all held by the store."""
    rows = store.select("scenario-set-members", {"name": ox.Literal(name)})
    if not rows:
        sets = sorted({str(r["name"]) for r in store.select("scenario-sets")})
        raise InputError(f"--scenarios set:{name}: no scenario set {name!r} in the store "
                         f"(sets: {', '.join(sets) or 'none'}; diagkg split makes them)")
    missing = [r["scenario"] for r in rows if r["number"] is None]
    if missing:
        raise InputError(f"--scenarios set:{name}: {len(missing)} of its scenarios are not in the store "
                         f"(e.g. {missing[0]}); load them first")
    return [int(r["number"]) for r in rows]


def _all(store: KnowledgeStore, catalog: Any) -> list[Scenario]:
    return [catalog.resolve(n) for n in catalog.numbers()]


# ---------------------------------------------------------------------------
# the campaign graph
# ---------------------------------------------------------------------------

def _lit(value: Any, datatype: str | None = None) -> ox.Literal:
    if datatype:
        return ox.Literal(str(value), datatype=ox.NamedNode(XSD + datatype))
    return ox.Literal(value)


def used_graphs(store: KnowledgeStore, numbers: Iterable[int]) -> list[ox.NamedNode]:
    """The scenario and system graphs (with their inferences) of these scenarios."""
    from ..env.scenarios import ScenarioCatalog
    from ..env.workspace import graph_holding

    catalog = ScenarioCatalog(store)
    out: list[ox.NamedNode] = []
    for n in numbers:
        s = catalog.entry(n)
        out.append(graph_holding(store, s.iri, str(DK.Scenario)) or graphs.named("scenario", s.id))
        out.append(graph_holding(store, s.system_iri, str(DK.System)) or graphs.system(s.key))
    return list(dict.fromkeys(out))


def _origin(assistant: str) -> Origin | None:
    """Where an assistant comes from (:func:`diagkg.agents.registry.origin`); None when it is no longer installed
    (each of its sessions says so, as before)."""
    from ..agents.registry import origin

    try:
        return origin(assistant)
    except UnknownTermError:
        return None


def policy_graphs(store: KnowledgeStore, config: CampaignConfig) -> list[ox.NamedNode]:
    """The stored optimal policies (``optimum/{key}``) of the campaign's systems when one of its assistants is
    briefed with them (the optimal assistant): recorded with the scenarios and systems, so that a campaign
    resumed after ``diagkg optimum`` worked a policy out again says so rather than mix two policies' sessions."""
    from ..agents.trust import Policy
    from ..env.scenarios import ScenarioCatalog

    policy = Policy.from_env()
    if not any(o is not None and policy.may_see_prior(a, o) for a, o in ((a, _origin(a)) for a in config.assistants)):
        return []
    catalog = ScenarioCatalog(store)
    keys = sorted({catalog.entry(n).key for n in config.scenarios})
    return [g for g in (graphs.named("optimum", key) for key in keys) if store.raw.contains_named_graph(g)]


def check_ready(store: KnowledgeStore, pairs: Iterable[tuple[str, int]]) -> None:
    """Refuse, before a session runs, (assistant, scenario number) pairs an assistant cannot play: what its
    ``unready`` says of the scenarios' systems (the optimal assistant without a current stored policy), one
    line each; otherwise every session of it would end at its start and count as a failure."""
    from ..agents.registry import factory
    from ..agents.trust import Policy
    from ..env.scenarios import ScenarioCatalog

    catalog = ScenarioCatalog(store)
    policy = Policy.from_env()
    systems: dict[str, dict[str, str]] = {}
    for assistant, number in pairs:     # only what runs in this process: a plug-in of its own process is not loaded
        where = _origin(assistant)
        if where is not None and policy.in_process(assistant, where):
            s = catalog.entry(number)
            systems.setdefault(assistant, {})[s.key] = s.system_iri
    lines = []
    for assistant, keyed in systems.items():
        try:
            unready = getattr(factory(assistant), "unready", None)
        except AssistantError:          # a plug-in that does not load: each session says so, as before
            continue
        lines += [f"{assistant}: {line}" for line in (unready(store, keyed) if callable(unready) else ())]
    if lines:
        raise InputError("an assistant cannot play these scenarios:\n  " + "\n  ".join(lines))


def create(store: KnowledgeStore, config: CampaignConfig, campaign_id: str | None = None) -> Campaign:
    """Write a new campaign's graph (configuration, code and knowledge versions)."""
    campaign = Campaign(campaign_id or new_campaign_id(config.name), config)
    if store.raw.contains_named_graph(campaign.graph):
        raise InputError(f"a campaign {campaign.id} is already in the store")
    c = campaign.node
    triples = [ox.Triple(c, RDF_TYPE, ox.NamedNode(DK.EvaluationRun)),
               ox.Triple(c, RDFS_LABEL, _lit(config.name)),
               ox.Triple(c, ox.NamedNode(PROV + "startedAtTime"),
                         _lit(datetime.now(timezone.utc).isoformat(), "dateTime")),
               ox.Triple(c, ox.NamedNode(DK.campaignConfiguration), _lit(config.to_json())),
               ox.Triple(c, ox.NamedNode(DK.codeVersion), _lit(code_version()))]
    used = used_graphs(store, config.scenarios) + policy_graphs(store, config)
    triples += graphs.used_versions(c, campaign.iri, [(g, store.version_of(g)) for g in used])
    store.write_graphs({campaign.graph: triples})
    return campaign


def campaigns(store: KnowledgeStore) -> list[dict[str, Any]]:
    return store.select("campaign-list")


def open_campaign(store: KnowledgeStore, ref: str, *, allow_changed: bool = False) -> Campaign:
    """A stored campaign by id (or IRI), or by the name it was given (``--name``) when one campaign
    has it; ``allow_changed``: resume it even if the knowledge it ran on changed (see
    :func:`check_versions`)."""
    cid = ref[len(CAMPAIGN_BASE):] if ref.startswith(CAMPAIGN_BASE) else ref
    try:
        rows = store.select("campaign-list", {"campaign": ox.NamedNode(CAMPAIGN_BASE + cid)})
    except ValueError:           # characters no IRI has: no id, perhaps a name
        rows = []
    if not rows:
        every = campaigns(store)
        named = [r for r in every if r["name"] == ref]
        if len(named) > 1:
            ids = [r["campaign"][len(CAMPAIGN_BASE):] for r in named]
            raise InputError(f"{len(named)} campaigns are named {ref!r}: {', '.join(ids)}; give one of their ids")
        if not named:
            known = [r["campaign"][len(CAMPAIGN_BASE):] for r in every]
            raise InputError(f"no campaign {cid!r} in the store (campaigns: {', '.join(known[-10:]) or 'none'})")
        rows = named
        cid = rows[0]["campaign"][len(CAMPAIGN_BASE):]
    return Campaign(cid, CampaignConfig.from_json(rows[0]["config"]), allow_changed=allow_changed)


def changed_versions(store: KnowledgeStore, campaign: Campaign) -> list[ChangedGraph]:
    """The scenario and system graphs (and the optimal policies its assistants were briefed with) whose version
    (``dk:contentHash``, which every write to them refreshes) differs from the one recorded when the campaign
    started."""
    return graphs.changed(store, store.select("campaign-versions", {"campaign": campaign.node}))


def check_versions(store: KnowledgeStore, campaign: Campaign) -> None:
    """Refuse to resume a campaign whose scenarios or systems changed since it started
    (:class:`~diagkg.errors.KnowledgeChanged`, naming each graph and both versions), unless
    it was opened with ``allow_changed``."""
    changed = changed_versions(store, campaign)
    if changed and not campaign.allow_changed:
        raise KnowledgeChanged(campaign.id, changed)


def recorded(store: KnowledgeStore, campaign: Campaign) -> dict[tuple[str, int, int], Recorded]:
    """The campaign's trajectories by slot."""
    return {(r["assistant"], int(r["scenario"]), int(r["seed"])): Recorded(r["trajectory"], int(r["batch"]), r["end"])
            for r in store.select("campaign-trajectories", {"campaign": campaign.node})}


def batches(store: KnowledgeStore, campaign: Campaign) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The finished batches of each assistant × scenario, in order."""
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in store.select("campaign-batches", {"campaign": campaign.node}):
        out.setdefault((r["assistant"], int(r["scenario"])), []).append(r)
    return out


def batch_quads(campaign: Campaign, assistant: str, scenario_iri: str, number: int, batch: int, state: str,
                reason: str = "", execution_ari: float | None = None, intent_ari: float | None = None,
                noise_floor: float | None = None, labels: Iterable[int] | None = None,
                notes: Iterable[str] = ()) -> list[ox.Quad]:
    """The record of one finished batch, for the campaign graph."""
    from urllib.parse import quote

    b = ox.NamedNode(f"{campaign.iri}#batch-{quote(assistant, safe='')}-{number}-{batch}")
    g = campaign.graph
    quads = [ox.Quad(b, RDF_TYPE, ox.NamedNode(DK.EvaluationBatch), g),
             ox.Quad(b, ox.NamedNode(DK.inCampaign), campaign.node, g),
             ox.Quad(b, ox.NamedNode(DK.assistantName), _lit(assistant), g),
             ox.Quad(b, ox.NamedNode(DK.batchScenario), ox.NamedNode(scenario_iri), g),
             ox.Quad(b, ox.NamedNode(DK.batchIndex), _lit(batch, "integer"), g),
             ox.Quad(b, ox.NamedNode(DK.convergenceState), ox.NamedNode(STATE_IRIS[state]), g)]
    if reason:
        quads.append(ox.Quad(b, ox.NamedNode(DK.convergenceReason), _lit(reason), g))
    for term, value in ((DK.executionAri, execution_ari), (DK.intentAri, intent_ari), (DK.noiseFloor, noise_floor)):
        if value is not None:
            quads.append(ox.Quad(b, ox.NamedNode(term), _lit(float(value), "double"), g))
    if labels is not None:
        quads.append(ox.Quad(b, ox.NamedNode(DK.clusterLabels), _lit(",".join(str(x) for x in labels)), g))
    quads.extend(ox.Quad(b, ox.NamedNode(DK.batchNote), _lit(n), g) for n in notes)
    return quads
