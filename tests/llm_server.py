"""A small OpenAI-compatible chat-completions server for the tests (FastAPI +
uvicorn on a free loopback port, in a thread). Its replies are scripted."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field

import uvicorn
from fastapi import FastAPI, Request


@dataclass
class Script:
    content: str = '{"anomalous": [], "nominal": []}'
    finish_reason: str = "stop"
    calls: list[dict] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LLMServer:
    def __init__(self):
        self.script = Script()
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def complete(request: Request):
            body = await request.json()
            self.script.calls.append(body)
            return {
                "id": f"cmpl-{len(self.script.calls)}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": self.script.finish_reason,
                             "message": {"role": "assistant", "content": self.script.content}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
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
