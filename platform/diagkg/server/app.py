"""The ``diagkg serve`` application: one FastAPI app on one on-disk store.

Routes:

- ``/sparql``: the SPARQL 1.1 Protocol (GET, POST form, POST ``application/sparql-query``;
  updates by POST form ``update=`` or ``application/sparql-update``, with the token);
  queries run in worker processes (:mod:`diagkg.server.sparql_pool`) with a time
  limit and a result-size limit, in their client's turn, except those that cannot be
  slow (:mod:`diagkg.server.quick`); the default graph is the union of all graphs,
  as everywhere in diagkg, unless the query states its dataset (``FROM``, ``FROM NAMED``)
  or the request does (``default-graph-uri`` and ``named-graph-uri`` then define the whole
  dataset, as the SPARQL 1.1 Protocol §2.1.4 says); an update's ``using-graph-uri`` and
  ``using-named-graph-uri`` are refused (400): an update states its dataset with
  ``USING``/``WITH``;
- ``/rdf-graphs?graph=IRI``: the Graph Store Protocol, reading a named graph (``?default``: the default graph);
- ``/api/...``: the JSON API (:mod:`diagkg.server.api`, :mod:`diagkg.server.live`),
  described at ``/openapi.json`` and ``/docs``;
- ``/``: the web page (``server/static``).

Every request that writes needs the token (``Authorization: Bearer TOKEN``, or
HTTP Basic with the token as password); a server started without a token is
read-only and answers 403 to them. So does a query that makes the server fetch
(``SERVICE``), which also needs its host named with ``--allow-remote``.
Before any route, :mod:`diagkg.server.guard` checks the Host header, the Origin
of writes and the body's size; ``/sparql`` then reads the text with
:mod:`diagkg.server.precheck`, off the event loop. The security model:
``docs/server/security.md``.
"""

from __future__ import annotations

import asyncio
import math
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from fastapi import FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from ..errors import DiagkgError, QueryError
from ..kg.queries import from_text
from . import api, campaigns, describe, live, pages, precheck, quick
from .guard import Guard
from .sparql_pool import PoolBusy, QueryTimeout, Reply, http_of, parse_accept
from .sparql_pool import Request as WorkRequest
from .state import ServerConfig, ServerState, check_token, client_of, has_token, state_of, token_from_env

__all__ = ["ServerConfig", "create_app", "token_from_env"]


def _reply_response(reply: Reply, remote: bool = False) -> Response:
    code, media, body = http_of(reply, remote)
    return Response(body, status_code=code, media_type=media)


async def run_work(request: Request, work: WorkRequest, remote: bool = False) -> Response:
    """Run a query or graph read in a worker, in the client's turn (:mod:`diagkg.server.scheduling`)."""
    state = state_of(request)
    try:
        reply = await state.scheduler.run(client_of(request), work)
    except QueryTimeout as exc:
        return PlainTextResponse(f"query stopped: {exc}", status_code=503)
    except PoolBusy as exc:
        return PlainTextResponse(f"too busy: {exc}; try again", status_code=503)
    except (EOFError, OSError):          # the worker died under it (Oxigraph overflowed its stack)
        return PlainTextResponse("malformed query: the query stopped the worker that ran it (an expression or "
                                 "path nested or chained thousands deep?); nothing else was affected", status_code=400)
    return _reply_response(reply, remote)


async def _sparql_params(request: Request) -> dict[str, list[str]]:
    """The protocol's parameters; an update's token is checked before its body is read, and
    the body is decoded off the event loop (its size was bounded by :mod:`diagkg.server.guard`)."""
    params: dict[str, list[str]] = {}
    for k, v in request.query_params.multi_items():
        params.setdefault(k, []).append(v)
    if request.method == "POST":
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype not in (precheck.FORM, precheck.QUERY, precheck.UPDATE):
            raise HTTPException(415, "POST /sparql takes application/x-www-form-urlencoded, "
                                     "application/sparql-query or application/sparql-update")
        if ctype == precheck.UPDATE:
            check_token(request)
        raw = await request.body()
        for k, vs in (await asyncio.to_thread(precheck.body_params, ctype, raw)).items():
            params.setdefault(k, []).extend(vs)
    return params


