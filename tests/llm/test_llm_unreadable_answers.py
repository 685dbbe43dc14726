"""An endpoint whose answer is no chat completion the client can read (a body that is not
UTF-8, an HTML page from a proxy, an error object sent with status 200, no choices, a
choice without a message), or a completion whose JSON text is not text (tool-call arguments
null, content as a list of parts), ends the session ``llm_truncation`` with its cause
recorded on every attempt, after the retries, like any other failure: before, each crashed
``diagkg run`` with a raw traceback (UnicodeDecodeError, AttributeError, IndexError,
TypeError) and a campaign recorded the session as crashed. Against a scripted
OpenAI-compatible server on 127.0.0.1, on the torch written in the tests."""

from __future__ import annotations

import json

import pytest

from diagkg.llm.records import FailureCause, recorded_calls
from diagkg.runs.runner import replay_session, run_session

from ..support.llm_server import LLMServer, Reply

FLAT = "TORCH.1"


def completion(message: dict | None = None, choices: list | None = None) -> bytes:
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "stub-model",
            "choices": choices if choices is not None else [{"index": 0, "finish_reason": "stop", "message": message}]}
    return json.dumps(body).encode()


ANSWERS = {
    "not-utf-8": (Reply(raw=b'{"choices": [{"message": {"content": "\xff\xfe"}}]}'), FailureCause.SERVER_ERROR),
    "html": (Reply(raw=b"<html>502 bad gateway</html>", media_type="text/html"), FailureCause.SERVER_ERROR),
    "error-with-200": (Reply(raw=b'{"error": {"message": "model overloaded"}}'), FailureCause.SERVER_ERROR),
    "no-choices": (Reply(raw=completion(choices=[])), FailureCause.SERVER_ERROR),
    "no-message": (Reply(raw=completion(choices=[{"index": 0, "finish_reason": "stop"}])), FailureCause.SERVER_ERROR),
    "arguments-null": (Reply(raw=completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": "t", "type": "function", "function": {"name": "choose", "arguments": None}}]})), FailureCause.UNPARSEABLE),
    "content-parts": (Reply(raw=completion({"role": "assistant", "content": [{"type": "text", "text": "{}"}]})),
                      FailureCause.UNPARSEABLE),
    # a completion of 3 MB where at most 400 tokens were asked for: was read whole and stored in the ledger per try
    "too-large": (Reply(raw=completion({"role": "assistant", "content": "x" * (3 << 20)})), FailureCause.SERVER_ERROR),
    "too-large-chunked": (Reply(raw=completion({"role": "assistant", "content": "x" * (3 << 20)}), chunked=True),
                          FailureCause.SERVER_ERROR),           # (no Content-Length: counted as it is read)
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_an_answer_the_client_cannot_read_ends_the_session_with_its_cause(torch_copy, name):
    reply, cause = ANSWERS[name]
    with LLMServer() as server:
        server.script.then(*[reply] * 2)
        config = {"base_url": server.base_url, "model": "stub-model", "timeout": 2, "retries": 1, "backoff": 0.01}
        result = run_session(FLAT, "llm", config=config, store=torch_copy)
        asked = len(server.script.calls)
    assert result.end == "llm_truncation" and result.llm_cause is cause
    calls = recorded_calls(torch_copy, result.trajectory)
    assert [c.cause for c in calls] == [cause] * 2 and asked == 2       # the first try and one retry
    assert all(c.error for c in calls)
    assert all(len(json.dumps(c.response)) < 10_000 for c in calls)       # no reply stored whole
    assert result.record.rounds[0]["cost"] == 0 and not result.record.rounds[0]["executed"]
    again = replay_session(torch_copy, result.trajectory)                  # and without the server, the same
    assert again.end == "llm_truncation" and again.llm_cause is cause
