"""A loopback fake of the OpenAI HTTP API, for examples and tests: no key, no network.

``FakeOpenAI`` serves ``POST /v1/chat/completions`` and ``POST /v1/responses`` (JSON, or real
SSE when the request says ``"stream": true``: chat chunks, or Responses events, the answer text
in pieces of ``Turn.pieces`` characters or the given pieces; ``Turn.fail_after`` sends an error
event after that many text pieces, as a provider failing mid-stream) from a script of turns,
one per request, on a free port of 127.0.0.1 in a daemon thread. Every request body is kept in
``requests`` so a test can assert what the client sent (e.g. the ``tool`` message carrying a tool
result). Standard library only; the docs' examples and the test suite use it to run real OpenAI
clients, real frameworks and real instrumentations against a scripted model.

    from groundplane_otel.fake_openai import FakeOpenAI, answer_turn, tool_call_turn

    with FakeOpenAI([tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(obj)]) as api:
        client = openai.OpenAI(base_url=api.base_url, api_key="not-needed")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "Turn", "answer_turn", "tool_call_turn"]

MODEL = "gpt-fake-1"


@dataclass(frozen=True)
class Turn:
    """One scripted model turn: final text, or tool calls ``[(id, name, arguments JSON)]``."""

    content: str | None = None
    tool_calls: tuple[tuple[str, str, str], ...] = ()
    refusal: str | None = None
    pieces: int | tuple[str, ...] = 8  # streamed: the text in pieces of this size, or these
    fail_after: int | None = None  # streamed: an error event after this many text pieces

    def text_pieces(self) -> list[str]:
        """The answer text as streamed (``pieces``)."""
        text = self.content or ""
        if isinstance(self.pieces, tuple):
            assert "".join(self.pieces) == text, "pieces must spell the content"
            return list(self.pieces)
        return [text[start : start + self.pieces] for start in range(0, len(text), self.pieces)]

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def answer_turn(answer: Mapping[str, Any] | str) -> Turn:
    """A final answer: ``answer`` as JSON text (a str is sent as is)."""
    return Turn(content=answer if isinstance(answer, str) else json.dumps(answer))


def tool_call_turn(name: str, arguments: Mapping[str, Any], call_id: str = "call_1") -> Turn:
    """A turn that only asks for one tool call."""
    return Turn(tool_calls=((call_id, name, json.dumps(arguments)),))


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def _message(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.refusal is not None:
        message["refusal"] = turn.refusal
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in turn.tool_calls
        ]
    return message


def chat_completion(turn: Turn, number: int, model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": _message(turn),
                "finish_reason": turn.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": _usage(),
    }


def chat_chunks(turn: Turn, number: int, model: str) -> Iterator[dict[str, Any]]:
    """The chunks of a streamed chat completion: role, content in pieces, finish, usage."""
    base = {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**base, "choices": [choice]}

    yield chunk({"role": "assistant", "content": ""})
    for number_sent, piece in enumerate(turn.text_pieces()):
        if turn.fail_after is not None and number_sent == turn.fail_after:
            yield STREAM_ERROR
            return
        yield chunk({"content": piece})
    for index, (call_id, name, args) in enumerate(turn.tool_calls):
        # As providers stream them: the id and name first, the arguments in two deltas.
        half = len(args) // 2
        call = {"index": index, "id": call_id, "type": "function"}
        yield chunk(
            {"tool_calls": [{**call, "function": {"name": name, "arguments": args[:half]}}]}
        )
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": args[half:]}}]})
    yield chunk({}, turn.finish_reason)
    yield {**base, "choices": [], "usage": _usage()}


STREAM_ERROR: dict[str, Any] = {"error": {"message": "upstream overloaded", "type": "server_error"}}


def response_events(turn: Turn, number: int, model: str) -> Iterator[dict[str, Any]]:
    """The events of a streamed Responses call: created, the message item and its text part,
    one ``response.output_text.delta`` per piece, the done events, completed."""
    final = response_object(turn, number, model)
    started = {**final, "status": "in_progress", "output": []}
    sequence = iter(range(10_000))

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(sequence), **fields}

    yield event("response.created", response=started)
    yield event("response.in_progress", response=started)
    item = final["output"][0]
    if item["type"] == "message":
        item_id = item["id"]
        empty = {**item, "status": "in_progress", "content": []}
        yield event("response.output_item.added", output_index=0, item=empty)
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        yield event("response.content_part.added", **where, part=part)
        for sent, piece in enumerate(turn.text_pieces()):
            if turn.fail_after is not None and sent == turn.fail_after:
                yield STREAM_ERROR
                return
            yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
        text = turn.content or ""
        yield event("response.output_text.done", **where, text=text, logprobs=[])
        yield event("response.content_part.done", **where, part={**part, "text": text})
    else:
        yield event("response.output_item.added", output_index=0, item=item)
        yield event(
            "response.function_call_arguments.delta",
            item_id=item["id"],
            output_index=0,
            delta=item["arguments"],
        )
        yield event(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=0,
            arguments=item["arguments"],
            name=item["name"],
        )
    yield event("response.output_item.done", output_index=0, item=item)
    yield event("response.completed", response=final)


def response_object(turn: Turn, number: int, model: str) -> dict[str, Any]:
    """A Responses API object with one message (or function_call) output item."""
    output: list[dict[str, Any]] = []
    if turn.tool_calls:
        for call_id, name, args in turn.tool_calls:
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "call_id": call_id,
                    "name": name,
                    "arguments": args,
                    "status": "completed",
                }
            )
    else:
        text = {"type": "output_text", "text": turn.content or "", "annotations": []}
        output.append(
            {
                "type": "message",
                "id": f"msg_fake_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        )
    return {
        "id": f"resp_fake_{number}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 11,
            "output_tokens": 7,
            "total_tokens": 18,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


@dataclass
class FakeOpenAI:
    """The server. Use as a context manager; ``base_url`` is ``http://127.0.0.1:{port}/v1``."""

    script: Sequence[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _position: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first (use it as a context manager)"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def next_turn(self, body: dict[str, Any]) -> tuple[Turn, int]:
        with self._lock:
            self.requests.append(body)
            if self._position >= len(self.script):
                raise LookupError(f"script exhausted after {len(self.script)} turn(s)")
            turn = self.script[self._position]
            self._position += 1
            return turn, self._position

    @property
    def remaining(self) -> int:
        return len(self.script) - self._position

    def __enter__(self) -> FakeOpenAI:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        assert self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _json(self, status: int, payload: Any) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _sse(self, events: Iterator[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                named = f"event: {event['type']}\n" if "type" in event else ""
                self.wfile.write(f"{named}data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            path = self.path.split("?")[0]
            if path not in ("/v1/chat/completions", "/v1/responses"):
                self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
                return
            try:
                turn, number = fake.next_turn(body)
            except LookupError as exc:
                self._json(500, {"error": {"message": str(exc), "type": "script_exhausted"}})
                return
            model = str(body.get("model") or MODEL)
            if path == "/v1/responses" and body.get("stream"):
                self._sse(response_events(turn, number, model))
            elif path == "/v1/responses":
                self._json(200, response_object(turn, number, model))
            elif body.get("stream"):
                self._sse(chat_chunks(turn, number, model))
            else:
                self._json(200, chat_completion(turn, number, model))

    return Handler