# the SPARQL 1.1 Protocol's dataset of an update (§2.2.3): refused with 400, never ignored
USING_PARAMS = ("using-graph-uri", "using-named-graph-uri")
_GRAPH_PARAMS = [{"name": n, "in": "query", "required": False, "schema": {"type": "array", "items": {"type": "string"}},
                  "style": "form", "explode": True} for n in ("default-graph-uri", "named-graph-uri")]


def _add_sparql_routes(app: FastAPI) -> None:
    async def sparql(request: Request) -> Response:
        config = state_of(request).config
        params = await _sparql_params(request)
        queries, updates = params.get("query", []), params.get("update", [])
        if request.method in ("GET", "HEAD") and not queries and not updates:     # the endpoint describes itself
            return await describe.description(request, parse_accept(request.headers.get("accept")))
        if len(queries) + len(updates) != 1:
            raise HTTPException(400, "give exactly one `query` (or `update`, by POST)")
        if updates:
            if request.method != "POST":
                raise HTTPException(400, "a SPARQL update must be sent by POST")
            check_token(request)
            given = [n for n in USING_PARAMS if n in params]
            if given:        # pyoxigraph's update takes no dataset, and diagkg never rewrites an update's text
                raise HTTPException(400, f"`{given[0]}` is not supported: state the update's dataset in the update "
                                         "itself (USING <graph>, USING NAMED <graph> or WITH <graph>)")
            await asyncio.to_thread(precheck.check, updates[0], update=True, token=True, allowed=config.allow_remote)
            return await _update(request, updates[0])
        work = WorkRequest("query", queries[0], parse_accept(request.headers.get("accept")),
                           config.max_result_bytes,
                           tuple(params.get("default-graph-uri", [])), tuple(params.get("named-graph-uri", [])))
        if quick.is_quick(queries[0]):       # cannot be slow: answered at once, here (server/quick.py)
            precheck.check(queries[0], update=False, token=has_token(request), allowed=config.allow_remote)
            return _reply_response(quick.answer_here(state_of(request), work))
        found = await asyncio.to_thread(precheck.check, queries[0], update=False, token=has_token(request),
                                        allowed=config.allow_remote)
        return await run_work(request, work, remote=bool(found.remotes))

    app.add_api_route("/sparql", sparql, methods=["GET"], tags=["sparql"], operation_id="sparql_get",
                      summary="SPARQL 1.1 Protocol: a query (query=…); without one, the SPARQL 1.1 Service "
                              "Description with VoID statistics (Turtle, N-Triples, JSON-LD or RDF/XML by Accept)",
                      openapi_extra={"parameters": _GRAPH_PARAMS + [
                          {"name": "query", "in": "query", "required": False, "schema": {"type": "string"}}]})
    # HEAD (a client's or a monitor's check that the endpoint is there): GET's answer without its body
    app.add_api_route("/sparql", sparql, methods=["HEAD"], include_in_schema=False)
    app.add_api_route("/sparql", sparql, methods=["POST"], tags=["sparql"], operation_id="sparql_post",
                      summary="SPARQL 1.1 Protocol: a query (form or application/sparql-query) or an update "
                              "(form update=… or application/sparql-update; needs the token)",
                      openapi_extra={"parameters": _GRAPH_PARAMS, "requestBody": {"required": True, "content": {
                          precheck.QUERY: {"schema": {"type": "string"}},
                          precheck.UPDATE: {"schema": {"type": "string"}},
                          precheck.FORM: {"schema": {"type": "object", "properties": {
                              "query": {"type": "string"}, "update": {"type": "string"}}}}}}})

    @app.get("/.well-known/void", tags=["sparql"], summary="The store's VoID description (with the Service Description)")
    async def void_description(request: Request) -> Response:
        return await describe.description(request, parse_accept(request.headers.get("accept")))

    @app.get("/.well-known/sparql-examples", tags=["sparql"],
             summary="Every shipped query as a SPARQL example (sh:SPARQLExecutable)")
    async def sparql_examples(request: Request) -> Response:
        return describe.examples_response(request, parse_accept(request.headers.get("accept")))

    @app.get("/rdf-graphs", tags=["sparql"],
             summary="Graph Store Protocol: read a named graph (?graph=IRI) or the default graph (?default)")
    async def graph_store(request: Request, graph: str | None = None, default: str | None = None) -> Response:
        if (graph is None) == (default is None):
            return PlainTextResponse("give ?graph=IRI (a named graph) or ?default (the default graph: the union of "
                                     "every named graph, as queries see it), one of the two", status_code=400)
        # the default graph is asked for by an empty graph name (no graph IRI is empty)
        work = WorkRequest("graph", graph or "", parse_accept(request.headers.get("accept")),
                           state_of(request).config.max_result_bytes)
        return await run_work(request, work)


