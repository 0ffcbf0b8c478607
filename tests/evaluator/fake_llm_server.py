"""A local OpenAI-compatible chat-completions server with canned answers, for tests.

Real HTTP on 127.0.0.1 and a random port. Answers are served in order (the last one
repeats), or chosen by a function of the request. Every request body and its
Authorization header are kept for assertions.

>>> from evaluator.chat_client import ChatClient, EndpointConfig
>>> with FakeLLMServer([reply('{"action": "back"}')]) as server:
...     client = ChatClient(EndpointConfig(server.base_url, "m"))
...     answer = client.complete([{"role": "user", "content": "what now?"}]).text
>>> answer, server.received[0].text()
('{"action": "back"}', 'what now?')
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    """One canned HTTP answer: a chat completion, an error status, raw bytes, or a delay."""

    status: int = 200
    body: bytes = b""
    delay: float = 0.0


def reply(
    content: str, prompt_tokens: int = 120, completion_tokens: int = 30, *, delay: float = 0.0
) -> Answer:
    payload = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Answer(200, json.dumps(payload).encode(), delay)


def status(code: int, text: str = "server error") -> Answer:
    return Answer(code, json.dumps({"error": {"message": text}}).encode())


def garbage(raw: bytes = b"<html>not json</html>") -> Answer:
    return Answer(200, raw)


@dataclass
class Received:
    body: dict[str, Any]
    authorization: str | None

    def text(self) -> str:
        """All text parts of the request's messages."""
        parts = []
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            else:
                parts += [p.get("text", "") for p in content if p.get("type") == "text"]
        return "\n".join(parts)

    def images(self) -> int:
        return sum(
            1
            for m in self.body.get("messages", [])
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == "image_url"
        )


@dataclass
class FakeLLMServer:
    answers: Sequence[Answer] | Callable[[Received], Answer] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._index = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    body = {}
                answer = server._next(Received(body, self.headers.get("Authorization")))
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: object) -> None:
                return None

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    def _next(self, request: Received) -> Answer:
        with self._lock:
            self.received.append(request)
            if callable(self.answers):
                return self.answers(request)
            if not self.answers:
                return reply('{"action": "done"}')
            answer = self.answers[min(self._index, len(self.answers) - 1)]
            self._index += 1
            return answer

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
