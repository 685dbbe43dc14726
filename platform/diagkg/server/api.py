"""The JSON API: systems, scenarios (validate, load), assistants, trajectories, queries.

Everything is read from the store with the shipped query files; uploads go
through the same validation (:class:`diagkg.kg.validation.Validator` with
:func:`~diagkg.kg.validation.store_resolver`) and the same load
(:func:`diagkg.kg.loading.load_documents`) as ``diagkg validate`` and
``diagkg load``, so a report names the same lines as the command line.

Campaigns and reports: the evaluation layer (below this one) writes its results
into ``evaluation/{id}`` graphs; ``/api/campaigns`` lists those graphs. Routes
that render the evaluation's own reports belong in a module of this package
beside this one (``server/campaigns.py``), importing :mod:`diagkg.evaluation`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ..errors import InputError, RdfSyntaxError, UnknownTermError, ValidationError
from ..kg import graphs
from .state import TokenFirst, check_token, state_of

router = APIRouter(prefix="/api", route_class=TokenFirst)


def _rows(request: Request, query: str, **bindings: Any) -> list[dict[str, Any]]:
    return state_of(request).fresh().select(query, bindings or None)


@router.get("/systems", tags=["systems"], summary="The systems in the store")
def systems(request: Request) -> list[dict[str, Any]]:
    return _rows(request, "system-summary")


@router.get("/scenarios", tags=["scenarios"], summary="The scenarios in the store (optionally of one system)")
def scenarios(request: Request, system: str | None = None) -> list[dict[str, Any]]:
    rows = _rows(request, "scenario-index")
    return [r for r in rows if system is None or r["key"] == system]


@router.get("/scenarios/{ref}", tags=["scenarios"], summary="One scenario: its index row and its Turtle")
def scenario(request: Request, ref: str) -> dict[str, Any]:
    store = state_of(request).fresh()
    row = _find_scenario(store.select("scenario-index"), ref)
    graph = graphs.named("scenario", row["id"])
    g = store.graph_as_rdflib(graph)
    g.bind("dk", "https://w3id.org/diagkg/ontology#")
    return {**row, "graph": graph.value, "turtle": g.serialize(format="turtle")}


def _find_scenario(rows: list[dict[str, Any]], ref: str) -> dict[str, Any]:
    for r in rows:
        if r["id"] == ref or str(r["number"]) == ref or r["scenario"] == ref:
            return r
    raise UnknownTermError(f"no scenario {ref!r} in the store")


def validation_report(request: Request, text: str, name: str) -> dict[str, Any]:
    """The located report of a Turtle text, judged in the context of the store
    (as ``diagkg validate`` does); ``document`` is the parsed text (or None)."""
    from ..kg.rdfio import parse_text
    from ..kg.store import graph_for
    from ..kg.validation import Validator, store_resolver

    store = state_of(request).fresh()
    try:
        doc = parse_text(text, name)
        graph_for(doc)            # what a load refuses of a file as a whole (several scenarios in one)
    except RdfSyntaxError as exc:
        return {"conforms": False, "file": name, "violations": [],
                "error": {"message": str(exc), "detail": exc.detail, "line": exc.location.line,
                          "column": exc.location.column}}
    except InputError as exc:
        return {"conforms": False, "file": name, "violations": [],
                "error": {"message": str(exc), "detail": str(exc), "line": None, "column": None}}
    fallback: list[str] = []
    violations = Validator().validate_documents([doc], resolve=store_resolver(store, fallback))[doc.name]
    return {"conforms": not violations, "file": name, "error": None,
            "violations": [_violation_json(v) for v in violations],
            "context": {"shipped_systems": sorted(set(fallback))}}


def _violation_json(v: Any) -> dict[str, Any]:
    return {**v.__dict__, "text": str(v)}


async def _body_text(request: Request) -> str:
    raw = await request.body()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(400, f"the file is not UTF-8 text (byte {exc.start})") from None


@router.post("/scenarios/validate", tags=["scenarios"],
             summary="Validate a Turtle file (the request body) in the context of the store; nothing is written")
async def validate(request: Request, name: str = Query("upload.ttl", min_length=1, max_length=255,
                                                      description="file name used in messages")) -> dict[str, Any]:
    text = await _body_text(request)
    return await asyncio.to_thread(validation_report, request, text, name)


@router.post("/scenarios", tags=["scenarios"], dependencies=[Depends(check_token)],
             summary="Validate and load a Turtle file (the request body); all or nothing; needs the token")
async def load(request: Request, name: str = Query("upload.ttl", min_length=1, max_length=255,
                                                  description="file name (its graph is named after it)"),
               replace: bool = False) -> Response:
    from ..env.checks import load_warnings
    from ..kg.loading import load_documents
    from ..kg.rdfio import parse_text

    text = await _body_text(request)
    report = await asyncio.to_thread(validation_report, request, text, name)
    if not report["conforms"]:
        return JSONResponse({**report, "loaded": []}, status_code=422)
    state = state_of(request)

    def run() -> Any:
        done = load_documents(state.store, [(parse_text(text, name), f"upload:{name}")], replace=replace)
        # what `diagkg load` warns of (a fuse its system blows as set up…): the answer said nothing of it
        return done, load_warnings(state.store, list(done.inferred))

    try:
        done, warnings = await asyncio.to_thread(run)
    except ValidationError as exc:      # the store changed meanwhile
        return JSONResponse({"conforms": False, "file": name, "error": None, "loaded": [],
                             "violations": [_violation_json(v) for v in exc.violations]}, status_code=422)
    except InputError as exc:            # a collision: refused, naming both files
        return JSONResponse({"conforms": True, "file": name, "error": {"message": str(exc)}, "loaded": [],
                             "violations": []}, status_code=409)
    return JSONResponse({**report, "loaded": [item.__dict__ for item in done.loaded], "replaced": done.replaced,
                         "notes": done.notes, "inferred": done.inferred, "revalidated": done.revalidated,
                         "warnings": [w.to_dict() for w in warnings]})


@router.get("/assistants", tags=["sessions"], summary="The installed assistants")
def assistants() -> list[str]:
    from ..agents.registry import names

    return names()


@router.get("/trajectories", tags=["trajectories"], summary="Every stored trajectory, newest first")
def trajectories(request: Request) -> list[dict[str, Any]]:
    return _rows(request, "trajectory-list")


@router.get("/trajectories/{ref:path}/transcript.html", tags=["trajectories"], response_class=HTMLResponse,
            summary="A trajectory as an HTML chat transcript")
def transcript_html(request: Request, ref: str) -> HTMLResponse:
    from ..runs import transcript

    return HTMLResponse(transcript.to_html(transcript.load(state_of(request).fresh(), ref)))


@router.get("/trajectories/{ref:path}", tags=["trajectories"], summary="A trajectory's summary and rounds")
def trajectory(request: Request, ref: str) -> dict[str, Any]:
    from ..runs import transcript

    return transcript.load(state_of(request).fresh(), ref)


@router.get("/queries", tags=["sparql"], summary="The shipped queries (examples for the SPARQL page)")
def queries() -> list[dict[str, Any]]:
    from ..kg.queries import library

    lib = library()
    out = []
    for name in lib.names():
        q = lib.get(name)
        if q.is_update or q.is_template:
            continue
        out.append({"name": q.name, "summary": q.summary, "text": q.text,
                    "inputs": [{"name": p.name, "kind": p.kind, "optional": p.optional} for p in q.inputs]})
    return out


@router.get("/graphs", tags=["sparql"], summary="The named graphs with their triple counts")
def named_graphs(request: Request) -> list[dict[str, Any]]:
    return [{"graph": g, "triples": n} for g, n in state_of(request).fresh().graphs()]


@router.get("/campaigns", tags=["evaluation"], summary="Evaluation campaigns stored in the store (evaluation/… graphs)")
def campaigns(request: Request) -> list[dict[str, Any]]:
    prefix = graphs.BASE + "evaluation/"
    return [{"graph": g, "id": g[len(prefix):], "triples": n}
            for g, n in state_of(request).fresh().graphs() if g.startswith(prefix)]


@router.get("/systems/{key}/schematic.{fmt}", tags=["systems"],
            summary="A system's schematic drawn from the graph (svg, png or dot); lamps as simulated, "
                    "nominal or right after a scenario's faults (?scenario=ID)")
def schematic(request: Request, key: str, fmt: str, scenario: str | None = None, seed: int = Query(0, ge=0),
              faults: bool = Query(True, description="mark removed, blown and detached parts (false: only the lamps)")
              ) -> Response:
    from ..sim.schematic import FORMATS, render

    if fmt not in FORMATS:
        raise HTTPException(404, f"a schematic comes as {', '.join('.' + f for f in FORMATS)}")
    store = state_of(request).fresh()
    if scenario is None:
        return Response(render(store, key, fmt=fmt, seed=seed), media_type=FORMATS[fmt])
    from ..env.scenarios import ScenarioCatalog
    from ..env.service import make

    found = ScenarioCatalog.find(store, scenario)
    if found.key != key:
        raise HTTPException(400, f"scenario {found.id} runs on {found.key}, not {key}")
    with make(found, store) as session:
        session.reset(seed=seed)
        state, result = session.state(), session.initial_result
    return Response(render(store, key, state=state, result=result, fmt=fmt, faults=faults), media_type=FORMATS[fmt])
