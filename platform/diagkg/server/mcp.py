"""``diagkg mcp``: a diagnostic session offered to any MCP client as tools.

An agent built on any framework that takes tools over the Model Context
Protocol (a desktop assistant, an agent SDK) becomes a diagkg assistant
without a line of diagkg code. The tools are the service agent's work:

==================== ============================================================
``briefing``          what a technician is told: the system, its parts, the
                      reported symptoms, the lights visible, the budget
``affordable_actions`` the catalogue's actions, their cost and the parts each
                      applies to (none once no round is left)
``perform_action``    carry out an action (one round)
``state_hypothesis``  name the parts thought faulty (one round; a correct
                      hypothesis ends the session in success)
``observations``      every round so far: what was done, what was observed
``give_up``           end the session (surrender)
``new_session``       once a session is over, start the next one (next seed)
==================== ============================================================

Every tool sits on :class:`~diagkg.runs.driven.DrivenSession`, which runs the
runner's own session: the same budget, cost rule and checks as an ``exec:``
program (a move naming an unknown action or part is refused, plays no round,
and may be tried again), the same scoring, and a trajectory stored under the
client's declared name and version (``mcp:NAME/VERSION``). A client that goes
away leaves its session stored, ended in surrender (``dk:FaultExited``; after
``idle_seconds`` without a move, ``dk:FaultLateReply``).

Over standard input and output (the default) only MCP messages reach standard
output (the SDK points the process's standard output at standard error while
it serves); over streamable HTTP (:func:`http_app`) every request passes the
server's guard (:mod:`diagkg.server.guard`: Host, Origin, body size) and
must carry the token.
"""

from __future__ import annotations

import hmac
import threading
from typing import TYPE_CHECKING, Annotated, Any, Callable, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from .. import __version__
from ..env.contract import ProtocolError, ProtocolFault
from ..errors import DiagkgError
from ..runs.driven import DEFAULT_IDLE_SECONDS, DrivenSession
from .guard import App, Guard, Receive, Scope, Send

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Scenario
    from ..kg.store import KnowledgeStore

T = TypeVar("T")
MCP_PATH = "/mcp"
NAME_PREFIX = "mcp:"
INSTRUCTIONS = ("A diagnostic session on an electrical system with a hidden fault. Read `briefing` first, list "
                "`affordable_actions`, carry out actions with `perform_action` (each costs a round and minutes of "
                "work) and, once sure, name the faulty parts with `state_hypothesis`: a correct hypothesis ends the "
                "session in success. `observations` repeats everything observed so far.")


def assistant_name(info: Any) -> str:
    """The trajectory's assistant name for an MCP client's declared ``clientInfo`` (``mcp:NAME/VERSION``)."""
    name = str(getattr(info, "name", "") or "").strip() or "unnamed-client"
    version = str(getattr(info, "version", "") or "").strip()
    text = f"{name}/{version}" if version else name
    text = "".join(ch if ch.isprintable() else " " for ch in text)[:200]
    return NAME_PREFIX + text


class StrictServer(MCPServer):
    """The SDK's server, refusing a tool call's argument the tool does not take (a misspelt ``candidates``,
    an ``explanaton``): the SDK drops it without a word, where an ``exec:`` reply with an unknown field is a
    ``schema_violation``. Refused as a tool error naming it; no round is played."""

    _taken: dict[str, frozenset[str]] | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self._taken is None:
            self._taken = {t.name: frozenset((t.input_schema or {}).get("properties", {})) for t in await self.list_tools()}
        unknown = sorted(set(arguments) - self._taken.get(name, frozenset(arguments)))
        if unknown:
            fault = ProtocolError(ProtocolFault.SCHEMA, f"{name} takes no argument {', '.join(map(repr, unknown))}; it "
                                                        f"takes {', '.join(sorted(self._taken[name])) or 'none'}")
            raise ToolError(f"{fault} (no round was played; correct the call and try again)")
        return await super().call_tool(name, arguments, context)


