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
    """One canned HTTP answer: a chat completion, an error status, raw bytes, or a delay.

    ``trickle`` sends the whole answer (status line included) a byte at a time with that
    many seconds between bytes; ``announce`` claims a Content-Length other than the body's
    (a reply cut short); ``headers`` are sent as well (``Retry-After``)."""

    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    trickle: float = 0.0
    announce: int | None = None
    headers: tuple[tuple[str, str], ...] = ()


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


def status(code: int, text: str = "server error", *, retry_after: str | None = None) -> Answer:
    headers = (("Retry-After", retry_after),) if retry_after is not None else ()
    return Answer(code, json.dumps({"error": {"message": text}}).encode(), headers=headers)


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
        self.stopped = threading.Event()
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
                length = len(answer.body) if answer.announce is None else answer.announce
                head = [
                    f"HTTP/1.1 {answer.status} {self.responses.get(answer.status, ('',))[0]}",
                    "Content-Type: application/json",
                    f"Content-Length: {length}",
                    "Connection: close",
                    *(f"{name}: {value}" for name, value in answer.headers),
                ]
                data = ("\r\n".join(head) + "\r\n\r\n").encode() + answer.body
                self.close_connection = True
                try:
                    if not answer.trickle:
                        self.wfile.write(data)
                        return
                    for i in range(len(data)):
                        if server.stopped.is_set():
                            return
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(answer.trickle)
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
        self.stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()
