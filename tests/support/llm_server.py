"""A small OpenAI-compatible chat-completions server for the tests (FastAPI +
uvicorn on a free loopback port, in a thread). Its replies are scripted: a
queue of :class:`Reply` (content or a tool call, finish reason, HTTP status,
delay, token usage, headers, or a raw body), then the default ``content``/``finish_reason``."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse


@dataclass
class Reply:
    content: str | None = None
    tool: dict | None = None                # {"name": ..., "arguments": dict or JSON text}
    finish_reason: str = "stop"
    status: int = 200
    delay: float = 0.0
    usage: tuple[int, int] = (10, 10)
    raw: bytes | None = None                # the body as it is (not UTF-8, HTML, no choices…), status 200
    media_type: str = "application/json"
    chunked: bool = False                   # the raw body sent in pieces, with no Content-Length
    headers: dict[str, str] = field(default_factory=dict)   # sent with an error status (Retry-After)

    @classmethod
    def call(cls, name: str, **arguments) -> "Reply":
        return cls(tool={"name": name, "arguments": arguments})


def choose(**arguments) -> Reply:
    """The ``llm`` assistant's tool call."""
    arguments.setdefault("instruction", "Do as the choice says.")
    return Reply.call("choose", **arguments)


@dataclass
class Script:
    content: str = '{"anomalous": [], "nominal": []}'
    finish_reason: str = "stop"
    replies: deque = field(default_factory=deque)
    calls: list[dict] = field(default_factory=list)
    times: list[float] = field(default_factory=list)   # when each call arrived (time.monotonic)
    refuse: set[str] = field(default_factory=set)      # structured modes answered with 400: tools, json_schema
    # prompt tokens counted from the request, tools and response format included (as OpenAI bills them):
    # its messages, tools and response_format as JSON text, 3 characters a token
    count_request: bool = False

    def then(self, *replies: Reply) -> "Script":
        self.replies.extend(replies)
        return self


def _mode(body: dict) -> str:
    if body.get("tools"):
        return "tools"
    return (body.get("response_format") or {}).get("type", "text")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LLMServer:
    def __init__(self):
        self.script = Script()
        app = FastAPI()

        @app.get("/v1/models")
        async def models():
            return {"object": "list", "data": [{"id": "stub-model", "object": "model", "owned_by": "tests"}]}

        @app.post("/v1/chat/completions")
        async def complete(request: Request):
            body = await request.json()
            script = self.script
            script.calls.append(body)
            script.times.append(time.monotonic())
            if _mode(body) in script.refuse:
                return JSONResponse({"error": {"message": f"{_mode(body)} is not supported", "type": "invalid_request_error"}},
                                    status_code=400)
            reply = script.replies.popleft() if script.replies else Reply(content=script.content,
                                                                          finish_reason=script.finish_reason)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            if reply.raw is not None and reply.chunked:
                raw = reply.raw
                pieces = (raw[i:i + 65536] for i in range(0, len(raw), 65536))
                return StreamingResponse(pieces, media_type=reply.media_type)
            if reply.raw is not None:
                return Response(reply.raw, media_type=reply.media_type)
            if reply.status != 200:
                return JSONResponse({"error": {"message": f"scripted {reply.status}", "type": "server_error"}},
                                    status_code=reply.status, headers=reply.headers)
            message: dict = {"role": "assistant", "content": reply.content}
            tool = reply.tool
            if tool is None and body.get("tools") and reply.content is not None:   # a tool call carrying the content
                tool = {"name": body["tools"][0]["function"]["name"], "arguments": reply.content}
            if tool is not None:
                args = tool["arguments"] if isinstance(tool["arguments"], str) else json.dumps(tool["arguments"])
                message = {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"call-{len(script.calls)}", "type": "function",
                     "function": {"name": tool["name"], "arguments": args}}]}
            usage = reply.usage
            if script.count_request:
                sent = [body.get(k) for k in ("messages", "tools", "response_format") if body.get(k) is not None]
                usage = (sum(len(json.dumps(part)) for part in sent) // 3, reply.usage[1])
            return {
                "id": f"cmpl-{len(script.calls)}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": reply.finish_reason, "message": message}],
                "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
            }

        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "LLMServer":
        self.thread.start()
        deadline = time.time() + 10
        while not self.server.started and time.time() < deadline:
            time.sleep(0.02)
        assert self.server.started, "the stub LLM server did not start"
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
