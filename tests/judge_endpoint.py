"""A stand-in OpenAI-compatible chat endpoint for the judge's tests: a small HTTP server
on 127.0.0.1 in a thread. Nothing calls the network."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """What the endpoint answers to one request."""

    status: int = 200
    content: str | None = "##final score: 2"  # None: ``body`` as given
    body: bytes = b""
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request the endpoint received."""

    path: str
    headers: dict[str, str]
    body: dict
    at: float


@dataclass
class StandIn:
    url: str
    seen: list[Seen]

    def prompts(self) -> list[str]:
        return [s.body["messages"][-1]["content"] for s in self.seen]


def completion(content: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content},
         "finish_reason": "stop"}]}).encode()


@contextmanager
def stand_in(answer: Callable[[int, dict], Reply]) -> Iterator[StandIn]:
    """A server answering the n-th request (0-based) and its JSON body with ``answer``."""
    seen: list[Seen] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            with lock:
                n = len(seen)
                seen.append(Seen(self.path, dict(self.headers.items()), body, time.monotonic()))
            reply = answer(n, body)
            if reply.delay:
                time.sleep(reply.delay)
            payload = completion(reply.content) if reply.content is not None else reply.body
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and left

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield StandIn(url=f"http://127.0.0.1:{server.server_port}/v1", seen=seen)
    finally:
        server.shutdown()
        server.server_close()