class McpHost:
    """The MCP server of one scenario: one diagnostic session at a time, started by the first tool call."""

    def __init__(self, store: KnowledgeStore, scenario: Scenario, *, seed: int = 0, budget: int | None = None,
                 idle_seconds: float | None = DEFAULT_IDLE_SECONDS, notify: Callable[[str], None] | None = None):
        self.store, self.scenario, self.seed, self.budget = store, scenario, seed, budget
        self.idle_seconds, self.notify = idle_seconds, notify
        self.session: DrivenSession | None = None
        self.sessions: list[DrivenSession] = []
        self._lock = threading.Lock()
        self.server: MCPServer = StrictServer(name="diagkg", title="diagkg diagnostic session",
                                           version=__version__,
                                           instructions=INSTRUCTIONS, log_level="WARNING")
        self._tools()

    # -- sessions -----------------------------------------------------------------------------------------

    def _start(self, name: str, seed: int) -> DrivenSession:
        session = DrivenSession(self.store, self.scenario, name, seed=seed, budget=self.budget,
                                idle_seconds=self.idle_seconds, notify=self.notify)
        session.start()
        self.sessions.append(session)
        return session

    def current(self, name: str) -> DrivenSession:
        """The session in progress (or the last one), started now for client ``name`` if none was."""
        with self._lock:
            if self.session is None:
                self.session = self._start(name, self.seed)
            return self.session

    def renew(self, name: str, seed: int | None) -> DrivenSession:
        """A fresh session once the current one is over (the next seed unless one is given)."""
        with self._lock:
            if self.session is not None and not self.session.over:
                raise ToolError("the current session is not over: finish it (state_hypothesis) or give_up first")
            following = (self.session.seed + 1) if self.session is not None else self.seed
            self.session = self._start(name, following if seed is None else seed)
            return self.session

    def abandon(self, fault: ProtocolFault = ProtocolFault.EXITED, detail: str = "the MCP client disconnected", *,
                wait: bool = True) -> None:
        """End the session in progress (the client went away): stored, ended in surrender with ``fault``
        (``wait``: return once it is stored)."""
        session = self.session
        if session is not None:
            session.abandon(fault, detail, wait=wait)

    # -- the tools ----------------------------------------------------------------------------------------

    async def _session(self, ctx: Context) -> DrivenSession:
        return await _call(self.current, _client(ctx))

    def _tools(self) -> None:
        mcp = self.server

        @mcp.tool()
        async def briefing(ctx: Context) -> dict[str, Any]:
            """What a technician is told: the system and its description, its parts (id: type), their labels and
            ports, the reported symptoms, the lights visible from outside, the budget (rounds) and where the
            session stands. Never the answer."""
            session = await self._session(ctx)
            return session.briefing_json()

        @mcp.tool()
        async def affordable_actions(ctx: Context) -> dict[str, Any]:
            """The actions that can be carried out now: each with its id, what it does, its cost in minutes,
            its category (observe, test, adjust, replace), how many targets it takes and the parts it applies
            to (`applies_to`); empty once no round is left."""
            session = await self._session(ctx)
            return session.affordable_actions()

        @mcp.tool()
        async def perform_action(action: str, targets: list[str], ctx: Context, value: float | None = None,
                                 candidates: list[list[str]] | None = None) -> dict[str, Any]:
            """Carry out one action of the catalogue on its targets (part ids from the briefing; a port is
            `part.port`); `value` for an action that takes one (a potentiometer position). Takes one round and
            returns what was observed. `candidates` (optional): the diagnoses you hold now, most likely first,
            each a list of part ids."""
            reply: dict[str, Any] = {"kind": "act", "action": action, "targets": list(targets)}
            if value is not None:
                reply["value"] = value
            return await self._play(ctx, reply, candidates)

        @mcp.tool()
        async def state_hypothesis(parts: list[str], ctx: Context, explanation: str = "",
                                   candidates: list[list[str]] | None = None) -> dict[str, Any]:
            """Name the parts you think faulty (all of them). They are repaired to check it: a correct
            hypothesis ends the session in success; a wrong one costs the repairs and the session goes on.
            Takes one round."""
            reply: dict[str, Any] = {"kind": "hypothesis", "parts": list(parts)}
            if explanation:
                reply["explanation"] = explanation
            return await self._play(ctx, reply, candidates)

        @mcp.tool()
        async def observations(ctx: Context) -> dict[str, Any]:
            """Everything observed so far: the reported symptoms, the visible lights and every round's outcome
            (what was done, what was seen or measured, the verdict of a hypothesis), with the total cost."""
            session = await self._session(ctx)
            return session.observations()

        @mcp.tool()
        async def give_up(ctx: Context) -> dict[str, Any]:
            """End the session without a diagnosis (it ends in surrender and is stored)."""
            return await self._play(ctx, {"kind": "stop"}, None)

        @mcp.tool()
        async def new_session(ctx: Context, seed: Annotated[int, Field(ge=0, strict=True)] | None = None) -> dict[str, Any]:
            """Once the current session is over, start the next one on the same scenario (the next seed unless
            `seed`, a whole number 0 or more, as for `diagkg run --seed`, is given) and return its briefing."""
            renewed = await _call(self.renew, _client(ctx), seed)
            return renewed.briefing_json()

    async def _play(self, ctx: Context, reply: dict[str, Any], candidates: list[list[str]] | None) -> dict[str, Any]:
        session = await self._session(ctx)
        if candidates:
            reply["candidates"] = [list(c) for c in candidates]
        step = await _call(session.play, reply)
        return step.to_json()

    # -- transports ---------------------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serve over standard input and output until the client closes them; then a session still in
        progress is ended (surrender) and stored before this returns."""
        try:
            await self.server.run_stdio_async()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.abandon)

    def http_app(self, *, token: str, allowed_hosts: tuple[str, ...], cors: tuple[str, ...] = ()) -> App:
        """The streamable-HTTP app at :data:`MCP_PATH`, behind the guard and the token."""
        from mcp.server.transport_security import TransportSecuritySettings

        inner = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            # the guard checks Host and Origin against the configured names (the SDK's check knows only localhost)
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        app: App = inner
        return Guard(TokenGate(app, token), allowed_hosts=allowed_hosts, cors=cors, max_query_bytes=0,
                     max_upload_bytes=0)


async def _call(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a worker thread, its errors as the tool's error (the session goes on)."""
    try:
        return await anyio.to_thread.run_sync(func, *args)
    except ProtocolError as exc:
        raise ToolError(f"{exc} (no round was played; correct the call and try again)") from None
    except DiagkgError as exc:
        raise ToolError(str(exc)) from None


def _client(ctx: Context) -> str:
    params = ctx.request_context.session.client_params
    return assistant_name(params.client_info if params is not None else None)


class TokenGate:
    """Every HTTP request carries the token (``Authorization: Bearer TOKEN``): a session writes to the store."""

    def __init__(self, app: App, token: str):
        if not token:
            raise ValueError("the MCP HTTP transport needs a token")
        self.app, self.token = app, token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = b""
            for key, value in scope.get("headers", []):
                if key.lower() == b"authorization" and value[:7].lower() == b"bearer ":
                    given = value[7:].strip()
            if not given or not hmac.compare_digest(given, self.token):
                body = b"this MCP server needs its token: Authorization: Bearer TOKEN\n"
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode()),
                                        (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