async def _update(request: Request, text: str) -> Response:
    """An update by the one write path (:func:`diagkg.kg.updates.apply_update`), off the event
    loop: worked out in a worker process under ``--query-timeout`` (503 when stopped), the
    graphs it changes validated again (422 on a violation), nothing written unless it all holds."""
    from ..errors import UpdateTimeout, ValidationError
    from ..kg.updates import apply_update

    state = state_of(request)
    try:
        await asyncio.to_thread(apply_update, state.store, from_text(text, "update"),
                                timeout=state.config.query_timeout)
    except UpdateTimeout as exc:
        return PlainTextResponse(f"update stopped: {exc}", status_code=503)
    except ValidationError as exc:
        return PlainTextResponse(f"update refused, nothing was written: {exc.summary}:\n"
                                 + "\n".join(exc.lines), status_code=422)
    except QueryError as exc:
        return PlainTextResponse(f"malformed update: {exc}", status_code=400)
    return Response(status_code=204)


def create_app(config: ServerConfig) -> FastAPI:
    """The application for one store; the query workers start with the first query."""
    state = ServerState(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        live.sessions_of(app).close()
        state.close()

    app = FastAPI(title="diagkg", version=_version(),
                  description="SPARQL 1.1 endpoint, JSON API and web page on a diagkg knowledge store.",
                  lifespan=lifespan)
    app.state.diagkg = state
    # innermost: a query that cannot be slow is answered before any routing (server/quick.py)
    app.add_middleware(quick.QuickQueries, state=state)
    if config.cors:
        from fastapi.middleware.cors import CORSMiddleware

        # only the origins named: any page in the user's browser could read the store otherwise
        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type", "Accept", "Last-Event-ID"])
    # outermost: host, origin and body size are settled before anything else reads the request
    app.add_middleware(Guard, allowed_hosts=config.allowed_hosts, cors=config.cors,
                       max_query_bytes=config.max_query_bytes, max_upload_bytes=config.max_upload_bytes)

    @app.exception_handler(DiagkgError)
    async def diagkg_error(request: Request, exc: DiagkgError) -> Response:
        from ..errors import StoreError, UnknownTermError

        code = 404 if isinstance(exc, UnknownTermError) else 503 if isinstance(exc, StoreError) else 400
        return PlainTextResponse(str(exc), status_code=code)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        # FastAPI's own answer echoes the input: a JSON body with NaN or 1e999 (Python's json reads them as
        # floats) made that answer unwritable as JSON, and the client got 500 instead of 422
        return JSONResponse({"detail": _finite(jsonable_encoder(exc.errors()))}, status_code=422)

    _add_sparql_routes(app)
    app.include_router(api.router)
    app.include_router(campaigns.router)
    app.include_router(live.router)
    pages.mount(app)
    return app


def _finite(value: Any) -> Any:
    """``value`` (as JSON reads) with every float that JSON cannot write (NaN, ±infinity) as its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _version() -> str:
    from .. import __version__

    return __version__
